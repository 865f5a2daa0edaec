package lbts

import (
	"fmt"
	"testing"
)

// BenchmarkGrantCycle measures full grant cycles in one process: every
// node is regulating (lookahead 1) and constrained, and in each cycle
// every node requests time + 1, sends one TSO message, and the cluster
// exchanges promises (first in, first out) until every node is granted.
// grants/s counts grants summed over all nodes.
func BenchmarkGrantCycle(b *testing.B) {
	for _, n := range []int{2, 8} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			c := newCluster()
			for i := 1; i <= n; i++ {
				c.add(FederateID(i), 0, 1)
			}
			for _, id := range c.ids() {
				s := c.nodes[id]
				s.n.EnableRegulation(1)
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
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for _, s := range nodes {
					t := s.n.Time() + 1
					if err := s.n.RequestAdvance(t); err != nil {
						b.Fatal(err)
					}
					if err := c.send(s.id, 1, t+1, false); err != nil {
						b.Fatal(err)
					}
				}
				c.stabilize()
			}
			b.StopTimer()
			for _, s := range nodes {
				if s.grants != b.N {
					b.Fatalf("node %d: %d grants in %d cycles", s.id, s.grants, b.N)
				}
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "grants/s")
		})
	}
}
