package peer

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/lbts"
	"github.com/meshrti/meshrti/peer/hla"
	"github.com/meshrti/meshrti/peer/reliable"
	"github.com/meshrti/meshrti/peer/transport"
)

// Federate is one joined federate: the RTIambassador side of the API as
// methods, the FederateAmbassador side as the event stream of Next.
//
// All methods are safe for concurrent use. Services run on the
// federate's own loop goroutine and return when done; none waits for
// other federates except Join and Resign. Callbacks come only from Next,
// in order.
type Federate struct {
	cfg    Config
	fdd    *fomxml.FDD
	tk     hla.TimeKind
	handle FederateHandle
	name   string
	log    zerolog.Logger
	trace  *tracer // nil unless Config.Trace is set

	ctl ControlPlane
	tr  transport.Transport

	// Guarded by mu.
	rx      wireMsg // what onData decodes into; kept messages are copied (keep)
	evBuf   []Event // apply's reused event buffer
	rel     *reliable.Endpoint
	tm      *lbts.Node
	st      *state
	members map[FederateHandle]Member
	msgID   uint64
	wbuf    []byte       // scratch for encoding messages
	resign  ResignAction // the federation's automatic resign action

	// The data-plane writer (group commit): the loop hands sealed frames
	// to the writer goroutine and seals the next bundles only when it is
	// idle again, so messages bundle up while a batch is being sent.
	wq       chan []transport.Packet
	wdone    chan struct{}      // closed when the writer exits
	writing  bool               // a batch is being sent
	lastSend time.Time          // when the last batch was taken
	pending  []transport.Packet // frames for the next batch

	// Back-pressure: callers refused because a group was blocked wait on
	// wake, closed when none of blockedOn is blocked.
	wake      chan struct{}
	blockedOn map[transport.Group]bool

	// mu serializes everything that touches the federate's state (the
	// fields above marked owned by it, and rel, tm, st, members): the
	// loop goroutine takes it for each event, service calls for their
	// work, the writer to take its next batch.
	mu     sync.Mutex
	halted bool // the loop has exited (under mu)

	events *eventQueue
	stop   chan struct{}
	done   chan struct{}
	wg     sync.WaitGroup // every goroutine this federate started
	closed atomic.Bool
	once   sync.Once

	stats   counters
	metrics fedMetrics
}

// counters are the federate's drop and traffic counters.
type counters struct {
	sent, delivered, malformed, gaps, lateTSO, sendErrors atomic.Uint64
	frames, batches, blocked, paused                      atomic.Uint64
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
	Blocked   uint64 // sends held by back-pressure (a full backlog on a group)
	Paused    uint64 // times reading stopped because MaxQueuedEvents callbacks were waiting
	// Reliable holds the reliable layer's own counters (frames dropped
	// by reason, retransmissions, NAKs).
	Reliable reliable.Stats
}

