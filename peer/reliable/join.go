package reliable

import (
	"encoding/binary"
	"slices"

	"github.com/meshrti/meshrti/peer/dgram"
)

// Join handshake.
//
// Each join of a group gets a nonce (a per-endpoint counter). HELLO and
// SYNC frames carry the sender's nonce for the group in their sequence
// field, so that a re-join is told apart from a retry of the same join.
// They also carry positions: a position of node S on group g is S's
// highest reliable sequence on g at some moment; everything S sends later
// is above it.
//
// A member S of g learns that R is a member when it first processes a
// HELLO or SYNC of R's current join. It records R as a receiver of its
// stream on g with H = its own position at that moment, or lower: R's
// frame echoes the lowest position of S that R saw vouched for while
// joined (S's HELLOs and SYNCs vouch for their hw field, heartbeats for
// their sequence, original data frames that begin a message for their
// sequence minus one: positions are message boundaries), and S takes the
// minimum. R is owed every message above H. H never changes
// for a recorded join; every SYNC to R carries it.
//
// S answers every newly recorded receiver, and every HELLO addressed to
// S, with a SYNC: "your stream from me starts at H+1; I hold from low; my
// highest is hw". A retry of a join HELLO S has recorded is not answered
// again (in a group of n members, answering every retry would cost 5n
// SYNCs per join, each delivered to all): a joiner that missed S's SYNC
// asks S for one by name as soon as it hears S's traffic. SYNCs to one
// receiver are rate-limited to one per NakDelayTicks, except the first.
//
// A member that was joined before S joined is owed everything after S's
// join position J (S's position at Join, carried by every join HELLO of
// that join). Two rules see to it, whichever of S's frames reaches R
// first:
//
//   - R starts an unstarted stream from S as soon as it hears one of
//     S's join HELLOs, at E+1, E = min(J, R's lowest vouch of S), when
//     S's join is no older than R's (a join HELLO carries its join's
//     age): R was a member when S announced its join. E is what R then
//     echoes, so S records E if it learns of R from that answer.
//   - While S's join is announced (announceSpan×NakDelayTicks after it,
//     twice the span of its HELLOs), S records every receiver it learns
//     of at H = min(its position, the echo, J): R may have been a member
//     before S joined, and S cannot tell. So a SYNC that overtakes every
//     join HELLO on its way to R, or answers a frame R sent before it
//     heard one (the crossing that this guards against), starts R no
//     later than J+1. After the announcement, a SYNC can start R first
//     only if R heard none of S's join HELLOs, all sent 15×NakDelayTicks
//     or more before that SYNC.
//
// Records never change and SYNCs never move a started stream, so R's
// start comes from whichever arrives first and may differ from S's
// record; both are at most J+1 in the cases above, and at most one past
// S's position when it learned of R. S repairs whatever it still holds,
// whoever asks, so the earlier of the two costs a repair at most.
//
// Owing R what S sent before R joined is safe for the transport, but for
// R what was sent before it came may be history (a DDM cell its region
// moved over), so every Start also says from which sequence on S sent
// after R began hearing g (Start.Fresh): after J when S joined after R
// (the join ages tell, read with Config.Clock), else after S's position
// when it learned of R (the SYNC's cut), or from the first position R
// heard vouched for since it came, when lower. Listen makes a group
// joined to send only a heard one: a new join as a receiver (new nonce,
// streams forgotten, join HELLOs), the same join as a sender.

const (
	// noVouch is stream.vouch before any frame vouched for a position.
	noVouch = MaxSeq

	// joinHellos is the number of HELLOs a join sends: one at once, then
	// retries after NakDelayTicks, 2×, 4× and 8× that.
	joinHellos = 5
	// joinSpan is the span of a join's HELLOs in NakDelayTicks: the last
	// one goes 15×NakDelayTicks after the join.
	joinSpan = 1<<(joinHellos-1) - 1
	// announceSpan is how long, in NakDelayTicks, a join counts as just
	// announced: twice the span of its HELLOs, so that a member that heard
	// one of them has answered or been told its start by then.
	announceSpan = 2 * joinSpan
	// maxReceivers bounds the receivers recorded per joined group; when
	// full, the one recorded earliest is forgotten.
	maxReceivers = 4096
)

