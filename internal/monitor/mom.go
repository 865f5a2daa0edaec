package monitor

import (
	"errors"
	"fmt"
	"math"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/fomxml/codec"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/hla"
)

// The MOM classes the monitor reads (docs/mom.md).
const (
	federateClass   = "HLAobjectRoot.HLAmanager.HLAfederate"
	federationClass = "HLAobjectRoot.HLAmanager.HLAfederation"
	requestPrefix   = "HLAinteractionRoot.HLAmanager.HLAfederate.HLArequest."
	reportPrefix    = "HLAinteractionRoot.HLAmanager.HLAfederate.HLAreport."
	fedRequest      = "HLAinteractionRoot.HLAmanager.HLAfederation.HLArequest."
	fedReport       = "HLAinteractionRoot.HLAmanager.HLAfederation.HLAreport."
)

// federateAttrs are the HLAfederate attributes a Reader subscribes to.
var federateAttrs = []string{
	"HLAfederateHandle", "HLAfederateName", "HLAfederateType", "HLAfederateHost",
	"HLAfederateState", "HLAtimeManagerState", "HLAtimeRegulating", "HLAtimeConstrained",
	"HLAlogicalTime", "HLAlookahead", "HLAGALT", "HLALITS",
	"HLAupdatesSent", "HLAreflectionsReceived", "HLAinteractionsSent", "HLAinteractionsReceived",
	"HLAobjectInstancesThatCanBeDeleted", "HLATSOlength", "HLAROlength",
}

// federationAttrs are the HLAfederation attributes a Reader subscribes to.
var federationAttrs = []string{
	"HLAfederationName", "HLAtimeImplementationName",
	"HLAlastSaveName", "HLAlastSaveTime", "HLAnextSaveName", "HLAnextSaveTime",
}

// FederateValues are one federate's HLAfederate instance values, as its
// node last sent them. A value the node left undefined (GALT with no
// regulating federate) is NaN.
type FederateValues struct {
	Handle                              peer.FederateHandle
	Name, Type, Host                    string
	State, TimeState                    string
	Regulating, Constrained             bool
	Time, Lookahead, GALT, LITS         float64
	UpdatesSent, ReflectionsReceived    int64
	InteractionsSent, InteractionsRecvd int64
	CanBeDeleted, TSOQueue, ROQueue     int64
}

// FederationValues are the HLAfederation instance's values.
type FederationValues struct {
	Name, TimeImplementation   string
	LastSaveName, NextSaveName string
	LastSaveTime, NextSaveTime float64 // NaN: none
}

// Reader reads the MOM through the public services of its federate:
// the HLAfederate and HLAfederation instances (subscribed, their values
// asked for) and the report interactions (subscribed, the requests
// published). Every value comes from the node that knows it, over the
// data plane (docs/mom.md); the Reader only decodes.
//
// A Reader's methods are called from one goroutine at a time, or under
// its owner's lock; the federate's services it calls are safe from any.
type Reader struct {
	fed        *peer.Federate
	cd         *codec.Codec
	fdd        *fomxml.FDD
	federate   *fomxml.ObjectClass
	federation *fomxml.ObjectClass
	attrs      []peer.AttributeHandle
	fedAttrs   []peer.AttributeHandle
}

// NewReader prepares a Reader for fed's FDD; it subscribes to nothing yet.
func NewReader(fed *peer.Federate) (*Reader, error) {
	fdd := fed.FDD()
	cd, err := codec.New(fdd)
	if err != nil {
		return nil, fmt.Errorf("monitor: the FDD's data types: %w", err)
	}
	r := &Reader{fed: fed, cd: cd, fdd: fdd}
	var ok bool
	if r.federate, ok = fdd.ObjectClass(federateClass); !ok {
		return nil, fmt.Errorf("monitor: the FDD has no %s class", federateClass)
	}
	if r.federation, ok = fdd.ObjectClass(federationClass); !ok {
		return nil, fmt.Errorf("monitor: the FDD has no %s class", federationClass)
	}
	if r.attrs, err = handles(r.federate, federateAttrs); err != nil {
		return nil, err
	}
	if r.fedAttrs, err = handles(r.federation, federationAttrs); err != nil {
		return nil, err
	}
	return r, nil
}

