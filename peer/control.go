package peer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/meshrti/meshrti/ddm"
	"github.com/meshrti/meshrti/peer/internal/core"
)

// ControlPlane is what a federate needs from the federation's control
// plane: membership with failure detection, agreement on what must be
// unique (the federation's existence and object model, federate names,
// object instance names, ...) through a register, and versioned
// per-federate keyed state. One ControlPlane serves one federate.
//
// meshrti's real control plane is the gossip package (a memberlist
// cluster with a quorum register), wired in by Join when Config.Control is
// nil. MemRegistry provides an in-process one for tests and simulations.
type ControlPlane interface {
	// CreateFederation creates the federation execution with its time
	// representation and FOM modules; an existing one is
	// ErrFederationExecutionAlreadyExists.
	CreateFederation(ctx context.Context, spec FederationSpec) error
	// Federation returns the federation execution's record, and false
	// when it was not created (or was destroyed).
	Federation(ctx context.Context) (FederationSpec, bool, error)
	// DestroyFederation destroys it; ErrFederatesCurrentlyJoined while any
	// federate is joined.
	DestroyFederation(ctx context.Context) error
	// ListFederations names the federation executions visible from this
	// node, sorted by name, with their time representations.
	ListFederations(ctx context.Context) ([]FederationExecutionInformation, error)
	// JoinFederate makes this node's federate a member and returns its
	// handle, the same in every member's view, and its name. A name in
	// use is ErrFederateNameAlreadyInUse; "" asks for a generated name.
	// Another time representation is ErrCouldNotCreateLogicalTimeFactory.
	// Modules the joiner adds are appended to the federation's record,
	// unless the record's modules changed since the joiner read
	// KnownModules of them: then ErrModulesChanged, and the joiner reads
	// again.
	JoinFederate(ctx context.Context, req JoinRequest) (FederateHandle, string, error)
	// ResignFederate ends the membership and frees the name; the others
	// are told the resign action.
	ResignFederate(ctx context.Context, action ResignAction) error
	// Acquire takes a federation-wide unique key for this federate, with
	// value, if nobody holds it, and returns the key's entry after the
	// decision and whether this federate holds it.
	Acquire(ctx context.Context, key string, value []byte) (Entry, bool, error)
	// AcquireIfJoined is Acquire on the condition, decided with the
	// acquisition where federates are allotted handles, that every
	// federate of set is joined: otherwise nothing changes and the error
	// is ErrSetMemberNotJoined. A federate whose join returned before the
	// call counts as joined, whatever this federate has been told yet.
	AcquireIfJoined(ctx context.Context, key string, value []byte, set []FederateHandle) (Entry, bool, error)
	// Release frees a key this federate holds (a free key stays free).
	Release(ctx context.Context, key string) (Entry, error)
	// CompareAndSwap takes key for this federate with value, advancing
	// its version, if its version is expect (held or free); it returns
	// the entry after the decision and whether it swapped.
	CompareAndSwap(ctx context.Context, key string, expect uint64, value []byte) (Entry, bool, error)
	// Read returns a key's entry as decided (a linearizable read).
	Read(ctx context.Context, key string) (Entry, error)
	// SetState sets one of this federate's replicated state keys (nil
	// deletes it). Every member sees each key's highest version, and a
	// StateChanged event for each change.
	SetState(key string, value []byte) error
	// States returns every live replicated state entry of the joined
	// federates, this one included.
	States() []StateEntry
	// Members lists the joined federates, this one included.
	Members() []Member
	// Events is the queue the control plane reports changes on: members
	// joining, resigning and lost, this federate dropped, replicated
	// state changed, modules added. The federate drains it on its own
	// loop.
	Events() *ControlEvents
	// Close leaves (without resigning, if still joined: others see this
	// federate lost) and waits for everything it started; it closes
	// Events.
	Close() error
}

// FederationSpec is what a federation execution is created with.
type FederationSpec struct {
	// TimeRepresentation is HLAfloat64Time or HLAinteger64Time.
	TimeRepresentation string
	// Modules are the FOM modules, in order (the MIM is always first and
	// is not listed).
	Modules []Module
	// MIM replaces the standard MIM when set.
	MIM *Module
	// Regions is the DDM cell configuration (Config.Regions, normalized)
	// the federation was created with, which every joiner adopts: senders
	// and receivers compute cells independently. nil in a record that
	// predates it; joiners then use their own.
	Regions *ddm.Config
	// DataPlane is the creator's TransportMode ("multicast", "unicast"
	// or "auto"), which joiners agree with; "" in a record that predates
	// it (multicast).
	DataPlane string
}

