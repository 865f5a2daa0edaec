package transport

import (
	"net"
	"net/netip"
	"syscall"
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
