package transport

import (
	"slices"
	"time"
)

// ManualClock is a Clock in virtual time for tests that drive a Network
// from one goroutine: its calls run only inside Advance, on the caller's
// goroutine, earliest first and in scheduling order at the same time.
// It is not safe for concurrent use.
type ManualClock struct {
	now   time.Duration
	calls []*manualCall
}

type manualCall struct {
	at   time.Duration
	f    func()
	done bool // ran or stopped
}

// Now returns the virtual time: the sum of the Advances so far.
func (c *ManualClock) Now() time.Duration { return c.now }

// AfterFunc implements Clock.
func (c *ManualClock) AfterFunc(d time.Duration, f func()) Timer {
	call := &manualCall{at: c.now + d, f: f}
	c.calls = append(c.calls, call)
	return call
}

// Stop implements Timer.
func (t *manualCall) Stop() bool {
	if t.done {
		return false
	}
	t.done = true
	return true
}

// Advance moves the clock d forward, running every call due by then at
// its own time (calls they schedule included, when due).
func (c *ManualClock) Advance(d time.Duration) {
	end := c.now + d
	for {
		c.calls = slices.DeleteFunc(c.calls, func(t *manualCall) bool { return t.done })
		i := -1
		for j, t := range c.calls {
			if t.at <= end && (i < 0 || t.at < c.calls[i].at) {
				i = j
			}
		}
		if i < 0 {
			c.now = end
			return
		}
		t := c.calls[i]
		c.now = t.at
		t.done = true
		t.f()
	}
}
