//go:build !unix

package session

import "net"

// rawWriter is nil where writing without waiting is not done: the
// connection's writer writes everything.
func rawWriter(net.Conn) func([]byte) (int, error) { return nil }
