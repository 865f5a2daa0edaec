package peer

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

func TestPublishSubscribeRegisterReflect(t *testing.T) {
	m, h := cleanFederation(t, 2, 1)
	pub, sub := m.feds[0], m.feds[1]

	if err := sub.SubscribeObjectClassAttributes(h.vehicle, h.position, h.label); err != nil {
		t.Fatal(err)
	}
	if err := pub.PublishObjectClassAttributes(h.car, h.position, h.label, h.doors); err != nil {
		t.Fatal(err)
	}
	obj, err := pub.RegisterObjectInstance(h.car, "")
	if err != nil {
		t.Fatal(err)
	}
	ev, _ := waitFor(t, sub, 5*time.Second, isType[DiscoverObjectInstance])
	d := ev.(DiscoverObjectInstance)
	// Promotion: a subscriber to Vehicle discovers a Car as a Vehicle.
	if d.Object != obj || d.Class != h.vehicle || d.Producer != pub.Handle() {
		t.Errorf("discover %+v, want object %v as Vehicle from %d", d, obj, pub.Handle())
	}
	if err := pub.UpdateAttributeValues(obj, AttributeValues{h.label: []byte("red"), h.doors: []byte{0, 0, 0, 4}}, []byte("tag1")); err != nil {
		t.Fatal(err)
	}
	ev, _ = waitFor(t, sub, 5*time.Second, isType[ReflectAttributeValues])
	r := ev.(ReflectAttributeValues)
	// Only subscribed attributes of the known class arrive: Doors is a Car
	// attribute the subscriber did not ask for.
	if r.Object != obj || len(r.Values) != 1 || !bytes.Equal(r.Values[h.label], []byte("red")) || string(r.Tag) != "tag1" ||
		r.SentOrder != Receive || r.ReceivedOrder != Receive || r.Time != nil {
		t.Errorf("reflect %+v", r)
	}
	name, err := sub.GetObjectInstanceName(obj)
	if err != nil || name == "" {
		t.Errorf("instance name %q, %v", name, err)
	}
	if got, err := sub.GetObjectInstanceHandle(name); err != nil || got != obj {
		t.Errorf("instance by name: %v %v", got, err)
	}
	if c, err := sub.GetKnownObjectClassHandle(obj); err != nil || c != h.vehicle {
		t.Errorf("known class %v %v", c, err)
	}
	if err := pub.DeleteObjectInstance(obj, []byte("bye")); err != nil {
		t.Fatal(err)
	}
	ev, _ = waitFor(t, sub, 5*time.Second, isType[RemoveObjectInstance])
	if rm := ev.(RemoveObjectInstance); rm.Object != obj || string(rm.Tag) != "bye" {
		t.Errorf("remove %+v", rm)
	}
	if _, err := sub.GetObjectInstanceName(obj); !errors.Is(err, ErrObjectInstanceNotKnown) {
		t.Errorf("deleted instance still known: %v", err)
	}
}

