package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"time"

	"golang.org/x/net/ipv4"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/transport"
)

// A kindRun is what every bench kind (and demo kind) does around its
// measurement: its flag set, its messages prefixed "federate-node bench
// KIND:", the multicast port derived from the process id, the CPU
// profile, and the result printed as one JSON line (-json) or as text.
// Each kind defines only its flags, its checks, the measurement and the
// text.
type kindRun struct {
	name           string // "bench lifecycle", "demo ddm"
	fs             *flag.FlagSet
	stdout, stderr io.Writer
}

// benchCommon holds the flags every bench kind has: -json, -mcast-port,
// -timeout and -cpuprofile (see kindRun.common).
type benchCommon struct {
	jsonOut    bool
	port       int
	timeout    time.Duration
	cpuprofile string
}

// define defines the flags of c on fs: timeout is the default of
// -timeout; port and profile are the texts of -mcast-port and
// -cpuprofile.
func (c *benchCommon) define(fs *flag.FlagSet, timeout time.Duration, port, profile string) {
	c.defineJSON(fs, timeout, port, profile, "print the result as one JSON object")
}

// defineJSON is define with the text of -json.
func (c *benchCommon) defineJSON(fs *flag.FlagSet, timeout time.Duration, port, profile, json string) {
	fs.BoolVar(&c.jsonOut, "json", false, json)
	fs.IntVar(&c.port, "mcast-port", 0, port)
	fs.DurationVar(&c.timeout, "timeout", timeout, "give up after this long")
	fs.StringVar(&c.cpuprofile, "cpuprofile", "", profile)
}

// A kind is the flag struct F of a bench or demo kind, which is the
// kind's whole definition: define defines its flags, check tests their
// values (given the count of arguments left after the flags: the usage
// error, "" when they are good), and run runs the kind.
type kind[F any] interface {
	*F
	define(fs *flag.FlagSet)
	check(nargs int) string
	run(b *kindRun) int
}

// kindMain returns the main function of the kind whose flags are F,
// named name ("bench lifecycle"): it makes the flag set, parses it and
// prints the usage error. preset, when not nil, sets flags that are not
// on the command line (what a row of a table stands for).
func kindMain[F any, K kind[F]](name string, preset func(*F)) func(args []string, stdout, stderr io.Writer) int {
	return func(args []string, stdout, stderr io.Writer) int {
		b := newKindRun(name, stdout, stderr)
		var f F
		if preset != nil {
			preset(&f)
		}
		K(&f).define(b.fs)
		if !b.parse(args) {
			return 2
		}
		if msg := K(&f).check(b.fs.NArg()); msg != "" {
			return b.usageError(msg)
		}
		return K(&f).run(b)
	}
}

// The texts of -mcast-port and -frame most kinds share.
const (
	portHelp  = "UDP multicast port (default: derived from the process id)"
	frameHelp = "data-plane frame size in bytes (1400 fits an Ethernet MTU; loopback takes up to 65000)"
)

// benchTail ends the JSON line of a kind run by runParentChild: the
// GOMAXPROCS of each process (see shareCores) and what went wrong, if
// anything, in a run that still measured.
type benchTail struct {
	GOMAXPROCS int    `json:"gomaxprocs"`
	Error      string `json:"error,omitempty"`
}

func (t *benchTail) tail() *benchTail { return t }

// A tailed result is the result of a kind run by runParentChild.
type tailed interface{ tail() *benchTail }

// runParentChild runs a bench kind of two processes, this one (the
// parent) and a child process of this binary started by measure. The
// child runs with -role ROLE: role names the function of roles it runs.
// Without a role, this process runs measure with its CPU profile to
// c.cpuprofile + suffix and the cores shared by two processes, and
// prints the result as JSON or with text; a result with an Error fails.
func runParentChild[R tailed](b *kindRun, c *benchCommon, role string, roles map[string]func(ctx context.Context) error,
	suffix string, measure func(ctx context.Context) (R, error), text func(w io.Writer, res R)) int {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	if role != "" {
		run, ok := roles[role]
		if !ok {
			return b.usageError(fmt.Sprintf("unknown -role %q", role))
		}
		if err := run(ctx); err != nil {
			return b.fail(fmt.Errorf("%s: %w", role, err))
		}
		return 0
	}
	stop, err := startProfile(profilePath(c.cpuprofile, suffix))
	if err != nil {
		return b.fail(err)
	}
	defer stop()
	procs := shareCores(2)
	res, err := measure(ctx)
	if err != nil {
		return b.fail(err)
	}
	t := res.tail()
	t.GOMAXPROCS = procs
	b.emit(c.jsonOut, res, func(w io.Writer) {
		text(w, res)
		if t.Error != "" {
			fmt.Fprintln(w, "  error:", t.Error)
		}
	})
	if t.Error != "" {
		return 1
	}
	return 0
}

