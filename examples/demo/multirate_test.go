package demo

import (
	"bufio"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestDemoMultirateJSON runs `demo multirate -json` with loss and checks
// its lines alone, as an outside checker would: stdout is nothing but
// JSON objects; each read saw exactly the value of the latest publish
// of its instance stamped at or before its cycle's boundary; the reads
// of one cycle agree; and each job ran exactly once per N main cycles,
// cycle k at boundary k x N, reading several times each cycle.
func TestDemoMultirateJSON(t *testing.T) {
	const steps = 20
	code, out, errOut := runCmd(t, "demo", "multirate", "-json", "-steps", "20", "-loss", "0.2", "-seed", "7")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	type line struct {
		Ev       string   `json:"ev"`
		Fed      *string  `json:"fed"`
		Job      *string  `json:"job"`
		N        *int     `json:"n"`
		Cycle    *int     `json:"cycle"`
		Boundary *float64 `json:"boundary"`
		Obj      *string  `json:"obj"`
		Attr     *string  `json:"attr"`
		T        *float64 `json:"t"`
		Value    *float64 `json:"value"`
	}
	type pub struct{ t, v float64 }
	pubs := make(map[string][]pub) // "obj.attr" -> publishes
	var reads []line
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var l line
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("stdout line %q is not a demo JSON object: %v", sc.Text(), err)
		}
		switch l.Ev {
		case "publish":
			if l.Fed == nil || *l.Fed == "" || l.Obj == nil || l.Attr == nil || l.T == nil || l.Value == nil {
				t.Fatalf("publish line lacks a field: %s", sc.Text())
			}
			k := *l.Obj + "." + *l.Attr
			pubs[k] = append(pubs[k], pub{*l.T, *l.Value})
		case "read":
			if l.Job == nil || l.N == nil || l.Cycle == nil || l.Boundary == nil || l.Obj == nil || l.Attr == nil || l.Value == nil {
				t.Fatalf("read line lacks a field: %s", sc.Text())
			}
			reads = append(reads, l)
		default:
			t.Fatalf("unknown event in %s", sc.Text())
		}
	}
	if len(pubs) != 4 {
		t.Fatalf("publishes of %d instance attributes, want OBJ1..OBJ4 Value", len(pubs))
	}
	for k, ps := range pubs {
		if len(ps) != steps+1 {
			t.Errorf("%s: %d publishes, want one per main step and the first (%d)", k, len(ps), steps+1)
		}
	}
	// The invariant.
	type cycleKey struct {
		job   string
		cycle int
		obj   string
	}
	perCycle := make(map[cycleKey][]float64)
	cycles := make(map[string]map[int]bool)
	for _, r := range reads {
		best, want := math.Inf(-1), math.NaN()
		for _, p := range pubs[*r.Obj+"."+*r.Attr] {
			if p.t <= *r.Boundary && p.t > best {
				best, want = p.t, p.v
			}
		}
		if *r.Value != want {
			t.Errorf("%s cycle %d at %v read %s = %v; the latest publish at or before %v is %v", *r.Job, *r.Cycle, *r.Boundary, *r.Obj, *r.Value, *r.Boundary, want)
		}
		if *r.Boundary != float64(*r.Cycle**r.N) {
			t.Errorf("%s cycle %d of %d main cycles at boundary %v", *r.Job, *r.Cycle, *r.N, *r.Boundary)
		}
		k := cycleKey{*r.Job, *r.Cycle, *r.Obj}
		perCycle[k] = append(perCycle[k], *r.Value)
		if cycles[*r.Job] == nil {
			cycles[*r.Job] = make(map[int]bool)
		}
		cycles[*r.Job][*r.Cycle] = true
	}
	for k, vs := range perCycle {
		if len(vs) < 2 {
			t.Errorf("%v: read %d times, want several", k, len(vs))
		}
		for _, v := range vs {
			if v != vs[0] {
				t.Errorf("%v: reads %v disagree", k, vs)
				break
			}
		}
	}
	for job, n := range map[string]int{"job1x": 1, "job2x": 2, "job5x": 5} {
		if len(cycles[job]) != steps/n {
			t.Errorf("%s ran %d cycles, want %d", job, len(cycles[job]), steps/n)
		}
		for k := range steps / n {
			if !cycles[job][k] {
				t.Errorf("%s has no cycle %d", job, k)
			}
		}
	}
	if !strings.Contains(errOut, "check: every read saw") {
		t.Errorf("stderr lacks the demo's own check:\n%s", errOut)
	}
}

// TestDemoMultirateFlags: bad flags are usage errors; the plain output
// has the summary and no JSON.
func TestDemoMultirateFlags(t *testing.T) {
	for _, args := range [][]string{{"-loss", "1"}, {"-loss", "-0.1"}, {"-steps", "0"}, {"extra"}} {
		if code, _, _ := runCmd(t, append([]string{"demo", "multirate"}, args...)...); code != 2 {
			t.Errorf("demo multirate %v: exit %d, want 2", args, code)
		}
	}
	code, out, errOut := runCmd(t, "demo", "multirate", "-steps", "6")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"job5x cycle 0 at 0: OBJ4=4000, read in main cycles 0, 2, 4", "job2x cycle 2 at 4: OBJ2=2004 OBJ3=3004", "check: every read saw"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, `{"ev"`) {
		t.Errorf("plain output has JSON lines:\n%s", out)
	}
}
