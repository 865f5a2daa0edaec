//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshrti/meshrti/internal/nodetest"
)

// Suspicion on real processes (docs/gossip.md, "What a suspicion does"):
// three `node -role tick` processes step together; one is paused with
// SIGSTOP long enough for the others' failure detectors to declare it
// dead, then resumed. With a long -lost-grace nobody proposes its
// removal: it is kept everywhere, nothing of it is lost. With the
// default grace and a longer pause the federation removes it: both
// others report it lost, it is told, and what it sends after is dropped.
// The trace checker reads the three traces together in both cases.

// tickRun is one test run of tick processes.
type tickRun struct {
	t      *testing.T
	procs  []*proc
	traces []string
	steps  int
}

// startTicks starts n tick processes of binary bin, stepping steps
// times, each tracing to its own file, with extra flags each; ctx ends
// them.
func startTicks(t *testing.T, bin string, ctx context.Context, federation, port string, n, steps int, extra ...string) *tickRun {
	t.Helper()
	dir := keptDir(t) // a failed run's traces stay, for trace-check
	r := &tickRun{t: t, steps: steps}
	seed := ""
	for k := range n {
		trace := filepath.Join(dir, fmt.Sprintf("N%d.jsonl", k+1))
		args := []string{"node", "-role", "tick", "-name", fmt.Sprintf("N%d", k+1), "-federation", federation,
			"-mcast-port", port, "-peers", strconv.Itoa(n), "-steps", strconv.Itoa(steps), "-step-delay", "20ms",
			"-timeout", "280s", "-trace", trace}
		args = append(args, extra...)
		if k == 0 {
			args = append(args, "-create")
		} else {
			args = append(args, "-seeds", seed)
		}
		p := start(t, ctx, bin, args...)
		if k == 0 {
			seed = strings.TrimSpace(p.line(t, "gossip ", 20*time.Second))
		}
		r.procs = append(r.procs, p)
		r.traces = append(r.traces, trace)
	}
	return r
}

// pause stops process k for d once every process was granted at.
func (r *tickRun) pause(k, at int, d time.Duration) {
	r.t.Helper()
	for _, p := range r.procs {
		p.line(r.t, fmt.Sprintf("granted %d", at), 60*time.Second)
	}
	pid := r.procs[k].cmd.Process.Pid
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		r.t.Fatal(err)
	}
	time.Sleep(d)
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		r.t.Fatal(err)
	}
}

// result reads process k's result line and waits for it to end.
func (r *tickRun) result(k int) (tickResult, error) {
	r.t.Helper()
	var res tickResult
	if err := json.Unmarshal([]byte(r.procs[k].line(r.t, "result ", 4*time.Minute)), &res); err != nil {
		r.t.Fatalf("N%d: %v", k+1, err)
	}
	return res, r.procs[k].wait()
}

// checkTraces runs trace-check over every process's trace.
func (r *tickRun) checkTraces() string {
	r.t.Helper()
	var out, errOut strings.Builder
	if code := run(append([]string{"trace-check"}, r.traces...), &out, &errOut); code != 0 {
		r.t.Errorf("trace-check: exit %d\n%s%s", code, out.String(), errOut.String())
		for k, p := range r.procs {
			r.t.Logf("N%d's log:\n%s", k+1, p.logged(40))
		}
	}
	return strings.TrimSpace(out.String())
}

func TestPausedNodeIsKept(t *testing.T) {
	const n, steps = 3, 30
	bin, ctx, federation, port := processTest(t, "suspect-kept", 43000)
	r := startTicks(t, bin, ctx, federation, port, n, steps, "-lost-grace", "60s")
	// memberlist declares a silent member dead within 2 s here (local
	// profile, three members): 4 s is well past it.
	r.pause(n-1, 5, 4*time.Second)
	var suspicions uint64
	for k := range n {
		res, err := r.result(k)
		if err != nil {
			t.Errorf("N%d: %v", k+1, err)
		}
		t.Logf("N%d: %+v", k+1, res)
		if res.Time != steps || res.Grants != steps || res.Sent != steps || len(res.Lost) != 0 || res.OutOfOrder != 0 {
			t.Errorf("N%d: time %v, %d grants, %d sent, lost %v, %d out of order; want %d steps, nothing lost",
				k+1, res.Time, res.Grants, res.Sent, res.Lost, res.OutOfOrder, steps)
		}
		for j := range n {
			if j != k && (res.Reflections[fmt.Sprintf("N%d", j+1)] != steps || res.LastTime[fmt.Sprintf("N%d", j+1)] != steps) {
				t.Errorf("N%d reflected %d of N%d's updates (last at %v), want %d", k+1, res.Reflections[fmt.Sprintf("N%d", j+1)], j+1, res.LastTime[fmt.Sprintf("N%d", j+1)], steps)
			}
		}
		if k < n-1 {
			suspicions += res.Suspicions
		}
	}
	if suspicions == 0 {
		t.Error("no failure detector suspected the paused node: the test did not test a suspicion")
	}
	t.Log(r.checkTraces())
}

