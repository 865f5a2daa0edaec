package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/internal/cli"
	"github.com/meshrti/meshrti/internal/fpclient"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/fedpro"
	"github.com/meshrti/meshrti/peer/fedpro/pb"
	"github.com/meshrti/meshrti/peer/fedpro/session"
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

// FedProResult is the line "bench fedpro -json" prints (-mode latency).
type FedProResult struct {
	RoundTrips int     `json:"round_trips"`
	Payload    int     `json:"payload_bytes"`
	FedProP50  float64 `json:"fedpro_rtt_p50_us"`
	FedProP90  float64 `json:"fedpro_rtt_p90_us"`
	FedProP99  float64 `json:"fedpro_rtt_p99_us"`
	PeerP50    float64 `json:"peer_rtt_p50_us"`
	PeerP90    float64 `json:"peer_rtt_p90_us"`
	PeerP99    float64 `json:"peer_rtt_p99_us"`
	// The floor: the same route over raw TCP and UDP (fedproFloor).
	FloorP50 float64 `json:"floor_rtt_p50_us"`
	FloorP99 float64 `json:"floor_rtt_p99_us"`
	// Ratio is FedProP50 over FloorP50.
	Ratio float64 `json:"ratio"`
	// The floor with the messages the protocol adds to the route: the
	// call's response and the callback's acknowledgement (fedproFloor,
	// acked); RatioAcked is FedProP50 over its p50.
	AckedFloorP50 float64 `json:"floor_acked_rtt_p50_us"`
	AckedFloorP99 float64 `json:"floor_acked_rtt_p99_us"`
	RatioAcked    float64 `json:"ratio_acked"`
}

// FedProThroughputResult is the line of bench fedpro -mode throughput.
type FedProThroughputResult struct {
	Mode        string  `json:"mode"`
	Size        int     `json:"size_bytes"`
	Updates     int     `json:"updates"`
	Seconds     float64 `json:"seconds"`
	UpdatesPerS float64 `json:"updates_per_s"`
	// The time of one call, request written to response read.
	CallP50 float64 `json:"call_p50_us"`
	CallP99 float64 `json:"call_p99_us"`
	// What the daemon (a child process `serve`) used per update over the
	// timed run, both sessions' work included (the call in, the callback
	// out, the callback response in): CPU from /proc/PID/stat (utime +
	// stime; -1 where there is no /proc), heap allocations from its Go
	// collector, and its threads' context switches (/proc/PID/task/*/status;
	// -1 without /proc), a count of its threads parking and waking.
	DaemonCPUPerUpdate    float64 `json:"daemon_cpu_us_per_update"`
	DaemonAllocsPerUpdate float64 `json:"daemon_allocs_per_update"`
	DaemonCtxSwPerUpdate  float64 `json:"daemon_ctxsw_per_update"`
	DaemonGOMAXPROCS      int     `json:"daemon_gomaxprocs"`
	// The floor: the same exchange through a relay process with no
	// protobuf and no RTI (fedproFloorThroughput), its rate and its CPU
	// per update; Ratio is UpdatesPerS over FloorUpdatesPerS.
	FloorUpdatesPerS  float64 `json:"floor_updates_per_s"`
	FloorCPUPerUpdate float64 `json:"floor_daemon_cpu_us_per_update"`
	Ratio             float64 `json:"ratio"`
	// Plain bench throughput in the same run, for scale; 0 with -peer=false.
	PeerUpdatesPerS float64 `json:"peer_updates_per_s"`
}

// fedproFlags are the flags of "federate-node bench fedpro".
type fedproFlags struct {
	mode           string
	count, payload int
	benchCommon
	peer        bool
	daemonProcs int
	daemon      string
}

