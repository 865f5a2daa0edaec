package multirate

import (
	"bytes"
	"context"
	"fmt"

	"github.com/meshrti/meshrti/peer"
)

// A Cycle is one cycle of a job: its place in time, the snapshot of its
// instances and the updates it buffers. The scheduler hands it to the
// job's Run on the job's goroutine; it is the job's alone until Run
// returns, and is not safe for concurrent use by other goroutines.
type Cycle struct {
	// Job is the job's name, N its multiple of the main cycle.
	Job string
	N   int
	// Number counts the job's cycles, from 0.
	Number int
	// Boundary is the logical time the cycle started at (E + Number x N
	// x T_main): the snapshot holds the values reflected up to the grant
	// to it. Next is the next boundary, where the cycle's updates are
	// stamped.
	Boundary, Next peer.LogicalTime

	s        *Scheduler
	j        *job
	ctx      context.Context
	first    int // the main cycle of Boundary
	snap     map[string]peer.AttributeValues
	narrowed map[string]map[peer.AttributeHandle]bool // instances narrowed to attributes
	updates  []bufferedUpdate
	failed   error // the first rule 9 violation under Fail
}

type bufferedUpdate struct {
	object string
	values peer.AttributeValues
	tag    []byte
}

// Value returns the value of an attribute of a named instance as it was
// at the cycle's boundary, and whether there was one (an instance not
// yet discovered, or an attribute not yet reflected, has none). Every
// call in one cycle gives the same answer (rule 8); the bytes returned
// are the caller's.
//
// An instance not named for the job (or an attribute outside those its
// Use names) breaks rule 9: under Fail, Value returns a *RuleError, and
// the scheduler's Run fails with it at the job's boundary; under Warn,
// the first touch of each instance is counted and reported, and Value
// returns the main loop's latest value, which is not coherent with the
// cycle.
func (c *Cycle) Value(object string, attr peer.AttributeHandle) ([]byte, bool, error) {
	if err := c.check(object, attr, "read"); err != nil {
		return nil, false, err
	}
	if c.undeclared(object, attr) {
		v, ok := c.s.liveValue(object, attr)
		return v, ok, nil
	}
	v, ok := c.snap[object][attr]
	return bytes.Clone(v), ok, nil
}

// Objects returns the names of the instances in the cycle's snapshot,
// in no particular order.
func (c *Cycle) Objects() []string {
	names := make([]string, 0, len(c.snap))
	for n := range c.snap {
		names = append(names, n)
	}
	return names
}

// Update buffers an update of a named instance's attributes. The
// scheduler sends it at the job's next boundary (Next), time-stamped
// with it when the federate is time-regulating, in the order the job's
// updates were made. values is copied. Touching an instance not named
// for the job is rule 9, as for Value.
func (c *Cycle) Update(object string, values peer.AttributeValues, tag []byte) error {
	for a := range values {
		if err := c.check(object, a, "update"); err != nil {
			return err
		}
	}
	cp := make(peer.AttributeValues, len(values))
	for a, v := range values {
		cp[a] = bytes.Clone(v)
	}
	c.updates = append(c.updates, bufferedUpdate{object: object, values: cp, tag: bytes.Clone(tag)})
	return nil
}

// Await blocks until the main loop is in main cycle i of this cycle
// (counting from 0 at Boundary; 0 <= i < N), or ctx of the job's Run
// ends. A job that wants to spread its reads over its cycle, or to wait
// for the world to move on, uses it; the main loop is in the last one,
// N-1, when it waits for the job.
func (c *Cycle) Await(i int) error {
	if i < 0 || i >= c.N {
		return fmt.Errorf("multirate: job %q: Await(%d) outside its cycle of %d main cycles", c.Job, i, c.N)
	}
	target := c.first + i
	for {
		c.s.mu.Lock()
		at, moved := c.s.mainAt, c.s.moved
		c.s.mu.Unlock()
		if at >= target {
			return nil
		}
		select {
		case <-moved:
		case <-c.ctx.Done():
			return c.ctx.Err()
		}
	}
}

// declared reports whether the job named the instance (and, when it
// narrowed it, the attribute).
func (c *Cycle) declared(object string, attr peer.AttributeHandle) bool {
	if c.j.uses == nil {
		return c.s.unbound(object)
	}
	if _, ok := c.j.uses[object]; !ok {
		return false
	}
	if allowed, ok := c.narrowed[object]; ok {
		return allowed[attr]
	}
	return true
}

func (c *Cycle) undeclared(object string, attr peer.AttributeHandle) bool {
	return !c.declared(object, attr)
}

// check applies rule 9 to a touch of object's attr.
func (c *Cycle) check(object string, attr peer.AttributeHandle, what string) error {
	if c.declared(object, attr) {
		return nil
	}
	detail := fmt.Sprintf("%s of attribute %v, not named for the job", what, attr)
	if n, ok := c.s.p.bound[object]; ok && c.j.uses == nil {
		detail = fmt.Sprintf("%s of attribute %v, bound to jobs every %d main cycles", what, attr, n)
	}
	e := &RuleError{Rule: 9, Job: c.Job, Objects: []string{object}, Detail: detail}
	if c.s.cfg.Undeclared == Warn {
		if c.j.warn(c.s, object) && c.s.cfg.Warn != nil {
			c.s.cfg.Warn(e)
		}
		return nil
	}
	if c.failed == nil {
		c.failed = e
	}
	return e
}

// warn records the job's first touch of an undeclared instance, once
// per run; it reports whether this is the first.
func (j *job) warn(s *Scheduler, object string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if j.warned == nil {
		j.warned = make(map[string]bool)
	}
	if j.warned[object] {
		return false
	}
	j.warned[object] = true
	s.stats.Jobs[j.index].Warnings++
	return true
}
