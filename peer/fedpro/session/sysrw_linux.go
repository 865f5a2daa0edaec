//go:build linux

package session

import (
	"syscall"
	"unsafe"
)

// On Linux the connection's reads and writes are raw system calls on
// its non-blocking descriptor, as the transport's datagrams are
// (peer/transport/mmsg_linux.go): they never block (a read that would
// returns EAGAIN, and the poller waits), so they need not tell the
// scheduler they are in a system call. Through syscall.Read and Write
// each one did, and the first after the daemon had been idle woke the
// runtime's monitor thread, which then polled until idle again: a wake
// and sleeps per message.

// sysRead reads from fd into b (not empty) without waiting.
func sysRead(fd uintptr, b []byte) (int, syscall.Errno) {
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
		if e != syscall.EINTR {
			return int(n), e
		}
	}
}

// sysWrite writes b (not empty) to fd without waiting.
func sysWrite(fd uintptr, b []byte) (int, syscall.Errno) {
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)))
		if e != syscall.EINTR {
			return int(n), e
		}
	}
}
