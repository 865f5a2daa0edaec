package lbts

import (
	"math"
)

// The consistent cut. Promises alone cannot release federates that wait
// on each other at zero lookahead, or in NMR, where what a federate will
// send depends on what it will be sent. So a waiting federate may start
// a round; every member joins it and, once it holds every TSO message
// sent before every member's cut, reports the lowest time stamp it could
// send from then on unless it first receives something lower (its send
// floor, see sendFloor), lowered to whatever it sent since its own cut.
// The smallest report of the others, also lowered to what this node has
// sent since its cut and may still send, bounds every TSO message that
// can still arrive. docs/time.md gives the argument.
//
// Rounds are numbered. Message.Cut says which round the sender has
// entered; since a Message counts only once its Covers have arrived,
// counting Cut >= r from every member means holding everything sent
// before their cuts (Mattern's white messages; the Covers stand in for
// his counters). A node enters round r+1 only after it has the result
// of round r (every member reported r), so when a peer enters r+1 every
// member has already reported r, and nobody is ever two rounds apart.

// all reports whether every member's counted Message satisfies f; false
// if some member has none counted yet.
func (n *Node) all(f func(m *Message) bool) bool {
	for _, m := range n.members {
		if !m.hasCounted || !f(&m.counted) {
			return false
		}
	}
	return true
}

// cut moves the consistent cut on as far as the node's state allows.
func (n *Node) cut() {
	if n.reported == n.round && n.maxCut > n.round {
		// Join a round a peer has started.
		n.enterRound(n.maxCut)
	}
	r := n.round
	if n.reported < r && n.all(func(m *Message) bool { return m.Cut >= r }) {
		n.report, n.repSess, n.reported = n.value(), n.session, r
		n.announce()
	}
	if n.reported == r && n.resRound < r &&
		n.all(func(m *Message) bool { return m.ReportRound == r && m.ReportSession == m.Session }) {
		res := cutResult{valid: true, round: r, g: unbounded, sessions: make(map[FederateID]uint64, len(n.members))}
		for id, m := range n.members {
			res.sessions[id] = m.counted.Session
			if !m.counted.ReportNone {
				res.g = bmin(res.g, bound{m.counted.Report, m.counted.ReportStrict})
			}
		}
		n.res, n.resRound, n.sentRes = res, r, n.sentCur
		n.resCheck = 1
		n.dirty = true
	}
	if n.reported == r && n.resRound == r && n.wantsRound() && n.snap != n.stateSum() {
		n.enterRound(r + 1)
	}
}

func (n *Node) enterRound(r uint64) {
	n.round = r
	n.sentCur = math.Inf(1)
	n.snap = n.stateSum()
	n.announce()
}

// value is the node's report now: its send floor, lowered to what it has
// sent since entering the round; unbounded if it is not regulating.
func (n *Node) value() bound {
	v := bound{n.sentCur, false}
	if n.regulating || n.regPending {
		v = bmin(v, n.sendFloor())
	}
	return v
}

// rereport replaces the report for the current round after a new
// regulation session began: the old one no longer bounds what we send.
func (n *Node) rereport() {
	if n.reported != 0 && n.reported == n.round {
		n.report, n.repSess = n.value(), n.session
		n.announce()
	}
}

// stateSum changes whenever the time state of the node or of a member it
// counts changes, or a member comes or goes.
func (n *Node) stateSum() uint64 {
	s := n.state
	for _, m := range n.members {
		s += 1
		if m.hasCounted {
			s += m.counted.State
		}
	}
	return s
}

// cutGALT is what the latest cut result bounds, if it is still valid:
// its smallest report of the others, lowered to our own sends since that
// round's cut and to our send floor (what we send may come back to us
// through others at zero lookahead).
func (n *Node) cutGALT() (bound, bool) {
	if !n.res.valid {
		return bound{}, false
	}
	if n.resCheck == 0 {
		n.resCheck = 1
		for id, m := range n.members {
			s, ok := n.res.sessions[id]
			if !ok || !m.hasCounted || m.counted.Session != s {
				n.resCheck = -1
				break
			}
		}
	}
	if n.resCheck < 0 {
		return bound{}, false
	}
	g := bmin(n.res.g, bound{n.sentRes, false})
	if n.regulating || n.regPending {
		g = bmin(g, n.sendFloor())
	}
	return g, true
}

// need is what the pending request of a constrained node waits for: a
// GALT that rules out every time stamp <= x (inclusive) or < x.
func (n *Node) need() (x float64, inclusive, ok bool) {
	if n.regWaiting() {
		return n.regTarget, false, true
	}
	if n.consPending {
		return n.time, false, true
	}
	if !n.constrained || n.request == NoRequest || n.request == FlushQueueRequest {
		return 0, false, false
	}
	x = n.requested
	if n.request.nextMessage() {
		if q, ok := n.queue.min(); ok && q < x {
			x = q
		}
	}
	return x, !n.request.available(), true
}

// wantsRound reports whether a new cut could help: the node waits, and
// every regulating member whose promise holds it back is itself waiting
// (Message.Waiting; a member that is not will raise its promise by
// itself when it asks to advance, so a cut would only cost messages),
// and at least one of them waits in NMR or NMRA. A member waiting in
// TAR, TARA or an enable reports exactly its promise (its send floor is
// its promise), so a cut over such members alone bounds nothing the
// promises do not: with positive lookahead, TAR loops never pay for one.
func (n *Node) wantsRound() bool {
	x, incl, ok := n.need()
	if !ok {
		return false
	}
	if g, _ := n.galt(); g.allows(x, incl) {
		return false
	}
	conditional := false
	for _, m := range n.regs { // counted, and regulating
		if (bound{m.counted.Bound, m.counted.Strict}).allows(x, incl) {
			continue
		}
		if !m.counted.Waiting {
			return false
		}
		if m.counted.Pending.nextMessage() {
			conditional = true
		}
	}
	return conditional
}

// ---- Retraction ----

// CheckRetract reports whether the federate may retract a TSO message it
// sent with time stamp ts (1516.1 8.21): it must be regulating
// (ErrRegulationNotEnabled), and ts must be above its logical time
// (ErrCannotRetract), or at it after an Available grant, since only then
// can no receiver have been granted past ts. The peer layer checks the
// handle itself (InvalidMessageRetractionHandle) and then sends the
// retraction to the receivers, which call Retract.
func (n *Node) CheckRetract(ts float64) error {
	if !n.regulating {
		return ErrRegulationNotEnabled
	}
	if ts < n.time || (ts == n.time && !n.lastKind.available()) {
		return ErrCannotRetract
	}
	return nil
}

// Retract removes the queued TSO message seq from sender from on group g
// before it is delivered. It reports whether it did; false means the
// message is not queued: already delivered (the peer layer then reports
// requestRetraction to the federate) or never received.
func (n *Node) Retract(from FederateID, g uint32, seq uint64) bool {
	for i := range n.queue {
		if m := &n.queue[i]; m.From == from && m.Group == g && m.Seq == seq {
			n.queue.remove(i)
			n.state++
			n.dirty = true
			return true
		}
	}
	return false
}
