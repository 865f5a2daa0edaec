package demo

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/fomxml/codec"
	"github.com/meshrti/meshrti/internal/cli"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/transport"
)

// demoFlags configure the demo.
type demoFlags struct {
	aircraft int
	steps    int
	demoCommon
}

// demoCommon holds the flags of the demos whose federates are each their
// own node: -mcast-port, -timeout, -v and -trace.
type demoCommon struct {
	mcastPort int
	timeout   time.Duration
	verbose   bool
	trace     string    // -trace FILE
	traceW    io.Writer // where federates write the trace, when trace is set
}

// Define defines the flags of c; verbose is the text of -v.
func (c *demoCommon) define(fs *flag.FlagSet, verbose string) {
	fs.IntVar(&c.mcastPort, "mcast-port", 0, cli.PortHelp)
	fs.DurationVar(&c.timeout, "timeout", 60*time.Second, "give up after this long")
	fs.BoolVar(&c.verbose, "v", false, verbose)
	fs.StringVar(&c.trace, "trace", "", "write a JSON-lines trace (docs/trace.md) of every federate to `FILE`")
}

// runTraced runs demo with the trace file (-trace) open in c.traceW,
// and prints its error.
func (c *demoCommon) runTraced(b *cli.Cmd, demo func() error) int {
	err := withTrace(c.trace, func(w io.Writer) error {
		c.traceW = w
		return demo()
	})
	if err != nil {
		return b.Fail(err)
	}
	return 0
}

// demoNodes is how a demo's federates join, each its own node (a gossip
// member on 127.0.0.1 and multicast sockets on lo): the federation, the
// multicast port, the FOM and the trace they share.
type demoNodes struct {
	federation   string
	port         int
	federateType string
	doc          *fomxml.Document
	trace        io.Writer
}

// newDemoNodes names a federation of federateType prefix-PID-N and takes
// its port from -mcast-port, or derives it from the process id.
func newDemoNodes(c demoCommon, prefix, federateType string, doc *fomxml.Document) demoNodes {
	port := c.mcastPort
	if port == 0 {
		port = 41000 + os.Getpid()%8000
	}
	return demoNodes{federation: fmt.Sprintf("%s-%d-%d", prefix, os.Getpid(), time.Now().UnixNano()%1e6),
		port: port, federateType: federateType, doc: doc, trace: c.traceW}
}

// config is the configuration of federate name, that finds the others
// through seeds or (create) creates the federation.
func (n demoNodes) config(name string, seeds []string, create bool) peer.Config {
	return peer.Config{
		Federation: n.federation, FederateName: name, FederateType: n.federateType,
		FOMModules: []*fomxml.Document{n.doc}, Create: create,
		Gossip:    peer.GossipConfig{Seeds: seeds},
		Multicast: transport.UDPConfig{Port: n.port},
		Trace:     n.trace,
	}
}

// demoCodec parses a demo's FOM module (named designator) and returns it
// with the codec of its data types.
func demoCodec(designator string, fom []byte) (*fomxml.Document, *codec.Codec, error) {
	doc, err := fomxml.ParseBytes(designator, fom)
	if err != nil {
		return nil, nil, err
	}
	fdd, err := fomxml.Merge(doc)
	if err != nil {
		return nil, nil, err
	}
	cd, err := codec.New(fdd)
	return doc, cd, err
}

// Kinds is the table of "federate-node demo KIND"; the plain demo
// is the row named "".
func Kinds() []cli.Command {
	return []cli.Command{
		{Name: "", Help: []cli.HelpLine{{Synopsis: "demo", Text: "run the demo: a radar and aircraft federates on this host,\n" +
			"a synchronization point, a save and a restore"}}, Run: cli.KindMain[demoFlags]("demo", nil)},
		{Name: "ddm", Help: []cli.HelpLine{{Synopsis: "demo ddm [flags]", Text: "run the DDM demo: a radar subscribed to a square, aircraft flying\n" +
			"through it, radios on channels; checks that each got exactly its\n" +
			"share (federate-node demo ddm -h lists the flags)"}}, Run: cli.KindMain[ddmFlags]("demo ddm", nil)},
		{Name: "multirate", Help: []cli.HelpLine{{Synopsis: "demo multirate [-steps N -loss P -json]", Text: "a producer and a consumer whose jobs run at 1x, 2x and 5x the main\n" +
			"cycle (peer/multirate), each reading one coherent snapshot a cycle;\n" +
			"checks every read against the updates sent (docs/multirate.md)"}}, Run: cli.KindMain[multirateFlags]("demo multirate", nil)},
	}
}

