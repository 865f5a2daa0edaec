package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/fomxml/codec"
	"github.com/meshrti/meshrti/peer/fedpro/pb"
	"github.com/meshrti/meshrti/testnet"
)

// The conformance tests through `serve`: what a 1516e client (Pitch's
// Evolved adapter of the Federate Protocol) sees of the services whose
// semantics docs/conformance.md describes.

// conformanceFOM is the tests' FOM, shaped as the outside 1516e test
// suite's: class A with aa and ab, its subclass A.B with ba and bb, and
// interaction classes X (xa) and its subclass X.Y (ya).
const conformanceFOM = `<?xml version="1.0"?>
<objectModel xmlns="http://standards.ieee.org/IEEE1516-2010">
  <modelIdentification><name>serve conformance</name><type>FOM</type><version>1</version></modelIdentification>
  <objects><objectClass><name>HLAobjectRoot</name>
    <objectClass><name>A</name><sharing>PublishSubscribe</sharing>
      <attribute><name>aa</name><dataType>HLAopaqueData</dataType><updateType>Conditional</updateType><updateCondition>NA</updateCondition><ownership>DivestAcquire</ownership><sharing>PublishSubscribe</sharing><transportation>HLAreliable</transportation><order>Receive</order></attribute>
      <attribute><name>ab</name><dataType>HLAopaqueData</dataType><updateType>Conditional</updateType><updateCondition>NA</updateCondition><ownership>DivestAcquire</ownership><sharing>PublishSubscribe</sharing><transportation>HLAreliable</transportation><order>Receive</order></attribute>
      <objectClass><name>B</name><sharing>PublishSubscribe</sharing>
        <attribute><name>ba</name><dataType>HLAopaqueData</dataType><updateType>Conditional</updateType><updateCondition>NA</updateCondition><ownership>DivestAcquire</ownership><sharing>PublishSubscribe</sharing><transportation>HLAreliable</transportation><order>Receive</order></attribute>
        <attribute><name>bb</name><dataType>HLAopaqueData</dataType><updateType>Conditional</updateType><updateCondition>NA</updateCondition><ownership>DivestAcquire</ownership><sharing>PublishSubscribe</sharing><transportation>HLAreliable</transportation><order>Receive</order></attribute>
      </objectClass>
    </objectClass>
  </objectClass></objects>
  <interactions><interactionClass><name>HLAinteractionRoot</name>
    <interactionClass><name>X</name><sharing>PublishSubscribe</sharing><transportation>HLAreliable</transportation><order>Receive</order>
      <parameter><name>xa</name><dataType>HLAopaqueData</dataType></parameter>
      <interactionClass><name>Y</name><sharing>PublishSubscribe</sharing><transportation>HLAreliable</transportation><order>Receive</order>
        <parameter><name>ya</name><dataType>HLAopaqueData</dataType></parameter>
      </interactionClass>
    </interactionClass>
  </interactionClass></interactions>
</objectModel>`

// conformanceClients connects two clients to d (with the connect's
// additional settings settings, as Pitch's Evolved adapter sends its
// API.version), creates federation with conformanceFOM and joins them
// as A and B.
func conformanceClients(t *testing.T, d *daemon, federation, settings string) (a, b *fpClient) {
	t.Helper()
	addr := d.addrs[0].String()
	a, b = dialFP(t, addr), dialFP(t, addr)
	for _, c := range []*fpClient{a, b} {
		c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_ConnectWithConfigurationRequest{ConnectWithConfigurationRequest: &pb.ConnectWithConfigurationRequest{
			RtiConfiguration: &pb.RtiConfiguration{AdditionalSettings: settings}}}})
	}
	module := &pb.FomModule{FomModule: &pb.FomModule_File{File: &pb.FileFomModule{Name: "conformance.xml", Content: []byte(conformanceFOM)}}}
	a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_CreateFederationExecutionRequest{CreateFederationExecutionRequest: &pb.CreateFederationExecutionRequest{FederationName: federation, FomModule: module}}})
	for _, x := range []struct {
		c    *fpClient
		name string
	}{{a, "A"}, {b, "B"}} {
		x.c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_JoinFederationExecutionWithNameRequest{JoinFederationExecutionWithNameRequest: &pb.JoinFederationExecutionWithNameRequest{
			FederateName: x.name, FederateType: "conformance", FederationName: federation}}})
	}
	t.Cleanup(func() {
		for _, c := range []*fpClient{b, a} {
			c.Call(&pb.CallRequest{CallRequest: &pb.CallRequest_ResignFederationExecutionRequest{ResignFederationExecutionRequest: &pb.ResignFederationExecutionRequest{ResignAction: pb.ResignAction_DELETE_OBJECTS_THEN_DIVEST}}})
		}
	})
	return a, b
}

