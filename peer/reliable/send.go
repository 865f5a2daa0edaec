package reliable

import (
	"encoding/binary"
	"fmt"

	"github.com/meshrti/meshrti/peer/dgram"
)

// sendState is the outgoing stream of one group.
type sendState struct {
	group dgram.Group
	hw    uint64 // highest reliable seq assigned (sent, or in rel)
	be    uint64 // highest best-effort seq assigned

	// held are the reliable messages kept for repair, of sequences
	// heldFrom, heldFrom+1, ..., hw: every sealed message a receiver may
	// still miss, and up to RetransmitBuffer more as history.
	held     []slot
	heldHead int // held[heldHead:] are live
	heldFrom uint64
	sentCum  uint64 // payload bytes of reliable messages so far

	rel, bef bundle // open bundles

	lastSent int64  // tick of the last reliable message or heartbeat
	hbEvery  int64  // current heartbeat interval
	probeAt  int64  // tick of the last heartbeat sent because blocked
	probed   bool   // probeAt is set
	ackReqHW uint64 // hw when a frame last asked for ACKs
	askedAt  int64  // tick of the last heartbeat that asked for ACKs
	noFlow   bool   // not flow controlled (see WithoutFlowControl)
}

type slot struct {
	payload []byte
	cum     uint64 // sentCum through this message
	sentAt  int64  // tick it was sealed
	retxAt  int64  // tick of the last retransmission
	flags   byte   // entry flags
	retx    bool   // retransmitted at least once
	// Targeted repairs (Config.Inbox): in the holdoff after retxAt, how
	// many NAKers got it to their inbox, and whether it was multicast.
	aimed     uint8
	multicast bool
}

// maxAimed is how many receivers get a repair to their inbox within one
// holdoff before the next one is multicast to the group instead: a loss
// few receivers saw is repaired to them alone, one many saw once for all.
const maxAimed = 2

// bundle is an open frame being filled with entries.
type bundle struct {
	kind  kind
	buf   []byte // header room, then the entries
	first uint64 // sequence of the first entry
	pos   []entPos
	bytes uint64 // the entries' payload bytes
}

// entPos locates an entry's payload in bundle.buf.
type entPos struct {
	off, n int
	flags  byte
}

func (b *bundle) size() int {
	if len(b.pos) == 0 {
		return 0
	}
	return len(b.buf) - HeaderLen
}

func (b *bundle) add(seq uint64, flags byte, payload []byte) {
	if len(b.pos) == 0 {
		b.first = seq
		if cap(b.buf) < HeaderLen {
			b.buf = make([]byte, HeaderLen, 2*HeaderLen)
		}
		b.buf = b.buf[:HeaderLen]
	}
	off := len(b.buf) + entryOverhead(len(payload))
	b.buf = appendEntry(b.buf, flags, payload)
	b.pos = append(b.pos, entPos{off, len(payload), flags})
	b.bytes += uint64(len(payload))
}

func (e *Endpoint) sendStateOf(g dgram.Group) *sendState {
	st := e.sends[g]
	if st == nil {
		st = &sendState{
			group:    g,
			hbEvery:  int64(e.cfg.HeartbeatTicks),
			heldFrom: 1,
			rel:      bundle{kind: kindData},
			bef:      bundle{kind: kindBestEffort},
		}
		e.sends[g] = st
		e.sendList = append(e.sendList, st)
	}
	return st
}

// Send queues payload as the next message on g. A reliable message is
// kept for repair and delivered exactly once, in order, to every receiver
// it is owed to, or reported to it as a gap: every member of g this
// endpoint has learned of (see Join). A best-effort one is sent once, to
// whoever listens. A message larger than a frame is sent as fragments,
// each with a sequence number of its own, and reassembled by receivers;
// Send returns the sequence number of its last fragment (reliable and
// best-effort messages have separate sequences). Send does not keep
// payload.
//
// With Config.Bundle the message waits in the group's open frame until
// Flush, Tick, or the frame fills up; without, its frame is in the next
// Ready. Send never refuses a message because receivers lag behind: the
// driver asks Blocked first when it wants back-pressure.
func (e *Endpoint) Send(g dgram.Group, payload []byte, reliable bool) (uint64, error) {
	if len(payload) > e.cfg.MaxMessage {
		return 0, fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, len(payload), e.cfg.MaxMessage)
	}
	st := e.sendStateOf(g)
	b, next := &st.bef, &st.be
	if reliable {
		b, next = &st.rel, &st.hw
	}
	if need := uint64(len(payload)/(e.bodyMax/2) + 2); MaxSeq-*next < need {
		return 0, fmt.Errorf("reliable: sequence space of group %d exhausted", g)
	}
	var flags byte
	rest := payload
	for {
		room := e.bodyMax - b.size()
		whole := entryOverhead(len(rest)) + len(rest)
		full := len(b.pos) >= e.maxEntries
		if whole <= room && !full {
			*next++
			b.add(*next, flags, rest)
			if flags != 0 {
				e.stats.Fragments++
			}
			break
		}
		if len(b.pos) > 0 && (whole <= e.bodyMax || room < e.bodyMax/8 || full) {
			e.sealBundle(st, b)
			continue
		}
		// A fragment: as much of rest as the room leaves.
		n := room - entryOverhead(room)
		*next++
		b.add(*next, flags|entryMore, rest[:n])
		e.stats.Fragments++
		flags = entryCont
		rest = rest[n:]
		e.sealBundle(st, b)
	}
	if reliable {
		st.lastSent = e.now
		st.hbEvery = int64(e.cfg.ProbeTicks)
		e.stats.Sent++
	} else {
		e.stats.SentBestEffort++
	}
	if !e.cfg.Bundle {
		e.sealBundle(st, b)
	}
	return *next, nil
}

