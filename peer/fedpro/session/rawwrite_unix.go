//go:build unix

package session

import (
	"errors"
	"net"
	"syscall"
)

// rawWriter returns a function that writes to nc's socket without
// waiting: as much as the socket buffer takes, and then the count
// written (0 when it takes nothing). It is nil unless nc is a TCP or
// Unix stream (a TLS connection encrypts first). One goroutine at a time
// may call it (the connection's writing flag).
func rawWriter(nc net.Conn) func([]byte) (int, error) {
	var sc syscall.Conn
	switch c := nc.(type) {
	case *net.TCPConn:
		sc = c
	case *net.UnixConn:
		sc = c
	default:
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	w := &rawWrite{rc: rc}
	w.fn = w.write // bound once: no allocation per write
	return w.Write
}

// rawWrite holds one write's state between Write and the function
// RawConn.Write calls, so that a write allocates nothing.
type rawWrite struct {
	rc  syscall.RawConn
	fn  func(fd uintptr) bool
	b   []byte
	n   int
	err error
}

func (w *rawWrite) Write(b []byte) (int, error) {
	w.b, w.n, w.err = b, 0, nil
	err := w.rc.Write(w.fn)
	n := w.n
	if err == nil {
		err = w.err
	}
	w.b, w.err = nil, nil
	if errors.Is(err, syscall.EAGAIN) {
		err = nil // the writer waits for room
	}
	return n, err
}

// write writes what it can and never asks to wait: done, or the socket
// buffer is full.
func (w *rawWrite) write(fd uintptr) bool {
	for w.n < len(w.b) {
		m, err := syscall.Write(int(fd), w.b[w.n:])
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			w.err = err
			return true
		case m <= 0:
			return true
		}
		w.n += m
	}
	return true
}
