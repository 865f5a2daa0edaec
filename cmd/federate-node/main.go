// Command federate-node runs meshrti federate nodes: it joins a
// federation's gossip cluster, runs built-in federates and tools, and
// measures. Subcommands:
//
//	federate-node demo                       a radar and aircraft on this host; a sync point, a save, a restore
//	federate-node demo ddm                   regions: a radar's square, radios' channels
//	federate-node demo multirate [-json]     jobs at 1x, 2x and 5x the main cycle, each on one snapshot a cycle
//	federate-node node -role ping|pong ...   one built-in federate
//	federate-node serve [flags]              the per-host daemon: HLA 4 Federate Protocol on 127.0.0.1:15164
//	federate-node monitor -federation NAME   a live page of the federation, read from the MOM
//	federate-node bench                      two-process round trips and update rate
//	federate-node fom inspect [--json] FILE  print the merged FDD
//	federate-node fom validate [--strict] FILE...  check that modules merge (warnings are errors with --strict)
//	federate-node record -o FILE ...         record a federation; replay FILE plays it back
//	federate-node sim [-rewrite] FILE...     run scenario scripts
//
// Run "federate-node help" for the full list.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

func main() {
	// A node is a dedicated process with memory to spare: collect
	// garbage less often than Go's default (GOGC=100) unless told
	// otherwise. At 100-byte updates this is worth ~30% throughput.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: federate-node COMMAND [ARGS]

commands:
  demo                         run the demo: a radar and aircraft federates on this host,
                               a synchronization point, a save and a restore
  demo ddm [flags]             run the DDM demo: a radar subscribed to a square, aircraft flying
                               through it, radios on channels; checks that each got exactly its
                               share (federate-node demo ddm -h lists the flags)
  demo multirate [-steps N -loss P -json]
                               a producer and a consumer whose jobs run at 1x, 2x and 5x the main
                               cycle (peer/multirate), each reading one coherent snapshot a cycle;
                               checks every read against the updates sent (docs/multirate.md)
  fom inspect [--json] FILE... print the FDD merged from the standard MIM and FILEs
  fom validate [--strict] FILE...  exit 0 when the modules merge (warnings printed), 1 with file:line: message lines
  serve [flags]                the per-host daemon: hosts a federate per HLA 4 Federate Protocol
                               session (C++, Java, Python federates); 127.0.0.1:15164 (docs/fedpro.md)
  serve passwd NAME            read a password from stdin, print its line for serve -credentials
  monitor -federation NAME [join flags] -http 127.0.0.1:8080
                               join as a federate that reads the MOM and serve a live page of the
                               federation (/), its JSON (/api/federation) and metrics (/metrics);
                               the join flags are node's (federate-node monitor -h lists them)
  node [flags]                 run one built-in federate (ping or pong) over gossip and multicast
                               (federate-node node -h lists the flags)
  bench [throughput|latency] [-payload B -count N -duration D -frame F -json]
                               measure updates/s and round trips between two processes,
                               against raw UDP in the same run
  bench timeadvance|lifecycle|ownership [flags]
                               time advance grants/s, instances registered and discovered/s,
                               ownership transfers/s (federate-node bench KIND -h lists the flags)
  bench record [flags]         the recorder's sustained rate under load against the throughput
                               bench in the same run
  record -federation NAME [join flags] -o FILE [-classes A,B] [-interactions X,Y] [-until T]
                               record a federation's discoveries, updates, interactions and removals
                               in time-stamp order, until interrupted (docs/record.md)
  record show FILE [-json]     print a recording, values decoded through its FOM
  replay FILE -federation NAME [join flags] [-speed X | -fast]
                               play a recording back into a federation in logical time
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
	case "monitor":
		return runMonitor(args[1:], stdout, stderr)
	case "serve":
		return runServe(args[1:], stdout, stderr)
	case "bench":
		return runBench(args[1:], stdout, stderr)
	case "bench-raw": // the raw UDP side of bench, in a child process
		return runBenchRaw(args[1:], stdout, stderr)
	case "record":
		return runRecord(args[1:], stdout, stderr)
	case "replay":
		return runReplay(args[1:], stdout, stderr)
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
