package bench

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/meshrti/meshrti/internal/cli"
	"github.com/meshrti/meshrti/peer"
)

// "federate-node bench lifecycle" measures object instances registered
// and discovered per second between two processes on this host, over
// loopback multicast:
//
//   - The registrar (a child process, this same binary with -role
//     registrar) publishes Aircraft.Blob and, on the start signal,
//     registers -count instances as fast as it can, each followed by one
//     update of Blob, so that the subscriber discovers and reflects each.
//   - The subscriber (this process) subscribed before the start signal;
//     it counts DiscoverObjectInstance and ReflectAttributeValues until
//     it has all of them, and checks that it got each exactly once.
//   - With -late (the default), a second subscriber then joins and
//     subscribes after every instance exists: it learns of them from the
//     registrar's answer to its discovery query. How long that takes is
//     the late joiner's figure.
//   - The floor, in the same run: as many datagram pairs of the same
//     sizes (a registration and an update per instance, as the data
//     plane bundles them: see lifecycleSizes) sent by one process to
//     another over loopback multicast, one system call each with the raw
//     I/O of the other floors (bench_rawio_linux.go), the receiver
//     counting them.
//
// Before the start signal the registrar registers one warm-up instance,
// which the subscriber discovers from the answer to its discovery query:
// that proves the class's group carries data both ways. The registrar
// then deletes it, so that the late subscriber finds exactly -count
// instances.
//
// The processes talk over the child's standard input and output: the
// child prints "gossip ADDR", "ready JSON" and "registered JSON"; it
// reads "clear", "go" and "stop".

// lifecycleFlags are the flags of "federate-node bench lifecycle".
type lifecycleFlags struct {
	count   int
	payload int
	frame   int
	reserve bool
	late    bool
	benchCommon

	// Set by the parent for its child processes.
	role       string // "registrar" or "sink"
	federation string
}

// LifecycleResult is the line "bench lifecycle -json" prints.
type LifecycleResult struct {
	Bench     string `json:"bench"`
	Instances int    `json:"instances"`
	// ReservedNames: the instances have names the registrar reserved
	// (-reserve) before the measured run, not RTI-chosen ones.
	ReservedNames bool `json:"reserved_names"`
	Payload       int  `json:"payload"`
	Frame         int  `json:"frame"`

	// RegisteredPerS is measured at the registrar: instances over the
	// time from its first registration to the return of its last update.
	RegisteredPerS  float64 `json:"registered_per_s"`
	RegisterSeconds float64 `json:"register_seconds"`
	// ReserveSeconds is how long reserving the names took (-reserve),
	// before the measured run.
	ReserveSeconds float64 `json:"reserve_seconds,omitempty"`
	// DiscoveredPerS is measured at the subscriber: instances over the
	// time from the start signal to its last discovery. ReflectSeconds
	// runs to its last reflection.
	DiscoveredPerS  float64 `json:"discovered_per_s"`
	DiscoverSeconds float64 `json:"discover_seconds"`
	Reflected       int     `json:"reflected"`
	ReflectSeconds  float64 `json:"reflect_seconds"`

	// The late subscriber: LateSeconds runs from its subscription (after
	// its join, LateJoinSeconds) to its last discovery.
	LateDiscoveredPerS float64 `json:"late_discovered_per_s"`
	LateSeconds        float64 `json:"late_seconds"`
	LateJoinSeconds    float64 `json:"late_join_seconds"`

	// Every subscriber must discover and reflect each instance exactly
	// once: these count the events beyond that (both subscribers), and
	// events about instances that are not the registrar's. Error says
	// what went wrong when one is not zero.
	DuplicateDiscoveries int `json:"duplicate_discoveries"`
	DuplicateReflections int `json:"duplicate_reflections"`
	Strays               int `json:"strays"`

	// The floor: RawPerS is datagram pairs (one of RegisterBytes, one of
	// UpdateBytes) received per second, the receiver's count over the
	// time from its first datagram to its last; Ratio is
	// DiscoveredPerS / RawPerS. LateRatio is LateDiscoveredPerS over
	// the floor's datagrams per second, since a late joiner gets one
	// message per instance.
	RawPerS          float64 `json:"raw_per_s"`
	RawDatagramsPerS float64 `json:"raw_datagrams_per_s"`
	RawSent          int     `json:"raw_sent"`
	RawReceived      int     `json:"raw_received"`
	RegisterBytes    int     `json:"register_bytes"`
	UpdateBytes      int     `json:"update_bytes"`
	Ratio            float64 `json:"ratio"`
	LateRatio        float64 `json:"late_ratio"`

	// What the registrar's data plane did during its loop of
	// registrations and updates: the frames it handed to the transport
	// (the last bundles go after the loop) and the times back-pressure
	// held an update.
	Frames  uint64 `json:"frames"`
	Blocked uint64 `json:"blocked"`
	benchTail
}