// Join creates the federation if asked, joins it, and starts the
// federate. It blocks until the federate is a member or ctx ends.
func Join(ctx context.Context, cfg Config) (*Federate, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	fdd, err := cfg.loadFDD()
	if err != nil {
		return nil, err
	}
	f := &Federate{
		cfg:     cfg,
		fdd:     fdd,
		tk:      cfg.timeKind(),
		log:     cfg.Logger,
		members: make(map[FederateHandle]Member),
		events:  newEventQueue(),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
		resign:  resignActionOf(fdd.Switches.AutomaticResignAction),
		trace:   newTracer(cfg.Trace),
	}
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
	if mc, ok := f.ctl.(manualControl); cfg.Manual && !(ok && mc.manual()) {
		return nil, errors.New("peer: Config.Manual needs a control plane from MemRegistry.ManualControl")
	}
	exists, err := f.ctl.FederationExists(ctx)
	if err != nil {
		return nil, err
	}
	if !exists {
		if !cfg.Create {
			return nil, fmt.Errorf("%w: %s", ErrFederationExecutionDoesNotExist, cfg.Federation)
		}
		if err := f.ctl.CreateFederation(ctx); err != nil && !errors.Is(err, ErrFederationExecutionAlreadyExists) {
			return nil, err
		}
	}
	f.handle, f.name, err = f.ctl.JoinFederate(ctx, cfg.FederateName, cfg.FederateType)
	if err != nil {
		return nil, err
	}

	if f.tr == nil {
		mc := cfg.Multicast
		if mc.Federation == "" {
			mc.Federation = cfg.Federation
		}
		if mc.MaxPacket == 0 {
			mc.MaxPacket = max(transport.DefaultMaxPacket, cfg.maxFrame()+64)
		}
		// Room for a full flow-control window in the kernel, so that a
		// burst is held rather than dropped and repaired (Linux caps
		// these at net.core.rmem_max and wmem_max).
		if mc.ReadBuffer == 0 {
			mc.ReadBuffer = 4 << 20
		}
		if mc.WriteBuffer == 0 {
			mc.WriteBuffer = 4 << 20
		}
		if f.tr, err = transport.NewUDP(mc); err != nil {
			return nil, fmt.Errorf("%w: data plane: %w", ErrRTIinternalError, err)
		}
	}
	incarnation := cfg.Incarnation
	if incarnation == 0 {
		var inc [8]byte
		if _, err := rand.Read(inc[:]); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrRTIinternalError, err)
		}
		incarnation = binary.BigEndian.Uint64(inc[:])
	}
	f.rel, err = reliable.New(reliable.Config{
		Self:        reliable.NodeID(f.handle),
		Incarnation: incarnation,
		Federation:  cfg.Federation,
		Key:         cfg.Key,
		Bundle:      true,
		// A receiver may stall its senders for StallTimeout before they
		// go on without it (it is then repaired or told of gaps).
		AckTimeoutTicks: int(max(1, cfg.stallTimeout()/cfg.tick())),
		MaxFrame:        cfg.maxFrame(),
		MaxMessage:      cfg.MaxMessage,
		Window:          cfg.Window,
		Inbox:           func(id reliable.NodeID) transport.Group { return inboxGroup(FederateHandle(id)) },
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRTIinternalError, err)
	}
	// Control traffic (time messages, queries, resigns) is low-rate and
	// goes to every member: ACKs from all of them would cost more than
	// they save, and the history covers repairs.
	f.rel.WithoutFlowControl(controlGroup)
	// Enable requests are acknowledged to the requester's inbox alone
	// (lbts.Config.DirectAcks): a federation of a thousand enabling
	// would otherwise broadcast every acknowledgement to everyone.
	f.tm, err = lbts.New(lbts.Config{Self: lbts.FederateID(f.handle), DirectAcks: true})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRTIinternalError, err)
	}
	f.st = newState(fdd, f.handle)
	for _, m := range f.ctl.Members() {
		if m.Handle != f.handle {
			f.members[m.Handle] = m
			f.tm.AddFederate(lbts.FederateID(m.Handle))
		}
	}
	// The inbox is a transport group only: nothing is sent on it as a
	// stream of its own.
	if err := f.tr.Join(inboxGroup(f.handle)); err != nil {
		return nil, fmt.Errorf("%w: join the inbox group: %w", ErrRTIinternalError, err)
	}
	if err := f.joinGroups([]transport.Group{controlGroup}); err != nil {
		return nil, err
	}
	ok = true
	if f.trace != nil {
		f.traceJoin()
	}
	if err := f.registerMetrics(cfg.Metrics); err != nil {
		return nil, err
	}
	f.blockedOn = make(map[transport.Group]bool)
	if cfg.Manual {
		return f, nil // the driver runs it (manual.go)
	}
	f.wq = make(chan []transport.Packet, 1)
	f.wdone = make(chan struct{})
	if d, ok := f.tr.(transport.Direct); ok {
		d.SetDirect(f.takeDirect)
	}
	f.wg.Add(2)
	go f.write()
	go f.run()
	return f, nil
}

