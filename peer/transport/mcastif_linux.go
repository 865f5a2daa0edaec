package transport

import (
	"net"
	"net/netip"
	"syscall"
)

// pinMulticastIf sets IP_MULTICAST_IF with both the interface index and
// its address. x/net/ipv4 sets only the index, which Linux cannot report
// back (getsockopt returns the address); with the address set too, the
// option reads back and the source address is fixed.
func pinMulticastIf(c *net.UDPConn, ifi *net.Interface, addr netip.Addr) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	mreq := &syscall.IPMreqn{Address: addr.As4(), Ifindex: int32(ifi.Index)}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptIPMreqn(int(fd), syscall.IPPROTO_IP, syscall.IP_MULTICAST_IF, mreq)
	}); err != nil {
		return err
	}
	return serr
}
