package metrics

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
)

func TestRegisterSameReturnsExisting(t *testing.T) {
	r := NewRegistry()
	c1, err := r.Counter("frames_sent_total", "Frames sent.", Labels{"kind": "data"})
	if err != nil {
		t.Fatal(err)
	}
	c2, err := r.Counter("frames_sent_total", "", Labels{"kind": "data", "empty": ""})
	if err != nil {
		t.Fatal(err)
	}
	if c1 != c2 {
		t.Error("same name and labels gave two counters")
	}
	c3, err := r.Counter("frames_sent_total", "", Labels{"kind": "ctl"})
	if err != nil {
		t.Fatal(err)
	}
	if c3 == c1 {
		t.Error("different labels gave the same counter")
	}
	g1, _ := r.Gauge("depth", "", nil)
	g2, _ := r.Gauge("depth", "", Labels{})
	h1, _ := r.Histogram("latency_ns", "", nil)
	h2, _ := r.Histogram("latency_ns", "", nil)
	if g1 == nil || g1 != g2 || h1 == nil || h1 != h2 {
		t.Error("re-registering a gauge or histogram gave a new one")
	}
}

func TestRegisterErrors(t *testing.T) {
	r := NewRegistry()
	must(t)(r.Counter("c_total", "", nil))
	must(t)(r.Gauge("g", "", Labels{"a": "1"}))
	must(t)(r.Histogram("h", "", nil))
	if err := r.CounterFunc("cf_total", "", nil, func() uint64 { return 1 }); err != nil {
		t.Fatal(err)
	}
	nop := func() int64 { return 0 }
	for _, tc := range []struct {
		name string
		err  error
		reg  func() error
	}{
		{"empty name", ErrInvalid, func() error { _, err := r.Counter("", "", nil); return err }},
		{"digit first", ErrInvalid, func() error { _, err := r.Counter("1x", "", nil); return err }},
		{"dash", ErrInvalid, func() error { _, err := r.Gauge("a-b", "", nil); return err }},
		{"unicode name", ErrInvalid, func() error { _, err := r.Gauge("é", "", nil); return err }},
		{"label digit first", ErrInvalid, func() error { _, err := r.Gauge("x", "", Labels{"1a": "v"}); return err }},
		{"label colon", ErrInvalid, func() error { _, err := r.Gauge("x", "", Labels{"a:b": "v"}); return err }},
		{"label reserved", ErrInvalid, func() error { _, err := r.Gauge("x", "", Labels{"__name__": "v"}); return err }},
		{"label value not utf-8", ErrInvalid, func() error { _, err := r.Gauge("x", "", Labels{"a": "\xff"}); return err }},
		{"le on histogram", ErrInvalid, func() error { _, err := r.Histogram("hx", "", Labels{"le": "1"}); return err }},
		{"nil counter func", ErrInvalid, func() error { return r.CounterFunc("x", "", nil, nil) }},
		{"nil gauge func", ErrInvalid, func() error { return r.GaugeFunc("x", "", nil, nil) }},
		{"counter as gauge", ErrTypeMismatch, func() error { _, err := r.Gauge("c_total", "", nil); return err }},
		{"counter as gauge, other labels", ErrTypeMismatch, func() error { _, err := r.Gauge("c_total", "", Labels{"z": "1"}); return err }},
		{"gauge as histogram", ErrTypeMismatch, func() error { _, err := r.Histogram("g", "", nil); return err }},
		{"histogram as counter", ErrTypeMismatch, func() error { _, err := r.Counter("h", "", nil); return err }},
		{"counter func as gauge func", ErrTypeMismatch, func() error { return r.GaugeFunc("cf_total", "", nil, nop) }},
		{"clash with h_bucket", ErrTypeMismatch, func() error { _, err := r.Counter("h_bucket", "", nil); return err }},
		{"clash with h_count", ErrTypeMismatch, func() error { return r.GaugeFunc("h_count", "", nil, nop) }},
		{"clash with c_total_sum", ErrTypeMismatch, func() error {
			must(t)(r.Counter("c2_sum", "", nil))
			_, err := r.Histogram("c2", "", nil)
			return err
		}},
		{"counter func twice", ErrDuplicate, func() error { return r.CounterFunc("cf_total", "", nil, func() uint64 { return 2 }) }},
		{"counter over counter func", ErrDuplicate, func() error { _, err := r.Counter("cf_total", "", nil); return err }},
		{"counter func over counter", ErrDuplicate, func() error { return r.CounterFunc("c_total", "", nil, func() uint64 { return 2 }) }},
		{"gauge func over gauge", ErrDuplicate, func() error { return r.GaugeFunc("g", "", Labels{"a": "1"}, nop) }},
	} {
		err := tc.reg()
		if !errors.Is(err, tc.err) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.err)
		}
	}
	// Nothing failed registration left anything behind.
	var b bytes.Buffer
	if err := writeText(&b, r); err != nil {
		t.Fatal(err)
	}
	want := "# HELP c2_sum \n# TYPE c2_sum counter\nc2_sum 0\n" +
		"# HELP c_total \n# TYPE c_total counter\nc_total 0\n" +
		"# HELP cf_total \n# TYPE cf_total counter\ncf_total 1\n" +
		"# HELP g \n# TYPE g gauge\ng{a=\"1\"} 0\n" +
		"# HELP h \n# TYPE h histogram\nh_bucket{le=\"+Inf\"} 0\nh_sum 0\nh_count 0\n"
	if b.String() != want {
		t.Errorf("after failed registrations:\n%s\nwant\n%s", b.String(), want)
	}
}

