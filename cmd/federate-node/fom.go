package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/internal/cli"
)

// fomCommands is the table of "federate-node fom SUBCOMMAND".
func fomCommands() []cli.Command {
	return []cli.Command{
		{Name: "inspect", Help: []cli.HelpLine{{Synopsis: "fom inspect [--json] FILE...", Text: "print the FDD merged from the standard MIM and FILEs"}}, Run: fomInspect},
		{Name: "validate", Help: []cli.HelpLine{{Synopsis: "fom validate [--strict] FILE...", Text: "exit 0 when the modules merge (warnings printed), 1 with file:line: message lines"}}, Run: fomValidate},
	}
}

func runFOM(args []string, stdout, stderr io.Writer) int {
	return cli.RunSub(fomCommands(), args, stdout, stderr, func(args []string) int {
		if len(args) == 0 {
			var synopses []string
			for _, h := range cli.HelpOf(fomCommands()) {
				synopses = append(synopses, h.Synopsis)
			}
			fmt.Fprintf(stderr, "usage: federate-node %s\n", strings.Join(synopses, " | "))
			return 2
		}
		fmt.Fprintf(stderr, "federate-node fom: unknown cli.Command %q (want %s)\n", args[0], strings.Join(cli.Names(fomCommands()), " or "))
		return 2
	})
}

// fomValidate loads the modules and prints one line per problem: errors
// as "file:line: message", defects accepted with a warning as
// "file:line: warning: message". It exits 0 when the modules load, with
// or without warnings; --strict refuses what would be a warning.
func fomValidate(args []string, stdout, stderr io.Writer) int {
	cmd := cli.NewCmd("fom validate", stdout, stderr)
	fs := cmd.FS
	strict := fs.Bool("strict", false, "refuse the defects that are otherwise accepted with a warning")
	files, ok := cmd.Files(args, "usage: federate-node fom validate [--strict] FILE...", func(n int) bool { return n > 0 })
	if !ok {
		return 2
	}
	fdd, err := fomxml.Options{Strict: *strict}.Load(files...)
	if err != nil {
		printFOMError(stdout, err)
		return 1
	}
	ws := fdd.Warnings()
	for _, w := range ws {
		if w.Pos.Line > 0 {
			fmt.Fprintf(stdout, "%s:%d: warning: %s\n", w.Pos.File, w.Pos.Line, w.Msg)
		} else {
			fmt.Fprintf(stdout, "%s: warning: %s\n", w.Pos.File, w.Msg)
		}
	}
	fmt.Fprintf(stdout, "ok: %s%s\n", fdd, warningCount(len(ws)))
	return 0
}

func warningCount(n int) string {
	switch n {
	case 0:
		return ""
	case 1:
		return ", 1 warning"
	}
	return fmt.Sprintf(", %d warnings", n)
}

// printFOMError prints one "file:line: message" line per problem.
func printFOMError(w io.Writer, err error) {
	var list fomxml.ErrorList
	if errors.As(err, &list) {
		for _, e := range list {
			fmt.Fprintln(w, e)
		}
		return
	}
	fmt.Fprintln(w, err)
}

func fomInspect(args []string, stdout, stderr io.Writer) int {
	cmd := cli.NewCmd("fom inspect", stdout, stderr)
	fs := cmd.FS
	asJSON := fs.Bool("json", false, "print JSON instead of a readable summary")
	files, ok := cmd.Files(args, "usage: federate-node fom inspect [--json] FILE...", func(n int) bool { return n > 0 })
	if !ok {
		return 2
	}
	fdd, err := fomxml.Load(files...)
	if err != nil {
		printFOMError(stderr, err)
		return 1
	}
	if *asJSON {
		b, err := json.MarshalIndent(inspectJSON(fdd), "", "  ")
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		stdout.Write(append(b, '\n'))
		return 0
	}
	printSummary(stdout, fdd)
	return 0
}

// fddJSON is the shape of "fom inspect --json": class names map to the
// names each class declares itself, sorted; other tables are sorted names.
// Warnings counts the defects accepted with a warning ("fom validate"
// lists them).
type fddJSON struct {
	ObjectClasses      map[string][]string `json:"objectClasses"`
	InteractionClasses map[string][]string `json:"interactionClasses"`
	Dimensions         []string            `json:"dimensions"`
	DataTypes          []string            `json:"dataTypes"`
	Warnings           int                 `json:"warnings"`
}

