package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meshrti/meshrti/peer/fedpro/pb"
)

// fedproThroughputFlags are the settings of bench fedpro -mode throughput.
type fedproThroughputFlags struct {
	count, size, port int
	peer              bool
	daemonProcs       int
	profile           string
	daemon            string // the binary to run serve from; "": this one
	timeout           time.Duration
}

// benchFedProThroughput starts `serve` in a child process, joins clients
// A and B through it, and has A make count update calls one at a time
// (each waits for its response before the next, as the public clients
// call), with values of size bytes, to B, which is called back with each.
// The rate is the updates B received over the time from A's first call to
// B's last callback; the daemon's CPU, allocations and context switches
// are read before and after that time. With peer, plain bench throughput
// follows, for scale.
func benchFedProThroughput(ctx context.Context, tf fedproThroughputFlags, stderr io.Writer) (*FedProThroughputResult, error) {
	d, err := startServeChild(ctx, tf)
	if err != nil {
		return nil, err
	}
	defer d.stop()
	var got atomic.Int64
	var want atomic.Int64
	all := make(chan struct{}, 1)
	p := &fedproPair{}
	defer p.close()
	err = openFedProPair(d.addr, p, nil, func(cb *pb.CallbackRequest) {
		if cb.GetReflectAttributeValues() != nil {
			if n := got.Add(1); n == want.Load() {
				all <- struct{}{}
			}
		}
	})
	if err != nil {
		return nil, d.failed(err)
	}
	value := make([]byte, tf.size)
	run := func(n int) ([]time.Duration, time.Duration, error) {
		got.Store(0)
		want.Store(int64(n))
		calls := make([]time.Duration, 0, n)
		start := time.Now()
		for range n {
			t0 := time.Now()
			resp, err := p.a.CallWait(ctx, updateCall(p.pingObj, p.pingAttr, value))
			if err != nil {
				return nil, 0, err
			}
			if e := resp.GetExceptionData(); e != nil {
				return nil, 0, fmt.Errorf("update: %s: %s", e.GetExceptionName(), e.GetDetails())
			}
			calls = append(calls, time.Since(t0))
		}
		select {
		case <-all:
		case <-ctx.Done():
			return nil, 0, fmt.Errorf("the receiving client got %d of %d updates: %w", got.Load(), n, ctx.Err())
		}
		return calls, time.Since(start), nil
	}
	if _, _, err := run(min(tf.count/10+1, 1000)); err != nil { // warm up
		return nil, d.failed(err)
	}
	before, err := d.usage()
	if err != nil {
		return nil, d.failed(err)
	}
	calls, elapsed, err := run(tf.count)
	if err != nil {
		return nil, d.failed(err)
	}
	after, err := d.usage()
	if err != nil {
		return nil, d.failed(err)
	}
	r := &FedProThroughputResult{Mode: "throughput", Size: tf.size, Updates: tf.count, Seconds: elapsed.Seconds(),
		UpdatesPerS: float64(tf.count) / elapsed.Seconds(), CallP50: quantileMicros(calls, 0.5), CallP99: quantileMicros(calls, 0.99),
		DaemonCPUPerUpdate: -1, DaemonCtxSwPerUpdate: -1, DaemonGOMAXPROCS: d.procs,
		DaemonAllocsPerUpdate: float64(after.allocs-before.allocs) / float64(tf.count)}
	if before.cpu >= 0 && after.cpu >= 0 {
		r.DaemonCPUPerUpdate = float64((after.cpu - before.cpu).Nanoseconds()) / 1e3 / float64(tf.count)
	}
	if before.ctxsw >= 0 && after.ctxsw >= 0 {
		r.DaemonCtxSwPerUpdate = float64(after.ctxsw-before.ctxsw) / float64(tf.count)
	}
	p.close()
	d.stop()
	r.FloorUpdatesPerS, r.FloorCPUPerUpdate, err = fedproFloorThroughput(ctx, tf.count, tf.size, daemonEnv(tf.daemonProcs))
	if err != nil {
		return nil, fmt.Errorf("floor: %w", err)
	}
	if r.FloorUpdatesPerS > 0 {
		r.Ratio = r.UpdatesPerS / r.FloorUpdatesPerS
	}
	if tf.peer {
		bf := benchFlags{payload: tf.size, count: 200000, frame: 16000, benchCommon: benchCommon{port: tf.port + 1, timeout: tf.timeout}}
		fed, stop, err := startBenchPair(ctx, bf, stderr)
		if err != nil {
			return nil, fmt.Errorf("bench throughput: %w", err)
		}
		defer stop()
		defer fed.Close()
		pg, err := newPinger(ctx, fed)
		if err != nil {
			return nil, fmt.Errorf("bench throughput: %w", err)
		}
		defer pg.stop(ctx)
		res, err := benchThroughput(ctx, pg, bf)
		if err != nil {
			return nil, fmt.Errorf("bench throughput: %w", err)
		}
		r.PeerUpdatesPerS = res.UpdatesPerS
	}
	return r, nil
}

