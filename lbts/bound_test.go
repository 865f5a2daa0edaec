package lbts

import (
	"math"
	"testing"
)

func TestBound(t *testing.T) {
	b := func(v float64, strict bool) bound { return bound{v, strict} }
	for _, tc := range []struct {
		name            string
		b               bound
		t               float64
		above, atLeast  bool
		allowsInclusive bool
		allowsExclusive bool
	}{
		{"below", b(5, false), 4, true, true, true, true},
		{"at inclusive", b(5, false), 5, false, true, false, true},
		{"at exclusive", b(5, true), 5, true, true, true, true},
		{"above", b(5, true), 6, false, false, false, false},
		{"unbounded", unbounded, 1e300, true, true, true, true},
	} {
		if got := tc.b.above(tc.t); got != tc.above {
			t.Errorf("%s: above = %v", tc.name, got)
		}
		if got := tc.b.atLeast(tc.t); got != tc.atLeast {
			t.Errorf("%s: atLeast = %v", tc.name, got)
		}
		if got := tc.b.allows(tc.t, true); got != tc.allowsInclusive {
			t.Errorf("%s: allows inclusive = %v", tc.name, got)
		}
		if got := tc.b.allows(tc.t, false); got != tc.allowsExclusive {
			t.Errorf("%s: allows exclusive = %v", tc.name, got)
		}
	}
	for _, tc := range []struct {
		a, b, min, max bound
	}{
		{b(1, false), b(2, false), b(1, false), b(2, false)},
		{b(1, false), b(1, true), b(1, false), b(1, true)},
		{b(1, true), b(1, false), b(1, false), b(1, true)},
		{unbounded, b(3, true), b(3, true), unbounded},
		{b(math.Inf(-1), false), b(0, false), b(math.Inf(-1), false), b(0, false)},
	} {
		if got := bmin(tc.a, tc.b); got != tc.min {
			t.Errorf("bmin(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.min)
		}
		if got := bmax(tc.a, tc.b); got != tc.max {
			t.Errorf("bmax(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.max)
		}
	}
}
