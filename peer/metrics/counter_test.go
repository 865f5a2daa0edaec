package metrics

import (
	"sync"
	"testing"
)

func TestCounter(t *testing.T) {
	var c Counter
	if c.Load() != 0 {
		t.Fatalf("zero counter = %d", c.Load())
	}
	c.Inc()
	c.Add(41)
	c.Add(0)
	if got := c.Load(); got != 42 {
		t.Fatalf("Load = %d, want 42", got)
	}
}

func TestGauge(t *testing.T) {
	var g Gauge
	g.Set(10)
	g.Add(-15)
	if got := g.Load(); got != -5 {
		t.Fatalf("Load = %d, want -5", got)
	}
	g.Set(7)
	if got := g.Load(); got != 7 {
		t.Fatalf("Load = %d, want 7", got)
	}
}

// Nil metrics are what a nil Registry hands out; they must accept every
// call.
func TestNilMetrics(t *testing.T) {
	var c *Counter
	c.Inc()
	c.Add(3)
	if c.Load() != 0 {
		t.Error("nil counter Load != 0")
	}
	var g *Gauge
	g.Set(3)
	g.Add(-1)
	if g.Load() != 0 {
		t.Error("nil gauge Load != 0")
	}
}

func TestCounterGaugeConcurrent(t *testing.T) {
	const workers, per = 8, 10000
	var c Counter
	var g Gauge
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range per {
				c.Inc()
				g.Add(2)
				g.Add(-1)
			}
		})
	}
	wg.Wait()
	if got := c.Load(); got != workers*per {
		t.Errorf("counter = %d, want %d", got, workers*per)
	}
	if got := g.Load(); got != workers*per {
		t.Errorf("gauge = %d, want %d", got, workers*per)
	}
}
