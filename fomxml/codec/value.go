package codec

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
)

// num is a Go number, classified.
type num struct {
	k numKind
	i int64
	u uint64
	f float64
}

// toNum classifies v as a number: any Go integer or float type (named
// types too, and pointers to them) or a json.Number.
func toNum(v any) (num, bool) {
	switch x := v.(type) {
	case int:
		return num{k: kInt, i: int64(x)}, true
	case int64:
		return num{k: kInt, i: x}, true
	case float64:
		return num{k: kFloat, f: x}, true
	case int32:
		return num{k: kInt, i: int64(x)}, true
	case uint64:
		return num{k: kUint, u: x}, true
	case float32:
		return num{k: kFloat, f: float64(x)}, true
	case int8:
		return num{k: kInt, i: int64(x)}, true
	case int16:
		return num{k: kInt, i: int64(x)}, true
	case uint:
		return num{k: kUint, u: uint64(x)}, true
	case uint8:
		return num{k: kUint, u: uint64(x)}, true
	case uint16:
		return num{k: kUint, u: uint64(x)}, true
	case uint32:
		return num{k: kUint, u: uint64(x)}, true
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return num{k: kInt, i: i}, true
		}
		if u, err := strconv.ParseUint(string(x), 10, 64); err == nil {
			return num{k: kUint, u: u}, true
		}
		if f, err := strconv.ParseFloat(string(x), 64); err == nil {
			return num{k: kFloat, f: f}, true
		}
		return num{}, false
	case nil, string, bool:
		return num{}, false
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return num{k: kInt, i: rv.Int()}, true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return num{k: kUint, u: rv.Uint()}, true
	case reflect.Float32, reflect.Float64:
		return num{k: kFloat, f: rv.Float()}, true
	}
	return num{}, false
}

// describe names the Go type of v for error messages.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "nil"
	case string:
		return "string"
	case bool:
		return "bool"
	case json.Number:
		return "json.Number " + strconv.Quote(string(x))
	case float64:
		return "number " + strconv.FormatFloat(x, 'g', -1, 64)
	case float32:
		return "number " + strconv.FormatFloat(float64(x), 'g', -1, 32)
	}
	return fmt.Sprintf("%T", v)
}

func wantErr(want string, v any) *Error {
	return newError(ErrInvalidValue, "want %s, got %s", want, describe(v))
}

// toInt converts v to a signed integer of the given width in bits.
func toInt(v any, bits int) (int64, error) {
	x, ok := toNum(v)
	if !ok {
		return 0, wantErr("integer", v)
	}
	hi := int64(math.MaxInt64)
	if bits < 64 {
		hi = int64(1)<<(bits-1) - 1
	}
	lo := -hi - 1
	switch x.k {
	case kInt:
		if x.i < lo || x.i > hi {
			return 0, rangeErr(strconv.FormatInt(x.i, 10), bits, "signed")
		}
		return x.i, nil
	case kUint:
		if x.u > uint64(hi) {
			return 0, rangeErr(strconv.FormatUint(x.u, 10), bits, "signed")
		}
		return int64(x.u), nil
	}
	if x.f != math.Trunc(x.f) || math.IsInf(x.f, 0) {
		return 0, wantErr("integer", v)
	}
	if x.f < float64(lo) || x.f >= -float64(lo) {
		return 0, rangeErr(strconv.FormatFloat(x.f, 'g', -1, 64), bits, "signed")
	}
	return int64(x.f), nil
}

// toUint converts v to an unsigned integer of the given width in bits.
func toUint(v any, bits int) (uint64, error) {
	x, ok := toNum(v)
	if !ok {
		return 0, wantErr("integer", v)
	}
	hi := uint64(math.MaxUint64)
	if bits < 64 {
		hi = uint64(1)<<bits - 1
	}
	switch x.k {
	case kInt:
		if x.i < 0 || uint64(x.i) > hi {
			return 0, rangeErr(strconv.FormatInt(x.i, 10), bits, "unsigned")
		}
		return uint64(x.i), nil
	case kUint:
		if x.u > hi {
			return 0, rangeErr(strconv.FormatUint(x.u, 10), bits, "unsigned")
		}
		return x.u, nil
	}
	if x.f != math.Trunc(x.f) || math.IsInf(x.f, 0) {
		return 0, wantErr("integer", v)
	}
	if x.f < 0 || x.f >= float64(hi)+1 {
		return 0, rangeErr(strconv.FormatFloat(x.f, 'g', -1, 64), bits, "unsigned")
	}
	return uint64(x.f), nil
}

func rangeErr(val string, bits int, kind string) *Error {
	return newError(ErrInvalidValue, "%s out of range for %d-bit %s integer", val, bits, kind)
}

// toFloat converts v to a float64.
func toFloat(v any) (float64, error) {
	x, ok := toNum(v)
	if !ok {
		return 0, wantErr("number", v)
	}
	switch x.k {
	case kInt:
		return float64(x.i), nil
	case kUint:
		return float64(x.u), nil
	}
	return x.f, nil
}

// seq is a Go sequence: []any, or any slice or array through reflection.
type seq struct {
	s  []any
	rv reflect.Value
	n  int
}

func (q *seq) at(i int) any {
	if q.s != nil {
		return q.s[i]
	}
	return q.rv.Index(i).Interface()
}

func toSeq(v any) (seq, bool) {
	switch x := v.(type) {
	case []any:
		return seq{s: x, n: len(x)}, true
	case nil, string, map[string]any:
		return seq{}, false
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		return seq{rv: rv, n: rv.Len()}, true
	}
	return seq{}, false
}

// toFields converts v to a map from field name to value: a
// map[string]any as it is, any other map with string keys, or a struct
// (exported fields, named by an `hla:"name"` tag or by the field name).
func toFields(v any) (map[string]any, bool) {
	if m, ok := v.(map[string]any); ok {
		return m, true
	}
	if v == nil {
		return nil, false
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	switch rv.Kind() {
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			return nil, false
		}
		m := make(map[string]any, rv.Len())
		it := rv.MapRange()
		for it.Next() {
			m[it.Key().String()] = it.Value().Interface()
		}
		return m, true
	case reflect.Struct:
		t := rv.Type()
		m := make(map[string]any, t.NumField())
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name := f.Name
			if tag, ok := f.Tag.Lookup("hla"); ok {
				if tag == "-" {
					continue
				}
				if tag != "" {
					name = tag
				}
			}
			m[name] = rv.Field(i).Interface()
		}
		return m, true
	}
	return nil, false
}

// unknownKey returns the first key of m, in sorted order, that known
// rejects.
func unknownKey(m map[string]any, known func(string) bool) string {
	var bad []string
	for k := range m {
		if !known(k) {
			bad = append(bad, k)
		}
	}
	sort.Strings(bad)
	if len(bad) == 0 {
		return ""
	}
	return bad[0]
}
