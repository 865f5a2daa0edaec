//go:build unix

package session

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// rawReader reads a TCP connection as net does: the bytes in order,
// io.EOF once the peer closed, the read deadline, a closed connection;
// and leaves a connection that is not a socket (net.Pipe) to itself.
func TestRawReader(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback TCP: %v", err)
	}
	defer l.Close()
	peer, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	nc, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	r := rawReader(nc)
	if _, ok := r.(*rawRead); !ok {
		t.Fatalf("rawReader of a TCP connection is %T", r)
	}
	// The deadline passes with nothing to read.
	nc.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	if n, err := r.Read(make([]byte, 4)); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %d, %v", n, err)
	}
	nc.SetReadDeadline(time.Time{})
	// Bytes written in several pieces come out in order, whether the
	// read waits for them or finds them.
	want := []byte("0123456789abcdefghij")
	go func() {
		for i := 0; i < len(want); i += 5 {
			peer.Write(want[i : i+5])
			time.Sleep(time.Millisecond)
		}
	}()
	got := make([]byte, len(want))
	if _, err := io.ReadFull(r, got); err != nil || string(got) != string(want) {
		t.Fatalf("read %q, %v; want %q", got, err, want)
	}
	if n, err := r.Read(nil); n != 0 || err != nil {
		t.Fatalf("empty read: %d, %v", n, err)
	}
	peer.Close()
	if n, err := r.Read(make([]byte, 4)); n != 0 || err != io.EOF {
		t.Fatalf("read after the peer closed: %d, %v; want io.EOF", n, err)
	}
	nc.Close()
	if _, err := r.Read(make([]byte, 4)); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read of a closed connection: %v; want net.ErrClosed", err)
	}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if r := rawReader(a); r != io.Reader(a) {
		t.Fatalf("rawReader of a pipe is %T, want the pipe", r)
	}
}
