package peer

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshrti/meshrti/peer/transport"
)

// goid returns the calling goroutine's number, from its stack header.
func goid() string {
	b := make([]byte, 64)
	return string(bytes.Fields(b[:runtime.Stack(b, false)])[1])
}

func float64Bytes(v float64) []byte {
	return binary.BigEndian.AppendUint64(nil, math.Float64bits(v))
}

// TestCyclesAdvanceAndReflect: a regulating and constrained publisher
// advances in cycles of 1, updating a time-stamped attribute each cycle;
// a constrained subscriber follows in cycles of its own. Each loop gets
// its grants one per cycle, in order; callbacks are handled only between
// steps; and the subscriber's cycle at time T has handled the updates
// stamped up to T, and none later.
func TestCyclesAdvanceAndReflect(t *testing.T) {
	m, h := cleanFederation(t, 2, 61)
	pub, sub := m.feds[0], m.feds[1]
	must := mustOK(t)
	obj := vehicleFlow(t, pub, sub, h, 5*time.Second, h.position)
	must(pub.EnableTimeRegulation(Float64Time(1)))
	waitFor(t, pub, 5*time.Second, isType[TimeRegulationEnabled])
	must(pub.EnableTimeConstrained())
	waitFor(t, pub, 5*time.Second, isType[TimeConstrainedEnabled])
	must(sub.EnableTimeConstrained())
	waitFor(t, sub, 5*time.Second, isType[TimeConstrainedEnabled])

	const last = 10
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	// loop records one federate's cycles. Its fields are touched only by
	// the goroutine running that federate's cycles.
	type loop struct {
		inStep   bool
		problems []string
		times    []float64 // Cycle.Time of each cycle
		grants   []float64 // handled grants, in order
	}
	handler := func(l *loop, extra func(Event)) func(Event) error {
		return func(ev Event) error {
			if l.inStep {
				l.problems = append(l.problems, fmt.Sprintf("%T handled during step", ev))
			}
			if g, ok := ev.(TimeAdvanceGrant); ok {
				l.grants = append(l.grants, g.Time.Float())
			}
			if extra != nil {
				extra(ev)
			}
			return nil
		}
	}
	checkLoop := func(name string, l *loop) {
		t.Helper()
		for _, p := range l.problems {
			t.Errorf("%s: %s", name, p)
		}
		for i, tm := range l.times {
			if tm != float64(i) {
				t.Fatalf("%s: cycle times %v, want 0, 1, ... %d", name, l.times, last)
			}
		}
		if len(l.times) != last+1 {
			t.Errorf("%s: %d cycles, want %d", name, len(l.times), last+1)
		}
		for i, g := range l.grants {
			if g != float64(i+1) {
				t.Fatalf("%s: grants %v, want 1, 2, ... %d", name, l.grants, last)
			}
		}
		if len(l.grants) != last {
			t.Errorf("%s: %d grants, want %d", name, len(l.grants), last)
		}
	}

	var pl loop
	pubDone := make(chan error, 1)
	go func() {
		pubDone <- pub.RunCycles(ctx, handler(&pl, nil), func(cy *Cycle) error {
			pl.inStep = true
			defer func() { pl.inStep = false }()
			now := cy.Time.Float()
			if cy.Number != len(pl.times)+1 {
				pl.problems = append(pl.problems, fmt.Sprintf("cycle number %d after %d cycles", cy.Number, len(pl.times)))
			}
			pl.times = append(pl.times, now)
			if now >= last {
				return ErrStopCycles
			}
			next := Float64Time(now + 1)
			cy.Queue(
				Update{Object: obj, Values: AttributeValues{h.position: float64Bytes(now + 1)}, Time: next},
				AdvanceTo{Time: next},
			)
			return nil
		})
	}()

	var sl loop
	var reflected []float64 // time stamps of the reflections handled, in order
	err := sub.RunCycles(ctx, handler(&sl, func(ev Event) {
		if r, ok := ev.(ReflectAttributeValues); ok {
			if r.Time == nil || r.Time.Float() != math.Float64frombits(binary.BigEndian.Uint64(r.Values[h.position])) {
				sl.problems = append(sl.problems, fmt.Sprintf("reflection %+v", r))
				return
			}
			reflected = append(reflected, r.Time.Float())
		}
	}), func(cy *Cycle) error {
		sl.inStep = true
		defer func() { sl.inStep = false }()
		now := cy.Time.Float()
		sl.times = append(sl.times, now)
		// Every update stamped up to now, and no later one: the update
		// the publisher sent in its cycle at k-1 is seen from the
		// subscriber's cycle at k on.
		if len(reflected) != int(now) || (now > 0 && reflected[len(reflected)-1] != now) {
			sl.problems = append(sl.problems, fmt.Sprintf("cycle at %v has seen reflections %v", now, reflected))
		}
		if now >= last {
			return ErrStopCycles
		}
		cy.Queue(AdvanceTo{Time: Float64Time(now + 1)})
		return nil
	})
	if err != nil {
		t.Fatalf("subscriber: %v", err)
	}
	if err := <-pubDone; err != nil {
		t.Fatalf("publisher: %v", err)
	}
	checkLoop("publisher", &pl)
	checkLoop("subscriber", &sl)
	for i, r := range reflected {
		if r != float64(i+1) {
			t.Fatalf("reflections %v, want 1, 2, ... %d", reflected, last)
		}
	}
}

