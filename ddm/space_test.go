package ddm

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

// restaurantDims are the dimensions of the restaurant FOM
// (RestaurantFood.xml) plus two of our own: a default range that is a
// proper part of the dimension, and one with no upper bound.
var restaurantDims = []dimSpec{
	{"SodaFlavor", "3", "[0..3)"},
	{"BarQuantity", "25", "[0)"},
	{"WaiterId", "20", "Excluded"},
	{"Low", "100", "[0..10)"},
	{"Free", "", ""},
}

func TestNewSpaceDefaults(t *testing.T) {
	s := testSpace(t, Config{}, restaurantDims...)
	for _, c := range []struct {
		name     string
		ub       uint64
		def      Range
		excluded bool
	}{
		{"SodaFlavor", 3, Range{0, 3}, false},
		{"BarQuantity", 25, Range{0, 1}, false},
		{"WaiterId", 20, Range{}, true},
		{"Low", 100, Range{0, 10}, false},
		{"Free", UnboundedUpperBound, Range{0, UnboundedUpperBound}, false},
		// The MIM's: HLAfederate has no upper bound, both are Excluded.
		{"HLAfederate", UnboundedUpperBound, Range{}, true},
		{"HLAserviceGroup", 7, Range{}, true},
	} {
		h := handle(t, s, c.name)
		d, ok := s.Dimension(h)
		if !ok || d.Name != c.name {
			t.Errorf("Dimension(%s) = %v, %v", c.name, d, ok)
		}
		if ub, ok := s.UpperBound(h); !ok || ub != c.ub {
			t.Errorf("UpperBound(%s) = %d, %v; want %d", c.name, ub, ok, c.ub)
		}
		def, ok := s.DefaultRange(h)
		if ok == c.excluded || (ok && def != c.def) {
			t.Errorf("DefaultRange(%s) = %v, %v; want %v, %v", c.name, def, ok, c.def, !c.excluded)
		}
	}
	const unknown = DimensionHandle(12345)
	if _, ok := s.Dimension(unknown); ok {
		t.Error("Dimension(unknown) found")
	}
	if _, ok := s.UpperBound(unknown); ok {
		t.Error("UpperBound(unknown) found")
	}
	if _, ok := s.DefaultRange(unknown); ok {
		t.Error("DefaultRange(unknown) found")
	}
	if s.MaxJoins() != DefaultMaxJoins {
		t.Errorf("MaxJoins = %d", s.MaxJoins())
	}
}

func TestParseDefault(t *testing.T) {
	for _, c := range []struct {
		v        string
		has      bool
		ub       uint64
		want     Range
		excluded bool
		err      bool
	}{
		{"", false, 10, Range{0, 10}, false, false},
		{"", true, 10, Range{0, 10}, false, false},
		{"NA", true, 10, Range{0, 10}, false, false},
		{"Excluded", true, 10, wildcard, true, false},
		{" excluded ", true, 10, wildcard, true, false},
		{"[0..1)", true, 10, Range{0, 1}, false, false},
		{"[ 2 .. 10 )", true, 10, Range{2, 10}, false, false},
		{"[0)", true, 25, Range{0, 1}, false, false},
		{"[24)", true, 25, Range{24, 25}, false, false},
		{"[25)", true, 25, Range{}, false, true},
		{"[0..11)", true, 10, Range{}, false, true},
		{"[5..5)", true, 10, Range{}, false, true},
		{"[6..5)", true, 10, Range{}, false, true},
		{"[0..1]", true, 10, Range{}, false, true},
		{"0..1", true, 10, Range{}, false, true},
		{"[a..1)", true, 10, Range{}, false, true},
		{"[0..b)", true, 10, Range{}, false, true},
		{"[-1..1)", true, 10, Range{}, false, true},
		{"[x)", true, 10, Range{}, false, true},
		{"[0..18446744073709551616)", true, math.MaxUint64, Range{}, false, true},
		{"[0..18446744073709551615)", true, math.MaxUint64, Range{0, math.MaxUint64}, false, false},
	} {
		got, excl, err := parseDefault(c.v, c.has, c.ub)
		if (err != nil) != c.err || got != c.want || excl != c.excluded {
			t.Errorf("parseDefault(%q, %v, %d) = %v, %v, %v; want %v, %v, error %v", c.v, c.has, c.ub, got, excl, err, c.want, c.excluded, c.err)
		}
		if err != nil && !errors.Is(err, ErrInvalidRangeBound) {
			t.Errorf("parseDefault(%q): %v does not wrap ErrInvalidRangeBound", c.v, err)
		}
	}
}

