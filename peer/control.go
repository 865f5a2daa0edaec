package peer

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
)

// ControlPlane is what a federate needs from the federation's control
// plane: membership with failure detection, and agreement on the things
// that must be unique (the federation's existence, federate names, object
// instance names). One ControlPlane serves one federate.
//
// meshrti's real control plane is the gossip package (a memberlist
// cluster with a quorum register), wired in by Join when Config.Control is
// nil. MemRegistry provides an in-process one for tests and simulations.
type ControlPlane interface {
	// CreateFederation creates the federation execution; an existing one
	// is ErrFederationExecutionAlreadyExists.
	CreateFederation(ctx context.Context) error
	// FederationExists reports whether the federation was created and not
	// destroyed.
	FederationExists(ctx context.Context) (bool, error)
	// DestroyFederation destroys it; ErrFederatesCurrentlyJoined while any
	// federate is joined.
	DestroyFederation(ctx context.Context) error
	// ListFederations names the federation executions visible from this
	// node.
	ListFederations(ctx context.Context) ([]string, error)
	// JoinFederate makes this node's federate a member and returns its
	// handle, the same in every member's view. A name in use is
	// ErrFederateNameAlreadyInUse; "" asks for a generated name, returned.
	JoinFederate(ctx context.Context, name, federateType string) (FederateHandle, string, error)
	// ResignFederate ends the membership and frees the name.
	ResignFederate(ctx context.Context) error
	// Acquire takes a federation-wide unique key for this federate. It
	// returns false when another federate holds it.
	Acquire(ctx context.Context, key string) (bool, error)
	// Members lists the joined federates, this one included.
	Members() []Member
	// Events delivers membership changes of other federates, in order. It
	// is closed by Close.
	Events() <-chan MemberEvent
	// Close leaves (without resigning, if still joined: others see this
	// federate lost) and waits for everything it started.
	Close() error
}

// Member is a joined federate as the control plane knows it.
type Member struct {
	Handle FederateHandle
	Name   string
	Type   string
}

// MemberEventKind tells what happened to a member.
type MemberEventKind int

const (
	MemberJoined MemberEventKind = iota + 1
	MemberResigned
	MemberLost
)

// MemberEvent is one membership change.
type MemberEvent struct {
	Kind   MemberEventKind
	Member Member
}

// MemRegistry is an in-process control plane shared by federates in one
// process: agreement is a mutex, failure detection is Crash. It is safe
// for concurrent use.
type MemRegistry struct {
	mu          sync.Mutex
	federations map[string]bool
	members     map[string]map[FederateHandle]*memMember // federation -> members
	keys        map[string]FederateHandle                // federation + key -> holder
	next        FederateHandle
}

type memMember struct {
	Member
	node *memControl
}

// NewMemRegistry returns an empty registry.
func NewMemRegistry() *MemRegistry {
	return &MemRegistry{
		federations: make(map[string]bool),
		members:     make(map[string]map[FederateHandle]*memMember),
		keys:        make(map[string]FederateHandle),
	}
}

// Control returns a control plane for one federate of federation.
func (r *MemRegistry) Control(federation string) ControlPlane {
	return &memControl{reg: r, fed: federation, events: newMemberPump()}
}

// ManualControl returns a control plane for one manual federate
// (Config.Manual) of federation: it starts no goroutine, and the
// federate takes its membership events at each Tick instead of from
// Events.
func (r *MemRegistry) ManualControl(federation string) ControlPlane {
	return &memControl{reg: r, fed: federation, events: &memberPump{done: make(chan struct{})}}
}

// Crash makes a federate disappear as if its host died: the others get
// MemberLost, and its names are freed.
func (r *MemRegistry) Crash(federation string, h FederateHandle) {
	r.mu.Lock()
	m := r.members[federation][h]
	if m == nil {
		r.mu.Unlock()
		return
	}
	m.node.dead = true
	r.removeLocked(federation, h, MemberLost)
	r.mu.Unlock()
}

func (r *MemRegistry) removeLocked(federation string, h FederateHandle, kind MemberEventKind) {
	m := r.members[federation][h]
	if m == nil {
		return
	}
	delete(r.members[federation], h)
	for k, holder := range r.keys {
		if holder == h {
			delete(r.keys, k)
		}
	}
	for _, o := range r.members[federation] {
		o.node.events.push(MemberEvent{Kind: kind, Member: m.Member})
	}
}

type memControl struct {
	reg  *MemRegistry
	fed  string
	self FederateHandle
	dead bool // guarded by reg.mu

	events *memberPump
	once   sync.Once
}

var errCrashed = errors.New("peer: control plane node crashed")

func (c *memControl) check() error {
	if c.dead {
		return errCrashed
	}
	return nil
}

func (c *memControl) CreateFederation(context.Context) error {
	c.reg.mu.Lock()
	defer c.reg.mu.Unlock()
	if err := c.check(); err != nil {
		return err
	}
	if c.reg.federations[c.fed] {
		return fmt.Errorf("%w: %s", ErrFederationExecutionAlreadyExists, c.fed)
	}
	c.reg.federations[c.fed] = true
	return nil
}

func (c *memControl) FederationExists(context.Context) (bool, error) {
	c.reg.mu.Lock()
	defer c.reg.mu.Unlock()
	return c.reg.federations[c.fed], c.check()
}