// Main is "federate-node demo": it runs the demo KIND named by the first argument, or the plain
// demo when there is none (or the first argument is a flag).
func Main(args []string, stdout, stderr io.Writer) int {
	return cli.RunSub(Kinds(), args, stdout, stderr, func(args []string) int {
		fmt.Fprintf(stderr, "federate-node demo: unknown demo %q (want %s, or none for the plain demo)\n", args[0], strings.Join(cli.Names(Kinds()), ", "))
		return 2
	})
}

// Define defines the flags of "demo".
func (df *demoFlags) Define(fs *flag.FlagSet) {
	fs.IntVar(&df.aircraft, "aircraft", 3, "number of aircraft federates")
	fs.IntVar(&df.steps, "steps", 5, "time steps to run")
	df.demoCommon.define(fs, "print every event")
}

// Check returns the usage error of bad flags of "demo", or "".
func (df *demoFlags) Check(nargs int) string {
	if df.aircraft < 1 || df.steps < 1 {
		return "need at least one aircraft and one step"
	}
	return ""
}

// run starts a small federation on this host: a radar and some
// aircraft, each federate in its own node (its own gossip member and
// multicast sockets on lo, TTL 0). The aircraft are time-regulating and
// publish time-stamped positions; the radar is time-constrained,
// reflects them in time-stamp order and answers with contact reports.
// Time advances in steps; the demo ends by itself with a summary, then
// shows a synchronization point, a federation save and a restore
// (demo_saverestore.go).
func (df demoFlags) Run(b *cli.Cmd) int {
	return df.runTraced(b, func() error { return demo(df, b.Stdout) })
}

// demoFederate is one federate of the demo with what it counted.
type demoFederate struct {
	fed                           *peer.Federate
	name                          string
	sent, reflected, interactions int
	grants                        int
	reached                       float64
}

