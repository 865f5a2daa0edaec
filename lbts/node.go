package lbts

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// DefaultPromiseEveryTicks is how many Ticks a Node waits before it
// rebroadcasts its state unchanged, when Config.PromiseEveryTicks is 0.
const DefaultPromiseEveryTicks = 50

// maxPending bounds how many not-yet-countable Messages a Node keeps per
// peer. When more arrive, the newest waiting one is replaced, so the
// oldest (the first to become countable) and the newest stay.
const maxPending = 16

// Config configures a Node. Zero fields mean the default. A Config is not
// changed by New.
type Config struct {
	// Self is this federate's ID; required, non-zero.
	Self FederateID
	// InitialTime is the federate's logical time on joining; default 0.
	InitialTime float64
	// PromiseEveryTicks is how many Ticks pass before the node
	// rebroadcasts its state even if nothing changed (so lost messages
	// and late joiners catch up). 0 means DefaultPromiseEveryTicks.
	PromiseEveryTicks int
	// DirectAcks has the node acknowledge another member's enable
	// request with a Message to that member alone (Ready.Directed)
	// rather than in its next broadcast, when nothing else changed: a
	// request then costs each member one Message to the requester, not
	// one to everybody. A requester still waiting for acknowledgements
	// asks again (Message.AckAsk), since a directed Message may be sent
	// without repair.
	//
	// With DirectAcks a federate that neither regulates nor asks to also
	// keeps the changes of its time (requests, grants) for its next
	// Message instead of broadcasting each (see quiet).
	DirectAcks bool
}

// Validate reports what is wrong with c.
func (c Config) Validate() error {
	switch {
	case c.Self == 0:
		return fmt.Errorf("lbts: config: Self is 0")
	case !isFinite(c.InitialTime):
		return fmt.Errorf("lbts: config: InitialTime %v is not finite", c.InitialTime)
	case c.PromiseEveryTicks < 0:
		return fmt.Errorf("lbts: config: PromiseEveryTicks %d is negative", c.PromiseEveryTicks)
	}
	return nil
}

// member is what a Node knows of another federate.
type member struct {
	// counted is the latest Message whose Covers have been received; it
	// is what GALT and acknowledgements use. Valid when hasCounted.
	counted    Message
	hasCounted bool
	// pending holds newer Messages waiting for their Covers, by Epoch.
	pending []Message
	// asked is the member's latest AckAsk we answered.
	asked uint64
}

func (m *member) latestEpoch() uint64 {
	if len(m.pending) > 0 {
		return m.pending[len(m.pending)-1].Epoch
	}
	if m.hasCounted {
		return m.counted.Epoch
	}
	return 0
}

// streamKey names one sender's sequence on one data-plane group.
type streamKey struct {
	from  FederateID
	group uint32
}

type effectKind uint8

const (
	effDeliver effectKind = iota
	effRegulation
	effConstrained
	effGrant
)

// effect is one output for the federate, kept in the order it arose.
type effect struct {
	kind effectKind
	tso  TSO
	t    float64
	req  RequestKind // for effGrant
}

// cutResult is the outcome of a completed consistent-cut round: the
// smallest Report of the other members, and the Session of each member
// it was taken from (it stays valid only while they are unchanged and
// no member is added).
type cutResult struct {
	valid    bool
	round    uint64
	g        bound
	sessions map[FederateID]uint64
}

// Node is one federate's view of conservative time management: its own
// time state, the latest promise of every other federate, and its queue
// of TSO messages. It does no I/O; see the package documentation for the
// driver loop.
//
// A Node is not safe for concurrent use; its owner serializes all calls.
// No method blocks.
type Node struct {
	self         FederateID
	promiseEvery int

	// Own time state.
	time        float64
	lookahead   float64 // as last set by EnableRegulation or ModifyLookahead
	promise     bound   // own promise while regulating or regPending; never decreases
	sendAbove   float64 // sends must also be > sendAbove (see maybeEnableRegulation)
	session     uint64  // Epoch of the latest EnableRegulation
	regulating  bool
	regPending  bool
	regReq      uint64  // Epoch of the pending regulation request
	regTarget   float64 // time at which regulation will be enabled
	regTargeted bool    // regTarget is fixed: every member has acknowledged
	constrained bool
	consPending bool
	consReq     uint64 // Epoch of the pending constrained request
	request     RequestKind
	requested   float64
	lastKind    RequestKind // the request the latest grant answered

	// floor: a constrained node rejects TSO messages below floor, or at
	// floor when floorStrict (after a TAR grant). Valid when constrained.
	floor       float64
	floorStrict bool

	// Own Message state.
	epoch      uint64
	msgPending bool // a Message should be in the next Ready
	// clock counts Ticks; ackedAt is the tick of the last prompt
	// acknowledgement, ackLater says acknowledgements wait for the next
	// Tick (see updateAck).
	clock    int64
	ackedAt  int64
	ackLater bool
	// With DirectAcks: ackTo lists the members owed a directed Message
	// with their acknowledgement; askedAt is the tick our pending request
	// last asked for acknowledgements, askEvery the wait before asking
	// again, ackAsk our Message.AckAsk.
	directAcks bool
	ackTo      []FederateID
	askedAt    int64
	askEvery   int64
	ackAsk     uint64
	active     bool // the node was not idle at some point (see idle)
	ticks      int  // Ticks since a Message was last sent
	covers     map[uint32]uint64
	acks       map[FederateID]uint64
	state      uint64 // Message.State

	// toldRegulating is what the last broadcast said of regulation;
	// toldOnce that there was one (see quiet).
	toldRegulating, toldOnce bool

	// Consistent cut (see cut.go).
	round    uint64 // the round entered
	reported uint64 // the round the report is for
	report   bound  // own report for round reported
	repSess  uint64 // session at report time
	resRound uint64 // the round of the latest result computed
	res      cutResult
	snap     uint64  // stateSum when the round was entered
	sentCur  float64 // smallest TSO sent since entering round
	sentRes  float64 // smallest TSO sent since entering res.round
	maxCut   uint64  // largest Cut counted from any member

	// Caches over members, dropped by membersChanged.
	pgOK     bool // pg and pgBy hold promiseGALT
	pg       bound
	pgBy     FederateID
	resCheck int8 // 1: res valid for the members, -1: not, 0: unknown

	// What we know of others.
	members map[FederateID]*member
	// regs holds the members whose counted Message says Regulating: the
	// only ones GALT and the cut's "would a round help" look at, which
	// in a federation of a thousand with ten regulators is what keeps a
	// counted Message from costing a walk over all members.
	regs    map[FederateID]*member
	removed map[FederateID]bool
	joined  map[uint32]bool
	// recvd is the highest in-order sequence received per stream;
	// lastKey and last cache the entry of the stream of the last
	// Received (most come from one stream after another), and waiting
	// counts the members with pending Messages, so that a Received costs
	// no map operation at all in the common case.
	recvd   map[streamKey]*uint64
	lastKey streamKey
	last    *uint64
	waiting int

	queue   tsoQueue
	effects []effect
	// Ready's scratch space: its Messages slice and the times its
	// pointers point at, valid until Advance.
	rdMsgs     []Message
	rdDeliver  []TSO
	rdTimes    [3]float64
	violations uint64
	dirty      bool // progress may have work to do
	// await are the members not heard from since a Restore; nil when
	// none (restore.go).
	await map[FederateID]bool
}

