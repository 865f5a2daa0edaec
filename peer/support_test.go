package peer

import (
	"bytes"
	"context"
	"errors"
	"math"
	"testing"
	"time"
)

// checkNames checks that byName and nameOf turn each name of want into
// its value and back, and refuse badName and badValue with their errors.
func checkNames[T comparable](t *testing.T, kind string, want map[string]T, byName func(string) (T, error), nameOf func(T) (string, error), badName string, errName error, badValue T, errValue error) {
	t.Helper()
	for name, v := range want {
		if got, err := byName(name); err != nil || got != v {
			t.Errorf("%s of %q = %v, %v", kind, name, got, err)
		}
		if got, err := nameOf(v); err != nil || got != name {
			t.Errorf("name of %s %v = %q, %v", kind, v, got, err)
		}
	}
	if _, err := byName(badName); !errors.Is(err, errName) {
		t.Errorf("%s of a bad name %q: %v", kind, badName, err)
	}
	if _, err := nameOf(badValue); !errors.Is(err, errValue) {
		t.Errorf("name of a bad %s %v: %v", kind, badValue, err)
	}
}

// The support services that need no other federate: names of orders and
// transportation types, normalization, the time factory, handle
// decoding, and their errors.
func TestSupportServices(t *testing.T) {
	m, _ := cleanFederation(t, 1, 70)
	f := m.feds[0]
	checkNames(t, "order type", map[string]OrderType{"Receive": Receive, "TimeStamp": TimeStamp},
		f.GetOrderType, f.GetOrderName, "Sometimes", ErrInvalidOrderName, 7, ErrInvalidOrderType)
	checkNames(t, "transportation type", map[string]TransportationType{"HLAreliable": HLAreliable, "HLAbestEffort": HLAbestEffort},
		f.GetTransportationType, f.GetTransportationName, "HLAcarrierPigeon", ErrInvalidTransportationName, 0, ErrInvalidTransportationType)
	if v, err := f.NormalizeFederateHandle(f.Handle()); err != nil || v != uint64(f.Handle()) {
		t.Errorf("NormalizeFederateHandle = %d, %v", v, err)
	}
	if _, err := f.NormalizeFederateHandle(0); !errors.Is(err, ErrInvalidFederateHandle) {
		t.Errorf("NormalizeFederateHandle(0): %v", err)
	}
	if v, err := f.NormalizeServiceGroup(TimeManagement); err != nil || v != 4 {
		t.Errorf("NormalizeServiceGroup(TimeManagement) = %d, %v", v, err)
	}
	if _, err := f.NormalizeServiceGroup(9); !errors.Is(err, ErrInvalidServiceGroup) {
		t.Errorf("NormalizeServiceGroup(9): %v", err)
	}

	tf := f.GetTimeFactory()
	if tf.Name() != HLAfloat64Time || tf.MakeInitial() != Float64Time(0) || tf.MakeFinal() != Float64Time(math.MaxFloat64) {
		t.Errorf("time factory %s: initial %v final %v", tf.Name(), tf.MakeInitial(), tf.MakeFinal())
	}
	b, err := tf.Encode(Float64Time(12.5))
	if err != nil || len(b) != 8 {
		t.Fatalf("Encode: %x, %v", b, err)
	}
	if back, err := tf.Decode(b); err != nil || back != Float64Time(12.5) {
		t.Errorf("Decode = %v, %v", back, err)
	}
	if _, err := tf.Decode(b[:3]); !errors.Is(err, ErrCouldNotDecode) {
		t.Errorf("Decode of 3 bytes: %v", err)
	}
	if _, err := tf.Encode(Integer64Time(3)); !errors.Is(err, ErrInvalidLogicalTime) {
		t.Errorf("Encode of the other representation: %v", err)
	}

	// Handles round-trip through their encodings; other bytes do not
	// decode.
	h := handles(t, f)
	if got, err := f.DecodeFederateHandle(EncodeHandle(f.Handle())); err != nil || got != f.Handle() {
		t.Errorf("federate handle: %v, %v", got, err)
	}
	if got, err := f.DecodeObjectClassHandle(EncodeHandle(h.vehicle)); err != nil || got != h.vehicle {
		t.Errorf("object class handle: %v, %v", got, err)
	}
	if got, err := f.DecodeInteractionClassHandle(EncodeHandle(h.honk)); err != nil || got != h.honk {
		t.Errorf("interaction class handle: %v, %v", got, err)
	}
	if got, err := f.DecodeAttributeHandle(EncodeHandle(h.label)); err != nil || got != h.label {
		t.Errorf("attribute handle: %v, %v", got, err)
	}
	if got, err := f.DecodeParameterHandle(EncodeHandle(h.loudness)); err != nil || got != h.loudness {
		t.Errorf("parameter handle: %v, %v", got, err)
	}
	if got, err := f.DecodeDimensionHandle(EncodeHandle(DimensionHandle(77))); err != nil || got != 77 {
		t.Errorf("dimension handle: %v, %v", got, err)
	}
	obj := ObjectInstanceHandle{Federate: 3, Serial: 1 << 40}
	if got, err := f.DecodeObjectInstanceHandle(obj.Encode()); err != nil || got != obj {
		t.Errorf("object instance handle: %v, %v", got, err)
	}
	mrh := MessageRetractionHandle{Federate: 4, Serial: 5}
	if got, err := f.DecodeMessageRetractionHandle(mrh.Encode()); err != nil || got != mrh {
		t.Errorf("retraction handle: %v, %v", got, err)
	}
	r := RegionHandle{Federate: 6, Serial: 7}
	if got, err := f.DecodeRegionHandle(r.Encode()); err != nil || got != r {
		t.Errorf("region handle: %v, %v", got, err)
	}
	for _, bad := range [][]byte{nil, {1, 2, 3}, bytes.Repeat([]byte{1}, 9)} {
		if _, err := f.DecodeAttributeHandle(bad); !errors.Is(err, ErrCouldNotDecode) {
			t.Errorf("DecodeAttributeHandle(%x): %v", bad, err)
		}
		if _, err := f.DecodeObjectInstanceHandle(bad); !errors.Is(err, ErrCouldNotDecode) {
			t.Errorf("DecodeObjectInstanceHandle(%x): %v", bad, err)
		}
	}

	// The automatic resign directive.
	if a, err := f.GetAutomaticResignDirective(); err != nil || a != CancelThenDeleteThenDivest {
		t.Errorf("GetAutomaticResignDirective = %v, %v", a, err)
	}
	if err := f.SetAutomaticResignDirective(UnconditionallyDivestAttributes); err != nil {
		t.Fatal(err)
	}
	if a, _ := f.GetAutomaticResignDirective(); a != UnconditionallyDivestAttributes {
		t.Errorf("directive %v after setting it", a)
	}
	if err := f.SetAutomaticResignDirective(0); !errors.Is(err, ErrInvalidResignAction) {
		t.Errorf("SetAutomaticResignDirective(0): %v", err)
	}

	// Update rates come from the FOM (the test FOM has none).
	if _, err := f.GetUpdateRateValue("Warp"); !errors.Is(err, ErrInvalidUpdateRateDesignator) {
		t.Errorf("GetUpdateRateValue of an unknown rate: %v", err)
	}
	if err := f.SubscribeObjectClassAttributesWithRate(h.vehicle, "Warp", true, h.label); !errors.Is(err, ErrInvalidUpdateRateDesignator) {
		t.Errorf("subscribing at an unknown rate: %v", err)
	}
	if _, err := f.GetUpdateRateValueForAttribute(obj, h.label); !errors.Is(err, ErrObjectInstanceNotKnown) {
		t.Errorf("GetUpdateRateValueForAttribute of an unknown instance: %v", err)
	}
}

