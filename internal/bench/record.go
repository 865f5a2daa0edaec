package bench

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/meshrti/meshrti/internal/cli"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/record"
)

// RecordResult is the line "bench record -json" prints.
type RecordResult struct {
	Bench   string `json:"bench"`
	Payload int    `json:"payload"`
	Frame   int    `json:"frame"`
	// Random: the recorder got random payloads (they do not compress).
	Random bool `json:"random"`
	// Throughput: ping to pong alone, as "bench throughput" measures it.
	Updates     int64   `json:"updates"`
	UpdatesPerS float64 `json:"updates_per_s"`
	// The recorder in pong's place: how fast ping sent, and what the
	// recorder wrote, per second.
	SentPerS     float64 `json:"sent_per_s"`
	Recorded     int64   `json:"recorded"`
	RecordedPerS float64 `json:"recorded_per_s"`
	FileBytes    int64   `json:"file_bytes"`
	// Ratio is RecordedPerS / UpdatesPerS; the goal is at least 0.5.
	Ratio      float64 `json:"ratio"`
	GOMAXPROCS int     `json:"gomaxprocs"`
}

// recordBenchFlags are the flags of "federate-node bench record".
type recordBenchFlags struct {
	benchFlags
	random bool   // -random: random payloads
	dir    string // -dir: where the recording goes
}

// Define defines the flags of "bench record".
func (bf *recordBenchFlags) Define(fs *flag.FlagSet) {
	fs.IntVar(&bf.payload, "payload", 100, "payload bytes per update")
	fs.IntVar(&bf.count, "count", 300000, "updates to send in each phase")
	fs.IntVar(&bf.frame, "frame", 16000, "data-plane frame size in bytes")
	bf.benchCommon.define(fs, 3*time.Minute, cli.PortHelp, "write a CPU profile of the recorder to `FILE`")
	fs.BoolVar(&bf.random, "random", false, "send random payloads to the recorder (incompressible), not zeros and a counter")
	fs.StringVar(&bf.dir, "dir", "", "directory for the recording (default: a temporary one, removed after)")
}

// Check returns the usage error of bad flags of "bench record", or "".
func (bf *recordBenchFlags) Check(nargs int) string {
	if bf.payload < 0 || bf.count <= 0 {
		return "negative -payload or -count"
	}
	return ""
}

// run measures the recorder under load against the throughput
// bench in the same run: ping (here) sends 100-byte updates to pong (a
// child process), as "bench throughput" does; then pong leaves, a
// recorder ("federate-node record -stats", another child process) takes
// its place, and ping sends as many updates again. Both receivers thus
// run beside the same sender on the same cores.
func (bf recordBenchFlags) Run(b *cli.Cmd) int {
	defaultPort(&bf.port, 0)
	res, err := benchRecord(bf.benchFlags, bf.dir, bf.random, b.Stderr)
	if err != nil {
		return b.Fail(err)
	}
	b.Emit(bf.jsonOut, res, func(w io.Writer) {
		fmt.Fprintf(w, "recorder under load, %d-byte attribute updates in frames of %d bytes, over loopback multicast:\n"+
			"  throughput ping to pong: %d updates: %.0f updates/s\n"+
			"  recorder in pong's place: sent at %.0f updates/s; recorder wrote %d updates: %.0f updates/s (%d bytes)\n"+
			"  recorder / throughput: %.2f (goal at least 0.5)\n",
			res.Payload, res.Frame, res.Updates, res.UpdatesPerS, res.SentPerS, res.Recorded, res.RecordedPerS, res.FileBytes, res.Ratio)
	})
	return 0
}

