package peer

import (
	"io"
	"sync"
)

// Tracing: when Config.Trace is set, the federate writes one JSON object
// per line for what it did and saw (joins, time switches, requests and
// grants, lookahead changes, sends and deliveries of updates,
// interactions and deletes, lost peers, its resignation). docs/trace.md defines the format; testnet/tracecheck
// verifies a trace.
//
// The federate's core builds the lines (peer/internal/core, trace.go);
// the federate writes them under its lock, whole lines per Write call, so
// one federate's lines never interleave. A writer shared by several
// federates must be safe for concurrent use: wrap it with NewTraceWriter.

// NewTraceWriter returns a writer that serializes Write calls to w, for a
// trace shared by several federates.
func NewTraceWriter(w io.Writer) io.Writer { return &lockedWriter{w: w} }

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
