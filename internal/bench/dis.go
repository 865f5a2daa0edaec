package bench

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meshrti/meshrti/dis"
	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/internal/cli"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/transport"
)

// disBenchModule is the FOM module of the bench's ping: the plain peer
// round trip measured beside the gateway's path.
const disBenchModule = `<?xml version="1.0"?>
<objectModel xmlns="http://standards.ieee.org/IEEE1516-2010">
  <modelIdentification><name>meshrti bench dis</name><type>FOM</type><version>1</version></modelIdentification>
  <interactions><interactionClass><name>HLAinteractionRoot</name>
    <interactionClass><name>DISBenchPing</name><sharing>PublishSubscribe</sharing><transportation>HLAreliable</transportation><order>Receive</order>
      <parameter><name>Seq</name><dataType>HLAinteger64BE</dataType></parameter></interactionClass>
    <interactionClass><name>DISBenchPong</name><sharing>PublishSubscribe</sharing><transportation>HLAreliable</transportation><order>Receive</order>
      <parameter><name>Seq</name><dataType>HLAinteger64BE</dataType></parameter></interactionClass>
  </interactionClass></interactions>
</objectModel>`

// disBenchFlags are the flags of "federate-node bench dis".
type disBenchFlags struct {
	entities int
	rate     int
	duration time.Duration
	pings    int
	fom      string
	frame    int
	benchCommon
	// The child's: its role and where its gateway listens and sends.
	role, federation, listen, sendTo string
}

func (bf *disBenchFlags) Define(fs *flag.FlagSet) {
	fs.IntVar(&bf.entities, "entities", 10000, "entities each way")
	fs.IntVar(&bf.rate, "rate", 50000, "PDUs per second sent to the gateway, and HLA updates per second, spread over the entities")
	fs.DurationVar(&bf.duration, "duration", 10*time.Second, "how long each way's load runs")
	fs.IntVar(&bf.pings, "pings", 2000, "latency samples: DIS PDUs to reflections, and plain peer round trips")
	fs.StringVar(&bf.fom, "fom", "", "the directory of the RPR FOM 2.0 modules (default $MESHRTI_SHARED/fom/rpr2, else ../shared/fom/rpr2)")
	fs.IntVar(&bf.frame, "frame", 16000, cli.FrameHelp)
	bf.benchCommon.define(fs, 5*time.Minute, cli.PortHelp, "write CPU profiles to `PREFIX`.bench and PREFIX.gateway")
	fs.StringVar(&bf.role, "role", "", "internal: the gateway's child process")
	fs.StringVar(&bf.federation, "federation", "", "internal: the child's federation")
	fs.StringVar(&bf.listen, "dis", "", "internal: where the child's gateway listens")
	fs.StringVar(&bf.sendTo, "dis-send", "", "internal: where the child's gateway sends")
}

func (bf *disBenchFlags) Check(nargs int) string {
	switch {
	case nargs > 0:
		return "unexpected arguments"
	case bf.entities < 1 || bf.entities > 60000:
		return "-entities: 1 to 60000"
	case bf.rate < 1 || bf.duration <= 0 || bf.pings < 0:
		return "-rate and -duration must be positive, -pings not negative"
	}
	return ""
}

