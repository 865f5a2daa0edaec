package peer

import (
	"encoding/hex"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Service and exception reporting through the MOM (IEEE 1516.1-2010
// §11, the MIM's HLAreportServiceInvocation and HLAreportException;
// docs/mom.md). While HLAsetServiceReporting is on for this federate,
// every service it invokes, and every callback the RTI invokes at it,
// is reported with the arguments supplied, the values returned (when it
// succeeded) or the exception raised; while HLAsetExceptionReporting is
// on, every exception a service invoked at it raises is reported. Each
// service reports itself, deferred, through reported; callbacks are
// reported as Next and NextForwarded hand them out.

// The switches' bits in Federate.reports, mirrored from the core after
// each turn (turn) so that a service learns them without the lock.
const (
	reportServices uint32 = 1 << iota
	reportExceptions
)

// results is what a service reports: the textual depictions of the
// arguments it was given and of the values it returns, made (texts) only
// when a report is made.
type results func() (supplied, returned []string)

// reported reports the service name (the 1516e API's name of it), which
// just returned *perr, when its reporting is on: HLAreportServiceInvocation
// with what res gives, and, for an error, HLAreportException. Every
// service defers it first thing; res runs only when a service report is
// made, so that a service with reporting off pays one atomic load.
func (f *Federate) reported(name string, perr *error, res results) {
	on := f.reports.Load()
	if on == 0 {
		return
	}
	err := *perr
	if on&reportServices == 0 && err == nil {
		return
	}
	var supplied, returned []string
	if on&reportServices != 0 && res != nil {
		supplied, returned = res()
		if err != nil {
			returned = nil
		}
	}
	f.callDriver(func() error {
		if on&reportServices != 0 {
			f.core.ReportService(name, supplied, returned, err)
		}
		if err != nil && on&reportExceptions != 0 {
			f.core.ReportException(name, err)
		}
		return nil
	})
}

// reportCallback reports the callback ev, which Next or NextForwarded
// just handed out, when service reporting is on: the RTI invoked a
// service at this federate. Events that are no callback of the standard
// (FederateJoined, MessagesLost, ...) are not reported.
func (f *Federate) reportCallback(ev Event) {
	if f.reports.Load()&reportServices == 0 {
		return
	}
	name, ok := callbackName(ev)
	if !ok {
		return
	}
	v := reflect.ValueOf(ev)
	var supplied []string
	if v.Kind() == reflect.Struct {
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				supplied = append(supplied, depictAny(v.Field(i).Interface()))
			}
		}
	}
	f.callDriver(func() error {
		f.core.ReportService(name, supplied, nil, nil)
		return nil
	})
}

// callbacks are the names of the FederateAmbassador's methods: the
// callbacks of the standard, whose events have the same names.
var callbacks = func() map[string]bool {
	m := map[string]bool{}
	t := reflect.TypeFor[FederateAmbassador]()
	for i := range t.NumMethod() {
		m[t.Method(i).Name] = true
	}
	return m
}()

// callbackName returns the 1516e API's name of the callback ev is
// (reflectAttributeValues for a ReflectAttributeValues event), and
// whether it is one.
func callbackName(ev Event) (string, bool) {
	n := reflect.TypeOf(ev).Name()
	if !callbacks[n] {
		return "", false
	}
	return lowerFirst(n), true
}

// lowerFirst is s with its first letter lower case: a Go method's name
// as the 1516e API spells it.
func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToLower(r)) + s[n:]
}

// texts depicts each of vs (text).
func texts(vs ...any) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = text(v)
	}
	return out
}

// unknownText is the depiction of a value of a type text does not know.
const unknownText = "?"