// lifecycleReady is the registrar's "ready" line; lifecycleRegistered its
// "registered" line.
type lifecycleReady struct {
	Handle         peer.FederateHandle `json:"handle"`
	ReserveSeconds float64             `json:"reserve_seconds"`
}

type lifecycleRegistered struct {
	Instances int     `json:"instances"`
	Seconds   float64 `json:"seconds"`
	Frames    uint64  `json:"frames"`
	Blocked   uint64  `json:"blocked"`
}

// The federate names of the benchmark.
const (
	lifecycleRegistrarName = "lc-registrar"
	lifecycleSubName       = "lc-sub"
	lifecycleLateName      = "lc-late"
)

// lifecycleName is the reserved name of instance i (-reserve).
func lifecycleName(i int) string { return fmt.Sprintf("lc-%d", i) }

// Define defines the flags of "bench lifecycle".
func (bf *lifecycleFlags) Define(fs *flag.FlagSet) {
	fs.IntVar(&bf.count, "count", 10000, "object instances to register")
	fs.IntVar(&bf.payload, "payload", 32, "bytes of the update that follows each registration")
	fs.IntVar(&bf.frame, "frame", 16000, cli.FrameHelp)
	fs.BoolVar(&bf.reserve, "reserve", false, "register with reserved names (reserved before the measured run) instead of RTI-chosen ones")
	fs.BoolVar(&bf.late, "late", true, "also measure a subscriber that joins after every instance exists")
	bf.benchCommon.define(fs, 3*time.Minute, "UDP multicast port; the floor uses this port + 2 (default: derived from the process id)",
		"write CPU profiles of both processes to `PREFIX`.sub and PREFIX.registrar")
	fs.StringVar(&bf.role, "role", "", "internal: run the registrar or the floor's sink for the parent process")
	fs.StringVar(&bf.federation, "federation", "", "internal (registrar): federation name")
}

// Check returns the usage error of bad flags of "bench lifecycle", or "".
func (bf *lifecycleFlags) Check(nargs int) string {
	if bf.count < 1 || bf.payload < 0 || bf.frame < 0 || nargs > 0 {
		return "need -count >= 1, -payload >= 0, -frame >= 0 and no arguments"
	}
	return ""
}