// A subscriber that subscribes after the instance was registered still
// discovers it; also one that subscribed with no attributes first (the
// discovery query goes out once the subscription has attributes).
func TestLateSubscriberDiscovers(t *testing.T) {
	for _, emptyFirst := range []bool{false, true} {
		m, h := cleanFederation(t, 2, 2)
		pub, sub := m.feds[0], m.feds[1]
		if err := pub.PublishObjectClassAttributes(h.vehicle, h.label); err != nil {
			t.Fatal(err)
		}
		obj, err := pub.RegisterObjectInstance(h.vehicle, "")
		if err != nil {
			t.Fatal(err)
		}
		if emptyFirst {
			if err := sub.SubscribeObjectClassAttributes(h.vehicle); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(20 * time.Millisecond)
		if err := sub.SubscribeObjectClassAttributes(h.vehicle, h.label); err != nil {
			t.Fatal(err)
		}
		ev, _ := waitFor(t, sub, 5*time.Second, isType[DiscoverObjectInstance])
		if d := ev.(DiscoverObjectInstance); d.Object != obj {
			t.Errorf("empty subscription first %v: discovered %v, want %v", emptyFirst, d.Object, obj)
		}
		m.close()
	}
}

func TestInteractionsWithPromotion(t *testing.T) {
	m, h := cleanFederation(t, 2, 3)
	a, b := m.feds[0], m.feds[1]
	if err := b.SubscribeInteractionClass(h.honk); err != nil {
		t.Fatal(err)
	}
	if err := a.PublishInteractionClass(h.longHonk); err != nil {
		t.Fatal(err)
	}
	if err := a.SendInteraction(h.longHonk, ParameterValues{h.loudness: []byte{1}, h.seconds: []byte{2}}, []byte("t")); err != nil {
		t.Fatal(err)
	}
	ev, _ := waitFor(t, b, 5*time.Second, isType[ReceiveInteraction])
	ri := ev.(ReceiveInteraction)
	if ri.Class != h.honk || len(ri.Values) != 1 || !bytes.Equal(ri.Values[h.loudness], []byte{1}) || ri.Producer != a.Handle() {
		t.Errorf("receive %+v: want Honk with Loudness only", ri)
	}
}

func TestObjectServiceErrors(t *testing.T) {
	m, h := cleanFederation(t, 2, 4)
	a, b := m.feds[0], m.feds[1]
	check := func(what string, err, want error) {
		t.Helper()
		if !errors.Is(err, want) {
			t.Errorf("%s: err = %v, want %v", what, err, want)
		}
	}
	check("publish unknown class", a.PublishObjectClassAttributes(12345, h.label), ErrObjectClassNotDefined)
	check("publish foreign attribute", a.PublishObjectClassAttributes(h.vehicle, h.doors), ErrAttributeNotDefined)
	check("subscribe unknown class", a.SubscribeObjectClassAttributes(12345), ErrObjectClassNotDefined)
	check("subscribe unknown attribute", a.SubscribeObjectClassAttributes(h.vehicle, 99), ErrAttributeNotDefined)
	check("publish unknown interaction", a.PublishInteractionClass(7), ErrInteractionClassNotDefined)
	check("subscribe unknown interaction", a.SubscribeInteractionClass(7), ErrInteractionClassNotDefined)
	_, err := a.RegisterObjectInstance(h.vehicle, "")
	check("register unpublished", err, ErrObjectClassNotPublished)
	_, err = a.RegisterObjectInstance(12345, "")
	check("register unknown class", err, ErrObjectClassNotDefined)
	check("send unpublished", a.SendInteraction(h.honk, nil, nil), ErrInteractionClassNotPublished)
	if err := a.PublishInteractionClass(h.honk); err != nil {
		t.Fatal(err)
	}
	check("send foreign parameter", a.SendInteraction(h.honk, ParameterValues{h.seconds: nil}, nil), ErrInteractionParameterNotDefined)
	if err := a.PublishObjectClassAttributes(h.vehicle, h.label); err != nil {
		t.Fatal(err)
	}
	_, err = a.RegisterObjectInstance(h.vehicle, "NotReserved")
	check("register unreserved name", err, ErrObjectInstanceNameNotReserved)
	obj, err := a.RegisterObjectInstance(h.vehicle, "")
	if err != nil {
		t.Fatal(err)
	}
	check("update unowned attribute", a.UpdateAttributeValues(obj, AttributeValues{h.position: nil}, nil), ErrAttributeNotOwned)
	check("update undefined attribute", a.UpdateAttributeValues(obj, AttributeValues{h.doors: nil}, nil), ErrAttributeNotDefined)
	check("update unknown object", a.UpdateAttributeValues(ObjectInstanceHandle{Federate: 99, Serial: 1}, nil, nil), ErrObjectInstanceNotKnown)
	check("delete unknown object", a.DeleteObjectInstance(ObjectInstanceHandle{Federate: 99, Serial: 1}, nil), ErrObjectInstanceNotKnown)
	check("reserve illegal name", a.ReserveObjectInstanceName("HLAmine"), ErrIllegalName)
	check("reserve empty name", a.ReserveObjectInstanceName(""), ErrIllegalName)
	check("wrong time kind", a.UpdateAttributeValuesWithTime(obj, nil, nil, Integer64Time(3)), ErrInvalidLogicalTime)
	// The other federate discovers the object but may not update or
	// delete it.
	if err := b.SubscribeObjectClassAttributes(h.vehicle, h.label); err != nil {
		t.Fatal(err)
	}
	waitFor(t, b, 5*time.Second, isType[DiscoverObjectInstance])
	check("update someone else's object", b.UpdateAttributeValues(obj, AttributeValues{h.label: nil}, nil), ErrAttributeNotOwned)
	check("delete someone else's object", b.DeleteObjectInstance(obj, nil), ErrDeletePrivilegeNotHeld)
	_, err = a.GetObjectClassHandle("NoSuchClass")
	check("class name lookup", err, ErrNameNotFound)
	_, err = a.GetObjectClassName(1)
	check("class handle lookup", err, ErrInvalidObjectClassHandle)
	_, err = a.GetFederateName(424242)
	check("federate handle lookup", err, ErrFederateHandleNotKnown)
	if name, err := a.GetFederateName(b.Handle()); err != nil || name != "F1" {
		t.Errorf("GetFederateName(b) = %q, %v", name, err)
	}
}

func TestNameReservation(t *testing.T) {
	m, h := cleanFederation(t, 2, 5)
	a, b := m.feds[0], m.feds[1]
	if err := a.ReserveObjectInstanceName("Tank1"); err != nil {
		t.Fatal(err)
	}
	ev, _ := waitFor(t, a, 5*time.Second, func(ev Event) bool {
		return isType[ObjectInstanceNameReservationSucceeded](ev) || isType[ObjectInstanceNameReservationFailed](ev)
	})
	if _, ok := ev.(ObjectInstanceNameReservationSucceeded); !ok {
		t.Fatalf("a's reservation: %#v", ev)
	}
	if err := b.ReserveObjectInstanceName("Tank1"); err != nil {
		t.Fatal(err)
	}
	ev, _ = waitFor(t, b, 5*time.Second, func(ev Event) bool {
		return isType[ObjectInstanceNameReservationSucceeded](ev) || isType[ObjectInstanceNameReservationFailed](ev)
	})
	if _, ok := ev.(ObjectInstanceNameReservationFailed); !ok {
		t.Fatalf("b's reservation of a taken name: %#v", ev)
	}
	if err := a.PublishObjectClassAttributes(h.vehicle, h.label); err != nil {
		t.Fatal(err)
	}
	obj, err := a.RegisterObjectInstance(h.vehicle, "Tank1")
	if err != nil {
		t.Fatal(err)
	}
	if name, _ := a.GetObjectInstanceName(obj); name != "Tank1" {
		t.Errorf("name %q", name)
	}
	if _, err := a.RegisterObjectInstance(h.vehicle, "Tank1"); !errors.Is(err, ErrObjectInstanceNameInUse) {
		t.Errorf("second use of a name: %v", err)
	}
}

func TestUnpublishUnsubscribe(t *testing.T) {
	m, h := cleanFederation(t, 2, 6)
	a, b := m.feds[0], m.feds[1]
	must := mustOK(t)
	must(b.SubscribeObjectClassAttributes(h.vehicle, h.label, h.position))
	must(b.SubscribeInteractionClass(h.honk))
	must(a.PublishObjectClassAttributes(h.vehicle, h.label, h.position))
	must(a.PublishInteractionClass(h.honk))
	obj, err := a.RegisterObjectInstance(h.vehicle, "")
	must(err)
	waitFor(t, b, 5*time.Second, isType[DiscoverObjectInstance])

	// Unsubscribing one attribute keeps the other flowing.
	must(b.UnsubscribeObjectClassAttributes(h.vehicle, h.position))
	must(a.UpdateAttributeValues(obj, AttributeValues{h.label: []byte("l"), h.position: []byte("p")}, nil))
	ev, _ := waitFor(t, b, 5*time.Second, isType[ReflectAttributeValues])
	if r := ev.(ReflectAttributeValues); len(r.Values) != 1 || r.Values[h.label] == nil {
		t.Errorf("after unsubscribing Position: %v", r.Values)
	}
	// Unpublishing one attribute: updating it is no longer possible for
	// new instances; unpublishing the class stops registration.
	must(a.UnpublishObjectClassAttributes(h.vehicle, h.position))
	must(a.UnpublishObjectClass(h.vehicle))
	if _, err := a.RegisterObjectInstance(h.vehicle, ""); !errors.Is(err, ErrObjectClassNotPublished) {
		t.Errorf("register after unpublish: %v", err)
	}
	// Unsubscribing the interaction: a later one is not received, while
	// one sent on another subscribed path still is.
	must(b.UnsubscribeInteractionClass(h.honk))
	must(a.SendInteraction(h.honk, nil, []byte("unheard")))
	must(a.UnpublishInteractionClass(h.honk))
	if err := a.SendInteraction(h.honk, nil, nil); !errors.Is(err, ErrInteractionClassNotPublished) {
		t.Errorf("send after unpublish: %v", err)
	}
	must(b.UnsubscribeObjectClass(h.vehicle))
	// Errors of the withdrawing services.
	if err := a.UnpublishObjectClass(12345); !errors.Is(err, ErrObjectClassNotDefined) {
		t.Errorf("unpublish unknown class: %v", err)
	}
	if err := a.UnpublishObjectClassAttributes(h.vehicle, h.doors); !errors.Is(err, ErrAttributeNotDefined) {
		t.Errorf("unpublish foreign attribute: %v", err)
	}
	if err := b.UnsubscribeObjectClassAttributes(12345, h.label); !errors.Is(err, ErrObjectClassNotDefined) {
		t.Errorf("unsubscribe unknown class: %v", err)
	}
	if err := b.UnsubscribeInteractionClass(7); !errors.Is(err, ErrInteractionClassNotDefined) {
		t.Errorf("unsubscribe unknown interaction: %v", err)
	}
	if err := a.UnpublishInteractionClass(7); !errors.Is(err, ErrInteractionClassNotDefined) {
		t.Errorf("unpublish unknown interaction: %v", err)
	}
	// Nothing more arrives at b: give the network a moment, then check.
	time.Sleep(50 * time.Millisecond)
	for b.Pending() > 0 {
		ev, _ := waitFor(t, b, time.Second, func(Event) bool { return true })
		if ri, ok := ev.(ReceiveInteraction); ok {
			t.Errorf("received %q after unsubscribing", ri.Tag)
		}
	}
}
