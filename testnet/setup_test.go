package testnet

import (
	"context"
	"testing"

	"github.com/meshrti/meshrti/peer"
)

// enableAll makes every federate of c time-regulating (lookahead 1) and
// time-constrained. All ask at once, then all wait: each enable waits for
// every other member's acknowledgement.
func enableAll(t testing.TB, ctx context.Context, c *Cluster) {
	t.Helper()
	for _, f := range c.Feds {
		must(t, f.EnableTimeRegulation(peer.Float64Time(1)))
	}
	for i := range c.Feds {
		must(t, c.Logs[i].WaitFor(ctx, Has[peer.TimeRegulationEnabled]()))
	}
	for _, f := range c.Feds {
		must(t, f.EnableTimeConstrained())
	}
	for i := range c.Feds {
		must(t, c.Logs[i].WaitFor(ctx, Has[peer.TimeConstrainedEnabled]()))
	}
}

// registerAll registers one Aircraft per federate and waits until every
// federate has discovered all the others'.
func registerAll(t testing.TB, ctx context.Context, c *Cluster, h fomHandles) []peer.ObjectInstanceHandle {
	t.Helper()
	objs := make([]peer.ObjectInstanceHandle, len(c.Feds))
	for i, f := range c.Feds {
		var err error
		objs[i], err = f.RegisterObjectInstance(h.aircraft, "")
		must(t, err)
	}
	for i := range c.Feds {
		must(t, c.Logs[i].WaitFor(ctx, count[peer.DiscoverObjectInstance](len(c.Feds)-1)))
	}
	return objs
}
