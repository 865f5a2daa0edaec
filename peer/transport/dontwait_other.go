//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris)

package transport

// dontWait is zero here: golang.org/x/net/ipv4 would wait on EAGAIN
// anyway, so every write runs under the send deadline.
const dontWait = 0
