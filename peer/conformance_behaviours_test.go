package peer

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A regulator enabled late starts where the constrained federates are,
// not lookahead below it: B, constrained, was granted 100 by Time
// Advance Request, so no time-stamped message at or below 100 may reach
// it; C, enabling regulation with lookahead 5, starts at 100 (at 95 it
// could still send a message stamped 100) and may send from 105 on.
// docs/conformance.md.
func TestConformanceLateRegulator(t *testing.T) {
	m, h := cleanFederation(t, 2, 37)
	a, b := m.feds[0], m.feds[1]
	must := mustOK(t)
	enable(t, a, b, 1)
	must(a.TimeAdvanceRequest(Float64Time(100)))
	waitFor(t, a, 5*time.Second, isType[TimeAdvanceGrant])
	must(b.TimeAdvanceRequest(Float64Time(100)))
	if ev, _ := waitFor(t, b, 5*time.Second, isType[TimeAdvanceGrant]); grantOf(t, ev) != 100 {
		t.Fatalf("B granted %v, want 100", grantOf(t, ev))
	}
	c := m.add("C", testDoc(t))
	must(c.PublishInteractionClass(h.honk))
	must(c.EnableTimeRegulation(Float64Time(5)))
	ev, _ := waitFor(t, c, 5*time.Second, isType[TimeRegulationEnabled])
	if at := ev.(TimeRegulationEnabled).Time.Float(); at <= 95 {
		t.Fatalf("C's regulation enabled at %v, not above 95", at)
	} else if at != 100 {
		t.Errorf("C's regulation enabled at %v, want 100", at)
	}
	if _, err := c.SendInteractionWithTimeRetractable(h.honk, ParameterValues{h.loudness: []byte("x")}, nil, Float64Time(100)); !errors.Is(err, ErrInvalidLogicalTime) {
		t.Errorf("C sends at 100: %v, want InvalidLogicalTime", err)
	}
	if _, err := c.SendInteractionWithTimeRetractable(h.honk, ParameterValues{h.loudness: []byte("x")}, nil, Float64Time(105)); err != nil {
		t.Errorf("C sends at 105: %v", err)
	}
}

// A time-stamped message delivered to a federate that is not
// time-constrained keeps its time stamp, in receive order: the
// reflection says it was sent in time-stamp order, received in receive
// order, and carries the time. docs/conformance.md.
func TestConformanceTSOToUnconstrained(t *testing.T) {
	reg, con, h, obj := timedPair(t, 38, 1)
	mustOK(t)(con.DisableTimeConstrained())
	mustOK(t)(reg.UpdateAttributeValuesWithTime(obj, AttributeValues{h.position: []byte("p")}, nil, Float64Time(5)))
	ev, _ := waitFor(t, con, 5*time.Second, isType[ReflectAttributeValues])
	r := ev.(ReflectAttributeValues)
	if r.ReceivedOrder != Receive || r.SentOrder != TimeStamp || r.Time == nil || r.Time.Float() != 5 {
		t.Errorf("reflect: received %v, sent %v, time %v; want Receive, TimeStamp, 5", r.ReceivedOrder, r.SentOrder, r.Time)
	}
}

// An instance deleted locally (Local Delete Object Instance) is
// discovered again with its next update, not at once: B forgets it,
// nothing comes while A is quiet, and A's next update brings a discovery
// and then the reflection. docs/conformance.md.
func TestConformanceLocalDeleteRediscovered(t *testing.T) {
	m, h := cleanFederation(t, 2, 39)
	a, b := m.feds[0], m.feds[1]
	must := mustOK(t)
	must(a.PublishObjectClassAttributes(h.vehicle, h.position))
	must(b.SubscribeObjectClassAttributes(h.vehicle, h.position))
	obj, err := a.RegisterObjectInstance(h.vehicle, "")
	must(err)
	waitFor(t, b, 5*time.Second, isType[DiscoverObjectInstance])
	must(a.UpdateAttributeValues(obj, AttributeValues{h.position: []byte("p1")}, nil))
	waitFor(t, b, 5*time.Second, isType[ReflectAttributeValues])
	must(b.LocalDeleteObjectInstance(obj))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if ev, err := b.Next(ctx); err == nil {
		t.Fatalf("after the local delete, before any update: %#v", ev)
	}
	must(a.UpdateAttributeValues(obj, AttributeValues{h.position: []byte("p2")}, nil))
	ev, _ := waitFor(t, b, 5*time.Second, isType[DiscoverObjectInstance])
	if ev.(DiscoverObjectInstance).Object != obj {
		t.Errorf("discovered %#v, want %v again", ev, obj)
	}
	ev, _ = waitFor(t, b, 5*time.Second, isType[ReflectAttributeValues])
	if r := ev.(ReflectAttributeValues); r.Object != obj || string(r.Values[h.position]) != "p2" {
		t.Errorf("reflect %#v, want p2 of %v", r, obj)
	}
}
