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
	"github.com/meshrti/meshrti/internal/cli"
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
func commands() []cli.Command {
	return []cli.Command{
		{Name: "demo", Help: cli.HelpOf(demo.Kinds()), Run: demo.Main},
		{Name: "fom", Help: cli.HelpOf(fomCommands()), Run: runFOM},
		{Name: "serve", Help: cli.HelpOf(serveCommands()), Run: cli.SubMain(serveCommands)},
		{Name: "monitor", Help: []cli.HelpLine{
			{Synopsis: "monitor -federation NAME [join flags] -http 127.0.0.1:8080", Text: "join as a federate that reads the MOM and serve a live page of the\n" +
				"federation (/), its JSON (/api/federation) and metrics (/metrics);\n" +
				"the join flags are node's (federate-node monitor -h lists them)"},
		}, Run: runMonitor},
		{Name: "dis", Help: cli.HelpOf(disCommands()), Run: cli.SubMain(disCommands)},
		{Name: "node", Help: []cli.HelpLine{
			{Synopsis: "node [flags]", Text: "run one built-in federate (ping, pong or tick) over gossip and multicast\n" +
				"(federate-node node -h lists the flags)"},
		}, Run: runNode},
		{Name: "bench", Help: cli.HelpOf(bench.Kinds()), Run: bench.Main},
		// The raw UDP side of bench, in a child process.
		{Name: "bench-raw", Run: bench.RunRaw},
		{Name: "record", Help: cli.HelpOf(recordCommands()), Run: cli.SubMain(recordCommands)},
		{Name: "replay", Help: []cli.HelpLine{
			{Synopsis: "replay FILE -federation NAME [join flags] [-speed X | -fast]", Text: "play a recording back into a federation in logical time"},
		}, Run: runReplay},
		{Name: "sim", Help: []cli.HelpLine{
			{Synopsis: "sim [-rewrite] FILE...", Text: "run scenario scripts in a simulated federation (docs/testing.md);\n" +
				"exit 1 with a diff when an expectation fails"},
		}, Run: runSim},
		{Name: "trace-check", Help: []cli.HelpLine{
			{Synopsis: "trace-check FILE...", Text: "check JSON-lines traces written with --trace (docs/trace.md)"},
		}, Run: runTraceCheck},
		{Name: "version", Help: []cli.HelpLine{{Synopsis: "version", Text: "print the release, the commit and the wire protocol of this binary"}}, Run: runVersion},
		{Name: "help", Help: []cli.HelpLine{{Synopsis: "help", Text: "print this text"}}, Run: runHelp},
	}
}

// demoFOM is the bundled demo FOM: node's module when no -fom is given.
var demoFOM = demo.FOM

// usage returns the text "federate-node help" prints.
func usage() string {
	var b strings.Builder
	b.WriteString("usage: federate-node COMMAND [ARGS]\n\ncommands:\n")
	cli.WriteHelp(&b, commands())
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
	cmd := cli.NewCmd("version", stdout, stderr)
	if !cmd.Parse(args) {
		return 2
	}
	if cmd.FS.NArg() > 0 {
		return cmd.UsageError("takes no arguments")
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
	if c, ok := cli.Lookup(commands(), args[0]); ok {
		return c.Run(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "federate-node: unknown command %q\n\n%s", args[0], usage())
	return 2
}
