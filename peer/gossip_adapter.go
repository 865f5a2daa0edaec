package peer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meshrti/meshrti/ddm"
	"github.com/meshrti/meshrti/gossip"
)

// gossipControl is the ControlPlane over meshrti's gossip cluster: one
// memberlist member per federate, agreement through its register.
type gossipControl struct {
	c      *gossip.Cluster
	events *ControlEvents
	wg     sync.WaitGroup // the event reader
	once   sync.Once

	mu   sync.Mutex
	self FederateHandle // this node's federate, once joined

	// heard is when the federate's data plane last heard each other
	// federate, and heardAt when the federate's loop last said so
	// (publishHeard), read by the cluster's own goroutine
	// (gossip.Config.Heard) without a lock.
	heard   atomic.Pointer[map[FederateHandle]time.Time]
	heardAt atomic.Int64 // unix nanoseconds

	// resigning is set once this federate asked to resign: its own
	// resignation is then not a removal.
	resigning atomic.Bool

	// early holds replicated-state changes of nodes whose federate is not
	// known here yet, newest per key, until it joins (read's goroutine
	// only): the gossip store has taken their versions and will not
	// report them again.
	early map[string]map[string]gossip.Event
}

// maxEarlyKeys bounds the state changes held per unknown node; a node
// with more is dropped from the hold (it cannot be a federate's: a
// federate publishes a few keys per class it subscribes to).
const maxEarlyKeys = 4096

// startGossip starts the federate's gossip member for cfg.
func startGossip(ctx context.Context, cfg *Config) (ControlPlane, error) {
	g := &gossipControl{events: NewControlEvents()}
	c, err := gossip.Start(ctx, gossip.Config{
		Federation: cfg.Federation,
		Mux:        cfg.Gossip.Mux,
		BindAddr:   cfg.Gossip.BindAddr,
		BindPort:   cfg.Gossip.BindPort,
		Seeds:      cfg.Gossip.Seeds,
		Key:        cfg.Key,
		Profile:    gossip.Profile(cfg.Gossip.Profile),
		LostGrace:  cfg.Gossip.LostGrace,
		Heard:      g.heardFrom,
		Logger:     cfg.Logger,
		Rand:       cfg.Rand,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: control plane: %w", ErrConnectionFailed, err)
	}
	g.c = c
	g.wg.Add(1)
	go g.read()
	return g, nil
}

// read translates the cluster's events into control events until the
// cluster closes its event channel: the one goroutine between the
// cluster and the federate's queue.
func (g *gossipControl) read() {
	defer g.wg.Done()
	for ev := range g.c.Events() {
		if ce, ok := g.translate(ev); ok {
			g.events.Push(ce)
		}
		if ev.Kind == gossip.EventFederateJoined {
			g.replayEarly(ev.Federate)
		}
	}
}

// hold keeps a state change of a node whose federate is not known yet.
func (g *gossipControl) hold(ev gossip.Event) {
	node := ev.Member.Name
	if g.early == nil {
		g.early = make(map[string]map[string]gossip.Event)
	}
	m := g.early[node]
	if m == nil {
		m = make(map[string]gossip.Event)
		g.early[node] = m
	}
	if old, ok := m[ev.Key]; ok && old.Version >= ev.Version {
		return
	}
	m[ev.Key] = ev
	if len(m) > maxEarlyKeys {
		delete(g.early, node)
	}
}

// replayEarly hands over the state changes held for f's node, in key
// order, now that f is known.
func (g *gossipControl) replayEarly(f gossip.FederateInfo) {
	m := g.early[f.Node]
	if m == nil || f.Handle == 0 {
		return
	}
	delete(g.early, f.Node)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		ev := m[k]
		g.events.Push(ControlEvent{Kind: StateChanged, Member: Member{Handle: FederateHandle(f.Handle)}, Key: ev.Key, Value: ev.Value, Version: ev.Version})
	}
}

