package peer

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meshrti/meshrti/peer/updatecond"

	"github.com/rs/zerolog"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/lbts"
	"github.com/meshrti/meshrti/peer/internal/core"
	"github.com/meshrti/meshrti/peer/reliable"
	"github.com/meshrti/meshrti/peer/transport"
	"github.com/meshrti/meshrti/version"
)

// Federate is one joined federate: the RTIambassador side of the API as
// methods, the FederateAmbassador side as the event stream of Next.
//
// A Federate is the driver of the federate's core (peer/internal/core),
// which holds every protocol decision: the Federate owns the goroutines,
// the clock, the sockets and the lock, and moves inputs into the core and
// its Ready out to the transport, the event queue and the control plane.
//
// All methods are safe for concurrent use. Services run on the caller's
// goroutine under the federate's lock and return when done; none waits
// for other federates except Join and Resign. Callbacks come only from
// Next, in order.
type Federate struct {
	cfg    Config
	fdd    atomic.Pointer[fomxml.FDD]
	handle FederateHandle
	name   string
	log    zerolog.Logger

	// reports are the MOM's reporting switches (reportServices,
	// reportExceptions), as the core had them after the last turn.
	reports atomic.Uint32

	ctl ControlPlane
	cev *ControlEvents
	tr  transport.Transport
	// The data plane's mode as the join settled it, the mode in the
	// federation's record, and, for unicast, the group directory the
	// control plane feeds (dirGone: members gone, whose late
	// announcements are ignored; under mu).
	mode         TransportMode
	fedDataPlane string
	dir          transport.Directory
	dirGone      map[FederateHandle]bool
	dirVersion   map[FederateHandle]uint64 // newest announcement applied, per member

	// Update conditions (Config.UpdateConditions), under condMu; wall
	// time counts from started (manualTicks for a manual federate).
	cond        *updatecond.Filter
	condMu      sync.Mutex
	started     time.Time
	manualTicks atomic.Int64

	// The FOM modules: this federate's own, parsed, and the federation's
	// (for a new FDD when a joiner adds modules).
	docs    []*fomxml.Document
	local   []Module
	modules []Module
	// The MIM: this federate's (localMIM, for a create; nil for the
	// standard one) and the federation's (mim, parsed; nil for the
	// standard one).
	localMIM *Module
	mim      *fomxml.Document

	// Guarded by mu.
	core   *core.Core
	halted bool  // the loop has exited (or a manual federate closed)
	why    error // what services return once halted
	ctlBuf []ControlEvent
	// ticks counts the loop's ticks; heardBuf is publishHeard's list
	// (both under mu).
	ticks    uint64
	heardBuf []FederateHandle
	opBuf    []core.Op
	traceBad bool // a trace write failed: the trace ended

	// sender is the send path: the writer goroutine, group commit, the
	// step hold and the back-pressure wake (sender.go). Its state is
	// guarded by mu.
	sender sender

	// mu serializes everything that touches the core, the fields above
	// marked guarded and the sender's state: service calls take it for
	// their work, the loop for each event, the reader for a read's
	// frames, the writer to take its next batch.
	mu sync.Mutex

	events    *eventQueue
	stop      chan struct{}
	done      chan struct{}
	opsCtx    context.Context // cancelled by Close: control-plane operations in flight give up
	opsCancel context.CancelFunc
	wg        sync.WaitGroup // every goroutine this federate started
	closed    atomic.Bool
	once      sync.Once

	stats   counters
	metrics fedMetrics
}

// counters are the driver's own counters (the sender counts what it
// sends).
type counters struct {
	paused atomic.Uint64
}

