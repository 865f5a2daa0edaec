package fomxml_test

import (
	"errors"
	"fmt"

	"github.com/meshrti/meshrti/fomxml"
)

// Load merges modules after the standard MIM and answers questions about
// the result.
func ExampleLoad() {
	fdd, err := fomxml.Load("testdata/air.xml", "testdata/ext.xml")
	if err != nil {
		fmt.Println(err)
		return
	}
	heli, _ := fdd.ObjectClass("Aircraft.Helicopter")
	fmt.Println(heli.QualifiedName)
	for _, a := range heli.AllAttributes() {
		fmt.Printf("  %s (%s, %s)\n", a.Name, a.DataType, a.Order)
	}
	// Output:
	// HLAobjectRoot.Aircraft.Helicopter
	//   HLAprivilegeToDeleteObject (HLAtoken, TimeStamp)
	//   Callsign (HLAunicodeString, Receive)
	//   Position (Position3D, TimeStamp)
	//   Rotors (HLAoctet, Receive)
}

// Modules that define the same thing differently do not merge; the error
// names both places.
func ExampleMerge_inconsistent() {
	a, _ := fomxml.ParseBytes("a.xml", []byte(`<objectModel><dimensions>
  <dimension><name>Altitude</name><upperBound>100</upperBound></dimension>
</dimensions></objectModel>`))
	b, _ := fomxml.ParseBytes("b.xml", []byte(`<objectModel><dimensions>
  <dimension><name>Altitude</name><upperBound>200</upperBound></dimension>
</dimensions></objectModel>`))
	_, err := fomxml.Merge(a, b)
	fmt.Println(errors.Is(err, fomxml.ErrInconsistent))
	fmt.Println(err)
	// Output:
	// true
	// b.xml:2: dimension Altitude is defined differently (conflicts with a.xml:2)
}

// A module slightly off the schema loads with warnings; Strict refuses it.
func ExampleOptions() {
	fdd, err := fomxml.Load("testdata/lenient-variant.xml")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, w := range fdd.Warnings() {
		fmt.Println(w)
	}
	_, err = fomxml.Options{Strict: true}.Load("testdata/lenient-variant.xml")
	fmt.Println(err)
	// Output:
	// testdata/lenient-variant.xml:64: alternative SensorReport.Nothing has no <dataType>; it carries no data, as with NA
	// testdata/lenient-variant.xml:69: alternative SensorReport.Waiting has an empty <dataType>; it carries no data, as with NA
	// testdata/lenient-variant.xml:64: alternative SensorReport.Nothing has no <dataType>
	// testdata/lenient-variant.xml:69: alternative SensorReport.Waiting has an empty <dataType>
}
