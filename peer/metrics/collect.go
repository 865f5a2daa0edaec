package metrics

import (
	"iter"
	"math/bits"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// Describe sends nothing: a Registry is an unchecked Prometheus
// collector, since its series come and go with Unregister and with the
// components that register them.
func (r *Registry) Describe(chan<- *prometheus.Desc) {}

// Collect sends every registered series to ch as a constant metric, for
// a prometheus.Registry to expose (with client_golang's promhttp). It
// reads the metrics and calls the functions of CounterFunc and GaugeFunc
// without holding the registry's lock.
//
// A histogram is sent with cumulative buckets whose upper bounds ("le")
// are the powers of two (and 0) from the one at or above its minimum to
// the one at or above its maximum: the set of bounds only grows over
// time, as Prometheus wants, and stays small.
func (r *Registry) Collect(ch chan<- prometheus.Metric) {
	r.Visit(func(s Sample) {
		if m := s.metric(); m != nil {
			ch <- m
		}
	})
}

// metric returns s as a Prometheus constant metric; nil when it does not
// fit, which cannot happen for the names and labels a Registry accepts.
func (s Sample) metric() prometheus.Metric {
	names := make([]string, 0, len(s.Labels))
	for k := range s.Labels {
		names = append(names, k)
	}
	slices.Sort(names)
	values := make([]string, len(names))
	for i, k := range names {
		values[i] = s.Labels[k]
	}
	d := prometheus.NewDesc(s.Name, s.Help, names, nil)
	var m prometheus.Metric
	var err error
	switch s.Kind {
	case "counter":
		m, err = prometheus.NewConstMetric(d, prometheus.CounterValue, s.Value, values...)
	case "gauge":
		m, err = prometheus.NewConstMetric(d, prometheus.GaugeValue, s.Value, values...)
	case "histogram":
		buckets := make(map[float64]uint64)
		for le, cum := range s.Histogram.Cumulative() {
			buckets[float64(le)] = cum
		}
		m, err = prometheus.NewConstHistogram(d, s.Histogram.Count, float64(s.Histogram.Sum), buckets, values...)
	default:
		return nil
	}
	if err != nil {
		return nil
	}
	return m
}

// familyView is a family and its series as of one collection, sorted.
type familyView struct {
	name, help string
	kind       kind
	series     []*series
}

// collect returns the registered families sorted by name, each with its
// series sorted by labels. The series are shared, but what collect
// returns does not change when registrations do.
func (r *Registry) collect() []familyView {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	fs := make([]familyView, 0, len(r.families))
	for _, f := range r.families {
		v := familyView{name: f.name, help: f.help, kind: f.kind}
		for _, s := range f.series {
			v.series = append(v.series, s)
		}
		slices.SortFunc(v.series, func(a, b *series) int { return compareLabels(a.labels, b.labels) })
		fs = append(fs, v)
	}
	slices.SortFunc(fs, func(a, b familyView) int { return strings.Compare(a.name, b.name) })
	return fs
}

// octaves yields, for each "le" bound Collect sends, the number of
// observations <= le: the bounds are 0 and the powers of two, from the
// first at or above Min to the first at or above Max (or 2^63).
func (s HistogramSnapshot) octaves() iter.Seq2[uint64, uint64] {
	return func(yield func(le, cum uint64) bool) {
		if s.Count == 0 || s.Min > 1<<63 {
			return
		}
		var le uint64 // smallest bound >= Min
		if s.Min > 0 {
			le = 1 << bits.Len64(s.Min-1)
		}
		var cum uint64
		i := 0
		for {
			for ; i < len(s.counts); i++ {
				if _, hi := bucketBounds(s.first + i); hi > le {
					break
				}
				cum += s.counts[i]
			}
			if !yield(le, cum) || le >= s.Max || le == 1<<63 {
				return
			}
			le = max(le<<1, 1)
		}
	}
}
