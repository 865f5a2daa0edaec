package bench

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/meshrti/meshrti/internal/cli"
	"github.com/meshrti/meshrti/peer"
)

// benchFlags are the flags of "federate-node bench".
type benchFlags struct {
	what     string // "all", "latency" or "throughput": which of the pair's runs
	payload  int
	count    int
	duration time.Duration
	frame    int
	benchCommon
	// mode is the data plane (-transport); receivers the pong processes.
	mode      string
	receivers int
}

// ThroughputResult and LatencyResult are the lines "bench -json" prints.
type ThroughputResult struct {
	Bench       string  `json:"bench"`
	Payload     int     `json:"payload"`
	Frame       int     `json:"frame"`
	Updates     int64   `json:"updates"`
	Seconds     float64 `json:"seconds"`
	UpdatesPerS float64 `json:"updates_per_s"`
	RawPerS     float64 `json:"raw_per_s"`
	RawSent     int     `json:"raw_sent"`
	RawReceived int     `json:"raw_received"`
	Ratio       float64 `json:"ratio"`
	// The floor between two sockets of one process, for reference.
	RawInProcPerS float64 `json:"raw_inprocess_per_s"`
	// What the sending federate did meanwhile.
	Frames  uint64 `json:"frames"`
	Batches uint64 `json:"batches"`
	Blocked uint64 `json:"blocked"`
	// GOMAXPROCS of each process (see shareCores).
	GOMAXPROCS int `json:"gomaxprocs"`
	// The data plane and the number of receiving processes; Updates
	// counts what the slowest receiver reflected.
	Transport string `json:"transport"`
	Receivers int    `json:"receivers"`
}

type LatencyResult struct {
	Bench      string  `json:"bench"`
	Payload    int     `json:"payload"`
	Pings      int     `json:"pings"`
	RTTP50     float64 `json:"rtt_p50_us"`
	RTTP90     float64 `json:"rtt_p90_us"`
	RTTP99     float64 `json:"rtt_p99_us"`
	RawRTTP50  float64 `json:"raw_rtt_p50_us"`
	RawRTTP99  float64 `json:"raw_rtt_p99_us"`
	Ratio      float64 `json:"ratio"`
	RatioP99   float64 `json:"ratio_p99"`
	RawRTTs    int     `json:"raw_pings"`
	Transports string  `json:"transport"`
	// The floor between two sockets of one process, for reference.
	RawInProcRTTP50 float64 `json:"raw_inprocess_rtt_p50_us"`
	RawInProcRTTP99 float64 `json:"raw_inprocess_rtt_p99_us"`
	GOMAXPROCS      int     `json:"gomaxprocs"`
	// Receivers answer each ping; a round trip ends with the last answer.
	Receivers int `json:"receivers"`
}

// Main is "federate-node bench": it measures the data plane between two federates in two
// processes on this host over loopback multicast: it starts a pong
// federate in a child process (this same binary) and runs the ping
// federate here. "throughput" sends attribute updates and counts what the
// child reflected; "latency" times interaction round trips. Each also
// measures, in the same run, the floor: plain UDP datagrams of the same
// size between two sockets over loopback, one per system call, in two
// processes like the federates (the ratio is against this floor), and in
// one process for reference.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "all" { // "bench all" is the default spelled out
		args = args[1:]
	}
	return cli.RunSub(Kinds(), args, stdout, stderr, func(args []string) int {
		fmt.Fprintf(stderr, "federate-node bench: unknown benchmark %q (want %s, or none for throughput and latency)\n", args[0], strings.Join(cli.Names(Kinds()), ", "))
		return 2
	})
}

