package peer

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer/transport"
)

// manualNet drives manual federates by hand: the network hands every
// packet to a queue, and pump gives each to its receiver in order.
type manualNet struct {
	t      *testing.T
	net    *transport.Network
	reg    *MemRegistry
	queue  []manualPacket
	fedOf  map[*transport.MemEndpoint]*Federate
	feds   []*Federate
	clock  *transport.ManualClock // the network's reorder holds
	digest [32]byte               // of every packet delivered so far, in order
}

type manualPacket struct {
	to *transport.MemEndpoint
	p  transport.Packet
}

func newManualNet(t *testing.T, seed int64, faults transport.Faults) *manualNet {
	m := &manualNet{t: t, reg: NewMemRegistry(), fedOf: make(map[*transport.MemEndpoint]*Federate), clock: &transport.ManualClock{}}
	m.net = transport.NewNetwork(transport.NetworkConfig{Seed: seed, Clock: m.clock, Deliver: func(to *transport.MemEndpoint, p transport.Packet) {
		m.queue = append(m.queue, manualPacket{to, p})
	}})
	m.net.SetFaults(faults)
	t.Cleanup(func() {
		for _, f := range m.feds {
			f.Close()
		}
	})
	return m
}

func (m *manualNet) join(name string, tune func(*Config)) *Federate {
	m.t.Helper()
	ep := m.net.Endpoint(name)
	cfg := Config{
		Federation: "manual", FederateName: name, FOMModules: []*fomxml.Document{testDoc(m.t)}, Create: true,
		Control: m.reg.ManualControl("manual"), Transport: ep, Manual: true, Incarnation: uint64(len(m.feds) + 1),
	}
	if tune != nil {
		tune(&cfg)
	}
	f, err := Join(context.Background(), cfg)
	if err != nil {
		m.t.Fatalf("join %s: %v", name, err)
	}
	m.fedOf[ep] = f
	m.feds = append(m.feds, f)
	return f
}

// pump delivers every queued packet, and what those make the receivers
// send, until the network is quiet.
func (m *manualNet) pump() {
	for len(m.queue) > 0 {
		q := m.queue[0]
		m.queue = m.queue[1:]
		m.digest = sha256.Sum256(append(m.digest[:], q.p.Data...))
		if err := m.fedOf[q.to].Deliver(q.p); err != nil && !errors.Is(err, ErrClosed) {
			m.t.Fatal(err)
		}
	}
}

// run ticks every federate n times, pumping after each round.
func (m *manualNet) run(n int) {
	for range n {
		for _, f := range m.feds {
			if err := f.Tick(); err != nil && !errors.Is(err, ErrClosed) {
				m.t.Fatal(err)
			}
		}
		m.pump()
		m.clock.Advance(time.Millisecond)
		m.pump()
	}
}

// take returns the events f has queued, without waiting.
func take(f *Federate) []Event {
	var evs []Event
	for f.Pending() > 0 {
		ev, err := f.Next(context.Background())
		if err != nil {
			break
		}
		evs = append(evs, ev)
	}
	return evs
}

func TestManualConfigErrors(t *testing.T) {
	doc := testDoc(t)
	net := transport.NewNetwork(transport.NetworkConfig{})
	reg := NewMemRegistry()
	base := Config{Federation: "manual", FOMModules: []*fomxml.Document{doc}, Create: true, Manual: true}

	c := base
	c.Control = reg.ManualControl("manual")
	if err := c.Validate(); err == nil {
		t.Error("Manual without a Transport was accepted")
	}
	c = base
	c.Transport = net.Endpoint("a")
	if err := c.Validate(); err == nil {
		t.Error("Manual without a Control was accepted")
	}
	c.Control = struct{ ControlPlane }{reg.Control("manual")} // not known to be deterministic
	if _, err := Join(context.Background(), c); err == nil || !strings.Contains(err.Error(), "MemRegistry") {
		t.Errorf("Manual with a control plane other than MemRegistry's: %v, want an error naming MemRegistry", err)
	}

	m := newMemFederation(t, 1, transport.Faults{}, 1)
	if err := m.feds[0].Deliver(transport.Packet{}); err == nil {
		t.Error("Deliver on a federate that runs itself was accepted")
	}
	if err := m.feds[0].Tick(); err == nil {
		t.Error("Tick on a federate that runs itself was accepted")
	}
}

