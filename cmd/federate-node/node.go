package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/internal/tick"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/transport"
)

// joinFlags are the flags that say how a federate of this process joins
// its federation: the federation, the federate's name and FOM modules,
// the control plane (gossip, seeds, key) and the data plane (multicast
// port, interface, TTL, frame size). `node` and `monitor` share them.
type joinFlags struct {
	federation string
	name       string
	foms       []string
	gossip     string
	seeds      string
	mcastPort  int
	key        string
	iface      string
	ttl        int
	frame      int
	transport  string
	advertise  string
	poll       time.Duration // see pollFor
	stepHold   time.Duration // see stepHoldFor
	lostGrace  time.Duration
	profile    string
	logs       logFlags
}

func (j *joinFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&j.federation, "federation", "demo", "federation execution name")
	fs.StringVar(&j.name, "name", "", "federate name (default: generated)")
	fs.Func("fom", "FOM module file (repeatable; node without it: the bundled demo FOM)", func(s string) error {
		j.foms = append(j.foms, s)
		return nil
	})
	fs.StringVar(&j.gossip, "gossip", "127.0.0.1:0", "gossip bind address (host:port; port 0 picks a free one)")
	fs.StringVar(&j.seeds, "seeds", "", "comma-separated host:port gossip addresses of members to join through")
	fs.IntVar(&j.mcastPort, "mcast-port", 47470, "UDP multicast port (all members must agree)")
	registerFederationKey(fs, &j.key)
	registerProfile(fs, &j.profile)
	j.logs.register(fs)
	fs.StringVar(&j.iface, "iface", transport.DefaultInterface, "multicast interface (name or one of its IPv4 addresses)")
	fs.IntVar(&j.ttl, "ttl", 0, "multicast TTL: 0 stays on this host, 1 reaches the local link")
	fs.IntVar(&j.frame, "frame", 0, "data-plane frame size in bytes (default 1400; up to 65000 on loopback)")
	fs.DurationVar(&j.poll, "poll", 0, "Linux: keep reading an empty socket this long before parking (lower latency for up to a core; default $"+pollEnv+" or 0, off)")
	registerStepHold(fs, &j.stepHold)
	registerDataPlane(fs, &j.transport, &j.advertise)
	registerLostGrace(fs, &j.lostGrace)
}

// registerLostGrace registers -lost-grace (node, monitor, serve).
func registerLostGrace(fs *flag.FlagSet, d *time.Duration) {
	fs.DurationVar(d, "lost-grace", 0, "how long a member this node's failure detector declared dead may refute before this node proposes the federation remove it (docs/gossip.md, What a suspicion does); 0: the profile's, 1s")
}

// registerStepHold registers -step-hold (node, monitor, serve).
func registerStepHold(fs *flag.FlagSet, d *time.Duration) {
	fs.DurationVar(d, "step-hold", 0, "how long what a federate sends while it handles one event may wait to leave in one send (docs/dataplane.md, The step send); 0: $"+stepHoldEnv+", else 50µs; negative: off")
}

// registerDataPlane registers -transport and -advertise (node, monitor,
// serve).
func registerDataPlane(fs *flag.FlagSet, mode, advertise *string) {
	fs.StringVar(mode, "transport", "multicast", "data plane: multicast (one LAN), unicast (routed subnets, clouds, Kubernetes) or auto (the federation's; probes multicast when it has none); all members agree")
	fs.StringVar(advertise, "advertise", "", "unicast: the `HOST:PORT` other members send to, when not the bound one (NAT, containers); port 0: the bound port; a port also fixes the bound one")
}

// dataPlane sets cfg's transport mode and advertised address.
func dataPlane(cfg *peer.Config, mode, advertise string) error {
	m, err := peer.ParseTransportMode(mode)
	if err != nil {
		return err
	}
	cfg.TransportMode, cfg.Advertise = m, advertise
	return nil
}

// pollEnv names the environment variable that sets -poll when the flag
// is not given, also for the processes a bench starts.
const pollEnv = "MESHRTI_POLL"

