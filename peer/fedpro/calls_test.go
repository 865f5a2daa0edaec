package fedpro

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/fedpro/pb"
	"github.com/meshrti/meshrti/peer/hla"
	"github.com/meshrti/meshrti/peer/transport"
)

const fpFOM = `<?xml version="1.0"?>
<objectModel xmlns="http://standards.ieee.org/IEEE1516-2010">
  <modelIdentification><name>fedpro test</name><type>FOM</type><version>1</version></modelIdentification>
  <objects><objectClass><name>HLAobjectRoot</name>
    <objectClass><name>Car</name><sharing>PublishSubscribe</sharing>
      <directedInteraction><name>HLAinteractionRoot.Horn</name><sharing>PublishSubscribe</sharing></directedInteraction>
      <attribute><name>Speed</name><dataType>HLAopaqueData</dataType><updateType>Conditional</updateType><updateCondition>NA</updateCondition><ownership>DivestAcquire</ownership><sharing>PublishSubscribe</sharing><transportation>HLAreliable</transportation><order>TimeStamp</order></attribute>
    </objectClass>
  </objectClass></objects>
  <interactions><interactionClass><name>HLAinteractionRoot</name>
    <interactionClass><name>Horn</name><sharing>PublishSubscribe</sharing><transportation>HLAreliable</transportation><order>Receive</order>
      <parameter><name>Loud</name><dataType>HLAopaqueData</dataType></parameter>
    </interactionClass>
    <interactionClass><name>Wave</name><sharing>PublishSubscribe</sharing><transportation>HLAreliable</transportation><order>Receive</order></interactionClass>
  </interactionClass></interactions>
</objectModel>`

// fpNet is one in-process federation for the tests: a registry and a
// network; fpClient is one session on it, recording its callbacks.
type fpNet struct {
	reg *peer.MemRegistry
	net *transport.Network
	dir string
}

func newFPNet(t *testing.T) *fpNet {
	return &fpNet{reg: peer.NewMemRegistry(), net: transport.NewNetwork(transport.NetworkConfig{Seed: 3}), dir: t.TempDir()}
}

type fpClient struct {
	t    *testing.T
	host *Host
	s    *Session

	mu  sync.Mutex
	cbs []*pb.CallbackRequest
}

// host is a Host of its own for one client (each federate needs its own
// endpoint of the in-process network).
func (n *fpNet) host(name string) *Host {
	var endpoints int
	return NewHost(Config{
		Base:        peer.Config{TickInterval: 2 * time.Millisecond, SaveDir: n.dir},
		CallTimeout: 10 * time.Second,
		NewControl:  func() peer.ControlPlane { return n.reg.Control("fp") },
		NewTransport: func() transport.Transport {
			endpoints++
			return n.net.Endpoint(fmt.Sprintf("%s-%d", name, endpoints))
		},
	})
}

// client opens a session on a Host of its own (each federate needs its
// own endpoint of the in-process network).
func (n *fpNet) client(t *testing.T, name string) *fpClient {
	h := n.host(name)
	c := &fpClient{t: t, host: h}
	c.s = h.NewSession(func(b []byte) error {
		var cb pb.CallbackRequest
		if err := proto.Unmarshal(b, &cb); err != nil {
			t.Errorf("%s: a callback that does not decode: %v", name, err)
			return nil
		}
		c.mu.Lock()
		c.cbs = append(c.cbs, &cb)
		c.mu.Unlock()
		return nil
	})
	t.Cleanup(func() { c.s.Close(nil); h.Close() })
	return c
}

// call makes one call and returns its response.
func (c *fpClient) call(req *pb.CallRequest) *pb.CallResponse {
	c.t.Helper()
	b, err := proto.Marshal(req)
	if err != nil {
		c.t.Fatal(err)
	}
	var resp pb.CallResponse
	if err := proto.Unmarshal(c.s.Call(b), &resp); err != nil {
		c.t.Fatalf("a response that does not decode: %v", err)
	}
	return &resp
}

// ok makes a call that must succeed.
func (c *fpClient) ok(req *pb.CallRequest) *pb.CallResponse {
	c.t.Helper()
	resp := c.call(req)
	if e := resp.GetExceptionData(); e != nil {
		c.t.Fatalf("%v: %s: %s", req, e.GetExceptionName(), e.GetDetails())
	}
	return resp
}

