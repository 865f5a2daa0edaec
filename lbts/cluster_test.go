package lbts

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// This file holds the in-process federation the scenario, randomized and
// benchmark tests drive: Nodes, an in-flight packet list standing in for
// the control group and the data plane, and invariant checks on every
// output a Node produces.

// packet is one message in flight to one receiver.
type packet struct {
	to   FederateID
	from FederateID
	ctrl *Message // a control-group Message, or
	// a data-plane message on group with sequence seq; tso is nil for RO.
	group uint32
	seq   uint64
	tso   *TSO
}

func (p *packet) String() string {
	if p.ctrl != nil {
		return fmt.Sprintf("%d->%d ctrl %v", p.from, p.to, p.ctrl)
	}
	if p.tso == nil {
		return fmt.Sprintf("%d->%d ro group=%d seq=%d", p.from, p.to, p.group, p.seq)
	}
	return fmt.Sprintf("%d->%d tso group=%d seq=%d t=%s", p.from, p.to, p.group, p.seq, fmtTime(p.tso.Time))
}

// simNode is one federate in the cluster, with what the harness saw it do.
type simNode struct {
	id     FederateID
	n      *Node
	joined map[uint32]bool
	seq    map[uint32]uint64 // own sequence numbers per group

	// The federate's view, built only from Ready outputs.
	time        float64
	constrained bool
	floor       float64 // constrained: deliveries must be > floor (strict) or >= floor
	floorStrict bool
	last        *TSO  // last TSO delivered in the current constrained period
	delivered   []TSO // TSO messages delivered while constrained
	grants      int
	// loose: the node used TARA or NMRA, after whose grant to t more
	// messages at t may arrive, so among equal time stamps its order may
	// differ from others'. flushed: it used FQR, which delivers ahead of
	// time, so its order is not comparable at all.
	loose, flushed bool
	// lastStrict: the latest grant was TAR, NMR or FQR, after which a
	// zero-lookahead federate may not send at the granted time.
	lastStrict bool
}

// cluster is a federation in one process.
type cluster struct {
	nodes    map[FederateID]*simNode
	sorted   []FederateID // ids(), cached; nil when stale
	inflight []packet
	// log receives one line per event when non-nil.
	log *strings.Builder
	// fail receives broken invariants.
	fail func(format string, args ...any)
	// directAcks makes nodes acknowledge with directed Messages
	// (Config.DirectAcks); loseDirected, when set, drops each directed
	// Message for which it returns true (they go without repair).
	directAcks             bool
	loseDirected           func() bool
	directed, directedLost int
}

