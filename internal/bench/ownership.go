package bench

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/meshrti/meshrti/examples/demo"
	"github.com/meshrti/meshrti/internal/cli"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/reliable"
	"github.com/meshrti/meshrti/peer/transport"
)

// "federate-node bench ownership" measures ownership transfers per
// second between two processes on this host, over loopback multicast.
//
//   - The registrar (a child process, this same binary with -role
//     registrar) creates the federation, publishes and subscribes
//     Aircraft.Blob and registers -objects instances: it holds Blob of
//     each.
//   - The acquirer (this process) publishes and subscribes Blob too,
//     discovers the instances, and starts a run by asking for Blob of
//     each (AttributeOwnershipAcquisition).
//   - Both sides then follow one rule (ownershipLoop): on
//     RequestAttributeOwnershipRelease, release with
//     AttributeOwnershipDivestitureIfWanted and, while this side still
//     expects to get the attribute back, ask for it again at once; on
//     AttributeOwnershipAcquisitionNotification, count a transfer. So
//     Blob goes A -> B (the hand-off) and B -> A (the take-back), again
//     and again: one transfer is one acquisition notification, and
//     every run ends with each instance back with the registrar.
//
// Why ask again at once: the request then follows the transfer on the
// same group, from the same sender, and the reliable data plane delivers
// them in that order, so the new owner hears the request as soon as it
// holds the token. Every transfer still makes the whole trip: the
// owner's RTI hears the request, its federate answers through Next and
// the release service, the token crosses to the other process, whose
// RTI secures it, announces it and notifies its federate. Only the wait
// for the request is gone, as it is for a federate that wants a token
// back as soon as it gives it away; a run that waited for each transfer
// to be confirmed before asking would need a message outside the
// ownership services (nothing tells the former owner that the new one
// was notified), and would measure that message too. So one transfer
// costs one crossing, a datagram exchange in one direction, and the
// floor is counted the same way (below).
//
// A run is a phase of the child's and the parent's loops: a warm-up
// (-count/10 transfers over every instance), the serial run (-count
// transfers of one instance: each waits for the one before) and, with
// -objects > 1, the pipelined run (-count transfers spread over
// -objects instances, each instance's in turn). The registrar prints a
// "phase" line after each (its counts, its time of its last
// notification, what it holds); the acquirer starts the next phase only
// then. A run's time is from the acquirer's first request to the
// registrar's last notification, on the wall clock both processes read
// (one host). At the end of each phase both sides ask
// IsAttributeOwnedByFederate about every instance: the registrar must
// own each and the acquirer none, and the notifications and releases of
// both sides must each add up to the transfers.
//
// The floor, in the same run and the same two processes once both
// federates have resigned: a ping-pong of datagrams over loopback
// multicast (TTL 0), one system call each with the raw I/O of the other
// floors (bench_rawio_linux.go), each datagram the size of a data frame
// carrying what one transfer puts on the data plane (ownershipHopBytes).
// A datagram across is one transfer: a round trip (a "pair", request
// and reply) is two. The pipelined floor keeps -objects datagrams in
// flight, as the pipelined run keeps as many tokens.
//
// The processes talk over the child's standard input and output: the
// child prints "gossip ADDR", "ready HANDLE", "phase JSON" and "echo
// ready"; it reads "stop" (resign and start the floor's echo), and the
// end of its input ends it.

// ownershipFlags are the flags of "federate-node bench ownership".
type ownershipFlags struct {
	count   int
	objects int
	frame   int
	benchCommon

	// Set by the parent for its child processes.
	role       string // "registrar"
	federation string
}

