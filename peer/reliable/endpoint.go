package reliable

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/meshrti/meshrti/peer/dgram"
)

// Outgoing is a frame to send on a group, best effort.
type Outgoing struct {
	Group dgram.Group
	Frame []byte
}

// Delivery is a message to hand to the application.
type Delivery struct {
	From        NodeID
	Incarnation uint64
	Group       dgram.Group
	// Seq is the message's sequence number: in the reliable sequence of
	// (From, Incarnation, Group) when Reliable, else in its best-effort
	// sequence.
	Seq      uint64
	Reliable bool
	// Payload aliases the frame passed to Step.
	Payload []byte
}

// Gap reports reliable messages that were sent but can no longer be
// repaired: the sender no longer holds them, or it was forgotten or
// restarted. The range is inclusive.
type Gap struct {
	From        NodeID
	Incarnation uint64
	Group       dgram.Group
	FromSeq     uint64
	ToSeq       uint64
}

// Start reports where the reliable stream of (From, Incarnation, Group)
// begins for this endpoint: Seq is the first sequence owed to it. Nothing
// below Seq will be delivered or reported; from Seq on, every sequence is
// delivered or covered by a Gap. A stream starts once per join of the
// group and incarnation of the sender: at the sender's SYNC (see Join),
// or at 1 when a sender already heard from restarts with a new
// incarnation.
type Start struct {
	From        NodeID
	Incarnation uint64
	Group       dgram.Group
	Seq         uint64
	// Fresh (at least Seq) is the first sequence this endpoint counts
	// as sent after it began hearing the group (Join, or Listen): as
	// far as the handshake tells, the sender sent the messages below it
	// before it knew of this join and before they could reach it.
	// They are still owed, and delivered, from Seq on: a consumer for
	// which what was sent before it came is history (package peer, for
	// a DDM cell its region moved over) drops them.
	Fresh uint64
}

// Ready is what the driver must do next. Within one (From, Incarnation,
// Group) stream, the reliable Deliver entries and the Gaps together cover
// consecutive sequence numbers in increasing order from the stream's
// Start.Seq, each exactly once: a Gap belongs between the deliveries whose
// sequence numbers surround it. A stream's Start comes in the same Ready
// as its first reliable delivery or gap, or in an earlier one.
type Ready struct {
	// Out are frames to send, in order.
	Out []Outgoing
	// Starts are streams that began; act on them before Deliver and Gaps.
	Starts []Start
	// Deliver are messages to hand to the application, in order.
	Deliver []Delivery
	// Gaps are reliable messages lost for good.
	Gaps []Gap
}

// Empty reports whether rd asks for nothing.
func (rd Ready) Empty() bool {
	return len(rd.Out) == 0 && len(rd.Starts) == 0 && len(rd.Deliver) == 0 && len(rd.Gaps) == 0
}

