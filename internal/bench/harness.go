package bench

import (
	"context"
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
	"github.com/meshrti/meshrti/internal/cli"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/transport"
)

// benchCommon holds the flags every bench kind has: -json, -mcast-port,
// -timeout and -cpuprofile (see cli.Cmd.common).
type benchCommon struct {
	jsonOut    bool
	port       int
	timeout    time.Duration
	cpuprofile string
}

// Define defines the flags of c on fs: timeout is the default of
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
func runParentChild[R tailed](b *cli.Cmd, c *benchCommon, role string, roles map[string]func(ctx context.Context) error,
	suffix string, measure func(ctx context.Context) (R, error), text func(w io.Writer, res R)) int {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	if role != "" {
		run, ok := roles[role]
		if !ok {
			return b.UsageError(fmt.Sprintf("unknown -role %q", role))
		}
		if err := run(ctx); err != nil {
			return b.Fail(fmt.Errorf("%s: %w", role, err))
		}
		return 0
	}
	stop, err := cli.StartProfile(cli.ProfilePath(c.cpuprofile, suffix))
	if err != nil {
		return b.Fail(err)
	}
	defer stop()
	procs := shareCores(2)
	res, err := measure(ctx)
	if err != nil {
		return b.Fail(err)
	}
	t := res.tail()
	t.GOMAXPROCS = procs
	b.Emit(c.jsonOut, res, func(w io.Writer) {
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

// defaultPort sets *port, when 0, to a multicast port derived from the
// process id (plus skew, so that kinds run side by side differ).
func defaultPort(port *int, skew int) {
	if *port == 0 {
		*port = 43000 + (os.Getpid()+skew)%8000
	}
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