// Kinds is the table of "federate-node bench KIND"; the default,
// the row named "" ("all" in Main), runs latency then throughput.
func Kinds() []cli.Command {
	pair := func(what string) func(args []string, stdout, stderr io.Writer) int {
		return cli.KindMain[benchFlags]("bench", func(bf *benchFlags) { bf.what = what })
	}
	return []cli.Command{
		{Name: "throughput", Help: []cli.HelpLine{{Synopsis: "bench [throughput|latency] [-payload B -count N -duration D -frame F -json]", Text: "measure updates/s and round trips between two processes,\n" +
			"against raw UDP in the same run"}}, Run: pair("throughput")},
		{Name: "latency", Run: pair("latency")},
		{Name: "timeadvance", Help: []cli.HelpLine{{Synopsis: "bench timeadvance|lifecycle|ownership [flags]", Text: "time advance grants/s, instances registered and discovered/s,\n" +
			"ownership transfers/s (federate-node bench KIND -h lists the flags)"}}, Run: cli.KindMain[timeBenchFlags]("bench timeadvance", nil)},
		{Name: "lifecycle", Run: cli.KindMain[lifecycleFlags]("bench lifecycle", nil)},
		{Name: "ownership", Run: cli.KindMain[ownershipFlags]("bench ownership", nil)},
		{Name: "fedpro", Help: []cli.HelpLine{{Synopsis: "bench fedpro [-mode latency|throughput] [flags]", Text: "the Federate Protocol path: update round trips through serve against\n" +
			"raw sockets (latency), or update calls/s into a serve child (throughput)"}}, Run: cli.KindMain[fedproFlags]("bench fedpro", nil)},
		{Name: "dis", Help: []cli.HelpLine{{Synopsis: "bench dis [-entities N -rate R -duration D -fom DIR -json]", Text: "the DIS gateway: PDUs and updates translated per second each way,\n" +
			"and the latency DIS socket to HLA reflection beside the peer round trip"}}, Run: cli.KindMain[disBenchFlags]("bench dis", nil)},
		{Name: "record", Help: []cli.HelpLine{{Synopsis: "bench record [flags]", Text: "the recorder's sustained rate under load against the throughput\n" +
			"bench in the same run"}}, Run: cli.KindMain[recordBenchFlags]("bench record", nil)},
		{Name: "", Run: pair("all")},
	}
}

// Define defines the flags of "bench".
func (bf *benchFlags) Define(fs *flag.FlagSet) {
	fs.IntVar(&bf.payload, "payload", 100, "payload bytes per update or interaction")
	fs.IntVar(&bf.count, "count", 0, "updates to send (throughput; default 500000) or round trips (latency; default 5000)")
	fs.DurationVar(&bf.duration, "duration", 0, "throughput: stop sending after this long (0: send -count)")
	fs.IntVar(&bf.frame, "frame", 16000, cli.FrameHelp)
	bf.benchCommon.defineJSON(fs, 3*time.Minute, cli.PortHelp, "write CPU profiles of both processes to `PREFIX`.ping and PREFIX.pong",
		"print each result as one JSON object on its own line")
	fs.StringVar(&bf.mode, "transport", "multicast", "data plane: multicast or unicast (one datagram per receiver)")
	fs.IntVar(&bf.receivers, "receivers", 1, "receiving (pong) processes: updates and pings go to all of them; a round trip waits for every answer")
}

// Check returns the usage error of bad flags of "bench", or "".
func (bf *benchFlags) Check(nargs int) string {
	if bf.payload < 0 || bf.count < 0 || bf.duration < 0 {
		return "negative -payload, -count or -duration"
	}
	if m, err := peer.ParseTransportMode(bf.mode); err != nil || m == peer.TransportAuto || bf.receivers < 1 {
		return "-transport multicast or unicast, and -receivers of at least 1"
	}
	return ""
}

