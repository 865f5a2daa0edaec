//go:build linux

package lab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/meshrti/meshrti/testnet/tracecheck"
)

// RunConfig is one run of the campaign: a seed, the lab's size, the
// workload and the faults.
type RunConfig struct {
	Seed uint64
	// Binary is the federate-node to run; Dir where the run's traces,
	// history and result go.
	Binary, Dir string
	Hosts       int
	// Transport is the data plane: "multicast" or "unicast".
	Transport string
	// Faults is how many faults to draw, within FaultSpan after a quiet
	// start; each lasts at most MaxFault.
	Faults              int
	FaultSpan, MaxFault time.Duration
	Kinds               []FaultKind
	// StepDelay paces the time-stepped federates; they step until well
	// after the last fault is healed.
	StepDelay time.Duration
	// HealBound is the liveness bound: after every heal (a fault's end),
	// every federate that runs on is granted again within it.
	HealBound time.Duration
}

// Result is what a run did and found.
type Result struct {
	Seed      uint64  `json:"seed"`
	Transport string  `json:"transport"`
	Faults    []Fault `json:"faults"`
	// Operations: time steps granted, messages sent and delivered,
	// messages the trace checker found owed, restarts of processes.
	Grants     int `json:"grants"`
	Sends      int `json:"sends"`
	Deliveries int `json:"deliveries"`
	Owed       int `json:"owed"`
	Restarts   int `json:"restarts"`
	// Lab sums the workload of every process that finished.
	Lab LabCounts `json:"lab"`
	// Removed lists the federates the federation removed as lost (each
	// one told so), in the order their processes ended.
	Removed []string `json:"removed"`
	// HealToGrant is, per fault, the longest wait of a running federate
	// from the fault's end to its next grant.
	HealToGrant    []time.Duration `json:"heal_to_grant_ns"`
	MaxHealToGrant time.Duration   `json:"max_heal_to_grant_ns"`
	// Violations: what the checkers found; empty for a run that passed.
	Violations []string      `json:"violations"`
	Elapsed    time.Duration `json:"elapsed_ns"`
}

// Failed reports whether the run broke a rule.
func (r *Result) Failed() bool { return len(r.Violations) > 0 }

func (r *Result) violate(format string, args ...any) {
	r.Violations = append(r.Violations, fmt.Sprintf(format, args...))
}

// tickRes is the result line of `node -role lab` (cmd/federate-node).
type tickRes struct {
	Time        float64            `json:"time"`
	Grants      int                `json:"grants"`
	Reflections map[string]int     `json:"reflections"`
	LastTime    map[string]float64 `json:"lastTime"`
	OutOfOrder  int                `json:"outOfOrder"`
	Lost        []string           `json:"lost"`
	Lab         LabCounts          `json:"lab"`
}

// LabCounts is what the lab role's workload did besides its time steps:
// ownership asked for, acquired, given up when asked and unconditionally;
// interactions sent and received with regions that move;
// synchronization points registered, announced and synchronized.
type LabCounts struct {
	Asked        int `json:"asked"`
	Acquired     int `json:"acquired"`
	Unavailable  int `json:"unavailable"`
	Released     int `json:"released"`
	Divested     int `json:"divested"`
	BlobsSent    int `json:"blobsSent"`
	Refused      int `json:"refused"`
	ContactsSent int `json:"contactsSent"`
	Contacts     int `json:"contacts"`
	Registered   int `json:"registered"`
	Announced    int `json:"announced"`
	Synchronized int `json:"synchronized"`
}

func (c *LabCounts) add(o LabCounts) {
	c.Asked += o.Asked
	c.Acquired += o.Acquired
	c.Unavailable += o.Unavailable
	c.Released += o.Released
	c.Divested += o.Divested
	c.BlobsSent += o.BlobsSent
	c.Refused += o.Refused
	c.ContactsSent += o.ContactsSent
	c.Contacts += o.Contacts
	c.Registered += o.Registered
	c.Announced += o.Announced
	c.Synchronized += o.Synchronized
}

// member is one federate name of the run, in one host: its processes,
// the first first, and their traces.
type member struct {
	name   string
	host   *Host
	mu     sync.Mutex
	procs  []*Proc
	traces []string
}

// cur is the member's latest process.
func (m *member) cur() *Proc {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.procs[len(m.procs)-1]
}

// supervisor starts the members' processes and starts again, under the
// same name, a federate the federation removed: its process ends told
// so, and it comes back as a new federate. A start that meets the name
// still in use (the federation has not yet removed the federate of a
// killed process), or that could not join (no majority reachable), is
// tried again a moment later, as a service manager would.
type supervisor struct {
	lab   *Lab
	res   *Result
	start func(m *member, h *Host, create bool) (*Proc, string, error)

	mu       sync.Mutex
	stopping bool
	wg       sync.WaitGroup
}

