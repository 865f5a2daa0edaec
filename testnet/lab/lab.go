//go:build linux

package lab

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/meshrti/meshrti/internal/netns"
	"github.com/meshrti/meshrti/peer"
)

// Lab is a set of hosts, each a network namespace with one veth on a
// bridge of its own namespace, all on one /24: nothing is created in,
// or routed to, the namespace the lab runs in. Processes run in a host
// with `ip netns exec`; faults are iptables rules inside the hosts and
// signals to the processes. Every fault goes into the lab's history.
type Lab struct {
	Hosts []*Host

	prefix string
	bridge string
	start  time.Time
	hist   *History

	mu    sync.Mutex
	made  []string // namespaces, to remove
	procs []*Proc
}

// Host is one namespace of the lab.
type Host struct {
	Index int
	NS    string
	Addr  string
}

// ErrGone is returned by Inject for a process fault whose process had
// ended already (the federation removed it meanwhile): nothing was done.
var ErrGone = errors.New("lab: the process had ended")

// ErrUnavailable is returned by New when this machine cannot build a lab
// (not root, no ip or iptables, no namespaces): tests skip on it.
var ErrUnavailable = errors.New("lab: network namespaces unavailable here")

// labName matches the lab's namespaces, "mrl<pid>x<n>-": leftovers of a
// process that is gone are removed by New.
var labName = regexp.MustCompile(`^mrl([0-9]+)x[0-9]+-`)

var labCount struct {
	sync.Mutex
	n int
}

// New builds a lab of n hosts on subnet 10.<net>.<x>.0/24, x chosen per
// lab so that labs of one process do not share addresses. Its history
// goes to hist (nil: none kept).
func New(n int, hist *History) (*Lab, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: not root", ErrUnavailable)
	}
	for _, tool := range []string{"ip", "iptables"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("%w: no %s", ErrUnavailable, tool)
		}
	}
	netns.RemoveStale(labName, true)
	labCount.Lock()
	labCount.n++
	id := labCount.n
	labCount.Unlock()
	l := &Lab{prefix: fmt.Sprintf("mrl%dx%d-", os.Getpid(), id), start: time.Now(), hist: hist}
	l.bridge = l.prefix + "br"
	if err := l.netns(l.bridge); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	net := 100 + id%100
	steps := [][]string{
		{"-n", l.bridge, "link", "set", "lo", "up"},
		{"-n", l.bridge, "link", "add", "br0", "type", "bridge", "mcast_snooping", "0"},
		{"-n", l.bridge, "link", "set", "br0", "up"},
	}
	for _, s := range steps {
		if _, err := netns.IP(s...); err != nil {
			l.Close()
			return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
	}
	for k := range n {
		h := &Host{Index: k, NS: fmt.Sprintf("%sh%d", l.prefix, k+1), Addr: fmt.Sprintf("10.215.%d.%d", net, 10+k)}
		if err := l.netns(h.NS); err != nil {
			l.Close()
			return nil, err
		}
		port := fmt.Sprintf("p%d", k+1)
		for _, s := range [][]string{
			{"-n", h.NS, "link", "add", "veth0", "type", "veth", "peer", "name", port, "netns", l.bridge},
			{"-n", l.bridge, "link", "set", port, "master", "br0"},
			{"-n", l.bridge, "link", "set", port, "up"},
			{"-n", h.NS, "link", "set", "lo", "up"},
			{"-n", h.NS, "addr", "add", h.Addr + "/24", "dev", "veth0"},
			{"-n", h.NS, "link", "set", "veth0", "up"},
			{"-n", h.NS, "route", "add", "224.0.0.0/4", "dev", "veth0"},
		} {
			if _, err := netns.IP(s...); err != nil {
				l.Close()
				return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
			}
		}
		if _, err := netns.IP("netns", "exec", h.NS, "iptables", "-S"); err != nil {
			l.Close()
			return nil, fmt.Errorf("%w: iptables in a namespace: %v", ErrUnavailable, err)
		}
		l.Hosts = append(l.Hosts, h)
	}
	return l, nil
}

func (l *Lab) netns(name string) error {
	if _, err := netns.IP("netns", "add", name); err != nil {
		return err
	}
	l.mu.Lock()
	l.made = append(l.made, name)
	l.mu.Unlock()
	return nil
}

