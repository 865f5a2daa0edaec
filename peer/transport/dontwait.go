//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris

package transport

import "syscall"

// dontWait is the flag that makes a write fail with EAGAIN rather than
// wait when the socket buffer is full. golang.org/x/net/ipv4 honours it on
// these systems: a WriteBatch with it returns at once.
const dontWait = syscall.MSG_DONTWAIT
