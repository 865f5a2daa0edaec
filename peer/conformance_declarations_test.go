package peer

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"
)

// The declaration services add what they are given to what was declared
// before, and an empty set adds (or removes) nothing, as IEEE
// 1516.1-2010 says of Publish Object Class Attributes (§5.2: "each use
// of this service shall add to the publications specified ... in
// previous service invocations"; an empty set "shall be equivalent to
// adding no publications"), of Subscribe Object Class Attributes (§5.6)
// and of their unpublish and unsubscribe services (§5.3, §5.7: an empty
// set removes nothing). docs/conformance.md.

// Publishing again adds attributes, an empty set adds and removes
// nothing, and only the unpublish services take attributes away: what a
// registration owns and what an update may carry follow.
func TestConformancePublishSets(t *testing.T) {
	m, h := cleanFederation(t, 1, 37)
	a := m.feds[0]
	must := mustOK(t)
	register := func() ObjectInstanceHandle {
		t.Helper()
		obj, err := a.RegisterObjectInstance(h.vehicle, "")
		must(err)
		return obj
	}
	owned := func(obj ObjectInstanceHandle) []AttributeHandle {
		t.Helper()
		var got []AttributeHandle
		for _, attr := range []AttributeHandle{h.position, h.label, h.noise} {
			ok, err := a.IsAttributeOwnedByFederate(obj, attr)
			must(err)
			if ok {
				got = append(got, attr)
			}
		}
		return got
	}
	want := func(what string, got []AttributeHandle, attrs ...AttributeHandle) {
		t.Helper()
		slices.Sort(attrs)
		slices.Sort(got)
		if !slices.Equal(got, attrs) {
			t.Errorf("%s: owns %v, want %v", what, got, attrs)
		}
	}
	notPublished := func(what string) {
		t.Helper()
		if _, err := a.RegisterObjectInstance(h.vehicle, ""); !errors.Is(err, ErrObjectClassNotPublished) {
			t.Errorf("%s: registering: %v, want ErrObjectClassNotPublished", what, err)
		}
	}

	// An empty set publishes nothing.
	must(a.PublishObjectClassAttributes(h.vehicle))
	notPublished("after publishing no attribute")

	// A second set is added to the first.
	must(a.PublishObjectClassAttributes(h.vehicle, h.label, h.noise))
	must(a.PublishObjectClassAttributes(h.vehicle, h.label, h.position))
	first := register()
	want("published {Label, Noise} then {Label, Position}", owned(first), h.position, h.label, h.noise)
	must(a.UpdateAttributeValues(first, AttributeValues{h.noise: []byte("n"), h.position: []byte("p")}, nil))

	// Empty sets change nothing.
	must(a.PublishObjectClassAttributes(h.vehicle))
	must(a.UnpublishObjectClassAttributes(h.vehicle))
	want("after an empty publish and unpublish", owned(register()), h.position, h.label, h.noise)

	// Unpublishing attributes takes them away, from what new
	// registrations own and from the instances owned.
	must(a.UnpublishObjectClassAttributes(h.vehicle, h.noise))
	want("after unpublishing Noise", owned(register()), h.position, h.label)
	want("the first instance after unpublishing Noise", owned(first), h.position, h.label)
	if err := a.UpdateAttributeValues(first, AttributeValues{h.noise: []byte("n")}, nil); !errors.Is(err, ErrAttributeNotOwned) {
		t.Errorf("updating the unpublished Noise: %v, want ErrAttributeNotOwned", err)
	}
	must(a.UnpublishObjectClassAttributes(h.vehicle, h.label, h.position))
	notPublished("after unpublishing every attribute")

	// An empty set is still checked.
	for name, err := range map[string]error{
		"publish":   a.PublishObjectClassAttributes(4242),
		"unpublish": a.UnpublishObjectClassAttributes(4242),
		"subscribe": a.SubscribeObjectClassAttributes(4242),
		"unsub":     a.UnsubscribeObjectClassAttributes(4242),
	} {
		if !errors.Is(err, ErrObjectClassNotDefined) {
			t.Errorf("%s of an undefined class with no attribute: %v, want ErrObjectClassNotDefined", name, err)
		}
	}
}