// Stats is a snapshot of a federate's counters.
type Stats struct {
	Sent      uint64 // data-plane messages sent
	Delivered uint64 // data-plane messages received and handled
	Malformed uint64 // payloads that did not decode (dropped)
	Gaps      uint64 // messages the reliable layer reported lost for good
	LateTSO   uint64 // time-stamped messages refused for arriving below the granted time
	SendError uint64 // transport send failures
	Frames    uint64 // data-plane frames handed to the transport
	Batches   uint64 // batches of frames handed to the transport (one system call each with batch I/O)
	Led       uint64 // of Batches, those sent by the goroutine whose call or read made them, without a switch to the writer goroutine
	Blocked   uint64 // sends held by back-pressure (a full backlog on a group)
	Paused    uint64 // times reading stopped because MaxQueuedEvents callbacks were waiting
	Stale     uint64 // updates and deletes dropped for an ownership epoch older than one known
	Unnamed   uint64 // updates of instances with reserved names dropped because the name never came
	Filtered  uint64 // attribute values, interactions and announcements dropped: their regions overlap no subscription region here
	History   uint64 // updates and interactions with regions dropped: sent into a cell before this federate's region moved over it
	Spared    uint64 // updates and interactions with regions not sent: no other federate's subscription region overlaps them
	// Reliable holds the reliable layer's own counters (frames dropped
	// by reason, retransmissions, NAKs).
	Reliable reliable.Stats
	// Suspicions counts the members this federate's gossip member
	// declared dead, Refutations those of them it heard alive again (a
	// false suspicion), LostProposals the removals it proposed
	// (gossip.Stats). A suspicion changes nothing the federate sees;
	// only the federation's removal of a member does. LostDeferred
	// counts the rounds a removal was not proposed because the data
	// plane still heard the member.
	Suspicions, Refutations, LostProposals, LostDeferred uint64
}

// Join creates the federation if asked, joins it, and starts the
// federate. It blocks until the federate is a member or ctx ends.
//
// The federation's FDD is the standard MIM, its creator's modules and
// the modules joiners added. Joining checks this federate's modules
// against it (ErrInconsistentFDD when they conflict; modules the
// federation lacks are added for every member) and its time
// representation (ErrCouldNotCreateLogicalTimeFactory when it differs).
func Join(ctx context.Context, cfg Config) (*Federate, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	docs, mim, err := cfg.loadDocs()
	if err != nil {
		return nil, err
	}
	local, err := modulesOf(docs)
	if err != nil {
		return nil, err
	}
	localMIM, err := mimModule(mim)
	if err != nil {
		return nil, err
	}
	f := &Federate{
		cfg:      cfg,
		log:      cfg.Logger,
		docs:     docs,
		local:    local,
		localMIM: localMIM,
		events:   newEventQueue(),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	f.opsCtx, f.opsCancel = context.WithCancel(context.Background())
	ok := false
	defer func() {
		if !ok {
			f.release()
		}
	}()

	// Join owns the transport and control plane it was given, also when
	// it fails.
	f.tr = cfg.Transport
	f.ctl = cfg.Control
	if f.ctl == nil {
		if f.ctl, err = startGossip(ctx, &cfg); err != nil {
			return nil, err
		}
	}
	if _, ok := f.ctl.(*memControl); cfg.Manual && !ok {
		// Any other control plane (gossip) acts on goroutines and
		// clocks of its own: a seed would not replay.
		return nil, errors.New("peer: Config.Manual needs a control plane from MemRegistry")
	}
	f.cev = f.ctl.Events()
	fdd, err := f.joinFederation(ctx)
	if err != nil {
		return nil, err
	}
	f.fdd.Store(fdd)
	if cfg.UpdateConditions != nil {
		if f.cond, err = updatecond.New(fdd, *cfg.UpdateConditions); err != nil {
			return nil, fmt.Errorf("peer: update conditions: %w", err)
		}
	}
	f.started = time.Now()

	mode, probed, err := f.settleTransport(ctx, f.fedDataPlane)
	if err != nil {
		return nil, err
	}
	f.mode = mode
	if TransportMode(f.fedDataPlane) == TransportAuto {
		// Say which mode this member uses, for later joiners (the
		// register's key is freed when its holder leaves).
		if err := f.ctl.SetState(keyModeDecided, []byte(mode)); err != nil {
			f.log.Warn().Err(err).Msg("publishing the data-plane mode failed")
		}
	}
	switch {
	case f.tr != nil:
		if probed != nil {
			probed.Close()
		}
	case probed != nil:
		f.tr = probed
	case mode == TransportUnicast:
		u, err := f.newUnicast()
		if err != nil {
			return nil, fmt.Errorf("%w: data plane: %w", ErrRTIinternalError, err)
		}
		f.tr = u
		f.log.Info().Str("transport", u.String()).Msg("data plane: unicast")
	default:
		u, err := f.newMulticast()
		if err != nil {
			return nil, fmt.Errorf("%w: data plane: %w", ErrRTIinternalError, err)
		}
		f.tr = u
	}
	f.wireDirectory()
	incarnation := cfg.Incarnation
	if incarnation == 0 {
		if incarnation, err = randomUint64(cfg); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrRTIinternalError, err)
		}
	}
	var members []core.Member
	for _, m := range f.ctl.Members() {
		members = append(members, core.Member{Handle: m.Handle, Name: m.Name, Type: m.Type})
	}
	f.core, err = core.New(core.Config{
		FDD:         fdd,
		Federation:  cfg.Federation,
		Self:        f.handle,
		Name:        f.name,
		Time:        f.cfg.timeKind(), // as the join settled it (AdoptTime)
		Incarnation: incarnation,
		Key:         cfg.Key,
		MaxFrame:    cfg.maxFrame(),
		MaxMessage:  cfg.MaxMessage,
		Window:      cfg.Window,
		// A receiver may stall its senders for StallTimeout before they
		// go on without it (it is then repaired or told of gaps).
		AckTimeoutTicks: int(max(1, cfg.stallTimeout()/cfg.tick())),
		ResignAction:    resignActionOf(fdd.Switches.AutomaticResignAction),
		TickSeconds:     cfg.tick().Seconds(),
		Members:         members,
		Trace:           cfg.Trace != nil,
		Rand:            cfg.Rand,
		Regions:         f.cfg.Regions, // as the join settled it (the federation's)
		Saves:           f.saves(),
		MOM:             !cfg.NoMOM,
		Type:            cfg.FederateType,
		Host:            cfg.host(),
		RTIVersion:      version.RTI(),
		ModuleText:      f.moduleText,
		MIMText:         f.mimText,
		Clock:           joinClock(cfg.Manual),
	})
	if err != nil {
		return nil, err
	}
	if err := f.registerMetrics(cfg.Metrics); err != nil {
		return nil, err
	}
	f.sender.init(&f.mu, f, f.tr, &f.metrics, cfg.Manual, cfg.stepHold())
	// The others' replicated state as it is now (their subscriptions,
	// synchronization points...): later changes come as events, and the
	// versions keep one that also comes as an event from counting twice.
	for _, e := range f.ctl.States() {
		if e.Federate != f.handle && e.Key != keyDataPlane && e.Key != keyModeDecided {
			f.core.StateChanged(e.Federate, e.Key, e.Value, e.Version)
		}
	}
	// The inbox, the control group and their HELLOs: the first turn.
	f.mu.Lock()
	err = f.takeReady(true)
	f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	ok = true
	f.sender.start(&f.wg)
	if cfg.Manual {
		return f, nil // the driver runs it (manual.go)
	}
	if d, ok := f.tr.(transport.Direct); ok {
		d.SetDirect(f.takeDirect)
	}
	f.wg.Add(1)
	go f.run()
	return f, nil
}

