package demo

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/meshrti/meshrti/fomxml/codec"
	"github.com/meshrti/meshrti/peer"
)

// The second part of the default demo, once the summary is printed: the
// same federates register a synchronization point and all achieve it;
// the radar requests a timed federation save; every federate steps to the
// save time, is told to save there and writes its own state (its
// counters) next to the RTI's; the federation runs on a few steps; then
// the radar requests a restore of the save, and every federate is back at
// the save: its logical time, its own state, and the time-stamped
// positions that were queued at the radar then, which it reflects again.
// Anything that does not happen as expected is an error.

const (
	syncLabel = "ready"
	saveLabel = "checkpoint"
	// srWait bounds each wait for a callback of this part, so that a
	// missing one is named rather than ending in the demo's -timeout.
	srWait = 10 * time.Second
	// srRunOn is how many steps the federation runs on after the save.
	srRunOn = 3
)

// srDemo is what the save and restore part works with, from demo.
type srDemo struct {
	say      func(format string, args ...any)
	cd       *codec.Codec
	radar    *demoFederate
	planes   []*demoFederate
	objs     []peer.ObjectInstanceHandle // the planes' instances
	position peer.AttributeHandle
	now      float64 // every federate's logical time at the start
}

// demoState is the federate's own state that it saves and restores: its
// counters.
type demoState struct{ grants, sent, reflected int }

func (f *demoFederate) state() demoState { return demoState{f.grants, f.sent, f.reflected} }

func (f *demoFederate) setState(s demoState) {
	f.grants, f.sent, f.reflected = s.grants, s.sent, s.reflected
}

func (s demoState) String() string {
	return fmt.Sprintf("%d grants, %d sent, %d reflected", s.grants, s.sent, s.reflected)
}

// change describes how a federate's own state went from s to t: its
// grants, and what it reflected (the radar) or sent (an aircraft).
func change(radar bool, s, t demoState) string {
	what, a, b := "sent", s.sent, t.sent
	if radar {
		what, a, b = "reflected", s.reflected, t.reflected
	}
	return fmt.Sprintf("grants %d -> %d, %s %d -> %d", s.grants, t.grants, what, a, b)
}

func writeDemoState(w io.Writer, s demoState) error {
	_, err := fmt.Fprintf(w, "grants %d sent %d reflected %d\n", s.grants, s.sent, s.reflected)
	return err
}

func readDemoState(r io.Reader) (demoState, error) {
	var s demoState
	_, err := fmt.Fscanf(r, "grants %d sent %d reflected %d\n", &s.grants, &s.sent, &s.reflected)
	return s, err
}

