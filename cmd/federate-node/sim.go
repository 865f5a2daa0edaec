package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/meshrti/meshrti/internal/cli"
	"github.com/meshrti/meshrti/testnet"
)

// runSim runs scenario scripts (docs/testing.md) in simulated
// federations. For each script whose output differs from its expected
// output it prints the differing steps and exits 1; broken invariants
// fail the run as well. With -rewrite it writes the actual outputs into
// the files instead.
func runSim(args []string, stdout, stderr io.Writer) int {
	cmd := cli.NewCmd("sim", stdout, stderr)
	fs := cmd.FS
	rewrite := fs.Bool("rewrite", false, "replace the expected outputs in the files by the actual ones")
	timeout := fs.Duration("timeout", 2*time.Minute, "give up on a script after this long")
	trace := fs.String("trace", "", "write a JSON-lines trace (docs/trace.md) to `FILE` and check it; with several scripts, FILE.SCRIPT for each")
	realTime := fs.Bool("realtime", false, "run the federates on goroutines in real time instead of deterministically in virtual time")
	commands := fs.Bool("commands", false, "list the script commands, their arguments and what each does, and exit")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *commands {
		fmt.Fprint(stdout, testnet.ScriptHelp())
		return 0
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: federate-node sim [-rewrite] [-realtime] [-timeout D] [-trace FILE] FILE... | sim -commands")
		return 2
	}
	code := 0
	for _, file := range fs.Args() {
		tf := *trace
		if tf != "" && fs.NArg() > 1 {
			tf += "." + filepath.Base(file)
		}
		if !simFile(file, *rewrite, *realTime, *timeout, tf, stdout, stderr) {
			code = 1
		}
	}
	return code
}

// simFile runs one script and reports whether it passed.
func simFile(file string, rewrite, realTime bool, timeout time.Duration, trace string, stdout, stderr io.Writer) bool {
	in, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintln(stderr, "federate-node sim:", err)
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if realTime {
		ctx = testnet.RealTime(ctx)
	}
	var tw *traceFile
	if trace != "" {
		if tw, err = createTrace(trace); err != nil {
			fmt.Fprintln(stderr, "federate-node sim:", err)
			return false
		}
		ctx = testnet.WithTrace(ctx, tw.w)
	}
	var diff bytes.Buffer
	res, err := testnet.RunScript(ctx, bytes.NewReader(in), &diff, rewrite)
	if tw != nil {
		// RunScript closed every federate: the trace is complete.
		if cerr := tw.close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", file, err)
		return false
	}
	ok := true
	if trace != "" {
		vs, err := checkTraceFiles([]string{trace})
		if err != nil {
			fmt.Fprintf(stderr, "%s: trace: %v\n", file, err)
			return false
		}
		for _, v := range vs {
			fmt.Fprintf(stdout, "%s: trace: %v\n", file, v)
			ok = false
		}
	}
	for _, v := range res.Violations {
		fmt.Fprintf(stdout, "%s: invariant broken: %v\n", file, v)
		ok = false
	}
	switch {
	case rewrite:
		if !bytes.Equal(in, res.Rewritten) {
			if err := os.WriteFile(file, res.Rewritten, 0o644); err != nil {
				fmt.Fprintln(stderr, "federate-node sim:", err)
				return false
			}
			fmt.Fprintf(stdout, "%s: rewrote %d of %d steps\n", file, res.Mismatches, res.Steps)
		} else {
			fmt.Fprintf(stdout, "%s: ok (%d steps)\n", file, res.Steps)
		}
	case res.Mismatches > 0:
		fmt.Fprintf(stdout, "%s: %d of %d steps differ:\n%s", file, res.Mismatches, res.Steps, diff.String())
		ok = false
	default:
		fmt.Fprintf(stdout, "%s: ok (%d steps)\n", file, res.Steps)
	}
	return ok
}