func inspectJSON(f *fomxml.FDD) fddJSON {
	out := fddJSON{
		ObjectClasses:      make(map[string][]string, len(f.ObjectClasses)),
		InteractionClasses: make(map[string][]string, len(f.InteractionClasses)),
		Dimensions:         []string{},
		DataTypes:          []string{},
		Warnings:           len(f.Warnings()),
	}
	for _, c := range f.ObjectClasses {
		out.ObjectClasses[c.QualifiedName] = sortedNames(c.Attributes, func(a *fomxml.Attribute) string { return a.Name })
	}
	for _, c := range f.InteractionClasses {
		out.InteractionClasses[c.QualifiedName] = sortedNames(c.Parameters, func(p *fomxml.Parameter) string { return p.Name })
	}
	for _, d := range f.Dimensions {
		out.Dimensions = append(out.Dimensions, d.Name)
	}
	for n := range f.DataTypes {
		out.DataTypes = append(out.DataTypes, n)
	}
	sort.Strings(out.DataTypes)
	return out
}

func printSummary(w io.Writer, f *fomxml.FDD) {
	fmt.Fprintf(w, "modules (merge order):\n")
	for i, m := range f.Modules {
		fmt.Fprintf(w, "  %d. %s  %q %s (%s)\n", i+1, m.File, m.Name, m.Version, m.Format)
	}
	fmt.Fprintf(w, "\nobject classes (%d):\n", len(f.ObjectClasses))
	var objTree func(c *fomxml.ObjectClass, depth int)
	objTree = func(c *fomxml.ObjectClass, depth int) {
		ind := strings.Repeat("  ", depth+1)
		fmt.Fprintf(w, "%s%s\n", ind, c.Name)
		for _, a := range c.Attributes {
			fmt.Fprintf(w, "%s  - %s: %s, %s, %s\n", ind, a.Name, a.DataType, a.Order, a.Transportation)
		}
		for _, ch := range c.Children {
			objTree(ch, depth+1)
		}
	}
	if f.ObjectRoot != nil {
		objTree(f.ObjectRoot, 0)
	}
	fmt.Fprintf(w, "\ninteraction classes (%d):\n", len(f.InteractionClasses))
	var intTree func(c *fomxml.InteractionClass, depth int)
	intTree = func(c *fomxml.InteractionClass, depth int) {
		ind := strings.Repeat("  ", depth+1)
		fmt.Fprintf(w, "%s%s (%s, %s)\n", ind, c.Name, c.Order, c.Transportation)
		for _, p := range c.Parameters {
			fmt.Fprintf(w, "%s  - %s: %s\n", ind, p.Name, p.DataType)
		}
		for _, ch := range c.Children {
			intTree(ch, depth+1)
		}
	}
	if f.InteractionRoot != nil {
		intTree(f.InteractionRoot, 0)
	}
	fmt.Fprintf(w, "\ndimensions (%d):\n", len(f.Dimensions))
	for _, d := range f.Dimensions {
		fmt.Fprintf(w, "  %s: upper bound %d, %s\n", d.Name, d.UpperBound, d.DataType)
	}
	byKind := map[fomxml.DataTypeKind]int{}
	for _, t := range f.DataTypes {
		byKind[t.Kind]++
	}
	fmt.Fprintf(w, "\ndata types (%d): %d basic, %d simple, %d enumerated, %d array, %d fixed record, %d variant record\n",
		len(f.DataTypes), byKind[fomxml.KindBasic], byKind[fomxml.KindSimple], byKind[fomxml.KindEnumerated],
		byKind[fomxml.KindArray], byKind[fomxml.KindFixedRecord], byKind[fomxml.KindVariantRecord])
	if f.Time.TimeStamp != "" {
		fmt.Fprintf(w, "time: %s, lookahead %s\n", f.Time.TimeStamp, f.Time.Lookahead)
	}
	if n := len(f.Warnings()); n > 0 {
		fmt.Fprintf(w, "warnings: %d (fom validate lists them)\n", n)
	}
}

// sortedNames returns the names of xs, sorted; empty, not nil, for none
// (JSON [], not null).
func sortedNames[T any](xs []T, name func(T) string) []string {
	names := make([]string, 0, len(xs))
	for _, x := range xs {
		names = append(names, name(x))
	}
	sort.Strings(names)
	return names
}