// TestCycleCallbacksWaitForCycleStart: a callback that arrives while
// step runs is handled at the next cycle's start, before its step; all
// of it on the caller's goroutine, and RunCycles starts no goroutine.
func TestCycleCallbacksWaitForCycleStart(t *testing.T) {
	m, h := cleanFederation(t, 2, 62)
	pub, sub := m.feds[0], m.feds[1]
	obj := labelFlow(t, pub, sub, h, 5*time.Second)
	for sub.Pending() > 0 { // the joins and whatever else came first
		waitFor(t, sub, time.Second, func(Event) bool { return true })
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	caller := goid()
	before := runtime.NumGoroutine()
	var log []string
	peak := 0
	where := func(what string) {
		if g := goid(); g != caller {
			t.Errorf("%s ran on goroutine %s, not the caller's %s", what, g, caller)
		}
		peak = max(peak, runtime.NumGoroutine())
	}
	err := sub.RunCycles(ctx, func(ev Event) error {
		where("the handler")
		if r, ok := ev.(ReflectAttributeValues); ok {
			log = append(log, "reflect "+string(r.Values[h.label]))
		}
		return nil
	}, func(cy *Cycle) error {
		where("step")
		log = append(log, fmt.Sprintf("step %d", cy.Number))
		switch cy.Number {
		case 1:
			if err := pub.UpdateAttributeValues(obj, AttributeValues{h.label: []byte("red")}, nil); err != nil {
				return err
			}
			deadline := time.Now().Add(5 * time.Second)
			for sub.Pending() == 0 {
				if time.Now().After(deadline) {
					return errors.New("the reflection never came")
				}
				time.Sleep(time.Millisecond)
			}
			log = append(log, "queued during step 1")
			cy.Queue(Do(func(f *Federate) error {
				where("a command")
				return nil
			}))
		case 2:
			return ErrStopCycles
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "step 1, queued during step 1, reflect red, step 2"
	if got := strings.Join(log, ", "); got != want {
		t.Errorf("order %q, want %q", got, want)
	}
	if peak > before {
		t.Errorf("%d goroutines before RunCycles, %d while it ran", before, peak)
	}
	waitGoroutines(t, before, "RunCycles")
}

// TestCycleCommandErrors: the first failing command ends the loop with a
// *CommandError naming the cycle and the command, wrapping the service's
// error; the cycle's later commands do not run. Step and handler errors
// come back wrapped with the cycle.
func TestCycleCommandErrors(t *testing.T) {
	m, h := cleanFederation(t, 1, 63)
	f := m.feds[0]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	ran := false
	later := Do(func(*Federate) error { ran = true; return nil })
	err := f.RunCycles(ctx, nil, func(cy *Cycle) error {
		cy.Queue(Update{Object: ObjectInstanceHandle{Federate: 99, Serial: 1}, Values: AttributeValues{h.label: []byte("x")}}, later)
		return nil
	})
	var ce *CommandError
	if !errors.As(err, &ce) || ce.Cycle != 1 || ce.Index != 0 || !errors.Is(err, ErrObjectInstanceNotKnown) {
		t.Fatalf("unknown object: %v", err)
	}
	if !strings.Contains(err.Error(), "cycle 1: command 0 (Update object") {
		t.Errorf("message %q does not say which command", err)
	}
	if ran {
		t.Error("a command after the failed one ran")
	}

	// A time advance into the past, after one that worked: the first
	// cycle's advance to 5 is granted at once (the federate is neither
	// regulating nor constrained).
	var times []float64
	err = f.RunCycles(ctx, nil, func(cy *Cycle) error {
		times = append(times, cy.Time.Float())
		if cy.Number == 1 {
			cy.Queue(AdvanceTo{Time: Float64Time(5)})
		} else {
			cy.Queue(Do(func(*Federate) error { return nil }), AdvanceTo{Time: Float64Time(3)}, later)
		}
		return nil
	})
	ce = nil
	if !errors.As(err, &ce) || ce.Cycle != 2 || ce.Index != 1 || !errors.Is(err, ErrLogicalTimeAlreadyPassed) {
		t.Fatalf("advance into the past: %v", err)
	}
	if a, ok := ce.Command.(AdvanceTo); !ok || a.Time != Float64Time(3) {
		t.Errorf("failed command %#v", ce.Command)
	}
	if !strings.Contains(err.Error(), "cycle 2: command 1 (AdvanceTo 3)") {
		t.Errorf("message %q does not say which command", err)
	}
	if ran || fmt.Sprint(times) != "[0 5]" {
		t.Errorf("cycle times %v, later command ran %v", times, ran)
	}

	errStep := errors.New("step failed")
	err = f.RunCycles(ctx, nil, func(cy *Cycle) error { return errStep })
	if !errors.Is(err, errStep) || !strings.Contains(err.Error(), "cycle 1: step") {
		t.Errorf("step error: %v", err)
	}

	errHandler := errors.New("handler failed")
	err = f.RunCycles(ctx, func(ev Event) error {
		if _, ok := ev.(TimeAdvanceGrant); ok {
			return errHandler
		}
		return nil
	}, func(cy *Cycle) error {
		cy.Queue(Do(func(f *Federate) error { return f.TimeAdvanceRequest(Float64Time(6)) }))
		return nil
	})
	// The grant comes in cycle 1's wait, or, when the advance was
	// granted at once, at cycle 2's start: before step either way.
	if !errors.Is(err, errHandler) || !errors.Is(err, ErrFederateInternalError) || !strings.HasPrefix(err.Error(), "peer: cycle ") {
		t.Errorf("handler error: %v", err)
	}
}

// grantAmbassador records the grants a FederateAmbassador gets.
type grantAmbassador struct {
	NullFederateAmbassador
	grants []string
}

func (a *grantAmbassador) TimeAdvanceGrant(t LogicalTime) error {
	a.grants = append(a.grants, t.String())
	return nil
}

// TestCycleStops: ErrStopCycles (also wrapped) ends the loop with nil,
// and that cycle's commands do not run; so do the ends of ctx, and of
// the federate: closed, or lost. AmbassadorHandler drives a
// FederateAmbassador; NextMessageTo and a Do that advances are waited
// for like AdvanceTo.
func TestCycleStops(t *testing.T) {
	m, _ := cleanFederation(t, 3, 64)
	f := m.feds[0]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	amb := &grantAmbassador{}
	ran := false
	steps := 0
	err := f.RunCycles(ctx, AmbassadorHandler(amb), func(cy *Cycle) error {
		steps++
		switch cy.Number {
		case 1:
			cy.Queue(NextMessageTo{Time: Float64Time(1)})
		case 2:
			cy.Queue(Do(func(f *Federate) error { return f.TimeAdvanceRequest(Float64Time(2)) }))
		case 3:
			cy.Queue(Do(func(*Federate) error { ran = true; return nil }))
			return fmt.Errorf("done at %v: %w", cy.Time, ErrStopCycles)
		}
		return nil
	})
	if err != nil || steps != 3 || ran {
		t.Errorf("stop: %v after %d steps (command ran: %v)", err, steps, ran)
	}
	if got := strings.Join(amb.grants, " "); got != "1 2" {
		t.Errorf("grants %q, want 1 2", got)
	}

	// ctx cancelled by step: the next cycle does not start.
	cctx, ccancel := context.WithCancel(ctx)
	steps = 0
	err = f.RunCycles(cctx, nil, func(cy *Cycle) error {
		steps++
		if cy.Number == 2 {
			ccancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || steps != 2 {
		t.Errorf("cancelled: %v after %d steps", err, steps)
	}

	// ctx ends while waiting for a grant that cannot come: the
	// regulator stays at 0 with lookahead 1.
	reg, con := m.feds[1], m.feds[2]
	enable(t, reg, con, 1)
	dctx, dcancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer dcancel()
	steps = 0
	err = con.RunCycles(dctx, nil, func(cy *Cycle) error {
		steps++
		cy.Queue(AdvanceTo{Time: Float64Time(5)})
		return nil
	})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "waiting for the grant") || steps != 1 {
		t.Errorf("grant never came: %v after %d steps", err, steps)
	}

	// Closed during a cycle.
	err = reg.RunCycles(ctx, nil, func(cy *Cycle) error {
		if cy.Number == 2 {
			reg.Close()
		}
		return nil
	})
	if !errors.Is(err, ErrClosed) {
		t.Errorf("closed: %v", err)
	}

	// Dropped by the control plane: ConnectionLost is handled, then the
	// loop ends.
	var lost []string
	err = f.RunCycles(ctx, func(ev Event) error {
		if l, ok := ev.(ConnectionLost); ok {
			lost = append(lost, l.Reason)
		}
		return nil
	}, func(cy *Cycle) error {
		if cy.Number == 2 {
			m.reg.Expel(m.name, f.Handle())
		}
		time.Sleep(time.Millisecond)
		return nil
	})
	if !errors.Is(err, ErrNotConnected) || !errors.Is(err, ErrClosed) || len(lost) != 1 {
		t.Errorf("lost: %v, ConnectionLost handled %d times", err, len(lost))
	}
}

// The cycle loop saves and restores: F0 queues a timed save at 3 and,
// later, a restore; each federate saves its cycle counter as its own
// state in handle and reads it back at the restore. After the restore
// the cycles go on from time 3 with the counter as saved.
func TestCyclesSaveAndRestore(t *testing.T) {
	m := newMemFederation(t, 2, transport.Faults{}, 67)
	for _, f := range m.feds {
		if err := f.EnableTimeRegulation(Float64Time(1)); err != nil {
			t.Fatal(err)
		}
		waitFor(t, f, 5*time.Second, isType[TimeRegulationEnabled])
		if err := f.EnableTimeConstrained(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, f, 5*time.Second, isType[TimeConstrainedEnabled])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	type result struct {
		times    []float64 // Cycle.Time of each cycle
		restored int       // the counter read back
		err      error
	}
	results := make([]result, len(m.feds))
	var wg sync.WaitGroup
	for i, f := range m.feds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &results[i]
			counter, restores := 0, 0
			busy, asked := false, false // a save or restore under way; the restore asked for
			// saveAt is the time of the save initiated last, saved that
			// it succeeded. A save the other federate's advance had
			// already outrun (it asked for a time past the save time
			// before it heard of the save) fails as too late: F0 asks
			// again, further ahead.
			saveAt, saved, again := 3.0, false, false
			// pending: F0 asked for a save it has not heard of since. It
			// steps slowly meanwhile, so that the request is taken before
			// its own advance passes the save time (which fails the save
			// as too late, and a loaded machine could make every new
			// request fail the same way).
			pending := false
			// moot: the save failed while this federate was still on
			// its way in (an InitiateFederateSave before the
			// FederationNotSaved in the queue).
			moot := func(err error) bool {
				return errors.Is(err, ErrSaveNotInitiated) || errors.Is(err, ErrFederateHasNotBegunSave)
			}
			handle := func(ev Event) error {
				switch e := ev.(type) {
				case FederationSaved:
					busy, saved, pending = false, true, false
				case FederationRestored:
					busy = false
				case FederationNotSaved:
					if e.Reason != SaveTimeCannotBeHonored {
						return fmt.Errorf("%#v", e)
					}
					busy, again, pending = false, i == 0, false
				case InitiateFederateSave:
					saveAt = e.Time.Float()
					busy, pending = true, false
					if err := f.FederateSaveBegun(); err != nil {
						if moot(err) {
							return nil
						}
						return err
					}
					w, err := f.SavedStateWriter(e.Label)
					if err != nil {
						return err
					}
					fmt.Fprint(w, counter)
					if err := w.Close(); err != nil {
						return err
					}
					if err := f.FederateSaveComplete(); err != nil && !moot(err) {
						return err
					}
				case InitiateFederateRestore:
					busy = true
					rd, err := f.RestoredStateReader(e.Label)
					if err != nil {
						return err
					}
					_, err = fmt.Fscan(rd, &counter)
					rd.Close()
					if err != nil {
						return err
					}
					r.restored = counter
					restores++
					return f.FederateRestoreComplete()
				case FederationNotRestored:
					return fmt.Errorf("%#v", e)
				}
				return nil
			}
			r.err = f.RunCycles(ctx, handle, func(cy *Cycle) error {
				r.times = append(r.times, cy.Time.Float())
				counter++
				now := cy.Time.Float()
				switch {
				case busy:
					time.Sleep(time.Millisecond) // services wait for the save or restore to end
					return nil
				case restores > 0 && now == saveAt+3:
					return ErrStopCycles
				case i == 0 && cy.Number == 1:
					cy.Queue(Save{Label: "three", Time: Float64Time(saveAt)})
					pending = true
				case again:
					again, pending = false, true
					cy.Queue(Save{Label: "three", Time: Float64Time(now + 3)})
				case pending:
					time.Sleep(2 * time.Millisecond)
				case saved && restores == 0 && now == saveAt+2:
					if i == 0 && !asked {
						asked = true
						cy.Queue(Restore{Label: "three"})
					}
					time.Sleep(time.Millisecond) // no advance: the restore comes
					return nil
				}
				cy.Queue(AdvanceTo{Time: Float64Time(now + 1)})
				return nil
			})
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r.err != nil {
			t.Fatalf("F%d: %v (cycles at %v)", i, r.err, cycleTimes(r.times))
		}
		// The counter at the save (taken when time reached the save
		// time, after a cycle at each time before it and the save
		// time's grant) comes back, and the cycles after the restore
		// start at the save time again.
		at := r.times[len(r.times)-1] - 3
		if r.restored < int(at) {
			t.Errorf("F%d: counter read back %d, want at least %v", i, r.restored, at)
		}
		asked := slices.Index(r.times, at+2)
		if asked < 0 || !slices.Contains(r.times[asked:], at) {
			t.Errorf("F%d: cycle times %v: no return to %v after the restore", i, cycleTimes(r.times), at)
		}
		t.Logf("F%d: saved at %v, counter back %d, cycle times %v", i, at, r.restored, cycleTimes(r.times))
	}
}

// cycleTimes lists the distinct cycle times of a run for a test's
// message, the first 30 and the last 5 of a longer run.
func cycleTimes(ts []float64) string {
	ts = slices.Compact(slices.Clone(ts))
	if len(ts) <= 35 {
		return fmt.Sprint(ts)
	}
	return fmt.Sprintf("%v ... (%d more) ... %v", ts[:30], len(ts)-35, ts[len(ts)-5:])
}
