package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshrti/meshrti/internal/fpclient"
	"github.com/meshrti/meshrti/internal/nodetest"
	"github.com/meshrti/meshrti/peer/fedpro/pb"
	"github.com/meshrti/meshrti/peer/fedpro/session"
)

// fpClient drives a session of `serve` with fpclient.Conn (its own framing and
// messages, so that the tests see the wire as a foreign client does),
// failing the test on any error.
type fpClient struct {
	t *testing.T
	*fpclient.Conn
}

func dialFP(t *testing.T, addr string) *fpClient {
	t.Helper()
	c, err := fpclient.Dial(addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return &fpClient{t, c}
}

func (c *fpClient) ok(req *pb.CallRequest) *pb.CallResponse {
	c.t.Helper()
	resp, err := c.Call(req)
	if err != nil {
		c.t.Fatalf("%v: %v", req, err)
	}
	return resp
}

func (c *fpClient) callback(what string, match func(*pb.CallbackRequest) bool) *pb.CallbackRequest {
	c.t.Helper()
	cb, err := c.Conn.Callback(what, 15*time.Second, match)
	if err != nil {
		c.t.Fatal(err)
	}
	return cb
}

func (c *fpClient) waitControl(typ session.MsgType) {
	c.t.Helper()
	if err := c.Conn.WaitControl(typ, 15*time.Second); err != nil {
		c.t.Fatal(err)
	}
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

// serveCreate is the call that creates federation with the serve test
// FOM.
func serveCreate(federation string) *pb.CallRequest {
	module := &pb.FomModule{FomModule: &pb.FomModule_File{File: &pb.FileFomModule{Name: "serve.xml", Content: []byte(serveFOM)}}}
	return &pb.CallRequest{CallRequest: &pb.CallRequest_CreateFederationExecutionRequest{CreateFederationExecutionRequest: &pb.CreateFederationExecutionRequest{FederationName: federation, FomModule: module}}}
}

// twoClients dials d twice, connects both clients, and has the first
// create federation with the serve test FOM.
func twoClients(t *testing.T, d *daemon, federation string) (a, b *fpClient) {
	t.Helper()
	addr := d.addrs[0].String()
	a, b = dialFP(t, addr), dialFP(t, addr)
	for _, c := range []*fpClient{a, b} {
		c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_ConnectRequest{ConnectRequest: &pb.ConnectRequest{}}})
	}
	a.ok(serveCreate(federation))
	return a, b
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
	a, b := twoClients(t, d, "serve-test")
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

	a.Send(session.MsgHeartbeat, nil)
	a.waitControl(session.MsgHeartbeatResponse)
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
	checkMetricShapes(t, string(body))
	for _, c := range []*fpClient{b, a} {
		c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_ResignFederationExecutionRequest{ResignFederationExecutionRequest: &pb.ResignFederationExecutionRequest{ResignAction: pb.ResignAction_DELETE_OBJECTS_THEN_DIVEST}}})
		c.Send(session.MsgTerminateSession, nil)
		c.waitControl(session.MsgSessionTerminated)
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
	a, gone := twoClients(t, d, "faults")
	for _, c := range []*fpClient{a, gone} {
		c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_JoinFederationExecutionRequest{JoinFederationExecutionRequest: &pb.JoinFederationExecutionRequest{FederateType: "t", FederationName: "faults"}}})
	}
	gone.Conn.Close()
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

