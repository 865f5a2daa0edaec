package peer

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer/transport"
)

// Tests for defects found while verifying the federate: a late
// subscriber learns a reserved name, Join checks the federation's FDD,
// resigning with divest keeps the instances, Dispatch carries a
// retraction, a federate the control plane drops gets ConnectionLost, services after
// Close and Resign fail, Close leaves no goroutine.

// A subscriber that hears an update before the registration (it
// subscribed while the owner kept updating) discovers the instance under
// its registered, reserved name, and finds it by that name. Manual
// federates make the order exact: the owner updates after each frame of
// the subscriber's join reaches it, so updates precede its answer to the
// discovery query in its stream.
func TestLateSubscriberLearnsReservedName(t *testing.T) {
	m := newManualNet(t, 3, transport.Faults{})
	pub, sub := m.join("pub", nil), m.join("sub", nil)
	m.run(5)
	h := handles(t, pub)
	must := mustOK(t)
	must(pub.PublishObjectClassAttributes(h.vehicle, h.label))
	must(pub.ReserveObjectInstanceName("tank"))
	obj, err := pub.RegisterObjectInstance(h.vehicle, "tank")
	must(err)
	// Past the publisher's join announcement: a receiver that joins now
	// is owed only what the publisher sends after it hears of it.
	m.run(200)
	take(sub)
	must(sub.SubscribeObjectClassAttributes(h.vehicle, h.label))
	updates := 0
	for len(m.queue) > 0 {
		q := m.queue[0]
		m.queue = m.queue[1:]
		f := m.fedOf[q.to]
		must(f.Deliver(q.p))
		if f == pub {
			must(pub.UpdateAttributeValues(obj, AttributeValues{h.label: []byte("x")}, nil))
			updates++
		}
	}
	m.run(20)
	var found bool
	for _, ev := range take(sub) {
		if d, ok := ev.(DiscoverObjectInstance); ok {
			found = true
			if d.Name != "tank" || d.Object != obj {
				t.Errorf("discovered %v as %q, want %v as \"tank\"", d.Object, d.Name, obj)
			}
		}
	}
	if !found || updates == 0 {
		t.Fatalf("discovered: %v, updates between the join's frames: %d", found, updates)
	}
	if got, err := sub.GetObjectInstanceHandle("tank"); err != nil || got != obj {
		t.Errorf("GetObjectInstanceHandle(tank) = %v, %v", got, err)
	}
}