// OwnershipResult is the line "bench ownership -json" prints.
type OwnershipResult struct {
	Bench string `json:"bench"`
	// The serial run: Transfers of one instance's attribute, each after
	// the one before, over Seconds. FramesPerTransfer counts the data
	// frames both processes handed to their transports.
	Transfers         int     `json:"transfers"`
	Seconds           float64 `json:"seconds"`
	TransfersPerS     float64 `json:"transfers_per_s"`
	FramesPerTransfer float64 `json:"frames_per_transfer"`
	// The pipelined run (Objects > 1): as many transfers spread over
	// Objects instances.
	Objects                    int     `json:"objects"`
	PipelinedSeconds           float64 `json:"pipelined_seconds,omitempty"`
	PipelinedPerS              float64 `json:"pipelined_transfers_per_s,omitempty"`
	PipelinedFramesPerTransfer float64 `json:"pipelined_frames_per_transfer,omitempty"`

	// The floor: HopBytes is the size of its datagrams; RawPerS is
	// datagrams across per second, one in flight (one transfer each),
	// RawPairsPerS the round trips; Ratio is TransfersPerS / RawPerS.
	// RawPipelinedPerS and PipelinedRatio keep Objects datagrams in
	// flight. RawLost counts the datagrams given up for lost (a second
	// without an answer), both floors.
	HopBytes         int     `json:"hop_bytes"`
	RawPerS          float64 `json:"raw_per_s"`
	RawPairsPerS     float64 `json:"raw_pairs_per_s"`
	RawPairs         int     `json:"raw_pairs"`
	Ratio            float64 `json:"ratio"`
	RawPipelinedPerS float64 `json:"raw_pipelined_per_s,omitempty"`
	PipelinedRatio   float64 `json:"pipelined_ratio,omitempty"`
	RawLost          int     `json:"raw_lost"`

	// Consistent: after every run each instance was owned by exactly
	// one side (the registrar), and the notifications and releases
	// each added up to the transfers. Error says what was not.
	Consistent bool `json:"consistent"`
	benchTail
}

// ownershipTally is what one side did in one phase; the registrar's is
// its "phase" line.
type ownershipTally struct {
	Notified int `json:"notified"` // acquisition notifications
	Released int `json:"released"` // attributes given on request
	// Owned is how many of the phase's instances this side owns at the
	// end (IsAttributeOwnedByFederate).
	Owned int `json:"owned"`
	// Last is the wall clock (Unix nanoseconds) of the last
	// notification: the other process compares it with its own.
	Last   int64  `json:"last_unix_ns"`
	Frames uint64 `json:"frames"`
}

// ownershipPhase is one run of the loop: Rounds[i] hand-offs and
// take-backs of instance i.
type ownershipPhase struct {
	Name   string
	Rounds []int
}

// transfers returns the phase's transfers: two a round.
func (p ownershipPhase) transfers() int {
	n := 0
	for _, r := range p.Rounds {
		n += 2 * r
	}
	return n
}

// ownershipPhases returns the phases both processes run, in order: the
// warm-up, the serial run and (objects > 1) the pipelined run.
func ownershipPhases(count, objects int) []ownershipPhase {
	spread := func(transfers, objects int) []int {
		rounds := make([]int, objects)
		for i := range rounds {
			rounds[i] = transfers / 2 / objects
			if i < transfers/2%objects {
				rounds[i]++
			}
		}
		return rounds
	}
	ps := []ownershipPhase{
		{"warm-up", spread(max(count/10&^1, 2*objects), objects)},
		{"serial", spread(count, 1)},
	}
	if objects > 1 {
		ps = append(ps, ownershipPhase{"pipelined", spread(count, objects)})
	}
	return ps
}

// The federate names of the benchmark.
const (
	ownershipRegistrarName = "own-registrar"
	ownershipAcquirerName  = "own-acquirer"
)

// ownershipRawGroup is the floor's multicast group, on the loopback
// interface with TTL 0 like the data plane's defaults.
var ownershipRawGroup = netip.AddrFrom4([4]byte{239, 255, 77, 79})