// release closes what Join opened, for a failed Join and for Close.
func (f *Federate) release() {
	if f.tr != nil {
		f.tr.Close()
	}
	if f.ctl != nil {
		f.ctl.Close()
	}
	f.events.close()
}

// Handle returns the federate's handle.
func (f *Federate) Handle() FederateHandle { return f.handle }

// Name returns the federate's name (generated when none was asked for).
func (f *Federate) Name() string { return f.name }

// FDD returns the federation object model this federate uses.
func (f *Federate) FDD() *fomxml.FDD { return f.fdd }

// Next returns the next callback. It blocks until there is one, ctx ends,
// or the federate is closed and every queued event was returned (then
// ErrClosed). Any goroutine may call it; events come out in order.
func (f *Federate) Next(ctx context.Context) (Event, error) { return f.events.next(ctx) }

// Pending returns how many events are queued.
func (f *Federate) Pending() int { return f.events.len() }

// Stats returns the federate's counters.
func (f *Federate) Stats() Stats {
	s := Stats{
		Sent: f.stats.sent.Load(), Delivered: f.stats.delivered.Load(), Malformed: f.stats.malformed.Load(),
		Gaps: f.stats.gaps.Load(), LateTSO: f.stats.lateTSO.Load(), SendError: f.stats.sendErrors.Load(),
		Frames: f.stats.frames.Load(), Batches: f.stats.batches.Load(), Blocked: f.stats.blocked.Load(),
		Paused: f.stats.paused.Load(),
	}
	_ = f.call(func() error { s.Reliable = f.rel.Stats(); return nil })
	return s
}

// Close stops the federate without resigning: the others see it as lost.
// It waits for every goroutine the federate started. Calling it again
// does nothing.
func (f *Federate) Close() error {
	f.once.Do(func() {
		f.closed.Store(true)
		if f.cfg.Manual {
			f.closeManual()
			return
		}
		close(f.stop)
		<-f.done
		<-f.wdone // the last frames are out before the transport closes
		f.release()
		f.wg.Wait()
	})
	return nil
}

// call runs fn with the federate's state locked, then acts on what it
// left ready (deliveries, grants, frames) as the loop does after each
// event, and returns fn's error. fn runs on the caller's goroutine, so an
// update costs no switch to another goroutine; when the writer is idle,
// the caller sends the frames itself (see lead).
func (f *Federate) call(fn func() error) error {
	if f.closed.Load() {
		return ErrClosed
	}
	f.mu.Lock()
	if f.halted {
		f.mu.Unlock()
		return ErrClosed
	}
	err := fn()
	f.endTurn()
	return err
}

// endTurn ends a turn under mu: it acts on what is ready (settle),
// unlocks, and sends the frames itself when it takes the lead.
func (f *Federate) endTurn() {
	f.settle()
	if f.cfg.Manual {
		f.sendManual()
		return
	}
	batch := f.takeLead()
	f.mu.Unlock()
	f.lead(batch)
}

// step hands a received frame to the reliable endpoint. Under mu.
func (f *Federate) step(p transport.Packet) {
	f.rel.Step(p.Group, p.Data) // bad frames are counted by the endpoint
	f.metrics.stepFrames.Inc()
}

// settle acts on everything ready after an event or a call: deliveries,
// grants, frames (sealed unless the writer is busy, so that they bundle
// up meanwhile), and waiting senders. Under mu.
func (f *Federate) settle() {
	f.flush()
	if !f.writing {
		f.rel.Flush()
		f.flush()
	}
	f.wakeBlocked()
}

// takeLead makes the caller the writer of the pending frames when no one
// is writing and returns them, if the data plane was quiet for
// leadQuiet: a lone message then leaves without waking another
// goroutine. In a stream of messages, the frames go to the writer
// goroutine instead, and the caller goes on while they are sent, so that
// the next ones bundle up. Returns nil when there is nothing for the
// caller to send. Under mu.
func (f *Federate) takeLead() []transport.Packet {
	if f.writing || f.halted || len(f.pending) == 0 {
		return nil
	}
	b := f.pending
	f.pending = nil
	f.writing = true
	now := time.Now()
	quiet := now.Sub(f.lastSend) >= leadQuiet
	f.lastSend = now
	if !quiet {
		f.wq <- b // the writer goroutine is idle: no one was writing
		return nil
	}
	return b
}

