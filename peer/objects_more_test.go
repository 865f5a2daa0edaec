package peer

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// The errors of the object management services added with the
// federation's advisories, with two federates.
func TestObjectServiceErrorsMore(t *testing.T) {
	m, h := cleanFederation(t, 2, 80)
	a, b := m.feds[0], m.feds[1]
	obj := labelFlow(t, a, b, h, 5*time.Second)
	unknown := ObjectInstanceHandle{Federate: 99, Serial: 1}
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"reserve no names", b.ReserveMultipleObjectInstanceName(), ErrNameSetWasEmpty},
		{"reserve an HLA name", b.ReserveMultipleObjectInstanceName("ok", "HLAx"), ErrIllegalName},
		{"release a name not reserved", b.ReleaseObjectInstanceName("never"), ErrObjectInstanceNameNotReserved},
		{"release names not reserved", b.ReleaseMultipleObjectInstanceName("never"), ErrObjectInstanceNameNotReserved},
		{"local delete unknown", b.LocalDeleteObjectInstance(unknown), ErrObjectInstanceNotKnown},
		{"local delete owned", a.LocalDeleteObjectInstance(obj), ErrFederateOwnsAttributes},
		{"request unknown instance", b.RequestAttributeValueUpdate(unknown, nil, h.label), ErrObjectInstanceNotKnown},
		{"request undefined attribute", b.RequestAttributeValueUpdate(obj, nil, h.doors), ErrAttributeNotDefined},
		{"request undefined class", b.RequestAttributeValueUpdateForClass(12345, nil, h.label), ErrObjectClassNotDefined},
		{"request class undefined attribute", b.RequestAttributeValueUpdateForClass(h.vehicle, nil, h.doors), ErrAttributeNotDefined},
		{"transport not owned", b.RequestAttributeTransportationTypeChange(obj, HLAbestEffort, h.label), ErrAttributeNotOwned},
		{"transport bad type", a.RequestAttributeTransportationTypeChange(obj, 7, h.label), ErrInvalidTransportationType},
		{"transport unknown instance", a.RequestAttributeTransportationTypeChange(unknown, HLAbestEffort, h.label), ErrObjectInstanceNotKnown},
		{"transport undefined attribute", a.RequestAttributeTransportationTypeChange(obj, HLAbestEffort, h.doors), ErrAttributeNotDefined},
		{"query transport unknown", b.QueryAttributeTransportationType(unknown, h.label), ErrObjectInstanceNotKnown},
		{"query transport undefined", b.QueryAttributeTransportationType(obj, h.doors), ErrAttributeNotDefined},
		{"interaction transport not published", b.RequestInteractionTransportationTypeChange(h.honk, HLAbestEffort), ErrInteractionClassNotPublished},
		{"interaction transport undefined", b.RequestInteractionTransportationTypeChange(777, HLAbestEffort), ErrInteractionClassNotDefined},
		{"query interaction transport undefined", b.QueryInteractionTransportationType(a.Handle(), 777), ErrInteractionClassNotDefined},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	must := mustOK(t)
	must(a.PublishInteractionClass(h.honk))
	must(a.RequestInteractionTransportationTypeChange(h.honk, HLAbestEffort))
	waitFor(t, a, 5*time.Second, isType[ConfirmInteractionTransportationTypeChange])
	must(a.QueryInteractionTransportationType(a.Handle(), h.honk))
	ev, _ := waitFor(t, a, 5*time.Second, isType[ReportInteractionTransportationType])
	if r := ev.(ReportInteractionTransportationType); r.Transportation != HLAbestEffort || r.Federate != a.Handle() {
		t.Errorf("report %+v", r)
	}
}

// The advisory switches refuse to be set to what they are.
func TestAdvisorySwitchErrors(t *testing.T) {
	m, _ := cleanFederation(t, 1, 81)
	f := m.feds[0]
	for _, sw := range []struct {
		on, off    func() error
		isOn, off2 error
	}{
		{f.EnableObjectClassRelevanceAdvisorySwitch, f.DisableObjectClassRelevanceAdvisorySwitch, ErrObjectClassRelevanceAdvisorySwitchIsOn, ErrObjectClassRelevanceAdvisorySwitchIsOff},
		{f.EnableAttributeRelevanceAdvisorySwitch, f.DisableAttributeRelevanceAdvisorySwitch, ErrAttributeRelevanceAdvisorySwitchIsOn, ErrAttributeRelevanceAdvisorySwitchIsOff},
		{f.EnableAttributeScopeAdvisorySwitch, f.DisableAttributeScopeAdvisorySwitch, ErrAttributeScopeAdvisorySwitchIsOn, ErrAttributeScopeAdvisorySwitchIsOff},
		{f.EnableInteractionRelevanceAdvisorySwitch, f.DisableInteractionRelevanceAdvisorySwitch, ErrInteractionRelevanceAdvisorySwitchIsOn, ErrInteractionRelevanceAdvisorySwitchIsOff},
	} {
		// The test FOM leaves every switch off.
		if err := sw.off(); !errors.Is(err, sw.off2) {
			t.Errorf("disabling an off switch: %v, want %v", err, sw.off2)
		}
		if err := sw.on(); err != nil {
			t.Fatal(err)
		}
		if err := sw.on(); !errors.Is(err, sw.isOn) {
			t.Errorf("enabling an on switch: %v, want %v", err, sw.isOn)
		}
	}
}