func newCluster() *cluster {
	c := &cluster{nodes: map[FederateID]*simNode{}}
	c.fail = func(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
	return c
}

// ids returns the node IDs in order. The caller must not keep the slice
// across add, remove or crash.
func (c *cluster) ids() []FederateID {
	if c.sorted == nil {
		c.sorted = make([]FederateID, 0, len(c.nodes))
		for id := range c.nodes {
			c.sorted = append(c.sorted, id)
		}
		slices.Sort(c.sorted)
	}
	return c.sorted
}

func (c *cluster) logf(id FederateID, format string, args ...any) {
	if c.log != nil {
		fmt.Fprintf(c.log, "%d: %s\n", id, fmt.Sprintf(format, args...))
	}
}

// add creates federate id, joined to groups, and makes every federate
// know every other.
func (c *cluster) add(id FederateID, t0 float64, groups ...uint32) *simNode {
	n, err := New(Config{Self: id, InitialTime: t0, DirectAcks: c.directAcks})
	if err != nil {
		panic(err)
	}
	s := &simNode{id: id, n: n, joined: map[uint32]bool{}, seq: map[uint32]uint64{}, time: t0}
	for oid, o := range c.nodes {
		o.n.AddFederate(id)
		n.AddFederate(oid)
	}
	c.nodes[id] = s
	c.sorted = nil
	for _, g := range groups {
		c.join(s, g)
	}
	return s
}

// join makes s join group g. Like the data plane, it tells the newcomer
// where each sender's sequence on g starts: everything sent before is
// not for it.
func (c *cluster) join(s *simNode, g uint32) {
	s.joined[g] = true
	s.n.Joined(g)
	for _, id := range c.ids() {
		if o := c.nodes[id]; id != s.id && o.seq[g] > 0 {
			s.n.Gap(id, g, o.seq[g])
		}
	}
}

// remove takes federate id out: every other node is told, and packets
// from or to it are dropped.
func (c *cluster) remove(id FederateID) {
	delete(c.nodes, id)
	c.sorted = nil
	c.inflight = slices.DeleteFunc(c.inflight, func(p packet) bool { return p.from == id || p.to == id })
	for _, oid := range c.ids() {
		c.nodes[oid].n.RemoveFederate(id)
	}
}

// crash takes federate id out without telling anyone; lose drops each of
// its packets in flight for which it returns true.
func (c *cluster) crash(id FederateID, lose func() bool) {
	delete(c.nodes, id)
	c.sorted = nil
	c.inflight = slices.DeleteFunc(c.inflight, func(p packet) bool { return p.to == id || (p.from == id && lose()) })
}

// notifyLost tells node to that federate id is lost; packets from id to
// it still in flight are dropped (the peer layer stops accepting them).
func (c *cluster) notifyLost(to, id FederateID) {
	s := c.nodes[to]
	if s == nil {
		return
	}
	c.inflight = slices.DeleteFunc(c.inflight, func(p packet) bool { return p.from == id && p.to == to })
	s.n.RemoveFederate(id)
}

// send sends a TSO message (or an RO one when ro) from id on group g.
func (c *cluster) send(id FederateID, g uint32, ts float64, ro bool) error {
	s := c.nodes[id]
	seq := s.seq[g] + 1
	var m *TSO
	if !ro {
		if err := s.n.SentTSO(g, seq, ts); err != nil {
			return err
		}
		m = &TSO{From: id, Group: g, Seq: seq, Time: ts}
	}
	s.seq[g] = seq
	for _, oid := range c.ids() {
		if o := c.nodes[oid]; oid != id && o.joined[g] {
			c.inflight = append(c.inflight, packet{to: oid, from: id, group: g, seq: seq, tso: m})
		}
	}
	return nil
}

// deliverAt hands packet i to its receiver and removes it.
func (c *cluster) deliverAt(i int) {
	p := c.inflight[i]
	c.inflight = slices.Delete(c.inflight, i, i+1)
	c.deliver(p)
}

func (c *cluster) deliver(p packet) {
	s := c.nodes[p.to]
	if s == nil {
		return
	}
	switch {
	case p.ctrl != nil:
		if err := s.n.Step(*p.ctrl); err != nil {
			c.logf(p.to, "step error: %v", err)
		}
	case p.tso != nil:
		if err := s.n.ReceiveTSO(*p.tso); err != nil {
			c.logf(p.to, "receive error: %v", err)
			c.fail("node %d: ReceiveTSO(%v): %v", p.to, p.tso, err)
		}
	default:
		s.n.Received(p.from, p.group, p.seq)
	}
}

// streamHead reports whether data packet i is the first in flight of its
// (from, to, group) stream; the data plane delivers streams in order.
func (c *cluster) streamHead(i int) int {
	p := &c.inflight[i]
	if p.ctrl != nil {
		return i
	}
	for j := range i {
		q := &c.inflight[j]
		if q.ctrl == nil && q.from == p.from && q.to == p.to && q.group == p.group {
			return j
		}
	}
	return i
}

// process runs every node's Ready until none has work, checking each
// output.
func (c *cluster) process() {
	for {
		busy := false
		for _, id := range c.ids() {
			if c.processNode(c.nodes[id]) {
				busy = true
			}
		}
		if !busy {
			return
		}
	}
}

func (c *cluster) processNode(s *simNode) bool {
	did := false
	for s.n.HasReady() {
		did = true
		rd := s.n.Ready()
		if err := s.n.checkRegs(); err != nil {
			c.fail("node %d: %v", s.id, err)
		}
		for i := range rd.Messages {
			m := rd.Messages[i]
			for _, oid := range c.ids() {
				if oid != s.id {
					c.inflight = append(c.inflight, packet{to: oid, from: s.id, ctrl: &m})
				}
			}
		}
		for _, d := range rd.Directed {
			if d.To == s.id || d.Message.From != s.id || d.Message.Acks[d.To] == 0 {
				c.fail("node %d: directed Message to %d: %v", s.id, d.To, d.Message)
			}
			c.directed++
			if c.loseDirected != nil && c.loseDirected() {
				c.directedLost++
				continue
			}
			m := d.Message
			c.inflight = append(c.inflight, packet{to: d.To, from: s.id, ctrl: &m})
		}
		for _, m := range rd.Deliver {
			c.onDeliver(s, m)
		}
		if rd.RegulationEnabled != nil {
			t := *rd.RegulationEnabled
			c.logf(s.id, "regulation enabled at %s", fmtTime(t))
			c.advanceTime(s, t, "RegulationEnabled")
			s.lastStrict = false // from T' on it may send at T' + lookahead
			if s.constrained && (t > s.floor) {
				s.floor, s.floorStrict = t, false
			}
		}
		if rd.ConstrainedEnabled != nil {
			t := *rd.ConstrainedEnabled
			c.logf(s.id, "constrained enabled at %s", fmtTime(t))
			c.advanceTime(s, t, "ConstrainedEnabled")
			s.constrained = true
			s.floor, s.floorStrict, s.last = t, false, nil
		}
		if rd.Grant != nil {
			t := *rd.Grant
			if k := rd.GrantKind; k == TimeAdvanceRequest {
				c.logf(s.id, "grant %s", fmtTime(t))
			} else {
				c.logf(s.id, "grant %s (%v)", fmtTime(t), k)
			}
			c.advanceTime(s, t, "Grant")
			s.grants++
			s.lastStrict = !rd.GrantKind.available()
			if s.constrained {
				// After TAR and NMR nothing at t may arrive; after the
				// others, messages at t still may.
				strict := rd.GrantKind == TimeAdvanceRequest || rd.GrantKind == NextMessageRequest
				if t > s.floor || (t == s.floor && strict) {
					s.floor, s.floorStrict = t, strict
				}
				switch rd.GrantKind {
				case TimeAdvanceRequestAvailable, NextMessageRequestAvailable:
					s.loose = true
				case FlushQueueRequest:
					s.flushed = true
				}
			}
		}
		s.n.Advance(rd)
	}
	return did
}

func (c *cluster) advanceTime(s *simNode, t float64, what string) {
	if t < s.time {
		c.fail("node %d: invariant 4: %s(%s) after time %s", s.id, what, fmtTime(t), fmtTime(s.time))
	}
	s.time = t
	if nt := s.n.Time(); nt != t {
		c.fail("node %d: %s(%s) but Time() = %s", s.id, what, fmtTime(t), fmtTime(nt))
	}
}

func (c *cluster) onDeliver(s *simNode, m TSO) {
	c.logf(s.id, "deliver from=%d group=%d seq=%d t=%s", m.From, m.Group, m.Seq, fmtTime(m.Time))
	if !s.constrained {
		return
	}
	if m.Time < s.floor || (m.Time == s.floor && s.floorStrict) {
		c.fail("node %d: invariant 1: delivered %+v at or below floor %s (strict=%v)",
			s.id, m, fmtTime(s.floor), s.floorStrict)
	}
	switch {
	case s.last == nil || s.flushed:
	case s.loose:
		if m.Time < s.last.Time {
			c.fail("node %d: invariant 2: delivered %+v after %+v", s.id, m, *s.last)
		}
	case !s.last.less(&m):
		c.fail("node %d: invariant 2: delivered %+v after %+v", s.id, m, *s.last)
	}
	s.last = &m
	s.delivered = append(s.delivered, m)
}

// checkSameOrder checks that every two constrained receivers delivered
// their common messages in the same relative order.
func (c *cluster) checkSameOrder(all []*simNode) {
	type key struct {
		from  FederateID
		group uint32
		seq   uint64
	}
	var strict []*simNode
	for _, s := range all {
		if !s.loose && !s.flushed {
			strict = append(strict, s)
		}
	}
	all = strict
	for i, a := range all {
		pos := map[key]int{}
		for k, m := range a.delivered {
			pos[key{m.From, m.Group, m.Seq}] = k
		}
		for _, b := range all[i+1:] {
			prev := -1
			for _, m := range b.delivered {
				k, ok := pos[key{m.From, m.Group, m.Seq}]
				if !ok {
					continue
				}
				if k < prev {
					c.fail("invariant 2: nodes %d and %d deliver %+v in different relative order", a.id, b.id, m)
				}
				prev = k
			}
		}
	}
}

// stabilize delivers everything in flight, first in first out, until the
// cluster is quiet.
func (c *cluster) stabilize() {
	c.process()
	for len(c.inflight) > 0 {
		p := c.inflight[0]
		c.inflight = c.inflight[1:]
		c.deliver(p)
		if s := c.nodes[p.to]; s != nil {
			c.processNode(s)
		}
	}
	c.inflight = nil
}

// stabilizeCounting is stabilize that returns how many control Messages
// it delivered, counting those queued while it runs.
func (c *cluster) stabilizeCounting() int {
	c.process()
	ctrl := 0
	for len(c.inflight) > 0 {
		p := c.inflight[0]
		c.inflight = c.inflight[1:]
		if p.ctrl != nil {
			ctrl++
		}
		c.deliver(p)
		if s := c.nodes[p.to]; s != nil {
			c.processNode(s)
		}
	}
	c.inflight = nil
	return ctrl
}

func fmtStatus(s Status) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d: time=%s", s.Self, fmtTime(s.Time))
	if s.Regulating || s.RegulationPending {
		fmt.Fprintf(&b, " lookahead=%s bound=%s", fmtTime(s.Lookahead), fmtTime(s.Bound))
	}
	if s.Regulating {
		b.WriteString(" regulating")
	}
	if s.RegulationPending {
		b.WriteString(" regulation-pending")
	}
	if s.Constrained {
		b.WriteString(" constrained")
	}
	if s.ConstrainedPending {
		b.WriteString(" constrained-pending")
	}
	if s.Request != NoRequest {
		fmt.Fprintf(&b, " %v=%s", s.Request, fmtTime(s.Requested))
	}
	b.WriteString(" galt=" + fmtInf(s.GALT))
	if s.HeldBy != 0 {
		fmt.Fprintf(&b, " held-by=%d", s.HeldBy)
	}
	b.WriteString(" lits=" + fmtInf(s.LITS))
	if s.Queued > 0 {
		fmt.Fprintf(&b, " queued=%d", s.Queued)
	}
	if s.Violations > 0 {
		fmt.Fprintf(&b, " violations=%d", s.Violations)
	}
	return b.String()
}

func fmtInf(f float64) string {
	if math.IsInf(f, 1) {
		return "none"
	}
	return fmtTime(f)
}