// Define defines the flags of "bench ownership".
func (bf *ownershipFlags) Define(fs *flag.FlagSet) {
	fs.IntVar(&bf.count, "count", 20000, "transfers per run (even: hand-offs and take-backs)")
	fs.IntVar(&bf.objects, "objects", 16, "instances of the pipelined run, each passed back and forth (1: the serial run only)")
	fs.IntVar(&bf.frame, "frame", 16000, cli.FrameHelp)
	bf.benchCommon.define(fs, 2*time.Minute, "UDP multicast port; the floor uses this port + 2 and + 3 (default: derived from the process id)",
		"write CPU profiles of both processes to `PREFIX`.acquirer and PREFIX.registrar")
	fs.StringVar(&bf.role, "role", "", "internal: run the registrar for the parent process")
	fs.StringVar(&bf.federation, "federation", "", "internal (registrar): federation name")
}

// Check returns the usage error of bad flags of "bench ownership", or "".
func (bf *ownershipFlags) Check(nargs int) string {
	if bf.count < 2 || bf.count%2 != 0 || bf.objects < 1 || bf.objects > bf.count/2 || bf.frame < 0 || bf.timeout <= 0 || nargs > 0 {
		return "need an even -count >= 2, 1 <= -objects <= count/2, -frame >= 0, -timeout > 0 and no arguments"
	}
	return ""
}

// Run runs "bench ownership".
func (bf ownershipFlags) Run(b *cli.Cmd) int {
	defaultPort(&bf.port, 0)
	roles := map[string]func(context.Context) error{
		"registrar": func(ctx context.Context) error { return ownershipRegistrar(ctx, bf, os.Stdin, b.Stdout) },
	}
	measure := func(ctx context.Context) (*OwnershipResult, error) { return benchOwnership(ctx, bf, b.Stderr) }
	return runParentChild(b, &bf.benchCommon, bf.role, roles, ".acquirer", measure, func(w io.Writer, res *OwnershipResult) {
		fmt.Fprintf(w, "ownership, hand-off and take-back of one attribute between two processes over loopback multicast:\n"+
			"  serial, 1 instance: transfers=%d in %.3f s = %.0f transfers/s, %.2f frames per transfer\n",
			res.Transfers, res.Seconds, res.TransfersPerS, res.FramesPerTransfer)
		if res.Objects > 1 {
			fmt.Fprintf(w, "  pipelined, %d instances: transfers=%d in %.3f s = %.0f transfers/s, %.2f frames per transfer\n",
				res.Objects, res.Transfers, res.PipelinedSeconds, res.PipelinedPerS, res.PipelinedFramesPerTransfer)
		}
		fmt.Fprintf(w, "  floor: raw UDP multicast ping-pong between two processes, %d-byte datagrams, one per transfer: "+
			"%.0f transfers/s (%.0f pairs/s): ratio %.2f\n", res.HopBytes, res.RawPerS, res.RawPairsPerS, res.Ratio)
		if res.Objects > 1 {
			fmt.Fprintf(w, "  floor with %d datagrams in flight: %.0f transfers/s: ratio %.2f\n",
				res.Objects, res.RawPipelinedPerS, res.PipelinedRatio)
		}
		consistent := "consistent: one owner per instance, notifications = releases = transfers"
		if !res.Consistent {
			consistent = "NOT consistent"
		}
		fmt.Fprintf(w, "  %s; %d floor datagrams lost; GOMAXPROCS %d per process\n", consistent, res.RawLost, res.GOMAXPROCS)
	})
}