// Two federates racing for overlapping name sets: never both succeed,
// and a failed reservation leaves none of its names taken.
func TestMultipleReservationRace(t *testing.T) {
	m, _ := cleanFederation(t, 2, 82)
	a, b := m.feds[0], m.feds[1]
	for round := range 20 {
		x, y, z := fmt.Sprintf("x%d", round), fmt.Sprintf("y%d", round), fmt.Sprintf("z%d", round)
		errs := make(chan error, 2)
		go func() { errs <- a.ReserveMultipleObjectInstanceName(x, y) }()
		go func() { errs <- b.ReserveMultipleObjectInstanceName(y, z) }()
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		okA := isType[MultipleObjectInstanceNameReservationSucceeded](first(t, a))
		okB := isType[MultipleObjectInstanceNameReservationSucceeded](first(t, b))
		if okA && okB {
			t.Fatalf("round %d: both reserved %s", round, y)
		}
		// What the loser asked for but did not share is free again.
		if !okA {
			if err := b.ReserveObjectInstanceName(x); err != nil {
				t.Fatal(err)
			}
			if !isType[ObjectInstanceNameReservationSucceeded](first(t, b)) {
				t.Fatalf("round %d: %s stayed taken after a failed reservation", round, x)
			}
		}
	}
}

// first waits for f's next event that is a reservation answer.
func first(t *testing.T, f *Federate) Event {
	t.Helper()
	ev, _ := waitFor(t, f, 5*time.Second, func(ev Event) bool {
		switch ev.(type) {
		case MultipleObjectInstanceNameReservationSucceeded, MultipleObjectInstanceNameReservationFailed,
			ObjectInstanceNameReservationSucceeded, ObjectInstanceNameReservationFailed:
			return true
		}
		return false
	})
	return ev
}

// A late joiner after 10,000 instances exist discovers each exactly once,
// under its registered name, and has current values after asking the
// owner for them by class.
func TestLateJoinerTenThousand(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 1000
	}
	m, doc := emptyFederation(t, 83)
	pub := m.addWith("pub", doc, func(c *Config) { c.MaxQueuedEvents = 4 * n })
	h := handles(t, pub)
	must := mustOK(t)
	must(pub.PublishObjectClassAttributes(h.vehicle, h.label))
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("v%05d", i)
	}
	must(pub.ReserveMultipleObjectInstanceName(names...))
	if ev := first(t, pub); !isType[MultipleObjectInstanceNameReservationSucceeded](ev) {
		t.Fatalf("reservation: %#v", ev)
	}
	objs := make(map[ObjectInstanceHandle]string, n)
	for _, name := range names {
		obj, err := pub.RegisterObjectInstance(h.vehicle, name)
		must(err)
		objs[obj] = name
		must(pub.UpdateAttributeValues(obj, AttributeValues{h.label: []byte("old")}, nil))
	}

	late := m.addWith("late", doc, func(c *Config) { c.MaxQueuedEvents = 4 * n })
	must(late.SubscribeObjectClassAttributes(h.vehicle, h.label))
	seen := make(map[ObjectInstanceHandle]bool, n)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for len(seen) < n {
		ev, err := late.Next(ctx)
		if err != nil {
			t.Fatalf("%d of %d discovered: %v; stats %+v", len(seen), n, err, late.Stats())
		}
		d, ok := ev.(DiscoverObjectInstance)
		if !ok {
			continue
		}
		if seen[d.Object] {
			t.Fatalf("%v discovered twice", d.Object)
		}
		if d.Name != objs[d.Object] {
			t.Fatalf("%v discovered as %q, registered as %q", d.Object, d.Name, objs[d.Object])
		}
		seen[d.Object] = true
	}

	// The owner is asked for every instance and updates each.
	must(late.RequestAttributeValueUpdateForClass(h.vehicle, []byte("now"), h.label))
	provided := 0
	for provided < n {
		ev, err := pub.Next(ctx)
		if err != nil {
			t.Fatalf("%d of %d provide requests: %v", provided, n, err)
		}
		p, ok := ev.(ProvideAttributeValueUpdate)
		if !ok {
			continue
		}
		provided++
		must(pub.UpdateAttributeValues(p.Object, AttributeValues{h.label: []byte("current")}, nil))
	}
	current := make(map[ObjectInstanceHandle]bool, n)
	for len(current) < n {
		ev, err := late.Next(ctx)
		if err != nil {
			t.Fatalf("%d of %d current values: %v", len(current), n, err)
		}
		if r, ok := ev.(ReflectAttributeValues); ok && string(r.Values[h.label]) == "current" {
			current[r.Object] = true
		}
	}
}
