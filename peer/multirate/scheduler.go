package multirate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meshrti/meshrti/peer"
)

// A Scheduler runs a federate's main loop in cycles of Config.MainCycle
// logical time and its jobs at whole multiples of it, each job on a
// goroutine of its own with a snapshot of its instances per cycle.
type Scheduler struct {
	f    *peer.Federate
	cfg  Config
	p    *plan
	jobs []*job

	running atomic.Bool

	// mu guards the live state (written by the main loop, read by jobs
	// that touch undeclared data under Warn), the main loop's progress
	// and the statistics.
	mu     sync.Mutex
	live   map[peer.ObjectInstanceHandle]*instance
	names  map[string]peer.ObjectInstanceHandle
	mainAt int           // the main cycle the main loop is in; -1 before the first
	moved  chan struct{} // closed, and replaced, when mainAt changes
	stats  Stats

	// The main loop's own state (Run's goroutine).
	epoch  float64 // the logical time of main cycle 0
	cycles int     // main cycles to run
	m      int     // the main cycle of the next cycle of the loop; -1 before the first grant
	ctx    context.Context
}

// instance is the latest reflected state of one object instance.
type instance struct {
	name  string
	class peer.ObjectClassHandle
	vals  peer.AttributeValues
}

// job is one Job's runtime state. start and done carry its cycles to
// and from its goroutine; the rest is the main loop's.
type job struct {
	cfg    Job
	index  int
	n      int
	uses   map[string][]string // named instance -> attribute names (nil: all); nil map: every unbound instance
	start  chan *Cycle
	done   chan error
	cur    *Cycle          // the cycle running, if any
	warned map[string]bool // instances warned of (rule 9); guarded by Scheduler.mu
	k      int             // cycles started
}

// New returns a scheduler for f, or the error of Config.Validate. f's
// time representation must be the main cycle's. Nothing starts until
// Run.
func New(f *peer.Federate, cfg Config) (*Scheduler, error) {
	p, err := cfg.plan()
	if err != nil {
		return nil, err
	}
	if name := f.GetTimeFactory().Name(); name != p.kind {
		return nil, fmt.Errorf("multirate: the main cycle is %s, the federation uses %s", p.kind, name)
	}
	s := &Scheduler{
		f: f, cfg: cfg, p: p,
		live: make(map[peer.ObjectInstanceHandle]*instance), names: make(map[string]peer.ObjectInstanceHandle),
		mainAt: -1, moved: make(chan struct{}),
	}
	s.cfg.Jobs = slices.Clone(cfg.Jobs)
	for i, jc := range s.cfg.Jobs {
		j := &job{cfg: jc, index: i, n: p.n[i]}
		if len(jc.Uses) > 0 {
			j.uses = make(map[string][]string)
			for _, u := range jc.Uses {
				j.uses[u.Object] = u.Attributes
			}
		}
		s.jobs = append(s.jobs, j)
		s.stats.Jobs = append(s.stats.Jobs, JobStats{Name: jc.Name, N: j.n})
	}
	return s, nil
}

// Stats is what a scheduler counted.
type Stats struct {
	// MainCycles counts the main cycles begun.
	MainCycles int
	// Jobs, in Config order.
	Jobs []JobStats
}

// JobStats is what one job did.
type JobStats struct {
	Name string
	N    int // the job's multiple of the main cycle
	// Cycles counts the cycles the job finished.
	Cycles int
	// Held counts the boundaries where the job was still running when
	// the main loop got there, so the main loop waited; HeldFor sums the
	// waits. A job at the main cycle runs beside the main loop's own
	// step, so it holds the main loop whenever it takes longer.
	Held    int
	HeldFor time.Duration
	// Updates counts the updates sent for the job.
	Updates int
	// Warnings counts the instances the job touched without naming them
	// (rule 9, under Warn): one per instance.
	Warnings int
}

// Stats returns the counts so far. It may be called from any goroutine.
func (s *Scheduler) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Jobs = slices.Clone(st.Jobs)
	return st
}