// objectClass looks an object class up by name.
func (c *fpClient) objectClass(name string) *pb.ObjectClassHandle {
	c.t.Helper()
	return c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_GetObjectClassHandleRequest{GetObjectClassHandleRequest: &pb.GetObjectClassHandleRequest{ObjectClassName: name}}}).GetGetObjectClassHandleResponse().GetResult()
}

// attrs looks attributes of class up by name.
func (c *fpClient) attrs(class *pb.ObjectClassHandle, names ...string) *pb.AttributeHandleSet {
	c.t.Helper()
	set := &pb.AttributeHandleSet{AttributeHandle: []*pb.AttributeHandle{}}
	for _, n := range names {
		h := c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_GetAttributeHandleRequest{GetAttributeHandleRequest: &pb.GetAttributeHandleRequest{ObjectClass: class, AttributeName: n}}}).GetGetAttributeHandleResponse().GetResult()
		set.AttributeHandle = append(set.AttributeHandle, h)
	}
	return set
}

// exception makes call req and returns the exception it answers with ("" for none).
func (c *fpClient) exception(req *pb.CallRequest) string {
	c.t.Helper()
	resp, err := c.Call(req)
	if err == nil {
		return ""
	}
	if resp == nil {
		c.t.Fatalf("%v: %v", req, err)
	}
	return resp.GetExceptionData().GetExceptionName()
}