// launch starts a process for m and watches it.
func (sv *supervisor) launch(m *member, create bool) error {
	p, trace, err := sv.start(m, m.host, create)
	if err != nil {
		return err
	}
	m.mu.Lock()
	if len(m.procs) > 0 {
		sv.res.Restarts++
	}
	m.procs = append(m.procs, p)
	m.traces = append(m.traces, trace)
	m.mu.Unlock()
	sv.wg.Add(1)
	go sv.watch(m, p)
	return nil
}

func (sv *supervisor) watch(m *member, p *Proc) {
	defer sv.wg.Done()
	<-p.Exited()
	removed, inUse, noJoin := exitedRemoved(p), exitedNameInUse(p), exitedJoinFailed(p)
	if !removed && !inUse && !noJoin {
		return
	}
	time.Sleep(time.Second)
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.stopping {
		return
	}
	if removed {
		sv.res.Removed = append(sv.res.Removed, m.name)
		sv.lab.Record("removed", map[string]any{"proc": m.name})
	}
	if err := sv.launch(m, false); err != nil {
		sv.res.violate("restart %s: %v", m.name, err)
	}
}

// current returns each member's latest process.
func (sv *supervisor) current(ms []*member) []*Proc {
	out := make([]*Proc, len(ms))
	for k, m := range ms {
		out[k] = m.cur()
	}
	return out
}

// finish waits until m's latest process printed its result and returns
// it; a process that ends without one and is started again is waited
// for in turn. Once one member finished, the supervisor starts no
// more: a federate started then would wait for peers that are gone.
func (sv *supervisor) finish(ctx context.Context, m *member) (string, error) {
	for {
		p := m.cur()
		select {
		case <-p.Exited():
		case <-ctx.Done():
			return "", fmt.Errorf("%s still running: %w", p.Name, ctx.Err())
		}
		line, err := p.WaitLine(ctx, "result ")
		if err == nil && p.Err() == nil {
			sv.mu.Lock()
			sv.stopping = true
			sv.mu.Unlock()
			return line, nil
		}
		if err == nil {
			err = p.Err()
		}
		time.Sleep(1500 * time.Millisecond) // a restart may be coming
		if m.cur() == p {
			return "", err
		}
	}
}

// stop waits for the watchers.
func (sv *supervisor) stop() {
	sv.mu.Lock()
	sv.stopping = true
	sv.mu.Unlock()
	sv.wg.Wait()
}