func handles(oc *fomxml.ObjectClass, names []string) ([]peer.AttributeHandle, error) {
	hs := make([]peer.AttributeHandle, 0, len(names))
	for _, n := range names {
		a, ok := oc.Attribute(n)
		if !ok {
			return nil, fmt.Errorf("monitor: %s has no attribute %s", oc.Name, n)
		}
		hs = append(hs, a.Handle)
	}
	return hs, nil
}

// FederateClass is the HLAfederate class's handle.
func (r *Reader) FederateClass() peer.ObjectClassHandle { return r.federate.Handle }

// FederationClass is the HLAfederation class's handle.
func (r *Reader) FederationClass() peer.ObjectClassHandle { return r.federation.Handle }

// SubscribeFederates subscribes to the HLAfederate instances: every
// federate's node then has its federate's instance discovered here.
func (r *Reader) SubscribeFederates() error {
	return r.fed.SubscribeObjectClassAttributes(r.federate.Handle, r.attrs...)
}

// RequestFederates asks every federate's node for its instance's
// values: one request for the class, one update from each node.
func (r *Reader) RequestFederates() error {
	return r.fed.RequestAttributeValueUpdateForClass(r.federate.Handle, nil, r.attrs...)
}

// IsFederate reports whether ev reflects an HLAfederate instance (the
// MOM instances' handles have serial 0, docs/mom.md).
func (r *Reader) IsFederate(obj peer.ObjectInstanceHandle) bool {
	return obj.Serial == 0 && obj.Federate != 0
}

// DecodeFederate merges the values of a reflection of an HLAfederate
// instance into v. A value that does not decode is an error naming
// the attribute; the others are still merged.
func (r *Reader) DecodeFederate(ev peer.ReflectAttributeValues, v *FederateValues) error {
	v.Handle = ev.Object.Federate
	return r.eachValue(r.federate, ev, func(name string, val any) {
		switch name {
		case "HLAfederateName":
			v.Name, _ = val.(string)
		case "HLAfederateType":
			v.Type, _ = val.(string)
		case "HLAfederateHost":
			v.Host, _ = val.(string)
		case "HLAfederateState":
			v.State, _ = val.(string)
		case "HLAtimeManagerState":
			v.TimeState, _ = val.(string)
		case "HLAtimeRegulating":
			v.Regulating, _ = val.(bool)
		case "HLAtimeConstrained":
			v.Constrained, _ = val.(bool)
		case "HLAlogicalTime":
			v.Time = asFloat(val)
		case "HLAlookahead":
			v.Lookahead = asFloat(val)
		case "HLAGALT":
			v.GALT = asFloat(val)
		case "HLALITS":
			v.LITS = asFloat(val)
		case "HLAupdatesSent":
			v.UpdatesSent = asInt(val)
		case "HLAreflectionsReceived":
			v.ReflectionsReceived = asInt(val)
		case "HLAinteractionsSent":
			v.InteractionsSent = asInt(val)
		case "HLAinteractionsReceived":
			v.InteractionsRecvd = asInt(val)
		case "HLAobjectInstancesThatCanBeDeleted":
			v.CanBeDeleted = asInt(val)
		case "HLATSOlength":
			v.TSOQueue = asInt(val)
		case "HLAROlength":
			v.ROQueue = asInt(val)
		}
	})
}

// SubscribeFederation subscribes to the HLAfederation instance, which
// the monitor's own node holds (docs/mom.md).
func (r *Reader) SubscribeFederation() error {
	return r.fed.SubscribeObjectClassAttributes(r.federation.Handle, r.fedAttrs...)
}

// RequestFederation asks for the HLAfederation instance's values.
func (r *Reader) RequestFederation() error {
	return r.fed.RequestAttributeValueUpdateForClass(r.federation.Handle, nil, r.fedAttrs...)
}

