package core

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/meshrti/meshrti/lbts"
	"github.com/meshrti/meshrti/peer/hla"
	"github.com/meshrti/meshrti/peer/reliable"
)

// federation is the federation sub-machine: who else is joined, what
// happens when a federate resigns or is lost, and the control-plane
// operations this federate waits on (name reservations today;
// synchronization points, saves and the MOM build on it).
//
// Membership reaches the core as plain inputs (MemberJoined, MemberLeft,
// SelfLost) from the driver, which takes them from the control plane. A
// resigning federate also says so on the control group, with its resign
// action, so that the others act at once and in order with its last
// messages.
type federation struct {
	members map[FederateHandle]Member
	// directive is the federation's automatic resign directive: what
	// happens to a lost federate's objects, unless it set its own
	// (replicated state keyResignDirective); own is this federate's.
	directive ResignAction
	own       ResignAction
	nextOp    uint64
	pending   map[uint64]func(OpResult)
	// states is the other federates' replicated state, as the control
	// plane reported it (StateChanged).
	states map[FederateHandle]map[string]stateValue
}

func newFederation(directive ResignAction) federation {
	if !directive.Valid() {
		directive = hla.CancelThenDeleteThenDivest
	}
	return federation{
		members:   make(map[FederateHandle]Member),
		directive: directive,
		own:       directive,
		pending:   make(map[uint64]func(OpResult)),
		states:    make(map[FederateHandle]map[string]stateValue),
	}
}

// OpKind is what a control-plane operation does.
type OpKind uint8

const (
	// OpAcquire takes Key in the federation's register for this
	// federate, with Value, if nobody holds it.
	OpAcquire OpKind = iota + 1
	// OpRelease frees Key if this federate holds it.
	OpRelease
	// OpRead reads Key's value and version, linearizably.
	OpRead
	// OpSetState sets this federate's replicated state Key to Value
	// (nil deletes it); it answers at once.
	OpSetState
	// OpSwap takes Key for this federate with Value and advances its
	// version if its version is Expect (a compare-and-set).
	OpSwap
)

// Op is a control-plane operation for the driver to run.
type Op struct {
	ID     uint64
	Kind   OpKind
	Key    string
	Value  []byte
	Expect uint64 // OpSwap
	// Joined, for OpAcquire: federates that must all be joined where the
	// acquisition is decided (a synchronization set); the answer has
	// NotJoined otherwise, and nothing changed.
	Joined []FederateHandle
}

// OpResult is the control plane's answer to an Op.
type OpResult struct {
	// Held says this federate holds the key after the operation.
	Held bool
	// Holder is the key's holder, 0 when free.
	Holder FederateHandle
	// Value and Version are the key's value and version after it.
	Value   []byte
	Version uint64
	// NotJoined: a federate of Op.Joined was not joined; nothing changed.
	NotJoined bool
	// Err is set when the operation could not be decided.
	Err error
}

// startOp queues op for the driver; done runs when its answer comes.
func (f *federation) startOp(c *Core, op Op, done func(OpResult)) {
	f.nextOp++
	op.ID = f.nextOp
	f.pending[op.ID] = done
	c.out.Ops = append(c.out.Ops, op)
}

// OpDone hands the core the answer to the Op with the given ID. An
// answer to no pending Op is ignored.
func (c *Core) OpDone(id uint64, r OpResult) {
	done, ok := c.federation.pending[id]
	if !ok {
		return
	}
	delete(c.federation.pending, id)
	done(r)
}

// MemberJoined tells the core another federate joined.
func (c *Core) MemberJoined(m Member) {
	if m.Handle == c.self {
		return
	}
	if _, ok := c.federation.members[m.Handle]; ok {
		return
	}
	c.federation.members[m.Handle] = m
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
		directive := c.federation.directive
		if v, _, ok := c.State(h, keyResignDirective); ok && len(v) == 1 && ResignAction(v[0]).Valid() {
			directive = ResignAction(v[0])
		}
		deletes = directive.Deletes()
	case action.Valid():
		deletes = action.Deletes()
	}
	c.forget(h, lost, deletes)
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
	if c.state != joined {
		return
	}
	c.state = lost
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
func (c *Core) Lost() bool { return c.state == lost }

// forget removes a federate that resigned or was lost from time
// management and the data plane, and handles its objects.
func (c *Core) forget(h FederateHandle, lost, deletes bool) {
	m, ok := c.federation.members[h]
	if !ok {
		return
	}
	if c.tracer != nil {
		c.traceForget(h, m.Name, lost)
	}
	delete(c.federation.members, h)
	delete(c.federation.states, h)
	c.dropInterest(h)
	c.timeCore.RemoveFederate(lbts.FederateID(h))
	c.endpoint.ForgetSender(reliable.NodeID(h))
	c.removeFederate(h, deletes)
	if lost {
		c.push(hla.FederateLost{Federate: h, Name: m.Name})
		c.momLost(h, m.Name)
	} else {
		c.push(hla.FederateResigned{Federate: h, Name: m.Name})
	}
	c.syncMembersChanged(h, true)
	c.srMemberLeft(h, lost)
}