// fails makes a call that must fail with exception name.
func (c *fpClient) fails(req *pb.CallRequest, name string) {
	c.t.Helper()
	e := c.call(req).GetExceptionData()
	if e.GetExceptionName() != name {
		c.t.Fatalf("%v: exception %q (%s), want %s", req, e.GetExceptionName(), e.GetDetails(), name)
	}
}

// wait returns the first callback match accepts, waiting up to 10 s.
func (c *fpClient) wait(what string, match func(*pb.CallbackRequest) bool) *pb.CallbackRequest {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.mu.Lock()
		for i, cb := range c.cbs {
			if match(cb) {
				c.cbs = append(c.cbs[:i:i], c.cbs[i+1:]...)
				c.mu.Unlock()
				return cb
			}
		}
		c.mu.Unlock()
		if time.Now().After(deadline) {
			c.t.Fatalf("no %s callback in 10 s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func fpModule() *pb.FomModule {
	return &pb.FomModule{FomModule: &pb.FomModule_File{File: &pb.FileFomModule{Name: "fp.xml", Content: []byte(fpFOM)}}}
}

// joinAs connects and joins (creating the federation when create).
func (c *fpClient) joinAs(name string, create bool) *pb.JoinResult {
	c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_ConnectRequest{ConnectRequest: &pb.ConnectRequest{}}})
	return c.joinConnected(name, create)
}

// joinConnected joins a connected session.
func (c *fpClient) joinConnected(name string, create bool) *pb.JoinResult {
	if create {
		c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_CreateFederationExecutionWithModulesRequest{CreateFederationExecutionWithModulesRequest: &pb.CreateFederationExecutionWithModulesRequest{
			FederationName: "fp", FomModules: &pb.FomModuleSet{FomModule: []*pb.FomModule{fpModule()}}}}})
	}
	r := c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_JoinFederationExecutionWithNameRequest{JoinFederationExecutionWithNameRequest: &pb.JoinFederationExecutionWithNameRequest{
		FederateName: name, FederateType: "test", FederationName: "fp"}}})
	return r.GetJoinFederationExecutionWithNameResponse().GetResult()
}

func (c *fpClient) classHandle(name string) *pb.ObjectClassHandle {
	c.t.Helper()
	return c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_GetObjectClassHandleRequest{GetObjectClassHandleRequest: &pb.GetObjectClassHandleRequest{ObjectClassName: name}}}).GetGetObjectClassHandleResponse().GetResult()
}

func (c *fpClient) interactionHandle(name string) *pb.InteractionClassHandle {
	c.t.Helper()
	return c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_GetInteractionClassHandleRequest{GetInteractionClassHandleRequest: &pb.GetInteractionClassHandleRequest{InteractionClassName: name}}}).GetGetInteractionClassHandleResponse().GetResult()
}

// soloJoined is client A, joined to the federation it creates.
func (n *fpNet) soloJoined(t *testing.T) *fpClient {
	t.Helper()
	a := n.client(t, "A")
	a.joinAs("A", true)
	return a
}

// pairJoined is clients A, which creates the federation, and B, joined,
// and A's handles of the class Car and its attribute Speed.
func (n *fpNet) pairJoined(t *testing.T) (a, b *fpClient, car *pb.ObjectClassHandle, speed *pb.AttributeHandle) {
	t.Helper()
	a, b = n.soloJoined(t), n.client(t, "B")
	b.joinAs("B", false)
	car = a.classHandle("Car")
	return a, b, car, a.attrHandle(car, "Speed")
}

func (c *fpClient) attrHandle(class *pb.ObjectClassHandle, name string) *pb.AttributeHandle {
	c.t.Helper()
	return c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_GetAttributeHandleRequest{GetAttributeHandleRequest: &pb.GetAttributeHandleRequest{ObjectClass: class, AttributeName: name}}}).GetGetAttributeHandleResponse().GetResult()
}

func f64(v float64) []byte {
	b, _ := hla.TimeKind(hla.HLAfloat64Time).Factory().Encode(peer.Float64Time(v))
	return b
}