// DecodeFederation merges a reflection of the HLAfederation instance
// into v.
func (r *Reader) DecodeFederation(ev peer.ReflectAttributeValues, v *FederationValues) error {
	return r.eachValue(r.federation, ev, func(name string, val any) {
		switch name {
		case "HLAfederationName":
			v.Name, _ = val.(string)
		case "HLAtimeImplementationName":
			v.TimeImplementation, _ = val.(string)
		case "HLAlastSaveName":
			v.LastSaveName, _ = val.(string)
		case "HLAnextSaveName":
			v.NextSaveName, _ = val.(string)
		case "HLAlastSaveTime":
			v.LastSaveTime = asFloat(val)
		case "HLAnextSaveTime":
			v.NextSaveTime = asFloat(val)
		}
	})
}

// eachValue decodes each value of a reflection of class's instance and
// hands it to set by attribute name. A value that does not decode is an
// error naming the attribute; the others are still handed over.
func (r *Reader) eachValue(class *fomxml.ObjectClass, ev peer.ReflectAttributeValues, set func(name string, val any)) error {
	var errs []error
	for h, b := range ev.Values {
		a, ok := class.AttributeByHandle(h)
		if !ok {
			continue
		}
		val, err := r.decode(a, b)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		set(a.Name, val)
	}
	return errors.Join(errs...)
}

// decode decodes one attribute value; logical times and intervals
// become float64 (NaN when the value is empty: undefined).
func (r *Reader) decode(a *fomxml.Attribute, b []byte) (any, error) {
	v, err := r.decodeType(a.DataType, b)
	if err != nil {
		return nil, fmt.Errorf("monitor: %s: %w", a.Name, err)
	}
	return v, nil
}

// decodeType decodes a value of data type typ. HLAlogicalTime and
// HLAtimeInterval hold the time's encoding (HLAfloat64Time or
// HLAinteger64Time, as the federation keeps time); they become float64,
// NaN when empty (undefined).
func (r *Reader) decodeType(typ string, b []byte) (any, error) {
	v, err := r.cd.Decode(typ, b)
	if err != nil || (typ != "HLAlogicalTime" && typ != "HLAtimeInterval") {
		return v, err
	}
	raw, _ := v.([]byte)
	if len(raw) == 0 {
		return math.NaN(), nil
	}
	t, err := r.fed.GetTimeFactory().Decode(raw)
	if err != nil {
		return nil, err
	}
	return t.Float(), nil
}

// asFloat is a decoded time as float64; NaN for any other value (a MIM
// that declares the attribute with another type).
func asFloat(v any) float64 {
	if f, ok := v.(float64); ok {
		return f
	}
	return math.NaN()
}

func asInt(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case uint64:
		return int64(min(n, math.MaxInt64))
	}
	return 0
}

// ---- Interactions: requests sent, reports read ----

// reports are the report classes the monitor subscribes to.
var reports = []string{
	reportPrefix + "HLAreportObjectInstancesThatCanBeDeleted",
	reportPrefix + "HLAreportObjectInstanceInformation",
	reportPrefix + "HLAreportFederateLost",
	fedReport + "HLAreportSynchronizationPoints",
	fedReport + "HLAreportSynchronizationPointStatus",
}

// requests are the request classes the monitor publishes (its only
// publications: it sends no data of the federation's).
var requests = []string{
	requestPrefix + "HLArequestObjectInstancesThatCanBeDeleted",
	requestPrefix + "HLArequestObjectInstanceInformation",
	fedRequest + "HLArequestSynchronizationPoints",
	fedRequest + "HLArequestSynchronizationPointStatus",
}

// EnableReports subscribes to the reports the monitor reads and
// publishes the requests it sends.
func (r *Reader) EnableReports() error {
	for _, n := range reports {
		ic, ok := r.fdd.InteractionClass(n)
		if !ok {
			return fmt.Errorf("monitor: the FDD has no %s", n)
		}
		if err := r.fed.SubscribeInteractionClass(ic.Handle); err != nil {
			return fmt.Errorf("monitor: subscribe %s: %w", ic.Name, err)
		}
	}
	for _, n := range requests {
		ic, ok := r.fdd.InteractionClass(n)
		if !ok {
			return fmt.Errorf("monitor: the FDD has no %s", n)
		}
		if err := r.fed.PublishInteractionClass(ic.Handle); err != nil {
			return fmt.Errorf("monitor: publish %s: %w", ic.Name, err)
		}
	}
	return nil
}

