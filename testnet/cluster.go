package testnet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/transport"
)

// Config describes a simulated federation.
type Config struct {
	// Federates is how many federates to start (at least 1).
	Federates int
	// Federation names the federation; default "testnet-<seed>".
	Federation string
	// FOM modules; default the package's own small FOM (see FOM).
	FOM []*fomxml.Document
	// Seed drives the simulated network's randomness.
	Seed int64
	// Faults apply to every link of the in-memory network.
	Faults transport.Faults
	// UDP runs the data plane over real multicast on lo instead of the
	// in-memory network, with UDPPort (default: one derived from Seed).
	UDP     bool
	UDPPort int
	// Unicast runs the data plane with unicast fan-out over the
	// in-memory network (transport.MemUnicast, peer.TransportUnicast):
	// each federate sends a group's datagrams to the members its
	// directory learned from the control plane, one copy per member,
	// through the same faults. Not with UDP.
	Unicast bool
	// Key authenticates data-plane frames when set.
	Key []byte
	// NetBuffer is each endpoint's receive queue length on the in-memory
	// network (transport.NetworkConfig.Buffer); 0 means its default.
	// Large clusters need more: a packet that finds the queue full is
	// dropped.
	NetBuffer int
	// Tick is each federate's timer interval; default 2 ms.
	Tick time.Duration
	// Deterministic runs the federation on one goroutine in virtual
	// time (see sim.go): a seed then replays the run exactly. The test
	// must wait through the logs and the Cluster (Log.WaitFor, Sleep,
	// Do), which run the simulation meanwhile. Not with UDP.
	Deterministic bool
	// WaitLimit bounds each wait of a deterministic cluster in virtual
	// time; default 2 minutes.
	WaitLimit time.Duration
	// Trace, when set, receives every federate's JSON-lines trace
	// (docs/trace.md). It is shared, so it must be safe for concurrent
	// use: wrap a plain writer with peer.NewTraceWriter. Without it, a
	// writer attached to Add's context with WithTrace is used.
	Trace io.Writer
	// SaveDir is where federation saves go (peer.Config.SaveDir); by
	// default a temporary directory the cluster removes at Close.
	SaveDir string
}

// Cluster is a running simulated federation: federates with an
// in-process control plane, over the in-memory network or loopback
// multicast. Each federate's events are recorded as they come.
type Cluster struct {
	Federation string
	Net        *transport.Network // nil over UDP
	Registry   *peer.MemRegistry
	Feds       []*peer.Federate
	Logs       []*Log

	cfg Config
	wg  sync.WaitGroup
	sim *sim // a deterministic cluster's simulator
	// unicasts are the federates' transports with Config.Unicast.
	unicasts []*transport.MemUnicast
	tempDir  string // made for SaveDir; removed at Close
}

