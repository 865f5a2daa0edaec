package ddm

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func cells(level uint8, idx ...uint64) []Cell {
	out := make([]Cell, len(idx))
	for i, x := range idx {
		out[i] = Cell{level, x}
	}
	return out
}

func TestCells1D(t *testing.T) {
	s := testSpace(t, Config{Cells: map[string]int{"D": 10}},
		dimSpec{"D", "100", ""}, dimSpec{"E", "3", ""}, dimSpec{"P", "100", "[0..10)"}, dimSpec{"X", "100", "Excluded"})
	d, e, p, x := handle(t, s, "D"), handle(t, s, "E"), handle(t, s, "P"), handle(t, s, "X")
	D := []DimensionHandle{d}
	for _, c := range []struct {
		name  string
		dims  []DimensionHandle
		r     Region
		level uint8
		want  []Cell
	}{
		{"first cell", D, reg(d, 0, 10), 0, cells(0, 0)},
		{"upper bound exclusive", D, reg(d, 10, 20), 0, cells(0, 1)},
		{"two cells", D, reg(d, 5, 15), 0, cells(0, 0, 1)},
		{"one value", D, reg(d, 99, 100), 0, cells(0, 9)},
		{"whole", D, reg(d, 0, 100), 0, cells(0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9)},
		{"default: whole range", D, nil, 0, cells(0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9)},
		{"level 1 merges pairs", D, reg(d, 5, 35), 1, cells(1, 0, 1)},
		{"level 2", D, reg(d, 5, 35), 2, cells(2, 0)},
		{"level 3", D, reg(d, 85, 100), 3, cells(3, 1)},
		{"top level", D, reg(d, 0, 100), 4, cells(4, 0)},
		{"above top is top", D, reg(d, 0, 100), 200, cells(4, 0)},
		// Cells are clamped to the upper bound: E has three values, so
		// three cells, not 16.
		{"small dimension", []DimensionHandle{e}, reg(e, 1, 3), 0, cells(0, 1, 2)},
		{"small dimension top", []DimensionHandle{e}, reg(e, 1, 3), 9, cells(2, 0)},
		// P's default is [0..10): with 16 cells of 6.25 that is cells 0, 1.
		{"default range", []DimensionHandle{p}, nil, 0, cells(0, 0, 1)},
		// X is Excluded: unspecified, it touches every cell.
		{"excluded", []DimensionHandle{x}, nil, 0, cells(0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)},
		{"excluded specified", []DimensionHandle{x}, reg(x, 0, 8), 0, cells(0, 0, 1)},
		{"no dims", nil, reg(d, 0, 10), 0, cells(0, 0)},
		{"no dims at a level", nil, nil, 3, cells(0, 0)},
		{"empty range", D, reg(d, 5, 5), 0, nil},
		{"inverted range", D, reg(d, 6, 5), 0, nil},
		{"beyond the bound", D, reg(d, 150, 160), 0, cells(0, 9)},
		{"unknown dimension", []DimensionHandle{1}, nil, 0, cells(0, 0)},
	} {
		got := s.Cells(c.dims, c.r, c.level)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: Cells = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestCells2D(t *testing.T) {
	s := testSpace(t, Config{Cells: map[string]int{"A": 4, "B": 8}}, dimSpec{"A", "400", ""}, dimSpec{"B", "800", ""})
	dims, _ := s.Handles([]string{"A", "B"})
	// Row-major over dims in handle order, first most significant.
	first, second := dims[0], dims[1]
	n2 := uint64(s.dims[second].cells)
	cell := func(level uint8, i, j uint64) Cell {
		return Cell{level, i*(((n2-1)>>level)+1) + j}
	}
	r := Region{}.With(first, Range{0, 1}).With(second, Range{0, 1})
	if got := s.Cells(dims, r, 0); !slices.Equal(got, []Cell{cell(0, 0, 0)}) {
		t.Errorf("corner: %v", got)
	}
	ub1, _ := s.UpperBound(first)
	ub2, _ := s.UpperBound(second)
	n1 := s.dims[first].cells
	// Cells 1..2 of the first dimension and 2..3 of the second.
	r = Region{}.With(first, Range{ub1 / n1, 3 * ub1 / n1}).With(second, Range{2 * ub2 / n2, 4 * ub2 / n2})
	want := []Cell{cell(0, 1, 2), cell(0, 1, 3), cell(0, 2, 2), cell(0, 2, 3)}
	if got := s.Cells(dims, r, 0); !slices.Equal(got, want) {
		t.Errorf("2x2: %v, want %v", got, want)
	}
	want = []Cell{cell(1, 0, 1), cell(1, 1, 1)}
	if got := s.Cells(dims, r, 1); !slices.Equal(got, want) {
		t.Errorf("2x2 at level 1: %v, want %v", got, want)
	}
	// The order of dims does not matter.
	if got := s.Cells([]DimensionHandle{second, first}, r, 0); !slices.Equal(got, s.Cells(dims, r, 0)) {
		t.Errorf("unsorted dims: %v", got)
	}
}

func TestLevel(t *testing.T) {
	s := testSpace(t, Config{DefaultCells: 16, MaxJoins: 4}, dimSpec{"A", "1600", ""}, dimSpec{"B", "1600", ""})
	dims, _ := s.Handles([]string{"A", "B"})
	a, b := dims[0], dims[1]
	for _, c := range []struct {
		name  string
		r     Region
		level uint8
		cells int
	}{
		{"one cell", reg(a, 0, 100, b, 0, 100), 0, 1},
		{"four cells", reg(a, 50, 150, b, 50, 150), 0, 4},
		{"nine cells: coarser", reg(a, 100, 400, b, 100, 400), 1, 4},
		{"whole space", nil, 3, 4},
		{"one dimension wide", reg(a, 0, 1600, b, 0, 10), 2, 4},
		{"empty", reg(a, 5, 5), 0, 0},
	} {
		l := s.Level(dims, c.r)
		if l != c.level {
			t.Errorf("%s: Level = %d, want %d", c.name, l, c.level)
		}
		got := s.Cells(dims, c.r, l)
		if len(got) != c.cells {
			t.Errorf("%s: %d cells at level %d, want %d: %v", c.name, len(got), l, c.cells, got)
		}
		if len(got) > s.MaxJoins() {
			t.Errorf("%s: %d cells > MaxJoins", c.name, len(got))
		}
		if l > 0 && len(s.Cells(dims, c.r, l-1)) <= s.MaxJoins() {
			t.Errorf("%s: level %d is not the finest within MaxJoins", c.name, l)
		}
	}
	if got := s.Level(nil, nil); got != 0 {
		t.Errorf("Level with no dims = %d", got)
	}
	// MaxJoins 1: always the level where the region is one cell.
	s1 := testSpace(t, Config{DefaultCells: 16, MaxJoins: 1}, dimSpec{"A", "1600", ""})
	a1 := handle(t, s1, "A")
	if l := s1.Level([]DimensionHandle{a1}, reg(a1, 750, 850)); l != 4 {
		t.Errorf("MaxJoins 1 across the middle: level %d, want 4", l)
	}
}

func TestCellsUnbounded(t *testing.T) {
	s := testSpace(t, Config{}, dimSpec{"F", "", ""})
	f := handle(t, s, "F")
	D := []DimensionHandle{f}
	for _, c := range []struct {
		r    Region
		want []Cell
	}{
		{reg(f, 5, 6), cells(0, 0)},
		{reg(f, uint64(math.MaxUint64-1), uint64(math.MaxUint64)), cells(0, 15)},
		{reg(f, uint64(1<<63), uint64(1<<63+1)), cells(0, 8)},
	} {
		if got := s.Cells(D, c.r, 0); !slices.Equal(got, c.want) {
			t.Errorf("Cells(%v) = %v, want %v", c.r, got, c.want)
		}
	}
}

// Five dimensions of 2^16 cells: the grid has 2^80 cells, so Index is a
// hash. Cells stay sorted, distinct and the same on every call.
func TestCellsHashed(t *testing.T) {
	var specs []dimSpec
	cfg := Config{Cells: map[string]int{}}
	for _, n := range []string{"A", "B", "C", "D", "E"} {
		specs = append(specs, dimSpec{n, "1000000", ""})
		cfg.Cells[n] = MaxCellsPerDimension
	}
	s := testSpace(t, cfg, specs...)
	dims, _ := s.Handles([]string{"A", "B", "C", "D", "E"})
	var r Region
	for _, d := range dims {
		r = r.With(d, Range{500000, 500030})
	}
	got := s.Cells(dims, r, 0)
	if len(got) != 32 || !slices.IsSortedFunc(got, func(a, b Cell) int { return cmp.Compare(a.Index, b.Index) }) {
		t.Fatalf("hashed cells: %d, sorted %v", len(got), got)
	}
	if again := s.Cells(dims, r, 0); !slices.Equal(got, again) {
		t.Error("hashed cells differ between calls")
	}
	// At level 4 the grid has 2^60 cells: exact again.
	if got := s.Cells(dims, r, 4); len(got) != 1 {
		t.Errorf("level 4: %v", got)
	}
}

// randRegion draws a region over dims: each dimension left out with
// probability 1/4, otherwise a valid range, with small sizes likely.
func randRegion(rng *rand.Rand, s *Space, dims []DimensionHandle) Region {
	var r Region
	for _, d := range dims {
		if rng.IntN(4) == 0 {
			continue
		}
		ub, _ := s.UpperBound(d)
		ub = min(ub, 1000)
		lo := rng.Uint64N(ub)
		hi := lo + 1 + rng.Uint64N(min(ub-lo, 1+rng.Uint64N(ub)))
		r = r.With(d, Range{lo, hi})
	}
	return r
}

// Properties the sender and the receivers rely on: regions that overlap
// share a cell at every level; the intersection's cells are cells of
// both; at the chosen level a region touches at most MaxJoins cells;
// Cells are sorted and distinct.
func TestCellsProperties(t *testing.T) {
	s := testSpace(t, Config{Cells: map[string]int{"A": 10, "B": 7}, MaxJoins: 6},
		dimSpec{"A", "1000", ""}, dimSpec{"B", "50", "[10..20)"}, dimSpec{"C", "1000", "Excluded"}, dimSpec{"D", "3", ""})
	all, _ := s.Handles([]string{"A", "B", "C", "D"})
	rng := rand.New(rand.NewPCG(7, 7))
	for range 3000 {
		dims := randDims(rng, all)
		a, b := randRegion(rng, s, all), randRegion(rng, s, all)
		level := uint8(rng.IntN(6))
		ca, cb := s.Cells(dims, a, level), s.Cells(dims, b, level)
		for _, cs := range [][]Cell{ca, cb} {
			if !slices.IsSortedFunc(cs, func(x, y Cell) int { return cmp.Compare(x.Index, y.Index) }) || len(slices.Compact(slices.Clone(cs))) != len(cs) {
				t.Fatalf("Cells not sorted and distinct: %v", cs)
			}
		}
		in, ok := s.Intersect(dims, a, b)
		if ok != s.Overlaps(dims, a, b) {
			t.Fatalf("Intersect and Overlaps disagree on %v, %v over %v", a, b, dims)
		}
		if ok {
			ci := s.Cells(dims, in, level)
			if len(ci) == 0 {
				t.Fatalf("overlapping %v, %v: intersection %v has no cells", a, b, in)
			}
			for _, c := range ci {
				if !slices.Contains(ca, c) || !slices.Contains(cb, c) {
					t.Fatalf("cell %v of the intersection of %v and %v is not in both (%v, %v)", c, a, b, ca, cb)
				}
			}
		}
		l := s.Level(dims, a)
		if n := len(s.Cells(dims, a, l)); n > s.MaxJoins() || (l > 0 && len(s.Cells(dims, a, l-1)) <= s.MaxJoins()) {
			t.Fatalf("Level(%v) = %d with %d cells", a, l, n)
		}
	}
}

// randDims picks a random subset of all, in random order.
func randDims(rng *rand.Rand, all []DimensionHandle) []DimensionHandle {
	var dims []DimensionHandle
	for _, d := range all {
		if rng.IntN(2) == 0 {
			dims = append(dims, d)
		}
	}
	rng.Shuffle(len(dims), func(i, j int) { dims[i], dims[j] = dims[j], dims[i] })
	return dims
}
