//go:build !linux

package transport

import (
	"errors"
	"net"
	"net/netip"
)

// multicastIfAddr cannot read IP_MULTICAST_IF back here; TestUDPDefaults
// calls it on Linux only.
func multicastIfAddr(c *net.UDPConn) (netip.Addr, error) {
	return netip.Addr{}, errors.New("transport: IP_MULTICAST_IF not readable here")
}