// Stats counts what an Endpoint did. Drop reasons match the errors of
// Step.
type Stats struct {
	// Sender side.
	Sent             uint64 // reliable messages sent
	SentBestEffort   uint64 // best-effort messages sent
	SentAimed        uint64 // best-effort messages sent to one node (SendAimed)
	DataFrames       uint64 // data and best-effort frames (bundles) sent
	Fragments        uint64 // fragments sent (messages larger than a frame)
	Retransmits      uint64 // messages retransmitted
	RetransmitFrames uint64 // retransmission frames sent
	AimedRepairs     uint64 // of which to one receiver's inbox (Config.Inbox)
	Acks             uint64 // ACK frames sent
	AcksReceived     uint64 // ACK frames received
	Leaves           uint64 // LEAVE frames sent
	ReceiversStalled uint64 // receivers that stopped acknowledging and no longer hold the window
	ReceiversResumed uint64 // stalled receivers that acknowledged again
	Heartbeats       uint64 // heartbeat frames sent
	NAKs             uint64 // NAK frames sent
	NAKsReceived     uint64 // NAK frames addressed to this endpoint
	Gones            uint64 // gone frames sent

	// Join handshake.
	Hellos            uint64 // HELLO frames sent (joins and SYNC requests)
	SyncRequests      uint64 // of which SYNC requests for unsynced streams
	Syncs             uint64 // SYNC frames sent
	ReceiversEvicted  uint64 // receivers forgotten because a group's table was full
	ReceiversFromAcks uint64 // receivers learned of from their ACKs (their HELLO or SYNC was lost)

	// Receiver side.
	Received            uint64 // frames accepted by Step
	Delivered           uint64 // reliable messages delivered
	DeliveredBestEffort uint64 // best-effort messages delivered
	Duplicates          uint64 // messages received again and dropped
	Gaps                uint64 // Gap reports
	GapMessages         uint64 // messages covered by Gap reports
	Starts              uint64 // Start reports
	BeforeStart         uint64 // messages buffered before a stream started, below its start, dropped
	ReorderDropped      uint64 // messages beyond the reorder buffer, dropped
	NAKsObserved        uint64 // other receivers' NAKs that suppress ours
	NotMine             uint64 // addressed frames for another node through a shared inbox
	Reassembled         uint64 // fragmented messages put together and delivered
	Incomplete          uint64 // fragmented messages dropped incomplete (reliable ones reported as gaps)

	// Frames dropped by Step, by reason.
	Malformed        uint64 // ErrMalformed
	BadVersion       uint64 // ErrVersion
	WrongFederation  uint64 // ErrWrongFederation
	WrongGroup       uint64 // ErrWrongGroup
	BadChecksum      uint64 // ErrChecksum
	AuthFailed       uint64 // ErrAuth
	Replayed         uint64 // ErrReplay
	Own              uint64 // ErrOwnFrame
	StaleIncarnation uint64 // ErrStaleIncarnation
	NotJoined        uint64 // ErrNotJoined
}

// Endpoint is one node's reliable multicast state machine: its outgoing
// streams (one per group it sends on) and its incoming streams (one per
// sender and joined group). It does no I/O and reads no clock.
//
// An Endpoint is not safe for concurrent use; its owner serializes calls.
type Endpoint struct {
	cfg        Config
	fed        uint64
	bodyMax    int // largest frame body
	maxEntries int // most entries in one bundle
	maxRanges  int

	seal sealer
	cand *peer // a sender run being authenticated (see newPeer)

	ackList []*stream // the streams with ackDue set, in the order asked
	// askedOnly holds the groups whose streams are acknowledged only when
	// their sender asks (see WithoutFlowControl).
	askedOnly map[dgram.Group]bool
	// aimedAcks holds the groups whose ACKs always go to each sender's
	// inbox (AimedAcks).
	aimedAcks map[dgram.Group]bool
	// armed lists the streams with a timer set (nakAt or reqAt), in the
	// order they were armed: what Tick visits. armedSpare is the last
	// tick's list, reused.
	armed, armedSpare []*stream
	rtx               bundle  // retransmissions being bundled
	aimed             bundle  // retransmissions to one receiver's inbox being bundled
	ents              []entry // scratch for parsing bundles

	now int64 // ticks so far

	groups    map[dgram.Group]*groupState // joined groups
	groupList []*groupState               // in join order, for deterministic ticks
	joins     uint64                      // joins so far: the last join nonce
	sends     map[dgram.Group]*sendState
	sendList  []*sendState // in creation order, for deterministic ticks
	peers     map[NodeID]*peer
	streams   map[streamKey]*stream
	stream    []*stream         // in creation order (swap-deleted)
	forgotten map[NodeID]uint64 // incarnation a sender was forgotten at

	out     []Outgoing
	starts  []Start
	deliver []Delivery
	gaps    []Gap
	scratch []seqRange

	stats Stats
}

// peer is what a receiver knows of a remote node.
type peer struct {
	id     NodeID
	inc    uint64
	window replayWindow
	aeads  []peerAEAD // keyed: the AEADs opening its frames, by key id
	// beLeft is, for each group we left, the highest best-effort
	// sequence we had from it there: a stream of a later join starts
	// from it, so that a late copy of a message delivered before is not
	// delivered again. Reset with the incarnation.
	beLeft map[dgram.Group]uint64
	// heard is the tick of the last frame of its accepted (LastHeard).
	heard int64
}

type streamKey struct {
	from  NodeID
	group dgram.Group
}