// randomUint64 draws the federate's incarnation: from Config.Rand when
// set (a seed replays), else from the system's randomness.
func randomUint64(cfg Config) (uint64, error) {
	if cfg.Rand != nil {
		return cfg.Rand.Uint64() | 1, nil
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint64(b[:]) | 1, nil
}

// release closes what Join opened, for a failed Join and for Close.
func (f *Federate) release() {
	if f.tr != nil {
		f.tr.Close()
	}
	if f.ctl != nil {
		f.ctl.Close()
	}
	f.opsCancel()
	f.events.close()
}

// Handle returns the federate's handle.
func (f *Federate) Handle() FederateHandle { return f.handle }

// Name returns the federate's name (generated when none was asked for).
func (f *Federate) Name() string { return f.name }

// FDD returns the federation object model this federate uses: the
// federation's modules merged after the standard MIM. It grows when a
// joining federate adds modules.
func (f *Federate) FDD() *fomxml.FDD { return f.fdd.Load() }

// Next returns the next callback. It blocks until there is one, ctx ends,
// or the federate is closed and every queued event was returned (then
// ErrClosed). An event already queued is returned even when ctx has
// ended: Next with an ended context takes what is queued without waiting
// (RunCycles relies on it). Any goroutine may call it; events come out in
// order.
//
// A state the federate waits in ends when Next returns the callback
// that ends it, not when the RTI queues it: until Next has returned the
// TimeAdvanceGrant, the federate is still in the time advancing state
// (QueryLogicalTime says the time before, and another time advance is
// ErrInTimeAdvancingState), and likewise for TimeRegulationEnabled and
// TimeConstrainedEnabled.
func (f *Federate) Next(ctx context.Context) (Event, error) {
	f.sender.endStep(f.events)
	ev, _, err := f.events.next(ctx, true)
	if err == nil {
		f.reportCallback(ev)
		f.sender.beginStep()
	}
	return ev, err
}

// Pending returns how many events are queued.
func (f *Federate) Pending() int { return f.events.len() }

// Stats returns the federate's counters.
func (f *Federate) Stats() Stats {
	s := Stats{
		SendError: f.sender.sendErrors.Load(), Frames: f.sender.frames.Load(),
		Batches: f.sender.batches.Load(), Led: f.sender.led.Load(), Paused: f.stats.paused.Load(),
	}
	f.mu.Lock()
	cs := f.core.Stats()
	s.Reliable = f.core.ReliableStats()
	f.mu.Unlock()
	s.Sent, s.Delivered, s.Malformed, s.Gaps, s.LateTSO = cs.Sent, cs.Delivered, cs.Malformed, cs.Gaps, cs.LateTSO
	s.Blocked, s.Stale, s.Unnamed, s.Filtered, s.Spared = cs.Blocked, cs.Stale, cs.Unnamed, cs.Filtered, cs.Spared
	s.History = cs.History
	if g, ok := f.ctl.(*gossipControl); ok {
		gs := g.c.Stats()
		s.Suspicions, s.Refutations, s.LostProposals, s.LostDeferred = gs.Suspicions, gs.Refutations, gs.LostProposals, gs.LostDeferred
	}
	return s
}

// Close stops the federate without resigning: the others see it as lost.
// It waits for every goroutine the federate started. Calling it again
// does nothing.
func (f *Federate) Close() error {
	f.once.Do(func() {
		f.closed.Store(true)
		f.opsCancel()
		if f.cfg.Manual {
			f.closeManual()
			return
		}
		close(f.stop)
		<-f.done
		f.sender.wait() // the last frames are out before the transport closes
		f.release()
		f.wg.Wait()
	})
	return nil
}

// closedErr is what a service of a federate that no longer runs returns.
func (f *Federate) closedErr() error {
	f.mu.Lock()
	why := f.why
	f.mu.Unlock()
	if why == nil {
		why = ErrNotConnected
	}
	return fmt.Errorf("%w: %w", why, ErrClosed)
}

// call runs fn with the federate's state locked, then ends the turn:
// what the core has ready (deliveries, grants, frames) is acted on as
// the loop does after each event, and fn's error returned. fn runs on
// the caller's goroutine, so an update costs no switch to another
// goroutine; when no batch is being sent, the caller may send the
// frames itself (sender.sendInline).
func (f *Federate) call(fn func() error) error {
	return f.callGated(true, fn)
}

// callAny is call for the services a save or restore under way does not
// refuse (the support services, resigning, the save and restore services
// themselves).
func (f *Federate) callAny(fn func() error) error {
	return f.callGated(false, fn)
}

// callDriver is callAny for what is not a service of the federate's: the
// driver's own steps (a manual Tick or Deliver), diagnostics, reports.
// (Services report themselves to the MOM, reporting.go; these do not.)
func (f *Federate) callDriver(fn func() error) error {
	return f.callGated(false, fn)
}

// callValue is call for a service that answers with a value: get's,
// taken in the service's turn.
func callValue[T any](f *Federate, get func() (T, error)) (T, error) {
	var v T
	err := f.call(func() (err error) { v, err = get(); return err })
	return v, err
}

// callAnyValue is callValue in a turn of callAny's.
func callAnyValue[T any](f *Federate, get func() (T, error)) (T, error) {
	var v T
	err := f.callAny(func() (err error) { v, err = get(); return err })
	return v, err
}

// callGated is a service's turn: lock, call the core (fn), end the
// turn, unlock, and send what the turn leaves to its caller.
func (f *Federate) callGated(gate bool, fn func() error) error {
	if f.closed.Load() {
		return f.closedErr()
	}
	f.mu.Lock()
	if f.halted || f.why != nil {
		f.mu.Unlock()
		return f.closedErr()
	}
	f.core.HandedOver(f.events.handed.Load())
	if gate {
		if err := f.core.SaveRestoreError(); err != nil {
			f.mu.Unlock()
			return err
		}
	}
	// Whether fn sent messages matters only within a step (the step
	// hold: sender.endCall).
	step := f.sender.stepOpen()
	var sent uint64
	if step {
		sent = f.core.Stats().Sent
	}
	err := fn()
	batch, terr := f.sender.endCall(step && f.core.Stats().Sent != sent)
	f.mu.Unlock()
	f.sender.sendInline(batch)
	if err == nil {
		err = terr
	}
	return err
}

// takeReady takes the core's Ready and acts on it: group changes on the
// transport (before the frames that announce them), frames for the
// sender, events for Next, the trace, and the control-plane operations
// the core started (on goroutines of their own; a manual federate runs
// them at once and takes the core's next Ready). seal seals the frames
// being bundled. The sender calls it as a turn ends (senderHost). Under
// mu.
func (f *Federate) takeReady(seal bool) error {
	var err error
	for {
		rd := f.core.Ready(seal)
		for _, g := range rd.Groups {
			if e := f.changeGroup(g); e != nil && err == nil {
				err = e
			}
		}
		f.sender.add(rd.Frames)
		f.events.push(rd.Events...)
		f.reports.Store(f.reportBits())
		if len(rd.Trace) > 0 {
			f.writeTrace(rd.Trace)
		}
		ops := append(f.opBuf[:0], rd.Ops...)
		f.core.Advance(rd)
		f.opBuf = ops[:0]
		if len(ops) == 0 {
			return err
		}
		for _, op := range ops {
			if op.Kind == core.OpSetState && !f.cfg.Manual {
				// Writes of replicated state take effect in the order
				// the core made them (a later status must not be
				// overtaken by an earlier one); they do not block.
				f.core.OpDone(op.ID, f.runOp(f.opsCtx, op))
				continue
			}
			if !f.cfg.Manual {
				f.startOp(op)
				continue
			}
			// The in-process registry answers at once: no goroutine,
			// so that the run stays deterministic.
			f.core.OpDone(op.ID, f.runOp(context.Background(), op))
		}
		if !f.cfg.Manual {
			return err
		}
	}
}

// blocked reports whether back-pressure still holds a group a refused
// send met (the sender's back-pressure wake asks it). Under mu.
func (f *Federate) blocked() bool { return f.core.Blocked() }

// changeGroup joins or leaves a transport group.
func (f *Federate) changeGroup(g core.GroupChange) error {
	if g.Join {
		if err := f.tr.Join(g.Group); err != nil {
			return fmt.Errorf("%w: join group %d: %w", ErrRTIinternalError, g.Group, err)
		}
		return nil
	}
	if err := f.tr.Leave(g.Group); err != nil {
		return fmt.Errorf("%w: leave group %d: %w", ErrRTIinternalError, g.Group, err)
	}
	return nil
}

// writeTrace writes trace lines. A failed write ends the trace, not the
// federate.
func (f *Federate) writeTrace(b []byte) {
	if f.traceBad {
		return
	}
	if _, err := f.cfg.Trace.Write(b); err != nil {
		f.traceBad = true
		f.log.Warn().Err(err).Msg("trace write failed; the trace ends here")
	}
}

// startOp runs a control-plane operation on a goroutine of its own; its
// answer reaches the core through the control-plane queue, like every
// other control-plane input.
func (f *Federate) startOp(op core.Op) {
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		res := f.runOp(f.opsCtx, op)
		f.cev.Push(ControlEvent{Kind: opDone, opID: op.ID, opRes: res})
	}()
}