// clone returns a copy of s that shares nothing mutable with it but the
// modules' contents, which never change.
func (s FederationSpec) clone() FederationSpec {
	s.Modules = slices.Clone(s.Modules)
	if s.Regions != nil {
		r := s.Regions.Normalized()
		s.Regions = &r
	}
	return s
}

// Module is one FOM module as the control plane carries it.
type Module struct {
	// Name designates the module for people and logs.
	Name string
	// Digest is the hex SHA-256 of Content; modules with one digest are
	// one module.
	Digest string
	// Content is the module's XML, gzip-compressed.
	Content []byte
}

// JoinRequest is what a federate joins with.
type JoinRequest struct {
	Name, Type         string
	TimeRepresentation string
	// Modules are the modules this federate adds to the federation's.
	Modules []Module
	// KnownModules is how many of the federation's modules the joiner
	// checked its own against.
	KnownModules int
}

// ErrModulesChanged is what JoinFederate returns when the federation's
// modules changed since the joiner read them: it reads them again and
// retries.
var ErrModulesChanged = errors.New("peer: the federation's FOM modules changed; read them again")

// ErrSetMemberNotJoined is what ControlPlane.AcquireIfJoined returns
// when a federate of the set is not joined.
var ErrSetMemberNotJoined = errors.New("peer: a federate of the set is not joined")

// Entry is one key of the federation's register.
type Entry struct {
	Key string
	// Value is the holder's value; nil when the key is free.
	Value []byte
	// Version counts the key's changes (taking and freeing it each add
	// one), so it serves as a fencing epoch.
	Version uint64
	// Holder is the federate holding the key; 0 when free.
	Holder FederateHandle
}

// StateEntry is one federate's replicated state key.
type StateEntry struct {
	Federate FederateHandle
	Key      string
	Value    []byte
	// Version is the owner's version of the write; it only grows.
	Version uint64
}

// Member is a joined federate as the control plane knows it.
type Member struct {
	Handle FederateHandle
	Name   string
	Type   string
}

// ControlEventKind tells what a ControlEvent reports.
type ControlEventKind int

const (
	// MemberJoined: Member joined.
	MemberJoined ControlEventKind = iota + 1
	// MemberResigned: Member resigned with Action (0 when unknown).
	MemberResigned
	// MemberLost: Member was lost: its node stopped answering, or it
	// left without resigning.
	MemberLost
	// SelfLost: this federate was dropped from the federation (Reason
	// says why): it is no longer a member.
	SelfLost
	// StateChanged: Member's replicated state Key is now Value (nil:
	// deleted) at Version.
	StateChanged
	// ModulesChanged: the federation's FOM modules are now Modules.
	ModulesChanged

	opDone // an Op the federate started was decided (internal)
)

// ControlEvent is one change the control plane reports.
type ControlEvent struct {
	Kind    ControlEventKind
	Member  Member
	Action  ResignAction
	Key     string
	Value   []byte
	Version uint64
	Modules []Module
	Reason  string

	opID  uint64
	opRes core.OpResult
}

// ControlEvents is an unbounded queue of control-plane events between the
// control plane (any goroutine pushes; pushing never blocks) and the
// federate that drains it. It is safe for concurrent use.
type ControlEvents struct {
	mu     sync.Mutex
	items  []ControlEvent
	signal chan struct{} // capacity 1: "there may be events"
	closed bool
}

// NewControlEvents returns an empty queue.
func NewControlEvents() *ControlEvents {
	return &ControlEvents{signal: make(chan struct{}, 1)}
}

// Push queues evs. After Close it does nothing.
func (q *ControlEvents) Push(evs ...ControlEvent) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.items = append(q.items, evs...)
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// Wait returns a channel that receives when events may be waiting; the
// reader then calls Take.
func (q *ControlEvents) Wait() <-chan struct{} { return q.signal }

// Take returns the queued events, appended to buf, and forgets them.
func (q *ControlEvents) Take(buf []ControlEvent) []ControlEvent {
	q.mu.Lock()
	defer q.mu.Unlock()
	buf = append(buf, q.items...)
	clear(q.items)
	q.items = q.items[:0]
	return buf
}

// Close drops what is queued; later pushes are ignored.
func (q *ControlEvents) Close() {
	q.mu.Lock()
	q.closed = true
	q.items = nil
	q.mu.Unlock()
}

// MemRegistry is an in-process control plane shared by federates in one
// process: agreement is a mutex, failure detection is Crash. It is safe
// for concurrent use.
type MemRegistry struct {
	mu          sync.Mutex
	federations map[string]*memExecution
	next        FederateHandle
}

