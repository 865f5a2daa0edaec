package core

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/meshrti/meshrti/lbts"
	"github.com/meshrti/meshrti/peer/dgram"
	"github.com/meshrti/meshrti/peer/hla"
	"github.com/meshrti/meshrti/peer/reliable"
)

// The federation's services and the control plane's inputs, routed
// through the federation sub-machine (federation.go) to the others:
// a member that joins or leaves reaches the time core, the data plane,
// the objects and every control sub-machine; another federate's
// replicated state reaches the sub-machine whose key it is (schema.go).

// startOp queues op for the driver; done runs when its answer comes
// (OpDone).
func (c *Core) startOp(op Op, done func(OpResult)) {
	c.out.Ops = append(c.out.Ops, c.federation.start(op, done))
}

// setState publishes one key of this federate's replicated state
// through the control plane.
func (c *Core) setState(key string, value []byte) {
	c.startOp(Op{Kind: OpSetState, Key: key, Value: value}, func(OpResult) {})
}

// OpDone hands the core the answer to the Op with the given ID. An
// answer to no pending Op is ignored.
func (c *Core) OpDone(id uint64, r OpResult) {
	if done, ok := c.federation.answered(id); ok {
		done(r)
	}
}

// MemberJoined tells the core another federate joined.
func (c *Core) MemberJoined(m Member) {
	if m.Handle == c.self || !c.federation.join(m) {
		return
	}
	c.timeCore.AddFederate(lbts.FederateID(m.Handle))
	c.push(hla.FederateJoined{Federate: m.Handle, Name: m.Name, Type: m.Type})
	c.syncMembersChanged(m.Handle, false)
}

// MemberLeft tells the core another federate resigned with action or,
// with lost, was lost (its node declared dead, or closed without
// resigning). A resigned federate's objects are handled as its action
// says (0, not known: as if it deleted them), a lost federate's as the
// automatic resign directive says. Nothing happens when the federate's
// own resign notice came first.
func (c *Core) MemberLeft(h FederateHandle, lost bool, action ResignAction) {
	c.syncPoints.gone[h] = true
	deletes := true
	switch {
	case lost:
		deletes = c.federation.directiveOf(h).Deletes()
	case action.Valid():
		deletes = action.Deletes()
	}
	if !lost && c.awaitNotice(h, deletes) {
		return
	}
	c.forget(h, lost, deletes, nil)
}

// awaitNotice keeps a resigned member h until its resign notice has come
// and what the notice names has arrived (onResign), or the wait runs out,
// and reports whether it does. The control plane can tell of a
// resignation before the data plane brings the resigner's last
// messages: a receiver reading its backlog after a pause, a frame lost
// and repaired. Forgetting h now would drop them and let a grant pass
// them; its notice, which follows them on the control group, says where
// its streams end. During a save or a restore it does not wait: the
// notice would be held until it ends (branchGate), and the save or
// restore must hear of the resignation now (it fails it).
func (c *Core) awaitNotice(h FederateHandle, deletes bool) bool {
	if _, ok := c.federation.departing[h]; ok {
		return true // the notice came and waits for what it names
	}
	if _, ok := c.federation.members[h]; !ok {
		return false
	}
	if c.saveRestore.save.phase != saveIdle || c.saveRestore.restore.phase != restoreIdle {
		return false
	}
	c.holdDeparture(h, departure{deletes: deletes})
	return true
}

// holdDeparture keeps h departing, as d says, until departWaitTicks from
// now at most (checkDeparting).
func (c *Core) holdDeparture(h FederateHandle, d departure) {
	if c.federation.departing == nil {
		c.federation.departing = make(map[FederateHandle]departure)
	}
	d.deadline = c.endpoint.Now() + departWaitTicks
	c.federation.departing[h] = d
}

// AutomaticResignDirective (§10.2) returns this federate's automatic
// resign directive: what the others do with its objects if it is lost.
func (c *Core) AutomaticResignDirective() ResignAction { return c.federation.own }

// SetAutomaticResignDirective (§10.3) sets it, and tells the others in
// this federate's replicated state. ErrInvalidResignAction for an action
// that is not one.
func (c *Core) SetAutomaticResignDirective(a ResignAction) error {
	if !a.Valid() {
		return fmt.Errorf("%w: %d", hla.ErrInvalidResignAction, int(a))
	}
	c.federation.own = a
	c.setState(keyResignDirective, []byte{byte(a)})
	return nil
}

// SelfLost tells the core that the control plane dropped this federate
// from the federation (declared its node dead, or removed it in a
// partition): ConnectionLost follows, and services fail with
// ErrNotConnected.
func (c *Core) SelfLost(reason string) {
	if !c.federation.joined() {
		return
	}
	c.federation.standing = lost
	c.push(hla.ConnectionLost{Reason: reason})
}

// HeardWithin calls fn for each member whose data-plane frames were
// accepted within the last ticks ticks.
func (c *Core) HeardWithin(ticks int64, fn func(FederateHandle)) {
	now := c.endpoint.Now()
	for h := range c.federation.members {
		if t, ok := c.endpoint.LastHeard(reliable.NodeID(h)); ok && now-t <= ticks {
			fn(h)
		}
	}
}