// IEEE 1516.1-2010 §5.2 and §5.6 through a 1516e client: publishing or
// subscribing again adds to the earlier set, an empty set adds nothing,
// and only the unpublish and unsubscribe services take attributes away;
// registering checks the published set, reflections carry the
// subscribed attributes only.
func TestServeConformanceDeclarations(t *testing.T) {
	d := testDaemon(t, time.Minute)
	a, b := conformanceClients(t, d, "declarations", "API.version=IEEE 1516-2010\n")
	classB := a.objectClass("A.B")
	publish := func(names ...string) {
		t.Helper()
		a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_PublishObjectClassAttributesRequest{PublishObjectClassAttributesRequest: &pb.PublishObjectClassAttributesRequest{ObjectClass: classB, Attributes: a.attrs(classB, names...)}}})
	}
	subscribe := func(names ...string) {
		t.Helper()
		b.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_SubscribeObjectClassAttributesRequest{SubscribeObjectClassAttributesRequest: &pb.SubscribeObjectClassAttributesRequest{ObjectClass: classB, Attributes: b.attrs(classB, names...)}}})
	}
	register := &pb.CallRequest{CallRequest: &pb.CallRequest_RegisterObjectInstanceRequest{RegisterObjectInstanceRequest: &pb.RegisterObjectInstanceRequest{ObjectClass: classB}}}

	publish()
	if got := a.exception(register); got != "ObjectClassNotPublished" {
		t.Fatalf("registering after publishing no attribute: %q, want ObjectClassNotPublished", got)
	}
	publish("aa", "ba")
	publish("aa", "bb")
	publish()
	subscribe()
	subscribe("aa", "ab", "ba", "bb")
	subscribe("aa")
	subscribe()
	obj := a.ok(register).GetRegisterObjectInstanceResponse().GetResult()
	b.callback("discover", func(cb *pb.CallbackRequest) bool { return cb.GetDiscoverObjectInstance() != nil })

	all := a.attrs(classB, "aa", "ba", "bb")
	update := func(tag string) *pb.CallRequest {
		var vs []*pb.AttributeHandleValue
		for _, h := range all.GetAttributeHandle() {
			vs = append(vs, &pb.AttributeHandleValue{AttributeHandle: h, Value: []byte(tag)})
		}
		return &pb.CallRequest{CallRequest: &pb.CallRequest_UpdateAttributeValuesRequest{UpdateAttributeValuesRequest: &pb.UpdateAttributeValuesRequest{
			ObjectInstance: obj, AttributeValues: &pb.AttributeHandleValueMap{AttributeHandleValue: vs}, UserSuppliedTag: []byte(tag)}}}
	}
	// reflected updates the published attributes with tag and returns
	// the attributes B's reflection carries, sorted by handle.
	reflected := func(tag string) [][]byte {
		t.Helper()
		a.ok(update(tag))
		r := b.callback("reflect "+tag, func(cb *pb.CallbackRequest) bool {
			return bytes.Equal(cb.GetReflectAttributeValues().GetUserSuppliedTag(), []byte(tag))
		}).GetReflectAttributeValues()
		var got [][]byte
		for _, v := range r.GetAttributeValues().GetAttributeHandleValue() {
			got = append(got, v.GetAttributeHandle().GetData())
		}
		slices.SortFunc(got, bytes.Compare)
		return got
	}
	handles := func(set *pb.AttributeHandleSet) [][]byte {
		var hs [][]byte
		for _, h := range set.GetAttributeHandle() {
			hs = append(hs, h.GetData())
		}
		slices.SortFunc(hs, bytes.Compare)
		return hs
	}
	// Published {aa, ba} then {aa, bb}: all three; subscribed {aa, ab, ba,
	// bb} then {aa}: all four.
	if got, want := reflected("both"), handles(all); !slices.EqualFunc(got, want, bytes.Equal) {
		t.Errorf("reflected %x, want aa, ba and bb %x", got, want)
	}
	// Unsubscribing ba and bb takes them away.
	b.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_UnsubscribeObjectClassAttributesRequest{UnsubscribeObjectClassAttributesRequest: &pb.UnsubscribeObjectClassAttributesRequest{ObjectClass: classB, Attributes: b.attrs(classB, "ba", "bb")}}})
	if got, want := reflected("aa only"), handles(a.attrs(classB, "aa")); !slices.EqualFunc(got, want, bytes.Equal) {
		t.Errorf("after unsubscribing ba and bb, reflected %x, want aa %x", got, want)
	}
	// Unpublishing ba takes it away from the instance: updating it is
	// refused.
	a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_UnpublishObjectClassAttributesRequest{UnpublishObjectClassAttributesRequest: &pb.UnpublishObjectClassAttributesRequest{ObjectClass: classB, Attributes: a.attrs(classB, "ba")}}})
	if got := a.exception(update("ba")); got != "AttributeNotOwned" {
		t.Errorf("updating the unpublished ba: %q, want AttributeNotOwned", got)
	}
	if got := a.exception(&pb.CallRequest{CallRequest: &pb.CallRequest_UnpublishObjectClassAttributesRequest{UnpublishObjectClassAttributesRequest: &pb.UnpublishObjectClassAttributesRequest{
		ObjectClass: &pb.ObjectClassHandle{Data: bytes.Repeat([]byte{0xee}, 8)}, Attributes: &pb.AttributeHandleSet{}}}}); got != "ObjectClassNotDefined" {
		t.Errorf("unpublishing no attribute of an undefined class: %q, want ObjectClassNotDefined", got)
	}
}

// mimClash is a FOM module that redefines a class of the MIM otherwise:
// a federation created with it has inconsistent modules.
var mimClash = testnet.MIMClashModule()