func demoSaveRestore(ctx context.Context, d srDemo) error {
	say := d.say
	feds := append([]*demoFederate{d.radar}, d.planes...)
	say("")
	say("synchronization point, save and restore (saves go to a temporary directory):")

	// A synchronization point for every federate.
	if err := d.radar.fed.RegisterFederationSynchronizationPoint(syncLabel, []byte("all aboard")); err != nil {
		return fmt.Errorf("register synchronization point %s: %w", syncLabel, err)
	}
	for _, f := range feds {
		registered, announced := f != d.radar, false
		if err := await(ctx, f, "the announcement of "+syncLabel, func(ev peer.Event) (bool, error) {
			switch ev := ev.(type) {
			case peer.SynchronizationPointRegistrationSucceeded:
				registered = registered || ev.Label == syncLabel
			case peer.AnnounceSynchronizationPoint:
				announced = announced || ev.Label == syncLabel
			}
			return registered && announced, nil
		}); err != nil {
			return err
		}
		if err := f.fed.SynchronizationPointAchieved(syncLabel, true); err != nil {
			return fmt.Errorf("%s: achieve %s: %w", f.name, syncLabel, err)
		}
	}
	say("sync point %s: registered by %s, announced to %d federates, each achieved it", syncLabel, d.radar.name, len(feds))
	for _, f := range feds {
		if err := await(ctx, f, syncLabel+" synchronized", func(ev peer.Event) (bool, error) {
			s, ok := ev.(peer.FederationSynchronized)
			if !ok || s.Label != syncLabel {
				return false, nil
			}
			if len(s.Failed) > 0 {
				return false, fmt.Errorf("%s synchronized with failures: %v", syncLabel, s.Failed)
			}
			return true, nil
		}); err != nil {
			return err
		}
	}
	say("sync point %s: synchronized (%d federates)", syncLabel, len(feds))

	// A timed save one step ahead.
	at := d.now + 1
	if err := d.radar.fed.RequestFederationSaveWithTime(saveLabel, peer.Float64Time(at)); err != nil {
		return fmt.Errorf("request save %s: %w", saveLabel, err)
	}
	say("save %s at t=%v: requested by %s; from now on each aircraft sends its position one step ahead (stamped t+1)", saveLabel, at, d.radar.name)
	if err := d.step(ctx, at, 0); err != nil {
		return err
	}
	saved := map[*demoFederate]demoState{}
	for _, f := range feds {
		if err := await(ctx, f, "InitiateFederateSave "+saveLabel, func(ev peer.Event) (bool, error) {
			s, ok := ev.(peer.InitiateFederateSave)
			if !ok {
				return false, nil
			}
			if s.Label != saveLabel || !s.HasTime || s.Time == nil || s.Time.Float() != at {
				return false, fmt.Errorf("told to save %q (timed %v, at %v), want %s at t=%v", s.Label, s.HasTime, s.Time, saveLabel, at)
			}
			return true, nil
		}); err != nil {
			return err
		}
		if err := f.fed.FederateSaveBegun(); err != nil {
			return fmt.Errorf("%s: FederateSaveBegun: %w", f.name, err)
		}
		w, err := f.fed.SavedStateWriter(saveLabel)
		if err != nil {
			return fmt.Errorf("%s: SavedStateWriter: %w", f.name, err)
		}
		err = writeDemoState(w, f.state())
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("%s: write its state: %w", f.name, err)
		}
		saved[f] = f.state()
		if err := f.fed.FederateSaveComplete(); err != nil {
			return fmt.Errorf("%s: FederateSaveComplete: %w", f.name, err)
		}
	}
	say("save %s at t=%v: each federate was told to save at t=%v, wrote its own state (its counters) and completed", saveLabel, at, at)
	for _, f := range feds {
		if err := await(ctx, f, "FederationSaved", firstOf[peer.FederationSaved]); err != nil {
			return err
		}
	}
	say("save %s at t=%v: saved", saveLabel, at)

	// The federation runs on.
	for ts := at + 1; ts <= at+srRunOn; ts++ {
		if err := d.step(ctx, ts, len(d.planes)); err != nil {
			return err
		}
	}

	// And goes back.
	before := map[*demoFederate]demoState{}
	for _, f := range feds {
		before[f] = f.state()
	}
	if err := d.radar.fed.RequestFederationRestore(saveLabel); err != nil {
		return fmt.Errorf("request restore %s: %w", saveLabel, err)
	}
	if err := await(ctx, d.radar, "RequestFederationRestoreSucceeded", func(ev peer.Event) (bool, error) {
		s, ok := ev.(peer.RequestFederationRestoreSucceeded)
		return ok && s.Label == saveLabel, nil
	}); err != nil {
		return err
	}
	say("restore %s: requested by %s, accepted", saveLabel, d.radar.name)
	for _, f := range feds {
		begun := false
		if err := await(ctx, f, "InitiateFederateRestore "+saveLabel, func(ev peer.Event) (bool, error) {
			switch ev := ev.(type) {
			case peer.FederationRestoreBegun:
				begun = true
			case peer.InitiateFederateRestore:
				if !begun {
					return false, fmt.Errorf("InitiateFederateRestore before FederationRestoreBegun")
				}
				if ev.Label != saveLabel || ev.Name != f.name {
					return false, fmt.Errorf("told to restore %q as %q, want %s as %s", ev.Label, ev.Name, saveLabel, f.name)
				}
				return true, nil
			}
			return false, nil
		}); err != nil {
			return err
		}
		r, err := f.fed.RestoredStateReader(saveLabel)
		if err != nil {
			return fmt.Errorf("%s: RestoredStateReader: %w", f.name, err)
		}
		s, err := readDemoState(r)
		r.Close()
		if err != nil {
			return fmt.Errorf("%s: read its state: %w", f.name, err)
		}
		f.setState(s)
		if err := f.fed.FederateRestoreComplete(); err != nil {
			return fmt.Errorf("%s: FederateRestoreComplete: %w", f.name, err)
		}
	}
	for _, f := range feds {
		if err := await(ctx, f, "FederationRestored", firstOf[peer.FederationRestored]); err != nil {
			return err
		}
	}
	for _, f := range feds {
		t, err := f.fed.QueryLogicalTime()
		if err != nil {
			return fmt.Errorf("%s: QueryLogicalTime: %w", f.name, err)
		}
		if t.Float() != at {
			return fmt.Errorf("%s: logical time %v after the restore, want %v", f.name, t, at)
		}
		f.reached = t.Float()
		if f.state() != saved[f] {
			return fmt.Errorf("%s: own state %v after the restore, saved %v", f.name, f.state(), saved[f])
		}
	}
	say("restore %s: restored, time back to t=%v", saveLabel, at)
	for _, f := range feds {
		say("  %-11s t=%v, own state back as saved: %s", f.name, f.reached, change(f == d.radar, before[f], f.state()))
	}
	// The positions stamped at+1 were queued at the radar at the save:
	// it reflects them again.
	if err := d.step(ctx, at+1, len(d.planes)); err != nil {
		return err
	}
	say("after the restore the radar reflected again the %s stamped %v that were queued at the save", positions(len(d.planes)), at+1)
	return nil
}