// Subscribing again adds attributes, an empty set adds and removes
// nothing, and only the unsubscribe services take attributes away: the
// reflections carry what is subscribed, no more. A federate that
// subscribed a class with no attribute does not discover its instances.
func TestConformanceSubscribeSets(t *testing.T) {
	m, h := cleanFederation(t, 3, 38)
	pub, sub, ctl := m.feds[0], m.feds[1], m.feds[2]
	must := mustOK(t)
	const wait = 5 * time.Second
	must(pub.PublishObjectClassAttributes(h.vehicle, h.position, h.label))
	must(sub.SubscribeObjectClassAttributes(h.vehicle))
	must(sub.SubscribeObjectClassAttributesPassively(h.vehicle))
	must(ctl.SubscribeObjectClassAttributes(h.vehicle, h.label))
	obj, err := pub.RegisterObjectInstance(h.vehicle, "")
	must(err)
	waitEvent[DiscoverObjectInstance](t, ctl)
	must(pub.UpdateAttributeValues(obj, AttributeValues{h.label: []byte("0")}, nil))
	waitEvent[ReflectAttributeValues](t, ctl)
	// ctl has what went out on the class's group; sub, subscribed to
	// no attribute, is not on it and has nothing.
	nothingAt(t, sub, "subscribed with no attribute", func(ev Event) bool {
		return isType[DiscoverObjectInstance](ev) || isType[ReflectAttributeValues](ev)
	})

	reflect := func(what string, want ...AttributeHandle) {
		t.Helper()
		must(pub.UpdateAttributeValues(obj, AttributeValues{h.position: []byte(what), h.label: []byte(what)}, nil))
		ev, _ := waitFor(t, sub, wait, func(ev Event) bool {
			rv, ok := ev.(ReflectAttributeValues)
			return ok && string(rv.Values[h.label]) == what
		})
		got := slices.Sorted(maps.Keys(ev.(ReflectAttributeValues).Values))
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: reflected %v, want %v", what, got, want)
		}
	}
	must(sub.SubscribeObjectClassAttributes(h.vehicle, h.position, h.label))
	must(sub.SubscribeObjectClassAttributes(h.vehicle, h.label))
	waitEvent[DiscoverObjectInstance](t, sub)
	reflect("subscribed {Position, Label} then {Label}", h.position, h.label)
	must(sub.SubscribeObjectClassAttributes(h.vehicle))
	must(sub.UnsubscribeObjectClassAttributes(h.vehicle))
	reflect("after an empty subscribe and unsubscribe", h.position, h.label)
	must(sub.UnsubscribeObjectClassAttributes(h.vehicle, h.position))
	reflect("after unsubscribing Position", h.label)
}

