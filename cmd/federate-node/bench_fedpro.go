package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/fedpro/pb"
	"github.com/meshrti/meshrti/peer/transport"
)

// benchFedProFOM: a ping class and a pong class of one attribute each.
const benchFedProFOM = `<?xml version="1.0"?>
<objectModel xmlns="http://standards.ieee.org/IEEE1516-2010">
  <modelIdentification><name>bench fedpro</name><type>FOM</type><version>1</version></modelIdentification>
  <objects><objectClass><name>HLAobjectRoot</name>
    <objectClass><name>Ping</name><sharing>PublishSubscribe</sharing>
      <attribute><name>V</name><dataType>HLAopaqueData</dataType><updateType>Conditional</updateType><updateCondition>NA</updateCondition><ownership>DivestAcquire</ownership><sharing>PublishSubscribe</sharing><transportation>HLAreliable</transportation><order>Receive</order></attribute>
    </objectClass>
    <objectClass><name>Pong</name><sharing>PublishSubscribe</sharing>
      <attribute><name>V</name><dataType>HLAopaqueData</dataType><updateType>Conditional</updateType><updateCondition>NA</updateCondition><ownership>DivestAcquire</ownership><sharing>PublishSubscribe</sharing><transportation>HLAreliable</transportation><order>Receive</order></attribute>
    </objectClass>
  </objectClass></objects>
</objectModel>`

type fedproBenchResult struct {
	RoundTrips int     `json:"round_trips"`
	Payload    int     `json:"payload_bytes"`
	FedProP50  float64 `json:"fedpro_rtt_p50_us"`
	FedProP90  float64 `json:"fedpro_rtt_p90_us"`
	FedProP99  float64 `json:"fedpro_rtt_p99_us"`
	PeerP50    float64 `json:"peer_rtt_p50_us"`
	PeerP90    float64 `json:"peer_rtt_p90_us"`
	PeerP99    float64 `json:"peer_rtt_p99_us"`
}

// runBenchFedPro times the round trip of one update through the
// Federate Protocol: client A updates, the daemon's federate sends it
// over the network to the daemon's federate of client B, B is called
// back and updates in turn, and A is called back: against the same
// exchange between two peer federates directly. Everything runs in this
// process, over gossip and multicast on loopback.
func runBenchFedPro(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench fedpro", flag.ContinueOnError)
	fs.SetOutput(stderr)
	count := fs.Int("count", 2000, "round trips")
	payload := fs.Int("payload", 100, "payload bytes per update")
	port := fs.Int("mcast-port", 0, "UDP multicast port; the direct run uses this port + 1 (default: derived from the process id)")
	jsonOut := fs.Bool("json", false, "print the result as one JSON object")
	timeout := fs.Duration("timeout", 2*time.Minute, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *count < 1 || *payload < 0 || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "federate-node bench fedpro: need -count >= 1, -payload >= 0 and no arguments")
		return 2
	}
	if *port == 0 {
		*port = 43000 + (os.Getpid()+57)%8000
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "federate-node bench fedpro:", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	r := fedproBenchResult{RoundTrips: *count, Payload: *payload}
	fp, err := benchThroughServe(ctx, *port, *count, *payload)
	if err != nil {
		return fail(fmt.Errorf("through serve: %w", err))
	}
	direct, err := benchPeerDirect(ctx, *port+1, *count, *payload)
	if err != nil {
		return fail(fmt.Errorf("peer directly: %w", err))
	}
	r.FedProP50, r.FedProP90, r.FedProP99 = quantileMicros(fp, 0.5), quantileMicros(fp, 0.9), quantileMicros(fp, 0.99)
	r.PeerP50, r.PeerP90, r.PeerP99 = quantileMicros(direct, 0.5), quantileMicros(direct, 0.9), quantileMicros(direct, 0.99)
	if *jsonOut {
		b, _ := json.Marshal(r)
		fmt.Fprintln(stdout, string(b))
		return 0
	}
	fmt.Fprintf(stdout, "update round trip, %d-byte values, one process, gossip and multicast on loopback:\n"+
		"  through the Federate Protocol (client, serve, network, serve, client): p50 %.0f us, p90 %.0f us, p99 %.0f us (%d round trips)\n"+
		"  between two peer federates directly:                                   p50 %.0f us, p90 %.0f us, p99 %.0f us\n"+
		"  the protocol adds p50 %.0f us (ratio %.2f)\n",
		r.Payload, r.FedProP50, r.FedProP90, r.FedProP99, r.RoundTrips, r.PeerP50, r.PeerP90, r.PeerP99, r.FedProP50-r.PeerP50, r.FedProP50/r.PeerP50)
	return 0
}