// DISResult is the line "bench dis -json" prints.
type DISResult struct {
	Bench    string  `json:"bench"`
	Entities int     `json:"entities"`
	Rate     int     `json:"rate"`
	Seconds  float64 `json:"seconds"`
	// DIS to HLA: PDUs sent to the gateway in the measured run, the
	// reflections of the HLA federate, and their rate from the first PDU
	// to the last reflection.
	DISToHLASent      int64   `json:"dis_to_hla_sent"`
	DISToHLAReflected int64   `json:"dis_to_hla_reflected"`
	DISToHLALost      int64   `json:"dis_to_hla_lost"`
	DISToHLAPerS      float64 `json:"dis_to_hla_per_s"`
	// HLA to DIS: updates of the HLA federate (each moves its entity
	// beyond the dead-reckoning threshold) and the Entity State PDUs
	// the gateway sent of them.
	HLAToDISUpdates int64   `json:"hla_to_dis_updates"`
	HLAToDISPDUs    int64   `json:"hla_to_dis_pdus"`
	HLAToDISLost    int64   `json:"hla_to_dis_lost"`
	HLAToDISPerS    float64 `json:"hla_to_dis_per_s"`
	// Latency from a PDU written to the DIS socket to its reflection in
	// the HLA federate (one way, one PDU at a time), and the plain peer
	// round trip of the same federates' processes; Added is what the
	// gateway's path takes beyond one peer hop (half the round trip).
	LatencyP50  float64 `json:"dis_to_hla_latency_p50_us"`
	LatencyP99  float64 `json:"dis_to_hla_latency_p99_us"`
	LatencyLost int     `json:"dis_to_hla_latency_lost"`
	PeerRTTP50  float64 `json:"peer_rtt_p50_us"`
	PeerRTTP99  float64 `json:"peer_rtt_p99_us"`
	AddedP50    float64 `json:"added_p50_us"`
	AddedP99    float64 `json:"added_p99_us"`
	// Gateway is the gateway's own counters at the end.
	Gateway dis.Stats `json:"gateway"`
	benchTail
}

func (bf disBenchFlags) Run(b *cli.Cmd) int {
	if bf.role == "gateway" {
		ctx, cancel := context.WithTimeout(context.Background(), bf.timeout)
		defer cancel()
		if err := runDISBenchGateway(ctx, bf, b.Stdout); err != nil {
			return b.Fail(err)
		}
		return 0
	}
	if bf.role != "" {
		return b.UsageError(fmt.Sprintf("unknown -role %q", bf.role))
	}
	dir, err := rprFOMDir(bf.fom)
	if err != nil {
		return b.UsageError(err.Error())
	}
	bf.fom = dir
	defaultPort(&bf.port, 11)
	return runParentChild(b, &bf.benchCommon, "", nil, ".bench", func(ctx context.Context) (*DISResult, error) {
		return benchDIS(ctx, bf, b.Stderr)
	}, func(w io.Writer, r *DISResult) {
		fmt.Fprintf(w, "DIS gateway, %d entities each way, %d PDUs or updates/s offered for %.0f s, over loopback:\n"+
			"  DIS to HLA: %d PDUs sent, %d reflected (%d lost): %.0f/s\n"+
			"  HLA to DIS: %d updates, %d Entity State PDUs (%d lost): %.0f/s\n"+
			"  latency DIS socket to HLA reflection p50 %.0f us, p99 %.0f us (%d of %d samples lost)\n"+
			"  plain peer round trip p50 %.0f us, p99 %.0f us: the gateway's path adds p50 %.0f us, p99 %.0f us to one peer hop\n"+
			"  gateway: received %v, sent %v, dropped %v\n",
			r.Entities, r.Rate, bf.duration.Seconds(),
			r.DISToHLASent, r.DISToHLAReflected, r.DISToHLALost, r.DISToHLAPerS,
			r.HLAToDISUpdates, r.HLAToDISPDUs, r.HLAToDISLost, r.HLAToDISPerS,
			r.LatencyP50, r.LatencyP99, r.LatencyLost, bf.pings,
			r.PeerRTTP50, r.PeerRTTP99, r.AddedP50, r.AddedP99,
			r.Gateway.Received, r.Gateway.Sent, r.Gateway.Dropped)
	})
}

