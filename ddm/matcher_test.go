package ddm

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// matcherSpace has a dimension with the whole range as default, one with
// a narrow default, an Excluded one, one without an upper bound, and a
// small one.
func matcherSpace(tb testing.TB) *Space {
	return testSpace(tb, Config{Cells: map[string]int{"A": 8}},
		dimSpec{"A", "1000", ""},
		dimSpec{"B", "500", "[100..200)"},
		dimSpec{"C", "1000", "Excluded"},
		dimSpec{"F", "", ""},
		dimSpec{"S", "3", "[1)"})
}

// model is what a Matcher should hold, checked by brute force.
type model struct {
	s    *Space
	dims []DimensionHandle
	ups  map[UpdateID][]Region
	subs map[SubID][]Region
}

func (md *model) pairs() map[MatchChange]bool {
	out := make(map[MatchChange]bool)
	for u, ur := range md.ups {
		for s, sr := range md.subs {
			if md.s.SetsOverlap(md.dims, ur, sr) {
				out[MatchChange{Update: u, Sub: s, Match: true}] = true
			}
		}
	}
	return out
}

func (md *model) matches(u UpdateID) []SubID {
	ur, ok := md.ups[u]
	return sortedKeys(md.subs, func(sr []Region) bool { return ok && md.s.SetsOverlap(md.dims, ur, sr) })
}

func (md *model) subscribers(s SubID) []UpdateID {
	sr, ok := md.subs[s]
	return sortedKeys(md.ups, func(ur []Region) bool { return ok && md.s.SetsOverlap(md.dims, ur, sr) })
}