// New returns a Node for cfg.Self: not regulating, not constrained, at
// cfg.InitialTime. Its first Ready carries its state for the peers.
func New(cfg Config) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	every := cfg.PromiseEveryTicks
	if every == 0 {
		every = DefaultPromiseEveryTicks
	}
	n := &Node{
		self:         cfg.Self,
		promiseEvery: every,
		directAcks:   cfg.DirectAcks,
		time:         cfg.InitialTime,
		sendAbove:    math.Inf(-1),
		sentCur:      math.Inf(1),
		sentRes:      math.Inf(1),
		covers:       map[uint32]uint64{},
		acks:         map[FederateID]uint64{},
		members:      map[FederateID]*member{},
		regs:         map[FederateID]*member{},
		removed:      map[FederateID]bool{},
		joined:       map[uint32]bool{},
		recvd:        map[streamKey]*uint64{},
	}
	n.touch()
	return n, nil
}

// touch records a change of own time state that peers should hear about
// now.
func (n *Node) touch() {
	n.state++
	if n.quiet() {
		n.epoch++
		n.dirty = true
		return
	}
	n.announce()
}

// quiet reports whether a change of the node's time state can wait for
// its next Message, whenever that goes (with Config.DirectAcks): the
// node neither regulates nor asks to, has no request waiting for
// acknowledgements, and its last broadcast said it does not regulate.
// Its time, requests and grants then bound nobody's GALT and start no
// cut, and a member that enables regulation, the one reader of its
// Granted, gets the current state in the directed acknowledgement. To
// the others it is as if the Messages in between were lost, which the
// protocol survives anyway. In a federation of a thousand with ten
// regulators this keeps a time step from costing a million deliveries.
func (n *Node) quiet() bool {
	return n.directAcks && !n.regulating && !n.regPending && !n.consPending && !n.toldRegulating && n.toldOnce
}

// announce records a change of own Message that is not a change of time
// state (acknowledgements, cut rounds and reports).
func (n *Node) announce() {
	n.epoch++
	n.msgPending = true
	n.dirty = true
}

// ---- Membership and the data plane ----

// AddFederate tells the node that federate id is a member of the
// federation execution. Pending enable requests then also wait for id's
// acknowledgement, and the node rebroadcasts its state for the newcomer.
// Adding a removed federate re-admits it. Call it for
// every member known at join time before enabling regulation or
// constrained; see the package documentation.
func (n *Node) AddFederate(id FederateID) {
	if id == 0 || id == n.self {
		return
	}
	delete(n.removed, id)
	if n.members[id] == nil {
		n.members[id] = &member{}
		n.membersChanged()
		n.dirty = true
		// Let the newcomer hear our state now, unless it is the state
		// it assumes of a member it has not heard (neither regulating
		// nor constrained, nothing asked or acknowledged, no cut): a
		// thousand idle federates joining one after the other would
		// otherwise broadcast n² times.
		if !n.idle() {
			n.msgPending = true
		}
	}
}

// idle reports whether the node's state is, and always was, what others
// assume of a member they have not heard from yet. A node that once said
// more keeps resending: its last word must reach everyone even if a
// Message was lost for good.
func (n *Node) idle() bool {
	return !n.active && n.idleNow()
}

// idleNow reports whether the node's state now is what others assume of
// a member they have not heard from.
func (n *Node) idleNow() bool {
	return !n.regulating && !n.regPending && !n.constrained && !n.consPending &&
		n.request == NoRequest && len(n.acks) == 0 && len(n.covers) == 0 &&
		n.round == 0 && n.reported == 0
}

// RemoveFederate tells the node that federate id resigned or was lost.
// From now on nobody waits for it: it leaves the GALT computation and no
// request waits for its acknowledgement. TSO messages already received
// from it stay queued and are delivered as usual. Until AddFederate(id),
// later Messages and receipts from id are ignored (Step returns
// ErrFederateRemoved); a late TSO message from it is still taken if it is
// not in the receiver's past, as a resigned federate's last messages may
// be.
func (n *Node) RemoveFederate(id FederateID) {
	if id == 0 || id == n.self {
		return
	}
	if m := n.members[id]; m != nil && len(m.pending) > 0 {
		n.waiting--
	}
	delete(n.members, id)
	delete(n.regs, id)
	n.membersChanged()
	n.removed[id] = true
	if n.await != nil {
		n.heard(id)
	}
	if _, ok := n.acks[id]; ok {
		delete(n.acks, id)
		n.epoch++
	}
	for k := range n.recvd {
		if k.from == id {
			delete(n.recvd, k)
		}
	}
	n.last = nil
	n.dirty = true
}

// Joined tells the node that it has joined data-plane group g: from now
// on, promises covering TSO messages on g count only once those messages
// have been received. The data plane must then report, through Received
// or Gap, where each sender's sequence on g starts for this receiver;
// a promise covering messages sent before the join otherwise never counts.
func (n *Node) Joined(g uint32) {
	n.joined[g] = true
}