// Run runs one seed: a lab of cfg.Hosts hosts, a `node -role lab`
// federate in each (time steps, ownership contention, moving regions,
// synchronization points), the seed's faults injected from outside
// while they step, every fault healed; then the checkers: the trace
// checker over every process's trace, the federation's agreement on who
// was lost, every update of every federate that stayed a member at every
// other, and the liveness bound after each heal. A restarted or removed
// federate's process is started again under its name (a new federate)
// after the fault ends.
func Run(ctx context.Context, cfg RunConfig) (*Result, error) {
	res := &Result{Seed: cfg.Seed, Transport: cfg.Transport}
	began := time.Now()
	defer func() { res.Elapsed = time.Since(began) }()
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, err
	}
	hf, err := os.Create(filepath.Join(cfg.Dir, "history.jsonl"))
	if err != nil {
		return nil, err
	}
	defer hf.Close()
	hist := NewHistory(hf)
	l, err := New(cfg.Hosts, hist)
	if err != nil {
		return nil, err
	}
	defer l.Close()

	quiet := 2 * time.Second
	res.Faults = Schedule(cfg.Seed, ScheduleConfig{Hosts: cfg.Hosts, Quiet: quiet, Within: cfg.FaultSpan, MaxFor: cfg.MaxFault, Faults: cfg.Faults, Kinds: cfg.Kinds})
	l.Record("schedule", map[string]any{"seed": cfg.Seed, "faults": res.Faults})
	// Steps enough to go on well after the last fault's end.
	steps := int((quiet+cfg.FaultSpan+8*time.Second)/cfg.StepDelay) + 20
	federation := fmt.Sprintf("lab-%d", cfg.Seed)
	// Any member is a seed: a process started again (N1's too) joins
	// through whoever is up (its own address is left out).
	var seeds []string
	for _, h := range l.Hosts {
		seeds = append(seeds, h.Addr+":7946")
	}
	seed := strings.Join(seeds, ",")
	sv := &supervisor{lab: l, res: res}
	sv.start = func(m *member, h *Host, create bool) (*Proc, string, error) {
		m.mu.Lock()
		started := len(m.procs)
		m.mu.Unlock()
		trace := filepath.Join(cfg.Dir, fmt.Sprintf("%s-%d.jsonl", m.name, started+1))
		// The first processes wait for each other before stepping; a
		// process started again joins a federation under way, whose
		// members wait for it (its time is theirs): it does not wait.
		peers := cfg.Hosts
		if started > 0 {
			peers = 1
		}
		args := []string{"node", "-role", "lab", "-name", m.name, "-federation", federation,
			"-gossip", h.Addr + ":7946", "-iface", "veth0", "-ttl", "1", "-mcast-port", "47470",
			"-transport", cfg.Transport, "-peers", strconv.Itoa(peers), "-steps", strconv.Itoa(steps),
			"-step-delay", cfg.StepDelay.String(), "-timeout", "10m", "-trace", trace}
		if cfg.Transport == "unicast" {
			args = append(args, "-advertise", h.Addr+":0")
		}
		if create {
			args = append(args, "-create")
		} else {
			args = append(args, "-seeds", seed)
		}
		log := strings.TrimSuffix(trace, ".jsonl") + ".log"
		p, err := l.Start(ctx, h, m.name, cfg.Binary, log, args...)
		return p, trace, err
	}
	members := make([]*member, cfg.Hosts)
	for k, h := range l.Hosts {
		members[k] = &member{name: fmt.Sprintf("N%d", k+1), host: h}
		if err := sv.launch(members[k], k == 0); err != nil {
			return nil, err
		}
		if k == 0 {
			if _, err := members[0].cur().WaitLine(ctx, "gossip "); err != nil {
				return nil, err
			}
		}
	}
	for _, m := range members {
		if _, err := m.cur().WaitLine(ctx, "ready "); err != nil {
			return nil, fmt.Errorf("start: %w", err)
		}
	}
	t0 := l.Since()
	l.Record("ready", nil)

	// The faults, one after the other. A killed process is started again
	// at its fault's end; the supervisor starts again a federate the
	// federation removed (its process ends told so) whenever that ends.
	for _, f := range res.Faults {
		if err := sleepUntil(ctx, l, t0+f.At); err != nil {
			return nil, err
		}
		procs := sv.current(members)
		err := l.Inject(f, procs)
		if err != nil && !errors.Is(err, ErrGone) {
			return nil, fmt.Errorf("inject %v: %w", f, err)
		}
		gone := err != nil
		if err := sleepUntil(ctx, l, t0+f.End()); err != nil {
			return nil, err
		}
		switch {
		case gone:
		case f.Kind == Pause:
			procs[f.Hosts[0]].Signal(syscall.SIGCONT)
		case f.Kind == Kill:
			<-procs[f.Hosts[0]].Exited()
			if err := sv.launch(members[f.Hosts[0]], false); err != nil {
				return nil, err
			}
		default:
			if err := l.Heal(); err != nil {
				return nil, err
			}
		}
	}

	// Every federate's last process finishes its steps; the supervisor
	// starts no more once one has.
	results := make([]tickRes, len(members))
	for k, m := range members {
		line, err := sv.finish(ctx, m)
		if err == nil {
			err = json.Unmarshal([]byte(line), &results[k])
		}
		if err != nil {
			res.violate("%s did not finish: %v", m.name, err)
		}
	}
	sv.stop()
	for _, m := range members {
		<-m.cur().Exited()
		if err := m.cur().Err(); err != nil {
			res.violate("%s ended with %v", m.name, err)
		}
	}
	judge(res, cfg, members, results, t0)
	return res, writeResult(cfg.Dir, res)
}