func TestPausedNodeIsRemoved(t *testing.T) {
	const n, steps, at = 3, 30, 5
	bin, ctx, federation, port := processTest(t, "suspect-removed", 44000)
	r := startTicks(t, bin, ctx, federation, port, n, steps)
	// Past detection (2 s), the grace (1 s) and the decision: the others
	// remove it while it is stopped.
	r.pause(n-1, at, 8*time.Second)
	for k := range n - 1 {
		res, err := r.result(k)
		if err != nil {
			t.Errorf("N%d: %v", k+1, err)
		}
		t.Logf("N%d: %+v", k+1, res)
		if res.Time != steps || res.Grants != steps || res.Sent != steps || res.OutOfOrder != 0 {
			t.Errorf("N%d: time %v, %d grants, %d sent, %d out of order; want %d steps", k+1, res.Time, res.Grants, res.Sent, res.OutOfOrder, steps)
		}
		if !slices.Equal(res.Lost, []string{fmt.Sprintf("N%d", n)}) {
			t.Errorf("N%d lost %v, want [N%d]", k+1, res.Lost, n)
		}
		for j := range n - 1 {
			if j != k && res.Reflections[fmt.Sprintf("N%d", j+1)] != steps {
				t.Errorf("N%d reflected %d of N%d's updates, want %d", k+1, res.Reflections[fmt.Sprintf("N%d", j+1)], j+1, steps)
			}
		}
		name := fmt.Sprintf("N%d", n)
		if m := res.Reflections[name]; m < at || float64(m) != res.LastTime[name] {
			t.Errorf("N%d reflected %d of the removed N%d's updates (last at %v), want 1..m with m >= %d", k+1, m, n, res.LastTime[name], at)
		}
	}
	// The removed process learns it when it runs again, and ends.
	// (ConnectionLost, or a call that fails as not connected, whichever
	// comes first).
	res, err := r.result(n - 1)
	if err == nil || !strings.Contains(err.Error(), "connection lost") && !strings.Contains(err.Error(), "not connected") {
		t.Errorf("N%d after its removal: %v, want it told it is no longer connected", n, err)
	}
	t.Logf("N%d: %+v", n, res)
	t.Log(r.checkTraces())
}

// TestSoakManyProcesses is the run where a starved failure detector once
// made one member drop a live federate's updates: 64 tick processes on
// one host, 100 steps, nothing injected, repeated MESHRTI_SOAK_RUNS
// times (unset: skipped; MESHRTI_SOAK_PROCESSES and MESHRTI_SOAK_STEPS
// change its size). Every federate receives every other's updates, or
// the federation agreed that the sender was lost and every member
// reports the same list.
func TestSoakManyProcesses(t *testing.T) {
	runs, _ := strconv.Atoi(os.Getenv("MESHRTI_SOAK_RUNS"))
	if runs <= 0 {
		t.Skip("set MESHRTI_SOAK_RUNS=N to run the 64-process soak N times")
	}
	n, steps := envInt("MESHRTI_SOAK_PROCESSES", 64), envInt("MESHRTI_SOAK_STEPS", 100)
	bin := nodetest.Build(t)
	var total soakCounts
	for i := range runs {
		t.Run(fmt.Sprintf("run%d", i+1), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			federation := fmt.Sprintf("soak-%d-%d", os.Getpid(), i)
			r := startTicks(t, bin, ctx, federation, fmt.Sprint(45000+os.Getpid()%5000), n, steps)
			c := soakOnce(t, r, n, steps)
			t.Logf("run %d: %+v", i+1, c)
			total.add(c)
		})
	}
	t.Logf("%d runs of %d processes x %d steps: %+v", runs, n, steps, total)
}

