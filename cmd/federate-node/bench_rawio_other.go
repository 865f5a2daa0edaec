//go:build !linux

package main

import "net"

// rawIO reads and writes the raw floor's datagrams (see
// bench_rawio_linux.go for Linux).
type rawIO struct {
	c  *net.UDPConn
	to *net.UDPAddr
}

func newRawIO(c *net.UDPConn, to *net.UDPAddr) (*rawIO, error) { return &rawIO{c: c, to: to}, nil }

func (r *rawIO) read(b []byte) (int, error) {
	n, _, err := r.c.ReadFromUDP(b)
	return n, err
}

func (r *rawIO) write(b []byte) error {
	_, err := r.c.WriteToUDP(b, r.to)
	return err
}