// pollFor is the data plane's poll time (transport.UDPConfig.PollFor):
// poll if set, else $MESHRTI_POLL, else 0.
func pollFor(poll time.Duration) time.Duration { return flagOrEnv(poll, pollEnv) }

// flagOrEnv is d when a flag set it (not 0), else the duration in the
// environment variable env, else 0.
func flagOrEnv(d time.Duration, env string) time.Duration {
	if d != 0 {
		return d
	}
	d, err := time.ParseDuration(os.Getenv(env))
	if err != nil {
		return 0
	}
	return d
}

// stepHoldEnv names the environment variable that sets -step-hold when
// the flag is not given, also for the processes a bench starts.
const stepHoldEnv = "MESHRTI_STEP_HOLD"

// stepHoldFor is peer.Config.StepHold: d if set, else $MESHRTI_STEP_HOLD,
// else 0 (the default bound).
func stepHoldFor(d time.Duration) time.Duration { return flagOrEnv(d, stepHoldEnv) }

// config builds the configuration of a federate of type typ joining as
// the flags say; with no -fom it brings no modules of its own.
func (j *joinFlags) config(typ string) (peer.Config, error) {
	cfg := peer.Config{
		Federation: j.federation, FederateName: j.name, FederateType: typ,
		FOMFiles: j.foms, MaxFrame: j.frame,
		Multicast: transport.UDPConfig{Port: j.mcastPort, Interface: j.iface, TTL: j.ttl},
	}
	cfg.Multicast.PollFor = pollFor(j.poll)
	cfg.StepHold = stepHoldFor(j.stepHold)
	err := joinNet(&cfg, j.gossip, j.seeds, j.key, j.transport, j.advertise)
	cfg.Gossip.LostGrace = j.lostGrace
	cfg.Gossip.Profile = j.profile
	cfg.Logger = j.logs.logger(typ)
	return cfg, err
}

// printGossip prints the line "gossip ADDR" with fed's gossip address:
// tests, scripts and a bench's parent process read it to find the seed.
func printGossip(w io.Writer, fed *peer.Federate) {
	if a, ok := fed.GossipAddr(); ok {
		fmt.Fprintf(w, "gossip %s\n", a)
	}
}

// printJoined prints the gossip line and "joined FEDERATION as NAME
// (handle H)".
func printJoined(w io.Writer, fed *peer.Federate, federation string) {
	printGossip(w, fed)
	fmt.Fprintf(w, "joined %s as %s (handle %d)\n", federation, fed.Name(), fed.Handle())
}

// drainFor reads and drops fed's events for d (or until ctx ends), so
// that repairs of the last messages can still be served before a
// resign.
func drainFor(ctx context.Context, fed *peer.Federate, d time.Duration) {
	lctx, lcancel := context.WithTimeout(ctx, d)
	defer lcancel()
	for {
		if _, err := fed.Next(lctx); err != nil {
			return
		}
	}
}

// joinNet sets in cfg the gossip member (bound to gossip, host:port,
// finding the others through seeds, comma-separated), the federation
// key and the data plane (mode and advertise, as dataPlane takes them).
func joinNet(cfg *peer.Config, gossip, seeds, key, mode, advertise string) error {
	host, port, err := splitHostPort(gossip)
	if err != nil {
		return err
	}
	cfg.Gossip = peer.GossipConfig{BindAddr: host, BindPort: port}
	if seeds != "" {
		cfg.Gossip.Seeds = strings.Split(seeds, ",")
	}
	if key != "" {
		cfg.Key = []byte(key)
	}
	return dataPlane(cfg, mode, advertise)
}

// nodeFlags are the flags of "federate-node node": one federate in this
// process, joined to a federation over gossip and UDP multicast.
type nodeFlags struct {
	joinFlags
	create     bool
	role       string
	count      int
	size       int
	timeout    time.Duration
	trace      string
	peers      int
	steps      int
	stepDelay  time.Duration
	cpuprofile string
	saveDir    string
	fedpro     string
	fedproWait time.Duration
	ownership  bool
}