// Two sessions create, join, publish and subscribe, register, update
// with a time stamp and advance time: the subscriber's session is called
// back with the discovery, the time-stamped reflection and the grants.
func TestSessionsExchangeUpdatesAndTime(t *testing.T) {
	n := newFPNet(t)
	a, b := n.client(t, "A"), n.client(t, "B")
	ja := a.joinAs("A", true)
	if ja.GetLogicalTimeImplementationName() != "HLAfloat64Time" || len(ja.GetFederateHandle().GetData()) != 8 {
		t.Fatalf("join result %v", ja)
	}
	b.joinAs("B", false)
	car := a.classHandle("Car")
	speed := a.attrHandle(car, "Speed")
	set := &pb.AttributeHandleSet{AttributeHandle: []*pb.AttributeHandle{speed}}
	b.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_SubscribeObjectClassAttributesRequest{SubscribeObjectClassAttributesRequest: &pb.SubscribeObjectClassAttributesRequest{ObjectClass: car, Attributes: set}}})
	a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_PublishObjectClassAttributesRequest{PublishObjectClassAttributesRequest: &pb.PublishObjectClassAttributesRequest{ObjectClass: car, Attributes: set}}})
	a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_ReserveObjectInstanceNameRequest{ReserveObjectInstanceNameRequest: &pb.ReserveObjectInstanceNameRequest{ObjectInstanceName: "car1"}}})
	if r := a.wait("reservation", func(cb *pb.CallbackRequest) bool { return cb.GetObjectInstanceNameReservationSucceeded() != nil }); r.GetObjectInstanceNameReservationSucceeded().GetObjectInstanceName() != "car1" {
		t.Fatalf("reserved %v", r)
	}
	obj := a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_RegisterObjectInstanceWithNameRequest{RegisterObjectInstanceWithNameRequest: &pb.RegisterObjectInstanceWithNameRequest{ObjectClass: car, ObjectInstanceName: "car1"}}}).GetRegisterObjectInstanceWithNameResponse().GetResult()
	d := b.wait("discover", func(cb *pb.CallbackRequest) bool { return cb.GetDiscoverObjectInstance() != nil }).GetDiscoverObjectInstance()
	if d.GetObjectInstanceName() != "car1" || !bytes.Equal(d.GetObjectInstance().GetData(), obj.GetData()) || !bytes.Equal(d.GetObjectClass().GetData(), car.GetData()) {
		t.Fatalf("discovered %v", d)
	}

	a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_EnableTimeRegulationRequest{EnableTimeRegulationRequest: &pb.EnableTimeRegulationRequest{Lookahead: &pb.LogicalTimeInterval{Data: f64(1)}}}})
	a.wait("regulation", func(cb *pb.CallbackRequest) bool { return cb.GetTimeRegulationEnabled() != nil })
	b.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_EnableTimeConstrainedRequest{EnableTimeConstrainedRequest: &pb.EnableTimeConstrainedRequest{}}})
	b.wait("constrained", func(cb *pb.CallbackRequest) bool { return cb.GetTimeConstrainedEnabled() != nil })

	upd := a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_UpdateAttributeValuesWithTimeRequest{UpdateAttributeValuesWithTimeRequest: &pb.UpdateAttributeValuesWithTimeRequest{
		ObjectInstance: obj, AttributeValues: &pb.AttributeHandleValueMap{AttributeHandleValue: []*pb.AttributeHandleValue{{AttributeHandle: speed, Value: []byte("fast")}}},
		UserSuppliedTag: []byte("t1"), Time: &pb.LogicalTime{Data: f64(3)}}}})
	if !upd.GetUpdateAttributeValuesWithTimeResponse().GetResult().GetRetractionHandleIsValid() {
		t.Error("a time-stamped update has no valid retraction handle")
	}
	a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_TimeAdvanceRequestRequest{TimeAdvanceRequestRequest: &pb.TimeAdvanceRequestRequest{Time: &pb.LogicalTime{Data: f64(5)}}}})
	b.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_TimeAdvanceRequestRequest{TimeAdvanceRequestRequest: &pb.TimeAdvanceRequestRequest{Time: &pb.LogicalTime{Data: f64(4)}}}})
	r := b.wait("reflect", func(cb *pb.CallbackRequest) bool { return cb.GetReflectAttributeValuesWithTime() != nil }).GetReflectAttributeValuesWithTime()
	if string(r.GetUserSuppliedTag()) != "t1" || !bytes.Equal(r.GetTime().GetData(), f64(3)) || r.GetSentOrderType() != pb.OrderType_TIMESTAMP ||
		len(r.GetAttributeValues().GetAttributeHandleValue()) != 1 || string(r.GetAttributeValues().GetAttributeHandleValue()[0].GetValue()) != "fast" {
		t.Fatalf("reflected %v", r)
	}
	g := b.wait("grant", func(cb *pb.CallbackRequest) bool { return cb.GetTimeAdvanceGrant() != nil }).GetTimeAdvanceGrant()
	if !bytes.Equal(g.GetTime().GetData(), f64(4)) {
		t.Fatalf("granted %v", g)
	}
	lt := b.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_QueryLogicalTimeRequest{QueryLogicalTimeRequest: &pb.QueryLogicalTimeRequest{}}}).GetQueryLogicalTimeResponse().GetResult()
	if !bytes.Equal(lt.GetData(), f64(4)) {
		t.Errorf("logical time %x", lt.GetData())
	}
	b.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_ResignFederationExecutionRequest{ResignFederationExecutionRequest: &pb.ResignFederationExecutionRequest{ResignAction: pb.ResignAction_NO_ACTION}}})
	b.fails(&pb.CallRequest{CallRequest: &pb.CallRequest_QueryLogicalTimeRequest{QueryLogicalTimeRequest: &pb.QueryLogicalTimeRequest{}}}, "FederateNotExecutionMember")
	if st := a.host.Stats(); st.Calls == 0 || st.Callbacks == 0 || st.Sessions != 1 {
		t.Errorf("host stats %+v", st)
	}
}

