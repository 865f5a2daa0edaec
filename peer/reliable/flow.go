package reliable

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/meshrti/meshrti/peer/dgram"
)

// Flow control.
//
// Receivers acknowledge what they have delivered: ACK frames on the group,
// each entry naming a sender (and its incarnation) and the sequence through
// which its stream was delivered or reported as gaps. A receiver sends one
// for a stream when Window/4 messages were delivered since its last, when
// a data frame asks for one (the sender marks a frame every Window/4 of
// its messages, so ACKs keep pace with its window whatever the
// receiver's), and, at its next Tick, one for all the streams whose
// senders' heartbeats asked: a sender that goes quiet with messages not
// yet acknowledged by all learns where its receivers are within a
// heartbeat, also when an ACK was lost, and a blocked sender sends a
// heartbeat at once (see Blocked). A heartbeat asks only while something
// is unacknowledged, so a quiet group costs no ACKs.
//
// A sender holds every reliable message until each receiver it knows of
// on the group (see Join) acknowledged it. Its backlog on a group is what
// the slowest receiver has not acknowledged; Blocked reports a backlog of
// Window messages or WindowBytes bytes, and the driver applies
// back-pressure to its application instead of sending more. A receiver
// that acknowledges nothing new for AckTimeoutTicks while it misses
// messages is stalled: it no longer holds the window (counted in
// ReceiversStalled); it may still catch up from what is held, and what was
// released before it asks is reported to it as a gap. A receiver that
// leaves a group says so with a LEAVE frame, and one that is lost is
// forgotten with ForgetSender, so neither holds the window for long.

const ackEntryLen = 24 // sender, incarnation, delivered-through seq

// stallChecks is how many times per AckTimeoutTicks tickStalls looks.
const stallChecks = 16

// ackEvery returns how many deliveries on a stream prompt an ACK.
func (e *Endpoint) ackEvery() uint64 { return uint64(max(1, e.cfg.Window/4)) }

// ackedBy returns the sequence through which every live receiver of st's
// group has acknowledged st's stream (its highest sealed sequence when
// there is none, or when the group is not flow controlled).
func (e *Endpoint) ackedBy(st *sendState) uint64 {
	acked := st.sealedHW()
	gs := e.groups[st.group]
	if gs == nil || st.noFlow {
		return acked
	}
	for _, r := range gs.rcvList {
		if !r.stalled && !r.left {
			acked = min(acked, max(r.acked, r.start))
		}
	}
	// What was released is no longer owed to anyone (a receiver that
	// still misses it gets a gap), so it is not backlog.
	return max(acked, st.heldFrom-1)
}

// sealedHW returns the highest sequence of st sealed into a frame.
func (st *sendState) sealedHW() uint64 {
	return st.heldFrom + uint64(len(st.held)-st.heldHead) - 1
}

// cumThrough returns the payload bytes of st's reliable messages through
// seq, which is at most the highest sealed sequence.
func (st *sendState) cumThrough(seq uint64) uint64 {
	switch {
	case seq == 0:
		return 0
	case seq < st.heldFrom:
		if st.heldHead == len(st.held) {
			return st.sentCum
		}
		first := st.held[st.heldHead]
		return first.cum - uint64(len(first.payload))
	default:
		return st.slotOf(seq).cum
	}
}

// Backlog returns the reliable messages, and their payload bytes, sent on
// g that some live receiver has not acknowledged yet. Messages still in an
// open bundle count.
func (e *Endpoint) Backlog(g dgram.Group) (msgs, bytes uint64) {
	st := e.sends[g]
	if st == nil {
		return 0, 0
	}
	acked := e.ackedBy(st)
	return st.hw - acked, st.sentCum - st.cumThrough(acked) + st.rel.bytes
}

// WithoutFlowControl exempts our stream on g from flow control: it asks
// its receivers for no ACKs, keeps only the history (RetransmitBuffer,
// RetransmitBytes) for repairs, and is never Blocked. For low-rate
// streams that every member receives, such as the federation's control
// traffic, where ACKs from every member would cost more than they save.
//
// It also takes the other members' streams on g to be exempt the same
// way (every member of the group is expected to call it): they are
// acknowledged only when their sender asks (a data frame or heartbeat
// with the ACK request), not every ackEvery messages unasked. A sender
// that does flow-control its stream on g asks, and is answered.
func (e *Endpoint) WithoutFlowControl(g dgram.Group) {
	e.sendStateOf(g).noFlow = true
	if e.askedOnly == nil {
		e.askedOnly = make(map[dgram.Group]bool)
	}
	e.askedOnly[g] = true
}

// AimedAcks makes this endpoint send its ACKs for streams on g to each
// sender's inbox (Config.Inbox), however many senders there are, instead
// of one frame multicast on g: for groups whose senders send without
// receiving on them (they join the group in the endpoint only, and hear
// nothing multicast on it), such as the cell groups of region-based
// routing. Without inboxes it changes nothing.
func (e *Endpoint) AimedAcks(g dgram.Group) {
	if e.aimedAcks == nil {
		e.aimedAcks = make(map[dgram.Group]bool)
	}
	e.aimedAcks[g] = true
}