// Through serve, a client whose connect says API.version=IEEE 1516-2010
// (Pitch's 1516e client) gets 1516e's exception names: creating a
// federation with modules that redefine a MIM class otherwise is
// InconsistentFDD for it, InconsistentFOM for an HLA 4 client in the same
// daemon; the other renamed exceptions likewise.
func TestServeConformanceEvolvedNames(t *testing.T) {
	d := testDaemon(t, time.Minute)
	addr := d.addrs[0].String()
	modules := func(contents ...string) *pb.FomModuleSet {
		set := &pb.FomModuleSet{}
		for i, c := range contents {
			set.FomModule = append(set.FomModule, &pb.FomModule{FomModule: &pb.FomModule_File{File: &pb.FileFomModule{Name: fmt.Sprintf("m%d.xml", i), Content: []byte(c)}}})
		}
		return set
	}
	for _, tc := range []struct {
		settings                   string
		inconsistent, unreadable   string
		badTransport, sharedByBoth string
	}{
		{"API.version=IEEE 1516-2010\n", "InconsistentFDD", "ErrorReadingFDD", "InvalidTransportationType", "NameNotFound"},
		{"", "InconsistentFOM", "ErrorReadingFOM", "InvalidTransportationTypeHandle", "NameNotFound"},
	} {
		c := dialFP(t, addr)
		c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_ConnectWithConfigurationRequest{ConnectWithConfigurationRequest: &pb.ConnectWithConfigurationRequest{
			RtiConfiguration: &pb.RtiConfiguration{AdditionalSettings: tc.settings}}}})
		create := func(set *pb.FomModuleSet) *pb.CallRequest {
			return &pb.CallRequest{CallRequest: &pb.CallRequest_CreateFederationExecutionWithModulesRequest{CreateFederationExecutionWithModulesRequest: &pb.CreateFederationExecutionWithModulesRequest{
				FederationName: "evolved", FomModules: set}}}
		}
		if got := c.exception(create(modules(conformanceFOM, mimClash))); got != tc.inconsistent {
			t.Errorf("settings %q: creating with a module that redefines a MIM class: %q, want %s", tc.settings, got, tc.inconsistent)
		}
		if got := c.exception(create(modules("<objectModel"))); got != tc.unreadable {
			t.Errorf("settings %q: creating with a module that does not parse: %q, want %s", tc.settings, got, tc.unreadable)
		}
		federation := fmt.Sprintf("evolved-%d", len(tc.settings))
		c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_CreateFederationExecutionWithModulesRequest{CreateFederationExecutionWithModulesRequest: &pb.CreateFederationExecutionWithModulesRequest{
			FederationName: federation, FomModules: modules(conformanceFOM)}}})
		c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_JoinFederationExecutionWithNameRequest{JoinFederationExecutionWithNameRequest: &pb.JoinFederationExecutionWithNameRequest{
			FederateName: "A", FederateType: "conformance", FederationName: federation}}})
		for _, x := range []struct {
			req  *pb.CallRequest
			want string
		}{
			{&pb.CallRequest{CallRequest: &pb.CallRequest_GetTransportationTypeNameRequest{GetTransportationTypeNameRequest: &pb.GetTransportationTypeNameRequest{
				TransportationType: &pb.TransportationTypeHandle{Data: []byte{0, 0, 0, 9}}}}}, tc.badTransport},
			{&pb.CallRequest{CallRequest: &pb.CallRequest_GetInteractionClassHandleRequest{GetInteractionClassHandleRequest: &pb.GetInteractionClassHandleRequest{InteractionClassName: "Bogus"}}}, tc.sharedByBoth},
		} {
			if got := c.exception(x.req); got != x.want {
				t.Errorf("settings %q: %v: %q, want %s", tc.settings, x.req, got, x.want)
			}
		}
	}
}

// momSide is a client's view of the MOM's interactions, by the names the
// MIM spells them (without the root, as the outside suite names them),
// encoded and decoded as the MIM declares them: a handle is HLAhandle.
type momSide struct {
	t    *testing.T
	fdd  *fomxml.FDD
	enc  *codec.Codec
	seen map[*pb.CallbackRequest]bool // the reports taken
}

func newMOMSide(t *testing.T) *momSide {
	t.Helper()
	doc, err := fomxml.ParseBytes("conformance.xml", []byte(conformanceFOM))
	if err != nil {
		t.Fatal(err)
	}
	fdd, err := fomxml.MergeWithMIM(fomxml.StandardMIM(), doc)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := codec.New(fdd)
	if err != nil {
		t.Fatal(err)
	}
	return &momSide{t, fdd, enc, map[*pb.CallbackRequest]bool{}}
}

// interaction looks name up at c, as a client does.
func (m *momSide) interaction(c *fpClient, name string) *pb.InteractionClassHandle {
	m.t.Helper()
	return c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_GetInteractionClassHandleRequest{GetInteractionClassHandleRequest: &pb.GetInteractionClassHandleRequest{InteractionClassName: name}}}).GetGetInteractionClassHandleResponse().GetResult()
}

// declare has c publish the interaction classes pub and subscribe sub.
func (m *momSide) declare(c *fpClient, pub, sub []string) {
	m.t.Helper()
	for _, n := range pub {
		c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_PublishInteractionClassRequest{PublishInteractionClassRequest: &pb.PublishInteractionClassRequest{InteractionClass: m.interaction(c, n)}}})
	}
	for _, n := range sub {
		c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_SubscribeInteractionClassRequest{SubscribeInteractionClassRequest: &pb.SubscribeInteractionClassRequest{InteractionClass: m.interaction(c, n)}}})
	}
}