// Calls in the wrong state, with bad handles, that do not decode or that
// meshrti does not serve answer with the standard's exceptions.
func TestCallExceptions(t *testing.T) {
	n := newFPNet(t)
	c := n.client(t, "A")
	getName := &pb.CallRequest{CallRequest: &pb.CallRequest_GetObjectClassNameRequest{GetObjectClassNameRequest: &pb.GetObjectClassNameRequest{ObjectClass: &pb.ObjectClassHandle{Data: []byte{1}}}}}
	c.fails(getName, "NotConnected")
	c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_ConnectRequest{ConnectRequest: &pb.ConnectRequest{}}})
	c.fails(&pb.CallRequest{CallRequest: &pb.CallRequest_ConnectRequest{ConnectRequest: &pb.ConnectRequest{}}}, "AlreadyConnected")
	c.fails(getName, "FederateNotExecutionMember")
	c.fails(&pb.CallRequest{CallRequest: &pb.CallRequest_JoinFederationExecutionRequest{JoinFederationExecutionRequest: &pb.JoinFederationExecutionRequest{FederateType: "x", FederationName: "nowhere"}}}, "FederationExecutionDoesNotExist")
	c.fails(&pb.CallRequest{CallRequest: &pb.CallRequest_CreateFederationExecutionRequest{CreateFederationExecutionRequest: &pb.CreateFederationExecutionRequest{
		FederationName: "bad", FomModule: &pb.FomModule{FomModule: &pb.FomModule_File{File: &pb.FileFomModule{Name: "bad.xml", Content: []byte("<objectModel")}}}}}}, "ErrorReadingFOM")
	c.fails(&pb.CallRequest{CallRequest: &pb.CallRequest_CreateFederationExecutionRequest{CreateFederationExecutionRequest: &pb.CreateFederationExecutionRequest{
		FederationName: "bad", FomModule: &pb.FomModule{FomModule: &pb.FomModule_Url{Url: filepath.Join(t.TempDir(), "missing.xml")}}}}}, "CouldNotOpenFOM")
	c.joinConnected("A", true)
	c.fails(getName, "InvalidObjectClassHandle")
	c.fails(&pb.CallRequest{CallRequest: &pb.CallRequest_GetObjectClassHandleRequest{GetObjectClassHandleRequest: &pb.GetObjectClassHandleRequest{ObjectClassName: "NoSuchClass"}}}, "NameNotFound")
	car := c.classHandle("Car")
	c.fails(&pb.CallRequest{CallRequest: &pb.CallRequest_RegisterObjectInstanceRequest{RegisterObjectInstanceRequest: &pb.RegisterObjectInstanceRequest{ObjectClass: car}}}, "ObjectClassNotPublished")
	c.fails(&pb.CallRequest{CallRequest: &pb.CallRequest_JoinFederationExecutionRequest{JoinFederationExecutionRequest: &pb.JoinFederationExecutionRequest{FederateType: "x", FederationName: "fp"}}}, "FederateAlreadyExecutionMember")
	c.fails(&pb.CallRequest{CallRequest: &pb.CallRequest_SendDirectedInteractionRequest{SendDirectedInteractionRequest: &pb.SendDirectedInteractionRequest{}}}, "InvalidInteractionClassHandle")
	c.fails(&pb.CallRequest{CallRequest: &pb.CallRequest_ChangeDefaultAttributeOrderTypeRequest{ChangeDefaultAttributeOrderTypeRequest: &pb.ChangeDefaultAttributeOrderTypeRequest{}}}, "RTIinternalError")
	c.fails(&pb.CallRequest{}, "RTIinternalError")
	var resp pb.CallResponse
	if err := proto.Unmarshal(c.s.Call([]byte{0xff, 0xff, 0xff}), &resp); err != nil || resp.GetExceptionData().GetExceptionName() != "RTIinternalError" {
		t.Errorf("a garbled call request: %v, %v", resp.GetExceptionData(), err)
	}
	if st := c.host.Stats(); st.Unsupported < 1 || st.Exceptions < 10 {
		t.Errorf("host stats %+v", st)
	}
}