// sortedKeys returns the keys of the entries of m that keep, sorted.
func sortedKeys[K cmp.Ordered, V any](m map[K]V, keep func(V) bool) []K {
	var out []K
	for k, v := range m {
		if keep(v) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// diff is what Changes should report going from pairs before to after.
func diff(before, after map[MatchChange]bool) []MatchChange {
	var out []MatchChange
	for p := range before {
		if !after[p] {
			out = append(out, MatchChange{p.Update, p.Sub, false})
		}
	}
	for p := range after {
		if !before[p] {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, cmpPair)
	return out
}

func cmpPair(a, b MatchChange) int {
	if c := cmp.Compare(uint64(a.Update), uint64(b.Update)); c != 0 {
		return c
	}
	return cmp.Compare(uint64(a.Sub), uint64(b.Sub))
}

// regionGen draws region sets for the randomized tests: mostly one
// region, sometimes none or several; ranges mostly small, sometimes the
// whole dimension (big regions), sometimes empty (inert), sometimes left
// out (default or Excluded).
type regionGen struct {
	rng  *rand.Rand
	s    *Space
	dims []DimensionHandle // every dimension of the space
}

func (g *regionGen) rangeOn(d DimensionHandle) Range {
	ub, _ := g.s.UpperBound(d)
	span := min(ub, 1000)
	switch g.rng.IntN(20) {
	case 0:
		return Range{0, ub} // whole
	case 1:
		lo := g.rng.Uint64N(span)
		return Range{lo, lo} // empty
	}
	lo := g.rng.Uint64N(span)
	w := 1 + g.rng.Uint64N(max(1, span/10))
	if g.rng.IntN(4) == 0 {
		w = 1 + g.rng.Uint64N(span/2+1)
	}
	return Range{lo, min(lo+w, ub)}
}

func (g *regionGen) region() Region {
	var r Region
	for _, d := range g.dims {
		if g.rng.IntN(5) == 0 {
			continue
		}
		r = r.With(d, g.rangeOn(d))
	}
	return r
}

func (g *regionGen) set() []Region {
	n := 1
	switch g.rng.IntN(10) {
	case 0:
		n = 0
	case 1, 2:
		n = 2 + g.rng.IntN(2)
	}
	rs := make([]Region, n)
	for i := range rs {
		rs[i] = g.region()
	}
	return rs
}

// moved shifts a one-region set a little (the Matcher's union scan), or
// draws a new set.
func (g *regionGen) moved(rs []Region) []Region {
	if len(rs) != 1 || g.rng.IntN(3) == 0 {
		return g.set()
	}
	r := slices.Clone(rs[0])
	for i := range r {
		ub, _ := g.s.UpperBound(r[i].Dim)
		span := min(ub, 1000)
		d := g.rng.Uint64N(span/20 + 1)
		if g.rng.IntN(2) == 0 && r[i].Range.Lower >= d {
			r[i].Range.Lower -= d
			r[i].Range.Upper -= d
		} else if r[i].Range.Upper <= ub-d {
			r[i].Range.Lower += d
			r[i].Range.Upper += d
		}
	}
	return []Region{r}
}

// TestMatcherRandom runs random sequences of sets, moves and removals on
// both sides, growing to a few hundred sets (so the grids are rebuilt
// as they grow) and shrinking again (and rebuilt as they shrink), and
// checks Matches, Subscribers and Changes against brute force.
func TestMatcherRandom(t *testing.T) {
	s := matcherSpace(t)
	all, _ := s.Handles([]string{"A", "B", "C", "F", "S"})
	h := func(names ...string) []DimensionHandle { hs, _ := s.Handles(names); return hs }
	dimSets := [][]DimensionHandle{
		h("A"), h("A", "B"), h("A", "C"), nil, h("C"), h("A", "B", "C"), h("A", "F", "S"), all, h("B", "S"),
	}
	seeds, ops := len(dimSets), 2500
	if testing.Short() {
		ops = 1200
	}
	rebuilds := 0
	for seed := range seeds {
		dims := dimSets[seed%len(dimSets)]
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rebuilds += runMatcherRandom(t, s, all, dims, uint64(seed), ops)
		})
	}
	if rebuilds < 4*seeds {
		t.Errorf("only %d grid rebuilds in %d runs: the test does not reach them", rebuilds, seeds)
	}
}

func runMatcherRandom(t *testing.T, s *Space, all, dims []DimensionHandle, seed uint64, ops int) int {
	rng := rand.New(rand.NewPCG(seed, 99))
	g := &regionGen{rng: rng, s: s, dims: all}
	m := NewMatcher(s, dims)
	md := &model{s: s, dims: dims, ups: map[UpdateID][]Region{}, subs: map[SubID][]Region{}}
	last := md.pairs()
	const maxID = 400
	for op := range ops {
		// Grow for the first half, then shrink.
		removeOdds := 8
		if op > ops/2 {
			removeOdds = 2
		}
		id := rng.Uint64N(maxID)
		switch k := rng.IntN(removeOdds + 2); {
		case k == 0:
			m.RemoveUpdate(UpdateID(id))
			delete(md.ups, UpdateID(id))
		case k == 1:
			m.RemoveSubscription(SubID(id))
			delete(md.subs, SubID(id))
		case k%2 == 0:
			rs := redraw(g, md.ups, UpdateID(id))
			m.SetUpdate(UpdateID(id), rs)
			if got, want := m.Matches(UpdateID(id)), md.matches(UpdateID(id)); !slices.Equal(got, want) {
				t.Fatalf("op %d: Matches(%d) = %v, want %v (regions %v)", op, id, got, want, rs)
			}
		default:
			rs := redraw(g, md.subs, SubID(id))
			m.SetSubscription(SubID(id), rs)
			if got, want := m.Subscribers(SubID(id)), md.subscribers(SubID(id)); !slices.Equal(got, want) {
				t.Fatalf("op %d: Subscribers(%d) = %v, want %v (regions %v)", op, id, got, want, rs)
			}
		}
		if rng.IntN(150) == 0 || op == ops-1 {
			now := md.pairs()
			if got, want := m.Changes(), diff(last, now); !slices.Equal(got, want) {
				t.Fatalf("op %d: Changes =\n%v\nwant\n%v", op, got, want)
			}
			last = now
		}
		if op%1000 == 999 || op == ops-1 {
			for u := range md.ups {
				if got, want := m.Matches(u), md.matches(u); !slices.Equal(got, want) {
					t.Fatalf("op %d: Matches(%d) = %v, want %v", op, u, got, want)
				}
			}
			for s := range md.subs {
				if got, want := m.Subscribers(s), md.subscribers(s); !slices.Equal(got, want) {
					t.Fatalf("op %d: Subscribers(%d) = %v, want %v", op, s, got, want)
				}
			}
			nu, ns := m.Len()
			if nu != len(md.ups) || ns != len(md.subs) {
				t.Fatalf("op %d: Len = %d, %d; want %d, %d", op, nu, ns, len(md.ups), len(md.subs))
			}
		}
	}
	return m.rebuilds
}

func TestMatcherChanges(t *testing.T) {
	s := matcherSpace(t)
	a := handle(t, s, "A")
	m := NewMatcher(s, []DimensionHandle{a})
	near := []Region{reg(a, 10, 20)}
	far := []Region{reg(a, 500, 600)}
	if got := m.Changes(); got != nil {
		t.Errorf("empty Changes = %v", got)
	}
	m.SetSubscription(1, near)
	m.SetSubscription(2, far)
	m.SetUpdate(7, near)
	want := []MatchChange{{7, 1, true}}
	if got := m.Changes(); !slices.Equal(got, want) {
		t.Errorf("Changes = %v, want %v", got, want)
	}
	// Away and back: no change.
	m.SetUpdate(7, far)
	m.SetUpdate(7, near)
	if got := m.Changes(); got != nil {
		t.Errorf("away and back: Changes = %v", got)
	}
	// Removed and set again under the same id before Changes: no change.
	m.RemoveUpdate(7)
	m.SetUpdate(7, near)
	m.RemoveSubscription(1)
	m.SetSubscription(1, near)
	if got := m.Changes(); got != nil {
		t.Errorf("remove and set again: Changes = %v", got)
	}
	// Removed and set again elsewhere.
	m.RemoveUpdate(7)
	m.SetUpdate(7, far)
	want = []MatchChange{{7, 1, false}, {7, 2, true}}
	if got := m.Changes(); !slices.Equal(got, want) {
		t.Errorf("moved through a removal: Changes = %v, want %v", got, want)
	}
	if got := m.Matches(7); !slices.Equal(got, []SubID{2}) {
		t.Errorf("Matches(7) = %v", got)
	}
	if got := m.Subscribers(2); !slices.Equal(got, []UpdateID{7}) {
		t.Errorf("Subscribers(2) = %v", got)
	}
	// Unknown ids.
	m.RemoveUpdate(99)
	m.RemoveSubscription(99)
	if m.Matches(99) != nil || m.Subscribers(99) != nil || m.Matches(7) == nil {
		t.Error("unknown ids answered")
	}
	if got := m.Changes(); got != nil {
		t.Errorf("after removals of unknown ids: Changes = %v", got)
	}
	// An empty set matches nothing; a set of several matches if any does.
	m.SetUpdate(8, nil)
	m.SetUpdate(9, []Region{reg(a, 900, 950), reg(a, 15, 16)})
	want = []MatchChange{{9, 1, true}}
	if got := m.Changes(); !slices.Equal(got, want) {
		t.Errorf("sets: Changes = %v, want %v", got, want)
	}
}

// Many pairs change for one update, past the point where its record
// gets an index, and cancel again.
func TestMatcherChangesLong(t *testing.T) {
	s := matcherSpace(t)
	a := handle(t, s, "A")
	m := NewMatcher(s, []DimensionHandle{a})
	for i := range 200 {
		m.SetSubscription(SubID(i), []Region{reg(a, i, i+1)})
	}
	m.SetUpdate(1, []Region{reg(a, 0, 1000)})
	if got := m.Changes(); len(got) != 200 {
		t.Fatalf("%d changes, want 200", len(got))
	}
	m.SetUpdate(1, []Region{reg(a, 0, 100)})
	m.SetUpdate(1, []Region{reg(a, 50, 1000)})
	m.SetUpdate(1, []Region{reg(a, 0, 1000)})
	if got := m.Changes(); got != nil {
		t.Errorf("back to where it was: %d changes", len(got))
	}
	m.SetUpdate(1, []Region{reg(a, 0, 150)})
	m.SetUpdate(1, []Region{reg(a, 100, 150)})
	got := m.Changes()
	if len(got) != 150 || got[0] != (MatchChange{1, 0, false}) || got[149] != (MatchChange{1, 199, false}) {
		t.Errorf("changes: %d, %v ... %v", len(got), got[0], got[len(got)-1])
	}
}

// Regions that cover the whole space go on the big lists; tiny ones in
// the buckets. Both are found, from either side.
func TestMatcherBigRegions(t *testing.T) {
	s := testSpace(t, Config{}, dimSpec{"X", "1000000", ""}, dimSpec{"Y", "1000000", ""})
	dims, _ := s.Handles([]string{"X", "Y"})
	x, y := dims[0], dims[1]
	m := NewMatcher(s, dims)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 2000 {
		lo, lo2 := rng.Uint64N(999000), rng.Uint64N(999000)
		m.SetUpdate(UpdateID(i), []Region{reg(x, lo, lo+1000, y, lo2, lo2+1000)})
		m.SetSubscription(SubID(i), []Region{reg(x, lo2, lo2+1000, y, lo, lo+1000)})
	}
	m.Changes()
	m.SetSubscription(5000, []Region{nil}) // the whole space
	m.SetUpdate(5000, []Region{reg(x, 0, 1000000, y, 0, 1000000)})
	if len(m.side[sideSub].big.keys) == 0 || len(m.side[sideUpdate].big.keys) == 0 {
		t.Fatalf("whole-space regions are not on the big lists: %d, %d", len(m.side[sideSub].big.keys), len(m.side[sideUpdate].big.keys))
	}
	if got := m.Subscribers(5000); len(got) != 2001 {
		t.Errorf("whole-space subscription matches %d updates, want 2001", len(got))
	}
	if got := m.Matches(5000); len(got) != 2001 {
		t.Errorf("whole-space update matches %d subscriptions, want 2001", len(got))
	}
	if got := m.Changes(); len(got) != 4001 {
		t.Errorf("%d changes, want 4001", len(got))
	}
	m.RemoveSubscription(5000)
	m.RemoveUpdate(5000)
	if got := m.Changes(); len(got) != 4001 {
		t.Errorf("%d changes after removal, want 4001", len(got))
	}
}

func TestBucketBounds(t *testing.T) {
	for _, c := range []struct{ n, ub uint64 }{{1, 10}, {3, 10}, {7, 7}, {16, 1000000}, {16, math.MaxUint64}, {3, 3}} {
		b := bucketBounds(c.n, c.ub)
		if b[0] != 0 || b[c.n] != math.MaxUint64 {
			t.Errorf("bucketBounds(%d, %d) = %v", c.n, c.ub, b)
		}
		// Every lower bound of a non-empty range: below MaxUint64.
		for _, v := range []uint64{0, 1, c.ub / 2, c.ub - 1, min(c.ub, math.MaxUint64-1), min(c.ub+1, math.MaxUint64-1), math.MaxUint64 - 1} {
			want := cellOf(min(v, c.ub-1), c.n, c.ub)
			if v >= b[want+1] || v < b[want] {
				t.Errorf("bucketBounds(%d, %d): %d is in cell %d, bounds %v", c.n, c.ub, v, want, b)
			}
		}
	}
}

// redraw draws a new region set for id in the model's table: a moved
// copy of its old one if it has one (a fresh set is drawn first either
// way, so the random sequence does not depend on it), and returns it.
func redraw[K comparable](g *regionGen, table map[K][]Region, id K) []Region {
	rs := g.set()
	if old, ok := table[id]; ok {
		rs = g.moved(old)
	}
	table[id] = rs
	return rs
}
