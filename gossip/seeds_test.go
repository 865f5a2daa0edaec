package gossip

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"testing"
)

func TestResolveSeeds(t *testing.T) {
	lookup := func(_ context.Context, host string) ([]string, error) {
		switch host {
		case "fed.svc":
			return []string{"10.0.0.1", "10.0.0.2", "::1", "10.0.0.1", "10.0.0.3"}, nil
		}
		return nil, errors.New("no such host")
	}
	self := netip.MustParseAddrPort("10.0.0.2:7946")
	got, err := resolveSeeds(context.Background(), []string{"fed.svc:7946", "10.0.0.9:7000", "gone.svc:7946"}, lookup, self)
	want := []string{"10.0.0.1:7946", "10.0.0.3:7946", "10.0.0.9:7000"}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("resolveSeeds = %v, %v; want %v (every address, not itself nor IPv6, no repeats)", got, err, want)
	}
	if _, err := resolveSeeds(context.Background(), []string{"gone.svc:7946"}, lookup, self); !errors.Is(err, ErrSeedsUnreachable) {
		t.Errorf("only an unresolvable seed: %v, want ErrSeedsUnreachable", err)
	}
	if _, err := resolveSeeds(context.Background(), []string{"fed.svc"}, lookup, self); err == nil {
		t.Error("a seed without a port was accepted")
	}
	// The system resolver: localhost is this host.
	got, err = resolveSeeds(context.Background(), []string{"localhost:7946"}, nil, netip.MustParseAddrPort("127.0.0.1:1"))
	if err != nil || !slices.Contains(got, "127.0.0.1:7946") {
		t.Errorf("localhost resolved to %v, %v; want 127.0.0.1:7946 among them", got, err)
	}
}

// TestSeedNameManyAddresses: a node joins through one DNS name that
// resolves to every member (a headless service), itself included, and
// reaches all of them.
func TestSeedNameManyAddresses(t *testing.T) {
	ips := []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"}
	port := freePortOn(t, ips)
	lookup := func(_ context.Context, host string) ([]string, error) {
		if host != "fed.headless.svc" {
			return nil, errors.New("no such host")
		}
		return ips, nil
	}
	h := newHarness(t, 2, func(i int, c *Config) {
		c.BindAddr, c.BindPort = ips[i], port
	})
	// The third node's only seed is the name; the second node did not
	// join through it, so the third must reach both through it.
	n, err := h.start(2, func(i int, c *Config) {
		c.BindAddr, c.BindPort = ips[2], port
		c.Seeds = []string{net.JoinHostPort("fed.headless.svc", strconv.Itoa(port))}
		c.LookupHost = lookup
	})
	if err != nil {
		t.Fatalf("joining through the name: %v", err)
	}
	h.waitMembers(3)
	if got := len(n.Members()); got != 3 {
		t.Errorf("the node joined through the name sees %d members, want 3", got)
	}
}

// freePortOn returns a port free for TCP and UDP on every one of ips.
func freePortOn(t *testing.T, ips []string) int {
	t.Helper()
	for range 50 {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		free := true
		for _, ip := range ips {
			addr := net.JoinHostPort(ip, strconv.Itoa(port))
			tl, err := net.Listen("tcp4", addr)
			if err != nil {
				free = false
				break
			}
			tl.Close()
			ul, err := net.ListenPacket("udp4", addr)
			if err != nil {
				free = false
				break
			}
			ul.Close()
		}
		if free {
			return port
		}
	}
	t.Skip("no port free on every loopback address")
	return 0
}
