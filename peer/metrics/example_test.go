package metrics_test

import (
	"fmt"
	"os"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/meshrti/meshrti/peer/metrics"
)

func Example() {
	reg := metrics.NewRegistry()

	sent, err := reg.Counter("reliable_frames_sent_total", "Frames sent.", metrics.Labels{"kind": "data"})
	if err != nil {
		fmt.Println(err)
		return
	}
	depth, _ := reg.Gauge("send_queue_depth", "Messages waiting to be sent.", nil)
	size, _ := reg.Histogram("frame_bytes", "Size of frames sent.", nil)

	for _, n := range []uint64{100, 200, 1400} {
		sent.Inc()
		size.Observe(n)
	}
	depth.Set(3)

	// A Stats struct counted elsewhere, published by its owner.
	type stats struct{ NAKs uint64 }
	var last atomic.Pointer[stats]
	last.Store(&stats{NAKs: 2})
	_ = reg.CounterFunc("reliable_naks_sent_total", "NAK frames sent.", nil, func() uint64 {
		if s := last.Load(); s != nil {
			return s.NAKs
		}
		return 0
	})

	// The registry is a Prometheus collector: serve it with promhttp, or
	// gather it as here.
	preg := prometheus.NewRegistry()
	preg.MustRegister(reg)
	families, err := preg.Gather()
	if err != nil {
		fmt.Println(err)
	}
	for _, mf := range families {
		if _, err := expfmt.MetricFamilyToText(os.Stdout, mf); err != nil {
			fmt.Println(err)
		}
	}
	// Output:
	// # HELP frame_bytes Size of frames sent.
	// # TYPE frame_bytes histogram
	// frame_bytes_bucket{le="128"} 1
	// frame_bytes_bucket{le="256"} 2
	// frame_bytes_bucket{le="512"} 2
	// frame_bytes_bucket{le="1024"} 2
	// frame_bytes_bucket{le="2048"} 3
	// frame_bytes_bucket{le="+Inf"} 3
	// frame_bytes_sum 1700
	// frame_bytes_count 3
	// # HELP reliable_frames_sent_total Frames sent.
	// # TYPE reliable_frames_sent_total counter
	// reliable_frames_sent_total{kind="data"} 3
	// # HELP reliable_naks_sent_total NAK frames sent.
	// # TYPE reliable_naks_sent_total counter
	// reliable_naks_sent_total 2
	// # HELP send_queue_depth Messages waiting to be sent.
	// # TYPE send_queue_depth gauge
	// send_queue_depth 3
}

func ExampleHistogramSnapshot_Quantile() {
	var h metrics.Histogram
	for i := range uint64(1000) {
		h.Observe(1000 + i) // 1000 .. 1999 ns
	}
	h.Observe(1_000_000)

	s := h.Snapshot()
	fmt.Println(s.Count, s.Min, s.Max)
	// The exact quantiles are 1500, 1990 and 1000000; estimates are
	// within 1/64.
	fmt.Println(s.Quantile(0.5), s.Quantile(0.99), s.Quantile(1))
	// Output:
	// 1001 1000 1000000
	// 1488 2000 1000000
}
