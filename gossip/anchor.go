package gossip

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// Anchors are the founding daemon's members of the federations it
// founds. Daemons that share one list of seeds (serve -seeds) agree on
// one of them, the first seed, as the founding daemon: it alone founds
// agreement logs. A join that reaches its Mux for a federation of which
// it has no member (a daemon's client creates, joins or asks about a
// federation) makes it start an anchor: a member without a federate
// that joins the federation through the other seeds when one of them
// has a member of it, and founds the federation's agreement log when
// none has. The anchor stays while the federation exists, so the
// federation is found at the founding daemon whichever daemons its
// federates use, and it leaves when the federation is destroyed, or
// soon after it started when no federation was created in its log.
//
// Why one founder is enough: a log is founded only by an anchor, an
// anchor only on the founding daemon's Mux, and the Mux asks for one
// federation's anchor one call at a time; while an anchor of a
// federation runs, joins go to it. So two clients that create a
// federation at once, on any daemons, reach one log, and its agreement
// lets one creation succeed (the other gets ErrFederationExists). See
// docs/agreement.md, "Daemons: who founds".
type Anchors struct {
	tmpl  Config
	log   zerolog.Logger
	mu    sync.Mutex
	m     map[string]*anchor // the anchor of each federation
	all   []*anchor          // every anchor not closed yet, leaving ones too
	close bool
	wg    sync.WaitGroup
}

type anchor struct {
	c    *Cluster
	done chan struct{}
}

// anchorIdle is how long an anchor whose log holds no federation stays,
// alone, before it leaves.
const anchorIdle = 30 * time.Second

// NewAnchors returns the anchors of the federations founded on tmpl.Mux
// (required): each starts with tmpl (its key, profile, timeouts, logger)
// for its federation, tmpl.Seeds being the other daemons. It registers
// itself as the Mux's MuxConfig.Missing hook.
func NewAnchors(tmpl Config) *Anchors {
	a := &Anchors{tmpl: tmpl, log: tmpl.Logger.With().Str("component", "anchors").Logger(), m: map[string]*anchor{}}
	tmpl.Mux.setMissing(a.missing)
	return a
}

// Federations returns the federations anchored here now.
func (a *Anchors) Federations() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for f := range a.m {
		out = append(out, f)
	}
	return out
}

// Executions returns the federation executions that exist in the
// anchors' logs now (created, not destroyed), sorted by name.
func (a *Anchors) Executions() []FederationInfo {
	a.mu.Lock()
	cs := make([]*Cluster, 0, len(a.m))
	for _, an := range a.m {
		cs = append(cs, an.c)
	}
	a.mu.Unlock()
	var out []FederationInfo
	for _, c := range cs {
		if fi, ok := c.Federation(); ok {
			out = append(out, fi)
		}
	}
	slices.SortFunc(out, func(x, y FederationInfo) int { return strings.Compare(x.Name, y.Name) })
	return out
}

// missing starts the anchor of federation (Mux's Missing hook).
func (a *Anchors) missing(federation string) {
	a.mu.Lock()
	if a.close || a.m[federation] != nil {
		a.mu.Unlock()
		return
	}
	a.mu.Unlock()
	cfg := a.tmpl
	cfg.Federation = federation
	cfg.NodeName = ""
	if err := cfg.Validate(); err != nil {
		a.log.Warn().Err(err).Str("federation", federation).Msg("no anchor")
		return
	}
	tm := profileTimings(cfg.Profile)
	c, err := a.join(cfg, tm)
	if errors.Is(err, ErrSeedsUnreachable) {
		// No other daemon has a member of it: found its log here.
		cfg.Seeds = nil
		c, err = Start(context.Background(), cfg)
		if err == nil {
			a.log.Info().Str("federation", federation).Msg("founded the federation's agreement log")
		}
	}
	if err != nil {
		a.log.Warn().Err(err).Str("federation", federation).Msg("could not anchor the federation")
		return
	}
	an := &anchor{c: c, done: make(chan struct{})}
	a.mu.Lock()
	if a.close {
		a.mu.Unlock()
		c.Close()
		return
	}
	a.m[federation] = an
	a.all = append(a.all, an)
	a.wg.Add(1)
	a.mu.Unlock()
	go a.watch(federation, an)
}

