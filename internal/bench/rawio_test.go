package bench

import (
	"net"
	"testing"
	"time"
)

// TestRawIO sends a datagram each way between two sockets with the raw
// floors' reads and writes: contents and sender addresses must arrive as
// sent, and a read with nothing to read ends at its deadline.
func TestRawIO(t *testing.T) {
	lo := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}
	a, err := net.ListenUDP("udp4", lo)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := net.ListenUDP("udp4", lo)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	aio, err := newRawIO(a)
	if err != nil {
		t.Fatal(err)
	}
	bio, err := newRawIO(b)
	if err != nil {
		t.Fatal(err)
	}
	a.SetReadDeadline(time.Now().Add(5 * time.Second))
	b.SetReadDeadline(time.Now().Add(5 * time.Second))
	if err := aio.write([]byte("ping"), b.LocalAddr().(*net.UDPAddr).AddrPort()); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, from, err := bio.read(buf)
	if err != nil || string(buf[:n]) != "ping" || from != a.LocalAddr().(*net.UDPAddr).AddrPort() {
		t.Fatalf("b read %q from %v, %v; want ping from %v", buf[:n], from, err, a.LocalAddr())
	}
	if err := bio.write([]byte("pong"), from); err != nil {
		t.Fatal(err)
	}
	n, from, err = aio.read(buf)
	if err != nil || string(buf[:n]) != "pong" || from != b.LocalAddr().(*net.UDPAddr).AddrPort() {
		t.Fatalf("a read %q from %v, %v; want pong from %v", buf[:n], from, err, b.LocalAddr())
	}
	a.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if _, _, err := aio.read(buf); err == nil {
		t.Fatal("a read with nothing sent returned no error")
	} else if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		t.Fatalf("a read with nothing sent: %v, want a timeout", err)
	}
}
