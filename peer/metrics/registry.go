package metrics

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Errors returned by registration, wrapped with the metric they concern;
// check them with errors.Is.
var (
	// ErrInvalid reports a name that is not a Prometheus metric name
	// ([a-zA-Z_:][a-zA-Z0-9_:]*), a label name that is not a Prometheus
	// label name ([a-zA-Z_][a-zA-Z0-9_]*, not starting with "__", and not
	// "le" on a histogram), a label value that is not UTF-8, or a nil
	// function.
	ErrInvalid = errors.New("metrics: invalid name, label or function")

	// ErrTypeMismatch reports a name already registered as another type,
	// or one that would clash with a histogram's _bucket, _sum or _count
	// series.
	ErrTypeMismatch = errors.New("metrics: name registered as another type")

	// ErrDuplicate reports a second registration of a CounterFunc or
	// GaugeFunc, or of a Counter or Gauge where a function is registered
	// under the same name and labels (or the other way round).
	ErrDuplicate = errors.New("metrics: already registered")
)

// Labels are the constant labels of a metric, such as {"kind": "data"}.
// A label with an empty value is the same as no label, as in Prometheus.
type Labels map[string]string

// kind is the type of a metric family.
type kind uint8

const (
	kindCounter kind = iota + 1
	kindGauge
	kindHistogram
)

func (k kind) String() string {
	switch k {
	case kindCounter:
		return "counter"
	case kindGauge:
		return "gauge"
	case kindHistogram:
		return "histogram"
	}
	return "untyped"
}

// Registry names metrics for exposition. The zero value is an empty
// registry ready to use; a Registry must not be copied after first use.
// All methods may be called from any goroutine. Registering takes a lock
// and is meant for setup, not for every frame: keep the metric it
// returns.
//
// A nil *Registry registers nothing: it checks names as usual, returns
// nil metrics (which ignore updates) and writes out nothing.
type Registry struct {
	mu       sync.Mutex
	families map[string]*family
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return new(Registry) }

// family is all series of one name.
type family struct {
	name   string
	help   string
	kind   kind
	series map[string]*series // by labelText
}

// series is one metric: a name and a set of label values.
type series struct {
	labels    []label // sorted by name; no empty values
	labelText string  // labels as a key and in errors: a="x",b="y"

	// Exactly one of these is set.
	counter   *Counter
	gauge     *Gauge
	hist      *Histogram
	counterFn func() uint64
	gaugeFn   func() int64
}

type label struct{ name, value string }

// Counter returns the counter registered under name and labels,
// registering a new one if there is none. help describes the metric; the
// first non-empty help given for a name is kept (bytes that are not UTF-8
// become U+FFFD).
func (r *Registry) Counter(name, help string, labels Labels) (*Counter, error) {
	return metric(r, name, help, labels, kindCounter, func(s *series) **Counter { return &s.counter })
}

// Gauge returns the gauge registered under name and labels, registering
// a new one if there is none. help is as for Counter.
func (r *Registry) Gauge(name, help string, labels Labels) (*Gauge, error) {
	return metric(r, name, help, labels, kindGauge, func(s *series) **Gauge { return &s.gauge })
}

// Histogram returns the histogram registered under name and labels,
// registering a new one if there is none. help is as for Counter. A
// histogram may not have a label named "le".
func (r *Registry) Histogram(name, help string, labels Labels) (*Histogram, error) {
	return metric(r, name, help, labels, kindHistogram, func(s *series) **Histogram { return &s.hist })
}

// metric returns the metric of kind k under name and labels, the one
// field picks out of its series, made new with a new series. A series
// whose field is nil holds a function's values (CounterFunc, GaugeFunc):
// a duplicate.
func metric[M any](r *Registry, name, help string, labels Labels, k kind, field func(*series) **M) (*M, error) {
	s, err := r.register(name, help, labels, k, func(s *series) { *field(s) = new(M) })
	if err != nil || s == nil {
		return nil, err
	}
	if *field(s) == nil {
		return nil, dupError(name, s)
	}
	return *field(s), nil
}

// CounterFunc registers f as a counter under name and labels: writing
// out the registry calls f for the value. f must be safe to call from
// any goroutine, should return quickly, and should never return less than
// before. It is called without the registry's lock held. Registering the
// same name and labels again is an ErrDuplicate error; Unregister first
// to replace f.
func (r *Registry) CounterFunc(name, help string, labels Labels, f func() uint64) error {
	if f == nil {
		return fmt.Errorf("%w: nil function for %s", ErrInvalid, name)
	}
	return r.registerFunc(name, help, labels, kindCounter, func(s *series) { s.counterFn = f })
}