type memExecution struct {
	spec    FederationSpec
	members map[FederateHandle]*memMember
	keys    map[string]*memKey
	states  map[FederateHandle]map[string]StateEntry
	version uint64
}

type memKey struct {
	version uint64
	value   []byte
	holder  FederateHandle
}

type memMember struct {
	Member
	node *memControl
}

// NewMemRegistry returns an empty registry.
func NewMemRegistry() *MemRegistry {
	return &MemRegistry{federations: make(map[string]*memExecution)}
}

// Control returns a control plane for one federate of federation. It
// starts no goroutine: events go straight into the federate's queue.
func (r *MemRegistry) Control(federation string) ControlPlane {
	return &memControl{reg: r, fed: federation, events: NewControlEvents()}
}

// ManualControl returns a control plane for one manual federate
// (Config.Manual) of federation; the federate takes its events at each
// Tick. (Control does the same now; both start no goroutine.)
func (r *MemRegistry) ManualControl(federation string) ControlPlane {
	return r.Control(federation)
}

// Crash makes a federate disappear as if its host died: the others get
// MemberLost, and its names and keys are freed.
func (r *MemRegistry) Crash(federation string, h FederateHandle) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fd := r.federations[federation]
	if fd == nil || fd.members[h] == nil {
		return
	}
	fd.members[h].node.dead = true
	r.removeLocked(fd, h, ControlEvent{Kind: MemberLost})
}

// Expel drops a federate from the federation as a control plane does
// with a member it declared dead in a partition: the others get
// MemberLost, and the federate itself, still running, gets SelfLost.
func (r *MemRegistry) Expel(federation string, h FederateHandle) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fd := r.federations[federation]
	if fd == nil || fd.members[h] == nil {
		return
	}
	node := fd.members[h].node
	node.dead = true
	r.removeLocked(fd, h, ControlEvent{Kind: MemberLost})
	node.events.Push(ControlEvent{Kind: SelfLost, Reason: "the control plane declared this federate lost"})
}

// removeLocked removes member h of fd and tells the others ev (its Kind
// and Action).
func (r *MemRegistry) removeLocked(fd *memExecution, h FederateHandle, ev ControlEvent) {
	m := fd.members[h]
	if m == nil {
		return
	}
	delete(fd.members, h)
	delete(fd.states, h)
	for k, key := range fd.keys {
		if key.holder == h {
			fd.keys[k] = &memKey{version: key.version + 1}
		}
	}
	ev.Member = m.Member
	for _, o := range fd.members {
		o.node.events.Push(ev)
	}
}

type memControl struct {
	reg  *MemRegistry
	fed  string
	self FederateHandle
	dead bool // guarded by reg.mu

	events *ControlEvents
	once   sync.Once
}

var errCrashed = errors.New("peer: control plane node crashed")

func (c *memControl) check() error {
	if c.dead {
		return errCrashed
	}
	return nil
}

// federation returns the federation record, or an error when it does not
// exist. Under reg.mu.
func (c *memControl) federation() (*memExecution, error) {
	fd := c.reg.federations[c.fed]
	if fd == nil {
		return nil, fmt.Errorf("%w: %s", ErrFederationExecutionDoesNotExist, c.fed)
	}
	return fd, nil
}

// member returns the federation record for a call that needs this
// federate to be joined. Under reg.mu.
func (c *memControl) member() (*memExecution, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	fd, err := c.federation()
	if err != nil {
		return nil, err
	}
	if c.self == 0 || fd.members[c.self] == nil {
		return nil, ErrFederateNotExecutionMember
	}
	return fd, nil
}

func (c *memControl) CreateFederation(_ context.Context, spec FederationSpec) error {
	c.reg.mu.Lock()
	defer c.reg.mu.Unlock()
	if err := c.check(); err != nil {
		return err
	}
	if c.reg.federations[c.fed] != nil {
		return fmt.Errorf("%w: %s", ErrFederationExecutionAlreadyExists, c.fed)
	}
	spec = spec.clone()
	spec.Modules = dedupModules(nil, spec.Modules)
	c.reg.federations[c.fed] = &memExecution{
		spec:    spec,
		members: make(map[FederateHandle]*memMember),
		keys:    make(map[string]*memKey),
		states:  make(map[FederateHandle]map[string]StateEntry),
	}
	return nil
}

// dedupModules appends to have the modules of add whose digests it does
// not hold.
func dedupModules(have, add []Module) []Module {
	for _, m := range add {
		if !slices.ContainsFunc(have, func(x Module) bool { return x.Digest == m.Digest }) {
			have = append(have, m)
		}
	}
	return have
}

