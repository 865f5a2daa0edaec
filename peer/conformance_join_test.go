package peer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer/transport"
)

// joinBaseFOM is a creation module that defines a dimension and a
// simple data type, and uses neither itself.
const joinBaseFOM = `<?xml version="1.0"?>
<objectModel xmlns="http://standards.ieee.org/IEEE1516-2010">
  <modelIdentification><name>join test base</name><type>FOM</type><version>1</version></modelIdentification>
  <objects><objectClass><name>HLAobjectRoot</name>
    <objectClass><name>Site</name><sharing>PublishSubscribe</sharing>
      <attribute><name>Label</name><dataType>HLAunicodeString</dataType><updateType>Static</updateType><updateCondition>NA</updateCondition><ownership>DivestAcquire</ownership><sharing>PublishSubscribe</sharing><transportation>HLAreliable</transportation><order>Receive</order></attribute>
    </objectClass>
  </objectClass></objects>
  <dimensions>
    <dimension><name>Zone</name><dataType>HLAinteger32BE</dataType><upperBound>100</upperBound><normalization>linear (Zone, 0, 100)</normalization><value>[0..1)</value></dimension>
  </dimensions>
  <dataTypes><simpleDataTypes>
    <simpleData><name>Meters</name><representation>HLAfloat64BE</representation><units>m</units><resolution>NA</resolution><accuracy>NA</accuracy></simpleData>
  </simpleDataTypes></dataTypes>
</objectModel>`

// joinSensorFOM is a join module that uses the base module's dimension
// and data type (TYPE and DIM are replaced to make it use undefined ones).
const joinSensorFOM = `<?xml version="1.0"?>
<objectModel xmlns="http://standards.ieee.org/IEEE1516-2010">
  <modelIdentification><name>join test sensor</name><type>FOM</type><version>1</version></modelIdentification>
  <objects><objectClass><name>HLAobjectRoot</name>
    <objectClass><name>Sensor</name><sharing>PublishSubscribe</sharing>
      <attribute><name>Reach</name><dataType>TYPE</dataType><updateType>Conditional</updateType><updateCondition>NA</updateCondition><ownership>DivestAcquire</ownership><sharing>PublishSubscribe</sharing><dimensions><dimension>DIM</dimension></dimensions><transportation>HLAreliable</transportation><order>Receive</order></attribute>
    </objectClass>
  </objectClass></objects>
  <interactions><interactionClass><name>HLAinteractionRoot</name>
    <interactionClass><name>Ping</name><sharing>PublishSubscribe</sharing><dimensions><dimension>DIM</dimension></dimensions><transportation>HLAreliable</transportation><order>Receive</order>
      <parameter><name>Distance</name><dataType>TYPE</dataType></parameter>
    </interactionClass>
  </interactionClass></interactions>
</objectModel>`

func sensorDoc(t testing.TB, name, typ, dim string) *fomxml.Document {
	t.Helper()
	return parseDoc(t, name, strings.NewReplacer("TYPE", typ, "DIM", dim).Replace(joinSensorFOM))
}

// lookupSensor has f look up the sensor module's classes, attribute,
// parameter and dimension, failing the test on any error.
func lookupSensor(t testing.TB, who string, f *Federate) {
	t.Helper()
	c, err := f.GetObjectClassHandle("Sensor")
	if err != nil {
		t.Fatalf("%s: GetObjectClassHandle(Sensor): %v", who, err)
	}
	if n, err := f.GetObjectClassName(c); err != nil || n != "HLAobjectRoot.Sensor" {
		t.Errorf("%s: GetObjectClassName = %q, %v", who, n, err)
	}
	a, err := f.GetAttributeHandle(c, "Reach")
	if err != nil {
		t.Fatalf("%s: GetAttributeHandle(Sensor, Reach): %v", who, err)
	}
	if n, err := f.GetAttributeName(c, a); err != nil || n != "Reach" {
		t.Errorf("%s: GetAttributeName = %q, %v", who, n, err)
	}
	ic, err := f.GetInteractionClassHandle("Ping")
	if err != nil {
		t.Fatalf("%s: GetInteractionClassHandle(Ping): %v", who, err)
	}
	if _, err := f.GetParameterHandle(ic, "Distance"); err != nil {
		t.Errorf("%s: GetParameterHandle(Ping, Distance): %v", who, err)
	}
	zone, err := f.GetDimensionHandle("Zone")
	if err != nil {
		t.Fatalf("%s: GetDimensionHandle(Zone): %v", who, err)
	}
	if ds, err := f.GetAvailableDimensionsForClassAttribute(c, a); err != nil || len(ds) != 1 || ds[0] != zone {
		t.Errorf("%s: Reach's dimensions %v, %v; want [Zone]", who, ds, err)
	}
}

