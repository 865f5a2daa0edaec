package peer

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/meshrti/meshrti/peer/transport"
)

// sendCounter is a transport that counts the sends of its federate (one
// SendBatch or Send is one send, one system call with batch I/O).
type sendCounter struct {
	*transport.MemEndpoint
	mu    sync.Mutex
	sends int
}

func (c *sendCounter) Send(g transport.Group, b []byte) error {
	c.mu.Lock()
	c.sends++
	c.mu.Unlock()
	return c.MemEndpoint.Send(g, b)
}

func (c *sendCounter) SendBatch(ps []transport.Packet) (int, error) {
	c.mu.Lock()
	c.sends++
	c.mu.Unlock()
	return c.MemEndpoint.SendBatch(ps)
}

func (c *sendCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sends
}

// stepPair is a sender A and a receiver B, A's sends counted: B
// subscribes to the Vehicle label A updates and publishes Honk, which A
// subscribes to, so that B's honk opens a step at A. Ticks are an hour
// apart, so that nothing but the step send, its bound and Close sends
// A's frames; hold is A's Config.StepHold.
type stepPair struct {
	net  *transport.Network
	a, b *Federate
	sc   *sendCounter
	h    testHandles
	obj  ObjectInstanceHandle
}

func newStepPair(t *testing.T, hold time.Duration) *stepPair {
	t.Helper()
	return newStepPairTicking(t, hold, time.Hour)
}

// newStepPairTicking is newStepPair with ticks tick apart.
func newStepPairTicking(t *testing.T, hold, tick time.Duration) *stepPair {
	t.Helper()
	m := newMemFederation(t, 0, transport.Faults{}, 1)
	doc := testDoc(t)
	p := &stepPair{net: m.net}
	p.b = m.addWith("B", doc, func(c *Config) { c.TickInterval = tick })
	p.a = m.addWith("A", doc, func(c *Config) {
		p.sc = &sendCounter{MemEndpoint: m.net.Endpoint("A-counted")}
		c.Transport = p.sc
		c.TickInterval = tick
		c.StepHold = hold
	})
	p.h = handles(t, p.a)
	for _, err := range []error{p.a.SubscribeInteractionClass(p.h.honk), p.b.PublishInteractionClass(p.h.honk)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	p.obj = labelFlow(t, p.a, p.b, p.h, 5*time.Second)
	// A round of honk and update, so that what the joins still exchange
	// (the control group's hellos) is over before the tests count.
	p.honk(t)
	p.update(t, "warm-up")
	backToNext(t, p.a)
	p.reflects(t, "warm-up")
	return p
}

// honk has B honk and A take the honk from Next: A's step begins.
func (p *stepPair) honk(t *testing.T) {
	t.Helper()
	if err := p.b.SendInteraction(p.h.honk, ParameterValues{p.h.loudness: []byte{0, 0, 0, 1}}, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, p.a, 5*time.Second, isType[ReceiveInteraction])
}

// update has A update the label to s.
func (p *stepPair) update(t *testing.T, s string) {
	t.Helper()
	if err := p.a.UpdateAttributeValues(p.obj, AttributeValues{p.h.label: []byte(s)}, nil); err != nil {
		t.Fatal(err)
	}
}

// reflects waits for B to reflect the labels want, in that order.
func (p *stepPair) reflects(t *testing.T, want ...string) {
	t.Helper()
	for _, w := range want {
		ev, _ := waitFor(t, p.b, 5*time.Second, isType[ReflectAttributeValues])
		if got := string(ev.(ReflectAttributeValues).Values[p.h.label]); got != w {
			t.Fatalf("B reflected %q, want %q", got, w)
		}
	}
}

// backToNext has A come back to Next with nothing queued; the context
// has ended, so Next returns at once once the step is over.
func backToNext(t *testing.T, f *Federate) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if ev, err := f.Next(ctx); err == nil {
		t.Fatalf("%s: unexpected event %T", f.Name(), ev)
	}
}

// TestStepSendOneSend: the frames of the service calls a federate makes
// in one step leave in one send, when it comes back to Next, in order.
func TestStepSendOneSend(t *testing.T) {
	p := newStepPair(t, time.Hour)
	for round := range 3 {
		p.honk(t)
		sends, st := p.sc.count(), p.a.Stats()
		const calls = 5
		var want []string
		for i := range calls {
			want = append(want, fmt.Sprintf("r%d-%d", round, i))
			p.update(t, want[i])
		}
		if n, st2 := p.sc.count(), p.a.Stats(); n != sends || st2.Frames != st.Frames {
			t.Fatalf("round %d: %d sends, %d frames during the step, want none before A comes back to Next", round, n-sends, st2.Frames-st.Frames)
		}
		backToNext(t, p.a)
		st2 := p.a.Stats()
		if n := p.sc.count(); n != sends+1 {
			t.Errorf("round %d: %d sends for the step, want 1", round, n-sends)
		}
		// The five updates bundle up in one frame, or a few when they
		// fill one.
		if b, l, fr := st2.Batches-st.Batches, st2.Led-st.Led, st2.Frames-st.Frames; b != 1 || l != 1 || fr < 1 {
			t.Errorf("round %d: %d batches (%d led) of %d frames, want 1 led batch", round, b, l, fr)
		}
		p.reflects(t, want...)
	}
}