// bench fedpro runs end to end and reports both round trips.
func TestBenchFedPro(t *testing.T) {
	var out, errb strings.Builder
	if code := run([]string{"bench", "fedpro", "-count", "50", "-json", "-mcast-port", fmt.Sprint(20000 + (os.Getpid()+43)%20000)}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var r fedproBenchResult
	if err := json.Unmarshal([]byte(out.String()), &r); err != nil {
		t.Fatalf("%v: %q", err, out.String())
	}
	if r.RoundTrips != 50 || r.FedProP50 <= 0 || r.PeerP50 <= 0 || r.FedProP99 < r.FedProP50 {
		t.Errorf("result %+v", r)
	}
	if r.FloorP50 <= 0 || r.FloorP99 < r.FloorP50 || r.Ratio != r.FedProP50/r.FloorP50 {
		t.Errorf("floor p50 %v, p99 %v, ratio %v", r.FloorP50, r.FloorP99, r.Ratio)
	}
	if r.AckedFloorP50 <= 0 || r.AckedFloorP99 < r.AckedFloorP50 || r.RatioAcked != r.FedProP50/r.AckedFloorP50 {
		t.Errorf("acknowledged floor p50 %v, p99 %v, ratio %v", r.AckedFloorP50, r.AckedFloorP99, r.RatioAcked)
	}
	for _, k := range []string{`"floor_rtt_p50_us"`, `"ratio"`} { // the keys the issue names
		if !strings.Contains(out.String(), k) {
			t.Errorf("the line lacks %s", k)
		}
	}
}

// bench fedpro -mode throughput runs serve in a child process, the relay
// floor in another and plain bench throughput, and reports them. It
// measures nothing: the figures come from running bench by hand.
func TestBenchFedProThroughput(t *testing.T) {
	out := nodetest.Output(t, 61, "bench", "fedpro", "-mode", "throughput", "-json", "-count", "2000", "-size", "1000")
	var r fedproThroughputResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%q: %v", out, err)
	}
	if r.Mode != "throughput" || r.Size != 1000 || r.Updates != 2000 || r.UpdatesPerS <= 0 || r.CallP50 <= 0 || r.CallP99 < r.CallP50 {
		t.Errorf("result %+v", r)
	}
	if r.DaemonAllocsPerUpdate <= 0 || r.DaemonGOMAXPROCS < 1 || r.PeerUpdatesPerS <= 0 || r.FloorUpdatesPerS <= 0 || r.Ratio <= 0 {
		t.Errorf("result %+v", r)
	}
	if runtime.GOOS == "linux" && (r.DaemonCPUPerUpdate <= 0 || r.DaemonCtxSwPerUpdate <= 0 || r.FloorCPUPerUpdate <= 0) {
		t.Errorf("no CPU or context switches read from /proc: %+v", r)
	}
	for _, k := range []string{`"updates_per_s"`, `"daemon_cpu_us_per_update"`, `"peer_updates_per_s"`} { // the keys the issue names
		if !strings.Contains(string(out), k) {
			t.Errorf("the line lacks %s", k)
		}
	}
}

// Every call case of the schema, sent through `serve` with empty
// arguments before and after joining, is answered with its own response
// case or with exceptionData, never a dropped connection; the session
// stays usable after each.
func TestServeAnswersEveryCall(t *testing.T) {
	d := testDaemon(t, time.Minute)
	c := dialFP(t, d.addrs[0].String())
	oneof := (&pb.CallRequest{}).ProtoReflect().Descriptor().Oneofs().ByName("callRequest")
	respOneof := (&pb.CallResponse{}).ProtoReflect().Descriptor().Oneofs().ByName("callResponse")
	try := func(phase string) (answered, exceptions int) {
		for i := 0; i < oneof.Fields().Len(); i++ {
			fd := oneof.Fields().Get(i)
			switch fd.Name() {
			case "connectRequest", "connectWithCredentialsRequest", "connectWithConfigurationRequest", "connectWithConfigurationAndCredentialsRequest",
				"disconnectRequest", "resignFederationExecutionRequest", "destroyFederationExecutionRequest":
				continue // they change the session's state: tried apart
			}
			req := &pb.CallRequest{}
			req.ProtoReflect().Set(fd, req.ProtoReflect().NewField(fd))
			resp, err := c.Call(req)
			got := resp.ProtoReflect().WhichOneof(respOneof)
			switch {
			case got == nil:
				t.Fatalf("%s %s: no response (%v)", phase, fd.Name(), err)
			case got.Number() == 1:
				exceptions++
			case got.Number() != fd.Number()+1:
				t.Errorf("%s %s: answered with %s", phase, fd.Name(), got.Name())
			}
			answered++
		}
		return answered, exceptions
	}
	n, e := try("before connect")
	if e != n {
		t.Errorf("before connect %d of %d calls answered without an exception", n-e, n)
	}
	c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_ConnectRequest{ConnectRequest: &pb.ConnectRequest{}}})
	c.ok(serveCreate("every"))
	c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_JoinFederationExecutionRequest{JoinFederationExecutionRequest: &pb.JoinFederationExecutionRequest{FederateType: "t", FederationName: "every"}}})
	n, e = try("joined")
	if n < 170 || e == n {
		t.Errorf("joined: %d calls tried, %d exceptions", n, e)
	}
	t.Logf("joined: %d calls answered, %d with an exception (empty arguments)", n, e)
	// Still a working session.
	c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_ResignFederationExecutionRequest{ResignFederationExecutionRequest: &pb.ResignFederationExecutionRequest{ResignAction: pb.ResignAction_NO_ACTION}}})
	c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_DisconnectRequest{DisconnectRequest: &pb.DisconnectRequest{}}})
}