// Run runs "bench lifecycle".
func (bf lifecycleFlags) Run(b *cli.Cmd) int {
	defaultPort(&bf.port, 0)
	roles := map[string]func(context.Context) error{
		"registrar": func(ctx context.Context) error { return lifecycleRegistrar(ctx, bf, os.Stdin, b.Stdout) },
		"sink":      func(context.Context) error { return lifecycleSink(bf, b.Stdout) },
	}
	measure := func(ctx context.Context) (*LifecycleResult, error) { return benchLifecycle(ctx, bf, b.Stderr) }
	return runParentChild(b, &bf.benchCommon, bf.role, roles, ".sub", measure, func(w io.Writer, res *LifecycleResult) {
		names := "RTI-chosen"
		if res.ReservedNames {
			names = fmt.Sprintf("reserved (in %.2f s before)", res.ReserveSeconds)
		}
		fmt.Fprintf(w, "lifecycle, %d instances with %s names, each followed by a %d-byte update, two processes over loopback multicast:\n"+
			"  registered %.0f/s (%.3f s); discovered %.0f/s (%.3f s from the start signal), %d reflected in %.3f s\n",
			res.Instances, names, res.Payload, res.RegisteredPerS, res.RegisterSeconds, res.DiscoveredPerS, res.DiscoverSeconds,
			res.Reflected, res.ReflectSeconds)
		if bf.late {
			fmt.Fprintf(w, "  late subscriber: joined in %.3f s, knew all %d instances %.3f s after subscribing: %.0f/s\n",
				res.LateJoinSeconds, res.Instances, res.LateSeconds, res.LateDiscoveredPerS)
		}
		fmt.Fprintf(w, "  raw UDP multicast between two processes, %d- and %d-byte datagrams: %d of %d: %.0f pairs/s: ratio %.2f (late %.2f)\n"+
			"  duplicates: %d discoveries, %d reflections; GOMAXPROCS %d per process\n",
			res.RegisterBytes, res.UpdateBytes, res.RawReceived, res.RawSent, res.RawPerS, res.Ratio, res.LateRatio,
			res.DuplicateDiscoveries, res.DuplicateReflections, res.GOMAXPROCS)
	})
}