// Lost reports whether the federate lost its federation (SelfLost).
func (c *Core) Lost() bool { return c.federation.standing == lost }

// forget removes a federate that resigned or was lost from time
// management and the data plane, and handles its objects. ends, from a
// resign notice, are where its streams end: what of them has not
// arrived is reported lost.
func (c *Core) forget(h FederateHandle, lost, deletes bool, ends []reliable.End) {
	delete(c.federation.departing, h)
	m, ok := c.federation.leave(h)
	if !ok {
		return
	}
	if c.tracer != nil {
		c.traceForget(h, m.Name, lost)
	}
	c.dropInterest(h)
	c.timeCore.RemoveFederate(lbts.FederateID(h))
	c.endpoint.ForgetSender(reliable.NodeID(h), ends...)
	c.removeFederate(h, deletes)
	if lost {
		c.push(hla.FederateLost{Federate: h, Name: m.Name})
		c.momLost(h, m.Name)
	} else {
		c.push(hla.FederateResigned{Federate: h, Name: m.Name})
	}
	c.syncMembersChanged(h, true)
	c.saveRestoreMemberLeft(h, lost)
}

// onResign handles another federate's resign notice.
func (c *Core) onResign(m *wireMsg, from FederateHandle) {
	action := ResignAction(m.Action)
	deletes := true // older members' notices carry no action: they deleted
	if action.Valid() {
		deletes = action.Deletes()
	}
	// The notice travels on the control group; what its sender sent
	// before it on other groups may still be on its way (a frame lost
	// and repaired, a receiver that was stopped and reads its backlog).
	// Forgetting the sender now would drop that and let a grant pass
	// its time-stamped messages: the notice names its positions, and the
	// sender is forgotten once they have arrived.
	positions, ok := decodePositions(m.TimeMsg)
	if !ok {
		c.stats.Malformed++
	}
	if len(positions) > 0 && !c.receivedThrough(from, positions) {
		c.holdDeparture(from, departure{noticed: true, positions: positions, released: slices.Clone(m.Data), deletes: deletes})
		return
	}
	c.depart(from, m.Data, deletes, positions)
}

// depart acts on a resign notice: the tokens it released (after the
// sender's last updates, which carry the older epochs), then the
// sender forgotten. What of its positions has not arrived by now (its
// wait ran out) is lost: the data plane reports it (MessagesLost), and
// the time core stops waiting for it.
func (c *Core) depart(from FederateHandle, released []byte, deletes bool, positions []groupSeq) {
	if !c.noteReleased(released) {
		c.stats.Malformed++
	}
	ends := make([]reliable.End, len(positions))
	for i, p := range positions {
		ends[i] = reliable.End{Group: dgram.Group(p.group), Seq: p.seq}
	}
	c.forget(from, false, deletes, ends)
}

// departWaitTicks bounds how long a resign notice waits for what its
// sender sent before it (2 s at the default tick): a resigned federate
// that closed answers no repair, and what it cannot repair is reported
// lost then (MessagesLost).
const departWaitTicks = 400

// receivedThrough reports whether everything from sent up to positions,
// on the groups this federate has joined, has been received (or given
// up on).
func (c *Core) receivedThrough(from FederateHandle, positions []groupSeq) bool {
	for _, p := range positions {
		if got, joined := c.timeCore.ReceivedThrough(lbts.FederateID(from), p.group); joined && got < p.seq {
			return false
		}
	}
	return true
}

// checkDeparting forgets the departing federates whose messages have
// all arrived, or whose wait ran out, and reports whether it forgot any.
func (c *Core) checkDeparting() bool {
	if len(c.federation.departing) == 0 {
		return false
	}
	now := c.endpoint.Now()
	var done []FederateHandle
	for h, d := range c.federation.departing {
		if now >= d.deadline || d.noticed && c.receivedThrough(h, d.positions) {
			done = append(done, h)
		}
	}
	slices.Sort(done)
	for _, h := range done {
		d := c.federation.departing[h]
		delete(c.federation.departing, h)
		c.depart(h, d.released, d.deletes, d.positions)
	}
	return len(done) > 0
}

// sendPositions returns this federate's send positions: the sequence
// number of the last reliable message on each group it sent on, in
// group order.
func (c *Core) sendPositions() []groupSeq {
	var ps []groupSeq
	c.endpoint.Sent(func(g dgram.Group, hw uint64) { ps = append(ps, groupSeq{uint32(g), hw}) })
	slices.SortFunc(ps, func(a, b groupSeq) int { return cmp.Compare(a.group, b.group) })
	return ps
}

// appendPositions encodes send positions: a count, then group and
// sequence number for each, all uvarints.
func appendPositions(b []byte, ps []groupSeq) []byte {
	b = binary.AppendUvarint(b, uint64(len(ps)))
	for _, p := range ps {
		b = binary.AppendUvarint(b, uint64(p.group))
		b = binary.AppendUvarint(b, p.seq)
	}
	return b
}

