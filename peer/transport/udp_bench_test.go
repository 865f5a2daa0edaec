package transport

import (
	"sync"
	"testing"
)

// benchUDP sets up a sender and a receiver joined to one group, with a
// goroutine draining the receiver, and runs send, which sends n datagrams
// and returns how many failed. It reports datagrams sent per second, the
// share the receiver got and the share that failed (on a loaded host a
// send may time out; that is best effort, not a benchmark failure).
func benchUDP(b *testing.B, send func(u *UDP, g Group, payload []byte, n int) (failed int)) {
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
	failed := send(a, g, payload, b.N)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "datagrams/s")
	b.ReportMetric(float64(r.Stats().Received-got)/float64(b.N), "received/op")
	b.ReportMetric(float64(failed)/float64(b.N), "failed/op")
}

// BenchmarkUDPSend sends one 100-byte datagram per Send call over
// loopback multicast to a joined group.
func BenchmarkUDPSend(b *testing.B) {
	benchUDP(b, func(u *UDP, g Group, payload []byte, n int) (failed int) {
		for range n {
			if err := u.Send(g, payload); err != nil {
				failed++
			}
		}
		return failed
	})
}

// BenchmarkUDPSendBatch sends the same datagrams as BenchmarkUDPSend, 32
// per SendBatch call; one op is still one datagram.
func BenchmarkUDPSendBatch(b *testing.B) {
	benchUDP(b, func(u *UDP, g Group, payload []byte, n int) (failed int) {
		pkts := make([]Packet, 32)
		for i := range pkts {
			pkts[i] = Packet{Group: g, Data: payload}
		}
		for n > 0 {
			sent, err := u.SendBatch(pkts[:min(n, len(pkts))])
			n -= sent
			if err != nil {
				failed++
				n-- // skip the datagram that failed
			}
		}
		return failed
	})
}