// rprFOMDir is the directory of the RPR modules: dir, else
// $MESHRTI_SHARED/fom/rpr2, else ../shared/fom/rpr2 from the working
// directory or its parents.
func rprFOMDir(dir string) (string, error) {
	var cands []string
	if dir != "" {
		cands = []string{dir}
	} else {
		if s := os.Getenv("MESHRTI_SHARED"); s != "" {
			cands = append(cands, filepath.Join(s, "fom", "rpr2"))
		}
		wd, _ := os.Getwd()
		for d := wd; ; d = filepath.Dir(d) {
			cands = append(cands, filepath.Join(d, "..", "shared", "fom", "rpr2"))
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	for _, c := range cands {
		if files, _ := filepath.Glob(filepath.Join(c, "*.xml")); len(files) > 0 {
			return filepath.Abs(c)
		}
	}
	return "", errors.New("-fom: no RPR FOM 2.0 modules found (give the directory of them)")
}

// --- the child: the gateway and a pong ---------------------------------

func runDISBenchGateway(ctx context.Context, bf disBenchFlags, stdout io.Writer) error {
	stop, err := cli.StartProfile(cli.ProfilePath(bf.cpuprofile, ".gateway"))
	if err != nil {
		return err
	}
	defer stop()
	files, err := cli.ExpandFOMs([]string{bf.fom})
	if err != nil {
		return err
	}
	bench, err := fomxml.ParseBytes("meshrti-bench-dis.xml", []byte(disBenchModule))
	if err != nil {
		return err
	}
	cfg := peer.Config{
		Federation: bf.federation, FederateName: "gateway", FederateType: "federate-node/dis", Create: true,
		FOMFiles: files, FOMModules: []*fomxml.Document{dis.StatusModule(), bench}, MaxFrame: bf.frame,
		Multicast: transport.UDPConfig{Port: bf.port, Interface: transport.DefaultInterface},
		Gossip:    peer.GossipConfig{BindAddr: "127.0.0.1", Profile: "lan"},
	}
	cfg.Multicast.PollFor = cli.PollFor(0)
	jctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	gwFed, err := peer.Join(jctx, cfg)
	cancel()
	if err != nil {
		return fmt.Errorf("join: %w", err)
	}
	defer gwFed.Close()
	seed, _ := gwFed.GossipAddr()
	g, err := dis.New(dis.Config{Federate: gwFed, DIS: bf.listen, Send: bf.sendTo, Exercise: 1, Site: 1, Application: 1})
	if err != nil {
		return err
	}
	pcfg := cfg
	pcfg.FederateName, pcfg.FederateType, pcfg.Create, pcfg.FOMFiles, pcfg.FOMModules = "pong", "federate-node/bench", false, nil, nil
	pcfg.Gossip.Seeds = []string{seed}
	jctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	pong, err := peer.Join(jctx, pcfg)
	cancel()
	if err != nil {
		g.Close()
		return fmt.Errorf("join the pong: %w", err)
	}
	defer pong.Close()
	ping, pongC, pingSeq, pongSeq, err := disBenchPing(pong, false)
	if err != nil {
		g.Close()
		return err
	}
	fmt.Fprintf(stdout, "gossip %s\n", seed)
	fmt.Fprintln(stdout, "ready")
	for {
		ev, err := pong.Next(ctx)
		if err != nil {
			break
		}
		ri, ok := ev.(peer.ReceiveInteraction)
		if !ok || ri.Class != ping {
			continue
		}
		n, _ := readI64(ri.Values[pingSeq])
		if err := pong.SendInteraction(pongC, peer.ParameterValues{pongSeq: ri.Values[pingSeq]}, nil); err != nil {
			break
		}
		if n == seqStop {
			break
		}
	}
	g.Close()
	st, _ := json.Marshal(g.Stats())
	fmt.Fprintf(stdout, "stats %s\n", st)
	cli.DrainFor(ctx, pong, 200*time.Millisecond)
	return nil
}

// disBenchPing declares the ping side (ping true: publish the ping,
// subscribe the pong) or the pong side, and returns the two classes and
// their Seq parameters.
func disBenchPing(f *peer.Federate, ping bool) (pingC, pongC peer.InteractionClassHandle, pingSeq, pongSeq peer.ParameterHandle, err error) {
	pi, ok1 := f.FDD().InteractionClass("DISBenchPing")
	po, ok2 := f.FDD().InteractionClass("DISBenchPong")
	if !ok1 || !ok2 {
		return 0, 0, 0, 0, errors.New("the FDD has no DISBenchPing or DISBenchPong")
	}
	sPing, _ := pi.Parameter("Seq")
	sPong, _ := po.Parameter("Seq")
	send, recv := po.Handle, pi.Handle
	if ping {
		send, recv = pi.Handle, po.Handle
	}
	return pi.Handle, po.Handle, sPing.Handle, sPong.Handle, errors.Join(f.PublishInteractionClass(send), f.SubscribeInteractionClass(recv))
}

// --- the parent: DIS simulator, HLA federate, measurements ------------

// disBench is the parent's side of a run.
type disBench struct {
	bf     disBenchFlags
	fed    *peer.Federate
	m      *dis.Mapper
	class  *fomxml.ObjectClass
	conn   *dis.Conn
	sink   *net.UDPConn
	ping   peer.InteractionClassHandle
	seqIn  peer.ParameterHandle // the pong's Seq
	seqOut peer.ParameterHandle // the ping's Seq

	spatial peer.AttributeHandle

	discovered atomic.Int64
	reflected  atomic.Int64
	pongs      chan int64
	latency    chan float64 // location X of a reflection, in the latency phase
	measuring  atomic.Bool  // decode reflections' locations (latency phase)

	mu      sync.Mutex
	full    map[peer.ObjectInstanceHandle]peer.AttributeValues
	sinkPDU atomic.Int64
	sinkIDs sync.Map // entity number seen
	sinkN   atomic.Int64
}

func benchDIS(ctx context.Context, bf disBenchFlags, stderr io.Writer) (*DISResult, error) {
	res := &DISResult{Bench: "dis", Entities: bf.entities, Rate: bf.rate, Seconds: bf.duration.Seconds()}
	sink, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, err
	}
	defer sink.Close()
	_ = sink.SetReadBuffer(8 << 20)
	gwPort, err := freeLoopbackPort()
	if err != nil {
		return nil, err
	}
	listen := netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), gwPort)
	federation := fmt.Sprintf("bench-dis-%d", os.Getpid())
	child, err := startRoleChild(ctx, "dis", "gateway", federation, bf.benchCommon, stderr,
		"-fom", bf.fom, "-dis", listen.String(), "-dis-send", sink.LocalAddr().String(), "-frame", fmt.Sprint(bf.frame))
	if err != nil {
		return nil, err
	}
	defer child.stop()
	seed, err := child.expect(ctx, "gossip ", 90*time.Second)
	if err != nil {
		return nil, err
	}
	if _, err := child.expect(ctx, "ready", 60*time.Second); err != nil {
		return nil, err
	}
	cfg := peer.Config{
		Federation: federation, FederateName: "bench", FederateType: "federate-node/bench", AdoptTime: true, MaxFrame: bf.frame,
		Multicast: transport.UDPConfig{Port: bf.port, Interface: transport.DefaultInterface},
		Gossip:    peer.GossipConfig{BindAddr: "127.0.0.1", Seeds: []string{seed}, Profile: "lan"},
	}
	cfg.Multicast.PollFor = cli.PollFor(0)
	jctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	fed, err := peer.Join(jctx, cfg)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("join: %w", err)
	}
	defer fed.Close()
	d := &disBench{bf: bf, fed: fed, sink: sink, pongs: make(chan int64, 16), latency: make(chan float64, 16), full: map[peer.ObjectInstanceHandle]peer.AttributeValues{}}
	if err := d.declare(); err != nil {
		return nil, err
	}
	if d.conn, err = dis.Dial(listen, "lo"); err != nil {
		return nil, err
	}
	defer d.conn.Close()
	lctx, lcancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); d.events(lctx) }()
	go func() { defer wg.Done(); d.readSink(lctx) }()
	defer func() { lcancel(); sink.SetReadDeadline(time.Now()); wg.Wait() }()

	if err := d.latencyRun(ctx, res); err != nil {
		return nil, err
	}
	if err := d.disToHLA(ctx, res); err != nil {
		return nil, err
	}
	if err := d.hlaToDIS(ctx, res); err != nil {
		return nil, err
	}
	// Stop the child, which reports its gateway's counters.
	_ = d.fed.SendInteraction(d.ping, peer.ParameterValues{d.seqOut: i64(seqStop)}, nil)
	if err := child.expectJSON(ctx, "stats ", 30*time.Second, &res.Gateway); err != nil {
		res.Error = err.Error()
	} else if err := child.wait(10 * time.Second); err != nil { // its profile written
		res.Error = err.Error()
	}
	return res, nil
}

