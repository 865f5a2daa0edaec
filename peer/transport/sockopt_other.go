//go:build !unix

package transport

import (
	"errors"
	"syscall"
)

// ReuseAddr reports that the UDP transport is not supported here.
func ReuseAddr(network, address string, c syscall.RawConn) error {
	return errors.New("transport: UDP multicast needs a unix system")
}