// With a certificate, serve speaks the protocol over TLS too; a JSON
// config file sets what the command line does not.
func TestServeTLSAndConfigFile(t *testing.T) {
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "meshrti test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	cfgFile := filepath.Join(dir, "serve.json")
	os.WriteFile(cfgFile, []byte(`{"cert": "`+certFile+`", "key": "`+keyFile+`", "tls_listen": "127.0.0.1:0", "metrics": "", "resume_window": "5s", "ttl": 0}`), 0o600)

	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var sf serveFlags
	sf.register(fs)
	if err := fs.Parse([]string{"-listen", "127.0.0.1:0", "-mcast-port", fmt.Sprint(20000 + (os.Getpid()+47)%20000), "-resume-window", "7s"}); err != nil {
		t.Fatal(err)
	}
	if err := sf.loadConfig(cfgFile, fs); err != nil {
		t.Fatal(err)
	}
	if sf.Cert != certFile || sf.Metrics != "" || sf.ResumeWindow != 7*time.Second || sf.Listen != "127.0.0.1:0" {
		t.Fatalf("settings %+v: the file's, with the command line's winning", sf)
	}
	sf.SaveDir = dir
	d, err := startDaemon(&sf, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	defer d.stop()
	if len(d.addrs) != 2 || d.maddr != nil {
		t.Fatalf("listening on %v, metrics %v", d.addrs, d.maddr)
	}
	pool := x509.NewCertPool()
	cert, _ := x509.ParseCertificate(der)
	pool.AddCert(cert)
	conn, err := tls.Dial("tcp", d.addrs[1].String(), &tls.Config{RootCAs: pool})
	if err != nil {
		t.Fatal(err)
	}
	c, err := fpclient.Open(conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Call(&pb.CallRequest{CallRequest: &pb.CallRequest_ConnectRequest{ConnectRequest: &pb.ConnectRequest{}}}); err != nil {
		t.Fatalf("connect over TLS: %v", err)
	}
}

// A federation whose last federate resigned still exists, as with a
// central RTI, until it is destroyed: creating it again says it exists,
// joining it again works, and destroying it succeeds (the Pitch chat
// sample destroys the federation after the last resign).
func TestServeEmptyFederationLingers(t *testing.T) {
	d := testDaemon(t, time.Minute)
	c := dialFP(t, d.addrs[0].String())
	c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_ConnectRequest{ConnectRequest: &pb.ConnectRequest{}}})
	create := serveCreate("linger")
	join := &pb.CallRequest{CallRequest: &pb.CallRequest_JoinFederationExecutionRequest{JoinFederationExecutionRequest: &pb.JoinFederationExecutionRequest{FederateType: "t", FederationName: "linger"}}}
	resign := &pb.CallRequest{CallRequest: &pb.CallRequest_ResignFederationExecutionRequest{ResignFederationExecutionRequest: &pb.ResignFederationExecutionRequest{ResignAction: pb.ResignAction_DELETE_OBJECTS_THEN_DIVEST}}}
	destroy := &pb.CallRequest{CallRequest: &pb.CallRequest_DestroyFederationExecutionRequest{DestroyFederationExecutionRequest: &pb.DestroyFederationExecutionRequest{FederationName: "linger"}}}
	c.ok(create)
	c.ok(join)
	c.ok(resign)
	if _, err := c.Call(create); err == nil || !strings.Contains(err.Error(), "FederationExecutionAlreadyExists") {
		t.Errorf("create after the last resign: %v, want FederationExecutionAlreadyExists", err)
	}
	c.ok(join)
	c.ok(resign)
	c.ok(destroy)
	if _, err := c.Call(join); err == nil || !strings.Contains(err.Error(), "FederationExecutionDoesNotExist") {
		t.Errorf("join after destroy: %v, want FederationExecutionDoesNotExist", err)
	}
}

