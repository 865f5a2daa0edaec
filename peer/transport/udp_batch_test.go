package transport

import (
	"strings"
	"testing"
	"time"
)

func TestUDPSendBatch(t *testing.T) {
	a, b := newUDPPair(t)
	mustJoin(t, b, 1, 2)
	// More than writeBatch datagrams, on two joined groups and one not
	// joined, so that the batch takes several WriteBatch calls.
	const count = writeBatch*2 + 10
	var pkts []Packet
	for i := range count {
		pkts = append(pkts, Packet{Group: Group(1 + i%3), Data: seqPacket(i)})
	}
	before := a.Stats().Sent
	sent, err := a.SendBatch(pkts)
	if sent != count || err != nil {
		t.Fatalf("SendBatch = %d, %v", sent, err)
	}
	got := drainUDP(b, 100*time.Millisecond)
	want := 0
	for i := range count {
		if i%3 != 2 {
			want++
		}
	}
	if len(got) != want {
		t.Fatalf("received %d, want %d (stats %+v)", len(got), want, b.Stats())
	}
	last := map[Group]int{1: -1, 2: -1}
	for _, p := range got {
		s := packetSeq(p)
		if Group(1+s%3) != p.Group {
			t.Fatalf("datagram %d on group %d", s, p.Group)
		}
		if s <= last[p.Group] {
			t.Fatalf("group %d: %d after %d", p.Group, s, last[p.Group])
		}
		last[p.Group] = s
	}
	if st := a.Stats(); st.Sent-before != count {
		t.Errorf("Sent grew by %d, want %d", st.Sent-before, count)
	}
	for i := range a.wmsgs {
		if a.wmsgs[i].Buffers[1] != nil {
			t.Fatal("SendBatch kept a payload")
		}
	}
}

func TestUDPSendBatchTooLong(t *testing.T) {
	a, b := newUDPPair(t)
	mustJoin(t, b, 4)
	max := a.Config().MaxPacket - udpHeaderLen
	pkts := []Packet{
		{Group: 4, Data: []byte("first")},
		{Group: 4, Data: make([]byte, max)},
		{Group: 4, Data: make([]byte, max+1)},
		{Group: 4, Data: []byte("never")},
	}
	sent, err := a.SendBatch(pkts)
	if sent != 2 || err == nil || !strings.Contains(err.Error(), "exceeds") {
		t.Fatalf("SendBatch = %d, %v; want 2 and a length error", sent, err)
	}
	got := drainUDP(b, 100*time.Millisecond)
	if len(got) != 2 || string(got[0].Data) != "first" || len(got[1].Data) != max {
		t.Errorf("received %d datagrams", len(got))
	}
	if sent, err := a.SendBatch(nil); sent != 0 || err != nil {
		t.Errorf("empty SendBatch = %d, %v", sent, err)
	}
	a.Close()
	if sent, err := a.SendBatch(pkts[:1]); sent != 0 || err != ErrClosed {
		t.Errorf("SendBatch after Close = %d, %v", sent, err)
	}
}

func TestUDPSendBatchAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items")
	}
	a, _ := newUDPPair(t)
	pkts := make([]Packet, 32)
	for i := range pkts {
		pkts[i] = Packet{Group: Group(100 + i%4), Data: make([]byte, 100)}
	}
	allocs := testing.AllocsPerRun(50, func() {
		if _, err := a.SendBatch(pkts); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("SendBatch: %v allocations per call, want 0", allocs)
	}
}