// leadQuiet is how long the data plane must have been quiet for a caller
// to send its frames itself.
const leadQuiet = 50 * time.Microsecond

// lead sends batch, taken by takeLead, on the caller's goroutine, without
// mu: a frame goes out without waking another goroutine. What bundled up
// meanwhile goes to the writer goroutine, so that no caller keeps
// writing for others.
func (f *Federate) lead(batch []transport.Packet) {
	if batch == nil {
		return
	}
	f.sendBatch(batch)
	f.mu.Lock()
	if next := f.nextBatch(); next != nil {
		f.wq <- next // the writer goroutine is idle: we were writing
	}
	f.mu.Unlock()
}

// run is the federate's loop: it turns ticks, frames and membership
// events into calls on the reliable endpoint, the time core and the
// declaration state, each under mu.
func (f *Federate) run() {
	defer f.wg.Done()
	defer close(f.done)
	defer f.halt()
	tick := time.NewTicker(f.cfg.tick())
	defer tick.Stop()
	recv := f.tr.Recv()
	members := f.ctl.Events()
	maxQueued := f.cfg.maxQueuedEvents()
	var resume <-chan struct{} // set while reading is paused
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
		case ev, ok := <-members:
			if !ok {
				members = nil
				continue
			}
			f.mu.Lock()
			f.onMember(ev)
		}
		f.endTurn()
	}
}

// maxStepBatch is how many received frames the loop steps in one turn.
const maxStepBatch = 32

// tick advances the timers of the reliable endpoint and the time core by
// one tick. Under mu.
func (f *Federate) tick() {
	f.rel.Tick()
	f.tm.Tick()
	f.publishStats()
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
	f.endTurn()
	return len(ps)
}

// halt ends the loop: the frames still waiting go to the writer as its
// last batch, and calls fail with ErrClosed from now on.
func (f *Federate) halt() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.flush()
	f.rel.Flush()
	f.flush()
	if len(f.pending) > 0 {
		f.wq <- f.pending // room: the writer holds the batch it sends, if any
		f.pending = nil
	}
	f.halted = true
	close(f.wq)
}

// write is the writer goroutine: it sends each batch of frames handed to
// it, in order, and when done takes the next one itself: whatever bundled
// up while it was sending.
func (f *Federate) write() {
	defer f.wg.Done()
	defer close(f.wdone)
	for batch := range f.wq {
		for batch != nil {
			f.sendBatch(batch)
			f.mu.Lock()
			batch = f.nextBatch()
			f.mu.Unlock()
		}
	}
}

// sendBatch hands frames to the transport, in order: one system call
// with batch I/O.
func (f *Federate) sendBatch(batch []transport.Packet) {
	if bs, ok := f.tr.(transport.BatchSender); ok {
		n, err := bs.SendBatch(batch)
		if err != nil {
			f.stats.sendErrors.Add(uint64(len(batch) - n))
		}
	} else {
		for _, p := range batch {
			if err := f.tr.Send(p.Group, p.Data); err != nil {
				f.stats.sendErrors.Add(1)
			}
		}
	}
	f.stats.frames.Add(uint64(len(batch)))
	f.stats.batches.Add(1)
	if f.metrics.batchFrames != nil {
		f.metrics.batchFrames.Observe(uint64(len(batch)))
		n := 0
		for _, p := range batch {
			n += len(p.Data)
		}
		f.metrics.batchBytes.Observe(uint64(n))
	}
}

// nextBatch seals what waits and returns it as the writer's next batch,
// or nil, leaving the writer idle. Under mu.
func (f *Federate) nextBatch() []transport.Packet {
	if f.halted {
		f.writing = false
		return nil
	}
	f.rel.Flush()
	f.flush()
	b := f.pending
	f.pending = nil
	f.writing = len(b) > 0
	if f.writing {
		f.lastSend = time.Now()
	}
	return b
}

