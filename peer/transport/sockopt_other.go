//go:build !unix

package transport

import (
	"errors"
	"syscall"
)

// reuseAddr reports that the UDP transport is not supported here.
func reuseAddr(network, address string, c syscall.RawConn) error {
	return errors.New("transport: UDP multicast needs a unix system")
}