func TestNewSpaceErrors(t *testing.T) {
	fdd := testFDD(t, restaurantDims...)
	for _, c := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"unknown dimension", Config{Cells: map[string]int{"Nope": 4}}, `names "Nope"`},
		{"zero cells", Config{Cells: map[string]int{"Low": 0}}, `Config.Cells["Low"] is 0`},
		{"too many cells", Config{Cells: map[string]int{"Low": MaxCellsPerDimension + 1}}, "want 1..65536"},
		{"negative default", Config{DefaultCells: -1}, "Config.DefaultCells is -1"},
		{"huge default", Config{DefaultCells: MaxCellsPerDimension + 1}, "Config.DefaultCells"},
		{"negative joins", Config{MaxJoins: -1}, "Config.MaxJoins is -1"},
	} {
		if _, err := NewSpace(fdd, c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: NewSpace = %v, want an error with %q", c.name, err, c.want)
		}
	}
	if _, err := NewSpace(fdd, Config{Cells: map[string]int{"Nope": 1}}); !errors.Is(err, ErrInvalidDimension) {
		t.Errorf("unknown dimension: %v does not wrap ErrInvalidDimension", err)
	}
	if _, err := NewSpace(nil, Config{}); err == nil {
		t.Error("NewSpace(nil) succeeded")
	}
	bad := testFDD(t, dimSpec{"D", "10", "[0..11)"})
	_, err := NewSpace(bad, Config{})
	if !errors.Is(err, ErrInvalidRangeBound) || !strings.Contains(err.Error(), "dimension D") || !strings.Contains(err.Error(), "test.xml:") {
		t.Errorf("bad default: NewSpace = %v", err)
	}
	// Cell counts: explicit, default, and clamped to the upper bound.
	s, err := NewSpace(fdd, Config{Cells: map[string]int{"Low": 7, "SodaFlavor": 100}, DefaultCells: 5, MaxJoins: 3})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]uint64{"Low": 7, "SodaFlavor": 3, "BarQuantity": 5, "Free": 5} {
		if got := s.byName[name].cells; got != want {
			t.Errorf("cells of %s = %d, want %d", name, got, want)
		}
	}
	if s.MaxJoins() != 3 {
		t.Errorf("MaxJoins = %d, want 3", s.MaxJoins())
	}
}

func TestCheckRange(t *testing.T) {
	s := testSpace(t, Config{}, restaurantDims...)
	low, free := handle(t, s, "Low"), handle(t, s, "Free")
	for _, c := range []struct {
		d    DimensionHandle
		r    Range
		want error
	}{
		{low, Range{0, 100}, nil},
		{low, Range{99, 100}, nil},
		{low, Range{0, 1}, nil},
		{low, Range{5, 5}, ErrInvalidRangeBound},
		{low, Range{6, 5}, ErrInvalidRangeBound},
		{low, Range{0, 101}, ErrInvalidRangeBound},
		{low, Range{100, 101}, ErrInvalidRangeBound},
		{free, Range{0, math.MaxUint64}, nil},
		{free, Range{math.MaxUint64, math.MaxUint64}, ErrInvalidRangeBound},
		{DimensionHandle(1), Range{0, 1}, ErrInvalidDimension},
	} {
		err := s.CheckRange(c.d, c.r)
		if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("CheckRange(%#x, %v) = %v, want %v", uint64(c.d), c.r, err, c.want)
		}
	}
}

func TestCheckRegion(t *testing.T) {
	s := testSpace(t, Config{}, restaurantDims...)
	a, b := handle(t, s, "Low"), handle(t, s, "SodaFlavor")
	if a > b {
		a, b = b, a
	}
	for _, c := range []struct {
		r    Region
		want error
	}{
		{nil, nil},
		{Region{{a, Range{0, 1}}, {b, Range{0, 1}}}, nil},
		{Region{{b, Range{0, 1}}, {a, Range{0, 1}}}, ErrInvalidDimension},
		{Region{{a, Range{0, 1}}, {a, Range{0, 1}}}, ErrInvalidDimension},
		{Region{{a, Range{1, 0}}}, ErrInvalidRangeBound},
		{Region{{DimensionHandle(1), Range{0, 1}}}, ErrInvalidDimension},
	} {
		err := s.CheckRegion(c.r)
		if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("CheckRegion(%v) = %v, want %v", c.r, err, c.want)
		}
	}
}

