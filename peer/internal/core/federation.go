package core

import (
	"encoding/binary"
	"slices"

	"github.com/meshrti/meshrti/peer/hla"
)

// federation is the federation sub-machine: where this federate stands
// in its federation (joined, resigned, lost), who else is joined, the
// others' replicated state as the control plane reported it, the resign
// directives, and the control-plane operations this federate waits on.
//
// Membership reaches it as plain inputs from the driver, through the
// core (MemberJoined, MemberLeft, SelfLost), which takes them from the
// control plane; a resigning federate also says so on the control group,
// with its resign action, so that the others act at once and in order
// with its last messages. The rules that pick one federate among the
// members to decide something (a save, a restore, a synchronization
// point) are here too: they read nothing but the membership.
//
// It changes nothing outside itself: the core acts on what it answers
// (federation_services.go).
type federation struct {
	standing standing
	members  map[FederateHandle]Member
	// directive is the federation's automatic resign directive: what
	// happens to a lost federate's objects, unless it set its own
	// (keyResignDirective); own is this federate's.
	directive ResignAction
	own       ResignAction
	// lastOp numbers the operations; waiting are those not yet answered,
	// with what to do with the answer.
	lastOp  uint64
	waiting map[uint64]func(OpResult)
	// states is the other federates' replicated state (StateChanged).
	states map[FederateHandle]map[string]stateValue
	// departing holds the federates whose resign notice came before
	// everything they sent ahead of it (onResign), or that the control
	// plane said resigned before their notice came (awaitNotice): each
	// is forgotten once the notice and what it names have arrived, or
	// at its deadline.
	departing map[FederateHandle]departure
}

// departure is a resignation that waits for what its sender sent
// before it: whether its notice came (noticed), the sender's positions
// (the last reliable sequence number on each group it sent on), the
// tokens it released, the resign's deletes, and the tick after which it
// waits no more.
type departure struct {
	noticed   bool
	positions []groupSeq
	released  []byte
	deletes   bool
	deadline  int64
}

// standing is where this federate stands in its federation.
type standing uint8

const (
	joined   standing = iota
	resigned          // ResignFederationExecution ran
	lost              // the control plane dropped this federate (ConnectionLost)
)

// stateValue is one replicated state key's value and version.
type stateValue struct {
	value   []byte
	version uint64
}

func newFederation(directive ResignAction) federation {
	if !directive.Valid() {
		directive = hla.CancelThenDeleteThenDivest
	}
	return federation{
		members:   make(map[FederateHandle]Member),
		directive: directive,
		own:       directive,
		waiting:   make(map[uint64]func(OpResult)),
		states:    make(map[FederateHandle]map[string]stateValue),
	}
}

// joined reports whether this federate is still a member of its
// federation.
func (f *federation) joined() bool { return f.standing == joined }

// serviceError returns the error a service gets from a federate that is
// no longer joined, or nil.
func (f *federation) serviceError() error {
	switch f.standing {
	case resigned:
		return hla.ErrFederateNotExecutionMember
	case lost:
		return hla.ErrNotConnected
	}
	return nil
}

// join adds m to the members; false when it is one already.
func (f *federation) join(m Member) bool {
	if _, ok := f.members[m.Handle]; ok {
		return false
	}
	f.members[m.Handle] = m
	return true
}

// leave removes member h and its replicated state, and returns it; false
// when h is no member.
func (f *federation) leave(h FederateHandle) (Member, bool) {
	m, ok := f.members[h]
	if !ok {
		return Member{}, false
	}
	delete(f.members, h)
	delete(f.states, h)
	return m, true
}

// isMember reports whether h is another joined federate.
func (f *federation) isMember(h FederateHandle) bool {
	_, ok := f.members[h]
	return ok
}

// named returns the member named name.
func (f *federation) named(name string) (Member, bool) {
	for _, m := range f.members {
		if m.Name == name {
			return m, true
		}
	}
	return Member{}, false
}

// everyone returns self and every member, sorted: who is joined now.
func (f *federation) everyone(self FederateHandle) []FederateHandle {
	out := make([]FederateHandle, 0, len(f.members)+1)
	out = append(out, self)
	for h := range f.members {
		out = append(out, h)
	}
	slices.Sort(out)
	return out
}

