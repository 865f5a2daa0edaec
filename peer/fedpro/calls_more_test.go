package fedpro

import (
	"bytes"
	"encoding/binary"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/fedpro/pb"
	"github.com/meshrti/meshrti/peer/hla"
	"github.com/meshrti/meshrti/peer/transport"
)

// The ownership, DDM, transportation and switch calls, driven as a
// client drives them: encoded CallRequests into Session.Call, callbacks
// out through the session's push function, one Host per federate over an
// in-process federation (peer.MemRegistry and transport.Network).

// mtFOM has a class with two attributes, Pos bound to the Lane
// dimension and Name to none, and an interaction bound to Lane.
const mtFOM = `<?xml version="1.0"?>
<objectModel xmlns="http://standards.ieee.org/IEEE1516-2010">
  <modelIdentification><name>fedpro test FOM</name><type>FOM</type><version>1</version></modelIdentification>
  <objects><objectClass><name>HLAobjectRoot</name>
    <objectClass><name>Ship</name><sharing>PublishSubscribe</sharing>
      <attribute><name>Pos</name><dataType>HLAopaqueData</dataType><updateType>Conditional</updateType><updateCondition>NA</updateCondition><ownership>DivestAcquire</ownership><sharing>PublishSubscribe</sharing><dimensions><dimension>Lane</dimension></dimensions><transportation>HLAreliable</transportation><order>Receive</order></attribute>
      <attribute><name>Name</name><dataType>HLAopaqueData</dataType><updateType>Static</updateType><updateCondition>NA</updateCondition><ownership>DivestAcquire</ownership><sharing>PublishSubscribe</sharing><transportation>HLAreliable</transportation><order>Receive</order></attribute>
    </objectClass>
  </objectClass></objects>
  <interactions><interactionClass><name>HLAinteractionRoot</name>
    <interactionClass><name>Horn</name><sharing>PublishSubscribe</sharing><dimensions><dimension>Lane</dimension></dimensions><transportation>HLAreliable</transportation><order>Receive</order>
      <parameter><name>Volume</name><dataType>HLAopaqueData</dataType></parameter>
    </interactionClass>
  </interactionClass></interactions>
  <dimensions>
    <dimension><name>Lane</name><dataType>HLAinteger32BE</dataType><upperBound>100</upperBound><normalization>linear (Lane, 0, 100)</normalization><value>[0..1)</value></dimension>
  </dimensions>
</objectModel>`

const mtWait = 10 * time.Second

// mtFederation is one in-process federation execution.
type mtFederation struct {
	t    *testing.T
	name string
	reg  *peer.MemRegistry
	net  *transport.Network
	dir  string
}

// mtNewFederation creates the federation through a session of a Host of
// its own: creating closes the Base's control plane, which a MemRegistry
// control does not survive, so the creating Host cannot join after.
func mtNewFederation(t *testing.T) *mtFederation {
	t.Helper()
	return mtNewFederationFOM(t, mtFOM)
}

// mtNewFederationFOM is mtNewFederation with the FOM module fom.
func mtNewFederationFOM(t *testing.T, fom string) *mtFederation {
	t.Helper()
	mtNoLeaks(t)
	m := &mtFederation{t: t, name: "fp", reg: peer.NewMemRegistry(), net: transport.NewNetwork(transport.NetworkConfig{Seed: 1}), dir: t.TempDir()}
	h := NewHost(Config{Base: peer.Config{Control: m.reg.Control(m.name)}})
	defer h.Close()
	c := &mtFed{t: t, name: "creator", s: h.NewSession(func([]byte) error { return nil })}
	c.ok(&pb.ConnectRequest{})
	c.ok(&pb.CreateFederationExecutionWithModulesRequest{FederationName: m.name, FomModules: &pb.FomModuleSet{FomModule: []*pb.FomModule{
		{FomModule: &pb.FomModule_File{File: &pb.FileFomModule{Name: "fedpro.xml", Content: []byte(fom)}}},
	}}})
	return m
}

// join connects a session of a new Host and joins it as name.
func (m *mtFederation) join(name string) *mtFed {
	m.t.Helper()
	h := NewHost(Config{Base: peer.Config{
		Control: m.reg.Control(m.name), Transport: m.net.Endpoint(name),
		TickInterval: 2 * time.Millisecond, SaveDir: m.dir,
	}})
	m.t.Cleanup(h.Close)
	c := &mtFed{t: m.t, name: name, changed: make(chan struct{}, 1)}
	c.s = h.NewSession(c.push)
	c.ok(&pb.ConnectRequest{})
	r := c.ok(&pb.JoinFederationExecutionWithNameRequest{FederateName: name, FederateType: "test", FederationName: m.name}).(*pb.JoinFederationExecutionWithNameResponse)
	c.handle = r.GetResult().GetFederateHandle()
	return c
}

// mtFed is one client session and the callbacks pushed to it.
type mtFed struct {
	t      *testing.T
	name   string
	s      *Session
	handle *pb.FederateHandle

	mu      sync.Mutex
	pending []protoreflect.ProtoMessage // callbacks not yet taken by wait
	all     []protoreflect.ProtoMessage // every callback
	changed chan struct{}
}

var (
	mtCallOneof     = (&pb.CallRequest{}).ProtoReflect().Descriptor().Oneofs().ByName("callRequest")
	mtResponseOneof = (&pb.CallResponse{}).ProtoReflect().Descriptor().Oneofs().ByName("callResponse")
	mtCallbackOneof = (&pb.CallbackRequest{}).ProtoReflect().Descriptor().Oneofs().Get(0)
)

func (c *mtFed) push(b []byte) error {
	var cb pb.CallbackRequest
	if err := proto.Unmarshal(b, &cb); err != nil {
		c.t.Errorf("%s: a callback that does not decode: %v", c.name, err)
		return err
	}
	fd := cb.ProtoReflect().WhichOneof(mtCallbackOneof)
	if fd == nil {
		c.t.Errorf("%s: an empty callback", c.name)
		return nil
	}
	inner := cb.ProtoReflect().Get(fd).Message().Interface()
	c.mu.Lock()
	c.pending = append(c.pending, inner)
	c.all = append(c.all, inner)
	c.mu.Unlock()
	select {
	case c.changed <- struct{}{}:
	default:
	}
	return nil
}

// call makes one call: the request message m wrapped in a CallRequest,
// encoded, served, and the CallResponse decoded into the call's response
// or its exception.
func (c *mtFed) call(m proto.Message) (proto.Message, *pb.ExceptionData) {
	c.t.Helper()
	var req pb.CallRequest
	name := m.ProtoReflect().Descriptor().FullName()
	fields := mtCallOneof.Fields()
	for i := range fields.Len() {
		if fd := fields.Get(i); fd.Message() != nil && fd.Message().FullName() == name {
			req.ProtoReflect().Set(fd, protoreflect.ValueOfMessage(m.ProtoReflect()))
			break
		}
	}
	if req.GetCallRequest() == nil {
		c.t.Fatalf("%s is no call", name)
	}
	payload, err := proto.Marshal(&req)
	if err != nil {
		c.t.Fatal(err)
	}
	var resp pb.CallResponse
	if err := proto.Unmarshal(c.s.Call(payload), &resp); err != nil {
		c.t.Fatalf("%s: %s: the response does not decode: %v", c.name, name, err)
	}
	if e := resp.GetExceptionData(); e != nil {
		return nil, e
	}
	fd := resp.ProtoReflect().WhichOneof(mtResponseOneof)
	if fd == nil {
		c.t.Fatalf("%s: %s: an empty response", c.name, name)
	}
	return resp.ProtoReflect().Get(fd).Message().Interface(), nil
}

// ok makes a call that must succeed and returns its response.
func (c *mtFed) ok(m proto.Message) proto.Message {
	c.t.Helper()
	r, e := c.call(m)
	if e != nil {
		c.t.Fatalf("%s: %s: %s: %s", c.name, m.ProtoReflect().Descriptor().Name(), e.GetExceptionName(), e.GetDetails())
	}
	return r
}

