//go:build unix

package session

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
)

// rawWriter returns a function that writes to nc's socket without
// waiting: as much as the socket buffer takes, and then the count
// written (0 when it takes nothing). It is nil unless nc is a TCP or
// Unix stream (a TLS connection encrypts first). One goroutine at a time
// may call it (the connection's writing flag).
func rawWriter(nc net.Conn) func([]byte) (int, error) {
	rc := syscallConn(nc)
	if rc == nil {
		return nil
	}
	w := &rawWrite{rc: rc}
	w.fn = w.write // bound once: no allocation per write
	return w.Write
}

// syscallConn is nc's raw connection if nc is a TCP or Unix stream
// (a TLS connection encrypts first), else nil.
func syscallConn(nc net.Conn) syscall.RawConn {
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
	return rc
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
		m, e := sysWrite(fd, w.b[w.n:])
		switch {
		case e != 0:
			w.err = e
			return true
		case m <= 0:
			return true
		}
		w.n += m
	}
	return true
}

// rawReader returns a reader of nc's socket that reads with sysRead and
// waits through the runtime's poller (honouring nc's read deadline),
// where rawWriter writes; nc itself elsewhere.
func rawReader(nc net.Conn) io.Reader {
	rc := syscallConn(nc)
	if rc == nil {
		return nc
	}
	r := &rawRead{rc: rc}
	r.fn = r.read // bound once: no allocation per read
	return r
}

// rawRead holds one read's state between Read and the function
// RawConn.Read calls, so that a read allocates nothing.
type rawRead struct {
	rc    syscall.RawConn
	fn    func(fd uintptr) bool
	b     []byte
	n     int
	errno syscall.Errno
}

// Read reads what the socket holds, up to len(b), waiting for the
// poller when it holds nothing; io.EOF once the peer has closed.
func (r *rawRead) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	r.b, r.n, r.errno = b, 0, 0
	err := r.rc.Read(r.fn) // a closed connection, a deadline passed
	n, errno := r.n, r.errno
	r.b = nil
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, os.NewSyscallError("read", errno)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// read is RawConn.Read's function: false (wait for the poller) when the
// socket holds nothing.
func (r *rawRead) read(fd uintptr) bool {
	n, e := sysRead(fd, r.b)
	if e == syscall.EAGAIN {
		return false
	}
	r.n, r.errno = n, e
	return true
}