// Run runs cycles main cycles, from the federate's logical time E when
// Run is called: main cycle m starts once the federate is granted E +
// m x T_main, and a job of multiple N starts its cycle k at main cycle
// k x N, when the whole cycle fits in the run. Run ends once the
// federate is granted E + cycles x T_main, after the last jobs' updates
// went out.
//
// Each main cycle, on the calling goroutine (as RunCycles, which Run
// uses: it must be the only reader of the federate's events):
//
//  1. the callbacks queued since the grant are recorded (and handed to
//     Config.Handle): reflections update the latest values;
//  2. each job whose boundary this is gets a snapshot of its instances
//     and starts its cycle on its goroutine;
//  3. for each job whose cycle ends at the next main cycle, the main
//     loop waits until the job has returned (counted in Held when it
//     has not yet), then sends the updates it buffered, stamped with
//     that next boundary when the federate is time-regulating;
//  4. it asks to advance to the next main cycle, and waits for the grant.
//
// Run returns nil after the last cycle; otherwise the first error: a
// job's (naming it and its cycle), a rule 9 violation under Fail, a
// failed update, ctx's, or the federate's (see RunCycles). Before
// returning it cancels the jobs' context and waits for every job
// goroutine to end. A regulating federate's lookahead must not exceed
// the main cycle, or a job's updates could not be stamped at its
// boundary.
func (s *Scheduler) Run(ctx context.Context, cycles int) error {
	if cycles < 0 {
		return fmt.Errorf("multirate: %d cycles", cycles)
	}
	if !s.running.CompareAndSwap(false, true) {
		return errors.New("multirate: Run is already running")
	}
	defer s.running.Store(false)
	t, err := s.f.QueryLogicalTime()
	if err != nil {
		return fmt.Errorf("multirate: %w", err)
	}
	st, err := s.f.TimeStatus()
	if err != nil {
		return fmt.Errorf("multirate: %w", err)
	}
	if st.Regulating && st.Lookahead > s.p.main {
		return fmt.Errorf("multirate: lookahead %v exceeds the main cycle %v: updates could not be stamped at their boundary", st.Lookahead, s.cfg.MainCycle)
	}
	s.epoch, s.cycles, s.m = t.Float(), cycles, -1

	jctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, j := range s.jobs {
		j.start, j.done, j.cur, j.k = make(chan *Cycle), make(chan error, 1), nil, 0
		wg.Go(func() {
			for c := range j.start {
				j.done <- s.runCycle(jctx, j, c)
			}
		})
	}
	s.ctx = ctx
	err = s.f.RunCycles(ctx, s.handle, s.step)
	cancel()
	for _, j := range s.jobs {
		close(j.start)
	}
	wg.Wait()
	s.ctx = nil
	return err
}

// timeOf is the logical time of main cycle m.
func (s *Scheduler) timeOf(m int) float64 { return s.epoch + float64(m)*s.p.main }

// makeTime returns v in the federation's time representation.
func (s *Scheduler) makeTime(v float64) peer.LogicalTime {
	if s.p.kind == peer.HLAinteger64Time {
		return peer.Integer64Time(int64(v))
	}
	return peer.Float64Time(v)
}

// step is one cycle of the loop: a main cycle (steps 2 to 4 of Run).
func (s *Scheduler) step(cy *peer.Cycle) error {
	if s.m < 0 {
		// Main cycle 0 starts with the grant to E, which brings every
		// time-stamped message at or before E.
		s.m = 0
		cy.Queue(peer.AdvanceTo{Time: s.makeTime(s.timeOf(0))})
		return nil
	}
	m := s.m
	if got, want := cy.Time.Float(), s.timeOf(m); got != want {
		return fmt.Errorf("multirate: main cycle %d is at %v, but the federate is at %v", m, s.makeTime(want), cy.Time)
	}
	s.enter(m)
	if m == s.cycles {
		return peer.ErrStopCycles
	}
	for _, j := range s.jobs {
		if m%j.n == 0 && m+j.n <= s.cycles {
			if err := s.begin(j, m); err != nil {
				return err
			}
		}
	}
	var regulating, checked bool
	next := s.makeTime(s.timeOf(m + 1))
	for _, j := range s.jobs {
		if j.cur == nil || (m+1)%j.n != 0 {
			continue
		}
		c, err := s.finish(j)
		if err != nil {
			return err
		}
		if len(c.updates) > 0 && !checked {
			st, err := s.f.TimeStatus()
			if err != nil {
				return fmt.Errorf("multirate: %w", err)
			}
			regulating, checked = st.Regulating, true
		}
		for _, u := range c.updates {
			h, err := s.handleOf(u.object)
			if err != nil {
				return fmt.Errorf("multirate: job %q, cycle %d: update of %q: %w", j.cfg.Name, c.Number, u.object, err)
			}
			cmd := jobUpdate{s: s, job: j, object: u.object, Update: peer.Update{Object: h, Values: u.values, Tag: u.tag}}
			if regulating {
				cmd.Time = next
			}
			cy.Queue(cmd)
		}
	}
	s.m = m + 1
	cy.Queue(peer.AdvanceTo{Time: next})
	return nil
}

