package gossip

import (
	"bytes"
	"context"
	"fmt"
	"github.com/meshrti/meshrti/gossip/internal/agree"
	"slices"
	"sort"
	"strings"
)

// Entry is the register's value for one key.
type Entry struct {
	Key string
	// Version counts the key's changes: the value chosen for instance
	// Key@Version. Taking a free key, freeing it, a CompareAndSwap that
	// swaps and the release of a lost node's keys each add one, so
	// Version also serves as a fencing epoch.
	Version uint64
	// Value is the holder's value; nil when the key is free.
	Value []byte
	// Holder is the node name holding the key; "" when free.
	Holder string
}

// Free reports whether nobody holds the key.
func (e Entry) Free() bool { return e.Holder == "" }

func entryOf(key string, e agree.KeyEntry) Entry {
	return Entry{Key: key, Version: e.Version, Value: append([]byte(nil), e.Value...), Holder: e.Holder.Name}
}

// Acquire takes key for this node with value if it is free, through the
// quorum register. It returns the entry after the decision and whether
// this node holds it (also when it already did). Two racing Acquires for
// a free key never both win, on either side of a partition. It blocks
// until decided, ctx ends, or Config.Timeout passes (ErrNoQuorum: the
// acquisition may still take effect; Read tells).
func (c *Cluster) Acquire(ctx context.Context, key string, value []byte) (Entry, bool, error) {
	r, err := c.submit(ctx, agree.Op{Kind: agree.OpAcquire, Key: key, Value: value})
	if err != nil {
		return Entry{}, false, err
	}
	if err := errorFor(r.Code); err != nil {
		return Entry{}, false, err
	}
	return entryOf(key, r.Entry), r.Entry.Holder == c.id, nil
}

// AcquireIfJoined is Acquire on the condition that every federate of
// handles is joined where the acquisition lands in the log: otherwise
// nothing changes and it returns ErrFederateNotJoined, naming the first
// one missing. The condition is decided with the acquisition, against the
// federate list the log keeps, so a federate whose JoinFederate returned
// before this call counts as joined, whatever this node's view shows yet.
// It blocks like Acquire.
func (c *Cluster) AcquireIfJoined(ctx context.Context, key string, value []byte, handles []uint64) (Entry, bool, error) {
	r, err := c.submit(ctx, agree.Op{Kind: agree.OpAcquire, Key: key, Value: value, Joined: slices.Clone(handles)})
	if err != nil {
		return Entry{}, false, err
	}
	if r.Code == agree.CodeNotMember {
		return entryOf(key, r.Entry), false, fmt.Errorf("%w: handle %d", ErrFederateNotJoined, r.Handle)
	}
	if err := errorFor(r.Code); err != nil {
		return Entry{}, false, err
	}
	return entryOf(key, r.Entry), r.Entry.Holder == c.id, nil
}

// CompareAndSwap makes this node key's holder with value, and adds one to
// its version, if and only if the key's version is expect when the swap
// is decided, whether the key is free or held (by anyone, this node
// included: a holder's key is taken from it). A key never used has
// version 0. It returns the entry after the decision and whether it
// swapped; when it did not, the entry shows the version that differed.
// The decision is one op in the agreement log, like Acquire: of swaps
// racing with the same expect, on either side of a partition, at most one
// swaps, and the entry's new version names that swap (a fencing epoch).
// It blocks like Acquire (ErrNoQuorum: the swap may still take effect;
// Read tells, by holder and version).
func (c *Cluster) CompareAndSwap(ctx context.Context, key string, expect uint64, value []byte) (Entry, bool, error) {
	r, err := c.submit(ctx, agree.Op{Kind: agree.OpCompareAndSwap, Key: key, Value: value, Expect: expect})
	if err != nil {
		return Entry{}, false, err
	}
	switch r.Code {
	case agree.CodeOK:
		return entryOf(key, r.Entry), true, nil
	case agree.CodeVersionMismatch:
		return entryOf(key, r.Entry), false, nil
	}
	return Entry{}, false, errorFor(r.Code)
}

// Propose proposes value for key and returns the value chosen: value
// itself when key was free, or the current holder's value (maybe someone
// else's). It is Acquire reduced to the chosen value; it blocks likewise.
func (c *Cluster) Propose(ctx context.Context, key string, value []byte) ([]byte, error) {
	e, _, err := c.Acquire(ctx, key, value)
	if err != nil {
		return nil, err
	}
	return e.Value, nil
}

// Release frees key if this node holds it, through the register, and
// returns the entry after the decision. A free key is left as it is. A
// key held by another node is left alone and returned with ErrNotHolder.
// It blocks like Acquire.
func (c *Cluster) Release(ctx context.Context, key string) (Entry, error) {
	r, err := c.submit(ctx, agree.Op{Kind: agree.OpRelease, Key: key})
	if err != nil {
		return Entry{}, err
	}
	return entryOf(key, r.Entry), errorFor(r.Code)
}

