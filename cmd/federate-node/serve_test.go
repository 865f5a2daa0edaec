package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/meshrti/meshrti/peer/fedpro/pb"
)

// The tests' own Federate Protocol client: its own framing (24-byte
// big-endian header: size, sequence number, session id, last received,
// message type) and the protobuf messages, so that they check the wire
// as a foreign client sees it.

const (
	fpNewSession       = 1
	fpNewSessionStatus = 2
	fpHeartbeat        = 3
	fpHeartbeatResp    = 4
	fpTerminate        = 5
	fpTerminated       = 6
	fpCallRequest      = 20
	fpCallResponse     = 21
	fpCallbackRequest  = 22
	fpCallbackResponse = 23
)

type fpClient struct {
	t    *testing.T
	conn net.Conn

	mu        sync.Mutex
	seq       uint32 // own messages sent
	session   uint64
	lastRecv  uint32                      // the RTI's newest HLA message
	responses map[uint32]*pb.CallResponse // by call sequence number
	control   []uint32                    // control message types received
	callbacks []*pb.CallbackRequest
	lastSeq   uint32 // the RTI's newest message of any kind
	seqErr    string
	done      chan struct{}
}

func dialFP(t *testing.T, addr string) *fpClient {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c := &fpClient{t: t, conn: conn, responses: map[uint32]*pb.CallResponse{}, done: make(chan struct{})}
	t.Cleanup(func() { conn.Close(); <-c.done })
	go c.read()
	c.send(fpNewSession, binary.BigEndian.AppendUint32(nil, 1))
	c.waitControl(fpNewSessionStatus)
	return c
}

// send writes one message in one write.
func (c *fpClient) send(typ uint32, body []byte) uint32 {
	c.mu.Lock()
	c.seq++
	seq := c.seq
	h := make([]byte, 24, 24+len(body))
	binary.BigEndian.PutUint32(h[0:], uint32(24+len(body)))
	binary.BigEndian.PutUint32(h[4:], seq)
	binary.BigEndian.PutUint64(h[8:], c.session)
	binary.BigEndian.PutUint32(h[16:], c.lastRecv)
	binary.BigEndian.PutUint32(h[20:], typ)
	c.mu.Unlock()
	if _, err := c.conn.Write(append(h, body...)); err != nil {
		c.t.Errorf("write: %v", err)
	}
	return seq
}

func (c *fpClient) read() {
	defer close(c.done)
	r := bufio.NewReader(c.conn)
	for {
		var h [24]byte
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return
		}
		size := binary.BigEndian.Uint32(h[0:])
		seq := binary.BigEndian.Uint32(h[4:])
		sess := binary.BigEndian.Uint64(h[8:])
		typ := binary.BigEndian.Uint32(h[20:])
		body := make([]byte, size-24)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		c.mu.Lock()
		if seq != c.lastSeq+1 && c.seqErr == "" {
			c.seqErr = fmt.Sprintf("message type %d numbered %d after %d", typ, seq, c.lastSeq)
		}
		c.lastSeq = seq
		switch typ {
		case fpNewSessionStatus:
			c.session = sess
			if st := binary.BigEndian.Uint32(body); st != 0 {
				c.seqErr = fmt.Sprintf("new session refused: %d", st)
			}
			c.control = append(c.control, typ)
		case fpCallResponse:
			c.lastRecv = seq
			var resp pb.CallResponse
			if err := proto.Unmarshal(body[4:], &resp); err != nil {
				c.seqErr = "a call response that does not decode"
			}
			c.responses[binary.BigEndian.Uint32(body)] = &resp
		case fpCallbackRequest:
			c.lastRecv = seq
			var cb pb.CallbackRequest
			if err := proto.Unmarshal(body, &cb); err != nil {
				c.seqErr = "a callback that does not decode"
			}
			c.callbacks = append(c.callbacks, &cb)
			c.mu.Unlock()
			ack, _ := proto.Marshal(&pb.CallbackResponse{CallbackResponse: &pb.CallbackResponse_CallbackSucceeded{CallbackSucceeded: &pb.CallbackSucceeded{}}})
			c.send(fpCallbackResponse, append(binary.BigEndian.AppendUint32(nil, seq), ack...))
			continue
		default:
			c.control = append(c.control, typ)
		}
		c.mu.Unlock()
	}
}

