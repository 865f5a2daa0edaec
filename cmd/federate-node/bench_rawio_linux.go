//go:build linux

package main

import (
	"net"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rawIO reads and writes the raw floor's datagrams with recvfrom and
// sendto issued as raw system calls on the socket's non-blocking
// descriptor, waiting only through the runtime's poller: the way the
// transport does it (peer/transport/mmsg_linux.go), so that the floor
// pays no more for the Go scheduler than the RTI does.
type rawIO struct {
	rc   syscall.RawConn
	to   unix.RawSockaddrInet4
	buf  []byte
	n    int
	err  syscall.Errno
	rfn  func(fd uintptr) bool
	wfn  func(fd uintptr) bool
	wbuf []byte
}

func newRawIO(c *net.UDPConn, to *net.UDPAddr) (*rawIO, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	r := &rawIO{rc: rc, to: unix.RawSockaddrInet4{Family: unix.AF_INET}}
	copy(r.to.Addr[:], to.IP.To4())
	p := (*[2]byte)(unsafe.Pointer(&r.to.Port))
	p[0], p[1] = byte(to.Port>>8), byte(to.Port)
	r.rfn = func(fd uintptr) bool {
		for {
			n, _, e := syscall.RawSyscall6(unix.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(unsafe.SliceData(r.buf))),
				uintptr(len(r.buf)), unix.MSG_DONTWAIT, 0, 0)
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false
			}
			r.n, r.err = int(n), e
			return true
		}
	}
	r.wfn = func(fd uintptr) bool {
		for {
			n, _, e := syscall.RawSyscall6(unix.SYS_SENDTO, fd, uintptr(unsafe.Pointer(unsafe.SliceData(r.wbuf))),
				uintptr(len(r.wbuf)), 0, uintptr(unsafe.Pointer(&r.to)), unix.SizeofSockaddrInet4)
			if e == syscall.EINTR {
				continue
			}
			r.n, r.err = int(n), e
			return true
		}
	}
	return r, nil
}

// read reads one datagram into b, waiting for it (within the read
// deadline).
func (r *rawIO) read(b []byte) (int, error) {
	r.buf = b
	if err := r.rc.Read(r.rfn); err != nil {
		return 0, err
	}
	if r.err != 0 {
		return 0, r.err
	}
	return r.n, nil
}

// write sends b to the group.
func (r *rawIO) write(b []byte) error {
	r.wbuf = b
	if err := r.rc.Write(r.wfn); err != nil {
		return err
	}
	if r.err != 0 {
		return r.err
	}
	return nil
}