func demo(df demoFlags, out io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), df.timeout)
	defer cancel()
	doc, cd, err := demoCodec("demo.xml", FOM)
	if err != nil {
		return err
	}
	nodes := newDemoNodes(df.demoCommon, "demo", "demo", doc)
	federation, port := nodes.federation, nodes.port
	var mu sync.Mutex
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, format+"\n", args...)
	}
	say("meshrti demo: federation %q on this host, %d aircraft and a radar, %d time steps", federation, df.aircraft, df.steps)
	say("each federate is its own node: a gossip member on 127.0.0.1 and multicast sockets on lo (TTL 0, port %d)", port)
	// Federation saves go to a directory of their own, removed at the
	// end (after the federates are closed: defers run last first).
	saveDir, err := os.MkdirTemp("", "meshrti-demo-saves-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(saveDir)

	join := func(name string, seeds []string, create bool) (*demoFederate, error) {
		cfg := nodes.config(name, seeds, create)
		cfg.SaveDir = saveDir
		f, err := peer.Join(ctx, cfg)
		if err != nil {
			return nil, fmt.Errorf("join %s: %w", name, err)
		}
		return &demoFederate{fed: f, name: name}, nil
	}
	radar, err := join("Radar", nil, true)
	if err != nil {
		return err
	}
	feds := []*demoFederate{radar}
	defer func() {
		for _, f := range feds {
			f.fed.Close()
		}
	}()
	seed, ok := radar.fed.GossipAddr()
	if !ok {
		return errors.New("radar has no gossip address")
	}
	var planes []*demoFederate
	for i := 1; i <= df.aircraft; i++ {
		p, err := join(fmt.Sprintf("Aircraft-%d", i), []string{seed}, false)
		if err != nil {
			return err
		}
		feds = append(feds, p)
		planes = append(planes, p)
	}
	say("joined: %s", names(feds))

	fed := radar.fed
	aircraft, _ := fed.GetObjectClassHandle("Aircraft")
	position, _ := fed.GetAttributeHandle(aircraft, "Position")
	callsign, _ := fed.GetAttributeHandle(aircraft, "Callsign")
	contact, _ := fed.GetInteractionClassHandle("RadarContact")
	target, _ := fed.GetParameterHandle(contact, "Target")
	rng, _ := fed.GetParameterHandle(contact, "Range")

	// Declarations and time switches.
	if err := errors.Join(
		radar.fed.SubscribeObjectClassAttributes(aircraft, position, callsign),
		radar.fed.PublishInteractionClass(contact),
		radar.fed.EnableTimeConstrained(),
	); err != nil {
		return err
	}
	if _, err := next[peer.TimeConstrainedEnabled](ctx, radar.fed); err != nil {
		return err
	}
	objs := make([]peer.ObjectInstanceHandle, len(planes))
	for i, p := range planes {
		if err := errors.Join(
			p.fed.PublishObjectClassAttributes(aircraft, position, callsign),
			p.fed.SubscribeInteractionClass(contact),
			p.fed.EnableTimeRegulation(peer.Float64Time(1)),
		); err != nil {
			return err
		}
		if _, err := next[peer.TimeRegulationEnabled](ctx, p.fed); err != nil {
			return err
		}
		if objs[i], err = p.fed.RegisterObjectInstance(aircraft, ""); err != nil {
			return err
		}
		cs, _ := cd.Encode("HLAunicodeString", p.name)
		if err := p.fed.UpdateAttributeValues(objs[i], peer.AttributeValues{callsign: cs}, nil); err != nil {
			return err
		}
	}
	say("aircraft are time-regulating (lookahead 1); the radar is time-constrained")

	// The radar's view: object instance -> callsign.
	known := map[peer.ObjectInstanceHandle]string{}
	for step := 1; step <= df.steps; step++ {
		ts := float64(step)
		for i, p := range planes {
			b, err := planePosition(cd, i, len(planes), ts)
			if err != nil {
				return err
			}
			if err := p.fed.UpdateAttributeValuesWithTime(objs[i], peer.AttributeValues{position: b}, nil, peer.Float64Time(ts)); err != nil {
				return err
			}
			p.sent++
			if err := p.fed.TimeAdvanceRequest(peer.Float64Time(ts)); err != nil {
				return err
			}
		}
		if err := radar.fed.TimeAdvanceRequest(peer.Float64Time(ts)); err != nil {
			return err
		}
		// The radar reflects everything up to ts, in time-stamp order,
		// then gets its grant.
		for {
			ev, err := radar.fed.Next(ctx)
			if err != nil {
				return fmt.Errorf("radar at step %d: %w", step, err)
			}
			switch ev := ev.(type) {
			case peer.DiscoverObjectInstance:
				known[ev.Object] = ev.Name
			case peer.ReflectAttributeValues:
				radar.reflected++
				if v, ok := ev.Values[callsign]; ok {
					if s, err := cd.Decode("HLAunicodeString", v); err == nil {
						known[ev.Object] = s.(string)
					}
				}
				v, ok := ev.Values[position]
				if !ok {
					continue
				}
				p, err := cd.Decode("Position3D", v)
				if err != nil {
					return err
				}
				loc := p.(map[string]any)["Location"].([]any)
				x, y, z := loc[0].(float64), loc[1].(float64), loc[2].(float64)
				say("t=%-4v radar sees %-11s at (%7.1f, %7.1f, %6.1f) [%s order]", ev.Time, known[ev.Object], x, y, z, ev.ReceivedOrder)
				tgt, _ := cd.Encode("HLAunicodeString", known[ev.Object])
				r, _ := cd.Encode("Meters", math.Sqrt(x*x+y*y+z*z))
				if err := radar.fed.SendInteraction(contact, peer.ParameterValues{target: tgt, rng: r}, nil); err != nil {
					return err
				}
				radar.sent++
			case peer.TimeAdvanceGrant:
				radar.grants++
				radar.reached = ev.Time.Float()
				say("t=%-4v radar granted", ev.Time)
				goto granted
			}
		}
	granted:
		// Each aircraft gets its grant (and the radar's contact reports).
		for _, p := range planes {
			for {
				ev, err := p.fed.Next(ctx)
				if err != nil {
					return fmt.Errorf("%s at step %d: %w", p.name, step, err)
				}
				if ri, ok := ev.(peer.ReceiveInteraction); ok {
					p.interactions++
					if df.verbose {
						t, _ := cd.Decode("HLAunicodeString", ri.Values[target])
						say("       %s hears a contact report on %v", p.name, t)
					}
				}
				if g, ok := ev.(peer.TimeAdvanceGrant); ok {
					p.grants++
					p.reached = g.Time.Float()
					break
				}
			}
		}
	}
	// Let the last contact reports arrive, then resign everyone.
	for _, p := range planes {
		dctx, dcancel := context.WithTimeout(ctx, 500*time.Millisecond)
		for p.interactions < radar.sent && dctx.Err() == nil {
			ev, err := p.fed.Next(dctx)
			if err != nil {
				break
			}
			if _, ok := ev.(peer.ReceiveInteraction); ok {
				p.interactions++
			}
		}
		dcancel()
	}
	say("")
	say("summary:")
	say("  %-11s %8s %10s %13s %7s %8s", "federate", "sent", "reflected", "interactions", "grants", "time")
	for _, f := range append([]*demoFederate{radar}, planes...) {
		say("  %-11s %8d %10d %13d %7d %8v", f.name, f.sent, f.reflected, f.interactions, f.grants, f.reached)
	}
	if want := df.steps * len(planes); radar.reflected < want {
		err = fmt.Errorf("radar reflected %d of %d position updates", radar.reflected, want)
	} else {
		say("every position update reached the radar in time-stamp order before its grant")
		// Then a synchronization point, a save and a restore.
		err = demoSaveRestore(ctx, srDemo{
			say: say, cd: cd, radar: radar, planes: planes, objs: objs,
			position: position, now: float64(df.steps),
		})
		if err == nil {
			// Then the MOM, read by a federate that joins now.
			var mon *demoFederate
			if mon, err = join("Monitor", []string{seed}, false); err == nil {
				feds = append(feds, mon)
				err = demoMOM(ctx, say, mon.fed, len(feds))
				rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
				mon.fed.ResignFederationExecution(rctx, peer.DeleteObjects)
				rcancel()
			}
		}
	}
	for _, f := range append(planes, radar) {
		rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
		if err := f.fed.ResignFederationExecution(rctx, peer.DeleteObjects); err != nil {
			say("%s: resign: %v", f.name, err)
		}
		rcancel()
	}
	return err
}

