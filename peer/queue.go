package peer

import (
	"context"
	"sync"
)

// eventQueue is the ordered, unbounded callback queue between the
// federate's loop goroutine (the only producer) and Next (any consumer).
// Unbounded so that the loop never blocks on a slow federate: a slow
// federate delays only itself, and its memory grows instead of the
// federation stalling.
type eventQueue struct {
	mu      sync.Mutex
	items   []Event
	head    int
	notify  chan struct{} // closed and replaced when items arrive and someone waits
	waiting int           // consumers blocked on notify
	closed  bool
	// low and lowc: lowc is closed once at most low items are queued
	// (see below).
	low  int
	lowc chan struct{}
}

func newEventQueue() *eventQueue {
	return &eventQueue{notify: make(chan struct{})}
}

func (q *eventQueue) push(evs ...Event) {
	if len(evs) == 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	q.items = append(q.items, evs...)
	if q.waiting > 0 {
		close(q.notify)
		q.notify = make(chan struct{})
		q.waiting = 0
	}
}

// below returns a channel closed once at most n events are queued.
func (q *eventQueue) below(n int) <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	c := make(chan struct{})
	if q.closed || len(q.items)-q.head <= n {
		close(c)
		return c
	}
	if q.lowc != nil {
		close(q.lowc)
	}
	q.low, q.lowc = n, c
	return c
}

// close ends the queue: Next returns what is queued, then ErrClosed.
func (q *eventQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.closed {
		q.closed = true
		close(q.notify)
	}
}

func (q *eventQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) - q.head
}

// next blocks until an event is queued, the queue is closed and drained
// (ErrClosed), or ctx ends.
func (q *eventQueue) next(ctx context.Context) (Event, error) {
	for {
		q.mu.Lock()
		if q.head < len(q.items) {
			ev := q.items[q.head]
			q.items[q.head] = nil
			q.head++
			if q.head > 1024 && q.head*2 > len(q.items) {
				q.items = append([]Event(nil), q.items[q.head:]...)
				q.head = 0
			}
			if q.lowc != nil && len(q.items)-q.head <= q.low {
				close(q.lowc)
				q.lowc = nil
			}
			q.mu.Unlock()
			return ev, nil
		}
		if q.closed {
			q.mu.Unlock()
			return nil, ErrClosed
		}
		wait := q.notify
		q.waiting++
		q.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