// benchLifecycle runs the measurements: the subscriber here, the
// registrar in a child process, then the floor.
func benchLifecycle(ctx context.Context, bf lifecycleFlags, stderr io.Writer) (*LifecycleResult, error) {
	res := &LifecycleResult{Bench: "lifecycle", Instances: bf.count, ReservedNames: bf.reserve, Payload: bf.payload, Frame: bf.frame}
	bf.federation = fmt.Sprintf("benchlc-%d", os.Getpid())
	reg, err := startRegistrar(ctx, bf, stderr)
	if err != nil {
		return nil, err
	}
	defer reg.stop()
	nf := benchNode(bf.federation, lifecycleSubName, bf.port, bf.frame)
	sub, err := reg.join(ctx, &nf)
	if err != nil {
		return nil, err
	}
	defer sub.fed.Close()
	var ready lifecycleReady
	if err := reg.expectJSON(ctx, "ready ", 2*time.Minute, &ready); err != nil {
		return nil, err
	}
	res.ReserveSeconds = ready.ReserveSeconds

	// The warm-up instance: discovered from the answer to the discovery
	// query, then deleted.
	warm := newLifecycleCount(ready.Handle)
	if err := sub.subscribe(); err != nil {
		return nil, err
	}
	if err := warm.until(ctx, sub.fed, "the warm-up instance", func() bool { return warm.discovered == 1 }); err != nil {
		return nil, err
	}
	if err := reg.send("clear"); err != nil {
		return nil, err
	}
	if err := warm.until(ctx, sub.fed, "the warm-up instance's removal", func() bool { return warm.removed == 1 }); err != nil {
		return nil, err
	}

	// The measured run.
	c := newLifecycleCount(ready.Handle)
	start := time.Now()
	if err := reg.send("go"); err != nil {
		return nil, err
	}
	n := bf.count
	if err := c.until(ctx, sub.fed, fmt.Sprintf("%d discoveries and reflections", n), func() bool {
		return c.discovered >= n && c.reflected >= n
	}); err != nil {
		return nil, err
	}
	c.linger(ctx, sub.fed)
	res.DiscoverSeconds = c.lastDiscovery.Sub(start).Seconds()
	res.ReflectSeconds = c.lastReflection.Sub(start).Seconds()
	res.DiscoveredPerS = float64(c.discovered) / res.DiscoverSeconds
	res.Reflected = c.reflected
	var regd lifecycleRegistered
	if err := reg.expectJSON(ctx, "registered ", time.Minute, &regd); err != nil {
		return nil, err
	}
	res.RegisterSeconds = regd.Seconds
	res.RegisteredPerS = float64(regd.Instances) / regd.Seconds
	res.Frames, res.Blocked = regd.Frames, regd.Blocked
	var errs []error
	errs = append(errs, c.check(n, true, bf.reserve))
	if err := sub.resign(); err != nil {
		return nil, err
	}

	// The late subscriber.
	if bf.late {
		nf.name = lifecycleLateName
		joined := time.Now()
		late, err := joinLifecycle(ctx, nf)
		if err != nil {
			return nil, fmt.Errorf("late subscriber: %w", err)
		}
		defer late.fed.Close()
		lc := newLifecycleCount(ready.Handle)
		start := time.Now()
		res.LateJoinSeconds = start.Sub(joined).Seconds()
		if err := late.subscribe(); err != nil {
			return nil, err
		}
		if err := lc.until(ctx, late.fed, fmt.Sprintf("%d discoveries (late)", n), func() bool { return lc.discovered >= n }); err != nil {
			return nil, err
		}
		lc.linger(ctx, late.fed)
		res.LateSeconds = lc.lastDiscovery.Sub(start).Seconds()
		res.LateDiscoveredPerS = float64(lc.discovered) / res.LateSeconds
		errs = append(errs, lc.check(n, false, bf.reserve))
		c.add(lc)
		if err := late.resign(); err != nil {
			return nil, err
		}
	}
	res.DuplicateDiscoveries, res.DuplicateReflections, res.Strays = c.dupDiscoveries, c.dupReflections, c.strays
	if err := errors.Join(errs...); err != nil {
		res.Error = err.Error()
	}
	if err := reg.send("stop"); err != nil {
		return nil, err
	}
	if err := reg.wait(30 * time.Second); err != nil {
		return nil, err
	}

	// The floor.
	res.RegisterBytes, res.UpdateBytes, err = lifecycleSizes(ctx, bf, ready.Handle, c.nameList())
	if err != nil {
		return nil, fmt.Errorf("sizing the messages: %w", err)
	}
	sent, got, elapsed, err := lifecycleRaw(ctx, n, res.RegisterBytes, res.UpdateBytes, bf.port+2, stderr)
	if err != nil {
		return nil, fmt.Errorf("raw UDP: %w", err)
	}
	res.RawSent, res.RawReceived = sent, got
	res.RawDatagramsPerS = float64(got) / elapsed.Seconds()
	res.RawPerS = res.RawDatagramsPerS / 2
	res.Ratio = res.DiscoveredPerS / res.RawPerS
	if bf.late {
		res.LateRatio = res.LateDiscoveredPerS / res.RawDatagramsPerS
	}
	return res, nil
}

// lifecycleSub is a subscribing federate of the benchmark.
type lifecycleSub struct {
	fed   *peer.Federate
	class peer.ObjectClassHandle
	attr  peer.AttributeHandle
}

func joinLifecycle(ctx context.Context, nf member) (*lifecycleSub, error) {
	cfg, err := nf.config()
	if err != nil {
		return nil, err
	}
	fed, err := peer.Join(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("join %s: %w", nf.name, err)
	}
	s := &lifecycleSub{fed: fed}
	if s.class, s.attr, err = lifecycleHandles(fed); err != nil {
		fed.Close()
		return nil, err
	}
	return s, nil
}

func (s *lifecycleSub) subscribe() error {
	return s.fed.SubscribeObjectClassAttributes(s.class, s.attr)
}

// resign resigns and closes the federate.
func (s *lifecycleSub) resign() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := s.fed.ResignFederationExecution(ctx, peer.DeleteObjects)
	s.fed.Close()
	if err != nil {
		return fmt.Errorf("%s: resign: %w", s.fed.Name(), err)
	}
	return nil
}

