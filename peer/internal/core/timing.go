package core

import (
	"errors"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/meshrti/meshrti/lbts"
	"github.com/meshrti/meshrti/peer/dgram"
	"github.com/meshrti/meshrti/peer/hla"
	"github.com/meshrti/meshrti/peer/reliable"
)

// timing is the bookkeeping between the data plane and the time core
// (lbts): time-stamp-order messages this federate sent that may still be
// retracted, the time-stamped messages recently delivered here (so that
// a late retraction becomes a RequestRetraction), and receive-order
// messages held while asynchronous delivery is off.
type timing struct {
	sentTSO   map[uint64]*sentTSO
	sweepAt   int // size of sentTSO at which expired records are dropped
	delivered recentSet

	// Asynchronous delivery (enable/disableAsynchronousDelivery): while
	// it is off, receive-order messages for a time-constrained federate
	// that is not advancing wait in held.
	async bool
	held  []heldMsg
}

func newTiming() timing {
	return timing{sentTSO: make(map[uint64]*sentTSO)}
}

// sentTSO is a time-stamp-order message this federate sent, as Retract
// needs it: where it went and its time stamp.
type sentTSO struct {
	group     uint32
	seq       uint64
	ts        float64
	retracted bool
	also      []groupSeq // the copies on more groups (outMsg.also)
}

