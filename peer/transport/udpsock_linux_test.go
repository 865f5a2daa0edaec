package transport

import (
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestUDPSharedSocketOptions(t *testing.T) {
	_, b := newUDPPair(t)
	mustJoin(t, b, 1, 2, 3)
	b.mu.Lock()
	socks := append([]*udpSocket(nil), b.socks...)
	b.mu.Unlock()
	if len(socks) != 1 {
		t.Fatalf("%d sockets for 3 groups, want 1", len(socks))
	}
	s := socks[0]
	if la := s.conn.LocalAddr().(*net.UDPAddr); !la.IP.IsUnspecified() || la.Port != b.Config().Port {
		t.Errorf("receiving socket bound to %v, want 0.0.0.0:%d", la, b.Config().Port)
	}
	if v := sockoptInt(t, s.conn, syscall.IPPROTO_IP, ipMulticastAll); v != 0 {
		t.Errorf("IP_MULTICAST_ALL = %d, want 0", v)
	}
	if v := sockoptInt(t, s.conn, syscall.SOL_SOCKET, syscall.SO_REUSEADDR); v == 0 {
		t.Error("SO_REUSEADDR off")
	}
}

// TestUDPSharedPortIsolation checks that two transports sharing the port
// (as two processes on one host do) each receive only their groups.
func TestUDPSharedPortIsolation(t *testing.T) {
	a, b := newUDPPair(t)
	mustJoin(t, a, 1)
	mustJoin(t, b, 2)
	c, err := NewUDP(a.Config()) // a third member of the host sends
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fa, fb := a.Stats().Foreign, b.Stats().Foreign
	c.Send(1, []byte("one"))
	c.Send(2, []byte("two"))
	if got := collectUDP(a, 1); len(got) != 1 || got[0].Group != 1 {
		t.Errorf("a got %v", got)
	}
	if got := collectUDP(b, 1); len(got) != 1 || got[0].Group != 2 {
		t.Errorf("b got %v", got)
	}
	if a.Stats().Foreign != fa || b.Stats().Foreign != fb {
		t.Errorf("a socket received a group it did not join: %+v, %+v", a.Stats(), b.Stats())
	}
}

// TestUDPMembershipLimit asks for more memberships per socket than the
// kernel grants: the transport opens more sockets instead of failing.
func TestUDPMembershipLimit(t *testing.T) {
	raw, err := os.ReadFile("/proc/sys/net/ipv4/igmp_max_memberships")
	if err != nil {
		t.Skip(err)
	}
	limit, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil || limit < 1 || limit > 40 {
		t.Skipf("igmp_max_memberships = %q", raw)
	}
	a, _ := newUDPPair(t)
	cfg := a.Config()
	cfg.GroupsPerSocket = limit + 5
	b, err := NewUDP(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var gs []Group
	for i := range 2*limit + 3 {
		gs = append(gs, Group(100+i))
	}
	mustJoin(t, b, gs...)
	addrs := addrCount(b, gs)
	if got, want := b.numSockets(), (addrs+limit-1)/limit; got != want {
		t.Errorf("%d sockets for %d addresses with limit %d, want %d", got, addrs, limit, want)
	}
	for _, g := range gs {
		a.Send(g, seqPacket(int(g)))
	}
	if got := collectUDP(b, len(gs)); len(got) != len(gs) {
		t.Errorf("received %d of %d", len(got), len(gs))
	}
}
