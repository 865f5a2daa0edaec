package fedpro

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// The Host's collector gives the daemon's counters and each hosted
// federate's own metrics, labelled by federate, through the Prometheus
// client library.
func TestCollector(t *testing.T) {
	c := newFPNet(t).soloJoined(t)
	c.classHandle("Car")
	reg := prometheus.NewRegistry()
	if err := reg.Register(c.host.Collector()); err != nil {
		t.Fatal(err)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	federateLabelled := 0
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			switch {
			case m.GetCounter() != nil:
				got[f.GetName()] += m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				got[f.GetName()] += m.GetGauge().GetValue()
			}
			for _, l := range m.GetLabel() {
				if l.GetName() == "federate" && l.GetValue() == "A" {
					federateLabelled++
				}
			}
		}
	}
	if got["meshrti_fedpro_calls_total"] < 4 || got["meshrti_fedpro_sessions"] != 1 || got["meshrti_fedpro_sessions_opened_total"] != 1 {
		t.Errorf("daemon metrics %v", got)
	}
	if federateLabelled < 5 {
		t.Errorf("%d series of the hosted federate A, want its data-plane metrics", federateLabelled)
	}
	if _, ok := got["meshrti_frames_received_total"]; !ok {
		t.Errorf("no meshrti_frames_received_total from the hosted federate (families: %d)", len(fams))
	}
}