// childTimeout is the -timeout of a bench's child process: a little
// less than the parent's, so that the child gives up first and reports
// where it was.
func childTimeout(timeout time.Duration) time.Duration {
	return max(timeout-3*time.Second, timeout*9/10)
}

// startRoleChild starts this binary as the child process of "bench
// KIND" running role, in federation, with the parent's port, timeout
// and profile prefix, and the kind's args.
func startRoleChild(ctx context.Context, kind, role, federation string, c benchCommon, stderr io.Writer, args ...string) (*lifecycleChild, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args = append([]string{"bench", kind, "-role", role, "-federation", federation}, args...)
	args = append(args, "-mcast-port", fmt.Sprint(c.port), "-timeout", childTimeout(c.timeout).String())
	if c.cpuprofile != "" {
		args = append(args, "-cpuprofile", c.cpuprofile)
	}
	return startBenchChild(ctx, self, args, stderr)
}

// newKindRun starts a kind named name ("bench KIND", "demo KIND").
func newKindRun(name string, stdout, stderr io.Writer) *kindRun {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return &kindRun{name: name, fs: fs, stdout: stdout, stderr: stderr}
}

// parse parses args; false is a usage error (flag printed why).
func (b *kindRun) parse(args []string) bool { return b.fs.Parse(args) == nil }

// files parses args, flags standing anywhere among the file names
// (parseFlagsAnywhere), and returns the names; false after a usage
// error, usage printed when ok refuses the names' count.
func (b *kindRun) files(args []string, usage string, ok func(n int) bool) ([]string, bool) {
	files, err := parseFlagsAnywhere(b.fs, args)
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
func (b *kindRun) emit(jsonOut bool, v any, text func(w io.Writer)) {
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

// rawGroupConn opens a socket of a raw floor on port (shared with other
// processes of this host) that receives group and multicasts on the
// loopback interface with TTL 0, like the data plane's defaults; with
// read and write buffers of bufs bytes when bufs > 0. It returns the
// socket and its raw I/O; the caller closes the socket.
func rawGroupConn(group netip.Addr, port, bufs int) (*net.UDPConn, *rawIO, error) {
	lc := net.ListenConfig{Control: transport.ReuseAddr}
	pc, err := lc.ListenPacket(context.Background(), "udp4", fmt.Sprintf("0.0.0.0:%d", port))
	if err != nil {
		return nil, nil, err
	}
	c := pc.(*net.UDPConn)
	if err := multicastOnLoopback(c, netip.AddrPortFrom(group, uint16(port))); err != nil {
		c.Close()
		return nil, nil, err
	}
	if bufs > 0 {
		c.SetReadBuffer(bufs)
		c.SetWriteBuffer(bufs)
	}
	rio, err := newRawIO(c)
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, rio, nil
}

// multicastOnLoopback makes c multicast on the loopback interface with
// TTL 0, hearing its own datagrams, and join the group of join when
// join is valid.
func multicastOnLoopback(c *net.UDPConn, join netip.AddrPort) error {
	lo, err := net.InterfaceByName(transport.DefaultInterface)
	if err != nil {
		return err
	}
	p := ipv4.NewPacketConn(c)
	errs := []error{p.SetMulticastInterface(lo), p.SetMulticastTTL(0), p.SetMulticastLoopback(true)}
	if join.IsValid() {
		errs = append(errs, p.JoinGroup(lo, net.UDPAddrFromAddrPort(join)))
	}
	return errors.Join(errs...)
}

// memFederation is a federation of federates of this process over an
// in-memory control plane (each federate brings its own transport): a
// bench's or a demo's in-process run.
type memFederation struct {
	name, federateType string
	doc                *fomxml.Document
	registry           *peer.MemRegistry
	frame              int           // MaxFrame of each federate (0: the default)
	tick               time.Duration // TickInterval of each federate (0: the default)
}

// newMemFederation parses the FOM module fom (named designator) of
// federation name, whose federates are of federateType.
func newMemFederation(name, federateType, designator string, fom []byte) (*memFederation, error) {
	doc, err := fomxml.ParseBytes(designator, fom)
	if err != nil {
		return nil, err
	}
	return &memFederation{name: name, federateType: federateType, doc: doc, registry: peer.NewMemRegistry()}, nil
}

// join joins federate name over tr, creating the federation if need be.
func (m *memFederation) join(ctx context.Context, name string, tr transport.Transport) (*peer.Federate, error) {
	f, err := peer.Join(ctx, peer.Config{
		Federation: m.name, FederateName: name, FederateType: m.federateType, Create: true,
		MaxFrame: m.frame, TickInterval: m.tick, FOMModules: []*fomxml.Document{m.doc},
		Control: m.registry.Control(m.name), Transport: tr,
	})
	if err != nil {
		return nil, fmt.Errorf("join %s: %w", name, err)
	}
	return f, nil
}