// Define defines the flags of "bench fedpro".
func (bf *fedproFlags) Define(fs *flag.FlagSet) {
	fs.StringVar(&bf.mode, "mode", "latency", "latency (round trips, in one process) or throughput (calls one at a time, the daemon a child process)")
	fs.IntVar(&bf.count, "count", 0, "round trips (latency; default 2000) or update calls (throughput; default 20000)")
	fs.IntVar(&bf.payload, "payload", 100, "bytes per value")
	fs.IntVar(&bf.payload, "size", 100, "bytes per value (the same as -payload)")
	bf.benchCommon.define(fs, 2*time.Minute, "UDP multicast port; the peer run uses this port + 1 (default: derived from the process id)",
		"write a CPU profile to `FILE`: throughput, of the daemon; latency, of the process over the round trips through serve")
	fs.BoolVar(&bf.peer, "peer", true, "throughput: also run plain bench throughput, for scale")
	fs.IntVar(&bf.daemonProcs, "daemon-procs", 0, "throughput: GOMAXPROCS of the daemon (0: the runtime's default, as serve runs)")
	fs.StringVar(&bf.daemon, "daemon", "", "throughput: the federate-node `BINARY` whose serve to run (default: this one), to compare two builds' daemons under one client")
}

// Check returns the usage error of bad flags of "bench fedpro", or "".
func (bf *fedproFlags) Check(nargs int) string {
	if bf.count < 0 || bf.payload < 0 || nargs > 0 || (bf.mode != "latency" && bf.mode != "throughput") {
		return "need -mode latency or throughput, -count >= 0, -payload >= 0 and no arguments"
	}
	return ""
}

// run times the Federate Protocol path. The default mode,
// latency, times the round trip of one update: client A updates, the
// daemon's federate sends it over the network to the daemon's federate
// of client B, B is called back and updates in turn, and A is called
// back; against the same exchange between two peer federates directly,
// and against the floor, the same route over raw TCP and UDP sockets.
// Everything runs in this process, over gossip and multicast on
// loopback. Mode throughput runs the daemon as a child process `serve`
// and has client A make its update calls one at a time, as the public
// clients do, to receiving client B, with the daemon's CPU per update.
func (bf fedproFlags) Run(b *cli.Cmd) int {
	defaultPort(&bf.port, 57)
	fail := b.Fail
	ctx, cancel := context.WithTimeout(context.Background(), bf.timeout)
	defer cancel()
	if bf.mode == "throughput" {
		n := bf.count
		if n == 0 {
			n = 20000
		}
		r, err := benchFedProThroughput(ctx, fedproThroughputFlags{count: n, size: bf.payload, port: bf.port, peer: bf.peer,
			daemonProcs: bf.daemonProcs, profile: bf.cpuprofile, daemon: bf.daemon, timeout: bf.timeout}, b.Stderr)
		if err != nil {
			return fail(err)
		}
		b.Emit(bf.jsonOut, r, func(w io.Writer) {
			fmt.Fprintf(w, "update calls one at a time, %d-byte values, client, serve (a child process, GOMAXPROCS %d), network, serve, client:\n"+
				"  %d updates reflected in %.2f s: %.0f updates/s; a call p50 %.0f us, p99 %.0f us\n"+
				"  the daemon per update: %.1f us of CPU, %.1f allocations, %.2f context switches\n"+
				"  the floor, a relay with no protobuf and no RTI: %.0f updates/s (ratio %.2f), %.1f us of CPU per update\n",
				r.Size, r.DaemonGOMAXPROCS, r.Updates, r.Seconds, r.UpdatesPerS, r.CallP50, r.CallP99,
				r.DaemonCPUPerUpdate, r.DaemonAllocsPerUpdate, r.DaemonCtxSwPerUpdate,
				r.FloorUpdatesPerS, r.Ratio, r.FloorCPUPerUpdate)
			if r.PeerUpdatesPerS > 0 {
				fmt.Fprintf(w, "  plain bench throughput between two peer federates: %.0f updates/s\n", r.PeerUpdatesPerS)
			}
		})
		return 0
	}
	if bf.count == 0 {
		bf.count = 2000
	}
	r := FedProResult{RoundTrips: bf.count, Payload: bf.payload}
	stopProfile, err := cli.StartProfile(bf.cpuprofile)
	if err != nil {
		return fail(err)
	}
	fp, err := benchThroughServe(ctx, bf.port, bf.count, bf.payload)
	stopProfile()
	if err != nil {
		return fail(fmt.Errorf("through serve: %w", err))
	}
	direct, err := benchPeerDirect(ctx, bf.port+1, bf.count, bf.payload)
	if err != nil {
		return fail(fmt.Errorf("peer directly: %w", err))
	}
	floor, err := fedproFloor(ctx, bf.count, bf.payload, false)
	if err != nil {
		return fail(fmt.Errorf("floor: %w", err))
	}
	acked, err := fedproFloor(ctx, bf.count, bf.payload, true)
	if err != nil {
		return fail(fmt.Errorf("floor with responses and acknowledgements: %w", err))
	}
	r.FedProP50, r.FedProP90, r.FedProP99 = quantileMicros(fp, 0.5), quantileMicros(fp, 0.9), quantileMicros(fp, 0.99)
	r.PeerP50, r.PeerP90, r.PeerP99 = quantileMicros(direct, 0.5), quantileMicros(direct, 0.9), quantileMicros(direct, 0.99)
	r.FloorP50, r.FloorP99 = quantileMicros(floor, 0.5), quantileMicros(floor, 0.99)
	if r.FloorP50 > 0 {
		r.Ratio = r.FedProP50 / r.FloorP50
	}
	r.AckedFloorP50, r.AckedFloorP99 = quantileMicros(acked, 0.5), quantileMicros(acked, 0.99)
	if r.AckedFloorP50 > 0 {
		r.RatioAcked = r.FedProP50 / r.AckedFloorP50
	}
	b.Emit(bf.jsonOut, r, func(w io.Writer) {
		fmt.Fprintf(w, "update round trip, %d-byte values, one process, gossip and multicast on loopback:\n"+
			"  through the Federate Protocol (client, serve, network, serve, client): p50 %.0f us, p90 %.0f us, p99 %.0f us (%d round trips)\n"+
			"  between two peer federates directly:                                   p50 %.0f us, p90 %.0f us, p99 %.0f us\n"+
			"  the floor, the same route over raw TCP and UDP (no protobuf, no RTI):   p50 %.0f us, p99 %.0f us\n"+
			"  the floor with a response to each call and an acknowledgement of each: p50 %.0f us, p99 %.0f us\n"+
			"  the protocol adds p50 %.0f us to the peer's (ratio %.2f); ratio to the floor %.2f, to the acknowledged floor %.2f\n",
			r.Payload, r.FedProP50, r.FedProP90, r.FedProP99, r.RoundTrips, r.PeerP50, r.PeerP90, r.PeerP99, r.FloorP50, r.FloorP99,
			r.AckedFloorP50, r.AckedFloorP99, r.FedProP50-r.PeerP50, r.FedProP50/r.PeerP50, r.Ratio, r.RatioAcked)
	})
	return 0
}

