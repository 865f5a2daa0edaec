package multirate

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/meshrti/meshrti/peer"
)

func noop(context.Context, *Cycle) error { return nil }

// violation is what a test expects of one *RuleError.
type violation struct {
	rule    int
	job     string
	objects []string
}

// TestRules: a table of valid and invalid configurations, one or more
// for each rule. Each violation is a *RuleError naming the rule, the job
// and the instances, and its message says all three.
func TestRules(t *testing.T) {
	f := func(v float64) peer.LogicalTime { return peer.Float64Time(v) }
	job := func(name string, cycle peer.LogicalTime, objs ...string) Job {
		return Job{Name: name, Cycle: cycle, Uses: Objects(objs...), Run: noop}
	}
	narrow := func(name string, cycle peer.LogicalTime, obj string, attrs ...string) Job {
		return Job{Name: name, Cycle: cycle, Uses: []Use{{Object: obj, Attributes: attrs}}, Run: noop}
	}
	tests := []struct {
		name string
		main peer.LogicalTime
		jobs []Job
		want []violation // nil: valid
	}{
		{"rule 1: a cycle shorter than the main cycle", f(1),
			[]Job{job("fast", f(0.5), "OBJ1")},
			[]violation{{1, "fast", []string{"OBJ1"}}}},
		{"rule 1: a zero cycle", f(1),
			[]Job{job("zero", f(0), "OBJ1", "OBJ2")},
			[]violation{{1, "zero", []string{"OBJ1", "OBJ2"}}}},
		{"rule 1: equal to the main cycle is fine", f(1),
			[]Job{job("main", f(1), "OBJ1")}, nil},
		{"rule 2: 2.5 main cycles", f(1),
			[]Job{job("odd", f(2.5), "OBJ2")},
			[]violation{{2, "odd", []string{"OBJ2"}}}},
		{"rule 2: 3 x 0.1 is whole despite rounding", f(0.1),
			[]Job{job("tenths", f(0.3), "OBJ2")}, nil},
		{"rule 2: integer time, 10 = 5 x 2", peer.Integer64Time(2),
			[]Job{job("ints", peer.Integer64Time(10), "OBJ2")}, nil},
		{"rule 2: integer time, 7 is not a multiple of 2", peer.Integer64Time(2),
			[]Job{job("ints", peer.Integer64Time(7), "OBJ2")},
			[]violation{{2, "ints", []string{"OBJ2"}}}},
		{"rule 3: a slow job that names nothing", f(1),
			[]Job{job("main", nil), job("slow", f(2))},
			[]violation{{3, "slow", nil}}},
		{"rule 3: a slow job naming its instances", f(1),
			[]Job{job("main", nil), job("slow", f(2), "OBJ2", "OBJ3")}, nil},
		{"rule 4: one instance's attributes at two rates", f(1),
			[]Job{narrow("pos", f(2), "OBJ1", "Position"), narrow("mode", f(5), "OBJ1", "Mode")},
			[]violation{{4, "mode", []string{"OBJ1"}}}},
		{"rule 4: narrowing at one rate is fine", f(1),
			[]Job{narrow("pos", f(2), "OBJ1", "Position"), narrow("mode", f(2), "OBJ1", "Mode")}, nil},
		{"rule 5: every job at the main cycle, none naming instances", f(1),
			[]Job{job("a", nil), job("b", f(1))}, nil},
		{"rule 5: a main-cycle job naming nothing beside a slow one", f(1),
			[]Job{job("a", nil), job("slow", f(5), "OBJ4")}, nil},
		{"rule 6: an instance shared at two cycles", f(1),
			[]Job{job("two", f(2), "OBJ2", "OBJ3"), job("five", f(5), "OBJ3")},
			[]violation{{6, "five", []string{"OBJ3"}}}},
		{"rule 6: overlapping attributes at two cycles", f(1),
			[]Job{narrow("a", f(2), "OBJ1", "Position", "Mode"), narrow("b", f(5), "OBJ1", "Mode")},
			[]violation{{6, "b", []string{"OBJ1"}}}},
		{"rule 6: an instance shared at one cycle", f(1),
			[]Job{job("two", f(2), "OBJ2", "OBJ3"), job("other", f(2), "OBJ3")}, nil},
		{"rule 7: one job, two cycle times", f(1),
			[]Job{job("j", f(2), "OBJ1"), job("j", f(5), "OBJ2")},
			[]violation{{7, "j", []string{"OBJ2"}}}},
		{"several rules at once", f(1),
			[]Job{job("fast", f(0.5), "OBJ1"), job("odd", f(1.5), "OBJ2"), job("slow", f(3))},
			[]violation{{1, "fast", []string{"OBJ1"}}, {2, "odd", []string{"OBJ2"}}, {3, "slow", nil}}},
		{"the issue's consumer", f(1),
			[]Job{job("job1x", nil, "OBJ1"), job("job2x", f(2), "OBJ2", "OBJ3"), job("job5x", f(5), "OBJ4")}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{MainCycle: tt.main, Jobs: tt.jobs}
			err := cfg.Validate()
			if tt.want == nil {
				if err != nil {
					t.Fatalf("valid configuration refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("invalid configuration accepted")
			}
			got := Violations(err)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d violations, want %d: %v", len(got), len(tt.want), err)
			}
			for i, w := range tt.want {
				g := got[i]
				if g.Rule != w.rule || g.Job != w.job || !slices.Equal(g.Objects, w.objects) {
					t.Errorf("violation %d: rule %d, job %q, instances %q; want rule %d, job %q, instances %q",
						i, g.Rule, g.Job, g.Objects, w.rule, w.job, w.objects)
				}
				msg := g.Error()
				wantIn := []string{"rule " + string(rune('0'+w.rule)), `job "` + w.job + `"`, rules[w.rule]}
				if len(w.objects) == 0 {
					wantIn = append(wantIn, "no instances")
				}
				for _, o := range w.objects {
					wantIn = append(wantIn, `"`+o+`"`)
				}
				for _, s := range wantIn {
					if !strings.Contains(msg, s) {
						t.Errorf("message %q lacks %q", msg, s)
					}
				}
			}
		})
	}
}

