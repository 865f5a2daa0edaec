package testnet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/transport"
)

// ownRun sizes one run of the ownership fault test.
type ownRun struct {
	seed          int64
	feds          int // federates; the first registrars register the instances
	registrars    int
	instances     int // per registrar; two attributes each
	rounds        int
	deterministic bool
}

// TestOwnershipUnderFaults has 16 federates acquire 100 attributes (50
// instances, Position and Status) at random over a network that loses
// 5% of packets, while two owners crash and a partition cuts the
// federation in two and heals. Owners release what they are asked for,
// sometimes at once, sometimes a round later, and update what they own.
// Then it checks that every acquisition completed or was refused, that
// the crashed owners' attributes were acquired again, that at most one
// live federate owns each attribute and all agree which, and that the
// trace shows at most one owner per attribute and epoch, epochs that
// only grow, and no stale update reflected (CheckTraceReport). A
// failure names its seed; -seed=N replays it (deterministic).
func TestOwnershipUnderFaults(t *testing.T) {
	seed := int64(7)
	if *seedFlag != 0 {
		seed = *seedFlag
	}
	if *seedsFlag > 0 {
		for i := 0; i < *seedsFlag; i++ {
			s := rand.Int63n(1 << 30)
			t.Run(fmt.Sprint("seed=", s), func(t *testing.T) {
				runOwnership(t, ownRun{seed: s, feds: 16, registrars: 5, instances: 10, rounds: 60, deterministic: true})
			})
			if t.Failed() {
				return
			}
		}
		return
	}
	runOwnership(t, ownRun{seed: seed, feds: 16, registrars: 5, instances: 10, rounds: 60, deterministic: true})
}

// TestOwnershipUnderFaultsRealTime is the same run with every federate
// on its own goroutines, in real time.
func TestOwnershipUnderFaultsRealTime(t *testing.T) {
	if testing.Short() {
		t.Skip("real-time fault run: not in -short")
	}
	runOwnership(t, ownRun{seed: 11, feds: 16, registrars: 5, instances: 10, rounds: 60})
}

// ownToken is one (instance, attribute).
type ownToken struct {
	obj  peer.ObjectInstanceHandle
	attr peer.AttributeHandle
}

