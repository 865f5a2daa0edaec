//go:build linux

package transport

import (
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"golang.org/x/net/ipv4"
)

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
		k, err := rm.read(in)
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
	if k, err := rm.read(in); !isTimeout(err) {
		t.Fatalf("read with nothing sent: %d, %v; want a timeout", k, err)
	}
	// A destination that is not IPv4 is refused before the system call.
	bad := []ipv4.Message{{Buffers: [][]byte{[]byte("x")}, Addr: &net.UDPAddr{IP: net.IPv6loopback, Port: 9}}}
	if _, err := wm.write(bad); !errors.Is(err, errNoDest) {
		t.Fatalf("write to IPv6: %v, want errNoDest", err)
	}
	// A closed socket fails a read instead of waiting.
	rx.Close()
	if _, err := rm.read(in); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read on a closed socket: %v, want net.ErrClosed", err)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