func (c *memControl) DestroyFederation(context.Context) error {
	c.reg.mu.Lock()
	defer c.reg.mu.Unlock()
	if err := c.check(); err != nil {
		return err
	}
	if !c.reg.federations[c.fed] {
		return fmt.Errorf("%w: %s", ErrFederationExecutionDoesNotExist, c.fed)
	}
	if len(c.reg.members[c.fed]) > 0 {
		return fmt.Errorf("%w: %d joined", ErrFederatesCurrentlyJoined, len(c.reg.members[c.fed]))
	}
	delete(c.reg.federations, c.fed)
	return nil
}

func (c *memControl) ListFederations(context.Context) ([]string, error) {
	c.reg.mu.Lock()
	defer c.reg.mu.Unlock()
	if err := c.check(); err != nil {
		return nil, err
	}
	var out []string
	for name := range c.reg.federations {
		out = append(out, name)
	}
	sort.Strings(out)
	return out, nil
}

func (c *memControl) JoinFederate(_ context.Context, name, typ string) (FederateHandle, string, error) {
	c.reg.mu.Lock()
	defer c.reg.mu.Unlock()
	if err := c.check(); err != nil {
		return 0, "", err
	}
	if !c.reg.federations[c.fed] {
		return 0, "", fmt.Errorf("%w: %s", ErrFederationExecutionDoesNotExist, c.fed)
	}
	if c.self != 0 {
		return 0, "", ErrFederateAlreadyExecutionMember
	}
	c.reg.next++
	h := c.reg.next
	if name == "" {
		name = fmt.Sprintf("federate-%d", h)
	}
	members := c.reg.members[c.fed]
	if members == nil {
		members = make(map[FederateHandle]*memMember)
		c.reg.members[c.fed] = members
	}
	for _, m := range members {
		if m.Name == name {
			return 0, "", fmt.Errorf("%w: %q", ErrFederateNameAlreadyInUse, name)
		}
	}
	m := &memMember{Member: Member{Handle: h, Name: name, Type: typ}, node: c}
	for _, o := range members {
		o.node.events.push(MemberEvent{Kind: MemberJoined, Member: m.Member})
	}
	members[h] = m
	c.self = h
	return h, name, nil
}

func (c *memControl) ResignFederate(context.Context) error {
	c.reg.mu.Lock()
	defer c.reg.mu.Unlock()
	if err := c.check(); err != nil {
		return err
	}
	if c.self == 0 {
		return ErrFederateNotExecutionMember
	}
	c.reg.removeLocked(c.fed, c.self, MemberResigned)
	c.self = 0
	return nil
}

func (c *memControl) Acquire(_ context.Context, key string) (bool, error) {
	c.reg.mu.Lock()
	defer c.reg.mu.Unlock()
	if err := c.check(); err != nil {
		return false, err
	}
	k := c.fed + "\x00" + key
	if h, ok := c.reg.keys[k]; ok {
		return h == c.self, nil
	}
	c.reg.keys[k] = c.self
	return true, nil
}

func (c *memControl) Members() []Member {
	c.reg.mu.Lock()
	defer c.reg.mu.Unlock()
	var out []Member
	for _, m := range c.reg.members[c.fed] {
		out = append(out, m.Member)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Handle < out[j].Handle })
	return out
}

func (c *memControl) Events() <-chan MemberEvent { return c.events.out }

func (c *memControl) manual() bool { return c.events.wake == nil }

// takeEvents returns the membership events queued for a manual federate
// (ManualControl) and forgets them.
func (c *memControl) takeEvents() []MemberEvent {
	p := c.events
	p.mu.Lock()
	defer p.mu.Unlock()
	evs := p.queue
	p.queue = nil
	return evs
}

func (c *memControl) Close() error {
	c.once.Do(func() {
		c.reg.mu.Lock()
		if c.self != 0 && !c.dead {
			// Leaving without resigning looks like a crash to the others.
			c.reg.removeLocked(c.fed, c.self, MemberLost)
		}
		c.dead = true
		c.reg.mu.Unlock()
		c.events.stop()
	})
	return nil
}

// memberPump hands membership events to a channel through an unbounded
// queue, so that whoever produces them (the registry, the gossip cluster's
// event reader) never blocks on a federate that is slow to read.
type memberPump struct {
	mu    sync.Mutex
	queue []MemberEvent
	wake  chan struct{} // capacity 1: "there may be events"
	out   chan MemberEvent
	done  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once
}

// newMemberPump starts the goroutine that feeds out; stop ends it.
func newMemberPump() *memberPump {
	p := &memberPump{wake: make(chan struct{}, 1), out: make(chan MemberEvent), done: make(chan struct{})}
	p.wg.Add(1)
	go p.run()
	return p
}

// push queues ev; it never blocks.
func (p *memberPump) push(ev MemberEvent) {
	p.mu.Lock()
	p.queue = append(p.queue, ev)
	p.mu.Unlock()
	if p.wake == nil {
		return // a manual pump (ManualControl): takeEvents empties it
	}
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// stop ends the pump, dropping what is still queued, closes out, and
// waits for the goroutine.
func (p *memberPump) stop() {
	p.once.Do(func() { close(p.done) })
	p.wg.Wait()
}

func (p *memberPump) run() {
	defer p.wg.Done()
	defer close(p.out)
	for {
		p.mu.Lock()
		var ev MemberEvent
		have := len(p.queue) > 0
		if have {
			ev = p.queue[0]
			p.queue = p.queue[1:]
		}
		p.mu.Unlock()
		if !have {
			select {
			case <-p.wake:
				continue
			case <-p.done:
				return
			}
		}
		select {
		case p.out <- ev:
		case <-p.done:
			return
		}
	}
}
