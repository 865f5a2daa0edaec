package gossip

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// massWaves is how many waves TestConformanceMassResign runs:
// MESHRTI_MASS_RESIGN_WAVES overrides the default 3 for a longer soak
// (docs/testing.md).
// The test runs only when that variable is set, and .ci/run sets it for
// a run of this test alone, after the suite: next to other heavy
// packages under -race, memberlist on two cores declares live members
// dead often enough that a join can wait out its timeout
// (docs/agreement.md, "A loaded machine").
func massWaves() int {
	if v, err := strconv.Atoi(os.Getenv("MESHRTI_MASS_RESIGN_WAVES")); err == nil && v > 0 {
		return v
	}
	return 0
}

// TestConformanceMassResign: 32 federates, each on
// its own node of a real cluster on 127.0.0.1, join concurrently, then
// all resign and close at once, in waves. Acceptors are among the
// leavers. No join, resign or later operation may fail, and afterwards
// the survivors agree on the log and hold no seat of a node that left.
func TestConformanceMassResign(t *testing.T) {
	if testing.Short() {
		t.Skip("32 nodes")
	}
	if massWaves() == 0 {
		t.Skip("set MESHRTI_MASS_RESIGN_WAVES=3 to run (docs/testing.md)")
	}
	const count = 32
	h := newHarness(t, 2, nil) // n0 founds; n1 stays too
	anchor := h.nodes[0]
	if err := anchor.CreateFederation(ctxT(t), FederationSpec{Name: h.fed}); err != nil {
		t.Fatal(err)
	}
	if _, err := anchor.JoinFederate(ctxT(t), JoinSpec{Name: "anchor", Type: "t"}); err != nil {
		t.Fatal(err)
	}
	seed := []string{anchor.LocalNode().Addr}
	for wave := range massWaves() {
		nodes := make([]*Cluster, count)
		errs := make(chan error, 3*count)
		var wg sync.WaitGroup
		for i := range count {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				name := fmt.Sprintf("w%d-%d", wave, i)
				cfg := h.config(0, nil)
				cfg.NodeName, cfg.Seeds = name, seed
				c, err := Start(ctx, cfg)
				if err != nil {
					errs <- fmt.Errorf("%s: start: %w", name, err)
					return
				}
				go func() {
					for range c.Events() {
					}
				}()
				nodes[i] = c
				t.Cleanup(func() { _ = c.Halt() }) // after a failure; no-op after Close
				if _, err := c.JoinFederate(ctx, JoinSpec{Name: name, Type: "t"}); err != nil {
					errs <- fmt.Errorf("%s: join: %w", name, err)
				}
			}()
		}
		wg.Wait()
		report := func() {
			for {
				select {
				case err := <-errs:
					t.Error(err)
				default:
					if t.Failed() {
						t.FailNow()
					}
					return
				}
			}
		}
		report()
		// Every roster seat may now be taken by a node about to leave.
		waitFor(t, 20*time.Second, func() bool {
			return len(anchor.Federates()) == count+1
		}, "wave %d: %d federates joined (have %v)", wave, count+1, lazy(func() string { return fmt.Sprint(len(anchor.Federates())) }))
		for i, c := range nodes {
			if c == nil {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				if err := c.ResignFederate(ctx); err != nil {
					errs <- fmt.Errorf("w%d-%d: resign: %w", wave, i, err)
				}
				if err := c.Close(); err != nil {
					errs <- fmt.Errorf("w%d-%d: close: %w", wave, i, err)
				}
			}()
		}
		wg.Wait()
		report()
		// The survivors can still decide, and agree.
		if _, _, err := anchor.Acquire(ctxT(t), fmt.Sprintf("after/%d", wave), nil); err != nil {
			t.Fatalf("wave %d: the log is stuck after the resigns: %v (roster %v)", wave, err, anchor.Roster())
		}
		if _, _, err := h.nodes[1].Acquire(ctxT(t), fmt.Sprintf("after1/%d", wave), nil); err != nil {
			t.Fatalf("wave %d: n1: %v (roster %v)", wave, err, h.nodes[1].Roster())
		}
		waitFor(t, 10*time.Second, func() bool {
			r0, r1 := anchor.Roster(), h.nodes[1].Roster()
			slices.Sort(r0)
			slices.Sort(r1)
			return slices.Equal(r0, []string{"n0", "n1"}) && slices.Equal(r1, r0) &&
				len(anchor.Federates()) == 1 && slices.Equal(anchor.Federates(), h.nodes[1].Federates())
		}, "wave %d: the survivors agree: only they are acceptors, only the anchor is joined (n0: %v %v; n1: %v %v)", wave,
			lazy(func() string { return fmt.Sprint(anchor.Roster()) }), lazy(func() string { return fmt.Sprint(anchor.Federates()) }),
			lazy(func() string { return fmt.Sprint(h.nodes[1].Roster()) }), lazy(func() string { return fmt.Sprint(h.nodes[1].Federates()) }))
	}
	// The agreement log stays consistent: both survivors applied the
	// same entries to the same state.
	waitFor(t, 10*time.Second, func() bool {
		var a, b []byte
		anchor.onLoop(func() { a = anchor.core.State().Encode() })
		h.nodes[1].onLoop(func() { b = h.nodes[1].core.State().Encode() })
		return bytes.Equal(a, b)
	}, "the survivors hold the same state")
}
