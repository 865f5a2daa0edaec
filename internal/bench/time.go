package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/meshrti/meshrti/examples/demo"
	"github.com/meshrti/meshrti/internal/cli"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/transport"
)

// timeBenchFlags are the flags of "federate-node bench timeadvance".
type timeBenchFlags struct {
	federates int
	steps     int
	warmup    int
	inprocess bool
	benchCommon
	lookahead float64
	stats     bool

	// Set by the parent for its child processes.
	child      bool
	create     bool
	federation string
	name       string
	seeds      string
}

// TimeResult is the line "bench timeadvance -json" prints.
type TimeResult struct {
	Bench     string `json:"bench"`
	Federates int    `json:"federates"`
	InProcess bool   `json:"inprocess"`
	// GrantsPerS is the mean over the federates of the grants each
	// received per second of its measured run.
	GrantsPerS float64 `json:"grants_per_s_per_federate"`
	// MinGrantsPerS is the slowest federate's rate.
	MinGrantsPerS float64 `json:"min_grants_per_s_per_federate"`
	Steps         int     `json:"steps"`
	Seconds       float64 `json:"seconds"`
	// MessagesPerGrant is the data-plane messages (time promises
	// included) each federate sent per grant.
	MessagesPerGrant float64 `json:"messages_per_grant"`
	// CutRoundsPerGrant is the consistent-cut rounds per grant (TAR at
	// positive lookahead should need none).
	CutRoundsPerGrant float64 `json:"cut_rounds_per_grant"`
	// RawStepsPerS is the floor measured in the same run (processes
	// only): as many processes, each multicasting one datagram per step
	// and waiting for every other's, in plain UDP without an RTI.
	// Ratio is GrantsPerS over it.
	RawStepsPerS float64 `json:"raw_steps_per_s,omitempty"`
	Ratio        float64 `json:"ratio,omitempty"`
	// GOMAXPROCS of each process (see shareCores).
	GOMAXPROCS int `json:"gomaxprocs"`
}

// timeChildResult is what one federate measured: the "result" line of a
// child process.
type timeChildResult struct {
	Name    string  `json:"name"`
	Grants  int     `json:"grants"`
	Seconds float64 `json:"seconds"`
	Sent    uint64  `json:"sent"`
	Rounds  uint64  `json:"rounds"` // consistent-cut rounds during the run
}

// Define defines the flags of "bench timeadvance".
func (bf *timeBenchFlags) Define(fs *flag.FlagSet) {
	fs.IntVar(&bf.federates, "federates", 8, "federates (at least 1)")
	fs.IntVar(&bf.steps, "steps", 10000, "measured time steps per federate (short runs measure start-up: 2,000 give 5-8% less)")
	fs.IntVar(&bf.warmup, "warmup", 0, "unmeasured time steps first (default steps/10)")
	fs.BoolVar(&bf.inprocess, "inprocess", false, "run every federate in this process over the in-memory network")
	bf.benchCommon.define(fs, 5*time.Minute, cli.PortHelp, "write a CPU profile of this process to `FILE` (-inprocess: every federate)")
	fs.Float64Var(&bf.lookahead, "lookahead", 1, "lookahead of every federate")
	fs.BoolVar(&bf.stats, "stats", false, "print every federate's data-plane counters to stderr at the end")
	fs.BoolVar(&bf.child, "child", false, "internal: run one federate for the parent process")
	fs.BoolVar(&bf.create, "create", false, "internal (child): create the federation")
	fs.StringVar(&bf.federation, "federation", "", "internal (child): federation name")
	fs.StringVar(&bf.name, "name", "", "internal (child): federate name")
	fs.StringVar(&bf.seeds, "seeds", "", "internal (child): gossip seed address")
}

// Check returns the usage error of bad flags of "bench timeadvance", or "".
func (bf *timeBenchFlags) Check(nargs int) string {
	if bf.federates < 1 || bf.steps < 1 || bf.warmup < 0 || bf.lookahead <= 0 {
		return "need -federates >= 1, -steps >= 1, -warmup >= 0, -lookahead > 0"
	}
	return ""
}

