package gossip

// This file holds memberlist's delegates. Their methods run on
// memberlist's goroutines and never block.

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/hashicorp/memberlist"
	"github.com/meshrti/meshrti/gossip/internal/agree"
	"github.com/vmihailenco/msgpack/v5"
)

// delegate is memberlist's Delegate. Its methods run on memberlist's
// goroutines and never block.
type delegate struct{ c *Cluster }

func (d *delegate) NodeMeta(limit int) []byte {
	d.c.metaMu.Lock()
	defer d.c.metaMu.Unlock()
	if len(d.c.metaBuf) > limit {
		return nil
	}
	return append([]byte(nil), d.c.metaBuf...)
}

// NotifyMsg handles a user message. Whatever the bytes, it returns
// without panicking; what does not decode is counted in
// Stats.MalformedMessages and dropped.
func (d *delegate) NotifyMsg(b []byte) {
	c := d.c
	if c.closing.Load() {
		return
	}
	if len(b) < 2 {
		c.stats.malformedMessages.Add(1)
		return
	}
	switch b[0] {
	case wireAgree:
		var m agree.Message
		if !c.decodeOrCount(b[1:], &m, "agreement") {
			return
		}
		c.post(func() { c.core.Step(m) })
	case wireState:
		var e stateEntry
		if !c.decodeOrCount(b[1:], &e, "state") {
			return
		}
		if c.mergeStates([]stateEntry{e}) > 0 && len(b) <= maxGossip {
			// New to us: relay it, so it spreads epidemically.
			c.bcast.QueueBroadcast(&stateBroadcast{name: e.Owner + "\x00" + e.Key, msg: append([]byte(nil), b...)})
		}
	case wireBye:
		var id agree.NodeID
		if err := decode(b[1:], &id); err != nil {
			c.stats.malformedMessages.Add(1)
			return
		}
		c.memMu.Lock()
		c.byes[id.Name] = id.Inc
		m, known := c.members[id.Name]
		c.memMu.Unlock()
		if known && m.State == MemberDead && m.inc == id.Inc {
			// memberlist's leave overtook the goodbye (another path):
			// it left all the same.
			c.setMember(m, EventFailed)
		}
	default:
		c.stats.malformedMessages.Add(1)
	}
}

// decodeOrCount decodes b into v; a message that does not decode is
// counted as malformed and logged as an undecodable what message.
func (c *Cluster) decodeOrCount(b []byte, v any, what string) bool {
	if err := decode(b, v); err != nil {
		c.stats.malformedMessages.Add(1)
		c.log.Debug().Err(err).Msg("undecodable " + what + " message")
		return false
	}
	return true
}

func (d *delegate) GetBroadcasts(overhead, limit int) [][]byte {
	return d.c.bcast.GetBroadcasts(overhead, limit)
}

// pushPull is this node's side of memberlist's periodic full state
// exchange: every replicated-state entry, and where its log stands.
type pushPull struct {
	Node   string       `msgpack:"n"`
	Log    string       `msgpack:"l,omitempty"`
	Index  uint64       `msgpack:"x,omitempty"`
	States []stateEntry `msgpack:"s,omitempty"`
}

func (d *delegate) LocalState(join bool) []byte {
	c := d.c
	c.viewMu.RLock()
	pp := pushPull{Node: c.cfg.NodeName, Log: c.view.log, Index: c.view.index}
	c.viewMu.RUnlock()
	c.stateMu.Lock()
	pp.States = c.states.all()
	c.stateMu.Unlock()
	buf, err := msgpack.Marshal(&pp)
	if err != nil {
		return nil
	}
	return buf
}

// MergeRemoteState merges a member's push-pull state. Whatever the
// bytes, it returns without panicking; what does not decode is counted
// in Stats.MalformedStates and dropped.
func (d *delegate) MergeRemoteState(buf []byte, join bool) {
	c := d.c
	if c.closing.Load() {
		return
	}
	var pp pushPull
	if err := decode(buf, &pp); err != nil {
		c.stats.malformedStates.Add(1)
		c.log.Debug().Err(err).Msg("undecodable push-pull state")
		return
	}
	c.mergeStates(pp.States)
	if pp.Log != "" && pp.Node != "" && pp.Node != c.cfg.NodeName {
		c.post(func() { c.core.Observe(pp.Node, pp.Log, pp.Index) })
	}
}

// mergeStates folds entries into the store, emits their events and
// returns how many changed this node's view. Events are queued under the
// store's lock, so they leave in the order the merges happened.
func (c *Cluster) mergeStates(es []stateEntry) int {
	c.stateMu.Lock()
	defer c.stateMu.Unlock()
	var changed []stateEntry
	for _, e := range es {
		changed = append(changed, c.states.merge(e)...)
	}
	if len(changed) == 0 {
		return 0
	}
	evs := make([]Event, 0, len(changed))
	for _, e := range changed {
		m, ok := c.member(e.Owner)
		if !ok {
			m = Member{Name: e.Owner}
		}
		var v []byte
		if !e.Deleted {
			v = bytes.Clone(e.Value)
		}
		evs = append(evs, Event{Kind: EventStateChanged, Member: m, Key: e.Key, Value: v, Version: e.Version})
	}
	c.events.push(evs...)
	return len(changed)
}

