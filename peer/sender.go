package peer

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/meshrti/meshrti/peer/transport"
)

// A sender is the federate's send path: it takes the frames the core
// makes and hands them to the transport, in the order the core made
// them, in batches. docs/dataplane.md says why it works as it does
// ("Bundles, fragments, and when frames leave", "The step send"); this
// is how. Its words:
//
//   - A turn is one input of the federate handled under its lock: a
//     service call, a tick, received frames, a control-plane event. A
//     turn ends with the federate acting on what the core has ready
//     (senderHost.takeReady), which hands the frames to the sender (add):
//     they wait in the pending list.
//   - A batch is the frames handed to the transport together: one
//     system call (sendmmsg) with batch I/O.
//   - Group commit: the core seals the messages it is bundling into
//     frames only when no batch is being sent. While one is, the
//     messages of the next turns bundle up in the core's open frames;
//     when the batch is out, whoever sent it seals them and takes them as
//     the next batch (nextBatch). An idle federate's message thus leaves
//     at once, a busy federate's bundle up.
//   - The writer is the goroutine that sends batches a turn hands it.
//     A turn that finds no batch being sent sends its frames inline, on
//     its own goroutine after the lock is released (sendInline), when
//     the data plane has been quiet for quietSpell since the last send
//     ended, or when the turn is one whose caller waits for an answer
//     (sendAtOnce: a time advance request, a resign, a call held by
//     back-pressure): a lone message then wakes no other goroutine. Else
//     the writer sends them, and the caller goes on while they are in the
//     kernel. Stats.Led counts the inline batches.
//   - The step hold: during a step (from Next returning an event until
//     the federate comes back to Next) what the service calls send is
//     held, unsealed, and leaves in one batch when the federate comes
//     back (endStep), when a call sends at once, or when the loop sends
//     for its own reasons; never later than holdBound after the hold
//     began (the timer, holdExpired).
//   - The back-pressure wake: a send refused because a group's backlog
//     is full (core.ErrBlocked) waits on the channel unblocked returns,
//     closed by the first turn or batch after which no group blocks.
//
// The lock protocol. The sender has no lock of its own: whether the
// core seals now depends on whether a batch is being sent, so its state
// is guarded by the federate's lock, mu, with the core's. Each method
// says on which side of mu it runs: "Under mu" ones are called with mu
// held and return with it held; the others take and release it
// themselves, and are called without it. No method is entered with mu
// and left without it. A turn therefore ends in two parts:
//
//	mu.Lock()
//	... call the core ...
//	batch, err := s.endTurn() // or endCall: the core's Ready acted on
//	mu.Unlock()
//	s.sendInline(batch) // nil unless this goroutine sends the batch
//
// A manual federate (Config.Manual) has no writer, no hold and no
// quiet rule: each turn's frames are its caller's to send.
type sender struct {
	mu      *sync.Mutex // the federate's lock
	host    senderHost
	tr      transport.Transport
	manual  bool
	metrics *fedMetrics

	// Counters, read by Federate.Stats and the metrics.
	sendErrors, frames, batches, led atomic.Uint64

	// Guarded by mu.
	pending  []transport.Packet // frames for the next batch, in order
	spare    []transport.Packet // a batch sent, emptied, for pending to reuse (recycle)
	writing  bool               // a batch is being sent (by the writer or inline)
	lastSend time.Time          // when the last batch was sent
	atOnce   bool               // the turn under way sends its frames as it ends (sendAtOnce)
	closed   bool               // the writer has its last batch (close)
	wake     chan struct{}      // the back-pressure wake, while a send waits for it

	// The writer: wq hands it a batch (room for one: a batch is handed
	// only by the one who set writing); wdone is closed when it exits.
	wq    chan []transport.Packet
	wdone chan struct{}

	// The step hold. holding says pending holds frames of the step under
	// way, since holdStart (both under mu); held mirrors holding for
	// Next, which reads it without mu; inStep, that Next returned an
	// event and its caller has not come back. holdTimer bounds the hold
	// (the loop sends when it fires); holdBound is 0 when the hold is
	// off.
	holding   bool
	holdStart time.Time
	held      atomic.Bool
	inStep    atomic.Bool
	holdTimer *time.Timer
	holdBound time.Duration
}

// senderHost is the federate as its sender sees it. Both methods run
// under mu.
type senderHost interface {
	// takeReady acts on what the core has ready, handing its frames to
	// the sender's add; with seal, the core first seals the messages it
	// is bundling into frames. It returns what went wrong on the
	// transport (a group it could not join).
	takeReady(seal bool) error
	// blocked reports whether back-pressure still holds a group a
	// refused send met (core.Core.Blocked).
	blocked() bool
}