// Run runs "bench", "bench latency" and "bench throughput".
func (bf benchFlags) Run(b *cli.Cmd) int {
	defaultPort(&bf.port, 0)
	fail := b.Fail
	stopProfile, err := cli.StartProfile(cli.ProfilePath(bf.cpuprofile, ".ping"))
	if err != nil {
		return fail(err)
	}
	defer stopProfile()
	procs := shareCores(2)
	ctx, cancel := context.WithTimeout(context.Background(), bf.timeout)
	defer cancel()
	fed, stopChild, err := startBenchPair(ctx, bf, b.Stderr)
	if err != nil {
		return fail(err)
	}
	defer stopChild()
	defer fed.Close()
	p, err := newPingerOf(ctx, fed, bf.receivers)
	if err != nil {
		return fail(err)
	}
	defer p.stop(ctx)
	over := "two processes over loopback " + bf.mode
	if bf.receivers > 1 {
		over = fmt.Sprintf("one sender and %d receiving processes over loopback %s", bf.receivers, bf.mode)
	}
	emit := func(v any, text string) {
		b.Emit(bf.jsonOut, v, func(w io.Writer) { fmt.Fprint(w, text) })
	}
	if bf.what == "all" || bf.what == "latency" {
		res, err := benchLatency(ctx, p, bf)
		if err != nil {
			return fail(err)
		}
		res.GOMAXPROCS = procs
		emit(res, fmt.Sprintf("latency, %d-byte interactions, %s:\n"+
			"  round trip p50 %.0f us, p90 %.0f us, p99 %.0f us (%d round trips)\n"+
			"  raw UDP round trip between two processes p50 %.0f us, p99 %.0f us: ratio %.2f (p99 %.2f)\n"+
			"  raw UDP round trip within one process p50 %.0f us, p99 %.0f us\n",
			res.Payload, over, res.RTTP50, res.RTTP90, res.RTTP99, res.Pings, res.RawRTTP50, res.RawRTTP99, res.Ratio, res.RatioP99,
			res.RawInProcRTTP50, res.RawInProcRTTP99))
	}
	if bf.what == "all" || bf.what == "throughput" {
		res, err := benchThroughput(ctx, p, bf)
		if err != nil {
			return fail(err)
		}
		res.GOMAXPROCS = procs
		emit(res, fmt.Sprintf("throughput, %d-byte attribute updates in frames of %d bytes, %s:\n"+
			"  %d updates reflected in %.2f s: %.0f updates/s\n"+
			"  raw UDP between two processes: %d of %d datagrams: %.0f datagrams/s: ratio %.2f\n"+
			"  raw UDP within one process: %.0f datagrams/s\n",
			res.Payload, res.Frame, over, res.Updates, res.Seconds, res.UpdatesPerS, res.RawReceived, res.RawSent, res.RawPerS, res.Ratio,
			res.RawInProcPerS))
	}
	return 0
}

// startBenchPair starts the pong federate in a child process and joins
// the ping federate here; stop ends the child.
func startBenchPair(ctx context.Context, bf benchFlags, stderr io.Writer) (*peer.Federate, func(), error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	federation := fmt.Sprintf("bench-%d", os.Getpid())
	var children []*exec.Cmd
	stop := func() {
		// The pong side exits on the stop ping; give it a moment.
		for _, child := range children {
			done := make(chan struct{})
			go func() { child.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				child.Process.Kill()
				<-done
			}
		}
	}
	kill := func() {
		for _, child := range children {
			child.Process.Kill()
		}
		stop()
	}
	var seed string
	for i := range max(bf.receivers, 1) {
		name := "pong"
		if i > 0 {
			name = fmt.Sprintf("pong%d", i+1)
		}
		args := []string{"node", "-role", "pong", "-name", name,
			"-federation", federation, "-mcast-port", fmt.Sprint(bf.port), "-frame", fmt.Sprint(bf.frame),
			"-timeout", bf.timeout.String(), "-transport", bf.mode}
		if i == 0 {
			args = append(args, "-create")
		} else {
			args = append(args, "-seeds", seed)
		}
		if bf.cpuprofile != "" && i == 0 {
			args = append(args, "-cpuprofile", bf.cpuprofile+".pong")
		}
		child := exec.CommandContext(ctx, self, args...)
		child.Stderr = stderr
		out, err := child.StdoutPipe()
		if err != nil {
			kill()
			return nil, nil, err
		}
		if err := child.Start(); err != nil {
			kill()
			return nil, nil, err
		}
		children = append(children, child)
		lines := bufio.NewScanner(out)
		got := ""
		for lines.Scan() {
			if rest, ok := strings.CutPrefix(lines.Text(), "gossip "); ok {
				got = strings.TrimSpace(rest)
				break
			}
		}
		if got == "" {
			kill()
			return nil, nil, errors.New("a pong process printed no gossip address")
		}
		if seed == "" {
			seed = got
		}
		go io.Copy(io.Discard, out)
	}
	nf := member{federation: federation, name: "ping", seeds: seed, mcastPort: bf.port, frame: bf.frame, transport: bf.mode, role: "ping"}
	cfg, err := nf.config()
	if err != nil {
		kill()
		return nil, nil, err
	}
	fed, err := peer.Join(ctx, cfg)
	if err != nil {
		kill()
		return nil, nil, fmt.Errorf("join: %w", err)
	}
	return fed, stop, nil
}