// fails makes a call that must answer with the exception named want.
func (c *mtFed) fails(what string, m proto.Message, want string) *pb.ExceptionData {
	c.t.Helper()
	r, e := c.call(m)
	switch {
	case e == nil:
		c.t.Errorf("%s: %s: answered %v, want exception %s", c.name, what, r, want)
	case e.GetExceptionName() != want:
		c.t.Errorf("%s: %s: exception %s (%s), want %s", c.name, what, e.GetExceptionName(), e.GetDetails(), want)
	}
	return e
}

// fed is the session's federate, for looking handles up by name (the
// support calls are served elsewhere).
func (c *mtFed) fed() *peer.Federate {
	c.t.Helper()
	f, err := c.s.federate()
	if err != nil {
		c.t.Fatal(err)
	}
	return f
}

// mtWaitFor takes the first callback of type T that match accepts,
// waiting up to mtWait for it.
func mtWaitFor[T proto.Message](c *mtFed, match func(T) bool) T {
	c.t.Helper()
	deadline := time.NewTimer(mtWait)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		for i, m := range c.pending {
			if v, ok := m.(T); ok && (match == nil || match(v)) {
				c.pending = slices.Delete(c.pending, i, i+1)
				c.mu.Unlock()
				return v
			}
		}
		c.mu.Unlock()
		select {
		case <-c.changed:
		case <-deadline.C:
			var zero T
			c.mu.Lock()
			defer c.mu.Unlock()
			c.t.Fatalf("%s: no %T came in %v; pending: %v", c.name, zero, mtWait, c.pending)
		}
	}
}