// init readies s to send on tr for host, whose lock is mu. A manual
// sender starts no goroutine and holds nothing; holdBound is the step
// hold's bound (0: off).
func (s *sender) init(mu *sync.Mutex, host senderHost, tr transport.Transport, m *fedMetrics, manual bool, holdBound time.Duration) {
	s.mu, s.host, s.tr, s.metrics, s.manual = mu, host, tr, m, manual
	if manual {
		return
	}
	s.wq = make(chan []transport.Packet, 1)
	s.wdone = make(chan struct{})
	if s.holdBound = holdBound; s.holdBound > 0 {
		s.holdTimer = time.NewTimer(time.Hour)
		s.holdTimer.Stop()
	}
}

// start sends the frames the turns so far made: a manual sender on the
// caller's goroutine; otherwise they are the first batch of the writer
// goroutine, which start starts (in wg, which its owner waits for).
func (s *sender) start(wg *sync.WaitGroup) {
	s.mu.Lock()
	first := s.pending
	s.pending = nil
	if !s.manual && len(first) > 0 {
		s.wq <- first // the writer is not running yet: room for one
		s.writing = true
		first = nil
	}
	s.mu.Unlock()
	if s.manual {
		s.sendInline(first)
		return
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.write()
	}()
}

// add appends a turn's frames to the pending list. Under mu.
func (s *sender) add(frames []transport.Packet) {
	if s.pending == nil && len(frames) > 0 {
		s.pending, s.spare = s.spare, nil
	}
	s.pending = append(s.pending, frames...)
}

// endTurn ends a turn of the loop or the transport's reader: the core's
// Ready is acted on (sealed when no batch is being sent), what the step
// holds is released with it, and the batch is returned when the caller
// is to send it inline (sendInline, once mu is released), else nil. The
// error is takeReady's. Under mu.
func (s *sender) endTurn() ([]transport.Packet, error) {
	return s.end(false)
}

// endCall is endTurn for a service call; sent says whether it sent
// messages (only counted during a step). During a step the call's
// frames are held for the step's one batch, left to bundle up in the
// core as they do while a batch is being sent (holdsStep). Under mu.
func (s *sender) endCall(sent bool) ([]transport.Packet, error) {
	return s.end(sent || s.holding)
}

func (s *sender) end(call bool) ([]transport.Packet, error) {
	hold := call && s.holdsStep()
	err := s.host.takeReady(!s.writing && !hold)
	if s.manual {
		b := s.pending
		s.pending = nil
		return b, err
	}
	s.wakeBlocked()
	if hold {
		s.startHold()
		return nil, err
	}
	return s.takeBatch(), err
}

// sendAtOnce makes the turn under way send its frames, and what the
// step holds, as it ends, whenever no batch is being sent, quiet data
// plane or not: its caller waits for an answer to them (a time advance
// request waits for the grant), so nothing of its caller's can bundle
// up behind them, and in lockstep the federates send at about the same
// moment, so the data plane is rarely quiet then. Under mu.
func (s *sender) sendAtOnce() { s.atOnce = true }

// takeBatch makes the pending frames the next batch when no batch is
// being sent, and returns it when the caller is to send it inline: the
// turn sends at once, or the data plane was quiet for quietSpell since
// the last batch went out (a lone message then leaves without waking
// another goroutine). In a stream of turns the batch goes to the writer
// goroutine instead, and the caller goes on while it is sent, so that
// the next frames bundle up. Returns nil when there is nothing for the
// caller to send. Under mu.
//
// Quiet counts from the end of the last send, not its start: a federate
// in lockstep (a time step, a round trip, an ownership hand-off) sends
// once per exchange, and the exchange, which includes its own send, is
// often shorter than quietSpell from start to start; counted so, every
// such send went through the writer goroutine, one goroutine switch more
// per step. A stream of calls still goes to the writer: the next call
// comes within a microsecond or two of the writer going idle.
func (s *sender) takeBatch() []transport.Packet {
	atOnce := s.atOnce
	s.atOnce = false
	if s.writing || s.closed || len(s.pending) == 0 {
		if !s.writing {
			s.dropHold() // sealed, and nothing came of it: nothing is held
		}
		return nil
	}
	b := s.pending
	s.pending = nil
	s.writing = true
	s.dropHold()
	if !atOnce && time.Since(s.lastSend) < quietSpell {
		s.wq <- b // the writer goroutine is idle: no one was writing
		return nil
	}
	return b
}

// quietSpell is how long the data plane must have been quiet, from the
// end of the last send, for a turn to send its frames inline.
const quietSpell = 20 * time.Microsecond

