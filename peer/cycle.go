package peer

import (
	"context"
	"errors"
	"fmt"

	"github.com/meshrti/meshrti/lbts"
)

// The cycle loop: the shape of most simulators, built on Next and the
// services. Each cycle, RunCycles
//
//  1. hands every callback queued since the last cycle to the handler,
//     without waiting for more;
//  2. calls the step function, which computes the cycle and queues
//     commands (Cycle.Queue);
//  3. runs the queued commands in order, stopping at the first error;
//  4. when the federate is then in the time advancing state, waits for
//     the TimeAdvanceGrant, handing the callbacks that arrive meanwhile
//     to the handler.
//
// All of it runs on the goroutine that called RunCycles, one thing at a
// time: the loop starts no goroutine, and the handler never runs while
// step does. docs/peer.md ("The cycle loop") shows it.

// ErrStopCycles, returned by a step function (or wrapping the error it
// returns), ends RunCycles, which then returns nil. The commands that
// cycle queued are not run.
var ErrStopCycles = errors.New("peer: stop cycles")

// A Cycle is one turn of RunCycles, handed to the step function. It is
// valid only during that call: RunCycles reuses it for the next cycle.
type Cycle struct {
	// Number counts the cycles of one RunCycles call, from 1.
	Number int
	// Time is the federate's logical time at the cycle's start, as the
	// callbacks handled so far tell it: the time of the latest
	// TimeAdvanceGrant, TimeRegulationEnabled or TimeConstrainedEnabled,
	// else the federate's time when RunCycles began. Every
	// time-stamp-order message up to Time was handed to the handler
	// before step was called, as Next orders them (after an Available
	// request, more at exactly Time may still follow).
	Time LogicalTime

	cmds []Command
}

// Queue adds commands to run, in order, once step returns nil. Step
// may also call services directly; queueing them keeps the cycle's
// computation apart from its effects, and a failure names the command.
func (cy *Cycle) Queue(cmds ...Command) { cy.cmds = append(cy.cmds, cmds...) }

// A Command is a service call queued by a cycle and run at the cycle's
// end, on the goroutine of RunCycles. AdvanceTo, NextMessageTo, Update
// and Send cover the usual calls; Do wraps any other (a delete, a
// retractable update, a flush queue request); Save and Restore ask for
// a federation save or restore; a type of one's own with a Run method
// serves as well. A command that implements fmt.Stringer is named by its
// String in a CommandError.
type Command interface {
	// Run calls the service on f. An error ends RunCycles, and the
	// cycle's later commands are not run.
	Run(f *Federate) error
}

// AdvanceTo asks for a time advance to Time: TimeAdvanceRequest, or
// TimeAdvanceRequestAvailable when Available is set. RunCycles waits for
// the grant before the next cycle.
type AdvanceTo struct {
	Time      LogicalTime
	Available bool
}

// Run calls TimeAdvanceRequest or TimeAdvanceRequestAvailable.
func (c AdvanceTo) Run(f *Federate) error {
	if c.Available {
		return f.TimeAdvanceRequestAvailable(c.Time)
	}
	return f.TimeAdvanceRequest(c.Time)
}

func (c AdvanceTo) String() string { return advanceString("AdvanceTo", c.Time, c.Available) }

// NextMessageTo asks to advance to the next time-stamp-order message's
// time, or to Time if none comes before: NextMessageRequest, or
// NextMessageRequestAvailable when Available is set. RunCycles waits for
// the grant before the next cycle; Cycle.Time then says where it went.
type NextMessageTo struct {
	Time      LogicalTime
	Available bool
}

// Run calls NextMessageRequest or NextMessageRequestAvailable.
func (c NextMessageTo) Run(f *Federate) error {
	if c.Available {
		return f.NextMessageRequestAvailable(c.Time)
	}
	return f.NextMessageRequest(c.Time)
}

func (c NextMessageTo) String() string { return advanceString("NextMessageTo", c.Time, c.Available) }

// advanceString is the String of a time advance command called name.
func advanceString(name string, t LogicalTime, available bool) string {
	if available {
		return fmt.Sprintf("%s %v (available)", name, t)
	}
	return fmt.Sprintf("%s %v", name, t)
}

// atTime is a command's String s, followed by its time when it has one.
func atTime(s string, t LogicalTime) string {
	if t != nil {
		return fmt.Sprintf("%s at %v", s, t)
	}
	return s
}

// Update updates attributes of an object instance:
// UpdateAttributeValuesWithTime when Time is set, else
// UpdateAttributeValues. Values and Tag are read when the command runs,
// at the cycle's end: don't change them after queueing.
type Update struct {
	Object ObjectInstanceHandle
	Values AttributeValues
	Tag    []byte
	Time   LogicalTime
}

// Run calls UpdateAttributeValuesWithTime or UpdateAttributeValues.
func (c Update) Run(f *Federate) error {
	if c.Time != nil {
		return f.UpdateAttributeValuesWithTime(c.Object, c.Values, c.Tag, c.Time)
	}
	return f.UpdateAttributeValues(c.Object, c.Values, c.Tag)
}