// Every call in the table answers with its own response: the response case
// is the request's case plus one, and the handler's response type is
// that case's message.
func TestRegisteredCallsAnswerTheirCase(t *testing.T) {
	req := (&pb.CallRequest{}).ProtoReflect().Descriptor().Oneofs().ByName("callRequest")
	n := 0
	for i := 0; i < req.Fields().Len(); i++ {
		fd := req.Fields().Get(i)
		h, ok := handlers[fd.Message().FullName()]
		if !ok {
			continue
		}
		n++
		rfd := responseOneof.Fields().ByNumber(fd.Number() + 1)
		if rfd == nil || rfd.Message().FullName() != h.resp {
			t.Errorf("%s answers with %s, its case is %v", fd.Name(), h.resp, rfd)
		}
	}
	if n != len(handlers) {
		t.Errorf("%d handlers in the table, %d of them for call requests", len(handlers), n)
	}
	if n < 60 {
		t.Errorf("only %d calls served", n)
	}
	t.Logf("%d of %d calls served", n, req.Fields().Len())
}

// exceptionName finds the HLA exception inside wrapped errors.
func TestExceptionName(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{peer.ErrAttributeNotOwned, "AttributeNotOwned"},
		{fmt.Errorf("ctx: %w", peer.ErrObjectClassNotPublished), "ObjectClassNotPublished"},
		{fmt.Errorf("%w: %w", peer.ErrInvalidLogicalTime, errors.New("x")), "InvalidLogicalTime"},
		{peer.ErrRTIinternalError, "RTIinternalError"},
		{peer.ErrReadingFDD, "ErrorReadingFOM"},
		{errors.New("something else"), "RTIinternalError"},
	} {
		if got := exceptionName(tc.err); got != tc.want {
			t.Errorf("exceptionName(%v) = %s, want %s", tc.err, got, tc.want)
		}
	}
}

// FOM modules arrive as content, zipped, or as a path or URL to read.
func TestModuleForms(t *testing.T) {
	n := newFPNet(t)
	c := n.client(t, "A")
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	w, _ := zw.Create("fp.xml")
	w.Write([]byte(fpFOM))
	zw.Close()
	path := filepath.Join(t.TempDir(), "fp.xml")
	if err := os.WriteFile(path, []byte(fpFOM), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/fp.xml" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(fpFOM))
	}))
	defer srv.Close()
	for _, m := range []*pb.FomModule{
		fpModule(),
		{FomModule: &pb.FomModule_CompressedModule{CompressedModule: zbuf.Bytes()}},
		{FomModule: &pb.FomModule_Url{Url: path}},
		{FomModule: &pb.FomModule_Url{Url: "file://" + filepath.ToSlash(path)}},
		{FomModule: &pb.FomModule_Url{Url: srv.URL + "/fp.xml"}},
	} {
		d, err := c.s.module(t.Context(), m)
		if err != nil {
			t.Errorf("%v: %v", m, err)
			continue
		}
		if d.Module.Name != "fedpro test" {
			t.Errorf("%v: read module %q", m, d.Module.Name)
		}
	}
	if _, err := c.s.module(t.Context(), &pb.FomModule{FomModule: &pb.FomModule_Url{Url: srv.URL + "/missing.xml"}}); !errors.Is(err, peer.ErrCouldNotOpenFDD) {
		t.Errorf("a missing URL: %v", err)
	}
	if _, err := c.s.module(t.Context(), &pb.FomModule{FomModule: &pb.FomModule_CompressedModule{CompressedModule: []byte("not a zip")}}); !errors.Is(err, peer.ErrCouldNotOpenFDD) {
		t.Errorf("a bad zip: %v", err)
	}
}

