package metrics

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// The buckets tile [0, 2^64) without gaps or overlaps, each bucket holds
// exactly its bounds, and a bucket above 64 is at most 1/32 of its lower
// bound wide.
func TestBucketLayout(t *testing.T) {
	if lo, hi := bucketBounds(0); lo != 0 || hi != 0 {
		t.Fatalf("bucket 0 = [%d, %d]", lo, hi)
	}
	if _, hi := bucketBounds(numBuckets - 1); hi != math.MaxUint64 {
		t.Fatalf("last bucket ends at %d", hi)
	}
	if got := bucketOf(math.MaxUint64); got != numBuckets-1 {
		t.Fatalf("bucketOf(MaxUint64) = %d, want %d", got, numBuckets-1)
	}
	for i := range numBuckets {
		lo, hi := bucketBounds(i)
		if lo > hi {
			t.Fatalf("bucket %d = [%d, %d]", i, lo, hi)
		}
		if bucketOf(lo) != i || bucketOf(hi) != i {
			t.Fatalf("bucket %d = [%d, %d], but bucketOf gives %d and %d", i, lo, hi, bucketOf(lo), bucketOf(hi))
		}
		if i+1 < numBuckets {
			if next, _ := bucketBounds(i + 1); next != hi+1 {
				t.Fatalf("bucket %d ends at %d, bucket %d starts at %d", i, hi, i+1, next)
			}
		}
		if lo <= 64 && lo != hi {
			t.Fatalf("bucket %d = [%d, %d] is not exact", i, lo, hi)
		}
		if w := hi - lo + 1; lo > 64 && w > (lo-1)/subBuckets {
			t.Fatalf("bucket %d = [%d, %d] is %d wide", i, lo, hi, w)
		}
	}
}

// Every power of two is the upper bound of a bucket: WriteText uses them
// as "le".
func TestPowersOfTwoEndBuckets(t *testing.T) {
	for k := range 64 {
		v := uint64(1) << k
		if _, hi := bucketBounds(bucketOf(v)); hi != v {
			t.Errorf("2^%d is in a bucket ending at %d", k, hi)
		}
	}
}

