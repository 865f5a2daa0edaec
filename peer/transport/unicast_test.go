package transport

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/netip"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

// wire connects the directories of ds as a control plane would: each
// one's announcements are handed to every other one, under its name.
func wire(names []string, ds []Directory) {
	var mu sync.Mutex // announcements arrive in order, as from one queue
	for i, d := range ds {
		self := names[i]
		d.SetAnnounce(func(b []byte) {
			mu.Lock()
			defer mu.Unlock()
			for j, o := range ds {
				if j != i {
					o.Update(self, b)
				}
			}
		})
	}
}

func newUnicasts(t *testing.T, n int) []*Unicast {
	t.Helper()
	fed := fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano())
	var us []*Unicast
	var names []string
	var ds []Directory
	for i := range n {
		u, err := NewUnicast(UnicastConfig{Federation: fed, ReadBuffer: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { u.Close() })
		us = append(us, u)
		names = append(names, fmt.Sprint("n", i))
		ds = append(ds, u)
	}
	wire(names, ds)
	return us
}

func collectUnicast(u *Unicast, want int) []Packet { return collectRecv(u.Recv(), want) }

func TestAnnouncementRoundTrip(t *testing.T) {
	for _, a := range []Announcement{
		{Addr: "10.0.0.1:47470"},
		{Addr: "x", Groups: []Group{0}},
		{Addr: "127.0.0.1:1", Groups: []Group{1, 2, 3, 0x03000007, 0xffffffff}},
	} {
		got, err := DecodeAnnouncement(a.Encode())
		if err != nil || got.Addr != a.Addr || !slices.Equal(got.Groups, a.Groups) && len(a.Groups) > 0 {
			t.Errorf("%+v: decoded %+v, %v", a, got, err)
		}
	}
	// Unsorted groups with repeats are sorted and compacted.
	got, err := DecodeAnnouncement(Announcement{Addr: "a", Groups: []Group{5, 1, 5, 3}}.Encode())
	if err != nil || !slices.Equal(got.Groups, []Group{1, 3, 5}) {
		t.Errorf("decoded %+v, %v; want groups 1 3 5", got, err)
	}
}