// planePosition encodes the position of aircraft i of n at time ts: they
// fly circles, climbing.
func planePosition(cd *codec.Codec, i, n int, ts float64) ([]byte, error) {
	angle := float64(i)*2*math.Pi/float64(n) + ts/4
	pos := map[string]any{"Band": "X", "Location": []any{1000 * math.Cos(angle), 1000 * math.Sin(angle), 3000 + 100*ts}}
	return cd.Encode("Position3D", pos)
}

func names(fs []*demoFederate) string {
	var n []string
	for _, f := range fs {
		n = append(n, f.name)
	}
	sort.Strings(n)
	return strings.Join(n, ", ")
}

// next reads events until one of type T.
func next[T peer.Event](ctx context.Context, f *peer.Federate) (T, error) {
	for {
		ev, err := f.Next(ctx)
		if err != nil {
			var zero T
			return zero, err
		}
		if t, ok := ev.(T); ok {
			return t, nil
		}
	}
}

// withTrace runs a demo with the trace (-trace) written to path: run
// gets the writer its federates trace to, nil when path is empty, and
// must have closed every federate when it returns, so that the trace is
// complete when the file is closed. The error is the first of creating
// the file, run and closing the file.
func withTrace(path string, run func(w io.Writer) error) error {
	if path == "" {
		return run(nil)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = run(peer.NewTraceWriter(f))
	if cerr := f.Close(); cerr != nil && err == nil {
		err = cerr
	}
	return err
}