// fedproPair is two Federate Protocol clients joined to one federation
// through a daemon: A publishes Ping and subscribes to Pong, B the other
// way round, each has registered its instance and discovered the
// other's.
type fedproPair struct {
	a, b               *fpclient.Conn
	pingObj, pongObj   *pb.ObjectInstanceHandle
	pingAttr, pongAttr *pb.AttributeHandle
}

func (p *fedproPair) close() {
	if p.a != nil {
		p.a.Close()
	}
	if p.b != nil {
		p.b.Close()
	}
}

// openFedProPair connects A and B to the daemon at addr and sets them up;
// onA and onB get each client's callbacks on its reader goroutine. They
// may use p once the caller has seen openFedProPair return.
func openFedProPair(addr string, p *fedproPair, onA, onB func(*pb.CallbackRequest)) error {
	var err error
	if p.a, err = fpclient.Dial(addr, onA); err != nil {
		return err
	}
	if p.b, err = fpclient.Dial(addr, onB); err != nil {
		return err
	}
	a, b := p.a, p.b
	for _, c := range []*fpclient.Conn{a, b} { // the pair waits for discoveries, never a reflection
		c.KeepOnly(func(cb *pb.CallbackRequest) bool { return cb.GetReflectAttributeValues() == nil })
	}
	must := func(c *fpclient.Conn, req *pb.CallRequest) *pb.CallResponse {
		if err != nil {
			return nil
		}
		var resp *pb.CallResponse
		resp, err = c.Call(req)
		return resp
	}
	module := &pb.FomModule{FomModule: &pb.FomModule_File{File: &pb.FileFomModule{Name: "bench.xml", Content: []byte(benchFedProFOM)}}}
	for _, c := range []*fpclient.Conn{a, b} {
		must(c, &pb.CallRequest{CallRequest: &pb.CallRequest_ConnectRequest{ConnectRequest: &pb.ConnectRequest{}}})
	}
	must(a, &pb.CallRequest{CallRequest: &pb.CallRequest_CreateFederationExecutionRequest{CreateFederationExecutionRequest: &pb.CreateFederationExecutionRequest{FederationName: "bench-fedpro", FomModule: module}}})
	for _, c := range []*fpclient.Conn{a, b} {
		must(c, &pb.CallRequest{CallRequest: &pb.CallRequest_JoinFederationExecutionRequest{JoinFederationExecutionRequest: &pb.JoinFederationExecutionRequest{FederateType: "bench", FederationName: "bench-fedpro"}}})
	}
	classOf := func(c *fpclient.Conn, name string) (*pb.ObjectClassHandle, *pb.AttributeHandle) {
		cl := must(c, &pb.CallRequest{CallRequest: &pb.CallRequest_GetObjectClassHandleRequest{GetObjectClassHandleRequest: &pb.GetObjectClassHandleRequest{ObjectClassName: name}}}).GetGetObjectClassHandleResponse().GetResult()
		at := must(c, &pb.CallRequest{CallRequest: &pb.CallRequest_GetAttributeHandleRequest{GetAttributeHandleRequest: &pb.GetAttributeHandleRequest{ObjectClass: cl, AttributeName: "V"}}}).GetGetAttributeHandleResponse().GetResult()
		return cl, at
	}
	pingClass, pingAttr := classOf(a, "Ping")
	pongClass, pongAttr := classOf(b, "Pong")
	set := func(at *pb.AttributeHandle) *pb.AttributeHandleSet {
		return &pb.AttributeHandleSet{AttributeHandle: []*pb.AttributeHandle{at}}
	}
	must(a, &pb.CallRequest{CallRequest: &pb.CallRequest_SubscribeObjectClassAttributesRequest{SubscribeObjectClassAttributesRequest: &pb.SubscribeObjectClassAttributesRequest{ObjectClass: pongClass, Attributes: set(pongAttr)}}})
	must(b, &pb.CallRequest{CallRequest: &pb.CallRequest_SubscribeObjectClassAttributesRequest{SubscribeObjectClassAttributesRequest: &pb.SubscribeObjectClassAttributesRequest{ObjectClass: pingClass, Attributes: set(pingAttr)}}})
	must(a, &pb.CallRequest{CallRequest: &pb.CallRequest_PublishObjectClassAttributesRequest{PublishObjectClassAttributesRequest: &pb.PublishObjectClassAttributesRequest{ObjectClass: pingClass, Attributes: set(pingAttr)}}})
	must(b, &pb.CallRequest{CallRequest: &pb.CallRequest_PublishObjectClassAttributesRequest{PublishObjectClassAttributesRequest: &pb.PublishObjectClassAttributesRequest{ObjectClass: pongClass, Attributes: set(pongAttr)}}})
	pingObj := must(a, &pb.CallRequest{CallRequest: &pb.CallRequest_RegisterObjectInstanceRequest{RegisterObjectInstanceRequest: &pb.RegisterObjectInstanceRequest{ObjectClass: pingClass}}}).GetRegisterObjectInstanceResponse().GetResult()
	pongObj := must(b, &pb.CallRequest{CallRequest: &pb.CallRequest_RegisterObjectInstanceRequest{RegisterObjectInstanceRequest: &pb.RegisterObjectInstanceRequest{ObjectClass: pongClass}}}).GetRegisterObjectInstanceResponse().GetResult()
	if err != nil {
		return err
	}
	discovered := func(cb *pb.CallbackRequest) bool { return cb.GetDiscoverObjectInstance() != nil }
	if _, err := a.Callback("discover", 30*time.Second, discovered); err != nil {
		return err
	}
	if _, err := b.Callback("discover", 30*time.Second, discovered); err != nil {
		return err
	}
	p.pingObj, p.pongObj, p.pingAttr, p.pongAttr = pingObj, pongObj, pingAttr, pongAttr
	return nil
}

