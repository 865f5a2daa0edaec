package peer

import (
	"github.com/meshrti/meshrti/lbts"
)

// sentTSO is a time-stamp-order message this federate sent, as Retract
// needs it: where it went and its time stamp.
type sentTSO struct {
	group     uint32
	seq       uint64
	ts        float64
	retracted bool
}

// maxSentTSO is how many sent records the federate keeps before it drops
// those that can no longer be retracted.
const maxSentTSO = 1024

// recentCap bounds recentSet.
const recentCap = 4096

// msgKey names a message: its sender and the sender's message ID.
type msgKey struct {
	from FederateHandle
	id   uint64
}

// recentSet remembers the last recentCap keys added.
type recentSet struct {
	set  map[msgKey]struct{}
	ring []msgKey
	next int
}

func (r *recentSet) add(k msgKey) {
	if r.set == nil {
		r.set = make(map[msgKey]struct{})
	}
	if _, ok := r.set[k]; ok {
		return
	}
	if len(r.ring) < recentCap {
		r.ring = append(r.ring, k)
	} else {
		delete(r.set, r.ring[r.next])
		r.ring[r.next] = k
		r.next = (r.next + 1) % recentCap
	}
	r.set[k] = struct{}{}
}

func (r *recentSet) has(k msgKey) bool {
	_, ok := r.set[k]
	return ok
}

// heldMsg is a receive-order message waiting for the federate's next
// time advance (asynchronous delivery off).
type heldMsg struct {
	msg *wireMsg
	d   delivery
}

// ---- Receiving side, called from the loop under mu ----

// deliverRO delivers a receive-order message, or holds it while the
// federate is time-constrained, not advancing, and asynchronous delivery
// is off (1516.1 8.14: such a federate gets receive-order messages only
// in the time advancing state). Registrations (discoveries) are not
// held: they are not receive-order messages of the standard.
func (f *Federate) deliverRO(m *wireMsg, d delivery) {
	if m.Kind != kindRegister && f.holdsRO() {
		f.st.held = append(f.st.held, heldMsg{keep(m), d})
		return
	}
	f.applyDelivered(m, d)
}

// holdsRO reports whether receive-order messages wait now.
func (f *Federate) holdsRO() bool {
	return !f.st.async && f.tm.Constrained() && !f.tm.Advancing()
}

// releaseHeld delivers the held receive-order messages, in the order they
// came, once they need not wait any more.
func (f *Federate) releaseHeld() {
	if len(f.st.held) == 0 || f.holdsRO() {
		return
	}
	held := f.st.held
	f.st.held = nil
	for _, h := range held {
		f.applyDelivered(h.msg, h.d)
	}
}

// applyDelivered turns a delivered message into events, traces and
// remembers it, and queues the events.
func (f *Federate) applyDelivered(m *wireMsg, d delivery) {
	evs := f.st.apply(f.evBuf[:0], m, d, f.tk)
	if f.trace != nil {
		f.traceDeliver(m, d.from, d.received, evs)
	}
	f.noteDelivered(m, d.from, evs)
	f.events.push(evs...)
	clear(evs) // drop the references; keep the room
	f.evBuf = evs[:0]
}

// noteDelivered remembers a time-stamped message that produced a
// callback, so that its retraction becomes a RequestRetraction.
func (f *Federate) noteDelivered(m *wireMsg, from FederateHandle, evs []Event) {
	if !m.TSO || len(evs) == 0 {
		return
	}
	f.st.delivered.add(msgKey{from, m.ID})
}

// onRetract handles a retraction from another federate: the message is
// dropped from the time-stamp-order queue if it is still there, or the
// federate is asked to retract it (RequestRetraction) if it was already
// delivered here.
func (f *Federate) onRetract(m *wireMsg, from FederateHandle, group uint32) {
	if f.tm.Retract(lbts.FederateID(from), group, m.RefSeq) {
		if f.trace != nil {
			f.traceRetracted(from, m.Ref, true)
		}
		return
	}
	if !f.st.delivered.has(msgKey{from, m.Ref}) {
		return // never received here (not subscribed, or dropped)
	}
	if f.trace != nil {
		f.traceRetracted(from, m.Ref, false)
	}
	f.events.push(RequestRetraction{Handle: MessageRetractionHandle{Federate: from, Serial: m.Ref}})
}

// ---- Sending side ----

// recordSent remembers a time-stamp-order message for Retract and returns
// its handle. Under mu.
func (f *Federate) recordSent(o outMsg, seq uint64, ts float64) MessageRetractionHandle {
	if len(f.st.sentTSO) >= max(maxSentTSO, f.st.sweepAt) {
		for id, s := range f.st.sentTSO {
			if f.tm.CheckRetract(s.ts) != nil {
				delete(f.st.sentTSO, id)
			}
		}
		f.st.sweepAt = 2 * len(f.st.sentTSO) // amortized: sweep again only after as many more
	}
	f.st.sentTSO[o.msg.ID] = &sentTSO{group: uint32(o.group), seq: seq, ts: ts}
	return MessageRetractionHandle{Federate: f.handle, Serial: o.msg.ID}
}
