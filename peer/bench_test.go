package peer

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer/transport"
)

// udpPair joins a publisher and a subscriber of Vehicle.Label in one
// process over loopback multicast, with the in-process registry.
func udpPair(b *testing.B, maxFrame int) (pub, sub *Federate, obj ObjectInstanceHandle, label AttributeHandle) {
	b.Helper()
	reg := NewMemRegistry()
	doc := testDoc(b)
	port := 30000 + os.Getpid()%10000
	fed := fmt.Sprintf("bench-%d", os.Getpid())
	join := func(name string) *Federate {
		tr, err := transport.NewUDP(transport.UDPConfig{Federation: fed, Port: port, MaxPacket: maxFrame + 64, ReadBuffer: 4 << 20})
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		f, err := Join(ctx, Config{
			Federation: fed, FederateName: name, FOMModules: []*fomxml.Document{doc}, Create: true,
			Control: reg.Control(fed), Transport: tr, MaxFrame: maxFrame,
		})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { f.Close() })
		return f
	}
	pub, sub = join("pub"), join("sub")
	h := handles(b, pub)
	obj = labelFlow(b, pub, sub, h, 5*time.Second)
	return pub, sub, obj, h.label
}

// BenchmarkUpdateUDP measures 100-byte attribute updates from one
// federate reflected by another, in one process over loopback multicast:
// updates/s end to end.
func BenchmarkUpdateUDP(b *testing.B) {
	for _, mf := range []int{1400, 16000} {
		b.Run(fmt.Sprintf("frame=%d", mf), func(b *testing.B) {
			pub, sub, obj, label := udpPair(b, mf)
			done := make(chan int)
			n := b.N
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				got := 0
				for got < n {
					ev, err := sub.Next(ctx)
					if err != nil {
						break
					}
					if _, ok := ev.(ReflectAttributeValues); ok {
						got++
					}
				}
				done <- got
			}()
			v := make([]byte, 100)
			b.ResetTimer()
			for i := range n {
				binary.BigEndian.PutUint32(v, uint32(i))
				if err := pub.UpdateAttributeValues(obj, AttributeValues{label: v}, nil); err != nil {
					b.Fatal(err)
				}
			}
			if got := <-done; got != n {
				b.Fatalf("%d of %d reflected\npub %+v\nsub %+v", got, n, pub.Stats(), sub.Stats())
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "updates/s")
		})
	}
}

// BenchmarkRoundTripUDP measures interaction round trips between two
// federates in one process over loopback multicast: one op is a Honk
// from a and its echo from b.
func BenchmarkRoundTripUDP(b *testing.B) {
	reg := NewMemRegistry()
	doc := testDoc(b)
	port := 30000 + (os.Getpid()+1)%10000
	fed := fmt.Sprintf("rtt-%d", os.Getpid())
	join := func(name string) *Federate {
		tr, err := transport.NewUDP(transport.UDPConfig{Federation: fed, Port: port})
		if err != nil {
			b.Fatal(err)
		}
		f, err := Join(context.Background(), Config{
			Federation: fed, FederateName: name, FOMModules: []*fomxml.Document{doc}, Create: true,
			Control: reg.Control(fed), Transport: tr,
		})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { f.Close() })
		return f
	}
	a, e := join("a"), join("echo")
	h := handles(b, a)
	for _, f := range []*Federate{a, e} {
		if err := f.PublishInteractionClass(h.honk); err != nil {
			b.Fatal(err)
		}
		if err := f.SubscribeInteractionClass(h.honk); err != nil {
			b.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // the echo
		for {
			ev, err := e.Next(ctx)
			if err != nil {
				return
			}
			if ri, ok := ev.(ReceiveInteraction); ok && string(ri.Tag) == "ping" {
				e.SendInteraction(h.honk, ParameterValues{h.loudness: ri.Values[h.loudness]}, []byte("pong"))
			}
		}
	}()
	rtt := func() {
		if err := a.SendInteraction(h.honk, ParameterValues{h.loudness: []byte{1, 2, 3, 4}}, []byte("ping")); err != nil {
			b.Fatal(err)
		}
		for {
			wctx, wcancel := context.WithTimeout(ctx, time.Second)
			ev, err := a.Next(wctx)
			wcancel()
			if err != nil {
				b.Fatal(err)
			}
			if ri, ok := ev.(ReceiveInteraction); ok && string(ri.Tag) == "pong" {
				return
			}
		}
	}
	for range 200 {
		rtt()
	}
	b.ResetTimer()
	for b.Loop() {
		rtt()
	}
}

// BenchmarkEventQueue pushes bursts of events and drains them, as a
// receiving federate does: the queue should reuse its array.
func BenchmarkEventQueue(b *testing.B) {
	q := newEventQueue()
	ev := Event(TimeAdvanceGrant{})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		for range 100 {
			q.push(ev)
		}
		for range 100 {
			if _, _, err := q.next(ctx, true); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkEventQueueWake hands one event at a time to a consumer
// waiting in next, as a federate waiting for its grant is: each event
// wakes it.
func BenchmarkEventQueueWake(b *testing.B) {
	q := newEventQueue()
	ev := Event(TimeAdvanceGrant{})
	back := make(chan struct{})
	go func() {
		for {
			if _, _, err := q.next(context.Background(), true); err != nil {
				close(back)
				return
			}
			back <- struct{}{}
		}
	}()
	b.ReportAllocs()
	for b.Loop() {
		q.push(ev)
		<-back
	}
	q.close()
	<-back
}
