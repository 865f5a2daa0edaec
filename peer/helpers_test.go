package peer

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer/transport"
)

// testFOM is a small FOM of this package's tests.
const testFOM = `<?xml version="1.0"?>
<objectModel xmlns="http://standards.ieee.org/IEEE1516-2010">
  <modelIdentification><name>peer test FOM</name><type>FOM</type><version>1</version></modelIdentification>
  <objects><objectClass><name>HLAobjectRoot</name>
    <objectClass><name>Vehicle</name><sharing>PublishSubscribe</sharing>
      <attribute><name>Position</name><dataType>HLAfloat64BE</dataType><updateType>Conditional</updateType><updateCondition>NA</updateCondition><ownership>DivestAcquire</ownership><sharing>PublishSubscribe</sharing><transportation>HLAreliable</transportation><order>TimeStamp</order></attribute>
      <attribute><name>Label</name><dataType>HLAunicodeString</dataType><updateType>Static</updateType><updateCondition>NA</updateCondition><ownership>DivestAcquire</ownership><sharing>PublishSubscribe</sharing><transportation>HLAreliable</transportation><order>Receive</order></attribute>
      <attribute><name>Noise</name><dataType>HLAopaqueData</dataType><updateType>Conditional</updateType><updateCondition>NA</updateCondition><ownership>DivestAcquire</ownership><sharing>PublishSubscribe</sharing><transportation>HLAbestEffort</transportation><order>Receive</order></attribute>
      <objectClass><name>Car</name><sharing>PublishSubscribe</sharing>
        <attribute><name>Doors</name><dataType>HLAinteger32BE</dataType><updateType>Static</updateType><updateCondition>NA</updateCondition><ownership>DivestAcquire</ownership><sharing>PublishSubscribe</sharing><transportation>HLAreliable</transportation><order>Receive</order></attribute>
      </objectClass>
    </objectClass>
  </objectClass></objects>
  <interactions><interactionClass><name>HLAinteractionRoot</name>
    <interactionClass><name>Honk</name><sharing>PublishSubscribe</sharing><transportation>HLAreliable</transportation><order>TimeStamp</order>
      <parameter><name>Loudness</name><dataType>HLAinteger32BE</dataType></parameter>
      <interactionClass><name>LongHonk</name><sharing>PublishSubscribe</sharing><transportation>HLAreliable</transportation><order>TimeStamp</order>
        <parameter><name>Seconds</name><dataType>HLAinteger32BE</dataType></parameter>
      </interactionClass>
    </interactionClass>
  </interactionClass></interactions>
</objectModel>`

func testDoc(t testing.TB) *fomxml.Document {
	t.Helper()
	return parseDoc(t, "test.xml", testFOM)
}

// memFederation is n federates over one in-memory network and registry.
type memFederation struct {
	t    testing.TB
	net  *transport.Network
	reg  *MemRegistry
	feds []*Federate
	name string
	dir  string // SaveDir
}

func newMemFederation(t testing.TB, n int, faults transport.Faults, seed int64) *memFederation {
	t.Helper()
	m := &memFederation{t: t, net: transport.NewNetwork(transport.NetworkConfig{Seed: seed}), reg: NewMemRegistry(), name: "fed", dir: t.TempDir()}
	m.net.SetFaults(faults)
	doc := testDoc(t)
	for i := 0; i < n; i++ {
		m.add(fmt.Sprintf("F%d", i), doc)
	}
	t.Cleanup(m.close)
	return m
}

// cleanFederation is n federates (n > 0) on an in-memory network without
// faults, and the test FOM's handles.
func cleanFederation(t testing.TB, n int, seed int64) (*memFederation, testHandles) {
	t.Helper()
	m := newMemFederation(t, n, transport.Faults{}, seed)
	return m, handles(t, m.feds[0])
}

// emptyFederation is an in-memory network without faults and no
// federate yet, and the test FOM for the federates the test adds.
func emptyFederation(t testing.TB, seed int64) (*memFederation, *fomxml.Document) {
	t.Helper()
	return newMemFederation(t, 0, transport.Faults{}, seed), testDoc(t)
}

func (m *memFederation) add(name string, doc *fomxml.Document) *Federate {
	m.t.Helper()
	return m.addWith(name, doc, nil)
}

// addWith joins a federate whose Config tune may change.
func (m *memFederation) addWith(name string, doc *fomxml.Document, tune func(*Config)) *Federate {
	m.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cfg := Config{
		Federation: m.name, FederateName: name, FOMModules: []*fomxml.Document{doc}, Create: true,
		Control: m.reg.Control(m.name), Transport: m.net.Endpoint(name), TickInterval: 2 * time.Millisecond,
		SaveDir: m.dir,
	}
	if tune != nil {
		tune(&cfg)
	}
	f, err := Join(ctx, cfg)
	if err != nil {
		m.t.Fatalf("join %s: %v", name, err)
	}
	m.feds = append(m.feds, f)
	return f
}

func (m *memFederation) close() {
	for _, f := range m.feds {
		f.Close()
	}
}