func (g *gossipControl) translate(ev gossip.Event) (ControlEvent, bool) {
	m := Member{Handle: FederateHandle(ev.Federate.Handle), Name: ev.Federate.Name, Type: ev.Federate.Type}
	g.mu.Lock()
	self := g.self
	g.mu.Unlock()
	switch ev.Kind {
	case gossip.EventFederateJoined:
		return ControlEvent{Kind: MemberJoined, Member: m}, m.Handle != 0
	case gossip.EventFederateResigned:
		if m.Handle == self && self != 0 && (ev.Lost || !g.resigning.Load()) {
			// Removed by the federation, or (a node that caught up from
			// a snapshot of an earlier version, which does not say lost)
			// resigned without asking: either way no longer a member.
			return ControlEvent{Kind: SelfLost, Reason: "the control plane removed this federate (its node was declared dead)"}, true
		}
		if ev.Lost {
			return ControlEvent{Kind: MemberLost, Member: m}, m.Handle != 0
		}
		return ControlEvent{Kind: MemberResigned, Member: m}, m.Handle != 0
	case gossip.EventFailed:
		// Only this node's failure detector says so: a suspicion, which
		// may be false (a starved prober, a lost packet) and which the
		// other members may not share. The federate stays a member here,
		// its promises holding time and its streams kept, until the
		// register removes it (EventFederateResigned with Lost, above),
		// which every member applies in log order, or the suspicion
		// clears. Acting on it here alone would forget a live federate
		// at one member only (docs/gossip.md, "What a suspicion does").
		return ControlEvent{}, false
	case gossip.EventStateChanged:
		h, ok := g.handleOfNode(ev.Member.Name)
		if !ok {
			g.hold(ev)
			return ControlEvent{}, false
		}
		return ControlEvent{Kind: StateChanged, Member: Member{Handle: h}, Key: ev.Key, Value: ev.Value, Version: ev.Version}, true
	case gossip.EventFederationModulesChanged:
		return ControlEvent{Kind: ModulesChanged, Modules: modulesFromGossip(ev.Modules)}, true
	}
	return ControlEvent{}, false
}

// heardFrom is gossip.Config.Heard: when the data plane last heard the
// federate of node (zero: never, or not known). When the federate's loop
// itself has not said for heardStale, this process is starved of CPU
// (or its loop ended): what its failure detector concludes cannot be
// told from its own slowness, so every member counts as heard now and
// this node proposes no removal; members whose loops run do.
func (g *gossipControl) heardFrom(node string) time.Time {
	now := time.Now()
	if now.Sub(time.Unix(0, g.heardAt.Load())) > heardStale {
		return now
	}
	m := g.heard.Load()
	if m == nil || g.c == nil {
		return time.Time{}
	}
	h, ok := g.handleOfNode(node)
	if !ok {
		return time.Time{}
	}
	return (*m)[h]
}

// heardStale is how long the federate's loop may go without telling
// what its data plane heard before this node stops proposing removals.
const heardStale = time.Second

// noteHeard records that the data plane heard the federates hs at now.
// Called by the federate's loop only.
func (g *gossipControl) noteHeard(now time.Time, hs []FederateHandle) {
	old := g.heard.Load()
	m := make(map[FederateHandle]time.Time, len(hs))
	if old != nil {
		maps.Copy(m, *old)
	}
	for _, h := range hs {
		m[h] = now
	}
	g.heard.Store(&m)
	g.heardAt.Store(now.UnixNano())
}

// handleOfNode returns the handle of the federate joined on node name.
func (g *gossipControl) handleOfNode(name string) (FederateHandle, bool) {
	for _, f := range g.c.Federates() {
		if f.Node == name {
			return FederateHandle(f.Handle), true
		}
	}
	return 0, false
}

// gossipExceptions are the HLA exceptions of the gossip control plane's
// errors (gossipError).
var gossipExceptions = []errorAs{
	{gossip.ErrFederationExists, ErrFederationExecutionAlreadyExists},
	{gossip.ErrFederationNotFound, ErrFederationExecutionDoesNotExist},
	{gossip.ErrFederatesJoined, ErrFederatesCurrentlyJoined},
	{gossip.ErrNameInUse, ErrFederateNameAlreadyInUse},
	{gossip.ErrAlreadyJoined, ErrFederateAlreadyExecutionMember},
	{gossip.ErrNotJoined, ErrFederateNotExecutionMember},
	{gossip.ErrTimeRepresentation, ErrCouldNotCreateLogicalTimeFactory},
	{gossip.ErrModulesChanged, ErrModulesChanged},
	{gossip.ErrInvalidModule, ErrCouldNotOpenFDD},
	{gossip.ErrModulesTooLarge, ErrCouldNotOpenFDD},
	{gossip.ErrClosed, ErrNotConnected},
}

