package peer

import (
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/meshrti/meshrti/lbts"
	"github.com/meshrti/meshrti/peer/transport"
)

// advanceServices are the five time advance services, by the lbts kind
// their grant reports.
var advanceServices = []struct {
	kind lbts.RequestKind
	call func(*Federate, LogicalTime) error
}{
	{lbts.TimeAdvanceRequest, (*Federate).TimeAdvanceRequest},
	{lbts.TimeAdvanceRequestAvailable, (*Federate).TimeAdvanceRequestAvailable},
	{lbts.NextMessageRequest, (*Federate).NextMessageRequest},
	{lbts.NextMessageRequestAvailable, (*Federate).NextMessageRequestAvailable},
	{lbts.FlushQueueRequest, (*Federate).FlushQueueRequest},
}

// Every time advance service fails with the exceptions of 1516.1
// 8.8-8.12, and an unconstrained federate is granted each at once, with
// the grant naming the request.
func TestAdvanceServiceErrors(t *testing.T) {
	m, _ := cleanFederation(t, 2, 31)
	a, b := m.feds[0], m.feds[1]
	for _, s := range advanceServices {
		t.Run(s.kind.String(), func(t *testing.T) {
			now, _ := a.QueryLogicalTime()
			if err := s.call(a, Float64Time(now.Float()-1)); !errors.Is(err, ErrLogicalTimeAlreadyPassed) {
				t.Errorf("past: %v", err)
			}
			if err := s.call(a, Integer64Time(9)); !errors.Is(err, ErrInvalidLogicalTime) {
				t.Errorf("wrong representation: %v", err)
			}
			if err := s.call(a, Float64Time(math.NaN())); !errors.Is(err, ErrInvalidLogicalTime) {
				t.Errorf("NaN: %v", err)
			}
			if err := s.call(a, nil); !errors.Is(err, ErrInvalidLogicalTime) {
				t.Errorf("nil: %v", err)
			}
			want := now.Float() + 1
			if err := s.call(a, Float64Time(want)); err != nil {
				t.Fatal(err)
			}
			accepted := 0 // requests the grant overtook, each granted in turn
			for _, other := range advanceServices {
				err := other.call(a, Float64Time(want+1))
				if err == nil {
					accepted++
				} else if !errors.Is(err, ErrInTimeAdvancingState) {
					t.Errorf("%v while advancing: %v", other.kind, err)
				}
			}
			ev, _ := waitFor(t, a, 5*time.Second, isType[TimeAdvanceGrant])
			g := ev.(TimeAdvanceGrant)
			if g.Time.Float() != want || g.Request != s.kind {
				t.Errorf("grant %v for %v, want %v", g, s.kind, want)
			}
			// A second request made while advancing may have been
			// accepted after the grant; wait for its grant. (Counting
			// what is pending instead waited for a grant behind a late
			// membership event that was none.)
			for range accepted {
				waitFor(t, a, 5*time.Second, isType[TimeAdvanceGrant])
			}
		})
	}
	// Enables pending: b cannot hear a, so they wait for a's answer.
	m.net.Partition([]string{"F0"}, []string{"F1"})
	if err := b.EnableTimeRegulation(Float64Time(1)); err != nil {
		t.Fatal(err)
	}
	for _, s := range advanceServices {
		if err := s.call(b, Float64Time(100)); !errors.Is(err, ErrRequestForTimeRegulationPending) {
			t.Errorf("%v with regulation pending: %v", s.kind, err)
		}
	}
	c := m.add("F2", testDoc(t))
	m.net.Partition([]string{"F0", "F1"}, []string{"F2"})
	if err := c.EnableTimeConstrained(); err != nil {
		t.Fatal(err)
	}
	for _, s := range advanceServices {
		if err := s.call(c, Float64Time(100)); !errors.Is(err, ErrRequestForTimeConstrainedPending) {
			t.Errorf("%v with constrained pending: %v", s.kind, err)
		}
	}
}

