package metrics

import "sync/atomic"

// Counter is a monotone count: frames sent, bytes received, repairs.
// Its methods may be called from any goroutine and never block. The zero
// value is a counter at 0, ready to use. A nil *Counter is valid too: Add
// and Inc do nothing and Load returns 0, so code can count
// unconditionally when metrics are off.
//
// A counter cannot go down: Add takes a uint64, so a negative delta
// cannot be expressed. (Converting a negative int with uint64(n) does
// not make one either: Add(uint64(n)) subtracts -n by wrapping; keep
// such values in a Gauge.) A counter wraps at 2^64, which at a billion
// increments a second takes 584 years.
type Counter struct {
	v atomic.Uint64
}

// Inc adds 1 to c.
func (c *Counter) Inc() {
	if c != nil {
		c.v.Add(1)
	}
}

// Add adds n to c.
func (c *Counter) Add(n uint64) {
	if c != nil {
		c.v.Add(n)
	}
}

// Load returns the current count.
func (c *Counter) Load() uint64 {
	if c == nil {
		return 0
	}
	return c.v.Load()
}

// Gauge is a value that goes up and down: a queue depth, the number of
// known peers. Its methods may be called from any goroutine and never
// block. The zero value is a gauge at 0, ready to use. A nil *Gauge is
// valid too: Set and Add do nothing and Load returns 0.
type Gauge struct {
	v atomic.Int64
}

// Set sets g to v.
func (g *Gauge) Set(v int64) {
	if g != nil {
		g.v.Store(v)
	}
}

// Add adds delta, which may be negative, to g. It wraps on overflow.
func (g *Gauge) Add(delta int64) {
	if g != nil {
		g.v.Add(delta)
	}
}

// Load returns the current value.
func (g *Gauge) Load() int64 {
	if g == nil {
		return 0
	}
	return g.v.Load()
}
