package fedpro

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/meshrti/meshrti/peer/metrics"
)

// Collector returns a Prometheus collector of the Host's metrics: the
// daemon's sessions, calls and callbacks, and every hosted federate's
// own (its data plane, reliable layer and time core, labelled by
// federation and federate). It is unchecked (Describe describes
// nothing): the federates' series come and go with the sessions.
func (h *Host) Collector() prometheus.Collector { return hostCollector{h} }

type hostCollector struct{ h *Host }

var (
	descSessions    = prometheus.NewDesc("meshrti_fedpro_sessions", "Federate Protocol sessions open.", nil, nil)
	descOpened      = prometheus.NewDesc("meshrti_fedpro_sessions_opened_total", "Federate Protocol sessions opened.", nil, nil)
	descCalls       = prometheus.NewDesc("meshrti_fedpro_calls_total", "Federate Protocol calls served.", nil, nil)
	descExceptions  = prometheus.NewDesc("meshrti_fedpro_call_exceptions_total", "Calls answered with an exception.", nil, nil)
	descUnsupported = prometheus.NewDesc("meshrti_fedpro_calls_unsupported_total", "Calls meshrti does not serve (answered with RTIinternalError).", nil, nil)
	descCallbacks   = prometheus.NewDesc("meshrti_fedpro_callbacks_total", "Callbacks pushed to clients.", nil, nil)
	descPushFailed  = prometheus.NewDesc("meshrti_fedpro_callbacks_failed_total", "Callbacks the session layer could not queue (the session was gone).", nil, nil)
)

func (hostCollector) Describe(chan<- *prometheus.Desc) {}

func (c hostCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.h.Stats()
	ch <- prometheus.MustNewConstMetric(descSessions, prometheus.GaugeValue, float64(st.Sessions))
	for _, m := range []struct {
		d *prometheus.Desc
		v uint64
	}{{descOpened, st.Opened}, {descCalls, st.Calls}, {descExceptions, st.Exceptions}, {descUnsupported, st.Unsupported}, {descCallbacks, st.Callbacks}, {descPushFailed, st.Failed}} {
		ch <- prometheus.MustNewConstMetric(m.d, prometheus.CounterValue, float64(m.v))
	}
	c.h.mu.Lock()
	regs := make([]*metrics.Registry, 0, len(c.h.sessions))
	for s := range c.h.sessions {
		s.mu.Lock()
		regs = append(regs, s.metrics)
		s.mu.Unlock()
	}
	c.h.mu.Unlock()
	for _, r := range regs {
		r.Visit(func(s metrics.Sample) {
			if m := promMetric(s); m != nil {
				ch <- m
			}
		})
	}
}

// promMetric turns one series of package metrics into a Prometheus
// constant metric; nil when it does not fit (cannot happen for the
// names package metrics accepts).
func promMetric(s metrics.Sample) prometheus.Metric {
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
