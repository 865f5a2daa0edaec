package transport

import (
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"testing"
	"time"
)

// multicastIfAddr reads IP_MULTICAST_IF back: Linux reports the address.
func multicastIfAddr(c *net.UDPConn) (netip.Addr, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return netip.Addr{}, err
	}
	var a [4]byte
	var serr error
	if err := rc.Control(func(fd uintptr) {
		a, serr = syscall.GetsockoptInet4Addr(int(fd), syscall.IPPROTO_IP, syscall.IP_MULTICAST_IF)
	}); err != nil {
		return netip.Addr{}, err
	}
	return netip.AddrFrom4(a), serr
}

// sockoptInt reads an integer socket option.
func sockoptInt(t *testing.T, c syscall.Conn, level, opt int) int {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var serr error
	if err := rc.Control(func(fd uintptr) {
		v, serr = syscall.GetsockoptInt(int(fd), level, opt)
	}); err != nil {
		t.Fatal(err)
	}
	if serr != nil {
		t.Fatal(serr)
	}
	return v
}

func TestUDPSocketBuffers(t *testing.T) {
	cfg := UDPConfig{
		Federation:  fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano()),
		Port:        freePort(t),
		ReadBuffer:  100 << 10,
		WriteBuffer: 100 << 10,
		MaxPacket:   65507,
	}
	u, err := NewUDP(cfg)
	if err != nil {
		t.Skipf("multicast on lo unavailable: %v", err)
	}
	defer u.Close()
	mustJoin(t, u, 1)
	// Linux doubles the requested size for its bookkeeping.
	if got := sockoptInt(t, u.sendConn, syscall.SOL_SOCKET, syscall.SO_SNDBUF); got < cfg.WriteBuffer {
		t.Errorf("SO_SNDBUF = %d, want at least %d", got, cfg.WriteBuffer)
	}
	u.mu.Lock()
	s := u.joined[1]
	u.mu.Unlock()
	if got := sockoptInt(t, s.conn, syscall.SOL_SOCKET, syscall.SO_RCVBUF); got < cfg.ReadBuffer {
		t.Errorf("SO_RCVBUF = %d, want at least %d", got, cfg.ReadBuffer)
	}
	// A frame of the largest size crosses loopback whole (from another
	// transport: a transport drops its own).
	v, err := NewUDP(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	big := make([]byte, cfg.MaxPacket-udpHeaderLen)
	big[len(big)-1] = 7
	if err := v.Send(1, big); err != nil {
		t.Fatal(err)
	}
	if p := recvUDP(t, u); len(p.Data) != len(big) || p.Data[len(big)-1] != 7 {
		t.Errorf("got %d bytes, want %d", len(p.Data), len(big))
	}
}
