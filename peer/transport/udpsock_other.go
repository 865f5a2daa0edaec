//go:build !linux

package transport

import (
	"net"
	"net/netip"
	"syscall"

	"golang.org/x/net/ipv4"
)

// sharedSockets reports whether a receiving socket holds the memberships
// of several group addresses. Here it does not: without Linux's
// IP_MULTICAST_ALL, a socket bound to the wildcard address could receive
// groups it did not join, so each socket is bound to its one group
// address.
const sharedSockets = false

// receiveAddr returns the address a receiving socket for group address a
// binds: a itself.
func receiveAddr(a netip.Addr) netip.Addr { return a }

// receiveControl prepares a receiving socket before it is bound.
func receiveControl(network, address string, c syscall.RawConn) error {
	return ReuseAddr(network, address, c)
}

// membershipLimit reports whether err is the kernel refusing a socket one
// more membership; sockets here hold one.
func membershipLimit(err error) bool { return false }

// dropOwn would filter a transport's own datagrams in the kernel; here
// dispatch drops them.
func dropOwn(pc *ipv4.PacketConn, self *net.UDPAddr) {}
