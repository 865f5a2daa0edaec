package ddm

import (
	"encoding/binary"
	"math"
	"slices"
	"testing"
)

// fuzzInput decodes a fuzz input: a byte of dimension mask (A, B, C, F,
// S and a handle the space does not have), a byte of level, then regions
// a and b: per dimension a flag byte (bit 0: specified; bit 1: 8-byte
// bounds, else 2-byte) and, if specified, lower and upper bound
// big-endian. Missing bytes read as zero.
type fuzzInput struct {
	b []byte
}

func (in *fuzzInput) byte() byte {
	if len(in.b) == 0 {
		return 0
	}
	x := in.b[0]
	in.b = in.b[1:]
	return x
}

func (in *fuzzInput) uint(n int) uint64 {
	var buf [8]byte
	k := copy(buf[8-n:], in.b)
	in.b = in.b[k:]
	return binary.BigEndian.Uint64(buf[:])
}

func (in *fuzzInput) region(dims []DimensionHandle) Region {
	var r Region
	for _, d := range dims {
		flag := in.byte()
		if flag&1 == 0 {
			continue
		}
		n := 2
		if flag&2 != 0 {
			n = 8
		}
		r = append(r, DimRange{d, Range{in.uint(n), in.uint(n)}})
	}
	return r // not sorted: Region functions must cope
}

// fuzzSeed encodes a fuzz input: mask, level, then per region and
// dimension either nil (unspecified) or a range.
func fuzzSeed(mask, level byte, ranges ...*Range) []byte {
	out := []byte{mask, level}
	for _, r := range ranges {
		if r == nil {
			out = append(out, 0)
			continue
		}
		out = append(out, 3)
		out = binary.BigEndian.AppendUint64(out, r.Lower)
		out = binary.BigEndian.AppendUint64(out, r.Upper)
	}
	return out
}

func FuzzRegions(f *testing.F) {
	s := testSpace(f, Config{DefaultCells: 4, MaxJoins: 5},
		dimSpec{"A", "100", ""},
		dimSpec{"B", "50", "[10..20)"},
		dimSpec{"C", "1000", "Excluded"},
		dimSpec{"F", "", ""},
		dimSpec{"S", "3", "[1)"})
	named, _ := s.Handles([]string{"A", "B", "C", "F", "S"})
	space := append(slices.Clone(named), DimensionHandle(1)) // and one unknown

	r := func(lo, hi uint64) *Range { return &Range{lo, hi} }
	f.Add([]byte{})
	f.Add(fuzzSeed(0x01, 0, r(0, 10), nil, nil, nil, nil, nil, r(10, 20)))
	f.Add(fuzzSeed(0x01, 0, r(0, 11), nil, nil, nil, nil, nil, r(10, 20)))
	f.Add(fuzzSeed(0x07, 1, r(5, 5), r(0, 50), nil, nil, nil, nil, r(0, 100), nil, r(3, 4)))
	f.Add(fuzzSeed(0x1f, 2, r(0, 100), r(0, 50), r(0, 1000), r(0, math.MaxUint64), r(0, 3),
		nil, r(99, 100), r(49, 50), r(999, 1000), r(math.MaxUint64-1, math.MaxUint64), r(2, 3)))
	f.Add(fuzzSeed(0x3f, 9, r(7, 3), r(60, 70), r(2000, 3000), r(math.MaxUint64, math.MaxUint64), r(5, 9), r(1, 2),
		r(0, 1), nil, nil, nil, nil, r(0, 1)))
	f.Add(fuzzSeed(0x08, 0, r(1<<63, 1<<63+1), nil, nil, r(0, 1<<63+1)))

	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzInput{data}
		mask := in.byte()
		level := in.byte()
		var dims []DimensionHandle
		for i, d := range space {
			if mask&(1<<i) != 0 {
				dims = append(dims, d)
			}
		}
		a, b := in.region(space), in.region(space)

		// Nothing panics, whatever the input.
		valid := s.CheckRegion(a) == nil && s.CheckRegion(b) == nil
		for _, dr := range append(slices.Clone(a), b...) {
			_ = s.CheckRange(dr.Dim, dr.Range)
			_ = a.With(dr.Dim, dr.Range)
			_, _ = b.Range(dr.Dim)
		}
		ov := s.Overlaps(dims, a, b)
		if ov != s.Overlaps(dims, b, a) {
			t.Fatalf("Overlaps not symmetric: %v, %v over %v", a, b, dims)
		}
		if s.SetsOverlap(dims, []Region{a}, []Region{b}) != ov {
			t.Fatalf("SetsOverlap disagrees with Overlaps")
		}
		in2, ok := s.Intersect(dims, a, b)
		if ok != ov {
			t.Fatalf("Intersect ok = %v, Overlaps = %v: %v, %v over %v", ok, ov, a, b, dims)
		}
		la, lb := s.Level(dims, a), s.Level(dims, b)
		ca, cb := s.Cells(dims, a, level), s.Cells(dims, b, level)
		if n := len(s.Cells(dims, a, la)); n > s.MaxJoins() {
			t.Fatalf("Level(%v) = %d gives %d cells", a, la, n)
		}
		_ = s.Cells(dims, b, lb)

		// The Matcher agrees with Overlaps, for any input.
		m := NewMatcher(s, dims)
		m.SetUpdate(1, []Region{a})
		m.SetSubscription(2, []Region{b})
		if got := len(m.Matches(1)) == 1; got != ov {
			t.Fatalf("Matcher says %v, Overlaps %v: %v, %v over %v", got, ov, a, b, dims)
		}
		m.SetUpdate(1, []Region{b})
		if got, want := len(m.Subscribers(2)) == 1, s.Overlaps(dims, b, b); got != want {
			t.Fatalf("after a move, Matcher says %v, Overlaps %v", got, want)
		}
		m.RemoveSubscription(2)
		m.RemoveUpdate(1)
		if got := m.Changes(); len(got) != 0 {
			t.Fatalf("set and removed: Changes = %v", got)
		}

		// For valid regions, the cell mapping is sound: overlapping
		// regions share the cells of their intersection.
		if !valid || !ov {
			return
		}
		ci := s.Cells(dims, in2, level)
		if len(ci) == 0 {
			t.Fatalf("intersection %v of %v, %v has no cells", in2, a, b)
		}
		for _, c := range ci {
			if !slices.Contains(ca, c) || !slices.Contains(cb, c) {
				t.Fatalf("cell %v of intersection %v not in both %v, %v", c, in2, ca, cb)
			}
		}
	})
}
