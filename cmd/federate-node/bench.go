package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/meshrti/meshrti/peer"
)

// runBench measures the data plane between two processes on this host:
// it starts a pong federate in a child process (this same binary), runs
// the ping federate here, and prints the round-trip time of interaction
// ping-pongs and the rate of attribute updates the child reflected.
func runBench(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	count := fs.Int("count", 20000, "updates to send")
	size := fs.Int("size", 100, "payload bytes per update")
	port := fs.Int("mcast-port", 0, "UDP multicast port (default: derived from the process id)")
	timeout := fs.Duration("timeout", 2*time.Minute, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *port == 0 {
		*port = 43000 + os.Getpid()%8000
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, "federate-node bench:", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	federation := fmt.Sprintf("bench-%d", os.Getpid())
	child := exec.CommandContext(ctx, self, "node", "-role", "pong", "-name", "pong", "-create",
		"-federation", federation, "-mcast-port", fmt.Sprint(*port), "-timeout", timeout.String())
	child.Stderr = stderr
	out, err := child.StdoutPipe()
	if err != nil {
		fmt.Fprintln(stderr, "federate-node bench:", err)
		return 1
	}
	if err := child.Start(); err != nil {
		fmt.Fprintln(stderr, "federate-node bench:", err)
		return 1
	}
	defer func() {
		child.Process.Kill()
		child.Wait()
	}()
	lines := bufio.NewScanner(out)
	var seed string
	for lines.Scan() {
		if rest, ok := strings.CutPrefix(lines.Text(), "gossip "); ok {
			seed = strings.TrimSpace(rest)
			break
		}
	}
	if seed == "" {
		fmt.Fprintln(stderr, "federate-node bench: the pong process printed no gossip address")
		return 1
	}
	go io.Copy(io.Discard, out)
	nf := nodeFlags{federation: federation, name: "ping", role: "ping", gossip: "127.0.0.1:0", seeds: seed, mcastPort: *port}
	cfg, err := nf.config()
	if err != nil {
		fmt.Fprintln(stderr, "federate-node bench:", err)
		return 1
	}
	fed, err := peer.Join(ctx, cfg)
	if err != nil {
		fmt.Fprintln(stderr, "federate-node bench: join:", err)
		return 1
	}
	defer fed.Close()
	res, err := runPing(ctx, fed, *count, *size)
	if res != nil {
		fmt.Fprintf(stdout, "two processes over loopback multicast (TTL 0):\n")
		fmt.Fprintf(stdout, "  interaction ping-pong round trip: median %.0f us, p90 %.0f us (%d pings)\n", res.RTTMedianMicros, res.RTTP90Micros, res.Pings)
		fmt.Fprintf(stdout, "  attribute updates: %d of %d x %d bytes reflected in %.2f s: %.0f updates/s\n",
			res.Reflected, res.Updates, res.PayloadBytes, res.Seconds, res.UpdatesPerSec)
		b, _ := json.Marshal(res)
		fmt.Fprintf(stdout, "result %s\n", b)
	}
	if err != nil {
		fmt.Fprintln(stderr, "federate-node bench:", err)
		return 1
	}
	return 0
}