// groupState is this endpoint's membership of a joined group: its join
// and the receivers it knows of for its own stream on the group.
type groupState struct {
	g          dgram.Group
	nonce      uint64 // this join's nonce
	joinHW     uint64 // our highest reliable seq on g at Join: the join position
	joined     int64  // clock at the Join (Config.Clock): a join HELLO and a SYNC say how long ago it was
	listening  int64  // clock since when we hear g (Join, or Listen for a group joined to send)
	announced  int64  // tick until which receivers we learn of are owed everything after joinHW
	hellos     int    // join HELLOs still to send
	helloAt    int64  // tick of the next join HELLO
	helloEvery int64  // interval before the next join HELLO
	rcv        map[NodeID]*receiver
	rcvList    []*receiver // rcv's values in the order recorded: loops over receivers run per ACK and per tick
	learnedAt  int64       // tick a receiver's join was last learned (see NewReceiverWithin)
}

// addReceiver records r, whose id must not be recorded.
func (gs *groupState) addReceiver(r *receiver) {
	gs.rcv[r.id] = r
	gs.rcvList = append(gs.rcvList, r)
}

// dropReceiver forgets the receiver id, if recorded.
func (gs *groupState) dropReceiver(id NodeID) {
	r := gs.rcv[id]
	if r == nil {
		return
	}
	delete(gs.rcv, id)
	for i, x := range gs.rcvList {
		if x == r {
			gs.rcvList = slices.Delete(gs.rcvList, i, i+1)
			break
		}
	}
}

// receiver is a member of a group that our stream on the group is owed
// to, from start+1 on.
type receiver struct {
	id      NodeID
	inc     uint64 // its incarnation
	nonce   uint64 // its join nonce
	start   uint64 // H: our highest reliable seq when we learned of it, or the lower position it echoed
	known   uint64 // our highest reliable seq when we learned of it, unlowered: what we sent up to it, we sent before we knew of its join
	learned int64  // tick it was recorded
	syncAt  int64  // tick of the last SYNC sent to it
	synced  bool   // a SYNC was sent to it

	// Flow control (see flow.go).
	acked   uint64 // sequence through which it acknowledged our stream
	ackAt   int64  // tick its acknowledgement last advanced
	stalled bool   // it stopped acknowledging: it no longer holds the window
	left    bool   // it left the group (this join's LEAVE arrived)
}

// syncBody is a decoded SYNC body.
type syncBody struct {
	target NodeID
	inc    uint64 // the target's incarnation
	nonce  uint64 // the target's join nonce
	echo   uint64 // the lowest position of the target the sender saw vouched for
	start  uint64 // H: the target's stream starts at H+1
	low    uint64 // oldest sequence the sender still holds
	hw     uint64 // the sender's highest reliable sequence; vouched for
	cut    uint64 // the sender's position when it learned of the target's join (receiver.known)
	age    uint64 // ticks since the sender's join of the group
	join   uint64 // the sender's join position
}

func parseSync(b []byte) syncBody {
	u := func(i int) uint64 { return binary.BigEndian.Uint64(b[8*i:]) }
	return syncBody{NodeID(u(0)), u(1), u(2), u(3), u(4), u(5), u(6), u(7), u(8), u(9)}
}

// Join starts receiving on g: frames of g are accepted from now on. It
// multicasts a HELLO on g at once (in the next Ready) and repeats it four
// times over the next 15×NakDelayTicks ticks, so that the members of g
// learn that this endpoint is a member: each sender owes it every reliable
// message it sends on g after it learned so, and tells it so with a SYNC,
// reported as a Start. The HELLOs carry this endpoint's join position, its
// highest reliable sequence on g now: members whose stream from it has not
// started start it there, and receivers it learns of in the next
// 30×NakDelayTicks are owed everything after it (see the package
// documentation). Joining a group already joined does nothing.
func (e *Endpoint) Join(g dgram.Group) {
	if e.groups[g] != nil {
		return
	}
	e.joins++
	gs := &groupState{
		g:          g,
		nonce:      e.joins,
		joinHW:     e.hwOf(g),
		joined:     e.clock(),
		listening:  e.clock(),
		announced:  e.now + announceSpan*int64(e.cfg.NakDelayTicks),
		hellos:     joinHellos - 1,
		helloEvery: int64(e.cfg.NakDelayTicks),
		rcv:        make(map[NodeID]*receiver),
		learnedAt:  e.now,
	}
	gs.helloAt = e.now + gs.helloEvery
	e.groups[g] = gs
	e.groupList = append(e.groupList, gs)
	e.hello(gs, gs.joinHW, nil)
}

