package updatecond

import (
	"bytes"
	"math"
)

// compare judges cur against last, two values decoded under the same data
// type (see the codec's value model). differs reports any change at all;
// pass reports a change worth sending under th: a number that moved by at
// least the threshold, any change of a value that is not a number, a
// change of an array's length or of a record's fields (a variant record's
// alternative). Arrays and records pass when any element or field passes.
func compare(last, cur any, th Threshold) (pass, differs bool) {
	switch c := cur.(type) {
	case float64:
		l, ok := last.(float64)
		if !ok {
			return true, true
		}
		return floatPass(l, c, th)
	case int64:
		return intPass(last, c, th)
	case uint64:
		return intPass(last, c, th)
	case string:
		return changed(last, c)
	case bool:
		return changed(last, c)
	case []byte:
		l, ok := last.([]byte)
		d := !ok || !bytes.Equal(l, c)
		return d, d
	case []any:
		l, ok := last.([]any)
		if !ok || len(l) != len(c) {
			return true, true
		}
		for i := range c {
			p, d := compare(l[i], c[i], th)
			if p {
				return true, true
			}
			differs = differs || d
		}
		return false, differs
	case map[string]any:
		l, ok := last.(map[string]any)
		if !ok || len(l) != len(c) {
			return true, true
		}
		for k, cv := range c {
			lv, ok := l[k]
			if !ok {
				return true, true
			}
			p, d := compare(lv, cv, th)
			if p {
				return true, true
			}
			differs = differs || d
		}
		return false, differs
	case nil:
		d := last != nil
		return d, d
	}
	// The codec returns no other types; send what cannot be compared.
	return true, true
}

// floatPass judges one floating-point number.
func floatPass(l, c float64, th Threshold) (pass, differs bool) {
	if l == c || (math.IsNaN(l) && math.IsNaN(c)) {
		return false, false
	}
	d := math.Abs(c - l)
	if math.IsNaN(d) { // one of them is NaN
		return true, true
	}
	return d >= limit(l, th), true
}

// intPass judges one integer: a last value of another type is a change.
func intPass[T int64 | uint64](last any, c T, th Threshold) (pass, differs bool) {
	l, ok := last.(T)
	if !ok {
		return true, true
	}
	if l == c {
		return false, false
	}
	d := uint64(c) - uint64(l) // |c − l|, exact in two's complement
	if l > c {
		d = uint64(l) - uint64(c)
	}
	return float64(d) >= limit(float64(l), th), true
}

// changed judges a value that is not a number: any change passes.
func changed[T comparable](last any, c T) (pass, differs bool) {
	l, ok := last.(T)
	d := !ok || l != c
	return d, d
}

// limit is the smallest move of a number whose last sent value is l that
// th lets through (a move must also be nonzero).
func limit(l float64, th Threshold) float64 {
	switch th.Kind {
	case Relative:
		return th.Value * math.Abs(l) / 100
	case Absolute:
		return th.Value
	}
	return 0
}