// enter records that the main loop is in main cycle m, waking Await.
func (s *Scheduler) enter(m int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mainAt = m
	if m < s.cycles {
		s.stats.MainCycles = m + 1
	}
	close(s.moved)
	s.moved = make(chan struct{})
}

// begin starts job j's cycle at main cycle m with its snapshot.
func (s *Scheduler) begin(j *job, m int) error {
	c := &Cycle{
		Job: j.cfg.Name, N: j.n, Number: j.k,
		Boundary: s.makeTime(s.timeOf(m)), Next: s.makeTime(s.timeOf(m + j.n)),
		s: s, j: j, first: m,
		snap: make(map[string]peer.AttributeValues),
	}
	for _, in := range s.viewOf(j) {
		narrow := j.uses[in.name]
		vals := in.vals
		if narrow != nil {
			allowed, err := s.attributes(in, narrow)
			if err != nil {
				return fmt.Errorf("multirate: job %q, instance %q: %w", j.cfg.Name, in.name, err)
			}
			if c.narrowed == nil {
				c.narrowed = make(map[string]map[peer.AttributeHandle]bool)
			}
			c.narrowed[in.name] = allowed
			vals = make(peer.AttributeValues)
			for a := range allowed {
				if v, ok := in.vals[a]; ok {
					vals[a] = v
				}
			}
		}
		c.snap[in.name] = maps.Clone(vals)
	}
	j.cur, j.k = c, j.k+1
	select {
	case j.start <- c:
		return nil
	case <-s.ctx.Done():
		j.cur = nil
		return fmt.Errorf("multirate: %w", s.ctx.Err())
	}
}

// viewOf returns the instances job j sees: those it names that the
// federate knows, or, when it names none, every instance known here
// that no job of another cycle names.
func (s *Scheduler) viewOf(j *job) []*instance {
	var out []*instance
	if j.uses == nil {
		for _, in := range s.live {
			if s.unbound(in.name) {
				out = append(out, in)
			}
		}
		return out
	}
	for _, u := range j.cfg.Uses {
		if in := s.lookup(u.Object); in != nil {
			out = append(out, in)
		}
	}
	return out
}

// lookup finds a known instance by name, learning it when the federate
// knew it before the scheduler did (discovered before Run, or its own).
func (s *Scheduler) lookup(name string) *instance {
	if h, ok := s.names[name]; ok {
		return s.live[h]
	}
	h, err := s.f.GetObjectInstanceHandle(name)
	if err != nil {
		return nil
	}
	class, err := s.f.GetKnownObjectClassHandle(h)
	if err != nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.learn(h, name, class)
}

// unbound reports whether a job that names no instances may use the
// instance: no job of another cycle names it (such jobs run at the main
// cycle, rule 3).
func (s *Scheduler) unbound(name string) bool {
	n, ok := s.p.bound[name]
	return !ok || n == 1
}

// attributes resolves attribute names of an instance's class.
func (s *Scheduler) attributes(in *instance, names []string) (map[peer.AttributeHandle]bool, error) {
	out := make(map[peer.AttributeHandle]bool, len(names))
	for _, n := range names {
		a, err := s.f.GetAttributeHandle(in.class, n)
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %w", n, err)
		}
		out[a] = true
	}
	return out, nil
}

// finish waits for job j's running cycle to end and returns it.
func (s *Scheduler) finish(j *job) (*Cycle, error) {
	c := j.cur
	var err error
	select {
	case err = <-j.done:
	default:
		// Counted before the wait, so that Stats tells of it while it
		// lasts.
		s.mu.Lock()
		s.stats.Jobs[j.index].Held++
		s.mu.Unlock()
		began := time.Now()
		select {
		case err = <-j.done:
		case <-s.ctx.Done():
			return nil, fmt.Errorf("multirate: waiting for job %q: %w", j.cfg.Name, s.ctx.Err())
		}
		s.mu.Lock()
		s.stats.Jobs[j.index].HeldFor += time.Since(began)
		s.mu.Unlock()
	}
	j.cur = nil
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.stats.Jobs[j.index].Cycles++
	s.mu.Unlock()
	return c, nil
}