// liveOf returns the federates of hs that are still members (self is
// none).
func (f *federation) liveOf(hs []FederateHandle) []FederateHandle {
	var out []FederateHandle
	for _, h := range hs {
		if _, ok := f.members[h]; ok {
			out = append(out, h)
		}
	}
	return out
}

// decides reports whether self decides what coord asked of the
// federates parts: coord does while it is a member; once it is gone,
// the live federate of parts with the lowest handle, self counted.
func (f *federation) decides(self, coord FederateHandle, parts []FederateHandle) bool {
	if coord == self {
		return true
	}
	if f.isMember(coord) {
		return false
	}
	for _, h := range f.liveOf(parts) {
		if h < self {
			return false
		}
	}
	return true
}

// directiveOf returns the resign directive that applies to member h,
// lost: its own (keyResignDirective) if it set one, else the
// federation's.
func (f *federation) directiveOf(h FederateHandle) ResignAction {
	if v, _, ok := f.state(h, keyResignDirective); ok && len(v) == 1 && ResignAction(v[0]).Valid() {
		return ResignAction(v[0])
	}
	return f.directive
}

// ---- Control-plane operations ----

// start numbers op and remembers done, which takes its answer; the
// caller hands the op to the driver.
func (f *federation) start(op Op, done func(OpResult)) Op {
	f.lastOp++
	op.ID = f.lastOp
	f.waiting[op.ID] = done
	return op
}

// answered returns what takes the answer to op id, and forgets the op;
// false for an op that is not waiting.
func (f *federation) answered(id uint64) (func(OpResult), bool) {
	done, ok := f.waiting[id]
	if ok {
		delete(f.waiting, id)
	}
	return done, ok
}

// ---- The others' replicated state ----

// noteState records member h's key at version; false when the version
// is not newer than the one known (nothing changed).
func (f *federation) noteState(h FederateHandle, key string, value []byte, version uint64) bool {
	st := inner(f.states, h)
	if cur, ok := st[key]; ok && cur.version >= version {
		return false
	}
	st[key] = stateValue{value: value, version: version}
	return true
}

// state returns h's key and its version; false when it has none.
func (f *federation) state(h FederateHandle, key string) ([]byte, uint64, bool) {
	v, ok := f.states[h][key]
	if !ok || v.value == nil {
		return nil, v.version, false
	}
	return v.value, v.version, true
}

// eachState calls fn with every federate's value of key, in handle
// order: what came before the state that gives it a meaning (a
// synchronization point's achievements, a save's statuses).
func (f *federation) eachState(key string, fn func(h FederateHandle, value []byte)) {
	hs := make([]FederateHandle, 0, len(f.states))
	for h, st := range f.states {
		if v, ok := st[key]; ok && v.value != nil {
			hs = append(hs, h)
		}
	}
	slices.Sort(hs)
	for _, h := range hs {
		fn(h, f.states[h][key].value)
	}
}

// ---- Resign notices ----

// releasedToken is an ownership token a resigning federate gave up, and
// the epoch at which it is unowned.
type releasedToken struct {
	obj   ObjectInstanceHandle
	attr  AttributeHandle
	epoch uint64
}

// appendReleased encodes the tokens of a resign notice
// (wireMsg.Data of kindResign): for each, the instance's federate and
// serial, the attribute, the epoch.
func appendReleased(b []byte, ts []releasedToken) []byte {
	for _, t := range ts {
		b = binary.AppendUvarint(b, uint64(t.obj.Federate))
		b = binary.AppendUvarint(b, t.obj.Serial)
		b = binary.AppendUvarint(b, uint64(t.attr))
		b = binary.AppendUvarint(b, t.epoch)
	}
	return b
}

// decodeReleased decodes what appendReleased wrote; false when b does
// not decode.
func decodeReleased(b []byte) ([]releasedToken, bool) {
	var out []releasedToken
	for len(b) > 0 {
		var v [4]uint64
		for i := range v {
			x, n := binary.Uvarint(b)
			if n <= 0 {
				return out, false
			}
			v[i], b = x, b[n:]
		}
		out = append(out, releasedToken{
			obj:   ObjectInstanceHandle{Federate: FederateHandle(v[0]), Serial: v[1]},
			attr:  AttributeHandle(v[2]),
			epoch: v[3],
		})
	}
	return out, true
}