// lifecycleHandles returns the demo FOM's Aircraft class and its Blob
// attribute.
func lifecycleHandles(fed *peer.Federate) (peer.ObjectClassHandle, peer.AttributeHandle, error) {
	return classAttr(fed, "Aircraft", "Blob")
}

// classAttr returns the handles of object class class and of its
// attribute attr.
func classAttr(fed *peer.Federate, class, attr string) (peer.ObjectClassHandle, peer.AttributeHandle, error) {
	c, err := fed.GetObjectClassHandle(class)
	if err != nil {
		return 0, 0, err
	}
	a, err := fed.GetAttributeHandle(c, attr)
	return c, a, err
}

// lifecycleCount counts what one subscriber heard of the registrar's
// instances. It is used by one goroutine.
type lifecycleCount struct {
	registrar peer.FederateHandle
	// seen holds, per instance, whether it was discovered and how many
	// reflections came; names counts the names discovered.
	seen  map[peer.ObjectInstanceHandle]*lifecycleSeen
	names map[string]int

	discovered, reflected, removed int
	dupDiscoveries, dupReflections int
	strays                         int // events about instances not the registrar's, or not discovered
	lastDiscovery, lastReflection  time.Time
}

type lifecycleSeen struct {
	name        string
	discoveries int
	reflections int
}

func newLifecycleCount(registrar peer.FederateHandle) *lifecycleCount {
	return &lifecycleCount{registrar: registrar, seen: map[peer.ObjectInstanceHandle]*lifecycleSeen{}, names: map[string]int{}}
}

// note counts one event; it returns an error for an event that ends the
// run (the registrar or the connection lost, messages lost for good).
func (c *lifecycleCount) note(ev peer.Event) error {
	switch ev := ev.(type) {
	case peer.DiscoverObjectInstance:
		if ev.Object.Federate != c.registrar || ev.Producer != c.registrar {
			c.strays++
			return nil
		}
		s := c.seen[ev.Object]
		if s == nil {
			s = &lifecycleSeen{name: ev.Name}
			c.seen[ev.Object] = s
		}
		s.discoveries++
		if s.discoveries > 1 {
			c.dupDiscoveries++
			return nil
		}
		c.names[ev.Name]++
		c.discovered++
		c.lastDiscovery = time.Now()
	case peer.ReflectAttributeValues:
		s := c.seen[ev.Object]
		if s == nil || s.discoveries == 0 {
			c.strays++
			return nil
		}
		s.reflections++
		if s.reflections > 1 {
			c.dupReflections++
			return nil
		}
		c.reflected++
		c.lastReflection = time.Now()
	case peer.RemoveObjectInstance:
		c.removed++
	case peer.MessagesLost:
		return fmt.Errorf("%d messages from federate %d lost for good", ev.Messages, ev.Producer)
	case peer.FederateLost:
		if ev.Federate == c.registrar {
			return fmt.Errorf("the registrar (%s) was lost", ev.Name)
		}
	case peer.FederateResigned:
		if ev.Federate == c.registrar {
			return fmt.Errorf("the registrar (%s) resigned", ev.Name)
		}
	case peer.ConnectionLost:
		return fmt.Errorf("connection lost: %s", ev.Reason)
	}
	return nil
}

// until reads fed's events until done says so.
func (c *lifecycleCount) until(ctx context.Context, fed *peer.Federate, what string, done func() bool) error {
	for !done() {
		ev, err := fed.Next(ctx)
		if err != nil {
			return fmt.Errorf("%s: waiting for %s (%d discovered, %d reflected so far): %w",
				fed.Name(), what, c.discovered, c.reflected, err)
		}
		if err := c.note(ev); err != nil {
			return fmt.Errorf("%s: waiting for %s: %w", fed.Name(), what, err)
		}
	}
	return nil
}

