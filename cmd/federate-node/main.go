// Command federate-node runs meshrti federate nodes: it joins a
// federation's gossip cluster, runs built-in federates and tools, and
// measures. Subcommands:
//
//	federate-node demo                       a radar and aircraft on this host
//	federate-node node -role ping|pong ...   one built-in federate
//	federate-node bench                      two-process round trips and update rate
//	federate-node fom inspect [--json] FILE  print the merged FDD
//	federate-node fom validate FILE...       check that modules merge
//	federate-node sim [-rewrite] FILE...     run scenario scripts
//
// Run "federate-node help" for the full list.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: federate-node COMMAND [ARGS]

commands:
  demo                         run the demo: a radar and aircraft federates on this host
  fom inspect [--json] FILE... print the FDD merged from the standard MIM and FILEs
  fom validate FILE...         exit 0 when the modules merge, 1 with file:line: message lines
  node [flags]                 run one built-in federate (ping or pong) over gossip and multicast
                               (federate-node node -h lists the flags)
  bench [-count N -size B]     measure round trips and update rate between two processes
  sim [-rewrite] FILE...       run scenario scripts in a simulated federation (docs/testing.md);
                               exit 1 with a diff when an expectation fails
  trace-check FILE...          check JSON-lines traces written with --trace (docs/trace.md)
  help                         print this text
`

// run executes one command line and returns the process exit code: 0 on
// success, 1 when the command ran and failed, 2 on a usage error.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "demo":
		return runDemo(args[1:], stdout, stderr)
	case "fom":
		return runFOM(args[1:], stdout, stderr)
	case "node":
		return runNode(args[1:], stdout, stderr)
	case "bench":
		return runBench(args[1:], stdout, stderr)
	case "sim":
		return runSim(args[1:], stdout, stderr)
	case "trace-check":
		return runTraceCheck(args[1:], stdout, stderr)
	case "help", "-h", "--help", "-help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "federate-node: unknown command %q\n\n%s", args[0], usage)
	return 2
}
