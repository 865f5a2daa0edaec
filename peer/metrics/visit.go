package metrics

import "iter"

// Sample is one series as Visit reads it: its family's name, help and
// kind ("counter", "gauge" or "histogram"), its labels, and its value
// (counters and gauges) or its histogram.
type Sample struct {
	Name, Help string
	Kind       string
	Labels     Labels
	Value      float64
	Histogram  HistogramSnapshot
}

// Visit calls fn for every registered series, families sorted by name
// and series by labels, reading each value as Collect does. fn must not
// register metrics.
func (r *Registry) Visit(fn func(Sample)) {
	for _, f := range r.collect() {
		for _, s := range f.series {
			smp := Sample{Name: f.name, Help: f.help, Kind: f.kind.String(), Labels: make(Labels, len(s.labels))}
			for _, l := range s.labels {
				smp.Labels[l.name] = l.value
			}
			switch {
			case s.counter != nil:
				smp.Value = float64(s.counter.Load())
			case s.counterFn != nil:
				smp.Value = float64(s.counterFn())
			case s.gauge != nil:
				smp.Value = float64(s.gauge.Load())
			case s.gaugeFn != nil:
				smp.Value = float64(s.gaugeFn())
			case s.hist != nil:
				smp.Histogram = s.hist.Snapshot()
			}
			fn(smp)
		}
	}
}

// Cumulative yields the cumulative buckets Collect sends for the
// histogram: each upper bound ("le") and the observations at or below
// it; "+Inf" is Count.
func (s HistogramSnapshot) Cumulative() iter.Seq2[uint64, uint64] { return s.octaves() }