func (n *nodeFlags) register(fs *flag.FlagSet) {
	n.joinFlags.register(fs)
	fs.BoolVar(&n.create, "create", false, "create the federation execution if it does not exist")
	fs.StringVar(&n.role, "role", "pong", "built-in federate: pong (answers pings, counts updates), ping (measures and loads), tick (time-stepped updates) or lab (tick, with ownership contention, moving regions and synchronization points: the fault lab's, docs/reliability.md)")
	fs.IntVar(&n.count, "count", 1000, "ping: updates to send")
	fs.IntVar(&n.size, "size", 100, "ping: payload bytes per update")
	fs.DurationVar(&n.timeout, "timeout", 60*time.Second, "give up after this long")
	fs.StringVar(&n.trace, "trace", "", "write a JSON-lines trace (docs/trace.md) of this federate to `FILE`")
	fs.IntVar(&n.peers, "peers", 2, "tick: federates (this one included) to wait for before stepping (and, with -transport auto, to probe multicast with)")
	fs.IntVar(&n.steps, "steps", 10, "tick: time steps to advance")
	fs.DurationVar(&n.stepDelay, "step-delay", 0, "tick: pause before each step")
	fs.StringVar(&n.cpuprofile, "cpuprofile", "", "write a CPU profile of this process to `FILE`")
	fs.StringVar(&n.saveDir, "save-dir", "", "directory of federation saves (default: meshrti-saves in the temporary directory); with -fedpro, of the federate's own saved state (the daemon keeps the RTI's)")
	fs.StringVar(&n.fedpro, "fedpro", "", "tick: do not join here; have the serve daemon at `HOST:PORT` host the federate, over the Federate Protocol (docs/reliability.md)")
	fs.DurationVar(&n.fedproWait, "fedpro-wait", 0, "with -fedpro: keep trying to connect to the daemon this long (it may be starting)")
	fs.BoolVar(&n.ownership, "lab-ownership", true, "lab: contend for the ownership of every federate's Blob (false: each updates its own only)")
}

// config builds the federate's configuration: the join flags', the
// bundled demo FOM when no -fom is given.
func (n *nodeFlags) config() (peer.Config, error) {
	cfg, err := n.joinFlags.config("federate-node/" + n.role)
	if err != nil {
		return cfg, err
	}
	cfg.Create = n.create
	cfg.SaveDir = n.saveDir
	if n.role == "tick" || n.role == "lab" {
		// -transport auto probes multicast once the federates that
		// step together have joined.
		cfg.ProbeMembers = n.peers
	}
	if len(n.foms) == 0 {
		doc, err := fomxml.ParseBytes("demo.xml", demoFOM)
		if err != nil {
			return cfg, err
		}
		cfg.FOMModules = []*fomxml.Document{doc}
	}
	return cfg, nil
}

func splitHostPort(s string) (string, int, error) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return "", 0, fmt.Errorf("address %q has no port", s)
	}
	var port int
	if _, err := fmt.Sscanf(s[i+1:], "%d", &port); err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("address %q: bad port", s)
	}
	return s[:i], port, nil
}