// Left tells the node that it has left data-plane group g; promises no
// longer wait for messages on g.
func (n *Node) Left(g uint32) {
	if !n.joined[g] {
		return
	}
	delete(n.joined, g)
	for id, m := range n.members {
		if len(m.pending) > 0 {
			n.tryCount(id, m)
		}
	}
}

// Received records the in-order delivery of message seq from sender from
// on group g by the reliable data plane. Call it for every message, TSO
// or RO, in per-(from, g) sequence order. For a TSO message, ReceiveTSO
// records the receipt itself, so Received is optional there; if called,
// it must not be separated from ReceiveTSO by a Ready (the promise
// covering the message could count, and a grant pass it, in between).
func (n *Node) Received(from FederateID, g uint32, seq uint64) {
	if from == n.self || n.removed[from] {
		return
	}
	k := streamKey{from, g}
	p := n.last
	if p == nil || n.lastKey != k {
		if p = n.recvd[k]; p == nil {
			p = new(uint64)
			n.recvd[k] = p
		}
		n.lastKey, n.last = k, p
	}
	if seq <= *p {
		return
	}
	*p = seq
	if n.waiting == 0 {
		return
	}
	if m := n.members[from]; m != nil && len(m.pending) > 0 {
		n.tryCount(from, m)
	}
}

// received returns the highest in-order sequence received on stream k.
func (n *Node) received(k streamKey) uint64 {
	if p := n.recvd[k]; p != nil {
		return *p
	}
	return 0
}

// Gap records that the data plane gave up on messages from sender from
// on group g up to and including upToSeq. They count as received: a
// promise no longer waits for them.
func (n *Node) Gap(from FederateID, g uint32, upToSeq uint64) {
	n.Received(from, g, upToSeq)
}

// Step consumes a Message broadcast by another federate. A Message from
// an unknown federate adds it as a member. A stale or duplicate Message
// (Epoch not above the last seen) is ignored. The node keeps m, so the
// caller must not modify m's maps afterwards. Messages from Self
// (multicast loopback) are ignored.
//
// Step returns an error wrapping ErrBadMessage for malformed input and
// ErrFederateRemoved for a removed sender; in both cases nothing changes.
func (n *Node) Step(m Message) error {
	if m.From == n.self {
		return nil
	}
	if err := m.validate(); err != nil {
		return err
	}
	if n.removed[m.From] {
		return fmt.Errorf("%w: message from %d", ErrFederateRemoved, m.From)
	}
	mem := n.members[m.From]
	if mem == nil {
		mem = &member{}
		n.members[m.From] = mem
		n.membersChanged()
		n.dirty = true
		if !n.idle() {
			n.msgPending = true // let the newcomer hear our state now (see AddFederate)
		}
	}
	if m.Epoch <= mem.latestEpoch() {
		return nil
	}
	if len(mem.pending) >= maxPending {
		mem.pending = mem.pending[:len(mem.pending)-1]
	}
	if len(mem.pending) == 0 {
		n.waiting++
	}
	mem.pending = append(mem.pending, m)
	n.tryCount(m.From, mem)
	return nil
}

// covered reports whether every TSO message m covers, on groups this
// node has joined, has been received.
func (n *Node) covered(from FederateID, m *Message) bool {
	for g, seq := range m.Covers {
		if n.joined[g] && n.received(streamKey{from, g}) < seq {
			return false
		}
	}
	return true
}

// tryCount promotes the newest countable pending Message of mem.
func (n *Node) tryCount(id FederateID, mem *member) {
	for i := len(mem.pending) - 1; i >= 0; i-- {
		if !n.covered(id, &mem.pending[i]) {
			continue
		}
		wasReg := mem.hasCounted && mem.counted.Regulating
		mem.counted = mem.pending[i]
		mem.hasCounted = true
		switch {
		case mem.counted.Regulating:
			n.regs[id] = mem
			n.membersChanged()
		case wasReg:
			delete(n.regs, id)
			n.membersChanged()
		default:
			n.resCheck = 0 // the promise GALT does not read it
		}
		n.maxCut = max(n.maxCut, mem.counted.Cut)
		if i+1 == len(mem.pending) {
			// All taken: keep the room for the next ones.
			clear(mem.pending)
			mem.pending = mem.pending[:0]
			n.waiting--
		} else {
			clear(mem.pending[:i+1])
			mem.pending = mem.pending[i+1:]
		}
		n.dirty = true
		n.updateAck(id, mem)
		if n.await != nil {
			n.heard(id)
		}
		return
	}
}

// updateAck keeps the acknowledgement for id's request in our Message.
func (n *Node) updateAck(id FederateID, mem *member) {
	m := &mem.counted
	old, had := n.acks[id]
	switch {
	case m.Request != 0 && (!had || old != m.Request):
		n.acks[id] = m.Request
		if n.directAcks {
			// A Message to id alone, at a new Epoch so that it counts.
			n.epoch++
			n.dirty = true
			mem.asked = m.AckAsk
			n.ackDirect(id)
			return
		}
		if n.ackedAt == n.clock && n.clock != 0 {
			// Already answered one request in this tick: the others
			// of a burst share the next tick's Message (a federation
			// enabling at once would otherwise cost a broadcast per
			// request and member).
			n.epoch++
			n.dirty = true
			n.ackLater = true
			return
		}
		n.ackedAt = n.clock
		n.announce() // answer promptly: the requester is waiting
	case m.Request != 0 && n.directAcks && m.AckAsk > mem.asked:
		// It asks again: our directed Message may have been lost.
		mem.asked = m.AckAsk
		n.ackDirect(id)
	case m.Request == 0 && had:
		delete(n.acks, id)
		n.epoch++
	}
}

// ackDirect owes id a directed Message (see Config.DirectAcks).
func (n *Node) ackDirect(id FederateID) {
	if !slices.Contains(n.ackTo, id) {
		n.ackTo = append(n.ackTo, id)
	}
}

// waitingAcks reports whether an enable request of ours still waits for
// some member's acknowledgement.
func (n *Node) waitingAcks() bool {
	return n.regPending && !n.regTargeted && !n.acked(n.regReq) ||
		n.consPending && !n.acked(n.consReq)
}

