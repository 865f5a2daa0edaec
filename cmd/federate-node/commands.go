package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/meshrti/meshrti/internal/cli"
)

// A subcommand is one row of a dispatch table: the argument that names
// it, the lines "help" prints for it, and the function that runs it with
// the arguments after the name. The top-level commands, the bench kinds
// and the demo kinds each have such a table; help is generated from the
// table, so a subcommand cannot be dispatched without being listed.
type subcommand struct {
	name string
	// help holds the usage lines; none for a subcommand that is internal
	// (run by this binary in a child process) or whose synopsis another
	// row of the table shares (as "bench [throughput|latency]").
	help []helpLine
	run  func(args []string, stdout, stderr io.Writer) int
}

// A helpLine is one entry of a usage text: a synopsis such as
// "demo ddm [flags]" and what it does, lines after the first indented
// under the first.
type helpLine struct {
	synopsis string
	text     string
}

// helpColumn is where the text of a help line starts; a longer
// synopsis takes a line of its own.
const helpColumn = 31

// writeHelp prints the help lines of every row of table.
func writeHelp(w io.Writer, table []subcommand) {
	indent := strings.Repeat(" ", helpColumn)
	for _, c := range table {
		for _, h := range c.help {
			head := "  " + h.synopsis
			if len(head) < helpColumn {
				head += strings.Repeat(" ", helpColumn-len(head))
			} else {
				head += "\n" + indent
			}
			fmt.Fprintf(w, "%s%s\n", head, strings.ReplaceAll(h.text, "\n", "\n"+indent))
		}
	}
}

// helpOf returns the help lines of every row of table, in order.
func helpOf(table []subcommand) []helpLine {
	var hs []helpLine
	for _, c := range table {
		hs = append(hs, c.help...)
	}
	return hs
}

// lookup returns the row of table named name.
func lookup(table []subcommand, name string) (subcommand, bool) {
	for _, c := range table {
		if c.name == name {
			return c, true
		}
	}
	return subcommand{}, false
}

// tableNames lists the names of the rows of table, the default row
// (named "") left out.
func tableNames(table []subcommand) []string {
	var ns []string
	for _, c := range table {
		if c.name != "" {
			ns = append(ns, c.name)
		}
	}
	return ns
}

// runSub runs the row of table that args[0] names, with the rest of
// args. Otherwise the default row (named "") runs with all of args when
// the table has one and unknown is nil, or when args are none or start
// with a flag; else unknown gets args.
func runSub(table []subcommand, args []string, stdout, stderr io.Writer, unknown func(args []string) int) int {
	if len(args) > 0 {
		if c, ok := lookup(table, args[0]); ok {
			return c.run(args[1:], stdout, stderr)
		}
	}
	if def, ok := lookup(table, ""); ok && (unknown == nil || len(args) == 0 || strings.HasPrefix(args[0], "-")) {
		return def.run(args, stdout, stderr)
	}
	return unknown(args)
}

// subMain returns the main function of a command whose first argument
// may name a row of its table (see runSub), the default row taking the
// rest.
func subMain(table func() []subcommand) func(args []string, stdout, stderr io.Writer) int {
	return func(args []string, stdout, stderr io.Writer) int { return runSub(table(), args, stdout, stderr, nil) }
}

// fromCLI returns a table of package cli (the bench and demo kinds) as
// rows of this one.
func fromCLI(table []cli.Command) []subcommand {
	var rows []subcommand
	for _, c := range table {
		row := subcommand{name: c.Name, run: c.Run}
		for _, h := range c.Help {
			row.help = append(row.help, helpLine{h.Synopsis, h.Text})
		}
		rows = append(rows, row)
	}
	return rows
}
