//go:build unix && !linux

package session

import "syscall"

// sysRead reads from fd into b without waiting (the descriptor is
// non-blocking).
func sysRead(fd uintptr, b []byte) (int, syscall.Errno) {
	for {
		n, err := syscall.Read(int(fd), b)
		if err != syscall.EINTR {
			return max(n, 0), errnoOf(err)
		}
	}
}

// sysWrite writes b to fd without waiting.
func sysWrite(fd uintptr, b []byte) (int, syscall.Errno) {
	for {
		n, err := syscall.Write(int(fd), b)
		if err != syscall.EINTR {
			return max(n, 0), errnoOf(err)
		}
	}
}

func errnoOf(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	if e, ok := err.(syscall.Errno); ok {
		return e
	}
	return syscall.EIO
}