// linger reads fed's events for a little longer, after the run, so that
// a duplicate still under way is counted.
func (c *lifecycleCount) linger(ctx context.Context, fed *peer.Federate) {
	lctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	for {
		ev, err := fed.Next(lctx)
		if err != nil {
			return
		}
		c.note(ev)
	}
}

// check reports what is wrong with the counts of a run of n instances:
// duplicates, strays, and (reflect) reflections or (reserved) names that
// are not one per instance.
func (c *lifecycleCount) check(n int, reflect, reserved bool) error {
	var errs []error
	if c.discovered != n || (reflect && c.reflected != n) {
		errs = append(errs, fmt.Errorf("%d instances discovered and %d reflected, want %d", c.discovered, c.reflected, n))
	}
	if c.dupDiscoveries > 0 || c.dupReflections > 0 || c.strays > 0 {
		errs = append(errs, fmt.Errorf("%d duplicate discoveries, %d duplicate reflections, %d events about other instances",
			c.dupDiscoveries, c.dupReflections, c.strays))
	}
	if len(c.names) != c.discovered {
		errs = append(errs, fmt.Errorf("%d names for %d instances", len(c.names), c.discovered))
	}
	if reserved {
		for i := range n {
			if c.names[lifecycleName(i)] != 1 {
				errs = append(errs, fmt.Errorf("reserved name %q discovered %d times", lifecycleName(i), c.names[lifecycleName(i)]))
				break
			}
		}
	}
	return errors.Join(errs...)
}

// nameList returns the names discovered.
func (c *lifecycleCount) nameList() []string {
	names := make([]string, 0, len(c.names))
	for name := range c.names {
		names = append(names, name)
	}
	return names
}

// add adds o's anomalies to c's.
func (c *lifecycleCount) add(o *lifecycleCount) {
	c.dupDiscoveries += o.dupDiscoveries
	c.dupReflections += o.dupReflections
	c.strays += o.strays
}

// lifecycleChild is the registrar's process, seen from the parent.
type lifecycleChild struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string // closed at the end of its output
}

func startRegistrar(ctx context.Context, bf lifecycleFlags, stderr io.Writer) (*lifecycleChild, error) {
	return startRoleChild(ctx, "lifecycle", "registrar", bf.federation, bf.benchCommon, stderr,
		"-count", fmt.Sprint(bf.count), "-payload", fmt.Sprint(bf.payload), "-frame", fmt.Sprint(bf.frame),
		fmt.Sprintf("-reserve=%v", bf.reserve))
}

// startBenchChild starts this binary with args as a bench's child
// process, its standard output read line by line into lines.
func startBenchChild(ctx context.Context, self string, args []string, stderr io.Writer) (*lifecycleChild, error) {
	cmd := exec.CommandContext(ctx, self, args...)
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &lifecycleChild{cmd: cmd, in: in, lines: make(chan string, 16)}
	go func() {
		defer close(c.lines)
		for sc := bufio.NewScanner(out); sc.Scan(); {
			c.lines <- sc.Text()
		}
	}()
	return c, nil
}

// expect returns the rest of the child's next line that starts with
// prefix, skipping others.
func (c *lifecycleChild) expect(ctx context.Context, prefix string, timeout time.Duration) (string, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				return "", fmt.Errorf("the registrar ended before printing %q", strings.TrimSpace(prefix))
			}
			if rest, ok := strings.CutPrefix(l, prefix); ok {
				return strings.TrimSpace(rest), nil
			}
		case <-deadline.C:
			return "", fmt.Errorf("the registrar printed no %q line within %v", strings.TrimSpace(prefix), timeout)
		case <-ctx.Done():
			return "", fmt.Errorf("waiting for the registrar's %q line: %w", strings.TrimSpace(prefix), ctx.Err())
		}
	}
}

