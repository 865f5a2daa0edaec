package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/meshrti/meshrti/fomxml"
)

func runFOM(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, "usage: federate-node fom inspect [--json] FILE... | fom validate FILE...\n")
		return 2
	}
	switch args[0] {
	case "inspect":
		return fomInspect(args[1:], stdout, stderr)
	case "validate":
		return fomValidate(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "federate-node fom: unknown subcommand %q (want inspect or validate)\n", args[0])
	return 2
}

func fomValidate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fom validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: federate-node fom validate FILE...")
		return 2
	}
	fdd, err := fomxml.Load(fs.Args()...)
	if err != nil {
		printFOMError(stdout, err)
		return 1
	}
	fmt.Fprintf(stdout, "ok: %s\n", fdd)
	return 0
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
	fs := flag.NewFlagSet("fom inspect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON instead of a readable summary")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: federate-node fom inspect [--json] FILE...")
		return 2
	}
	fdd, err := fomxml.Load(fs.Args()...)
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
type fddJSON struct {
	ObjectClasses      map[string][]string `json:"objectClasses"`
	InteractionClasses map[string][]string `json:"interactionClasses"`
	Dimensions         []string            `json:"dimensions"`
	DataTypes          []string            `json:"dataTypes"`
}

func inspectJSON(f *fomxml.FDD) fddJSON {
	out := fddJSON{
		ObjectClasses:      make(map[string][]string, len(f.ObjectClasses)),
		InteractionClasses: make(map[string][]string, len(f.InteractionClasses)),
		Dimensions:         []string{},
		DataTypes:          []string{},
	}
	for _, c := range f.ObjectClasses {
		names := []string{}
		for _, a := range c.Attributes {
			names = append(names, a.Name)
		}
		sort.Strings(names)
		out.ObjectClasses[c.QualifiedName] = names
	}
	for _, c := range f.InteractionClasses {
		names := []string{}
		for _, p := range c.Parameters {
			names = append(names, p.Name)
		}
		sort.Strings(names)
		out.InteractionClasses[c.QualifiedName] = names
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
}