// benchThroughServe runs a daemon and two Federate Protocol clients, and
// times count update round trips between them. A round trip ends when
// A's connection reader has the reflection, as the floor's ends when its
// client's read returns: the hand-off from the reader to the goroutine
// making the calls (a channel, this bench's own plumbing) is not timed.
func benchThroughServe(ctx context.Context, port, count, payload int) ([]time.Duration, error) {
	addr, stop, err := startServe(ctx, port)
	if err != nil {
		return nil, err
	}
	defer stop()
	pongs := make(chan time.Time, 1)
	var armed atomic.Bool
	value := make([]byte, payload)
	p := &fedproPair{}
	defer p.close()
	var ping, pong *pb.CallRequest // set before armed
	err = openFedProPair(addr, p, func(cb *pb.CallbackRequest) {
		if armed.Load() && cb.GetReflectAttributeValues() != nil {
			select {
			case pongs <- time.Now():
			default:
			}
		}
	}, func(cb *pb.CallbackRequest) {
		if armed.Load() && cb.GetReflectAttributeValues() != nil {
			// B updates before it answers the callback, as a client
			// answers once the federate's callback has returned;
			// an error ends B's connection, which A sees.
			_ = p.b.SendCall(pong)
		}
	})
	if err != nil {
		return nil, err
	}
	ping, pong = updateCall(p.pingObj, p.pingAttr, value), updateCall(p.pongObj, p.pongAttr, value)
	armed.Store(true)
	aFailed, bFailed := p.a.Failed(), p.b.Failed()
	rtts := make([]time.Duration, 0, count)
	for range count {
		t0 := time.Now()
		if err := p.a.SendCall(ping); err != nil {
			return nil, err
		}
		var t1 time.Time
		select {
		case t1 = <-pongs:
		case <-aFailed:
			return nil, fmt.Errorf("client A: %w", p.a.Err())
		case <-bFailed:
			return nil, fmt.Errorf("client B: %w", p.b.Err())
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		rtts = append(rtts, t1.Sub(t0))
		// One call in flight: the update's response almost always
		// comes before the reflection that answers it; it is waited
		// for all the same.
		if err := p.a.Settled(30 * time.Second); err != nil {
			return nil, fmt.Errorf("client A: %w", err)
		}
	}
	return rtts, nil
}

// fedproFloor times count round trips of size-byte messages over the
// route of the Federate Protocol round trip with no protobuf and no RTI:
// a client writes the message over TCP to a relay (the daemon), which
// sends it over loopback UDP to a second relay, which writes it over TCP
// to the receiving client; that client writes it back, and it returns the
// same way. One process, like the round trip through serve; n/10 more
// round trips warm up first.
//
// With acked, the floor also carries the messages the protocol adds to
// that route: the relay answers each message with a response (the
// call's), and each client acknowledges each message it is given (the
// callback's response) — B in the same write as its answer, as the
// bench's client does, A in a write of its own. Each message then has a
// type byte ('M' a message, 'R' a response, 'A' an acknowledgement;
// responses and acknowledgements have 7 bytes more).
func fedproFloor(ctx context.Context, count, size int, acked bool) ([]time.Duration, error) {
	size = max(size, 1)
	var closers []io.Closer
	var wg sync.WaitGroup
	defer func() {
		for _, c := range closers {
			c.Close()
		}
		wg.Wait()
	}()
	ua, ub, err := rawPair()
	if err != nil {
		return nil, err
	}
	closers = append(closers, ua, ub)
	// tcpPair returns both ends of a loopback TCP connection: the client's
	// and the relay's.
	tcpPair := func() (client, relay net.Conn, err error) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, nil, err
		}
		defer l.Close()
		if client, err = net.Dial("tcp", l.Addr().String()); err != nil {
			return nil, nil, err
		}
		closers = append(closers, client)
		if relay, err = l.Accept(); err != nil {
			return nil, nil, err
		}
		closers = append(closers, relay)
		return client, relay, nil
	}
	ca, ra, err := tcpPair()
	if err != nil {
		return nil, err
	}
	cb, rb, err := tcpPair()
	if err != nil {
		return nil, err
	}
	head := 0 // the type byte
	if acked {
		head = 1
	}
	// readMsg reads from r until it has read a message into buf
	// (head+size bytes), skipping responses and acknowledgements.
	readMsg := func(r io.Reader, buf []byte) error {
		for {
			if _, err := io.ReadFull(r, buf[:head]); err != nil {
				return err
			}
			if !acked || buf[0] == 'M' {
				_, err := io.ReadFull(r, buf[head:head+size])
				return err
			}
			if _, err := io.ReadFull(r, buf[1:8]); err != nil {
				return err
			}
		}
	}
	response := []byte("R0000000")
	toUDP := func(from net.Conn, u *net.UDPConn, to netip.AddrPort) {
		defer wg.Done()
		buf := make([]byte, head+size)
		for {
			if err := readMsg(from, buf); err != nil {
				return
			}
			if _, err := u.WriteToUDPAddrPort(buf, to); err != nil {
				return
			}
			if acked {
				if _, err := from.Write(response); err != nil {
					return
				}
			}
		}
	}
	toTCP := func(u *net.UDPConn, to net.Conn) {
		defer wg.Done()
		buf := make([]byte, 65536)
		for {
			n, _, err := u.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			if _, err := to.Write(buf[:n]); err != nil {
				return
			}
		}
	}
	wg.Add(5)
	go toUDP(ra, ua, ub.LocalAddr().(*net.UDPAddr).AddrPort())
	go toTCP(ua, ra)
	go toUDP(rb, ub, ua.LocalAddr().(*net.UDPAddr).AddrPort())
	go toTCP(ub, rb)
	go func() { // client B answers every message, acknowledging it in the same write
		defer wg.Done()
		buf := make([]byte, head+size, head+size+8)
		for {
			if err := readMsg(cb, buf); err != nil {
				return
			}
			out := buf
			if acked {
				out = append(buf, "A0000000"...)
			}
			if _, err := cb.Write(out); err != nil {
				return
			}
		}
	}()
	if dl, ok := ctx.Deadline(); ok {
		ca.SetReadDeadline(dl) // a datagram lost on loopback ends the run
	}
	msg, buf := make([]byte, head+size), make([]byte, head+size)
	if acked {
		msg[0] = 'M'
	}
	ack := []byte("A0000000")
	rtts := make([]time.Duration, 0, count)
	for i := range count + count/10 {
		t0 := time.Now()
		if _, err := ca.Write(msg); err != nil {
			return nil, err
		}
		if err := readMsg(ca, buf); err != nil {
			return nil, err
		}
		if i >= count/10 {
			rtts = append(rtts, time.Since(t0))
		}
		if acked {
			if _, err := ca.Write(ack); err != nil {
				return nil, err
			}
		}
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

// startServe serves the Federate Protocol in this process as `serve`
// does with its defaults on loopback (a free port, the multicast port
// port, a one-second resume window): the hosted federates' gossip
// address, the host and its session server. It returns the address
// served and the function that stops it all.
func startServe(ctx context.Context, port int) (addr string, stop func(), err error) {
	base := peer.Config{
		Multicast: transport.UDPConfig{Port: port, Interface: transport.DefaultInterface},
		SaveDir:   os.TempDir(), StepHold: cli.StepHoldFor(0), Logger: zerolog.Nop(),
	}
	if err := cli.JoinNet(&base, "127.0.0.1:0", "", "", "", ""); err != nil {
		return "", nil, err
	}
	g, err := fedpro.StartGossip(&base)
	if err != nil {
		return "", nil, err
	}
	quiet := func(string, ...any) {}
	host := fedpro.NewHost(fedpro.Config{Base: base, CallTimeout: 30 * time.Second, Logf: quiet, Federations: g.Federations})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		host.Close()
		g.Close()
		return "", nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- host.Serve(sctx, l, session.Config{ResumeWindow: time.Second, Logf: quiet}) }()
	return l.Addr().String(), func() {
		cancel()
		<-served
		host.Close()
		g.Close()
	}, nil
}