func benchLatency(ctx context.Context, p *pinger, bf benchFlags) (*LatencyResult, error) {
	n := bf.count
	if n == 0 {
		n = 5000
	}
	if _, err := p.roundTrips(ctx, min(n/10+1, 500), bf.payload); err != nil { // warm up
		return nil, err
	}
	rtts, err := p.roundTrips(ctx, n, bf.payload)
	if err != nil {
		return nil, err
	}
	raw, err := rawRoundTripsChild(ctx, n, bf.payload)
	if err != nil {
		return nil, fmt.Errorf("raw UDP: %w", err)
	}
	rawIn, err := rawRoundTrips(ctx, n, bf.payload)
	if err != nil {
		return nil, fmt.Errorf("raw UDP: %w", err)
	}
	res := &LatencyResult{
		Bench: "latency", Payload: bf.payload, Pings: len(rtts), RawRTTs: len(raw),
		RTTP50: quantileMicros(rtts, 0.5), RTTP90: quantileMicros(rtts, 0.9), RTTP99: quantileMicros(rtts, 0.99),
		RawRTTP50: quantileMicros(raw, 0.5), RawRTTP99: quantileMicros(raw, 0.99),
		RawInProcRTTP50: quantileMicros(rawIn, 0.5), RawInProcRTTP99: quantileMicros(rawIn, 0.99),
		Transports: "loopback " + bf.mode, Receivers: bf.receivers,
	}
	if res.RawRTTP50 > 0 {
		res.Ratio = res.RTTP50 / res.RawRTTP50
	}
	if res.RawRTTP99 > 0 {
		res.RatioP99 = res.RTTP99 / res.RawRTTP99
	}
	return res, nil
}

func benchThroughput(ctx context.Context, p *pinger, bf benchFlags) (*ThroughputResult, error) {
	n := bf.count
	if n == 0 {
		n = 500000
	}
	if bf.duration > 0 && bf.count == 0 {
		n = 1 << 40
	}
	if _, _, _, err := p.updates(ctx, min(n/10, 50000), bf.payload, 0); err != nil { // warm up
		return nil, err
	}
	before := p.fed.Stats()
	_, reflected, elapsed, err := p.updates(ctx, n, bf.payload, bf.duration)
	if err != nil {
		return nil, err
	}
	after := p.fed.Stats()
	rawN := int(min(reflected, 500000))
	rawSent, rawGot, rawElapsed, err := rawBlastChild(ctx, rawN, bf.payload)
	if err != nil {
		return nil, fmt.Errorf("raw UDP: %w", err)
	}
	_, inGot, inElapsed, err := rawBlast(ctx, rawN, bf.payload)
	if err != nil {
		return nil, fmt.Errorf("raw UDP: %w", err)
	}
	res := &ThroughputResult{
		Bench: "throughput", Payload: bf.payload, Frame: bf.frame, Updates: reflected, Seconds: elapsed.Seconds(),
		UpdatesPerS: float64(reflected) / elapsed.Seconds(), RawSent: rawSent, RawReceived: rawGot,
		Frames: after.Frames - before.Frames, Batches: after.Batches - before.Batches, Blocked: after.Blocked - before.Blocked,
		Transport: bf.mode, Receivers: bf.receivers,
	}
	if rawElapsed > 0 {
		res.RawPerS = float64(rawGot) / rawElapsed.Seconds()
	}
	if inElapsed > 0 {
		res.RawInProcPerS = float64(inGot) / inElapsed.Seconds()
	}
	if res.RawPerS > 0 {
		res.Ratio = res.UpdatesPerS / res.RawPerS
	}
	return res, nil
}

