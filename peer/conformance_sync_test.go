package peer

import (
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/meshrti/meshrti/peer/transport"
)

// laggingControl is a control plane whose events reach the federate
// only while not held, like a gossip view that has not caught up yet.
type laggingControl struct {
	ControlPlane
	out  *ControlEvents
	stop chan struct{}
	wg   sync.WaitGroup

	mu   sync.Mutex
	held bool
	buf  []ControlEvent
}

func newLaggingControl(inner ControlPlane) *laggingControl {
	l := &laggingControl{ControlPlane: inner, out: NewControlEvents(), stop: make(chan struct{})}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		in := inner.Events()
		for {
			select {
			case <-l.stop:
				return
			case <-in.Wait():
			}
			evs := in.Take(nil)
			l.mu.Lock()
			if l.held {
				l.buf = append(l.buf, evs...)
				evs = nil
			}
			l.mu.Unlock()
			l.out.Push(evs...)
		}
	}()
	return l
}

func (l *laggingControl) Events() *ControlEvents { return l.out }

func (l *laggingControl) hold(h bool) {
	l.mu.Lock()
	l.held = h
	evs := l.buf
	l.buf = nil
	l.mu.Unlock()
	if !h {
		l.out.Push(evs...)
	}
}

func (l *laggingControl) Close() error {
	err := l.ControlPlane.Close()
	close(l.stop)
	l.wg.Wait()
	l.out.Close()
	return err
}

// syncResult waits for f's registration result for label.
func syncResult(t *testing.T, f *Federate, label string) Event {
	t.Helper()
	ev, _ := waitFor(t, f, 10*time.Second, func(ev Event) bool {
		switch e := ev.(type) {
		case SynchronizationPointRegistrationSucceeded:
			return e.Label == label
		case SynchronizationPointRegistrationFailed:
			return e.Label == label
		}
		return false
	})
	return ev
}

func waitSynchronized(t *testing.T, f *Federate, label string) FederationSynchronized {
	t.Helper()
	ev, _ := waitFor(t, f, 10*time.Second, func(ev Event) bool {
		e, ok := ev.(FederationSynchronized)
		return ok && e.Label == label
	})
	return ev.(FederationSynchronized)
}