// createFederationExecutionWithMIM (and with time) takes the MIM in any
// module form, refuses a missing, standard or broken one with the MIM's
// exceptions, and listFederationExecutions reports the time.
func TestCreateWithMIMCalls(t *testing.T) {
	n := newFPNet(t)
	c := n.client(t, "A")
	c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_ConnectRequest{ConnectRequest: &pb.ConnectRequest{}}})
	create := func(mim *pb.FomModule) *pb.CallRequest {
		return &pb.CallRequest{CallRequest: &pb.CallRequest_CreateFederationExecutionWithMIMAndTimeRequest{CreateFederationExecutionWithMIMAndTimeRequest: &pb.CreateFederationExecutionWithMIMAndTimeRequest{
			FederationName: "fp", FomModules: &pb.FomModuleSet{FomModule: []*pb.FomModule{fpModule()}}, MimModule: mim,
			LogicalTimeImplementationName: string(peer.HLAinteger64Time)}}}
	}
	file := func(name, content string) *pb.FomModule {
		return &pb.FomModule{FomModule: &pb.FomModule_File{File: &pb.FileFomModule{Name: name, Content: []byte(content)}}}
	}
	c.fails(&pb.CallRequest{CallRequest: &pb.CallRequest_CreateFederationExecutionWithMIMRequest{CreateFederationExecutionWithMIMRequest: &pb.CreateFederationExecutionWithMIMRequest{
		FederationName: "fp", FomModules: &pb.FomModuleSet{FomModule: []*pb.FomModule{fpModule()}}}}}, "CouldNotOpenMIM")
	c.fails(create(&pb.FomModule{FomModule: &pb.FomModule_Url{Url: "HLAstandardMIM"}}), "DesignatorIsHLAstandardMIM")
	c.fails(create(&pb.FomModule{FomModule: &pb.FomModule_Url{Url: filepath.Join(t.TempDir(), "missing.xml")}}), "CouldNotOpenMIM")
	c.fails(create(file("bad.xml", "<objectModel")), "ErrorReadingMIM")
	std := string(fomxml.StandardMIMXML())
	c.fails(create(file("lacking.xml", strings.Replace(std, "<name>HLAfederateHandle</name>", "<name>HLAfederateNumber</name>", 1))), "ErrorReadingMIM")
	const manager = "<objectClass>\n        <name>HLAmanager</name>"
	if !strings.Contains(std, manager) {
		t.Fatal("the standard MIM changed its layout")
	}
	c.ok(create(file("extendedMIM.xml", strings.Replace(std, manager, "<objectClass><name>MIMExtra</name><sharing>PublishSubscribe</sharing></objectClass>\n      "+manager, 1))))
	r := c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_JoinFederationExecutionWithNameRequest{JoinFederationExecutionWithNameRequest: &pb.JoinFederationExecutionWithNameRequest{
		FederateName: "A", FederateType: "test", FederationName: "fp"}}})
	if got := r.GetJoinFederationExecutionWithNameResponse().GetResult().GetLogicalTimeImplementationName(); got != string(peer.HLAinteger64Time) {
		t.Errorf("joined with time %q", got)
	}
	c.classHandle("MIMExtra")
	c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_ListFederationExecutionsRequest{ListFederationExecutionsRequest: &pb.ListFederationExecutionsRequest{}}})
	rep := c.wait("report", func(cb *pb.CallbackRequest) bool { return cb.GetReportFederationExecutions() != nil }).GetReportFederationExecutions()
	if fs := rep.GetReport().GetFederationExecutionInformation(); len(fs) != 1 || fs[0].GetFederationExecutionName() != "fp" || fs[0].GetLogicalTimeImplementationName() != string(peer.HLAinteger64Time) {
		t.Errorf("report %v", rep)
	}
}