// startAsking starts the wait before a new request asks again.
func (n *Node) startAsking() {
	n.askedAt = n.clock
	n.askEvery = int64(max(2, n.promiseEvery/5))
}

// ReceiveTSO hands the node a TSO message from the data plane; it also
// counts as Received(m.From, m.Group, m.Seq). A federate that is not
// time-constrained gets it delivered at once (in receive order); a
// constrained one queues it for the grant that covers its time stamp.
//
// A constrained federate that has already been granted m.Time (or
// constrained at a later time) cannot take m: its sender broke its
// promise. Then nothing is delivered, the violation is counted, and the
// error wraps ErrMessageInPast. Malformed input wraps ErrBadMessage.
// Messages from Self are ignored.
func (n *Node) ReceiveTSO(m TSO) error {
	if m.From == n.self {
		return nil
	}
	if m.From == 0 || !isFinite(m.Time) {
		return fmt.Errorf("%w: TSO from %d at %v", ErrBadMessage, m.From, m.Time)
	}
	n.Received(m.From, m.Group, m.Seq)
	if !n.constrained {
		n.effects = append(n.effects, effect{kind: effDeliver, tso: m})
		return nil
	}
	if m.Time < n.floor || (m.Time == n.floor && n.floorStrict) {
		n.violations++
		rel := "constrained at"
		if n.floorStrict {
			rel = "granted"
		}
		return fmt.Errorf("%w: from %d group %d seq %d at %s, receiver %s %s",
			ErrMessageInPast, m.From, m.Group, m.Seq, fmtTime(m.Time), rel, fmtTime(n.floor))
	}
	n.queue.push(m)
	n.state++ // our next-message time may have dropped
	n.dirty = true
	return nil
}

// ---- Own sends ----

// CheckSend reports whether the federate may now send a TSO message with
// time stamp ts: it must be time-regulating (not merely pending:
// ErrRegulationNotEnabled; the peer layer sends such messages receive
// order), and ts must be at least Bound (invariant 3: never below time +
// lookahead, requested time + lookahead while advancing). Otherwise it
// returns an *InvalidTimeError.
func (n *Node) CheckSend(ts float64) error {
	if !n.regulating {
		return ErrRegulationNotEnabled
	}
	f := n.sendFloor()
	if !isFinite(ts) || ts < f.v || (f.strict && ts == f.v) {
		return &InvalidTimeError{Op: "send", Requested: ts, Min: f.v, Strict: f.strict}
	}
	return nil
}

// sendFloor is the lowest time stamp the node may send now: its promise;
// while NMR or NMRA(t) is pending, min(t, earliest queued) + lookahead
// (the conditional promise the consistent cut relies on); and above
// sendAbove. At zero lookahead after (or while waiting for) a TAR, NMR
// or FQR grant to t, sending at t itself is not allowed.
func (n *Node) sendFloor() bound {
	f := n.promise
	if n.request.nextMessage() {
		c := n.requested
		if n.constrained {
			if q, ok := n.queue.min(); ok && q < c {
				c = q
			}
		}
		// The set lookahead, not Lookahead(): a promise held up by a
		// lowered lookahead is already in f, and the grant will raise
		// the promise to g + lookahead exactly, computed as here.
		// Lookahead() is promise - base, which can round up by one
		// unit in the last place: a cut report taken from it promised
		// a hair more than the sends the grant then allowed (found by
		// the randomized checker, seed 14396194677184233849).
		l := n.lookahead
		f = bmax(f, bound{c + l, l == 0 && n.request == NextMessageRequest})
	}
	if !math.IsInf(n.sendAbove, -1) {
		f = bmax(f, bound{n.sendAbove, true})
	}
	return f
}

// SentTSO checks ts like CheckSend and, if it may be sent, records that
// the TSO message with sequence number seq goes out on group g, so every
// later promise covers it. Call it before the message leaves; sequence
// numbers per group must grow. On error nothing is recorded and the
// message must not be sent TSO.
func (n *Node) SentTSO(g uint32, seq uint64, ts float64) error {
	if err := n.CheckSend(ts); err != nil {
		return err
	}
	if prev, ok := n.covers[g]; ok && seq <= prev {
		return fmt.Errorf("lbts: TSO sequence %d on group %d not above %d", seq, g, prev)
	}
	n.covers[g] = seq
	n.sentCur = min(n.sentCur, ts)
	n.sentRes = min(n.sentRes, ts)
	// A new Epoch so the next Message (resend or not) carries the cover;
	// no broadcast is needed: the promise we sent before stays true.
	n.epoch++
	n.state++
	return nil
}

// Covered records that the message with sequence number seq goes out on
// group g and that every later promise must cover it, as for a TSO
// message, though it carries no time stamp. The peer layer uses it for
// retractions: a receiver then counts the sender's later promises only
// after the retraction has arrived, so no grant those promises allow
// passes a retracted message first. Sequence numbers per group must
// grow; nothing is recorded otherwise.
func (n *Node) Covered(g uint32, seq uint64) error {
	if prev, ok := n.covers[g]; ok && seq <= prev {
		return fmt.Errorf("lbts: sequence %d on group %d not above %d", seq, g, prev)
	}
	n.covers[g] = seq
	n.epoch++ // the next Message carries the cover
	return nil
}

// ---- Requests from the federate ----

// EnableRegulation starts enableTimeRegulation with the given lookahead.
// The node at once announces itself as regulating with Bound = time +
// lookahead, then waits until every member has acknowledged that
// announcement. It then enables regulation at
//
//	T' = max(own time, Granted of every member that is constrained)
//
// (for a constrained node, only once GALT >= T', after delivering queued
// TSO messages below T') and reports T' in Ready.RegulationEnabled. See
// docs/time.md for why this is safe.
func (n *Node) EnableRegulation(lookahead float64) error {
	switch {
	case !isFinite(lookahead) || lookahead < 0:
		return fmt.Errorf("%w: %v", ErrInvalidLookahead, lookahead)
	case n.regulating:
		return ErrRegulationAlreadyEnabled
	case n.regPending:
		return ErrRegulationPending
	case n.request != NoRequest:
		return ErrInTimeAdvance
	}
	n.lookahead = lookahead
	n.regPending = true
	n.regTargeted = false
	n.sendAbove = math.Inf(-1)
	n.promise = bound{n.time + lookahead, false}
	n.touch()
	n.regReq = n.epoch
	n.session = n.epoch
	n.startAsking()
	n.rereport()
	return nil
}