// checkReregister: a label re-registered by its own registrant while its
// point is pending fails (not unique); once synchronized, it may be
// registered again.
func checkReregister(t *testing.T, a *Federate, others ...*Federate) {
	t.Helper()
	if err := a.RegisterFederationSynchronizationPoint("again", []byte("t")); err != nil {
		t.Fatal(err)
	}
	if ev, ok := syncResult(t, a, "again").(SynchronizationPointRegistrationSucceeded); !ok {
		t.Fatalf("first registration: %#v", ev)
	}
	if err := a.RegisterFederationSynchronizationPoint("again", []byte("t")); err != nil {
		t.Fatal(err)
	}
	ev := syncResult(t, a, "again")
	if e, ok := ev.(SynchronizationPointRegistrationFailed); !ok || e.Reason != SynchronizationPointLabelNotUnique {
		t.Fatalf("re-registered while pending: %#v, want failed (label not unique)", ev)
	}
	// a was announced the point once, before its second try failed.
	for _, b := range others {
		waitFor(t, b, 10*time.Second, func(ev Event) bool {
			e, ok := ev.(AnnounceSynchronizationPoint)
			return ok && e.Label == "again"
		})
	}
	all := append([]*Federate{a}, others...)
	for _, f := range all {
		if err := f.SynchronizationPointAchieved("again", true); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range all {
		if _, skipped := waitFor(t, f, 10*time.Second, func(ev Event) bool {
			e, ok := ev.(FederationSynchronized)
			return ok && e.Label == "again"
		}); slices.ContainsFunc(skipped, isType[AnnounceSynchronizationPoint]) {
			t.Errorf("%s: announced again: %v", f.Name(), skipped)
		}
	}
	// Synchronized: the label is free again (the registration waits for
	// the key to be released, if need be).
	if err := a.RegisterFederationSynchronizationPoint("again", nil); err != nil {
		t.Fatal(err)
	}
	if ev, ok := syncResult(t, a, "again").(SynchronizationPointRegistrationSucceeded); !ok {
		t.Fatalf("registration after synchronization: %#v", ev)
	}
}

// TestConformanceSyncPoints checks synchronization points at their
// edges: a label its registrant registers again while pending fails and
// may be registered once synchronized; a set naming a federate whose Join
// returned succeeds before the registrant has heard of the join, and one
// naming a federate never joined fails; the same over real gossip.
func TestConformanceSyncPoints(t *testing.T) {
	t.Run("ReregisterOwnLabel", func(t *testing.T) {
		m := newMemFederation(t, 2, transport.Faults{}, 41)
		checkReregister(t, m.feds[0], m.feds[1])
	})
	// A set naming a federate whose Join returned succeeds, although the
	// registrant has not heard of the join yet; the point then waits for
	// that federate.
	t.Run("SetMemberJustJoined", func(t *testing.T) {
		m := newMemFederation(t, 0, transport.Faults{}, 42)
		lag := newLaggingControl(m.reg.Control(m.name))
		a := m.addWith("A", testDoc(t), func(c *Config) { c.Control = lag })
		lag.hold(true)
		b := m.add("B", testDoc(t))
		if err := a.RegisterFederationSynchronizationPointWithSet("set", nil, a.Handle(), b.Handle()); err != nil {
			t.Fatal(err)
		}
		if ev, ok := syncResult(t, a, "set").(SynchronizationPointRegistrationSucceeded); !ok {
			t.Fatalf("set naming a federate that joined: %#v", ev)
		}
		waitEvent[AnnounceSynchronizationPoint](t, a)
		if err := a.SynchronizationPointAchieved("set", true); err != nil {
			t.Fatal(err)
		}
		lag.hold(false)
		waitFor(t, b, 10*time.Second, isType[AnnounceSynchronizationPoint])
		if err := b.SynchronizationPointAchieved("set", false); err != nil {
			t.Fatal(err)
		}
		for _, f := range []*Federate{a, b} {
			if e := waitSynchronized(t, f, "set"); len(e.Failed) != 1 || e.Failed[0] != b.Handle() {
				t.Errorf("%s: synchronized with failed %v, want [%d]", f.Name(), e.Failed, b.Handle())
			}
		}
		// A federate that is not joined still fails the registration.
		if err := a.RegisterFederationSynchronizationPointWithSet("ghost", nil, a.Handle(), 999); err != nil {
			t.Fatal(err)
		}
		if e, ok := syncResult(t, a, "ghost").(SynchronizationPointRegistrationFailed); !ok || e.Reason != SynchronizationSetMemberNotJoined {
			t.Fatalf("set with a federate never joined: %#v", e)
		}
	})
	t.Run("Gossip", func(t *testing.T) {
		net := transport.NewNetwork(transport.NetworkConfig{Seed: 43})
		federation := fmt.Sprintf("conf-sync-%d", os.Getpid())
		a := gossipMember(t, net, federation, "A", "")
		seed, _ := a.GossipAddr()
		var joined []*Federate
		for i := range 3 {
			b := gossipMember(t, net, federation, fmt.Sprintf("B%d", i), seed)
			joined = append(joined, b)
			// At once, before A may have heard of the join.
			label := fmt.Sprintf("set%d", i)
			if err := a.RegisterFederationSynchronizationPointWithSet(label, nil, a.Handle(), b.Handle()); err != nil {
				t.Fatal(err)
			}
			if ev, ok := syncResult(t, a, label).(SynchronizationPointRegistrationSucceeded); !ok {
				t.Fatalf("%s: set naming %s, whose Join returned: %#v", label, b.Name(), ev)
			}
			for _, f := range []*Federate{a, b} {
				waitFor(t, f, 10*time.Second, func(ev Event) bool {
					e, ok := ev.(AnnounceSynchronizationPoint)
					return ok && e.Label == label
				})
				if err := f.SynchronizationPointAchieved(label, true); err != nil {
					t.Fatal(err)
				}
			}
			for _, f := range []*Federate{a, b} {
				waitSynchronized(t, f, label)
			}
		}
		checkReregister(t, a, joined...)
	})
}