func freeLoopbackPort() (uint16, error) {
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return 0, err
	}
	defer c.Close()
	return uint16(c.LocalAddr().(*net.UDPAddr).Port), nil
}

func (d *disBench) declare() error {
	fdd := d.fed.FDD()
	var err error
	if d.m, err = dis.NewMapper(fdd, dis.MapperConfig{}); err != nil {
		return err
	}
	c, ok := fdd.ObjectClass("GroundVehicle")
	if !ok {
		return errors.New("the FDD has no GroundVehicle")
	}
	d.class = c
	sp, _ := c.Attribute("Spatial")
	d.spatial = sp.Handle
	var attrs []peer.AttributeHandle
	for _, a := range c.AllAttributes() {
		attrs = append(attrs, a.Handle)
	}
	d.ping, _, d.seqOut, d.seqIn, err = disBenchPing(d.fed, true)
	if err != nil {
		return err
	}
	return errors.Join(d.fed.SubscribeObjectClassAttributes(c.Handle, d.spatial), d.fed.PublishObjectClassAttributes(c.Handle, attrs...))
}

// events reads the bench federate's events: counts discoveries and
// reflections, hands pongs and (in the latency phase) locations over,
// and answers requests for values.
func (d *disBench) events(ctx context.Context) {
	for {
		ev, err := d.fed.Next(ctx)
		if err != nil {
			return
		}
		switch ev := ev.(type) {
		case peer.DiscoverObjectInstance:
			d.discovered.Add(1)
		case peer.ReflectAttributeValues:
			d.reflected.Add(1)
			if d.measuring.Load() {
				if b, ok := ev.Values[d.spatial]; ok {
					var es dis.EntityState
					d.m.ApplyEntityValues(d.class.Handle, peer.AttributeValues{d.spatial: b}, &es)
					select {
					case d.latency <- es.Location.X:
					default:
					}
				}
			}
		case peer.ReceiveInteraction:
			if n, ok := readI64(ev.Values[d.seqIn]); ok {
				select {
				case d.pongs <- n:
				default:
				}
			}
		case peer.ProvideAttributeValueUpdate:
			d.mu.Lock()
			v := d.full[ev.Object]
			d.mu.Unlock()
			if v != nil {
				_ = d.fed.UpdateAttributeValues(ev.Object, v, nil)
			}
		}
	}
}