// Since is the time since the lab was made: the clock of its history.
func (l *Lab) Since() time.Duration { return time.Since(l.start) }

// Record writes an entry into the lab's history.
func (l *Lab) Record(ev string, fields map[string]any) {
	if l.hist != nil {
		l.hist.Add(l.Since(), ev, fields)
	}
}

// Close kills every process the lab started and removes its namespaces.
func (l *Lab) Close() {
	l.mu.Lock()
	procs, made := l.procs, l.made
	l.procs, l.made = nil, nil
	l.mu.Unlock()
	for _, p := range procs {
		p.cmd.Process.Signal(syscall.SIGCONT)
		p.cmd.Process.Kill()
		<-p.exited
	}
	for i := len(made) - 1; i >= 0; i-- {
		netns.Remove(made[i])
	}
}

// iptables runs iptables in host h.
func (l *Lab) iptables(h *Host, args ...string) error {
	_, err := netns.IP(append([]string{"netns", "exec", h.NS, "iptables"}, args...)...)
	return err
}

// Inject applies fault f to the hosts (the process faults, Kill and
// Pause, act on procs[host], which the caller restarts or resumes), and
// records it.
func (l *Lab) Inject(f Fault, procs []*Proc) error {
	l.Record("fault", map[string]any{"fault": f.String(), "kind": string(f.Kind), "hosts": f.Hosts, "p": f.P, "for_ms": f.For.Milliseconds()})
	h := func(i int) *Host { return l.Hosts[i] }
	prob := strconv.FormatFloat(f.P, 'f', 3, 64)
	switch f.Kind {
	case HostLoss:
		return l.iptables(h(f.Hosts[0]), "-A", "INPUT", "-s", subnet(h(0).Addr), "-m", "statistic", "--mode", "random", "--probability", prob, "-j", "DROP")
	case LinkLoss:
		return l.iptables(h(f.Hosts[1]), "-A", "INPUT", "-s", h(f.Hosts[0]).Addr, "-m", "statistic", "--mode", "random", "--probability", prob, "-j", "DROP")
	case OneWay:
		return l.iptables(h(f.Hosts[1]), "-A", "INPUT", "-s", h(f.Hosts[0]).Addr, "-j", "DROP")
	case Partition:
		in := map[int]bool{}
		for _, i := range f.Hosts {
			in[i] = true
		}
		for _, a := range l.Hosts {
			for _, b := range l.Hosts {
				if in[a.Index] != in[b.Index] {
					if err := l.iptables(b, "-A", "INPUT", "-s", a.Addr, "-j", "DROP"); err != nil {
						return err
					}
				}
			}
		}
		return nil
	case Duplicate:
		return l.iptables(h(f.Hosts[0]), "-t", "mangle", "-A", "OUTPUT", "-o", "veth0", "-j", "TEE", "--gateway", h(f.Hosts[1]).Addr)
	case Kill, Pause:
		p := procs[f.Hosts[0]]
		select {
		case <-p.Exited():
			l.Record("skipped", map[string]any{"proc": p.Name, "why": "its process had ended"})
			return ErrGone
		default:
		}
		if f.Kind == Kill {
			return p.Signal(syscall.SIGKILL)
		}
		return p.Signal(syscall.SIGSTOP)
	}
	return fmt.Errorf("lab: unknown fault kind %q", f.Kind)
}

// Heal removes every rule of every host, and records it.
func (l *Lab) Heal() error {
	var errs []error
	for _, h := range l.Hosts {
		errs = append(errs, l.iptables(h, "-F", "INPUT"), l.iptables(h, "-t", "mangle", "-F", "OUTPUT"))
	}
	l.Record("heal", nil)
	return errors.Join(errs...)
}

func subnet(addr string) string {
	i := strings.LastIndexByte(addr, '.')
	return addr[:i] + ".0/24"
}

// Proc is a process started in a host, its output lines timestamped on
// the lab's clock.
type Proc struct {
	Name string
	Host *Host
	lab  *Lab
	cmd  *exec.Cmd

	mu     sync.Mutex
	lines  []Line
	more   chan struct{} // closed and replaced when a line comes
	exited chan struct{} // closed once the process ended; err is set then
	err    error
	killed bool // the lab sent it SIGKILL
}

// Line is one output line of a process and when the lab read it.
type Line struct {
	At   time.Duration
	Text string
}

