package demo

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/fomxml/codec"
	"github.com/meshrti/meshrti/internal/cli"
	"github.com/meshrti/meshrti/peer"
)

// The DDM demo's world, in meters: the X and Y dimensions span
// [0, ddmSpace), and the radar watches the square [ddmRadarLo,
// ddmRadarHi) on both.
const (
	ddmSpace   = 10000
	ddmRadarLo = 4500
	ddmRadarHi = 5500
)

// The driver's waits: for what a step sent to arrive (after a step that
// waited this long in vain it stops waiting, and the checks report the
// misses), for the stragglers after the last step, for a delivery nobody
// expects to show up before the checks, and between rounds of hellos.
const (
	ddmStepWait  = 2 * time.Second
	ddmFinalWait = 5 * time.Second
	ddmSettle    = 300 * time.Millisecond
	ddmHelloWait = 100 * time.Millisecond
)

// ddmChannel is radio i's channel (cycled): two radios share channel 3,
// the others are alone on theirs.
func ddmChannel(i int) uint64 { return [...]uint64{3, 3, 5, 7}[i%4] }

// ddmLine is aircraft i's line of flight (cycled): how far it passes
// from the radar, in meters (the small offsets cross the radar's square,
// the large ones never come near it), and how much of the line before
// and after that point it flies, as fractions of the longest it could
// within the space (so that they pass at different steps).
func ddmLine(i int) (offset, before, after float64) {
	l := [...]struct{ d, a, b float64 }{
		{0, 1, 0.6}, {2600, 1, 1}, {-300, 0.5, 1}, {-3200, 0.8, 1}, {350, 1, 1}, {1800, 1, 0.7},
	}[i%6]
	return l.d, l.a, l.b
}

// ddmFlags configure the DDM demo.
type ddmFlags struct {
	aircraft int
	radios   int
	steps    int
	messages int
	interval time.Duration
	demoCommon
}

// Define defines the flags of "demo ddm".
func (df *ddmFlags) Define(fs *flag.FlagSet) {
	fs.IntVar(&df.aircraft, "aircraft", 6, "number of aircraft federates")
	fs.IntVar(&df.radios, "radios", 4, "number of radio federates (on channels 3, 3, 5, 7, 3, 3, ...)")
	fs.IntVar(&df.steps, "steps", 40, "steps of flight")
	fs.IntVar(&df.messages, "messages", 3, "messages each radio sends")
	fs.DurationVar(&df.interval, "interval", 25*time.Millisecond, "wall time between steps, at least")
	df.demoCommon.define(fs, "print every update and message sent")
}

// Check returns the usage error of bad flags of "demo ddm", or "".
func (df *ddmFlags) Check(nargs int) string {
	if nargs > 0 || df.aircraft < 1 || df.radios < 0 || df.steps < 1 || df.messages < 0 {
		return "need at least one aircraft and one step, no negative counts, no arguments"
	}
	return ""
}

// run runs "federate-node demo ddm": data distribution management
// on this host. A ground radar subscribes to aircraft positions within a
// 1,000 m square around itself; aircraft fly straight across a 10 km
// square, each updating its position with an update region that is the
// square meter it is in; radios on a Channel dimension send messages
// that only listeners on the same channel hear. Each federate is its own
// node (gossip member and multicast sockets on lo, TTL 0), as in the
// plain demo. The demo checks what arrived against what was sent and
// exits 1 when a check fails.
func (df ddmFlags) Run(b *cli.Cmd) int {
	return df.runTraced(b, func() error {
		_, err := demoDDM(df, b.Stdout)
		return err
	})
}

// ddmPoint is a position in meters.
type ddmPoint struct{ X, Y float64 }

// meter returns the square meter p is in: the lower bounds of its update
// region on X and Y.
func (p ddmPoint) meter() (x, y uint64) { return uint64(p.X), uint64(p.Y) }

// ddmInside reports whether an update from p should reach the radar:
// whether p's update region, [x, x+1) × [y, y+1), overlaps the radar's
// square.
func ddmInside(p ddmPoint) bool {
	x, y := p.meter()
	return x >= ddmRadarLo && x < ddmRadarHi && y >= ddmRadarLo && y < ddmRadarHi
}