// Flush seals every open frame, so that the messages sent so far are in
// the next Ready. With Config.Bundle, the driver calls it when it has
// nothing more to send at once (and before waiting for a time grant).
func (e *Endpoint) Flush() {
	for _, st := range e.sendList {
		e.sealBundle(st, &st.rel)
		e.sealBundle(st, &st.bef)
	}
}

// sealGroup seals the open reliable frame of g, so that st.hw counts
// only messages sent: every frame that tells a position calls it first.
func (e *Endpoint) sealGroup(g dgram.Group) *sendState {
	st := e.sends[g]
	if st != nil {
		e.sealBundle(st, &st.rel)
	}
	return st
}

// sealBundle turns the open bundle b of st into a frame and queues it;
// the reliable messages in it are held for repair.
func (e *Endpoint) sealBundle(st *sendState, b *bundle) {
	if len(b.pos) == 0 {
		return
	}
	// Every Window/4 messages a frame asks the receivers for an ACK, so
	// that ACKs keep pace with this sender's window, whatever theirs.
	last := b.first + uint64(len(b.pos)) - 1
	ackReq := b.kind == kindData && !st.noFlow && last-st.ackReqHW >= e.ackEvery()
	if ackReq {
		st.ackReqHW = last
	}
	f := e.bundleFrame(st.group, b, ackReq)
	if b.kind == kindData {
		plain := f[:len(b.buf)]
		if e.seal.keyed() {
			// Sealing encrypts f in place: keep the plaintext for repairs.
			plain = append([]byte(nil), plain...)
		}
		for _, p := range b.pos {
			st.sentCum += uint64(p.n)
			st.held = append(st.held, slot{payload: plain[p.off : p.off+p.n : p.off+p.n], cum: st.sentCum, sentAt: e.now, flags: p.flags})
		}
		e.release(st)
	}
	e.stats.DataFrames++
	e.emitBundle(st.group, b, f)
}

// bundleFrame copies the open bundle b into a frame of its own, with the
// header filled in and room for the trailer.
func (e *Endpoint) bundleFrame(g dgram.Group, b *bundle, ackReq bool) []byte {
	f := make([]byte, len(b.buf)+e.seal.trailerLen())
	copy(f, b.buf)
	putHeader(f, header{
		kind: b.kind, auth: e.seal.keyed(), ackReq: ackReq, group: g,
		fed: e.fed, sender: e.cfg.Self, inc: e.cfg.Incarnation, seq: b.first,
	})
	return f
}

// emitBundle empties b, whose frame f is ready, and queues f.
func (e *Endpoint) emitBundle(g dgram.Group, b *bundle, f []byte) {
	b.pos = b.pos[:0]
	b.bytes = 0
	b.buf = b.buf[:HeaderLen]
	e.emit(g, f)
}

// slotOf returns the held slot of seq, which must be in [low, hw].
func (st *sendState) slotOf(seq uint64) *slot {
	return &st.held[st.heldHead+int(seq-st.heldFrom)]
}

// aimedTargetLen is the target's ID at the start of an aimed frame's body.
const aimedTargetLen = 8

// SendAimed sends payload best effort to node to alone, as a message of
// group g: on to's inbox when Config.Inbox is set, else on g, where the
// other members drop it (NotMine). It takes a sequence number of g's
// best-effort space, is never repaired, and must fit one frame
// (ErrTooLarge otherwise).
func (e *Endpoint) SendAimed(g dgram.Group, to NodeID, payload []byte) error {
	n := aimedTargetLen + entryOverhead(len(payload)) + len(payload)
	if n > e.bodyMax {
		return fmt.Errorf("%w: aimed message of %d bytes, at most %d", ErrTooLarge, len(payload), e.bodyMax-aimedTargetLen-entryOverhead(e.bodyMax))
	}
	st := e.sendStateOf(g)
	if st.be >= MaxSeq {
		return fmt.Errorf("reliable: sequence space of group %d exhausted", g)
	}
	st.be++
	f, body := e.newFrame(kindAimed, g, st.be, n)
	binary.BigEndian.PutUint64(body, uint64(to))
	appendEntry(body[aimedTargetLen:aimedTargetLen], 0, payload)
	e.emit(e.to(to, g), f)
	e.stats.SentAimed++
	return nil
}