// benchOwnership runs the measurements: the acquirer here, the registrar
// in a child process, then the floor.
func benchOwnership(ctx context.Context, bf ownershipFlags, stderr io.Writer) (*OwnershipResult, error) {
	res := &OwnershipResult{Bench: "ownership", Transfers: bf.count, Objects: bf.objects}
	bf.federation = fmt.Sprintf("benchown-%d", os.Getpid())
	reg, err := startRoleChild(ctx, "ownership", "registrar", bf.federation, bf.benchCommon, stderr,
		"-count", fmt.Sprint(bf.count), "-objects", fmt.Sprint(bf.objects), "-frame", fmt.Sprint(bf.frame))
	if err != nil {
		return nil, err
	}
	defer reg.stop()
	nf := benchNode(bf.federation, ownershipAcquirerName, bf.port, bf.frame)
	sub, err := reg.join(ctx, &nf)
	if err != nil {
		return nil, err
	}
	fed := sub.fed
	defer fed.Close()
	attr, err := ownershipDeclare(fed)
	if err != nil {
		return nil, err
	}
	line, err := reg.expect(ctx, "ready ", 2*time.Minute)
	if err != nil {
		return nil, err
	}
	var registrar peer.FederateHandle
	if _, err := fmt.Sscan(line, &registrar); err != nil {
		return nil, fmt.Errorf("the registrar's ready line %q: %w", line, err)
	}
	objs, err := ownershipDiscover(ctx, fed, registrar, bf.objects)
	if err != nil {
		return nil, err
	}

	var errs []error
	for _, ph := range ownershipPhases(bf.count, bf.objects) {
		start := time.Now()
		mine, err := ownershipLoop(ctx, fed, attr, objs, ph.Rounds, true)
		if err != nil {
			reg.wait(2 * time.Second) // the registrar's own error, if it gave up first, comes out
			return nil, fmt.Errorf("%s run: %w", ph.Name, err)
		}
		var theirs ownershipTally
		if err := reg.expectJSON(ctx, "phase ", time.Minute, &theirs); err != nil {
			return nil, fmt.Errorf("%s run: %w", ph.Name, err)
		}
		if err := ownershipCheck(ph, theirs, mine); err != nil {
			errs = append(errs, fmt.Errorf("%s run: %w", ph.Name, err))
		}
		seconds := time.Unix(0, theirs.Last).Sub(start).Seconds()
		frames := float64(mine.Frames+theirs.Frames) / float64(ph.transfers())
		switch ph.Name {
		case "serial":
			res.Seconds, res.TransfersPerS, res.FramesPerTransfer = seconds, float64(ph.transfers())/seconds, frames
		case "pipelined":
			res.PipelinedSeconds, res.PipelinedPerS, res.PipelinedFramesPerTransfer = seconds, float64(ph.transfers())/seconds, frames
		}
	}
	if err := errors.Join(errs...); err != nil {
		res.Error = err.Error()
	}
	res.Consistent = res.Error == ""
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	err = fed.ResignFederationExecution(rctx, peer.DeleteObjects)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("%s: resign: %w", fed.Name(), err)
	}
	fed.Close()

	// The floor.
	if res.HopBytes, err = ownershipHopBytes(ctx, bf.frame); err != nil {
		return nil, fmt.Errorf("sizing the messages: %w", err)
	}
	if err := reg.send("stop"); err != nil {
		return nil, err
	}
	if _, err := reg.expect(ctx, "echo ", 30*time.Second); err != nil {
		return nil, err
	}
	windows := []int{1}
	if bf.objects > 1 {
		windows = append(windows, bf.objects)
	}
	floors, err := ownershipRaw(ctx, bf.port, bf.count/2, windows, res.HopBytes)
	if err != nil {
		return nil, fmt.Errorf("raw UDP: %w", err)
	}
	reg.in.Close() // ends the echo
	if err := reg.wait(30 * time.Second); err != nil {
		return nil, err
	}
	res.RawPairs = floors[0].pairs
	res.RawPairsPerS = float64(floors[0].pairs) / floors[0].elapsed.Seconds()
	res.RawPerS = 2 * res.RawPairsPerS
	res.Ratio = res.TransfersPerS / res.RawPerS
	for _, f := range floors {
		res.RawLost += f.lost
	}
	if bf.objects > 1 {
		res.RawPipelinedPerS = 2 * float64(floors[1].pairs) / floors[1].elapsed.Seconds()
		res.PipelinedRatio = res.PipelinedPerS / res.RawPipelinedPerS
	}
	return res, nil
}