func (c Update) String() string { return atTime(fmt.Sprintf("Update object %v", c.Object), c.Time) }

// Send sends an interaction: SendInteractionWithTime when Time is set,
// else SendInteraction. Values and Tag are read when the command runs.
type Send struct {
	Class  InteractionClassHandle
	Values ParameterValues
	Tag    []byte
	Time   LogicalTime
}

// Run calls SendInteractionWithTime or SendInteraction.
func (c Send) Run(f *Federate) error {
	if c.Time != nil {
		return f.SendInteractionWithTime(c.Class, c.Values, c.Tag, c.Time)
	}
	return f.SendInteraction(c.Class, c.Values, c.Tag)
}

func (c Send) String() string { return atTime(fmt.Sprintf("Send interaction %v", c.Class), c.Time) }

// Save is the command of a federation save: RequestFederationSave, or
// RequestFederationSaveWithTime when Time is set. The federate's part
// (InitiateFederateSave, then FederateSaveBegun, its own state through
// SavedStateWriter, FederateSaveComplete) runs in the cycles that follow,
// from handle.
type Save struct {
	Label string
	Time  LogicalTime
}

// Run asks for the save.
func (c Save) Run(f *Federate) error {
	if c.Time != nil {
		return f.RequestFederationSaveWithTime(c.Label, c.Time)
	}
	return f.RequestFederationSave(c.Label)
}

func (c Save) String() string { return atTime(fmt.Sprintf("Save %q", c.Label), c.Time) }

// Restore is the command of a federation restore:
// RequestFederationRestore. The federate's part (InitiateFederateRestore,
// its own state through RestoredStateReader, FederateRestoreComplete)
// runs in the cycles that follow, from handle.
type Restore struct {
	Label string
}

// Run asks for the restore.
func (c Restore) Run(f *Federate) error { return f.RequestFederationRestore(c.Label) }

func (c Restore) String() string { return fmt.Sprintf("Restore %q", c.Label) }

// Do is a command that calls a function with the federate: any service
// without a command type of its own.
//
//	cy.Queue(peer.Do(func(f *peer.Federate) error {
//		return f.DeleteObjectInstance(obj, nil)
//	}))
//
// A time advance it starts is waited for like AdvanceTo's.
type Do func(f *Federate) error

// Run calls d.
func (d Do) Run(f *Federate) error {
	if d == nil {
		return errNilCommand
	}
	return d(f)
}

func (Do) String() string { return "Do" }

var errNilCommand = errors.New("peer: nil command")

// A CommandError is what RunCycles returns when a queued command fails:
// the cycle, the command and the service's error (which it wraps, so
// errors.Is(err, ErrLogicalTimeAlreadyPassed) and the like still work).
type CommandError struct {
	Cycle   int // Cycle.Number of the cycle that queued it
	Index   int // its index in that cycle's queue, from 0
	Command Command
	Err     error
}

func (e *CommandError) Error() string {
	name := fmt.Sprintf("%T", e.Command)
	if s, ok := e.Command.(fmt.Stringer); ok {
		name = s.String()
	}
	return fmt.Sprintf("peer: cycle %d: command %d (%s): %v", e.Cycle, e.Index, name, e.Err)
}

func (e *CommandError) Unwrap() error { return e.Err }

// AmbassadorHandler returns a callback handler for RunCycles that calls
// amb's method for each event, as Dispatch does. Events without a
// FederateAmbassador method (the meshrti extensions) are skipped.
func AmbassadorHandler(amb FederateAmbassador) func(Event) error {
	return func(ev Event) error { return dispatchOne(amb, ev) }
}

// RunCycles runs the federate in cycles: each cycle hands the callbacks
// queued since the last one to handle, calls step, runs the commands
// step queued, and, when the federate is then in the time advancing
// state (whichever call put it there), waits for the TimeAdvanceGrant
// before the next cycle, handing the callbacks that come meanwhile to
// handle. A cycle that starts no time advance is followed at once by
// the next: pace it in step if it should keep to the wall clock.
//
// handle gets every callback, in the order of Next, the grants
// included; nil drops them. AmbassadorHandler adapts a
// FederateAmbassador. A callback queued while the cycle's callbacks are
// being handed out may wait for the next cycle; while callbacks are
// disabled (DisableCallbacks) none is handed out at a cycle's start.
//
// RunCycles returns nil when step returns ErrStopCycles. Otherwise it
// returns, with the cycle's number:
//   - step's error, wrapped;
//   - a *CommandError, for the first queued command that failed (the
//     rest of the cycle's commands are not run);
//   - handle's error, wrapped in ErrFederateInternalError;
//   - ctx's error, checked at each cycle's start and while waiting for
//     a grant (a grant that never comes is waited for until ctx ends);
//   - an error wrapping ErrClosed once the federate is closed or
//     resigned, and also ErrNotConnected when it lost its connection
//     (after handing ConnectionLost to handle).
//
// RunCycles runs on the calling goroutine and starts none: handle, step
// and the commands all run there, one at a time, and each may call any
// service. It must be the only reader of the federate's events while it
// runs. It blocks only while waiting for a grant.
func (f *Federate) RunCycles(ctx context.Context, handle func(Event) error, step func(*Cycle) error) error {
	if step == nil {
		return errors.New("peer: RunCycles: nil step")
	}
	t, err := f.QueryLogicalTime()
	if err != nil {
		return fmt.Errorf("peer: cycles: %w", err)
	}
	// now is a context that has ended: Next given it returns an event
	// that is queued, and waits for none.
	now, cancel := context.WithCancel(context.Background())
	cancel()
	l := cycleLoop{f: f, handle: handle, now: now}
	l.cy.Time = t
	for n := 1; ; n++ {
		l.cy.Number = n
		clear(l.cy.cmds)
		l.cy.cmds = l.cy.cmds[:0]
		if err := ctx.Err(); err != nil {
			return l.errorf("%w", err)
		}
		if err := l.drain(); err != nil {
			return err
		}
		if err := step(&l.cy); err != nil {
			if errors.Is(err, ErrStopCycles) {
				return nil
			}
			return l.errorf("step: %w", err)
		}
		if err := l.run(); err != nil {
			return err
		}
		if err := l.awaitGrant(ctx); err != nil {
			return err
		}
	}
}

