package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/internal/bench"
	"github.com/meshrti/meshrti/internal/cli"
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
	poll       time.Duration // see cli.PollFor
	stepHold   time.Duration // see cli.StepHoldFor
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
	fs.DurationVar(&j.poll, "poll", 0, "Linux: keep reading an empty socket this long before parking (lower latency for up to a core; default $"+cli.PollEnv+" or 0, off)")
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
	fs.DurationVar(d, "step-hold", 0, "how long what a federate sends while it handles one event may wait to leave in one send (docs/dataplane.md, The step send); 0: $"+cli.StepHoldEnv+", else 50µs; negative: off")
}

// registerDataPlane registers -transport and -advertise (node, monitor,
// serve).
func registerDataPlane(fs *flag.FlagSet, mode, advertise *string) {
	fs.StringVar(mode, "transport", "multicast", "data plane: multicast (one LAN), unicast (routed subnets, clouds, Kubernetes) or auto (the federation's; probes multicast when it has none); all members agree")
	fs.StringVar(advertise, "advertise", "", "unicast: the `HOST:PORT` other members send to, when not the bound one (NAT, containers); port 0: the bound port; a port also fixes the bound one")
}

// config builds the configuration of a federate of type typ joining as
// the flags say; with no -fom it brings no modules of its own.
func (j *joinFlags) config(typ string) (peer.Config, error) {
	cfg := peer.Config{
		Federation: j.federation, FederateName: j.name, FederateType: typ,
		FOMFiles: j.foms, MaxFrame: j.frame,
		Multicast: transport.UDPConfig{Port: j.mcastPort, Interface: j.iface, TTL: j.ttl},
	}
	cfg.Multicast.PollFor = cli.PollFor(j.poll)
	cfg.StepHold = cli.StepHoldFor(j.stepHold)
	err := cli.JoinNet(&cfg, j.gossip, j.seeds, j.key, j.transport, j.advertise)
	cfg.Gossip.LostGrace = j.lostGrace
	cfg.Gossip.Profile = j.profile
	cfg.Logger = j.logs.logger(typ)
	return cfg, err
}

// printJoined prints the gossip line and "joined FEDERATION as NAME
// (handle H)".
func printJoined(w io.Writer, fed *peer.Federate, federation string) {
	cli.PrintGossip(w, fed)
	fmt.Fprintf(w, "joined %s as %s (handle %d)\n", federation, fed.Name(), fed.Handle())
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

func runNode(args []string, stdout, stderr io.Writer) int {
	cmd := cli.NewCmd("node", stdout, stderr)
	fs := cmd.FS
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
		return cmd.UsageError(err.Error())
	}
	if nf.trace != "" {
		tf, err := createTrace(nf.trace)
		if err != nil {
			return cmd.Fail(err)
		}
		// Deferred first, so it runs after the federate is closed.
		defer tf.close()
		cfg.Trace = tf.w
	}
	stopProfile, err := cli.StartProfile(nf.cpuprofile)
	if err != nil {
		return cmd.Fail(err)
	}
	defer stopProfile()
	ctx, cancel := context.WithTimeout(context.Background(), nf.timeout)
	defer cancel()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	fed, err := peer.Join(ctx, cfg)
	if err != nil {
		return cmd.Fail(fmt.Errorf("join: %w", err))
	}
	defer fed.Close()
	printJoined(stdout, fed, nf.federation)
	fmt.Fprintf(stdout, "transport %s\n", fed.TransportMode())
	var res any
	switch nf.role {
	case "pong":
		res, err = bench.RunPong(ctx, fed)
	case "tick", "lab":
		var extra tick.Extra
		if nf.role == "lab" {
			extra = tick.NewLab(fed, !nf.ownership)
		}
		ctl, stopCtl := tick.Commands()
		defer stopCtl()
		stopWatch := tick.WatchStalls(fed, stderr, 10*time.Second)
		res, err = tick.Run(ctx, fed, tick.Config{Peers: nf.peers, Steps: nf.steps, StepDelay: nf.stepDelay, Out: stdout, Extra: extra, Commands: ctl})
		stopWatch()
	default:
		res, err = bench.RunPing(ctx, fed, nf.count, nf.size)
	}
	if res != nil {
		b, _ := json.Marshal(res)
		fmt.Fprintf(stdout, "result %s\n", b)
	}
	if err != nil {
		return cmd.Fail(err)
	}
	if nf.role == "tick" || nf.role == "lab" {
		// Stay a moment before resigning: a peer that has not had its last
		// grant yet would otherwise see this federate's object deleted
		// before its last time-stamped update is delivered.
		cli.DrainFor(ctx, fed, time.Second)
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

// runNodeFedPro is `node -role tick -fedpro ADDR`: the tick federate,
// hosted by the `serve` daemon at ADDR and driven over the Federate
// Protocol (fpFederate), as a federate in another language would be. It
// prints what `node -role tick` prints and takes the same commands. The
// daemon writes the hosted federate's trace (`serve -trace`).
func runNodeFedPro(cmd *cli.Cmd, nf *nodeFlags) int {
	if nf.role != "tick" {
		return cmd.UsageError(fmt.Sprintf("-fedpro runs the tick role, not %q", nf.role))
	}
	if nf.name == "" {
		return cmd.UsageError("-fedpro needs -name")
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
		return cmd.Fail(err)
	}
	defer f.Close()
	fmt.Fprintf(cmd.Stdout, "joined %s as %s (handle %d)\n", nf.federation, f.Name(), f.Handle())
	ctl, stopCtl := tick.Commands()
	defer stopCtl()
	res, err := tick.Run(ctx, f, tick.Config{Peers: nf.peers, Steps: nf.steps, StepDelay: nf.stepDelay, Out: cmd.Stdout, Commands: ctl})
	if res != nil {
		b, _ := json.Marshal(res)
		fmt.Fprintf(cmd.Stdout, "result %s\n", b)
	}
	if err != nil {
		return cmd.Fail(err)
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
		fmt.Fprintln(cmd.Stderr, "federate-node node: resign:", err)
	}
	return 0
}
