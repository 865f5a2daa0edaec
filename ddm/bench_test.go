package ddm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The benchmark workload (docs/ddm.md): two dimensions X and Y with upper
// bound 1,000,000; 10,000 update and 10,000 subscription region sets of
// one region each. Every region is a rectangle placed uniformly at random
// inside the space, with an aspect ratio log-uniform between 1:2 and 2:1
// and an area log-uniform between 0.01% and 1% of the space for a
// subscription (a sensor's range) and between 0.0001% and 0.01% for an
// update (an entity's position, with some slack). A step moves 1% of each
// side (100 updates, 100 subscriptions, drawn at random): each by an
// offset uniform in ±1% of the axis per dimension (clamped inside), like
// entities and sensors drifting, then calls Changes. The seed is fixed.
// The "Large" variants draw updates like subscriptions.
const (
	benchUB    = 1_000_000
	benchN     = 10_000
	benchMoves = benchN / 100
)

type benchWorld struct {
	s      *Space
	dims   []DimensionHandle
	x, y   DimensionHandle
	rng    *rand.Rand
	update [][]Region
	sub    [][]Region
}

func newBenchWorld(tb testing.TB) *benchWorld { return newBenchWorldAreas(tb, updateArea) }

func newBenchWorldAreas(tb testing.TB, updateArea [2]float64) *benchWorld {
	s := testSpace(tb, Config{},
		dimSpec{"X", "1000000", "[0..1000000)"},
		dimSpec{"Y", "1000000", "[0..1000000)"})
	w := &benchWorld{s: s, rng: rand.New(rand.NewPCG(1, 2))}
	w.x, w.y = handle(tb, s, "X"), handle(tb, s, "Y")
	w.dims, _ = s.Handles([]string{"X", "Y"})
	for range benchN {
		w.update = append(w.update, []Region{w.randRegion(updateArea)})
		w.sub = append(w.sub, []Region{w.randRegion(subArea)})
	}
	return w
}

// Region areas, as fractions of the space: log-uniform between the two.
var (
	subArea    = [2]float64{1e-4, 1e-2}
	updateArea = [2]float64{1e-6, 1e-4}
)

func (w *benchWorld) randRegion(areas [2]float64) Region {
	logU := func(lo, hi float64) float64 {
		return math.Exp(math.Log(lo) + w.rng.Float64()*(math.Log(hi)-math.Log(lo)))
	}
	area := logU(areas[0], areas[1])
	aspect := logU(0.5, 2)
	wx := uint64(math.Sqrt(area*aspect) * benchUB)
	wy := uint64(math.Sqrt(area/aspect) * benchUB)
	x := w.rng.Uint64N(benchUB - wx)
	y := w.rng.Uint64N(benchUB - wy)
	return Region{}.With(w.x, Range{x, x + wx}).With(w.y, Range{y, y + wy})
}

// move shifts r in place by up to ±1% of the axis per dimension.
func (w *benchWorld) move(r Region) {
	for i, dr := range r {
		width := dr.Range.Upper - dr.Range.Lower
		delta := int64(w.rng.Uint64N(2*benchUB/100+1)) - benchUB/100
		lo := min(max(int64(dr.Range.Lower)+delta, 0), int64(benchUB-width))
		r[i].Range = Range{uint64(lo), uint64(lo) + width}
	}
}

func (w *benchWorld) matcher() *Matcher {
	m := NewMatcher(w.s, w.dims)
	for i, rs := range w.update {
		m.SetUpdate(UpdateID(i), rs)
	}
	for i, rs := range w.sub {
		m.SetSubscription(SubID(i), rs)
	}
	return m
}

// step moves 1% of each side and rematches them. (The Matcher copies
// what it is given, so the world's regions are moved in place.)
func (w *benchWorld) step(m *Matcher) int {
	for range benchMoves {
		i := w.rng.IntN(benchN)
		w.move(w.update[i][0])
		m.SetUpdate(UpdateID(i), w.update[i])
		j := w.rng.IntN(benchN)
		w.move(w.sub[j][0])
		m.SetSubscription(SubID(j), w.sub[j])
	}
	return len(m.Changes())
}

// BenchmarkBruteForce is the all-pairs match of every update set against
// every subscription set (10^8 Overlaps): what a step costs without an
// index.
func BenchmarkBruteForce(b *testing.B) {
	w := newBenchWorld(b)
	b.ResetTimer()
	pairs := 0
	for b.Loop() {
		pairs = 0
		for _, u := range w.update {
			for _, s := range w.sub {
				if w.s.SetsOverlap(w.dims, u, s) {
					pairs++
				}
			}
		}
	}
	b.ReportMetric(float64(pairs), "pairs")
}

// BenchmarkMatcherFull builds a Matcher from nothing: 20,000 Sets and the
// first Changes.
func BenchmarkMatcherFull(b *testing.B) {
	w := newBenchWorld(b)
	benchFull(b, w)
}

func BenchmarkMatcherFullLarge(b *testing.B) {
	w := newBenchWorldAreas(b, subArea)
	benchFull(b, w)
}

func BenchmarkMatcherStepLarge(b *testing.B) {
	w := newBenchWorldAreas(b, subArea)
	benchStep(b, w)
}

// BenchmarkMatcherStep moves 1% of the regions (100 updates and 100
// subscriptions) and collects the Changes: the incremental rematch.
func BenchmarkMatcherStep(b *testing.B) {
	w := newBenchWorld(b)
	benchStep(b, w)
}

func BenchmarkOverlaps(b *testing.B) {
	w := newBenchWorld(b)
	b.ResetTimer()
	n := 0
	for i := 0; b.Loop(); i++ {
		if w.s.Overlaps(w.dims, w.update[i%benchN][0], w.sub[(i*7)%benchN][0]) {
			n++
		}
	}
}

func BenchmarkCellsLevel(b *testing.B) {
	w := newBenchWorld(b)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		r := w.sub[i%benchN][0]
		w.s.Cells(w.dims, r, w.s.Level(w.dims, r))
	}
}

func BenchmarkIntersect(b *testing.B) {
	w := newBenchWorld(b)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		w.s.Intersect(w.dims, w.update[i%benchN][0], w.sub[(i*7)%benchN][0])
	}
}

// BenchmarkMatches is Matches of an update and Subscribers of a
// subscription: one query each.
func BenchmarkMatches(b *testing.B) {
	w := newBenchWorld(b)
	m := w.matcher()
	b.ResetTimer()
	n := 0
	for i := 0; b.Loop(); i++ {
		n += len(m.Matches(UpdateID(i % benchN)))
		n += len(m.Subscribers(SubID(i % benchN)))
	}
	b.ReportMetric(float64(n)/float64(2*b.N), "matches/query")
}

// benchFull times building w's Matcher from nothing with its first Changes.
func benchFull(b *testing.B, w *benchWorld) {
	b.ResetTimer()
	changes := 0
	for b.Loop() {
		m := w.matcher()
		changes = len(m.Changes())
	}
	b.ReportMetric(float64(changes), "pairs")
}

// benchStep times one w.step on a Matcher built and matched beforehand.
func benchStep(b *testing.B, w *benchWorld) {
	m := w.matcher()
	m.Changes()
	b.ResetTimer()
	changes := 0
	for b.Loop() {
		changes += w.step(m)
	}
	b.ReportMetric(float64(changes)/float64(b.N), "changes/step")
}
