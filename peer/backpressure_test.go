package peer

import (
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/meshrti/meshrti/peer/internal/core"
	"github.com/meshrti/meshrti/peer/reliable"
	"github.com/meshrti/meshrti/peer/transport"
)

// slowPair sets up a publisher and a subscriber of Vehicle.Label over a
// lossy in-memory network; the subscriber reads no callbacks until told.
// It returns them, the registered object and the Label handle.
func slowPair(t *testing.T, mode BackPressureMode) (pub, sub *Federate, obj ObjectInstanceHandle, label AttributeHandle) {
	t.Helper()
	m := newMemFederation(t, 0, transport.Faults{Loss: 0.05}, 3)
	doc := testDoc(t)
	pub = m.addWith("pub", doc, func(c *Config) { c.BackPressure, c.Window = mode, 64 })
	sub = m.addWith("sub", doc, func(c *Config) { c.MaxQueuedEvents = 40 })
	h := handles(t, pub)
	obj = labelFlow(t, pub, sub, h, 5*time.Second)
	// Flow control needs the publisher to know the subscriber as a
	// receiver of its stream (the join handshake, under loss).
	for deadline := time.Now().Add(5 * time.Second); ; {
		var known bool
		pub.call(func() error {
			known = slices.Contains(pub.core.Receivers(core.ObjectGroup(h.vehicle)), reliable.NodeID(sub.Handle()))
			return nil
		})
		if known {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the publisher never learned of the subscriber")
		}
		time.Sleep(time.Millisecond)
	}
	return pub, sub, obj, h.label
}

// drain reads n reflections of label from sub and checks that they carry
// from, from+1, ..., from+n-1 in order.
func drain(t *testing.T, sub *Federate, label AttributeHandle, from, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for want := 0; want < n; {
		ev, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("after %d of %d reflections: %v; stats %+v", want, n, err, sub.Stats())
		}
		r, ok := ev.(ReflectAttributeValues)
		if !ok {
			continue
		}
		if got := int(binary.BigEndian.Uint32(r.Values[label])); got != from+want {
			t.Fatalf("reflection %d carries %d", from+want, got)
		}
		want++
	}
}

// TestBackPressureError: a subscriber that reads no callbacks stops
// reading the data plane, its publisher's window fills, and updates fail
// with ErrWouldBlock (nothing sent) until the subscriber catches up; no
// update that was accepted is lost or reordered.
func TestBackPressureError(t *testing.T) {
	pub, sub, obj, label := slowPair(t, BackPressureError)
	sent := 0
	update := func() error {
		v := binary.BigEndian.AppendUint32(nil, uint32(sent))
		err := pub.UpdateAttributeValues(obj, AttributeValues{label: v}, nil)
		if err == nil {
			sent++
		}
		return err
	}
	// Keep trying for a while: the subscriber's queue fills, it stops
	// reading, and its publisher stays blocked.
	var err error
	var refused int
	for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); {
		if err = update(); err != nil {
			if !errors.Is(err, ErrWouldBlock) || !errors.Is(err, ErrRTIinternalError) {
				t.Fatalf("after %d updates: %v, want ErrWouldBlock", sent, err)
			}
			refused++
			time.Sleep(time.Millisecond)
		}
	}
	// At most what the subscriber took in before it stopped reading (its
	// 40 queued callbacks and what one read brought past them: it
	// acknowledges what it delivered) plus one window (64) got through.
	if refused == 0 || sent > int(sub.Stats().Delivered)+64 || pub.Stats().Blocked == 0 || sub.Stats().Paused == 0 {
		t.Fatalf("%d updates sent, %d refused; pub %+v sub %+v", sent, refused, pub.Stats(), sub.Stats())
	}
	// The subscriber catches up; the window opens again.
	done := make(chan struct{})
	go func() {
		defer close(done)
		drain(t, sub, label, 0, sent+100)
	}()
	deadline := time.Now().Add(20 * time.Second)
	for target := sent + 100; sent < target; {
		if err := update(); err != nil {
			if !errors.Is(err, ErrWouldBlock) || time.Now().After(deadline) {
				t.Fatalf("update %d: %v", sent, err)
			}
			time.Sleep(time.Millisecond)
		}
	}
	<-done
}

// TestBackPressureBlock: with the default mode, updates wait while the
// subscriber lags, and every one arrives once, in order.
func TestBackPressureBlock(t *testing.T) {
	pub, sub, obj, label := slowPair(t, BackPressureBlock)
	const n = 600
	errc := make(chan error, 1)
	go func() {
		for i := range n {
			if err := pub.UpdateAttributeValues(obj, AttributeValues{label: binary.BigEndian.AppendUint32(nil, uint32(i))}, nil); err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	}()
	time.Sleep(200 * time.Millisecond) // the publisher runs into the window
	drain(t, sub, label, 0, n)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if pub.Stats().Blocked == 0 {
		t.Errorf("the publisher never waited: %+v\nsub %+v", pub.Stats(), sub.Stats())
	}
}