// ddmPath returns aircraft i's positions at steps 1..steps (index 0 is
// step 1): a straight line at heading 0.35 + πi/n radians along
// ddmLine(i), at least 100 m from every edge of the space.
func ddmPath(i, n, steps int) []ddmPoint {
	theta := 0.35 + math.Pi*float64(i)/float64(n)
	d, before, after := ddmLine(i)
	reach := 4900 - math.Abs(d) // |d| + reach bounds the distance from the centre on each axis
	from, to := -before*reach, after*reach
	ux, uy := math.Cos(theta), math.Sin(theta)
	nx, ny := -uy, ux
	path := make([]ddmPoint, steps)
	for s := range path {
		f := 0.5
		if steps > 1 {
			f = float64(s) / float64(steps-1)
		}
		t := from + (to-from)*f
		path[s] = ddmPoint{X: ddmSpace/2 + d*nx + t*ux, Y: ddmSpace/2 + d*ny + t*uy}
	}
	return path
}

// ddmSchedule returns the steps at which radio i sends its messages.
func ddmSchedule(i, messages, steps int) []int {
	at := make([]int, messages)
	for k := range at {
		at[k] = 1 + (k*steps/messages+i)%steps
	}
	return at
}

// ddmOutcome is what the DDM demo counted and checked.
type ddmOutcome struct {
	Updates, Inside         int    // position updates sent; those inside the radar's square
	Reflected               int    // reflections at the radar
	RadarMissed, RadarExtra int    // updates inside not reflected; reflections beyond those (outside, twice, unplaced, wrong position)
	Messages, Due           int    // radio messages sent (after the hellos); deliveries due to same-channel listeners
	Heard                   int    // radio messages heard
	RadioMissed, RadioExtra int    // due and not heard; heard and not due (own, other channel, twice)
	Spared                  uint64 // Stats().Spared summed over the aircraft
	RadioSpared             uint64 // the same over the radios, for their counted messages
	Filtered                uint64 // the radar's Stats().Filtered
	TimedOut                bool   // the run reached -timeout before it was done
}

// OK reports whether every check passed.
func (o ddmOutcome) OK() bool {
	return !o.TimedOut && o.RadarMissed == 0 && o.RadarExtra == 0 && o.RadioMissed == 0 && o.RadioExtra == 0
}

// errDDMCheck is demoDDM's error when a check failed, or the run timed
// out while flying.
var errDDMCheck = errors.New("check failed")

// demoDDM runs the DDM demo, writes its story and summary to out, and
// returns what it counted; the error is errDDMCheck (wrapped) when a
// check failed.
func demoDDM(df ddmFlags, out io.Writer) (ddmOutcome, error) {
	ctx, cancel := context.WithTimeout(context.Background(), df.timeout)
	defer cancel()
	doc, cd, err := demoCodec("demo_ddm.xml", DDMFOM)
	if err != nil {
		return ddmOutcome{}, err
	}
	d := &ddmDemo{df: df, out: out, cd: cd, doc: doc, log: newDDMLog()}
	defer d.close()
	if err := d.join(ctx); err != nil {
		return d.res, err
	}
	d.startReaders(ctx)
	if err := d.declare(ctx); err != nil {
		return d.res, err
	}
	if err := d.hello(ctx); err != nil {
		return d.res, err
	}
	if err := d.fly(ctx); err != nil {
		return d.res, err
	}
	d.stopReaders()
	d.count()
	if ctx.Err() == nil {
		d.resign(ctx)
	}
	return d.res, d.summary()
}

// ddmDemo is one run of the DDM demo. Its driver (demoDDM's goroutine)
// owns it, but for log, which the readers fill.
type ddmDemo struct {
	df    ddmFlags
	out   io.Writer
	outMu sync.Mutex // serializes writes to out
	cd    *codec.Codec
	doc   *fomxml.Document

	radar          *ddmNode
	planes, radios []*ddmNode
	all            []*ddmNode // every federate joined, the radar first

	aircraft peer.ObjectClassHandle
	position peer.AttributeHandle
	radio    peer.InteractionClassHandle
	text     peer.ParameterHandle
	x, y, ch peer.DimensionHandle

	log     *ddmLog
	readers sync.WaitGroup
	cancel  context.CancelFunc // stops the readers

	// What the driver sent, so what should arrive: per aircraft, the
	// steps whose update lies inside the square; per radio, the texts
	// due to it (and how often).
	expect []map[int]bool
	due    map[string]map[string]int

	joined     time.Duration // the joins took
	flown      time.Duration // from the first step to the last delivery
	stepsFlown int           // steps begun
	resigned   time.Duration // the resigns took
	res        ddmOutcome
}