// run measures time advance grants per second: every federate
// is time-regulating (lookahead 1) and time-constrained and loops
// "TAR(t+1), wait for the grant". Federates run in child processes of
// this binary over loopback multicast and gossip, or, with -inprocess, in
// this process over the in-memory network.
func (bf timeBenchFlags) Run(b *cli.Cmd) int {
	if bf.warmup == 0 {
		bf.warmup = bf.steps / 10
	}
	defaultPort(&bf.port, 0)
	fail := b.Fail
	stopProfile, err := cli.StartProfile(bf.cpuprofile)
	if err != nil {
		return fail(err)
	}
	defer stopProfile()
	ctx, cancel := context.WithTimeout(context.Background(), bf.timeout)
	defer cancel()
	if bf.child {
		res, err := timeChild(ctx, bf, b.Stdout)
		if err != nil {
			return fail(err)
		}
		cli.PrintTagged(b.Stdout, "result", res)
		return 0
	}
	var results []timeChildResult
	procs := runtime.GOMAXPROCS(0)
	if !bf.inprocess {
		procs = shareCores(bf.federates)
	}
	if bf.inprocess {
		results, err = timeInProcess(ctx, bf)
	} else {
		results, err = timeProcesses(ctx, bf, b.Stderr)
	}
	if err != nil {
		return fail(err)
	}
	res := TimeResult{Bench: "timeadvance", Federates: bf.federates, InProcess: bf.inprocess, Steps: bf.steps}
	var sent, rounds uint64
	var grants int
	for i, r := range results {
		rate := float64(r.Grants) / r.Seconds
		res.GrantsPerS += rate / float64(len(results))
		if i == 0 || rate < res.MinGrantsPerS {
			res.MinGrantsPerS = rate
		}
		res.Seconds = max(res.Seconds, r.Seconds)
		sent += r.Sent
		rounds += r.Rounds
		grants += r.Grants
	}
	if grants > 0 {
		res.MessagesPerGrant = float64(sent) / float64(grants)
		res.CutRoundsPerGrant = float64(rounds) / float64(grants)
	}
	res.GOMAXPROCS = procs
	if !bf.inprocess && bf.federates > 1 {
		raw, err := rawSteps(ctx, bf.federates, bf.steps, bf.port+1)
		if err != nil {
			return fail(err)
		}
		res.RawStepsPerS, res.Ratio = raw, res.GrantsPerS/raw
	}
	b.Emit(bf.jsonOut, res, func(w io.Writer) {
		where := "separate processes over loopback multicast"
		if bf.inprocess {
			where = "one process, in-memory network"
		}
		fmt.Fprintf(w, "timeadvance, %d federates (%s), lookahead %v, %d steps:\n"+
			"  %.0f grants/s per federate (slowest %.0f), %.1f messages sent per grant\n",
			bf.federates, where, bf.lookahead, bf.steps, res.GrantsPerS, res.MinGrantsPerS, res.MessagesPerGrant)
		if res.RawStepsPerS > 0 {
			fmt.Fprintf(w, "  raw UDP floor, %d processes each multicasting one datagram per step and waiting for all: %.0f steps/s: ratio %.2f\n",
				bf.federates, res.RawStepsPerS, res.Ratio)
		}
		fmt.Fprintf(w, "  GOMAXPROCS %d per process\n", res.GOMAXPROCS)
	})
	return 0
}

// timeLoop makes fed regulating and constrained (already asked for by the
// caller when enabled is false), then runs warmup unmeasured and steps
// measured time advances of 1 each, waiting for every grant.
func timeLoop(ctx context.Context, fed *peer.Federate, bf timeBenchFlags, ready func() error) (timeChildResult, error) {
	res := timeChildResult{Name: fed.Name()}
	if err := ready(); err != nil {
		return res, err
	}
	now, err := fed.QueryLogicalTime()
	if err != nil {
		return res, err
	}
	t := now.Float()
	step := func() error {
		t++
		if err := fed.TimeAdvanceRequest(peer.Float64Time(t)); err != nil {
			return fmt.Errorf("advance to %v: %w", t, err)
		}
		for {
			ev, err := fed.Next(ctx)
			if err != nil {
				st, _ := fed.TimeStatus()
				return fmt.Errorf("%s: waiting for the grant to %v: %w (time state %+v)", fed.Name(), t, err, st)
			}
			switch ev := ev.(type) {
			case peer.TimeAdvanceGrant:
				return nil
			case peer.FederateLost:
				return fmt.Errorf("federate %s lost", ev.Name)
			case peer.ConnectionLost:
				return fmt.Errorf("connection lost: %s", ev.Reason)
			}
		}
	}
	for i := 0; i < bf.warmup; i++ {
		if err := step(); err != nil {
			return res, err
		}
	}
	sent0 := fed.Stats().Sent
	st0, _ := fed.TimeStatus()
	start := time.Now()
	for i := 0; i < bf.steps; i++ {
		if err := step(); err != nil {
			return res, err
		}
		res.Grants++
	}
	res.Seconds = time.Since(start).Seconds()
	res.Sent = fed.Stats().Sent - sent0
	st, _ := fed.TimeStatus()
	res.Rounds = st.Round - st0.Round
	return res, nil
}