// runOp runs one control-plane operation and returns its answer.
func (f *Federate) runOp(ctx context.Context, op core.Op) core.OpResult {
	var e Entry
	var held bool
	var err error
	switch op.Kind {
	case core.OpAcquire:
		if op.Joined != nil {
			e, held, err = f.ctl.AcquireIfJoined(ctx, op.Key, op.Value, op.Joined)
			if errors.Is(err, ErrSetMemberNotJoined) {
				return core.OpResult{NotJoined: true, Holder: e.Holder, Value: e.Value, Version: e.Version}
			}
			break
		}
		e, held, err = f.ctl.Acquire(ctx, op.Key, op.Value)
	case core.OpRelease:
		e, err = f.ctl.Release(ctx, op.Key)
	case core.OpRead:
		e, err = f.ctl.Read(ctx, op.Key)
		held = e.Holder == f.handle && e.Holder != 0
	case core.OpSetState:
		err = f.ctl.SetState(op.Key, op.Value)
	case core.OpSwap:
		e, held, err = f.ctl.CompareAndSwap(ctx, op.Key, op.Expect, op.Value)
	default:
		err = fmt.Errorf("%w: unknown control-plane operation %d", ErrRTIinternalError, op.Kind)
	}
	if err != nil {
		f.log.Warn().Err(err).Str("key", op.Key).Msg("control-plane operation failed")
	}
	return core.OpResult{Held: held, Holder: e.Holder, Value: e.Value, Version: e.Version, Err: err}
}

