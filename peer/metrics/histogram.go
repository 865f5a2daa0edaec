package metrics

import (
	"math"
	"math/bits"
	"sync/atomic"
)

// Bucket layout. Bucket 0 holds the value 0. For v >= 1 let u = v-1:
// values with u < 2*subBuckets each have a bucket of their own; above
// that, u's top subBits+1 bits select one of subBuckets buckets within
// its power of two. Shifting by one makes every bucket's upper bound an
// integer that is a power of two times a sub-bucket number, so the
// octave boundaries that Collect uses as "le" are exact powers of two.
const (
	subBits    = 5
	subBuckets = 1 << subBits // per power of two
	// numBuckets covers every uint64: 1 for zero, 2*subBuckets exact
	// ones, then subBuckets for each shift 1 .. 64-subBits-1.
	numBuckets = 1 + (64-subBits+1)*subBuckets
)

// bucketOf returns the index of the bucket that holds v.
func bucketOf(v uint64) int {
	if v == 0 {
		return 0
	}
	u := v - 1
	if u < 2*subBuckets {
		return 1 + int(u)
	}
	shift := bits.Len64(u) - subBits - 1
	return 1 + shift*subBuckets + int(u>>shift)
}

// bucketBounds returns the smallest and the largest value that bucket i
// holds.
func bucketBounds(i int) (lo, hi uint64) {
	if i == 0 {
		return 0, 0
	}
	j := i - 1
	if j < 2*subBuckets {
		return uint64(j) + 1, uint64(j) + 1
	}
	shift := j/subBuckets - 1
	mant := uint64(j%subBuckets + subBuckets)
	lo = mant<<shift + 1
	hi = lo + (1<<shift - 1)
	if hi < lo { // the last bucket ends at 2^64-1
		hi = math.MaxUint64
	}
	return lo, hi
}

// Histogram is a distribution of uint64 values: latencies in
// nanoseconds, sizes in bytes, queue depths. It keeps a count per fixed
// log-linear bucket (see the package doc for the accuracy) plus the sum,
// the minimum and the maximum.
//
// Observe may be called from any goroutine; it is lock-free, allocates
// nothing and never blocks. The zero value is an empty histogram, ready
// to use; a Histogram must not be copied after first use. A nil
// *Histogram is valid too: Observe does nothing and Snapshot is empty.
type Histogram struct {
	sum    atomic.Uint64
	minInv atomic.Uint64 // ^min, so that the zero value means "no minimum yet"
	max    atomic.Uint64
	counts [numBuckets]atomic.Uint64
}

// Observe records v. The sum wraps at 2^64 (584 years of nanoseconds).
func (h *Histogram) Observe(v uint64) {
	if h == nil {
		return
	}
	// Min and max first, then the bucket: a Snapshot reads the buckets
	// first, so its Min and Max cover every observation it counts.
	for inv := h.minInv.Load(); ^v > inv; inv = h.minInv.Load() {
		if h.minInv.CompareAndSwap(inv, ^v) {
			break
		}
	}
	for m := h.max.Load(); v > m; m = h.max.Load() {
		if h.max.CompareAndSwap(m, v) {
			break
		}
	}
	h.counts[bucketOf(v)].Add(1)
	h.sum.Add(v)
}

// Snapshot returns the current contents of h. See the package doc for
// how concurrent observations show in it.
func (h *Histogram) Snapshot() HistogramSnapshot {
	var s HistogramSnapshot
	if h == nil {
		return s
	}
	first, last := -1, -1
	var counts [numBuckets]uint64
	for i := range h.counts {
		n := h.counts[i].Load()
		if n == 0 {
			continue
		}
		counts[i] = n
		if first < 0 {
			first = i
		}
		last = i
		s.Count += n
	}
	if s.Count == 0 {
		return HistogramSnapshot{}
	}
	s.Sum = h.sum.Load()
	s.Min = ^h.minInv.Load()
	s.Max = h.max.Load()
	s.first = first
	s.counts = append([]uint64(nil), counts[first:last+1]...)
	return s
}

// HistogramSnapshot is the contents of a Histogram at one time. Its
// methods do not modify it, and copies share nothing that changes, so it
// may be used from any goroutine. The zero value is an empty snapshot.
type HistogramSnapshot struct {
	Count uint64 // number of observations
	Sum   uint64 // sum of observations, wrapping at 2^64
	Min   uint64 // smallest observation; 0 if Count is 0
	Max   uint64 // largest observation; 0 if Count is 0

	first  int      // bucket index of counts[0]
	counts []uint64 // per bucket, from the first to the last non-empty one
}

// Quantile estimates the q-quantile: the smallest observation x such
// that at least ceil(q*Count) observations (and at least one) are <= x.
// The estimate is within x/64 of x, and exact for x <= 64. q is clamped
// to [0, 1], so Quantile(0) is Min and Quantile(1) is Max; a NaN q and an
// empty snapshot give 0.
func (s HistogramSnapshot) Quantile(q float64) uint64 {
	if s.Count == 0 || math.IsNaN(q) {
		return 0
	}
	if q <= 0 {
		return s.Min
	}
	if q >= 1 {
		return s.Max
	}
	rank := uint64(math.Ceil(q * float64(s.Count)))
	rank = max(rank, 1)
	rank = min(rank, s.Count)
	var seen uint64
	for i, n := range s.counts {
		seen += n
		if seen < rank {
			continue
		}
		lo, hi := bucketBounds(s.first + i)
		est := lo + (hi-lo)/2
		return min(max(est, s.Min), s.Max)
	}
	return s.Max // counts and Count disagree; not reached for our own snapshots
}

// Mean returns Sum/Count, or 0 if s is empty.
func (s HistogramSnapshot) Mean() float64 {
	if s.Count == 0 {
		return 0
	}
	return float64(s.Sum) / float64(s.Count)
}