func (c *memControl) Federation(context.Context) (FederationSpec, bool, error) {
	c.reg.mu.Lock()
	defer c.reg.mu.Unlock()
	if err := c.check(); err != nil {
		return FederationSpec{}, false, err
	}
	fd := c.reg.federations[c.fed]
	if fd == nil {
		return FederationSpec{}, false, nil
	}
	return fd.spec.clone(), true, nil
}

func (c *memControl) DestroyFederation(context.Context) error {
	c.reg.mu.Lock()
	defer c.reg.mu.Unlock()
	if err := c.check(); err != nil {
		return err
	}
	fd, err := c.federation()
	if err != nil {
		return err
	}
	if len(fd.members) > 0 {
		return fmt.Errorf("%w: %d joined", ErrFederatesCurrentlyJoined, len(fd.members))
	}
	delete(c.reg.federations, c.fed)
	return nil
}

func (c *memControl) ListFederations(context.Context) ([]FederationExecutionInformation, error) {
	c.reg.mu.Lock()
	defer c.reg.mu.Unlock()
	if err := c.check(); err != nil {
		return nil, err
	}
	var out []FederationExecutionInformation
	for name, fd := range c.reg.federations {
		out = append(out, FederationExecutionInformation{FederationExecutionName: name, LogicalTimeImplementationName: fd.spec.TimeRepresentation})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].FederationExecutionName < out[j].FederationExecutionName })
	return out, nil
}

func (c *memControl) JoinFederate(_ context.Context, req JoinRequest) (FederateHandle, string, error) {
	c.reg.mu.Lock()
	defer c.reg.mu.Unlock()
	if err := c.check(); err != nil {
		return 0, "", err
	}
	fd, err := c.federation()
	if err != nil {
		return 0, "", err
	}
	if c.self != 0 {
		return 0, "", ErrFederateAlreadyExecutionMember
	}
	if req.TimeRepresentation != "" && fd.spec.TimeRepresentation != "" && req.TimeRepresentation != fd.spec.TimeRepresentation {
		return 0, "", fmt.Errorf("%w: the federation uses %s, not %s", ErrCouldNotCreateLogicalTimeFactory, fd.spec.TimeRepresentation, req.TimeRepresentation)
	}
	adds := dedupModules(nil, slices.DeleteFunc(slices.Clone(req.Modules), func(m Module) bool {
		return slices.ContainsFunc(fd.spec.Modules, func(x Module) bool { return x.Digest == m.Digest })
	}))
	if len(adds) > 0 && req.KnownModules != len(fd.spec.Modules) {
		return 0, "", ErrModulesChanged
	}
	name := req.Name
	if name == "" {
		name = fmt.Sprintf("federate-%d", c.reg.next+1)
	}
	for _, m := range fd.members {
		if m.Name == name {
			return 0, "", fmt.Errorf("%w: %q", ErrFederateNameAlreadyInUse, name)
		}
	}
	c.reg.next++
	h := c.reg.next
	m := &memMember{Member: Member{Handle: h, Name: name, Type: req.Type}, node: c}
	if len(adds) > 0 {
		fd.spec.Modules = append(fd.spec.Modules, adds...)
		all := slices.Clone(fd.spec.Modules)
		for _, o := range fd.members {
			o.node.events.Push(ControlEvent{Kind: ModulesChanged, Modules: all})
		}
	}
	for _, o := range fd.members {
		o.node.events.Push(ControlEvent{Kind: MemberJoined, Member: m.Member})
	}
	fd.members[h] = m
	c.self = h
	return h, name, nil
}

func (c *memControl) ResignFederate(_ context.Context, action ResignAction) error {
	c.reg.mu.Lock()
	defer c.reg.mu.Unlock()
	fd, err := c.member()
	if err != nil {
		return err
	}
	c.reg.removeLocked(fd, c.self, ControlEvent{Kind: MemberResigned, Action: action})
	c.self = 0
	return nil
}

func (c *memControl) entry(fd *memExecution, key string) Entry {
	k := fd.keys[key]
	if k == nil {
		return Entry{Key: key}
	}
	return Entry{Key: key, Value: slices.Clone(k.value), Version: k.version, Holder: k.holder}
}

func (c *memControl) Acquire(_ context.Context, key string, value []byte) (Entry, bool, error) {
	c.reg.mu.Lock()
	defer c.reg.mu.Unlock()
	fd, err := c.member()
	if err != nil {
		return Entry{}, false, err
	}
	return c.acquireLocked(fd, key, value)
}