func runNode(args []string, stdout, stderr io.Writer) int {
	cmd := newKindRun("node", stdout, stderr)
	fs := cmd.fs
	var nf nodeFlags
	nf.register(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if nf.role != "ping" && nf.role != "pong" && nf.role != "tick" && nf.role != "lab" {
		fmt.Fprintf(stderr, "federate-node node: unknown role %q (want ping, pong, tick or lab)\n", nf.role)
		return 2
	}
	if nf.fedpro != "" {
		return runNodeFedPro(cmd, &nf)
	}
	cfg, err := nf.config()
	if err != nil {
		return cmd.usageError(err.Error())
	}
	if nf.trace != "" {
		tf, err := createTrace(nf.trace)
		if err != nil {
			return cmd.fail(err)
		}
		// Deferred first, so it runs after the federate is closed.
		defer tf.close()
		cfg.Trace = tf.w
	}
	stopProfile, err := startProfile(nf.cpuprofile)
	if err != nil {
		return cmd.fail(err)
	}
	defer stopProfile()
	ctx, cancel := context.WithTimeout(context.Background(), nf.timeout)
	defer cancel()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	fed, err := peer.Join(ctx, cfg)
	if err != nil {
		return cmd.fail(fmt.Errorf("join: %w", err))
	}
	defer fed.Close()
	printJoined(stdout, fed, nf.federation)
	fmt.Fprintf(stdout, "transport %s\n", fed.TransportMode())
	var res any
	switch nf.role {
	case "pong":
		res, err = runPong(ctx, fed)
	case "tick", "lab":
		var extra tick.Extra
		if nf.role == "lab" {
			extra = tick.NewLab(fed, !nf.ownership)
		}
		ctl, stopCtl := tick.Commands()
		defer stopCtl()
		res, err = tick.Run(ctx, fed, tick.Config{Peers: nf.peers, Steps: nf.steps, StepDelay: nf.stepDelay, Out: stdout, Extra: extra, Commands: ctl})
	default:
		res, err = runPing(ctx, fed, nf.count, nf.size)
	}
	if res != nil {
		b, _ := json.Marshal(res)
		fmt.Fprintf(stdout, "result %s\n", b)
	}
	if err != nil {
		return cmd.fail(err)
	}
	if nf.role == "tick" || nf.role == "lab" {
		// Stay a moment before resigning: a peer that has not had its last
		// grant yet would otherwise see this federate's object deleted
		// before its last time-stamped update is delivered.
		drainFor(ctx, fed, time.Second)
	}
	rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer rcancel()
	action := peer.DeleteObjects
	if nf.role == "lab" {
		action = peer.CancelThenDeleteThenDivest // it may hold others' attributes
	}
	if err := fed.ResignFederationExecution(rctx, action); err != nil {
		fmt.Fprintln(stderr, "federate-node node: resign:", err)
	}
	return 0
}

// demoHandles are the handles of the demo FOM that the built-in federates
// use.
type demoHandles struct {
	aircraft          peer.ObjectClassHandle
	blob              peer.AttributeHandle
	ping, pong        peer.InteractionClassHandle
	pingSeq, pingData peer.ParameterHandle
	pongSeq, pongData peer.ParameterHandle
}

func lookupDemo(f *peer.Federate) (demoHandles, error) {
	var h demoHandles
	var errs []error
	get := func(err error) { errs = append(errs, err) }
	var err error
	h.aircraft, err = f.GetObjectClassHandle("Aircraft")
	get(err)
	h.blob, err = f.GetAttributeHandle(h.aircraft, "Blob")
	get(err)
	h.ping, err = f.GetInteractionClassHandle("Ping")
	get(err)
	h.pong, err = f.GetInteractionClassHandle("Pong")
	get(err)
	h.pingSeq, err = f.GetParameterHandle(h.ping, "Seq")
	get(err)
	h.pingData, err = f.GetParameterHandle(h.ping, "Payload")
	get(err)
	h.pongSeq, err = f.GetParameterHandle(h.pong, "Seq")
	get(err)
	h.pongData, err = f.GetParameterHandle(h.pong, "Payload")
	get(err)
	return h, errors.Join(errs...)
}

// Sequence numbers of control pings.
const (
	seqReport = -2 // "how many updates did you reflect?"; the Pong's payload answers
	seqStop   = -1 // "stop now"
)

// i64 encodes v as the demo FOM's Seq parameters are typed:
// HLAinteger64BE.
func i64(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

// opaque encodes b as the demo FOM's Payload parameters and Blob
// attribute are typed: HLAopaqueData, a 4-byte big-endian count and the
// bytes (so that a recording of the built-in federates decodes).
func opaque(b []byte) []byte {
	return append(binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(b)), uint32(len(b))), b...)
}

