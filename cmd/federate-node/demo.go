package main

import (
	_ "embed"
	"flag"
	"fmt"
	"io"

	"github.com/meshrti/meshrti/fomxml"
)

//go:embed demo.xml
var demoFOM []byte

func runDemo(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	doc, err := fomxml.ParseBytes("demo.xml", demoFOM)
	if err != nil {
		printFOMError(stderr, err)
		return 1
	}
	fdd, err := fomxml.Merge(doc)
	if err != nil {
		printFOMError(stderr, err)
		return 1
	}
	fmt.Fprintln(stdout, "meshrti demo")
	fmt.Fprintln(stdout, "The federation itself (gossip, multicast, time advance) is not built yet;")
	fmt.Fprintln(stdout, "for now the demo loads the bundled demo FOM with the standard MIM and prints it.")
	fmt.Fprintln(stdout)
	printSummary(stdout, fdd)
	return 0
}