// mtNoLeaks fails the test if goroutines of meshrti's peer packages
// outlive it (it runs after every other cleanup of the test).
func mtNoLeaks(t *testing.T) {
	count := func() (int, string) {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		n, first := 0, ""
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, "github.com/meshrti/meshrti/peer") && !strings.Contains(g, "mtNoLeaks") {
				if n++; first == "" {
					first = g
				}
			}
		}
		return n, first
	}
	before, _ := count()
	t.Cleanup(func() {
		deadline := time.Now().Add(mtWait)
		for {
			n, g := count()
			if n <= before {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("%d goroutines of meshrti outlive the test (%d before), e.g.\n%s", n, before, g)
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}

// mtHandles are mtFOM's handles.
type mtHandles struct {
	ship      peer.ObjectClassHandle
	pos, name peer.AttributeHandle
	horn      peer.InteractionClassHandle
	volume    peer.ParameterHandle
	lane      peer.DimensionHandle
}

func mtHandlesOf(c *mtFed) mtHandles {
	c.t.Helper()
	f := c.fed()
	var h mtHandles
	var err error
	must := func(e error) {
		c.t.Helper()
		if e != nil {
			c.t.Fatal(e)
		}
	}
	h.ship, err = f.GetObjectClassHandle("Ship")
	must(err)
	h.pos, err = f.GetAttributeHandle(h.ship, "Pos")
	must(err)
	h.name, err = f.GetAttributeHandle(h.ship, "Name")
	must(err)
	h.horn, err = f.GetInteractionClassHandle("Horn")
	must(err)
	h.volume, err = f.GetParameterHandle(h.horn, "Volume")
	must(err)
	h.lane, err = f.GetDimensionHandle("Lane")
	must(err)
	return h
}

func mtAttrs(as ...peer.AttributeHandle) *pb.AttributeHandleSet { return pbAttrSet(as) }

func mtRegions(rs ...*pb.RegionHandle) *pb.RegionHandleSet {
	return &pb.RegionHandleSet{RegionHandle: rs}
}

// mtPairs pairs attrs with regions.
func mtPairs(attrs *pb.AttributeHandleSet, regions ...*pb.RegionHandle) *pb.AttributeSetRegionSetPairList {
	return &pb.AttributeSetRegionSetPairList{AttributeSetRegionSetPair: []*pb.AttributeSetRegionSetPair{{AttributeSet: attrs, RegionSet: mtRegions(regions...)}}}
}

func mtHas(s *pb.AttributeHandleSet, a peer.AttributeHandle) bool {
	for _, h := range s.GetAttributeHandle() {
		if bytes.Equal(h.GetData(), hla.EncodeHandle(a)) {
			return true
		}
	}
	return false
}

func mtSameObj(a, b *pb.ObjectInstanceHandle) bool { return bytes.Equal(a.GetData(), b.GetData()) }

// mtBad is a handle encoding nothing decodes.
var mtBad = []byte{1, 2, 3}

// mtShip has pub publish Ship's attributes and register an instance that
// sub, subscribing to Name, discovers; the instance's handle.
func mtShip(pub, sub *mtFed, h mtHandles, name string) *pb.ObjectInstanceHandle {
	pub.t.Helper()
	sub.ok(&pb.SubscribeObjectClassAttributesRequest{ObjectClass: pbClass(h.ship), Attributes: mtAttrs(h.name)})
	pub.ok(&pb.PublishObjectClassAttributesRequest{ObjectClass: pbClass(h.ship), Attributes: mtAttrs(h.pos, h.name)})
	mtReserve(pub, name)
	obj := pub.ok(&pb.RegisterObjectInstanceWithNameRequest{ObjectClass: pbClass(h.ship), ObjectInstanceName: name}).(*pb.RegisterObjectInstanceWithNameResponse).GetResult()
	mtWaitFor(sub, func(d *pb.DiscoverObjectInstance) bool { return mtSameObj(d.GetObjectInstance(), obj) })
	return obj
}

// mtReserve reserves an object instance name for c.
func mtReserve(c *mtFed, name string) {
	c.t.Helper()
	c.ok(&pb.ReserveObjectInstanceNameRequest{ObjectInstanceName: name})
	mtWaitFor(c, func(r *pb.ObjectInstanceNameReservationSucceeded) bool { return r.GetObjectInstanceName() == name })
}

// Ownership: two negotiated transfers, an unconditional one, a denied
// and cancelled acquisition, queries, and the exceptions.
func TestCallsOwnership(t *testing.T) {
	m := mtNewFederation(t)
	a, b := m.join("A"), m.join("B")
	h := mtHandlesOf(a)
	b.ok(&pb.PublishObjectClassAttributesRequest{ObjectClass: pbClass(h.ship), Attributes: mtAttrs(h.pos, h.name)})
	obj := mtShip(a, b, h, "ship1")
	owned := func(c *mtFed, attr peer.AttributeHandle) bool {
		t.Helper()
		return c.ok(&pb.IsAttributeOwnedByFederateRequest{ObjectInstance: obj, Attribute: pbAttr(attr)}).(*pb.IsAttributeOwnedByFederateResponse).GetResult()
	}
	if !owned(a, h.name) || owned(b, h.name) {
		t.Fatalf("A owns Name: %v, B: %v; want A only", owned(a, h.name), owned(b, h.name))
	}

	// Exceptions before any transfer.
	unknown := pbObj(peer.ObjectInstanceHandle{Federate: 99, Serial: 1})
	b.fails("unconditional, not owned", &pb.UnconditionalAttributeOwnershipDivestitureRequest{ObjectInstance: obj, Attributes: mtAttrs(h.name)}, "AttributeNotOwned")
	a.fails("unconditional, unknown instance", &pb.UnconditionalAttributeOwnershipDivestitureRequest{ObjectInstance: unknown, Attributes: mtAttrs(h.name)}, "ObjectInstanceNotKnown")
	a.fails("negotiated, bad instance handle", &pb.NegotiatedAttributeOwnershipDivestitureRequest{ObjectInstance: &pb.ObjectInstanceHandle{Data: mtBad}, Attributes: mtAttrs(h.name)}, "ObjectInstanceNotKnown")
	a.fails("negotiated, bad attribute handle", &pb.NegotiatedAttributeOwnershipDivestitureRequest{ObjectInstance: obj, Attributes: &pb.AttributeHandleSet{AttributeHandle: []*pb.AttributeHandle{{Data: mtBad}}}}, "InvalidAttributeHandle")
	a.fails("negotiated, undefined attribute", &pb.NegotiatedAttributeOwnershipDivestitureRequest{ObjectInstance: obj, Attributes: mtAttrs(12345)}, "AttributeNotDefined")
	a.fails("confirm, not offered", &pb.ConfirmDivestitureRequest{ObjectInstance: obj, ConfirmedAttributes: mtAttrs(h.name)}, "AttributeDivestitureWasNotRequested")
	a.fails("cancel divestiture, not offered", &pb.CancelNegotiatedAttributeOwnershipDivestitureRequest{ObjectInstance: obj, Attributes: mtAttrs(h.name)}, "AttributeDivestitureWasNotRequested")
	b.fails("if wanted, not owned", &pb.AttributeOwnershipDivestitureIfWantedRequest{ObjectInstance: obj, Attributes: mtAttrs(h.name)}, "AttributeNotOwned")
	b.fails("deny, not owned", &pb.AttributeOwnershipReleaseDeniedRequest{ObjectInstance: obj, Attributes: mtAttrs(h.name)}, "AttributeNotOwned")
	a.fails("acquire, owned already", &pb.AttributeOwnershipAcquisitionRequest{ObjectInstance: obj, DesiredAttributes: mtAttrs(h.name)}, "FederateOwnsAttributes")
	a.fails("if available, owned already", &pb.AttributeOwnershipAcquisitionIfAvailableRequest{ObjectInstance: obj, DesiredAttributes: mtAttrs(h.name)}, "FederateOwnsAttributes")
	b.fails("cancel acquisition, not requested", &pb.CancelAttributeOwnershipAcquisitionRequest{ObjectInstance: obj, Attributes: mtAttrs(h.name)}, "AttributeAcquisitionWasNotRequested")
	b.fails("query, undefined attribute", &pb.QueryAttributeOwnershipRequest{ObjectInstance: obj, Attributes: mtAttrs(h.name, 12345)}, "AttributeNotDefined")
	b.fails("is owned, bad attribute handle", &pb.IsAttributeOwnedByFederateRequest{ObjectInstance: obj, Attribute: &pb.AttributeHandle{Data: mtBad}}, "InvalidAttributeHandle")
	b.fails("is owned, unknown instance", &pb.IsAttributeOwnedByFederateRequest{ObjectInstance: unknown, Attribute: pbAttr(h.name)}, "ObjectInstanceNotKnown")

	// An offer withdrawn.
	a.ok(&pb.NegotiatedAttributeOwnershipDivestitureRequest{ObjectInstance: obj, Attributes: mtAttrs(h.name), UserSuppliedTag: []byte("maybe")})
	a.ok(&pb.CancelNegotiatedAttributeOwnershipDivestitureRequest{ObjectInstance: obj, Attributes: mtAttrs(h.name)})

	// B asks for Name; A, asked to release it, gives it if wanted.
	b.ok(&pb.AttributeOwnershipAcquisitionRequest{ObjectInstance: obj, DesiredAttributes: mtAttrs(h.name), UserSuppliedTag: []byte("mine")})
	rel := mtWaitFor(a, func(r *pb.RequestAttributeOwnershipRelease) bool { return mtSameObj(r.GetObjectInstance(), obj) })
	if !mtHas(rel.GetCandidateAttributes(), h.name) || string(rel.GetUserSuppliedTag()) != "mine" {
		t.Errorf("release request %v, want Name tagged mine", rel)
	}
	given := a.ok(&pb.AttributeOwnershipDivestitureIfWantedRequest{ObjectInstance: obj, Attributes: mtAttrs(h.name)}).(*pb.AttributeOwnershipDivestitureIfWantedResponse).GetResult()
	if len(given.GetAttributeHandle()) != 1 || !mtHas(given, h.name) {
		t.Errorf("divested if wanted %v, want Name", given)
	}
	got := mtWaitFor(b, func(n *pb.AttributeOwnershipAcquisitionNotification) bool {
		return mtSameObj(n.GetObjectInstance(), obj)
	})
	if !mtHas(got.GetSecuredAttributes(), h.name) {
		t.Errorf("B secured %v, want Name", got.GetSecuredAttributes())
	}
	if !owned(b, h.name) {
		t.Error("B does not own Name it acquired")
	}

	// A offers Pos; B takes the offer; A confirms.
	a.ok(&pb.NegotiatedAttributeOwnershipDivestitureRequest{ObjectInstance: obj, Attributes: mtAttrs(h.pos), UserSuppliedTag: []byte("offer")})
	// (The withdrawn offer of Name may have reached B too.)
	assume := mtWaitFor(b, func(r *pb.RequestAttributeOwnershipAssumption) bool {
		return mtSameObj(r.GetObjectInstance(), obj) && mtHas(r.GetOfferedAttributes(), h.pos)
	})
	if string(assume.GetUserSuppliedTag()) != "offer" {
		t.Errorf("offer tagged %q, want offer", assume.GetUserSuppliedTag())
	}
	b.ok(&pb.AttributeOwnershipAcquisitionRequest{ObjectInstance: obj, DesiredAttributes: mtAttrs(h.pos)})
	confirm := mtWaitFor(a, func(r *pb.RequestDivestitureConfirmation) bool { return mtSameObj(r.GetObjectInstance(), obj) })
	if !mtHas(confirm.GetReleasedAttributes(), h.pos) {
		t.Errorf("confirmation asked for %v, want Pos", confirm.GetReleasedAttributes())
	}
	a.ok(&pb.ConfirmDivestitureRequest{ObjectInstance: obj, ConfirmedAttributes: mtAttrs(h.pos)})
	mtWaitFor(b, func(n *pb.AttributeOwnershipAcquisitionNotification) bool {
		return mtSameObj(n.GetObjectInstance(), obj) && mtHas(n.GetSecuredAttributes(), h.pos)
	})
	if owned(a, h.pos) || !owned(b, h.pos) {
		t.Error("Pos did not move from A to B")
	}
	a.fails("unconditional, given away", &pb.UnconditionalAttributeOwnershipDivestitureRequest{ObjectInstance: obj, Attributes: mtAttrs(h.pos)}, "AttributeNotOwned")

	// A asks who owns both: B, one InformAttributeOwnership each.
	a.ok(&pb.QueryAttributeOwnershipRequest{ObjectInstance: obj, Attributes: mtAttrs(h.pos, h.name)})
	for range 2 {
		inf := mtWaitFor(a, func(i *pb.InformAttributeOwnership) bool { return mtSameObj(i.GetObjectInstance(), obj) })
		if !proto.Equal(inf.GetFederate(), b.handle) {
			t.Errorf("%v is owned by %v, want B %v", inf.GetAttributes(), inf.GetFederate(), b.handle)
		}
	}

	// B lets Pos go; A takes it if available.
	b.ok(&pb.UnconditionalAttributeOwnershipDivestitureRequest{ObjectInstance: obj, Attributes: mtAttrs(h.pos), UserSuppliedTag: []byte("bye")})
	a.ok(&pb.AttributeOwnershipAcquisitionIfAvailableRequest{ObjectInstance: obj, DesiredAttributes: mtAttrs(h.pos)})
	mtWaitFor(a, func(n *pb.AttributeOwnershipAcquisitionNotification) bool {
		return mtSameObj(n.GetObjectInstance(), obj) && mtHas(n.GetSecuredAttributes(), h.pos)
	})

	// B asks for Pos back; A denies; B cancels.
	b.ok(&pb.AttributeOwnershipAcquisitionRequest{ObjectInstance: obj, DesiredAttributes: mtAttrs(h.pos)})
	mtWaitFor(a, func(r *pb.RequestAttributeOwnershipRelease) bool { return mtHas(r.GetCandidateAttributes(), h.pos) })
	a.ok(&pb.AttributeOwnershipReleaseDeniedRequest{ObjectInstance: obj, Attributes: mtAttrs(h.pos)})
	b.ok(&pb.CancelAttributeOwnershipAcquisitionRequest{ObjectInstance: obj, Attributes: mtAttrs(h.pos)})
	mtWaitFor(b, func(c *pb.ConfirmAttributeOwnershipAcquisitionCancellation) bool {
		return mtHas(c.GetAttributes(), h.pos)
	})
	if !owned(a, h.pos) || owned(b, h.pos) {
		t.Error("a denied and cancelled acquisition moved Pos")
	}
}

// The calls need a joined federate.
func TestCallsNeedJoin(t *testing.T) {
	mtNoLeaks(t)
	h := NewHost(Config{Base: peer.Config{Control: peer.NewMemRegistry().Control("x")}})
	defer h.Close()
	c := &mtFed{t: t, name: "lone", s: h.NewSession(func([]byte) error { return nil })}
	calls := []proto.Message{
		&pb.IsAttributeOwnedByFederateRequest{},
		&pb.CreateRegionRequest{},
		&pb.GetTransportationTypeHandleRequest{TransportationTypeName: "HLAreliable"},
		&pb.GetObjectClassRelevanceAdvisorySwitchRequest{},
		&pb.SetServiceReportingSwitchRequest{},
		&pb.GetNonRegulatedGrantSwitchRequest{},
		&pb.NormalizeServiceGroupRequest{},
	}
	for _, m := range calls {
		c.fails(string(m.ProtoReflect().Descriptor().Name())+" unconnected", m, "NotConnected")
	}
	c.ok(&pb.ConnectRequest{})
	for _, m := range calls {
		c.fails(string(m.ProtoReflect().Descriptor().Name())+" unjoined", m, "FederateNotExecutionMember")
	}
}

// DDM: regions, filtered reflections and interactions, requests with
// regions, the dimension and region support calls, and the exceptions.
func TestCallsDDM(t *testing.T) {
	m := mtNewFederation(t)
	a, b := m.join("A"), m.join("B")
	h := mtHandlesOf(a)
	lane := pbDim(h.lane)

	// The dimension support calls.
	if d := a.ok(&pb.GetDimensionHandleRequest{DimensionName: "Lane"}).(*pb.GetDimensionHandleResponse).GetResult(); !proto.Equal(d, lane) {
		t.Errorf("Lane is %v, want %v", d, lane)
	}
	if n := a.ok(&pb.GetDimensionNameRequest{Dimension: lane}).(*pb.GetDimensionNameResponse).GetResult(); n != "Lane" {
		t.Errorf("dimension name %q", n)
	}
	if ub := a.ok(&pb.GetDimensionUpperBoundRequest{Dimension: lane}).(*pb.GetDimensionUpperBoundResponse).GetResult(); ub != 100 {
		t.Errorf("upper bound %d, want 100", ub)
	}
	oneDim := func(what string, s *pb.DimensionHandleSet) {
		t.Helper()
		if len(s.GetDimensionHandle()) != 1 || !proto.Equal(s.GetDimensionHandle()[0], lane) {
			t.Errorf("%s: dimensions %v, want Lane", what, s)
		}
	}
	oneDim("Ship", a.ok(&pb.GetAvailableDimensionsForObjectClassRequest{ObjectClass: pbClass(h.ship)}).(*pb.GetAvailableDimensionsForObjectClassResponse).GetResult())
	oneDim("Horn", a.ok(&pb.GetAvailableDimensionsForInteractionClassRequest{InteractionClass: pbInteraction(h.horn)}).(*pb.GetAvailableDimensionsForInteractionClassResponse).GetResult())
	a.fails("dimension handle, unknown name", &pb.GetDimensionHandleRequest{DimensionName: "Depth"}, "NameNotFound")
	a.fails("dimension name, bad handle", &pb.GetDimensionNameRequest{Dimension: &pb.DimensionHandle{Data: mtBad}}, "InvalidDimensionHandle")
	a.fails("dimension name, unknown handle", &pb.GetDimensionNameRequest{Dimension: pbDim(9999)}, "InvalidDimensionHandle")
	a.fails("upper bound, unknown handle", &pb.GetDimensionUpperBoundRequest{Dimension: pbDim(9999)}, "InvalidDimensionHandle")
	a.fails("class dimensions, bad handle", &pb.GetAvailableDimensionsForObjectClassRequest{ObjectClass: &pb.ObjectClassHandle{Data: mtBad}}, "InvalidObjectClassHandle")
	a.fails("class dimensions, unknown class", &pb.GetAvailableDimensionsForObjectClassRequest{ObjectClass: pbClass(777)}, "InvalidObjectClassHandle")
	a.fails("interaction dimensions, unknown class", &pb.GetAvailableDimensionsForInteractionClassRequest{InteractionClass: pbInteraction(777)}, "InvalidInteractionClassHandle")

	// Regions.
	region := func(c *mtFed, lo, hi uint32) *pb.RegionHandle {
		t.Helper()
		r := c.ok(&pb.CreateRegionRequest{Dimensions: &pb.DimensionHandleSet{DimensionHandle: []*pb.DimensionHandle{lane}}}).(*pb.CreateRegionResponse).GetResult()
		c.ok(&pb.SetRangeBoundsRequest{Region: r, Dimension: lane, RangeBounds: &pb.RangeBounds{Lower: lo, Upper: hi}})
		c.ok(&pb.CommitRegionModificationsRequest{Regions: mtRegions(r)})
		return r
	}
	sub := region(b, 0, 10)
	if rb := b.ok(&pb.GetRangeBoundsRequest{Region: sub, Dimension: lane}).(*pb.GetRangeBoundsResponse).GetResult(); rb.GetLower() != 0 || rb.GetUpper() != 10 {
		t.Errorf("range bounds %v, want [0, 10)", rb)
	}
	oneDim("region", b.ok(&pb.GetDimensionHandleSetRequest{Region: sub}).(*pb.GetDimensionHandleSetResponse).GetResult())
	b.fails("create, bad dimension handle", &pb.CreateRegionRequest{Dimensions: &pb.DimensionHandleSet{DimensionHandle: []*pb.DimensionHandle{{Data: mtBad}}}}, "InvalidDimensionHandle")
	b.fails("create, unknown dimension", &pb.CreateRegionRequest{Dimensions: &pb.DimensionHandleSet{DimensionHandle: []*pb.DimensionHandle{pbDim(9999)}}}, "InvalidDimensionHandle")
	b.fails("set bounds, beyond the dimension", &pb.SetRangeBoundsRequest{Region: sub, Dimension: lane, RangeBounds: &pb.RangeBounds{Lower: 0, Upper: 200}}, "InvalidRangeBound")
	b.fails("set bounds, bad region handle", &pb.SetRangeBoundsRequest{Region: &pb.RegionHandle{Data: mtBad}, Dimension: lane, RangeBounds: &pb.RangeBounds{Lower: 0, Upper: 1}}, "InvalidRegion")
	a.fails("set bounds, another's region", &pb.SetRangeBoundsRequest{Region: sub, Dimension: lane, RangeBounds: &pb.RangeBounds{Lower: 0, Upper: 1}}, "RegionNotCreatedByThisFederate")
	b.fails("get bounds, bad dimension", &pb.GetRangeBoundsRequest{Region: sub, Dimension: &pb.DimensionHandle{Data: mtBad}}, "InvalidDimensionHandle")
	b.fails("commit, bad region handle", &pb.CommitRegionModificationsRequest{Regions: mtRegions(&pb.RegionHandle{Data: mtBad})}, "InvalidRegion")
	b.fails("delete, bad region handle", &pb.DeleteRegionRequest{Region: &pb.RegionHandle{Data: mtBad}}, "InvalidRegion")

	// B subscribes to Pos within [0, 10) and to Name plainly; A, told so
	// by the class relevance advisory, registers a ship at 50.
	b.ok(&pb.SubscribeObjectClassAttributesWithRegionsRequest{ObjectClass: pbClass(h.ship), AttributesAndRegions: mtPairs(mtAttrs(h.pos), sub), Active: true})
	b.fails("delete, in use", &pb.DeleteRegionRequest{Region: sub}, "RegionInUseForUpdateOrSubscription")
	b.fails("subscribe, Name has no Lane", &pb.SubscribeObjectClassAttributesWithRegionsRequest{ObjectClass: pbClass(h.ship), AttributesAndRegions: mtPairs(mtAttrs(h.name), sub), Active: true}, "InvalidRegionContext")
	b.fails("subscribe, bad region handle", &pb.SubscribeObjectClassAttributesWithRegionsRequest{ObjectClass: pbClass(h.ship), AttributesAndRegions: mtPairs(mtAttrs(h.pos), &pb.RegionHandle{Data: mtBad}), Active: true}, "InvalidRegion")
	b.fails("subscribe, bad class handle", &pb.SubscribeObjectClassAttributesWithRegionsRequest{ObjectClass: &pb.ObjectClassHandle{Data: mtBad}, AttributesAndRegions: mtPairs(mtAttrs(h.pos), sub), Active: true}, "InvalidObjectClassHandle")
	e := b.fails("subscribe actively with a rate", &pb.SubscribeObjectClassAttributesWithRegionsAndRateRequest{ObjectClass: pbClass(h.ship), AttributesAndRegions: mtPairs(mtAttrs(h.pos), sub), Active: true, UpdateRateDesignator: "Fast"}, "RTIinternalError")
	if !strings.Contains(e.GetDetails(), "not supported") {
		t.Errorf("details %q do not say it is not supported", e.GetDetails())
	}
	b.fails("subscribe passively, unknown rate", &pb.SubscribeObjectClassAttributesWithRegionsAndRateRequest{ObjectClass: pbClass(h.ship), AttributesAndRegions: mtPairs(mtAttrs(h.pos), sub), UpdateRateDesignator: "Never"}, "InvalidUpdateRateDesignator")
	b.ok(&pb.SubscribeObjectClassAttributesRequest{ObjectClass: pbClass(h.ship), Attributes: mtAttrs(h.name)})
	a.ok(&pb.SetObjectClassRelevanceAdvisorySwitchRequest{Value: true})
	a.ok(&pb.PublishObjectClassAttributesRequest{ObjectClass: pbClass(h.ship), Attributes: mtAttrs(h.pos, h.name)})
	mtWaitFor(a, func(s *pb.StartRegistrationForObjectClass) bool {
		return proto.Equal(s.GetObjectClass(), pbClass(h.ship))
	})
	at := region(a, 50, 51)
	a.fails("register, another's region", &pb.RegisterObjectInstanceWithRegionsRequest{ObjectClass: pbClass(h.ship), AttributesAndRegions: mtPairs(mtAttrs(h.pos), sub)}, "RegionNotCreatedByThisFederate")
	mtReserve(a, "ship1")
	obj := a.ok(&pb.RegisterObjectInstanceWithNameAndRegionsRequest{ObjectClass: pbClass(h.ship), AttributesAndRegions: mtPairs(mtAttrs(h.pos), at), ObjectInstanceName: "ship1"}).(*pb.RegisterObjectInstanceWithNameAndRegionsResponse).GetResult()
	other := a.ok(&pb.RegisterObjectInstanceWithRegionsRequest{ObjectClass: pbClass(h.ship), AttributesAndRegions: mtPairs(mtAttrs(h.pos), at)}).(*pb.RegisterObjectInstanceWithRegionsResponse).GetResult()
	if mtSameObj(obj, other) {
		t.Errorf("two instances with handle %v", obj)
	}
	d := mtWaitFor(b, func(d *pb.DiscoverObjectInstance) bool { return mtSameObj(d.GetObjectInstance(), obj) })
	if d.GetObjectInstanceName() != "ship1" {
		t.Errorf("discovered %q, want ship1", d.GetObjectInstanceName())
	}
	a.ok(&pb.UnassociateRegionsForUpdatesRequest{ObjectInstance: obj, AttributesAndRegions: mtPairs(mtAttrs(h.pos), at)})
	a.ok(&pb.AssociateRegionsForUpdatesRequest{ObjectInstance: obj, AttributesAndRegions: mtPairs(mtAttrs(h.pos), at)})
	a.fails("associate, bad instance", &pb.AssociateRegionsForUpdatesRequest{ObjectInstance: &pb.ObjectInstanceHandle{Data: mtBad}, AttributesAndRegions: mtPairs(mtAttrs(h.pos), at)}, "ObjectInstanceNotKnown")
	a.fails("associate, another's region", &pb.AssociateRegionsForUpdatesRequest{ObjectInstance: obj, AttributesAndRegions: mtPairs(mtAttrs(h.pos), sub)}, "RegionNotCreatedByThisFederate")

	// Pos at 50 is outside B's [0, 10), at 5 inside; Name always passes.
	update := func(vs map[peer.AttributeHandle]string) {
		t.Helper()
		m := peer.AttributeValues{}
		for a, v := range vs {
			m[a] = []byte(v)
		}
		a.ok(&pb.UpdateAttributeValuesRequest{ObjectInstance: obj, AttributeValues: pbAttrValues(m)})
	}
	update(map[peer.AttributeHandle]string{h.pos: "far", h.name: "n1"})
	a.ok(&pb.SetRangeBoundsRequest{Region: at, Dimension: lane, RangeBounds: &pb.RangeBounds{Lower: 5, Upper: 6}})
	a.ok(&pb.CommitRegionModificationsRequest{Regions: mtRegions(at)})
	update(map[peer.AttributeHandle]string{h.pos: "near"})
	var got []string
	for len(got) < 2 {
		r := mtWaitFor(b, func(r *pb.ReflectAttributeValues) bool { return mtSameObj(r.GetObjectInstance(), obj) })
		for _, v := range r.GetAttributeValues().GetAttributeHandleValue() {
			got = append(got, string(v.GetValue()))
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"n1", "near"}) {
		t.Errorf("B reflected %q, want the name and the near position only", got)
	}

	// B asks for Pos within its region: A is asked to provide it.
	b.ok(&pb.RequestAttributeValueUpdateWithRegionsRequest{ObjectClass: pbClass(h.ship), AttributesAndRegions: mtPairs(mtAttrs(h.pos), sub), UserSuppliedTag: []byte("please")})
	p := mtWaitFor(a, func(p *pb.ProvideAttributeValueUpdate) bool { return mtSameObj(p.GetObjectInstance(), obj) })
	if !mtHas(p.GetAttributes(), h.pos) || string(p.GetUserSuppliedTag()) != "please" {
		t.Errorf("provide %v, want Pos tagged please", p)
	}
	b.fails("request, Name has no Lane", &pb.RequestAttributeValueUpdateWithRegionsRequest{ObjectClass: pbClass(h.ship), AttributesAndRegions: mtPairs(mtAttrs(h.name), sub)}, "InvalidRegionContext")

	// Interactions on lanes 7 and 3; B listens on 3.
	b3 := region(b, 3, 4)
	b.ok(&pb.SubscribeInteractionClassWithRegionsRequest{InteractionClass: pbInteraction(h.horn), Active: true, Regions: mtRegions(b3)})
	b.fails("subscribe interaction, bad region", &pb.SubscribeInteractionClassWithRegionsRequest{InteractionClass: pbInteraction(h.horn), Active: true, Regions: mtRegions(&pb.RegionHandle{Data: mtBad})}, "InvalidRegion")
	b.fails("subscribe interaction, bad class", &pb.SubscribeInteractionClassWithRegionsRequest{InteractionClass: &pb.InteractionClassHandle{Data: mtBad}, Active: true, Regions: mtRegions(b3)}, "InvalidInteractionClassHandle")
	a.ok(&pb.SetInteractionRelevanceAdvisorySwitchRequest{Value: true})
	a.ok(&pb.PublishInteractionClassRequest{InteractionClass: pbInteraction(h.horn)})
	mtWaitFor(a, func(s *pb.TurnInteractionsOn) bool {
		return proto.Equal(s.GetInteractionClass(), pbInteraction(h.horn))
	})
	honk := func(v string) *pb.ParameterHandleValueMap {
		return pbParamValues(peer.ParameterValues{h.volume: []byte(v)})
	}
	r7 := region(a, 7, 8)
	spared := a.fed().Stats().Spared
	a.ok(&pb.SendInteractionWithRegionsRequest{InteractionClass: pbInteraction(h.horn), ParameterValues: honk("seven"), Regions: mtRegions(r7)})
	if s := a.fed().Stats().Spared; s != spared+1 {
		t.Errorf("the interaction on lane 7 was sent (spared %d, then %d): no subscriber's region overlaps it", spared, s)
	}
	when := &pb.LogicalTime{Data: binary.BigEndian.AppendUint64(nil, math.Float64bits(1))}
	a.ok(&pb.SendInteractionWithRegionsAndTimeRequest{InteractionClass: pbInteraction(h.horn), ParameterValues: honk("three"), Regions: mtRegions(region(a, 3, 4)), Time: when, UserSuppliedTag: []byte("t")})
	a.fails("send timed, bad time", &pb.SendInteractionWithRegionsAndTimeRequest{InteractionClass: pbInteraction(h.horn), ParameterValues: honk("x"), Regions: mtRegions(b3), Time: &pb.LogicalTime{Data: mtBad}}, "InvalidLogicalTime")
	a.fails("send, another's region", &pb.SendInteractionWithRegionsRequest{InteractionClass: pbInteraction(h.horn), ParameterValues: honk("x"), Regions: mtRegions(b3)}, "RegionNotCreatedByThisFederate")
	a.fails("send, bad parameter", &pb.SendInteractionWithRegionsRequest{InteractionClass: pbInteraction(h.horn), ParameterValues: &pb.ParameterHandleValueMap{ParameterHandleValue: []*pb.ParameterHandleValue{{ParameterHandle: &pb.ParameterHandle{Data: mtBad}}}}, Regions: mtRegions(b3)}, "InvalidParameterHandle")
	received := func(vs *pb.ParameterHandleValueMap) string {
		for _, v := range vs.GetParameterHandleValue() {
			return string(v.GetValue())
		}
		return ""
	}
	// Without time regulation the timed send arrives in receive order,
	// as one or the other callback.
	var heard string
	deadline := time.Now().Add(mtWait)
	for heard == "" && time.Now().Before(deadline) {
		b.mu.Lock()
		for _, m := range b.all {
			switch r := m.(type) {
			case *pb.ReceiveInteraction:
				heard = received(r.GetParameterValues())
			case *pb.ReceiveInteractionWithTime:
				heard = received(r.GetParameterValues())
			}
			if heard != "" {
				break
			}
		}
		b.mu.Unlock()
		if heard == "" {
			select {
			case <-b.changed:
			case <-time.After(time.Until(deadline)):
			}
		}
	}
	if heard != "three" {
		t.Errorf("B heard %q first, want three (lane 7 is outside its region)", heard)
	}

	// Unsubscribing frees the region.
	b.ok(&pb.UnsubscribeInteractionClassWithRegionsRequest{InteractionClass: pbInteraction(h.horn), Regions: mtRegions(b3)})
	b.ok(&pb.UnsubscribeObjectClassAttributesWithRegionsRequest{ObjectClass: pbClass(h.ship), AttributesAndRegions: mtPairs(mtAttrs(h.pos), sub)})
	b.ok(&pb.SubscribeObjectClassAttributesWithRegionsAndRateRequest{ObjectClass: pbClass(h.ship), AttributesAndRegions: mtPairs(mtAttrs(h.pos), sub)})
	b.ok(&pb.UnsubscribeObjectClassAttributesWithRegionsRequest{ObjectClass: pbClass(h.ship), AttributesAndRegions: mtPairs(mtAttrs(h.pos), sub)})
	b.ok(&pb.SubscribeInteractionClassWithRegionsRequest{InteractionClass: pbInteraction(h.horn), Regions: mtRegions(b3)}) // passive
	b.ok(&pb.UnsubscribeInteractionClassWithRegionsRequest{InteractionClass: pbInteraction(h.horn), Regions: mtRegions(b3)})
	b.ok(&pb.DeleteRegionRequest{Region: sub})
	b.fails("a deleted region", &pb.GetDimensionHandleSetRequest{Region: sub}, "InvalidRegion")
	b.fails("bounds of a deleted region", &pb.GetRangeBoundsRequest{Region: sub, Dimension: lane}, "InvalidRegion")
}

// Transportation: changes confirmed, reports at another session, the
// handle and name calls, and the exceptions.
func TestCallsTransportation(t *testing.T) {
	m := mtNewFederation(t)
	a, b := m.join("A"), m.join("B")
	h := mtHandlesOf(a)
	best := a.ok(&pb.GetTransportationTypeHandleRequest{TransportationTypeName: "HLAbestEffort"}).(*pb.GetTransportationTypeHandleResponse).GetResult()
	reliable := a.ok(&pb.GetTransportationTypeHandleRequest{TransportationTypeName: "HLAreliable"}).(*pb.GetTransportationTypeHandleResponse).GetResult()
	// The form the public clients make themselves: 4 bytes, big-endian.
	if !bytes.Equal(best.GetData(), []byte{0, 0, 0, 2}) || !bytes.Equal(reliable.GetData(), []byte{0, 0, 0, 1}) {
		t.Errorf("HLAbestEffort is %x, HLAreliable %x; want handles 2 and 1 in 4 bytes", best.GetData(), reliable.GetData())
	}
	// The 8-byte form is accepted too.
	if n := a.ok(&pb.GetTransportationTypeNameRequest{TransportationType: &pb.TransportationTypeHandle{Data: hla.EncodeHandle(uint64(1))}}).(*pb.GetTransportationTypeNameResponse).GetResult(); n != "HLAreliable" {
		t.Errorf("name of the 8-byte handle 1: %q, want HLAreliable", n)
	}
	if n := a.ok(&pb.GetTransportationTypeNameRequest{TransportationType: best}).(*pb.GetTransportationTypeNameResponse).GetResult(); n != "HLAbestEffort" {
		t.Errorf("name %q, want HLAbestEffort", n)
	}
	a.fails("handle, unknown name", &pb.GetTransportationTypeHandleRequest{TransportationTypeName: "Pigeon"}, "InvalidTransportationName")
	a.fails("name, unknown handle", &pb.GetTransportationTypeNameRequest{TransportationType: &pb.TransportationTypeHandle{Data: hla.EncodeHandle(uint64(7))}}, "InvalidTransportationTypeHandle")
	a.fails("name, bad handle", &pb.GetTransportationTypeNameRequest{TransportationType: &pb.TransportationTypeHandle{Data: mtBad}}, "InvalidTransportationTypeHandle")

	// Attributes: A makes Pos best effort; B, which does not own it, may
	// not. B subscribes to both and discovers A's ship.
	b.ok(&pb.SubscribeObjectClassAttributesRequest{ObjectClass: pbClass(h.ship), Attributes: mtAttrs(h.pos)})
	obj := mtShip(a, b, h, "ship1")
	a.ok(&pb.RequestAttributeTransportationTypeChangeRequest{ObjectInstance: obj, Attributes: mtAttrs(h.pos), TransportationType: best})
	conf := mtWaitFor(a, func(c *pb.ConfirmAttributeTransportationTypeChange) bool {
		return mtSameObj(c.GetObjectInstance(), obj)
	})
	if !mtHas(conf.GetAttributes(), h.pos) || !proto.Equal(conf.GetTransportationType(), best) {
		t.Errorf("confirmed %v", conf)
	}
	b.fails("change, not owned", &pb.RequestAttributeTransportationTypeChangeRequest{ObjectInstance: obj, Attributes: mtAttrs(h.pos), TransportationType: best}, "AttributeNotOwned")
	a.fails("change, bad type", &pb.RequestAttributeTransportationTypeChangeRequest{ObjectInstance: obj, Attributes: mtAttrs(h.pos), TransportationType: &pb.TransportationTypeHandle{Data: hla.EncodeHandle(uint64(3))}}, "InvalidTransportationTypeHandle")
	a.fails("change, bad attribute", &pb.RequestAttributeTransportationTypeChangeRequest{ObjectInstance: obj, Attributes: &pb.AttributeHandleSet{AttributeHandle: []*pb.AttributeHandle{{Data: mtBad}}}, TransportationType: best}, "InvalidAttributeHandle")
	a.ok(&pb.QueryAttributeTransportationTypeRequest{ObjectInstance: obj, Attribute: pbAttr(h.pos)})
	rep := mtWaitFor(a, func(r *pb.ReportAttributeTransportationType) bool { return mtSameObj(r.GetObjectInstance(), obj) })
	if !proto.Equal(rep.GetTransportationType(), best) || !proto.Equal(rep.GetAttribute(), pbAttr(h.pos)) {
		t.Errorf("A's report %v, want Pos best effort", rep)
	}
	b.ok(&pb.QueryAttributeTransportationTypeRequest{ObjectInstance: obj, Attribute: pbAttr(h.name)})
	if rep := mtWaitFor(b, func(r *pb.ReportAttributeTransportationType) bool { return mtSameObj(r.GetObjectInstance(), obj) }); !proto.Equal(rep.GetTransportationType(), reliable) {
		t.Errorf("B's report on Name %v, want reliable (the FOM's)", rep)
	}
	b.fails("query, bad attribute", &pb.QueryAttributeTransportationTypeRequest{ObjectInstance: obj, Attribute: &pb.AttributeHandle{Data: mtBad}}, "InvalidAttributeHandle")
	b.fails("query, undefined attribute", &pb.QueryAttributeTransportationTypeRequest{ObjectInstance: obj, Attribute: pbAttr(12345)}, "AttributeNotDefined")
	a.ok(&pb.UpdateAttributeValuesRequest{ObjectInstance: obj, AttributeValues: pbAttrValues(peer.AttributeValues{h.pos: []byte("p")})})
	refl := mtWaitFor(b, func(r *pb.ReflectAttributeValues) bool { return mtSameObj(r.GetObjectInstance(), obj) })
	if !proto.Equal(refl.GetTransportationType(), best) {
		t.Errorf("Pos reflected by %v, want best effort", refl.GetTransportationType())
	}

	// Interactions: A makes Horn best effort; B hears of it by asking.
	b.fails("interaction change, not published", &pb.RequestInteractionTransportationTypeChangeRequest{InteractionClass: pbInteraction(h.horn), TransportationType: best}, "InteractionClassNotPublished")
	a.ok(&pb.PublishInteractionClassRequest{InteractionClass: pbInteraction(h.horn)})
	a.fails("interaction change, bad class", &pb.RequestInteractionTransportationTypeChangeRequest{InteractionClass: &pb.InteractionClassHandle{Data: mtBad}, TransportationType: best}, "InvalidInteractionClassHandle")
	a.fails("interaction change, bad type", &pb.RequestInteractionTransportationTypeChangeRequest{InteractionClass: pbInteraction(h.horn), TransportationType: &pb.TransportationTypeHandle{}}, "InvalidTransportationTypeHandle")
	a.ok(&pb.RequestInteractionTransportationTypeChangeRequest{InteractionClass: pbInteraction(h.horn), TransportationType: best})
	if c := mtWaitFor(a, (func(*pb.ConfirmInteractionTransportationTypeChange) bool)(nil)); !proto.Equal(c.GetTransportationType(), best) || !proto.Equal(c.GetInteractionClass(), pbInteraction(h.horn)) {
		t.Errorf("confirmed %v", c)
	}
	b.fails("interaction query, bad federate", &pb.QueryInteractionTransportationTypeRequest{Federate: &pb.FederateHandle{Data: mtBad}, InteractionClass: pbInteraction(h.horn)}, "InvalidFederateHandle")
	b.fails("interaction query, bad class", &pb.QueryInteractionTransportationTypeRequest{Federate: a.handle, InteractionClass: &pb.InteractionClassHandle{Data: mtBad}}, "InvalidInteractionClassHandle")
	// A's choice reaches B through the replicated state: B asks until
	// the report says so.
	deadline := time.Now().Add(mtWait)
	for {
		b.ok(&pb.QueryInteractionTransportationTypeRequest{Federate: a.handle, InteractionClass: pbInteraction(h.horn)})
		r := mtWaitFor(b, (func(*pb.ReportInteractionTransportationType) bool)(nil))
		if !proto.Equal(r.GetFederate(), a.handle) || !proto.Equal(r.GetInteractionClass(), pbInteraction(h.horn)) {
			t.Fatalf("report %v is not about A's Horn", r)
		}
		if proto.Equal(r.GetTransportationType(), best) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("B still hears A sends Horn by %v", r.GetTransportationType())
		}
		time.Sleep(5 * time.Millisecond) // the next tick's replication
	}
}

// Switches: the advisory switches set idempotently and read back, with
// their advisories; the fixed switches; the resign directive; the
// normalization calls.
func TestCallsSwitches(t *testing.T) {
	m := mtNewFederation(t)
	a, b := m.join("A"), m.join("B")
	h := mtHandlesOf(a)

	advisories := []mtSwitch{
		{"object class relevance", &pb.GetObjectClassRelevanceAdvisorySwitchRequest{},
			func(v bool) proto.Message { return &pb.SetObjectClassRelevanceAdvisorySwitchRequest{Value: v} },
			func(r proto.Message) bool {
				return r.(*pb.GetObjectClassRelevanceAdvisorySwitchResponse).GetResult()
			}},
		{"attribute relevance", &pb.GetAttributeRelevanceAdvisorySwitchRequest{},
			func(v bool) proto.Message { return &pb.SetAttributeRelevanceAdvisorySwitchRequest{Value: v} },
			func(r proto.Message) bool { return r.(*pb.GetAttributeRelevanceAdvisorySwitchResponse).GetResult() }},
		{"attribute scope", &pb.GetAttributeScopeAdvisorySwitchRequest{},
			func(v bool) proto.Message { return &pb.SetAttributeScopeAdvisorySwitchRequest{Value: v} },
			func(r proto.Message) bool { return r.(*pb.GetAttributeScopeAdvisorySwitchResponse).GetResult() }},
		{"interaction relevance", &pb.GetInteractionRelevanceAdvisorySwitchRequest{},
			func(v bool) proto.Message { return &pb.SetInteractionRelevanceAdvisorySwitchRequest{Value: v} },
			func(r proto.Message) bool {
				return r.(*pb.GetInteractionRelevanceAdvisorySwitchResponse).GetResult()
			}},
	}
	for _, s := range advisories {
		if a.val(s) {
			t.Errorf("%s is on at join; the FOM leaves it off", s.name)
		}
		for _, v := range []bool{true, true, false, false, true} {
			a.ok(s.set(v))
			if got := a.val(s); got != v {
				t.Errorf("%s: set %v, get %v", s.name, v, got)
			}
		}
		if b.val(s) {
			t.Errorf("%s: A's setting shows at B", s.name)
		}
	}

	// With A's attribute relevance and scope advisories on: A hears that
	// B wants Pos of its ship; B hears Pos is in scope.
	b.ok(&pb.SetAttributeScopeAdvisorySwitchRequest{Value: true})
	b.ok(&pb.SubscribeObjectClassAttributesRequest{ObjectClass: pbClass(h.ship), Attributes: mtAttrs(h.pos)})
	obj := mtShip(a, b, h, "ship1")
	on := mtWaitFor(a, func(u *pb.TurnUpdatesOnForObjectInstance) bool { return mtSameObj(u.GetObjectInstance(), obj) })
	if !mtHas(on.GetAttributes(), h.pos) {
		t.Errorf("updates turned on for %v, want Pos", on.GetAttributes())
	}
	mtWaitFor(b, func(s *pb.AttributesInScope) bool {
		return mtSameObj(s.GetObjectInstance(), obj) && mtHas(s.GetAttributes(), h.pos)
	})

	// The switches meshrti keeps off.
	type fixed struct {
		name string
		get  proto.Message
		set  proto.Message // with value true; nil: no Set call
		off  proto.Message // with value false
	}
	for _, f := range []fixed{
		{"convey region designator sets", &pb.GetConveyRegionDesignatorSetsSwitchRequest{}, &pb.SetConveyRegionDesignatorSetsSwitchRequest{Value: true}, &pb.SetConveyRegionDesignatorSetsSwitchRequest{}},
		{"send service reports to file", &pb.GetSendServiceReportsToFileSwitchRequest{}, &pb.SetSendServiceReportsToFileSwitchRequest{Value: true}, &pb.SetSendServiceReportsToFileSwitchRequest{}},
		{"auto provide", &pb.GetAutoProvideSwitchRequest{}, nil, nil},
		{"delay subscription evaluation", &pb.GetDelaySubscriptionEvaluationSwitchRequest{}, nil, nil},
		{"advisories use known class", &pb.GetAdvisoriesUseKnownClassSwitchRequest{}, nil, nil},
		{"allow relaxed DDM", &pb.GetAllowRelaxedDDMSwitchRequest{}, nil, nil},
		{"non-regulated grant", &pb.GetNonRegulatedGrantSwitchRequest{}, nil, nil},
	} {
		r := a.ok(f.get)
		if v := r.ProtoReflect().Get(r.ProtoReflect().Descriptor().Fields().ByName("result")).Bool(); v {
			t.Errorf("%s is on", f.name)
		}
		if f.set == nil {
			continue
		}
		a.ok(f.off)
		e := a.fails("turn on "+f.name, f.set, "RTIinternalError")
		if !strings.Contains(e.GetDetails(), "meshrti does not support") {
			t.Errorf("%s: details %q do not say meshrti does not support it", f.name, e.GetDetails())
		}
	}

	// The MOM's reporting switches, both ways: on, A's service calls are
	// reported; A may not subscribe to those reports meanwhile.
	for _, sw := range []struct {
		name    string
		get     proto.Message
		on, off proto.Message
	}{
		{"service reporting", &pb.GetServiceReportingSwitchRequest{}, &pb.SetServiceReportingSwitchRequest{Value: true}, &pb.SetServiceReportingSwitchRequest{}},
		{"exception reporting", &pb.GetExceptionReportingSwitchRequest{}, &pb.SetExceptionReportingSwitchRequest{Value: true}, &pb.SetExceptionReportingSwitchRequest{}},
	} {
		get := func() bool {
			r := a.ok(sw.get)
			return r.ProtoReflect().Get(r.ProtoReflect().Descriptor().Fields().ByName("result")).Bool()
		}
		if get() {
			t.Errorf("%s is on at join", sw.name)
		}
		a.ok(sw.on)
		if !get() {
			t.Errorf("%s: set on, reads off", sw.name)
		}
		if sw.name == "service reporting" {
			fed, _ := a.s.federate()
			report, _ := fed.FDD().InteractionClass("HLAinteractionRoot.HLAmanager.HLAfederate.HLAreport.HLAreportServiceInvocation")
			a.fails("subscribe to its own service reports", &pb.SubscribeInteractionClassRequest{InteractionClass: &pb.InteractionClassHandle{Data: peer.EncodeHandle(report.Handle)}}, "FederateServiceInvocationsAreBeingReportedViaMOM")
		}
		a.ok(sw.off)
		if get() {
			t.Errorf("%s: set off, reads on", sw.name)
		}
	}

	// The automatic resign directive, both ways.
	dir := func() pb.ResignAction {
		return a.ok(&pb.GetAutomaticResignDirectiveRequest{}).(*pb.GetAutomaticResignDirectiveResponse).GetResult()
	}
	if d := dir(); d != pb.ResignAction_CANCEL_THEN_DELETE_THEN_DIVEST {
		t.Errorf("directive at join %v, want the FOM default CANCEL_THEN_DELETE_THEN_DIVEST", d)
	}
	for _, v := range []pb.ResignAction{pb.ResignAction_UNCONDITIONALLY_DIVEST_ATTRIBUTES, pb.ResignAction_DELETE_OBJECTS, pb.ResignAction_CANCEL_PENDING_OWNERSHIP_ACQUISITIONS,
		pb.ResignAction_DELETE_OBJECTS_THEN_DIVEST, pb.ResignAction_NO_ACTION, pb.ResignAction_CANCEL_THEN_DELETE_THEN_DIVEST} {
		a.ok(&pb.SetAutomaticResignDirectiveRequest{Value: v})
		if d := dir(); d != v {
			t.Errorf("set directive %v, get %v", v, d)
		}
	}
	a.fails("directive, unknown action", &pb.SetAutomaticResignDirectiveRequest{Value: pb.ResignAction(42)}, "InvalidResignAction")

	// Normalization.
	n := func(c *mtFed, m proto.Message) uint32 {
		t.Helper()
		r := c.ok(m)
		return uint32(r.ProtoReflect().Get(r.ProtoReflect().Descriptor().Fields().ByName("result")).Uint())
	}
	if v := n(a, &pb.NormalizeServiceGroupRequest{ServiceGroup: pb.ServiceGroup_OWNERSHIP_MANAGEMENT}); v != 3 {
		t.Errorf("ownership management normalizes to %d, want 3", v)
	}
	a.fails("service group, unknown", &pb.NormalizeServiceGroupRequest{ServiceGroup: pb.ServiceGroup(42)}, "InvalidServiceGroup")
	fa, err := hla.DecodeHandle[peer.FederateHandle](a.handle.GetData())
	if err != nil {
		t.Fatal(err)
	}
	if v := n(b, &pb.NormalizeFederateHandleRequest{Federate: a.handle}); v != uint32(fa) {
		t.Errorf("A's handle %d normalizes to %d", fa, v)
	}
	b.fails("federate, zero", &pb.NormalizeFederateHandleRequest{Federate: pbFed(0)}, "InvalidFederateHandle")
	b.fails("federate, bad handle", &pb.NormalizeFederateHandleRequest{Federate: &pb.FederateHandle{Data: mtBad}}, "InvalidFederateHandle")
	// Class handles are 64-bit: their low 32 bits.
	if v := n(b, &pb.NormalizeObjectClassHandleRequest{ObjectClass: pbClass(h.ship)}); v != uint32(h.ship) {
		t.Errorf("Ship %d normalizes to %d", h.ship, v)
	}
	b.fails("class, unknown", &pb.NormalizeObjectClassHandleRequest{ObjectClass: pbClass(777)}, "InvalidObjectClassHandle")
	b.fails("class, bad handle", &pb.NormalizeObjectClassHandleRequest{ObjectClass: &pb.ObjectClassHandle{Data: mtBad}}, "InvalidObjectClassHandle")
	if v := n(b, &pb.NormalizeInteractionClassHandleRequest{InteractionClass: pbInteraction(h.horn)}); v != uint32(h.horn) {
		t.Errorf("Horn %d normalizes to %d", h.horn, v)
	}
	b.fails("interaction, unknown", &pb.NormalizeInteractionClassHandleRequest{InteractionClass: pbInteraction(777)}, "InvalidInteractionClassHandle")
	oh, err := hla.DecodeObjectInstanceHandle(obj.GetData())
	if err != nil {
		t.Fatal(err)
	}
	va, vb := n(a, &pb.NormalizeObjectInstanceHandleRequest{ObjectInstance: obj}), n(b, &pb.NormalizeObjectInstanceHandleRequest{ObjectInstance: obj})
	if want := uint32(oh.Federate)<<20 | uint32(oh.Serial); va != want || vb != want {
		t.Errorf("instance %v normalizes to %d at A, %d at B; want %d", oh, va, vb, want)
	}
	b.fails("instance, unknown", &pb.NormalizeObjectInstanceHandleRequest{ObjectInstance: pbObj(peer.ObjectInstanceHandle{Federate: 99, Serial: 9})}, "ObjectInstanceNotKnown")
}

// mtSwitch is an advisory switch's Get and Set calls.
type mtSwitch struct {
	name string
	get  proto.Message
	set  func(bool) proto.Message
	val  func(proto.Message) bool
}

// val reads switch s at c.
func (c *mtFed) val(s mtSwitch) bool {
	c.t.Helper()
	return s.val(c.ok(s.get))
}
