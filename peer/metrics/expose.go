package metrics

import (
	"bufio"
	"encoding/json"
	"io"
	"iter"
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

// TextContentType is the Content-Type of what WriteText writes.
const TextContentType = "text/plain; version=0.0.4; charset=utf-8"

// familyView is a family and its series as of one exposition, sorted.
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

// WriteText writes every registered metric to w in the Prometheus text
// exposition format 0.0.4: families sorted by name, series sorted by
// labels, label values and help escaped. It reads the metrics and calls
// the functions of CounterFunc and GaugeFunc without holding the
// registry's lock, and returns the first error from w.
//
// A histogram is written as cumulative _bucket series with "le" bounds
// at the powers of two (and 0) from the one at or above its minimum to
// the one at or above its maximum, then "+Inf", _sum and _count. The set
// of bounds only grows over time, as Prometheus wants, and stays small;
// the quantiles in WriteJSON are far more precise than interpolating in
// these buckets.
func (r *Registry) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	var b []byte
	for _, f := range r.collect() {
		b = b[:0]
		if f.help != "" {
			b = append(b, "# HELP "...)
			b = append(b, f.name...)
			b = append(b, ' ')
			b = appendEscaped(b, f.help, false)
			b = append(b, '\n')
		}
		b = append(b, "# TYPE "...)
		b = append(b, f.name...)
		b = append(b, ' ')
		b = append(b, f.kind.String()...)
		b = append(b, '\n')
		for _, s := range f.series {
			switch {
			case s.counter != nil:
				b = appendSample(b, f.name, "", s.labelText, "", s.counter.Load())
			case s.counterFn != nil:
				b = appendSample(b, f.name, "", s.labelText, "", s.counterFn())
			case s.gauge != nil:
				b = appendSample(b, f.name, "", s.labelText, "", s.gauge.Load())
			case s.gaugeFn != nil:
				b = appendSample(b, f.name, "", s.labelText, "", s.gaugeFn())
			case s.hist != nil:
				h := s.hist.Snapshot()
				for le, cum := range h.octaves() {
					b = appendSample(b, f.name, "_bucket", s.labelText, strconv.FormatUint(le, 10), cum)
				}
				b = appendSample(b, f.name, "_bucket", s.labelText, "+Inf", h.Count)
				b = appendSample(b, f.name, "_sum", s.labelText, "", h.Sum)
				b = appendSample(b, f.name, "_count", s.labelText, "", h.Count)
			}
		}
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// appendSample appends one sample line: name+suffix, the labels (and le
// if not empty), and v.
func appendSample[V uint64 | int64](b []byte, name, suffix, labels, le string, v V) []byte {
	b = append(b, name...)
	b = append(b, suffix...)
	if labels != "" || le != "" {
		b = append(b, '{')
		b = append(b, labels...)
		if le != "" {
			if labels != "" {
				b = append(b, ',')
			}
			b = append(b, `le="`...)
			b = append(b, le...)
			b = append(b, '"')
		}
		b = append(b, '}')
	}
	b = append(b, ' ')
	if v < 0 {
		b = strconv.AppendInt(b, int64(v), 10)
	} else {
		b = strconv.AppendUint(b, uint64(v), 10)
	}
	return append(b, '\n')
}

// appendEscaped appends s escaped as the text format wants: backslash
// and newline always, and the double quote in label values.
func appendEscaped(b []byte, s string, quote bool) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b = append(b, `\\`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '"' && quote:
			b = append(b, `\"`...)
		default:
			b = append(b, c)
		}
	}
	return b
}

// octaves yields, for each "le" bound WriteText writes, the number of
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

// jsonMetric is one series in WriteJSON's output.
type jsonMetric struct {
	Name      string             `json:"name"`
	Type      string             `json:"type"`
	Help      string             `json:"help,omitempty"`
	Labels    map[string]string  `json:"labels,omitempty"`
	Value     any                `json:"value,omitempty"` // uint64 or int64; nil for histograms
	Histogram *HistogramSnapshot `json:"histogram,omitempty"`
}

func (r *Registry) jsonDoc() any {
	ms := []jsonMetric{}
	for _, f := range r.collect() {
		for _, s := range f.series {
			m := jsonMetric{Name: f.name, Type: f.kind.String(), Help: f.help}
			if len(s.labels) > 0 {
				m.Labels = make(map[string]string, len(s.labels))
				for _, l := range s.labels {
					m.Labels[l.name] = l.value
				}
			}
			switch {
			case s.counter != nil:
				m.Value = s.counter.Load()
			case s.counterFn != nil:
				m.Value = s.counterFn()
			case s.gauge != nil:
				m.Value = s.gauge.Load()
			case s.gaugeFn != nil:
				m.Value = s.gaugeFn()
			case s.hist != nil:
				h := s.hist.Snapshot()
				m.Histogram = &h
			}
			ms = append(ms, m)
		}
	}
	return struct {
		Metrics []jsonMetric `json:"metrics"`
	}{ms}
}

// WriteJSON writes every registered metric to w as one JSON object, in
// the order of WriteText, followed by a newline:
//
//	{"metrics":[
//	  {"name":"frames_sent_total","type":"counter","help":"Frames sent.","labels":{"kind":"data"},"value":12},
//	  {"name":"ack_latency_ns","type":"histogram","histogram":{"count":3,"sum":...,"min":...,"max":...,"mean":...,"p50":...,"p90":...,"p99":...,"p999":...}}
//	]}
//
// (without the line breaks). labels and help are left out when empty.
// It reads the metrics as WriteText does and returns the first error
// from w.
func (r *Registry) WriteJSON(w io.Writer) error {
	return json.NewEncoder(w).Encode(r.jsonDoc())
}

// MarshalJSON returns what WriteJSON writes, without the newline.
func (r *Registry) MarshalJSON() ([]byte, error) {
	return json.Marshal(r.jsonDoc())
}

// MarshalJSON encodes s as an object with count, sum, min, max, mean and
// the quantiles p50, p90, p99 and p999.
func (s HistogramSnapshot) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Count uint64  `json:"count"`
		Sum   uint64  `json:"sum"`
		Min   uint64  `json:"min"`
		Max   uint64  `json:"max"`
		Mean  float64 `json:"mean"`
		P50   uint64  `json:"p50"`
		P90   uint64  `json:"p90"`
		P99   uint64  `json:"p99"`
		P999  uint64  `json:"p999"`
	}{s.Count, s.Sum, s.Min, s.Max, s.Mean(), s.Quantile(0.5), s.Quantile(0.9), s.Quantile(0.99), s.Quantile(0.999)})
}