// ddmNode is one federate of the DDM demo.
type ddmNode struct {
	fed  *peer.Federate
	name string

	// An aircraft's index, instance, update region and path; a radio's
	// index, region (it subscribes and sends with it) and channel.
	index   int
	obj     peer.ObjectInstanceHandle
	region  peer.RegionHandle
	path    []ddmPoint
	channel uint64

	sent        int    // position updates, or radio messages after the hellos
	spared, was uint64 // Stats().Spared of the counted sends; Spared before them

	// What count found: an aircraft's updates due at the radar (those
	// inside) and reflected there, a radio's messages due to it and
	// heard; of those, the due ones that did not arrive, and the
	// arrivals beyond the due ones.
	due, got, missed, extra int
}

// ddmLog is what the federates' readers saw, for the driver to wait on
// and to check. Its fields are guarded by mu; changed gets a signal
// (capacity 1) after each change.
type ddmLog struct {
	mu      sync.Mutex
	changed chan struct{}

	started map[string]bool                   // aircraft told StartRegistrationForObjectClass
	planes  map[peer.ObjectInstanceHandle]int // instance -> aircraft index
	seen    map[int]map[int]int               // aircraft index -> step -> reflections at the radar
	stray   int                               // reflections not of a step of a known aircraft
	misfit  int                               // reflections whose position is not what was sent
	hello   map[string]map[string]bool        // radio -> radios heard saying hello
	heard   map[string]map[string]int         // radio -> message text -> times heard
	errs    []error
}

func newDDMLog() *ddmLog {
	return &ddmLog{
		changed: make(chan struct{}, 1),
		started: make(map[string]bool),
		planes:  make(map[peer.ObjectInstanceHandle]int),
		seen:    make(map[int]map[int]int),
		hello:   make(map[string]map[string]bool),
		heard:   make(map[string]map[string]int),
	}
}

// wait returns true once done (called with mu held) holds, false after
// d or when ctx ends. Only the driver waits.
func (l *ddmLog) wait(ctx context.Context, d time.Duration, done func() bool) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		l.mu.Lock()
		ok := done()
		l.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-l.changed:
		case <-timer.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

func (d *ddmDemo) say(format string, args ...any) {
	d.outMu.Lock()
	defer d.outMu.Unlock()
	fmt.Fprintf(d.out, format+"\n", args...)
}

