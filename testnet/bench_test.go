package testnet

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/meshrti/meshrti/peer"
)

// BenchmarkGrants measures time-advance grants per second per federate:
// n federates, all regulating (lookahead 1) and constrained, advance in
// lock step over the in-memory network; one op is one step of all of
// them.
func BenchmarkGrants(b *testing.B) {
	for _, n := range []int{2, 8} {
		b.Run(fmt.Sprintf("federates=%d", n), func(b *testing.B) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			c, err := Start(ctx, Config{Federates: n, Seed: 1, Tick: time.Millisecond})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			for i, f := range c.Feds {
				must(b, f.EnableTimeRegulation(peer.Float64Time(1)))
				must(b, c.Logs[i].WaitFor(ctx, Has[peer.TimeRegulationEnabled]()))
				must(b, f.EnableTimeConstrained())
				must(b, c.Logs[i].WaitFor(ctx, Has[peer.TimeConstrainedEnabled]()))
			}
			b.ResetTimer()
			start := time.Now()
			for k := 1; k <= b.N; k++ {
				for _, f := range c.Feds {
					must(b, f.TimeAdvanceRequest(peer.Float64Time(float64(k))))
				}
				for i := range c.Feds {
					must(b, c.Logs[i].WaitFor(ctx, Granted(float64(k))))
				}
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "grants/s/federate")
		})
	}
}