// judge applies the checkers to a finished run.
func judge(res *Result, cfg RunConfig, members []*member, results []tickRes, t0 time.Duration) {
	// The trace checker, over every process's trace.
	var rs []io.Reader
	var files []*os.File
	for _, m := range members {
		for _, t := range m.traces {
			f, err := os.Open(t)
			if err != nil {
				res.violate("trace %s: %v", t, err)
				continue
			}
			files = append(files, f)
			rs = append(rs, f, strings.NewReader("\n"))
		}
	}
	rep, err := tracecheck.CheckReport(io.MultiReader(rs...))
	for _, f := range files {
		f.Close()
	}
	if err != nil {
		res.violate("trace: %v", err)
	}
	res.Sends, res.Deliveries, res.Grants, res.Owed = rep.Sends, rep.Deliveries, rep.Grants, rep.Owed
	for _, v := range rep.Violations {
		res.violate("trace: %v", v)
	}

	for _, r := range results {
		res.Lab.add(r.Lab)
	}
	// Federates that stayed members all along agree on who was lost
	// (each name once per removal, the federation's decisions) and got
	// every update of each other.
	var kept []int
	for k, m := range members {
		if len(m.procs) == 1 {
			kept = append(kept, k)
		}
	}
	// Each process that joined and did not finish (killed, or removed and
	// told) was one federate lost: the federation removes each once.
	gone := map[string]int{}
	for _, m := range members {
		for _, p := range m.procs {
			if p.Printed("joined ") && p.Err() != nil {
				gone[m.name]++
			}
		}
	}
	for _, k := range kept {
		lost := map[string]int{}
		for _, n := range results[k].Lost {
			lost[n]++
		}
		for _, m := range members {
			if c, want := lost[m.name], gone[m.name]; c != want {
				res.violate("%s reports %s lost %d times; %d of its processes joined and ended before finishing", members[k].name, m.name, c, want)
			}
		}
		for _, j := range kept {
			if j == k {
				continue
			}
			if got, want := results[k].Reflections[members[j].name], int(results[j].Time); got != want {
				res.violate("%s reflected %d updates of %s, which sent %d and stayed a member", members[k].name, got, members[j].name, want)
			}
		}
		if results[k].OutOfOrder != 0 {
			res.violate("%s reflected %d updates out of time-stamp order", members[k].name, results[k].OutOfOrder)
		}
		// Every point announced to it was synchronized, but perhaps
		// the last (registered near the end).
		if c := results[k].Lab; c.Synchronized < c.Announced-1 {
			res.violate("%s was announced %d synchronization points and synchronized %d", members[k].name, c.Announced, c.Synchronized)
		}
	}

	// Liveness: after each fault's end, every federate running then is
	// granted again within the bound (or had finished).
	for _, f := range res.Faults {
		end := t0 + f.End()
		var worst time.Duration
		for _, m := range members {
			for _, p := range m.procs {
				next, running := nextGrant(p, end)
				if !running {
					continue
				}
				if next < 0 {
					res.violate("%s never granted again after %v ended", m.name, f)
					continue
				}
				worst = max(worst, next)
			}
		}
		res.HealToGrant = append(res.HealToGrant, worst)
		res.MaxHealToGrant = max(res.MaxHealToGrant, worst)
		if worst > cfg.HealBound {
			res.violate("a federate waited %v for a grant after %v ended (bound %v)", worst.Round(time.Millisecond), f, cfg.HealBound)
		}
	}
}

// nextGrant returns how long after end process p printed its next
// grant, and whether p was running at end and not done with its steps
// (-1: it never printed one again).
func nextGrant(p *Proc, end time.Duration) (time.Duration, bool) {
	lines := p.Lines()
	if len(lines) == 0 || lines[0].At > end {
		return 0, false // started later
	}
	for _, l := range lines {
		if l.At <= end {
			if strings.HasPrefix(l.Text, "result ") {
				return 0, false // finished before
			}
			continue
		}
		if strings.HasPrefix(l.Text, "granted ") {
			return l.At - end, true
		}
		if strings.HasPrefix(l.Text, "result ") {
			return 0, false // ended without stepping again: checked elsewhere
		}
	}
	if p.Err() != nil {
		return 0, false // removed or killed: checked elsewhere
	}
	return -1, true
}

// exitedRemoved reports whether p ended told that the federation removed
// its federate.
func exitedRemoved(p *Proc) bool {
	select {
	case <-p.Exited():
	default:
		return false
	}
	err := p.Err()
	return err != nil && !p.Killed() && (strings.Contains(err.Error(), "connection lost") || strings.Contains(err.Error(), "not connected"))
}

// exitedJoinFailed reports whether p ended because it could not join
// (started again while its host was cut off, it found no majority to
// admit it): a service manager starts it again (the systemd unit's
// Restart=on-failure), and so does the lab.
func exitedJoinFailed(p *Proc) bool {
	err := p.Err()
	return err != nil && !p.Killed() && strings.Contains(err.Error(), "federate-node node: join: ")
}

// exitedNameInUse reports whether p ended because its federate's name
// was still held (by a killed incarnation the federation has not yet
// removed).
func exitedNameInUse(p *Proc) bool {
	err := p.Err()
	return err != nil && strings.Contains(err.Error(), "name already in use")
}

func sleepUntil(ctx context.Context, l *Lab, at time.Duration) error {
	if d := at - l.Since(); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func writeResult(dir string, res *Result) error {
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "result.json"), append(b, '\n'), 0o644)
}
