package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshrti/meshrti/internal/nodetest"
)

// proc is a started federate-node with its output lines.
type proc struct {
	cmd    *exec.Cmd
	lines  chan string
	exited chan struct{} // closed when the process has ended; err is then set
	err    error

	mu     sync.Mutex
	out    []string        // every line printed so far
	stderr strings.Builder // what it wrote to stderr so far
}

// Write takes what the process writes to stderr.
func (p *proc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.Write(b)
}

// logged returns the "time stalled:" lines the process logged and its
// last n lines of log besides.
func (p *proc) logged(n int) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	lines := strings.Split(strings.TrimSuffix(p.stderr.String(), "\n"), "\n")
	var out []string
	for _, l := range lines[:max(0, len(lines)-n)] {
		if strings.HasPrefix(l, "time stalled:") {
			out = append(out, l)
		}
	}
	return strings.Join(append(out, lines[max(0, len(lines)-n):]...), "\n")
}

// output returns the last n lines the process printed.
func (p *proc) output(n int) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.out[max(0, len(p.out)-n):], "\n")
}

// wait waits for the process to end and returns its error.
func (p *proc) wait() error {
	<-p.exited
	return p.err
}

func start(t *testing.T, ctx context.Context, bin string, args ...string) *proc {
	t.Helper()
	return startCmd(t, exec.CommandContext(ctx, bin, args...))
}

// startCmd starts cmd, its output read into lines; the test's end kills
// it. Its output is read as it comes, whether the test takes the lines
// or not: a process never waits for the test to read.
func startCmd(t *testing.T, cmd *exec.Cmd) *proc {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, lines: make(chan string), exited: make(chan struct{})}
	cmd.Stderr = p
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		queue []string
		eof   bool
		more  = make(chan struct{}, 1)
		stop  = make(chan struct{})
		moved = make(chan struct{})
	)
	wake := func() {
		select {
		case more <- struct{}{}:
		default:
		}
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			mu.Lock()
			queue = append(queue, sc.Text())
			mu.Unlock()
			p.mu.Lock()
			p.out = append(p.out, sc.Text())
			p.mu.Unlock()
			wake()
		}
		mu.Lock()
		eof = true
		mu.Unlock()
		wake()
		err := cmd.Wait()
		if err != nil {
			p.mu.Lock()
			err = fmt.Errorf("%w: %s", err, p.stderr.String())
			p.mu.Unlock()
		}
		p.err = err
		close(p.exited)
	}()
	go func() { // hands the lines on, in order
		defer close(moved)
		for {
			mu.Lock()
			if len(queue) == 0 {
				done := eof
				mu.Unlock()
				if done {
					close(p.lines)
					return
				}
				select {
				case <-more:
				case <-stop:
					return
				}
				continue
			}
			l := queue[0]
			queue = queue[1:]
			mu.Unlock()
			select {
			case p.lines <- l:
			case <-stop:
				return
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.exited
		close(stop)
		<-moved
	})
	return p
}

// line waits for an output line with the prefix and returns the rest.
func (p *proc) line(t *testing.T, prefix string, timeout time.Duration) string {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				t.Fatalf("process ended before printing %q: %v", prefix, p.wait())
			}
			if rest, ok := strings.CutPrefix(l, prefix); ok {
				return rest
			}
		case <-deadline:
			t.Fatalf("no %q line within %v", prefix, timeout)
		}
	}
}