// control hands one control-plane event to the core. Under mu.
func (f *Federate) control(ev ControlEvent) {
	if f.directoryEvent(ev) {
		return
	}
	m := core.Member{Handle: ev.Member.Handle, Name: ev.Member.Name, Type: ev.Member.Type}
	switch ev.Kind {
	case MemberJoined:
		f.core.MemberJoined(m)
	case MemberResigned:
		f.core.MemberLeft(m.Handle, false, ev.Action)
	case MemberLost:
		f.core.MemberLeft(m.Handle, true, 0)
	case SelfLost:
		f.core.SelfLost(ev.Reason)
	case StateChanged:
		f.core.StateChanged(m.Handle, ev.Key, ev.Value, ev.Version)
	case ModulesChanged:
		f.extendFDD(ev.Modules)
	case opDone:
		f.core.OpDone(ev.opID, ev.opRes)
	}
}

// takeControl hands the core every control-plane event waiting. Under mu.
func (f *Federate) takeControl() {
	evs := f.cev.Take(f.ctlBuf[:0])
	for _, ev := range evs {
		f.control(ev)
	}
	clear(evs)
	f.ctlBuf = evs[:0]
}

// run is the federate's loop: it turns ticks, frames and control-plane
// events into inputs of the core, each a turn: lock, hand the input to
// the core, end the turn, unlock.
func (f *Federate) run() {
	defer f.wg.Done()
	defer close(f.done)
	defer f.halt()
	tick := time.NewTicker(f.cfg.tick())
	defer tick.Stop()
	recv := f.tr.Recv()
	maxQueued := f.cfg.maxQueuedEvents()
	holdC := f.sender.holdTimerC() // fires when a step was held for the bound (sender.go)
	var resume <-chan struct{}     // set while reading is paused
	for {
		// A federate that does not keep up with its callbacks stops
		// reading the data plane: its receivers' flow control then holds
		// the senders back instead of its memory growing.
		in := recv
		if resume == nil && f.events.len() >= maxQueued {
			resume = f.events.below(maxQueued / 2)
			f.stats.paused.Add(1)
		}
		if resume != nil {
			in = nil
		}
		select {
		case <-f.stop:
			return
		case <-tick.C:
			f.mu.Lock()
			f.tick()
		case <-resume:
			resume = nil
			continue
		case p, ok := <-in:
			if !ok {
				f.mu.Lock()
				f.why = ErrNotConnected
				f.mu.Unlock()
				f.events.push(ConnectionLost{Reason: "data plane closed"})
				return
			}
			f.mu.Lock()
			f.step(p)
			// Step what else is waiting too (a few), before one pass
			// over the result, as takeDirect does for one read.
		more:
			for range maxStepBatch - 1 {
				select {
				case p, ok := <-in:
					if !ok {
						break more // the next select sees it closed
					}
					f.step(p)
				default:
					break more
				}
			}
		case <-f.cev.Wait():
			f.mu.Lock()
			f.takeControl()
		case <-holdC:
			// A step's frames were held for the bound: the loop sends
			// them itself as its turn ends, without the writer.
			f.mu.Lock()
			f.sender.holdExpired()
		}
		lost := f.core.Lost() // under mu still: the control-plane events were taken
		if lost {
			f.why = ErrNotConnected
		}
		batch, _ := f.sender.endTurn() // a group the transport could not join was reported to the service that asked
		f.mu.Unlock()
		f.sender.sendInline(batch)
		if lost {
			return
		}
	}
}