// waitFor reads fed's events until done says so.
func waitEvents(ctx context.Context, fed *peer.Federate, what string, done func(peer.Event) bool) error {
	for {
		ev, err := fed.Next(ctx)
		if err != nil {
			return fmt.Errorf("%s: waiting for %s: %w", fed.Name(), what, err)
		}
		if done(ev) {
			return nil
		}
	}
}

// timeInProcess runs every federate in this process over the in-memory
// network and control plane.
func timeInProcess(ctx context.Context, bf timeBenchFlags) ([]timeChildResult, error) {
	mf, err := newMemFederation(fmt.Sprintf("benchtime-%d", os.Getpid()), "bench", "demo.xml", demo.FOM)
	if err != nil {
		return nil, err
	}
	network := transport.NewNetwork(transport.NetworkConfig{Seed: 1})
	feds := make([]*peer.Federate, 0, bf.federates)
	defer func() {
		for _, f := range feds {
			f.Close()
		}
	}()
	for i := 0; i < bf.federates; i++ {
		name := fmt.Sprintf("T%d", i)
		f, err := mf.join(ctx, name, network.Endpoint(name))
		if err != nil {
			return nil, err
		}
		feds = append(feds, f)
	}
	// All enable, then all wait: each enable waits for every other
	// member's acknowledgement.
	for _, f := range feds {
		if err := f.EnableTimeRegulation(peer.Float64Time(bf.lookahead)); err != nil {
			return nil, err
		}
	}
	for _, f := range feds {
		if err := waitEvents(ctx, f, "time regulation", isEvent[peer.TimeRegulationEnabled]); err != nil {
			return nil, err
		}
	}
	for _, f := range feds {
		if err := f.EnableTimeConstrained(); err != nil {
			return nil, err
		}
	}
	for _, f := range feds {
		if err := waitEvents(ctx, f, "time constrained", isEvent[peer.TimeConstrainedEnabled]); err != nil {
			return nil, err
		}
	}
	results := make([]timeChildResult, len(feds))
	errs := make([]error, len(feds))
	var wg sync.WaitGroup
	for i, f := range feds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = timeLoop(ctx, f, bf, func() error { return nil })
		}()
	}
	wg.Wait()
	if bf.stats {
		for _, f := range feds {
			cli.PrintTagged(os.Stderr, f.Name()+" stats", f.Stats())
		}
	}
	return results, errors.Join(errs...)
}

func isEvent[T peer.Event](ev peer.Event) bool {
	_, ok := ev.(T)
	return ok
}