// A federate whose time representation differs from the federation's
// cannot join (CouldNotCreateLogicalTimeFactory); one whose modules
// conflict with the federation's cannot either (InconsistentFDD); one
// that adds a module extends every member's FDD.
func TestJoinChecksTheFederationsFDD(t *testing.T) {
	m, _ := cleanFederation(t, 1, 50)
	first := m.feds[0]
	join := func(name string, docs []*fomxml.Document, tune func(*Config)) (*Federate, error) {
		cfg := Config{
			Federation: m.name, FederateName: name, FOMModules: docs,
			Control: m.reg.Control(m.name), Transport: m.net.Endpoint(name), TickInterval: 2 * time.Millisecond,
		}
		if tune != nil {
			tune(&cfg)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		f, err := Join(ctx, cfg)
		if err == nil {
			m.feds = append(m.feds, f)
		}
		return f, err
	}
	if _, err := join("int", []*fomxml.Document{testDoc(t)}, func(c *Config) { c.TimeRepresentation = HLAinteger64Time }); !errors.Is(err, ErrCouldNotCreateLogicalTimeFactory) {
		t.Errorf("joining with another time representation: %v, want ErrCouldNotCreateLogicalTimeFactory", err)
	}
	conflict := parseDoc(t, "conflict.xml", strings.Replace(testFOM, "<order>TimeStamp</order>\n      <parameter><name>Loudness</name>", "<order>Receive</order>\n      <parameter><name>Loudness</name>", 1))
	if _, err := join("conflict", []*fomxml.Document{conflict}, nil); !errors.Is(err, ErrInconsistentFDD) {
		t.Errorf("joining with a conflicting module: %v, want ErrInconsistentFDD", err)
	}

	// A joiner without modules gets the federation's; one that adds a
	// module extends everyone's.
	bare, err := join("bare", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := bare.FDD().ObjectClass("Vehicle"); !ok {
		t.Error("a joiner without modules lacks the federation's classes")
	}
	ext := parseDoc(t, "ext.xml", extFOM)
	adder, err := join("adder", []*fomxml.Document{testDoc(t), ext}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []*Federate{first, bare, adder} {
		pollUntil(t, 5*time.Second, func() (bool, string) {
			_, ok := f.FDD().ObjectClass("Boat")
			return ok, f.Name() + " never learned the added module's class"
		})
	}
	// The added class works between an old member and the adder.
	boat, err := first.GetObjectClassHandle("Boat")
	if err != nil {
		t.Fatal(err)
	}
	hull, err := first.GetAttributeHandle(boat, "Hull")
	if err != nil {
		t.Fatal(err)
	}
	if err := first.SubscribeObjectClassAttributes(boat, hull); err != nil {
		t.Fatal(err)
	}
	if err := adder.PublishObjectClassAttributes(boat, hull); err != nil {
		t.Fatal(err)
	}
	if _, err := adder.RegisterObjectInstance(boat, ""); err != nil {
		t.Fatal(err)
	}
	waitFor(t, first, 5*time.Second, isType[DiscoverObjectInstance])
}

const extFOM = `<?xml version="1.0"?>
<objectModel xmlns="http://standards.ieee.org/IEEE1516-2010">
  <modelIdentification><name>peer test extension</name><type>FOM</type><version>1</version></modelIdentification>
  <objects><objectClass><name>HLAobjectRoot</name>
    <objectClass><name>Boat</name><sharing>PublishSubscribe</sharing>
      <attribute><name>Hull</name><dataType>HLAopaqueData</dataType><updateType>Conditional</updateType><updateCondition>NA</updateCondition><ownership>DivestAcquire</ownership><sharing>PublishSubscribe</sharing><transportation>HLAreliable</transportation><order>Receive</order></attribute>
    </objectClass>
  </objectClass></objects>
</objectModel>`

func parseDoc(t testing.TB, name, src string) *fomxml.Document {
	t.Helper()
	d, err := fomxml.ParseBytes(name, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Resigning with UnconditionallyDivestAttributes leaves the federate's
// instances in the federation, unowned: the others keep them.
func TestResignDivestKeepsInstances(t *testing.T) {
	m, h := cleanFederation(t, 2, 51)
	pub, sub := m.feds[0], m.feds[1]
	obj := labelFlow(t, pub, sub, h, 5*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := pub.ResignFederationExecution(ctx, UnconditionallyDivestAttributes); err != nil {
		t.Fatal(err)
	}
	_, skipped := waitFor(t, sub, 5*time.Second, isType[FederateResigned])
	for _, ev := range skipped {
		if _, ok := ev.(RemoveObjectInstance); ok {
			t.Fatalf("the divested instance was removed: %v", skipped)
		}
	}
	// Whatever was still in flight has arrived by now.
	time.Sleep(50 * time.Millisecond)
	for sub.Pending() > 0 {
		ev, _ := waitFor(t, sub, time.Second, func(Event) bool { return true })
		if _, ok := ev.(RemoveObjectInstance); ok {
			t.Fatalf("the divested instance was removed after the resign: %#v", ev)
		}
	}
	if name, err := sub.GetObjectInstanceName(obj); err != nil || name == "" {
		t.Errorf("the instance is gone at the subscriber: %q, %v", name, err)
	}
}

// Subscribing with no attributes, then with some, discovers the
// instances that exist: see TestLateSubscriberDiscovers.

// Dispatch hands the retraction handle of a reflection, interaction and
// removal to the ambassador.
func TestDispatchCarriesRetraction(t *testing.T) {
	mrh := MessageRetractionHandle{Federate: 3, Serial: 9}
	evs := []Event{
		ReflectAttributeValues{Retraction: mrh, SentOrder: TimeStamp},
		ReceiveInteraction{Retraction: mrh, SentOrder: TimeStamp},
		RemoveObjectInstance{Retraction: mrh, SentOrder: TimeStamp},
	}
	amb := &infoAmbassador{}
	for _, ev := range evs {
		if err := dispatchOne(amb, ev); err != nil {
			t.Fatal(err)
		}
	}
	if len(amb.got) != 3 {
		t.Fatalf("%d callbacks, want 3", len(amb.got))
	}
	for i, h := range amb.got {
		if h != mrh {
			t.Errorf("callback %d: retraction %v, want %v", i, h, mrh)
		}
	}
}

type infoAmbassador struct {
	NullFederateAmbassador
	got []MessageRetractionHandle
}

func (r *infoAmbassador) ReflectAttributeValues(_ ObjectInstanceHandle, _ AttributeValues, _ []byte, _ OrderType, info ReflectInfo) error {
	r.got = append(r.got, info.Retraction)
	return nil
}

func (r *infoAmbassador) ReceiveInteraction(_ InteractionClassHandle, _ ParameterValues, _ []byte, _ OrderType, info ReflectInfo) error {
	r.got = append(r.got, info.Retraction)
	return nil
}

func (r *infoAmbassador) RemoveObjectInstance(_ ObjectInstanceHandle, _ []byte, _ OrderType, info ReflectInfo) error {
	r.got = append(r.got, info.Retraction)
	return nil
}

// A federate the control plane drops (declared dead in a partition) gets
// ConnectionLost, and its services then fail with NotConnected.
func TestConnectionLostFromControlPlane(t *testing.T) {
	m, _ := cleanFederation(t, 2, 53)
	a, b := m.feds[0], m.feds[1]
	m.reg.Expel(m.name, a.Handle())
	ev, _ := waitFor(t, a, 5*time.Second, isType[ConnectionLost])
	if ev.(ConnectionLost).Reason == "" {
		t.Error("ConnectionLost without a reason")
	}
	waitFor(t, b, 5*time.Second, isType[FederateLost])
	h := handles(t, a)
	err := a.PublishObjectClassAttributes(h.vehicle, h.label)
	if !errors.Is(err, ErrNotConnected) || !errors.Is(err, ErrClosed) {
		t.Errorf("a service after ConnectionLost: %v, want ErrNotConnected", err)
	}
}

// After Close, services fail with NotConnected; after resigning, with
// FederateNotExecutionMember. Both wrap ErrClosed.
func TestServicesAfterCloseAndResign(t *testing.T) {
	m, h := cleanFederation(t, 2, 54)
	a, b := m.feds[0], m.feds[1]
	a.Close()
	if err := a.PublishObjectClassAttributes(h.vehicle, h.label); !errors.Is(err, ErrNotConnected) || !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v, want ErrNotConnected", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := b.ResignFederationExecution(ctx, DeleteObjects); err != nil {
		t.Fatal(err)
	}
	err := b.PublishObjectClassAttributes(h.vehicle, h.label)
	if !errors.Is(err, ErrFederateNotExecutionMember) || !errors.Is(err, ErrClosed) {
		t.Errorf("after resigning: %v, want ErrFederateNotExecutionMember", err)
	}
	if _, err := b.QueryLogicalTime(); !errors.Is(err, ErrFederateNotExecutionMember) {
		t.Errorf("QueryLogicalTime after resigning: %v", err)
	}
}

// slowControl is a control plane whose register never answers: its
// operations wait until their context ends.
type slowControl struct{ ControlPlane }

func (s slowControl) Acquire(ctx context.Context, key string, value []byte) (Entry, bool, error) {
	<-ctx.Done()
	return Entry{}, false, ctx.Err()
}

// Close waits for the goroutines the federate started, also for a name
// reservation still waiting on the control plane: none is left after.
func TestCloseLeavesNoGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	func() {
		net := transport.NewNetwork(transport.NetworkConfig{Seed: 55})
		reg := NewMemRegistry()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		f, err := Join(ctx, Config{
			Federation: "leak", FederateName: "a", FOMModules: []*fomxml.Document{testDoc(t)}, Create: true,
			Control: slowControl{reg.Control("leak")}, Transport: net.Endpoint("a"), TickInterval: 2 * time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"x", "y", "z"} {
			if err := f.ReserveObjectInstanceName(name); err != nil {
				t.Fatal(err)
			}
		}
		f.Close()
	}()
	waitGoroutines(t, before, "Close")
}