// exactQuantile is the nearest-rank quantile of sorted samples, the
// definition Quantile estimates.
func exactQuantile(sorted []uint64, q float64) uint64 {
	rank := int(math.Ceil(q * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// checkQuantile fails unless est is within the documented bound of exact.
func checkQuantile(t *testing.T, name string, q float64, est, exact uint64) {
	t.Helper()
	d := max(est, exact) - min(est, exact)
	if exact <= 64 && d != 0 || exact > 64 && d > (exact-1)/64 {
		t.Errorf("%s: Quantile(%v) = %d, exact %d: error %.3f%% exceeds 1/64", name, q, est, exact, 100*float64(d)/float64(exact))
	}
}

func TestQuantileAccuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	dists := []struct {
		name string
		gen  func() uint64
	}{
		{"small", func() uint64 { return rng.Uint64N(100) }},
		{"uniform", func() uint64 { return rng.Uint64N(1e9) }},
		{"log-uniform", func() uint64 { return uint64(math.Exp2(rng.Float64() * 63)) }},
		{"exponential", func() uint64 { return uint64(rng.ExpFloat64() * 1e6) }},
		{"bimodal", func() uint64 {
			if rng.IntN(10) == 0 {
				return 5e8 + rng.Uint64N(1e6)
			}
			return 2e5 + rng.Uint64N(1e4)
		}},
		{"full range", rng.Uint64},
	}
	qs := []float64{0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 0.9999, 1}
	for _, d := range dists {
		for _, n := range []int{1, 2, 10, 1000, 100000} {
			var h Histogram
			samples := make([]uint64, n)
			var sum uint64
			for i := range samples {
				v := d.gen()
				samples[i] = v
				sum += v
				h.Observe(v)
			}
			slices.Sort(samples)
			s := h.Snapshot()
			if s.Count != uint64(n) || s.Sum != sum || s.Min != samples[0] || s.Max != samples[n-1] {
				t.Errorf("%s/%d: Count %d Sum %d Min %d Max %d, want %d %d %d %d",
					d.name, n, s.Count, s.Sum, s.Min, s.Max, n, sum, samples[0], samples[n-1])
			}
			for _, q := range qs {
				checkQuantile(t, d.name, q, s.Quantile(q), exactQuantile(samples, q))
			}
			for range 100 {
				q := rng.Float64()
				checkQuantile(t, d.name, q, s.Quantile(q), exactQuantile(samples, q))
			}
		}
	}
}

func TestQuantileEdges(t *testing.T) {
	var empty HistogramSnapshot
	if empty.Quantile(0.5) != 0 || empty.Mean() != 0 {
		t.Error("empty snapshot is not all zero")
	}
	var h Histogram
	for _, v := range []uint64{0, 10, 1000, math.MaxUint64} {
		h.Observe(v)
	}
	s := h.Snapshot()
	for _, tc := range []struct {
		q    float64
		want uint64
	}{
		{math.NaN(), 0},
		{-1, 0},
		{math.Inf(-1), 0},
		{0, 0},
		{0.25, 0},
		{0.5, 10},
		{2, math.MaxUint64},
		{math.Inf(1), math.MaxUint64},
		{1, math.MaxUint64},
	} {
		if got := s.Quantile(tc.q); got != tc.want {
			t.Errorf("Quantile(%v) = %d, want %d", tc.q, got, tc.want)
		}
	}
	if got := s.Quantile(0.75); got < 985 || got > 1015 {
		t.Errorf("Quantile(0.75) = %d, want about 1000", got)
	}
}

func TestSnapshotMean(t *testing.T) {
	var h Histogram
	for _, v := range []uint64{0, 0, 3, 100, 101} {
		h.Observe(v)
	}
	if got := h.Snapshot().Mean(); got != 204.0/5 {
		t.Errorf("Mean = %v", got)
	}
}

func TestNilHistogram(t *testing.T) {
	var h *Histogram
	h.Observe(5)
	if s := h.Snapshot(); s.Count != 0 {
		t.Errorf("nil histogram snapshot = %+v", s)
	}
}

func TestObserveAllocs(t *testing.T) {
	var h Histogram
	var c Counter
	var g Gauge
	v := uint64(0)
	if n := testing.AllocsPerRun(1000, func() { v += 12345; h.Observe(v); c.Inc(); g.Add(1) }); n != 0 {
		t.Errorf("Observe, Inc, Add allocate %v times", n)
	}
}

// Snapshots taken during concurrent observations are consistent where
// the package doc promises it, and the final one is exact.
func TestHistogramConcurrent(t *testing.T) {
	const workers, per = 4, 20000
	var h Histogram
	var wg sync.WaitGroup
	done := make(chan struct{})
	var scrapeErr error
	var scraper sync.WaitGroup
	scraper.Go(func() {
		var last uint64
		for {
			select {
			case <-done:
				return
			default:
			}
			s := h.Snapshot()
			if s.Count < last {
				scrapeErr = fmt.Errorf("Count went from %d to %d", last, s.Count)
				return
			}
			last = s.Count
			if s.Count == 0 {
				continue
			}
			for _, q := range []float64{0, 0.5, 0.99, 1} {
				if v := s.Quantile(q); v < s.Min || v > s.Max {
					scrapeErr = fmt.Errorf("Quantile(%v) = %d outside [%d, %d]", q, v, s.Min, s.Max)
					return
				}
			}
			var cum uint64
			for le, c := range s.octaves() {
				if c < cum || c > s.Count {
					scrapeErr = fmt.Errorf("bucket le=%d holds %d after %d, of %d", le, c, cum, s.Count)
					return
				}
				cum = c
			}
		}
	})
	for w := range workers {
		wg.Go(func() {
			for i := range per {
				h.Observe(uint64(w*per + i + 1))
			}
		})
	}
	wg.Wait()
	close(done)
	scraper.Wait()
	if scrapeErr != nil {
		t.Fatal(scrapeErr)
	}
	s := h.Snapshot()
	n := uint64(workers * per)
	if s.Count != n || s.Sum != n*(n+1)/2 || s.Min != 1 || s.Max != n {
		t.Errorf("final snapshot %+v", s)
	}
}
