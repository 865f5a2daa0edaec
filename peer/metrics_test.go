package peer

import (
	"bytes"
	"encoding/binary"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/meshrti/meshrti/peer/metrics"
	"github.com/meshrti/meshrti/peer/reliable"
	"github.com/meshrti/meshrti/peer/transport"
)

// TestKeyRotationAndMetrics: two keyed federates rotate their data-plane
// key in three steps while updates flow over a lossy network; every update
// arrives once and in order, and the metrics registry shows the traffic.
func TestKeyRotationAndMetrics(t *testing.T) {
	key := []byte("an old federation key, 32 bytes.")
	reg := metrics.NewRegistry()
	m := newMemFederation(t, 0, transport.Faults{Loss: 0.1, Duplicate: 0.05}, 9)
	doc := testDoc(t)
	pub := m.addWith("pub", doc, func(c *Config) { c.Key, c.Metrics = key, reg })
	sub := m.addWith("sub", doc, func(c *Config) { c.Key, c.Metrics = key, reg })
	h := handles(t, pub)
	obj := labelFlow(t, pub, sub, h, 5*time.Second)

	old, next := reliable.Key{ID: 0, Secret: key}, reliable.Key{ID: 1, Secret: []byte("the new federation key, 32 bytes")}
	steps := [][]reliable.Key{{old, next}, {next, old}, {next}}
	const perStep = 100
	sent := 0
	for _, keys := range append([][]reliable.Key{nil}, steps...) {
		if keys != nil {
			for _, f := range []*Federate{pub, sub} {
				if err := f.SetDataKeys(keys); err != nil {
					t.Fatal(err)
				}
			}
		}
		for range perStep {
			v := binary.BigEndian.AppendUint32(nil, uint32(sent))
			if err := pub.UpdateAttributeValues(obj, AttributeValues{h.label: v}, nil); err != nil {
				t.Fatal(err)
			}
			sent++
		}
		// Let this step's frames and their repairs arrive before the
		// next step retires a key.
		drain(t, sub, h.label, sent-perStep, perStep)
	}
	if err := pub.SetDataKeys(nil); err == nil {
		t.Error("SetDataKeys(nil) accepted")
	}

	var text bytes.Buffer
	preg := prometheus.NewRegistry()
	preg.MustRegister(reg)
	families, err := preg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range families {
		if _, err := expfmt.MetricFamilyToText(&text, mf); err != nil {
			t.Fatal(err)
		}
	}
	out := text.String()
	for _, name := range []string{
		"meshrti_frames_sent_total", "meshrti_batch_frames_bucket", "meshrti_reliable_frames_dropped_total",
		"meshrti_reliable_retransmits_total", "meshrti_events_queued",
	} {
		if !bytes.Contains(text.Bytes(), []byte(name)) {
			t.Errorf("metrics lack %s", name)
		}
	}
	re := regexp.MustCompile(`meshrti_messages_sent_total\{federate="pub",federation="fed"\} (\S+)`)
	mm := re.FindStringSubmatch(out)
	if mm == nil {
		t.Fatalf("no sent count for pub in\n%s", out)
	}
	if n, _ := strconv.ParseFloat(mm[1], 64); n < float64(sent) {
		t.Errorf("pub sent %v by its metrics, want at least %d", n, sent)
	}
}