func (c *fpClient) waitFor(what string, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		c.mu.Lock()
		ok, bad := cond(), c.seqErr
		c.mu.Unlock()
		if bad != "" {
			c.t.Fatalf("protocol: %s", bad)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("no %s in 15 s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func (c *fpClient) waitControl(typ uint32) {
	c.t.Helper()
	c.waitFor(fmt.Sprintf("control message %d", typ), func() bool {
		for _, x := range c.control {
			if x == typ {
				return true
			}
		}
		return false
	})
}

// call makes one call and waits for its response.
func (c *fpClient) call(req *pb.CallRequest) *pb.CallResponse {
	c.t.Helper()
	b, err := proto.Marshal(req)
	if err != nil {
		c.t.Fatal(err)
	}
	seq := c.send(fpCallRequest, b)
	var resp *pb.CallResponse
	c.waitFor("call response", func() bool { resp = c.responses[seq]; return resp != nil })
	return resp
}

func (c *fpClient) ok(req *pb.CallRequest) *pb.CallResponse {
	c.t.Helper()
	resp := c.call(req)
	if e := resp.GetExceptionData(); e != nil {
		c.t.Fatalf("%v: %s: %s", req, e.GetExceptionName(), e.GetDetails())
	}
	return resp
}

func (c *fpClient) callback(what string, match func(*pb.CallbackRequest) bool) *pb.CallbackRequest {
	c.t.Helper()
	var got *pb.CallbackRequest
	c.waitFor(what+" callback", func() bool {
		for _, cb := range c.callbacks {
			if match(cb) {
				got = cb
				return true
			}
		}
		return false
	})
	return got
}

const serveFOM = `<?xml version="1.0"?>
<objectModel xmlns="http://standards.ieee.org/IEEE1516-2010">
  <modelIdentification><name>serve test</name><type>FOM</type><version>1</version></modelIdentification>
  <objects><objectClass><name>HLAobjectRoot</name>
    <objectClass><name>Car</name><sharing>PublishSubscribe</sharing>
      <attribute><name>Speed</name><dataType>HLAopaqueData</dataType><updateType>Conditional</updateType><updateCondition>NA</updateCondition><ownership>DivestAcquire</ownership><sharing>PublishSubscribe</sharing><transportation>HLAreliable</transportation><order>TimeStamp</order></attribute>
    </objectClass>
  </objectClass></objects>
  <interactions><interactionClass><name>HLAinteractionRoot</name>
    <interactionClass><name>Horn</name><sharing>PublishSubscribe</sharing><transportation>HLAreliable</transportation><order>Receive</order>
      <parameter><name>Loud</name><dataType>HLAopaqueData</dataType></parameter>
    </interactionClass>
  </interactionClass></interactions>
</objectModel>`

func f64(v float64) []byte {
	return binary.BigEndian.AppendUint64(nil, mathFloat64bits(v))
}

func testDaemon(t *testing.T, resume time.Duration) *daemon {
	t.Helper()
	sf := &serveFlags{
		Listen: "127.0.0.1:0", Metrics: "127.0.0.1:0", Gossip: "127.0.0.1:0",
		McastPort: 20000 + (os.Getpid()+41)%20000, Iface: "lo", SaveDir: t.TempDir(),
		ResumeWindow: resume, CallTimeout: 20 * time.Second,
	}
	d, err := startDaemon(sf, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.stop)
	return d
}

// Two foreign clients join one federation through `serve`, exchange an
// update and an interaction and advance time; heartbeats and terminate
// are answered; every RTI message is numbered 1, 2, 3, ...; the metrics
// endpoint counts the calls.
func TestServeTwoClients(t *testing.T) {
	d := testDaemon(t, time.Minute)
	addr := d.addrs[0].String()
	a, b := dialFP(t, addr), dialFP(t, addr)
	for _, c := range []*fpClient{a, b} {
		c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_ConnectRequest{ConnectRequest: &pb.ConnectRequest{}}})
	}
	module := &pb.FomModule{FomModule: &pb.FomModule_File{File: &pb.FileFomModule{Name: "serve.xml", Content: []byte(serveFOM)}}}
	a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_CreateFederationExecutionRequest{CreateFederationExecutionRequest: &pb.CreateFederationExecutionRequest{FederationName: "serve-test", FomModule: module}}})
	join := func(c *fpClient, name string) {
		r := c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_JoinFederationExecutionWithNameRequest{JoinFederationExecutionWithNameRequest: &pb.JoinFederationExecutionWithNameRequest{
			FederateName: name, FederateType: "test", FederationName: "serve-test"}}})
		if r.GetJoinFederationExecutionWithNameResponse().GetResult().GetLogicalTimeImplementationName() != "HLAfloat64Time" {
			t.Fatalf("join %s: %v", name, r)
		}
	}
	join(a, "A")
	join(b, "B")
	car := a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_GetObjectClassHandleRequest{GetObjectClassHandleRequest: &pb.GetObjectClassHandleRequest{ObjectClassName: "Car"}}}).GetGetObjectClassHandleResponse().GetResult()
	speed := a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_GetAttributeHandleRequest{GetAttributeHandleRequest: &pb.GetAttributeHandleRequest{ObjectClass: car, AttributeName: "Speed"}}}).GetGetAttributeHandleResponse().GetResult()
	horn := b.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_GetInteractionClassHandleRequest{GetInteractionClassHandleRequest: &pb.GetInteractionClassHandleRequest{InteractionClassName: "Horn"}}}).GetGetInteractionClassHandleResponse().GetResult()
	set := &pb.AttributeHandleSet{AttributeHandle: []*pb.AttributeHandle{speed}}
	b.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_SubscribeObjectClassAttributesRequest{SubscribeObjectClassAttributesRequest: &pb.SubscribeObjectClassAttributesRequest{ObjectClass: car, Attributes: set}}})
	a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_PublishObjectClassAttributesRequest{PublishObjectClassAttributesRequest: &pb.PublishObjectClassAttributesRequest{ObjectClass: car, Attributes: set}}})
	a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_SubscribeInteractionClassRequest{SubscribeInteractionClassRequest: &pb.SubscribeInteractionClassRequest{InteractionClass: horn}}})
	b.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_PublishInteractionClassRequest{PublishInteractionClassRequest: &pb.PublishInteractionClassRequest{InteractionClass: horn}}})
	obj := a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_RegisterObjectInstanceRequest{RegisterObjectInstanceRequest: &pb.RegisterObjectInstanceRequest{ObjectClass: car}}}).GetRegisterObjectInstanceResponse().GetResult()
	b.callback("discover", func(cb *pb.CallbackRequest) bool { return cb.GetDiscoverObjectInstance() != nil })

	// Time: A regulates, B is constrained.
	a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_EnableTimeRegulationRequest{EnableTimeRegulationRequest: &pb.EnableTimeRegulationRequest{Lookahead: &pb.LogicalTimeInterval{Data: f64(1)}}}})
	a.callback("regulation", func(cb *pb.CallbackRequest) bool { return cb.GetTimeRegulationEnabled() != nil })
	b.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_EnableTimeConstrainedRequest{EnableTimeConstrainedRequest: &pb.EnableTimeConstrainedRequest{}}})
	b.callback("constrained", func(cb *pb.CallbackRequest) bool { return cb.GetTimeConstrainedEnabled() != nil })
	a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_UpdateAttributeValuesWithTimeRequest{UpdateAttributeValuesWithTimeRequest: &pb.UpdateAttributeValuesWithTimeRequest{
		ObjectInstance: obj, AttributeValues: &pb.AttributeHandleValueMap{AttributeHandleValue: []*pb.AttributeHandleValue{{AttributeHandle: speed, Value: []byte("90")}}},
		Time: &pb.LogicalTime{Data: f64(2)}}}})
	b.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_SendInteractionRequest{SendInteractionRequest: &pb.SendInteractionRequest{InteractionClass: horn, ParameterValues: &pb.ParameterHandleValueMap{}, UserSuppliedTag: []byte("beep")}}})
	a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_TimeAdvanceRequestRequest{TimeAdvanceRequestRequest: &pb.TimeAdvanceRequestRequest{Time: &pb.LogicalTime{Data: f64(5)}}}})
	b.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_TimeAdvanceRequestRequest{TimeAdvanceRequestRequest: &pb.TimeAdvanceRequestRequest{Time: &pb.LogicalTime{Data: f64(3)}}}})
	r := b.callback("reflect", func(cb *pb.CallbackRequest) bool { return cb.GetReflectAttributeValuesWithTime() != nil }).GetReflectAttributeValuesWithTime()
	if v := r.GetAttributeValues().GetAttributeHandleValue(); len(v) != 1 || string(v[0].GetValue()) != "90" {
		t.Errorf("reflected %v", r)
	}
	if g := b.callback("grant", func(cb *pb.CallbackRequest) bool { return cb.GetTimeAdvanceGrant() != nil }).GetTimeAdvanceGrant(); string(g.GetTime().GetData()) != string(f64(3)) {
		t.Errorf("granted %v", g)
	}
	if i := a.callback("interaction", func(cb *pb.CallbackRequest) bool { return cb.GetReceiveInteraction() != nil }).GetReceiveInteraction(); string(i.GetUserSuppliedTag()) != "beep" {
		t.Errorf("received %v", i)
	}

	a.send(fpHeartbeat, nil)
	a.waitControl(fpHeartbeatResp)
	resp, err := http.Get("http://" + d.maddr.String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"meshrti_fedpro_calls_total", "meshrti_fedpro_sessions 2", `federate="A"`, "go_goroutines"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	for _, c := range []*fpClient{b, a} {
		c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_ResignFederationExecutionRequest{ResignFederationExecutionRequest: &pb.ResignFederationExecutionRequest{ResignAction: pb.ResignAction_DELETE_OBJECTS_THEN_DIVEST}}})
		c.send(fpTerminate, nil)
		c.waitControl(fpTerminated)
	}
	deadline := time.Now().Add(10 * time.Second)
	for d.host.Stats().Sessions != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions left after both terminated", d.host.Stats().Sessions)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A client that vanishes without terminating: its session ends once the