// step advances every federate to ts: each aircraft sends its position
// stamped ts+1 (its lookahead is 1) and asks for ts; the radar asks for
// ts and must reflect want positions, all stamped ts and in time-stamp
// order, before its grant.
func (d srDemo) step(ctx context.Context, ts float64, want int) error {
	for i, p := range d.planes {
		b, err := planePosition(d.cd, i, len(d.planes), ts+1)
		if err != nil {
			return err
		}
		if err := p.fed.UpdateAttributeValuesWithTime(d.objs[i], peer.AttributeValues{d.position: b}, nil, peer.Float64Time(ts+1)); err != nil {
			return fmt.Errorf("%s: update at t=%v: %w", p.name, ts, err)
		}
		p.sent++
		if err := p.fed.TimeAdvanceRequest(peer.Float64Time(ts)); err != nil {
			return fmt.Errorf("%s: advance to t=%v: %w", p.name, ts, err)
		}
	}
	if err := d.radar.fed.TimeAdvanceRequest(peer.Float64Time(ts)); err != nil {
		return fmt.Errorf("%s: advance to t=%v: %w", d.radar.name, ts, err)
	}
	got := 0
	granted := func(f *demoFederate) func(peer.Event) (bool, error) {
		return func(ev peer.Event) (bool, error) {
			switch ev := ev.(type) {
			case peer.ReflectAttributeValues:
				f.reflected++
				if _, ok := ev.Values[d.position]; !ok {
					return false, nil
				}
				if ev.Time == nil || ev.Time.Float() != ts || ev.ReceivedOrder != peer.TimeStamp {
					return false, fmt.Errorf("reflected a position stamped %v [%v order] while advancing to t=%v", ev.Time, ev.ReceivedOrder, ts)
				}
				got++
			case peer.TimeAdvanceGrant:
				if ev.Time.Float() != ts {
					return false, fmt.Errorf("granted t=%v, asked for t=%v", ev.Time, ts)
				}
				f.grants++
				f.reached = ts
				return true, nil
			}
			return false, nil
		}
	}
	if err := await(ctx, d.radar, fmt.Sprintf("its grant to t=%v", ts), granted(d.radar)); err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("%s reflected %d positions stamped %v before its grant, want %d", d.radar.name, got, ts, want)
	}
	for _, p := range d.planes {
		if err := await(ctx, p, fmt.Sprintf("its grant to t=%v", ts), granted(p)); err != nil {
			return err
		}
	}
	d.say("t=%-4v every federate granted; the radar reflected %s stamped %v", ts, positions(got), ts)
	return nil
}

func positions(n int) string {
	if n == 1 {
		return "1 position"
	}
	return fmt.Sprintf("%d positions", n)
}

// await reads f's events until done says so, for at most srWait; what
// names what it waits for. A failed save, restore or synchronization
// point is an error.
func await(ctx context.Context, f *demoFederate, what string, done func(peer.Event) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, srWait)
	defer cancel()
	for {
		ev, err := f.fed.Next(ctx)
		if err != nil {
			return fmt.Errorf("%s: waiting for %s: %w", f.name, what, err)
		}
		if err := srFailure(ev); err != nil {
			return fmt.Errorf("%s: waiting for %s: %w", f.name, what, err)
		}
		ok, err := done(ev)
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		if ok {
			return nil
		}
	}
}

// firstOf is a done function for await: the first event of type T.
func firstOf[T peer.Event](ev peer.Event) (bool, error) {
	_, ok := ev.(T)
	return ok, nil
}

// srFailure turns the callbacks that say a synchronization point, a save
// or a restore failed into an error.
func srFailure(ev peer.Event) error {
	switch ev := ev.(type) {
	case peer.SynchronizationPointRegistrationFailed:
		return fmt.Errorf("synchronization point %s not registered: %v", ev.Label, ev.Reason)
	case peer.FederationNotSaved:
		return fmt.Errorf("federation not saved: %v", ev.Reason)
	case peer.RequestFederationRestoreFailed:
		return fmt.Errorf("restore %s refused", ev.Label)
	case peer.FederationNotRestored:
		return fmt.Errorf("federation not restored: %v", ev.Reason)
	}
	return nil
}