// Listen says that this endpoint hears g's traffic from now on: the
// driver joined g in the endpoint earlier to send there only, and now
// receives its frames too (package peer joins a DDM cell to send before
// its own region moves over it). As a receiver this is a new join of g:
// the streams of g are forgotten (they may have started on the SYNCs of
// the send-only join, owing what was sent since), and a new join nonce
// is announced with join HELLOs, so that each sender records this
// endpoint anew, owing it what it sends from now on, and the streams
// start again (Start, with Fresh as for a Join now). As a sender nothing
// changes: its join position and age stay those of the Join. Listening
// to a group not joined does nothing.
func (e *Endpoint) Listen(g dgram.Group) {
	gs := e.groups[g]
	if gs == nil {
		return
	}
	e.dropStreams(g)
	e.joins++
	gs.nonce = e.joins
	gs.listening = e.clock()
	gs.hellos, gs.helloEvery = joinHellos-1, int64(e.cfg.NakDelayTicks)
	gs.helloAt = e.now + gs.helloEvery
	e.hello(gs, gs.joinHW, nil)
}

// tickJoins sends the join HELLOs that are due.
func (e *Endpoint) tickJoins() {
	for _, gs := range e.groupList {
		if gs.hellos == 0 || e.now < gs.helloAt {
			continue
		}
		e.hello(gs, gs.joinHW, nil)
		gs.hellos--
		gs.helloEvery *= 2
		gs.helloAt = e.now + gs.helloEvery
	}
}

// hello multicasts a HELLO on gs's group vouching for hw and asking for a
// SYNC: from every member when s is nil, else from the sender of s, with
// the position s echoes.
func (e *Endpoint) hello(gs *groupState, hw uint64, s *stream) {
	f, body := e.newFrame(kindHello, gs.g, gs.nonce, helloBodyLen)
	binary.BigEndian.PutUint64(body, hw)
	to := gs.g
	if s == nil {
		// A join HELLO: the echo field says how long ago we joined.
		binary.BigEndian.PutUint64(body[24:], uint64(e.clock()-gs.joined))
	}
	if s != nil {
		binary.BigEndian.PutUint64(body[8:], uint64(s.key.from))
		binary.BigEndian.PutUint64(body[16:], s.p.inc)
		binary.BigEndian.PutUint64(body[24:], s.vouch)
		to = e.to(s.key.from, gs.g) // a request: to its sender's inbox
	}
	e.emit(to, f)
	e.stats.Hellos++
}

// heard notes reliable traffic on a stream that has not started: unless
// a SYNC arrives first, ask the sender for one after NakRetryTicks plus up
// to NakDelayTicks (the handshake's own SYNC is normally one round trip
// away; asking early would make the sender learn of us later than that
// SYNC's echo says, should the ask arrive first).
func (e *Endpoint) heard(s *stream) {
	if s.reqAt != 0 {
		return
	}
	s.reqAt = e.now + int64(e.cfg.NakRetryTicks+e.cfg.Rand.IntN(e.cfg.NakDelayTicks+1))
	e.arm(s)
	s.reqEvery = int64(e.cfg.NakRetryTicks)
}

// requestSync asks the sender of the unsynced stream s for a SYNC, and
// schedules the next ask at a doubling interval.
func (e *Endpoint) requestSync(s *stream) {
	gs := e.groups[s.key.group]
	if gs == nil { // cannot happen: streams exist only on joined groups
		s.reqAt = 0
		return
	}
	e.hello(gs, e.hwOf(gs.g), s)
	e.stats.SyncRequests++
	s.reqAt = e.now + s.reqEvery
	e.arm(s)
	s.reqEvery = min(2*s.reqEvery, int64(e.cfg.HeartbeatTicks)*heartbeatBackoff)
}

