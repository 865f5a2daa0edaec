package lbts

import (
	"fmt"
	"testing"
)

// BenchmarkGrantCycle measures full grant cycles of the pure core in one
// process: every node is regulating and constrained, and in each cycle
// every node sends one TSO message and asks to advance by 1, and the
// cluster exchanges Messages (first in, first out) until every node is
// granted. grants/s counts grants summed over all nodes; msgs/grant the
// control Messages delivered per grant.
//
//   - TAR/lookahead=1: TAR(time+1), message at time+2. Promises alone
//     grant it (the fast path).
//   - NMR/lookahead=0: message at time+1, then NMR(time+1). Every node
//     has its peers' messages at time+1 next; only the consistent cut
//     can grant it.
func BenchmarkGrantCycle(b *testing.B) {
	for _, mode := range []struct {
		name      string
		kind      RequestKind
		lookahead float64
	}{
		{"TAR/lookahead=1", TimeAdvanceRequest, 1},
		{"NMR/lookahead=0", NextMessageRequest, 0},
	} {
		for _, n := range []int{2, 8, 16} {
			b.Run(fmt.Sprintf("%s/nodes=%d", mode.name, n), func(b *testing.B) {
				benchCycle(b, n, mode.kind, mode.lookahead)
			})
		}
	}
}

func benchCycle(b *testing.B, n int, kind RequestKind, lookahead float64) {
	c := newCluster()
	for i := 1; i <= n; i++ {
		c.add(FederateID(i), 0, 1)
	}
	for _, id := range c.ids() {
		s := c.nodes[id]
		s.n.EnableRegulation(lookahead)
		s.n.EnableConstrained()
	}
	c.stabilize()
	nodes := make([]*simNode, 0, n)
	for _, id := range c.ids() {
		if !c.nodes[id].n.Regulating() || !c.nodes[id].n.Constrained() {
			b.Fatalf("node %d did not enable", id)
		}
		nodes = append(nodes, c.nodes[id])
	}
	ctrl := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, s := range nodes {
			t := s.n.Time() + 1
			if kind == TimeAdvanceRequest {
				if err := s.n.Request(kind, t); err != nil {
					b.Fatal(err)
				}
				if err := c.send(s.id, 1, t+lookahead, false); err != nil {
					b.Fatal(err)
				}
				continue
			}
			if err := c.send(s.id, 1, t, false); err != nil {
				b.Fatal(err)
			}
			if err := s.n.Request(kind, t); err != nil {
				b.Fatal(err)
			}
		}
		for _, p := range c.inflight {
			if p.ctrl != nil {
				ctrl++
			}
		}
		ctrl += c.stabilizeCounting()
	}
	b.StopTimer()
	for _, s := range nodes {
		if s.grants != b.N {
			b.Fatalf("node %d: %d grants in %d cycles", s.id, s.grants, b.N)
		}
		if s.time != float64(b.N) {
			b.Fatalf("node %d: time %v after %d cycles", s.id, s.time, b.N)
		}
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "grants/s")
	b.ReportMetric(float64(ctrl)/float64(b.N*n), "msgs/grant")
}

// BenchmarkReceived is the time core's share of every reliable message a
// federate receives: Received on a stream, in order, as a stream of
// updates from one sender delivers them.
func BenchmarkReceived(b *testing.B) {
	n, err := New(Config{Self: 1})
	if err != nil {
		b.Fatal(err)
	}
	n.AddFederate(2)
	n.AddFederate(3)
	b.ReportAllocs()
	for i := range b.N {
		n.Received(2, 7, uint64(i+1))
	}
}
