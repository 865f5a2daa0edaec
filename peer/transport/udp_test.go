package transport

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"net"
	"net/netip"
	"runtime"
	"testing"
	"time"
)

// freePort returns a UDP port that nothing on 127.0.0.1 uses right now.
func freePort(t testing.TB) int {
	t.Helper()
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// newUDPPair opens two UDP transports of a fresh federation on lo, or
// skips the test when multicast over lo does not work here.
func newUDPPair(t testing.TB) (a, b *UDP) {
	t.Helper()
	return newUDPPairWith(t, nil)
}

// newUDPPairWith is newUDPPair with a configuration tune may change.
func newUDPPairWith(t testing.TB, tune func(*UDPConfig)) (a, b *UDP) {
	t.Helper()
	cfg := UDPConfig{
		Federation: fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano()),
		Port:       freePort(t),
		ReadBuffer: 1 << 20,
	}
	if tune != nil {
		tune(&cfg)
	}
	var err error
	if a, err = NewUDP(cfg); err != nil {
		t.Skipf("multicast on lo unavailable: %v", err)
	}
	t.Cleanup(func() { a.Close() })
	if b, err = NewUDP(cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	// Probe: can b hear a on lo at all?
	const probe = Group(0xfffffff0)
	if err := b.Join(probe); err != nil {
		t.Skipf("multicast on lo unavailable: join: %v", err)
	}
	for range 20 {
		if err := a.Send(probe, []byte("probe")); err != nil {
			t.Skipf("multicast on lo unavailable: send: %v", err)
		}
		select {
		case <-b.Recv():
			if err := b.Leave(probe); err != nil {
				t.Fatal(err)
			}
			drainUDP(b, 10*time.Millisecond)
			return a, b
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Skip("multicast on lo unavailable: probe datagram never arrived")
	return nil, nil
}

// recvUDP waits up to a second for a datagram.
func recvUDP(t *testing.T, u *UDP) Packet {
	t.Helper()
	select {
	case p := <-u.Recv():
		return p
	case <-time.After(time.Second):
		t.Fatal("no datagram within 1s")
		return Packet{}
	}
}

// drainUDP discards datagrams until none arrives for quiet.
func drainUDP(u *UDP, quiet time.Duration) []Packet { return drainRecv(u.Recv(), quiet) }

// drainRecv gathers what recv delivers until it is quiet for quiet.
func drainRecv(recv <-chan Packet, quiet time.Duration) []Packet {
	var ps []Packet
	for {
		select {
		case p := <-recv:
			ps = append(ps, p)
		case <-time.After(quiet):
			return ps
		}
	}
}

func TestUDPExchangeTwoGroups(t *testing.T) {
	a, b := newUDPPair(t)
	mustJoin(t, a, 1, 2)
	mustJoin(t, b, 1, 2)

	if err := a.Send(1, []byte("a1")); err != nil {
		t.Fatal(err)
	}
	if err := b.Send(2, []byte("b2")); err != nil {
		t.Fatal(err)
	}
	// Each side gets the other's datagram; its own comes back through
	// loopback and is dropped: in the kernel by the socket filter on
	// Linux, else by dispatch (counted in Own).
	for _, c := range []struct {
		u    *UDP
		want string
		g    Group
	}{{a, "b2", 2}, {b, "a1", 1}} {
		if p := recvUDP(t, c.u); string(p.Data) != c.want || p.Group != c.g {
			t.Errorf("got %q on %d, want %q on %d", p.Data, p.Group, c.want, c.g)
		}
		if extra := drainUDP(c.u, 50*time.Millisecond); len(extra) != 0 {
			t.Errorf("own datagram delivered: %q", extra[0].Data)
		}
	}
	for _, u := range []*UDP{a, b} {
		if st := u.Stats(); st.Own > st.Sent {
			t.Errorf("stats %+v", st)
		}
	}
}

func TestUDPLeaveStopsDelivery(t *testing.T) {
	a, b := newUDPPair(t)
	mustJoin(t, b, 5, 6)
	a.Send(5, []byte("before"))
	if p := recvUDP(t, b); string(p.Data) != "before" {
		t.Fatalf("got %q", p.Data)
	}
	if err := b.Leave(5); err != nil {
		t.Fatal(err)
	}
	a.Send(5, []byte("after"))
	a.Send(6, []byte("still joined"))
	got := drainUDP(b, 100*time.Millisecond)
	if len(got) != 1 || got[0].Group != 6 {
		t.Errorf("after Leave got %v", got)
	}
	if err := b.Leave(5); err != nil {
		t.Errorf("second Leave = %v", err)
	}
}

func TestUDPOtherFederationIgnored(t *testing.T) {
	a, b := newUDPPair(t)
	cfg := a.Config()
	cfg.Federation += "-other"
	o, err := NewUDP(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	mustJoin(t, b, 3)
	// Send the other federation's datagram to b's group address directly.
	dst := b.GroupAddr(3)
	o.sendMu.Lock()
	buf := append([]byte{0, 0, 0, 0, 0, 0, 0, 3}, "foreign"...)
	_, err = o.sendConn.WriteToUDPAddrPort(buf, dst)
	o.sendMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	a.Send(3, []byte("ours"))
	got := drainUDP(b, 100*time.Millisecond)
	if len(got) != 1 || string(got[0].Data) != "ours" {
		t.Errorf("got %v", got)
	}
	if st := b.Stats(); st.Foreign != 1 {
		t.Errorf("Foreign = %d, want 1", st.Foreign)
	}
}

func TestUDPDefaults(t *testing.T) {
	a, _ := newUDPPair(t)
	cfg := a.Config()
	if cfg.Interface != "lo" || cfg.TTL != 0 || !*cfg.Loopback || cfg.BaseAddr != DefaultBaseAddr {
		t.Errorf("defaults: %+v", cfg)
	}
	if a.ifi.Name != "lo" {
		t.Errorf("interface %q, want lo", a.ifi.Name)
	}
	if runtime.GOOS == "linux" {
		if addr, err := multicastIfAddr(a.sendConn); err != nil || addr != netip.MustParseAddr("127.0.0.1") {
			t.Errorf("IP_MULTICAST_IF = %v, %v; want 127.0.0.1", addr, err)
		}
	}
	if ttl, err := a.sendPC.MulticastTTL(); err != nil || ttl != 0 {
		t.Errorf("IP_MULTICAST_TTL = %d, %v; want 0", ttl, err)
	}
	if loop, err := a.sendPC.MulticastLoopback(); err != nil || !loop {
		t.Errorf("IP_MULTICAST_LOOP = %v, %v; want true", loop, err)
	}
	if la := a.sendConn.LocalAddr().(*net.UDPAddr); !la.IP.IsLoopback() {
		t.Errorf("sending socket bound to %v, want a loopback address", la)
	}
}

func TestUDPConfigErrors(t *testing.T) {
	off := false
	for _, cfg := range []UDPConfig{
		{},
		{Federation: "f", Port: -1},
		{Federation: "f", Port: 70000},
		{Federation: "f", TTL: 256},
		{Federation: "f", BaseAddr: netip.MustParsePrefix("224.0.0.0/4")},
		{Federation: "f", BaseAddr: netip.MustParsePrefix("10.0.0.0/8")},
		{Federation: "f", Interface: "no-such-interface-xyz", Loopback: &off},
		{Federation: "f", MaxPacket: 4},
		{Federation: "f", MaxPacket: 65508},
		{Federation: "f", ReadBuffer: -1},
		{Federation: "f", WriteBuffer: -1},
		{Federation: "f", GroupsPerSocket: -1},
	} {
		if u, err := NewUDP(cfg); err == nil {
			u.Close()
			t.Errorf("NewUDP(%+v) succeeded", cfg)
		}
	}
}

func TestGroupAddr(t *testing.T) {
	base := DefaultBaseAddr
	seen := map[netip.Addr]bool{}
	for g := range Group(1000) {
		a := GroupAddr("fed", base, g)
		if !base.Contains(a) || !adminScope.Contains(a) {
			t.Fatalf("group %d: %v outside %v", g, a, base)
		}
		if a != GroupAddr("fed", base, g) {
			t.Fatal("not deterministic")
		}
		seen[a] = true
	}
	if len(seen) < 990 {
		t.Errorf("only %d distinct addresses for 1000 groups", len(seen))
	}
	if GroupAddr("fed", base, 1) == GroupAddr("other", base, 1) {
		t.Error("federations share an address") // possible, but not for these names
	}
	host := netip.MustParsePrefix("239.1.2.3/32")
	if a := GroupAddr("fed", host, 42); a != host.Addr() {
		t.Errorf("/32 base: got %v", a)
	}
}

func TestUDPNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	a, b := newUDPPair(t)
	mustJoin(t, a, 1, 2, 3)
	mustJoin(t, b, 1, 2, 3)
	for i := range 100 {
		a.Send(Group(1+i%3), seqPacket(i))
	}
	b.Leave(2)
	a.Close()
	b.Close()
	checkClosed(t, a)
	for range b.Recv() {
	}
	settleGoroutines(t, before)
}

// checkClosed checks that the closed transport tr refuses Send and Join
// with ErrClosed.
func checkClosed(t *testing.T, tr Transport) {
	t.Helper()
	if err := tr.Send(1, nil); err != ErrClosed {
		t.Errorf("Send after Close = %v", err)
	}
	if err := tr.Join(1); err != ErrClosed {
		t.Errorf("Join after Close = %v", err)
	}
}

// TestUDPLoad sends a bounded burst on one group and checks that most of it
// arrives, in order, without blocking.
func TestUDPLoad(t *testing.T) {
	a, b := newUDPPair(t)
	mustJoin(t, b, 9)
	const count = 2000
	start := time.Now()
	done := make(chan []Packet)
	go func() {
		var got []Packet
		for len(got) < count {
			select {
			case p := <-b.Recv():
				got = append(got, p)
			case <-time.After(500 * time.Millisecond):
				done <- got
				return
			}
		}
		done <- got
	}()
	for i := range count {
		if err := a.Send(9, seqPacket(i)); err != nil {
			t.Fatal(err)
		}
		if i%50 == 49 {
			time.Sleep(time.Millisecond) // stay under the socket buffer
		}
	}
	got := <-done
	if len(got) < count*9/10 {
		t.Errorf("received %d of %d (stats %+v)", len(got), count, b.Stats())
	}
	for i := 1; i < len(got); i++ {
		if packetSeq(got[i]) <= packetSeq(got[i-1]) {
			t.Fatalf("reordered on lo: %d after %d", packetSeq(got[i]), packetSeq(got[i-1]))
		}
	}
	t.Logf("%d datagrams in %v", len(got), time.Since(start))
}

// TestGroupAddrFNV pins the address mapping to hash/fnv, so members built
// from other versions agree on addresses and tags.
func TestGroupAddrFNV(t *testing.T) {
	for _, fed := range []string{"", "fed", "demo-federation"} {
		h := fnv.New64a()
		h.Write([]byte(fed))
		if got := federationHash(fed); got != h.Sum64() {
			t.Errorf("federationHash(%q) = %x, want %x", fed, got, h.Sum64())
		}
		for _, g := range []Group{0, 1, 77, 1 << 31} {
			h := fnv.New64a()
			h.Write([]byte(fed))
			var b [5]byte
			binary.BigEndian.PutUint32(b[1:], uint32(g))
			h.Write(b[:])
			var a4 [4]byte
			binary.BigEndian.PutUint32(a4[:], 0xefc00000|uint32(h.Sum64())&(1<<18-1))
			if got, want := GroupAddr(fed, DefaultBaseAddr, g), netip.AddrFrom4(a4); got != want {
				t.Errorf("GroupAddr(%q, %d) = %v, want %v", fed, g, got, want)
			}
		}
	}
}
