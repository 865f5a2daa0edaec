//go:build !linux

package transport

import (
	"net"
	"net/netip"
)

// pinMulticastIf does nothing here: x/net/ipv4 has set the interface.
func pinMulticastIf(c *net.UDPConn, ifi *net.Interface, addr netip.Addr) error { return nil }