func TestHandles(t *testing.T) {
	s := testSpace(t, Config{}, restaurantDims...)
	hs, err := s.Handles([]string{"WaiterId", "SodaFlavor", "BarQuantity", "SodaFlavor"})
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 3 || !slices.IsSorted(hs) {
		t.Errorf("Handles = %v, want 3 sorted", hs)
	}
	for _, n := range []string{"WaiterId", "SodaFlavor", "BarQuantity"} {
		if !slices.Contains(hs, handle(t, s, n)) {
			t.Errorf("Handles lacks %s", n)
		}
	}
	if hs, err := s.Handles(nil); err != nil || len(hs) != 0 {
		t.Errorf("Handles(nil) = %v, %v", hs, err)
	}
	if _, err := s.Handles([]string{"SodaFlavor", "Nope"}); !errors.Is(err, ErrInvalidDimension) {
		t.Errorf("Handles(Nope) = %v", err)
	}
}

func TestRegionRangeWith(t *testing.T) {
	var r Region
	r = r.With(5, Range{1, 2})
	r = r.With(3, Range{3, 4})
	r = r.With(9, Range{5, 6})
	want := Region{{3, Range{3, 4}}, {5, Range{1, 2}}, {9, Range{5, 6}}}
	if !slices.Equal(r, want) {
		t.Fatalf("With = %v, want %v", r, want)
	}
	r2 := r.With(5, Range{7, 8})
	if !slices.Equal(r, want) {
		t.Errorf("With modified its receiver: %v", r)
	}
	if got, ok := r2.Range(5); !ok || got != (Range{7, 8}) || len(r2) != 3 {
		t.Errorf("With(5) = %v", r2)
	}
	if _, ok := r.Range(4); ok {
		t.Error("Range(4) found")
	}
	if got, ok := r.Range(9); !ok || got != (Range{5, 6}) {
		t.Errorf("Range(9) = %v, %v", got, ok)
	}
	// An unsorted region with a duplicate: the first entry counts, and
	// With leaves one.
	bad := Region{{9, Range{1, 2}}, {3, Range{0, 1}}, {9, Range{7, 8}}}
	if got, _ := bad.Range(9); got != (Range{1, 2}) {
		t.Errorf("Range of duplicate = %v", got)
	}
	if fixed := bad.With(9, Range{4, 5}); len(fixed) != 2 {
		t.Errorf("With on duplicate = %v", fixed)
	}
}

