//go:build linux

package transport

import (
	"errors"
	"net"
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"
)

// mmsg moves batches of datagrams through one socket with recvmmsg and
// sendmmsg, issued as raw system calls on the socket's non-blocking
// descriptor: with MSG_DONTWAIT neither waits, so they need not tell the
// Go scheduler they are in the kernel. That matters on a loaded machine:
// a sendmmsg on loopback multicast runs the receivers' delivery inside
// the call (tens of microseconds), long enough for the runtime's monitor
// to hand the goroutine's processor to another thread when the process
// has one (GOMAXPROCS=1), which costs two thread wake-ups per call. Waits
// go through the runtime's poller as usual (syscall.RawConn).
//
// An mmsg is used by one goroutine at a time (the socket's reader, or a
// sender under UDP.sendMu).
type mmsg struct {
	rc    syscall.RawConn
	hdrs  []unix.Mmsghdr
	iovs  []unix.Iovec
	names []unix.RawSockaddrInet4
	rlen  []int // the length of each read buffer set up in iovs

	// The call in progress, for the functions handed to rc, made once so
	// that a call does not allocate a closure.
	count   int // datagrams to read or write
	n       int
	errno   syscall.Errno
	writeFn func(fd uintptr) bool

	// readEach's loop (see there).
	eachMs []ipv4.Message
	each   func([]ipv4.Message)
	eachFn func(fd uintptr) bool

	// poll is how long readEach keeps reading an empty socket before it
	// waits for the poller (setPoll); zero: not at all.
	poll time.Duration
}

// setPoll makes readEach keep trying an emptied socket for d, yielding
// the processor between tries, before it waits for the poller (see
// UDPConfig.PollFor).
func (m *mmsg) setPoll(d time.Duration) { m.poll = max(d, 0) }

// newMMsg prepares batch I/O of up to n datagrams of up to iovPer pieces
// each on c.
func newMMsg(c *net.UDPConn, n, iovPer int) (*mmsg, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	m := &mmsg{
		rc:    rc,
		hdrs:  make([]unix.Mmsghdr, n),
		iovs:  make([]unix.Iovec, n*iovPer),
		names: make([]unix.RawSockaddrInet4, n),
		rlen:  make([]int, n),
	}
	m.writeFn, m.eachFn = m.sendmmsg, m.recvEach
	return m, nil
}

// readEach reads batches of up to len(ms) datagrams into each message's
// first buffer, sets each one's N and Addr (which must be a *net.UDPAddr
// with a 4-byte IP to fill in), and hands each batch to handle, on the
// calling goroutine, until a read fails; it returns that error.
// Unlike a loop of reads it waits for the poller, not for another
// system call, after a batch that emptied the socket: it stays inside
// one rc.Read, and rc forgets the readiness the poller recorded only
// when a Read starts (internal/poll's prepareRead), so every datagram
// that arrives after a system call still wakes it. A loop of reads must
// make a call before each wait instead, one that mostly returns EAGAIN.
func (m *mmsg) readEach(ms []ipv4.Message, handle func([]ipv4.Message)) error {
	ms = ms[:min(len(ms), len(m.hdrs))]
	if len(ms) == 0 {
		return errors.New("transport: no room to read into")
	}
	m.eachMs, m.each = ms, handle
	defer func() { m.eachMs, m.each = nil, nil }()
	m.errno = 0
	if err := m.rc.Read(m.eachFn); err != nil {
		return err
	}
	if m.errno == 0 {
		return errors.New("transport: read ended without an error") // recvEach returns true only on one
	}
	return m.errno
}

// recvEach is readEach's loop, run by rc.Read: it reads and hands over
// batches while the socket has datagrams, and returns false (wait for
// the poller) once a batch did not fill ms, true on an error.
//
// With a poll time (setPoll) it tries an emptied socket again, until
// nothing came for that long, and only then waits for the poller: a
// datagram that arrives meanwhile is read without the poller's wake-up.
// Between tries it yields the processor to the process's other
// goroutines (the federate's, which the datagram before readied) and the
// thread to other processes on the core (sched_yield): without the
// latter, a second process on the core, such as the peer the reader
// waits for, waited for the spinning thread's time slice, and a 45 us
// round trip became 230 us. Stopping is as safe as without: it stops on
// EAGAIN, and a datagram that arrives after that call wakes the poller's
// wait.
func (m *mmsg) recvEach(fd uintptr) bool {
	ms := m.eachMs
	var until time.Time // polling since the last datagram, until then
	for {
		m.setupRead(ms)
		r, _, e := syscall.RawSyscall6(unix.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&m.hdrs[0])),
			uintptr(m.count), unix.MSG_DONTWAIT, 0, 0)
		switch e {
		case 0:
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			if m.poll > 0 {
				now := time.Now()
				if until.IsZero() {
					until = now.Add(m.poll)
				}
				if now.Before(until) {
					runtime.Gosched()
					syscall.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
					continue
				}
			}
			return false
		default:
			m.errno = e
			return true
		}
		n := int(r)
		m.results(ms[:n])
		m.each(ms[:n])
		until = time.Time{}
		if n < len(ms) && m.poll == 0 {
			return false // emptied: the poller tells of what comes next
		}
	}
}