// stream is the incoming stream of one (sender, group).
type stream struct {
	key streamKey
	p   *peer
	idx int // index in Endpoint.stream

	started bool // the reliable sequence has a starting point
	// confirmed: the sender's SYNC for our current join arrived, so it
	// has recorded us as a receiver. A stream started from the sender's
	// join HELLO is not confirmed yet; until it is, we ask the sender
	// for a SYNC by name (as for an unsynced stream): a sender that
	// never learned of us would release what we are owed.
	confirmed bool
	next      uint64           // next reliable seq to deliver
	hw        uint64           // highest reliable seq known to exist
	buf       map[uint64]entry // out-of-order reliable entries, seq > next (any seq while unsynced)
	acked     uint64           // the sequence our last ACK of this stream named
	ackDue    bool             // its sender asked for an ACK (sent at the next Tick)
	ackedAt   int64            // tick of our last ACK of this stream
	frag      reassembly       // reliable message being reassembled
	nakAt     int64            // tick to (re)consider NAKing; 0: none
	armed     bool             // on Endpoint.armed (a timer is set)
	// nakBackoff multiplies NakRetryTicks for our next repeat of a NAK:
	// 1, doubling while NAKs bring no progress (next stays nakNext).
	nakBackoff int
	nakNext    uint64
	supp       []suppressed // ranges recently NAKed (by us or others)

	// While not started or not confirmed: when to ask the sender for a
	// SYNC (0: not yet heard reliable traffic) and the current interval
	// between asks.
	reqAt    int64
	reqEvery int64
	// vouch is the lowest position of the sender (its highest reliable
	// seq at the time) vouched for by a frame received from it since this
	// stream was created, so while joined: the sender owes us everything
	// after it if it accepts it as an echo. noVouch when none.
	vouch uint64
	// fresh is the lowest position of the sender vouched for by a frame
	// sent at the time it says (not a join HELLO, which vouches for the
	// join's position) that we received while hearing the group:
	// everything above it was sent after that frame, so after we
	// came, give or take the frame's time on the way. noVouch when none.
	fresh uint64

	beHigh uint64 // highest best-effort seq seen
	beMask uint64 // bit i: beHigh-i seen
	beFrag reassembly
}

// reassembly is a fragmented message being put together.
type reassembly struct {
	active bool
	first  uint64 // sequence of its first fragment
	next   uint64 // best effort: sequence of the fragment expected next
	buf    []byte
}

type suppressed struct {
	seqRange
	until int64
}

// New returns an Endpoint that has joined no group.
func New(cfg Config) (*Endpoint, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	e := &Endpoint{
		cfg:       cfg,
		fed:       FederationID(cfg.Federation),
		groups:    make(map[dgram.Group]*groupState),
		sends:     make(map[dgram.Group]*sendState),
		peers:     make(map[NodeID]*peer),
		streams:   make(map[streamKey]*stream),
		forgotten: make(map[NodeID]uint64),
	}
	if cfg.Keys != nil {
		if err := e.seal.setKeys(cfg.Keys, cfg.Self, cfg.Incarnation); err != nil {
			return nil, err
		}
	}
	e.bodyMax = cfg.MaxFrame - HeaderLen - e.seal.trailerLen()
	e.maxEntries = max(1, min(cfg.RetransmitBuffer, cfg.Window))
	e.maxRanges = min((e.bodyMax-nakFixedLen)/nakRangeLen, maxNakRanges)
	e.rtx = bundle{kind: kindRetransmit, buf: make([]byte, HeaderLen, cfg.MaxFrame)}
	e.aimed = bundle{kind: kindRetransmit, buf: make([]byte, HeaderLen, cfg.MaxFrame)}
	return e, nil
}

// MaxPayload returns the largest message that fits one frame unfragmented.
func (e *Endpoint) MaxPayload() int { return e.bodyMax - entryOverhead(e.bodyMax) }