// Receivers returns the nodes this endpoint knows as receivers of its
// stream on g that hold its window (not stalled, not left), in no order.
func (e *Endpoint) Receivers(g dgram.Group) []NodeID {
	gs := e.groups[g]
	if gs == nil {
		return nil
	}
	var ids []NodeID
	for _, r := range gs.rcvList {
		if !r.stalled && !r.left {
			ids = append(ids, r.id)
		}
	}
	return ids
}

// Blocked reports whether the backlog on g has reached Config.Window
// messages or Config.WindowBytes bytes: the driver should hold further
// messages of its application until it shrinks (it does as ACKs arrive,
// or as receivers leave, are forgotten or stall).
//
// When blocked, it also asks the receivers where they are: it sends a
// heartbeat on g, at most one per NakDelayTicks, which every receiver
// answers with an ACK.
func (e *Endpoint) Blocked(g dgram.Group) bool {
	st := e.sends[g]
	if st == nil {
		return false
	}
	// The backlog is part of what is held plus the open bundle: when
	// that is under the window, so is the backlog, without walking the
	// receivers (Blocked runs on every update).
	held := st.hw - st.heldFrom + 1
	heldBytes := st.sentCum - st.cumThrough(st.heldFrom-1) + uint64(st.rel.size())
	if held < uint64(e.cfg.Window) && heldBytes < uint64(e.cfg.WindowBytes) {
		return false
	}
	msgs, bytes := e.Backlog(g)
	if msgs < uint64(e.cfg.Window) && bytes < uint64(e.cfg.WindowBytes) {
		return false
	}
	if st = e.sealGroup(g); !st.probed || e.now-st.probeAt >= int64(e.cfg.NakDelayTicks) {
		st.probeAt, st.probed = e.now, true
		e.heartbeat(st, !st.noFlow && e.ackedBy(st) < st.sealedHW())
	}
	return true
}

// stepAck handles an ACK frame from p on g.
func (e *Endpoint) stepAck(g dgram.Group, p *peer, body []byte) error {
	if len(body) < 2 {
		e.stats.Malformed++
		return fmt.Errorf("%w: ACK body of %d bytes", ErrMalformed, len(body))
	}
	n := int(binary.BigEndian.Uint16(body))
	es := body[2:]
	if n == 0 || len(es) != n*ackEntryLen {
		e.stats.Malformed++
		return fmt.Errorf("%w: ACK with %d entries in %d bytes", ErrMalformed, n, len(es))
	}
	for i := range n {
		if seq := binary.BigEndian.Uint64(es[i*ackEntryLen+16:]); seq > MaxSeq {
			e.stats.Malformed++
			return fmt.Errorf("%w: ACK of sequence %d", ErrMalformed, seq)
		}
	}
	e.stats.Received++
	e.stats.AcksReceived++
	gs, st := e.groups[g], e.sends[g]
	if gs == nil || st == nil {
		return nil
	}
	r := gs.rcv[p.id]
	for i := range n {
		x := es[i*ackEntryLen:]
		if NodeID(binary.BigEndian.Uint64(x)) != e.cfg.Self || binary.BigEndian.Uint64(x[8:]) != e.cfg.Incarnation {
			continue
		}
		seq := min(binary.BigEndian.Uint64(x[16:]), st.sealedHW())
		if r == nil || r.inc != p.inc {
			// A receiver we have not learned of through the join
			// handshake (its HELLO or SYNC was lost): its ACK shows it
			// follows our stream, so it is owed what follows.
			r = e.learnFromAck(gs, p, seq)
		}
		if seq > r.acked {
			r.acked, r.ackAt = seq, e.now
			if r.stalled {
				r.stalled = false
				e.stats.ReceiversResumed++
			}
		}
	}
	e.sealBundle(st, &st.rel)
	e.release(st)
	return nil
}

// learnFromAck records p as a receiver of our stream on gs's group owed
// everything after acked, with no join nonce: the join handshake, when it
// gets through, replaces the record without owing less.
func (e *Endpoint) learnFromAck(gs *groupState, p *peer, acked uint64) *receiver {
	if len(gs.rcv) >= maxReceivers {
		e.evictReceiver(gs)
	}
	r := &receiver{id: p.id, inc: p.inc, start: acked, learned: e.now, acked: acked, ackAt: e.now}
	gs.dropReceiver(p.id) // an earlier incarnation
	gs.addReceiver(r)
	e.stats.ReceiversFromAcks++
	return r
}

// onLeave handles p's LEAVE of its join nonce on gs's group: p is no
// longer a receiver there.
func (e *Endpoint) onLeave(gs *groupState, p *peer, nonce uint64) {
	// The record stays, marked, so that a late frame of the join left
	// does not record it again.
	if r := gs.rcv[p.id]; r != nil && r.inc == p.inc && (r.nonce == nonce || r.nonce == 0) && !r.left {
		r.left = true
		if st := e.sends[gs.g]; st != nil {
			e.release(st)
		}
	}
}