// expectJSON decodes into v the JSON after prefix in the child's next
// line that starts with prefix.
func (c *lifecycleChild) expectJSON(ctx context.Context, prefix string, timeout time.Duration, v any) error {
	line, err := c.expect(ctx, prefix, timeout)
	if err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(line), v); err != nil {
		return fmt.Errorf("the registrar's %s line %q: %w", strings.TrimSpace(prefix), line, err)
	}
	return nil
}

// send writes a command line to the child.
func (c *lifecycleChild) send(cmd string) error {
	if _, err := io.WriteString(c.in, cmd+"\n"); err != nil {
		return fmt.Errorf("telling the registrar %q: %w", cmd, err)
	}
	return nil
}

// wait waits up to timeout for the child to end on its own (after
// "stop"), then ends it; it returns the child's error.
func (c *lifecycleChild) wait(timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		select {
		case _, ok := <-c.lines:
			if ok {
				continue
			}
		case <-deadline.C:
			c.cmd.Process.Kill()
			for range c.lines {
			}
		}
		break
	}
	if err := c.cmd.Wait(); err != nil {
		return fmt.Errorf("the registrar: %w", err)
	}
	return nil
}

// stop ends the child if it still runs, and waits for it.
func (c *lifecycleChild) stop() {
	if c.cmd.ProcessState != nil {
		return
	}
	c.in.Close()
	c.cmd.Process.Kill()
	for range c.lines {
	}
	c.cmd.Wait()
}

// benchNode returns the member of a bench federate of this
// process: name in federation, gossip on 127.0.0.1, multicast on port,
// data frames of frame bytes.
func benchNode(federation, name string, port, frame int) member {
	return member{federation: federation, name: name, mcastPort: port, frame: frame, role: "bench"}
}

// join waits for the child's "gossip ADDR" line and joins the federate
// of nf to the child's federation through that address (set in nf).
func (c *lifecycleChild) join(ctx context.Context, nf *member) (*lifecycleSub, error) {
	seed, err := c.expect(ctx, "gossip ", 30*time.Second)
	if err != nil {
		return nil, err
	}
	nf.seeds = seed
	return joinLifecycle(ctx, *nf)
}

// joinAsRegistrar starts a bench's registrar process: its CPU profile
// (PREFIX.registrar), its federate name creating federation, and its
// "gossip ADDR" line for the parent. stop ends the profile and closes
// the federate.
func joinAsRegistrar(ctx context.Context, c benchCommon, federation, name string, frame int, stdout io.Writer) (sub *lifecycleSub, stop func(), err error) {
	stopProfile, err := cli.StartProfile(cli.ProfilePath(c.cpuprofile, ".registrar"))
	if err != nil {
		return nil, nil, err
	}
	nf := benchNode(federation, name, c.port, frame)
	nf.create = true
	if sub, err = joinLifecycle(ctx, nf); err != nil {
		stopProfile()
		return nil, nil, err
	}
	cli.PrintGossip(stdout, sub.fed)
	return sub, func() { sub.fed.Close(); stopProfile() }, nil
}

