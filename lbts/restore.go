package lbts

import (
	"errors"
	"fmt"
	"math"
)

// Saved is the part of a node's time state a federation save keeps
// (IEEE 1516.1 §4.16): logical time, lookahead, the switches, the
// delivery floor and the queued TSO messages. A node is saved only when
// nothing is pending: no time advance and no enable request (Quiet).
type Saved struct {
	Time        float64
	Lookahead   float64
	Regulating  bool
	Constrained bool
	// Floor and FloorStrict are the constrained node's delivery floor
	// (messages below it, or at it when strict, are in its past).
	Floor       float64
	FloorStrict bool
	// LastKind is the request the latest grant answered (it decides
	// whether a zero-lookahead promise is exclusive).
	LastKind RequestKind
	// SendAbove is the floor on sends after enableTimeRegulation at zero
	// lookahead (-Inf when none).
	SendAbove float64
	// Queue holds the queued TSO messages, in no particular order.
	Queue []TSO
}

// ErrNotQuiet is returned by Save while a time advance or an enable
// request is pending.
var ErrNotQuiet = errors.New("lbts: a time advance or enable request is pending")

// Quiet reports whether the node may be saved: no time advance and no
// enable request pending.
func (n *Node) Quiet() bool {
	return n.request == NoRequest && !n.regPending && !n.consPending
}

// Pending returns the time advance request pending and the time it
// asked for (NoRequest when none is).
func (n *Node) Pending() (RequestKind, float64) { return n.request, n.requested }

// Save returns the node's time state (Saved). The TSO messages keep
// their payloads; the caller encodes them.
func (n *Node) Save() (Saved, error) {
	if !n.Quiet() {
		return Saved{}, ErrNotQuiet
	}
	s := Saved{
		Time: n.time, Lookahead: n.lookahead, Regulating: n.regulating, Constrained: n.constrained,
		Floor: n.floor, FloorStrict: n.floorStrict, LastKind: n.lastKind, SendAbove: n.sendAbove,
		Queue: append([]TSO(nil), n.queue...),
	}
	return s, nil
}

// Restore replaces the node's time state with s, as a federation restore
// does (§4.27) in every member at once. Everything the node knew of the
// others' time (their promises, acknowledgements, the consistent cut) is
// forgotten: the federation's time goes back, which the promises of the
// abandoned branch would contradict. What the data plane delivered
// (receipts per stream) and the membership stay: the reliable streams go
// on across the restore.
//
// Until every member has been heard from again (a Message counted after
// the restore), the node grants nothing: its GALT would otherwise count
// only the members heard so far. The driver must keep the abandoned
// branch's Messages away from the node (they would count) and hold the
// new branch's until its own Restore.
//
// The TSO messages of s.Queue are queued again; their Group and Seq
// should be zero (their streams' positions mean nothing now).
func (n *Node) Restore(s Saved) error {
	if !isFinite(s.Time) || !isFinite(s.Lookahead) || s.Lookahead < 0 {
		return fmt.Errorf("%w: restore at %v lookahead %v", ErrBadMessage, s.Time, s.Lookahead)
	}
	fresh, err := New(Config{Self: n.self, InitialTime: s.Time, PromiseEveryTicks: n.promiseEvery, DirectAcks: n.directAcks})
	if err != nil {
		return err
	}
	// Kept: receipts and joins (the streams go on), membership, and the
	// Message epoch (it only grows, so that nothing this node said on the
	// abandoned branch can pass for newer than what it says now).
	fresh.recvd, fresh.joined, fresh.removed = n.recvd, n.joined, n.removed
	fresh.epoch = n.epoch
	fresh.clock = n.clock
	fresh.await = make(map[FederateID]bool, len(n.members))
	for id := range n.members {
		fresh.members[id] = &member{}
		fresh.await[id] = true
	}
	fresh.lookahead = s.Lookahead
	fresh.regulating = s.Regulating
	fresh.constrained = s.Constrained
	fresh.floor, fresh.floorStrict = s.Floor, s.FloorStrict
	fresh.lastKind = s.LastKind
	fresh.sendAbove = s.SendAbove
	if math.IsNaN(fresh.sendAbove) {
		fresh.sendAbove = math.Inf(-1)
	}
	if s.Regulating {
		fresh.session = fresh.epoch + 1
		fresh.promise = bound{s.Time + s.Lookahead, false}
		fresh.raiseBound()
	}
	for _, m := range s.Queue {
		fresh.queue.push(m)
	}
	fresh.active = true
	*n = *fresh
	n.touch()
	n.msgPending = true
	return nil
}

// Awaiting reports how many members the node waits to hear from after a
// Restore before it grants again.
func (n *Node) Awaiting() int { return len(n.await) }

// heard notes that a member's Message counted after a Restore.
func (n *Node) heard(id FederateID) {
	if n.await != nil {
		delete(n.await, id)
		if len(n.await) == 0 {
			n.await = nil
			n.dirty = true
		}
	}
}

// ReceivedThrough returns the highest sequence number received in order
// from sender from on group g (or given up on: Gap), and whether this
// node has joined g.
func (n *Node) ReceivedThrough(from FederateID, g uint32) (seq uint64, joined bool) {
	return n.received(streamKey{from, g}), n.joined[g]
}

// Rebase forgets what the node knew of the others' time, as Restore
// does, but keeps its own: a federate that takes no part in a federation
// restore (it joined after the request) follows the others to their new
// branch. A pending enable request or time advance is made again.
func (n *Node) Rebase() error {
	s := Saved{
		Time: n.time, Lookahead: n.lookahead, Regulating: n.regulating, Constrained: n.constrained,
		Floor: n.floor, FloorStrict: n.floorStrict, LastKind: n.lastKind, SendAbove: n.sendAbove,
		Queue: append([]TSO(nil), n.queue...),
	}
	req, reqT := n.request, n.requested
	regPending, consPending, lookahead := n.regPending, n.consPending, n.lookahead
	if err := n.Restore(s); err != nil {
		return err
	}
	if regPending {
		if err := n.EnableRegulation(lookahead); err != nil {
			return err
		}
	}
	if consPending {
		if err := n.EnableConstrained(); err != nil {
			return err
		}
	}
	if req != NoRequest {
		return n.Request(req, reqT)
	}
	return nil
}
