package peer_test

import (
	"context"
	"fmt"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/fomxml/codec"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/transport"
)

// cyclesFOM has one object class with one time-stamped attribute.
const cyclesFOM = `<?xml version="1.0"?>
<objectModel xmlns="http://standards.ieee.org/IEEE1516-2010">
  <modelIdentification><name>cycles</name><type>FOM</type><version>1</version></modelIdentification>
  <objects><objectClass><name>HLAobjectRoot</name>
    <objectClass><name>Truck</name><sharing>PublishSubscribe</sharing>
      <attribute><name>Position</name><dataType>HLAfloat64BE</dataType><updateType>Conditional</updateType><updateCondition>NA</updateCondition><ownership>NoTransfer</ownership><sharing>PublishSubscribe</sharing><transportation>HLAreliable</transportation><order>TimeStamp</order></attribute>
    </objectClass>
  </objectClass></objects>
</objectModel>`

// Two federates in one process, over an in-memory network: a simulator
// (time-regulating, lookahead 1) moves a truck 10 m per cycle of 1 s,
// and a viewer (time-constrained) shows it, each in a cycle loop. The
// viewer's callbacks are handled between its cycles: each of its cycles
// starts after the grant to its time, with every update stamped up to
// that time already handled.
func ExampleFederate_RunCycles() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := runCycles(ctx); err != nil {
		fmt.Println(err)
	}
	// Output:
	// cycle 1 at time 0: truck at 0 m
	//   reflect 10 m, stamped 1
	//   grant 1
	// cycle 2 at time 1: truck at 10 m
	//   reflect 20 m, stamped 2
	//   grant 2
	// cycle 3 at time 2: truck at 20 m
	//   reflect 30 m, stamped 3
	//   grant 3
	// cycle 4 at time 3: truck at 30 m
}

func runCycles(ctx context.Context) error {
	fom, err := fomxml.ParseBytes("cycles.xml", []byte(cyclesFOM))
	if err != nil {
		return err
	}
	network, registry := transport.NewNetwork(transport.NetworkConfig{}), peer.NewMemRegistry()
	join := func(name string) (*peer.Federate, error) {
		return peer.Join(ctx, peer.Config{
			Federation: "cycles", FederateName: name, FOMModules: []*fomxml.Document{fom}, Create: true,
			Control: registry.Control("cycles"), Transport: network.Endpoint(name),
		})
	}
	sim, err := join("sim")
	if err != nil {
		return err
	}
	defer sim.Close()
	viewer, err := join("viewer")
	if err != nil {
		return err
	}
	defer viewer.Close()

	// Set up before the cycles: declarations, the truck, time management.
	truck, _ := sim.GetObjectClassHandle("Truck")
	position, _ := sim.GetAttributeHandle(truck, "Position")
	if err := viewer.SubscribeObjectClassAttributes(truck, position); err != nil {
		return err
	}
	if err := sim.PublishObjectClassAttributes(truck, position); err != nil {
		return err
	}
	obj, err := sim.RegisterObjectInstance(truck, "")
	if err != nil {
		return err
	}
	if err := await[peer.DiscoverObjectInstance](ctx, viewer); err != nil {
		return err
	}
	if err := sim.EnableTimeRegulation(peer.Float64Time(1)); err != nil {
		return err
	}
	if err := await[peer.TimeRegulationEnabled](ctx, sim); err != nil {
		return err
	}
	if err := viewer.EnableTimeConstrained(); err != nil {
		return err
	}
	if err := await[peer.TimeConstrainedEnabled](ctx, viewer); err != nil {
		return err
	}

	const end = 3
	// The simulator's cycles, on a goroutine of their own (the viewer's
	// run on this one). Each sends the position the truck will have one
	// lookahead ahead, then asks to advance there.
	simDone := make(chan error, 1)
	go func() {
		simDone <- sim.RunCycles(ctx, nil, func(cy *peer.Cycle) error {
			now := cy.Time.Float()
			if now >= end {
				return peer.ErrStopCycles
			}
			next := peer.Float64Time(now + 1)
			cy.Queue(
				peer.Update{Object: obj, Values: peer.AttributeValues{position: codec.AppendFloat64BE(nil, 10*(now+1))}, Time: next},
				peer.AdvanceTo{Time: next},
			)
			return nil
		})
	}()

	// The viewer's cycles: callbacks first, then the cycle's step.
	var x float64
	err = viewer.RunCycles(ctx, func(ev peer.Event) error {
		switch ev := ev.(type) {
		case peer.ReflectAttributeValues:
			v, _, err := codec.ReadFloat64BE(ev.Values[position])
			if err != nil {
				return err
			}
			x = v
			fmt.Printf("  reflect %v m, stamped %v\n", x, ev.Time)
		case peer.TimeAdvanceGrant:
			fmt.Printf("  grant %v\n", ev.Time)
		}
		return nil
	}, func(cy *peer.Cycle) error {
		fmt.Printf("cycle %d at time %v: truck at %v m\n", cy.Number, cy.Time, x)
		if cy.Time.Float() >= end {
			return peer.ErrStopCycles
		}
		cy.Queue(peer.AdvanceTo{Time: peer.Float64Time(cy.Time.Float() + 1)})
		return nil
	})
	if err != nil {
		return err
	}
	return <-simDone
}

// await reads fed's events until one of type T.
func await[T peer.Event](ctx context.Context, fed *peer.Federate) error {
	for {
		ev, err := fed.Next(ctx)
		if err != nil {
			return err
		}
		if _, ok := ev.(T); ok {
			return nil
		}
	}
}
