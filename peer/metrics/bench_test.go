package metrics

import (
	"io"
	"math/rand/v2"
	"testing"
)

func BenchmarkCounterInc(b *testing.B) { benchCounterInc(b, new(Counter)) }

// BenchmarkCounterIncNil: a nil counter does nothing.
func BenchmarkCounterIncNil(b *testing.B) { benchCounterInc(b, nil) }

func benchCounterInc(b *testing.B, c *Counter) {
	b.ReportAllocs()
	for b.Loop() {
		c.Inc()
	}
}

func BenchmarkCounterIncParallel(b *testing.B) {
	var c Counter
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c.Inc()
		}
	})
}

func BenchmarkGaugeAdd(b *testing.B) {
	var g Gauge
	b.ReportAllocs()
	for b.Loop() {
		g.Add(1)
	}
}

// observeValues are latencies from 1µs to about 1s, log-uniform, so that
// the benchmark touches many buckets as real traffic does.
func observeValues() []uint64 {
	rng := rand.New(rand.NewPCG(1, 1))
	vs := make([]uint64, 1024)
	for i := range vs {
		vs[i] = 1000 << rng.IntN(20) * uint64(1+rng.IntN(2))
	}
	return vs
}

func BenchmarkHistogramObserve(b *testing.B) {
	var h Histogram
	vs := observeValues()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		h.Observe(vs[i&1023])
		i++
	}
}

func BenchmarkHistogramObserveParallel(b *testing.B) {
	var h Histogram
	vs := observeValues()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := rand.IntN(1024)
		for pb.Next() {
			h.Observe(vs[i&1023])
			i++
		}
	})
}

func BenchmarkHistogramSnapshot(b *testing.B) {
	var h Histogram
	for _, v := range observeValues() {
		h.Observe(v)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = h.Snapshot().Quantile(0.99)
	}
}

func BenchmarkCollect(b *testing.B) {
	r := NewRegistry()
	for i, kind := range []string{"data", "nak", "gone", "hello", "sync", "heartbeat"} {
		c, _ := r.Counter("reliable_frames_sent_total", "Frames sent.", Labels{"kind": kind})
		c.Add(uint64(i))
		g, _ := r.Gauge("queue_depth", "", Labels{"queue": kind})
		g.Set(int64(i))
		h, _ := r.Histogram("latency_ns", "", Labels{"kind": kind})
		for _, v := range observeValues() {
			h.Observe(v)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := writeText(io.Discard, r); err != nil {
			b.Fatal(err)
		}
	}
}
