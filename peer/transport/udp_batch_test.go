package transport

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/ipv4"
)

// collectUDP waits up to 2s for want datagrams, then gathers any extra
// ones that arrive within 50ms: a loaded host may stall the reader for a
// while, but what is expected arrives in the end.
func collectUDP(u *UDP, want int) []Packet { return collectRecv(u.Recv(), want) }

// collectRecv is collectUDP for any transport's Recv channel.
func collectRecv(recv <-chan Packet, want int) []Packet {
	var ps []Packet
	deadline := time.After(2 * time.Second)
	for len(ps) < want {
		select {
		case p := <-recv:
			ps = append(ps, p)
		case <-deadline:
			return ps
		}
	}
	return append(ps, drainRecv(recv, 50*time.Millisecond)...)
}

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
	want := 0
	for i := range count {
		if i%3 != 2 {
			want++
		}
	}
	got := collectUDP(b, want)
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
		{Group: 4}, // empty payload
		{Group: 4, Data: make([]byte, max)},
		{Group: 4, Data: make([]byte, max+1)},
		{Group: 4, Data: []byte("never")},
	}
	sent, err := a.SendBatch(pkts)
	if sent != 3 || err == nil || !strings.Contains(err.Error(), "exceeds") {
		t.Fatalf("SendBatch = %d, %v; want 3 and a length error", sent, err)
	}
	got := collectUDP(b, 3)
	if len(got) != 3 || string(got[0].Data) != "first" || len(got[1].Data) != 0 || len(got[2].Data) != max {
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

func TestUDPSendAllocs(t *testing.T) {
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
	allocs = testing.AllocsPerRun(50, func() {
		if err := a.Send(100, pkts[0].Data); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Send: %v allocations per call, want 0", allocs)
	}
}

// addrCount returns the number of distinct addresses of groups gs.
func addrCount(u *UDP, gs []Group) int {
	seen := map[netip.AddrPort]bool{}
	for _, g := range gs {
		seen[u.GroupAddr(g)] = true
	}
	return len(seen)
}

func TestUDPManyGroups(t *testing.T) {
	before := runtime.NumGoroutine()
	a, b := newUDPPair(t)
	const count = 100
	var gs []Group
	for i := range count {
		gs = append(gs, Group(1000+i))
	}
	mustJoin(t, b, gs...)
	addrs := addrCount(b, gs)
	per := b.Config().GroupsPerSocket
	if !sharedSockets {
		per = 1
	}
	if got, want := b.numSockets(), (addrs+per-1)/per; got != want {
		t.Errorf("%d sockets for %d addresses, want %d", got, addrs, want)
	}
	foreign := b.Stats().Foreign
	var pkts []Packet
	for _, g := range gs {
		pkts = append(pkts, Packet{Group: g, Data: seqPacket(int(g))})
	}
	if _, err := a.SendBatch(pkts[:count/2]); err != nil {
		t.Fatal(err)
	}
	for _, p := range pkts[count/2:] {
		if err := a.Send(p.Group, p.Data); err != nil {
			t.Fatal(err)
		}
	}
	got := collectUDP(b, count)
	seen := map[Group]int{}
	for _, p := range got {
		if packetSeq(p) != int(p.Group) {
			t.Errorf("datagram of group %d delivered on group %d", packetSeq(p), p.Group)
		}
		seen[p.Group]++
	}
	for _, g := range gs {
		if seen[g] != 1 {
			t.Errorf("group %d: received %d times, want once", g, seen[g])
		}
	}
	// Each socket receives only the groups it joined: no datagram reached
	// a socket of the wrong group.
	if st := b.Stats(); st.Foreign != foreign {
		t.Errorf("Foreign grew by %d, want 0", st.Foreign-foreign)
	}

	// Leaving a socket's groups frees room that later joins reuse.
	for _, g := range gs[:10] {
		if err := b.Leave(g); err != nil {
			t.Fatal(err)
		}
	}
	n := b.numSockets()
	more := []Group{5000, 5001, 5002, 5003, 5004}
	mustJoin(t, b, more...)
	if sharedSockets && b.numSockets() != n {
		t.Errorf("%d sockets after rejoining, want %d", b.numSockets(), n)
	}
	a.Send(more[0], []byte("more"))
	a.Send(gs[0], []byte("left"))
	if got := collectUDP(b, 1); len(got) != 1 || got[0].Group != more[0] {
		t.Errorf("after leave and join got %v", got)
	}

	// Leaving every group closes every socket and stops its reader.
	for _, g := range append(gs[10:], more...) {
		if err := b.Leave(g); err != nil {
			t.Fatal(err)
		}
	}
	if n := b.numSockets(); n != 0 {
		t.Errorf("%d sockets after leaving every group", n)
	}
	a.Close()
	b.Close()
	settleGoroutines(t, before)
}

// TestUDPJoinLeaveConcurrent races joins, leaves, sends and reads, for
// the race detector.
func TestUDPJoinLeaveConcurrent(t *testing.T) {
	a, b := newUDPPair(t)
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() {
			for i := range 60 {
				g := Group(w*100 + i%25)
				b.Join(g)
				a.Send(g, seqPacket(i))
				if i%2 == 1 {
					b.Leave(g)
				}
			}
		})
	}
	wg.Wait()
	drainUDP(b, 20*time.Millisecond)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	for range b.Recv() {
	}
}