func gossipError(err error) error {
	return asException(err, gossipExceptions, ErrRTIinternalError)
}

func modulesToGossip(ms []Module) []gossip.Module {
	out := make([]gossip.Module, len(ms))
	for i, m := range ms {
		out[i] = gossip.Module{Name: m.Name, Digest: m.Digest, Content: m.Content}
	}
	return out
}

func modulesFromGossip(ms []gossip.Module) []Module {
	out := make([]Module, len(ms))
	for i, m := range ms {
		out[i] = Module{Name: m.Name, Digest: m.Digest, Content: m.Content}
	}
	return out
}

func (g *gossipControl) CreateFederation(ctx context.Context, spec FederationSpec) error {
	gs := gossip.FederationSpec{TimeRepresentation: spec.TimeRepresentation, Modules: modulesToGossip(spec.Modules), DataPlane: spec.DataPlane}
	if spec.MIM != nil {
		gs.MIM = &modulesToGossip([]Module{*spec.MIM})[0]
	}
	if spec.Regions != nil {
		b, err := encodeCells(*spec.Regions)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrRTIinternalError, err)
		}
		gs.Cells = b
	}
	err := g.c.CreateFederation(ctx, gs)
	if err != nil {
		return gossipError(err)
	}
	return nil
}

func (g *gossipControl) Federation(ctx context.Context) (FederationSpec, bool, error) {
	list, err := g.c.ListFederations(ctx) // confirmed with a quorum
	if err != nil {
		return FederationSpec{}, false, gossipError(err)
	}
	if len(list) == 0 {
		return FederationSpec{}, false, nil
	}
	fi := list[0]
	spec := FederationSpec{TimeRepresentation: fi.TimeRepresentation, Modules: modulesFromGossip(fi.Modules), DataPlane: fi.DataPlane}
	if fi.MIM != nil {
		spec.MIM = &modulesFromGossip([]gossip.Module{*fi.MIM})[0]
	}
	if fi.Cells != nil {
		r, err := decodeCells(fi.Cells)
		if err != nil {
			return FederationSpec{}, false, fmt.Errorf("%w: the federation's DDM cell configuration: %w", ErrRTIinternalError, err)
		}
		spec.Regions = &r
	}
	return spec, true, nil
}

// encodeCells and decodeCells are the form of the federation's DDM cell
// configuration in the gossip record: JSON, normalized (encoding/json
// sorts the map's keys, so equal configurations encode alike).
func encodeCells(c ddm.Config) ([]byte, error) { return json.Marshal(c.Normalized()) }

func decodeCells(b []byte) (ddm.Config, error) {
	var c ddm.Config
	if err := json.Unmarshal(b, &c); err != nil {
		return ddm.Config{}, err
	}
	return c.Normalized(), nil
}

func (g *gossipControl) DestroyFederation(ctx context.Context) error {
	err := g.c.DestroyFederation(ctx)
	if errors.Is(err, gossip.ErrClusterGone) {
		// Every acceptor left (the last federates resigned meanwhile):
		// the execution ended with its cluster.
		return fmt.Errorf("%w: %w", ErrFederationExecutionDoesNotExist, err)
	}
	if err != nil {
		return gossipError(err)
	}
	return nil
}

func (g *gossipControl) ListFederations(ctx context.Context) ([]FederationExecutionInformation, error) {
	list, err := g.c.ListFederations(ctx)
	if err != nil {
		return nil, gossipError(err)
	}
	var out []FederationExecutionInformation
	for _, f := range list {
		out = append(out, FederationExecutionInformation{FederationExecutionName: f.Name, LogicalTimeImplementationName: f.TimeRepresentation})
	}
	return out, nil
}

func (g *gossipControl) JoinFederate(ctx context.Context, req JoinRequest) (FederateHandle, string, error) {
	h, err := g.c.JoinFederate(ctx, gossip.JoinSpec{
		Name: req.Name, Type: req.Type, TimeRepresentation: req.TimeRepresentation,
		Modules: modulesToGossip(req.Modules), KnownModules: req.KnownModules,
	})
	if err != nil {
		return 0, "", gossipError(err)
	}
	name := req.Name
	if fi, ok := g.c.LocalFederate(); ok {
		name = fi.Name
	}
	g.mu.Lock()
	g.self = FederateHandle(h)
	g.mu.Unlock()
	return FederateHandle(h), name, nil
}

