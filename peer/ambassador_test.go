package peer

import (
	"context"
	"errors"
	"testing"
	"time"
)

// recordingAmbassador records the callbacks it gets and stops after the
// first reflection by failing.
type recordingAmbassador struct {
	NullFederateAmbassador
	calls []string
	fed   *Federate
	h     testHandles
}

var errEnough = errors.New("enough")

func (r *recordingAmbassador) DiscoverObjectInstance(obj ObjectInstanceHandle, class ObjectClassHandle, name string, producer FederateHandle) error {
	r.calls = append(r.calls, "discover "+name)
	// Callbacks may call back into the federate.
	if c, err := r.fed.GetKnownObjectClassHandle(obj); err != nil || c != class {
		return errors.New("known class lookup from a callback failed")
	}
	return nil
}

func (r *recordingAmbassador) ReflectAttributeValues(obj ObjectInstanceHandle, values AttributeValues, tag []byte, sent OrderType, info ReflectInfo) error {
	r.calls = append(r.calls, "reflect "+string(values[r.h.label]))
	return errEnough
}

func TestDispatch(t *testing.T) {
	m, h := cleanFederation(t, 2, 20)
	pub, sub := m.feds[0], m.feds[1]
	if err := sub.SubscribeObjectClassAttributes(h.vehicle, h.label); err != nil {
		t.Fatal(err)
	}
	if err := pub.PublishObjectClassAttributes(h.vehicle, h.label); err != nil {
		t.Fatal(err)
	}
	if err := pub.ReserveObjectInstanceName("Bus"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, pub, 5*time.Second, isType[ObjectInstanceNameReservationSucceeded])
	obj, err := pub.RegisterObjectInstance(h.vehicle, "Bus")
	if err != nil {
		t.Fatal(err)
	}
	if err := pub.UpdateAttributeValues(obj, AttributeValues{h.label: []byte("blue")}, nil); err != nil {
		t.Fatal(err)
	}
	amb := &recordingAmbassador{fed: sub, h: h}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = Dispatch(ctx, sub, amb)
	if !errors.Is(err, ErrFederateInternalError) || !errors.Is(err, errEnough) {
		t.Fatalf("Dispatch returned %v, want the callback's error wrapped in ErrFederateInternalError", err)
	}
	if len(amb.calls) != 2 || amb.calls[0] != "discover Bus" || amb.calls[1] != "reflect blue" {
		t.Errorf("calls %q", amb.calls)
	}
	// After Close, Dispatch drains and returns nil.
	sub.Close()
	if err := Dispatch(ctx, sub, &recordingAmbassador{fed: sub, h: h}); err != nil {
		t.Errorf("Dispatch after Close: %v", err)
	}
	if _, err := sub.Next(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Next after Close: %v", err)
	}
	if err := sub.SubscribeInteractionClass(h.honk); !errors.Is(err, ErrClosed) {
		t.Errorf("service after Close: %v", err)
	}
}

// retractionAmbassador records RequestRetraction callbacks.
type retractionAmbassador struct {
	NullFederateAmbassador
	got []MessageRetractionHandle
}

func (r *retractionAmbassador) RequestRetraction(h MessageRetractionHandle) error {
	r.got = append(r.got, h)
	return nil
}

// TestDispatchRequestRetraction: the RequestRetraction event reaches the
// ambassador's callback with its handle.
func TestDispatchRequestRetraction(t *testing.T) {
	h := MessageRetractionHandle{Federate: 3, Serial: 9}
	var amb retractionAmbassador
	if err := dispatchOne(&amb, RequestRetraction{Handle: h}); err != nil || len(amb.got) != 1 || amb.got[0] != h {
		t.Errorf("dispatch: %v, got %v", err, amb.got)
	}
	if err := dispatchOne(NullFederateAmbassador{}, RequestRetraction{Handle: h}); err != nil {
		t.Errorf("null ambassador: %v", err)
	}
}