// blocked reports whether a reliable message of outs would go to a group
// whose backlog is full, and then remembers the group.
func (f *Federate) blocked(outs []outMsg) bool {
	for _, o := range outs {
		if o.reliable && f.rel.Blocked(o.group) {
			f.blockedOn[o.group] = true
			f.stats.blocked.Add(1)
			return true
		}
	}
	return false
}

// wakeBlocked releases the callers waiting for back-pressure to end once
// none of the groups they met is blocked.
func (f *Federate) wakeBlocked() {
	if f.wake == nil {
		return
	}
	for g := range f.blockedOn {
		if f.rel.Blocked(g) {
			return
		}
		delete(f.blockedOn, g)
	}
	close(f.wake)
	f.wake = nil
}

// errBlocked is what a sending service returns inside the loop when
// back-pressure holds it; callSend waits or turns it into ErrWouldBlock.
var errBlocked = errors.New("peer: data plane backlog full")

// callSend runs a sending service on the loop; while back-pressure holds
// it, it waits and retries (Config.BackPressure Block, the default) or
// returns an error wrapping ErrWouldBlock.
func (f *Federate) callSend(fn func() error) error {
	for {
		var wake chan struct{}
		err := f.call(func() error {
			err := fn()
			if err == errBlocked {
				if f.wake == nil {
					f.wake = make(chan struct{})
				}
				wake = f.wake
			}
			return err
		})
		if err != errBlocked {
			return err
		}
		if f.cfg.BackPressure == BackPressureError || f.cfg.Manual {
			return fmt.Errorf("%w: %w", ErrRTIinternalError, ErrWouldBlock)
		}
		select {
		case <-wake:
		case <-f.done:
			return ErrClosed
		}
	}
}

// flush acts on everything the reliable endpoint and the time core have
// ready, until neither has more.
func (f *Federate) flush() {
	for i := 0; i < 64; i++ {
		rd := f.rel.Ready()
		tr := f.tm.Ready()
		if rd.Empty() && !timeReady(tr) {
			return
		}
		for _, o := range rd.Out {
			f.pending = append(f.pending, transport.Packet{Group: o.Group, Data: o.Frame})
		}
		// Where each sender's stream starts for us: nothing below is
		// owed, so the time core must not wait for it.
		for _, st := range rd.Starts {
			f.tm.Gap(lbts.FederateID(st.From), uint32(st.Group), st.Seq-1)
		}
		for _, d := range rd.Deliver {
			f.onData(d)
		}
		for _, g := range rd.Gaps {
			f.stats.gaps.Add(1)
			f.events.push(MessagesLost{Producer: FederateHandle(g.From), Messages: g.ToSeq - g.FromSeq + 1})
			f.log.Warn().Uint64("from", uint64(g.From)).Uint32("group", uint32(g.Group)).
				Uint64("fromSeq", g.FromSeq).Uint64("toSeq", g.ToSeq).Msg("messages lost for good")
			f.tm.Gap(lbts.FederateID(g.From), uint32(g.Group), g.ToSeq)
		}
		f.rel.Advance(rd)
		f.actOnTime(tr)
	}
}

// sendTime sends the time core's Message m as o says (to the group, or
// to one federate).
func (f *Federate) sendTime(m *lbts.Message, o outMsg) {
	b, err := m.MarshalBinary()
	if err != nil {
		f.log.Error().Err(err).Msg("encode time message")
		return
	}
	o.msg = &wireMsg{Kind: kindTime, TimeMsg: b}
	f.send(o)
}

func timeReady(rd lbts.Ready) bool {
	return len(rd.Messages) > 0 || len(rd.Directed) > 0 || len(rd.Deliver) > 0 || rd.Grant != nil ||
		rd.RegulationEnabled != nil || rd.ConstrainedEnabled != nil
}

