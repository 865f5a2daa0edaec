//go:build linux

package lab

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/meshrti/meshrti/internal/tick"
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
	// FedPro: the last host runs its federate as a `serve` daemon and a
	// Go Federate Protocol client (`node -role tick -fedpro`) rather than
	// as a `node -role lab`. The process faults (kill, pause) of that
	// host act on the daemon, which holds the federate; the client ends
	// with its daemon and starts again with a new one.
	FedPro bool
	// SaveRestore: the federation saves before the schedule's first kill
	// and restores that save once the killed process runs again (its new
	// federate restores as the killed one). The lab-role federates
	// contend for ownership across the save and the restore as in any
	// other run.
	SaveRestore bool
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
	// Saves and Restores count the federation saves and restores done
	// (RunConfig.SaveRestore); NotSaved the saves the federation refused
	// or failed (no restore follows one).
	Saves    int `json:"saves"`
	Restores int `json:"restores"`
	NotSaved int `json:"not_saved"`
	// NotRestored counts the restores the federation kept refusing
	// because its federates had changed since the save (one removed and
	// started again as a new federate meanwhile, besides the killed one).
	NotRestored int `json:"not_restored"`
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

// LabCounts is what the lab role's workload did besides its time steps
// (package tick, whose result line `node -role lab` prints): ownership
// asked for, acquired, given up when asked and unconditionally;
// interactions sent and received with regions that move;
// synchronization points registered, announced and synchronized.
type LabCounts = tick.LabCounts

// member is one federate name of the run, in one host: its processes,
// the first first, and their traces.
type member struct {
	name   string
	host   *Host
	fedpro bool // run through a serve daemon (RunConfig.FedPro)
	mu     sync.Mutex
	procs  []*Proc
	traces []string
	// daemons are a fedpro member's serve processes, the first first.
	daemons []*Proc
}

// daemon is a fedpro member's latest serve process, nil for the others.
func (m *member) daemon() *Proc {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.daemons) == 0 {
		return nil
	}
	return m.daemons[len(m.daemons)-1]
}

// target is the process that holds m's federate: the process faults
// act on it.
func (m *member) target() *Proc {
	if d := m.daemon(); d != nil {
		return d
	}
	return m.cur()
}

// daemonGone reports whether m runs through a daemon that has ended
// (killed): its client ended with it, and Run starts both again.
func (m *member) daemonGone() bool {
	d := m.daemon()
	if d == nil {
		return false
	}
	select {
	case <-d.Exited():
		return true
	default:
		return false
	}
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
	if trace != "" {
		m.traces = append(m.traces, trace)
	}
	m.mu.Unlock()
	sv.wg.Add(1)
	go sv.watch(m, p)
	return nil
}