// SetKeys replaces the federation keys: keys[0] seals the frames sent
// from now on (retransmissions included), and frames sealed with any of
// keys are accepted. An endpoint configured without a key cannot be given
// one, nor the reverse. To rotate, every member first adds the new key
// second in its list, then every member puts it first, then every member
// drops the old one; no frame is lost on the way.
func (e *Endpoint) SetKeys(keys []Key) error {
	if !e.seal.keyed() || len(keys) == 0 {
		return errors.New("reliable: SetKeys needs a keyed endpoint and at least one key")
	}
	if err := e.seal.setKeys(slices.Clone(keys), e.cfg.Self, e.cfg.Incarnation); err != nil {
		return err
	}
	for _, p := range e.peers {
		p.aeads = nil
	}
	return nil
}

// Leave stops receiving on g and discards the incoming streams of g,
// without reporting gaps, and the receivers recorded for g (see Join).
// The outgoing stream of g is kept. A later Join is a new join.
func (e *Endpoint) Leave(g dgram.Group) {
	if gs := e.groups[g]; gs != nil {
		// Tell the senders of g we no longer hold their window.
		f, _ := e.newFrame(kindLeave, g, gs.nonce, 0)
		e.emit(g, f)
		e.stats.Leaves++
		delete(e.groups, g)
		e.groupList = slices.DeleteFunc(e.groupList, func(x *groupState) bool { return x == gs })
	}
	e.dropStreams(g)
}

// dropStreams forgets the streams of g, without reports; a best-effort
// stream's highest sequence is kept, so that a stream of the next join
// does not deliver a late copy again.
func (e *Endpoint) dropStreams(g dgram.Group) {
	for i := 0; i < len(e.stream); {
		if s := e.stream[i]; s.key.group == g {
			if s.beHigh > 0 {
				if s.p.beLeft == nil {
					s.p.beLeft = make(map[dgram.Group]uint64)
				}
				s.p.beLeft[g] = s.beHigh
			}
			e.removeStream(s)
			continue
		}
		i++
	}
}

// End is where a sender's reliable stream on a group ends: the sequence
// number of its last reliable message there.
type End struct {
	Group dgram.Group
	Seq   uint64
}

// ForgetSender drops the state of a lost or departed sender. Its
// buffered messages are delivered and its missing ones reported as gaps,
// in order, up to the highest sequence known to exist on each stream, or
// the End given for the stream's group when that is higher (a departing
// sender named where its streams end, and the frames after the last one
// received never came: they are lost, not absent). Later frames from it
// are rejected unless they come from a higher incarnation.
func (e *Endpoint) ForgetSender(id NodeID, ends ...End) {
	p := e.peers[id]
	if p == nil {
		return
	}
	for i := 0; i < len(e.stream); {
		if s := e.stream[i]; s.p == p {
			for _, end := range ends {
				if end.Group == s.key.group && s.started {
					s.hw = max(s.hw, end.Seq)
				}
			}
			e.flush(s)
			e.removeStream(s)
			continue
		}
		i++
	}
	e.forgetReceiver(id)
	delete(e.peers, id)
	e.forgotten[id] = p.inc
}

// Stats returns the counts so far.
func (e *Endpoint) Stats() Stats { return e.stats }

// Now returns the endpoint's clock: the ticks so far.
func (e *Endpoint) Now() int64 { return e.now }

// LastHeard returns the tick at which a frame of sender id (its current
// incarnation) was last accepted; false when none was, or the sender was
// forgotten. A frame accepted is a sign of life that needs nothing of
// the control plane: the peer layer tells its failure detector so.
func (e *Endpoint) LastHeard(id NodeID) (int64, bool) {
	p := e.peers[id]
	if p == nil {
		return 0, false
	}
	return p.heard, true
}

// HasReady reports whether Ready would return something to do.
func (e *Endpoint) HasReady() bool {
	return len(e.out) > 0 || len(e.starts) > 0 || len(e.deliver) > 0 || len(e.gaps) > 0
}

// Ready returns what to do now: frames to send, stream starts, messages
// to deliver, gaps to report. It returns the same again until Advance is
// called. The slices belong to the Endpoint and are reused after Advance.
func (e *Endpoint) Ready() Ready {
	return Ready{Out: e.out, Starts: e.starts, Deliver: e.deliver, Gaps: e.gaps}
}