// runCycle runs one cycle of j on its goroutine.
func (s *Scheduler) runCycle(ctx context.Context, j *job, c *Cycle) (err error) {
	c.ctx = ctx
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
		if err == nil {
			err = c.failed
		}
		if err != nil {
			err = fmt.Errorf("multirate: job %q, cycle %d (boundary %v): %w", c.Job, c.Number, c.Boundary, err)
		}
	}()
	return j.cfg.Run(ctx, c)
}

// Record hands the scheduler a callback read from the federate before
// Run: set-up code that reads events itself (to wait for a discovery,
// say) passes on what it read, so that the instances discovered and
// the values reflected are in the first snapshots. It is not
// Config.Handle's business: Record does not call it. Record may not be
// called while Run runs.
func (s *Scheduler) Record(ev peer.Event) error {
	if s.running.Load() {
		return errors.New("multirate: Record while Run runs")
	}
	s.record(ev)
	return nil
}

// handle records a callback in the live state, then hands it on.
func (s *Scheduler) handle(ev peer.Event) error {
	s.record(ev)
	if s.cfg.Handle != nil {
		return s.cfg.Handle(ev)
	}
	return nil
}

// record keeps what a callback tells of instances and their values.
func (s *Scheduler) record(ev peer.Event) {
	switch ev := ev.(type) {
	case peer.DiscoverObjectInstance:
		s.mu.Lock()
		s.learn(ev.Object, ev.Name, ev.Class)
		s.mu.Unlock()
	case peer.ReflectAttributeValues:
		in := s.live[ev.Object]
		if in == nil {
			// Discovered before Run: ask for its name and class.
			name, err := s.f.GetObjectInstanceName(ev.Object)
			if err != nil {
				break
			}
			class, _ := s.f.GetKnownObjectClassHandle(ev.Object)
			s.mu.Lock()
			in = s.learn(ev.Object, name, class)
			s.mu.Unlock()
		}
		s.mu.Lock()
		for a, v := range ev.Values {
			in.vals[a] = bytes.Clone(v)
		}
		s.mu.Unlock()
	case peer.RemoveObjectInstance:
		s.mu.Lock()
		if in := s.live[ev.Object]; in != nil {
			delete(s.names, in.name)
			delete(s.live, ev.Object)
		}
		s.mu.Unlock()
	}
}

// learn adds an instance to the live state; s.mu is held.
func (s *Scheduler) learn(h peer.ObjectInstanceHandle, name string, class peer.ObjectClassHandle) *instance {
	in := s.live[h]
	if in == nil {
		in = &instance{name: name, class: class, vals: make(peer.AttributeValues)}
		s.live[h] = in
		s.names[name] = h
	}
	return in
}

// handleOf finds an instance's handle by name: one reflected here, or
// one the federate registered or knows.
func (s *Scheduler) handleOf(name string) (peer.ObjectInstanceHandle, error) {
	if h, ok := s.names[name]; ok {
		return h, nil
	}
	return s.f.GetObjectInstanceHandle(name)
}

// liveValue is a value as the main loop has it now: what a job that
// touches an instance not named for it sees under Warn.
func (s *Scheduler) liveValue(name string, attr peer.AttributeHandle) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.names[name]
	if !ok {
		return nil, false
	}
	v, ok := s.live[h].vals[attr]
	return bytes.Clone(v), ok
}

// jobUpdate is a job's buffered update, sent by the main loop at the
// job's boundary.
type jobUpdate struct {
	peer.Update
	s      *Scheduler
	job    *job
	object string
}

func (u jobUpdate) Run(f *peer.Federate) error {
	if err := u.Update.Run(f); err != nil {
		return err
	}
	u.s.mu.Lock()
	u.s.stats.Jobs[u.job.index].Updates++
	u.s.mu.Unlock()
	return nil
}

func (u jobUpdate) String() string {
	if u.Time != nil {
		return fmt.Sprintf("update of %q for job %q at %v", u.object, u.job.cfg.Name, u.Time)
	}
	return fmt.Sprintf("update of %q for job %q", u.object, u.job.cfg.Name)
}
