package transport

import (
	"sync"
	"testing"
)

// benchUDP sets up a sender and a receiver joined to one group, with a
// goroutine draining the receiver, and runs send. It reports datagrams
// sent per second and the share the receiver got.
func benchUDP(b *testing.B, send func(u *UDP, g Group, payload []byte, n int) error) {
	a, r := newUDPPair(b)
	const g = 42
	mustJoin(b, r, g)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-r.Recv():
			case <-stop:
				return
			}
		}
	})
	defer wg.Wait()
	defer close(stop)
	payload := make([]byte, 100)
	got := r.Stats().Received
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	b.ResetTimer()
	if err := send(a, g, payload, b.N); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "datagrams/s")
	b.ReportMetric(float64(r.Stats().Received-got)/float64(b.N), "received/op")
}

// BenchmarkUDPSend sends one 100-byte datagram per Send call over
// loopback multicast to a joined group.
func BenchmarkUDPSend(b *testing.B) {
	benchUDP(b, func(u *UDP, g Group, payload []byte, n int) error {
		for range n {
			if err := u.Send(g, payload); err != nil {
				return err
			}
		}
		return nil
	})
}

// BenchmarkUDPSendBatch sends the same datagrams as BenchmarkUDPSend, 32
// per SendBatch call; one op is still one datagram.
func BenchmarkUDPSendBatch(b *testing.B) {
	benchUDP(b, func(u *UDP, g Group, payload []byte, n int) error {
		pkts := make([]Packet, 32)
		for i := range pkts {
			pkts[i] = Packet{Group: g, Data: payload}
		}
		for n > 0 {
			sent, err := u.SendBatch(pkts[:min(n, len(pkts))])
			if err != nil {
				return err
			}
			n -= sent
		}
		return nil
	})
}
