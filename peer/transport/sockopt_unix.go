//go:build unix

package transport

import "syscall"

// ReuseAddr sets SO_REUSEADDR so that several sockets, in this process or
// others, can bind the same group address and port and each receive every
// datagram sent to it.
func ReuseAddr(network, address string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
	})
	if err != nil {
		return err
	}
	return serr
}