// groupSeq is a message's sequence number on one group.
type groupSeq struct {
	group uint32
	seq   uint64
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

// heldMsg is a message waiting: a receive-order message for the
// federate's next time advance (asynchronous delivery off), or an update
// for its instance's name.
type heldMsg struct {
	msg *wireMsg
	d   delivery
}

// tsoPayload is what a queued time-stamp-order message carries through
// the time core.
type tsoPayload struct {
	msg      *wireMsg
	from     FederateHandle
	reliable bool
	outside  arrivalFilter // what its regions kept out when it arrived
}

// ---- Receiving ----

// onData handles one in-order delivery from the reliable layer. Every
// reliable delivery is reported to the time core exactly once, as
// received (Received) or as a queued time-stamped message (ReceiveTSO),
// so that promises covering it can count. A federate the federation
// dropped (SelfLost) is handed nothing after ConnectionLost: what its
// data plane still delivers is dropped.
func (c *Core) onData(d reliable.Delivery) {
	if c.Lost() {
		return
	}
	c.handle(d, false)
}

// handle acts on one delivery; replay says it was held before (during a
// save, or from a newer restore branch) and reported received then.
func (c *Core) handle(d reliable.Delivery, replay bool) {
	from := FederateHandle(d.From)
	if from == c.self {
		return
	}
	m := &c.inbound
	*m = wireMsg{Pairs: m.Pairs[:0]}
	if err := decodeInto(d.Payload, m, true); err != nil {
		if !replay {
			c.received(d)
		}
		c.stats.Malformed++
		return
	}
	if (m.Branch != c.saveRestore.branch || c.saveRestore.save.phase >= saveInitiated) && !c.saveRestore.restoring && !c.branchGate(d, m, replay) {
		return
	}
	c.stats.Delivered++
	if c.history(d, m) {
		c.stats.History++
		if !replay {
			c.received(d) // owed by the data plane, not to the federate
		}
		return
	}
	if len(m.Regions) > 0 && (m.Kind == kindUpdate || m.Kind == kindInteraction) && c.seenRegion(m, from) {
		if !replay {
			c.received(d) // a copy from another cell group
		}
		return
	}
	if d.Reliable && m.TSO && m.HasTime && c.timeCore.Constrained() && m.Kind != kindTime {
		err := c.timeCore.ReceiveTSO(lbts.TSO{
			From: lbts.FederateID(from), Group: uint32(d.Group), Seq: d.Seq, Time: m.Time,
			Payload: tsoPayload{msg: keep(m), from: from, reliable: d.Reliable, outside: c.arrivalOutside(m)},
		})
		if err != nil {
			c.stats.LateTSO++
		}
		return
	}
	if !replay {
		c.received(d)
	}
	switch m.Kind {
	case kindTime:
		tm, err := decodeTimeMsg(m.TimeMsg, lbts.FederateID(c.self))
		if err != nil {
			c.stats.Malformed++
			return
		}
		if tm.From != lbts.FederateID(from) {
			// Only a federate speaks for its own time.
			c.stats.Malformed++
			return
		}
		_ = c.timeCore.Step(tm) // a refused time message is the sender's problem; the next one corrects it
	case kindQuery:
		if len(m.Data) > 0 {
			c.earlyInterest(from, ObjectClassHandle(m.Ref), m.Data)
		}
		c.answerQuery(m.Class, m.Obj)
	case kindResign:
		c.onResign(m, from)
	case kindRetract:
		c.onRetract(m, from, uint32(d.Group))
	case kindOwnership:
		c.onOwnership(m, from)
	default:
		// The MOM acts on the requests for it as they arrive: they are
		// for the RTI, not held with the federate's receive-order
		// messages while it waits for a grant.
		if d.Group == momGroup && m.Kind == kindInteraction {
			c.momArrived(m, from)
		}
		if m.Kind == kindRequestUpdate && c.momRequested(m.Obj, ObjectClassHandle(m.Class), m.Pairs, m.Tag) && !m.Obj.IsZero() {
			return // for this federate's MOM instance alone
		}
		c.deliverRO(m, delivery{from: from, received: Receive, reliable: d.Reliable})
	}
}

// decodeTimeMsg decodes a time message, binary or (from older members)
// msgpack, for the federate self. The msgpack case is apart so that the
// common one keeps its Message off the heap.
func decodeTimeMsg(b []byte, self lbts.FederateID) (lbts.Message, error) {
	if !lbts.IsBinary(b) {
		return decodeTimeMsgpack(b)
	}
	var tm lbts.Message
	err := tm.UnmarshalBinaryFor(b, self)
	return tm, err
}

func decodeTimeMsgpack(b []byte) (lbts.Message, error) {
	var tm lbts.Message
	err := msgpack.Unmarshal(b, &tm)
	return tm, err
}

func (c *Core) received(d reliable.Delivery) {
	if d.Reliable {
		c.timeCore.Received(lbts.FederateID(d.From), uint32(d.Group), d.Seq)
	}
}

// deliverRO delivers a receive-order message, or holds it while the
// federate is time-constrained, not advancing, and asynchronous delivery
// is off (1516.1 §8.14: such a federate gets receive-order messages only
// in the time advancing state). Registrations (discoveries) are not
// held: they are not receive-order messages of the standard.
func (c *Core) deliverRO(m *wireMsg, d delivery) {
	if m.Kind != kindRegister && c.holdsRO() {
		d.outside = c.arrivalOutside(m)
		c.timing.held = append(c.timing.held, heldMsg{keep(m), d})
		return
	}
	c.applyDelivered(m, d)
}

// holdsRO reports whether receive-order messages wait now.
func (c *Core) holdsRO() bool {
	return !c.timing.async && c.timeCore.Constrained() && !c.timeCore.Advancing()
}

// releaseHeld delivers the held receive-order messages, in the order they
// came, once they need not wait any more.
func (c *Core) releaseHeld() {
	if len(c.timing.held) == 0 || c.holdsRO() {
		return
	}
	held := c.timing.held
	c.timing.held = nil
	for _, h := range held {
		c.applyDelivered(h.msg, h.d)
	}
}

// applyDelivered turns a delivered message into events, traces and
// remembers it, and queues the events.
func (c *Core) applyDelivered(m *wireMsg, d delivery) {
	evs := c.apply(c.evBuf[:0], m, d)
	if c.tracer != nil {
		c.traceDeliver(m, d.from, d.received, evs)
	}
	if m.TSO && len(evs) > 0 {
		// Remembered so that its retraction becomes a RequestRetraction.
		c.timing.delivered.add(msgKey{d.from, m.ID})
	}
	c.push(evs...)
	clear(evs) // drop the references; keep the room
	c.evBuf = evs[:0]
}

// onRetract handles a retraction from another federate: the message is
// dropped from the time-stamp-order queue if it is still there, or the
// federate is asked to retract it (RequestRetraction) if it was already
// delivered here.
func (c *Core) onRetract(m *wireMsg, from FederateHandle, group uint32) {
	if c.timeCore.Retract(lbts.FederateID(from), group, m.RefSeq) {
		if c.tracer != nil {
			c.traceRetracted(from, m.Ref, true)
		}
		return
	}
	if !c.timing.delivered.has(msgKey{from, m.Ref}) {
		return // never received here (not subscribed, or dropped)
	}
	if k := (msgKey{from, m.Ref}); c.regions.retracted.has(k) {
		return // a message sent into several cell groups is retracted on each
	} else {
		c.regions.retracted.add(k)
	}
	if c.tracer != nil {
		c.traceRetracted(from, m.Ref, false)
	}
	c.push(hla.RequestRetraction{Handle: MessageRetractionHandle{Federate: from, Serial: m.Ref}})
}

// actOnTime carries out what the time core decided: broadcast its state,
// deliver time-stamp-order messages in order, then grants. A federate
// the federation dropped (SelfLost) takes no more part: the others no
// longer wait for it, so its time core, left alone with the members it
// has not yet heard leave, could grant past their messages.
func (c *Core) actOnTime(rd lbts.Ready) {
	if c.Lost() {
		return
	}
	for i := range rd.Messages {
		c.sendTime(&rd.Messages[i], outMsg{group: controlGroup, reliable: true})
	}
	for i := range rd.Directed {
		c.sendTime(&rd.Directed[i].Message, outMsg{group: controlGroup, to: FederateHandle(rd.Directed[i].To)})
	}
	received := TimeStamp
	if !c.timeCore.Constrained() {
		received = Receive // disableTimeConstrained released the queue
	}
	for _, d := range rd.Deliver {
		p, ok := d.Payload.(tsoPayload)
		if !ok {
			continue
		}
		c.applyDelivered(p.msg, delivery{from: p.from, received: received, reliable: p.reliable, outside: p.outside})
	}
	if rd.RegulationEnabled != nil {
		if c.tracer != nil {
			c.traceTime("regulation", *rd.RegulationEnabled)
		}
		c.queueEnding(hla.TimeRegulationEnabled{Time: c.timeKind.Make(*rd.RegulationEnabled)}, unseenRegulation, *rd.RegulationEnabled)
	}
	if rd.ConstrainedEnabled != nil {
		if c.tracer != nil {
			c.traceTime("constrained", *rd.ConstrainedEnabled)
		}
		c.queueEnding(hla.TimeConstrainedEnabled{Time: c.timeKind.Make(*rd.ConstrainedEnabled)}, unseenConstrained, *rd.ConstrainedEnabled)
	}
	if rd.Grant != nil {
		if c.tracer != nil {
			c.traceTime("grant", *rd.Grant)
		}
		c.queueEnding(hla.TimeAdvanceGrant{Time: c.timeKind.Make(*rd.Grant), Request: rd.GrantKind}, unseenGrant, *rd.Grant)
	}
}

// sendTime sends the time core's Message m as o says (to the group, or
// to one federate).
func (c *Core) sendTime(m *lbts.Message, o outMsg) {
	b, err := m.AppendBinary(c.timeBuf[:0])
	if err != nil {
		c.stats.Malformed++ // cannot happen: the core's own messages encode
		return
	}
	c.timeBuf = b
	c.timeMsg = wireMsg{Kind: kindTime, TimeMsg: b} // send encodes it before returning
	o.msg = &c.timeMsg
	_, _ = c.send(o) // a time message that cannot be sent is resent with the next state
}

// ---- Sending ----

// sendAll sends messages and records time-stamped ones with the time
// core. It returns the retraction handle of the reliable time-stamp-order
// message among them (an update has at most one), or the zero handle.
func (c *Core) sendAll(outs []outMsg, ts float64) (MessageRetractionHandle, error) {
	var h MessageRetractionHandle
	for _, o := range outs {
		seq, err := c.send(o)
		if err != nil {
			return h, err
		}
		if c.tracer != nil {
			c.traceSend(o.msg, !o.reliable)
		}
		if o.msg.TSO && o.reliable {
			if err := c.timeCore.SentTSO(uint32(o.group), seq, ts); err != nil {
				return h, c.timeError(err)
			}
			for i, g := range o.also {
				if err := c.timeCore.SentTSO(uint32(g), c.alsoSeqs[i], ts); err != nil {
					return h, c.timeError(err)
				}
			}
			h = c.recordSent(o, seq, ts)
		}
	}
	return h, nil
}

// recordSent remembers a time-stamp-order message for Retract and returns
// its handle.
func (c *Core) recordSent(o outMsg, seq uint64, ts float64) MessageRetractionHandle {
	t := &c.timing
	if len(t.sentTSO) >= max(maxSentTSO, t.sweepAt) {
		for id, s := range t.sentTSO {
			if c.timeCore.CheckRetract(s.ts) != nil {
				delete(t.sentTSO, id)
			}
		}
		t.sweepAt = 2 * len(t.sentTSO) // amortized: sweep again only after as many more
	}
	st := &sentTSO{group: uint32(o.group), seq: seq, ts: ts}
	for i, g := range o.also {
		st.also = append(st.also, groupSeq{group: uint32(g), seq: c.alsoSeqs[i]})
	}
	t.sentTSO[o.msg.ID] = st
	return MessageRetractionHandle{Federate: c.self, Serial: o.msg.ID}
}

// mayStamp checks a time stamp given to an update, interaction or delete:
// a regulating federate may not send below its time plus lookahead. It
// reports whether the federate is regulating, which decides whether the
// message travels in time-stamp order.
func (c *Core) mayStamp(hasTime bool, ts float64) (regulating bool, err error) {
	regulating = c.timeCore.Regulating()
	if hasTime && regulating {
		if err := c.timeCore.CheckSend(ts); err != nil {
			return regulating, c.timeError(err)
		}
	}
	return regulating, nil
}

// timeError maps the time core's errors onto the HLA exceptions; nil stays nil.
func (c *Core) timeError(err error) error {
	if err == nil {
		return nil
	}
	var ite *lbts.InvalidTimeError
	if errors.As(err, &ite) {
		if ite.Op == "advance" {
			return fmt.Errorf("%w: %v is before the federate's time %v", hla.ErrLogicalTimeAlreadyPassed, c.timeKind.Make(ite.Requested), c.timeKind.Make(ite.Min))
		}
		return &hla.InvalidLogicalTimeError{Given: c.timeKind.Make(ite.Requested), Earliest: c.timeKind.Make(ite.Min), After: ite.Strict}
	}
	for _, m := range []struct{ from, to error }{
		{lbts.ErrInTimeAdvance, hla.ErrInTimeAdvancingState},
		{lbts.ErrRegulationPending, hla.ErrRequestForTimeRegulationPending},
		{lbts.ErrConstrainedPending, hla.ErrRequestForTimeConstrainedPending},
		{lbts.ErrRegulationAlreadyEnabled, hla.ErrTimeRegulationAlreadyEnabled},
		{lbts.ErrConstrainedAlreadyEnabled, hla.ErrTimeConstrainedAlreadyEnabled},
		{lbts.ErrRegulationNotEnabled, hla.ErrTimeRegulationIsNotEnabled},
		{lbts.ErrConstrainedNotEnabled, hla.ErrTimeConstrainedIsNotEnabled},
		{lbts.ErrInvalidLookahead, hla.ErrInvalidLookahead},
		{lbts.ErrTimeAlreadyPassed, hla.ErrLogicalTimeAlreadyPassed},
		{lbts.ErrInvalidTime, hla.ErrInvalidLogicalTime},
	} {
		if errors.Is(err, m.from) {
			return fmt.Errorf("%w: %w", m.to, err)
		}
	}
	return fmt.Errorf("%w: %w", hla.ErrRTIinternalError, err)
}

// ---- Time management services (§8) ----

// EnableTimeRegulation (§8.2) makes the federate time-regulating with the
// given lookahead. TimeRegulationEnabled follows.
func (c *Core) EnableTimeRegulation(lookahead LogicalTime) error {
	l, err := c.timeKind.Interval(lookahead)
	if err != nil {
		return err
	}
	if err := c.pendingError(true, true, false); err != nil {
		return err
	}
	return c.timeError(c.timeCore.EnableRegulation(l))
}

// DisableTimeRegulation (§8.4).
func (c *Core) DisableTimeRegulation() error {
	if c.unseenHas(unseenRegulation) {
		return notYetEnabled(hla.ErrTimeRegulationIsNotEnabled, "TimeRegulationEnabled")
	}
	if err := c.timeCore.DisableRegulation(); err != nil {
		return c.timeError(err)
	}
	if c.tracer != nil {
		c.tracer.begin("unregulated").end()
	}
	return nil
}

// EnableTimeConstrained (§8.5). TimeConstrainedEnabled follows.
func (c *Core) EnableTimeConstrained() error {
	if err := c.pendingError(true, false, true); err != nil {
		return err
	}
	return c.timeError(c.timeCore.EnableConstrained())
}

// DisableTimeConstrained (§8.7). Time-stamp-order messages still queued
// are delivered at once, in receive order, and receive-order messages
// held for the time advancing state follow.
func (c *Core) DisableTimeConstrained() error {
	if c.unseenHas(unseenConstrained) {
		return notYetEnabled(hla.ErrTimeConstrainedIsNotEnabled, "TimeConstrainedEnabled")
	}
	if err := c.timeCore.DisableConstrained(); err != nil {
		return c.timeError(err)
	}
	if c.tracer != nil {
		c.tracer.begin("unconstrained").end()
	}
	c.process() // the queue first, then what was held
	c.releaseHeld()
	return nil
}

// TimeAdvance starts a time advance of the given kind (§8.8-§8.12).
// Receive-order messages held for the time advancing state are delivered
// at once.
func (c *Core) TimeAdvance(kind lbts.RequestKind, t LogicalTime) error {
	ts, err := c.timeKind.Value(t)
	if err != nil {
		return err
	}
	if err := c.pendingError(true, true, true); err != nil {
		return err
	}
	if err := c.timeCore.Request(kind, ts); err != nil {
		return c.timeError(err)
	}
	c.endpoint.Flush() // bundling never delays a grant
	if c.tracer != nil {
		c.traceRequest(kind.String(), ts)
	}
	c.releaseHeld()
	return nil
}

// EnableAsynchronousDelivery (§8.14): receive-order messages are
// delivered whenever they arrive. Held ones are delivered now.
func (c *Core) EnableAsynchronousDelivery() error {
	if c.timing.async {
		return hla.ErrAsynchronousDeliveryAlreadyEnabled
	}
	c.timing.async = true
	c.releaseHeld()
	return nil
}

// DisableAsynchronousDelivery (§8.15), the default.
func (c *Core) DisableAsynchronousDelivery() error {
	if !c.timing.async {
		return hla.ErrAsynchronousDeliveryAlreadyDisabled
	}
	c.timing.async = false
	return nil
}

// Retract (§8.21) withdraws a time-stamp-order message this federate
// sent. See peer.Federate.Retract for the errors.
func (c *Core) Retract(h MessageRetractionHandle) error {
	if !c.timeCore.Regulating() || c.unseenHas(unseenRegulation) {
		return hla.ErrTimeRegulationIsNotEnabled
	}
	if h.Federate != c.self || h.Serial == 0 || h.Serial > c.msgID {
		return fmt.Errorf("%w: %v", hla.ErrInvalidMessageRetractionHandle, h)
	}
	s, ok := c.timing.sentTSO[h.Serial]
	if !ok {
		// A handle this federate gave out whose record was dropped once
		// it could no longer be retracted.
		return fmt.Errorf("%w: %v", hla.ErrMessageCanNoLongerBeRetracted, h)
	}
	if s.retracted {
		return fmt.Errorf("%w: %v was retracted already", hla.ErrInvalidMessageRetractionHandle, h)
	}
	if err := c.timeCore.CheckRetract(s.ts); err != nil {
		if errors.Is(err, lbts.ErrCannotRetract) {
			delete(c.timing.sentTSO, h.Serial)
			return fmt.Errorf("%w: %v at %v", hla.ErrMessageCanNoLongerBeRetracted, h, c.timeKind.Make(s.ts))
		}
		return c.timeError(err)
	}
	copies := append([]groupSeq{{group: s.group, seq: s.seq}}, s.also...)
	outs := make([]outMsg, len(copies))
	for i, cp := range copies {
		outs[i] = outMsg{group: dgram.Group(cp.group), reliable: true, msg: &wireMsg{Kind: kindRetract, Ref: h.Serial, RefSeq: cp.seq}}
	}
	if c.blocked(outs) {
		return ErrBlocked
	}
	for i, o := range outs {
		seq, err := c.send(o)
		if err != nil {
			return err
		}
		// Later promises cover the retraction, so that no receiver is
		// granted past the message before the retraction reaches it.
		if err := c.timeCore.Covered(copies[i].group, seq); err != nil {
			return fmt.Errorf("%w: %w", hla.ErrRTIinternalError, err)
		}
	}
	s.retracted = true
	if c.tracer != nil {
		c.traceRetract(h.Serial)
	}
	return nil
}

// ModifyLookahead (§8.19).
func (c *Core) ModifyLookahead(lookahead LogicalTime) error {
	l, err := c.timeKind.Interval(lookahead)
	if err != nil {
		return err
	}
	if c.unseenHas(unseenRegulation) {
		return notYetEnabled(hla.ErrTimeRegulationIsNotEnabled, "TimeRegulationEnabled")
	}
	if err := c.pendingError(true, false, false); err != nil {
		return err
	}
	if err := c.timeCore.ModifyLookahead(l); err != nil {
		return c.timeError(err)
	}
	if c.tracer != nil {
		c.traceLookahead(l)
	}
	return nil
}

// QueryLogicalTime (§8.17): the time of the last grant (or enable)
// handed over to the federate.
func (c *Core) QueryLogicalTime() LogicalTime { return c.timeKind.Make(c.shownTime()) }

// QueryLookahead (§8.20).
func (c *Core) QueryLookahead() (LogicalTime, error) {
	if !c.timeCore.Regulating() || c.unseenHas(unseenRegulation) {
		return nil, hla.ErrTimeRegulationIsNotEnabled
	}
	return c.timeKind.Make(c.timeCore.Lookahead()), nil
}

// QueryGALT (§8.16): false when no regulating federate bounds it.
func (c *Core) QueryGALT() (LogicalTime, bool) {
	t, ok := c.timeCore.GALT()
	return c.timeKind.Make(t), ok
}

// QueryLITS (§8.18): false when nothing bounds it.
func (c *Core) QueryLITS() (LogicalTime, bool) {
	t, ok := c.timeCore.LITS()
	return c.timeKind.Make(t), ok
}
