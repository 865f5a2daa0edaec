//go:build !unix

package session

import (
	"io"
	"net"
)

// rawWriter is nil where writing without waiting is not done: the
// connection's writer writes everything.
func rawWriter(net.Conn) func([]byte) (int, error) { return nil }

// rawReader is nc where reading without the net package is not done.
func rawReader(nc net.Conn) io.Reader { return nc }