// readSink counts the Entity State PDUs the gateway sends.
func (d *disBench) readSink(ctx context.Context) {
	buf := make([]byte, 1<<16)
	for ctx.Err() == nil {
		n, _, err := d.sink.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		if n < 18 || buf[2] != dis.TypeEntityState || binary.BigEndian.Uint16(buf[12:]) != 2 {
			continue
		}
		d.sinkPDU.Add(1)
		if _, loaded := d.sinkIDs.LoadOrStore(binary.BigEndian.Uint16(buf[16:]), true); !loaded {
			d.sinkN.Add(1)
		}
	}
}

// roundTrip times one plain peer round trip (ping, pong), resending
// after retry.
func (d *disBench) roundTrip(ctx context.Context, n int64, retry time.Duration) (time.Duration, error) {
	start := time.Now()
	for {
		if err := d.fed.SendInteraction(d.ping, peer.ParameterValues{d.seqOut: i64(n)}, nil); err != nil {
			return 0, err
		}
		timeout := time.After(retry)
	wait:
		for {
			select {
			case got := <-d.pongs:
				if got == n {
					return time.Since(start), nil
				}
			case <-timeout:
				break wait
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		}
	}
}

// entityPDU is the Entity State PDU of bench entity n (the DIS side's
// entities are site 1, application 1; the HLA side's site 2).
func entityPDU(n int, x float64) *dis.EntityState {
	return &dis.EntityState{
		Header: dis.Header{Exercise: 1},
		ID:     dis.EntityID{Site: 1, Application: 1, Entity: uint16(n)},
		Type:   dis.EntityType{Kind: 1, Domain: 1, Country: 225, Category: 1},
		// On the equator, moving east along x: every PDU a new place.
		Location:      dis.WorldCoordinates{X: 6378137 + x, Y: float64(n), Z: 0},
		DeadReckoning: dis.DeadReckoning{Algorithm: dis.DRStatic},
		Marking:       dis.NewMarking(fmt.Sprintf("E%d", n)),
	}
}

// latencyRun times single PDUs of one entity from the DIS socket to the
// reflection, each beside a plain peer round trip (one of each in turn,
// so that both see the same machine).
func (d *disBench) latencyRun(ctx context.Context, res *DISResult) error {
	if _, err := d.roundTrip(ctx, 0, 200*time.Millisecond); err != nil { // the pong is subscribed
		return err
	}
	const entity = 60001
	var buf []byte
	es := entityPDU(entity, 0)
	// Its registration first.
	before := d.discovered.Load()
	for d.discovered.Load() == before {
		buf, _ = d.conn.Send(es, buf)
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	d.measuring.Store(true)
	defer d.measuring.Store(false)
	lat := make([]time.Duration, 0, d.bf.pings)
	rtts := make([]time.Duration, 0, d.bf.pings)
	for i := 1; i <= d.bf.pings; i++ {
		rtt, err := d.roundTrip(ctx, int64(i), time.Second)
		if err != nil {
			return err
		}
		rtts = append(rtts, rtt)
		es.Location.X = 6378137 + float64(i)
		start := time.Now()
		buf, _ = d.conn.Send(es, buf)
		timeout := time.After(time.Second)
	wait:
		for {
			select {
			case x := <-d.latency:
				if x == es.Location.X {
					lat = append(lat, time.Since(start))
					break wait
				}
			case <-timeout:
				res.LatencyLost++
				break wait
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	res.LatencyP50, res.LatencyP99 = quantileMicros(lat, 0.5), quantileMicros(lat, 0.99)
	res.PeerRTTP50, res.PeerRTTP99 = quantileMicros(rtts, 0.5), quantileMicros(rtts, 0.99)
	res.AddedP50, res.AddedP99 = res.LatencyP50-res.PeerRTTP50/2, res.LatencyP99-res.PeerRTTP99/2
	return nil
}

// pace sends count items at rate per second from now, calling send for
// each; it returns when all are sent or ctx ends.
func pace(ctx context.Context, rate int, duration time.Duration, send func(i int) error) (int, error) {
	total := int(float64(rate) * duration.Seconds())
	start := time.Now()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	i := 0
	for i < total {
		due := min(total, int(time.Since(start).Seconds()*float64(rate))+1)
		for ; i < due; i++ {
			if err := send(i); err != nil {
				return i, err
			}
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return i, ctx.Err()
		}
	}
	return i, nil
}

// settle waits until count stops growing for quiet (or reaches want).
func settle(ctx context.Context, count func() int64, want int64, quiet time.Duration) time.Time {
	last, at := count(), time.Now()
	for count() < want && time.Since(at) < quiet && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
		if n := count(); n != last {
			last, at = n, time.Now()
		}
	}
	return at
}

// arrived waits for the sent messages, counted by count, to arrive
// (settle) and returns how many did, how many were lost, and their rate
// from start, when the first was sent, to the last arrival.
func arrived(ctx context.Context, count func() int64, sent int, start time.Time) (got, lost int64, perS float64) {
	last := settle(ctx, count, int64(sent), 2*time.Second)
	got = count()
	return got, max(0, int64(sent)-got), float64(got) / last.Sub(start).Seconds()
}

// disToHLA registers the entities through the gateway, then sends
// their PDUs at the rate and counts the reflections.
func (d *disBench) disToHLA(ctx context.Context, res *DISResult) error {
	n := d.bf.entities
	var buf []byte
	var err error
	x := make([]float64, n+1)
	before := d.discovered.Load()
	if _, err := pace(ctx, d.bf.rate, time.Duration(float64(n)/float64(d.bf.rate)*float64(time.Second))+time.Millisecond, func(i int) error {
		if i >= n {
			return nil
		}
		buf, err = d.conn.Send(entityPDU(i+1, 0), buf)
		return err
	}); err != nil {
		return err
	}
	settle(ctx, func() int64 { return d.discovered.Load() - before }, int64(n), 5*time.Second)
	if got := d.discovered.Load() - before; got < int64(n) {
		return fmt.Errorf("DIS to HLA: %d of %d entities discovered", got, n)
	}
	time.Sleep(500 * time.Millisecond) // their first values
	d.reflected.Store(0)
	start := time.Now()
	pdus := make([]*dis.EntityState, n+1)
	for i := 1; i <= n; i++ {
		pdus[i] = entityPDU(i, 0)
	}
	sent, err := pace(ctx, d.bf.rate, d.bf.duration, func(i int) error {
		e := i%n + 1
		x[e] += 2
		pdus[e].Location.X = 6378137 + x[e]
		buf, err = d.conn.Send(pdus[e], buf)
		return err
	})
	if err != nil {
		return err
	}
	res.DISToHLASent = int64(sent)
	res.DISToHLAReflected, res.DISToHLALost, res.DISToHLAPerS = arrived(ctx, d.reflected.Load, sent, start)
	return nil
}

// hlaToDIS registers the entities in the federation, then updates them
// at the rate and counts the Entity State PDUs the gateway sends.
func (d *disBench) hlaToDIS(ctx context.Context, res *DISResult) error {
	n := d.bf.entities
	spatials := make([]peer.AttributeValues, n)
	objs := make([]peer.ObjectInstanceHandle, n)
	for i := range n {
		obj, err := d.fed.RegisterObjectInstance(d.class.Handle, "")
		if err != nil {
			return err
		}
		es := entityPDU(i+1, 0)
		es.ID.Site = 2
		vals := peer.AttributeValues{}
		d.m.EntityValues(d.class.Handle, es, nil, vals)
		d.mu.Lock()
		d.full[obj] = vals
		d.mu.Unlock()
		objs[i] = obj
		spatials[i] = peer.AttributeValues{d.spatial: vals[d.spatial]}
	}
	// Their first values, until the gateway has sent each (it asks for
	// the values of what it discovers; the events goroutine answers).
	for round := 0; d.sinkN.Load() < int64(n); round++ {
		if round == 5 {
			return fmt.Errorf("HLA to DIS: %d of %d entities sent by the gateway", d.sinkN.Load(), n)
		}
		for i, obj := range objs {
			if _, ok := d.sinkIDs.Load(uint16(i + 1)); ok {
				continue
			}
			d.mu.Lock()
			v := d.full[obj]
			d.mu.Unlock()
			if err := d.fed.UpdateAttributeValues(obj, v, nil); err != nil {
				return err
			}
		}
		settle(ctx, d.sinkN.Load, int64(n), 2*time.Second)
	}
	time.Sleep(500 * time.Millisecond)
	d.sinkPDU.Store(0)
	x := make([]float64, n)
	es := entityPDU(1, 0)
	start := time.Now()
	sent, err := pace(ctx, d.bf.rate, d.bf.duration, func(i int) error {
		e := i % n
		x[e] += 10 // beyond the 1 m threshold: every update is a PDU
		es.Location.X = 6378137 + x[e]
		es.Location.Y = float64(e + 1)
		v := spatials[e]
		v[d.spatial] = d.encodeSpatial(es)
		return d.fed.UpdateAttributeValues(objs[e], v, nil)
	})
	if err != nil {
		return err
	}
	res.HLAToDISUpdates = int64(sent)
	res.HLAToDISPDUs, res.HLAToDISLost, res.HLAToDISPerS = arrived(ctx, d.sinkPDU.Load, sent, start)
	return nil
}

// encodeSpatial encodes es's Spatial alone (the mapping encodes only
// what changed since a previous PDU: here, the location).
func (d *disBench) encodeSpatial(es *dis.EntityState) []byte {
	prev := *es
	prev.Location.Z++
	vals := peer.AttributeValues{}
	d.m.EntityValues(d.class.Handle, es, &prev, vals)
	return vals[d.spatial]
}
