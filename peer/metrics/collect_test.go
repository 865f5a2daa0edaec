package metrics

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenRegistry holds one of everything, with names and labels that
// need escaping and sorting.
func goldenRegistry(t *testing.T) *Registry {
	t.Helper()
	r := NewRegistry()
	ck := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	c, err := r.Counter("reliable_frames_sent_total", "Frames sent, by kind.", Labels{"kind": "data"})
	ck(err)
	c.Add(1234)
	c, err = r.Counter("reliable_frames_sent_total", "", Labels{"kind": "nak"})
	ck(err)
	c.Inc()
	c, err = r.Counter("reliable_frames_sent_total", "", Labels{"kind": "data", "group": "7"})
	ck(err)
	c.Add(5)
	c, err = r.Counter("reliable_frames_sent_total", "", nil)
	ck(err)
	c.Add(9)
	// "a" sorts before "a0" though `a="` sorts after `a0=` as text.
	g, err := r.Gauge("queue_depth", "Depth of a queue.\nIn messages, \\ not bytes.", Labels{"a": "x"})
	ck(err)
	g.Set(-3)
	g, err = r.Gauge("queue_depth", "", Labels{"a0": "x"})
	ck(err)
	g.Set(7)
	g, err = r.Gauge("queue_depth", "", Labels{"path": "C:\\tmp\n\"q\" é"})
	ck(err)
	g.Set(1)
	ck(r.CounterFunc("gossip:naks_total", "", Labels{"src": "stats"}, func() uint64 { return 42 }))
	ck(r.GaugeFunc("peers", "Known peers.", nil, func() int64 { return 99 }))
	h, err := r.Histogram("ack_latency_ns", "Time from send to ack.", Labels{"group": "1"})
	ck(err)
	for _, v := range []uint64{3000, 5000, 100000, 1_000_000, 1_500_000} {
		h.Observe(v)
	}
	h, err = r.Histogram("ack_latency_ns", "", Labels{"group": "2"})
	ck(err)
	_ = h // empty
	h, err = r.Histogram("frame_bytes", "", nil)
	ck(err)
	for _, v := range []uint64{0, 1, 1, 3, 64, 65, 1500} {
		h.Observe(v)
	}
	h, err = r.Histogram("extremes", "", nil)
	ck(err)
	h.Observe(1<<63 + 1)
	h.Observe(math.MaxUint64)
	return r
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run with -update and review the diff):\ngot:\n%s", path, got)
	}
}

// writeText writes what r collects in the Prometheus text format, as
// promhttp serves it.
func writeText(w io.Writer, r *Registry) error {
	preg := prometheus.NewRegistry()
	if err := preg.Register(r); err != nil {
		return err
	}
	families, err := preg.Gather()
	if err != nil {
		return err
	}
	for _, mf := range families {
		if _, err := expfmt.MetricFamilyToText(w, mf); err != nil {
			return err
		}
	}
	return nil
}

func TestCollectGolden(t *testing.T) {
	r := goldenRegistry(t)
	var b bytes.Buffer
	if err := writeText(&b, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "collect.txt", b.Bytes())
	var b2 bytes.Buffer
	if err := writeText(&b2, r); err != nil || !bytes.Equal(b.Bytes(), b2.Bytes()) {
		t.Errorf("second collection differs (%v)", err)
	}
}

// sample is one parsed sample line.
type sample struct {
	name   string
	labels map[string]string
	value  string
}

// parseText is a strict parser for what writeText writes: it fails on
// anything the text format 0.0.4 does not allow.
func parseText(t *testing.T, text string) (types map[string]string, samples []sample) {
	t.Helper()
	types = map[string]string{}
	if !strings.HasSuffix(text, "\n") && text != "" {
		t.Fatal("output does not end with a newline")
	}
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		fail := func(why string) { t.Fatalf("line %d %q: %s", i+1, line, why) }
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, typ, _ := strings.Cut(rest, " ")
			if !validName(name) || typ != "counter" && typ != "gauge" && typ != "histogram" {
				fail("bad TYPE")
			}
			types[name] = typ
			continue
		}
		if rest, ok := strings.CutPrefix(line, "# HELP "); ok {
			name, _, _ := strings.Cut(rest, " ")
			if !validName(name) {
				fail("bad HELP")
			}
			continue
		}
		var s sample
		j := strings.IndexAny(line, "{ ")
		if j < 0 {
			fail("no value")
		}
		s.name = line[:j]
		if !validName(s.name) {
			fail("bad name")
		}
		rest := line[j:]
		s.labels = map[string]string{}
		if rest[0] == '{' {
			rest = rest[1:]
			for rest[0] != '}' {
				k := strings.Index(rest, `="`)
				if k < 0 || !validLabelName(rest[:k]) && rest[:k] != "le" {
					fail("bad label name")
				}
				ln := rest[:k]
				rest = rest[k+2:]
				var v strings.Builder
				for rest[0] != '"' {
					if rest[0] == '\\' {
						switch rest[1] {
						case '\\':
							v.WriteByte('\\')
						case 'n':
							v.WriteByte('\n')
						case '"':
							v.WriteByte('"')
						default:
							fail("bad escape")
						}
						rest = rest[2:]
						continue
					}
					v.WriteByte(rest[0])
					rest = rest[1:]
				}
				if _, dup := s.labels[ln]; dup {
					fail("duplicate label")
				}
				s.labels[ln] = v.String()
				rest = rest[1:]
				if rest[0] == ',' {
					rest = rest[1:]
				}
			}
			rest = rest[1:]
		}
		val, ok := strings.CutPrefix(rest, " ")
		if !ok {
			fail("no space before value")
		}
		if _, err := strconv.ParseFloat(val, 64); err != nil {
			fail("bad value")
		}
		s.value = val
		samples = append(samples, s)
	}
	return types, samples
}

