package monitor

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

//go:embed assets
var assets embed.FS

// Handler serves the monitor's page and its data:
//
//	/                 the page (assets embedded: it works with no internet)
//	/static/...       its script and style
//	/api/federation   the federation's picture as JSON (Snapshot)
//	/api/history      the samples of the charts as JSON (History)
//	/api/choose       ?class=C&instance=I: pick the class and instance whose owners the page shows
//	/events           server-sent events: the picture after every period
//	/metrics          metrics: Prometheus' text format
//
// metrics serves /metrics; nil serves the monitor's Collector alone. The
// page asks with relative paths, so the Handler may be mounted under a
// prefix (serve mounts one per federation).
func (m *Monitor) Handler(metrics http.Handler) http.Handler {
	if metrics == nil {
		reg := prometheus.NewRegistry()
		reg.MustRegister(m.Collector())
		metrics = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	}
	static, _ := fs.Sub(assets, "assets")
	mux := http.NewServeMux()
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		b, err := assets.ReadFile("assets/index.html")
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(b)
	})
	mux.HandleFunc("GET /api/federation", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, m.Snapshot())
	})
	mux.HandleFunc("GET /api/history", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, m.History())
	})
	mux.HandleFunc("/api/choose", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodPost {
			http.Error(w, "GET or POST", http.StatusMethodNotAllowed)
			return
		}
		q := r.URL.Query()
		if err := m.Choose(q.Get("class"), q.Get("instance")); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		writeJSON(w, m.Snapshot().Ownership)
	})
	mux.HandleFunc("GET /events", m.serveEvents)
	mux.Handle("GET /metrics", metrics)
	return mux
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	_ = enc.Encode(v)
}

// serveEvents streams the picture as server-sent events ("snapshot"),
// one after every period, until the client goes or the monitor closes.
func (m *Monitor) serveEvents(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	tick, stop := m.watch()
	defer stop()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	send := func() bool {
		b, err := json.Marshal(m.Snapshot())
		if err != nil {
			return false
		}
		if _, err := fmt.Fprintf(w, "event: snapshot\ndata: %s\n\n", b); err != nil {
			return false
		}
		fl.Flush()
		return true
	}
	if !send() {
		return
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case _, ok := <-tick:
			if !ok || !send() {
				return
			}
		}
	}
}

// Collector returns a Prometheus collector of the monitor's figures:
// per federate, the MOM's values (labels federation and federate), per
// class the instances, and the monitor's own counts.
func (m *Monitor) Collector() prometheus.Collector { return collector{m} }

type collector struct{ m *Monitor }

var (
	fedLabels   = []string{"federation", "federate"}
	descTime    = prometheus.NewDesc("meshrti_monitor_federate_logical_time", "The federate's logical time (HLAlogicalTime).", fedLabels, nil)
	descLook    = prometheus.NewDesc("meshrti_monitor_federate_lookahead", "The federate's lookahead (HLAlookahead).", fedLabels, nil)
	descReg     = prometheus.NewDesc("meshrti_monitor_federate_regulating", "1 when the federate is time-regulating (HLAtimeRegulating).", fedLabels, nil)
	descCons    = prometheus.NewDesc("meshrti_monitor_federate_constrained", "1 when the federate is time-constrained (HLAtimeConstrained).", fedLabels, nil)
	descUpd     = prometheus.NewDesc("meshrti_monitor_federate_updates_sent_total", "Updates the federate sent (HLAupdatesSent).", fedLabels, nil)
	descRefl    = prometheus.NewDesc("meshrti_monitor_federate_reflections_received_total", "Reflections the federate received (HLAreflectionsReceived).", fedLabels, nil)
	descIntS    = prometheus.NewDesc("meshrti_monitor_federate_interactions_sent_total", "Interactions the federate sent (HLAinteractionsSent).", fedLabels, nil)
	descIntR    = prometheus.NewDesc("meshrti_monitor_federate_interactions_received_total", "Interactions the federate received (HLAinteractionsReceived).", fedLabels, nil)
	descUpdRate = prometheus.NewDesc("meshrti_monitor_federate_updates_per_second", "Updates sent per second, from the last two HLAupdatesSent values.", fedLabels, nil)
	descRefRate = prometheus.NewDesc("meshrti_monitor_federate_reflections_per_second", "Reflections received per second, from the last two HLAreflectionsReceived values.", fedLabels, nil)
	descObjs    = prometheus.NewDesc("meshrti_monitor_federate_objects", "Instances the federate may delete (HLAobjectInstancesThatCanBeDeleted).", fedLabels, nil)
	descLostF   = prometheus.NewDesc("meshrti_monitor_federate_lost", "1 for a federate reported lost (HLAreportFederateLost).", fedLabels, nil)
	descFeds    = prometheus.NewDesc("meshrti_monitor_federates", "Federates whose MOM instance the monitor knows, lost ones not counted.", []string{"federation"}, nil)
	descClass   = prometheus.NewDesc("meshrti_monitor_objects", "Instances per class (HLAreportObjectInstancesThatCanBeDeleted, summed over federates).", []string{"federation", "class"}, nil)
	descMOM     = prometheus.NewDesc("meshrti_monitor_mom_reflections_total", "Reflections of MOM instances the monitor read.", []string{"federation"}, nil)
	descReports = prometheus.NewDesc("meshrti_monitor_mom_reports_total", "MOM report interactions the monitor read.", []string{"federation"}, nil)
	descFail    = prometheus.NewDesc("meshrti_monitor_failures_total", "MOM requests that failed and values that did not decode.", []string{"federation"}, nil)
)