func TestHelpNotUTF8(t *testing.T) {
	r := NewRegistry()
	must(t)(r.Gauge("g", "bad \xff byte", nil))
	var b bytes.Buffer
	must(t)(0, writeText(&b, r))
	if want := "# HELP g bad \uFFFD byte\n# TYPE g gauge\ng 0\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

// A counter func and a counter may share a family under different labels.
func TestMixedFamily(t *testing.T) {
	r := NewRegistry()
	if err := r.CounterFunc("x_total", "", Labels{"src": "stats"}, func() uint64 { return 5 }); err != nil {
		t.Fatal(err)
	}
	c, err := r.Counter("x_total", "", Labels{"src": "live"})
	if err != nil {
		t.Fatal(err)
	}
	c.Add(2)
	var b bytes.Buffer
	must(t)(0, writeText(&b, r))
	want := "# HELP x_total \n# TYPE x_total counter\nx_total{src=\"live\"} 2\nx_total{src=\"stats\"} 5\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestUnregister(t *testing.T) {
	r := NewRegistry()
	n := uint64(1)
	if err := r.CounterFunc("f_total", "", Labels{"a": "1"}, func() uint64 { return n }); err != nil {
		t.Fatal(err)
	}
	if r.Unregister("f_total", Labels{"a": "2"}) || r.Unregister("nope", nil) || r.Unregister("f_total", Labels{"1": "x"}) {
		t.Error("Unregister removed something that was not there")
	}
	if !r.Unregister("f_total", Labels{"a": "1"}) {
		t.Fatal("Unregister did not find f_total")
	}
	if err := r.CounterFunc("f_total", "", Labels{"a": "1"}, func() uint64 { return n }); err != nil {
		t.Errorf("registering again after Unregister: %v", err)
	}
	// An empty family is gone, so the name may take another type.
	r.Unregister("f_total", Labels{"a": "1"})
	if _, err := r.Gauge("f_total", "", nil); err != nil {
		t.Errorf("name not free after Unregister: %v", err)
	}
}

func TestNilRegistry(t *testing.T) {
	var r *Registry
	c, err := r.Counter("a_total", "", nil)
	if c != nil || err != nil {
		t.Errorf("Counter = %v, %v", c, err)
	}
	c.Inc()
	g, err := r.Gauge("g", "", nil)
	if g != nil || err != nil {
		t.Errorf("Gauge = %v, %v", g, err)
	}
	g.Set(1)
	h, err := r.Histogram("h", "", nil)
	if h != nil || err != nil {
		t.Errorf("Histogram = %v, %v", h, err)
	}
	h.Observe(1)
	if err := r.CounterFunc("f", "", nil, func() uint64 { return 0 }); err != nil {
		t.Error(err)
	}
	if err := r.GaugeFunc("gf", "", nil, func() int64 { return 0 }); err != nil {
		t.Error(err)
	}
	if r.Unregister("f", nil) {
		t.Error("nil registry unregistered something")
	}
	if _, err := r.Counter("bad name", "", nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("nil registry accepted a bad name: %v", err)
	}
	var b bytes.Buffer
	if err := writeText(&b, r); err != nil || b.Len() != 0 {
		t.Errorf("collected %q, %v", b.String(), err)
	}
}

func TestZeroRegistry(t *testing.T) {
	var r Registry
	c, err := r.Counter("a_total", "", nil)
	if err != nil || c == nil {
		t.Fatalf("Counter = %v, %v", c, err)
	}
}

// Registering, updating and writing out at once; run with -race.
func TestRegistryConcurrent(t *testing.T) {
	r := NewRegistry()
	const workers, per = 4, 2000
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range per {
				k := fmt.Sprint(i % 3)
				c, err := r.Counter("frames_total", "Frames.", Labels{"kind": k})
				if err != nil {
					t.Error(err)
					return
				}
				c.Inc()
				h, _ := r.Histogram("latency_ns", "", Labels{"kind": k})
				h.Observe(uint64(i))
				g, _ := r.Gauge("depth", "", Labels{"worker": fmt.Sprint(w)})
				g.Set(int64(i))
				if i%500 == 0 {
					_ = r.GaugeFunc("fn", "", Labels{"w": fmt.Sprint(w)}, func() int64 { return int64(w) })
				}
			}
		})
	}
	for range 2 {
		wg.Go(func() {
			for range 50 {
				var b bytes.Buffer
				if err := writeText(&b, r); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	var total uint64
	for k := range 3 {
		c, _ := r.Counter("frames_total", "", Labels{"kind": fmt.Sprint(k)})
		total += c.Load()
	}
	if total != workers*per {
		t.Errorf("frames_total = %d, want %d", total, workers*per)
	}
}

// must fails the test on a registration error.
func must(t *testing.T) func(any, error) {
	return func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}
