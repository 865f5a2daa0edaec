package bench

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The floor of bench fedpro -mode throughput: the same exchange as
// through serve, with no protobuf and no RTI. A child process (bench-raw
// relay, the daemon) accepts client A and client B over TCP and holds two
// UDP sockets on loopback, one per client, as serve holds one federate
// per client. A sends a call, a 4-byte big-endian size and the value; the
// relay answers it with an 8-byte response and sends the value in a
// datagram from A's socket to B's; B's socket's reader writes it to B as
// a callback (size and value); B answers each callback with 8 bytes,
// which the relay reads. A makes one call at a time, as through serve.

// runRawRelay is the child side: it prints "port P", serves one A and one
// B (in that order of connection), and exits when A closes.
func runRawRelay(stdout, stderr io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintln(stderr, "federate-node bench-raw relay:", err)
		return 1
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fail(err)
	}
	defer l.Close()
	fmt.Fprintf(stdout, "port %d\n", l.Addr().(*net.TCPAddr).Port)
	ua, ub, err := rawPair()
	if err != nil {
		return fail(err)
	}
	defer ua.Close()
	defer ub.Close()
	a, err := l.Accept()
	if err != nil {
		return fail(err)
	}
	defer a.Close()
	b, err := l.Accept()
	if err != nil {
		return fail(err)
	}
	defer b.Close()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // B's datagrams become callbacks
		defer wg.Done()
		buf := make([]byte, 65536)
		for {
			n, _, err := ub.ReadFromUDPAddrPort(buf[4:])
			if err != nil {
				return
			}
			binary.BigEndian.PutUint32(buf, uint32(n))
			if _, err := b.Write(buf[:4+n]); err != nil {
				return
			}
		}
	}()
	go func() { // B's callback responses
		defer wg.Done()
		io.Copy(io.Discard, b)
	}()
	// A's calls, on this goroutine.
	r := bufio.NewReaderSize(a, 64<<10)
	to := ub.LocalAddr().(*net.UDPAddr).AddrPort()
	var resp [8]byte
	buf := make([]byte, 65536)
	for {
		call, err := readFrame(r, buf)
		if err != nil {
			break
		}
		if _, err := a.Write(resp[:]); err != nil {
			break
		}
		if _, err := ua.WriteToUDPAddrPort(call, to); err != nil {
			break
		}
	}
	ua.Close()
	ub.Close()
	b.Close()
	wg.Wait()
	return 0
}

// readFrame reads one call or callback from r into buf: a 4-byte
// big-endian size and the value, which it returns. A value larger than
// buf is an error.
func readFrame(r *bufio.Reader, buf []byte) ([]byte, error) {
	if _, err := io.ReadFull(r, buf[:4]); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint32(buf))
	if n > len(buf) {
		return nil, fmt.Errorf("a frame of %d bytes, more than %d", n, len(buf))
	}
	if _, err := io.ReadFull(r, buf[:n]); err != nil {
		return nil, err
	}
	return buf[:n], nil
}

// fedproFloorThroughput runs the relay in a child process and has A make
// count calls of size bytes, one at a time, to B: the rate B receives
// them at, and the relay's CPU per call (-1 without /proc).
func fedproFloorThroughput(ctx context.Context, count, size int, env []string) (perS, cpuPerUpdate float64, err error) {
	self, err := os.Executable()
	if err != nil {
		return 0, 0, err
	}
	cmd := exec.CommandContext(ctx, self, "bench-raw", "relay")
	cmd.Env = env
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	lines := bufio.NewScanner(out)
	var port int
	if !lines.Scan() {
		return 0, 0, errors.New("the relay printed nothing")
	}
	if _, err := fmt.Sscanf(strings.TrimSpace(lines.Text()), "port %d", &port); err != nil {
		return 0, 0, fmt.Errorf("the relay printed %q", lines.Text())
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	a, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, 0, err
	}
	defer a.Close()
	b, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, 0, err
	}
	defer b.Close()
	if dl, ok := ctx.Deadline(); ok {
		a.SetDeadline(dl)
		b.SetDeadline(dl)
	}
	var got atomic.Int64
	var want atomic.Int64
	all := make(chan struct{}, 1)
	bdone := make(chan struct{})
	go func() { // B answers every callback
		defer close(bdone)
		r := bufio.NewReaderSize(b, 64<<10)
		var ack [8]byte
		buf := make([]byte, 65536)
		for {
			if _, err := readFrame(r, buf); err != nil {
				return
			}
			if _, err := b.Write(ack[:]); err != nil {
				return
			}
			if got.Add(1) == want.Load() {
				all <- struct{}{}
			}
		}
	}()
	call := make([]byte, 4+max(size, 1))
	binary.BigEndian.PutUint32(call, uint32(len(call)-4))
	var resp [8]byte
	run := func(n int) (time.Duration, error) {
		got.Store(0)
		want.Store(int64(n))
		start := time.Now()
		for range n {
			if _, err := a.Write(call); err != nil {
				return 0, err
			}
			if _, err := io.ReadFull(a, resp[:]); err != nil {
				return 0, err
			}
		}
		select {
		case <-all:
		case <-bdone:
			return 0, errors.New("the receiving client's connection ended")
		case <-ctx.Done():
			return 0, fmt.Errorf("the receiving client got %d of %d: %w", got.Load(), n, ctx.Err())
		}
		return time.Since(start), nil
	}
	if _, err := run(min(count/10+1, 1000)); err != nil { // warm up
		return 0, 0, err
	}
	before := procCPU(cmd.Process.Pid)
	elapsed, err := run(count)
	if err != nil {
		return 0, 0, err
	}
	after := procCPU(cmd.Process.Pid)
	cpuPerUpdate = -1
	if before >= 0 && after >= 0 {
		cpuPerUpdate = float64((after - before).Nanoseconds()) / 1e3 / float64(count)
	}
	a.Close()
	b.Close()
	<-bdone
	return float64(count) / elapsed.Seconds(), cpuPerUpdate, nil
}