// join starts the federates, each its own node: the radar creates the
// federation, the aircraft and radios join it through the radar's
// gossip address.
func (d *ddmDemo) join(ctx context.Context) error {
	df := d.df
	nodes := newDemoNodes(df.demoCommon, "demo-ddm", "demo-ddm", d.doc)
	d.say("meshrti demo ddm: federation %q on this host: a radar, %d aircraft and %d radios, %d steps", nodes.federation, df.aircraft, df.radios, df.steps)
	d.say("each federate is its own node: a gossip member on 127.0.0.1 and multicast sockets on lo (TTL 0, port %d)", nodes.port)
	config := nodes.config
	began := time.Now()
	f, err := peer.Join(ctx, config("Radar", nil, true))
	if err != nil {
		return fmt.Errorf("join Radar: %w", err)
	}
	d.radar = &ddmNode{fed: f, name: "Radar"}
	d.all = append(d.all, d.radar)
	seed, ok := f.GossipAddr()
	if !ok {
		return errors.New("radar has no gossip address")
	}
	for i := range df.aircraft {
		d.planes = append(d.planes, &ddmNode{name: fmt.Sprintf("Aircraft-%d", i+1), index: i, path: ddmPath(i, df.aircraft, df.steps)})
	}
	for i := range df.radios {
		d.radios = append(d.radios, &ddmNode{name: fmt.Sprintf("Radio-%d", i+1), index: i, channel: ddmChannel(i)})
	}
	// The others join at once, each through the radar's gossip address.
	others := slices.Concat(d.planes, d.radios)
	errs := make([]error, len(others))
	var wg sync.WaitGroup
	for i, n := range others {
		wg.Go(func() {
			if n.fed, errs[i] = peer.Join(ctx, config(n.name, []string{seed}, false)); errs[i] != nil {
				errs[i] = fmt.Errorf("join %s: %w", n.name, errs[i])
			}
		})
	}
	wg.Wait()
	for _, n := range others {
		if n.fed != nil {
			d.all = append(d.all, n)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	// A federate's subscriptions, with their regions, travel in its
	// replicated state, which a federate that does not know the writer
	// yet drops for good: nobody declares anything before every
	// federate knows every other.
	known := func() bool {
		for _, a := range d.all {
			for _, b := range d.all {
				if _, err := a.fed.GetFederateHandle(b.name); err != nil {
					return false
				}
			}
		}
		return true
	}
	for !known() {
		if ctx.Err() != nil {
			return fmt.Errorf("the federates do not all know each other: %w", context.Cause(ctx))
		}
		sleepUntil(ctx, time.Now().Add(10*time.Millisecond))
	}
	d.joined = time.Since(began)
	d.say("joined %d federates, each known to all, in %v", len(d.all), d.joined.Round(time.Millisecond))

	var herrs [7]error
	d.aircraft, herrs[0] = f.GetObjectClassHandle("Aircraft")
	d.position, herrs[1] = f.GetAttributeHandle(d.aircraft, "Position")
	d.radio, herrs[2] = f.GetInteractionClassHandle("Radio")
	d.text, herrs[3] = f.GetParameterHandle(d.radio, "Text")
	d.x, herrs[4] = f.GetDimensionHandle("X")
	d.y, herrs[5] = f.GetDimensionHandle("Y")
	d.ch, herrs[6] = f.GetDimensionHandle("Channel")
	return errors.Join(herrs[:]...)
}

// startReaders starts one goroutine per federate that takes its events
// from Next and records them in the log, until stopReaders.
func (d *ddmDemo) startReaders(ctx context.Context) {
	ctx, d.cancel = context.WithCancel(ctx)
	l := d.log
	for _, n := range d.all {
		d.readers.Go(func() {
			for {
				ev, err := n.fed.Next(ctx)
				if err != nil {
					if ctx.Err() == nil && !errors.Is(err, peer.ErrClosed) {
						l.mu.Lock()
						l.errs = append(l.errs, fmt.Errorf("%s: %w", n.name, err))
						l.mu.Unlock()
					}
					return
				}
				l.mu.Lock()
				d.record(n, ev)
				l.mu.Unlock()
				select {
				case l.changed <- struct{}{}:
				default:
				}
			}
		})
	}
}

// stopReaders stops the readers and waits for them.
func (d *ddmDemo) stopReaders() {
	if d.cancel != nil {
		d.cancel()
		d.readers.Wait()
		d.cancel = nil
	}
}

// close stops the readers and closes every federate (those that
// resigned already, too).
func (d *ddmDemo) close() {
	d.stopReaders()
	for _, n := range d.all {
		n.fed.Close()
	}
}

// record notes event ev of federate n in the log, whose lock the
// caller holds.
func (d *ddmDemo) record(n *ddmNode, ev peer.Event) {
	l := d.log
	switch ev := ev.(type) {
	case peer.StartRegistrationForObjectClass:
		l.started[n.name] = true
	case peer.DiscoverObjectInstance:
		if d.df.verbose {
			d.say("         %s discovers %s", n.name, ev.Name)
		}
	case peer.ReflectAttributeValues:
		i, known := l.planes[ev.Object]
		step, err := strconv.Atoi(string(ev.Tag))
		if !known || err != nil || step < 1 || step > d.df.steps || n != d.radar {
			l.stray++
			d.say("         %s reflects an update it cannot place: instance %v, tag %q", n.name, ev.Object, ev.Tag)
			return
		}
		if l.seen[i] == nil {
			l.seen[i] = make(map[int]int)
		}
		l.seen[i][step]++
		want := d.planes[i].path[step-1]
		v, err := d.cd.Decode("Position2D", ev.Values[d.position])
		p, _ := v.(map[string]any)
		x, _ := p["X"].(float64)
		y, _ := p["Y"].(float64)
		if err != nil || x != want.X || y != want.Y {
			l.misfit++
		}
		mark := ""
		if !ddmInside(want) {
			mark = "  <- outside the square"
		}
		d.say("step %2d  radar sees %-11s at (%4.0f, %4.0f)%s", step, d.planes[i].name, x, y, mark)
	case peer.ReceiveInteraction:
		if n.channel == 0 || ev.Class != d.radio {
			return
		}
		v, err := d.cd.Decode("HLAunicodeString", ev.Values[d.text])
		if err != nil {
			l.errs = append(l.errs, fmt.Errorf("%s: a message that does not decode: %w", n.name, err))
			return
		}
		s, _ := v.(string)
		if string(ev.Tag) == "hello" {
			if l.hello[n.name] == nil {
				l.hello[n.name] = make(map[string]bool)
			}
			l.hello[n.name][s] = true
			return
		}
		if l.heard[n.name] == nil {
			l.heard[n.name] = make(map[string]int)
		}
		l.heard[n.name][s]++
		d.say("step %2s  %s (channel %d) hears %q", ev.Tag, n.name, n.channel, s)
	}
}

// declare subscribes and publishes with regions: the radar subscribes to
// Aircraft.Position within its square; each radio subscribes to and
// publishes Radio on its channel; each aircraft publishes
// Aircraft.Position and, once it knows the radar's subscription,
// registers its instance with its update region at its first position.
func (d *ddmDemo) declare(ctx context.Context) error {
	r := d.radar.fed
	square, err := r.CreateRegion(d.x, d.y)
	if err != nil {
		return err
	}
	if err := errors.Join(
		r.SetRangeBounds(square, d.x, peer.RangeBounds{Lower: ddmRadarLo, Upper: ddmRadarHi}),
		r.SetRangeBounds(square, d.y, peer.RangeBounds{Lower: ddmRadarLo, Upper: ddmRadarHi}),
		r.CommitRegionModifications(square),
		r.SubscribeObjectClassAttributesWithRegions(d.aircraft, peer.AttributeRegions{
			Attributes: []peer.AttributeHandle{d.position}, Regions: []peer.RegionHandle{square},
		}),
	); err != nil {
		return fmt.Errorf("radar: %w", err)
	}
	d.say("the radar subscribes to Aircraft.Position in X [%d, %d) × Y [%d, %d)", ddmRadarLo, ddmRadarHi, ddmRadarLo, ddmRadarHi)
	var chs []string
	for _, n := range d.radios {
		var err error
		if n.region, err = n.fed.CreateRegion(d.ch); err != nil {
			return err
		}
		if err := errors.Join(
			n.fed.SetRangeBounds(n.region, d.ch, peer.RangeBounds{Lower: n.channel, Upper: n.channel + 1}),
			n.fed.CommitRegionModifications(n.region),
			n.fed.SubscribeInteractionClassWithRegions(d.radio, n.region),
			n.fed.PublishInteractionClass(d.radio),
		); err != nil {
			return fmt.Errorf("%s: %w", n.name, err)
		}
		chs = append(chs, fmt.Sprintf("%s on %d", n.name, n.channel))
	}
	if len(chs) > 0 {
		d.say("the radios listen and talk on their channel: %s", strings.Join(chs, ", "))
	}
	// The class relevance advisory comes when a publisher has processed
	// the radar's subscription, and with it the radar's region: an
	// aircraft that flew before would spare its first updates for want
	// of knowing the radar.
	for _, p := range d.planes {
		var err error
		if p.region, err = p.fed.CreateRegion(d.x, d.y); err != nil {
			return err
		}
		if err := errors.Join(
			p.fed.EnableObjectClassRelevanceAdvisorySwitch(),
			p.fed.PublishObjectClassAttributes(d.aircraft, d.position),
			d.move(p, p.path[0]),
		); err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
	}
	began := time.Now()
	l := d.log
	if !l.wait(ctx, d.df.timeout, func() bool { return len(l.started) == len(d.planes) }) {
		l.mu.Lock()
		n := len(l.started)
		l.mu.Unlock()
		return fmt.Errorf("%d of %d aircraft told to start registering: %w", n, len(d.planes), context.Cause(ctx))
	}
	d.say("every aircraft knows the radar's region (StartRegistrationForObjectClass after %v)", time.Since(began).Round(time.Millisecond))
	for _, p := range d.planes {
		var err error
		p.obj, err = p.fed.RegisterObjectInstanceWithRegions(d.aircraft, []peer.AttributeRegions{{
			Attributes: []peer.AttributeHandle{d.position}, Regions: []peer.RegionHandle{p.region},
		}}, "")
		if err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		l.mu.Lock()
		l.planes[p.obj] = p.index
		l.mu.Unlock()
	}
	return nil
}

// move moves aircraft p's update region to the square meter of pos.
func (d *ddmDemo) move(p *ddmNode, pos ddmPoint) error {
	x, y := pos.meter()
	return errors.Join(
		p.fed.SetRangeBounds(p.region, d.x, peer.RangeBounds{Lower: x, Upper: x + 1}),
		p.fed.SetRangeBounds(p.region, d.y, peer.RangeBounds{Lower: y, Upper: y + 1}),
		p.fed.CommitRegionModifications(p.region),
	)
}

// listeners returns the other radios on radio r's channel.
func (d *ddmDemo) listeners(r *ddmNode) []*ddmNode {
	var ls []*ddmNode
	for _, o := range d.radios {
		if o != r && o.channel == r.channel {
			ls = append(ls, o)
		}
	}
	return ls
}

// hello makes sure each radio knows its listeners' regions before it
// counts its messages: no advisory says when a sender learned a
// particular subscriber's region (the interaction relevance advisory
// comes with the first subscriber of any channel), so each radio says
// hello until every listener on its channel heard it. Hellos are not
// counted.
func (d *ddmDemo) hello(ctx context.Context) error {
	l := d.log
	heard := func(r *ddmNode) bool { // with l.mu held
		for _, o := range d.listeners(r) {
			if !l.hello[o.name][r.name] {
				return false
			}
		}
		return true
	}
	began, hellos, rounds := time.Now(), 0, 0
	for {
		var pending []*ddmNode
		l.mu.Lock()
		for _, r := range d.radios {
			if !heard(r) {
				pending = append(pending, r)
			}
		}
		l.mu.Unlock()
		if len(pending) == 0 {
			break
		}
		if ctx.Err() != nil {
			var who []string
			for _, r := range pending {
				st := r.fed.Stats()
				who = append(who, fmt.Sprintf("%s (sent %d, spared %d)", r.name, st.Sent, st.Spared))
				for _, o := range d.listeners(r) {
					st := o.fed.Stats()
					who = append(who, fmt.Sprintf("listener %s (delivered %d, filtered %d)", o.name, st.Delivered, st.Filtered))
				}
			}
			return fmt.Errorf("radios not heard on their channel after %d hellos: %s: %w", hellos, strings.Join(who, ", "), context.Cause(ctx))
		}
		rounds++
		for _, r := range pending {
			v, err := d.cd.Encode("HLAunicodeString", r.name)
			if err != nil {
				return err
			}
			if err := r.fed.SendInteractionWithRegions(d.radio, peer.ParameterValues{d.text: v}, []peer.RegionHandle{r.region}, []byte("hello")); err != nil {
				return fmt.Errorf("%s: %w", r.name, err)
			}
			hellos++
			if d.df.verbose {
				d.say("         %s says hello on channel %d", r.name, r.channel)
			}
		}
		l.wait(ctx, ddmHelloWait, func() bool {
			for _, r := range pending {
				if !heard(r) {
					return false
				}
			}
			return true
		})
	}
	if len(d.radios) > 0 {
		d.say("every radio was heard by the others on its channel (%d hellos in %d rounds, %v)", hellos, rounds, time.Since(began).Round(time.Millisecond))
	}
	for _, r := range d.radios {
		r.was = r.fed.Stats().Spared
	}
	return nil
}

// fly runs the steps: each aircraft moves its update region and updates
// its position, the radios send their messages as scheduled, and the
// driver waits until what it sent that is due somewhere arrived. At the
// end it waits a little longer for what should not come.
func (d *ddmDemo) fly(ctx context.Context) error {
	df, l, res := d.df, d.log, &d.res
	d.expect = make([]map[int]bool, len(d.planes))
	for i := range d.expect {
		d.expect[i] = make(map[int]bool)
	}
	d.due = make(map[string]map[string]int)
	for _, r := range d.radios {
		d.due[r.name] = make(map[string]int)
	}
	caughtUp := func() bool { // with l.mu held
		for i, steps := range d.expect {
			for s := range steps {
				if l.seen[i][s] == 0 {
					return false
				}
			}
		}
		for name, texts := range d.due {
			for t, k := range texts {
				if l.heard[name][t] < k {
					return false
				}
			}
		}
		return true
	}
	d.say("")
	began := time.Now()
	lagging := false
	for step := 1; step <= df.steps && ctx.Err() == nil; step++ {
		d.stepsFlown = step
		next := time.Now().Add(df.interval)
		for _, p := range d.planes {
			pos := p.path[step-1]
			if err := d.move(p, pos); err != nil {
				return fmt.Errorf("%s: %w", p.name, err)
			}
			v, err := d.cd.Encode("Position2D", map[string]any{"X": pos.X, "Y": pos.Y})
			if err != nil {
				return err
			}
			if err := p.fed.UpdateAttributeValues(p.obj, peer.AttributeValues{d.position: v}, []byte(strconv.Itoa(step))); err != nil {
				return fmt.Errorf("%s: %w", p.name, err)
			}
			p.sent++
			res.Updates++
			where := "outside"
			if ddmInside(pos) {
				d.expect[p.index][step] = true
				res.Inside++
				where = "inside"
			}
			if df.verbose {
				d.say("step %2d  %s at (%4.0f, %4.0f), %s", step, p.name, pos.X, pos.Y, where)
			}
		}
		for _, r := range d.radios {
			for k, at := range ddmSchedule(r.index, df.messages, df.steps) {
				if at != step {
					continue
				}
				s := fmt.Sprintf("%s on channel %d: message %d of %d", r.name, r.channel, k+1, df.messages)
				v, err := d.cd.Encode("HLAunicodeString", s)
				if err != nil {
					return err
				}
				if err := r.fed.SendInteractionWithRegions(d.radio, peer.ParameterValues{d.text: v}, []peer.RegionHandle{r.region}, []byte(strconv.Itoa(step))); err != nil {
					return fmt.Errorf("%s: %w", r.name, err)
				}
				r.sent++
				res.Messages++
				for _, o := range d.listeners(r) {
					d.due[o.name][s]++
					res.Due++
				}
				if df.verbose {
					d.say("step %2d  %s says %q", step, r.name, s)
				}
			}
		}
		if !lagging && !l.wait(ctx, ddmStepWait, caughtUp) && ctx.Err() == nil {
			lagging = true
			d.say("step %2d  still waiting for deliveries after %v: flying on", step, ddmStepWait)
		}
		sleepUntil(ctx, next)
	}
	l.wait(ctx, ddmFinalWait, caughtUp)
	d.flown = time.Since(began)
	// Whatever is not due and still coming would come about now.
	sleepUntil(ctx, time.Now().Add(ddmSettle))
	res.TimedOut = ctx.Err() != nil
	return nil
}

// count compares what arrived with what was due, and takes the
// federates' DDM counters. The readers have stopped.
func (d *ddmDemo) count() {
	l, res := d.log, &d.res
	for _, p := range d.planes {
		p.spared = p.fed.Stats().Spared
		p.due = len(d.expect[p.index])
		for s := range d.expect[p.index] {
			if l.seen[p.index][s] == 0 {
				p.missed++
			}
		}
		for s, k := range l.seen[p.index] {
			p.got += k
			if d.expect[p.index][s] {
				k-- // the one due
			}
			p.extra += k
		}
		res.Spared += p.spared
		res.Reflected += p.got
		res.RadarMissed += p.missed
		res.RadarExtra += p.extra
	}
	res.RadarExtra += l.stray + l.misfit
	for _, r := range d.radios {
		r.spared = r.fed.Stats().Spared - r.was
		for t, k := range d.due[r.name] {
			r.due += k
			r.missed += max(0, k-l.heard[r.name][t])
		}
		for t, k := range l.heard[r.name] {
			r.got += k
			r.extra += max(0, k-d.due[r.name][t])
		}
		res.RadioSpared += r.spared
		res.Heard += r.got
		res.RadioMissed += r.missed
		res.RadioExtra += r.extra
	}
	res.Filtered = d.radar.fed.Stats().Filtered
}

// resign resigns every federate, the radar last. One at a time: the
// control plane's register runs on some of the members, and those
// leaving together can leave the others without a quorum to resign
// with.
func (d *ddmDemo) resign(ctx context.Context) {
	began := time.Now()
	for _, n := range slices.Backward(d.all) {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if err := n.fed.ResignFederationExecution(rctx, peer.DeleteObjects); err != nil {
			d.say("%s: resign: %v", n.name, err)
		}
		cancel()
	}
	d.resigned = time.Since(began)
}

// summary prints the tables, the savings and the checks, and returns
// errDDMCheck (wrapped) when a check failed, or a reader's error.
func (d *ddmDemo) summary() error {
	l, res := d.log, d.res
	d.say("")
	d.say("summary (joining %v, %d steps %v, resigning %v):", d.joined.Round(time.Millisecond), d.stepsFlown, d.flown.Round(time.Millisecond), d.resigned.Round(time.Millisecond))
	d.say("  %-11s %8s %7s %10s %7s %6s %7s", "aircraft", "updates", "inside", "reflected", "missed", "extra", "spared")
	for _, p := range d.planes {
		d.say("  %-11s %8d %7d %10d %7d %6d %7d", p.name, p.sent, p.due, p.got, p.missed, p.extra, p.spared)
	}
	if len(d.radios) > 0 {
		d.say("  %-11s %8s %7s %10s %7s %6s %7s %7s", "radio", "channel", "sent", "heard", "due", "missed", "extra", "spared")
	}
	for _, r := range d.radios {
		d.say("  %-11s %8d %7d %10d %7d %6d %7d %7d", r.name, r.channel, r.sent, r.got, r.due, r.missed, r.extra, r.spared)
	}
	d.say("sender side: the aircraft did not send %d of their %d position updates (Stats().Spared; %d were outside the radar's square)",
		res.Spared, res.Updates, res.Updates-res.Inside)
	if len(d.radios) > 0 {
		d.say("             the radios did not send %d of their %d messages (Stats().Spared: no other radio listens on the channel)", res.RadioSpared, res.Messages)
	}
	d.say("receiver side: the radar dropped %d by its region test (Stats().Filtered: announcements and values whose regions miss its square)", res.Filtered)
	if l.stray+l.misfit > 0 {
		d.say("the radar reflected %d updates it could not place and %d with a position other than the one sent", l.stray, l.misfit)
	}
	var failed []string
	check := func(ok bool, what string) {
		verdict := "ok"
		switch {
		case !ok:
			verdict = "FAILED"
			failed = append(failed, what)
		case res.TimedOut:
			verdict = "so far"
		}
		d.say("check: %s: %s", what, verdict)
	}
	check(res.RadarMissed == 0 && res.RadarExtra == 0,
		fmt.Sprintf("the radar reflected exactly the %d updates inside its square (missed %d, extra %d)", res.Inside, res.RadarMissed, res.RadarExtra))
	if len(d.radios) > 0 {
		check(res.RadioMissed == 0 && res.RadioExtra == 0,
			fmt.Sprintf("each radio heard exactly the messages sent on its channel by the others, %d in all (missed %d, extra %d)", res.Due, res.RadioMissed, res.RadioExtra))
	}
	if res.TimedOut {
		failed = append(failed, fmt.Sprintf("timed out after %v, at step %d of %d", d.df.timeout, d.stepsFlown, d.df.steps))
		d.say("%s", failed[len(failed)-1])
	}
	if err := errors.Join(l.errs...); err != nil {
		return err
	}
	if len(failed) > 0 {
		return fmt.Errorf("%w: %s", errDDMCheck, strings.Join(failed, "; "))
	}
	return nil
}

// sleepUntil returns at t or when ctx ends.
func sleepUntil(ctx context.Context, t time.Time) {
	d := time.Until(t)
	if d <= 0 {
		return
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
	}
}