// timedPair is a regulator publishing Vehicle.Position and Honk and a
// constrained subscriber, with one registered and discovered object.
func timedPair(t *testing.T, seed int64, lookahead float64) (reg, con *Federate, h testHandles, obj ObjectInstanceHandle) {
	m := newMemFederation(t, 2, transport.Faults{}, seed)
	reg, con = m.feds[0], m.feds[1]
	h = handles(t, reg)
	for _, err := range []error{
		con.SubscribeObjectClassAttributes(h.vehicle, h.position, h.label),
		con.SubscribeInteractionClass(h.honk),
		reg.PublishObjectClassAttributes(h.vehicle, h.position, h.label),
		reg.PublishInteractionClass(h.honk),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	enable(t, reg, con, lookahead)
	var err error
	if obj, err = reg.RegisterObjectInstance(h.vehicle, ""); err != nil {
		t.Fatal(err)
	}
	waitFor(t, con, 5*time.Second, isType[DiscoverObjectInstance])
	return reg, con, h, obj
}

// advanceBoth has reg advance to to, then con, and returns con's grant
// and the events delivered before it.
func advanceBoth(t *testing.T, reg, con *Federate, to float64) (Event, []Event) {
	t.Helper()
	if err := reg.TimeAdvanceRequest(Float64Time(to)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, reg, 5*time.Second, isType[TimeAdvanceGrant])
	if err := con.TimeAdvanceRequest(Float64Time(to)); err != nil {
		t.Fatal(err)
	}
	return waitFor(t, con, 5*time.Second, isType[TimeAdvanceGrant])
}

// waitGrant waits for con's grant, fails t unless it is to want and
// answers a request of kind, and returns the events delivered before it.
func waitGrant(t *testing.T, con *Federate, want float64, kind lbts.RequestKind) []Event {
	t.Helper()
	ev, before := waitFor(t, con, 5*time.Second, isType[TimeAdvanceGrant])
	if g := ev.(TimeAdvanceGrant); g.Time.Float() != want || g.Request != kind {
		t.Fatalf("grant %v, want %v (%v)", g, want, kind)
	}
	return before
}

// waitLITS waits until con's LITS is want.
func waitLITS(t *testing.T, con *Federate, want float64) {
	t.Helper()
	waitQueried(t, "LITS", con.QueryLITS, want)
}

// waitQueued waits until con holds n time-stamp-order messages queued.
func waitQueued(t *testing.T, con *Federate, n int) {
	t.Helper()
	waitStatus(t, con, fmt.Sprintf("%d messages queued", n), func(st lbts.Status) bool { return st.Queued == n })
}

// NMR(10) with a message queued at 5 delivers it and grants 5; then
// NMR(7) with nothing queued below 7 grants 7 and delivers nothing.
func TestNextMessageRequest(t *testing.T) {
	reg, con, h, obj := timedPair(t, 32, 1)
	if _, ok, _ := con.QueryLITS(); !ok {
		t.Fatal("no LITS with a regulator")
	}
	if err := reg.UpdateAttributeValuesWithTime(obj, AttributeValues{h.position: []byte("p5")}, nil, Float64Time(5)); err != nil {
		t.Fatal(err)
	}
	if err := reg.TimeAdvanceRequest(Float64Time(20)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, reg, 5*time.Second, isType[TimeAdvanceGrant])
	waitLITS(t, con, 5) // the queued message is below the GALT, 21
	if err := con.NextMessageRequest(Float64Time(10)); err != nil {
		t.Fatal(err)
	}
	before := waitGrant(t, con, 5, lbts.NextMessageRequest)
	if len(before) != 1 {
		t.Fatalf("before the grant: %v", before)
	}
	if r, ok := before[0].(ReflectAttributeValues); !ok || r.Time.Float() != 5 || r.ReceivedOrder != TimeStamp {
		t.Fatalf("delivered %#v", before[0])
	}
	if err := con.NextMessageRequest(Float64Time(7)); err != nil {
		t.Fatal(err)
	}
	ev, before := waitFor(t, con, 5*time.Second, isType[TimeAdvanceGrant])
	if g := grantOf(t, ev); g != 7 || len(before) != 0 {
		t.Fatalf("grant %v after %v, want 7 after nothing", g, before)
	}
}

// FQR delivers the whole queue, also beyond the requested time, and
// grants the smallest of the request, GALT and the earliest message.
func TestFlushQueueRequest(t *testing.T) {
	reg, con, h, obj := timedPair(t, 33, 1)
	for _, ts := range []float64{4, 9} {
		if err := reg.UpdateAttributeValuesWithTime(obj, AttributeValues{h.position: nil}, nil, Float64Time(ts)); err != nil {
			t.Fatal(err)
		}
	}
	if err := reg.TimeAdvanceRequest(Float64Time(10)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, reg, 5*time.Second, isType[TimeAdvanceGrant])
	waitLITS(t, con, 4)
	if err := con.FlushQueueRequest(Float64Time(6)); err != nil {
		t.Fatal(err)
	}
	before := waitGrant(t, con, 4, lbts.FlushQueueRequest)
	if len(before) != 2 {
		t.Fatalf("delivered %v, want both messages", before)
	}
}

// Retract: the exceptions of 1516.1 8.21, a queued message that is
// dropped, and a delivered one that becomes a RequestRetraction.
func TestRetract(t *testing.T) {
	reg, con, h, obj := timedPair(t, 34, 1)
	if err := con.Retract(MessageRetractionHandle{Federate: con.Handle(), Serial: 1}); !errors.Is(err, ErrTimeRegulationIsNotEnabled) {
		t.Errorf("retract when not regulating: %v", err)
	}
	if err := reg.Retract(MessageRetractionHandle{}); !errors.Is(err, ErrInvalidMessageRetractionHandle) {
		t.Errorf("zero handle: %v", err)
	}
	if err := reg.Retract(MessageRetractionHandle{Federate: con.Handle(), Serial: 1}); !errors.Is(err, ErrInvalidMessageRetractionHandle) {
		t.Errorf("another federate's handle: %v", err)
	}
	if err := reg.Retract(MessageRetractionHandle{Federate: reg.Handle(), Serial: 1 << 60}); !errors.Is(err, ErrInvalidMessageRetractionHandle) {
		t.Errorf("handle never given out: %v", err)
	}
	// A receive-order update gets no valid handle.
	ro, err := reg.UpdateAttributeValuesWithTimeRetractable(obj, AttributeValues{h.label: []byte("l")}, nil, Float64Time(3))
	if err != nil || ro.Valid() {
		t.Errorf("receive-order update: handle %v, %v", ro, err)
	}
	h5, err := reg.UpdateAttributeValuesWithTimeRetractable(obj, AttributeValues{h.position: []byte("p5")}, []byte("p5"), Float64Time(5))
	if err != nil || !h5.Valid() || h5.Federate != reg.Handle() {
		t.Fatalf("handle %v, %v", h5, err)
	}
	h6, err := reg.SendInteractionWithTimeRetractable(h.honk, nil, []byte("h6"), Float64Time(6))
	if err != nil || !h6.Valid() {
		t.Fatalf("interaction handle %v, %v", h6, err)
	}
	h7, err := reg.UpdateAttributeValuesWithTimeRetractable(obj, AttributeValues{h.position: []byte("p7")}, []byte("p7"), Float64Time(7))
	if err != nil {
		t.Fatal(err)
	}
	waitQueued(t, con, 3)
	// h5 is retracted while queued at the receiver: never delivered.
	if err := reg.Retract(h5); err != nil {
		t.Fatal(err)
	}
	if err := reg.Retract(h5); !errors.Is(err, ErrInvalidMessageRetractionHandle) {
		t.Errorf("retract twice: %v", err)
	}
	waitQueued(t, con, 2)
	// h6 and h7 are delivered by a grant to 6.5; the regulator, still at
	// 0, may retract h6 afterwards: the receiver is asked to.
	ev, before := advanceBoth(t, reg, con, 6.5)
	// Before the grant: the receive-order label (held until now) and h6.
	if grantOf(t, ev) != 6.5 || len(before) != 2 {
		t.Fatalf("before the grant to 6.5: %v", before)
	}
	if r, ok := before[0].(ReflectAttributeValues); !ok || r.ReceivedOrder != Receive {
		t.Fatalf("delivered %#v, want the receive-order label", before[0])
	}
	ri, ok := before[1].(ReceiveInteraction)
	if !ok || ri.Retraction != h6 {
		t.Fatalf("delivered %#v, want the interaction with handle %v", before[1], h6)
	}
	if err := reg.Retract(h6); !errors.Is(err, ErrMessageCanNoLongerBeRetracted) {
		t.Errorf("retract at 6 after a grant to 6.5: %v", err)
	}
	if err := reg.Retract(h7); err != nil {
		t.Fatal(err)
	}
	// h7 was still queued: dropped. Deliver what is left with a grant.
	if err := reg.TimeAdvanceRequest(Float64Time(10)); err != nil {
		t.Fatal(err)
	}
	if err := con.TimeAdvanceRequest(Float64Time(10)); err != nil {
		t.Fatal(err)
	}
	ev, before = waitFor(t, con, 5*time.Second, isType[TimeAdvanceGrant])
	if grantOf(t, ev) != 10 || len(before) != 0 {
		t.Fatalf("retracted messages delivered: %v", before)
	}
}

// A retraction reaching a receiver that was already delivered the message
// (it is not constrained, so it got it at once) becomes RequestRetraction.
func TestRequestRetraction(t *testing.T) {
	reg, con, h, obj := timedPair(t, 35, 1)
	if err := con.DisableTimeConstrained(); err != nil {
		t.Fatal(err)
	}
	mrh, err := reg.UpdateAttributeValuesWithTimeRetractable(obj, AttributeValues{h.position: []byte("p")}, nil, Float64Time(5))
	if err != nil {
		t.Fatal(err)
	}
	ev, _ := waitFor(t, con, 5*time.Second, isType[ReflectAttributeValues])
	if r := ev.(ReflectAttributeValues); r.ReceivedOrder != Receive || r.SentOrder != TimeStamp || r.Retraction != mrh {
		t.Fatalf("reflect %#v", r)
	}
	if err := reg.Retract(mrh); err != nil {
		t.Fatal(err)
	}
	ev, _ = waitFor(t, con, 5*time.Second, isType[RequestRetraction])
	if ev.(RequestRetraction).Handle != mrh {
		t.Errorf("request retraction of %v, want %v", ev, mrh)
	}
}

// Disabling constrained delivers the queued time-stamp-order messages
// at once, in receive order.
func TestDisableConstrainedReleasesQueue(t *testing.T) {
	reg, con, h, obj := timedPair(t, 36, 1)
	if err := reg.UpdateAttributeValuesWithTime(obj, AttributeValues{h.position: []byte("p")}, nil, Float64Time(5)); err != nil {
		t.Fatal(err)
	}
	waitQueued(t, con, 1)
	if err := con.DisableTimeConstrained(); err != nil {
		t.Fatal(err)
	}
	ev, _ := waitFor(t, con, 5*time.Second, isType[ReflectAttributeValues])
	if r := ev.(ReflectAttributeValues); r.ReceivedOrder != Receive || r.SentOrder != TimeStamp || r.Time.Float() != 5 {
		t.Fatalf("reflect %#v", r)
	}
}

// Order-type overrides change whether a message travels in time-stamp
// order, and fail with the exceptions of 1516.1 8.23 and 8.24.
func TestChangeOrderType(t *testing.T) {
	reg, con, h, obj := timedPair(t, 37, 1)
	if err := con.EnableAsynchronousDelivery(); err != nil {
		t.Fatal(err)
	}
	// Errors.
	if err := reg.ChangeAttributeOrderType(ObjectInstanceHandle{Federate: 99, Serial: 1}, Receive, h.position); !errors.Is(err, ErrObjectInstanceNotKnown) {
		t.Errorf("unknown instance: %v", err)
	}
	if err := reg.ChangeAttributeOrderType(obj, Receive, h.doors); !errors.Is(err, ErrAttributeNotDefined) {
		t.Errorf("undefined attribute: %v", err)
	}
	if err := reg.ChangeAttributeOrderType(obj, Receive, h.noise); !errors.Is(err, ErrAttributeNotOwned) {
		t.Errorf("attribute not owned (not published): %v", err)
	}
	if err := con.ChangeAttributeOrderType(obj, Receive, h.position); !errors.Is(err, ErrAttributeNotOwned) {
		t.Errorf("another federate's instance: %v", err)
	}
	if err := reg.ChangeAttributeOrderType(obj, OrderType(7), h.position); !errors.Is(err, ErrInvalidOrderType) {
		t.Errorf("order 7: %v", err)
	}
	if err := reg.ChangeInteractionOrderType(InteractionClassHandle(12345), Receive); !errors.Is(err, ErrInteractionClassNotDefined) {
		t.Errorf("undefined interaction: %v", err)
	}
	if err := con.ChangeInteractionOrderType(h.honk, Receive); !errors.Is(err, ErrInteractionClassNotPublished) {
		t.Errorf("unpublished interaction: %v", err)
	}
	// Position (TimeStamp in the FOM) now goes receive order; Label
	// (Receive) time-stamp order; Honk receive order.
	must := mustOK(t)
	must(reg.ChangeAttributeOrderType(obj, Receive, h.position))
	must(reg.ChangeAttributeOrderType(obj, TimeStamp, h.label))
	must(reg.ChangeInteractionOrderType(h.honk, Receive))
	must(reg.UpdateAttributeValuesWithTime(obj, AttributeValues{h.position: []byte("p")}, nil, Float64Time(5)))
	ev, _ := waitFor(t, con, 5*time.Second, isType[ReflectAttributeValues])
	if r := ev.(ReflectAttributeValues); r.SentOrder != Receive || r.ReceivedOrder != Receive {
		t.Errorf("position: %#v", r)
	}
	must(reg.SendInteractionWithTime(h.honk, nil, nil, Float64Time(5)))
	ev, _ = waitFor(t, con, 5*time.Second, isType[ReceiveInteraction])
	if r := ev.(ReceiveInteraction); r.SentOrder != Receive {
		t.Errorf("honk: %#v", r)
	}
	must(reg.UpdateAttributeValuesWithTime(obj, AttributeValues{h.label: []byte("l")}, nil, Float64Time(5)))
	waitQueued(t, con, 1)
	must(reg.TimeAdvanceRequest(Float64Time(6)))
	must(con.TimeAdvanceRequest(Float64Time(6)))
	ev, before := waitFor(t, con, 5*time.Second, isType[TimeAdvanceGrant])
	if len(before) != 1 {
		t.Fatalf("before grant: %v", before)
	}
	if r, ok := before[0].(ReflectAttributeValues); !ok || r.SentOrder != TimeStamp || r.ReceivedOrder != TimeStamp {
		t.Errorf("label: %#v", before[0])
	}
	_ = ev
}

// Asynchronous delivery: off by default, a constrained federate gets
// receive-order messages only while advancing; on, at once.
func TestAsynchronousDelivery(t *testing.T) {
	reg, con, h, obj := timedPair(t, 38, 1)
	if err := con.DisableAsynchronousDelivery(); !errors.Is(err, ErrAsynchronousDeliveryAlreadyDisabled) {
		t.Errorf("disable by default: %v", err)
	}
	if err := reg.UpdateAttributeValues(obj, AttributeValues{h.label: []byte("held")}, nil); err != nil {
		t.Fatal(err)
	}
	// A later time-stamped message proves the earlier one arrived.
	if err := reg.UpdateAttributeValuesWithTime(obj, AttributeValues{h.position: nil}, nil, Float64Time(3)); err != nil {
		t.Fatal(err)
	}
	waitQueued(t, con, 1)
	if n := con.Pending(); n != 0 {
		t.Fatalf("%d events delivered while not advancing", n)
	}
	if err := con.TimeAdvanceRequest(Float64Time(0.5)); err != nil {
		t.Fatal(err)
	}
	ev, before := waitFor(t, con, 5*time.Second, isType[TimeAdvanceGrant])
	if len(before) != 1 || grantOf(t, ev) != 0.5 {
		t.Fatalf("before the grant: %v", before)
	}
	if err := con.EnableAsynchronousDelivery(); err != nil {
		t.Fatal(err)
	}
	if err := con.EnableAsynchronousDelivery(); !errors.Is(err, ErrAsynchronousDeliveryAlreadyEnabled) {
		t.Errorf("enable twice: %v", err)
	}
	if err := reg.UpdateAttributeValues(obj, AttributeValues{h.label: []byte("async")}, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, con, 5*time.Second, isType[ReflectAttributeValues])
	if err := con.DisableAsynchronousDelivery(); err != nil {
		t.Fatal(err)
	}
}

// Over the gossip control plane: two federates waiting in NMR at zero
// lookahead on a regulator whose node goes away are released once it is
// declared lost, within memberlist's failure-detection time.
func TestCrashedRegulatorReleasesNMR(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for gossip failure detection")
	}
	net := transport.NewNetwork(transport.NetworkConfig{Seed: 39})
	federation := fmt.Sprintf("nmr-crash-%d", os.Getpid())
	a := gossipMember(t, net, federation, "A", "")
	seed, _ := a.GossipAddr()
	b := gossipMember(t, net, federation, "B", seed)
	c := gossipMember(t, net, federation, "C", seed)
	for _, f := range []*Federate{a, b} {
		waitFor(t, f, 10*time.Second, func(ev Event) bool {
			j, ok := ev.(FederateJoined)
			return ok && j.Name == "C"
		})
	}
	for _, f := range []*Federate{a, b, c} {
		if err := f.EnableTimeRegulation(Float64Time(0)); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []*Federate{a, b, c} {
		waitFor(t, f, 10*time.Second, isType[TimeRegulationEnabled])
	}
	for _, f := range []*Federate{a, b} {
		if err := f.EnableTimeConstrained(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, f, 10*time.Second, isType[TimeConstrainedEnabled])
	}
	for _, f := range []*Federate{a, b} {
		if err := f.NextMessageRequest(Float64Time(5)); err != nil {
			t.Fatal(err)
		}
	}
	noGrantYet(t, a, 0) // C, regulating at 0 and not advancing, holds both
	start := time.Now()
	c.Close()
	for _, f := range []*Federate{a, b} {
		ev, skipped := waitFor(t, f, 20*time.Second, isType[TimeAdvanceGrant])
		if g := ev.(TimeAdvanceGrant); g.Time.Float() != 5 || g.Request != lbts.NextMessageRequest {
			t.Errorf("%s granted %v", f.Name(), g)
		}
		lost := false
		for _, e := range skipped {
			if l, ok := e.(FederateLost); ok && l.Name == "C" {
				lost = true
			}
		}
		if !lost {
			t.Errorf("%s: no FederateLost for C before the grant: %v", f.Name(), skipped)
		}
	}
	t.Logf("C lost and A, B granted %v after C's node went away", time.Since(start).Round(time.Millisecond))
}

// Held receive-order messages and queued time-stamp-order ones keep their
// own values while later messages arrive (the receiving side decodes
// every message into one reused buffer and copies those it keeps).
func TestHeldAndQueuedKeepTheirValues(t *testing.T) {
	reg, con, h, obj := timedPair(t, 35, 1)
	const n = 4
	for i := range n {
		vals := AttributeValues{h.position: fmt.Appendf(nil, "p%d", i), h.label: fmt.Appendf(nil, "l%d", i)}
		if err := reg.UpdateAttributeValuesWithTime(obj, vals, fmt.Appendf(nil, "t%d", i), Float64Time(2+float64(i))); err != nil {
			t.Fatal(err)
		}
	}
	// The receive-order halves travel first on the same stream: once the
	// time-stamped ones are queued, the others are held.
	waitQueued(t, con, n)
	_, before := advanceBoth(t, reg, con, 10)
	var got []string
	for _, ev := range before {
		r, ok := ev.(ReflectAttributeValues)
		if !ok {
			t.Fatalf("delivered %#v", ev)
		}
		for a, v := range r.Values {
			got = append(got, fmt.Sprintf("%v:%s/%s", r.SentOrder, v, r.Tag))
			if (a == h.label) != (r.SentOrder == Receive) {
				t.Errorf("attribute %v came in %v", a, r.SentOrder)
			}
		}
	}
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("%v:l%d/t%d", Receive, i, i))
	}
	for i := range n {
		want = append(want, fmt.Sprintf("%v:p%d/t%d", TimeStamp, i, i))
	}
	if !slices.Equal(got, want) {
		t.Errorf("delivered\n%v\nwant\n%v", got, want)
	}
}