// Advance acknowledges that rd, returned by Ready, has been acted on.
func (e *Endpoint) Advance(rd Ready) {
	e.out = consume(e.out, len(rd.Out))
	e.starts = consume(e.starts, len(rd.Starts))
	e.deliver = consume(e.deliver, len(rd.Deliver))
	e.gaps = consume(e.gaps, len(rd.Gaps))
}

// consume drops the first n entries of s, reusing its array.
func consume[T any](s []T, n int) []T {
	if n > len(s) {
		panic("reliable: Advance with a Ready that was not returned by Ready")
	}
	k := copy(s, s[n:])
	clear(s[k:])
	return s[:k]
}

// Tick advances the endpoint's clock by one tick: it seals open frames
// and sends due heartbeats, join HELLOs, SYNC requests, ACKs and NAKs.
func (e *Endpoint) Tick() {
	e.now++
	e.Flush()
	maxEvery := int64(e.cfg.HeartbeatTicks) * heartbeatBackoff
	for _, st := range e.sendList {
		if st.hw == 0 || e.now-st.lastSent < st.hbEvery {
			continue
		}
		limit := maxEvery
		unacked := !st.noFlow && e.ackedBy(st) < st.sealedHW()
		if !unacked {
			limit = int64(e.cfg.HeartbeatTicks) * quietBackoff
		}
		// A heartbeat tells the receivers where the stream ends (a lost
		// tail is found at once); asking for ACKs is another matter. The
		// window moves with the data frames' asks (every Window/4
		// messages) and a blocked sender asks at once (Blocked); what is
		// left is to learn, in time, that the receivers have the tail,
		// for the history and for stall detection. So the tail probe
		// does not ask, and a regular heartbeat asks while something is
		// unacknowledged, at most once per maxEvery ticks. Asking after
		// every burst made every receiver ACK every sender every step
		// of a lockstep federation.
		probe := st.hbEvery < int64(e.cfg.HeartbeatTicks)
		ask := unacked && !probe && (st.askedAt == 0 || e.now-st.askedAt >= maxEvery)
		e.heartbeat(st, ask)
		if ask {
			st.askedAt = e.now
		}
		st.lastSent = e.now
		if st.hbEvery < int64(e.cfg.HeartbeatTicks) {
			st.hbEvery = int64(e.cfg.HeartbeatTicks) // after the tail probe
		} else {
			st.hbEvery = min(2*st.hbEvery, limit)
		}
	}
	e.tickJoins()
	// Only the streams with a timer set: with a thousand senders, most
	// streams have nothing to do at a given tick.
	armed := e.armed
	e.armed = e.armedSpare[:0]
	for _, s := range armed {
		s.armed = false
		if e.streams[s.key] != s {
			continue // removed since
		}
		if s.nakAt != 0 && e.now >= s.nakAt {
			e.nak(s)
		}
		if (!s.started || !s.confirmed) && s.reqAt != 0 && e.now >= s.reqAt {
			e.requestSync(s)
		}
		e.arm(s)
	}
	clear(armed)
	e.armedSpare = armed[:0]
	e.tickAcks()
	e.tickStalls()
}

// heartbeat sends a heartbeat of st: its highest sequence and the oldest
// it holds. st has no open reliable frame. With ask set it asks the
// receivers for ACKs (they answer, batched at their next Tick); the
// caller sets it only while some receiver has not acknowledged
// everything, so a quiet group costs no ACKs.
func (e *Endpoint) heartbeat(st *sendState, ask bool) {
	f, body := e.newFrame(kindHeartbeat, st.group, st.hw, heartbeatBodyLen)
	binary.BigEndian.PutUint64(body, e.low(st))
	if ask {
		f[3] |= ackReqBit
	}
	e.emit(st.group, f)
	e.stats.Heartbeats++
}

// newFrame allocates a frame of kind k with a body of n bytes, fills in
// the header and returns the frame and its body.
func (e *Endpoint) newFrame(k kind, g dgram.Group, seq uint64, n int) (frame, body []byte) {
	f := make([]byte, HeaderLen+n+e.seal.trailerLen())
	putHeader(f, header{
		kind:   k,
		auth:   e.seal.keyed(),
		group:  g,
		fed:    e.fed,
		sender: e.cfg.Self,
		inc:    e.cfg.Incarnation,
		seq:    seq,
	})
	return f, f[HeaderLen : HeaderLen+n]
}