// send sends request class name with parameters by name, encoded as the
// MIM declares them.
func (r *Reader) send(name string, args map[string]any) error {
	ic, ok := r.fdd.InteractionClass(name)
	if !ok {
		return fmt.Errorf("monitor: the FDD has no %s", name)
	}
	pv := peer.ParameterValues{}
	for k, v := range args {
		p, ok := ic.Parameter(k)
		if !ok {
			return fmt.Errorf("monitor: %s has no parameter %s", ic.Name, k)
		}
		b, err := r.cd.Encode(p.DataType, v)
		if err != nil {
			return fmt.Errorf("monitor: %s.%s: %w", ic.Name, k, err)
		}
		pv[p.Handle] = b
	}
	return r.fed.SendInteraction(ic.Handle, pv, nil)
}

// RequestObjectCounts asks federate f's node for the instances, per
// class, that f may delete (those it registered or acquired the
// privilege to delete).
func (r *Reader) RequestObjectCounts(f peer.FederateHandle) error {
	return r.send(requestPrefix+"HLArequestObjectInstancesThatCanBeDeleted", map[string]any{"HLAfederate": hla.EncodeHandle(f)})
}

// RequestInstanceInformation asks federate f's node which attributes of
// obj f owns.
func (r *Reader) RequestInstanceInformation(f peer.FederateHandle, obj peer.ObjectInstanceHandle) error {
	return r.send(requestPrefix+"HLArequestObjectInstanceInformation", map[string]any{"HLAfederate": hla.EncodeHandle(f), "HLAobjectInstance": obj.Encode()})
}

// RequestSynchronizationPoints asks the monitor's own node for the
// synchronization points in progress and each one's status.
func (r *Reader) RequestSynchronizationPoints() error {
	return errors.Join(
		r.send(fedRequest+"HLArequestSynchronizationPoints", nil),
		r.send(fedRequest+"HLArequestSynchronizationPointStatus", nil),
	)
}

// Report is a decoded MOM report: one of ObjectCounts, InstanceOwnership,
// FederateLost, SyncPoints, SyncPointStatus.
type Report any

// ObjectCounts: the instances per class federate Federate may delete.
type ObjectCounts struct {
	Federate peer.FederateHandle
	Counts   map[peer.ObjectClassHandle]int64
}

// InstanceOwnership: the attributes of Object that Federate owns.
type InstanceOwnership struct {
	Federate   peer.FederateHandle
	Object     peer.ObjectInstanceHandle
	Owned      []peer.AttributeHandle
	Registered peer.ObjectClassHandle
}

// FederateLost: the monitor's node took Federate for lost.
type FederateLost struct {
	Federate peer.FederateHandle
	Name     string
	Time     float64 // the monitor's logical time then; NaN: none
	Reason   string
}

// SyncPoints: the labels of the synchronization points in progress.
type SyncPoints struct{ Labels []string }

// SyncPointStatus: each member's status at one point
// (MovingToSynchPoint, WaitingForRestOfFederation).
type SyncPointStatus struct {
	Label    string
	Statuses map[peer.FederateHandle]string
}

