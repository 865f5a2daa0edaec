package transport

import (
	"runtime"
	"testing"
	"time"
)

// TestUDPPollDelivers: with PollFor set, datagrams that arrive while the
// reader polls, and after it parked again, all arrive, in order, and
// Close ends the readers.
func TestUDPPollDelivers(t *testing.T) {
	before := runtime.NumGoroutine()
	const poll = 2 * time.Millisecond
	a, b := newUDPPairWith(t, func(c *UDPConfig) { c.PollFor = poll })
	mustJoin(t, b, 1)
	checkPoll(t, b, poll)
	next := 0
	expect := func(n int) {
		t.Helper()
		got := collectUDP(b, n)
		if len(got) != n {
			t.Fatalf("received %d, want %d (stats %+v)", len(got), n, b.Stats())
		}
		for _, p := range got {
			if s := packetSeq(p); s != next {
				t.Fatalf("datagram %d, want %d", s, next)
			}
			next++
		}
	}
	// One at a time: each arrives while the reader polls (it read the
	// one before a moment ago) or, after a pause longer than the poll
	// time, wakes it from the poller.
	for i := range 20 {
		if err := a.Send(1, seqPacket(next)); err != nil {
			t.Fatal(err)
		}
		expect(1)
		if i%4 == 3 {
			time.Sleep(2 * poll)
		}
	}
	// A burst: several reads in a row.
	var pkts []Packet
	for i := range 3 * readBatch {
		pkts = append(pkts, Packet{Group: 1, Data: seqPacket(next + i)})
	}
	if n, err := a.SendBatch(pkts); n != len(pkts) || err != nil {
		t.Fatalf("SendBatch = %d, %v", n, err)
	}
	expect(len(pkts))
	a.Close()
	b.Close()
	for range b.Recv() {
	}
	settleGoroutines(t, before)
}