// Start runs binary with args in host h as name; ctx ends it: SIGQUIT
// first (a Go program prints every goroutine's stack), SIGKILL a second
// later. With log set, the process's output, both streams, goes there
// too.
func (l *Lab) Start(ctx context.Context, h *Host, name, binary, log string, args ...string) (*Proc, error) {
	cmd := exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", h.NS, binary}, args...)...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGQUIT) }
	cmd.WaitDelay = time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	var logw io.Writer = io.Discard
	var logf *os.File
	if log != "" {
		if logf, err = os.Create(log); err != nil {
			return nil, err
		}
		// Written by two goroutines (stderr's copy and the stdout
		// scanner): peer's locked trace writer serializes them.
		logw = peer.NewTraceWriter(logf)
	}
	cmd.Stderr = io.MultiWriter(&stderr, logw)
	if err = cmd.Start(); err != nil {
		if logf != nil {
			logf.Close()
		}
		return nil, err
	}
	p := &Proc{Name: name, Host: h, lab: l, cmd: cmd, more: make(chan struct{}), exited: make(chan struct{})}
	l.mu.Lock()
	l.procs = append(l.procs, p)
	l.mu.Unlock()
	l.Record("start", map[string]any{"proc": name, "host": h.Index, "pid": cmd.Process.Pid})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			at := l.Since()
			fmt.Fprintf(logw, "%8.3f %s\n", at.Seconds(), sc.Text())
			p.mu.Lock()
			p.lines = append(p.lines, Line{At: at, Text: sc.Text()})
			close(p.more)
			p.more = make(chan struct{})
			p.mu.Unlock()
		}
		err := cmd.Wait()
		if err != nil {
			err = fmt.Errorf("%s: %w: %s", name, err, strings.TrimSpace(stderr.String()))
		}
		p.mu.Lock()
		p.err = err
		close(p.exited)
		p.mu.Unlock()
		l.Record("exit", map[string]any{"proc": name, "err": fmt.Sprint(err)})
		if logf != nil {
			logf.Close() // Wait has copied the last of stderr
		}
	}()
	return p, nil
}

// Signal sends sig to the process.
func (p *Proc) Signal(sig syscall.Signal) error {
	p.lab.Record("signal", map[string]any{"proc": p.Name, "signal": sig.String()})
	if sig == syscall.SIGKILL {
		p.mu.Lock()
		p.killed = true
		p.mu.Unlock()
	}
	return p.cmd.Process.Signal(sig)
}

// Killed reports whether the lab sent the process SIGKILL.
func (p *Proc) Killed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.killed
}

// Printed reports whether the process printed a line with prefix.
func (p *Proc) Printed(prefix string) bool {
	for _, l := range p.Lines() {
		if strings.HasPrefix(l.Text, prefix) {
			return true
		}
	}
	return false
}

// Lines returns the lines read so far.
func (p *Proc) Lines() []Line {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Line(nil), p.lines...)
}

// WaitLine waits until the process printed a line with prefix (from the
// first line on) and returns the rest of it.
func (p *Proc) WaitLine(ctx context.Context, prefix string) (string, error) {
	seen := 0
	for {
		p.mu.Lock()
		for _, l := range p.lines[seen:] {
			if rest, ok := strings.CutPrefix(l.Text, prefix); ok {
				p.mu.Unlock()
				return rest, nil
			}
		}
		seen = len(p.lines)
		more, exited := p.more, p.exited
		p.mu.Unlock()
		select {
		case <-more:
		case <-exited:
			// A last line may have come with the exit.
			if rest, ok := p.lastLine(prefix); ok {
				return rest, nil
			}
			return "", fmt.Errorf("%s ended before printing %q: %v", p.Name, prefix, p.Err())
		case <-ctx.Done():
			return "", fmt.Errorf("%s: no %q line: %w", p.Name, prefix, ctx.Err())
		}
	}
}

func (p *Proc) lastLine(prefix string) (string, bool) {
	for _, l := range p.Lines() {
		if rest, ok := strings.CutPrefix(l.Text, prefix); ok {
			return rest, true
		}
	}
	return "", false
}

// Exited is closed once the process ended.
func (p *Proc) Exited() <-chan struct{} { return p.exited }

// Err is how the process ended (nil: exit status 0, or still running).
func (p *Proc) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}
