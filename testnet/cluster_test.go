package testnet

import (
	"context"
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
	var err error
	ck := func() {
		if err != nil {
			t.Fatal(err)
		}
	}
	h.aircraft, err = f.GetObjectClassHandle("Aircraft")
	ck()
	h.position, err = f.GetAttributeHandle(h.aircraft, "Position")
	ck()
	h.status, err = f.GetAttributeHandle(h.aircraft, "Status")
	ck()
	h.contact, err = f.GetInteractionClassHandle("Contact")
	ck()
	h.chat, err = f.GetInteractionClassHandle("Chat")
	ck()
	h.contactData, err = f.GetParameterHandle(h.contact, "Data")
	ck()
	h.chatData, err = f.GetParameterHandle(h.chat, "Data")
	ck()
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
	c, err := Start(ctx, Config{
		Federates: n, Seed: seed,
		Faults: faultsForTest,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	defer func() {
		if t.Failed() {
			t.Logf("seed %d (replay with -seed=%d)", seed, seed)
		}
	}()
	h := lookup(t, c.Feds[0])
	for _, f := range c.Feds {
		must(t, f.SubscribeObjectClassAttributes(h.aircraft, h.position, h.status))
		must(t, f.SubscribeInteractionClass(h.contact))
		must(t, f.SubscribeInteractionClass(h.chat))
		must(t, f.PublishObjectClassAttributes(h.aircraft, h.position, h.status))
		must(t, f.PublishInteractionClass(h.contact))
		must(t, f.PublishInteractionClass(h.chat))
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
