package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/meshrti/meshrti/internal/cli"
	"github.com/meshrti/meshrti/peer"
)

// A kindRun is what every command does around its work: its flag set,
// its messages prefixed "federate-node NAME:" and its exit codes
// (cli.Cmd for the commands of other packages).
type kindRun struct {
	name           string // "record", "serve"
	fs             *flag.FlagSet
	stdout, stderr io.Writer
}

// newKindRun starts a command named name.
func newKindRun(name string, stdout, stderr io.Writer) *kindRun {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return &kindRun{name: name, fs: fs, stdout: stdout, stderr: stderr}
}

// parse parses args; false is a usage error (flag printed why).
func (b *kindRun) parse(args []string) bool { return b.fs.Parse(args) == nil }

// files parses args, flags standing anywhere among the file names
// (cli.ParseFlagsAnywhere), and returns the names; false after a usage
// error, usage printed when ok refuses the names' count.
func (b *kindRun) files(args []string, usage string, ok func(n int) bool) ([]string, bool) {
	files, err := cli.ParseFlagsAnywhere(b.fs, args)
	if err != nil {
		return nil, false
	}
	if !ok(len(files)) {
		fmt.Fprintln(b.stderr, usage)
		return nil, false
	}
	return files, true
}

// usageError prints msg and returns the exit code of a usage error.
func (b *kindRun) usageError(msg string) int {
	fmt.Fprintf(b.stderr, "federate-node %s: %s\n", b.name, msg)
	return 2
}

// fail prints err and returns the exit code of a failed run.
func (b *kindRun) fail(err error) int {
	fmt.Fprintf(b.stderr, "federate-node %s: %v\n", b.name, err)
	return 1
}

// startProfile starts a CPU profile to path, none when path is empty;
// the returned function stops it.
func startProfile(path string) (stop func(), err error) { return cli.StartProfile(path) }

// classAttr returns the handles of object class class and of its
// attribute attr.
func classAttr(fed *peer.Federate, class, attr string) (peer.ObjectClassHandle, peer.AttributeHandle, error) {
	c, err := fed.GetObjectClassHandle(class)
	if err != nil {
		return 0, 0, err
	}
	a, err := fed.GetAttributeHandle(c, attr)
	return c, a, err
}
