package peer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer/transport"
)

// readTestdata reads a file of testdata/, shared with package fedpro's
// tests: join_base.xml is a creation module that defines a dimension and
// a simple data type and uses neither itself; join_sensor.xml is a join
// module that uses them (TYPE and DIM are replaced to make it use
// undefined ones).
func readTestdata(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func joinBaseDoc(t testing.TB) *fomxml.Document {
	t.Helper()
	return parseDoc(t, "base.xml", readTestdata(t, "join_base.xml"))
}

func sensorDoc(t testing.TB, name, typ, dim string) *fomxml.Document {
	t.Helper()
	return parseDoc(t, name, strings.NewReplacer("TYPE", typ, "DIM", dim).Replace(readTestdata(t, "join_sensor.xml")))
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
	base := joinBaseDoc(t)
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
	a, err := join("A", joinBaseDoc(t), nil)
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