// actOnTime carries out what the time core decided: broadcast its state,
// deliver time-stamp-order messages in order, then grants.
func (f *Federate) actOnTime(rd lbts.Ready) {
	for _, m := range rd.Messages {
		f.sendTime(&m, outMsg{group: controlGroup, reliable: true})
	}
	for _, d := range rd.Directed {
		f.sendTime(&d.Message, outMsg{group: controlGroup, to: FederateHandle(d.To)})
	}
	received := TimeStamp
	if !f.tm.Constrained() {
		received = Receive // disableTimeConstrained released the queue
	}
	for _, d := range rd.Deliver {
		p, ok := d.Payload.(tsoPayload)
		if !ok {
			continue
		}
		f.applyDelivered(p.msg, delivery{from: p.from, received: received, reliable: p.reliable})
	}
	if rd.RegulationEnabled != nil {
		if f.trace != nil {
			f.traceTime("regulation", *rd.RegulationEnabled)
		}
		f.events.push(TimeRegulationEnabled{Time: f.tk.Make(*rd.RegulationEnabled)})
	}
	if rd.ConstrainedEnabled != nil {
		if f.trace != nil {
			f.traceTime("constrained", *rd.ConstrainedEnabled)
		}
		f.events.push(TimeConstrainedEnabled{Time: f.tk.Make(*rd.ConstrainedEnabled)})
	}
	if rd.Grant != nil {
		if f.trace != nil {
			f.traceTime("grant", *rd.Grant)
		}
		f.events.push(TimeAdvanceGrant{Time: f.tk.Make(*rd.Grant), Request: rd.GrantKind})
	}
	f.tm.Advance(rd)
}

// tsoPayload is what a queued time-stamp-order message carries through
// the time core.
type tsoPayload struct {
	msg      *wireMsg
	from     FederateHandle
	reliable bool
}

// onData handles one in-order delivery from the reliable layer. Every
// reliable delivery is reported to the time core exactly once, as
// received (Received) or as a queued time-stamped message (ReceiveTSO),
// so that promises covering it can count.
func (f *Federate) onData(d reliable.Delivery) {
	from := FederateHandle(d.From)
	if from == f.handle {
		return
	}
	m := &f.rx
	*m = wireMsg{Pairs: m.Pairs[:0]}
	if err := decodeInto(d.Payload, m, true); err != nil {
		f.received(d)
		f.stats.malformed.Add(1)
		f.log.Debug().Err(err).Uint64("from", uint64(from)).Msg("dropped malformed message")
		return
	}
	f.stats.delivered.Add(1)
	if d.Reliable && m.TSO && m.HasTime && f.tm.Constrained() && m.Kind != kindTime {
		err := f.tm.ReceiveTSO(lbts.TSO{
			From: lbts.FederateID(from), Group: uint32(d.Group), Seq: d.Seq, Time: m.Time,
			Payload: tsoPayload{msg: keep(m), from: from, reliable: d.Reliable},
		})
		if err != nil {
			f.stats.lateTSO.Add(1)
			f.log.Warn().Err(err).Uint64("from", uint64(from)).Msg("refused time-stamped message")
		}
		return
	}
	f.received(d)
	switch m.Kind {
	case kindTime:
		tm, err := decodeTimeMsg(m.TimeMsg, lbts.FederateID(f.handle))
		if err != nil {
			f.stats.malformed.Add(1)
			return
		}
		if tm.From != lbts.FederateID(from) {
			// Only a federate speaks for its own time.
			f.stats.malformed.Add(1)
			return
		}
		if err := f.tm.Step(tm); err != nil {
			f.log.Debug().Err(err).Uint64("from", uint64(from)).Msg("time message refused")
		}
	case kindQuery:
		for _, o := range f.st.answerQuery(m.Class) {
			f.send(o)
		}
	case kindResign:
		f.forget(from, MemberResigned)
	case kindRetract:
		f.onRetract(m, from, uint32(d.Group))
	default:
		f.deliverRO(m, delivery{from: from, received: Receive, reliable: d.Reliable})
	}
}