// listFederationExecutionMembers answers with the members' names and
// types, or with reportFederationExecutionDoesNotExist.
func TestListMembers(t *testing.T) {
	n := newFPNet(t)
	a, b := n.client(t, "A"), n.client(t, "B")
	a.joinAs("A", true)
	b.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_ConnectRequest{ConnectRequest: &pb.ConnectRequest{}}})
	b.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_ListFederationExecutionMembersRequest{ListFederationExecutionMembersRequest: &pb.ListFederationExecutionMembersRequest{FederationName: "fp"}}})
	r := b.wait("members", func(cb *pb.CallbackRequest) bool { return cb.GetReportFederationExecutionMembers() != nil }).GetReportFederationExecutionMembers()
	if ms := r.GetReport().GetFederationExecutionMemberInformation(); r.GetFederationName() != "fp" || len(ms) != 1 || ms[0].GetFederateName() != "A" || ms[0].GetFederateType() != "test" {
		t.Errorf("members %v", r)
	}
	b.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_ListFederationExecutionMembersRequest{ListFederationExecutionMembersRequest: &pb.ListFederationExecutionMembersRequest{FederationName: "nowhere"}}})
	if r := b.wait("does not exist", func(cb *pb.CallbackRequest) bool { return cb.GetReportFederationExecutionDoesNotExist() != nil }); r.GetReportFederationExecutionDoesNotExist().GetFederationName() != "nowhere" {
		t.Errorf("got %v", r)
	}
}

// A directed interaction reaches the owner of the instance it is sent
// to, through its session's callback.
func TestDirectedInteractionCalls(t *testing.T) {
	a, b, car, speed := newFPNet(t).pairJoined(t)
	horn := a.interactionHandle("Horn")
	set := &pb.AttributeHandleSet{AttributeHandle: []*pb.AttributeHandle{speed}}
	horns := &pb.InteractionClassHandleSet{InteractionClassHandle: []*pb.InteractionClassHandle{horn}}
	a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_PublishObjectClassAttributesRequest{PublishObjectClassAttributesRequest: &pb.PublishObjectClassAttributesRequest{ObjectClass: car, Attributes: set}}})
	a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_SubscribeObjectClassDirectedInteractionsRequest{SubscribeObjectClassDirectedInteractionsRequest: &pb.SubscribeObjectClassDirectedInteractionsRequest{ObjectClass: car, InteractionClasses: horns}}})
	b.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_SubscribeObjectClassAttributesRequest{SubscribeObjectClassAttributesRequest: &pb.SubscribeObjectClassAttributesRequest{ObjectClass: car, Attributes: set}}})
	b.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_PublishObjectClassDirectedInteractionsRequest{PublishObjectClassDirectedInteractionsRequest: &pb.PublishObjectClassDirectedInteractionsRequest{ObjectClass: car, InteractionClasses: horns}}})
	obj := a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_RegisterObjectInstanceRequest{RegisterObjectInstanceRequest: &pb.RegisterObjectInstanceRequest{ObjectClass: car}}}).GetRegisterObjectInstanceResponse().GetResult()
	b.wait("discover", func(cb *pb.CallbackRequest) bool { return cb.GetDiscoverObjectInstance() != nil })
	b.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_SendDirectedInteractionRequest{SendDirectedInteractionRequest: &pb.SendDirectedInteractionRequest{
		InteractionClass: horn, ObjectInstance: obj, ParameterValues: &pb.ParameterHandleValueMap{}, UserSuppliedTag: []byte("beep you")}}})
	r := a.wait("directed interaction", func(cb *pb.CallbackRequest) bool { return cb.GetReceiveDirectedInteraction() != nil }).GetReceiveDirectedInteraction()
	if string(r.GetUserSuppliedTag()) != "beep you" || !bytes.Equal(r.GetObjectInstance().GetData(), obj.GetData()) || !bytes.Equal(r.GetInteractionClass().GetData(), horn.GetData()) {
		t.Errorf("received %v", r)
	}
	// Not published for the class any more: refused.
	b.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_UnpublishObjectClassDirectedInteractionsRequest{UnpublishObjectClassDirectedInteractionsRequest: &pb.UnpublishObjectClassDirectedInteractionsRequest{ObjectClass: car}}})
	b.fails(&pb.CallRequest{CallRequest: &pb.CallRequest_SendDirectedInteractionRequest{SendDirectedInteractionRequest: &pb.SendDirectedInteractionRequest{
		InteractionClass: horn, ObjectInstance: obj, ParameterValues: &pb.ParameterHandleValueMap{}}}}, "InteractionClassNotPublished")
}