// TestStepSendDispatch: a callback delivered through Dispatch opens a
// step too; what the ambassador's calls send leaves in one send when
// Dispatch comes back for the next event.
func TestStepSendDispatch(t *testing.T) {
	p := newStepPair(t, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	amb := &honkAnswer{p: p, t: t, sends: make(chan int, 1)}
	done := make(chan error, 1)
	go func() { done <- Dispatch(ctx, p.a, amb) }()
	if err := p.b.SendInteraction(p.h.honk, ParameterValues{p.h.loudness: []byte{0, 0, 0, 1}}, nil); err != nil {
		t.Fatal(err)
	}
	p.reflects(t, "d0", "d1", "d2")
	if n := p.sc.count() - <-amb.sends; n != 1 {
		t.Errorf("%d sends for the callback's three updates, want 1", n)
	}
	cancel()
	if err := <-done; err != context.Canceled {
		t.Errorf("Dispatch: %v", err)
	}
}

// honkAnswer answers a honk with three updates.
type honkAnswer struct {
	NullFederateAmbassador
	p     *stepPair
	t     *testing.T
	sends chan int
}

func (a *honkAnswer) ReceiveInteraction(InteractionClassHandle, ParameterValues, []byte, OrderType, ReflectInfo) error {
	a.sends <- a.p.sc.count()
	for i := range 3 {
		if err := a.p.a.UpdateAttributeValues(a.p.obj, AttributeValues{a.p.h.label: fmt.Appendf(nil, "d%d", i)}, nil); err != nil {
			return err
		}
	}
	return nil
}

// TestStepSendBound: a federate that does not come back to Next after
// its calls still has their frames leave, once the hold's bound has
// passed, in one send and in order.
func TestStepSendBound(t *testing.T) {
	p := newStepPair(t, 100*time.Millisecond) // both calls come well within it
	p.honk(t)
	sends, st := p.sc.count(), p.a.Stats()
	p.update(t, "b0")
	p.update(t, "b1")
	p.reflects(t, "b0", "b1") // A stays in its step
	if n := p.sc.count(); n != sends+1 {
		t.Errorf("%d sends, want 1", n-sends)
	}
	p.a.Close() // the counters are final once the loop has stopped
	if st2 := p.a.Stats(); st2.Batches-st.Batches != 1 || st2.Led-st.Led != 1 {
		t.Errorf("%d batches (%d led by the loop), want 1", st2.Batches-st.Batches, st2.Led-st.Led)
	}
}

// TestStepSendStream: in a step, calls coming after the bound has
// passed send what is held: a federate streaming updates from one
// callback does not hold them all until it comes back.
func TestStepSendStream(t *testing.T) {
	p := newStepPair(t, time.Microsecond)
	p.honk(t)
	sends := p.sc.count()
	var want []string
	for i := range 20 {
		want = append(want, fmt.Sprintf("s%d", i))
		p.update(t, want[i])
		time.Sleep(10 * time.Microsecond) // each call comes after the bound
	}
	p.reflects(t, want...) // A stays in its step
	if n := p.sc.count() - sends; n < 2 {
		t.Errorf("%d sends for 20 calls made past the bound, want several", n)
	}
}

// TestStepSendClose: Close sends what the step holds.
func TestStepSendClose(t *testing.T) {
	p := newStepPair(t, time.Hour)
	p.honk(t)
	sends := p.sc.count()
	p.update(t, "c0")
	p.update(t, "c1")
	if n := p.sc.count(); n != sends {
		t.Fatalf("%d sends before Close, want none", n-sends)
	}
	p.a.Close()
	if n := p.sc.count(); n != sends+1 {
		t.Errorf("%d sends by Close, want 1", n-sends)
	}
	p.reflects(t, "c0", "c1")
}

// TestStepSendWaiter: a time advance request sends what the step holds
// with its own frames, at once: its caller waits for the others'
// answers.
func TestStepSendWaiter(t *testing.T) {
	p := newStepPair(t, time.Hour)
	p.honk(t)
	sends, st := p.sc.count(), p.a.Stats()
	p.update(t, "w0")
	if err := p.a.TimeAdvanceRequest(Float64Time(1)); err != nil {
		t.Fatal(err)
	}
	if n := p.sc.count(); n != sends+1 {
		t.Errorf("%d sends by the update and the time advance request, want 1", n-sends)
	}
	if st2 := p.a.Stats(); st2.Led-st.Led != 1 {
		t.Errorf("%d batches sent by their caller, want 1", st2.Led-st.Led)
	}
	p.reflects(t, "w0")
}

// TestStepSendOff: a negative Config.StepHold sends each call's frames
// as the call ends: B reflects the update while A stays in its step
// (held, it would wait for A's return to Next).
func TestStepSendOff(t *testing.T) {
	p := newStepPair(t, -1)
	p.honk(t)
	p.update(t, "o0")
	p.reflects(t, "o0")
}

// TestStepSendLossy: over a network that loses, duplicates and reorders
// datagrams, the updates of many steps all arrive, in order: the hold
// changes when frames leave, not what the reliable layer repairs.
func TestStepSendLossy(t *testing.T) {
	p := newStepPairTicking(t, time.Hour, 2*time.Millisecond)
	p.net.SetFaults(transport.Faults{Loss: 0.2, Duplicate: 0.1, Reorder: 0.1})
	const rounds, calls = 30, 3
	var want []string
	for r := range rounds {
		p.honk(t) // A's Next: the previous step's updates leave
		for i := range calls {
			want = append(want, fmt.Sprintf("l%d-%d", r, i))
			p.update(t, want[len(want)-1])
		}
	}
	backToNext(t, p.a)
	p.reflects(t, want...)
}
