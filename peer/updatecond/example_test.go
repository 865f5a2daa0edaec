package updatecond_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/fomxml/codec"
	"github.com/meshrti/meshrti/peer/hla"
	"github.com/meshrti/meshrti/peer/updatecond"
)

// A federate offers its attributes every frame; the Filter lets through
// the first value, changes of 2% or more, and a change below 2% once it
// has held for 5 s.
func ExampleFilter() {
	fdd, err := fomxml.Load("testdata/vehicles.xml")
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg, err := updatecond.LoadConfig(strings.NewReader(`{
	  "attributes": {"Vehicle.Callsign": {"heartbeat": "off"}}
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	f, err := updatecond.New(fdd, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	c, _ := codec.New(fdd)
	vehicle, _ := fdd.ObjectClass("Vehicle")
	speed, _ := vehicle.Attribute("Speed")
	obj := hla.ObjectInstanceHandle{Federate: 1, Serial: 1}

	for i, v := range []float64{100, 101, 102, 102.5, 102.5, 102.5, 102.5, 102.5, 102.5} {
		b, _ := c.Encode(speed.DataType, v)
		now := updatecond.Now{Wall: time.Duration(i) * time.Second}
		send := f.Filter(obj, vehicle.Handle, hla.AttributeValues{speed.Handle: b}, now)
		fmt.Printf("t=%v speed=%g sent=%v\n", now.Wall, v, len(send) > 0)
	}
	f.Forget(obj) // the instance was deleted
	st := f.Stats()
	fmt.Printf("offered %d, sent %d (%d held), suppressed %d\n", st.Offered, st.Sent, st.Held, st.Suppressed)
	// Output:
	// t=0s speed=100 sent=true
	// t=1s speed=101 sent=false
	// t=2s speed=102 sent=true
	// t=3s speed=102.5 sent=false
	// t=4s speed=102.5 sent=false
	// t=5s speed=102.5 sent=false
	// t=6s speed=102.5 sent=false
	// t=7s speed=102.5 sent=false
	// t=8s speed=102.5 sent=true
	// offered 9, sent 3 (1 held), suppressed 6
}
