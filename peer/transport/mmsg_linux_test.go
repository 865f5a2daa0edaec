//go:build linux

package transport

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"
)

// readOnce reads one batch with m's setup and results, the way
// readEach's loop does, for tests that check one read at a time.
func readOnce(m *mmsg, ms []ipv4.Message) (int, error) {
	ms = ms[:min(len(ms), len(m.hdrs))]
	m.setupRead(ms)
	var n int
	var errno syscall.Errno
	err := m.rc.Read(func(fd uintptr) bool {
		for {
			r, _, e := syscall.RawSyscall6(unix.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&m.hdrs[0])),
				uintptr(m.count), unix.MSG_DONTWAIT, 0, 0)
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false
			}
			n, errno = int(r), e
			return true
		}
	})
	if err != nil {
		return 0, err
	}
	if errno != 0 {
		return 0, errno
	}
	m.results(ms[:n])
	return n, nil
}

// TestMMsgRoundTrip sends a batch of two-piece datagrams with the raw
// sendmmsg and reads them back with the raw recvmmsg: contents, lengths
// and source addresses must arrive as sent.
func TestMMsgRoundTrip(t *testing.T) {
	rx, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer rx.Close()
	tx, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	wm, err := newMMsg(tx, 8, 2)
	if err != nil {
		t.Fatal(err)
	}
	rm, err := newMMsg(rx, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	to := rx.LocalAddr().(*net.UDPAddr)
	const count = 5
	out := make([]ipv4.Message, count)
	for i := range out {
		out[i].Buffers = [][]byte{[]byte("hdr"), []byte(fmt.Sprintf("payload %d", i))}
		out[i].Addr = to
	}
	n, err := wm.write(out)
	if err != nil || n != count {
		t.Fatalf("write: %d, %v; want %d", n, err, count)
	}
	in := make([]ipv4.Message, 8)
	for i := range in {
		in[i].Buffers = [][]byte{make([]byte, 64)}
		in[i].Addr = &net.UDPAddr{IP: make(net.IP, net.IPv4len)}
	}
	rx.SetReadDeadline(time.Now().Add(5 * time.Second))
	got := 0
	for got < count {
		k, err := readOnce(rm, in)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		for _, m := range in[:k] {
			want := fmt.Sprintf("hdrpayload %d", got)
			if s := string(m.Buffers[0][:m.N]); s != want {
				t.Errorf("datagram %d = %q, want %q", got, s, want)
			}
			from := m.Addr.(*net.UDPAddr)
			if self := tx.LocalAddr().(*net.UDPAddr); !from.IP.Equal(self.IP) || from.Port != self.Port {
				t.Errorf("datagram %d from %v, want %v", got, from, self)
			}
			got++
		}
	}
	// Nothing more: a read waits until the deadline.
	rx.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if k, err := readOnce(rm, in); !isTimeout(err) {
		t.Fatalf("read with nothing sent: %d, %v; want a timeout", k, err)
	}
	// A destination that is not IPv4 is refused before the system call.
	bad := []ipv4.Message{{Buffers: [][]byte{[]byte("x")}, Addr: &net.UDPAddr{IP: net.IPv6loopback, Port: 9}}}
	if _, err := wm.write(bad); !errors.Is(err, errNoDest) {
		t.Fatalf("write to IPv6: %v, want errNoDest", err)
	}
	// A datagram of no buffers is an empty datagram; one of more pieces
	// than prepared is refused before the system call.
	if n, err := wm.write([]ipv4.Message{{Addr: to}}); err != nil || n != 1 {
		t.Fatalf("write of no buffers: %d, %v; want 1 sent", n, err)
	}
	rx.SetReadDeadline(time.Now().Add(5 * time.Second))
	if k, err := readOnce(rm, in); err != nil || k != 1 || in[0].N != 0 {
		t.Fatalf("read of the empty datagram: %d, %v, %d bytes; want one of 0", k, err, in[0].N)
	}
	three := []ipv4.Message{{Buffers: [][]byte{{1}, {2}, {3}}, Addr: to}}
	if _, err := wm.write(three); !errors.Is(err, errTooManyBuffers) {
		t.Fatalf("write of three pieces: %v, want errTooManyBuffers", err)
	}
	// A closed socket fails a read instead of waiting.
	rx.Close()
	if _, err := readOnce(rm, in); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read on a closed socket: %v, want net.ErrClosed", err)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestMMsgReadEach reads with readEach while datagrams come in bursts of
// 1 to 40 (so that batches fill and the socket empties between bursts):
// every datagram must be handed over, in order, with no stall after an
// emptying batch, and closing the socket must end the loop.
func TestMMsgReadEach(t *testing.T) {
	rx, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	rx.SetReadBuffer(1 << 20)
	rm, err := newMMsg(rx, 32, 1)
	if err != nil {
		t.Fatal(err)
	}
	in := make([]ipv4.Message, 32)
	for i := range in {
		in[i].Buffers = [][]byte{make([]byte, 64)}
		in[i].Addr = &net.UDPAddr{IP: make(net.IP, net.IPv4len)}
	}
	got := make(chan string, 4096)
	done := make(chan error, 1)
	go func() {
		done <- rm.readEach(in, func(ms []ipv4.Message) {
			for _, m := range ms {
				got <- string(m.Buffers[0][:m.N])
			}
		})
	}()
	to := rx.LocalAddr().(*net.UDPAddr)
	const total = 600
	next := 0
	for burst := 1; next < total; burst = burst%40 + 7 {
		for i := 0; i < burst && next < total; i++ {
			if _, err := tx.WriteToUDP([]byte(fmt.Sprintf("d%d", next)), to); err != nil {
				t.Fatal(err)
			}
			next++
		}
		// Let the reader empty the socket and wait before the next burst.
		time.Sleep(200 * time.Microsecond)
	}
	deadline := time.After(5 * time.Second)
	for i := 0; i < total; i++ {
		select {
		case s := <-got:
			if want := fmt.Sprintf("d%d", i); s != want {
				t.Fatalf("datagram %d is %q, want %q", i, s, want)
			}
		case <-deadline:
			t.Fatalf("%d of %d datagrams handed over after 5 s", i, total)
		}
	}
	rx.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("readEach after Close: %v, want net.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("readEach did not end after Close")
	}
}
