package transport

import (
	"errors"
	"net/netip"
	"syscall"
)

// sharedSockets reports whether a receiving socket holds the memberships
// of several group addresses. On Linux it does: it is bound to the
// wildcard address, joins up to UDPConfig.GroupsPerSocket addresses, and
// has IP_MULTICAST_ALL off.
const sharedSockets = true

// ipMulticastAll is IP_MULTICAST_ALL of <linux/in.h>, which package
// syscall lacks.
const ipMulticastAll = 49

// receiveAddr returns the address a receiving socket for group address a
// binds: the wildcard, shared by all groups.
func receiveAddr(a netip.Addr) netip.Addr { return netip.IPv4Unspecified() }

// receiveControl prepares a receiving socket before it is bound. It sets
// SO_REUSEADDR, so that the sockets of this and other processes on the
// host share the port and each receive the groups it joined, and turns
// IP_MULTICAST_ALL off: a socket bound to the wildcard address would
// otherwise receive every group joined by any socket on the host for its
// port.
func receiveControl(network, address string, c syscall.RawConn) error {
	if err := reuseAddr(network, address, c); err != nil {
		return err
	}
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, ipMulticastAll, 0)
	})
	if err != nil {
		return err
	}
	return serr
}

// membershipLimit reports whether err is the kernel refusing a socket one
// more membership (ENOBUFS beyond net.ipv4.igmp_max_memberships).
func membershipLimit(err error) bool { return errors.Is(err, syscall.ENOBUFS) }