// onHello handles a HELLO from p on gs's group: p is a member, and asks
// every member or one for a SYNC. A join HELLO (to every member) also
// starts p's stream if it has not started.
func (e *Endpoint) onHello(gs *groupState, p *peer, nonce uint64, body []byte) {
	hw := binary.BigEndian.Uint64(body)
	target := NodeID(binary.BigEndian.Uint64(body[8:]))
	tinc := binary.BigEndian.Uint64(body[16:])
	echo := binary.BigEndian.Uint64(body[24:])
	s := e.streamOf(p, gs.g)
	s.vouch = min(s.vouch, hw)
	if target != 0 {
		s.fresh = min(s.fresh, hw) // a SYNC request's position is its current one
	}
	if target == 0 && !s.started {
		// A join HELLO: p announces that it joined g at position hw,
		// and we are a member, so we are owed everything p sends after
		// that. Start now, after our echo (hw, or a lower position of p
		// we saw vouched for while joined). p records us at our echo
		// if it learns of us from our answer; a record it made earlier
		// (from frames we sent before) is no lower, and a SYNC does
		// not move a started stream anyway. Unless p joined before we
		// began hearing g (its HELLO's echo is its join's age, by
		// Config.Clock; at the same reading we cannot tell, and start):
		// then what p sent after its join may have been sent before we
		// came, which its SYNC tells (startSynced).
		if echo <= uint64(e.clock()-gs.listening) {
			// What it sent after this join, or after a frame of
			// it we heard since we came, counts as fresh (not what
			// follows a position an earlier join of it vouched for).
			e.startAt(s, s.vouch+1, 0, hw, min(hw, s.fresh)+1)
		}
		e.heard(s) // until p's SYNC confirms that it recorded us
	}
	known := e.hwOf(gs.g)
	at := known
	if target == e.cfg.Self && tinc == e.cfg.Incarnation {
		at = min(at, echo)
	}
	r, fresh := e.learn(gs, p, nonce, at, known)
	if r != nil && (fresh || target == e.cfg.Self) {
		e.sendSync(gs, r, s.vouch, fresh)
	}
}

// onSync handles a SYNC from p on gs's group: p is a member, and when the
// SYNC is for this join, it starts p's stream.
func (e *Endpoint) onSync(gs *groupState, p *peer, nonce uint64, body []byte) {
	y := parseSync(body)
	s := e.streamOf(p, gs.g)
	s.vouch = min(s.vouch, y.hw)
	s.fresh = min(s.fresh, y.hw)
	known := e.hwOf(gs.g)
	at := known
	if y.target == e.cfg.Self && y.inc == e.cfg.Incarnation {
		at = min(at, y.echo)
		if y.nonce == gs.nonce {
			if !s.started {
				e.startSynced(s, y)
			}
			s.confirmed, s.reqAt, s.reqEvery = true, 0, 0
		}
	}
	if r, fresh := e.learn(gs, p, nonce, at, known); fresh {
		e.sendSync(gs, r, s.vouch, true)
	}
}

// learn records p's join nonce as a receiver of our stream on gs's group
// owed everything after start, unless it is recorded already; known is
// our position now. It returns the record and whether it is new; nil for
// a frame of an earlier join.
func (e *Endpoint) learn(gs *groupState, p *peer, nonce, start, known uint64) (*receiver, bool) {
	r := gs.rcv[p.id]
	if r != nil && r.inc == p.inc {
		switch {
		case r.nonce == nonce:
			return r, false
		case r.nonce > nonce:
			return nil, false
		}
	}
	if e.now < gs.announced {
		// Our join is being announced: p may have been a member before
		// it and missed our HELLOs so far, or answered before it heard
		// one. Owe it everything after our join position, as a member
		// that hears one of our join HELLOs starts there itself.
		start = min(start, gs.joinHW)
	}
	if r != nil && r.inc == p.inc && r.nonce == 0 && !r.left {
		// Recorded from its ACK: it still needs what follows that.
		// Not once it left: those ACKs were of a join it ended, and
		// this is a new one (found by the randomized simulation once
		// tail probes made ACKs more frequent: a rejoin was owed
		// history from its previous join's first ACK).
		start = min(start, max(r.acked, r.start))
	}
	if r == nil {
		if len(gs.rcv) >= maxReceivers {
			e.evictReceiver(gs)
		}
		r = &receiver{id: p.id}
		gs.addReceiver(r)
	}
	*r = receiver{id: p.id, inc: p.inc, nonce: nonce, start: start, known: known, learned: e.now, acked: start, ackAt: e.now}
	gs.learnedAt = e.now
	return r, true
}

// NewReceiverWithin reports whether this endpoint learned of a new
// receiver's join of g (a join HELLO or SYNC) in the last ticks ticks, or
// joined g itself that recently: a receiver may then hold a stream from
// this node that starts at a message sent in that span, and know nothing
// of what was sent before. Package peer uses it to repeat in messages
// what such a receiver could not know yet.
func (e *Endpoint) NewReceiverWithin(g dgram.Group, ticks int) bool {
	gs := e.groups[g]
	if gs == nil {
		return false
	}
	return e.now-gs.learnedAt <= int64(ticks)
}

