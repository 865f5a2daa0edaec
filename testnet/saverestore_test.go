package testnet

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// saveRun writes the scenario of TestSaveRestoreReplays: three
// federates (A and B regulating with lookahead 1 and constrained, C
// constrained) step from 1 to 100; at each step A updates an aircraft and
// B sends an interaction, both time-stamped one step ahead. A asks at
// the start for a save at 50. With restoreAt, the run stops at
// restoreAt, the federation restores the save and runs from 51 to 100
// again.
func saveRun(seed int64, faults string, restoreAt int) string {
	var b strings.Builder
	step := func(cmd string) { fmt.Fprintf(&b, "%s\n----\n\n", cmd) }
	fmt.Fprintf(&b, "federation seed=%d %s\n----\n\n", seed, faults)
	step("join A B C")
	step("publish A class=Aircraft attrs=Position")
	step("subscribe B class=Aircraft attrs=Position")
	step("subscribe C class=Aircraft attrs=Position")
	step("publish-interaction B class=Contact")
	step("subscribe-interaction A class=Contact")
	step("subscribe-interaction C class=Contact")
	step("register A class=Aircraft as=OBJ1")
	step("enable-regulation A lookahead=1")
	step("enable-regulation B lookahead=1")
	for _, f := range []string{"A", "B", "C"} {
		step("enable-constrained " + f)
	}
	step("save A label=fifty t=50")
	run := func(from, to int) {
		for t := from; t <= to; t++ {
			step(fmt.Sprintf("update A obj=OBJ1 Position=a%d ts=%d tag=a%d", t, t+1, t))
			step(fmt.Sprintf("send B class=Contact Data=b%d ts=%d tag=b%d", t, t+1, t))
			for _, f := range []string{"A", "B", "C"} {
				step(fmt.Sprintf("advance %s t=%d", f, t))
			}
			if t == 50 && from == 1 {
				for _, cmd := range []string{"save-begun", "save-complete"} {
					for _, f := range []string{"A", "B", "C"} {
						step(cmd + " " + f)
					}
				}
			}
		}
	}
	if restoreAt == 0 {
		run(1, 100)
		return b.String()
	}
	run(1, restoreAt)
	step("restore C label=fifty")
	for _, f := range []string{"A", "B", "C"} {
		step("restore-complete " + f)
	}
	run(51, 100)
	return b.String()
}

// linesAfter returns federate f's lines after the first that starts
// with mark, leaving out the save and restore callbacks.
func linesAfter(out, f, mark string) []string {
	var got []string
	on := false
	for _, l := range strings.Split(out, "\n") {
		rest, ok := strings.CutPrefix(l, f+": ")
		if !ok {
			continue
		}
		switch {
		case !on:
			on = strings.HasPrefix(rest, mark)
		case rest == "saved", rest == "restored", rest == "restore begun", strings.HasPrefix(rest, "restore requested"):
		default:
			got = append(got, rest)
		}
	}
	return got
}

// TestSaveRestoreReplays is the acceptance test of save and restore: a
// federation saves at 50 of a run to 100, restores after 70 and runs to
// 100 again; after the restore every federate sees exactly the callbacks
// that a control run without the restore saw after its save point. Also
// under loss, duplication and reordering. The scenario's invariants
// (each message once per branch, time-stamp order, grants that never go
// back within a branch) are checked as in every script. -seeds=N runs N
// random seeds under loss, -seed=S one.
func TestSaveRestoreReplays(t *testing.T) {
	type run struct {
		name   string
		seed   int64
		faults string
	}
	runs := []run{{"clean", 50, ""}, {"loss", 51, "loss=0.05 dup=0.02 reorder=0.05"}}
	const lossy = "loss=0.05 dup=0.02 reorder=0.05"
	switch {
	case *seedFlag != 0:
		runs = []run{{fmt.Sprintf("seed%d", *seedFlag), *seedFlag, lossy}}
	case *seedsFlag > 0:
		// -seeds=N: N random seeds under loss (long; not in the default run).
		runs = nil
		base := time.Now().UnixNano() % 1_000_000
		for i := range *seedsFlag {
			runs = append(runs, run{fmt.Sprintf("seed%d", base+int64(i)), base + int64(i), lossy})
		}
	}
	for _, tc := range runs {
		t.Run(tc.name, func(t *testing.T) {
			outs := map[int]string{}
			for _, restoreAt := range []int{0, 70} {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				res, err := RunScript(ctx, strings.NewReader(saveRun(tc.seed, tc.faults, restoreAt)), &bytes.Buffer{}, true)
				cancel()
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range res.Violations {
					t.Errorf("restore at %d: %v", restoreAt, v)
				}
				outs[restoreAt] = string(res.Rewritten)
			}
			for _, f := range []string{"A", "B", "C"} {
				control := linesAfter(outs[0], f, "initiate save fifty")
				restored := linesAfter(outs[70], f, "initiate restore fifty")
				if len(control) < 100 {
					t.Fatalf("%s: %d lines after the save in the control run: too few to compare", f, len(control))
				}
				if !slices.Equal(control, restored) {
					t.Errorf("%s: after the restore:\n%s\ncontrol run after the save:\n%s", f, strings.Join(restored, "\n"), strings.Join(control, "\n"))
				}
			}
		})
	}
}
