//go:build !linux

package bench

import (
	"net"
	"net/netip"
)

// rawIO reads and writes the raw floors' datagrams (see
// bench_rawio_linux.go for Linux).
type rawIO struct{ c *net.UDPConn }

func newRawIO(c *net.UDPConn) (*rawIO, error) { return &rawIO{c: c}, nil }

func (r *rawIO) read(b []byte) (int, netip.AddrPort, error) { return r.c.ReadFromUDPAddrPort(b) }

func (r *rawIO) write(b []byte, to netip.AddrPort) error {
	_, err := r.c.WriteToUDPAddrPort(b, to)
	return err
}