// heldBytes returns the payload bytes of the messages st holds.
func (e *Endpoint) heldBytes(st *sendState) uint64 {
	if st.heldHead == len(st.held) {
		return 0
	}
	oldest, newest := &st.held[st.heldHead], &st.held[len(st.held)-1]
	return newest.cum - (oldest.cum - uint64(len(oldest.payload)))
}

// low returns the oldest reliable seq st holds (hw+1 when none).
func (e *Endpoint) low(st *sendState) uint64 { return st.heldFrom }

// release drops held messages that every receiver of st's group has
// acknowledged, beyond the RetransmitBuffer and RetransmitBytes of
// history.
func (e *Endpoint) release(st *sendState) {
	if gs := e.groups[st.group]; gs != nil && e.now < gs.announced {
		// Our join is being announced: members may not have answered
		// yet, and they are owed everything after our join position.
		return
	}
	n := len(st.held) - st.heldHead
	if n == 0 || n <= e.cfg.RetransmitBuffer && e.heldBytes(st) <= uint64(e.cfg.RetransmitBytes) {
		// Everything held fits the history kept anyway: nothing to
		// release whatever the receivers acknowledged (and no loop over
		// them for every ACK).
		return
	}
	acked := e.ackedBy(st)
	for n > 0 && st.heldFrom <= acked {
		oldest := st.held[st.heldHead]
		histMsgs := acked - st.heldFrom + 1
		histBytes := st.cumThrough(acked) - (oldest.cum - uint64(len(oldest.payload)))
		if histMsgs <= uint64(e.cfg.RetransmitBuffer) && histBytes <= uint64(e.cfg.RetransmitBytes) {
			break
		}
		st.held[st.heldHead] = slot{}
		st.heldHead++
		st.heldFrom++
		n--
	}
	if st.heldHead > 64 && st.heldHead > n {
		k := copy(st.held, st.held[st.heldHead:])
		clear(st.held[k:])
		st.held = st.held[:k]
		st.heldHead = 0
	}
}

// repair answers a NAK for our stream on g: retransmits what we hold, in
// bundles of consecutive messages, and sends one gone frame for what we no
// longer hold.
//
// With Config.Inbox, a repair asked for by from goes to from's inbox,
// unless maxAimed receivers got it there in this holdoff already: then it
// is multicast once on g, and further asks in the holdoff get nothing (the
// multicast serves them).
func (e *Endpoint) repair(g dgram.Group, from NodeID, rs []byte, n int) {
	st := e.sealGroup(g)
	if st == nil || st.hw == 0 {
		return
	}
	low := e.low(st)
	holdoff := int64(e.cfg.NakDelayTicks)
	budget := max(e.cfg.RetransmitBuffer, e.cfg.Window) // bounds the work of one NAK
	var gone seqRange
	rb, ab := &e.rtx, &e.aimed
	inbox := g
	if e.cfg.Inbox != nil {
		inbox = e.cfg.Inbox(from)
	}
	for i := range n {
		lo, to := binary.BigEndian.Uint64(rs[i*16:]), binary.BigEndian.Uint64(rs[i*16+8:])
		to = min(to, st.hw)
		if lo > to {
			continue
		}
		if lo < low {
			if gone.from == 0 || lo < gone.from {
				gone.from = lo
			}
			gone.to = max(gone.to, min(to, low-1))
			lo = low
		}
		for seq := lo; seq <= to && budget > 0; seq++ {
			budget--
			sl := st.slotOf(seq)
			recent := sl.retx && e.now-sl.retxAt < holdoff
			if !recent {
				sl.aimed, sl.multicast = 0, false
			}
			b, dst := rb, g
			switch {
			case recent && (sl.multicast || inbox == g):
				e.sealRetransmit(g, g, rb)
				e.sealRetransmit(g, inbox, ab)
				continue
			case inbox != g && sl.aimed < maxAimed:
				b, dst = ab, inbox
				sl.aimed++
			default:
				sl.multicast = true
			}
			if len(b.pos) > 0 && (b.first+uint64(len(b.pos)) != seq ||
				b.size()+entryOverhead(len(sl.payload))+len(sl.payload) > e.bodyMax) {
				e.sealRetransmit(g, dst, b)
			}
			if !recent {
				sl.retx, sl.retxAt = true, e.now
			}
			b.add(seq, sl.flags, sl.payload)
			e.stats.Retransmits++
		}
		e.sealRetransmit(g, g, rb)
		e.sealRetransmit(g, inbox, ab)
	}
	if gone.from != 0 && gone.from <= gone.to {
		f, body := e.newFrame(kindGone, g, low, goneBodyLen)
		binary.BigEndian.PutUint64(body, gone.from)
		binary.BigEndian.PutUint64(body[8:], gone.to)
		e.emit(g, f)
		e.stats.Gones++
	}
}

// sealRetransmit queues the retransmission bundle rb as a frame of group
// g sent on to: g, or a receiver's inbox.
func (e *Endpoint) sealRetransmit(g, to dgram.Group, rb *bundle) {
	if len(rb.pos) == 0 {
		return
	}
	e.stats.RetransmitFrames++
	if to != g {
		e.stats.AimedRepairs++
	}
	e.emitBundle(to, rb, e.bundleFrame(g, rb, false))
}
