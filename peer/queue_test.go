package peer

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
)

// TestEventQueueConsumers has several consumers wait on one queue while
// events come singly and in bursts, and some consumers give up (their
// context ends): every event comes out exactly once, and close ends
// every consumer still waiting.
func TestEventQueueConsumers(t *testing.T) {
	q := newEventQueue()
	const consumers, events = 4, 3000
	var mu sync.Mutex
	got := make(map[int]int)
	var wg sync.WaitGroup
	for c := range consumers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				ctx := context.Background()
				var cancel context.CancelFunc = func() {}
				if (c+i)%7 == 0 {
					// A consumer that gives up at once must leave the
					// wake-up to the others.
					ctx, cancel = context.WithCancel(ctx)
					cancel()
				}
				ev, _, err := q.next(ctx, true)
				cancel()
				switch {
				case errors.Is(err, context.Canceled):
					continue
				case errors.Is(err, ErrClosed):
					return
				case err != nil:
					t.Error(err)
					return
				}
				mu.Lock()
				got[int(ev.(ReceiveInteraction).Tag[0])<<8|int(ev.(ReceiveInteraction).Tag[1])]++
				mu.Unlock()
			}
		}()
	}
	ev := func(i int) Event { return ReceiveInteraction{Tag: []byte{byte(i >> 8), byte(i)}} }
	for i := 0; i < events; {
		n := 1 + i%5
		burst := make([]Event, 0, n)
		for ; n > 0 && i < events; n-- {
			burst = append(burst, ev(i))
			i++
		}
		q.push(burst...)
	}
	// Wait for the queue to drain, then end the consumers.
	<-q.below(0)
	q.close()
	wg.Wait()
	if len(got) != events {
		t.Fatalf("%d distinct events came out, want %d", len(got), events)
	}
	for i, n := range got {
		if n != 1 {
			t.Fatalf("event %d came out %d times", i, n)
		}
	}
}

// TestEventQueueHoldWakes checks that a consumer waiting while
// callbacks are held gets the queued event once they resume.
func TestEventQueueHoldWakes(t *testing.T) {
	q := newEventQueue()
	q.hold(true)
	q.push(ReceiveInteraction{Tag: []byte("x")})
	got := make(chan Event)
	go func() {
		ev, _, err := q.next(context.Background(), true)
		if err != nil {
			t.Error(err)
		}
		got <- ev
	}()
	// Once the consumer waits (held), resume.
	for {
		q.mu.Lock()
		w := q.waiting
		q.mu.Unlock()
		if w == 1 {
			break
		}
		runtime.Gosched()
	}
	q.hold(false)
	if ev := <-got; string(ev.(ReceiveInteraction).Tag) != "x" {
		t.Fatalf("got %v", ev)
	}
	q.close()
	if _, _, err := q.next(context.Background(), true); !errors.Is(err, ErrClosed) {
		t.Fatalf("next after close: %v, want ErrClosed", err)
	}
}