// maybeAck acknowledges s at once when ackEvery messages were delivered
// since its last ACK (unless its group is acknowledged only when asked,
// see WithoutFlowControl), or when force is set and anything was.
func (e *Endpoint) maybeAck(s *stream, force bool) {
	if !s.started || s.next == 0 || !force && e.askedOnly[s.key.group] {
		return
	}
	through := s.next - 1
	if through > s.acked && (force || through-s.acked >= e.ackEvery()) || force && e.ackRepeat(s) {
		e.sendAcks(s.key.group, []*stream{s})
	}
}

// ackRepeat reports whether s, acknowledged through its last delivery,
// should say so again when asked: when its last ACK is old enough to have
// been lost. A receiver that made no progress does not answer every ask,
// since a heartbeat asks on behalf of any receiver behind.
func (e *Endpoint) ackRepeat(s *stream) bool {
	return s.next > 1 && e.now-s.ackedAt >= int64(4*e.cfg.NakRetryTicks)
}

// tickAcks answers the heartbeats that asked for ACKs: one ACK frame per
// group (or as few as fit) for every stream whose sender asked.
func (e *Endpoint) tickAcks() {
	if len(e.ackList) == 0 {
		return
	}
	asked := e.ackList
	e.ackList = nil
	for _, gs := range e.groupList { // deterministic order
		var due []*stream
		for _, s := range asked {
			if s.ackDue && s.key.group == gs.g {
				s.ackDue = false
				if e.streams[s.key] == s && s.started && s.next > 0 && (s.next-1 > s.acked || e.ackRepeat(s)) {
					due = append(due, s)
				}
			}
		}
		if len(due) > 0 {
			slices.SortFunc(due, func(a, b *stream) int { return cmp.Compare(a.key.from, b.key.from) })
			e.sendAcks(gs.g, due)
		}
	}
	for _, s := range asked {
		s.ackDue = false // of a group left since
	}
}

// maxAimedAcks is how many streams' ACKs go each to its sender's inbox
// (Config.Inbox) rather than in one frame to the group: an ACK only its
// sender reads costs one delivery there, against one per member.
const maxAimedAcks = 4

// sendAcks sends ACK frames on g for the streams ss: one per sender to
// its inbox when they are few and inboxes are set, else frames of as many
// entries as fit, multicast on g (every sender reads its own entries).
func (e *Endpoint) sendAcks(g dgram.Group, ss []*stream) {
	if e.cfg.Inbox != nil && (len(ss) <= maxAimedAcks || e.aimedAcks[g]) {
		for i, s := range ss {
			e.sendAcksTo(g, e.to(s.key.from, g), ss[i:i+1])
		}
		return
	}
	e.sendAcksTo(g, g, ss)
}

// sendAcksTo sends ACK frames of group g for the streams ss on to.
func (e *Endpoint) sendAcksTo(g, to dgram.Group, ss []*stream) {
	per := max(1, min((e.bodyMax-2)/ackEntryLen, 0xffff))
	for len(ss) > 0 {
		k := min(len(ss), per)
		f, body := e.newFrame(kindAck, g, 0, 2+k*ackEntryLen)
		binary.BigEndian.PutUint16(body, uint16(k))
		for i, s := range ss[:k] {
			x := body[2+i*ackEntryLen:]
			binary.BigEndian.PutUint64(x, uint64(s.key.from))
			binary.BigEndian.PutUint64(x[8:], s.p.inc)
			binary.BigEndian.PutUint64(x[16:], s.next-1)
			s.acked, s.ackedAt = s.next-1, e.now
		}
		e.emit(to, f)
		e.stats.Acks++
		ss = ss[k:]
	}
}

// tickStalls marks receivers stalled that acknowledged nothing for
// AckTimeoutTicks since the oldest message they miss was sent, and
// releases what the others acknowledged.
//
// It looks stallChecks times per AckTimeoutTicks only: a stall is a
// matter of hundreds of ticks, and the loop visits every receiver of
// every stream.
func (e *Endpoint) tickStalls() {
	timeout := int64(e.cfg.AckTimeoutTicks)
	if e.now%max(1, timeout/stallChecks) != 0 {
		return
	}
	for _, st := range e.sendList {
		gs := e.groups[st.group]
		if gs == nil || st.hw == 0 || st.noFlow {
			continue // nothing is held for the receivers of a stream without flow control
		}
		changed := false
		for _, r := range gs.rcvList {
			acked := max(r.acked, r.start)
			if r.stalled || r.left || acked >= st.sealedHW() {
				continue
			}
			since := r.ackAt
			if acked+1 >= st.heldFrom {
				since = max(since, st.slotOf(acked+1).sentAt)
			}
			if e.now-since > timeout {
				r.stalled = true
				e.stats.ReceiversStalled++
				changed = true
			}
		}
		if changed {
			e.release(st)
		}
	}
}

// Sent calls fn for every group this endpoint has sent reliable messages
// on, with the sequence number of the last (a federation save waits until
// every receiver has what was sent before it).
func (e *Endpoint) Sent(fn func(g dgram.Group, hw uint64)) {
	for g, st := range e.sends {
		if st.hw > 0 {
			fn(g, st.hw)
		}
	}
}
