package gossip

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
)

// resolveSeeds turns Config.Seeds into the addresses to join through:
// a seed whose host is an IP address stays as it is; a DNS name is
// resolved with lookup and every address it resolves to becomes a seed
// (a Kubernetes headless service names every pod of a StatefulSet), in
// the order the resolver gave. Addresses of the other IP family than
// this node's bind address are left out (they cannot be reached from its
// socket), and so is this node's own address: every pod resolves the
// service to itself too. Repeats are dropped. A name that does not
// resolve is an error unless another seed is left.
func resolveSeeds(ctx context.Context, seeds []string, lookup func(context.Context, string) ([]string, error), self netip.AddrPort) ([]string, error) {
	if lookup == nil {
		lookup = net.DefaultResolver.LookupHost
	}
	v4 := !self.Addr().IsValid() || self.Addr().Unmap().Is4()
	var out []string
	var errs []error
	add := func(a netip.Addr, port uint16) {
		a = a.Unmap()
		if a.Is4() != v4 {
			return
		}
		ap := netip.AddrPortFrom(a, port)
		if ap == self {
			return
		}
		if s := ap.String(); !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, s := range seeds {
		host, sport, err := net.SplitHostPort(s)
		if err != nil {
			return nil, fmt.Errorf("gossip: seed %q: %w", s, err)
		}
		port, err := strconv.ParseUint(sport, 10, 16)
		if err != nil {
			return nil, fmt.Errorf("gossip: seed %q: bad port: %w", s, err)
		}
		if a, err := netip.ParseAddr(host); err == nil {
			add(a, uint16(port))
			continue
		}
		hosts, err := lookup(ctx, host)
		if err != nil {
			errs = append(errs, fmt.Errorf("seed %q: %w", s, err))
			continue
		}
		for _, h := range hosts {
			if a, err := netip.ParseAddr(h); err == nil {
				add(a, uint16(port))
			}
		}
	}
	if len(out) == 0 && len(errs) > 0 {
		return nil, fmt.Errorf("%w: %v", ErrSeedsUnreachable, errs)
	}
	return out, nil
}