// maxStepBatch is how many received frames the loop steps in one turn.
const maxStepBatch = 32

// step hands a received frame to the core. Under mu.
func (f *Federate) step(p transport.Packet) {
	f.core.Step(p.Group, p.Data)
	f.metrics.stepFrames.Inc()
}

// tick advances the core's timers by one tick. Under mu.
func (f *Federate) tick() {
	f.core.Tick()
	f.publishStats()
	if f.ticks++; f.ticks%heardEvery == 0 {
		f.publishHeard()
	}
}

// heardEvery is how often, in ticks, the federate tells its failure
// detector which federates its data plane heard (gossip.Config.Heard):
// every 100 ms at the default tick.
const heardEvery = 20

// publishHeard tells the gossip control plane which federates the data
// plane heard within the last heardEvery ticks: a member whose frames
// still arrive is not proposed for removal on a suspicion alone
// (docs/gossip.md, "What a suspicion does"). Under mu.
func (f *Federate) publishHeard() {
	g, ok := f.ctl.(*gossipControl)
	if !ok {
		return
	}
	hs := f.heardBuf[:0]
	f.core.HeardWithin(heardEvery, func(h FederateHandle) { hs = append(hs, h) })
	g.noteHeard(time.Now(), hs)
	f.heardBuf = hs[:0]
}