// sendInline sends batch, returned by the end of a turn, on the caller's
// goroutine, without mu: a frame goes out without waking another
// goroutine. What bundled up meanwhile goes to the writer goroutine, so
// that no caller keeps writing for others. A manual sender's batch is
// just sent.
func (s *sender) sendInline(batch []transport.Packet) {
	if len(batch) == 0 {
		return
	}
	s.sendBatch(batch)
	if s.manual {
		return
	}
	s.led.Add(1)
	s.mu.Lock()
	s.recycle(batch)
	if next := s.nextBatch(); next != nil {
		s.wq <- next // the writer goroutine is idle: we were writing
	}
	s.mu.Unlock()
}

// write is the writer goroutine: it sends each batch handed to it, in
// order, and when done takes the next one itself: whatever bundled up
// while it was sending.
func (s *sender) write() {
	defer close(s.wdone)
	for batch := range s.wq {
		for batch != nil {
			s.sendBatch(batch)
			s.mu.Lock()
			s.recycle(batch)
			batch = s.nextBatch()
			s.mu.Unlock()
		}
	}
}

// nextBatch seals what waits and returns it as the next batch, or nil,
// no batch being sent any more. It is called when a batch has just been
// sent. Under mu.
func (s *sender) nextBatch() []transport.Packet {
	s.lastSend = time.Now()
	if s.closed {
		s.writing = false
		return nil
	}
	_ = s.host.takeReady(true) // a group the transport could not join was reported to the call that asked
	s.wakeBlocked()
	b := s.pending
	s.pending = nil
	s.writing = len(b) > 0
	s.dropHold()
	return b
}

// sendBatch hands frames to the transport, in order: one system call
// with batch I/O.
func (s *sender) sendBatch(batch []transport.Packet) {
	if bs, ok := s.tr.(transport.BatchSender); ok {
		n, err := bs.SendBatch(batch)
		if err != nil {
			s.sendErrors.Add(uint64(len(batch) - n))
		}
	} else {
		for _, p := range batch {
			if err := s.tr.Send(p.Group, p.Data); err != nil {
				s.sendErrors.Add(1)
			}
		}
	}
	s.frames.Add(uint64(len(batch)))
	s.batches.Add(1)
	if s.metrics.batchFrames != nil {
		s.metrics.batchFrames.Observe(uint64(len(batch)))
		n := 0
		for _, p := range batch {
			n += len(p.Data)
		}
		s.metrics.batchBytes.Observe(uint64(n))
	}
}

// recycle keeps batch, sent, for the next frames to go in (add), so
// that a federate sending a batch per step does not allocate one each:
// with the writer, two arrays alternate. The transport keeps no batch
// (transport.BatchSender); the packets are cleared so that the array
// holds no frame. Under mu.
func (s *sender) recycle(batch []transport.Packet) {
	if s.spare != nil || cap(batch) > maxSpareBatch {
		return
	}
	clear(batch)
	s.spare = batch[:0]
}

// maxSpareBatch is the largest batch array recycle keeps.
const maxSpareBatch = 1024

// close ends sending: the frames waiting go to the writer as its last
// batch, nothing is held any more, and the writer exits once it has sent
// it. A manual sender returns its last frames for the caller to send
// (sendInline). Under mu.
func (s *sender) close() []transport.Packet {
	s.closed = true
	last := s.pending
	s.pending = nil
	s.dropHold()
	if s.manual {
		return last
	}
	if s.holdTimer != nil {
		s.holdTimer.Stop()
	}
	if len(last) > 0 {
		s.wq <- last // room: the writer holds the batch it sends, if any
	}
	close(s.wq)
	return nil
}

// wait returns once the writer has sent its last batch and exited.
func (s *sender) wait() {
	if !s.manual {
		<-s.wdone
	}
}

// unblocked returns the back-pressure wake: a channel closed once no
// group a refused send met is blocked any more. Under mu.
func (s *sender) unblocked() <-chan struct{} {
	if s.wake == nil {
		s.wake = make(chan struct{})
	}
	return s.wake
}

// wakeBlocked closes the back-pressure wake once no group blocks. Under
// mu.
func (s *sender) wakeBlocked() {
	if s.wake == nil || s.host.blocked() {
		return
	}
	close(s.wake)
	s.wake = nil
}

// The step hold: what a federate's service calls send during one step
// leaves in one batch (docs/dataplane.md, "The step send").
//
// A step runs from Next returning an event (also through Dispatch and
// the Evoke services, which call Next) until the federate comes back to
// Next. The messages each call of the step sends are left in the core's
// open bundles, as they are while a batch is being sent, and what is
// sealed meanwhile stays in pending, in order, instead of being sent as
// the call ends; they leave together when it comes back to Next: inline
// when Next is going to wait, else as takeBatch decides (see endStep).
// They also leave at once when a call sends at once (sendAtOnce) or is
// held back by back-pressure (Federate.callSend), when the federate is
// leaving (Resign, Close), and whenever the loop sends for its own
// reasons (an acknowledgement, a repair): held frames are only ever sent
// earlier than the bound, never reordered. The hold is bounded: a call
// ending holdBound or more after the hold began sends everything, and a
// timer lets the loop send what a federate that computes after its last
// call still holds; either way the rest of that step is sent as without
// the hold (a stream of calls bundles up in the writer, as before).