// onResign handles another federate's resign notice.
func (c *Core) onResign(m *wireMsg, from FederateHandle) {
	if !c.noteReleased(m.Data) {
		c.stats.Malformed++
	}
	action := ResignAction(m.Action)
	deletes := true // older members' notices carry no action: they deleted
	if action.Valid() {
		deletes = action.Deletes()
	}
	c.forget(from, false, deletes)
}

// Member returns the joined federate with handle h (not this one).
func (c *Core) Member(h FederateHandle) (Member, bool) {
	m, ok := c.federation.members[h]
	return m, ok
}

// MemberNamed returns the joined federate named name (not this one).
func (c *Core) MemberNamed(name string) (Member, bool) {
	for _, m := range c.federation.members {
		if m.Name == name {
			return m, true
		}
	}
	return Member{}, false
}

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
	if !cancels && c.acquisitionsPending() {
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
	released := c.releaseAll()
	if _, err := c.send(outMsg{group: controlGroup, reliable: true, msg: &wireMsg{Kind: kindResign, Action: uint8(action), Data: released}}); err != nil {
		return err
	}
	if c.tracer != nil {
		c.traceResign()
	}
	c.state = resigned
	return nil
}

// acquisitionsPending reports whether this federate is acquiring any
// attribute.
func (c *Core) acquisitionsPending() bool {
	for _, m := range c.ownership.acquiring {
		if len(m) > 0 {
			return true
		}
	}
	return false
}

// cancelAllAcquisitions withdraws every acquisition of this federate.
func (c *Core) cancelAllAcquisitions() {
	hs := make([]ObjectInstanceHandle, 0, len(c.ownership.acquiring))
	for h, m := range c.ownership.acquiring {
		if len(m) > 0 {
			hs = append(hs, h)
		}
	}
	slices.SortFunc(hs, compareHandles)
	for _, h := range hs {
		var attrs []AttributeHandle
		for a := range c.ownership.acquiring[h] {
			attrs = append(attrs, a)
		}
		slices.Sort(attrs)
		delete(c.ownership.acquiring, h)
		if in := c.objects.inst[h]; in != nil {
			c.sendOwnership(ownAcquireCancel, h, in, c.epochPairs(attrs, nil), nil, 0)
		}
	}
}

// releaseAll gives up every token this federate holds and returns them
// encoded (encodeTokens) with the epochs at which they are unowned.
func (c *Core) releaseAll() []byte {
	hs := make([]ObjectInstanceHandle, 0, len(c.ownership.held))
	for h := range c.ownership.held {
		hs = append(hs, h)
	}
	slices.SortFunc(hs, compareHandles)
	var b []byte
	for _, h := range hs {
		attrs := make([]AttributeHandle, 0, len(c.ownership.held[h]))
		for a := range c.ownership.held[h] {
			attrs = append(attrs, a)
		}
		slices.Sort(attrs)
		for _, a := range attrs {
			e := c.ownership.give(h, a, 0)
			c.traceOwner(h, a, 0, e)
			b = binary.AppendUvarint(b, uint64(h.Federate))
			b = binary.AppendUvarint(b, h.Serial)
			b = binary.AppendUvarint(b, uint64(a))
			b = binary.AppendUvarint(b, e)
		}
	}
	return b
}

// noteReleased folds the tokens a resign notice released into this
// federate's view; false when they do not decode.
func (c *Core) noteReleased(b []byte) bool {
	for len(b) > 0 {
		var v [4]uint64
		for i := range v {
			x, n := binary.Uvarint(b)
			if n <= 0 {
				return false
			}
			v[i], b = x, b[n:]
		}
		h := ObjectInstanceHandle{Federate: FederateHandle(v[0]), Serial: v[1]}
		a := AttributeHandle(v[2])
		if c.ownership.note(h, a, token{owner: 0, epoch: v[3]}) {
			c.traceOwner(h, a, 0, v[3])
			c.maybeClaim(h, a)
		}
	}
	return true
}

// StateChanged tells the core that federate h's replicated state key is
// now value (nil: deleted) at version. Versions only grow per federate;
// an older one is ignored.
func (c *Core) StateChanged(h FederateHandle, key string, value []byte, version uint64) {
	st := c.federation.states[h]
	if st == nil {
		st = make(map[string]stateValue)
		c.federation.states[h] = st
	}
	if cur, ok := st[key]; ok && cur.version >= version {
		return
	}
	st[key] = stateValue{value: value, version: version}
	c.interestChanged(h, key, value)
	c.syncStateChanged(h, key, value)
	c.srStateChanged(h, key, value)
}

// State returns federate h's replicated state key as this federate
// knows it, and its version; false when it knows none.
func (c *Core) State(h FederateHandle, key string) ([]byte, uint64, bool) {
	v, ok := c.federation.states[h][key]
	if !ok || v.value == nil {
		return nil, v.version, false
	}
	return v.value, v.version, true
}

// stateValue is one replicated state key's value and version.
type stateValue struct {
	value   []byte
	version uint64
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
