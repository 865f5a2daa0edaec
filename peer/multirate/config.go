package multirate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/meshrti/meshrti/peer"
)

// Config is a scheduler's configuration: the main cycle and the jobs.
// Validate checks the rules; New refuses a Config that breaks one.
type Config struct {
	// MainCycle is T_main, the logical time of one main cycle: the step
	// the main loop advances by. It must be positive and finite, of the
	// federation's time representation (peer.Float64Time or
	// peer.Integer64Time).
	MainCycle peer.LogicalTime
	// Jobs run at whole multiples of the main cycle, each on a goroutine
	// of its own. A job's Name appears once.
	Jobs []Job
	// Undeclared says what a job's touch of an instance not named for it
	// does (rule 9): Fail (the default) or Warn.
	Undeclared Policy
	// Warn, when set, is told of each rule 9 warning (Undeclared: Warn):
	// once per job and instance, on that job's goroutine, when the job
	// first touches the instance. Stats counts them either way.
	Warn func(*RuleError)
	// Handle, when set, gets every callback the main loop takes, after
	// the scheduler has recorded what it needs, on the goroutine of Run
	// (as RunCycles's handle). An error ends Run.
	Handle func(peer.Event) error
}

// A Job is work run once per cycle of Cycle logical time, on a goroutine
// of its own.
type Job struct {
	// Name names the job in errors, statistics and Cycle.Job.
	Name string
	// Cycle is T_job, the job's cycle time: a whole multiple N of the
	// main cycle (rules 1 and 2). Nil means the main cycle (N = 1).
	Cycle peer.LogicalTime
	// Uses names the object instances the job uses (reads or updates).
	// A job whose cycle differs from the main cycle must name them (rule
	// 3); a job at the main cycle that names none sees every instance not
	// bound to another cycle (rule 5).
	Uses []Use
	// Run is the job's work for one cycle. It reads the values of its
	// cycle through c and buffers its updates with c.Update; it runs
	// while the main loop goes on, and must return before the job's next
	// boundary or the main loop waits for it there. An error ends the
	// scheduler's Run. ctx ends when Run does: Run waits for Run to
	// return, so it should give up then.
	Run func(ctx context.Context, c *Cycle) error
}

// A Use names an object instance a job uses.
type Use struct {
	// Object is the instance's name (as registered, or discovered).
	Object string
	// Attributes, when set, narrows the job's view of the instance to
	// these attributes (by name); nil means every attribute. It does
	// not give attributes cycles of their own: an instance has one cycle
	// time whatever attributes its jobs name (rule 4).
	Attributes []string
}

// Objects returns a Use of every attribute of each named instance.
func Objects(names ...string) []Use {
	uses := make([]Use, len(names))
	for i, n := range names {
		uses[i] = Use{Object: n}
	}
	return uses
}

// Policy is what a job's touch of an instance not named for it does.
type Policy int

const (
	// Fail makes the touch an error: the Cycle call returns a *RuleError
	// (rule 9), and the scheduler's Run returns it at the job's next
	// boundary even if the job went on.
	Fail Policy = iota
	// Warn counts the touch and reports it once per job and instance
	// (Config.Warn); the read sees the main loop's latest value, which is
	// not coherent with the job's cycle.
	Warn
)

// The rules, checked by Validate (1 to 7) and at run time (9); rule 8
// is what the scheduler guarantees.
var rules = [...]string{
	1: "a job's cycle is never shorter than the main cycle",
	2: "a job's cycle is a whole multiple of the main cycle",
	3: "a job whose cycle differs from the main cycle names the object instances it uses",
	4: "cycle times apply per object instance, not per attribute",
	5: "when every job runs at the main cycle, naming instances is optional",
	6: "an instance used by several jobs needs them to share one cycle time",
	7: "a job has exactly one cycle time",
	8: "within a job's cycle no new data appears to it",
	9: "data a job uses is named for it",
}

// A RuleError is a broken rule: which rule, the job, and the object
// instances concerned.
type RuleError struct {
	Rule    int      // 1 to 9, as in the package documentation
	Job     string   // the job that breaks it
	Objects []string // the instances concerned; empty when the job names none
	Other   string   // rules 4 and 6: the other job
	Detail  string   // what was found
}

func (e *RuleError) Error() string {
	inst := "no instances"
	switch len(e.Objects) {
	case 0:
	case 1:
		inst = fmt.Sprintf("instance %q", e.Objects[0])
	default:
		q := make([]string, len(e.Objects))
		for i, o := range e.Objects {
			q[i] = fmt.Sprintf("%q", o)
		}
		inst = "instances " + strings.Join(q, ", ")
	}
	name := "?"
	if e.Rule > 0 && e.Rule < len(rules) {
		name = rules[e.Rule]
	}
	return fmt.Sprintf("multirate: job %q, %s: rule %d (%s): %s", e.Job, inst, e.Rule, name, e.Detail)
}