// The region forms (§9.6-§9.11): an attribute or interaction class
// subscribed with no region is not subscribed, and unsubscribing or
// unassociating no region removes nothing.
func TestConformanceRegionSets(t *testing.T) {
	m, h := newDDMFederation(t, 3)
	a, b, c := m.feds[0], m.feds[1], m.feds[2]
	must := mustOK(t)
	const wait = 5 * time.Second

	// Interactions: B subscribes with no region, C without regions.
	must(b.SubscribeInteractionClassWithRegions(h.call))
	must(c.SubscribeInteractionClass(h.call))
	must(a.PublishInteractionClass(h.call))
	ra := regionAt(t, a, 1, h.band)
	send := func(text string) {
		t.Helper()
		must(a.SendInteractionWithRegions(h.call, ParameterValues{h.text: []byte(text)}, []RegionHandle{ra}, nil))
	}
	// Until A knows of C's subscription, it sends nothing (sender-side
	// filtering).
	pollUntil(t, wait, func() (bool, string) {
		send("to C")
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := c.Next(ctx)
		return err == nil, "C received nothing"
	})
	nothingAt(t, b, "subscribed with no region", isType[ReceiveInteraction])
	rb := regionAt(t, b, 1, h.band)
	must(b.SubscribeInteractionClassWithRegions(h.call, rb))
	must(b.UnsubscribeInteractionClassWithRegions(h.call))
	pollUntil(t, wait, func() (bool, string) {
		send("to B")
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		for {
			ev, err := b.Next(ctx)
			if err != nil {
				return false, "B, still subscribed with a region, received nothing"
			}
			if isType[ReceiveInteraction](ev) {
				return true, ""
			}
		}
	})

	// Objects: B subscribes Where with no region (nothing), C all of
	// Craft without regions; A registers with Where in a region.
	where := func(rs ...RegionHandle) AttributeRegions {
		return AttributeRegions{Attributes: []AttributeHandle{h.where}, Regions: rs}
	}
	must(b.SubscribeObjectClassAttributesWithRegions(h.craft, where()))
	must(c.SubscribeObjectClassAttributes(h.craft, h.where, h.name))
	must(a.PublishObjectClassAttributes(h.craft, h.where, h.name))
	area := regionAt(t, a, 1, h.east, h.north)
	obj, err := a.RegisterObjectInstanceWithRegions(h.craft, []AttributeRegions{where(area), where()}, "")
	must(err)
	waitEvent[DiscoverObjectInstance](t, c)
	nothingAt(t, b, "Where subscribed with no region", func(ev Event) bool {
		return isType[DiscoverObjectInstance](ev) || isType[ReflectAttributeValues](ev)
	})

	// B subscribes Where in a region away from A's, which unsubscribing
	// no region leaves, and Name without regions; A unassociates no
	// region. An update of both reaches B with Name only: Where still
	// goes with A's region, outside B's.
	away := regionAt(t, b, 500, h.east, h.north)
	must(b.SubscribeObjectClassAttributesWithRegions(h.craft, where(away)))
	must(b.UnsubscribeObjectClassAttributesWithRegions(h.craft, where()))
	must(b.SubscribeObjectClassAttributes(h.craft, h.name))
	waitEvent[DiscoverObjectInstance](t, b)
	must(a.UnassociateRegionsForUpdates(obj, where()))
	update := func(what string, wantWhere bool) {
		t.Helper()
		filtered := b.Stats().Filtered
		must(a.UpdateAttributeValues(obj, AttributeValues{h.where: []byte(what), h.name: []byte(what)}, nil))
		gotName, gotWhere := false, false
		pollUntil(t, wait, func() (bool, string) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
			defer cancel()
			if ev, err := b.Next(ctx); err == nil {
				if rv, ok := ev.(ReflectAttributeValues); ok {
					gotName = gotName || rv.Values[h.name] != nil
					gotWhere = gotWhere || rv.Values[h.where] != nil
				}
			}
			done := gotName && (gotWhere || b.Stats().Filtered > filtered)
			return done, "B reflected nothing of " + what
		})
		if gotWhere != wantWhere {
			t.Errorf("%s: B reflected Where %v, want %v", what, gotWhere, wantWhere)
		}
	}
	update("outside B's region", false)
	// B's region is still subscribed: moved over A's, it lets Where in.
	moveRegion(t, b, away, 1, h.east, h.north)
	pollUntil(t, wait, func() (bool, string) {
		must(a.UpdateAttributeValues(obj, AttributeValues{h.where: []byte("inside")}, nil))
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		for {
			ev, err := b.Next(ctx)
			if err != nil {
				return false, "B, its region moved over A's, reflected no Where"
			}
			if rv, ok := ev.(ReflectAttributeValues); ok && rv.Values[h.where] != nil {
				return true, ""
			}
		}
	})
}