func quantileMicros(ds []time.Duration, q float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := min(int(q*float64(len(s))), len(s)-1)
	return float64(s[i].Nanoseconds()) / 1e3
}

// rawPair opens two UDP sockets on 127.0.0.1 with large buffers.
func rawPair() (a, b *net.UDPConn, err error) {
	open := func() (*net.UDPConn, error) {
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			return nil, err
		}
		c.SetReadBuffer(8 << 20)
		c.SetWriteBuffer(8 << 20)
		return c, nil
	}
	if a, err = open(); err != nil {
		return nil, nil, err
	}
	if b, err = open(); err != nil {
		a.Close()
		return nil, nil, err
	}
	return a, b, nil
}

// rawRoundTrips times n round trips of size-byte datagrams between two
// sockets of this process: the floor under any RTI round trip.
func rawRoundTrips(ctx context.Context, n, size int) ([]time.Duration, error) {
	a, b, err := rawPair()
	if err != nil {
		return nil, err
	}
	defer a.Close()
	defer b.Close()
	bio, err := newRawIO(b)
	if err != nil {
		return nil, err
	}
	errc := make(chan error, 1)
	go func() { // the echo side
		buf := make([]byte, 65536)
		for {
			m, from, err := bio.read(buf)
			if err != nil {
				errc <- nil // closed
				return
			}
			if err := bio.write(buf[:m], from); err != nil {
				errc <- err
				return
			}
		}
	}()
	rtts, err := timeRoundTrips(ctx, a, b.LocalAddr().(*net.UDPAddr), n, size)
	if err != nil {
		return nil, err
	}
	b.Close()
	if err := <-errc; err != nil {
		return nil, err
	}
	return rtts, nil
}

// rawBlast sends n datagrams of size bytes from one socket to another of
// this process, one system call each, as fast as they go, and counts
// what arrives: the per-datagram floor. The time runs from the first send
// to the last datagram received.
func rawBlast(ctx context.Context, n, size int) (sent, got int, elapsed time.Duration, err error) {
	a, b, err := rawPair()
	if err != nil {
		return 0, 0, 0, err
	}
	defer a.Close()
	defer b.Close()
	type result struct {
		got  int
		last time.Time
	}
	aio, err := newRawIO(a)
	if err != nil {
		return 0, 0, 0, err
	}
	bio, err := newRawIO(b)
	if err != nil {
		return 0, 0, 0, err
	}
	done := make(chan result, 1)
	go func() {
		buf := make([]byte, 65536)
		var r result
		for r.got < n {
			b.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			if _, _, err := bio.read(buf); err != nil {
				break // nothing more is coming
			}
			r.got++
			r.last = time.Now()
		}
		done <- r
	}()
	msg := make([]byte, max(size, 1))
	dst := b.LocalAddr().(*net.UDPAddr).AddrPort()
	start := time.Now()
	for sent < n && ctx.Err() == nil {
		if err := aio.write(msg, dst); err != nil {
			return sent, 0, 0, err
		}
		sent++
	}
	r := <-done
	if r.got == 0 {
		return sent, 0, 0, errors.New("no datagram arrived")
	}
	return sent, r.got, r.last.Sub(start), nil
}

// startRawChild starts "bench-raw mode" in a child process and returns
// it, its stdout lines, and the UDP port it listens on.
func startRawChild(ctx context.Context, mode string, args ...string) (*exec.Cmd, *bufio.Scanner, int, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, 0, err
	}
	cmd := exec.CommandContext(ctx, self, append([]string{"bench-raw", mode}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, 0, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, 0, err
	}
	lines := bufio.NewScanner(out)
	var port int
	if !lines.Scan() {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, nil, 0, errors.New("the raw child printed nothing")
	}
	if _, err := fmt.Sscanf(lines.Text(), "port %d", &port); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, nil, 0, fmt.Errorf("the raw child printed %q", lines.Text())
	}
	return cmd, lines, port, nil
}

// rawRoundTripsChild times n round trips of size-byte datagrams to an
// echo in a child process.
func rawRoundTripsChild(ctx context.Context, n, size int) ([]time.Duration, error) {
	cmd, _, port, err := startRawChild(ctx, "echo")
	if err != nil {
		return nil, err
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return timeRoundTrips(ctx, c, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}, n, size)
}