func TestAnnouncementMalformed(t *testing.T) {
	good := Announcement{Addr: "127.0.0.1:5", Groups: []Group{1, 9}}.Encode()
	cases := map[string][]byte{
		"empty":          nil,
		"version":        {2, 1, 'a', 0},
		"no address":     {1, 0, 0},
		"address length": {1, 200, 'a'},
		"count too big":  {1, 1, 'a', 50, 1},
		"repeat":         {1, 1, 'a', 2, 3, 0},
		"out of range":   {1, 1, 'a', 2, 0xff, 0xff, 0xff, 0xff, 0x0f, 0xff, 0xff, 0xff, 0xff, 0x0f},
		"trailing":       append(slices.Clone(good), 0),
		"truncated":      good[:len(good)-1],
		"bad varint":     {1, 1, 'a', 1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
	}
	for name, b := range cases {
		if _, err := DecodeAnnouncement(b); !errors.Is(err, ErrBadAnnouncement) {
			t.Errorf("%s: err = %v, want ErrBadAnnouncement", name, err)
		}
	}
}

func FuzzDecodeAnnouncement(f *testing.F) {
	f.Add(Announcement{Addr: "127.0.0.1:5", Groups: []Group{1, 9}}.Encode())
	f.Add([]byte{1, 1, 'a', 50, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := DecodeAnnouncement(b)
		if err != nil {
			return
		}
		if !slices.IsSorted(a.Groups) || len(slices.Compact(slices.Clone(a.Groups))) != len(a.Groups) {
			t.Fatalf("decoded groups not sorted and unique: %v", a.Groups)
		}
		again, err := DecodeAnnouncement(a.Encode())
		if err != nil || again.Addr != a.Addr || !slices.Equal(again.Groups, a.Groups) {
			t.Fatalf("re-encoding changed %+v to %+v, %v", a, again, err)
		}
	})
}

// TestUnicastJoinLeaveLost: a member that joins starts receiving, one
// that leaves or is removed (lost) stops being sent to, and a node that
// never joined gets nothing.
func TestUnicastJoinLeaveLost(t *testing.T) {
	us := newUnicasts(t, 3)
	a, b, c := us[0], us[1], us[2]
	mustJoin(t, b, 7)
	mustJoin(t, c, 7, 8)
	if got := a.Members(7); len(got) != 2 {
		t.Fatalf("a's members of 7: %v, want b and c", got)
	}
	if got := b.Members(7); len(got) != 1 || got[0] != c.Addr() {
		t.Fatalf("b's members of 7: %v, want c only (never itself)", got)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(a.Send(7, seqPacket(1)))
	must(a.Send(8, seqPacket(2)))
	if got := collectUnicast(b, 1); len(got) != 1 || got[0].Group != 7 || packetSeq(got[0]) != 1 {
		t.Fatalf("b got %v, want datagram 1 on 7", got)
	}
	if got := collectUnicast(c, 2); len(got) != 2 {
		t.Fatalf("c got %d datagrams, want 2", len(got))
	}
	// b leaves 7: a stops sending to it.
	must(b.Leave(7))
	if got := a.Members(7); len(got) != 1 || got[0] != c.Addr() {
		t.Fatalf("after b left, a's members of 7: %v, want c", got)
	}
	// c is lost: the control plane says so.
	a.Remove("n2")
	if got := a.Members(7); len(got) != 0 {
		t.Fatalf("after c was lost, a's members of 7: %v, want none", got)
	}
	sentBefore := a.Stats().Sent
	must(a.Send(7, seqPacket(3)))
	if d := a.Stats().Sent - sentBefore; d != 0 {
		t.Errorf("a sent %d datagrams to a group with no member left", d)
	}
	if got := collectUnicast(b, 0); len(got) != 0 {
		t.Errorf("b got %v after leaving", got)
	}
	// A datagram for a group b left, sent by a node whose directory is
	// late, is dropped by b and counted.
	foreign := b.Stats().Foreign
	must(c.Send(7, seqPacket(4))) // c's directory: b left 7, so nothing goes
	c.Update("late", Announcement{Addr: b.Addr().String(), Groups: []Group{7}}.Encode())
	must(c.Send(7, seqPacket(5)))
	deadline := time.Now().Add(2 * time.Second)
	for b.Stats().Foreign == foreign && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if b.Stats().Foreign == foreign {
		t.Error("a datagram for a group b left was not counted as dropped")
	}
	if got := b.Members(7); slices.Contains(got, b.Addr()) {
		t.Error("b lists itself as a member")
	}
}

func TestUnicastSendBatch(t *testing.T) {
	us := newUnicasts(t, 3)
	a, b, c := us[0], us[1], us[2]
	mustJoin(t, b, 1, 2)
	mustJoin(t, c, 1)
	// More copies than one sendmmsg call takes.
	const count = writeBatch + 30
	var pkts []Packet
	for i := range count {
		pkts = append(pkts, Packet{Group: Group(1 + i%3), Data: seqPacket(i)})
	}
	sent, err := a.SendBatch(pkts)
	if sent != count || err != nil {
		t.Fatalf("SendBatch = %d, %v", sent, err)
	}
	wantB, wantC := 0, 0
	for i := range count {
		switch 1 + i%3 {
		case 1:
			wantB++
			wantC++
		case 2:
			wantB++
		}
	}
	if st := a.Stats(); st.Sent != uint64(wantB+wantC) {
		t.Errorf("Sent %d datagrams, want %d (one per member)", st.Sent, wantB+wantC)
	}
	for _, r := range []struct {
		u    *Unicast
		want int
	}{{b, wantB}, {c, wantC}} {
		got := collectUnicast(r.u, r.want)
		if len(got) != r.want {
			t.Fatalf("received %d, want %d", len(got), r.want)
		}
		last := -1
		for _, p := range got {
			if s := packetSeq(p); s <= last || Group(1+s%3) != p.Group {
				t.Fatalf("datagram %d on group %d after %d", s, p.Group, last)
			} else {
				last = s
			}
		}
	}
	for i := range a.wmsgs {
		if a.wmsgs[i].Buffers[1] != nil {
			t.Fatal("SendBatch kept a payload")
		}
	}
	// Too long: the packets before it went, it and the rest did not.
	long := make([]byte, a.cfg.MaxPacket)
	sent, err = a.SendBatch([]Packet{{Group: 1, Data: seqPacket(1)}, {Group: 1, Data: long}, {Group: 1, Data: seqPacket(2)}})
	if sent != 1 || err == nil {
		t.Errorf("SendBatch with a long payload = %d, %v; want 1 and an error", sent, err)
	}
}

// TestUnicastBadAnnouncements: malformed announcements and addresses are
// dropped and counted, the node's earlier one stays, nothing panics.
func TestUnicastBadAnnouncements(t *testing.T) {
	u := newUnicasts(t, 1)[0]
	good := Announcement{Addr: "127.0.0.1:9", Groups: []Group{4}}.Encode()
	if err := u.Update("x", good); err != nil {
		t.Fatal(err)
	}
	bad := [][]byte{
		nil, {0xff}, good[:3],
		Announcement{Addr: "0.0.0.0:9", Groups: []Group{4}}.Encode(),
		Announcement{Addr: "239.1.2.3:9", Groups: []Group{4}}.Encode(),
		Announcement{Addr: "255.255.255.255:9", Groups: []Group{4}}.Encode(),
		Announcement{Addr: "127.0.0.1:0", Groups: []Group{4}}.Encode(),
		Announcement{Addr: "[::1]:9", Groups: []Group{4}}.Encode(),
		Announcement{Addr: "host-name:9", Groups: []Group{4}}.Encode(),
	}
	for _, b := range bad {
		if err := u.Update("x", b); !errors.Is(err, ErrBadAnnouncement) {
			t.Errorf("Update(%x) = %v, want ErrBadAnnouncement", b, err)
		}
	}
	st := u.DirectoryStats()
	if st.Malformed != uint64(len(bad)) || st.Updates != 1 || st.Members != 1 {
		t.Errorf("stats %+v, want %d malformed, 1 update, 1 member", st, len(bad))
	}
	if got := u.Members(4); len(got) != 1 || got[0].String() != "127.0.0.1:9" {
		t.Errorf("members of 4 after bad updates: %v, want the earlier announcement's", got)
	}
	u.Remove("nobody") // unknown: nothing happens
	if st := u.DirectoryStats(); st.Removes != 0 {
		t.Errorf("removing an unknown node counted: %+v", st)
	}
}

func TestUnicastConfig(t *testing.T) {
	for _, cfg := range []UnicastConfig{
		{},
		{Federation: "f", Bind: "nonsense"},
		{Federation: "f", Bind: "0.0.0.0:0"}, // no advertised address
		{Federation: "f", Advertise: "host:1"},
		{Federation: "f", MaxPacket: 4},
	} {
		if u, err := NewUnicast(cfg); err == nil {
			u.Close()
			t.Errorf("NewUnicast(%+v) succeeded", cfg)
		}
	}
	u, err := NewUnicast(UnicastConfig{Federation: "f", Bind: "0.0.0.0:0", Advertise: "192.0.2.7:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	if a := u.Addr(); a.Addr().String() != "192.0.2.7" || a.Port() != u.LocalAddr().Port() {
		t.Errorf("advertised %v, want 192.0.2.7 and the bound port %d", a, u.LocalAddr().Port())
	}
	var got []byte
	u.SetAnnounce(func(b []byte) { got = b })
	a, err := DecodeAnnouncement(got)
	if err != nil || a.Addr != u.Addr().String() || len(a.Groups) != 0 {
		t.Errorf("first announcement %+v, %v", a, err)
	}
	mustJoin(t, u, 3, 3)
	if a, _ := DecodeAnnouncement(got); !slices.Equal(a.Groups, []Group{3}) {
		t.Errorf("after Join, announced %+v", a)
	}
}

func TestUnicastNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	u, err := NewUnicast(UnicastConfig{Federation: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	mustJoin(t, u, 1)
	u.Close()
	u.Close()
	checkClosed(t, u)
	for range u.Recv() {
	}
	settleGoroutines(t, before)
}

// TestMemUnicast: the in-memory unicast sends by its directory, not by
// who joined the group on the network.
func TestMemUnicast(t *testing.T) {
	n := NewNetwork(NetworkConfig{Seed: 3})
	a, b, c := NewMemUnicast(n.Endpoint("a")), NewMemUnicast(n.Endpoint("b")), NewMemUnicast(n.Endpoint("c"))
	defer a.Close()
	defer b.Close()
	defer c.Close()
	mustJoin(t, b, 5)
	mustJoin(t, c, 5)
	// Nobody announced yet: a's sends reach nobody.
	if err := a.Send(5, seqPacket(1)); err != nil {
		t.Fatal(err)
	}
	if len(b.Recv()) != 0 || len(c.Recv()) != 0 {
		t.Fatal("a datagram reached a member a's directory does not know")
	}
	wire([]string{"a", "b", "c"}, []Directory{a, b, c})
	if err := a.Send(5, seqPacket(2)); err != nil {
		t.Fatal(err)
	}
	for _, r := range []*MemUnicast{b, c} {
		if p := <-r.Recv(); packetSeq(p) != 2 {
			t.Fatalf("got datagram %d, want 2", packetSeq(p))
		}
	}
	a.Remove("c")
	b.Leave(5)
	if err := a.Send(5, seqPacket(3)); err != nil {
		t.Fatal(err)
	}
	if len(b.Recv()) != 0 || len(c.Recv()) != 0 {
		t.Fatal("a datagram reached a member that left or was lost")
	}
	if st := a.DirectoryStats(); st.Members != 1 || st.Removes != 1 {
		t.Errorf("directory stats %+v", st)
	}
	if err := a.Update("d", []byte("junk")); !errors.Is(err, ErrBadAnnouncement) {
		t.Errorf("junk announcement: %v", err)
	}
}

// TestUnicastRefusedCopySkipped: a copy the kernel refuses for its
// destination is counted and skipped, and the other members still get
// theirs. The refused destination is port 0 of loopback, which the
// kernel will not send to (EINVAL); announcements cannot name it, so the
// test puts it in the route table itself.
func TestUnicastRefusedCopySkipped(t *testing.T) {
	us := newUnicasts(t, 2)
	a, b := us[0], us[1]
	mustJoin(t, b, 1)
	bad := netip.MustParseAddrPort("127.0.0.1:0")
	r := map[Group][]netip.AddrPort{1: {bad, b.Addr(), bad}}
	a.dir.routes.Store(&r)
	var pkts []Packet
	for i := range 5 {
		pkts = append(pkts, Packet{Group: 1, Data: seqPacket(i)})
	}
	sent, err := a.SendBatch(pkts)
	if sent != len(pkts) || err != nil {
		t.Fatalf("SendBatch = %d, %v; want all packets tried", sent, err)
	}
	if got := collectUnicast(b, len(pkts)); len(got) != len(pkts) {
		t.Fatalf("b got %d datagrams, want %d", len(got), len(pkts))
	}
	if st := a.Stats(); st.SendErrors != 2*uint64(len(pkts)) || st.Sent != uint64(len(pkts)) {
		t.Errorf("stats %+v: want %d send errors and %d sent", st, 2*len(pkts), len(pkts))
	}
}

// TestDirectoryIncremental: after any sequence of updates and removes,
// the route table the directory keeps up to date piece by piece is the
// one computed from scratch: for each group, the addresses of the nodes
// announcing it, by node name, this node's own left out, each once.
func TestDirectoryIncremental(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	d := newDirectory("self", parseName, func(a string) bool { return a == "self" })
	type ann struct {
		addr   string
		groups []Group
	}
	nodes := map[string]ann{}
	for step := range 3000 {
		name := fmt.Sprint("n", rng.IntN(12))
		if rng.IntN(5) == 0 {
			d.Remove(name)
			delete(nodes, name)
		} else {
			a := ann{addr: []string{"a", "b", "c", "self", name}[rng.IntN(5)]}
			for g := range Group(10) {
				if rng.IntN(3) == 0 {
					a.groups = append(a.groups, g)
				}
			}
			if err := d.Update(name, Announcement{Addr: a.addr, Groups: a.groups}.Encode()); err != nil {
				t.Fatal(err)
			}
			nodes[name] = a
		}
		want := map[Group][]string{}
		for _, name := range slices.Sorted(maps.Keys(nodes)) {
			a := nodes[name]
			for _, g := range a.groups {
				if a.addr != "self" && !slices.Contains(want[g], a.addr) {
					want[g] = append(want[g], a.addr)
				}
			}
		}
		got := *d.routes.Load()
		if len(got) != len(want) {
			t.Fatalf("step %d: %d groups routed, want %d: %v, want %v", step, len(got), len(want), got, want)
		}
		for g, w := range want {
			if !slices.Equal(got[g], w) {
				t.Fatalf("step %d: group %d goes to %v, want %v", step, g, got[g], w)
			}
		}
	}
}