// opaqueBytes returns the bytes of an HLAopaqueData value; false when it
// is not one.
func opaqueBytes(b []byte) ([]byte, bool) {
	if len(b) < 4 || int(binary.BigEndian.Uint32(b)) != len(b)-4 {
		return nil, false
	}
	return b[4:], true
}

func readI64(b []byte) (int64, bool) {
	if len(b) != 8 {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(b)), true
}

// pongResult is what the pong federate reports.
type pongResult struct {
	Pings    int `json:"pings"`
	Reflects int `json:"reflects"`
}

// declarePingPong looks up the demo FOM's handles and declares fed's
// side of the ping-pong: the pinger (ping) publishes Ping and
// Aircraft.Blob and subscribes to Pong; the ponger the other way round.
func declarePingPong(fed *peer.Federate, ping bool) (demoHandles, error) {
	h, err := lookupDemo(fed)
	if err != nil {
		return h, err
	}
	send, receive, objects := h.ping, h.pong, fed.PublishObjectClassAttributes
	if !ping {
		send, receive, objects = h.pong, h.ping, fed.SubscribeObjectClassAttributes
	}
	return h, errors.Join(fed.PublishInteractionClass(send), fed.SubscribeInteractionClass(receive), objects(h.aircraft, h.blob))
}

// runPong answers every Ping with a Pong of the same Seq and counts the
// Aircraft updates it reflects, until a stop ping or ctx ends.
func runPong(ctx context.Context, fed *peer.Federate) (*pongResult, error) {
	h, err := declarePingPong(fed, false)
	if err != nil {
		return nil, err
	}
	res := &pongResult{}
	for {
		ev, err := fed.Next(ctx)
		if err != nil {
			return res, err
		}
		switch ev := ev.(type) {
		case peer.ReflectAttributeValues:
			res.Reflects++
		case peer.ReceiveInteraction:
			seq, ok := readI64(ev.Values[h.pingSeq])
			if !ok {
				continue
			}
			res.Pings++
			payload := ev.Values[h.pingData] // echoed as it came
			if seq == seqReport {
				payload = opaque(i64(int64(res.Reflects)))
			}
			if err := fed.SendInteraction(h.pong, peer.ParameterValues{h.pongSeq: i64(seq), h.pongData: payload}, nil); err != nil {
				return res, err
			}
			if seq == seqStop {
				return res, nil
			}
		}
	}
}

// pingResult is what the ping federate measures.
type pingResult struct {
	RTTMedianMicros float64 `json:"rttMedianMicros"`
	RTTP90Micros    float64 `json:"rttP90Micros"`
	Pings           int     `json:"pings"`
	Updates         int     `json:"updates"`
	PayloadBytes    int     `json:"payloadBytes"`
	Reflected       int64   `json:"reflected"`
	Seconds         float64 `json:"seconds"`
	UpdatesPerSec   float64 `json:"updatesPerSec"`
}

// pinger is the measuring side of a ping/pong pair: it sends Pings and
// Aircraft updates, and reads Pongs.
type pinger struct {
	fed *peer.Federate
	h   demoHandles
	obj peer.ObjectInstanceHandle
	// receivers is how many pong federates answer each ping (0 means
	// 1): a ping is done when that many distinct ones answered.
	receivers int
}

// newPinger publishes and subscribes what the ping side needs and waits
// for the first answered ping, which proves the pong side subscribed.
func newPinger(ctx context.Context, fed *peer.Federate) (*pinger, error) {
	return newPingerOf(ctx, fed, 1)
}

// newPingerOf is newPinger for receivers pong federates: it waits for
// every one's answer to the first ping.
func newPingerOf(ctx context.Context, fed *peer.Federate, receivers int) (*pinger, error) {
	h, err := declarePingPong(fed, true)
	if err != nil {
		return nil, err
	}
	p := &pinger{fed: fed, h: h, receivers: receivers}
	if _, err := p.ping(ctx, 0, nil, 200*time.Millisecond); err != nil {
		return nil, fmt.Errorf("no answer to the first ping: %w", err)
	}
	return p, nil
}

