package peer

import (
	"errors"
	"testing"
	"time"
)

// Synchronization points refuse what §4.11-§4.14 say, and two federates
// that race to register one label never both succeed.
func TestSyncPointErrorsAndRace(t *testing.T) {
	m, _ := cleanFederation(t, 3, 97)
	a, b, c := m.feds[0], m.feds[1], m.feds[2]
	if err := a.RegisterFederationSynchronizationPointWithSet("x", nil, 0); !errors.Is(err, ErrInvalidFederateHandle) {
		t.Errorf("set with handle 0: %v", err)
	}
	if err := b.SynchronizationPointAchieved("nothing", true); !errors.Is(err, ErrSynchronizationPointLabelNotAnnounced) {
		t.Errorf("achieve unannounced: %v", err)
	}
	for round := range 20 {
		label := "race" + string(rune('a'+round))
		if err := a.RegisterFederationSynchronizationPoint(label, nil); err != nil {
			t.Fatal(err)
		}
		if err := b.RegisterFederationSynchronizationPoint(label, nil); err != nil {
			t.Fatal(err)
		}
		// Each racer hears how its registration went; everyone is
		// announced the point, in whatever order with the rest.
		succeeded := 0
		for _, f := range []*Federate{a, b, c} {
			result, announced := f == c, false
			for !result || !announced {
				ev, _ := waitFor(t, f, 5*time.Second, func(Event) bool { return true })
				switch e := ev.(type) {
				case SynchronizationPointRegistrationSucceeded:
					result = result || e.Label == label
					if e.Label == label {
						succeeded++
					}
				case SynchronizationPointRegistrationFailed:
					result = result || e.Label == label
					if e.Label == label && e.Reason != SynchronizationPointLabelNotUnique {
						t.Errorf("%s: failed for %v", label, e.Reason)
					}
				case AnnounceSynchronizationPoint:
					announced = announced || e.Label == label
				}
			}
		}
		if succeeded != 1 {
			t.Fatalf("%s: %d registrations succeeded, want 1", label, succeeded)
		}
		for _, f := range []*Federate{a, b, c} {
			if err := f.SynchronizationPointAchieved(label, true); err != nil {
				t.Fatal(err)
			}
		}
		for _, f := range []*Federate{a, b, c} {
			ev, _ := waitFor(t, f, 5*time.Second, func(ev Event) bool {
				e, ok := ev.(FederationSynchronized)
				return ok && e.Label == label
			})
			if len(ev.(FederationSynchronized).Failed) != 0 {
				t.Errorf("%s: failed %v", label, ev.(FederationSynchronized).Failed)
			}
		}
	}
	if err := c.ResignFederationExecution(t.Context(), NoAction); err != nil {
		t.Fatal(err)
	}
	if err := c.RegisterFederationSynchronizationPoint("late", nil); err == nil {
		t.Error("register after resigning: no error")
	}
}

// A point is synchronized when its last missing member resigns.
func TestSyncPointReleasedByResign(t *testing.T) {
	m, _ := cleanFederation(t, 3, 98)
	a, b, c := m.feds[0], m.feds[1], m.feds[2]
	if err := a.RegisterFederationSynchronizationPoint("last", nil); err != nil {
		t.Fatal(err)
	}
	for _, f := range []*Federate{a, b, c} {
		waitFor(t, f, 5*time.Second, isType[AnnounceSynchronizationPoint])
	}
	for _, f := range []*Federate{a, b} {
		if err := f.SynchronizationPointAchieved("last", true); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.ResignFederationExecution(t.Context(), NoAction); err != nil {
		t.Fatal(err)
	}
	for _, f := range []*Federate{a, b} {
		ev, _ := waitFor(t, f, 5*time.Second, isType[FederationSynchronized])
		if e := ev.(FederationSynchronized); e.Label != "last" || len(e.Failed) != 0 {
			t.Errorf("%s: %+v", f.Name(), e)
		}
	}
}
