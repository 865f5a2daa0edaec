package cli

import (
	"fmt"
	"io"
	"strings"
)

// A Command is one row of a dispatch table: the argument that names it,
// the lines "help" prints for it, and the function that runs it with
// the arguments after the name. The top-level commands, the bench kinds
// and the demo kinds each have such a table; help is generated from the
// table, so a subcommand cannot be dispatched without being listed.
type Command struct {
	Name string
	// Help holds the usage lines; none for a subcommand that is internal
	// (run by this binary in a child process) or whose synopsis another
	// row of the table shares (as "bench [throughput|latency]").
	Help []HelpLine
	Run  func(args []string, stdout, stderr io.Writer) int
}

// A HelpLine is one entry of a usage text: a synopsis such as
// "demo ddm [flags]" and what it does, lines after the first indented
// under the first.
type HelpLine struct {
	Synopsis string
	Text     string
}

// HelpColumn is where the text of a help line starts; a longer
// synopsis takes a line of its own.
const HelpColumn = 31

// WriteHelp prints the help lines of every row of table.
func WriteHelp(w io.Writer, table []Command) {
	indent := strings.Repeat(" ", HelpColumn)
	for _, c := range table {
		for _, h := range c.Help {
			head := "  " + h.Synopsis
			if len(head) < HelpColumn {
				head += strings.Repeat(" ", HelpColumn-len(head))
			} else {
				head += "\n" + indent
			}
			fmt.Fprintf(w, "%s%s\n", head, strings.ReplaceAll(h.Text, "\n", "\n"+indent))
		}
	}
}

// HelpOf returns the help lines of every row of table, in order.
func HelpOf(table []Command) []HelpLine {
	var hs []HelpLine
	for _, c := range table {
		hs = append(hs, c.Help...)
	}
	return hs
}

// Lookup returns the row of table named name.
func Lookup(table []Command, name string) (Command, bool) {
	for _, c := range table {
		if c.Name == name {
			return c, true
		}
	}
	return Command{}, false
}

// Names lists the names of the rows of table, the default row (named
// "") left out.
func Names(table []Command) []string {
	var ns []string
	for _, c := range table {
		if c.Name != "" {
			ns = append(ns, c.Name)
		}
	}
	return ns
}

// RunSub runs the row of table that args[0] names, with the rest of
// args. Otherwise the default row (named "") runs with all of args when
// the table has one and unknown is nil, or when args are none or start
// with a flag; else unknown gets args.
func RunSub(table []Command, args []string, stdout, stderr io.Writer, unknown func(args []string) int) int {
	if len(args) > 0 {
		if c, ok := Lookup(table, args[0]); ok {
			return c.Run(args[1:], stdout, stderr)
		}
	}
	if def, ok := Lookup(table, ""); ok && (unknown == nil || len(args) == 0 || strings.HasPrefix(args[0], "-")) {
		return def.Run(args, stdout, stderr)
	}
	return unknown(args)
}

// SubMain returns the main function of a command whose first argument
// may name a row of its table (see RunSub), the default row taking the
// rest.
func SubMain(table func() []Command) func(args []string, stdout, stderr io.Writer) int {
	return func(args []string, stdout, stderr io.Writer) int { return RunSub(table(), args, stdout, stderr, nil) }
}
