package lbts

import "math"

// bound is a lower limit on time stamps: every time stamp it allows is
// >= v, and > v when strict. Promises, send floors and GALT are bounds.
type bound struct {
	v      float64
	strict bool
}

// unbounded allows nothing below +Inf: no time stamp at all is expected.
var unbounded = bound{v: math.Inf(1)}

// lower reports whether a allows strictly more than b: a smaller value,
// or the same value with a inclusive and b exclusive.
func (a bound) lower(b bound) bool {
	return a.v < b.v || (a.v == b.v && !a.strict && b.strict)
}

func bmin(a, b bound) bound {
	if b.lower(a) {
		return b
	}
	return a
}

func bmax(a, b bound) bound {
	if a.lower(b) {
		return b
	}
	return a
}

// above reports whether b rules out every time stamp <= t.
func (b bound) above(t float64) bool {
	return t < b.v || (t == b.v && b.strict)
}

// atLeast reports whether b rules out every time stamp < t.
func (b bound) atLeast(t float64) bool { return t <= b.v }

// allows reports whether b rules out what a grant to t needs ruled out:
// every time stamp <= t (inclusive) or < t.
func (b bound) allows(t float64, inclusive bool) bool {
	if inclusive {
		return b.above(t)
	}
	return b.atLeast(t)
}