// to returns the group to send a frame of group g addressed to node id
// alone on: its inbox when Config.Inbox is set, else g.
func (e *Endpoint) to(id NodeID, g dgram.Group) dgram.Group {
	if e.cfg.Inbox != nil {
		return e.cfg.Inbox(id)
	}
	return g
}

// emit seals f (checksum, or encryption and tag when keyed) and queues it
// for sending.
func (e *Endpoint) emit(g dgram.Group, f []byte) {
	e.seal.seal(f)
	e.out = append(e.out, Outgoing{Group: g, Frame: f})
}

// Step processes a frame received on group g. It returns an error, and
// counts it, for a frame it drops: malformed, another federation's or
// group's, unauthenticated, replayed, its own, from a stale incarnation,
// or on a group not joined. Duplicates are not errors. Step keeps
// references to frame (delivered payloads alias it): the caller must not
// modify frame afterwards. Step never panics on any input.
func (e *Endpoint) Step(g dgram.Group, frame []byte) error {
	inboxed := false
	h, err := parseHeader(frame)
	if err != nil {
		if errors.Is(err, ErrVersion) {
			e.stats.BadVersion++
		} else {
			e.stats.Malformed++
		}
		return err
	}
	if h.fed != e.fed {
		e.stats.WrongFederation++
		return fmt.Errorf("%w: id %#x", ErrWrongFederation, h.fed)
	}
	if h.group != g {
		if !h.kind.inboxed() || e.cfg.Inbox == nil || g != e.cfg.Inbox(e.cfg.Self) {
			e.stats.WrongGroup++
			return fmt.Errorf("%w: frame says %d, received on %d", ErrWrongGroup, h.group, g)
		}
		g = h.group // through our inbox: it is of h.group
		inboxed = true
	}
	if h.sender == e.cfg.Self {
		e.stats.Own++
		return ErrOwnFrame
	}
	body, counter, err := e.open(h, frame)
	if err != nil {
		switch {
		case errors.Is(err, ErrChecksum):
			e.stats.BadChecksum++
		case errors.Is(err, ErrAuth):
			e.stats.AuthFailed++
		default:
			e.stats.Malformed++
		}
		return err
	}

	// The sender: incarnation, then replay window.
	if inc, ok := e.forgotten[h.sender]; ok && h.inc <= inc {
		e.stats.StaleIncarnation++
		return fmt.Errorf("%w: sender %d incarnation %d was forgotten", ErrStaleIncarnation, h.sender, h.inc)
	}
	p := e.peers[h.sender]
	switch {
	case p == nil:
		p = e.newPeer(h.sender, h.inc)
		e.peers[h.sender] = p
		delete(e.forgotten, h.sender)
	case h.inc < p.inc:
		e.stats.StaleIncarnation++
		return fmt.Errorf("%w: sender %d incarnation %d < %d", ErrStaleIncarnation, h.sender, h.inc, p.inc)
	case h.inc > p.inc:
		e.newIncarnation(p, h.inc)
	}
	if e.seal.keyed() && !p.window.accept(counter) {
		e.stats.Replayed++
		return fmt.Errorf("%w: sender %d counter %d", ErrReplay, h.sender, counter)
	}
	p.heard = e.now

	if to, ok := addressedTo(h.kind, body); ok && to != e.cfg.Self && (inboxed || h.kind == kindAimed) {
		// Another node's, through an inbox we share: not ours to act
		// on. (We may have joined its group after it was sent, so even
		// what it vouches for cannot be trusted.) An aimed message
		// sent on the group itself (no inboxes) is not ours either.
		e.stats.NotMine++
		return nil
	}
	switch h.kind {
	case kindNAK:
		return e.stepNAK(h, body)
	case kindAck:
		return e.stepAck(g, p, body)
	}
	gs := e.groups[g]
	if gs == nil {
		e.stats.NotJoined++
		return fmt.Errorf("%w: %v frame on group %d", ErrNotJoined, h.kind, g)
	}
	if err := checkBody(h, body); err != nil {
		e.stats.Malformed++
		return err
	}
	ents := e.ents[:0]
	if h.kind.bundled() {
		bb := body
		if h.kind == kindAimed {
			bb = body[aimedTargetLen:] // checkBody made sure it is there
		}
		ents, err = parseBundle(ents, bb, h.seq)
		e.ents = ents[:0]
		if err != nil {
			e.stats.Malformed++
			return err
		}
	}
	e.stats.Received++
	switch h.kind {
	case kindHello:
		e.onHello(gs, p, h.seq, body)
		return nil
	case kindSync:
		e.onSync(gs, p, h.seq, body)
		return nil
	case kindLeave:
		e.onLeave(gs, p, h.seq)
		return nil
	}
	s := e.streamOf(p, g)
	switch h.kind {
	case kindData:
		// A position is a message boundary: a frame that goes on with
		// a message begun in an earlier one vouches for nothing (a
		// stream started there would begin mid-message, and report the
		// message's tail as lost).
		if len(ents) > 0 && ents[0].flags&entryCont == 0 {
			s.vouch = min(s.vouch, h.seq-1)
			s.fresh = min(s.fresh, h.seq-1)
		}
		for i, en := range ents {
			e.onData(s, h.seq+uint64(i), en)
		}
		e.maybeAck(s, h.ackReq)
	case kindRetransmit:
		// Not a vouch: a repair asked for by others may be old.
		for i, en := range ents {
			e.onData(s, h.seq+uint64(i), en)
		}
		e.maybeAck(s, false)
	case kindBestEffort, kindAimed:
		for i, en := range ents {
			e.onBestEffort(s, h.seq+uint64(i), en)
		}
	case kindHeartbeat:
		s.vouch = min(s.vouch, h.seq)
		s.fresh = min(s.fresh, h.seq)
		e.onHeartbeat(s, h.seq, binary.BigEndian.Uint64(body))
		if h.ackReq && s.started && !s.ackDue {
			s.ackDue = true
			e.ackList = append(e.ackList, s)
		}
	case kindGone:
		e.onGone(s, h.seq)
	}
	return nil
}

