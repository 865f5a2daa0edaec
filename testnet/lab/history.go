package lab

import (
	"encoding/json"
	"io"
	"sync"
	"time"
)

// History is a run's record: every fault, heal, process start, signal
// and exit, with its time on the run's clock, as JSON lines. It is safe
// for concurrent use.
type History struct {
	mu      sync.Mutex
	w       io.Writer
	entries []Entry
}

// Entry is one line of a history.
type Entry struct {
	At     time.Duration  `json:"-"`
	Ms     int64          `json:"t_ms"`
	Ev     string         `json:"ev"`
	Fields map[string]any `json:"fields,omitempty"`
}

// NewHistory returns a history that also writes each entry to w (nil:
// kept in memory only).
func NewHistory(w io.Writer) *History { return &History{w: w} }

// Add records an entry.
func (h *History) Add(at time.Duration, ev string, fields map[string]any) {
	e := Entry{At: at, Ms: at.Milliseconds(), Ev: ev, Fields: fields}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.entries = append(h.entries, e)
	if h.w != nil {
		b, err := json.Marshal(e)
		if err == nil {
			h.w.Write(append(b, '\n'))
		}
	}
}

// Entries returns the entries so far.
func (h *History) Entries() []Entry {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Entry(nil), h.entries...)
}