// Read returns key's entry as decided: it first confirms with a quorum
// that this node has applied everything chosen so far (a linearizable
// read). It blocks like Acquire.
func (c *Cluster) Read(ctx context.Context, key string) (Entry, error) {
	var e Entry
	err := c.barrier(ctx, func(f *agree.FSM) { e = entryOf(key, f.Keys[key]) })
	return e, err
}

// Lookup returns key's entry as this node last learned it, without
// asking anyone; it may lag behind the decisions. It never blocks.
func (c *Cluster) Lookup(key string) (Entry, bool) {
	c.viewMu.RLock()
	defer c.viewMu.RUnlock()
	e, ok := c.view.keys[key]
	return entryOf(key, e), ok
}

// Entries returns the entries whose key has prefix, held or not, as this
// node last learned them, sorted by key. It never blocks.
func (c *Cluster) Entries(prefix string) []Entry {
	c.viewMu.RLock()
	var out []Entry
	for k, e := range c.view.keys {
		if strings.HasPrefix(k, prefix) {
			out = append(out, entryOf(k, e))
		}
	}
	c.viewMu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// Roster returns the node names of the current acceptors, as this node
// last learned them.
func (c *Cluster) Roster() []string {
	c.viewMu.RLock()
	defer c.viewMu.RUnlock()
	out := make([]string, len(c.view.roster))
	for i, a := range c.view.roster {
		out[i] = a.Name
	}
	return out
}

// SetState sets one of this node's replicated state keys (value nil
// deletes it) and spreads it: through gossip broadcasts when small, else
// over the reliable channel to every member; push-pull exchanges carry
// it to late joiners. Only this node writes its keys; each write bumps
// its version, and every member keeps the highest version. It does not
// block.
func (c *Cluster) SetState(key string, value []byte) error {
	if c.closing.Load() {
		return ErrClosed
	}
	c.stateMu.Lock()
	e := c.states.set(key, bytes.Clone(value))
	c.stateMu.Unlock()
	buf := encodeWire(wireState, e)
	if len(buf) <= maxGossip {
		c.bcast.QueueBroadcast(&stateBroadcast{name: e.Owner + "\x00" + e.Key, msg: buf})
		return nil
	}
	c.post(func() {
		for _, m := range c.aliveMembers() {
			c.sendTo(m.Name, buf)
		}
	})
	return nil
}

// StateEntry is one live replicated-state key of one member.
type StateEntry struct {
	Owner string // node name of the member that wrote it (FederateInfo.Node maps it to a federate)
	Key   string
	Value []byte // a copy
	// Version is the owner's version of the write: it grows with each
	// write of the owner's process (across its keys), and restarts from
	// 1 in a new process with the same name. EventStateChanged carries it
	// too.
	Version uint64
}

// StateEntries returns the live replicated-state entries of every member
// alive (this node included), with their versions, sorted by owner then
// key. It never blocks.
func (c *Cluster) StateEntries() []StateEntry {
	alive := c.aliveNames()
	c.stateMu.Lock()
	defer c.stateMu.Unlock()
	return c.states.entries(func(owner string) bool { return alive[owner] })
}

// FederateStateEntries returns the live replicated-state entries of
// every node that runs a joined federate (as the register last told this
// node), this node included, sorted as StateEntries sorts them. Unlike
// StateEntries it does not ask failure detection: a federate's state
// stays visible while this node only suspects its node, until the
// register removes the federate (docs/gossip.md, "What a suspicion does").
// It never blocks.
func (c *Cluster) FederateStateEntries() []StateEntry {
	joined := map[string]bool{c.cfg.NodeName: true}
	c.viewMu.RLock()
	if c.view.fed != nil {
		for _, fr := range c.view.fed.Federates {
			joined[fr.Node.Name] = true
		}
	}
	c.viewMu.RUnlock()
	c.stateMu.Lock()
	defer c.stateMu.Unlock()
	return c.states.entries(func(owner string) bool { return joined[owner] })
}

func (c *Cluster) aliveNames() map[string]bool {
	c.memMu.Lock()
	defer c.memMu.Unlock()
	alive := map[string]bool{c.cfg.NodeName: true}
	for name, m := range c.members {
		if m.State == MemberAlive {
			alive[name] = true
		}
	}
	return alive
}

// States returns the replicated state of every member alive
// (this node included): node name -> key -> value. Values are copies.
// It never blocks.
func (c *Cluster) States() map[string]map[string][]byte {
	alive := c.aliveNames()
	c.stateMu.Lock()
	defer c.stateMu.Unlock()
	return c.states.view(func(owner string) bool { return alive[owner] })
}