// The output parses, label values survive escaping, and histogram
// buckets are cumulative and end in +Inf = _count.
func TestCollectParses(t *testing.T) {
	r := goldenRegistry(t)
	weird := Labels{"v": "a\\b\"c\nd}e,f=g é \x01"}
	if _, err := r.Counter("weird_total", "help with \\ and \n", weird); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := writeText(&b, r); err != nil {
		t.Fatal(err)
	}
	types, samples := parseText(t, b.String())
	found := false
	for _, s := range samples {
		if s.name == "weird_total" {
			found = true
			if !reflect.DeepEqual(s.labels, map[string]string(weird)) {
				t.Errorf("labels came back as %q, want %q", s.labels, weird)
			}
		}
	}
	if !found {
		t.Error("weird_total not written")
	}
	// Check every histogram series.
	type key struct{ name, labels string }
	lastLe := map[key]float64{}
	lastCum := map[key]float64{}
	for _, s := range samples {
		stem, ok := strings.CutSuffix(s.name, "_bucket")
		if !ok || types[stem] != "histogram" {
			if stem, ok := strings.CutSuffix(s.name, "_count"); ok && types[stem] == "histogram" {
				k := key{stem, fmt.Sprint(s.labels)}
				if v, _ := strconv.ParseFloat(s.value, 64); lastLe[k] != math.Inf(1) || v != lastCum[k] {
					t.Errorf("%s%v: _count %v, +Inf bucket %v", stem, s.labels, v, lastCum[k])
				}
			}
			continue
		}
		le, err := strconv.ParseFloat(s.labels["le"], 64)
		if err != nil {
			t.Fatalf("%s: le %q", s.name, s.labels["le"])
		}
		delete(s.labels, "le")
		k := key{stem, fmt.Sprint(s.labels)}
		cum, _ := strconv.ParseFloat(s.value, 64)
		if prev, ok := lastLe[k]; ok && (le <= prev || cum < lastCum[k]) {
			t.Errorf("%s%v: le %v after %v, count %v after %v", stem, s.labels, le, prev, cum, lastCum[k])
		}
		lastLe[k], lastCum[k] = le, cum
	}
	if len(lastLe) != 4 {
		t.Errorf("saw %d histogram series, want 4", len(lastLe))
	}
}

// The "le" bounds cover [Min, Max] with powers of two and count exactly.
func TestOctaves(t *testing.T) {
	for _, vals := range [][]uint64{
		{0},
		{1},
		{2},
		{3, 4},
		{5, 1000, 1024, 1025},
		{0, 1 << 40},
		{1<<63 - 1},
		{1 << 63},
		{1<<63 + 1},
	} {
		var h Histogram
		for _, v := range vals {
			h.Observe(v)
		}
		s := h.Snapshot()
		var les []uint64
		for le, cum := range s.octaves() {
			les = append(les, le)
			var want uint64
			for _, v := range vals {
				if v <= le {
					want++
				}
			}
			if cum != want {
				t.Errorf("%v: le %d counts %d, want %d", vals, le, cum, want)
			}
		}
		if s.Min <= 1<<63 {
			if len(les) == 0 || les[0] < s.Min || les[0] > 0 && les[0]/2 >= s.Min {
				t.Errorf("%v: bounds %v do not start at Min", vals, les)
			}
			if last := les[len(les)-1]; last < s.Max && last != 1<<63 || last > 1 && last/2 >= s.Max {
				t.Errorf("%v: bounds %v do not end at Max", vals, les)
			}
		} else if len(les) != 0 {
			t.Errorf("%v: bounds %v above 2^63", vals, les)
		}
	}
}