// resume window passes and its federate resigns; a client that sends a
// garbled frame loses its connection; the daemon and the other session
// keep working.
func TestServeFaults(t *testing.T) {
	d := testDaemon(t, 300*time.Millisecond)
	addr := d.addrs[0].String()
	a, gone := dialFP(t, addr), dialFP(t, addr)
	for _, c := range []*fpClient{a, gone} {
		c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_ConnectRequest{ConnectRequest: &pb.ConnectRequest{}}})
	}
	module := &pb.FomModule{FomModule: &pb.FomModule_File{File: &pb.FileFomModule{Name: "serve.xml", Content: []byte(serveFOM)}}}
	a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_CreateFederationExecutionRequest{CreateFederationExecutionRequest: &pb.CreateFederationExecutionRequest{FederationName: "faults", FomModule: module}}})
	for _, c := range []*fpClient{a, gone} {
		c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_JoinFederationExecutionRequest{JoinFederationExecutionRequest: &pb.JoinFederationExecutionRequest{FederateType: "t", FederationName: "faults"}}})
	}
	gone.conn.Close()
	deadline := time.Now().Add(15 * time.Second)
	for d.host.Stats().Sessions != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions: the vanished client's was not ended", d.host.Stats().Sessions)
		}
		time.Sleep(5 * time.Millisecond)
	}
	garbled, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer garbled.Close()
	garbled.Write([]byte{0, 0, 0, 3, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
	garbled.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadAll(garbled); err != nil {
		t.Errorf("the garbled connection was not closed: %v", err)
	}
	// The other session goes on.
	r := a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_GetObjectClassHandleRequest{GetObjectClassHandleRequest: &pb.GetObjectClassHandleRequest{ObjectClassName: "Car"}}})
	if len(r.GetGetObjectClassHandleResponse().GetResult().GetData()) != 8 {
		t.Errorf("after the faults: %v", r)
	}
}

func mathFloat64bits(v float64) uint64 { return math.Float64bits(v) }