// ResignFederate resigns through the register. The gossip record does
// not carry the resign action: the others learn it from the federate's
// resign notice on the data plane, which comes first.
//
// When every acceptor of the log is gone (the other members resigned and
// left meanwhile), the federation execution ended with its cluster and
// nothing holds this federate any more: the resign is done.
func (g *gossipControl) ResignFederate(ctx context.Context, _ ResignAction) error {
	g.resigning.Store(true)
	err := g.c.ResignFederate(ctx)
	if errors.Is(err, gossip.ErrClusterGone) {
		return nil
	}
	if err != nil {
		return gossipError(err)
	}
	return nil
}

// entry maps a gossip register entry (held by a node) to one held by a
// federate.
func (g *gossipControl) entry(e gossip.Entry) Entry {
	out := Entry{Key: e.Key, Value: e.Value, Version: e.Version}
	if e.Holder != "" {
		out.Holder, _ = g.handleOfNode(e.Holder)
	}
	return out
}

func (g *gossipControl) Acquire(ctx context.Context, key string, value []byte) (Entry, bool, error) {
	e, ok, err := g.c.Acquire(ctx, key, value)
	if err != nil {
		return Entry{}, false, gossipError(err)
	}
	return g.entry(e), ok, nil
}

func (g *gossipControl) AcquireIfJoined(ctx context.Context, key string, value []byte, set []FederateHandle) (Entry, bool, error) {
	hs := make([]uint64, len(set))
	for i, h := range set {
		hs[i] = uint64(h)
	}
	e, ok, err := g.c.AcquireIfJoined(ctx, key, value, hs)
	if errors.Is(err, gossip.ErrFederateNotJoined) {
		return g.entry(e), false, fmt.Errorf("%w: %w", ErrSetMemberNotJoined, err)
	}
	if err != nil {
		return Entry{}, false, gossipError(err)
	}
	return g.entry(e), ok, nil
}

func (g *gossipControl) CompareAndSwap(ctx context.Context, key string, expect uint64, value []byte) (Entry, bool, error) {
	e, ok, err := g.c.CompareAndSwap(ctx, key, expect, value)
	if err != nil {
		return Entry{}, false, gossipError(err)
	}
	return g.entry(e), ok, nil
}

func (g *gossipControl) Release(ctx context.Context, key string) (Entry, error) {
	e, err := g.c.Release(ctx, key)
	if err != nil {
		return g.entry(e), gossipError(err)
	}
	return g.entry(e), nil
}

func (g *gossipControl) Read(ctx context.Context, key string) (Entry, error) {
	e, err := g.c.Read(ctx, key)
	if err != nil {
		return Entry{}, gossipError(err)
	}
	return g.entry(e), nil
}

func (g *gossipControl) SetState(key string, value []byte) error {
	if err := g.c.SetState(key, value); err != nil {
		return gossipError(err)
	}
	return nil
}

func (g *gossipControl) States() []StateEntry {
	var out []StateEntry
	for _, e := range g.c.FederateStateEntries() {
		h, ok := g.handleOfNode(e.Owner)
		if !ok {
			continue
		}
		out = append(out, StateEntry{Federate: h, Key: e.Key, Value: e.Value, Version: e.Version})
	}
	return out
}

func (g *gossipControl) Members() []Member {
	var out []Member
	for _, f := range g.c.Federates() {
		out = append(out, Member{Handle: FederateHandle(f.Handle), Name: f.Name, Type: f.Type})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Handle < out[j].Handle })
	return out
}

func (g *gossipControl) Events() *ControlEvents { return g.events }

func (g *gossipControl) Close() error {
	var err error
	g.once.Do(func() {
		err = g.c.Close() // closes the cluster's events: read ends
		g.wg.Wait()
		g.events.Close()
	})
	return err
}

// addr returns the gossip member's address.
func (g *gossipControl) addr() string { return g.c.LocalNode().Addr }

// GossipAddr returns the host:port of the federate's gossip member, for
// other federates to use as a seed; false when the federate does not use
// the gossip control plane.
func (f *Federate) GossipAddr() (string, bool) {
	if g, ok := f.ctl.(*gossipControl); ok {
		return g.addr(), true
	}
	return "", false
}
