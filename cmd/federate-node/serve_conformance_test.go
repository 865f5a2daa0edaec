package main

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/meshrti/meshrti/peer/fedpro/pb"
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
			c.call(&pb.CallRequest{CallRequest: &pb.CallRequest_ResignFederationExecutionRequest{ResignFederationExecutionRequest: &pb.ResignFederationExecutionRequest{ResignAction: pb.ResignAction_DELETE_OBJECTS_THEN_DIVEST}}})
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
	resp, err := c.call(req)
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
const mimClash = `<?xml version="1.0"?>
<objectModel xmlns="http://standards.ieee.org/IEEE1516-2010">
  <modelIdentification><name>MIM clash</name><type>FOM</type><version>1</version></modelIdentification>
  <objects><objectClass><name>HLAobjectRoot</name>
    <objectClass><name>HLAmanager</name><sharing>Neither</sharing>
      <objectClass><name>HLAfederate</name><sharing>Publish</sharing>
        <attribute><name>HLAfederateHandle</name><dataType>HLAopaqueData</dataType><updateType>Static</updateType><updateCondition>NA</updateCondition><ownership>NoTransfer</ownership><sharing>Publish</sharing><transportation>HLAreliable</transportation><order>Receive</order></attribute>
      </objectClass>
    </objectClass>
  </objectClass></objects>
</objectModel>`

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
