//go:build !linux

package transport

import (
	"net/netip"
	"syscall"
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
	return reuseAddr(network, address, c)
}

// membershipLimit reports whether err is the kernel refusing a socket one
// more membership; sockets here hold one.
func membershipLimit(err error) bool { return false }
