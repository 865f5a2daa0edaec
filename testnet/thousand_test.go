package testnet

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/meshrti/meshrti/peer"
)

// TestThousandFederates is the 1,000-federate run of docs/testing.md:
// MESHRTI_THOUSAND=1 joins 1,000 federates in this process over the
// in-memory network, makes 10 of them regulating (lookahead 1) and all
// of them constrained, advances all of them 100 time steps (TAR(k), every
// federate granted k before anyone asks for k+1), checks the invariants
// every 10 steps and at the end, and resigns them all. It logs the wall
// time of each phase and the memory per federate (Go heap in use, and
// what the process took from the system, divided by the federates).
// MESHRTI_THOUSAND_FEDERATES, MESHRTI_THOUSAND_STEPS and
// MESHRTI_THOUSAND_REGULATORS change the size (every federate regulating
// costs O(n³) deliveries to enable: see docs/testing.md).
// Not in the default run: it takes minutes.
func TestThousandFederates(t *testing.T) {
	if os.Getenv("MESHRTI_THOUSAND") == "" {
		t.Skip("set MESHRTI_THOUSAND=1 to run (minutes)")
	}
	n, steps := 1000, 100
	if v, err := strconv.Atoi(os.Getenv("MESHRTI_THOUSAND_FEDERATES")); err == nil && v > 1 {
		n = v
	}
	if v, err := strconv.Atoi(os.Getenv("MESHRTI_THOUSAND_STEPS")); err == nil && v > 0 {
		steps = v
	}
	regs, wave := min(n, 10), 100
	if v, err := strconv.Atoi(os.Getenv("MESHRTI_THOUSAND_WAVE")); err == nil && v > 0 {
		wave = v
	}
	if v, err := strconv.Atoi(os.Getenv("MESHRTI_THOUSAND_REGULATORS")); err == nil && v > 0 {
		regs = min(n, v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Minute)
	defer cancel()
	mem := func() (heap, sys uint64) {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapInuse, ms.Sys
	}
	heap0, sys0 := mem()
	var c *Cluster
	start := time.Now()
	phase := start
	lap := func(what string) {
		heap, sys := mem()
		now := time.Now()
		t.Logf("%s in %v (%v in all, virtual %v): heap %.0f KiB per federate, %.0f KiB taken from the system per federate; frames %s",
			what, now.Sub(phase).Round(time.Millisecond), now.Sub(start).Round(time.Millisecond), c.Now().Round(time.Millisecond),
			float64(heap-min(heap, heap0))/1024/float64(n), float64(sys-min(sys, sys0))/1024/float64(n), frameCounts(c))
		phase = now
	}
	// A 20 ms tick: a thousand federates ticking every 2 ms would spend
	// the machine on their timers.
	cfg := Config{Federates: n, Seed: 1000, Tick: thousandTick()}
	if deterministicEnv() && n > maxDeterministicThousand {
		// The virtual network has latency but no bandwidth, and the
		// federates no processing time: the enable storm of a wave is
		// in flight all at once (1.3 GB for 200 federates; 1,000
		// exhausted this machine's 24 GiB).
		t.Fatalf("MESHRTI_DETERMINISTIC runs at most %d federates here (the enable storm is all in flight at once in virtual time); the concurrent run takes 1,000", maxDeterministicThousand)
	}
	c = mustStart(t, ctx, cfg, deterministicEnv())
	defer c.Close()
	lap("joined")
	// The first regs federates regulate (lookahead 1); all are
	// constrained, so every grant waits for the regulators' promises.
	for _, f := range c.Feds[:regs] {
		must(t, f.EnableTimeRegulation(peer.Float64Time(1)))
	}
	for i := range regs {
		must(t, c.Logs[i].WaitFor(ctx, Has[peer.TimeRegulationEnabled]()))
	}
	// In waves: every pending request is acknowledged in every member's
	// next broadcast state, so n requests at once cost n³ deliveries,
	// and the storm overflows the receive queues (see docs/testing.md).
	for lo := 0; lo < n; lo += wave {
		hi := min(n, lo+wave)
		for _, f := range c.Feds[lo:hi] {
			must(t, f.EnableTimeConstrained())
		}
		for i := lo; i < hi; i++ {
			must(t, c.Logs[i].WaitFor(ctx, Has[peer.TimeConstrainedEnabled]()))
		}
	}
	lap(fmt.Sprintf("%d regulating, all constrained (in waves of %d)", regs, wave))
	ch := NewChecker(c.Logs, true)
	for k := 1; k <= steps; k++ {
		for _, f := range c.Feds {
			must(t, f.TimeAdvanceRequest(peer.Float64Time(float64(k))))
		}
		for i := range c.Feds {
			if err := c.Logs[i].WaitFor(ctx, Granted(float64(k))); err != nil {
				t.Fatalf("step %d: F%d: %v", k, i, err)
			}
		}
		if k%10 == 0 || k == steps {
			if vs := ch.Check(); len(vs) > 0 {
				for _, v := range vs {
					t.Error(v)
				}
				t.Fatalf("invariants broken at step %d", k)
			}
			t.Logf("step %d after %v", k, time.Since(phase).Round(time.Millisecond))
		}
	}
	lap(strconv.Itoa(steps) + " steps")
	// All at once, as a federation ends: each resign lingers a few ticks
	// for repairs of its last messages.
	errs := make(chan error, n)
	for _, f := range c.Feds {
		if c.sim != nil {
			// A manual federate resigns at once, without lingering.
			errs <- f.ResignFederationExecution(ctx, peer.NoAction)
			continue
		}
		go func() { errs <- f.ResignFederationExecution(ctx, peer.NoAction) }()
	}
	for range c.Feds {
		if err := <-errs; err != nil {
			t.Fatalf("resign: %v", err)
		}
	}
	lap("resigned")
	st := c.Net.Stats()
	t.Logf("%d federates, %d steps: %v; network %+v", n, steps, time.Since(start).Round(time.Millisecond), st)
	if c.sim != nil {
		t.Logf("deterministic: virtual time %v, %d simulation events", c.Now(), c.sim.events)
	}
}

// maxDeterministicThousand bounds the deterministic thousand run (see
// TestThousandFederates).
const maxDeterministicThousand = 300

// deterministicEnv reports whether MESHRTI_DETERMINISTIC asks the
// long runs (thousand, scale) to run deterministically in virtual time
// (Config.Deterministic) instead of on goroutines.
func deterministicEnv() bool {
	return os.Getenv("MESHRTI_DETERMINISTIC") != ""
}

func thousandTick() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("MESHRTI_THOUSAND_TICK")); err == nil && d > 0 {
		return d
	}
	return 20 * time.Millisecond
}