// lifecycleRegistrar is the registrar's process: it creates the
// federation, publishes Aircraft.Blob, reserves the names (-reserve),
// registers the warm-up instance, then follows the parent's commands
// read from in: "clear" deletes the warm-up instance, "go" runs the
// measured registrations, "stop" (or the end of in) resigns.
func lifecycleRegistrar(ctx context.Context, bf lifecycleFlags, in io.Reader, stdout io.Writer) error {
	sub, stop, err := joinAsRegistrar(ctx, bf.benchCommon, bf.federation, lifecycleRegistrarName, bf.frame, stdout)
	if err != nil {
		return err
	}
	defer stop()
	fed, class, attr := sub.fed, sub.class, sub.attr
	if err := fed.PublishObjectClassAttributes(class, attr); err != nil {
		return err
	}
	names := make([]string, bf.count)
	ready := lifecycleReady{Handle: fed.Handle()}
	if bf.reserve {
		start := time.Now()
		if err := reserveNames(ctx, fed, bf.count, names); err != nil {
			return err
		}
		ready.ReserveSeconds = time.Since(start).Seconds()
	}
	warm, err := fed.RegisterObjectInstance(class, "")
	if err != nil {
		return err
	}
	// From here on nothing this federate waits for comes as an event:
	// drain them (a federate with MaxQueuedEvents waiting stops reading
	// the data plane), keeping the first that ends the run.
	dctx, stopDrain := context.WithCancel(ctx)
	var drained sync.WaitGroup
	var lost error
	drained.Add(1)
	go func() {
		defer drained.Done()
		for {
			ev, err := fed.Next(dctx)
			if err != nil {
				return
			}
			if cl, ok := ev.(peer.ConnectionLost); ok && lost == nil {
				lost = fmt.Errorf("connection lost: %s", cl.Reason)
			}
		}
	}()
	defer func() {
		stopDrain()
		drained.Wait()
	}()
	cli.PrintTagged(stdout, "ready", ready)

	sc := bufio.NewScanner(in)
	for sc.Scan() {
		switch cmd := strings.TrimSpace(sc.Text()); cmd {
		case "clear":
			if err := fed.DeleteObjectInstance(warm, nil); err != nil {
				return err
			}
		case "go":
			r, err := registerAll(fed, class, attr, names, bf.payload)
			if err != nil {
				return err
			}
			cli.PrintTagged(stdout, "registered", r)
		case "stop":
			stopDrain()
			drained.Wait()
			if lost != nil {
				return lost
			}
			rctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			return fed.ResignFederationExecution(rctx, peer.DeleteObjects)
		default:
			return fmt.Errorf("unknown command %q", cmd)
		}
	}
	return errors.New("the parent went away")
}

// reserveNames reserves n names (lifecycleName), at most 256 at a time,
// and stores them in names.
func reserveNames(ctx context.Context, fed *peer.Federate, n int, names []string) error {
	const window = 256
	sent, done := 0, 0
	for done < n {
		for sent < n && sent-done < window {
			names[sent] = lifecycleName(sent)
			if err := fed.ReserveObjectInstanceName(names[sent]); err != nil {
				return err
			}
			sent++
		}
		ev, err := fed.Next(ctx)
		if err != nil {
			return fmt.Errorf("reserving names (%d of %d done): %w", done, n, err)
		}
		switch ev := ev.(type) {
		case peer.ObjectInstanceNameReservationSucceeded:
			done++
		case peer.ObjectInstanceNameReservationFailed:
			return fmt.Errorf("reserving %q failed", ev.Name)
		case peer.ConnectionLost:
			return fmt.Errorf("connection lost: %s", ev.Reason)
		}
	}
	return nil
}

// registerAll registers one instance per name ("" is an RTI-chosen one),
// each followed by one update of attr with payload bytes (the instance's
// number first), as fast as it goes.
func registerAll(fed *peer.Federate, class peer.ObjectClassHandle, attr peer.AttributeHandle, names []string, payload int) (*lifecycleRegistered, error) {
	value := make([]byte, max(payload, 4))[:payload]
	// The update encodes its values before it returns: one map and one
	// value serve every instance.
	values := peer.AttributeValues{attr: value}
	before := fed.Stats()
	start := time.Now()
	for i, name := range names {
		h, err := fed.RegisterObjectInstance(class, name)
		if err != nil {
			return nil, fmt.Errorf("register instance %d: %w", i, err)
		}
		if payload >= 4 {
			binary.BigEndian.PutUint32(value, uint32(i))
		}
		if err := fed.UpdateAttributeValues(h, values, nil); err != nil {
			return nil, fmt.Errorf("update instance %d: %w", i, err)
		}
	}
	elapsed := time.Since(start)
	after := fed.Stats()
	return &lifecycleRegistered{Instances: len(names), Seconds: elapsed.Seconds(),
		Frames: after.Frames - before.Frames, Blocked: after.Blocked - before.Blocked}, nil
}
