package testnet

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/meshrti/meshrti/peer"
)

// TestDDMSenderSideFiltering measures the filtering at the source: P
// publishers (default 100) each fly an aircraft whose update region is
// its position, and S subscribers (default 10) each subscribe to a square
// that covers 10% of the space. Every update is needed by the
// subscribers whose square holds its position; the ideal sends each
// needed update once and nothing else. The test counts the messages the
// publishers hand to the data plane (one per group an update goes into)
// against that ideal, and at the subscribers the values the region test
// dropped (irrelevant deliveries) against those reflected; it checks
// that every subscriber reflected exactly the updates inside its square.
// It runs deterministically; MESHRTI_DDM_PUBLISHERS,
// MESHRTI_DDM_SUBSCRIBERS and MESHRTI_DDM_ROUNDS change the size.
func TestDDMSenderSideFiltering(t *testing.T) {
	pubs, subs, rounds := 100, 10, 10
	if testing.Short() {
		pubs, subs, rounds = 20, 4, 5
	}
	for _, v := range []struct {
		env string
		p   *int
	}{{"MESHRTI_DDM_PUBLISHERS", &pubs}, {"MESHRTI_DDM_SUBSCRIBERS", &subs}, {"MESHRTI_DDM_ROUNDS", &rounds}} {
		if n, err := strconv.Atoi(os.Getenv(v.env)); err == nil && n > 0 {
			*v.p = n
		}
	}
	seed := int64(61)
	if *seedFlag != 0 {
		seed = *seedFlag
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	c := mustStart(t, ctx, Config{Federates: subs + pubs, Seed: seed, Deterministic: true, Tick: 5 * time.Millisecond, NetBuffer: 4096}, false)
	defer c.Close()
	rng := rand.New(rand.NewSource(seed))
	f0 := c.Feds[0]
	h := lookup(t, f0)
	x, err := f0.GetDimensionHandle("X")
	must(t, err)
	y, err := f0.GetDimensionHandle("Y")
	must(t, err)
	const side = 316 // a square of 316 x 316 in 1000 x 1000: 10% of the space
	type square struct{ x0, y0 uint64 }
	inside := func(s square, px, py uint64) bool {
		return px >= s.x0 && px < s.x0+side && py >= s.y0 && py < s.y0+side
	}
	region := func(f *peer.Federate, x0, x1, y0, y1 uint64) peer.RegionHandle {
		t.Helper()
		r, err := f.CreateRegion(x, y)
		must(t, err)
		must(t, f.SetRangeBounds(r, x, peer.RangeBounds{Lower: x0, Upper: x1}))
		must(t, f.SetRangeBounds(r, y, peer.RangeBounds{Lower: y0, Upper: y1}))
		must(t, f.CommitRegionModifications(r))
		return r
	}
	squares := make([]square, subs)
	for i := range subs {
		s := square{uint64(rng.Intn(1000 - side)), uint64(rng.Intn(1000 - side))}
		squares[i] = s
		r := region(c.Feds[i], s.x0, s.x0+side, s.y0, s.y0+side)
		must(t, c.Feds[i].SubscribeObjectClassAttributesWithRegions(h.aircraft, peer.AttributeRegions{Attributes: []peer.AttributeHandle{h.position}, Regions: []peer.RegionHandle{r}}))
	}
	c.Sleep(time.Second) // the subscriptions reach every publisher
	objs := make([]peer.ObjectInstanceHandle, pubs)
	regs := make([]peer.RegionHandle, pubs)
	pos := make([][2]uint64, pubs)
	for k := range pubs {
		f := c.Feds[subs+k]
		must(t, f.PublishObjectClassAttributes(h.aircraft, h.position))
		pos[k] = [2]uint64{uint64(rng.Intn(1000)), uint64(rng.Intn(1000))}
		regs[k] = region(f, pos[k][0], pos[k][0]+1, pos[k][1], pos[k][1]+1)
		objs[k], err = f.RegisterObjectInstanceWithRegions(h.aircraft, []peer.AttributeRegions{{Attributes: []peer.AttributeHandle{h.position}, Regions: []peer.RegionHandle{regs[k]}}}, "")
		must(t, err)
	}
	// Past the while after a publisher joins a cell to send in which it
	// also sends on the class's group.
	c.Sleep(4 * time.Second)

	before := make([]peer.Stats, len(c.Feds))
	for i, f := range c.Feds {
		before[i] = f.Stats()
	}
	reflectedBefore := make([]int, subs)
	for i := range subs {
		reflectedBefore[i] = countReflected(c.Logs[i].Events())
	}
	needed, total := 0, 0
	want := make([]int, subs)
	for range rounds {
		for k := range pubs {
			f := c.Feds[subs+k]
			// A step of up to 100 in each direction, kept in the space.
			step := func(v uint64) uint64 {
				n := int(v) + rng.Intn(201) - 100
				return uint64(min(max(n, 0), 999))
			}
			pos[k] = [2]uint64{step(pos[k][0]), step(pos[k][1])}
			must(t, f.SetRangeBounds(regs[k], x, peer.RangeBounds{Lower: pos[k][0], Upper: pos[k][0] + 1}))
			must(t, f.SetRangeBounds(regs[k], y, peer.RangeBounds{Lower: pos[k][1], Upper: pos[k][1] + 1}))
			must(t, f.CommitRegionModifications(regs[k]))
			must(t, c.Do(func() error {
				return f.UpdateAttributeValues(objs[k], peer.AttributeValues{h.position: []byte(fmt.Sprint(pos[k]))}, nil)
			}))
			total++
			any := false
			for i, s := range squares {
				if inside(s, pos[k][0], pos[k][1]) {
					want[i]++
					any = true
				}
			}
			if any {
				needed++
			}
		}
		c.Sleep(100 * time.Millisecond)
	}
	c.Sleep(2 * time.Second)

	var sent, spared uint64
	for k := range pubs {
		s := c.Feds[subs+k].Stats()
		sent += s.Reliable.Sent - before[subs+k].Reliable.Sent
		spared += s.Spared - before[subs+k].Spared
	}
	var reflected, filtered int
	for i := range subs {
		got := countReflected(c.Logs[i].Events()) - reflectedBefore[i]
		if got != want[i] {
			t.Errorf("subscriber %d reflected %d updates, %d were inside its square", i, got, want[i])
		}
		reflected += got
		filtered += int(c.Feds[i].Stats().Filtered - before[i].Filtered)
	}
	ratio := float64(sent) / float64(max(needed, 1))
	irrelevant := float64(filtered) / float64(max(filtered+reflected, 1))
	t.Logf("%d publishers, %d subscribers (10%% of the space each), %d updates: %d needed by some subscriber, %d messages sent (%.2fx the ideal), %d spared; at the subscribers %d reflected, %d dropped by the region test (%.1f%% irrelevant)",
		pubs, subs, total, needed, sent, ratio, spared, reflected, filtered, 100*irrelevant)
	if ratio > 2 {
		t.Errorf("%.2fx the ideal number of messages sent, want at most 2x", ratio)
	}
	if irrelevant > 0.05 {
		t.Errorf("%.1f%% of the deliveries at the subscribers were irrelevant, want under 5%%", 100*irrelevant)
	}
}

// countReflected counts the reflections among evs.
func countReflected(evs []peer.Event) int {
	n := 0
	for _, ev := range evs {
		if _, ok := ev.(peer.ReflectAttributeValues); ok {
			n++
		}
	}
	return n
}
