// Package metrics counts what the data plane does (frames, bytes,
// repairs, drops, queue depths, latencies) and hands it to Prometheus: a
// Registry is a prometheus.Collector (client_golang), so it is exposed
// the way the rest of the process's metrics are, in one format.
//
// It has no global state: a node makes a Registry and passes it down in
// its Config. A nil *Registry hands out nil metrics, and nil metrics
// accept every update and ignore it, so a component can count
// unconditionally whether or not metrics are on.
//
// # Model
//
// There are three kinds of metric, each usable on its own or through a
// Registry:
//
//   - Counter: a monotone uint64 (frames sent, bytes received).
//   - Gauge: an int64 that goes up and down (queue depth).
//   - Histogram: a distribution of uint64 values (latencies in
//     nanoseconds, frame sizes in bytes, depths), kept in fixed
//     log-linear buckets. A HistogramSnapshot reports Count, Sum, Min,
//     Max and quantiles.
//
// A Registry names metrics. A metric is identified by its name and its
// constant labels; registering the same name and labels again returns the
// metric already there, so components need not share variables:
//
//	reg := metrics.NewRegistry()
//	sent, err := reg.Counter("reliable_frames_sent_total", "Frames sent.", metrics.Labels{"kind": "data"})
//	if err != nil {
//		return err
//	}
//	sent.Inc()
//
// State that is already counted elsewhere, such as a Stats struct, is
// exposed with CounterFunc and GaugeFunc, which read a callback when the
// registry is collected; nothing is counted twice. A state machine that
// is not safe for concurrent use should not be read from the callback
// directly; let its driver loop publish a copy, for example:
//
//	var last atomic.Pointer[reliable.Stats] // stored by the loop after each step
//	reg.CounterFunc("reliable_naks_sent_total", "NAK frames sent.", nil, func() uint64 {
//		if s := last.Load(); s != nil {
//			return s.NAKs
//		}
//		return 0
//	})
//
// Names follow Prometheus syntax and are checked at registration, which
// returns ErrInvalid, ErrTypeMismatch (a name already used by another
// type) or ErrDuplicate (a function registered twice) rather than
// panicking. Unregister removes a metric, for example one whose
// component has gone away.
//
// # Exposition
//
// Registry.Collect sends every series as a constant metric: register
// the Registry in a prometheus.Registry and serve that with promhttp.
// Histograms appear as cumulative buckets with "le" at powers of two,
// plus the sum and the count; HistogramSnapshot.Quantile is far more
// precise than interpolating in those buckets.
//
// # Histogram accuracy
//
// Values up to 64 each have a bucket of their own. Above that, every
// power-of-two range is split into 32 equal buckets, so a bucket is at
// most 1/32 of its lower bound wide. A quantile is estimated as the middle
// of the bucket that holds the sample of that rank, clamped to [Min, Max];
// it differs from the exact nearest-rank quantile x by less than x/64
// (1.5625%), and is exact for x <= 64. A Histogram takes about 15 KiB.
//
// # Concurrency properties
//
// Every method of Counter, Gauge, Histogram, HistogramSnapshot and
// Registry may be called from any goroutine. Updates (Inc, Add, Set,
// Observe) are lock-free, allocate nothing and never block.
// Registration and collection take a lock on the registry, but
// collection calls no callback and reads no metric while holding it, so
// a callback may use the registry. Collection blocks only as long as
// the callbacks do.
//
// Each value is read atomically, but a snapshot of several values is not
// taken at one instant: while observations are in flight, a histogram's
// Sum may lag or lead its Count by those observations, and two metrics
// collected together may reflect different moments. Min and Max always
// cover every observation that Count includes.
package metrics