// GaugeFunc registers f as a gauge under name and labels, as CounterFunc
// does for counters.
func (r *Registry) GaugeFunc(name, help string, labels Labels, f func() int64) error {
	if f == nil {
		return fmt.Errorf("%w: nil function for %s", ErrInvalid, name)
	}
	return r.registerFunc(name, help, labels, kindGauge, func(s *series) { s.gaugeFn = f })
}

// Unregister removes the metric registered under name and labels, and
// reports whether there was one. Metrics handed out for it keep working
// but are no longer collected; registering it again makes a new one.
func (r *Registry) Unregister(name string, labels Labels) bool {
	if r == nil {
		return false
	}
	_, text, err := canonLabels(labels)
	if err != nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.families[name]
	if f == nil || f.series[text] == nil {
		return false
	}
	delete(f.series, text)
	if len(f.series) == 0 {
		delete(r.families, name)
	}
	return true
}

func (r *Registry) registerFunc(name, help string, labels Labels, k kind, set func(*series)) error {
	created := false
	s, err := r.register(name, help, labels, k, func(s *series) { set(s); created = true })
	if err != nil || s == nil || created {
		return err
	}
	return dupError(name, s)
}

func dupError(name string, s *series) error {
	return fmt.Errorf("%w: %s{%s}", ErrDuplicate, name, s.labelText)
}

// register returns the series under name and labels, calling init on a
// new one it adds if there is none. It returns nil and no error on a nil
// Registry.
func (r *Registry) register(name, help string, labels Labels, k kind, init func(*series)) (*series, error) {
	if !validName(name) {
		return nil, fmt.Errorf("%w: metric name %q", ErrInvalid, name)
	}
	ls, text, err := canonLabels(labels)
	if err != nil {
		return nil, fmt.Errorf("%w (metric %s)", err, name)
	}
	if k == kindHistogram && labels["le"] != "" {
		return nil, fmt.Errorf("%w: label \"le\" on histogram %s", ErrInvalid, name)
	}
	if r == nil {
		return nil, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.families[name]
	if f == nil {
		if err := r.checkClash(name, k); err != nil {
			return nil, err
		}
		f = &family{name: name, kind: k, series: map[string]*series{}}
		if r.families == nil {
			r.families = map[string]*family{}
		}
		r.families[name] = f
	}
	if f.kind != k {
		return nil, fmt.Errorf("%w: %s is a %s, not a %s", ErrTypeMismatch, name, f.kind, k)
	}
	if f.help == "" {
		f.help = strings.ToValidUTF8(help, "\uFFFD")
	}
	s := f.series[text]
	if s == nil {
		s = &series{labels: ls, labelText: text}
		init(s)
		f.series[text] = s
	}
	return s, nil
}

var histogramSuffixes = [...]string{"_bucket", "_sum", "_count"}

// checkClash reports whether a new family name of kind k would write out
// series of the same name as a histogram's.
func (r *Registry) checkClash(name string, k kind) error {
	for _, suf := range histogramSuffixes {
		if k == kindHistogram && r.families[name+suf] != nil {
			return fmt.Errorf("%w: histogram %s would clash with %s%s", ErrTypeMismatch, name, name, suf)
		}
		if stem, ok := strings.CutSuffix(name, suf); ok {
			if f := r.families[stem]; f != nil && f.kind == kindHistogram {
				return fmt.Errorf("%w: %s would clash with histogram %s", ErrTypeMismatch, name, stem)
			}
		}
	}
	return nil
}

// canonLabels checks labels and returns them sorted by name, without
// empty values, and as one string (the series' key).
func canonLabels(labels Labels) ([]label, string, error) {
	var ls []label
	for n, v := range labels {
		if !validLabelName(n) {
			return nil, "", fmt.Errorf("%w: label name %q", ErrInvalid, n)
		}
		if !utf8.ValidString(v) {
			return nil, "", fmt.Errorf("%w: label %s value %q is not UTF-8", ErrInvalid, n, v)
		}
		if v != "" {
			ls = append(ls, label{n, v})
		}
	}
	slices.SortFunc(ls, func(a, b label) int { return cmp.Compare(a.name, b.name) })
	var b []byte
	for i, l := range ls {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, l.name...)
		b = append(b, '=')
		b = strconv.AppendQuote(b, l.value)
	}
	return ls, string(b), nil
}

// compareLabels orders label sets: by the first differing name, then
// value; a prefix comes first.
func compareLabels(a, b []label) int {
	for i := range min(len(a), len(b)) {
		if c := cmp.Compare(a[i].name, b[i].name); c != 0 {
			return c
		}
		if c := cmp.Compare(a[i].value, b[i].value); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isLetter(c) || c == '_' || c == ':' || i > 0 && isDigit(c)) {
			return false
		}
	}
	return true
}

func validLabelName(s string) bool {
	if s == "" || strings.HasPrefix(s, "__") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isLetter(c) || c == '_' || i > 0 && isDigit(c)) {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