// ownershipCheck reports what is wrong with a phase's tallies: every
// instance must end with the registrar and not with the acquirer, and
// each side's notifications and releases must add up to the transfers.
func ownershipCheck(ph ownershipPhase, registrar, acquirer ownershipTally) error {
	var errs []error
	n := ph.transfers()
	if got := registrar.Notified + acquirer.Notified; got != n {
		errs = append(errs, fmt.Errorf("%d acquisition notifications (registrar %d, acquirer %d), want %d",
			got, registrar.Notified, acquirer.Notified, n))
	}
	if got := registrar.Released + acquirer.Released; got != n {
		errs = append(errs, fmt.Errorf("%d releases (registrar %d, acquirer %d), want %d", got, registrar.Released, acquirer.Released, n))
	}
	if registrar.Owned != len(ph.Rounds) || acquirer.Owned != 0 {
		errs = append(errs, fmt.Errorf("of %d instances, the registrar owns %d and the acquirer %d; want every one owned by the registrar alone",
			len(ph.Rounds), registrar.Owned, acquirer.Owned))
	}
	return errors.Join(errs...)
}

// ownershipDeclare publishes and subscribes the demo FOM's Aircraft.Blob
// and returns Blob.
func ownershipDeclare(fed *peer.Federate) (peer.AttributeHandle, error) {
	class, attr, err := lifecycleHandles(fed)
	if err != nil {
		return 0, err
	}
	if err := fed.PublishObjectClassAttributes(class, attr); err != nil {
		return 0, err
	}
	return attr, fed.SubscribeObjectClassAttributes(class, attr)
}

// ownershipDiscover waits for n instances registered by registrar and
// returns them in the order they were registered.
func ownershipDiscover(ctx context.Context, fed *peer.Federate, registrar peer.FederateHandle, n int) ([]peer.ObjectInstanceHandle, error) {
	var objs []peer.ObjectInstanceHandle
	err := waitEvents(ctx, fed, fmt.Sprintf("%d instances", n), func(ev peer.Event) bool {
		if d, ok := ev.(peer.DiscoverObjectInstance); ok && d.Object.Federate == registrar {
			objs = append(objs, d.Object)
		}
		return len(objs) == n
	})
	slices.SortFunc(objs, func(a, b peer.ObjectInstanceHandle) int { return cmp.Compare(a.Serial, b.Serial) })
	return objs, err
}

