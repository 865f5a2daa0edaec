package peer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer/transport"
)

func grantOf(t *testing.T, ev Event) float64 {
	t.Helper()
	g, ok := ev.(TimeAdvanceGrant)
	if !ok {
		t.Fatalf("event %#v is not a grant", ev)
	}
	return g.Time.Float()
}

// enable makes reg regulating (lookahead l) and con constrained, and waits
// for both callbacks.
func enable(t *testing.T, reg, con *Federate, l float64) {
	t.Helper()
	if err := reg.EnableTimeRegulation(Float64Time(l)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, reg, 5*time.Second, isType[TimeRegulationEnabled])
	if err := con.EnableTimeConstrained(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, con, 5*time.Second, isType[TimeConstrainedEnabled])
}

// waitQueried waits until query (QueryGALT or QueryLITS, named what)
// answers want.
func waitQueried(t *testing.T, what string, query func() (LogicalTime, bool, error), want float64) {
	t.Helper()
	pollUntil(t, 5*time.Second, func() (bool, string) {
		v, ok, err := query()
		if err != nil {
			t.Fatal(err)
		}
		return ok && v.Float() == want, fmt.Sprintf("%s never became %v (is %v, %v)", what, want, v, ok)
	})
}

// noGrantYet checks that con holds no grant once its GALT reflects want:
// the grant decision is made as soon as GALT is known.
func noGrantYet(t *testing.T, con *Federate, wantGALT float64) {
	t.Helper()
	waitQueried(t, "GALT", con.QueryGALT, wantGALT)
	for con.Pending() > 0 {
		ev, _ := waitFor(t, con, time.Second, func(Event) bool { return true })
		if _, ok := ev.(TimeAdvanceGrant); ok {
			t.Fatalf("granted %v while GALT is %v", ev, wantGALT)
		}
	}
}

// advanceAfterRegulator has con ask to advance to to, checks that it is
// granted nothing while its GALT is galt, and then has reg ask too.
func advanceAfterRegulator(t *testing.T, reg, con *Federate, to, galt float64) {
	t.Helper()
	if err := con.TimeAdvanceRequest(Float64Time(to)); err != nil {
		t.Fatal(err)
	}
	noGrantYet(t, con, galt)
	if err := reg.TimeAdvanceRequest(Float64Time(to)); err != nil {
		t.Fatal(err)
	}
}

func TestConstrainedWaitsForRegulator(t *testing.T) {
	m, _ := cleanFederation(t, 2, 10)
	reg, con := m.feds[0], m.feds[1]
	enable(t, reg, con, 1)

	// The regulator is at 0 with lookahead 1: nothing may be granted at
	// or beyond 1.
	advanceAfterRegulator(t, reg, con, 5, 1)
	ev, _ := waitFor(t, reg, 5*time.Second, isType[TimeAdvanceGrant])
	if g := grantOf(t, ev); g != 5 {
		t.Errorf("regulator granted %v", g)
	}
	ev, _ = waitFor(t, con, 5*time.Second, isType[TimeAdvanceGrant])
	if g := grantOf(t, ev); g != 5 {
		t.Errorf("constrained granted %v", g)
	}
	if now, _ := con.QueryLogicalTime(); now.Float() != 5 {
		t.Errorf("logical time %v", now)
	}
}

// A time-stamped update at 10 is delivered before the grant to 10, and
// not before the constrained federate may see it.
func TestTSOBeforeGrant(t *testing.T) {
	m, h := cleanFederation(t, 2, 11)
	reg, con := m.feds[0], m.feds[1]
	if err := con.SubscribeObjectClassAttributes(h.vehicle, h.position); err != nil {
		t.Fatal(err)
	}
	if err := reg.PublishObjectClassAttributes(h.vehicle, h.position); err != nil {
		t.Fatal(err)
	}
	enable(t, reg, con, 1)
	obj, err := reg.RegisterObjectInstance(h.vehicle, "")
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, con, 5*time.Second, isType[DiscoverObjectInstance])
	if err := reg.UpdateAttributeValuesWithTime(obj, AttributeValues{h.position: []byte("p10")}, nil, Float64Time(10)); err != nil {
		t.Fatal(err)
	}
	advanceAfterRegulator(t, reg, con, 10, 1)
	ev, skipped := waitFor(t, con, 5*time.Second, isType[TimeAdvanceGrant])
	if g := grantOf(t, ev); g != 10 {
		t.Fatalf("granted %v", g)
	}
	if len(skipped) != 1 {
		t.Fatalf("before the grant: %#v, want one reflect", skipped)
	}
	r, ok := skipped[0].(ReflectAttributeValues)
	if !ok || r.Time == nil || r.Time.Float() != 10 || r.SentOrder != TimeStamp || r.ReceivedOrder != TimeStamp ||
		!bytes.Equal(r.Values[h.position], []byte("p10")) {
		t.Errorf("reflect %#v", skipped[0])
	}
}

