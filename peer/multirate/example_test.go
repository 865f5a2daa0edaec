package multirate_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/fomxml/codec"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/multirate"
	"github.com/meshrti/meshrti/peer/transport"
)

const exampleFOM = `<?xml version="1.0"?>
<objectModel xmlns="http://standards.ieee.org/IEEE1516-2010">
  <modelIdentification><name>multirate example</name><type>FOM</type><version>1</version></modelIdentification>
  <objects><objectClass><name>HLAobjectRoot</name>
    <objectClass><name>Truck</name><sharing>PublishSubscribe</sharing>
      <attribute><name>Position</name><dataType>HLAfloat64BE</dataType><updateType>Conditional</updateType><updateCondition>NA</updateCondition><ownership>NoTransfer</ownership><sharing>PublishSubscribe</sharing><transportation>HLAreliable</transportation><order>TimeStamp</order></attribute>
    </objectClass>
  </objectClass></objects>
</objectModel>`

// A simulator moves two trucks, T1 by 10 m and T2 by 5 m every main
// cycle of 1; a viewer shows T1 with a job at the main cycle and plans
// T2's route with a job every 3 main cycles (one instance, one cycle:
// rule 6). Each job reads its snapshot at the start and at the end of
// its cycle: the planner sees T2 where it was at its boundary, however
// far the main loop has moved meanwhile, and the value stamped exactly
// at the boundary is there.
func ExampleScheduler() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := runExample(ctx)
	if err != nil {
		fmt.Println(err)
	}
	fmt.Print(out)
	// Output:
	// display: cycle 0 at 0: no position yet
	// display: cycle 1 at 1: 10 m, then 10 m
	// display: cycle 2 at 2: 20 m, then 20 m
	// display: cycle 3 at 3: 30 m, then 30 m
	// display: cycle 4 at 4: 40 m, then 40 m
	// display: cycle 5 at 5: 50 m, then 50 m
	// planner: cycle 0 at 0: no position yet
	// planner: cycle 1 at 3: 15 m, then 15 m
}

func runExample(ctx context.Context) (string, error) {
	fom, err := fomxml.ParseBytes("example.xml", []byte(exampleFOM))
	if err != nil {
		return "", err
	}
	network, registry := transport.NewNetwork(transport.NetworkConfig{}), peer.NewMemRegistry()
	join := func(name string) (*peer.Federate, error) {
		return peer.Join(ctx, peer.Config{
			Federation: "multirate", FederateName: name, FOMModules: []*fomxml.Document{fom}, Create: true,
			Control: registry.Control("multirate"), Transport: network.Endpoint(name),
		})
	}
	sim, err := join("sim")
	if err != nil {
		return "", err
	}
	defer sim.Close()
	viewer, err := join("viewer")
	if err != nil {
		return "", err
	}
	defer viewer.Close()

	truck, _ := sim.GetObjectClassHandle("Truck")
	position, _ := sim.GetAttributeHandle(truck, "Position")
	if err := viewer.SubscribeObjectClassAttributes(truck, position); err != nil {
		return "", err
	}
	if err := sim.PublishObjectClassAttributes(truck, position); err != nil {
		return "", err
	}
	if err := sim.ReserveMultipleObjectInstanceName("T1", "T2"); err != nil {
		return "", err
	}
	if err := await[peer.MultipleObjectInstanceNameReservationSucceeded](ctx, sim); err != nil {
		return "", err
	}
	for _, name := range []string{"T1", "T2"} {
		if _, err := sim.RegisterObjectInstance(truck, name); err != nil {
			return "", err
		}
	}
	if err := viewer.EnableTimeConstrained(); err != nil {
		return "", err
	}
	if err := await[peer.TimeConstrainedEnabled](ctx, viewer); err != nil {
		return "", err
	}
	if err := sim.EnableTimeRegulation(peer.Float64Time(1)); err != nil {
		return "", err
	}
	if err := await[peer.TimeRegulationEnabled](ctx, sim); err != nil {
		return "", err
	}

	// The simulator: one job at the main cycle, naming no instances
	// (every job runs at the main cycle). Its update is stamped at its
	// next boundary: the positions the trucks have there.
	simSched, err := multirate.New(sim, multirate.Config{
		MainCycle: peer.Float64Time(1),
		Jobs: []multirate.Job{{Name: "move", Run: func(_ context.Context, c *multirate.Cycle) error {
			t := c.Next.Float()
			if err := c.Update("T1", peer.AttributeValues{position: codec.AppendFloat64BE(nil, 10*t)}, nil); err != nil {
				return err
			}
			return c.Update("T2", peer.AttributeValues{position: codec.AppendFloat64BE(nil, 5*t)}, nil)
		}}},
	})
	if err != nil {
		return "", err
	}

	// The viewer: each job writes to its own log; they are printed in
	// order at the end.
	logs := map[string]*strings.Builder{"display": {}, "planner": {}}
	trucks := map[string]string{"display": "T1", "planner": "T2"}
	show := func(_ context.Context, c *multirate.Cycle) error {
		w := logs[c.Job]
		fmt.Fprintf(w, "%s: cycle %d at %v: ", c.Job, c.Number, c.Boundary)
		for i, at := range []int{0, c.N - 1} {
			if err := c.Await(at); err != nil {
				return err
			}
			b, ok, err := c.Value(trucks[c.Job], position)
			if err != nil {
				return err
			}
			if !ok {
				fmt.Fprintln(w, "no position yet")
				return nil
			}
			x, _, _ := codec.ReadFloat64BE(b)
			fmt.Fprintf(w, "%v m%s", x, []string{", then ", "\n"}[i])
		}
		return nil
	}
	viewSched, err := multirate.New(viewer, multirate.Config{
		MainCycle: peer.Float64Time(1),
		Jobs: []multirate.Job{
			{Name: "display", Uses: multirate.Objects("T1"), Run: show},
			{Name: "planner", Cycle: peer.Float64Time(3), Uses: multirate.Objects("T2"), Run: show},
		},
	})
	if err != nil {
		return "", err
	}

	const cycles = 6
	simDone := make(chan error, 1)
	go func() { simDone <- simSched.Run(ctx, cycles) }()
	if err := viewSched.Run(ctx, cycles); err != nil {
		return "", err
	}
	if err := <-simDone; err != nil {
		return "", err
	}
	return logs["display"].String() + logs["planner"].String(), nil
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