// Violations returns the rule errors in err: err itself, or those an
// errors.Join (as from Validate) holds.
func Violations(err error) []*RuleError {
	var out []*RuleError
	var walk func(error)
	walk = func(err error) {
		if re, ok := err.(*RuleError); ok {
			out = append(out, re)
			return
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	if err != nil {
		walk(err)
	}
	return out
}

// plan is a validated Config: each job's multiple, and which instances
// are bound to which multiple.
type plan struct {
	main  float64
	kind  string         // the time representation
	n     []int          // per job
	bound map[string]int // instance name -> the multiple of the jobs naming it
}

// Validate checks cfg against rules 1 to 7 and the plain requirements
// (a main cycle, job names, functions). It returns every problem found,
// joined; each broken rule is a *RuleError (see Violations).
func (cfg *Config) Validate() error {
	_, err := cfg.plan()
	return err
}

func (cfg *Config) plan() (*plan, error) {
	var errs []error
	p := &plan{bound: make(map[string]int)}
	if cfg.MainCycle == nil {
		return nil, errors.New("multirate: no main cycle")
	}
	p.main, p.kind = cfg.MainCycle.Float(), cfg.MainCycle.Representation()
	if !(p.main > 0) || math.IsInf(p.main, 0) {
		return nil, fmt.Errorf("multirate: main cycle %v: must be positive and finite", cfg.MainCycle)
	}
	if len(cfg.Jobs) == 0 {
		return nil, errors.New("multirate: no jobs")
	}
	if cfg.Undeclared != Fail && cfg.Undeclared != Warn {
		errs = append(errs, fmt.Errorf("multirate: unknown policy %d for undeclared data", cfg.Undeclared))
	}
	p.n = make([]int, len(cfg.Jobs))
	first := make(map[string]int) // job name -> index of its first entry
	for i, j := range cfg.Jobs {
		names := useNames(j.Uses)
		ruleErr := func(rule int, format string, args ...any) {
			errs = append(errs, &RuleError{Rule: rule, Job: j.Name, Objects: names, Detail: fmt.Sprintf(format, args...)})
		}
		switch {
		case j.Name == "":
			errs = append(errs, fmt.Errorf("multirate: job %d has no name", i))
		case j.Run == nil:
			errs = append(errs, fmt.Errorf("multirate: job %q has no Run function", j.Name))
		}
		cycle := cfg.MainCycle
		if j.Cycle != nil {
			cycle = j.Cycle
		}
		if cycle.Representation() != p.kind {
			errs = append(errs, fmt.Errorf("multirate: job %q: cycle %v is %s, the main cycle %s", j.Name, cycle, cycle.Representation(), p.kind))
			continue
		}
		c := cycle.Float()
		n := math.Round(c / p.main)
		switch {
		case math.IsNaN(c) || c < p.main:
			ruleErr(1, "cycle %v is shorter than the main cycle %v", cycle, cfg.MainCycle)
			continue
		case math.IsInf(c, 0) || math.Abs(n*p.main-c) > 1e-9*c || n > 1<<30:
			ruleErr(2, "cycle %v is %g main cycles of %v", cycle, c/p.main, cfg.MainCycle)
			continue
		}
		p.n[i] = int(n)
		if k, dup := first[j.Name]; dup && j.Name != "" {
			if p.n[k] != p.n[i] {
				ruleErr(7, "given cycles of %d and %d main cycles", p.n[k], p.n[i])
			} else {
				errs = append(errs, fmt.Errorf("multirate: job %q is named twice", j.Name))
			}
			continue
		}
		first[j.Name] = i
		if p.n[i] != 1 && len(j.Uses) == 0 {
			ruleErr(3, "it runs every %d main cycles and names no instances", p.n[i])
		}
		seen := make(map[string]bool)
		for _, u := range j.Uses {
			switch {
			case u.Object == "":
				errs = append(errs, fmt.Errorf("multirate: job %q names an instance with no name", j.Name))
			case seen[u.Object]:
				errs = append(errs, fmt.Errorf("multirate: job %q names instance %q twice", j.Name, u.Object))
			}
			seen[u.Object] = true
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	// Rules 4 and 6: every job naming an instance shares one multiple.
	// When the jobs that disagree each narrowed the instance to
	// attributes the other does not name, they tried to give attributes
	// cycles of their own: rule 4.
	type binding struct {
		job   int
		attrs []string
	}
	byObject := make(map[string][]binding)
	var order []string
	for i, j := range cfg.Jobs {
		for _, u := range j.Uses {
			if byObject[u.Object] == nil {
				order = append(order, u.Object)
			}
			byObject[u.Object] = append(byObject[u.Object], binding{i, u.Attributes})
		}
	}
	for _, obj := range order {
		bs := byObject[obj]
		p.bound[obj] = p.n[bs[0].job]
		for _, b := range bs[1:] {
			a := bs[0]
			if p.n[b.job] == p.n[a.job] {
				continue
			}
			other := cfg.Jobs[a.job].Name
			e := &RuleError{Rule: 6, Job: cfg.Jobs[b.job].Name, Objects: []string{obj}, Other: other,
				Detail: fmt.Sprintf("every %d main cycles here, every %d in job %q", p.n[b.job], p.n[a.job], other)}
			if len(a.attrs) > 0 && len(b.attrs) > 0 && disjoint(a.attrs, b.attrs) {
				e.Rule = 4
				e.Detail = fmt.Sprintf("attributes %s every %d main cycles here, attributes %s every %d in job %q",
					strings.Join(b.attrs, ", "), p.n[b.job], strings.Join(a.attrs, ", "), p.n[a.job], other)
			}
			errs = append(errs, e)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return p, nil
}

func useNames(uses []Use) []string {
	var names []string
	for _, u := range uses {
		names = append(names, u.Object)
	}
	return names
}

func disjoint(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return false
		}
	}
	return true
}
