package monitor

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/hla"
	"github.com/meshrti/meshrti/peer/transport"
)

// memFed is a federation in this process (peer.MemRegistry and an
// in-memory network).
type memFed struct {
	t   *testing.T
	reg *peer.MemRegistry
	net *transport.Network
	dir string
	n   int
}

func newMemFed(t *testing.T) *memFed {
	return &memFed{t: t, reg: peer.NewMemRegistry(), net: transport.NewNetwork(transport.NetworkConfig{Seed: 7}), dir: t.TempDir()}
}

func (m *memFed) join(name string) *peer.Federate {
	m.t.Helper()
	m.n++
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f, err := peer.Join(ctx, peer.Config{
		Federation: "mon", FederateName: name, FederateType: "t", Create: m.n == 1,
		Control: m.reg.Control("mon"), Transport: m.net.Endpoint(fmt.Sprintf("%s-%d", name, m.n)),
		TickInterval: 2 * time.Millisecond, SaveDir: m.dir,
	})
	if err != nil {
		m.t.Fatalf("join %s: %v", name, err)
	}
	m.t.Cleanup(func() { f.Close() })
	return f
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10 s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// next reads fed's events until one of type T comes.
func next[T peer.Event](t *testing.T, fed *peer.Federate) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		ev, err := fed.Next(ctx)
		if err != nil {
			var zero T
			t.Fatalf("waiting for %T: %v", zero, err)
		}
		if e, ok := ev.(T); ok {
			return e
		}
	}
}

// The monitor holds no synchronization point or save back (it does its
// part at once), shows the point while it is in progress, and shows a
// federate lost when the control plane loses it.
func TestMonitorDoesItsPart(t *testing.T) {
	m := newMemFed(t)
	alpha, beta := m.join("alpha"), m.join("beta")
	mf := m.join("monitor")
	mon, err := Start(Config{Federate: mf, Federation: "mon", Period: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close()
	find := func(name string) (Federate, bool) {
		for _, f := range mon.Snapshot().Federates {
			if f.Name == name {
				return f, true
			}
		}
		return Federate{}, false
	}
	waitFor(t, "alpha and beta with values", func() bool {
		a, _ := find("alpha")
		b, _ := find("beta")
		return a.Type == "t" && b.Type == "t"
	})

	// A point alpha and beta have not achieved yet is in progress; the
	// monitor achieved it.
	if err := alpha.RegisterFederationSynchronizationPoint("ready", nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the point with the monitor achieved", func() bool {
		for _, p := range mon.Snapshot().SyncPoints {
			if p.Label == "ready" && !p.Synchronized && p.Federates["monitor"] == "WaitingForRestOfFederation" && p.Federates["alpha"] == "MovingToSynchPoint" {
				return true
			}
		}
		return false
	})
	for _, f := range []*peer.Federate{alpha, beta} {
		if err := f.SynchronizationPointAchieved("ready", true); err != nil {
			t.Fatal(err)
		}
	}
	next[peer.FederationSynchronized](t, alpha)
	waitFor(t, "the point synchronized", func() bool {
		s := mon.Snapshot().SyncPoints
		return len(s) == 1 && s[0].Synchronized
	})

	// A save completes with the monitor a member.
	if err := alpha.RequestFederationSave("s1"); err != nil {
		t.Fatal(err)
	}
	for _, f := range []*peer.Federate{alpha, beta} {
		next[peer.InitiateFederateSave](t, f)
		if err := f.FederateSaveBegun(); err != nil {
			t.Fatal(err)
		}
		if err := f.FederateSaveComplete(); err != nil {
			t.Fatal(err)
		}
	}
	next[peer.FederationSaved](t, alpha)
	waitFor(t, "the last save's name", func() bool { return mon.Snapshot().Save.LastName == "s1" })

	// Lost: beta's node stops answering.
	m.reg.Crash("mon", beta.Handle())
	waitFor(t, "beta lost", func() bool {
		b, ok := find("beta")
		s := mon.Snapshot()
		return ok && b.Lost && b.State == "lost" && b.Type == "t" && len(s.Lost) == 1 && s.Lost[0].Name == "beta"
	})
	if a, _ := find("alpha"); a.Lost {
		t.Error("alpha lost")
	}
}

// Reports and values that do not decode are errors, never panics, and
// are counted.
func TestReaderBadInput(t *testing.T) {
	m := newMemFed(t)
	mf := m.join("monitor")
	rd, err := NewReader(mf)
	if err != nil {
		t.Fatal(err)
	}
	garbage := [][]byte{nil, {}, {1}, {0xff, 0xff, 0xff, 0xff}, {0, 0, 0, 9, 1, 2}, []byte("not an encoding at all")}
	for _, name := range reports {
		ic, ok := mf.FDD().InteractionClass(name)
		if !ok {
			t.Fatalf("no %s", name)
		}
		for _, g := range garbage {
			pv := peer.ParameterValues{}
			for _, p := range ic.AllParameters() {
				pv[p.Handle] = g
			}
			rep, ok, err := rd.DecodeReport(peer.ReceiveInteraction{Class: ic.Handle, Values: pv})
			if !ok {
				t.Errorf("%s: not taken for a report", ic.Name)
			}
			if err == nil && string(g) == "not an encoding at all" {
				t.Errorf("%s: %q decoded as %+v", ic.Name, g, rep)
			}
		}
	}
	oc, _ := mf.FDD().ObjectClass(federateClass)
	for _, g := range garbage {
		vals := peer.AttributeValues{}
		for _, a := range oc.AllAttributes() {
			vals[a.Handle] = g
		}
		var v FederateValues
		if err := rd.DecodeFederate(peer.ReflectAttributeValues{Object: hla.ObjectInstanceHandle{Federate: 3}, Values: vals}, &v); err == nil {
			t.Errorf("%q decoded as %+v", g, v)
		}
	}
	// Through the monitor: counted, and the picture stays whole.
	mon, err := Start(Config{Federate: mf, Federation: "mon", Period: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close()
	ic, _ := mf.FDD().InteractionClass(reportPrefix + "HLAreportFederateLost")
	pv := peer.ParameterValues{}
	for _, p := range ic.AllParameters() {
		pv[p.Handle] = []byte{1}
	}
	before := mon.failures.Load()
	mon.handle(peer.ReceiveInteraction{Class: ic.Handle, Values: pv}, time.Now())
	if mon.failures.Load() != before+1 {
		t.Error("a garbled report was not counted")
	}
	if s := mon.Snapshot(); len(s.Lost) != 0 {
		t.Errorf("a garbled report made %+v lost", s.Lost)
	}
}
