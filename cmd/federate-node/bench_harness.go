package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

// A benchRun is what every bench kind does around its measurement: its
// flag set, its messages prefixed "federate-node bench KIND:", the
// multicast port derived from the process id, the CPU profile, and the
// result printed as one JSON line (-json) or as text. Each kind defines
// only its flags, its checks, the measurement and the text.
type benchRun struct {
	name           string // "bench lifecycle"
	fs             *flag.FlagSet
	stdout, stderr io.Writer
}

// newBenchRun starts a bench kind named name ("bench KIND").
func newBenchRun(name string, stdout, stderr io.Writer) *benchRun {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return &benchRun{name: name, fs: fs, stdout: stdout, stderr: stderr}
}

// parse parses args; false is a usage error (flag printed why).
func (b *benchRun) parse(args []string) bool { return b.fs.Parse(args) == nil }

// usageError prints msg and returns the exit code of a usage error.
func (b *benchRun) usageError(msg string) int {
	fmt.Fprintf(b.stderr, "federate-node %s: %s\n", b.name, msg)
	return 2
}

// fail prints err and returns the exit code of a failed run.
func (b *benchRun) fail(err error) int {
	fmt.Fprintf(b.stderr, "federate-node %s: %v\n", b.name, err)
	return 1
}

// defaultPort sets *port, when 0, to a multicast port derived from the
// process id (plus skew, so that kinds run side by side differ).
func defaultPort(port *int, skew int) {
	if *port == 0 {
		*port = 43000 + (os.Getpid()+skew)%8000
	}
}

// startProfile starts a CPU profile to path, none when path is empty;
// the returned function stops it.
func startProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	return startCPUProfile(path)
}

// printJSON prints v as one JSON object on its own line; the results
// are plain structs, which cannot fail to encode.
func printJSON(w io.Writer, v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(w, "%s\n", b)
}

// printTagged prints v as one JSON object after tag and a space, the
// line a bench's child process reports with.
func printTagged(w io.Writer, tag string, v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(w, "%s %s\n", tag, b)
}

// emit prints a result: v as one JSON line when jsonOut, else text.
func (b *benchRun) emit(jsonOut bool, v any, text func(w io.Writer)) {
	if jsonOut {
		printJSON(b.stdout, v)
		return
	}
	text(b.stdout)
}

// profilePath is the profile file of one process of a run profiled to
// prefix: prefix+suffix, or none when prefix is empty.
func profilePath(prefix, suffix string) string {
	if prefix == "" {
		return ""
	}
	return prefix + suffix
}

// rawSink is the receiving end of a raw floor: it counts datagrams on c
// until want arrived, or none came for 300 ms (10 s for the first), then
// prints "got M in NS", NS the nanoseconds from the first to the last.
func rawSink(c *net.UDPConn, rio *rawIO, buf []byte, want int, stdout io.Writer) {
	var got int
	var first, last time.Time
	for got < want {
		wait := 300 * time.Millisecond
		if got == 0 {
			wait = 10 * time.Second
		}
		c.SetReadDeadline(time.Now().Add(wait))
		if _, _, err := rio.read(buf); err != nil {
			break
		}
		last = time.Now()
		if got == 0 {
			first = last
		}
		got++
	}
	fmt.Fprintf(stdout, "got %d in %d\n", got, last.Sub(first).Nanoseconds())
}
