package metrics

import "testing"

// Visit reads every series with its labels and value, as Collect
// sends them.
func TestVisit(t *testing.T) {
	r := NewRegistry()
	c, _ := r.Counter("frames_total", "frames", Labels{"dir": "out"})
	c.Add(3)
	g, _ := r.Gauge("queue", "queued", nil)
	g.Add(-2)
	if err := r.CounterFunc("calls_total", "calls", Labels{"fed": "A"}, func() uint64 { return 7 }); err != nil {
		t.Fatal(err)
	}
	h, _ := r.Histogram("rtt_us", "round trips", nil)
	h.Observe(3)
	h.Observe(100)
	got := map[string]Sample{}
	var order []string
	r.Visit(func(s Sample) {
		got[s.Name] = s
		order = append(order, s.Name)
	})
	if len(order) != 4 || order[0] != "calls_total" || order[3] != "rtt_us" {
		t.Fatalf("visited %v, want 4 families sorted by name", order)
	}
	if s := got["frames_total"]; s.Kind != "counter" || s.Value != 3 || s.Labels["dir"] != "out" || s.Help != "frames" {
		t.Errorf("counter: %+v", s)
	}
	if s := got["queue"]; s.Kind != "gauge" || s.Value != -2 {
		t.Errorf("gauge: %+v", s)
	}
	if s := got["calls_total"]; s.Value != 7 || s.Labels["fed"] != "A" {
		t.Errorf("counter func: %+v", s)
	}
	s := got["rtt_us"]
	if s.Kind != "histogram" || s.Histogram.Count != 2 || s.Histogram.Sum != 103 {
		t.Fatalf("histogram: %+v", s)
	}
	var last, lastLE uint64
	for le, cum := range s.Histogram.Cumulative() {
		if cum < last {
			t.Errorf("buckets not cumulative: %d at le=%d after %d", cum, le, last)
		}
		last, lastLE = cum, le
	}
	if last != 2 || lastLE < 100 {
		t.Errorf("last bucket le=%d holds %d, want both observations at or above 100", lastLE, last)
	}
}