// cycleLoop is the state of one RunCycles call.
type cycleLoop struct {
	f      *Federate
	handle func(Event) error
	now    context.Context // ended: Next takes only what is queued
	cy     Cycle
}

func (l *cycleLoop) errorf(format string, args ...any) error {
	return fmt.Errorf("peer: cycle %d: "+format, append([]any{l.cy.Number}, args...)...)
}

// drain hands handle the callbacks queued now, and no more: events
// that keep arriving wait for the next cycle. It looks at least once,
// so that a closed federate's queue says ErrClosed.
func (l *cycleLoop) drain() error {
	for range max(l.f.Pending(), 1) {
		ev, err := l.f.Next(l.now)
		if errors.Is(err, ErrClosed) {
			return l.errorf("%w", err)
		}
		if err != nil {
			return nil // nothing queued, or callbacks disabled
		}
		if err := l.deliver(ev); err != nil {
			return err
		}
	}
	return nil
}

// deliver hands one callback to handle, and keeps Cycle.Time.
func (l *cycleLoop) deliver(ev Event) error {
	switch ev := ev.(type) {
	case TimeAdvanceGrant:
		l.cy.Time = ev.Time
	case TimeRegulationEnabled:
		l.cy.Time = ev.Time
	case TimeConstrainedEnabled:
		l.cy.Time = ev.Time
	case FederationRestored, FederationNotRestored:
		// The time went back to the save's (the RTI state is the
		// saved one even when some federate did not restore).
		if t, err := l.f.QueryLogicalTime(); err == nil {
			l.cy.Time = t
		}
	}
	if l.handle != nil {
		if err := l.handle(ev); err != nil {
			return l.errorf("%w: %T: %w", ErrFederateInternalError, ev, err)
		}
	}
	if lost, ok := ev.(ConnectionLost); ok {
		// No more events come, and the queue stays open: stop here.
		return l.errorf("connection lost: %s: %w: %w", lost.Reason, ErrNotConnected, ErrClosed)
	}
	return nil
}

// run runs the cycle's commands in order, up to the first failure.
func (l *cycleLoop) run() error {
	for i, c := range l.cy.cmds {
		var err error
		if c == nil {
			err = errNilCommand
		} else {
			err = c.Run(l.f)
		}
		if err != nil {
			return &CommandError{Cycle: l.cy.Number, Index: i, Command: c, Err: err}
		}
	}
	return nil
}

// awaitGrant waits, handing out callbacks, until the federate is not in
// the time advancing state. The state and the event queue agree: the
// time core ends a request as it emits the grant, and the federate
// queues the grant under the same lock that TimeStatus takes.
func (l *cycleLoop) awaitGrant(ctx context.Context) error {
	for {
		st, err := l.f.TimeStatus()
		if err != nil {
			// Closed or lost: hand out what is left (ConnectionLost,
			// if that is why), then stop.
			if err := l.drain(); err != nil {
				return err
			}
			return l.errorf("%w", err)
		}
		if st.Request == lbts.NoRequest {
			return nil
		}
		for granted := false; !granted; {
			ev, err := l.f.Next(ctx)
			if err != nil {
				return l.errorf("waiting for the grant (%v to %g): %w", st.Request, st.Requested, err)
			}
			if err := l.deliver(ev); err != nil {
				return err
			}
			_, granted = ev.(TimeAdvanceGrant)
		}
	}
}

// The loop's names before it was called the cycle loop ("frame" now
// names only a data-plane datagram: Config.MaxFrame, Stats.Frames).

// Deprecated: Frame is Cycle.
type Frame = Cycle

// Deprecated: ErrStopFrames is ErrStopCycles.
var ErrStopFrames = ErrStopCycles

// Deprecated: RunFrames is RunCycles.
func (f *Federate) RunFrames(ctx context.Context, handle func(Event) error, step func(*Cycle) error) error {
	return f.RunCycles(ctx, handle, step)
}
