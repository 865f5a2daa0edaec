// Package metrics counts what the data plane does (frames, bytes,
// repairs, drops, queue depths, latencies) and writes it out for a node's
// status page, in the Prometheus text format or as JSON.
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
//     Max and quantiles, and snapshots merge.
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
// registry is written out; nothing is counted twice. A state machine that
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
// Registry.WriteText writes the Prometheus text exposition format 0.0.4
// (serve it with Content-Type TextContentType), sorted by name and then
// labels, so equal registries write equal bytes. Histograms appear as
// cumulative _bucket series with "le" at powers of two, plus _sum and
// _count. Registry.WriteJSON (and MarshalJSON) writes the same metrics
// as JSON, with count, sum, min, max, mean, p50, p90, p99 and p999 for
// each histogram. JSON numbers are exact integers; JavaScript reads those
// above 2^53 approximately.
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
// Registration and exposition take a lock on the registry, but
// exposition calls no callback and reads no metric while holding it, so
// a callback may use the registry. Exposition blocks only as long as its
// writer and the callbacks do.
//
// Each value is read atomically, but a snapshot of several values is not
// taken at one instant: while observations are in flight, a histogram's
// Sum may lag or lead its Count by those observations, and two metrics
// written out together may reflect different moments. Min and Max always
// cover every observation that Count includes.
package metrics