// DecodeReport decodes a report interaction; false for an interaction
// that is not one of the monitor's reports.
func (r *Reader) DecodeReport(ev peer.ReceiveInteraction) (Report, bool, error) {
	ic, ok := r.fdd.InteractionClassByHandle(ev.Class)
	if !ok || !ic.IsMOM() {
		return nil, false, nil
	}
	args := map[string]any{}
	for h, b := range ev.Values {
		p, ok := ic.ParameterByHandle(h)
		if !ok {
			continue
		}
		v, err := r.decodeType(p.DataType, b)
		if err != nil {
			return nil, true, fmt.Errorf("monitor: %s.%s: %w", ic.Name, p.Name, err)
		}
		args[p.Name] = v
	}
	fedArg := func() peer.FederateHandle {
		b, _ := args["HLAfederate"].([]byte)
		h, _ := hla.DecodeHandle[peer.FederateHandle](b)
		return h
	}
	switch ic.QualifiedName {
	case reportPrefix + "HLAreportObjectInstancesThatCanBeDeleted":
		rep := ObjectCounts{Federate: fedArg(), Counts: map[peer.ObjectClassHandle]int64{}}
		list, _ := args["HLAobjectInstanceCounts"].([]any)
		for _, e := range list {
			m, _ := e.(map[string]any)
			b, _ := m["HLAobjectClass"].([]byte)
			oc, err := hla.DecodeHandle[peer.ObjectClassHandle](b)
			if err != nil {
				return nil, true, fmt.Errorf("monitor: %s: %w", ic.Name, err)
			}
			rep.Counts[oc] += asInt(m["HLAcount"])
		}
		return rep, true, nil
	case reportPrefix + "HLAreportObjectInstanceInformation":
		rep := InstanceOwnership{Federate: fedArg()}
		b, _ := args["HLAobjectInstance"].([]byte)
		obj, err := hla.DecodeObjectInstanceHandle(b)
		if err != nil {
			return nil, true, fmt.Errorf("monitor: %s: %w", ic.Name, err)
		}
		rep.Object = obj
		rb, _ := args["HLAregisteredClass"].([]byte)
		rep.Registered, _ = hla.DecodeHandle[peer.ObjectClassHandle](rb)
		list, _ := args["HLAownedInstanceAttributeList"].([]any)
		for _, e := range list {
			ab, _ := e.([]byte)
			if a, err := hla.DecodeHandle[peer.AttributeHandle](ab); err == nil {
				rep.Owned = append(rep.Owned, a)
			}
		}
		return rep, true, nil
	case reportPrefix + "HLAreportFederateLost":
		rep := FederateLost{Federate: fedArg(), Time: math.NaN()}
		rep.Name, _ = args["HLAfederateName"].(string)
		rep.Reason, _ = args["HLAfaultDescription"].(string)
		if t, ok := args["HLAtimeStamp"].(float64); ok {
			rep.Time = t
		}
		return rep, true, nil
	case fedReport + "HLAreportSynchronizationPoints":
		rep := SyncPoints{Labels: []string{}}
		list, _ := args["HLAsyncPoints"].([]any)
		for _, e := range list {
			if s, ok := e.(string); ok {
				rep.Labels = append(rep.Labels, s)
			}
		}
		return rep, true, nil
	case fedReport + "HLAreportSynchronizationPointStatus":
		rep := SyncPointStatus{Statuses: map[peer.FederateHandle]string{}}
		rep.Label, _ = args["HLAsyncPointName"].(string)
		list, _ := args["HLAsyncPointFederates"].([]any)
		for _, e := range list {
			m, _ := e.(map[string]any)
			b, _ := m["HLAfederate"].([]byte)
			if h, err := hla.DecodeHandle[peer.FederateHandle](b); err == nil {
				rep.Statuses[h], _ = m["HLAfederateSynchStatus"].(string)
			}
		}
		return rep, true, nil
	}
	return nil, false, nil
}

// ClassName is the qualified name of class h, or its number.
func (r *Reader) ClassName(h peer.ObjectClassHandle) string {
	if oc, ok := r.fdd.ObjectClassByHandle(h); ok {
		return oc.QualifiedName
	}
	return fmt.Sprintf("class-%d", h)
}

// AttributeName is the name of attribute a of class h (or an ancestor).
func (r *Reader) AttributeName(h peer.ObjectClassHandle, a peer.AttributeHandle) string {
	if oc, ok := r.fdd.ObjectClassByHandle(h); ok {
		if at, ok := oc.AttributeByHandle(a); ok {
			return at.Name
		}
	}
	return fmt.Sprintf("attribute-%d", a)
}