func (collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descTime, descLook, descReg, descCons, descUpd, descRefl, descIntS, descIntR,
		descUpdRate, descRefRate, descObjs, descLostF, descFeds, descClass, descMOM, descReports, descFail} {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	s := c.m.Snapshot()
	fedn := s.Federation
	b := func(v bool) float64 {
		if v {
			return 1
		}
		return 0
	}
	joined := 0
	for _, f := range s.Federates {
		l := []string{fedn, f.Name}
		ch <- prometheus.MustNewConstMetric(descLostF, prometheus.GaugeValue, b(f.Lost), l...)
		if f.Lost {
			continue
		}
		joined++
		if f.Time != nil {
			ch <- prometheus.MustNewConstMetric(descTime, prometheus.GaugeValue, *f.Time, l...)
		}
		if f.Lookahead != nil {
			ch <- prometheus.MustNewConstMetric(descLook, prometheus.GaugeValue, *f.Lookahead, l...)
		}
		ch <- prometheus.MustNewConstMetric(descReg, prometheus.GaugeValue, b(f.Regulating), l...)
		ch <- prometheus.MustNewConstMetric(descCons, prometheus.GaugeValue, b(f.Constrained), l...)
		ch <- prometheus.MustNewConstMetric(descUpd, prometheus.CounterValue, float64(f.UpdatesSent), l...)
		ch <- prometheus.MustNewConstMetric(descRefl, prometheus.CounterValue, float64(f.Reflections), l...)
		ch <- prometheus.MustNewConstMetric(descIntS, prometheus.CounterValue, float64(f.InteractionsSent), l...)
		ch <- prometheus.MustNewConstMetric(descIntR, prometheus.CounterValue, float64(f.InteractionsReceived), l...)
		ch <- prometheus.MustNewConstMetric(descUpdRate, prometheus.GaugeValue, f.UpdatesPerSecond, l...)
		ch <- prometheus.MustNewConstMetric(descRefRate, prometheus.GaugeValue, f.ReflectionsPerSecond, l...)
		ch <- prometheus.MustNewConstMetric(descObjs, prometheus.GaugeValue, float64(f.Objects), l...)
	}
	ch <- prometheus.MustNewConstMetric(descFeds, prometheus.GaugeValue, float64(joined), fedn)
	for _, o := range s.Objects {
		ch <- prometheus.MustNewConstMetric(descClass, prometheus.GaugeValue, float64(o.Count), fedn, o.Class)
	}
	ch <- prometheus.MustNewConstMetric(descMOM, prometheus.CounterValue, float64(c.m.reflections.Load()), fedn)
	ch <- prometheus.MustNewConstMetric(descReports, prometheus.CounterValue, float64(c.m.reportsRead.Load()), fedn)
	ch <- prometheus.MustNewConstMetric(descFail, prometheus.CounterValue, float64(c.m.failures.Load()), fedn)
}