// TestConfigErrors: what is not a rule but still wrong is refused with a
// plain error.
func TestConfigErrors(t *testing.T) {
	one := peer.Float64Time(1)
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no main cycle", Config{Jobs: []Job{{Name: "a", Run: noop}}}, "no main cycle"},
		{"negative main cycle", Config{MainCycle: peer.Float64Time(-1), Jobs: []Job{{Name: "a", Run: noop}}}, "positive"},
		{"no jobs", Config{MainCycle: one}, "no jobs"},
		{"no name", Config{MainCycle: one, Jobs: []Job{{Run: noop}}}, "no name"},
		{"no function", Config{MainCycle: one, Jobs: []Job{{Name: "a"}}}, "no Run"},
		{"mixed representations", Config{MainCycle: one, Jobs: []Job{{Name: "a", Cycle: peer.Integer64Time(2), Run: noop}}}, "HLAinteger64Time"},
		{"a name twice", Config{MainCycle: one, Jobs: []Job{{Name: "a", Run: noop}, {Name: "a", Run: noop}}}, "named twice"},
		{"an instance twice", Config{MainCycle: one, Jobs: []Job{{Name: "a", Uses: Objects("X", "X"), Run: noop}}}, `instance "X" twice`},
		{"an unnamed instance", Config{MainCycle: one, Jobs: []Job{{Name: "a", Uses: Objects(""), Run: noop}}}, "no name"},
		{"an unknown policy", Config{MainCycle: one, Undeclared: 7, Jobs: []Job{{Name: "a", Run: noop}}}, "policy"},
	}
	for _, tt := range tests {
		err := tt.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want an error saying %q", tt.name, err, tt.want)
		}
		if len(Violations(err)) != 0 {
			t.Errorf("%s: %v is not a rule violation", tt.name, err)
		}
	}
}