// checkBody validates the sequence and body of a non-NAK frame.
func checkBody(h header, body []byte) error {
	if h.seq == 0 || h.seq > MaxSeq {
		return fmt.Errorf("%w: %v with sequence %d", ErrMalformed, h.kind, h.seq)
	}
	switch h.kind {
	case kindHello:
		if len(body) != helloBodyLen {
			return fmt.Errorf("%w: hello body of %d bytes", ErrMalformed, len(body))
		}
		if hw, echo := binary.BigEndian.Uint64(body), binary.BigEndian.Uint64(body[24:]); hw > MaxSeq || echo > MaxSeq {
			return fmt.Errorf("%w: hello with sequences %d, %d", ErrMalformed, hw, echo)
		}
	case kindSync:
		if len(body) != syncBodyLen {
			return fmt.Errorf("%w: sync body of %d bytes", ErrMalformed, len(body))
		}
		y := parseSync(body)
		if y.nonce == 0 || y.echo > MaxSeq || y.hw > MaxSeq || y.start > y.hw || y.low == 0 || y.low-1 > y.hw || y.cut > y.hw || y.join > y.hw {
			return fmt.Errorf("%w: sync nonce %d echo %d start %d low %d hw %d cut %d", ErrMalformed, y.nonce, y.echo, y.start, y.low, y.hw, y.cut)
		}
	case kindHeartbeat:
		if len(body) != heartbeatBodyLen {
			return fmt.Errorf("%w: heartbeat body of %d bytes", ErrMalformed, len(body))
		}
		if low := binary.BigEndian.Uint64(body); low == 0 || low-1 > h.seq {
			return fmt.Errorf("%w: heartbeat holds from %d past its highest %d", ErrMalformed, low, h.seq)
		}
	case kindGone:
		if len(body) != goneBodyLen {
			return fmt.Errorf("%w: gone body of %d bytes", ErrMalformed, len(body))
		}
	case kindLeave:
		if len(body) != 0 {
			return fmt.Errorf("%w: leave body of %d bytes", ErrMalformed, len(body))
		}
	case kindAimed:
		if len(body) < aimedTargetLen {
			return fmt.Errorf("%w: aimed body of %d bytes", ErrMalformed, len(body))
		}
	}
	return nil
}