// ownershipLoop is one side of a phase: it passes attr of objs[i] back
// and forth rounds[i] times with the other side (the first len(rounds)
// instances take part). The acquirer starts by asking for each; the
// registrar, which holds them, waits. It returns when this side has had
// every notification and made every release it expects, with what it
// holds then. It reads fed's events, so it runs on the goroutine that
// owns them.
func ownershipLoop(ctx context.Context, fed *peer.Federate, attr peer.AttributeHandle, objs []peer.ObjectInstanceHandle, rounds []int, acquirer bool) (ownershipTally, error) {
	var t ownershipTally
	objs = objs[:len(rounds)]
	index := make(map[peer.ObjectInstanceHandle]int, len(objs))
	got, gave := make([]int, len(objs)), make([]int, len(objs))
	owed := 0 // notifications and releases still expected
	for i, h := range objs {
		index[h] = i
		owed += 2 * rounds[i]
	}
	frames := fed.Stats().Frames
	acquire := func(h peer.ObjectInstanceHandle) error {
		if err := fed.AttributeOwnershipAcquisition(h, nil, attr); err != nil {
			return fmt.Errorf("%s: acquisition of %v: %w", fed.Name(), h, err)
		}
		return nil
	}
	if acquirer {
		for i, h := range objs {
			if rounds[i] > 0 {
				if err := acquire(h); err != nil {
					return t, err
				}
			}
		}
	}
	for owed > 0 {
		ev, err := fed.Next(ctx)
		if err != nil {
			return t, fmt.Errorf("%s: waiting (%d notifications and %d releases so far, %d more due): %w",
				fed.Name(), t.Notified, t.Released, owed, err)
		}
		switch ev := ev.(type) {
		case peer.RequestAttributeOwnershipRelease:
			i, ok := index[ev.Object]
			if !ok || gave[i] == rounds[i] || !slices.Equal(ev.Attributes, []peer.AttributeHandle{attr}) {
				return t, fmt.Errorf("%s: unexpected release request for %v of %v", fed.Name(), ev.Attributes, ev.Object)
			}
			given, err := fed.AttributeOwnershipDivestitureIfWanted(ev.Object, attr)
			if err != nil {
				return t, fmt.Errorf("%s: release of %v: %w", fed.Name(), ev.Object, err)
			}
			if !slices.Equal(given, []peer.AttributeHandle{attr}) {
				return t, fmt.Errorf("%s: asked for %v of %v, released %v", fed.Name(), attr, ev.Object, given)
			}
			gave[i]++
			t.Released++
			owed--
			if got[i] < rounds[i] {
				if err := acquire(ev.Object); err != nil {
					return t, err
				}
			}
		case peer.AttributeOwnershipAcquisitionNotification:
			i, ok := index[ev.Object]
			if !ok || got[i] == rounds[i] || !slices.Equal(ev.Attributes, []peer.AttributeHandle{attr}) {
				return t, fmt.Errorf("%s: unexpected acquisition notification for %v of %v", fed.Name(), ev.Attributes, ev.Object)
			}
			got[i]++
			t.Notified++
			owed--
			t.Last = time.Now().UnixNano()
		case peer.AttributeOwnershipUnavailable:
			return t, fmt.Errorf("%s: %v of %v unavailable", fed.Name(), ev.Attributes, ev.Object)
		case peer.ConfirmAttributeOwnershipAcquisitionCancellation:
			return t, fmt.Errorf("%s: acquisition of %v of %v cancelled", fed.Name(), ev.Attributes, ev.Object)
		case peer.MessagesLost:
			return t, fmt.Errorf("%s: %d messages from federate %d lost for good", fed.Name(), ev.Messages, ev.Producer)
		case peer.FederateLost:
			return t, fmt.Errorf("%s: federate %s lost", fed.Name(), ev.Name)
		case peer.FederateResigned:
			return t, fmt.Errorf("%s: federate %s resigned", fed.Name(), ev.Name)
		case peer.ConnectionLost:
			return t, fmt.Errorf("%s: connection lost: %s", fed.Name(), ev.Reason)
		}
	}
	t.Frames = fed.Stats().Frames - frames
	for _, h := range objs {
		owned, err := fed.IsAttributeOwnedByFederate(h, attr)
		if err != nil {
			return t, err
		}
		if owned {
			t.Owned++
		}
	}
	return t, nil
}

// ownershipRegistrar is the registrar's process: it creates the
// federation, declares Aircraft.Blob, registers the instances, runs its
// side of every phase, printing a "phase" line after each, and resigns
// on "stop" (or the end of in).
func ownershipRegistrar(ctx context.Context, bf ownershipFlags, in io.Reader, stdout io.Writer) error {
	sub, stop, err := joinAsRegistrar(ctx, bf.benchCommon, bf.federation, ownershipRegistrarName, bf.frame, stdout)
	if err != nil {
		return err
	}
	defer stop()
	fed := sub.fed
	attr, err := ownershipDeclare(fed)
	if err != nil {
		return err
	}
	objs, err := ownershipRegister(fed, bf.objects)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "ready %d\n", fed.Handle())
	for _, ph := range ownershipPhases(bf.count, bf.objects) {
		t, err := ownershipLoop(ctx, fed, attr, objs, ph.Rounds, false)
		if err != nil {
			return fmt.Errorf("%s run: %w", ph.Name, err)
		}
		cli.PrintTagged(stdout, "phase", t)
	}
	sc := bufio.NewScanner(in)
	if !sc.Scan() {
		return errors.New("the parent went away")
	}
	if cmd := strings.TrimSpace(sc.Text()); cmd != "stop" {
		return fmt.Errorf("unknown command %q", cmd)
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := fed.ResignFederationExecution(rctx, peer.DeleteObjects); err != nil {
		return fmt.Errorf("resign: %w", err)
	}
	fed.Close()
	return ownershipEcho(ctx, bf.port, sc, stdout)
}

