//go:build linux

package bench

import (
	"net"
	"net/netip"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rawIO reads and writes the raw floors' datagrams with recvfrom and
// sendto issued as raw system calls on the socket's non-blocking
// descriptor, waiting only through the runtime's poller: the way the
// transport does it (peer/transport/mmsg_linux.go), so that a floor pays
// no more for the Go scheduler than the RTI does.
type rawIO struct {
	rc   syscall.RawConn
	buf  []byte
	from unix.RawSockaddrInet4
	to   unix.RawSockaddrInet4
	n    int
	err  syscall.Errno
	rfn  func(fd uintptr) bool
	wfn  func(fd uintptr) bool
}

func newRawIO(c *net.UDPConn) (*rawIO, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	r := &rawIO{rc: rc}
	r.rfn = func(fd uintptr) bool {
		for {
			fromLen := uint32(unix.SizeofSockaddrInet4)
			n, _, e := syscall.RawSyscall6(unix.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(unsafe.SliceData(r.buf))),
				uintptr(len(r.buf)), unix.MSG_DONTWAIT, uintptr(unsafe.Pointer(&r.from)), uintptr(unsafe.Pointer(&fromLen)))
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // try again when the poller says
			}
			r.n, r.err = int(n), e
			return true
		}
	}
	r.wfn = func(fd uintptr) bool {
		for {
			n, _, e := syscall.RawSyscall6(unix.SYS_SENDTO, fd, uintptr(unsafe.Pointer(unsafe.SliceData(r.buf))),
				uintptr(len(r.buf)), 0, uintptr(unsafe.Pointer(&r.to)), unix.SizeofSockaddrInet4)
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // the buffer is full: wait for room, as net does
			}
			r.n, r.err = int(n), e
			return true
		}
	}
	return r, nil
}

// read reads one datagram into b, waiting for it (within the read
// deadline), and returns its length and sender.
func (r *rawIO) read(b []byte) (int, netip.AddrPort, error) {
	r.buf = b
	if err := r.rc.Read(r.rfn); err != nil {
		return 0, netip.AddrPort{}, err
	}
	if r.err != 0 {
		return 0, netip.AddrPort{}, r.err
	}
	p := (*[2]byte)(unsafe.Pointer(&r.from.Port))
	return r.n, netip.AddrPortFrom(netip.AddrFrom4(r.from.Addr), uint16(p[0])<<8|uint16(p[1])), nil
}

// write sends b to an IPv4 address.
func (r *rawIO) write(b []byte, to netip.AddrPort) error {
	r.to = unix.RawSockaddrInet4{Family: unix.AF_INET, Addr: to.Addr().Unmap().As4()}
	p := (*[2]byte)(unsafe.Pointer(&r.to.Port))
	p[0], p[1] = byte(to.Port()>>8), byte(to.Port())
	r.buf = b
	if err := r.rc.Write(r.wfn); err != nil {
		return err
	}
	if r.err != 0 {
		return r.err
	}
	return nil
}