// Through serve, a time advance ends when the client answers the
// grant's callback, in either form the public clients send (Pitch's
// CallbackResponse, MAK's bare acknowledgement): before that, another
// TimeAdvanceRequest answers InTimeAdvancingState.
func TestConformancePendingUntilHandedOverServe(t *testing.T) {
	d := testDaemon(t, time.Minute)
	conn, err := net.Dial("tcp", d.addrs[0].String())
	if err != nil {
		t.Fatal(err)
	}
	fc, err := fpclient.OpenHoldingAcks(conn)
	if err != nil {
		t.Fatal(err)
	}
	c := &fpClient{t, fc}
	t.Cleanup(fc.Close)
	c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_ConnectRequest{ConnectRequest: &pb.ConnectRequest{}}})
	c.ok(serveCreate("handover"))
	c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_JoinFederationExecutionWithNameRequest{JoinFederationExecutionWithNameRequest: &pb.JoinFederationExecutionWithNameRequest{
		FederateName: "A", FederateType: "test", FederationName: "handover"}}})
	tar := func(v float64) *pb.CallRequest {
		return &pb.CallRequest{CallRequest: &pb.CallRequest_TimeAdvanceRequestRequest{TimeAdvanceRequestRequest: &pb.TimeAdvanceRequestRequest{Time: &pb.LogicalTime{Data: f64(v)}}}}
	}
	for i, bare := range []bool{false, true} {
		to := float64(i + 1)
		c.ok(tar(to))
		g := c.callback("grant", func(cb *pb.CallbackRequest) bool {
			return bytes.Equal(cb.GetTimeAdvanceGrant().GetTime().GetData(), f64(to))
		})
		if _, err := c.Call(tar(to + 1)); err == nil || !strings.HasPrefix(err.Error(), "InTimeAdvancingState:") {
			t.Fatalf("bare %v: TimeAdvanceRequest before the grant was acknowledged: %v, want InTimeAdvancingState", bare, err)
		}
		c.AckCallback(c.CallbackSeq(g), bare)
		if _, err := c.Call(tar(to + 0.5)); err != nil {
			t.Fatalf("bare %v: TimeAdvanceRequest after the grant was acknowledged: %v", bare, err)
		}
		g = c.callback("grant", func(cb *pb.CallbackRequest) bool {
			return bytes.Equal(cb.GetTimeAdvanceGrant().GetTime().GetData(), f64(to+0.5))
		})
		c.AckCallback(c.CallbackSeq(g), bare)
	}
}