// ownershipRegister registers n instances of Aircraft, in order.
func ownershipRegister(fed *peer.Federate, n int) ([]peer.ObjectInstanceHandle, error) {
	class, err := fed.GetObjectClassHandle("Aircraft")
	if err != nil {
		return nil, err
	}
	objs := make([]peer.ObjectInstanceHandle, n)
	for i := range objs {
		if objs[i], err = fed.RegisterObjectInstance(class, ""); err != nil {
			return nil, fmt.Errorf("register instance %d: %w", i, err)
		}
	}
	return objs, nil
}

// ownershipPair joins two federates of this process, A and B, over the
// transports given (endpoints of one in-memory network and registry),
// declares Blob in both, registers n instances at A and waits until B
// has discovered them. The caller closes both.
func ownershipPair(ctx context.Context, frame, n int, ta, tb transport.Transport) (a, b *peer.Federate, attr peer.AttributeHandle, objs []peer.ObjectInstanceHandle, err error) {
	mf, err := newMemFederation("ownership", "bench", "demo.xml", demo.FOM)
	if err != nil {
		return nil, nil, 0, nil, err
	}
	mf.frame = frame
	if a, err = mf.join(ctx, "A", ta); err != nil {
		return nil, nil, 0, nil, err
	}
	if b, err = mf.join(ctx, "B", tb); err != nil {
		a.Close()
		return nil, nil, 0, nil, err
	}
	if attr, err = ownershipDeclare(a); err == nil {
		if _, err = ownershipDeclare(b); err == nil {
			if _, err = ownershipRegister(a, n); err == nil {
				objs, err = ownershipDiscover(ctx, b, a.Handle(), n)
			}
		}
	}
	if err != nil {
		a.Close()
		b.Close()
		return nil, nil, 0, nil, err
	}
	return a, b, attr, objs, nil
}

// ownershipBoth runs a phase between two federates of this process: a
// (the registrar) on a goroutine of its own, b (the acquirer) on this
// one. It returns their tallies.
func ownershipBoth(ctx context.Context, a, b *peer.Federate, attr peer.AttributeHandle, objs []peer.ObjectInstanceHandle, ph ownershipPhase) (ta, tb ownershipTally, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var errA error
	wg.Add(1)
	go func() {
		defer wg.Done()
		ta, errA = ownershipLoop(ctx, a, attr, objs, ph.Rounds, false)
		if errA != nil {
			cancel() // b would wait for a forever
		}
	}()
	tb, errB := ownershipLoop(ctx, b, attr, objs, ph.Rounds, true)
	if errB != nil {
		cancel()
	}
	wg.Wait()
	return ta, tb, errors.Join(errA, errB)
}

// ownershipHopBytes measures the size of the floor's datagrams: a data
// frame (header and checksum) carrying what one transfer puts on the
// data plane. It runs 50 rounds of the benchmark's loop on one instance
// between two federates of this process over the in-memory network, and
// sums the entries (flags, length and message) of the reliable data
// frames both send meanwhile: a release, the next request and the new
// owner's announcement per transfer, as the protocol is now. The
// federate handles of the real run are larger (a byte or so more per
// handle); the floor barely depends on a few bytes.
func ownershipHopBytes(ctx context.Context, frame int) (int, error) {
	network := transport.NewNetwork(transport.NetworkConfig{Seed: 1})
	taps := []*entryTap{
		{Transport: network.Endpoint("A"), entries: map[transport.Group]map[uint64]tapEntry{}},
		{Transport: network.Endpoint("B"), entries: map[transport.Group]map[uint64]tapEntry{}},
	}
	a, b, attr, objs, err := ownershipPair(ctx, frame, 1, taps[0], taps[1])
	if err != nil {
		return 0, err
	}
	defer a.Close()
	defer b.Close()
	// Discovery's messages have gone (b discovered the instance): what
	// follows is the loop's.
	before := []map[transport.Group]uint64{taps[0].highest(), taps[1].highest()}
	ph := ownershipPhase{Name: "sizing", Rounds: []int{50}}
	if _, _, err := ownershipBoth(ctx, a, b, attr, objs, ph); err != nil {
		return 0, err
	}
	// The last announcement leaves within a tick or two: wait until
	// nothing more comes for 50 ms.
	sum := func() int {
		n := 0
		for i, t := range taps {
			for _, e := range t.since(before[i]) {
				n += e.size
			}
		}
		return n
	}
	bytes, still := sum(), time.Now()
	for time.Since(still) < 50*time.Millisecond {
		time.Sleep(5 * time.Millisecond)
		if n := sum(); n != bytes {
			bytes, still = n, time.Now()
		}
	}
	const crcLen = 4
	return reliable.HeaderLen + crcLen + (bytes+ph.transfers()/2)/ph.transfers(), nil
}

