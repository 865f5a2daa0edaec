package peer

import (
	"time"

	"github.com/meshrti/meshrti/peer/transport"
)

// The step send: what a federate's service calls send during one step
// leaves in one send (docs/dataplane.md, "The step send").
//
// A step runs from Next returning an event (also through Dispatch and
// the Evoke services, which call Next) until the federate comes back to
// Next. The messages each call of the step sends are left in the
// reliable layer's open bundles, as they are while the writer is busy,
// and what it seals meanwhile stays in pending, in order, instead of
// being sent as the call ends; they leave together when it comes back to
// Next: on its own goroutine when Next is going to wait, else as
// takeLead decides (see endStep). They also leave at once when a call waits for others'
// answers (a time advance: see takeLead) or is held back by
// back-pressure (callSend), when the federate is leaving (Resign,
// Close), and whenever the loop sends for its own reasons (an
// acknowledgement, a repair): held frames are only ever sent earlier
// than the bound, never reordered. The hold is bounded: a call ending
// holdBound or more after the hold began sends everything, and a timer
// lets the loop send what a federate that computes after its last call
// still holds; either way the rest of that step is sent as without the
// hold (a stream of calls bundles up in the writer, as before).

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
		return 0 // a manual federate's driver sends each turn's frames (manual.go)
	case c.StepHold == 0:
		return defaultStepHold
	}
	return c.StepHold
}

// holdsStep reports whether the service call ending now, which sent
// messages, keeps them for the step's send: a step is open, the call
// does not wait for answers, the writer is idle, the federate is not
// leaving, and the hold, if one is under way, began less than holdBound
// ago. Under mu.
func (f *Federate) holdsStep() bool {
	if f.holdBound <= 0 || !f.inStep.Load() || f.waiter || f.writing || f.halted || f.why != nil {
		return false
	}
	if f.holding && time.Since(f.holdStart) >= f.holdBound {
		f.endLongStep()
		return false
	}
	return true
}

// endLongStep ends the hold for the rest of a step that outlasted the
// bound: its caller streams calls, or computes between them, and its
// frames go as they would without the hold (the first at once, the
// next ones bundling up while the writer sends), until Next returns the
// next event. Under mu.
func (f *Federate) endLongStep() {
	f.inStep.Store(false)
}

// startHold holds what the step sent, arming the bound's timer when
// this is the step's first call that sent. Under mu.
func (f *Federate) startHold() {
	if f.holding {
		return
	}
	f.holding = true
	f.held.Store(true)
	f.holdStart = time.Now()
	f.holdTimer.Reset(f.holdBound)
}

// dropHold ends a hold: its frames were taken for a send. Under mu.
func (f *Federate) dropHold() {
	if f.holding {
		f.holding = false
		f.held.Store(false)
	}
}

// flushHold returns the held frames for the caller to send itself, or
// nil (nothing held, or the writer has them). With wait, the caller is
// going to wait, so it sends whenever the writer is idle; otherwise
// takeLead's rule applies (it sends after a quiet spell, else the writer
// goroutine does, and what the caller makes next bundles up meanwhile).
// Under mu.
func (f *Federate) flushHold(wait bool) []transport.Packet {
	if !f.holding {
		return nil
	}
	f.holdTimer.Stop()
	_ = f.turn(true) // seal what the step bundled; a group the transport could not join was reported to its call
	f.waiter = wait
	return f.takeLead()
}

// sendHeld sends what the step holds; wait as for flushHold.
func (f *Federate) sendHeld(wait bool) {
	if !f.held.Load() {
		return
	}
	f.mu.Lock()
	batch := f.flushHold(wait)
	f.mu.Unlock()
	f.lead(batch)
}

// endStep is the federate coming back to Next: what the step holds
// leaves now. When Next is going to wait, the caller sends it itself;
// when more callbacks are queued, the federate goes on at once and the
// usual rule (takeLead) decides, so that the answers to a burst of
// callbacks bundle up in the writer as they did without the hold.
func (f *Federate) endStep() {
	if f.holdBound <= 0 {
		return
	}
	f.inStep.Store(false)
	if f.held.Load() {
		f.sendHeld(!f.events.ready())
	}
}

// beginStep marks a step open: Next returned an event.
func (f *Federate) beginStep() {
	if f.holdBound > 0 {
		f.inStep.Store(true)
	}
}

// ready reports whether next would return an event at once.
func (q *eventQueue) ready() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.head < len(q.items) && (!q.held || q.closed)
}