// mustOK is a test's must: it fails t at once on an error of a call
// the test needs to succeed.
func mustOK(t testing.TB) func(error) {
	return func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// handles of the test FOM.
type testHandles struct {
	vehicle, car           ObjectClassHandle
	position, label, noise AttributeHandle
	doors                  AttributeHandle
	honk, longHonk         InteractionClassHandle
	loudness, seconds      ParameterHandle
}

func handles(t testing.TB, f *Federate) testHandles {
	t.Helper()
	l := nameLookup{t, f}
	h := testHandles{vehicle: l.class("Vehicle"), car: l.class("Vehicle.Car"), honk: l.interaction("Honk"), longHonk: l.interaction("Honk.LongHonk")}
	h.position, h.label, h.noise = l.attr(h.vehicle, "Position"), l.attr(h.vehicle, "Label"), l.attr(h.vehicle, "Noise")
	h.doors = l.attr(h.car, "Doors")
	h.loudness, h.seconds = l.param(h.honk, "Loudness"), l.param(h.longHonk, "Seconds")
	return h
}

// found is a lookup's value, failing t on its error.
func found[T any](t testing.TB) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// nameLookup looks handles up by name at f, failing t on a name f does not
// know.
type nameLookup struct {
	t testing.TB
	f *Federate
}

func (l nameLookup) class(name string) ObjectClassHandle {
	return found[ObjectClassHandle](l.t)(l.f.GetObjectClassHandle(name))
}

func (l nameLookup) attr(c ObjectClassHandle, name string) AttributeHandle {
	return found[AttributeHandle](l.t)(l.f.GetAttributeHandle(c, name))
}

func (l nameLookup) interaction(name string) InteractionClassHandle {
	return found[InteractionClassHandle](l.t)(l.f.GetInteractionClassHandle(name))
}

func (l nameLookup) param(ic InteractionClassHandle, name string) ParameterHandle {
	return found[ParameterHandle](l.t)(l.f.GetParameterHandle(ic, name))
}

func (l nameLookup) dim(name string) DimensionHandle {
	return found[DimensionHandle](l.t)(l.f.GetDimensionHandle(name))
}

// waitFor reads events until match accepts one, failing after timeout.
// Events that do not match are returned too, in order.
func waitFor(t testing.TB, f *Federate, timeout time.Duration, match func(Event) bool) (Event, []Event) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var skipped []Event
	for {
		ev, err := f.Next(ctx)
		if err != nil {
			t.Fatalf("%s: waiting for an event: %v (skipped %v)\nstats %+v", f.Name(), err, skipped, f.Stats())
		}
		if match(ev) {
			return ev, skipped
		}
		skipped = append(skipped, ev)
	}
}

// pollUntil calls check about every millisecond until it answers done,
// failing t with check's last status when timeout passes first. check
// may fail t itself on an error that ends the wait.
func pollUntil(t testing.TB, timeout time.Duration, check func() (done bool, status string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		done, status := check()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(status)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitGoroutines waits up to 5 s until no more goroutines run than
// before, failing t with every goroutine's stack when some stay; after
// names what should have ended them.
func waitGoroutines(t testing.TB, before int, after string) {
	t.Helper()
	pollUntil(t, 5*time.Second, func() (bool, string) {
		n := runtime.NumGoroutine()
		if n <= before {
			return true, ""
		}
		buf := make([]byte, 1<<16)
		return false, fmt.Sprintf("%d goroutines before, %d after %s:\n%s", before, n, after, buf[:runtime.Stack(buf, true)])
	})
}

// nothingAt takes every event queued at f and fails the test for each
// one that unwanted takes.
func nothingAt(t testing.TB, f *Federate, what string, unwanted func(Event) bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for {
		ev, err := f.Next(ctx)
		if err != nil {
			return
		}
		if unwanted(ev) {
			t.Errorf("%s: %s got %T %+v", what, f.Name(), ev, ev)
		}
	}
}

// waitEvent waits up to 5 s for f's next event of type T.
func waitEvent[T Event](t testing.TB, f *Federate) T {
	t.Helper()
	ev, _ := waitFor(t, f, 5*time.Second, isType[T])
	return ev.(T)
}

func isType[T Event](ev Event) bool {
	_, ok := ev.(T)
	return ok
}

// labelFlow has sub subscribe to and pub publish the Vehicle label,
// registers a Vehicle at pub, and waits up to wait until sub discovers
// it: the object most data-plane tests update.
func labelFlow(t testing.TB, pub, sub *Federate, h testHandles, wait time.Duration) ObjectInstanceHandle {
	t.Helper()
	return vehicleFlow(t, pub, sub, h, wait, h.label)
}

// vehicleFlow is labelFlow for the Vehicle attributes attrs.
func vehicleFlow(t testing.TB, pub, sub *Federate, h testHandles, wait time.Duration, attrs ...AttributeHandle) ObjectInstanceHandle {
	t.Helper()
	if err := sub.SubscribeObjectClassAttributes(h.vehicle, attrs...); err != nil {
		t.Fatal(err)
	}
	if err := pub.PublishObjectClassAttributes(h.vehicle, attrs...); err != nil {
		t.Fatal(err)
	}
	obj, err := pub.RegisterObjectInstance(h.vehicle, "")
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, sub, wait, isType[DiscoverObjectInstance])
	return obj
}