// evictReceiver forgets the receiver of gs recorded earliest.
func (e *Endpoint) evictReceiver(gs *groupState) {
	var old *receiver
	for _, r := range gs.rcvList {
		if old == nil || r.learned < old.learned || r.learned == old.learned && r.id < old.id {
			old = r
		}
	}
	gs.dropReceiver(old.id)
	e.stats.ReceiversEvicted++
}

// forgetReceiver drops id from every group's receivers.
func (e *Endpoint) forgetReceiver(id NodeID) {
	for _, gs := range e.groupList {
		gs.dropReceiver(id)
	}
}

// sendSync tells r where its stream from us on gs's group starts; echo is
// the lowest position of r we saw vouched for. Unless force, at most one
// SYNC per NakDelayTicks goes to r.
func (e *Endpoint) sendSync(gs *groupState, r *receiver, echo uint64, force bool) {
	if !force && r.synced && e.now-r.syncAt < int64(e.cfg.NakDelayTicks) {
		return
	}
	r.synced, r.syncAt = true, e.now
	hw, low := uint64(0), uint64(1)
	if st := e.sealGroup(gs.g); st != nil {
		hw, low = st.hw, e.low(st)
	}
	f, body := e.newFrame(kindSync, gs.g, gs.nonce, syncBodyLen)
	for i, v := range []uint64{uint64(r.id), r.inc, r.nonce, echo, r.start, low, hw, max(r.known, r.start), uint64(e.clock() - gs.joined), gs.joinHW} {
		binary.BigEndian.PutUint64(body[8*i:], v)
	}
	e.emit(e.to(r.id, gs.g), f)
	e.stats.Syncs++
}

// clock reads Config.Clock, or the ticks so far without one.
func (e *Endpoint) clock() int64 {
	if e.cfg.Clock != nil {
		return e.cfg.Clock()
	}
	return e.now
}

// hwOf returns our highest reliable seq on g (0 when none), sealing the
// open frame of g first: a position is always one of messages sent.
func (e *Endpoint) hwOf(g dgram.Group) uint64 {
	if st := e.sealGroup(g); st != nil {
		return st.hw
	}
	return 0
}

// start marks s started at next for incarnation inc, what it counts as
// sent after we began hearing the group from fresh on, and reports it.
func (e *Endpoint) start(s *stream, inc, next, fresh uint64) {
	s.started, s.confirmed, s.next = true, false, next
	s.hw = max(s.hw, next-1)
	s.reqAt, s.reqEvery = 0, 0
	e.starts = append(e.starts, Start{From: s.key.from, Incarnation: inc, Group: s.key.group, Seq: next, Fresh: max(fresh, next)})
	e.stats.Starts++
}

// startSynced starts the unsynced stream s at the SYNC's start+1. What
// counts as sent after we began hearing the group (Start.Fresh): what
// follows the sender's join position when it joined after we began, or
// at the same clock reading (the SYNC's age says when); else what
// follows its position when it learned of our join (the SYNC's cut); or,
// when lower, what follows the first position we heard vouched for by a
// frame of it since we began (what arrived after we came, in flight or
// not, is not history). The age is read on arrival: a sender that joined
// less than the SYNC's time on the way before we began counts as after.
func (e *Endpoint) startSynced(s *stream, y syncBody) {
	after := y.join
	if gs := e.groups[s.key.group]; gs != nil && y.age > uint64(e.clock()-gs.listening) {
		after = y.cut
	}
	e.startAt(s, y.start+1, y.low, y.hw, max(y.start, min(after, s.fresh))+1)
}

// startAt starts the unsynced stream s at next, fresh (Start.Fresh), the
// sender's highest sequence being at least hw: what s held below next is
// history and dropped; what the sender no longer holds (below low; 0
// when unknown) is reported as a gap; the rest is delivered or repaired.
func (e *Endpoint) startAt(s *stream, next, low, hw, fresh uint64) {
	e.start(s, s.p.inc, next, fresh)
	for q := range s.buf {
		switch {
		case q < next:
			delete(s.buf, q)
			e.stats.BeforeStart++
		case q-next >= uint64(e.cfg.ReorderBuffer):
			delete(s.buf, q)
			e.stats.ReorderDropped++
		}
	}
	s.hw = max(s.hw, hw)
	if low > next {
		e.skipTo(s, low)
	}
	e.drain(s)
	e.schedule(s)
}
