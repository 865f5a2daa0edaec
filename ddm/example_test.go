package ddm_test

import (
	"fmt"

	"github.com/meshrti/meshrti/ddm"
	"github.com/meshrti/meshrti/fomxml"
)

// A radar subscribes to the aircraft within its range; an aircraft's
// updates go only into the cells where some subscriber's region meets
// its own.
func Example() {
	doc, _ := fomxml.ParseBytes("air.xml", []byte(`<objectModel><dimensions>
  <dimension><name>X</name><upperBound>1000</upperBound></dimension>
  <dimension><name>Y</name><upperBound>1000</upperBound></dimension>
  <dimension><name>Band</name><upperBound>3</upperBound><value>Excluded</value></dimension>
</dimensions></objectModel>`))
	fdd, _ := fomxml.Merge(doc)
	sp, err := ddm.NewSpace(fdd, ddm.Config{Cells: map[string]int{"X": 10, "Y": 10}})
	if err != nil {
		fmt.Println(err)
		return
	}
	dims, _ := sp.Handles([]string{"X", "Y", "Band"}) // a class's available dimensions
	h := func(name string) ddm.DimensionHandle { hs, _ := sp.Handles([]string{name}); return hs[0] }
	x, y, band := h("X"), h("Y"), h("Band")

	// The radar listens to band 1 in [200, 400) x [200, 400).
	radar := ddm.Region{}.With(x, ddm.Range{Lower: 200, Upper: 400}).With(y, ddm.Range{Lower: 200, Upper: 400}).With(band, ddm.Range{Lower: 1, Upper: 2})
	level := sp.Level(dims, radar)
	fmt.Println("radar joins", len(sp.Cells(dims, radar, level)), "cells at level", level)

	// An aircraft that says nothing about Band (Excluded: not tested).
	plane := ddm.Region{}.With(x, ddm.Range{Lower: 390, Upper: 395}).With(y, ddm.Range{Lower: 250, Upper: 255})
	in, ok := sp.Intersect(dims, plane, radar)
	fmt.Println("overlap:", ok, "send into", sp.Cells(dims, in, level))

	m := ddm.NewMatcher(sp, dims)
	m.SetSubscription(1, []ddm.Region{radar})
	m.SetUpdate(7, []ddm.Region{plane})
	fmt.Println(m.Changes())
	m.SetUpdate(7, []ddm.Region{plane.With(x, ddm.Range{Lower: 400, Upper: 405})}) // [0,400) and [400,405) do not overlap
	fmt.Println(m.Changes(), m.Matches(7))
	// Output:
	// radar joins 4 cells at level 0
	// overlap: true send into [{0 123}]
	// [{7 1 true}]
	// [{7 1 false}] []
}
