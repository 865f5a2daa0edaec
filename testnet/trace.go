package testnet

import (
	"context"
	"io"

	"github.com/meshrti/meshrti/testnet/tracecheck"
)

// The trace checker is package tracecheck; these names keep testnet's
// callers as they were.
type (
	// TraceEvent is one line of a trace (tracecheck.Event).
	TraceEvent = tracecheck.Event
	// TraceReport is what CheckTraceReport found (tracecheck.Report).
	TraceReport = tracecheck.Report
)

// CheckTrace is tracecheck.Check.
func CheckTrace(r io.Reader) ([]Violation, error) { return tracecheck.Check(r) }

// CheckTraceReport is tracecheck.CheckReport.
func CheckTraceReport(r io.Reader) (TraceReport, error) { return tracecheck.CheckReport(r) }

type traceKey struct{}

// WithTrace returns a context that makes Cluster.Add (and so RunScript,
// which adds federates with the context it was given) trace every
// federate it joins to w, unless Config.Trace is set. w must be safe for
// concurrent use (peer.NewTraceWriter).
func WithTrace(ctx context.Context, w io.Writer) context.Context {
	return context.WithValue(ctx, traceKey{}, w)
}

// traceWriter is cfg, or else the writer WithTrace attached to ctx.
func traceWriter(ctx context.Context, cfg io.Writer) io.Writer {
	if cfg != nil {
		return cfg
	}
	w, _ := ctx.Value(traceKey{}).(io.Writer)
	return w
}