// soakCounts sums what the soak saw.
type soakCounts struct {
	Runs, Complete int
	// Removed counts the federates the federation removed as lost (each
	// told so), RunsWithRemovals the runs with any.
	Removed, RunsWithRemovals int
	Suspicions, Refutations   uint64
	MissingUpdates            int
}

func (c *soakCounts) add(o soakCounts) {
	c.Runs += o.Runs
	c.Complete += o.Complete
	c.Removed += o.Removed
	c.RunsWithRemovals += o.RunsWithRemovals
	c.Suspicions += o.Suspicions
	c.Refutations += o.Refutations
	c.MissingUpdates += o.MissingUpdates
}

// soakOnce judges one run. A process that ends told it was removed
// (connection lost) was lost by the federation's decision; every other
// one finishes all steps, reports the same federates lost (exactly the
// removed ones), and reflected every update of every other survivor. A
// removed federate knew of removals decided before its own only: its
// list is part of the survivors'.
func soakOnce(t *testing.T, r *tickRun, n, steps int) soakCounts {
	c := soakCounts{Runs: 1}
	results := make([]tickResult, n)
	removed := map[string]bool{}
	for k := range n {
		res, err := r.result(k)
		results[k] = res
		c.Suspicions += res.Suspicions
		c.Refutations += res.Refutations
		if err != nil {
			if strings.Contains(err.Error(), "connection lost") || strings.Contains(err.Error(), "not connected") {
				removed[fmt.Sprintf("N%d", k+1)] = true
				continue
			}
			t.Errorf("N%d: %v", k+1, err)
		}
	}
	c.Removed = len(removed)
	if c.Removed > 0 {
		c.RunsWithRemovals = 1
	}
	want := slices.Sorted(maps.Keys(removed))
	complete := true
	for k, res := range results {
		name := fmt.Sprintf("N%d", k+1)
		if removed[name] {
			for _, l := range res.Lost {
				if !removed[l] {
					t.Errorf("removed %s reports %s lost, which the federation kept", name, l)
				}
			}
			continue
		}
		if !slices.Equal(res.Lost, want) {
			t.Errorf("%s reports %v lost; the federation removed %v", name, res.Lost, want)
		}
		if res.Time != float64(steps) || res.OutOfOrder != 0 {
			t.Errorf("%s: time %v, %d out of order", name, res.Time, res.OutOfOrder)
		}
		for j := range n {
			other := fmt.Sprintf("N%d", j+1)
			if j == k || removed[other] {
				continue
			}
			if got := res.Reflections[other]; got != steps {
				complete = false
				c.MissingUpdates += steps - got
				t.Errorf("%s reflected %d of %s's updates, want %d", name, got, other, steps)
			}
		}
	}
	if complete {
		c.Complete = 1
	}
	return c
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// The lab role (the fault lab's federate, docs/reliability.md) over three
// processes: its time steps as tick's, ownership contended for and
// moved both ways, regions that move, synchronization points; every
// process's trace together breaks no rule of the checker.
func TestLabRole(t *testing.T) {
	const n, steps = 3, 30
	bin, ctx, federation, port := processTest(t, "lab-role", 46000)
	r := startTicks(t, bin, ctx, federation, port, n, steps, "-role", "lab")
	var total labCounts
	for k := range n {
		res, err := r.result(k)
		if err != nil {
			t.Errorf("N%d: %v", k+1, err)
		}
		if res.Time != steps || res.Lab == nil || len(res.Lost) != 0 {
			t.Fatalf("N%d: %+v", k+1, res)
		}
		t.Logf("N%d: %+v", k+1, *res.Lab)
		c := res.Lab
		total.Add(*c)
		// The point registered at the last step may come after the end.
		if c.ContactsSent != steps || c.Announced < steps/10-1 || c.Synchronized != c.Announced {
			t.Errorf("N%d sent %d radar contacts, was announced %d points and synchronized %d; want %d, at least %d and all", k+1, c.ContactsSent, c.Announced, c.Synchronized, steps, steps/10-1)
		}
	}
	if total.Acquired == 0 || total.Released == 0 || total.Divested == 0 || total.Contacts == 0 || total.Registered != steps/10 {
		t.Errorf("the workload did not do each thing: %+v", total)
	}
	t.Log(r.checkTraces())
}