func benchRecord(bf benchFlags, dir string, random bool, stderr io.Writer) (*RecordResult, error) {
	if dir == "" {
		d, err := os.MkdirTemp("", "bench-record-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	path := filepath.Join(dir, "bench.rec")
	procs := shareCores(3)
	ctx, cancel := context.WithTimeout(context.Background(), bf.timeout)
	defer cancel()
	pair := bf
	pair.cpuprofile = "" // the recorder's only
	fed, stopChild, err := startBenchPair(ctx, pair, stderr)
	if err != nil {
		return nil, err
	}
	defer stopChild()
	defer fed.Close()
	p, err := newPinger(ctx, fed)
	if err != nil {
		return nil, err
	}
	res := &RecordResult{Bench: "record", Payload: bf.payload, Frame: bf.frame, Random: random, GOMAXPROCS: procs}
	if _, _, _, err := p.updates(ctx, min(bf.count/10, 50000), bf.payload, 0); err != nil { // warm up
		return nil, err
	}
	_, reflected, elapsed, err := p.updates(ctx, bf.count, bf.payload, 0)
	if err != nil {
		return nil, err
	}
	res.Updates, res.UpdatesPerS = reflected, float64(reflected)/elapsed.Seconds()
	p.stop(ctx)

	// The recorder joins through this federate's gossip address.
	seed, ok := fed.GossipAddr()
	if !ok {
		return nil, errors.New("no gossip address to join the recorder through")
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	rec := exec.CommandContext(ctx, self, "record", "-federation", fmt.Sprintf("bench-%d", os.Getpid()), "-seeds", seed,
		"-mcast-port", fmt.Sprint(bf.port), "-frame", fmt.Sprint(bf.frame), "-o", path, "-stats", "-cpuprofile", bf.cpuprofile)
	rec.Stderr = stderr
	out, err := rec.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := rec.Start(); err != nil {
		return nil, err
	}
	exited := false
	defer func() {
		if !exited {
			rec.Process.Kill()
			rec.Wait()
		}
	}()
	lines := bufio.NewScanner(out)
	if !scanTo(lines, "recording ") {
		return nil, errors.New("the recorder did not start")
	}
	// Let the recorder discover the instance (a discovery query answers
	// it), then load it.
	time.Sleep(time.Second)
	// Random payloads are windows into one random megabyte, so making
	// them costs the sender nothing.
	pool := make([]byte, 1<<20+4+bf.payload)
	if random {
		rand.Read(pool)
	}
	start := time.Now()
	for i := 0; i < bf.count; i++ {
		off := 0
		if random {
			off = (i * 977) % (len(pool) - bf.payload)
		}
		// Blob is HLAopaqueData: a 4-byte count, then the bytes.
		payload := pool[off : off+4+bf.payload]
		binary.BigEndian.PutUint32(payload, uint32(bf.payload))
		if err := fed.UpdateAttributeValues(p.obj, peer.AttributeValues{p.h.blob: payload}, nil); err != nil {
			return nil, err
		}
	}
	res.SentPerS = float64(bf.count) / time.Since(start).Seconds()
	// Wait for the recorder to catch up (its file stops growing), then
	// stop it; it reports its own rate from its first update to its last.
	if err := waitQuiet(ctx, path, 500*time.Millisecond); err != nil {
		return nil, err
	}
	if err := rec.Process.Signal(os.Interrupt); err != nil {
		return nil, err
	}
	if !scanTo(lines, "stats ") {
		return nil, errors.New("the recorder printed no stats")
	}
	var st record.Stats
	if err := json.Unmarshal([]byte(strings.TrimPrefix(lines.Text(), "stats ")), &st); err != nil {
		return nil, err
	}
	for lines.Scan() {
	}
	exited = true
	if err := rec.Wait(); err != nil {
		return nil, fmt.Errorf("recorder: %w", err)
	}
	res.Recorded, res.RecordedPerS, res.FileBytes = st.BurstUpdates, st.UpdatesPerS, st.Bytes
	if res.UpdatesPerS > 0 {
		res.Ratio = res.RecordedPerS / res.UpdatesPerS
	}
	// Its last run of updates is the load (a late subscriber may also be
	// handed the sender's retained messages at once when it joins).
	if st.BurstUpdates != int64(bf.count) {
		return res, fmt.Errorf("the recorder wrote %d updates in its last run, %d sent", st.BurstUpdates, bf.count)
	}
	return res, nil
}

// scanTo reads lines until one starts with prefix.
func scanTo(s *bufio.Scanner, prefix string) bool {
	for s.Scan() {
		if strings.HasPrefix(s.Text(), prefix) {
			return true
		}
	}
	return false
}

// waitQuiet waits until the file at path has not grown for quiet.
func waitQuiet(ctx context.Context, path string, quiet time.Duration) error {
	var size int64 = -1
	since := time.Now()
	for {
		fi, err := os.Stat(path)
		if err != nil {
			return err
		}
		if fi.Size() != size {
			size, since = fi.Size(), time.Now()
		} else if time.Since(since) >= quiet {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