// DisableRegulation ends time regulation at once. Peers stop counting
// this node's promise only after receiving its TSO messages sent so far.
func (n *Node) DisableRegulation() error {
	if !n.regulating {
		return ErrRegulationNotEnabled
	}
	n.regulating = false
	n.sendAbove = math.Inf(-1)
	n.touch()
	return nil
}

// EnableConstrained starts enableTimeConstrained. It completes, reported
// in Ready.ConstrainedEnabled, at the current logical time T once every
// member has acknowledged the request and GALT >= T; until then TSO
// messages are still delivered at once.
func (n *Node) EnableConstrained() error {
	switch {
	case n.constrained:
		return ErrConstrainedAlreadyEnabled
	case n.consPending:
		return ErrConstrainedPending
	case n.request != NoRequest:
		return ErrInTimeAdvance
	}
	n.consPending = true
	n.touch()
	n.consReq = n.epoch
	n.startAsking()
	return nil
}

// DisableConstrained ends time-constrained mode at once. Queued TSO
// messages are delivered in the next Ready, in order; a pending time
// advance is then granted as for any unconstrained federate.
func (n *Node) DisableConstrained() error {
	if !n.constrained {
		return ErrConstrainedNotEnabled
	}
	n.constrained = false
	n.queue.popUpTo(math.Inf(1), true, n.deliver)
	n.touch()
	return nil
}

// RequestAdvance is timeAdvanceRequest(t): Request(TimeAdvanceRequest, t).
func (n *Node) RequestAdvance(t float64) error {
	return n.Request(TimeAdvanceRequest, t)
}

// Request starts a time advance of the given kind to t. The grant comes
// in a later Ready (Grant, GrantKind). For a time-constrained federate:
//
//   - TimeAdvanceRequest (TAR): granted t once no TSO message at or below
//     t can still arrive; every queued message <= t is delivered first.
//   - TimeAdvanceRequestAvailable (TARA): granted t once none below t can
//     still arrive; messages at exactly t may arrive after the grant.
//   - NextMessageRequest (NMR): granted g = min(t, earliest queued TSO
//     message) once none at or below g can still arrive; every queued
//     message at g is delivered first (none when g = t has none).
//   - NextMessageRequestAvailable (NMRA): like NMR, but granted once none
//     below g can arrive, so more messages at g may follow the grant.
//   - FlushQueueRequest (FQR): delivers every queued TSO message at once
//     and is granted min(t, GALT, earliest of them), never below the
//     current time.
//
// A federate that is not constrained is granted t at once.
//
// After the grant to g, a regulating federate may send time stamps >= g
// + lookahead; at zero lookahead only > g after TAR, NMR and FQR, and
// >= g after TARA and NMRA. While NMR or NMRA(t) is pending it may send
// only at >= min(t, earliest queued) + lookahead (> at zero lookahead
// for NMR): this conditional promise is what lets every federate
// waiting in NMR at zero lookahead advance (docs/time.md).
//
// Errors, mirroring 1516.1 8.8-8.12: an *InvalidTimeError unwrapping to
// ErrTimeAlreadyPassed when t is below the current time (ErrInvalidTime
// when not finite), ErrInTimeAdvance when an advance is pending,
// ErrRegulationPending or ErrConstrainedPending while an enable is
// pending, and ErrBadRequest for an unknown kind.
func (n *Node) Request(kind RequestKind, t float64) error {
	switch {
	case kind == NoRequest || kind > FlushQueueRequest:
		return fmt.Errorf("%w: kind %d", ErrBadRequest, kind)
	case !isFinite(t):
		return &InvalidTimeError{Op: "advance", Requested: t, Min: n.time}
	case n.request != NoRequest:
		return ErrInTimeAdvance
	case n.regPending:
		return ErrRegulationPending
	case n.consPending:
		return ErrConstrainedPending
	case t < n.time:
		return &InvalidTimeError{Op: "advance", Requested: t, Min: n.time}
	}
	n.request = kind
	n.requested = t
	n.raiseBound()
	n.touch()
	return nil
}

// RequestAdvanceAvailable is timeAdvanceRequestAvailable(t).
func (n *Node) RequestAdvanceAvailable(t float64) error {
	return n.Request(TimeAdvanceRequestAvailable, t)
}

// NextMessage is nextMessageRequest(t).
func (n *Node) NextMessage(t float64) error { return n.Request(NextMessageRequest, t) }

// NextMessageAvailable is nextMessageRequestAvailable(t).
func (n *Node) NextMessageAvailable(t float64) error {
	return n.Request(NextMessageRequestAvailable, t)
}

// FlushQueue is flushQueueRequest(t).
func (n *Node) FlushQueue(t float64) error { return n.Request(FlushQueueRequest, t) }

// ModifyLookahead changes the lookahead of a regulating federate that is
// not advancing. A larger lookahead raises Bound at once. A smaller one
// takes effect only as time advances: Bound never decreases, so it stays
// where it is until the base time + the new lookahead passes it.
func (n *Node) ModifyLookahead(lookahead float64) error {
	switch {
	case !isFinite(lookahead) || lookahead < 0:
		return fmt.Errorf("%w: %v", ErrInvalidLookahead, lookahead)
	case !n.regulating:
		return ErrRegulationNotEnabled
	case n.request != NoRequest:
		return ErrInTimeAdvance
	}
	n.lookahead = lookahead
	n.raiseBound()
	return nil
}

// base is the time the promise is measured from: the requested time of
// a pending TAR or TARA (which will be granted exactly), else the current
// time (an NMR, NMRA or FQR may be granted anything from there on).
func (n *Node) base() float64 {
	switch {
	case n.request == TimeAdvanceRequest || n.request == TimeAdvanceRequestAvailable:
		return n.requested
	case n.regPending && n.regTargeted:
		return n.regTarget
	}
	return n.time
}

