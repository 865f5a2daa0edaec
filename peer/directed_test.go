package peer

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer/transport"
)

// directedFOM is the test FOM with Honk declared directed at Vehicle
// (HLA 4 <directedInteraction>); directedExt, a module a later federate
// joins with, adds Honk.LongHonk at Vehicle.Car.
var directedFOM = strings.Replace(testFOM,
	"<objectClass><name>Vehicle</name><sharing>PublishSubscribe</sharing>",
	"<objectClass><name>Vehicle</name><sharing>PublishSubscribe</sharing>\n      <directedInteraction><name>HLAinteractionRoot.Honk</name><sharing>PublishSubscribe</sharing></directedInteraction>", 1)

const directedExt = `<?xml version="1.0"?>
<objectModel xmlns="http://standards.ieee.org/IEEE1516-2025">
  <modelIdentification><name>directed extension</name><type>FOM</type><version>1</version></modelIdentification>
  <objects><objectClass><name>HLAobjectRoot</name>
    <objectClass><name>Vehicle</name>
      <objectClass><name>Car</name>
        <directedInteraction><name>Honk.LongHonk</name><sharing>PublishSubscribe</sharing></directedInteraction>
      </objectClass>
    </objectClass>
  </objectClass></objects>
</objectModel>`

// Only the interaction classes the FDD declares directed at an object
// class (or an ancestor) may be published, subscribed, withdrawn and
// sent directed there; any other is ErrInteractionClassNotDefined. A
// declaration covers its interaction class, not the subclasses of it;
// a module added at join time adds declarations to a class.
func TestConformanceDirectedInteractionsDeclared(t *testing.T) {
	if !strings.Contains(directedFOM, "<directedInteraction>") {
		t.Fatal("the test FOM did not take the declaration")
	}
	doc, err := fomxml.ParseBytes("directed.xml", []byte(directedFOM))
	if err != nil {
		t.Fatal(err)
	}
	ext, err := fomxml.ParseBytes("directed-ext.xml", []byte(directedExt))
	if err != nil {
		t.Fatal(err)
	}
	m := &memFederation{t: t, net: transport.NewNetwork(transport.NetworkConfig{Seed: 13}), reg: NewMemRegistry(), name: "fed", dir: t.TempDir()}
	t.Cleanup(m.close)
	a, b := m.add("A", doc), m.add("B", doc)
	h := handles(t, a)
	obj := labelFlow(t, b, a, h, 10*time.Second) // B registers a Vehicle; A knows it

	notDefined := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrInteractionClassNotDefined) {
			t.Errorf("%s: %v, want ErrInteractionClassNotDefined", what, err)
		}
	}
	// LongHonk is a subclass of Honk, which Vehicle declares; it is not
	// declared itself (yet).
	notDefined("publish LongHonk at Vehicle", a.PublishObjectClassDirectedInteractions(h.vehicle, h.longHonk))
	notDefined("publish LongHonk at Car", a.PublishObjectClassDirectedInteractions(h.car, h.longHonk))
	notDefined("publish Honk and LongHonk at Vehicle", a.PublishObjectClassDirectedInteractions(h.vehicle, h.honk, h.longHonk))
	notDefined("subscribe LongHonk at Vehicle", b.SubscribeObjectClassDirectedInteractions(h.vehicle, h.longHonk))
	notDefined("subscribe LongHonk at Vehicle universally", b.SubscribeObjectClassDirectedInteractionsUniversally(h.vehicle, h.longHonk))
	notDefined("unpublish LongHonk at Vehicle", a.UnpublishObjectClassDirectedInteractions(h.vehicle, h.longHonk))
	notDefined("unsubscribe LongHonk at Vehicle", b.UnsubscribeObjectClassDirectedInteractions(h.vehicle, h.longHonk))
	notDefined("send LongHonk to a Vehicle", a.SendDirectedInteraction(h.longHonk, obj, ParameterValues{h.seconds: []byte{0, 0, 0, 1}}, nil))

	// Declared: accepted at Vehicle and, inherited, at Car.
	if err := a.PublishObjectClassDirectedInteractions(h.vehicle, h.honk); err != nil {
		t.Fatalf("publish Honk at Vehicle: %v", err)
	}
	if err := a.PublishObjectClassDirectedInteractions(h.car, h.honk); err != nil {
		t.Errorf("publish Honk at Car (inherited): %v", err)
	}
	if err := b.SubscribeObjectClassDirectedInteractions(h.vehicle, h.honk); err != nil {
		t.Fatalf("subscribe Honk at Vehicle: %v", err)
	}
	if err := a.SendDirectedInteraction(h.honk, obj, ParameterValues{h.loudness: []byte{0, 0, 0, 9}}, []byte("beep")); err != nil {
		t.Fatalf("send Honk: %v", err)
	}
	ev, _ := waitFor(t, b, 10*time.Second, isType[ReceiveDirectedInteraction])
	if r := ev.(ReceiveDirectedInteraction); r.Class != h.honk || r.Object != obj || string(r.Tag) != "beep" {
		t.Errorf("B received %+v", r)
	}

	// C joins with a module that declares LongHonk at Car: the two
	// modules' declarations of Vehicle.Car combine.
	c := m.addWith("C", doc, func(cfg *Config) { cfg.FOMModules = append(cfg.FOMModules, ext) })
	if err := c.PublishObjectClassDirectedInteractions(h.car, h.longHonk); err != nil {
		t.Errorf("C: publish LongHonk at Car: %v", err)
	}
	if err := c.PublishObjectClassDirectedInteractions(h.car, h.honk); err != nil {
		t.Errorf("C: publish Honk at Car (from the first module, inherited): %v", err)
	}
	notDefined("C: publish LongHonk at Vehicle", c.PublishObjectClassDirectedInteractions(h.vehicle, h.longHonk))
	// A learns the module when C joins; until then LongHonk stays refused.
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := a.SubscribeObjectClassDirectedInteractions(h.car, h.longHonk)
		if err == nil {
			break
		}
		if !errors.Is(err, ErrInteractionClassNotDefined) || time.Now().After(deadline) {
			t.Fatalf("A: subscribe LongHonk at Car after C joined: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