// TestManualFederates runs two manual federates by hand over a lossy
// network: an object is discovered and its updates reflected, time
// advances, back-pressure fails at once with ErrWouldBlock, a closed
// federate refuses Deliver and Tick, and the same calls from the same
// seed put the same packets on the network.
func TestManualFederates(t *testing.T) {
	run := func(seed int64) [32]byte {
		m := newManualNet(t, seed, transport.Faults{Loss: 0.2, Duplicate: 0.1, Reorder: 0.2})
		a := m.join("A", func(c *Config) { c.Window = 16 })
		b := m.join("B", nil)
		m.run(5)
		if evs := take(a); len(evs) != 1 || !isType[FederateJoined](evs[0]) {
			t.Fatalf("A saw %v at B's join, want FederateJoined", evs)
		}
		h := handles(t, a)
		if err := b.SubscribeObjectClassAttributes(h.vehicle, h.label); err != nil {
			t.Fatal(err)
		}
		if err := a.PublishObjectClassAttributes(h.vehicle, h.label); err != nil {
			t.Fatal(err)
		}
		m.run(20)
		obj, err := a.RegisterObjectInstance(h.vehicle, "")
		if err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			if err := a.UpdateAttributeValues(obj, AttributeValues{h.label: []byte{byte(i)}}, nil); err != nil {
				t.Fatal(err)
			}
		}
		m.run(200)
		reflected := 0
		for _, ev := range take(b) {
			if r, ok := ev.(ReflectAttributeValues); ok {
				if got := r.Values[h.label]; len(got) != 1 || got[0] != byte(reflected) {
					t.Fatalf("reflection %d carries %v", reflected, got)
				}
				reflected++
			}
		}
		if reflected != 10 {
			t.Fatalf("B reflected %d of 10 updates", reflected)
		}

		// Time: both regulating and constrained, A asks for 3 and is
		// granted once B has asked too.
		for _, f := range []*Federate{a, b} {
			if err := f.EnableTimeRegulation(Float64Time(1)); err != nil {
				t.Fatal(err)
			}
			m.run(50)
			if err := f.EnableTimeConstrained(); err != nil {
				t.Fatal(err)
			}
			m.run(50)
		}
		take(a)
		take(b)
		for _, f := range []*Federate{a, b} {
			if err := f.TimeAdvanceRequest(Float64Time(3)); err != nil {
				t.Fatal(err)
			}
		}
		m.run(100)
		for _, f := range []*Federate{a, b} {
			evs := take(f)
			if len(evs) == 0 {
				t.Fatalf("%s was not granted", f.Name())
			}
			if g, ok := evs[len(evs)-1].(TimeAdvanceGrant); !ok || g.Time.Float() != 3 {
				t.Fatalf("%s saw %v, want a grant to 3 last", f.Name(), evs)
			}
		}

		// Back-pressure: B takes nothing, so A's window of 16 fills and
		// the next update fails at once instead of waiting for a
		// driver that cannot run meanwhile.
		if err := b.SubscribeObjectClassAttributes(h.vehicle, h.label); err != nil {
			t.Fatal(err)
		}
		m.queue = nil
		blocked := false
		for i := 0; i < 1000 && !blocked; i++ {
			err := a.UpdateAttributeValues(obj, AttributeValues{h.label: []byte{1}}, nil)
			blocked = errors.Is(err, ErrWouldBlock)
			if err != nil && !blocked {
				t.Fatal(err)
			}
			m.queue = nil // lost on the way: B acknowledges nothing
		}
		if !blocked {
			t.Fatal("a full window did not fail with ErrWouldBlock")
		}

		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if err := b.Tick(); !errors.Is(err, ErrClosed) {
			t.Errorf("Tick after Close: %v, want ErrClosed", err)
		}
		if err := b.Deliver(transport.Packet{}); !errors.Is(err, ErrClosed) {
			t.Errorf("Deliver after Close: %v, want ErrClosed", err)
		}
		return m.digest
	}
	d1, d2, d3 := run(1), run(1), run(2)
	if d1 != d2 {
		t.Errorf("two runs from seed 1 put different packets on the network: %x and %x", d1, d2)
	}
	if d1 == d3 {
		t.Errorf("seeds 1 and 2 put the same packets on the network")
	}
}

// TestManualReservation: a manual federate's name reservation is
// answered within the call, with no goroutine.
func TestManualReservation(t *testing.T) {
	m := newManualNet(t, 1, transport.Faults{})
	a, b := m.join("A", nil), m.join("B", nil)
	for i, f := range []*Federate{a, b} {
		if err := f.ReserveObjectInstanceName("tank"); err != nil {
			t.Fatal(err)
		}
		evs := take(f)
		want := "ObjectInstanceNameReservationSucceeded"
		if i == 1 {
			want = "ObjectInstanceNameReservationFailed"
		}
		if len(evs) != 1 || fmt.Sprintf("%T", evs[0]) != "hla."+want {
			t.Errorf("%s: %v, want %s", f.Name(), evs, want)
		}
	}
}