// acquireLocked takes key for this federate if it is free. Under reg.mu.
func (c *memControl) acquireLocked(fd *memExecution, key string, value []byte) (Entry, bool, error) {
	k := fd.keys[key]
	if k == nil || k.holder == 0 {
		v := uint64(1)
		if k != nil {
			v = k.version + 1
		}
		fd.keys[key] = &memKey{version: v, value: slices.Clone(value), holder: c.self}
	}
	e := c.entry(fd, key)
	return e, e.Holder == c.self, nil
}

func (c *memControl) AcquireIfJoined(_ context.Context, key string, value []byte, set []FederateHandle) (Entry, bool, error) {
	c.reg.mu.Lock()
	defer c.reg.mu.Unlock()
	fd, err := c.member()
	if err != nil {
		return Entry{}, false, err
	}
	for _, h := range set {
		if fd.members[h] == nil {
			return c.entry(fd, key), false, fmt.Errorf("%w: federate %d", ErrSetMemberNotJoined, h)
		}
	}
	return c.acquireLocked(fd, key, value)
}

func (c *memControl) CompareAndSwap(_ context.Context, key string, expect uint64, value []byte) (Entry, bool, error) {
	c.reg.mu.Lock()
	defer c.reg.mu.Unlock()
	fd, err := c.member()
	if err != nil {
		return Entry{}, false, err
	}
	var v uint64
	if k := fd.keys[key]; k != nil {
		v = k.version
	}
	if v != expect {
		return c.entry(fd, key), false, nil
	}
	fd.keys[key] = &memKey{version: v + 1, value: slices.Clone(value), holder: c.self}
	return c.entry(fd, key), true, nil
}

func (c *memControl) Release(_ context.Context, key string) (Entry, error) {
	c.reg.mu.Lock()
	defer c.reg.mu.Unlock()
	fd, err := c.member()
	if err != nil {
		return Entry{}, err
	}
	k := fd.keys[key]
	switch {
	case k == nil || k.holder == 0:
	case k.holder != c.self:
		return c.entry(fd, key), fmt.Errorf("peer: key %q is held by federate %d", key, k.holder)
	default:
		fd.keys[key] = &memKey{version: k.version + 1}
	}
	return c.entry(fd, key), nil
}

func (c *memControl) Read(_ context.Context, key string) (Entry, error) {
	c.reg.mu.Lock()
	defer c.reg.mu.Unlock()
	fd, err := c.member()
	if err != nil {
		return Entry{}, err
	}
	return c.entry(fd, key), nil
}

func (c *memControl) SetState(key string, value []byte) error {
	c.reg.mu.Lock()
	defer c.reg.mu.Unlock()
	fd, err := c.member()
	if err != nil {
		return err
	}
	fd.version++
	e := StateEntry{Federate: c.self, Key: key, Value: slices.Clone(value), Version: fd.version}
	st := fd.states[c.self]
	if st == nil {
		st = make(map[string]StateEntry)
		fd.states[c.self] = st
	}
	if value == nil {
		delete(st, key)
	} else {
		st[key] = e
	}
	self := fd.members[c.self].Member
	for h, o := range fd.members {
		if h != c.self {
			o.node.events.Push(ControlEvent{Kind: StateChanged, Member: self, Key: key, Value: slices.Clone(value), Version: e.Version})
		}
	}
	return nil
}

func (c *memControl) States() []StateEntry {
	c.reg.mu.Lock()
	defer c.reg.mu.Unlock()
	fd := c.reg.federations[c.fed]
	if fd == nil {
		return nil
	}
	var out []StateEntry
	for _, st := range fd.states {
		for _, e := range st {
			e.Value = slices.Clone(e.Value)
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Federate != out[j].Federate {
			return out[i].Federate < out[j].Federate
		}
		return out[i].Key < out[j].Key
	})
	return out
}

func (c *memControl) Members() []Member {
	c.reg.mu.Lock()
	defer c.reg.mu.Unlock()
	fd := c.reg.federations[c.fed]
	if fd == nil {
		return nil
	}
	var out []Member
	for _, m := range fd.members {
		out = append(out, m.Member)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Handle < out[j].Handle })
	return out
}

func (c *memControl) Events() *ControlEvents { return c.events }

func (c *memControl) Close() error {
	c.once.Do(func() {
		c.reg.mu.Lock()
		if fd := c.reg.federations[c.fed]; fd != nil && c.self != 0 && !c.dead {
			// Leaving without resigning looks like a crash to the others.
			c.reg.removeLocked(fd, c.self, ControlEvent{Kind: MemberLost})
		}
		c.dead = true
		c.reg.mu.Unlock()
		c.events.Close()
	})
	return nil
}