// serveChild is `federate-node serve` running in a child process.
type serveChild struct {
	cmd     *exec.Cmd
	addr    string // the Federate Protocol listener
	metrics string // the metrics URL
	procs   int    // its GOMAXPROCS
	stderr  *syncBuffer
	exited  chan struct{}
	once    sync.Once
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader on two
// goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.b.Len() > 1<<20 {
		return len(p), nil // enough to say what went wrong
	}
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// startServeChild starts `serve` on free loopback ports, with the
// metrics endpoint (for its allocation count).
func startServeChild(ctx context.Context, tf fedproThroughputFlags) (*serveChild, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if tf.daemon != "" {
		self = tf.daemon
	}
	args := []string{"serve", "-listen", "127.0.0.1:0", "-metrics", "127.0.0.1:0", "-gossip", "127.0.0.1:0",
		"-mcast-port", fmt.Sprint(tf.port), "-save-dir", os.TempDir()}
	if tf.profile != "" {
		args = append(args, "-cpuprofile", tf.profile)
	}
	cmd := exec.CommandContext(ctx, self, args...)
	cmd.Env = daemonEnv(tf.daemonProcs)
	d := &serveChild{cmd: cmd, stderr: &syncBuffer{}, exited: make(chan struct{}), procs: tf.daemonProcs}
	if d.procs <= 0 {
		d.procs = defaultProcs()
	}
	cmd.Stderr = d.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { cmd.Wait(); close(d.exited) }()
	lines := bufio.NewScanner(out)
	for (d.addr == "" || d.metrics == "") && lines.Scan() {
		if a, ok := strings.CutPrefix(lines.Text(), "serving the Federate Protocol on "); ok && d.addr == "" {
			d.addr = strings.TrimSpace(a)
		}
		if a, ok := strings.CutPrefix(lines.Text(), "metrics on "); ok {
			d.metrics = strings.TrimSpace(a)
		}
	}
	go io.Copy(io.Discard, out)
	if d.addr == "" || d.metrics == "" {
		d.stop()
		return nil, fmt.Errorf("serve printed no addresses: %s", d.stderr.String())
	}
	return d, nil
}

// daemonEnv is the environment of the daemon and its floor's relay:
// GOMAXPROCS procs, if above 0, else as the user set it, else unset (the
// runtime's default, as serve runs).
func daemonEnv(procs int) []string {
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "GOMAXPROCS=") {
			env = append(env, e)
		}
	}
	if procs > 0 {
		env = append(env, fmt.Sprintf("GOMAXPROCS=%d", procs))
	} else if v := os.Getenv("GOMAXPROCS"); v != "" {
		env = append(env, "GOMAXPROCS="+v) // the user's
	}
	return env
}

// defaultProcs is the GOMAXPROCS a child with the environment's setting
// gets.
func defaultProcs() int {
	if v, err := strconv.Atoi(os.Getenv("GOMAXPROCS")); err == nil && v > 0 {
		return v
	}
	return runtime.NumCPU()
}

// stop interrupts serve (its sessions resign) and waits for it; after 10
// s it is killed.
func (d *serveChild) stop() {
	d.once.Do(func() {
		if err := d.cmd.Process.Signal(os.Interrupt); err != nil {
			d.cmd.Process.Kill()
		}
		select {
		case <-d.exited:
		case <-time.After(10 * time.Second):
			d.cmd.Process.Kill()
			<-d.exited
		}
	})
}

// failed adds what serve said to err.
func (d *serveChild) failed(err error) error {
	if s := strings.TrimSpace(d.stderr.String()); s != "" {
		lines := strings.Split(s, "\n")
		return fmt.Errorf("%w (serve's last lines: %s)", err, strings.Join(lines[max(0, len(lines)-5):], " | "))
	}
	return err
}

// daemonUsage is what the daemon has used so far: CPU (-1: unknown),
// heap allocations, and context switches of its threads (-1: unknown).
type daemonUsage struct {
	cpu    time.Duration
	allocs uint64
	ctxsw  int64
}

// usage reads the daemon's usage: the allocations from its metrics
// first, the CPU last, so that the scrape's own cost falls outside the
// interval between two reads (it is counted once, in the allocations).
func (d *serveChild) usage() (daemonUsage, error) {
	var u daemonUsage
	resp, err := http.Get(d.metrics)
	if err != nil {
		return u, err
	}
	defer resp.Body.Close()
	found := false
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_memstats_mallocs_total "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return u, fmt.Errorf("go_memstats_mallocs_total %q: %w", v, err)
			}
			u.allocs, found = uint64(f), true
		}
	}
	if !found {
		return u, errors.New("the daemon's metrics have no go_memstats_mallocs_total")
	}
	u.ctxsw = procContextSwitches(d.cmd.Process.Pid)
	u.cpu = procCPU(d.cmd.Process.Pid)
	return u, nil
}
