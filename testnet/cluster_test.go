package testnet

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/transport"
)

var seedFlag = flag.Int64("seed", 0, "replay one seed of the randomized cluster tests")

// handlesOf looks up testnet FOM handles through one federate.
type fomHandles struct {
	aircraft         peer.ObjectClassHandle
	position, status peer.AttributeHandle
	contact, chat    peer.InteractionClassHandle
	contactData      peer.ParameterHandle
	chatData         peer.ParameterHandle
}

func lookup(t testing.TB, f *peer.Federate) fomHandles {
	t.Helper()
	var h fomHandles
	var errs [7]error
	h.aircraft, errs[0] = f.GetObjectClassHandle("Aircraft")
	h.position, errs[1] = f.GetAttributeHandle(h.aircraft, "Position")
	h.status, errs[2] = f.GetAttributeHandle(h.aircraft, "Status")
	h.contact, errs[3] = f.GetInteractionClassHandle("Contact")
	h.chat, errs[4] = f.GetInteractionClassHandle("Chat")
	h.contactData, errs[5] = f.GetParameterHandle(h.contact, "Data")
	h.chatData, errs[6] = f.GetParameterHandle(h.chat, "Data")
	if err := errors.Join(errs[:]...); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestEightFederatesWithFaults: eight regulating and constrained
// federates over a network that loses 10% of packets, duplicates 5% and
// reorders, exchange time-stamped and receive-order updates and
// interactions for a number of time steps. Every reliable message must
// arrive exactly once at every subscriber, time-stamped ones in the same
// order everywhere and never below the receiver's granted time, and
// grants never decrease.
func TestEightFederatesWithFaults(t *testing.T) {
	seed := int64(1)
	if *seedFlag != 0 {
		seed = *seedFlag
	}
	const n, steps = 8, 12
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := mustStart(t, ctx, Config{Federates: n, Seed: seed, Faults: faultsForTest}, false)
	defer c.Close()
	logSeedOnFailure(t, seed, n, steps)
	h := lookup(t, c.Feds[0])
	for _, f := range c.Feds {
		pubSubAircraft(t, f, h, h.contact, h.chat)
	}
	enableAll(t, ctx, c)
	for _, f := range c.Feds {
		// Receive-order messages arriving after the last grant are
		// delivered too, not held for a next time advance.
		must(t, f.EnableAsynchronousDelivery())
	}
	objs := registerAll(t, ctx, c, h)
	for k := 1; k <= steps; k++ {
		ts := peer.Float64Time(float64(k) + 0.5)
		for i, f := range c.Feds {
			tag := func(kind string) []byte { return []byte(fmt.Sprintf("%s/F%d/%d", kind, i, k)) }
			must(t, f.UpdateAttributeValuesWithTime(objs[i], peer.AttributeValues{h.position: tag("pos")}, tag("pos"), ts))
			must(t, f.UpdateAttributeValues(objs[i], peer.AttributeValues{h.status: tag("status")}, tag("status")))
			must(t, f.SendInteractionWithTime(h.contact, peer.ParameterValues{h.contactData: tag("contact")}, tag("contact"), ts))
			must(t, f.SendInteraction(h.chat, peer.ParameterValues{h.chatData: tag("chat")}, tag("chat")))
			must(t, f.TimeAdvanceRequest(peer.Float64Time(float64(k))))
		}
		for i := range c.Feds {
			if err := c.Logs[i].WaitFor(ctx, Granted(float64(k))); err != nil {
				for _, f := range c.Feds {
					st, _ := f.TimeStatus()
					t.Logf("%s: %+v stats %+v", f.Name(), st, f.Stats())
				}
				t.Fatalf("step %d: %v", k, err)
			}
		}
	}
	// One more step delivers the last time-stamped messages (at steps+0.5).
	for _, f := range c.Feds {
		must(t, f.TimeAdvanceRequest(peer.Float64Time(float64(steps+1))))
	}
	// Every federate must hear every other's messages: per step, one TSO
	// reflect, one RO reflect, one TSO and one RO interaction from each
	// of the n-1 others.
	want := 4 * (n - 1) * steps
	for i := range c.Feds {
		if err := c.Logs[i].WaitFor(ctx, func(evs []peer.Event) bool { return countTagged(evs) >= want && Granted(steps+1)(evs) }); err != nil {
			t.Fatalf("F%d: %v; got %d of %d tagged messages", i, err, countTagged(c.Logs[i].Events()), want)
		}
	}
	for _, v := range Check(c.Logs) {
		t.Error(v)
	}
	for i, l := range c.Logs {
		if got := countTagged(l.Events()); got != want {
			t.Errorf("F%d received %d tagged messages, want exactly %d", i, got, want)
		}
	}
	st := c.Feds[0].Stats()
	t.Logf("F0: sent %d, delivered %d, gaps %d, reliable %+v", st.Sent, st.Delivered, st.Gaps, st.Reliable)
	if st.Gaps != 0 {
		t.Errorf("F0 reports %d gaps", st.Gaps)
	}
}

// mustStart starts a cluster with cfg, or fails t. virtual makes it
// deterministic in virtual time, each packet taking 50 to 150 us.
func mustStart(t *testing.T, ctx context.Context, cfg Config, virtual bool) *Cluster {
	t.Helper()
	if virtual {
		cfg.Deterministic = true
		cfg.Faults.Delay, cfg.Faults.Jitter = 50*time.Microsecond, 100*time.Microsecond
	}
	c, err := Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// pubSubAircraft subscribes f to the aircraft's position and status and
// to the interactions, then publishes the same.
func pubSubAircraft(t *testing.T, f *peer.Federate, h fomHandles, interactions ...peer.InteractionClassHandle) {
	t.Helper()
	must(t, f.SubscribeObjectClassAttributes(h.aircraft, h.position, h.status))
	for _, ic := range interactions {
		must(t, f.SubscribeInteractionClass(ic))
	}
	must(t, f.PublishObjectClassAttributes(h.aircraft, h.position, h.status))
	for _, ic := range interactions {
		must(t, f.PublishInteractionClass(ic))
	}
}

// evenOdd splits the federates' names in two halves to partition: the
// even-numbered and the odd-numbered.
func (c *Cluster) evenOdd() (even, odd []string) {
	for i, f := range c.Feds {
		if i%2 == 0 {
			even = append(even, f.Name())
		} else {
			odd = append(odd, f.Name())
		}
	}
	return even, odd
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func count[T peer.Event](n int) func([]peer.Event) bool {
	return func(evs []peer.Event) bool {
		c := 0
		for _, ev := range evs {
			if _, ok := ev.(T); ok {
				c++
			}
		}
		return c >= n
	}
}

func countTagged(evs []peer.Event) int {
	c := 0
	for _, ev := range evs {
		if _, _, _, _, ok := tagged(ev); ok {
			c++
		}
	}
	return c
}

var faultsForTest = transport.Faults{Loss: 0.10, Duplicate: 0.05, Reorder: 0.10}