// Start joins cfg.Federates federates, named F0, F1, ..., and starts
// recording their events.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	if cfg.Federates < 1 {
		return nil, errors.New("testnet: need at least one federate")
	}
	c, err := newCluster(cfg)
	if err != nil {
		return nil, err
	}
	for i := 0; i < cfg.Federates; i++ {
		if _, err := c.Add(ctx, fmt.Sprintf("F%d", i)); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// newCluster returns a cluster of no federates for cfg, defaults
// applied.
func newCluster(cfg Config) (*Cluster, error) {
	if cfg.Deterministic && cfg.UDP {
		return nil, errors.New("testnet: a deterministic cluster runs on the in-memory network, not UDP")
	}
	if cfg.Unicast && cfg.UDP {
		return nil, errors.New("testnet: unicast fan-out runs on the in-memory network, not UDP")
	}
	if cfg.Federation == "" {
		cfg.Federation = uniqueName("testnet", cfg.Seed)
		if cfg.Deterministic {
			cfg.Federation = fmt.Sprintf("testnet-%d", cfg.Seed)
		}
	}
	if cfg.WaitLimit == 0 {
		cfg.WaitLimit = 2 * time.Minute
	}
	if cfg.FOM == nil {
		d, err := FOM()
		if err != nil {
			return nil, err
		}
		cfg.FOM = []*fomxml.Document{d}
	}
	if cfg.Tick == 0 {
		cfg.Tick = 2 * time.Millisecond
	}
	if cfg.UDP && cfg.UDPPort == 0 {
		cfg.UDPPort = 40000 + int(uint64(cfg.Seed)%20000)
	}
	c := &Cluster{Federation: cfg.Federation, Registry: peer.NewMemRegistry(), cfg: cfg}
	if c.cfg.SaveDir == "" {
		d, err := os.MkdirTemp("", "testnet-saves-")
		if err != nil {
			return nil, fmt.Errorf("testnet: %w", err)
		}
		c.cfg.SaveDir, c.tempDir = d, d
	}
	switch {
	case cfg.Deterministic:
		c.sim = newSim(c)
		c.Net = transport.NewNetwork(transport.NetworkConfig{Seed: cfg.Seed, Clock: c.sim, Deliver: c.sim.deliver})
		c.Net.SetFaults(cfg.Faults)
	case !cfg.UDP:
		c.Net = transport.NewNetwork(transport.NetworkConfig{Seed: cfg.Seed, Buffer: cfg.NetBuffer})
		c.Net.SetFaults(cfg.Faults)
	}
	return c, nil
}

// runs numbers the federations this process starts, so that their names
// (from which their multicast groups derive) never repeat, without a
// global random source.
var runs atomic.Uint64

// uniqueName names a federation apart from every other one this host
// runs: the seed, the process and a counter.
func uniqueName(prefix string, seed int64) string {
	return fmt.Sprintf("%s-%d-%d-%d", prefix, seed, os.Getpid(), runs.Add(1))
}

// Add joins one more federate and records its events.
func (c *Cluster) Add(ctx context.Context, name string) (*peer.Federate, error) {
	var tr transport.Transport
	var ep *transport.MemEndpoint
	if c.cfg.UDP {
		u, err := transport.NewUDP(transport.UDPConfig{Federation: c.Federation, Port: c.cfg.UDPPort})
		if err != nil {
			return nil, fmt.Errorf("testnet: %s: %w", name, err)
		}
		tr = u
	} else {
		ep = c.Net.Endpoint(name)
		tr = ep
		if c.cfg.Unicast {
			u := transport.NewMemUnicast(ep)
			c.unicasts = append(c.unicasts, u)
			tr = u
		}
	}
	pc := peer.Config{
		Federation: c.Federation, FederateName: name, FederateType: "testnet",
		FOMModules: c.cfg.FOM, Create: true,
		Control: c.Registry.Control(c.Federation), Transport: tr, Key: c.cfg.Key,
		TickInterval: c.cfg.Tick, Trace: traceWriter(ctx, c.cfg.Trace),
		SaveDir: c.cfg.SaveDir,
	}
	if c.cfg.Unicast {
		pc.TransportMode = peer.TransportUnicast
	}
	if c.sim != nil {
		pc.Manual = true
		pc.Control = c.Registry.ManualControl(c.Federation)
		pc.Incarnation = uint64(c.cfg.Seed)<<16 + uint64(len(c.Feds)) + 1
	}
	f, err := peer.Join(ctx, pc)
	if err != nil {
		tr.Close()
		return nil, fmt.Errorf("testnet: join %s: %w", name, err)
	}
	l := &Log{Fed: f, notify: make(chan struct{}, 1), sim: c.sim}
	c.Feds = append(c.Feds, f)
	c.Logs = append(c.Logs, l)
	if c.sim != nil {
		c.sim.add(len(c.Feds)-1, ep)
		return f, nil
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		l.record()
	}()
	return f, nil
}

// Sleep lets d pass: real time, or virtual time in a deterministic
// cluster (every event until then runs).
func (c *Cluster) Sleep(d time.Duration) {
	if c.sim == nil {
		time.Sleep(d)
		return
	}
	c.sim.sleep(d)
}

// Do runs a sending service. A deterministic cluster's federates fail
// with ErrWouldBlock under back-pressure instead of waiting; Do then
// runs the simulation a tick at a time and tries again, for at most
// Config.WaitLimit of virtual time.
func (c *Cluster) Do(fn func() error) error {
	err := fn()
	if c.sim == nil {
		return err
	}
	for waited := time.Duration(0); errors.Is(err, peer.ErrWouldBlock); waited += c.cfg.Tick {
		if waited > c.cfg.WaitLimit {
			return fmt.Errorf("testnet: still blocked after %v of virtual time: %w", waited, err)
		}
		c.sim.sleep(c.cfg.Tick)
		err = fn()
	}
	return err
}

// Now returns the virtual time of a deterministic cluster (zero
// otherwise).
func (c *Cluster) Now() time.Duration {
	if c.sim == nil {
		return 0
	}
	return c.sim.now
}

// Crash makes federate i vanish as a dead host would: its packets stop,
// the control plane reports it lost, and it is closed.
func (c *Cluster) Crash(i int) {
	f := c.Feds[i]
	c.Registry.Crash(c.Federation, f.Handle())
	if c.Net != nil {
		c.Net.Crash(f.Name())
	}
	f.Close()
}

// Close closes every federate and waits for the recorders.
func (c *Cluster) Close() {
	for _, f := range c.Feds {
		f.Close()
	}
	c.wg.Wait()
	if c.tempDir != "" {
		os.RemoveAll(c.tempDir)
	}
}

// Log is one federate's recorded events, in the order Next returned them.
type Log struct {
	Fed *peer.Federate

	mu     sync.Mutex
	events []peer.Event
	base   int // index of events[0]: a discarding Checker drops what it read
	notify chan struct{}
	label  string // the name of a log without a federate (tests of the checker)

	// A deterministic cluster's log: WaitFor runs the simulation.
	sim *sim
}

// name is the federate's name.
func (l *Log) name() string {
	if l.Fed == nil {
		return l.label
	}
	return l.Fed.Name()
}

func (l *Log) record() {
	for {
		ev, err := l.Fed.Next(context.Background())
		if err != nil {
			return
		}
		l.mu.Lock()
		l.events = append(l.events, ev)
		l.mu.Unlock()
		select {
		case l.notify <- struct{}{}:
		default:
		}
	}
}

// from returns the events from index k on (or from the first kept one)
// and the index of the first it returns. The slice is the log's own:
// recording appends beyond it and discarding replaces it, so it stays
// valid, and the caller must not change it.
func (l *Log) from(k int) ([]peer.Event, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k = max(k, l.base)
	return l.events[k-l.base:], k
}

// count returns how many events were recorded in all, discarded ones
// included.
func (l *Log) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.base + len(l.events)
}

