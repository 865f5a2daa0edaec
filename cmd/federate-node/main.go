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
//	federate-node dis -federation NAME ...   a gateway between a DIS exercise and the federation (RPR FOM 2.0)
//	federate-node bench                      two-process round trips and update rate
//	federate-node fom inspect [--json] FILE  print the merged FDD
//	federate-node fom validate [--strict] FILE...  check that modules merge (warnings are errors with --strict)
//	federate-node record -o FILE ...         record a federation; replay FILE plays it back
//	federate-node sim [-rewrite] FILE...     run scenario scripts
//	federate-node version                    the release, commit and wire protocol
//
// Run "federate-node help" for the full list.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/meshrti/meshrti/examples/demo"
	"github.com/meshrti/meshrti/internal/bench"
	"github.com/meshrti/meshrti/version"
)

func main() {
	// A node is a dedicated process with memory to spare: collect
	// garbage less often than Go's default (GOGC=100) unless told
	// otherwise (docs/results.md, History of the figures: what GOGC=400
	// is worth).
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// commands is the table of subcommands; the usage text is generated
// from it (a function, not a variable, because "help" prints the table).
func commands() []subcommand {
	return []subcommand{
		{name: "demo", help: helpOf(fromCLI(demo.Kinds())), run: demo.Main},
		{name: "fom", help: helpOf(fomCommands()), run: runFOM},
		{name: "serve", help: helpOf(serveCommands()), run: subMain(serveCommands)},
		{name: "monitor", help: []helpLine{
			{"monitor -federation NAME [join flags] -http 127.0.0.1:8080", "join as a federate that reads the MOM and serve a live page of the\n" +
				"federation (/), its JSON (/api/federation) and metrics (/metrics);\n" +
				"the join flags are node's (federate-node monitor -h lists them)"},
		}, run: runMonitor},
		{name: "dis", help: helpOf(disCommands()), run: subMain(disCommands)},
		{name: "node", help: []helpLine{
			{"node [flags]", "run one built-in federate (ping, pong or tick) over gossip and multicast\n" +
				"(federate-node node -h lists the flags)"},
		}, run: runNode},
		{name: "bench", help: helpOf(fromCLI(bench.Kinds())), run: bench.Main},
		// The raw UDP side of bench, in a child process.
		{name: "bench-raw", run: bench.RunRaw},
		{name: "record", help: helpOf(recordCommands()), run: subMain(recordCommands)},
		{name: "replay", help: []helpLine{
			{"replay FILE -federation NAME [join flags] [-speed X | -fast]", "play a recording back into a federation in logical time"},
		}, run: runReplay},
		{name: "sim", help: []helpLine{
			{"sim [-rewrite] FILE...", "run scenario scripts in a simulated federation (docs/testing.md);\n" +
				"exit 1 with a diff when an expectation fails"},
		}, run: runSim},
		{name: "trace-check", help: []helpLine{
			{"trace-check FILE...", "check JSON-lines traces written with --trace (docs/trace.md)"},
		}, run: runTraceCheck},
		{name: "version", help: []helpLine{{"version", "print the release, the commit and the wire protocol of this binary"}}, run: runVersion},
		{name: "help", help: []helpLine{{"help", "print this text"}}, run: runHelp},
	}
}

// demoFOM is the bundled demo FOM: node's module when no -fom is given.
var demoFOM = demo.FOM

// usage returns the text "federate-node help" prints.
func usage() string {
	var b strings.Builder
	b.WriteString("usage: federate-node COMMAND [ARGS]\n\ncommands:\n")
	writeHelp(&b, commands())
	return b.String()
}

func runHelp(_ []string, stdout, _ io.Writer) int {
	fmt.Fprint(stdout, usage())
	return 0
}

// runVersion is "federate-node version": the release (module version),
// the commit and the wire protocol, from the build information (or the
// release script's stamp).
func runVersion(args []string, stdout, stderr io.Writer) int {
	cmd := newKindRun("version", stdout, stderr)
	if !cmd.parse(args) {
		return 2
	}
	if cmd.fs.NArg() > 0 {
		return cmd.usageError("takes no arguments")
	}
	fmt.Fprint(stdout, version.Get())
	return 0
}

// run executes one command line and returns the process exit code: 0 on
// success, 1 when the command ran and failed, 2 on a usage error.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage())
		return 2
	}
	switch args[0] {
	case "-h", "--help", "-help":
		return runHelp(nil, stdout, stderr)
	}
	if c, ok := lookup(commands(), args[0]); ok {
		return c.run(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "federate-node: unknown command %q\n\n%s", args[0], usage())
	return 2
}