// timeRoundTrips times n round trips of size-byte datagrams from c to an
// echo at dst, after n/10 more that warm up; a datagram lost is not a
// round trip.
func timeRoundTrips(ctx context.Context, c *net.UDPConn, dst *net.UDPAddr, n, size int) ([]time.Duration, error) {
	msg, buf := make([]byte, max(size, 1)), make([]byte, 65536)
	rtts := make([]time.Duration, 0, n)
	rio, err := newRawIO(c)
	if err != nil {
		return nil, err
	}
	to := dst.AddrPort()
	for i := 0; i < n+n/10 && ctx.Err() == nil; i++ {
		start := time.Now()
		if err := rio.write(msg, to); err != nil {
			return nil, err
		}
		c.SetReadDeadline(time.Now().Add(time.Second))
		if _, _, err := rio.read(buf); err != nil {
			continue
		}
		if i >= n/10 {
			rtts = append(rtts, time.Since(start))
		}
	}
	if len(rtts) == 0 {
		return nil, errors.New("no echo")
	}
	return rtts, ctx.Err()
}

// rawBlastChild sends n datagrams of size bytes, one system call each, to
// a counting child process; the rate is what the child received over the
// time from its first datagram to its last.
func rawBlastChild(ctx context.Context, n, size int) (sent, got int, elapsed time.Duration, err error) {
	cmd, lines, port, err := startRawChild(ctx, "sink", "-count", fmt.Sprint(n))
	if err != nil {
		return 0, 0, 0, err
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return 0, 0, 0, err
	}
	defer c.Close()
	c.SetWriteBuffer(8 << 20)
	dst := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}
	msg := make([]byte, max(size, 1))
	rio, err := newRawIO(c)
	if err != nil {
		return 0, 0, 0, err
	}
	for sent < n && ctx.Err() == nil {
		if err := rio.write(msg, dst.AddrPort()); err != nil {
			return sent, 0, 0, err
		}
		sent++
	}
	if !lines.Scan() {
		return sent, 0, 0, errors.New("the sink reported nothing")
	}
	var ns int64
	if _, err := fmt.Sscanf(lines.Text(), "got %d in %d", &got, &ns); err != nil {
		return sent, 0, 0, fmt.Errorf("the sink printed %q", lines.Text())
	}
	if got == 0 {
		return sent, 0, 0, errors.New("no datagram arrived")
	}
	return sent, got, time.Duration(ns), nil
}

// RunRaw is the child side of the raw floor: "echo" answers every
// datagram; "sink -count N" counts datagrams until N arrived or none came
// for 300 ms, then prints "got M in NS" (nanoseconds from the first to the
// last). Both print "port P" first.
func RunRaw(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "federate-node bench-raw: want echo, sink, steps or relay")
		return 2
	}
	mode := args[0]
	if mode == "steps" {
		return runRawSteps(args[1:], stdout, stderr)
	}
	if mode == "relay" {
		return runRawRelay(stdout, stderr)
	}
	fs := flag.NewFlagSet("bench-raw", flag.ContinueOnError)
	fs.SetOutput(stderr)
	count := fs.Int("count", 0, "sink: datagrams to expect")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		fmt.Fprintln(stderr, "federate-node bench-raw:", err)
		return 1
	}
	defer c.Close()
	c.SetReadBuffer(8 << 20)
	fmt.Fprintf(stdout, "port %d\n", c.LocalAddr().(*net.UDPAddr).Port)
	buf := make([]byte, 65536)
	rio, err := newRawIO(c)
	if err != nil {
		fmt.Fprintln(stderr, "federate-node bench-raw:", err)
		return 1
	}
	switch mode {
	case "echo":
		for {
			c.SetReadDeadline(time.Now().Add(time.Minute))
			n, from, err := rio.read(buf)
			if err != nil {
				return 0
			}
			rio.write(buf[:n], from)
		}
	case "sink":
		rawSink(c, rio, buf, *count, stdout)
		return 0
	}
	fmt.Fprintf(stderr, "federate-node bench-raw: unknown mode %q\n", mode)
	return 2
}
