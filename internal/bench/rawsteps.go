package bench

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"time"

	"github.com/meshrti/meshrti/internal/cli"
)

// The raw floor of "bench timeadvance": n processes that each multicast
// one small datagram per step and wait for the step's datagram from every
// other process, in plain blocking UDP with no RTI. It is the same
// exchange a time step needs peer to peer (every federate hears every
// other's promise), so grants per second can be read against it.

// rawStepsGroup is the multicast group of the raw floor, on the loopback
// interface with TTL 0 like the data plane's defaults.
var rawStepsGroup = netip.AddrFrom4([4]byte{239, 255, 77, 77})

// rawSteps runs the floor with n child processes and returns their mean
// rate in steps per second.
func rawSteps(ctx context.Context, n, steps, port int) (float64, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type child struct {
		cmd  *exec.Cmd
		rate chan float64
	}
	var children []*child
	defer func() {
		cancel()
		for _, c := range children {
			c.cmd.Wait()
		}
	}()
	for i := 0; i < n; i++ {
		cmd := exec.CommandContext(ctx, self, "bench-raw", "steps", "-n", fmt.Sprint(n), "-id", fmt.Sprint(i),
			"-steps", fmt.Sprint(steps), "-port", fmt.Sprint(port))
		out, err := cmd.StdoutPipe()
		if err != nil {
			return 0, err
		}
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		c := &child{cmd: cmd, rate: make(chan float64, 1)}
		children = append(children, c)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				var r float64
				if _, err := fmt.Sscanf(sc.Text(), "rate %g", &r); err == nil {
					c.rate <- r
				}
			}
			close(c.rate)
		}()
	}
	var sum float64
	for i, c := range children {
		select {
		case r, ok := <-c.rate:
			if !ok {
				return 0, fmt.Errorf("raw floor: process %d reported no rate", i)
			}
			sum += r
		case <-ctx.Done():
			return 0, fmt.Errorf("raw floor: %w", ctx.Err())
		}
	}
	return sum / float64(n), nil
}

// runRawSteps is one process of the raw floor ("bench-raw steps"). It
// resends its current step every 20 ms while it waits, so a datagram sent
// before every process had joined the group does not stall the run, and
// keeps serving its last step after printing its rate until it is ended.
func runRawSteps(args []string, stdout, stderr io.Writer) int {
	cmd := cli.NewCmd("bench-raw steps", stdout, stderr)
	fs := cmd.FS
	n := fs.Int("n", 2, "processes")
	id := fs.Int("id", 0, "this process, 0..n-1")
	steps := fs.Int("steps", 2000, "measured steps")
	port := fs.Int("port", 0, "UDP port")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *n < 1 || *id < 0 || *id >= *n || *steps < 1 || *port <= 0 {
		fmt.Fprintln(stderr, "federate-node bench-raw steps: need -n >= 1, 0 <= -id < n, -steps >= 1, -port > 0")
		return 2
	}
	if err := rawStepsRun(*n, *id, *steps, *port, stdout); err != nil {
		return cmd.Fail(err)
	}
	return 0
}

func rawStepsRun(n, id, steps, port int, stdout io.Writer) error {
	c, rio, err := rawGroupConn(rawStepsGroup, port, 0)
	if err != nil {
		return err
	}
	defer c.Close()
	group := netip.AddrPortFrom(rawStepsGroup, uint16(port))
	got := make([]uint32, n)
	buf := make([]byte, 64)
	out := make([]byte, 8)
	send := func(s uint32) error {
		binary.LittleEndian.PutUint32(out, uint32(id))
		binary.LittleEndian.PutUint32(out[4:], s)
		return rio.write(out, group)
	}
	// step sends step s and waits for every other process's s, sending
	// it again whenever 20 ms pass without a datagram.
	step := func(s uint32) error {
		if err := send(s); err != nil {
			return err
		}
		for {
			done := true
			for j, g := range got {
				done = done && (j == id || g >= s)
			}
			if done {
				return nil
			}
			c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
			k, _, err := rio.read(buf)
			var ne net.Error
			switch {
			case errors.As(err, &ne) && ne.Timeout():
				if err := send(s); err != nil {
					return err
				}
			case err != nil:
				return err
			case k >= 8:
				if j := binary.LittleEndian.Uint32(buf); j < uint32(n) {
					got[j] = max(got[j], binary.LittleEndian.Uint32(buf[4:]))
				}
			}
		}
	}
	warmup := uint32(max(20, steps/10))
	var start time.Time
	for s := uint32(1); s <= warmup+uint32(steps); s++ {
		if s == warmup+1 {
			start = time.Now()
		}
		if err := step(s); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "rate %g\n", float64(steps)/time.Since(start).Seconds())
	// Keep resending the last step, so that the others finish too, until
	// the parent ends this process (or two minutes pass).
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		if err := send(warmup + uint32(steps)); err != nil {
			return err
		}
	}
	return nil
}
