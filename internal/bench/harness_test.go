package bench

import (
	"bytes"
	"net"
	"strings"
	"testing"
)

// A bench kind's multicast port is derived from the process id unless
// given.
func TestDefaultPort(t *testing.T) {
	port := 0
	defaultPort(&port, 57)
	if port < 43000 || port >= 51000 {
		t.Errorf("derived port %d outside 43000-50999", port)
	}
	port = 1234
	if defaultPort(&port, 0); port != 1234 {
		t.Errorf("a given port changed to %d", port)
	}
}

// rawSink counts what arrived and stops at the count asked for.
func TestRawSink(t *testing.T) {
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Skipf("no loopback UDP: %v", err)
	}
	defer c.Close()
	rio, err := newRawIO(c)
	if err != nil {
		t.Fatal(err)
	}
	s, err := net.DialUDP("udp4", nil, c.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for range 4 {
		if _, err := s.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	rawSink(c, rio, make([]byte, 64), 3, &out)
	if !strings.HasPrefix(out.String(), "got 3 in ") {
		t.Errorf("output %q, want got 3 in NS", out.String())
	}
}