// timeProcesses starts one child process per federate: the first creates
// the federation and is the others' gossip seed.
func timeProcesses(ctx context.Context, bf timeBenchFlags, stderr io.Writer) ([]timeChildResult, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	federation := fmt.Sprintf("benchtime-%d", os.Getpid())
	// Children give up first, so that they report where they were.
	childTimeout := max(bf.timeout-3*time.Second, bf.timeout*9/10)
	type child struct {
		cmd    *exec.Cmd
		result chan timeChildResult
		seed   chan string
	}
	var children []*child
	defer func() {
		for _, c := range children {
			if c.cmd.ProcessState == nil {
				c.cmd.Process.Kill()
				c.cmd.Wait()
			}
		}
	}()
	start := func(i int, seeds string) (*child, error) {
		args := []string{"bench", "timeadvance", "-child",
			"-federation", federation, "-name", fmt.Sprintf("T%d", i),
			"-federates", fmt.Sprint(bf.federates), "-steps", fmt.Sprint(bf.steps), "-warmup", fmt.Sprint(bf.warmup),
			"-lookahead", fmt.Sprint(bf.lookahead), fmt.Sprintf("-stats=%v", bf.stats), "-mcast-port", fmt.Sprint(bf.port), "-timeout", childTimeout.String()}
		if i == 0 {
			args = append(args, "-create")
		} else {
			args = append(args, "-seeds", seeds)
		}
		if bf.cpuprofile != "" {
			args = append(args, "-cpuprofile", fmt.Sprintf("%s.%d", bf.cpuprofile, i))
		}
		cmd := exec.CommandContext(ctx, self, args...)
		cmd.Stderr = stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		c := &child{cmd: cmd, result: make(chan timeChildResult, 1), seed: make(chan string, 1)}
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				line := sc.Text()
				if rest, ok := strings.CutPrefix(line, "gossip "); ok {
					c.seed <- strings.TrimSpace(rest)
				}
				if rest, ok := strings.CutPrefix(line, "result "); ok {
					var r timeChildResult
					if json.Unmarshal([]byte(rest), &r) == nil {
						c.result <- r
					}
				}
			}
			close(c.result)
		}()
		return c, nil
	}
	first, err := start(0, "")
	if err != nil {
		return nil, err
	}
	children = append(children, first)
	var seed string
	select {
	case seed = <-first.seed:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(30 * time.Second):
		return nil, errors.New("the first federate printed no gossip address")
	}
	for i := 1; i < bf.federates; i++ {
		c, err := start(i, seed)
		if err != nil {
			return nil, err
		}
		children = append(children, c)
	}
	var results []timeChildResult
	var errs []error
	for i, c := range children {
		r, ok := <-c.result
		werr := c.cmd.Wait()
		if !ok {
			errs = append(errs, fmt.Errorf("federate T%d reported no result (%v)", i, werr))
			continue
		}
		results = append(results, r)
	}
	return results, errors.Join(errs...)
}

// timeChild is one federate of the multi-process benchmark: it joins over
// gossip, becomes regulating and constrained, registers an object once it
// is, and starts stepping once it has discovered the objects of every
// other federate (so every federate holds time back by then).
func timeChild(ctx context.Context, bf timeBenchFlags, stdout io.Writer) (timeChildResult, error) {
	nf := member{federation: bf.federation, name: bf.name, seeds: bf.seeds, mcastPort: bf.port, iface: transport.DefaultInterface, role: "bench", create: bf.create}
	cfg, err := nf.config()
	if err != nil {
		return timeChildResult{}, err
	}
	fed, err := peer.Join(ctx, cfg)
	if err != nil {
		return timeChildResult{}, fmt.Errorf("join: %w", err)
	}
	defer fed.Close()
	cli.PrintGossip(stdout, fed)
	h, err := lookupDemo(fed)
	if err != nil {
		return timeChildResult{}, err
	}
	// Discoveries may come while waiting for anything; count them all.
	seen := map[peer.FederateHandle]bool{}
	note := func(done func(peer.Event) bool) func(peer.Event) bool {
		return func(ev peer.Event) bool {
			if d, ok := ev.(peer.DiscoverObjectInstance); ok {
				seen[d.Producer] = true
			}
			return done(ev)
		}
	}
	ready := func() error {
		if err := errors.Join(
			fed.PublishObjectClassAttributes(h.aircraft, h.blob),
			fed.SubscribeObjectClassAttributes(h.aircraft, h.blob),
			fed.EnableTimeRegulation(peer.Float64Time(bf.lookahead)),
		); err != nil {
			return err
		}
		if err := waitEvents(ctx, fed, "time regulation", note(isEvent[peer.TimeRegulationEnabled])); err != nil {
			return err
		}
		if err := fed.EnableTimeConstrained(); err != nil {
			return err
		}
		if err := waitEvents(ctx, fed, "time constrained", note(isEvent[peer.TimeConstrainedEnabled])); err != nil {
			return err
		}
		if _, err := fed.RegisterObjectInstance(h.aircraft, ""); err != nil {
			return err
		}
		if len(seen) >= bf.federates-1 {
			return nil
		}
		return waitEvents(ctx, fed, fmt.Sprintf("the objects of %d federates", bf.federates-1),
			note(func(peer.Event) bool { return len(seen) >= bf.federates-1 }))
	}
	res, err := timeLoop(ctx, fed, bf, ready)
	if err != nil {
		return res, err
	}
	if bf.stats {
		cli.PrintTagged(os.Stderr, fed.Name()+" stats", fed.Stats())
	}
	// Stay until the others are done: they need this federate's last
	// promise, and a resignation would remove it from their time anyway.
	rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = fed.ResignFederationExecution(rctx, peer.DeleteObjects)
	return res, nil
}