// A join module is checked against the federation's FDD (its creation
// modules after the MIM), not alone: one that uses a dimension and a
// data type of a creation module is accepted, one that uses an undefined
// one is refused with ErrReadingFDD. The joiner's classes can be looked
// up by an earlier member as soon as the joiner's Join returns, before
// that member has taken any event (a manual federate that has not
// ticked).
func TestConformanceJoinModules(t *testing.T) {
	m := newManualNet(t, 1, transport.Faults{})
	base := parseDoc(t, "base.xml", joinBaseFOM)
	a := m.join("A", func(c *Config) { c.FOMModules = []*fomxml.Document{base} })
	m.run(3)
	join := func(name string, doc *fomxml.Document) (*Federate, error) {
		ep := m.net.Endpoint(name)
		f, err := Join(context.Background(), Config{
			Federation: "manual", FederateName: name, FOMModules: []*fomxml.Document{doc},
			Control: m.reg.ManualControl("manual"), Transport: ep, Manual: true, Incarnation: uint64(len(m.feds) + 1),
		})
		if err == nil {
			m.fedOf[ep] = f
			m.feds = append(m.feds, f)
		}
		return f, err
	}
	for _, bad := range []struct{ name, typ, dim string }{
		{"badtype.xml", "Furlongs", "Zone"},
		{"baddim.xml", "Meters", "Altitude"},
	} {
		_, err := join("bad-"+bad.name, sensorDoc(t, bad.name, bad.typ, bad.dim))
		if !errors.Is(err, ErrReadingFDD) {
			t.Errorf("joining with %s (data type %s, dimension %s): %v, want ErrReadingFDD", bad.name, bad.typ, bad.dim, err)
		}
	}
	if _, err := a.GetObjectClassHandle("Sensor"); !errors.Is(err, ErrNameNotFound) {
		t.Fatalf("a refused module's class is known: %v", err)
	}
	b, err := join("B", sensorDoc(t, "sensor.xml", "Meters", "Zone"))
	if err != nil {
		t.Fatalf("joining with a module that uses the creation module's dimension and data type: %v", err)
	}
	lookupSensor(t, "B", b)
	lookupSensor(t, "A", a) // A has not ticked since B joined
	// A later joiner without modules has them all.
	c, err := join("C", base)
	if err != nil {
		t.Fatal(err)
	}
	lookupSensor(t, "C", c)
}

// TestConformanceJoinModules over the gossip control plane: the earlier
// member looks the joiner's classes up right after its Join returns.
func TestConformanceJoinModulesGossip(t *testing.T) {
	net := transport.NewNetwork(transport.NetworkConfig{Seed: 22})
	federation := fmt.Sprintf("join-modules-%d", os.Getpid())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	join := func(name string, doc *fomxml.Document, seeds []string) (*Federate, error) {
		return Join(ctx, Config{
			Federation: federation, FederateName: name, FOMModules: []*fomxml.Document{doc}, Create: seeds == nil,
			Gossip: GossipConfig{Seeds: seeds}, Transport: net.Endpoint(name), TickInterval: 2 * time.Millisecond,
		})
	}
	a, err := join("A", parseDoc(t, "base.xml", joinBaseFOM), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	seed, _ := a.GossipAddr()
	if _, err := join("bad", sensorDoc(t, "badtype.xml", "Furlongs", "Zone"), []string{seed}); !errors.Is(err, ErrReadingFDD) {
		t.Errorf("joining with an undefined data type: %v, want ErrReadingFDD", err)
	}
	b, err := join("B", sensorDoc(t, "sensor.xml", "Meters", "Zone"), []string{seed})
	if err != nil {
		t.Fatalf("joining with a module that uses the creation module's dimension and data type: %v", err)
	}
	defer b.Close()
	lookupSensor(t, "A", a)
	lookupSensor(t, "B", b)
}