// decodePositions decodes appendPositions' encoding; none is no
// positions (a notice of an older member). ok is false for bytes that
// do not decode.
func decodePositions(b []byte) (ps []groupSeq, ok bool) {
	if len(b) == 0 {
		return nil, true
	}
	r := wireReader{b: b}
	ps = readPositions(&r)
	return ps, r.err == nil && len(r.b) == 0
}

// readPositions reads send positions (appendPositions) from r; r.err
// says whether they did not parse.
func readPositions(r *wireReader) []groupSeq {
	n := r.uvarint("positions")
	if r.err != nil || n > uint64(len(r.b)) {
		r.fail("positions")
		return nil
	}
	ps := make([]groupSeq, 0, n)
	for range n {
		g := r.uvarint("group")
		seq := r.uvarint("seq")
		ps = append(ps, groupSeq{uint32(g), seq})
	}
	return ps
}

// Member returns the joined federate with handle h (not this one).
func (c *Core) Member(h FederateHandle) (Member, bool) {
	m, ok := c.federation.members[h]
	return m, ok
}

// MemberNamed returns the joined federate named name (not this one).
func (c *Core) MemberNamed(name string) (Member, bool) { return c.federation.named(name) }

// Resign (§4.10) carries out a resign action: it deletes the objects this
// federate may delete (actions that delete), gives up its tokens
// (UnconditionallyDivestAttributes: the instances stay in the
// federation, unowned), and tells the others on the control group.
// ErrFederateOwnsAttributes when the action leaves owned attributes
// behind.
func (c *Core) Resign(action ResignAction) error {
	if !action.Valid() {
		return fmt.Errorf("%w: %d", hla.ErrInvalidResignAction, int(action))
	}
	if err := c.check(); err != nil {
		return err
	}
	cancels := action == hla.CancelPendingOwnershipAcquisitions || action == hla.CancelThenDeleteThenDivest
	if !cancels && c.ownership.acquiringAny() {
		return fmt.Errorf("%w: cancel them, or resign with an action that does", hla.ErrOwnershipAcquisitionPending)
	}
	var hs []ObjectInstanceHandle // instances this federate deletes
	if action.Deletes() {
		for h, in := range c.objects.inst {
			if _, ok := c.ownership.holds(h, privilegeToDelete(in.class)); ok {
				hs = append(hs, h)
			}
		}
		slices.SortFunc(hs, compareHandles)
	}
	divests := action == hla.UnconditionallyDivestAttributes || action == hla.DeleteObjectsThenDivest || action == hla.CancelThenDeleteThenDivest
	if n := len(c.ownership.held) - len(hs); n > 0 && !divests {
		return fmt.Errorf("%w: attributes of %d object instances", hla.ErrFederateOwnsAttributes, n)
	}
	if cancels {
		c.cancelAllAcquisitions()
	}
	for _, h := range hs {
		o, err := c.deleteMsg(h, nil, false, 0, false)
		if err != nil {
			return err
		}
		if _, err := c.send(o); err != nil {
			return err
		}
		if c.tracer != nil {
			c.traceSend(o.msg, !o.reliable)
		}
	}
	// What is left is released: the notice carries every token with
	// its epoch, so that everyone knows exactly what is unowned now
	// (releases sent on the instances' own groups could arrive after
	// the notice made the others forget this federate).
	released := appendReleased(nil, c.releaseAll())
	// The notice names where this federate's streams end, so that the
	// others forget it only after receiving all of them (onResign).
	positions := appendPositions(nil, c.sendPositions())
	if _, err := c.send(outMsg{group: controlGroup, reliable: true, msg: &wireMsg{Kind: kindResign, Action: uint8(action), Data: released, TimeMsg: positions}}); err != nil {
		return err
	}
	if c.tracer != nil {
		c.traceResign()
	}
	c.federation.standing = resigned
	return nil
}

// StateChanged tells the core that federate h's replicated state key is
// now value (nil: deleted) at version. Versions only grow per federate;
// an older one is ignored. The key's sub-machine takes it (schema.go);
// the others' resign directives and interaction transportations are
// read when needed (State).
func (c *Core) StateChanged(h FederateHandle, key string, value []byte, version uint64) {
	if !c.federation.noteState(h, key, value, version) {
		return
	}
	switch {
	case strings.HasPrefix(key, keyObjectSubscription), strings.HasPrefix(key, keyInteractionSubscription):
		c.interestChanged(h, key, value)
	case strings.HasPrefix(key, keySyncPoint), strings.HasPrefix(key, keySyncAchieved), strings.HasPrefix(key, keySyncDone):
		c.syncStateChanged(h, key, value)
	default:
		c.saveRestoreStateChanged(h, key, value)
	}
}

// State returns federate h's replicated state key as this federate
// knows it, and its version; false when it knows none.
func (c *Core) State(h FederateHandle, key string) ([]byte, uint64, bool) {
	return c.federation.state(h, key)
}

// ReportFederationExecutions pushes the answer to the member's
// listFederationExecutions (§4.8): list, as the control plane gave it.
func (c *Core) ReportFederationExecutions(list []hla.FederationExecutionInformation) error {
	if err := c.check(); err != nil {
		return err
	}
	c.push(hla.ReportFederationExecutions{Executions: list})
	return nil
}