// join starts the anchor as a member of federation's existing log
// through the other seeds; ErrSeedsUnreachable when none has a member.
func (a *Anchors) join(cfg Config, tm timings) (*Cluster, error) {
	var others []string
	for _, s := range cfg.Seeds {
		if !cfg.Mux.IsSelf(s) {
			others = append(others, s)
		}
	}
	if len(others) == 0 {
		return nil, ErrSeedsUnreachable
	}
	cfg.Seeds = others
	// A seed that does not answer is tried again within a short budget:
	// the joiner whose stream asked for this anchor is waiting.
	ctx, cancel := context.WithTimeout(context.Background(), 2*tm.opTimeout/5)
	defer cancel()
	return Start(ctx, cfg)
}

// watch drains the anchor's events and closes it when its federation is
// destroyed, or when its log, alone, holds no federation for anchorIdle.
func (a *Anchors) watch(federation string, an *anchor) {
	defer a.wg.Done()
	c := an.c
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	idleSince := time.Now()
	stop := false
	for !stop {
		select {
		case ev, ok := <-c.Events():
			if !ok {
				stop = true
			} else if ev.Kind == EventFederationDestroyed {
				a.log.Info().Str("federation", federation).Msg("federation destroyed: the anchor leaves")
				stop = true
			}
		case now := <-tick.C:
			if _, ok := c.Federation(); ok || len(c.Members()) > 1 {
				idleSince = now
			} else if now.Sub(idleSince) > anchorIdle {
				stop = true
			}
		case <-an.done:
			stop = true
		}
	}
	// Joins go elsewhere from now on (a join of the destroyed federation
	// finds a new, empty log: "does not exist"); one already syncing
	// from this anchor gets a moment to finish.
	c.tr.accepting.Store(false)
	a.mu.Lock()
	if a.m[federation] == an {
		delete(a.m, federation)
	}
	a.mu.Unlock()
	select {
	case <-time.After(c.tm.syncWait / 5):
	case <-an.done:
	}
	c.Close()
	a.mu.Lock()
	for i, x := range a.all {
		if x == an {
			a.all = append(a.all[:i:i], a.all[i+1:]...)
			break
		}
	}
	a.mu.Unlock()
}

// Close closes every anchor (each leaves its cluster) and waits.
func (a *Anchors) Close() {
	a.mu.Lock()
	a.close = true
	for _, an := range a.all {
		close(an.done)
	}
	a.all = nil
	a.mu.Unlock()
	a.wg.Wait()
}

// IsSelf reports whether seed (host:port; the host may be a DNS name)
// names this Mux: its port, and a host that resolves to one of this
// machine's addresses (a wildcard, loopback, or an interface's).
func (m *Mux) IsSelf(seed string) bool {
	host, sport, err := net.SplitHostPort(seed)
	if err != nil {
		return false
	}
	port, err := strconv.Atoi(sport)
	if err != nil || port != m.advPort {
		return false
	}
	var ips []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		ips = append(ips, a)
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		hs, err := net.DefaultResolver.LookupHost(ctx, host)
		cancel()
		if err != nil {
			return false
		}
		for _, h := range hs {
			if a, err := netip.ParseAddr(h); err == nil {
				ips = append(ips, a)
			}
		}
	}
	local := localAddrs()
	bound, _ := netip.ParseAddr(m.cfg.BindAddr)
	adv, _ := netip.AddrFromSlice(m.advIP)
	for _, ip := range ips {
		ip = ip.Unmap()
		switch {
		case ip == adv.Unmap(), ip == bound.Unmap():
			return true
		case bound.IsUnspecified() && (ip.IsLoopback() || local[ip]):
			return true
		}
	}
	return false
}

// localAddrs returns this machine's interface addresses.
func localAddrs() map[netip.Addr]bool {
	out := map[netip.Addr]bool{}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return out
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(ipn.IP); ok {
				out[ip.Unmap()] = true
			}
		}
	}
	return out
}