// text is the textual depiction of a service's argument or result that
// the MIM's reports carry: a string as it is, bytes as [0x48,0x65] (as
// other RTIs write them), handles and times as they print, sets in
// brackets, maps as {k=v, ...} in key order. It knows the types of the
// services' arguments and results by name and keeps none of v: a service
// whose arguments it depicts does not make them escape to the heap (a
// caller's map or slice may stay on its stack), which reflection would.
func text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return strings.Clone(x) // the report keeps no part of v
	case []byte:
		return bytesText(x)
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case uint64:
		return strconv.FormatUint(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case ObjectClassHandle:
		return strconv.FormatUint(uint64(x), 10)
	case AttributeHandle:
		return strconv.FormatUint(uint64(x), 10)
	case InteractionClassHandle:
		return strconv.FormatUint(uint64(x), 10)
	case ParameterHandle:
		return strconv.FormatUint(uint64(x), 10)
	case DimensionHandle:
		return strconv.FormatUint(uint64(x), 10)
	case FederateHandle:
		return strconv.FormatUint(uint64(x), 10)
	case ObjectInstanceHandle:
		return strconv.FormatUint(uint64(x.Federate), 10) + "." + strconv.FormatUint(x.Serial, 10)
	case RegionHandle:
		return regionText(x)
	case MessageRetractionHandle:
		return strconv.FormatUint(uint64(x.Federate), 10) + "/" + strconv.FormatUint(x.Serial, 10)
	case Float64Time:
		return strconv.FormatFloat(float64(x), 'g', -1, 64)
	case Integer64Time:
		return strconv.FormatInt(int64(x), 10)
	case TransportationType:
		if x.Valid() {
			return x.String()
		}
		return strconv.Itoa(int(x))
	case OrderType:
		switch x {
		case Receive:
			return "Receive"
		case TimeStamp:
			return "TimeStamp"
		}
		return strconv.Itoa(int(x))
	case ResignAction:
		return strconv.Itoa(int(x))
	case ServiceGroup:
		return strconv.Itoa(int(x))
	case RangeBounds:
		return "[" + strconv.FormatUint(x.Lower, 10) + "," + strconv.FormatUint(x.Upper, 10) + ")"
	case []string:
		var sb strings.Builder
		sb.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(e)
		}
		sb.WriteByte(']')
		return sb.String()
	case []AttributeHandle:
		return numbers(x)
	case []InteractionClassHandle:
		return numbers(x)
	case []DimensionHandle:
		return numbers(x)
	case []FederateHandle:
		return numbers(x)
	case []RegionHandle:
		return regionsText(x)
	case []AttributeRegions:
		parts := make([]string, len(x))
		for i, p := range x {
			parts[i] = "{" + numbers(p.Attributes) + " " + regionsText(p.Regions) + "}"
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case AttributeValues:
		return valuesText(x)
	case ParameterValues:
		return valuesText(x)
	}
	return unknownText
}

// regionText depicts a region handle: r1.2.
func regionText(h RegionHandle) string {
	return "r" + strconv.FormatUint(uint64(h.Federate), 10) + "." + strconv.FormatUint(h.Serial, 10)
}

// regionsText depicts region handles: [r1.2, r1.3].
func regionsText(hs []RegionHandle) string {
	parts := make([]string, len(hs))
	for i, h := range hs {
		parts[i] = regionText(h)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// numbers depicts handles of one number: [1, 2].
func numbers[H ~uint64](hs []H) string {
	parts := make([]string, len(hs))
	for i, h := range hs {
		parts[i] = strconv.FormatUint(uint64(h), 10)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// valuesText depicts attribute or parameter values: {handle=[0x..], ...}
// in handle order.
func valuesText[K ~uint64](m map[K][]byte) string {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = strconv.FormatUint(uint64(k), 10) + "=" + bytesText(m[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// bytesText depicts bytes as [0x48,0x65].
func bytesText(b []byte) string {
	var sb strings.Builder
	sb.WriteByte('[')
	for i, c := range b {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString("0x")
		sb.WriteString(hex.EncodeToString([]byte{c}))
	}
	sb.WriteByte(']')
	return sb.String()
}

// depictAny is text for a callback's argument, whatever its type: the
// events are on the heap already, so reflection costs nothing more.
func depictAny(v any) string {
	if t := text(v); t != unknownText {
		return t
	}
	switch x := v.(type) {
	case error:
		return x.Error()
	case fmt.Stringer:
		return x.String()
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		parts := make([]string, rv.Len())
		for i := range parts {
			parts[i] = depictAny(rv.Index(i).Interface())
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case reflect.Map:
		parts := make([]string, 0, rv.Len())
		for it := rv.MapRange(); it.Next(); {
			parts = append(parts, depictAny(it.Key().Interface())+"="+depictAny(it.Value().Interface()))
		}
		slices.Sort(parts)
		return "{" + strings.Join(parts, ", ") + "}"
	case reflect.Struct:
		parts := make([]string, 0, rv.NumField())
		for i := range rv.NumField() {
			if f := rv.Type().Field(i); f.IsExported() {
				parts = append(parts, f.Name+"="+depictAny(rv.Field(i).Interface()))
			}
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return ""
		}
		return depictAny(rv.Elem().Interface())
	}
	return fmt.Sprint(v)
}