// takeDirect steps the frames of one read on the transport's reader
// goroutine, saving the switch to the loop goroutine, when the
// federate's lock is free and reading is not paused; otherwise they go
// the usual way, through the loop. The frames are stepped together and
// acted on once, so that the promises of a time step arriving together
// cost one pass of the time core, not one each.
func (f *Federate) takeDirect(ps []transport.Packet) int {
	if !f.mu.TryLock() {
		return 0
	}
	if f.halted || f.events.len() >= f.cfg.maxQueuedEvents() {
		f.mu.Unlock()
		return 0
	}
	for _, p := range ps {
		f.step(p)
	}
	batch, _ := f.sender.endTurn()
	f.mu.Unlock()
	f.sender.sendInline(batch)
	return len(ps)
}

// halt ends the loop: the frames still waiting go to the writer as its
// last batch, and calls fail from now on.
func (f *Federate) halt() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.core.Seal()
	_ = f.takeReady(true)
	f.sender.close()
	f.halted = true
}

// callSend runs a sending service; while back-pressure holds it
// (core.ErrBlocked), it waits and retries (Config.BackPressure Block, the
// default) or returns an error wrapping ErrWouldBlock.
func (f *Federate) callSend(fn func() error) error {
	for {
		var wake <-chan struct{}
		err := f.call(func() error {
			err := fn()
			if err == core.ErrBlocked {
				wake = f.sender.unblocked()
			}
			return err
		})
		if err != core.ErrBlocked {
			return err
		}
		if f.cfg.BackPressure == BackPressureError || f.cfg.Manual {
			return fmt.Errorf("%w: %w", ErrRTIinternalError, ErrWouldBlock)
		}
		f.sender.sendHeld(true) // the caller waits: what its step holds leaves first
		select {
		case <-wake:
		case <-f.done:
			return f.closedErr()
		}
	}
}

// joinClock is the clock with which the data plane's join handshake
// tells whether a sender joined a DDM cell's group before this federate
// began hearing it (docs/dataplane.md, "Join handshake"): microseconds
// since the federate began, finer than its 5 ms ticks; none for a
// manual federate, whose ticks replay.
func joinClock(manual bool) func() int64 {
	if manual {
		return nil
	}
	begun := time.Now()
	return func() int64 { return time.Since(begun).Microseconds() }
}

// resignActionOf maps a FOM's automaticResignAction name to the action;
// ResignAction follows the same enumeration order.
func resignActionOf(name string) ResignAction {
	for i, n := range fomxml.ResignActionNames() {
		if n == name {
			return ResignAction(i + 1)
		}
	}
	return CancelThenDeleteThenDivest
}

// TimeStatus returns a snapshot of the federate's time-management state,
// for diagnostics and status pages; its Request is the time advance
// pending (cleared in the same step that queues the grant), which
// RunCycles uses to decide whether to wait.
func (f *Federate) TimeStatus() (lbts.Status, error) {
	var s lbts.Status
	err := f.callDriver(func() error { s = f.core.TimeStatus(); return nil })
	return s, err
}

// reportBits are the core's MOM reporting switches. Under mu.
func (f *Federate) reportBits() uint32 {
	var b uint32
	if f.core.ReportsServices() {
		b |= reportServices
	}
	if f.core.ReportsExceptions() {
		b |= reportExceptions
	}
	return b
}