// ownershipFloor is what one floor measured: pairs round trips (after a
// tenth as many that warm up) over elapsed, and the datagrams given up
// for lost.
type ownershipFloor struct {
	pairs   int
	elapsed time.Duration
	lost    int
}

// ownershipRaw runs the floor's side in this process: it receives the
// group on port+2, where the echo in the other process answers what it
// sends to port+3. For each window, it keeps that many datagrams of size
// bytes in flight until trips round trips are done, after a tenth as
// many that warm up.
func ownershipRaw(ctx context.Context, port, trips int, windows []int, size int) ([]ownershipFloor, error) {
	c, rio, err := rawGroupConn(ownershipRawGroup, port+2, 8<<20)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	dst := netip.AddrPortFrom(ownershipRawGroup, uint16(port+3))
	msg, buf := make([]byte, max(size, 1)), make([]byte, 65536)
	var floors []ownershipFloor
	for _, window := range windows {
		var f ownershipFloor
		var start time.Time
		warm := trips / 10
		got, inFlight := 0, 0
		for got < warm+trips && ctx.Err() == nil {
			if got == warm && start.IsZero() {
				start = time.Now()
			}
			for inFlight < window && got+inFlight < warm+trips {
				if err := rio.write(msg, dst); err != nil {
					return nil, err
				}
				inFlight++
			}
			c.SetReadDeadline(time.Now().Add(time.Second))
			if _, _, err := rio.read(buf); err != nil {
				var ne net.Error
				if !errors.As(err, &ne) || !ne.Timeout() {
					return nil, err
				}
				f.lost += inFlight // send them again
				inFlight = 0
				continue
			}
			inFlight = max(inFlight-1, 0)
			got++
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		f.pairs, f.elapsed = got-warm, time.Since(start)
		floors = append(floors, f)
		// Answers to datagrams given up for lost may still come: let
		// them, before the next window.
		for f.lost > 0 {
			c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
			if _, _, err := rio.read(buf); err != nil {
				break
			}
		}
	}
	return floors, nil
}

// ownershipEcho is the floor's side in the registrar's process: it
// prints "echo ready", then multicasts every datagram it receives on the
// group at port+3 back to the group at port+2, until in (the rest of the
// parent's commands) ends, or ctx does.
func ownershipEcho(ctx context.Context, port int, in *bufio.Scanner, stdout io.Writer) error {
	c, rio, err := rawGroupConn(ownershipRawGroup, port+3, 8<<20)
	if err != nil {
		return err
	}
	defer c.Close()
	if d, ok := ctx.Deadline(); ok {
		c.SetReadDeadline(d)
	}
	// The end of in closes c, which ends the loop below; the process
	// ends with this function, whatever its reader is doing.
	go func() {
		for in.Scan() {
		}
		c.Close()
	}()
	fmt.Fprintln(stdout, "echo ready")
	dst := netip.AddrPortFrom(ownershipRawGroup, uint16(port+2))
	buf := make([]byte, 65536)
	for {
		n, _, err := rio.read(buf)
		if errors.Is(err, net.ErrClosed) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := rio.write(buf[:n], dst); err != nil {
			return err
		}
	}
}
