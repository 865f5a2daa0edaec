package peer

import (
	"fmt"
	"math"
	"strconv"

	"github.com/meshrti/meshrti/lbts"
)

// LogicalTime is a point on the federation's logical time axis. The two
// standard representations implement it: Float64Time (HLAfloat64Time, the
// default) and Integer64Time (HLAinteger64Time). A federation uses one of
// them, chosen by Config.TimeRepresentation; passing the other kind to a
// service is an ErrInvalidLogicalTime.
type LogicalTime interface {
	// Float returns the time as a float64, the form the time-management
	// core computes with.
	Float() float64
	// Representation is "HLAfloat64Time" or "HLAinteger64Time".
	Representation() string
	String() string
	isLogicalTime()
}

// Float64Time is HLAfloat64Time.
type Float64Time float64

// Integer64Time is HLAinteger64Time. Values are limited to ±2^53 so that
// they convert to float64 exactly; larger ones are an ErrInvalidLogicalTime.
type Integer64Time int64

// Names of the two standard time representations.
const (
	HLAfloat64Time   = "HLAfloat64Time"
	HLAinteger64Time = "HLAinteger64Time"
)

// maxExactInt is the largest integer a float64 holds exactly.
const maxExactInt = 1 << 53

func (t Float64Time) Float() float64         { return float64(t) }
func (Float64Time) Representation() string   { return HLAfloat64Time }
func (t Float64Time) String() string         { return strconv.FormatFloat(float64(t), 'g', -1, 64) }
func (Float64Time) isLogicalTime()           {}
func (t Integer64Time) Float() float64       { return float64(t) }
func (Integer64Time) Representation() string { return HLAinteger64Time }
func (t Integer64Time) String() string       { return strconv.FormatInt(int64(t), 10) }
func (Integer64Time) isLogicalTime()         {}

// timeKind converts between LogicalTime values and the float64 the core
// uses, for one federation's representation.
type timeKind string

func (k timeKind) make(f float64) LogicalTime {
	if k == HLAinteger64Time {
		return Integer64Time(int64(f))
	}
	return Float64Time(f)
}

// value checks t against the federation's representation and returns it
// as a float64.
func (k timeKind) value(t LogicalTime) (float64, error) {
	if t == nil {
		return 0, fmt.Errorf("%w: nil time", ErrInvalidLogicalTime)
	}
	if t.Representation() != string(k) {
		return 0, fmt.Errorf("%w: %s given, federation uses %s", ErrInvalidLogicalTime, t.Representation(), k)
	}
	f := t.Float()
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return 0, fmt.Errorf("%w: %v", ErrInvalidLogicalTime, f)
	case k == HLAinteger64Time && (int64(t.(Integer64Time)) > maxExactInt || int64(t.(Integer64Time)) < -maxExactInt):
		return 0, fmt.Errorf("%w: %d is beyond ±2^53", ErrInvalidLogicalTime, int64(t.(Integer64Time)))
	}
	return f, nil
}

// interval checks a lookahead (a time interval of the same
// representation): it must be a finite number >= 0.
func (k timeKind) interval(l LogicalTime) (float64, error) {
	f, err := k.value(l)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrInvalidLookahead, err)
	}
	if f < 0 {
		return 0, fmt.Errorf("%w: %v is negative", ErrInvalidLookahead, l)
	}
	return f, nil
}

// InvalidLogicalTimeError says a time was refused, and why: it is before
// the earliest time the federate may use.
type InvalidLogicalTimeError struct {
	Given    LogicalTime
	Earliest LogicalTime
	// After says Earliest itself is refused too: times must be above it
	// (at zero lookahead after a grant to Earliest).
	After bool
}

func (e *InvalidLogicalTimeError) Error() string {
	if e.After {
		return fmt.Sprintf("hla: invalid logical time %v: must be after %v", e.Given, e.Earliest)
	}
	return fmt.Sprintf("hla: invalid logical time %v: earliest allowed is %v", e.Given, e.Earliest)
}

// Is makes errors.Is(err, ErrInvalidLogicalTime) true.
func (e *InvalidLogicalTimeError) Is(target error) bool { return target == ErrInvalidLogicalTime }

// MessageRetractionHandle names a time-stamp-order message for Retract
// (IEEE 1516.1 MessageRetractionHandle): the sending federate and the
// message's federate-scoped ID. The zero handle is invalid: it is what a
// ...Retractable service returns when nothing went out in time-stamp
// order (the standard's MessageRetractionReturn with
// retractionHandleIsValid false).
type MessageRetractionHandle struct {
	_msgpack struct{} `msgpack:",as_array"`
	Federate FederateHandle
	Serial   uint64
}

// Valid reports whether h names a message (it is not the zero handle).
func (h MessageRetractionHandle) Valid() bool { return h.Serial != 0 }

func (h MessageRetractionHandle) String() string { return fmt.Sprintf("%d/%d", h.Federate, h.Serial) }

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