// A federate whose node is lost is handled by its own automatic resign
// directive: one that divests leaves its instances, unowned.
func TestLostFederatesDirective(t *testing.T) {
	m, h := cleanFederation(t, 2, 71)
	pub, sub := m.feds[0], m.feds[1]
	obj := labelFlow(t, pub, sub, h, 5*time.Second)
	if err := pub.SetAutomaticResignDirective(UnconditionallyDivestAttributes); err != nil {
		t.Fatal(err)
	}
	time.Sleep(30 * time.Millisecond) // the directive reaches sub
	m.reg.Crash(m.name, pub.Handle())
	pub.Close()
	_, skipped := waitFor(t, sub, 5*time.Second, isType[FederateLost])
	for _, ev := range skipped {
		if _, ok := ev.(RemoveObjectInstance); ok {
			t.Fatalf("the lost federate's instance was removed despite its directive: %v", skipped)
		}
	}
	if _, err := sub.GetObjectInstanceName(obj); err != nil {
		t.Errorf("the instance is gone: %v", err)
	}
}

// DisableCallbacks holds callbacks back; EnableCallbacks lets them out,
// in order. EvokeCallback and EvokeMultipleCallbacks hand them to an
// ambassador.
func TestCallbacksAndEvoke(t *testing.T) {
	m, h := cleanFederation(t, 2, 72)
	a, b := m.feds[0], m.feds[1]
	must := mustOK(t)
	must(b.SubscribeInteractionClass(h.honk))
	must(a.PublishInteractionClass(h.honk))
	time.Sleep(20 * time.Millisecond)
	must(b.DisableCallbacks())
	for _, tag := range []string{"1", "2", "3"} {
		must(a.SendInteraction(h.honk, ParameterValues{h.loudness: []byte{1}}, []byte(tag)))
	}
	deadline := time.Now().Add(5 * time.Second)
	for b.Pending() < 3 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	if ev, err := b.Next(ctx); err == nil {
		t.Fatalf("Next returned %#v while callbacks were disabled", ev)
	}
	cancel()
	must(b.EnableCallbacks())
	amb := &tagAmbassador{}
	more, err := b.EvokeCallback(amb, 1)
	if err != nil || !more || len(amb.tags) != 1 || amb.tags[0] != "1" {
		t.Fatalf("EvokeCallback: more %v, %v, tags %v", more, err, amb.tags)
	}
	more, err = b.EvokeMultipleCallbacks(amb, 0, 1)
	if err != nil || more || len(amb.tags) != 3 || amb.tags[2] != "3" {
		t.Fatalf("EvokeMultipleCallbacks: more %v, %v, tags %v", more, err, amb.tags)
	}
	if more, err := b.EvokeCallback(amb, 0.01); err != nil || more {
		t.Errorf("EvokeCallback with nothing queued: %v, %v", more, err)
	}
}

type tagAmbassador struct {
	NullFederateAmbassador
	tags []string
}

func (a *tagAmbassador) ReceiveInteraction(_ InteractionClassHandle, _ ParameterValues, tag []byte, _ OrderType, _ ReflectInfo) error {
	a.tags = append(a.tags, string(tag))
	return nil
}