func (c *Cluster) member(name string) (Member, bool) {
	c.memMu.Lock()
	defer c.memMu.Unlock()
	m, ok := c.members[name]
	return m, ok
}

// eventDelegate is memberlist's EventDelegate.
type eventDelegate struct{ c *Cluster }

func (d *eventDelegate) NotifyJoin(n *memberlist.Node)   { d.c.memberChanged(n, EventJoined) }
func (d *eventDelegate) NotifyUpdate(n *memberlist.Node) { d.c.memberChanged(n, EventUpdated) }
func (d *eventDelegate) NotifyLeave(n *memberlist.Node) {
	// memberlist does not tell a graceful leave from a death here
	// (Node.State is not kept up to date); a goodbye message does.
	d.c.memberChanged(n, EventFailed)
}

func (c *Cluster) memberChanged(n *memberlist.Node, kind EventKind) {
	m := memberFromNode(n)
	c.memMu.Lock()
	if _, held := c.suspects[m.Name]; held {
		c.suspects[m.Name] = m // what it clears to
		c.memMu.Unlock()
		return // Suspect holds it dead here, whatever memberlist says
	}
	c.memMu.Unlock()
	c.setMember(m, kind)
}

// setMember records what failure detection says of member m (kind is
// EventJoined, EventUpdated or EventFailed) and reports it.
func (c *Cluster) setMember(m Member, kind EventKind) {
	if c.closing.Load() {
		return
	}
	c.memMu.Lock()
	switch kind {
	case EventJoined, EventUpdated:
		m.State = MemberAlive
		if inc, ok := c.byes[m.Name]; ok && inc != m.inc {
			delete(c.byes, m.Name) // a new process with that name
		}
	case EventFailed:
		m.State = MemberDead
		if inc, ok := c.byes[m.Name]; ok && inc == m.inc {
			kind, m.State = EventLeft, MemberLeft
		}
	}
	prev, known := c.members[m.Name]
	switch {
	case kind == EventFailed && (!known || prev.State == MemberAlive):
		c.stats.suspicions.Add(1)
	case m.State == MemberAlive && known && prev.State == MemberDead && prev.inc == m.inc:
		c.stats.refutations.Add(1)
	}
	c.members[m.Name] = m
	var alive int32
	for _, x := range c.members {
		if x.State == MemberAlive {
			alive++
		}
	}
	c.memMu.Unlock()
	c.alive.Store(alive)
	ev := Event{Kind: kind, Member: m}
	if kind == EventLeft || kind == EventFailed {
		c.viewMu.RLock()
		if c.view.fed != nil {
			for _, fr := range c.view.fed.Federates {
				if fr.Node.Name == m.Name && (m.inc == 0 || fr.Node.Inc == m.inc) {
					ev.Federate = federateInfo(fr)
				}
			}
		}
		c.viewMu.RUnlock()
		c.log.Info().Str("member", m.Name).Str("event", kind.String()).Msg("member gone")
	}
	c.events.push(ev)
}

// mergeDelegate and aliveDelegate keep nodes of another wire protocol
// out: a join that would merge with one fails, on the joiner's side,
// with ErrProtocolVersion naming both protocols and releases, and news
// of one alive is ignored.
type mergeDelegate struct{ c *Cluster }

func (d *mergeDelegate) NotifyMerge(peers []*memberlist.Node) error {
	for _, n := range peers {
		if err := d.c.checkProtocol(n); err != nil {
			return err
		}
	}
	return nil
}

func (d *mergeDelegate) NotifyAlive(n *memberlist.Node) error { return d.c.checkProtocol(n) }

// checkProtocol returns ErrProtocolVersion when node n speaks another
// wire protocol than this node.
func (c *Cluster) checkProtocol(n *memberlist.Node) error {
	if n.Name == c.cfg.NodeName {
		return nil
	}
	meta, _ := decodeMeta(n.Meta)
	own := c.cfg.Meta
	if meta.ProtocolVersion == own.ProtocolVersion {
		return nil
	}
	release := meta.Release
	if release == "" {
		release = "a release before v0.6"
	}
	c.stats.rejectedNodes.Add(1)
	return fmt.Errorf("%w: node %s (meshrti %s) speaks wire protocol %d, node %s (meshrti %s) speaks %d; members of one federation must speak one (docs/deploy.md, Versions)",
		ErrProtocolVersion, n.Name, release, meta.ProtocolVersion, c.cfg.NodeName, own.Release, own.ProtocolVersion)
}

// protocolCause is the part of a join error that ErrProtocolVersion's
// message starts, without memberlist's wrapping around it.
func protocolCause(err error) string {
	s := err.Error()
	if i := strings.Index(s, ErrProtocolVersion.Error()); i >= 0 {
		s = s[i+len(ErrProtocolVersion.Error()):]
		s = strings.TrimPrefix(s, ": ")
		if j := strings.Index(s, "(docs/deploy.md, Versions)"); j >= 0 {
			s = s[:j+len("(docs/deploy.md, Versions)")]
		}
	}
	return s
}