// keep returns a copy of the reused receive message m that may outlive
// this delivery (its values still point into the frame, which is not
// reused).
func keep(m *wireMsg) *wireMsg {
	c := *m
	c.Pairs = slices.Clone(m.Pairs)
	return &c
}

// decodeTimeMsg decodes a time message, binary or (from older members)
// msgpack, for the federate self. The msgpack case is apart so that the
// common one keeps its Message off the heap.
func decodeTimeMsg(b []byte, self lbts.FederateID) (lbts.Message, error) {
	if !lbts.IsBinary(b) {
		return decodeTimeMsgpack(b)
	}
	var tm lbts.Message
	err := tm.UnmarshalBinaryFor(b, self)
	return tm, err
}

func decodeTimeMsgpack(b []byte) (lbts.Message, error) {
	var tm lbts.Message
	err := msgpack.Unmarshal(b, &tm)
	return tm, err
}

func (f *Federate) received(d reliable.Delivery) {
	if d.Reliable {
		f.tm.Received(lbts.FederateID(d.From), uint32(d.Group), d.Seq)
	}
}

// onMember handles a membership change from the control plane.
func (f *Federate) onMember(ev MemberEvent) {
	h := ev.Member.Handle
	if h == f.handle {
		return
	}
	switch ev.Kind {
	case MemberJoined:
		if _, ok := f.members[h]; ok {
			return
		}
		f.members[h] = ev.Member
		f.tm.AddFederate(lbts.FederateID(h))
		f.events.push(FederateJoined{Federate: h, Name: ev.Member.Name, Type: ev.Member.Type})
	case MemberResigned, MemberLost:
		f.forget(h, ev.Kind)
	}
}

// forget removes a federate that resigned or was lost from time
// management and the data plane, and removes its objects.
func (f *Federate) forget(h FederateHandle, why MemberEventKind) {
	m, ok := f.members[h]
	if !ok {
		return
	}
	if f.trace != nil {
		f.traceForget(h, m.Name, why)
	}
	delete(f.members, h)
	f.tm.RemoveFederate(lbts.FederateID(h))
	f.rel.ForgetSender(reliable.NodeID(h))
	f.events.push(f.st.removeFederate(h, f.resign.Deletes() || why == MemberResigned)...)
	if why == MemberLost {
		f.events.push(FederateLost{Federate: h, Name: m.Name})
	} else {
		f.events.push(FederateResigned{Federate: h, Name: m.Name})
	}
}

// send hands one message to the reliable layer.
func (f *Federate) send(o outMsg) (uint64, error) {
	f.msgID++
	o.msg.ID = f.msgID
	f.wbuf = appendMsg(f.wbuf[:0], o.msg) // Send copies it
	var seq uint64
	var err error
	if o.to != 0 {
		err = f.rel.SendAimed(o.group, reliable.NodeID(o.to), f.wbuf)
	} else {
		seq, err = f.rel.Send(o.group, f.wbuf, o.reliable)
	}
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrRTIinternalError, err)
	}
	f.stats.sent.Add(1)
	return seq, nil
}

func (f *Federate) joinGroups(gs []transport.Group) error {
	for _, g := range gs {
		if err := f.tr.Join(g); err != nil {
			return fmt.Errorf("%w: join group %d: %w", ErrRTIinternalError, g, err)
		}
		f.rel.Join(g)
		f.tm.Joined(uint32(g))
	}
	return nil
}

func (f *Federate) leaveGroups(gs []transport.Group) error {
	for _, g := range gs {
		f.rel.Leave(g)
		f.tm.Left(uint32(g))
		if err := f.tr.Leave(g); err != nil {
			return fmt.Errorf("%w: leave group %d: %w", ErrRTIinternalError, g, err)
		}
	}
	return nil
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
// for diagnostics and status pages.
func (f *Federate) TimeStatus() (lbts.Status, error) {
	var s lbts.Status
	err := f.call(func() error { s = f.tm.Status(); return nil })
	return s, err
}
