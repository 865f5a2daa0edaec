package fomxml

import (
	"errors"
	"strings"
	"testing"
)

// dirBase declares Honk directed at Vehicle (qualified name) and defines
// the interaction classes; dirExt scaffolds Vehicle and adds Flash
// (unqualified name), repeats Honk identically, and declares Honk.Long
// at Car.
const dirBase = `<?xml version="1.0"?>
<objectModel xmlns="http://standards.ieee.org/IEEE1516-2025">
  <modelIdentification><name>base</name><type>FOM</type><version>1</version></modelIdentification>
  <objects><objectClass><name>HLAobjectRoot</name>
    <objectClass><name>Vehicle</name><sharing>PublishSubscribe</sharing>
      <directedInteraction><name>HLAinteractionRoot.Honk</name><sharing>PublishSubscribe</sharing></directedInteraction>
      <attribute><name>Speed</name><dataType>HLAopaqueData</dataType><updateType>Conditional</updateType><updateCondition>NA</updateCondition><ownership>DivestAcquire</ownership><sharing>PublishSubscribe</sharing><transportation>HLAreliable</transportation><order>Receive</order></attribute>
      <objectClass><name>Car</name><sharing>PublishSubscribe</sharing></objectClass>
    </objectClass>
  </objectClass></objects>
  <interactions><interactionClass><name>HLAinteractionRoot</name>
    <interactionClass><name>Honk</name><sharing>PublishSubscribe</sharing><transportation>HLAreliable</transportation><order>Receive</order>
      <interactionClass><name>Long</name><sharing>PublishSubscribe</sharing><transportation>HLAreliable</transportation><order>Receive</order></interactionClass>
    </interactionClass>
    <interactionClass><name>Flash</name><sharing>PublishSubscribe</sharing><transportation>HLAreliable</transportation><order>Receive</order></interactionClass>
  </interactionClass></interactions>
</objectModel>`

const dirExt = `<?xml version="1.0"?>
<objectModel xmlns="http://standards.ieee.org/IEEE1516-2025">
  <modelIdentification><name>ext</name><type>FOM</type><version>1</version></modelIdentification>
  <objects><objectClass><name>HLAobjectRoot</name>
    <objectClass><name>Vehicle</name>
      <directedInteraction><name>Flash</name></directedInteraction>
      <directedInteraction><name>HLAinteractionRoot.Honk</name><sharing>PublishSubscribe</sharing></directedInteraction>
      <objectClass><name>Car</name>
        <directedInteraction><name>Honk.Long</name><sharing>Publish</sharing></directedInteraction>
      </objectClass>
    </objectClass>
  </objectClass></objects>
</objectModel>`

func parseDir(t *testing.T, name, src string) *Document {
	t.Helper()
	d, err := ParseBytes(name, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func directedNames(ds []*DirectedInteraction) string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Interaction.QualifiedName+"/"+d.Sharing+"@"+d.Module)
	}
	return strings.Join(out, " ")
}

// The HLA 4 <directedInteraction> of an object class: parsed from where
// IEEE 1516.2-2025 puts it, its name resolved across modules (qualified
// or not), declarations of one class from several modules combined, a
// subclass inheriting its ancestors', and a declaration covering its
// interaction class only, not the subclasses of it.
func TestConformanceDirectedInteractionsDeclared(t *testing.T) {
	base, ext := parseDir(t, "base.xml", dirBase), parseDir(t, "ext.xml", dirExt)
	for _, order := range [][]*Document{{base, ext}, {ext, base}} {
		fdd, err := Merge(order...)
		if err != nil {
			t.Fatal(err)
		}
		vehicle, _ := fdd.ObjectClass("Vehicle")
		car, _ := fdd.ObjectClass("Vehicle.Car")
		honk, _ := fdd.InteractionClass("Honk")
		long, _ := fdd.InteractionClass("Honk.Long")
		flash, _ := fdd.InteractionClass("Flash")
		if got, want := directedNames(vehicle.DirectedInteractions), "HLAinteractionRoot.Flash/@ext.xml HLAinteractionRoot.Honk/PublishSubscribe@"; !strings.HasPrefix(got, want) {
			t.Errorf("Vehicle declares %q, want %q...", got, want)
		}
		if got, want := directedNames(car.DirectedInteractions), "HLAinteractionRoot.Honk.Long/Publish@ext.xml"; got != want {
			t.Errorf("Car declares %q, want %q", got, want)
		}
		if n := len(car.AllDirectedInteractions()); n != 3 {
			t.Errorf("Car has %d directed interactions, want 3", n)
		}
		for _, c := range []struct {
			class *ObjectClass
			ic    *InteractionClass
			want  bool
		}{
			{vehicle, honk, true}, {vehicle, flash, true}, {car, honk, true}, {car, flash, true},
			{car, long, true},
			{vehicle, long, false}, // declared at the subclass only
			{vehicle, fdd.InteractionRoot, false},
		} {
			d, ok := c.class.DirectedInteraction(c.ic.Handle)
			if ok != c.want || ok && d.Interaction != c.ic {
				t.Errorf("%s directs %s: %v, want %v", c.class.QualifiedName, c.ic.QualifiedName, ok, c.want)
			}
		}
		// No subinteraction coverage: a Long is not directed at Vehicle by
		// Honk's declaration there.
		if _, ok := vehicle.DirectedInteraction(long.Handle); ok {
			t.Error("Honk's declaration covers Honk.Long")
		}
	}

	// A name that is no interaction class: ErrReading, at its line.
	bad := parseDir(t, "bad.xml", strings.Replace(dirExt, "<name>Flash</name>", "<name>Blink</name>", 1))
	if _, err := Merge(base, bad); !errors.Is(err, ErrReading) || !strings.Contains(err.Error(), "bad.xml:6") || !strings.Contains(err.Error(), "Blink") {
		t.Errorf("unresolved directed interaction: %v", err)
	}
	// The same declaration with another sharing: ErrInconsistent.
	clash := parseDir(t, "clash.xml", strings.Replace(dirExt, "<name>HLAinteractionRoot.Honk</name><sharing>PublishSubscribe", "<name>HLAinteractionRoot.Honk</name><sharing>Subscribe", 1))
	if _, err := Merge(base, clash); !errors.Is(err, ErrInconsistent) || !strings.Contains(err.Error(), "sharing Subscribe, was PublishSubscribe") {
		t.Errorf("conflicting directed interaction: %v", err)
	}
	// A directed interaction with no name is a reading error of the module.
	if _, err := ParseBytes("noname.xml", []byte(strings.Replace(dirExt, "<name>Flash</name>", "", 1))); !errors.Is(err, ErrReading) {
		t.Errorf("nameless directed interaction: %v", err)
	}
}
