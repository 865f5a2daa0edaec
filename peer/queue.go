package peer

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/meshrti/meshrti/peer/internal/core"
)

// eventQueue is the ordered, unbounded callback queue between the
// federate's loop goroutine (the only producer) and Next (any consumer).
// Unbounded so that the loop never blocks on a slow federate: a slow
// federate delays only itself, and its memory grows instead of the
// federation stalling.
type eventQueue struct {
	mu    sync.Mutex
	items []Event
	head  int
	// notify wakes the consumers blocked in next (waiting counts them):
	// one token, sent when items arrive (or callbacks resume) and
	// someone waits; a consumer woken passes it on while items remain
	// and others wait, so one channel serves every wake-up (none is
	// allocated per wake-up). signalled says the token is out: in the
	// channel, or taken by a consumer that has not looked yet (which
	// clears it); no second one is sent meanwhile. A token left by a
	// consumer whose context ended costs the next one a spurious
	// wake-up. close closes the channel: every consumer then sees the
	// end. Sends happen only under mu and only while open.
	notify    chan struct{}
	waiting   int
	signalled bool
	closed    bool
	held      bool // callbacks disabled (DisableCallbacks): next waits
	// low and lowc: lowc is closed once at most low items are queued
	// (see below).
	low  int
	lowc chan struct{}
	// ending counts the events taken out that end a pending state
	// (core.EndsPending); handed, how many of them the federate has
	// been handed (at once by Next, or by Federate.HandedOver for
	// NextForwarded). The federate's core reads handed before each
	// service (core.HandedOver).
	ending uint64
	handed atomic.Uint64
}

// maxIdleQueue is the largest array an empty queue keeps for the next
// events.
const maxIdleQueue = 1 << 14

func newEventQueue() *eventQueue {
	return &eventQueue{notify: make(chan struct{}, 1)}
}

// wake hands one waiting consumer the token, if any waits. Under mu,
// with the queue open.
func (q *eventQueue) wake() {
	if q.waiting == 0 || q.signalled {
		return
	}
	q.signalled = true
	select {
	case q.notify <- struct{}{}:
	default: // cannot happen: the channel is empty while not signalled
	}
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
	q.wake()
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

// hold stops (true) or resumes (false) handing events out.
func (q *eventQueue) hold(on bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.held = on
	if !on && !q.closed {
		q.wake()
	}
}

// next blocks until an event is queued (and callbacks are not held),
// the queue is closed and drained (ErrClosed), or ctx ends. An event
// that ends a pending state gets a receipt, the number of such events
// taken out so far, else 0; with handOver it is handed over at once.
func (q *eventQueue) next(ctx context.Context, handOver bool) (Event, uint64, error) {
	woken := false // took the token: no longer counted in waiting
	for {
		q.mu.Lock()
		if woken {
			q.waiting--
			q.signalled = false
			woken = false
		}
		if q.head < len(q.items) && (!q.held || q.closed) {
			ev := q.items[q.head]
			q.items[q.head] = nil
			q.head++
			switch {
			case q.head == len(q.items):
				// Drained: start again at the front of the same array
				// (a fresh one would be allocated, cleared and grown
				// again by the next burst).
				q.items, q.head = q.items[:0], 0
				if cap(q.items) > maxIdleQueue {
					q.items = nil // after a burst, give the memory back
				}
			case q.head > 1024 && q.head*2 > len(q.items):
				k := copy(q.items, q.items[q.head:])
				clear(q.items[k:])
				q.items, q.head = q.items[:k], 0
			}
			if q.lowc != nil && len(q.items)-q.head <= q.low {
				close(q.lowc)
				q.lowc = nil
			}
			if q.head < len(q.items) && !q.held && !q.closed {
				q.wake() // more for another consumer waiting
			}
			var receipt uint64
			if core.EndsPending(ev) {
				q.ending++
				receipt = q.ending
				if handOver {
					q.handOver(receipt)
				}
			}
			q.mu.Unlock()
			return ev, receipt, nil
		}
		if q.closed {
			q.mu.Unlock()
			return nil, 0, ErrClosed
		}
		q.waiting++
		q.mu.Unlock()
		select {
		case <-q.notify:
			woken = true
		case <-ctx.Done():
			q.mu.Lock()
			q.waiting--
			q.mu.Unlock()
			return nil, 0, ctx.Err()
		}
	}
}

// ready reports whether next would return an event at once.
func (q *eventQueue) ready() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.head < len(q.items) && (!q.held || q.closed)
}

// handOver records that the events up to receipt r were handed over.
func (q *eventQueue) handOver(r uint64) {
	for {
		old := q.handed.Load()
		if r <= old || q.handed.CompareAndSwap(old, r) {
			return
		}
	}
}