// benchThroughServe runs a daemon and two Federate Protocol clients, and
// times count update round trips between them.
func benchThroughServe(ctx context.Context, port, count, payload int) ([]time.Duration, error) {
	d, err := startDaemon(&serveFlags{Listen: "127.0.0.1:0", Gossip: "127.0.0.1:0", McastPort: port, Iface: transport.DefaultInterface,
		SaveDir: os.TempDir(), ResumeWindow: time.Second, CallTimeout: 30 * time.Second}, func(string, ...any) {})
	if err != nil {
		return nil, err
	}
	defer d.stop()
	addr := d.addrs[0].String()
	pongs := make(chan struct{}, 1)
	var armed atomic.Bool
	var pingObj, pongObj *pb.ObjectInstanceHandle
	var pongAttr *pb.AttributeHandle
	var b *fpConn
	value := make([]byte, payload)
	a, err := dialFedPro(addr, func(cb *pb.CallbackRequest) {
		if armed.Load() && cb.GetReflectAttributeValues() != nil {
			select {
			case pongs <- struct{}{}:
			default:
			}
		}
	})
	if err != nil {
		return nil, err
	}
	defer a.Close()
	b, err = dialFedPro(addr, func(cb *pb.CallbackRequest) {
		if armed.Load() && cb.GetReflectAttributeValues() != nil {
			_, _ = b.callAsync(updateCall(pongObj, pongAttr, value))
		}
	})
	if err != nil {
		return nil, err
	}
	defer b.Close()
	must := func(c *fpConn, req *pb.CallRequest) *pb.CallResponse {
		if err != nil {
			return nil
		}
		var resp *pb.CallResponse
		resp, err = c.call(req)
		return resp
	}
	module := &pb.FomModule{FomModule: &pb.FomModule_File{File: &pb.FileFomModule{Name: "bench.xml", Content: []byte(benchFedProFOM)}}}
	for _, c := range []*fpConn{a, b} {
		must(c, &pb.CallRequest{CallRequest: &pb.CallRequest_ConnectRequest{ConnectRequest: &pb.ConnectRequest{}}})
	}
	must(a, &pb.CallRequest{CallRequest: &pb.CallRequest_CreateFederationExecutionRequest{CreateFederationExecutionRequest: &pb.CreateFederationExecutionRequest{FederationName: "bench-fedpro", FomModule: module}}})
	for _, c := range []*fpConn{a, b} {
		must(c, &pb.CallRequest{CallRequest: &pb.CallRequest_JoinFederationExecutionRequest{JoinFederationExecutionRequest: &pb.JoinFederationExecutionRequest{FederateType: "bench", FederationName: "bench-fedpro"}}})
	}
	classOf := func(c *fpConn, name string) (*pb.ObjectClassHandle, *pb.AttributeHandle) {
		cl := must(c, &pb.CallRequest{CallRequest: &pb.CallRequest_GetObjectClassHandleRequest{GetObjectClassHandleRequest: &pb.GetObjectClassHandleRequest{ObjectClassName: name}}}).GetGetObjectClassHandleResponse().GetResult()
		at := must(c, &pb.CallRequest{CallRequest: &pb.CallRequest_GetAttributeHandleRequest{GetAttributeHandleRequest: &pb.GetAttributeHandleRequest{ObjectClass: cl, AttributeName: "V"}}}).GetGetAttributeHandleResponse().GetResult()
		return cl, at
	}
	pingClass, pingAttr := classOf(a, "Ping")
	pongClass, pa := classOf(b, "Pong")
	pongAttr = pa
	set := func(at *pb.AttributeHandle) *pb.AttributeHandleSet {
		return &pb.AttributeHandleSet{AttributeHandle: []*pb.AttributeHandle{at}}
	}
	must(a, &pb.CallRequest{CallRequest: &pb.CallRequest_SubscribeObjectClassAttributesRequest{SubscribeObjectClassAttributesRequest: &pb.SubscribeObjectClassAttributesRequest{ObjectClass: pongClass, Attributes: set(pongAttr)}}})
	must(b, &pb.CallRequest{CallRequest: &pb.CallRequest_SubscribeObjectClassAttributesRequest{SubscribeObjectClassAttributesRequest: &pb.SubscribeObjectClassAttributesRequest{ObjectClass: pingClass, Attributes: set(pingAttr)}}})
	must(a, &pb.CallRequest{CallRequest: &pb.CallRequest_PublishObjectClassAttributesRequest{PublishObjectClassAttributesRequest: &pb.PublishObjectClassAttributesRequest{ObjectClass: pingClass, Attributes: set(pingAttr)}}})
	must(b, &pb.CallRequest{CallRequest: &pb.CallRequest_PublishObjectClassAttributesRequest{PublishObjectClassAttributesRequest: &pb.PublishObjectClassAttributesRequest{ObjectClass: pongClass, Attributes: set(pongAttr)}}})
	pingObj = must(a, &pb.CallRequest{CallRequest: &pb.CallRequest_RegisterObjectInstanceRequest{RegisterObjectInstanceRequest: &pb.RegisterObjectInstanceRequest{ObjectClass: pingClass}}}).GetRegisterObjectInstanceResponse().GetResult()
	pongObj = must(b, &pb.CallRequest{CallRequest: &pb.CallRequest_RegisterObjectInstanceRequest{RegisterObjectInstanceRequest: &pb.RegisterObjectInstanceRequest{ObjectClass: pongClass}}}).GetRegisterObjectInstanceResponse().GetResult()
	if err != nil {
		return nil, err
	}
	discovered := func(cb *pb.CallbackRequest) bool { return cb.GetDiscoverObjectInstance() != nil }
	if _, err := a.callback("discover", 30*time.Second, discovered); err != nil {
		return nil, err
	}
	if _, err := b.callback("discover", 30*time.Second, discovered); err != nil {
		return nil, err
	}
	armed.Store(true)
	rtts := make([]time.Duration, 0, count)
	for range count {
		t0 := time.Now()
		if _, err := a.callAsync(updateCall(pingObj, pingAttr, value)); err != nil {
			return nil, err
		}
		select {
		case <-pongs:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		rtts = append(rtts, time.Since(t0))
	}
	return rtts, nil
}

func updateCall(obj *pb.ObjectInstanceHandle, attr *pb.AttributeHandle, v []byte) *pb.CallRequest {
	return &pb.CallRequest{CallRequest: &pb.CallRequest_UpdateAttributeValuesRequest{UpdateAttributeValuesRequest: &pb.UpdateAttributeValuesRequest{
		ObjectInstance: obj, AttributeValues: &pb.AttributeHandleValueMap{AttributeHandleValue: []*pb.AttributeHandleValue{{AttributeHandle: attr, Value: v}}}}}}
}

// benchPeerDirect times count update round trips between two peer
// federates in this process.
func benchPeerDirect(ctx context.Context, port, count, payload int) ([]time.Duration, error) {
	doc, err := fomxml.ParseBytes("bench.xml", []byte(benchFedProFOM))
	if err != nil {
		return nil, err
	}
	cfg := peer.Config{Federation: "bench-direct", FOMModules: []*fomxml.Document{doc}, Create: true,
		Multicast: transport.UDPConfig{Port: port, Interface: transport.DefaultInterface}}
	a, err := peer.Join(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	addr, _ := a.GossipAddr()
	cfg.Gossip.Seeds = []string{addr}
	b, err := peer.Join(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	ping, _ := a.GetObjectClassHandle("Ping")
	pong, _ := a.GetObjectClassHandle("Pong")
	pingV, _ := a.GetAttributeHandle(ping, "V")
	pongV, _ := a.GetAttributeHandle(pong, "V")
	for _, err := range []error{a.SubscribeObjectClassAttributes(pong, pongV), b.SubscribeObjectClassAttributes(ping, pingV),
		a.PublishObjectClassAttributes(ping, pingV), b.PublishObjectClassAttributes(pong, pongV)} {
		if err != nil {
			return nil, err
		}
	}
	pingObj, err := a.RegisterObjectInstance(ping, "")
	if err != nil {
		return nil, err
	}
	pongObj, err := b.RegisterObjectInstance(pong, "")
	if err != nil {
		return nil, err
	}
	value := make([]byte, payload)
	done := make(chan error, 1)
	go func() { // B answers every ping
		for {
			ev, err := b.Next(ctx)
			if err != nil {
				done <- nil
				return
			}
			if _, ok := ev.(peer.ReflectAttributeValues); ok {
				if err := b.UpdateAttributeValues(pongObj, peer.AttributeValues{pongV: value}, nil); err != nil {
					done <- err
					return
				}
			}
		}
	}()
	waitReflect := func() error {
		for {
			ev, err := a.Next(ctx)
			if err != nil {
				return err
			}
			if _, ok := ev.(peer.ReflectAttributeValues); ok {
				return nil
			}
		}
	}
	for { // A waits for B's pong instance
		ev, err := a.Next(ctx)
		if err != nil {
			return nil, err
		}
		if _, ok := ev.(peer.DiscoverObjectInstance); ok {
			break
		}
	}
	rtts := make([]time.Duration, 0, count)
	for range count {
		t0 := time.Now()
		if err := a.UpdateAttributeValues(pingObj, peer.AttributeValues{pingV: value}, nil); err != nil {
			return nil, err
		}
		if err := waitReflect(); err != nil {
			return nil, err
		}
		rtts = append(rtts, time.Since(t0))
	}
	b.Close()
	if err := <-done; err != nil && !errors.Is(err, peer.ErrClosed) {
		return nil, err
	}
	return rtts, nil
}