func TestUDPReceivedDataIsOwned(t *testing.T) {
	a, b := newUDPPair(t)
	mustJoin(t, b, 8)
	var pkts []Packet
	for i := range 20 {
		pkts = append(pkts, Packet{Group: 8, Data: seqPacket(i)})
	}
	if _, err := a.SendBatch(pkts); err != nil {
		t.Fatal(err)
	}
	got := collectUDP(b, len(pkts))
	if len(got) != len(pkts) {
		t.Fatalf("received %d of %d", len(got), len(pkts))
	}
	for i := range got {
		if cap(got[i].Data) != len(got[i].Data) {
			t.Fatalf("packet %d: cap %d > len %d", i, cap(got[i].Data), len(got[i].Data))
		}
		got[i].Data = append(got[i].Data, 0xff, 0xff) // must not spill into a neighbour
	}
	for i, p := range got {
		if packetSeq(p) != i {
			t.Fatalf("packet %d reads %d", i, packetSeq(p))
		}
	}
}

// dispatchUDP returns a UDP transport whose dispatch can be fed by hand,
// with group 1 joined on the returned socket and group 2 on another.
func dispatchUDP(t *testing.T) (*UDP, *udpSocket) {
	t.Helper()
	u, err := NewUDP(UDPConfig{Federation: "dispatch", Port: freePort(t), MaxPacket: 64, Queue: 16})
	if err != nil {
		t.Skipf("multicast on lo unavailable: %v", err)
	}
	t.Cleanup(func() { u.Close() })
	s := &udpSocket{}
	r := map[Group]*udpSocket{1: s, 2: {}}
	u.routes.Store(&r)
	return u, s
}

// TestUDPDispatchBadInput feeds dispatch malformed datagrams directly.
func TestUDPDispatchBadInput(t *testing.T) {
	u, s := dispatchUDP(t)
	hdr := func(tag uint32, g Group, payload string) []byte {
		b := make([]byte, udpHeaderLen, udpHeaderLen+len(payload))
		binary.BigEndian.PutUint32(b, tag)
		binary.BigEndian.PutUint32(b[4:], uint32(g))
		return append(b, payload...)
	}
	datagrams := [][]byte{
		nil,                                    // empty
		{1, 2, 3},                              // shorter than the header
		hdr(u.tag^1, 1, "other fed"),           // another federation
		hdr(u.tag, 3, "not joined"),            // group not joined
		hdr(u.tag, 2, "other socket"),          // joined on another socket
		hdr(u.tag, 1, strings.Repeat("x", 60)), // longer than MaxPacket
		hdr(u.tag, 1, ""),                      // empty payload: fine
		hdr(u.tag, 1, "ok"),
	}
	ms := make([]ipv4.Message, len(datagrams))
	for i, d := range datagrams {
		buf := make([]byte, 65)
		ms[i].Buffers = [][]byte{buf}
		ms[i].N = copy(buf, d)
	}
	u.dispatch(s, ms)
	st := u.Stats()
	if st.Foreign != 5 || st.TooLong != 1 || st.Received != 2 {
		t.Errorf("stats %+v, want Foreign 5, TooLong 1, Received 2", st)
	}
	if p := <-u.Recv(); p.Group != 1 || len(p.Data) != 0 {
		t.Errorf("got %v", p)
	}
	if p := <-u.Recv(); p.Group != 1 || string(p.Data) != "ok" {
		t.Errorf("got %v", p)
	}
}

// TestUDPDispatchDirect checks the Direct hand-over: the taker is offered
// the datagrams of one read together, in order; what it does not take
// goes to Recv in order, and a taker's out-of-range answer is clamped.
func TestUDPDispatchDirect(t *testing.T) {
	u, s := dispatchUDP(t)
	read := func(payloads ...string) {
		ms := make([]ipv4.Message, len(payloads))
		for i, p := range payloads {
			buf := make([]byte, 65)
			binary.BigEndian.PutUint32(buf, u.tag)
			binary.BigEndian.PutUint32(buf[4:], 1)
			ms[i].Buffers = [][]byte{buf}
			ms[i].N = udpHeaderLen + copy(buf[udpHeaderLen:], p)
		}
		u.dispatch(s, ms)
	}
	var offered [][]string
	answer := 0
	u.SetDirect(func(ps []Packet) int {
		var got []string
		for _, p := range ps {
			got = append(got, string(p.Data))
		}
		offered = append(offered, got)
		return answer
	})
	answer = 1
	read("a", "b", "c")
	answer = 99 // more than offered: all taken
	read("d", "e")
	answer = -1 // none
	read("f")
	want := [][]string{{"a", "b", "c"}, {"d", "e"}, {"f"}}
	if fmt.Sprint(offered) != fmt.Sprint(want) {
		t.Errorf("offered %v, want %v", offered, want)
	}
	for _, w := range []string{"b", "c", "f"} {
		select {
		case p := <-u.Recv():
			if string(p.Data) != w {
				t.Errorf("Recv got %q, want %q", p.Data, w)
			}
		default:
			t.Fatalf("Recv empty, want %q", w)
		}
	}
	select {
	case p := <-u.Recv():
		t.Errorf("Recv got %q, want nothing more", p.Data)
	default:
	}
	if st := u.Stats(); st.Received != 6 {
		t.Errorf("Received %d, want 6", st.Received)
	}
}