// raiseBound moves the promise up to base + lookahead if that is
// higher. At zero lookahead it is exclusive where sending at the base
// time is not allowed: while TAR is pending, and after a TAR, NMR or FQR
// grant until the next Available request. An exclusive promise stays
// exclusive until the base time moves on.
func (n *Node) raiseBound() {
	if !n.regulating && !n.regPending {
		return
	}
	b := bound{n.base() + n.lookahead, false}
	// While enableTimeRegulation is pending the time does not change
	// unless it jumps to regTarget (above every constrained member's
	// time, see sendAbove); until it does, the last grant's rule holds
	// (a federate granted t by TAR or NMR may not send at t, even if it
	// enables regulation at t: the randomized checker found a message
	// at t reach it back through a member granted t by NMRA).
	if n.lookahead == 0 && (!n.regPending || n.base() == n.time) {
		switch n.request {
		case TimeAdvanceRequest:
			b.strict = true
		case NoRequest, NextMessageRequest, FlushQueueRequest:
			b.strict = n.lastKind != NoRequest && !n.lastKind.available()
		}
	}
	if !math.IsInf(n.sendAbove, -1) {
		// After enableTimeRegulation at zero lookahead, sends must be
		// above the constrained members' times: promise that too.
		b = bmax(b, bound{n.sendAbove, true})
	}
	if n.promise.lower(b) {
		n.promise = b
		n.touch()
	}
}

// regWaiting reports whether the node waits for GALT to reach regTarget
// before its enableTimeRegulation can complete (see maybeEnableRegulation).
func (n *Node) regWaiting() bool {
	return n.regPending && n.regTargeted && n.constrained && n.regTarget > n.time
}

// ---- Clock and output ----

// Tick is one unit of wall-clock progress. Every PromiseEveryTicks ticks
// without a Message sent, the node resends its state, unless it is idle
// (see idle: the resend would tell nobody anything, and a thousand idle
// members resending to each other every second was most of their
// traffic).
//
// The resend is a safety net (the data plane repairs what it can), and it
// goes to every member: with more than resendScale members its interval
// grows with their number, so that it costs each member a bounded number
// of Messages per tick whatever the size of the federation.
func (n *Node) Tick() {
	n.ticks++
	n.clock++
	if n.ackLater {
		n.ackLater = false
		n.msgPending = true
	}
	if n.directAcks && n.clock-n.askedAt >= n.askEvery && n.waitingAcks() {
		// Ask again, waiting longer each time, up to the resend
		// interval of a large federation.
		n.ackAsk++
		n.announce()
		n.askedAt = n.clock
		n.askEvery = min(2*n.askEvery, int64(n.resendEvery()))
	}
	if n.ticks >= n.resendEvery() && !n.idle() {
		n.msgPending = true
	}
}

// resendScale is the federation size up to which the periodic resend
// keeps its interval (see Tick).
const resendScale = 32

// resendEvery is the periodic resend's interval in Ticks.
func (n *Node) resendEvery() int {
	return n.promiseEvery * max(1, len(n.members)/resendScale)
}

// HasReady reports whether Ready has anything to do.
func (n *Node) HasReady() bool {
	n.progress()
	n.dropStaleAcks()
	return n.msgPending || len(n.effects) > 0 || len(n.ackTo) > 0
}

// dropStaleAcks forgets the directed acknowledgements owed for requests
// that are over: there is nothing to send them, and a Ready with nothing
// to do may never be passed to Advance.
func (n *Node) dropStaleAcks() {
	n.ackTo = slices.DeleteFunc(n.ackTo, func(id FederateID) bool { return n.acks[id] == 0 })
}

// Ready returns what the caller should do now; see Ready for the order.
// It first decides every grant and enable that the node's state allows,
// so effects of earlier calls appear here, not when those calls return.
// Calling Ready again before Advance returns the same work (and maybe
// more).
func (n *Node) Ready() Ready {
	n.progress()
	n.dropStaleAcks()
	var rd Ready
	if n.msgPending {
		n.rdMsgs = append(n.rdMsgs[:0], n.message(true))
		rd.Messages = n.rdMsgs
	} else if len(n.ackTo) > 0 {
		// Nothing else changed: each requester gets our state with its
		// own acknowledgement, nobody else anything.
		m := n.message(false)
		rd.Directed = make([]Directed, 0, len(n.ackTo))
		for _, id := range n.ackTo {
			d := m
			d.Acks = map[FederateID]uint64{id: n.acks[id]}
			rd.Directed = append(rd.Directed, Directed{To: id, Message: d})
		}
	}
	rd.ackTo = len(n.ackTo) // a broadcast answers them all too
	slot := effDeliver
	for i := range n.effects {
		if n.effects[i].kind == effGrant && slot < effGrant {
			rd.GrantKind = n.effects[i].req
		}
		e := &n.effects[i]
		if e.kind == effDeliver {
			if slot != effDeliver {
				break // a delivery after a callback waits for the next Ready
			}
			if rd.Deliver == nil {
				rd.Deliver = n.rdDeliver[:0]
			}
			rd.Deliver = append(rd.Deliver, e.tso)
			n.rdDeliver = rd.Deliver
			continue
		}
		if e.kind <= slot {
			break
		}
		slot = e.kind
		switch e.kind {
		case effRegulation:
			n.rdTimes[0] = e.t
			rd.RegulationEnabled = &n.rdTimes[0]
		case effConstrained:
			n.rdTimes[1] = e.t
			rd.ConstrainedEnabled = &n.rdTimes[1]
		case effGrant:
			n.rdTimes[2] = e.t
			rd.Grant = &n.rdTimes[2]
		}
	}
	return rd
}