// ping sends one ping and waits for its pong, resending after retry (the
// other side may not have subscribed yet); it returns the pong's payload.
func (p *pinger) ping(ctx context.Context, seq int64, payload []byte, retry time.Duration) ([]byte, error) {
	all, err := p.pingAll(ctx, seq, payload, retry)
	if err != nil {
		return nil, err
	}
	return all[0], nil
}

// pingAll is ping for every pong federate: it returns once each of
// p.receivers distinct ones answered, with their payloads.
func (p *pinger) pingAll(ctx context.Context, seq int64, payload []byte, retry time.Duration) ([][]byte, error) {
	answers := map[peer.FederateHandle][]byte{}
	want := max(p.receivers, 1)
	params := peer.ParameterValues{p.h.pingSeq: i64(seq), p.h.pingData: opaque(payload)}
	for {
		if err := p.fed.SendInteraction(p.h.ping, params, nil); err != nil {
			return nil, err
		}
		wctx, cancel := context.WithTimeout(ctx, retry)
		for {
			ev, err := p.fed.Next(wctx)
			if err != nil {
				cancel()
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				break // resend
			}
			if ri, ok := ev.(peer.ReceiveInteraction); ok {
				if got, ok := readI64(ri.Values[p.h.pongSeq]); ok && got == seq {
					answers[ri.Producer] = ri.Values[p.h.pongData]
					if len(answers) >= want {
						cancel()
						out := make([][]byte, 0, len(answers))
						for _, a := range answers {
							out = append(out, a)
						}
						return out, nil
					}
				}
			}
		}
	}
}

// roundTrips times n ping-pongs carrying size payload bytes each.
func (p *pinger) roundTrips(ctx context.Context, n, size int) ([]time.Duration, error) {
	rtts := make([]time.Duration, 0, n)
	payload := make([]byte, size)
	for i := int64(1); i <= int64(n); i++ {
		start := time.Now()
		if _, err := p.ping(ctx, i, payload, time.Second); err != nil {
			return rtts, fmt.Errorf("ping %d: %w", i, err)
		}
		rtts = append(rtts, time.Since(start))
	}
	return rtts, nil
}

// updates sends count updates of size bytes (or as many as fit in
// duration, when it is positive), then asks the pong side until it has
// reflected all of them. It returns how many were sent, how many
// reflected, and the time from the first update to the last reflection
// known.
func (p *pinger) updates(ctx context.Context, count, size int, duration time.Duration) (sent, reflected int64, elapsed time.Duration, err error) {
	if p.obj == (peer.ObjectInstanceHandle{}) {
		if p.obj, err = p.fed.RegisterObjectInstance(p.h.aircraft, ""); err != nil {
			return 0, 0, 0, err
		}
	}
	before, err := p.reflected(ctx)
	if err != nil {
		return 0, 0, 0, err
	}
	// An HLAopaqueData of size bytes, the first 4 of which count.
	payload := opaque(make([]byte, max(size, 4))[:size])
	start := time.Now()
	var end time.Time
	if duration > 0 {
		end = start.Add(duration)
	}
	for i := 0; i < count; i++ {
		if size >= 4 {
			binary.BigEndian.PutUint32(payload[4:], uint32(i))
		}
		if err := p.fed.UpdateAttributeValues(p.obj, peer.AttributeValues{p.h.blob: payload}, nil); err != nil {
			return sent, 0, 0, err
		}
		sent++
		if !end.IsZero() && i%64 == 0 && time.Now().After(end) {
			break
		}
	}
	// The report ping travels after the updates on its own group; ask
	// until the count is complete (repairs may still be under way).
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, err := p.reflected(ctx)
		if err != nil {
			return sent, reflected, time.Since(start), err
		}
		reflected = n - before
		if reflected >= sent || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	elapsed = time.Since(start)
	if reflected != sent {
		return sent, reflected, elapsed, fmt.Errorf("pong reflected %d of %d updates", reflected, sent)
	}
	return sent, reflected, elapsed, nil
}

