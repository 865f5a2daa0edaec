package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/meshrti/meshrti/internal/cli"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/testnet/tracecheck"
)

// runTraceCheck checks JSON-lines traces (docs/trace.md). Several files
// are read as one trace, as when each process of a run wrote its own. It
// prints every violation and exits 1 when there is one.
func runTraceCheck(args []string, stdout, stderr io.Writer) int {
	cmd := cli.NewCmd("trace-check", stdout, stderr)
	fs := cmd.FS
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: federate-node trace-check FILE...")
		return 2
	}
	rep, err := checkTrace(fs.Args())
	for _, v := range rep.Violations {
		fmt.Fprintln(stdout, v)
	}
	if err != nil {
		return cmd.Fail(err)
	}
	fmt.Fprintf(stdout, "%d events of %d federates: %d sends, %d deliveries, %d grants; %d deliveries from senders not in the trace; %d messages owed to a receiver; %d violations\n",
		rep.Lines, rep.Federates, rep.Sends, rep.Deliveries, rep.Grants, rep.UnknownSenders, rep.Owed, len(rep.Violations))
	if len(rep.Violations) > 0 {
		return 1
	}
	return 0
}

// checkTrace reads files as one trace and checks it.
func checkTrace(files []string) (tracecheck.Report, error) {
	rs := make([]io.Reader, 0, 2*len(files))
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return tracecheck.Report{}, err
		}
		defer f.Close()
		// A newline between files, in case one ends without.
		rs = append(rs, f, strings.NewReader("\n"))
	}
	return tracecheck.CheckReport(io.MultiReader(rs...))
}

func checkTraceFiles(files []string) ([]tracecheck.Violation, error) {
	rep, err := checkTrace(files)
	return rep.Violations, err
}

// traceFile is a trace being written to a file by several federates.
// Each federate's write (its lines of one turn) goes to the file at
// once, unbuffered: a process killed with SIGKILL leaves its trace whole
// up to its last turn, and a turn's lines are written before its frames
// are sent, so no message another process received lacks its send line.
type traceFile struct {
	f *os.File
	w io.Writer // safe for concurrent use
}

func createTrace(name string) (*traceFile, error) {
	f, err := os.Create(name)
	if err != nil {
		return nil, err
	}
	return &traceFile{f: f, w: peer.NewTraceWriter(f)}, nil
}

// close closes the file; every federate writing to it must be closed
// first.
func (t *traceFile) close() error { return t.f.Close() }