// Advance tells the node that rd, the latest value returned by Ready, has
// been acted on.
func (n *Node) Advance(rd Ready) {
	if k := len(rd.Messages); k > 0 {
		n.ticks = 0
		if rd.Messages[k-1].Epoch == n.epoch {
			n.msgPending = false
		}
		n.toldRegulating, n.toldOnce = rd.Messages[k-1].Regulating, true
	}
	if rd.ackTo > 0 {
		k := copy(n.ackTo, n.ackTo[min(rd.ackTo, len(n.ackTo)):])
		n.ackTo = n.ackTo[:k]
	}
	clear(n.rdDeliver) // the delivered messages are the caller's now
	n.rdDeliver = n.rdDeliver[:0]
	done := len(rd.Deliver)
	for _, p := range []*float64{rd.RegulationEnabled, rd.ConstrainedEnabled, rd.Grant} {
		if p != nil {
			done++
		}
	}
	if done > len(n.effects) {
		panic("lbts: Advance with a Ready that this Node did not return")
	}
	// Keep the array for the next effects: a grant per time step would
	// otherwise allocate it anew every step.
	k := copy(n.effects, n.effects[done:])
	clear(n.effects[k:])
	n.effects = n.effects[:k]
}

// message builds the node's current state as a Message.
func (n *Node) message(acks bool) Message {
	n.active = n.active || !n.idleNow()
	m := Message{
		From:        n.self,
		Epoch:       n.epoch,
		Regulating:  n.regulating || n.regPending,
		Constrained: n.constrained,
		Bound:       n.time,
		Granted:     n.time,
		State:       n.state,
		Session:     n.session,
		Cut:         n.round,
	}
	if m.Regulating {
		m.Bound, m.Strict = n.promise.v, n.promise.strict
	}
	if n.request != NoRequest {
		m.Pending, m.Requested = n.request, n.requested
	}
	m.Waiting = m.Pending != NoRequest || n.regWaiting() || n.consPending
	if n.reported != 0 {
		m.ReportRound, m.ReportSession = n.reported, n.repSess
		if math.IsInf(n.report.v, 1) {
			m.ReportNone = true
		} else {
			m.Report, m.ReportStrict = n.report.v, n.report.strict
		}
	}
	if n.regPending && !n.regTargeted {
		m.Request = n.regReq
	}
	if n.consPending && n.consReq > m.Request {
		m.Request = n.consReq
	}
	if m.Request != 0 {
		m.AckAsk = n.ackAsk
	}
	if len(n.covers) > 0 {
		m.Covers = make(map[uint32]uint64, len(n.covers))
		for g, s := range n.covers {
			m.Covers[g] = s
		}
	}
	if acks && len(n.acks) > 0 {
		m.Acks = make(map[FederateID]uint64, len(n.acks))
		for id, r := range n.acks {
			m.Acks[id] = r
		}
	}
	return m
}

func (n *Node) deliver(m TSO) {
	n.effects = append(n.effects, effect{kind: effDeliver, tso: m})
}

func (n *Node) emit(k effectKind, t float64) {
	n.effects = append(n.effects, effect{kind: k, t: t})
}

func (n *Node) emitGrant(t float64, k RequestKind) {
	n.effects = append(n.effects, effect{kind: effGrant, t: t, req: k})
}

// ---- Decisions ----

// progress decides every enable and grant the current state allows.
func (n *Node) progress() {
	// Each pass can only grant, enable, or move the cut on; a handful
	// settle everything. The cap guards against a bug looping forever.
	if n.await != nil {
		return // a Restore: nothing moves before every member is heard
	}
	for i := 0; n.dirty && i < 64; i++ {
		n.dirty = false
		n.maybeEnableRegulation()
		n.maybeEnableConstrained()
		n.maybeGrant()
		n.cut()
	}
}

// galt returns the lower bound on time stamps of TSO messages that may
// still arrive: the smallest counted promise of the other regulating
// federates, raised to the consistent cut's bound when that is higher;
// and who holds the promise bound (0 when the cut decides or none).
func (n *Node) galt() (bound, FederateID) {
	g, by := n.promiseGALT()
	if c, ok := n.cutGALT(); ok && g.lower(c) {
		return c, 0
	}
	return g, by
}

// membersChanged drops what is cached over the members' counted
// Messages; call it whenever a member comes, goes or counts a Message.
func (n *Node) membersChanged() {
	n.pgOK = false
	n.resCheck = 0
}

// promiseGALT is the smallest counted promise among the other
// regulating federates; unbounded and 0 when there is none.
func (n *Node) promiseGALT() (bound, FederateID) {
	if !n.pgOK {
		n.pg, n.pgBy = n.computePromiseGALT()
		n.pgOK = true
	}
	return n.pg, n.pgBy
}

func (n *Node) computePromiseGALT() (bound, FederateID) {
	g, by := unbounded, FederateID(0)
	for id, m := range n.regs { // counted, and regulating
		b := bound{m.counted.Bound, m.counted.Strict}
		if b.lower(g) || (b == g && id < by) {
			g, by = b, id
		}
	}
	return g, by
}

// acked reports whether every member's counted Message acknowledges a
// request made at Epoch req.
func (n *Node) acked(req uint64) bool {
	for _, m := range n.members {
		if !m.hasCounted || m.counted.Acks[n.self] < req {
			return false
		}
	}
	return true
}

func (n *Node) maybeEnableRegulation() {
	if !n.regPending {
		return
	}
	if !n.regTargeted {
		if !n.acked(n.regReq) {
			return
		}
		// Every member now counts our promise, so none can be granted
		// past our Bound any more; what they have been granted so far is
		// in the Messages we count. Start above all of it.
		target, above := n.time, math.Inf(-1)
		for _, m := range n.members {
			if m.hasCounted && m.counted.Constrained {
				target = max(target, m.counted.Granted)
				above = max(above, m.counted.Granted)
			}
		}
		n.regTarget, n.regTargeted = target, true
		// With zero lookahead, Bound may equal a constrained member's
		// granted time, which it may not receive again: send above it.
		n.sendAbove = above
		n.raiseBound()
		n.touch() // Request is over
	}
	if n.constrained && n.regTarget > n.time {
		// Our own time jumps to regTarget: first everything below it must
		// have arrived and be delivered.
		if g, _ := n.galt(); !g.atLeast(n.regTarget) {
			return
		}
		n.queue.popUpTo(n.regTarget, false, n.deliver)
		n.raiseFloor(n.regTarget, false)
	}
	n.setTime(n.regTarget)
	n.regPending = false
	n.regulating = true
	n.touch()
	n.emit(effRegulation, n.time)
}