// stepNAK handles a NAK: a repair request to us, or another receiver's
// request that suppresses ours.
func (e *Endpoint) stepNAK(h header, body []byte) error {
	if len(body) < nakFixedLen {
		e.stats.Malformed++
		return fmt.Errorf("%w: NAK body of %d bytes", ErrMalformed, len(body))
	}
	target := NodeID(binary.BigEndian.Uint64(body))
	tinc := binary.BigEndian.Uint64(body[8:])
	n := int(binary.BigEndian.Uint16(body[16:]))
	rs := body[nakFixedLen:]
	if n == 0 || len(rs) != n*nakRangeLen {
		e.stats.Malformed++
		return fmt.Errorf("%w: NAK with %d ranges in %d bytes", ErrMalformed, n, len(rs))
	}
	for i := range n {
		from, to := binary.BigEndian.Uint64(rs[i*16:]), binary.BigEndian.Uint64(rs[i*16+8:])
		if from == 0 || from > to || to > MaxSeq {
			e.stats.Malformed++
			return fmt.Errorf("%w: NAK range [%d, %d]", ErrMalformed, from, to)
		}
	}
	e.stats.Received++
	if target == e.cfg.Self {
		e.stats.NAKsReceived++
		if tinc == e.cfg.Incarnation {
			e.repair(h.group, h.sender, rs, n)
		}
		return nil
	}
	s := e.streams[streamKey{target, h.group}]
	if s == nil || !s.started || s.p.inc != tinc {
		return nil
	}
	e.stats.NAKsObserved++
	until := e.now + int64(e.cfg.NakRetryTicks)
	for i := range n {
		from, to := binary.BigEndian.Uint64(rs[i*16:]), binary.BigEndian.Uint64(rs[i*16+8:])
		if to < s.next {
			continue
		}
		e.suppress(s, seqRange{max(from, s.next), to}, until)
	}
	return nil
}

// newIncarnation flushes p's streams (deliver what is buffered, report the
// rest as gaps) and restarts them at sequence 1 of the new incarnation:
// this endpoint was joined all along, so it expects the whole new stream.
// A stream that had not started yet is dropped without a report (its
// start was never learned). p's old incarnation is forgotten as a
// receiver: its new one joins anew.
func (e *Endpoint) newIncarnation(p *peer, inc uint64) {
	for _, s := range e.stream {
		if s.p != p {
			continue
		}
		e.flush(s)
		*s = stream{key: s.key, p: p, idx: s.idx, vouch: noVouch, fresh: noVouch}
		e.start(s, inc, 1, 1)
	}
	p.inc = inc
	p.beLeft = nil
	p.window = replayWindow{}
	p.aeads = e.newPeer(p.id, inc).aeads
	e.forgetReceiver(p.id)
}

// streamOf returns the stream of (p, g), creating it.
func (e *Endpoint) streamOf(p *peer, g dgram.Group) *stream {
	k := streamKey{p.id, g}
	s := e.streams[k]
	if s == nil {
		s = &stream{key: k, p: p, idx: len(e.stream), vouch: noVouch, fresh: noVouch}
		if h, ok := p.beLeft[g]; ok {
			s.beHigh, s.beMask = h, ^uint64(0) // all up to h seen
		}
		e.streams[k] = s
		e.stream = append(e.stream, s)
	}
	return s
}

// arm puts s on the list Tick visits when one of its timers (nakAt,
// reqAt) is set, unless it is on it already.
func (e *Endpoint) arm(s *stream) {
	if !s.armed && (s.nakAt != 0 || s.reqAt != 0 && (!s.started || !s.confirmed)) {
		s.armed = true
		e.armed = append(e.armed, s)
	}
}

func (e *Endpoint) removeStream(s *stream) {
	last := len(e.stream) - 1
	e.stream[s.idx] = e.stream[last]
	e.stream[s.idx].idx = s.idx
	e.stream[last] = nil
	e.stream = e.stream[:last]
	delete(e.streams, s.key)
}