func runOwnership(t *testing.T, r ownRun) {
	logSeedOnFailure(t, r.seed, r.feds, r.rounds)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var trace bytes.Buffer
	cfg := Config{
		Federates: r.feds, Seed: r.seed, Tick: 5 * time.Millisecond,
		Faults: transport.Faults{Loss: 0.05},
		Trace:  peer.NewTraceWriter(&trace),
	}
	c := mustStart(t, ctx, cfg, r.deterministic)
	defer c.Close()
	rng := rand.New(rand.NewSource(r.seed))
	h := lookup(t, c.Feds[0])
	attrs := []peer.AttributeHandle{h.position, h.status}
	for _, f := range c.Feds {
		must(t, f.PublishObjectClassAttributes(h.aircraft, attrs...))
		must(t, f.SubscribeObjectClassAttributes(h.aircraft, attrs...))
	}
	var tokens []ownToken
	for i := 0; i < r.registrars; i++ {
		for k := 0; k < r.instances; k++ {
			obj, err := c.Feds[i].RegisterObjectInstance(h.aircraft, "")
			must(t, err)
			for _, a := range attrs {
				tokens = append(tokens, ownToken{obj, a})
			}
		}
	}
	all := r.registrars * r.instances
	for i := range c.Feds {
		own := 0
		if i < r.registrars {
			own = r.instances
		}
		if err := c.Logs[i].WaitFor(ctx, count[peer.DiscoverObjectInstance](all-own)); err != nil {
			t.Fatalf("F%d: discovery: %v", i, err)
		}
	}

	n := len(c.Feds)
	alive := make([]bool, n)
	for i := range alive {
		alive[i] = true
	}
	read := make([]int, n) // events read per federate
	type pendingKey struct {
		fed int
		tok ownToken
	}
	pending := map[pendingKey]bool{}    // acquisitions not yet answered: true if plain (cancellable)
	orphanWant := map[pendingKey]bool{} // the crashed owners' attributes acquired: they must come
	var releases []pendingKey           // release requests an owner answers next round
	acquired, refused, requested, updates, cancelled := 0, 0, 0, 0, 0
	// end ends acquisition k by one callback: a second one is a bug.
	end := func(k pendingKey, what string) {
		if _, ok := pending[k]; !ok {
			t.Errorf("F%d: %s of %v %s, which it was not acquiring", k.fed, what, k.tok.obj, attrName(h, k.tok.attr))
		}
		delete(pending, k)
	}
	owned := func(i int, tk ownToken) bool {
		ok, err := c.Feds[i].IsAttributeOwnedByFederate(tk.obj, tk.attr)
		if err != nil {
			t.Fatalf("F%d: IsAttributeOwnedByFederate: %v", i, err)
		}
		return ok
	}
	release := func(i int, tk ownToken) {
		if !alive[i] || !owned(i, tk) {
			return
		}
		if _, err := c.Feds[i].AttributeOwnershipDivestitureIfWanted(tk.obj, tk.attr); err != nil {
			t.Fatalf("F%d: divest: %v", i, err)
		}
	}
	// react reads every live federate's new events: release requests
	// are answered at once or next round; notifications and refusals
	// end acquisitions.
	react := func() {
		for i := range c.Feds {
			if !alive[i] {
				continue
			}
			evs := c.Logs[i].Events()
			for _, ev := range evs[read[i]:] {
				switch ev := ev.(type) {
				case peer.RequestAttributeOwnershipRelease:
					for _, a := range ev.Attributes {
						tk := ownToken{ev.Object, a}
						if rng.Intn(2) == 0 {
							release(i, tk)
						} else {
							releases = append(releases, pendingKey{i, tk})
						}
					}
				case peer.AttributeOwnershipAcquisitionNotification:
					for _, a := range ev.Attributes {
						k := pendingKey{i, ownToken{ev.Object, a}}
						end(k, "acquisition notification")
						delete(orphanWant, k)
						acquired++
					}
				case peer.AttributeOwnershipUnavailable:
					for _, a := range ev.Attributes {
						end(pendingKey{i, ownToken{ev.Object, a}}, "unavailable")
						refused++
					}
				case peer.ConfirmAttributeOwnershipAcquisitionCancellation:
					for _, a := range ev.Attributes {
						end(pendingKey{i, ownToken{ev.Object, a}}, "cancellation")
						cancelled++
					}
				}
			}
			read[i] = len(evs)
		}
	}
	acquire := func(i int, tk ownToken, ifAvailable bool) {
		k := pendingKey{i, tk}
		if _, ok := pending[k]; ok || owned(i, tk) {
			return
		}
		var err error
		if ifAvailable {
			err = c.Feds[i].AttributeOwnershipAcquisitionIfAvailable(tk.obj, tk.attr)
		} else {
			err = c.Feds[i].AttributeOwnershipAcquisition(tk.obj, []byte(fmt.Sprint("F", i)), tk.attr)
		}
		if err != nil {
			t.Fatalf("F%d: acquire %v: %v", i, tk, err)
		}
		pending[k] = !ifAvailable
		requested++
	}
	// cancelOne withdraws one of the plain acquisitions pending, at random.
	cancelOne := func() {
		var ks []pendingKey
		for k, plain := range pending {
			if plain && alive[k.fed] {
				ks = append(ks, k)
			}
		}
		if len(ks) == 0 {
			return
		}
		slices.SortFunc(ks, func(x, y pendingKey) int {
			if x.fed != y.fed {
				return x.fed - y.fed
			}
			return compareTokens(x.tok, y.tok)
		})
		k := ks[rng.Intn(len(ks))]
		err := c.Feds[k.fed].CancelAttributeOwnershipAcquisition(k.tok.obj, k.tok.attr)
		if errors.Is(err, peer.ErrAttributeAlreadyOwned) {
			return // it came meanwhile (real time): its notification follows
		}
		if err != nil {
			t.Fatalf("F%d: cancel: %v", k.fed, err)
		}
		pending[k] = false // not twice
	}
	crashAt, cutAt, healAt := r.rounds/3, r.rounds/2, r.rounds*3/4
	crashed := []int{r.feds - 1, r.feds - 2} // never registrars
	var orphans []ownToken                   // what the crashed owners held
	for round := 0; round < r.rounds; round++ {
		react()
		later := releases
		releases = nil
		for _, k := range later {
			release(k.fed, k.tok)
		}
		switch round {
		case crashAt:
			for _, i := range crashed {
				for _, tk := range tokens {
					if owned(i, tk) {
						orphans = append(orphans, tk)
					}
				}
				for k := range pending {
					if k.fed == i {
						delete(pending, k)
					}
				}
				alive[i] = false
				c.Crash(i)
			}
			// Every orphan is wanted by someone alive: it must come back.
			for j, tk := range orphans {
				for d := range n {
					i := (j + d) % n
					k := pendingKey{i, tk}
					if _, busy := pending[k]; busy || !alive[i] || owned(i, tk) {
						continue
					}
					acquire(i, tk, false)
					pending[k] = false // never cancelled
					orphanWant[k] = true
					break
				}
			}
		case cutAt:
			c.Net.Partition(c.evenOdd())
		case healAt:
			c.Net.Heal()
		}
		for k := 0; k < 6; k++ {
			i := rng.Intn(n)
			if !alive[i] {
				continue
			}
			acquire(i, tokens[rng.Intn(len(tokens))], rng.Intn(4) == 0)
		}
		if rng.Intn(2) == 0 {
			cancelOne()
		}
		// Owners update some of what they own: fencing at work.
		for k := 0; k < 4; k++ {
			i := rng.Intn(n)
			if !alive[i] {
				continue
			}
			for _, tk := range tokens {
				if !owned(i, tk) {
					continue
				}
				err := c.Do(func() error {
					return c.Feds[i].UpdateAttributeValues(tk.obj, peer.AttributeValues{tk.attr: []byte(fmt.Sprint("r", round))}, nil)
				})
				if err != nil && !errors.Is(err, peer.ErrAttributeNotOwned) {
					t.Fatalf("F%d: update: %v", i, err)
				}
				updates++
			}
		}
		c.Sleep(20 * time.Millisecond)
	}
	if c.sim == nil {
		c.Net.Heal()
	}
	// No new acquisitions: every pending one must now end.
	deadline := time.Now().Add(2 * time.Minute)
	for waited := 0; len(pending) > 0 || len(releases) > 0; waited++ {
		if (c.sim != nil && waited > 3000) || time.Now().After(deadline) {
			var left []string
			for k := range pending {
				var owners []int
				for i := range c.Feds {
					if alive[i] && owned(i, k.tok) {
						owners = append(owners, i)
					}
				}
				left = append(left, fmt.Sprintf("F%d:%v/%s (owned by %v, orphan %v)", k.fed, k.tok.obj, attrName(h, k.tok.attr), owners, slices.Contains(orphans, k.tok)))
			}
			slices.Sort(left)
			if p := os.Getenv("MESHRTI_OWNERSHIP_TRACE"); p != "" {
				c.Close()
				_ = os.WriteFile(p, trace.Bytes(), 0o644)
			}
			t.Fatalf("%d acquisitions never completed nor were refused: %v", len(pending), left[:min(len(left), 10)])
		}
		react()
		later := releases
		releases = nil
		for _, k := range later {
			release(k.fed, k.tok)
		}
		c.Sleep(20 * time.Millisecond)
	}
	// At most one live owner per attribute, and every live federate
	// names the same one.
	for _, tk := range tokens {
		var owners []int
		for i := range c.Feds {
			if alive[i] && owned(i, tk) {
				owners = append(owners, i)
			}
		}
		if len(owners) > 1 {
			t.Errorf("%v %s: owned by %v", tk.obj, attrName(h, tk.attr), owners)
		}
	}
	for k := range orphanWant {
		t.Errorf("F%d never acquired %v %s, which its crashed owner held", k.fed, k.tok.obj, attrName(h, k.tok.attr))
	}
	if acquired < 50 {
		t.Errorf("only %d acquisitions completed (of %d requested)", acquired, requested)
	}
	c.Close()
	if p := os.Getenv("MESHRTI_OWNERSHIP_TRACE"); p != "" {
		if err := os.WriteFile(p, trace.Bytes(), 0o644); err != nil {
			t.Error(err)
		}
	}
	rep, err := CheckTraceReport(&trace)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range rep.Violations[:min(len(rep.Violations), 20)] {
		t.Error(v)
	}
	if rep.Owners == 0 {
		t.Error("the trace has no owner lines")
	}
	t.Logf("seed %d: %d acquisitions requested, %d completed, %d refused, %d cancelled, %d orphans re-acquired, %d updates; trace: %d lines, %d owner lines, %d deliveries",
		r.seed, requested, acquired, refused, cancelled, len(orphans), updates, rep.Lines, rep.Owners, rep.Deliveries)
}

// attrName names Position and Status for messages.
func attrName(h fomHandles, a peer.AttributeHandle) string {
	switch a {
	case h.position:
		return "Position"
	case h.status:
		return "Status"
	}
	return fmt.Sprint(a)
}

// compareTokens orders tokens by instance, then attribute.
func compareTokens(x, y ownToken) int {
	if x.obj.Federate != y.obj.Federate {
		return int(x.obj.Federate) - int(y.obj.Federate)
	}
	if x.obj.Serial != y.obj.Serial {
		if x.obj.Serial < y.obj.Serial {
			return -1
		}
		return 1
	}
	if x.attr < y.attr {
		return -1
	}
	if x.attr > y.attr {
		return 1
	}
	return 0
}