func TestRangeOverlaps(t *testing.T) {
	for _, c := range []struct {
		a, b Range
		want bool
	}{
		{Range{0, 10}, Range{10, 20}, false}, // upper bound exclusive
		{Range{0, 11}, Range{10, 20}, true},
		{Range{10, 20}, Range{0, 10}, false},
		{Range{0, 100}, Range{50, 51}, true},
		{Range{5, 5}, Range{0, 10}, false}, // empty
		{Range{6, 5}, Range{0, 10}, false},
		{wildcard, Range{3, 4}, true},
		{wildcard, Range{4, 4}, false},
		{wildcard, wildcard, true},
	} {
		if got := c.a.Overlaps(c.b); got != c.want {
			t.Errorf("%v.Overlaps(%v) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := c.b.Overlaps(c.a); got != c.want {
			t.Errorf("%v.Overlaps(%v) = %v, want %v (symmetry)", c.b, c.a, got, c.want)
		}
	}
}

func TestOverlaps(t *testing.T) {
	s := testSpace(t, Config{}, restaurantDims...)
	soda, bar, waiter := handle(t, s, "SodaFlavor"), handle(t, s, "BarQuantity"), handle(t, s, "WaiterId")
	low, free := handle(t, s, "Low"), handle(t, s, "Free")
	all, _ := s.Handles([]string{"SodaFlavor", "BarQuantity", "WaiterId", "Low", "Free"})
	mim, _ := s.Handles([]string{"HLAfederate", "HLAserviceGroup"})
	for _, c := range []struct {
		name string
		dims []DimensionHandle
		a, b Region
		want bool
	}{
		{"boundary", []DimensionHandle{low}, reg(low, 0, 10), reg(low, 10, 20), false},
		{"boundary overlap", []DimensionHandle{low}, reg(low, 0, 11), reg(low, 10, 20), true},
		{"no dims", nil, reg(low, 0, 10), reg(low, 10, 20), true},
		{"dim not available is ignored", []DimensionHandle{soda}, reg(low, 0, 10, soda, 1, 2), reg(low, 10, 20, soda, 0, 3), true},
		{"every dim must overlap", []DimensionHandle{soda, low}, reg(low, 0, 10, soda, 1, 2), reg(low, 5, 20, soda, 2, 3), false},
		{"every dim overlaps", []DimensionHandle{soda, low}, reg(low, 0, 10, soda, 1, 3), reg(low, 5, 20, soda, 2, 3), true},
		// Defaults: Low's is [0..10), BarQuantity's [0..1).
		{"default range in", []DimensionHandle{low}, reg(low, 5, 6), nil, true},
		{"default range out", []DimensionHandle{low}, reg(low, 10, 20), nil, false},
		{"both default", []DimensionHandle{low, bar}, nil, nil, true},
		{"point default out", []DimensionHandle{bar}, reg(bar, 1, 25), Region{}, false},
		{"point default in", []DimensionHandle{bar}, reg(bar, 0, 2), Region{}, true},
		{"no value: whole range", []DimensionHandle{free}, reg(free, uint64(math.MaxUint64-1), uint64(math.MaxUint64)), nil, true},
		// Excluded: left out when either region does not specify it.
		{"excluded unspecified", []DimensionHandle{waiter}, reg(waiter, 3, 4), nil, true},
		{"excluded unspecified both", []DimensionHandle{waiter}, nil, nil, true},
		{"excluded specified both", []DimensionHandle{waiter}, reg(waiter, 3, 4), reg(waiter, 4, 5), false},
		{"excluded with others", []DimensionHandle{waiter, low}, reg(waiter, 3, 4, low, 0, 5), reg(low, 4, 8), true},
		{"excluded with others out", []DimensionHandle{waiter, low}, reg(waiter, 3, 4, low, 0, 5), reg(low, 5, 8), false},
		{"MIM dims, both Excluded", mim, nil, reg(mim[0], 7, 8), true},
		// An empty range overlaps nothing, not even an Excluded default.
		{"empty range", []DimensionHandle{waiter}, reg(waiter, 4, 4), nil, false},
		{"empty range default", []DimensionHandle{low}, reg(low, 5, 5), nil, false},
		{"all dims", all, reg(soda, 1, 2, bar, 0, 5, low, 9, 10), reg(soda, 0, 3), true},
		{"all dims out", all, reg(soda, 1, 2, bar, 0, 5, low, 9, 10), reg(soda, 0, 3, low, 0, 9), false},
	} {
		if got := s.Overlaps(c.dims, c.a, c.b); got != c.want {
			t.Errorf("%s: Overlaps = %v, want %v", c.name, got, c.want)
		}
		if got := s.Overlaps(c.dims, c.b, c.a); got != c.want {
			t.Errorf("%s: Overlaps reversed = %v, want %v", c.name, got, c.want)
		}
		in, ok := s.Intersect(c.dims, c.a, c.b)
		if ok != c.want {
			t.Errorf("%s: Intersect ok = %v, want %v", c.name, ok, c.want)
		}
		if ok && (!s.Overlaps(c.dims, in, c.a) || !s.Overlaps(c.dims, in, c.b)) {
			t.Errorf("%s: Intersect = %v does not overlap both", c.name, in)
		}
		if got := s.SetsOverlap(c.dims, []Region{c.a}, []Region{c.b}); got != c.want {
			t.Errorf("%s: SetsOverlap = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestSetsOverlap(t *testing.T) {
	s := testSpace(t, Config{}, restaurantDims...)
	low := handle(t, s, "Low")
	dims := []DimensionHandle{low}
	a := []Region{reg(low, 0, 10), reg(low, 50, 60)}
	for _, c := range []struct {
		b    []Region
		want bool
	}{
		{nil, false},
		{[]Region{}, false},
		{[]Region{reg(low, 10, 50)}, false},
		{[]Region{reg(low, 10, 50), reg(low, 60, 70)}, false},
		{[]Region{reg(low, 10, 50), reg(low, 59, 70)}, true},
		{[]Region{reg(low, 9, 10)}, true},
	} {
		if got := s.SetsOverlap(dims, a, c.b); got != c.want {
			t.Errorf("SetsOverlap(%v) = %v, want %v", c.b, got, c.want)
		}
		if got := s.SetsOverlap(dims, c.b, a); got != c.want {
			t.Errorf("SetsOverlap reversed (%v) = %v, want %v", c.b, got, c.want)
		}
	}
	if s.SetsOverlap(dims, nil, nil) {
		t.Error("empty sets overlap")
	}
}

func TestIntersect(t *testing.T) {
	s := testSpace(t, Config{}, restaurantDims...)
	soda, bar, waiter := handle(t, s, "SodaFlavor"), handle(t, s, "BarQuantity"), handle(t, s, "WaiterId")
	low := handle(t, s, "Low")
	dims, _ := s.Handles([]string{"SodaFlavor", "BarQuantity", "WaiterId", "Low"})
	for _, c := range []struct {
		name string
		a, b Region
		want Region
		ok   bool
	}{
		{"defaults filled, excluded left out", nil, nil, reg(soda, 0, 3, bar, 0, 1, low, 0, 10), true},
		{"excluded from one side", reg(waiter, 3, 9), nil, reg(soda, 0, 3, bar, 0, 1, waiter, 3, 9, low, 0, 10), true},
		{"excluded both sides", reg(waiter, 3, 9), reg(waiter, 5, 12), reg(soda, 0, 3, bar, 0, 1, waiter, 5, 9, low, 0, 10), true},
		{"narrowed", reg(low, 2, 8, soda, 1, 3), reg(low, 5, 50, soda, 0, 2), reg(soda, 1, 2, bar, 0, 1, low, 5, 8), true},
		{"dims outside dropped", reg(handle(t, s, "Free"), 1, 2), nil, reg(soda, 0, 3, bar, 0, 1, low, 0, 10), true},
		{"disjoint", reg(low, 0, 5), reg(low, 5, 10), nil, false},
		{"disjoint default", reg(low, 10, 20), nil, nil, false},
	} {
		got, ok := s.Intersect(dims, c.a, c.b)
		if ok != c.ok || !slices.Equal(got, c.want) {
			t.Errorf("%s: Intersect = %v, %v; want %v, %v", c.name, got, ok, c.want, c.ok)
		}
		if err := s.CheckRegion(got); ok && err != nil {
			t.Errorf("%s: Intersect gave an invalid region: %v", c.name, err)
		}
	}
	// Unsorted dims give the same, sorted answer.
	rev := slices.Clone(dims)
	slices.Reverse(rev)
	got, _ := s.Intersect(rev, reg(low, 2, 8), nil)
	want, _ := s.Intersect(dims, reg(low, 2, 8), nil)
	if !slices.Equal(got, want) {
		t.Errorf("Intersect with unsorted dims = %v, want %v", got, want)
	}
}

// Configs that cut alike are Equal: the zero Config is the defaults
// spelled out, and an empty Cells map is none. Normalized copies Cells.
func TestConfigEqual(t *testing.T) {
	zero := Config{}
	if n := zero.Normalized(); n.DefaultCells != DefaultCellsPerDimension || n.MaxJoins != DefaultMaxJoins || n.Cells != nil {
		t.Errorf("Normalized zero Config: %+v", n)
	}
	for _, c := range []struct {
		a, b Config
		want bool
	}{
		{Config{}, Config{DefaultCells: DefaultCellsPerDimension, MaxJoins: DefaultMaxJoins, Cells: map[string]int{}}, true},
		{Config{Cells: map[string]int{"X": 4}}, Config{Cells: map[string]int{"X": 4}}, true},
		{Config{Cells: map[string]int{"X": 4}}, Config{Cells: map[string]int{"X": 5}}, false},
		{Config{Cells: map[string]int{"X": 4}}, Config{}, false},
		{Config{DefaultCells: 4}, Config{}, false},
		{Config{MaxJoins: 9}, Config{}, false},
	} {
		if got := c.a.Equal(c.b); got != c.want || c.b.Equal(c.a) != c.want {
			t.Errorf("%+v.Equal(%+v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
	orig := Config{Cells: map[string]int{"X": 4}}
	n := orig.Normalized()
	n.Cells["X"] = 8
	if orig.Cells["X"] != 4 {
		t.Error("Normalized shares Cells with its receiver")
	}
}