// defaultStepHold is the hold's bound when Config.StepHold is zero.
// Tens of microseconds cover the service calls a federate makes in
// answer to one callback (a release and a request take a few each), and
// stay well below a loopback round trip; see docs/dataplane.md for how
// soon the timer actually fires.
const defaultStepHold = 50 * time.Microsecond

// stepHold returns the hold's bound, 0 when the hold is off.
func (c *Config) stepHold() time.Duration {
	switch {
	case c.Manual || c.StepHold < 0:
		return 0 // a manual federate's caller sends each turn's frames
	case c.StepHold == 0:
		return defaultStepHold
	}
	return c.StepHold
}

// stepOpen reports whether a step is open and the hold on: whether a
// service call's sends may be held (endCall's sent).
func (s *sender) stepOpen() bool {
	return s.holdBound > 0 && s.inStep.Load()
}

// holdsStep reports whether the service call ending now, which sent
// messages, keeps them for the step's batch: a step is open, the call
// does not send at once, no batch is being sent, the sender is not
// closed, and the hold, if one is under way, began less than holdBound
// ago. Under mu.
func (s *sender) holdsStep() bool {
	if s.holdBound <= 0 || !s.inStep.Load() || s.atOnce || s.writing || s.closed {
		return false
	}
	if s.holding && time.Since(s.holdStart) >= s.holdBound {
		s.endLongStep()
		return false
	}
	return true
}

// endLongStep ends the hold for the rest of a step that outlasted the
// bound: its caller streams calls, or computes between them, and its
// frames go as they would without the hold (the first at once, the
// next ones bundling up while the writer sends), until Next returns the
// next event. Under mu.
func (s *sender) endLongStep() {
	s.inStep.Store(false)
}

// startHold holds what the step sent, arming the bound's timer when
// this is the step's first call that sent. Under mu.
func (s *sender) startHold() {
	if s.holding {
		return
	}
	s.holding = true
	s.held.Store(true)
	s.holdStart = time.Now()
	s.holdTimer.Reset(s.holdBound)
}

// dropHold ends a hold: its frames were taken for a batch. Under mu.
func (s *sender) dropHold() {
	if s.holding {
		s.holding = false
		s.held.Store(false)
	}
}

// holdTimerC is the channel on which the hold's timer fires, nil when
// the hold is off. The loop selects on it.
func (s *sender) holdTimerC() <-chan time.Time {
	if s.holdTimer == nil {
		return nil
	}
	return s.holdTimer.C
}

// holdExpired is the hold's timer firing: the loop's turn ending now
// sends what the step held, at once, and the rest of the step goes
// unheld. Under mu.
func (s *sender) holdExpired() {
	if s.holding {
		s.atOnce = true
		s.endLongStep()
	}
}

// flushHold returns the held frames for the caller to send inline, or
// nil (nothing held, or the writer has them). With wait, the caller is
// going to wait, so it sends whenever no batch is being sent; otherwise
// takeBatch's rule applies (it sends after a quiet spell, else the
// writer goroutine does, and what the caller makes next bundles up
// meanwhile). Under mu.
func (s *sender) flushHold(wait bool) []transport.Packet {
	if !s.holding {
		return nil
	}
	s.holdTimer.Stop()
	_ = s.host.takeReady(true) // seal what the step bundled; a group the transport could not join was reported to its call
	s.atOnce = wait
	return s.takeBatch()
}

// sendHeld sends what the step holds; wait as for flushHold.
func (s *sender) sendHeld(wait bool) {
	if !s.held.Load() {
		return
	}
	s.mu.Lock()
	batch := s.flushHold(wait)
	s.mu.Unlock()
	s.sendInline(batch)
}

// endStep is the federate coming back to Next: what the step holds
// leaves now. When Next is going to wait (nothing is ready in q), the
// caller sends it inline; when more callbacks are queued, the federate
// goes on at once and takeBatch's rule decides, so that the answers to a
// burst of callbacks bundle up in the writer as they did without the
// hold.
func (s *sender) endStep(q *eventQueue) {
	if s.holdBound <= 0 {
		return
	}
	s.inStep.Store(false)
	if s.held.Load() {
		s.sendHeld(!q.ready())
	}
}

// beginStep marks a step open: Next returned an event.
func (s *sender) beginStep() {
	if s.holdBound > 0 {
		s.inStep.Store(true)
	}
}