// send has c send the interaction name with raw parameter values.
func (m *momSide) send(c *fpClient, name string, params map[string][]byte) {
	m.t.Helper()
	ic := m.interaction(c, name)
	vals := &pb.ParameterHandleValueMap{}
	for p, v := range params {
		h := c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_GetParameterHandleRequest{GetParameterHandleRequest: &pb.GetParameterHandleRequest{InteractionClass: ic, ParameterName: p}}}).GetGetParameterHandleResponse().GetResult()
		vals.ParameterHandleValue = append(vals.ParameterHandleValue, &pb.ParameterHandleValue{ParameterHandle: h, Value: v})
	}
	c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_SendInteractionRequest{SendInteractionRequest: &pb.SendInteractionRequest{InteractionClass: ic, ParameterValues: vals, UserSuppliedTag: []byte{}}}})
}

// encode encodes v as the parameter param of the MOM interaction name.
func (m *momSide) encode(name, param string, v any) []byte {
	m.t.Helper()
	ic, ok := m.fdd.InteractionClass("HLAinteractionRoot." + name)
	if !ok {
		m.t.Fatalf("no interaction class %s", name)
	}
	p, ok := ic.Parameter(param)
	if !ok {
		m.t.Fatalf("%s has no parameter %s", name, param)
	}
	b, err := m.enc.Encode(p.DataType, v)
	if err != nil {
		m.t.Fatal(err)
	}
	return b
}

// report waits at c for an interaction of class name whose parameters,
// decoded as the MIM declares them, match accepts, and returns them.
func (m *momSide) report(c *fpClient, name string, match func(map[string]any) bool) map[string]any {
	m.t.Helper()
	ic, ok := m.fdd.InteractionClass("HLAinteractionRoot." + name)
	if !ok {
		m.t.Fatalf("no interaction class %s", name)
	}
	want := binary.BigEndian.AppendUint64(nil, uint64(ic.Handle))
	var got map[string]any
	c.callback(name, func(cb *pb.CallbackRequest) bool {
		ri := cb.GetReceiveInteraction()
		if ri == nil || m.seen[cb] || !bytes.Equal(ri.GetInteractionClass().GetData(), want) {
			return false
		}
		args := map[string]any{}
		for _, pv := range ri.GetParameterValues().GetParameterHandleValue() {
			p, ok := ic.ParameterByHandle(fomxml.ParameterHandle(binary.BigEndian.Uint64(pv.GetParameterHandle().GetData())))
			if !ok {
				m.t.Fatalf("%s: a parameter of another class", name)
			}
			v, err := m.enc.Decode(p.DataType, pv.GetValue())
			if err != nil {
				m.t.Fatalf("%s.%s does not decode as the MIM's %s: %v", name, p.Name, p.DataType, err)
			}
			args[p.Name] = v
		}
		if match(args) {
			got = args
			m.seen[cb] = true
			return true
		}
		return false
	})
	return got
}