// discardBefore drops the events before index k.
func (l *Log) discardBefore(k int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if k <= l.base {
		return
	}
	l.events = append([]peer.Event(nil), l.events[k-l.base:]...)
	l.base = k
}

// Events returns a copy of what was recorded so far (since what a
// discarding Checker dropped).
func (l *Log) Events() []peer.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]peer.Event(nil), l.events...)
}

// WaitFor waits until cond holds for the recorded events, or ctx ends.
// cond sees the log itself and must not keep or change the slice.
//
// The log of a deterministic cluster runs the simulation until cond
// holds, for at most Config.WaitLimit of virtual time.
func (l *Log) WaitFor(ctx context.Context, cond func([]peer.Event) bool) error {
	if l.sim != nil {
		err := l.sim.runUntil(ctx, l, func() bool { return cond(l.events) }, l.sim.c.cfg.WaitLimit)
		if err != nil {
			return fmt.Errorf("testnet: %s: %w", l.name(), err)
		}
		return nil
	}
	for {
		l.mu.Lock()
		ok := cond(l.events)
		l.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-l.notify:
		case <-time.After(10 * time.Millisecond):
		case <-ctx.Done():
			return fmt.Errorf("testnet: %s: %w", l.Fed.Name(), ctx.Err())
		}
	}
}

// Granted reports whether the log holds a grant to at least t.
func Granted(t float64) func([]peer.Event) bool {
	return func(evs []peer.Event) bool {
		for i := len(evs) - 1; i >= 0; i-- {
			if g, ok := evs[i].(peer.TimeAdvanceGrant); ok {
				return g.Time.Float() >= t
			}
		}
		return false
	}
}

// Has reports whether the log holds an event of type T.
func Has[T peer.Event]() func([]peer.Event) bool {
	return func(evs []peer.Event) bool {
		for _, ev := range evs {
			if _, ok := ev.(T); ok {
				return true
			}
		}
		return false
	}
}
