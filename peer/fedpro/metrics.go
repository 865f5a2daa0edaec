package fedpro

import (
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
		r.Collect(ch)
	}
}