// IEEE 1516.1-2010 §11 through a 1516e client: the reports the outside
// suite waits for arrive, named as the MIM spells them, handles encoded
// as HLAhandle: HLAreportInteractionsSent and ...Received after their
// requests (§11.3: one per transportation type, counts per class), the
// reports of service reporting (a call that succeeds with its returned
// arguments, one that fails, the callbacks at the federate) and of
// exception reporting (a call that fails), and HLAreportMOMexception
// naming the request fully qualified.
func TestServeConformanceMOMReports(t *testing.T) {
	d := testDaemon(t, time.Minute)
	a, b := conformanceClients(t, d, "mom", "API.version=IEEE 1516-2010\n")
	m := newMOMSide(t)
	bh := b.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_GetFederateHandleRequest{GetFederateHandleRequest: &pb.GetFederateHandleRequest{FederateName: "B"}}}).GetGetFederateHandleResponse().GetResult().GetData()
	aboutB := m.encode("HLAmanager.HLAfederate", "HLAfederate", bh) // HLAhandle
	isB := func(args map[string]any) bool { v, _ := args["HLAfederate"].([]byte); return bytes.Equal(v, bh) }
	x, y := m.fdd, m.fdd
	xh, _ := x.InteractionClass("HLAinteractionRoot.X")
	yh, _ := y.InteractionClass("HLAinteractionRoot.X.Y")
	counts := func(args map[string]any) map[uint64]int64 {
		out := map[uint64]int64{}
		list, _ := args["HLAinteractionCounts"].([]any)
		for _, e := range list {
			r := e.(map[string]any)
			out[binary.BigEndian.Uint64(r["HLAinteractionClass"].([]byte))] = r["HLAinteractionCount"].(int64)
		}
		return out
	}
	wantCounts := map[uint64]int64{uint64(xh.Handle): 3, uint64(yh.Handle): 2}
	// checkCounts has A ask for HLAreportInteractionsSent or ...Received
	// (which) about B and checks B's counts of reliable interactions.
	checkCounts := func(which string) {
		t.Helper()
		m.send(a, "HLAmanager.HLAfederate.HLArequest.HLArequestInteractions"+which, map[string][]byte{"HLAfederate": aboutB})
		report := m.report(a, "HLAmanager.HLAfederate.HLAreport.HLAreportInteractions"+which, func(args map[string]any) bool {
			return isB(args) && args["HLAtransportation"] == "HLAreliable"
		})
		if got := counts(report); !maps.Equal(got, wantCounts) {
			t.Errorf("B's interactions %s %v, want X 3, X.Y 2: %v", strings.ToLower(which), got, report)
		}
	}
	sendXY := func(from, to *fpClient) {
		t.Helper()
		for i, n := range []string{"X", "X", "X", "X.Y", "X.Y"} {
			m.send(from, n, map[string][]byte{"xa": {byte(i)}})
			to.callback(fmt.Sprintf("interaction %d", i), func(cb *pb.CallbackRequest) bool {
				v := cb.GetReceiveInteraction().GetParameterValues().GetParameterHandleValue()
				return len(v) == 1 && bytes.Equal(v[0].GetValue(), []byte{byte(i)})
			})
		}
	}

	// HLAreportInteractionsSent about B, which sent X three times and X.Y
	// twice to A.
	m.declare(a, []string{"HLAmanager.HLAfederate.HLArequest.HLArequestInteractionsSent", "HLAmanager.HLAfederate.HLArequest.HLArequestInteractionsReceived"},
		[]string{"HLAmanager.HLAfederate.HLAreport.HLAreportInteractionsSent", "HLAmanager.HLAfederate.HLAreport.HLAreportInteractionsReceived", "X", "X.Y"})
	m.declare(b, []string{"X", "X.Y"}, nil)
	sendXY(b, a)
	checkCounts("Sent")
	// ... and HLAreportInteractionsReceived about B, to which A sent them.
	m.declare(b, nil, []string{"X", "X.Y"})
	m.declare(a, []string{"X", "X.Y"}, nil)
	sendXY(a, b)
	checkCounts("Received")

	// Exception reporting, asked for with B's handle as a 1516e handle's
	// encode writes it (its bytes alone): a call of B's that fails is
	// reported.
	adjust := func(name string, federate []byte, on bool) {
		t.Helper()
		m.declare(a, []string{"HLAmanager.HLAfederate.HLAadjust." + name}, nil)
		m.send(a, "HLAmanager.HLAfederate.HLAadjust."+name, map[string][]byte{
			"HLAfederate": federate, "HLAreportingState": m.encode("HLAmanager.HLAfederate.HLAadjust."+name, "HLAreportingState", on)})
	}
	switchOn := func(get *pb.CallRequest, pick func(*pb.CallResponse) bool) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for !pick(b.ok(get)) {
			if time.Now().After(deadline) {
				t.Fatalf("%v never read true", get)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	m.declare(a, nil, []string{"HLAmanager.HLAfederate.HLAreport.HLAreportException", "HLAmanager.HLAfederate.HLAreport.HLAreportServiceInvocation", "HLAmanager.HLAfederate.HLAreport.HLAreportMOMexception"})
	adjust("HLAsetExceptionReporting", bh, true)
	switchOn(&pb.CallRequest{CallRequest: &pb.CallRequest_GetExceptionReportingSwitchRequest{GetExceptionReportingSwitchRequest: &pb.GetExceptionReportingSwitchRequest{}}},
		func(r *pb.CallResponse) bool { return r.GetGetExceptionReportingSwitchResponse().GetResult() })
	bogus := &pb.CallRequest{CallRequest: &pb.CallRequest_GetObjectClassHandleRequest{GetObjectClassHandleRequest: &pb.GetObjectClassHandleRequest{ObjectClassName: "BogusClass"}}}
	if got := b.exception(bogus); got != "NameNotFound" {
		t.Fatalf("getObjectClassHandle(BogusClass): %q, want NameNotFound", got)
	}
	exc := m.report(a, "HLAmanager.HLAfederate.HLAreport.HLAreportException", isB)
	if exc["HLAservice"] != "getObjectClassHandle" || !strings.Contains(exc["HLAexception"].(string), "BogusClass") {
		t.Errorf("exception report %v", exc)
	}
	adjust("HLAsetExceptionReporting", aboutB, false)

	// Service reporting: a call that succeeds reports its arguments and
	// what it returned, one that fails its exception and no returned
	// argument, and the callbacks at B are reported too.
	adjust("HLAsetServiceReporting", aboutB, true)
	switchOn(&pb.CallRequest{CallRequest: &pb.CallRequest_GetServiceReportingSwitchRequest{GetServiceReportingSwitchRequest: &pb.GetServiceReportingSwitchRequest{}}},
		func(r *pb.CallResponse) bool { return r.GetGetServiceReportingSwitchResponse().GetResult() })
	invocation := func(service string) map[string]any {
		t.Helper()
		return m.report(a, "HLAmanager.HLAfederate.HLAreport.HLAreportServiceInvocation", func(args map[string]any) bool {
			return isB(args) && args["HLAservice"] == service
		})
	}
	strs := func(v any) []string {
		var out []string
		for _, e := range v.([]any) {
			out = append(out, e.(string))
		}
		return out
	}
	fedClass := b.objectClass("HLAmanager.HLAfederation")
	inv := invocation("getObjectClassHandle")
	if inv["HLAsuccessIndicator"] != true || inv["HLAexception"] != "" ||
		!slices.Equal(strs(inv["HLAsuppliedArguments"]), []string{"HLAmanager.HLAfederation"}) ||
		!slices.Equal(strs(inv["HLAreturnedArguments"]), []string{fmt.Sprint(binary.BigEndian.Uint64(fedClass.GetData()))}) {
		t.Errorf("getObjectClassHandle(HLAmanager.HLAfederation) reported %v", inv)
	}
	first := inv["HLAserialNumber"].(int64)
	b.exception(bogus)
	inv = invocation("getObjectClassHandle")
	if inv["HLAsuccessIndicator"] != false || !strings.Contains(inv["HLAexception"].(string), "BogusClass") ||
		!slices.Equal(strs(inv["HLAsuppliedArguments"]), []string{"BogusClass"}) || len(strs(inv["HLAreturnedArguments"])) != 0 ||
		inv["HLAserialNumber"].(int64) <= first {
		t.Errorf("getObjectClassHandle(BogusClass) reported %v", inv)
	}
	b.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_RegisterFederationSynchronizationPointRequest{RegisterFederationSynchronizationPointRequest: &pb.RegisterFederationSynchronizationPointRequest{
		SynchronizationPointLabel: "test", UserSuppliedTag: []byte("Hello")}}})
	for service, args := range map[string][]string{
		"registerFederationSynchronizationPoint":    {"test", "[0x48,0x65,0x6c,0x6c,0x6f]"},
		"synchronizationPointRegistrationSucceeded": {"test"},
		"announceSynchronizationPoint":              {"test", "[0x48,0x65,0x6c,0x6c,0x6f]"},
	} {
		inv := invocation(service)
		if inv["HLAsuccessIndicator"] != true || !slices.Equal(strs(inv["HLAsuppliedArguments"]), args) {
			t.Errorf("%s reported %v, want supplied %q", service, inv, args)
		}
	}

	// Service reporting for a federate that subscribes to the reports is
	// refused, with HLAreportMOMexception naming the request fully
	// qualified.
	adjust("HLAsetServiceReporting", aboutB, false)
	switchOn(&pb.CallRequest{CallRequest: &pb.CallRequest_GetServiceReportingSwitchRequest{GetServiceReportingSwitchRequest: &pb.GetServiceReportingSwitchRequest{}}},
		func(r *pb.CallResponse) bool { return !r.GetGetServiceReportingSwitchResponse().GetResult() })
	m.declare(b, nil, []string{"HLAmanager.HLAfederate.HLAreport.HLAreportServiceInvocation"})
	adjust("HLAsetServiceReporting", aboutB, true)
	mexc := m.report(a, "HLAmanager.HLAfederate.HLAreport.HLAreportMOMexception", isB)
	if mexc["HLAservice"] != "HLAinteractionRoot.HLAmanager.HLAfederate.HLAadjust.HLAsetServiceReporting" {
		t.Errorf("MOM exception %v", mexc)
	}
}