func (n *Node) maybeEnableConstrained() {
	if !n.consPending || !n.acked(n.consReq) {
		return
	}
	if g, _ := n.galt(); !g.atLeast(n.time) {
		return
	}
	n.consPending = false
	n.constrained = true
	n.floor, n.floorStrict = n.time, false
	n.touch()
	n.emit(effConstrained, n.time)
}

func (n *Node) maybeGrant() {
	kind := n.request
	if kind == NoRequest {
		return
	}
	t := n.requested
	if n.constrained {
		g, ok := n.grantable()
		if !ok {
			return
		}
		switch kind {
		case FlushQueueRequest:
			G, _ := n.galt()
			n.queue.popUpTo(math.Inf(1), true, n.deliver)
			n.raiseFloor(g, G.above(g))
		default:
			// Messages at g come before the grant, also for the
			// Available kinds (more at g may follow it).
			n.queue.popUpTo(g, true, n.deliver)
			n.raiseFloor(g, !kind.available())
		}
		t = g
	}
	before := n.promise
	n.setTime(t)
	n.lastKind = kind
	n.request = NoRequest
	n.raiseBound()
	if (kind == TimeAdvanceRequest || kind == TimeAdvanceRequestAvailable) && n.promise == before && n.regulating {
		// The promise already said as much while the request was
		// pending: nobody needs to hear of the grant at once. The next
		// Message (the next request, or the periodic resend) carries it.
		// A TAR loop thus costs one broadcast per step, not two.
		n.state++
		n.epoch++
		n.dirty = true
	} else {
		n.touch()
	}
	n.emitGrant(t, kind)
}

// grantable returns the time the pending request of a constrained node
// would be granted to, and whether it may be granted now.
func (n *Node) grantable() (float64, bool) {
	t, kind := n.requested, n.request
	q, hasQ := n.queue.min()
	if kind.nextMessage() && hasQ && q < t {
		t = q
	}
	G, _ := n.galt()
	if kind == FlushQueueRequest {
		if G.v < t {
			t = G.v
		}
		if hasQ && q < t {
			t = q
		}
		return max(t, n.time), true
	}
	return t, G.allows(t, !kind.available())
}

// setTime moves logical time; invariant 4 says it never goes back.
func (n *Node) setTime(t float64) {
	if t < n.time {
		panic(fmt.Sprintf("lbts: invariant 4 (grants never decrease) broken: %s after %s",
			fmtTime(t), fmtTime(n.time)))
	}
	n.time = t
}

// raiseFloor moves the delivery floor up; it never goes down while
// constrained.
func (n *Node) raiseFloor(t float64, strict bool) {
	if t > n.floor || (t == n.floor && strict) {
		n.floor, n.floorStrict = t, strict
	}
}

// ---- Queries ----

// Time returns the federate's logical time (queryLogicalTime), as of the
// last Ready or HasReady.
func (n *Node) Time() float64 { return n.time }

// GALT returns the greatest available logical time (queryGALT): the
// smallest promise (Bound) among the other regulating federates whose
// promise this node counts. ok is false when there is none (GALT is
// then unbounded).
func (n *Node) GALT() (galt float64, ok bool) {
	g, _ := n.galt()
	return g.v, !math.IsInf(g.v, 1)
}

// LITS returns the least incoming time stamp (queryLITS): the smaller of
// GALT and the earliest queued TSO message. ok is false when both are
// unbounded.
func (n *Node) LITS() (lits float64, ok bool) {
	gb, _ := n.galt()
	g := gb.v
	if q, ok := n.queue.min(); ok && q < g {
		g = q
	}
	return g, !math.IsInf(g, 1)
}

// Advancing reports whether a time advance request is pending (the
// federate is in the time advancing state).
func (n *Node) Advancing() bool { return n.request != NoRequest }

// Regulating reports whether time regulation is enabled (not pending).
func (n *Node) Regulating() bool { return n.regulating }

// Constrained reports whether the federate is time-constrained (not
// pending).
func (n *Node) Constrained() bool { return n.constrained }

// Lookahead returns the effective lookahead (queryLookahead): after
// ModifyLookahead lowered it, the effective value shrinks to the new one
// only as time advances. It is 0 when not regulating.
func (n *Node) Lookahead() float64 {
	if !n.regulating && !n.regPending {
		return 0
	}
	return max(n.lookahead, n.promise.v-n.base())
}

// Bound returns the node's own promise: no TSO message it sends will
// carry a smaller time stamp. ok is false when it is not regulating (or
// pending).
func (n *Node) Bound() (bound float64, ok bool) {
	if !n.regulating && !n.regPending {
		return 0, false
	}
	return n.promise.v, true
}

// Status returns a snapshot of the node.
func (n *Node) Status() Status {
	gb, by := n.galt()
	g := gb.v
	l, _ := n.LITS()
	s := Status{
		Self:               n.self,
		Time:               n.time,
		Lookahead:          n.Lookahead(),
		Regulating:         n.regulating,
		RegulationPending:  n.regPending,
		Constrained:        n.constrained,
		ConstrainedPending: n.consPending,
		Request:            n.request,
		Requested:          n.requested,
		GALT:               g,
		LITS:               l,
		HeldBy:             by,
		Members:            len(n.members),
		Queued:             n.queue.Len(),
		Violations:         n.violations,
		Round:              n.round,
		CutGALT:            math.Inf(1),
	}
	if c, ok := n.cutGALT(); ok {
		s.CutGALT = c.v
	}
	if n.request == NoRequest {
		s.Requested = 0
	}
	s.Bound, _ = n.Bound()
	for id := range n.await {
		s.Awaiting = append(s.Awaiting, id)
	}
	slices.Sort(s.Awaiting)
	for id, m := range n.members {
		if len(m.pending) == 0 {
			continue
		}
		newest := &m.pending[len(m.pending)-1]
		for g, seq := range newest.Covers {
			if have := n.received(streamKey{id, g}); n.joined[g] && have < seq {
				s.Uncovered = append(s.Uncovered, Uncovered{From: id, Group: g, Want: seq, Have: have})
				break
			}
		}
	}
	slices.SortFunc(s.Uncovered, func(a, b Uncovered) int { return cmp.Compare(a.From, b.From) })
	return s
}