// reflected asks the pong side how many updates it has reflected: the
// fewest any pong federate reflected.
func (p *pinger) reflected(ctx context.Context) (int64, error) {
	all, err := p.pingAll(ctx, seqReport, nil, time.Second)
	if err != nil {
		return 0, fmt.Errorf("asking for the update count: %w", err)
	}
	least := int64(-1)
	for _, b := range all {
		b, _ = opaqueBytes(b)
		if n, _ := readI64(b); least < 0 || n < least {
			least = n
		}
	}
	return least, nil
}

// stop asks the pong side to stop. It answers and exits at once, so its
// answer may not survive a loss (nobody is left to repair it): wait a
// little, then go on either way.
func (p *pinger) stop(ctx context.Context) {
	sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	_, _ = p.ping(sctx, seqStop, nil, time.Second)
}

// runPing waits for a pong federate to answer, measures 200 ping-pong
// round trips, then sends count updates of size bytes and reports how
// many the pong federate reflected, and how fast.
func runPing(ctx context.Context, fed *peer.Federate, count, size int) (*pingResult, error) {
	p, err := newPinger(ctx, fed)
	if err != nil {
		return nil, err
	}
	res := &pingResult{Updates: count, PayloadBytes: size}
	rtts, err := p.roundTrips(ctx, 200, 8)
	if err != nil {
		return res, err
	}
	slices.Sort(rtts)
	res.Pings = len(rtts)
	res.RTTMedianMicros = float64(rtts[len(rtts)/2].Microseconds())
	res.RTTP90Micros = float64(rtts[len(rtts)*9/10].Microseconds())
	_, reflected, elapsed, err := p.updates(ctx, count, size, 0)
	res.Reflected, res.Seconds = reflected, elapsed.Seconds()
	if res.Seconds > 0 {
		res.UpdatesPerSec = float64(res.Reflected) / res.Seconds
	}
	p.stop(ctx)
	return res, err
}

// startCPUProfile writes a CPU profile to path until the returned
// function is called.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// runNodeFedPro is `node -role tick -fedpro ADDR`: the tick federate,
// hosted by the `serve` daemon at ADDR and driven over the Federate
// Protocol (fpFederate), as a federate in another language would be. It
// prints what `node -role tick` prints and takes the same commands. The
// daemon writes the hosted federate's trace (`serve -trace`).
func runNodeFedPro(cmd *kindRun, nf *nodeFlags) int {
	if nf.role != "tick" {
		return cmd.usageError(fmt.Sprintf("-fedpro runs the tick role, not %q", nf.role))
	}
	if nf.name == "" {
		return cmd.usageError("-fedpro needs -name")
	}
	ctx, cancel := context.WithTimeout(context.Background(), nf.timeout)
	defer cancel()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	f, err := tick.OpenFedPro(ctx, tick.FedProConfig{
		Addr: nf.fedpro, Wait: nf.fedproWait, Federation: nf.federation, Name: nf.name,
		Type: "federate-node/" + nf.role, Create: nf.create, SaveDir: nf.saveDir,
	})
	if err != nil {
		return cmd.fail(err)
	}
	defer f.Close()
	fmt.Fprintf(cmd.stdout, "joined %s as %s (handle %d)\n", nf.federation, f.Name(), f.Handle())
	ctl, stopCtl := tick.Commands()
	defer stopCtl()
	res, err := tick.Run(ctx, f, tick.Config{Peers: nf.peers, Steps: nf.steps, StepDelay: nf.stepDelay, Out: cmd.stdout, Commands: ctl})
	if res != nil {
		b, _ := json.Marshal(res)
		fmt.Fprintf(cmd.stdout, "result %s\n", b)
	}
	if err != nil {
		return cmd.fail(err)
	}
	// As node: a moment for the peers' last grants before resigning.
	lctx, lcancel := context.WithTimeout(ctx, time.Second)
	for {
		if _, err := f.Next(lctx); err != nil {
			break
		}
	}
	lcancel()
	if err := f.Resign(); err != nil {
		fmt.Fprintln(cmd.stderr, "federate-node node: resign:", err)
	}
	return 0
}