// setupRead prepares the headers for reading into ms.
func (m *mmsg) setupRead(ms []ipv4.Message) {
	for i := range ms {
		// A reader passes the same buffers every time: set up only what
		// changed, and the lengths the kernel wrote back.
		b := ms[i].Buffers[0]
		h := &m.hdrs[i].Hdr
		if iov := &m.iovs[i]; iov.Base != unsafe.SliceData(b) || m.rlen[i] != len(b) || h.Iov != iov {
			m.rlen[i] = len(b)
			*iov = unix.Iovec{Base: unsafe.SliceData(b)}
			iov.SetLen(len(b))
			*h = unix.Msghdr{Iov: iov, Name: (*byte)(unsafe.Pointer(&m.names[i]))}
			h.SetIovlen(1)
		}
		h.Namelen = unix.SizeofSockaddrInet4
		h.Flags = 0
	}
	m.count = len(ms)
}

// results sets the length and sender of each datagram read into ms.
func (m *mmsg) results(ms []ipv4.Message) {
	for i := range ms {
		ms[i].N = int(m.hdrs[i].Len)
		if ua, ok := ms[i].Addr.(*net.UDPAddr); ok && len(ua.IP) == net.IPv4len {
			sa := &m.names[i]
			copy(ua.IP, sa.Addr[:])
			p := (*[2]byte)(unsafe.Pointer(&sa.Port))
			ua.Port = int(p[0])<<8 | int(p[1])
		}
	}
}

// Errors of write, before any system call.
var (
	errNoDest         = errors.New("transport: no IPv4 destination")
	errTooManyBuffers = errors.New("transport: too many buffers in a datagram")
)

// write sends the datagrams of ms (each its Buffers, to its Addr, a
// *net.UDPAddr with an IPv4 address) without waiting: it returns how many
// the kernel took, and EAGAIN when the socket buffer is full.
func (m *mmsg) write(ms []ipv4.Message) (int, error) {
	ms = ms[:min(len(ms), len(m.hdrs))]
	if len(ms) == 0 {
		return 0, nil
	}
	iovPer := len(m.iovs) / len(m.hdrs)
	for i := range ms {
		if len(ms[i].Buffers) > iovPer {
			return 0, errTooManyBuffers
		}
		first := &m.iovs[i*iovPer] // valid even for a datagram of no buffers
		iovs := m.iovs[i*iovPer : i*iovPer+len(ms[i].Buffers)]
		for j, b := range ms[i].Buffers {
			iovs[j] = unix.Iovec{Base: unsafe.SliceData(b)}
			iovs[j].SetLen(len(b))
		}
		ua, ok := ms[i].Addr.(*net.UDPAddr)
		if !ok || ua.IP.To4() == nil {
			return 0, errNoDest
		}
		sa := &m.names[i]
		*sa = unix.RawSockaddrInet4{Family: unix.AF_INET}
		copy(sa.Addr[:], ua.IP.To4())
		p := (*[2]byte)(unsafe.Pointer(&sa.Port))
		p[0], p[1] = byte(ua.Port>>8), byte(ua.Port)
		m.hdrs[i] = unix.Mmsghdr{}
		m.hdrs[i].Hdr.Iov = first
		m.hdrs[i].Hdr.SetIovlen(len(iovs))
		m.hdrs[i].Hdr.Name = (*byte)(unsafe.Pointer(sa))
		m.hdrs[i].Hdr.Namelen = unix.SizeofSockaddrInet4
	}
	m.count = len(ms)
	err := m.rc.Write(m.writeFn)
	n, errno := m.n, m.errno
	clear(m.iovs[:len(ms)*iovPer]) // do not keep the caller's data
	if err != nil {
		return 0, err
	}
	if errno != 0 {
		return 0, errno
	}
	return n, nil
}

// sendmmsg is write's system call, run by rc.Write. It never waits for
// the poller: the caller decides what to do about a full buffer.
func (m *mmsg) sendmmsg(fd uintptr) bool {
	for {
		r, _, e := syscall.RawSyscall6(unix.SYS_SENDMMSG, fd, uintptr(unsafe.Pointer(&m.hdrs[0])),
			uintptr(m.count), unix.MSG_DONTWAIT, 0, 0)
		if e == syscall.EINTR {
			continue
		}
		m.n, m.errno = int(r), e
		return true
	}
}