func TestTimeServiceErrors(t *testing.T) {
	m, h := cleanFederation(t, 2, 12)
	reg, con := m.feds[0], m.feds[1]
	if err := reg.PublishObjectClassAttributes(h.vehicle, h.position); err != nil {
		t.Fatal(err)
	}
	if err := reg.PublishInteractionClass(h.honk); err != nil {
		t.Fatal(err)
	}
	obj, err := reg.RegisterObjectInstance(h.vehicle, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reg.QueryLookahead(); !errors.Is(err, ErrTimeRegulationIsNotEnabled) {
		t.Errorf("lookahead before regulation: %v", err)
	}
	if err := reg.EnableTimeRegulation(Float64Time(-1)); !errors.Is(err, ErrInvalidLookahead) {
		t.Errorf("negative lookahead: %v", err)
	}
	if err := reg.DisableTimeRegulation(); !errors.Is(err, ErrTimeRegulationIsNotEnabled) {
		t.Errorf("disable before enable: %v", err)
	}
	if err := con.DisableTimeConstrained(); !errors.Is(err, ErrTimeConstrainedIsNotEnabled) {
		t.Errorf("disable constrained before enable: %v", err)
	}
	enable(t, reg, con, 2)
	if err := reg.EnableTimeRegulation(Float64Time(1)); !errors.Is(err, ErrTimeRegulationAlreadyEnabled) {
		t.Errorf("enable twice: %v", err)
	}
	if err := con.EnableTimeConstrained(); !errors.Is(err, ErrTimeConstrainedAlreadyEnabled) {
		t.Errorf("constrained twice: %v", err)
	}
	if l, err := reg.QueryLookahead(); err != nil || l.Float() != 2 {
		t.Errorf("lookahead %v, %v", l, err)
	}
	// Invariant 3: a regulating federate cannot send below time + lookahead.
	err = reg.UpdateAttributeValuesWithTime(obj, AttributeValues{h.position: nil}, nil, Float64Time(1.5))
	var ite *InvalidLogicalTimeError
	if !errors.As(err, &ite) || !errors.Is(err, ErrInvalidLogicalTime) || ite.Earliest.Float() != 2 {
		t.Errorf("update below time+lookahead: %v", err)
	}
	if err := reg.SendInteractionWithTime(h.honk, nil, nil, Float64Time(0)); !errors.Is(err, ErrInvalidLogicalTime) {
		t.Errorf("interaction below time+lookahead: %v", err)
	}
	if err := reg.DeleteObjectInstanceWithTime(obj, nil, Float64Time(1)); !errors.Is(err, ErrInvalidLogicalTime) {
		t.Errorf("delete below time+lookahead: %v", err)
	}
	if err := reg.UpdateAttributeValuesWithTime(obj, AttributeValues{h.position: nil}, nil, Float64Time(2)); err != nil {
		t.Errorf("update at time+lookahead: %v", err)
	}
	// The constrained federate cannot pass the regulator's bound (2), so
	// its request stays pending.
	if err := con.TimeAdvanceRequest(Float64Time(3)); err != nil {
		t.Fatal(err)
	}
	if err := con.TimeAdvanceRequest(Float64Time(4)); !errors.Is(err, ErrInTimeAdvancingState) {
		t.Errorf("second request while advancing: %v", err)
	}
	if err := reg.TimeAdvanceRequest(Float64Time(3)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, reg, 5*time.Second, isType[TimeAdvanceGrant])
	if err := reg.TimeAdvanceRequest(Float64Time(1)); !errors.Is(err, ErrLogicalTimeAlreadyPassed) {
		t.Errorf("request into the past: %v", err)
	}
	if err := reg.TimeAdvanceRequest(Integer64Time(9)); !errors.Is(err, ErrInvalidLogicalTime) {
		t.Errorf("wrong representation: %v", err)
	}
}

// A regulator that crashes, or resigns, no longer holds the others back.
func TestLostRegulatorReleasesOthers(t *testing.T) {
	for _, how := range []string{"crash", "resign"} {
		t.Run(how, func(t *testing.T) {
			m, _ := cleanFederation(t, 2, 13)
			reg, con := m.feds[0], m.feds[1]
			enable(t, reg, con, 1)
			if err := con.TimeAdvanceRequest(Float64Time(50)); err != nil {
				t.Fatal(err)
			}
			noGrantYet(t, con, 1)
			switch how {
			case "crash":
				m.reg.Crash(m.name, reg.Handle())
				m.net.Crash(reg.Name())
			case "resign":
				if err := reg.ResignFederationExecution(t.Context(), DeleteObjects); err != nil {
					t.Fatal(err)
				}
			}
			ev, skipped := waitFor(t, con, 5*time.Second, isType[TimeAdvanceGrant])
			if g := grantOf(t, ev); g != 50 {
				t.Errorf("granted %v", g)
			}
			wantSeen := false
			for _, e := range skipped {
				switch e := e.(type) {
				case FederateLost:
					wantSeen = how == "crash" && e.Federate == reg.Handle()
				case FederateResigned:
					wantSeen = how == "resign" && e.Federate == reg.Handle()
				}
			}
			if !wantSeen {
				t.Errorf("no %s event before the grant: %#v", how, skipped)
			}
		})
	}
}

// HLAinteger64Time goes through the same services; the other
// representation, and integers beyond what the core holds exactly, are
// refused.
func TestInteger64Time(t *testing.T) {
	net := transport.NewNetwork(transport.NetworkConfig{Seed: 5})
	reg := NewMemRegistry()
	var feds []*Federate
	for _, name := range []string{"R", "C"} {
		f, err := Join(t.Context(), Config{
			Federation: "int", FederateName: name, FOMModules: []*fomxml.Document{testDoc(t)}, Create: true,
			TimeRepresentation: HLAinteger64Time, Control: reg.Control("int"), Transport: net.Endpoint(name),
			TickInterval: 2 * time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		feds = append(feds, f)
	}
	r, c := feds[0], feds[1]
	if err := r.EnableTimeRegulation(Integer64Time(2)); err != nil {
		t.Fatal(err)
	}
	ev, _ := waitFor(t, r, 5*time.Second, isType[TimeRegulationEnabled])
	if _, ok := ev.(TimeRegulationEnabled).Time.(Integer64Time); !ok {
		t.Errorf("regulation enabled at %#v, want an Integer64Time", ev)
	}
	if err := c.EnableTimeConstrained(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, 5*time.Second, isType[TimeConstrainedEnabled])
	if err := c.TimeAdvanceRequest(Integer64Time(1)); err != nil {
		t.Fatal(err)
	}
	ev, _ = waitFor(t, c, 5*time.Second, isType[TimeAdvanceGrant])
	if g, ok := ev.(TimeAdvanceGrant).Time.(Integer64Time); !ok || g != 1 {
		t.Errorf("grant %#v, want Integer64Time(1)", ev)
	}
	if err := c.TimeAdvanceRequest(Float64Time(3)); !errors.Is(err, ErrInvalidLogicalTime) {
		t.Errorf("float time in an integer federation: %v", err)
	}
	if err := c.TimeAdvanceRequest(Integer64Time(1 << 60)); !errors.Is(err, ErrInvalidLogicalTime) {
		t.Errorf("time beyond 2^53: %v", err)
	}
	if _, err := Join(t.Context(), Config{Federation: "x", TimeRepresentation: "HLAdecimalTime"}); !errors.Is(err, ErrCouldNotCreateLogicalTimeFactory) {
		t.Errorf("unknown time representation: %v", err)
	}
}

// TestTimeAdvanceSendsItself: in lockstep, each federate's time advance
// request sends its promise on the caller's goroutine when the writer is
// idle (Stats.Led), rather than through a switch to the writer goroutine:
// the caller waits for the grant, so nothing of its could bundle up.
func TestTimeAdvanceSendsItself(t *testing.T) {
	m := newMemFederation(t, 2, transport.Faults{}, 1)
	feds := m.feds
	for _, f := range feds {
		if err := f.EnableTimeRegulation(Float64Time(1)); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range feds {
		waitFor(t, f, 5*time.Second, isType[TimeRegulationEnabled])
		if err := f.EnableTimeConstrained(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, f, 5*time.Second, isType[TimeConstrainedEnabled])
	}
	const steps = 200
	before := make([]Stats, len(feds))
	for i, f := range feds {
		before[i] = f.Stats()
	}
	errs := make(chan error, len(feds))
	for _, f := range feds {
		go func() {
			for s := 1; s <= steps; s++ {
				if err := f.TimeAdvanceRequest(Float64Time(float64(s))); err != nil {
					errs <- err
					return
				}
				for {
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					ev, err := f.Next(ctx)
					cancel()
					if err != nil {
						errs <- fmt.Errorf("%s: step %d: %w", f.Name(), s, err)
						return
					}
					if g, ok := ev.(TimeAdvanceGrant); ok {
						if g.Time.Float() != float64(s) {
							errs <- fmt.Errorf("%s: granted %v, want %d", f.Name(), g.Time, s)
							return
						}
						break
					}
				}
			}
			errs <- nil
		}()
	}
	for range feds {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for i, f := range feds {
		st := f.Stats()
		led, batches := st.Led-before[i].Led, st.Batches-before[i].Batches
		// A promise goes through the writer only when it is busy with
		// another batch (a tick's heartbeat): rare, not every step.
		if led < steps*3/4 || led > batches {
			t.Errorf("%s: %d of %d batches sent by their caller in %d steps, want at least %d", f.Name(), led, batches, steps, steps*3/4)
		}
	}
}