func (sv *supervisor) watch(m *member, p *Proc) {
	defer sv.wg.Done()
	<-p.Exited()
	removed, inUse, noJoin := exitedRemoved(p), exitedNameInUse(p), exitedJoinFailed(p)
	if (!removed && !inUse && !noJoin) || m.daemonGone() {
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

// targets returns the process that holds each member's federate.
func (sv *supervisor) targets(ms []*member) []*Proc {
	out := make([]*Proc, len(ms))
	for k, m := range ms {
		out[k] = m.target()
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
// synchronization points) but, with cfg.FedPro, the last, whose
// time-stepped federate a `serve` daemon hosts for a Federate Protocol
// client (its trace is the daemon's), the seed's faults injected from outside
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
		if m.fedpro {
			return startFedPro(ctx, l, cfg, m, h, federation, seed, started, steps)
		}
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
			"-step-delay", cfg.StepDelay.String(), "-timeout", "10m", "-trace", trace,
			"-save-dir", filepath.Join(cfg.Dir, "saves-"+m.name)}
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
		members[k] = &member{name: fmt.Sprintf("N%d", k+1), host: h, fedpro: cfg.FedPro && k > 0 && k == len(l.Hosts)-1}
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
	killAt := -1
	if cfg.SaveRestore {
		killAt = slices.IndexFunc(res.Faults, func(f Fault) bool { return f.Kind == Kill })
	}
	// A fault whose recovery outlasts the schedule's settle (a save and a
	// restore around a kill take seconds) pushes the faults after it
	// back by as much: each still meets a federation that recovered
	// from the last, rather than two falling due at once. ends holds
	// each fault's end as it happened.
	var lag time.Duration
	ends := make([]time.Duration, len(res.Faults))
	for i, f := range res.Faults {
		var saved string
		var savedBy []*Proc
		if i == killAt {
			saved, savedBy = saveAll(ctx, l, res, members, members[(f.Hosts[0]+1)%len(members)])
		}
		if over := l.Since() - (t0 + lag + f.At - settle); over >= time.Millisecond && i > 0 {
			lag += over
			l.Record("schedule delayed", map[string]any{"fault": f.String(), "by_ms": over.Milliseconds()})
		}
		if err := sleepUntil(ctx, l, t0+lag+f.At); err != nil {
			return nil, err
		}
		procs := sv.targets(members)
		err := l.Inject(f, procs)
		if err != nil && !errors.Is(err, ErrGone) {
			return nil, fmt.Errorf("inject %v: %w", f, err)
		}
		gone := err != nil
		ends[i] = t0 + lag + f.End()
		if err := sleepUntil(ctx, l, ends[i]); err != nil {
			return nil, err
		}
		switch {
		case gone:
		case f.Kind == Pause:
			procs[f.Hosts[0]].Signal(syscall.SIGCONT)
		case f.Kind == Kill:
			<-procs[f.Hosts[0]].Exited()
			<-members[f.Hosts[0]].cur().Exited() // a daemon's client ends with it
			if err := sv.launch(members[f.Hosts[0]], false); err != nil {
				return nil, err
			}
			if saved != "" {
				restoreAll(ctx, l, res, members, members[f.Hosts[0]], members[(f.Hosts[0]+1)%len(members)], saved, savedBy)
			}
		default:
			if err := l.Heal(); err != nil {
				return nil, err
			}
		}
	}

	// Every federate's last process finishes its steps; the supervisor
	// starts no more once one has.
	results := make([]tick.Result, len(members))
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
		// A daemon stops once its client resigned: its trace is complete
		// then.
		if d := m.daemon(); d != nil {
			d.Signal(syscall.SIGTERM)
			<-d.Exited()
			if err := d.Err(); err != nil && !d.Killed() {
				res.violate("%s's daemon ended with %v", m.name, err)
			}
		}
	}
	judge(res, cfg, members, results, ends)
	return res, writeResult(cfg.Dir, res)
}

// judge applies the checkers to a finished run; ends are its faults'
// ends, as they happened.
func judge(res *Result, cfg RunConfig, members []*member, results []tick.Result, ends []time.Duration) {
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
		if r.Lab != nil {
			res.Lab.Add(*r.Lab)
		}
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
		if members[k].fedpro {
			// The Federate Protocol has no callback for a lost federate:
			// what the daemon's federate was told is in its trace.
			results[k].Lost = lostInTraces(res, members[k])
		}
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
		if c := results[k].Lab; c != nil && c.Synchronized < c.Announced-1 {
			res.violate("%s was announced %d synchronization points and synchronized %d", members[k].name, c.Announced, c.Synchronized)
		}
	}

	// Liveness: after each fault's end, every federate running then is
	// granted again within the bound (or had finished).
	for i, f := range res.Faults {
		end := ends[i]
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

// fedproPort is the Federate Protocol port of a fedpro member's daemon,
// on its host's loopback.
const fedproPort = "15164"

// startFedPro starts a fedpro member's federate: a `serve` daemon on its
// host when it has none running (the first, or its last was killed),
// tracing the federates it hosts, then the client, `node -role tick
// -fedpro`, which the daemon hosts a federate for. It returns the client
// and the daemon's trace when it started one ("" when it reused one).
func startFedPro(ctx context.Context, l *Lab, cfg RunConfig, m *member, h *Host, federation, seed string, started, steps int) (*Proc, string, error) {
	trace := ""
	if d := m.daemon(); d == nil || m.daemonGone() {
		m.mu.Lock()
		n := len(m.daemons) + 1
		m.mu.Unlock()
		trace = filepath.Join(cfg.Dir, fmt.Sprintf("%s-serve-%d.jsonl", m.name, n))
		args := []string{"serve", "-gossip", h.Addr + ":7946", "-seeds", seed,
			"-iface", "veth0", "-ttl", "1", "-mcast-port", "47470", "-transport", cfg.Transport,
			"-listen", "127.0.0.1:" + fedproPort, "-metrics", "", "-resume-window", "2s",
			"-save-dir", filepath.Join(cfg.Dir, "saves-"+m.name), "-trace", trace}
		if cfg.Transport == "unicast" {
			args = append(args, "-advertise", h.Addr+":0")
		}
		log := strings.TrimSuffix(trace, ".jsonl") + ".log"
		d, err := l.Start(ctx, h, m.name+"-serve", cfg.Binary, log, args...)
		if err != nil {
			return nil, "", err
		}
		m.mu.Lock()
		m.daemons = append(m.daemons, d)
		m.mu.Unlock()
		if _, err := d.WaitLine(ctx, "serving the Federate Protocol on "); err != nil {
			return nil, "", err
		}
	}
	peers := cfg.Hosts
	if started > 0 {
		peers = 1
	}
	args := []string{"node", "-role", "tick", "-fedpro", "127.0.0.1:" + fedproPort, "-fedpro-wait", "10s",
		"-name", m.name, "-federation", federation, "-peers", strconv.Itoa(peers), "-steps", strconv.Itoa(steps),
		"-step-delay", cfg.StepDelay.String(), "-timeout", "10m", "-save-dir", filepath.Join(cfg.Dir, "states-"+m.name)}
	log := filepath.Join(cfg.Dir, fmt.Sprintf("%s-%d.log", m.name, started+1))
	p, err := l.Start(ctx, h, m.name, cfg.Binary, log, args...)
	return p, trace, err
}

// lostInTraces returns the federates m's traces say it was told were
// lost ("lost" lines), each once per telling.
func lostInTraces(res *Result, m *member) []string {
	var lost []string
	for _, t := range m.traces {
		f, err := os.Open(t)
		if err != nil {
			res.violate("trace %s: %v", t, err)
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var e struct{ Ev, Fed, Peer string }
			if json.Unmarshal(sc.Bytes(), &e) == nil && e.Ev == "lost" && e.Fed == m.name {
				lost = append(lost, e.Peer)
			}
		}
		f.Close()
	}
	return lost
}

// saveAll has by's process ask the federation to save (SIGUSR1: a save
// timed a few steps ahead) and waits until every member's process saved.
// It returns the save's label, "" when the federation did not save (a
// save it refused or failed is counted; one that never ends is a
// violation), and the processes that saved (nil for a member whose
// process ended during the save: the federation removed its federate,
// and the save goes on without it).
func saveAll(ctx context.Context, l *Lab, res *Result, members []*member, by *member) (string, []*Proc) {
	p := by.cur()
	from := len(p.Lines())
	if err := p.Signal(syscall.SIGUSR1); err != nil {
		res.violate("save: %v", err)
		return "", nil
	}
	pre, rest, ok := waitFrom(ctx, p, from, 20*time.Second, "save requested ", "save refused ")
	if !ok || pre == "save refused " {
		res.NotSaved++
		l.Record("not saved", map[string]any{"by": by.name, "why": rest})
		return "", nil
	}
	label := strings.Fields(rest)[0]
	// A save whose time was outrun is asked for again, further ahead:
	// "not saved" lines may come before "saved".
	procs := make([]*Proc, len(members))
	for k, m := range members {
		q := m.cur()
		if _, _, ok := waitFrom(ctx, q, 0, 40*time.Second, "saved "+label); ok {
			procs[k] = q
			continue
		}
		if _, why, failed := waitFrom(ctx, q, 0, 0, "not saved "+label); failed {
			res.NotSaved++
			l.Record("not saved", map[string]any{"label": label, "proc": m.name, "why": why})
			return "", nil
		}
		select {
		case <-q.Exited():
			l.Record("left during the save", map[string]any{"label": label, "proc": m.name, "err": fmt.Sprint(q.Err())})
			continue
		default:
		}
		res.violate("%s: save %s neither completed nor failed within 40 s", m.name, label)
		return "", nil
	}
	res.Saves++
	l.Record("saved", map[string]any{"label": label})
	return label, procs
}

// restoreAll waits until the restarted member runs again, then has by's
// process ask the federation to restore label (SIGUSR2), again while it
// is refused (the killed process's federate not yet removed), and waits
// until every member's process restored. savedBy are the processes that
// saved: when another member than the restarted one runs a process that
// did not, the federation's federates are not the save's, and a restore
// it keeps refusing (until the deadline, or until by's process finished
// its steps) is counted, not a violation.
func restoreAll(ctx context.Context, l *Lab, res *Result, members []*member, restarted, by *member, label string, savedBy []*Proc) {
	// A start refused because the killed federate still held the name is
	// tried again by the supervisor: wait for the latest.
	ready := time.Now().Add(30 * time.Second)
	for {
		if _, _, ok := waitFrom(ctx, restarted.cur(), 0, time.Until(ready), "ready "); ok {
			break
		}
		if time.Now().After(ready) || ctx.Err() != nil {
			res.violate("%s did not run again to restore %s", restarted.name, label)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	p := by.cur()
	deadline := time.Now().Add(40 * time.Second)
	for {
		from := len(p.Lines())
		ended := false
		if err := p.Signal(syscall.SIGUSR2); err != nil {
			select {
			case <-p.Exited():
				ended = true // it finished its steps while the restore was refused
			default:
				res.violate("restore: %v", err)
				return
			}
		}
		if !ended {
			pre, _, ok := waitFrom(ctx, p, from, 20*time.Second, "restoring "+label, "restore refused")
			if ok && pre != "restore refused" {
				break
			}
		}
		if ended || time.Now().After(deadline) {
			changed := false
			for k, m := range members {
				// Another member runs a process that did not save, or the
				// restarted one had left during the save (it is not in it).
				changed = changed || (m != restarted && m.cur() != savedBy[k]) || (m == restarted && savedBy[k] == nil)
			}
			if changed {
				res.NotRestored++
				l.Record("not restored", map[string]any{"label": label, "why": "the federates changed since the save"})
			} else {
				res.violate("the federation did not restore %s within 40 s", label)
			}
			return
		}
		time.Sleep(time.Second)
	}
	for _, m := range members {
		if _, _, ok := waitFrom(ctx, m.cur(), 0, 40*time.Second, "restored "+label); !ok {
			res.violate("%s did not restore %s within 40 s", m.name, label)
			return
		}
	}
	res.Restores++
	l.Record("restored", map[string]any{"label": label})
}

// waitFrom waits up to d for a line of p, from its line from on, with
// one of the prefixes; it returns the prefix and the rest.
func waitFrom(ctx context.Context, p *Proc, from int, d time.Duration, prefixes ...string) (string, string, bool) {
	deadline := time.Now().Add(d)
	for {
		lines := p.Lines()
		for _, ln := range lines[min(from, len(lines)):] {
			for _, pre := range prefixes {
				if rest, ok := strings.CutPrefix(ln.Text, pre); ok {
					return pre, rest, true
				}
			}
		}
		from = len(lines)
		select {
		case <-p.Exited():
			if len(p.Lines()) == from {
				return "", "", false
			}
			continue
		default:
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return "", "", false
		}
		time.Sleep(50 * time.Millisecond)
	}
}