// processTest is the set-up of a test of federate-node processes: the
// built binary, a context that ends within 90 s, a federation named
// prefix-PID and a multicast port from base up.
func processTest(t *testing.T, prefix string, base int) (bin string, ctx context.Context, federation, port string) {
	t.Helper()
	bin = nodetest.Build(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	return bin, ctx, fmt.Sprintf("%s-%d", prefix, os.Getpid()), fmt.Sprint(base + os.Getpid()%5000)
}

// Two federates in two OS processes exchange interactions and updates
// over real loopback multicast, finding each other through gossip.
func TestTwoProcesses(t *testing.T) {
	bin, ctx, fed, port := processTest(t, "proc-test", 42000)
	dir := t.TempDir()
	pongTrace, pingTrace := filepath.Join(dir, "pong.jsonl"), filepath.Join(dir, "ping.jsonl")
	pong := start(t, ctx, bin, "node", "-role", "pong", "-name", "pong", "-create", "-federation", fed, "-mcast-port", port, "-timeout", "80s",
		"-trace", pongTrace)
	seed := strings.TrimSpace(pong.line(t, "gossip ", 20*time.Second))
	ping := start(t, ctx, bin, "node", "-role", "ping", "-name", "ping", "-federation", fed, "-mcast-port", port,
		"-seeds", seed, "-count", "2000", "-size", "100", "-timeout", "80s", "-trace", pingTrace)
	var res pingResult
	if err := json.Unmarshal([]byte(ping.line(t, "result ", 80*time.Second)), &res); err != nil {
		t.Fatal(err)
	}
	if err := ping.wait(); err != nil {
		t.Fatalf("ping: %v", err)
	}
	var pres pongResult
	if err := json.Unmarshal([]byte(pong.line(t, "result ", 20*time.Second)), &pres); err != nil {
		t.Fatal(err)
	}
	if err := pong.wait(); err != nil {
		t.Fatalf("pong: %v", err)
	}
	if res.Reflected != 2000 || pres.Reflects != 2000 {
		t.Errorf("updates: ping says %d reflected, pong counted %d; want 2000", res.Reflected, pres.Reflects)
	}
	if res.Pings != 200 || pres.Pings < 200 {
		t.Errorf("pings: %d answered, pong saw %d", res.Pings, pres.Pings)
	}
	// The two processes' traces, read together, satisfy the checker.
	var out, errOut strings.Builder
	if code := run([]string{"trace-check", pongTrace, pingTrace}, &out, &errOut); code != 0 {
		t.Errorf("trace-check: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	t.Logf("two processes: RTT median %.0f us (p90 %.0f), %d x %d-byte updates at %.0f/s",
		res.RTTMedianMicros, res.RTTP90Micros, res.Updates, res.PayloadBytes, res.UpdatesPerSec)

}

// TestBenchJSON runs both benchmarks briefly in two processes and checks
// that each prints one JSON line with the documented keys and sane
// numbers. It measures nothing: figures come from running bench by hand.
func TestBenchJSON(t *testing.T) {
	out := nodetest.Output(t, 0, "bench", "-json", "-count", "300", "-payload", "100")
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		t.Fatalf("bench printed %d lines:\n%s", len(lines), out)
	}
	var lat latencyResult
	var thr throughputResult
	if err := json.Unmarshal([]byte(lines[0]), &lat); err != nil || lat.Bench != "latency" {
		t.Fatalf("latency line %q: %v", lines[0], err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &thr); err != nil || thr.Bench != "throughput" {
		t.Fatalf("throughput line %q: %v", lines[1], err)
	}
	if lat.Payload != 100 || lat.Pings != 300 || lat.RTTP50 <= 0 || lat.RTTP99 < lat.RTTP50 || lat.RawRTTP50 <= 0 || lat.Ratio <= 0 {
		t.Errorf("latency %+v", lat)
	}
	if thr.Updates != 300 || thr.UpdatesPerS <= 0 || thr.RawPerS <= 0 || thr.Ratio <= 0 {
		t.Errorf("throughput %+v", thr)
	}
	if os.Getenv("GOMAXPROCS") == "" {
		want := max(1, runtime.NumCPU()/2)
		if lat.GOMAXPROCS != want || thr.GOMAXPROCS != want {
			t.Errorf("GOMAXPROCS %d and %d, want each process's share of %d cores: %d", lat.GOMAXPROCS, thr.GOMAXPROCS, runtime.NumCPU(), want)
		}
	}
	// The keys the issue names, spelled as given.
	for _, k := range []string{`"updates_per_s"`, `"raw_per_s"`, `"ratio"`, `"payload"`} {
		if !strings.Contains(lines[1], k) {
			t.Errorf("throughput line lacks %s", k)
		}
	}
	for _, k := range []string{`"rtt_p50_us"`, `"rtt_p99_us"`, `"raw_rtt_p50_us"`, `"ratio"`} {
		if !strings.Contains(lines[0], k) {
			t.Errorf("latency line lacks %s", k)
		}
	}
}

// TestBenchTimeProcesses runs bench timeadvance with three federates in
// three processes and checks its line, the raw floor measured after it
// included. Like TestBenchJSON it measures nothing.
func TestBenchTimeProcesses(t *testing.T) {
	out := nodetest.Output(t, 7, "bench", "timeadvance", "-json", "-federates", "3", "-steps", "200")
	var res timeBenchResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%q: %v", out, err)
	}
	if res.Federates != 3 || res.InProcess || res.GrantsPerS <= 0 || res.MinGrantsPerS > res.GrantsPerS || res.MessagesPerGrant < 1 {
		t.Errorf("result %+v", res)
	}
	if res.RawStepsPerS <= 0 || res.Ratio <= 0 || res.GOMAXPROCS < 1 {
		t.Errorf("raw floor %v, ratio %v, GOMAXPROCS %d", res.RawStepsPerS, res.Ratio, res.GOMAXPROCS)
	}
	for _, k := range []string{`"grants_per_s_per_federate"`, `"raw_steps_per_s"`, `"inprocess":false`} {
		if !strings.Contains(string(out), k) {
			t.Errorf("line lacks %s: %s", k, out)
		}
	}
	// The raw floor's process refuses bad flags.
	for _, args := range [][]string{{"-id", "3", "-n", "3", "-port", "1"}, {"-port", "0"}, {"-steps", "0", "-port", "1"}} {
		var o, e bytes.Buffer
		if code := run(append([]string{"bench-raw", "steps"}, args...), &o, &e); code != 2 {
			t.Errorf("bench-raw steps %v: exit %d, want 2", args, code)
		}
	}
}