// metricShapes reduces a Prometheus text exposition to its shapes, one a
// line, sorted and without repeats: "family type label=value,...". The
// federation's and the federate's names become "*" (they vary per run),
// a histogram's samples count for its family and its "le" is left out;
// only the meshrti_ families are kept (the Go and process collectors vary
// with the Go version).
func metricShapes(t *testing.T, body string) []string {
	t.Helper()
	types := map[string]string{}
	seen := map[string]bool{}
	labelRE := regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)
	for _, line := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, typ, _ := strings.Cut(rest, " ")
			types[name] = typ
			continue
		}
		if line == "" || line[0] == '#' || !strings.HasPrefix(line, "meshrti_") {
			continue
		}
		name, labels := line, ""
		if i := strings.IndexAny(line, "{ "); i >= 0 {
			name = line[:i]
			if line[i] == '{' {
				labels = line[i+1 : strings.LastIndexByte(line, '}')]
			}
		}
		fam := name
		if _, ok := types[fam]; !ok {
			for _, suf := range []string{"_bucket", "_sum", "_count"} {
				if stem, ok := strings.CutSuffix(name, suf); ok && types[stem] == "histogram" {
					fam = stem
				}
			}
		}
		typ, ok := types[fam]
		if !ok {
			t.Fatalf("sample %q has no TYPE line", line)
		}
		var ls []string
		for _, m := range labelRE.FindAllStringSubmatch(labels, -1) {
			switch m[1] {
			case "le":
				continue
			case "federation", "federate":
				m[2] = "*"
			}
			ls = append(ls, m[1]+"="+m[2])
		}
		slices.Sort(ls)
		seen[fam+" "+typ+" "+strings.Join(ls, ",")] = true
	}
	return slices.Sorted(maps.Keys(seen))
}

// checkMetricShapes compares the shapes of what /metrics serves with
// testdata/metrics.golden (dashboards read these names, types and
// labels); -update-metrics rewrites the file.
func checkMetricShapes(t *testing.T, body string) {
	t.Helper()
	got := strings.Join(metricShapes(t, body), "\n") + "\n"
	const golden = "testdata/metrics.golden"
	if want := readGolden(t, golden, got, *updateMetrics); got != want {
		t.Errorf("/metrics shapes differ from %s:\n got:\n%s\nwant:\n%s", golden, got, want)
	}
}

var updateMetrics = flag.Bool("update-metrics", false, "rewrite testdata/metrics.golden from what serve's /metrics shows")

// listFederationExecutions through the founding daemon reports the
// federations its anchors hold: one created and not joined, one whose
// last federate resigned; not one destroyed.
func TestServeListsCreated(t *testing.T) {
	d := testDaemon(t, time.Minute)
	c := dialFP(t, d.addrs[0].String())
	c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_ConnectRequest{ConnectRequest: &pb.ConnectRequest{}}})
	seen := map[*pb.CallbackRequest]bool{}
	list := func() []string {
		c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_ListFederationExecutionsRequest{ListFederationExecutionsRequest: &pb.ListFederationExecutionsRequest{}}})
		cb := c.callback("report", func(cb *pb.CallbackRequest) bool { return cb.GetReportFederationExecutions() != nil && !seen[cb] })
		seen[cb] = true
		rep := cb.GetReportFederationExecutions()
		var names []string
		for _, i := range rep.GetReport().GetFederationExecutionInformation() {
			names = append(names, i.GetFederationExecutionName()+" "+i.GetLogicalTimeImplementationName())
		}
		return names
	}
	c.ok(serveCreate("listed-a"))
	c.ok(serveCreate("listed-b"))
	if got := list(); !slices.Equal(got, []string{"listed-a HLAfloat64Time", "listed-b HLAfloat64Time"}) {
		t.Errorf("listed %q after two creations", got)
	}
	c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_DestroyFederationExecutionRequest{DestroyFederationExecutionRequest: &pb.DestroyFederationExecutionRequest{FederationName: "listed-a"}}})
	if got := list(); !slices.Equal(got, []string{"listed-b HLAfloat64Time"}) {
		t.Errorf("listed %q after destroying listed-a", got)
	}
}
