package core

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/meshrti/meshrti/peer/hla"
)

// Synchronization points (IEEE 1516.1-2010 §4.11-§4.15), decided through
// the control plane (docs/synchronization.md):
//
//   - Registering a label takes the register key "sync/<label>": of two
//     federates that race for one label, one succeeds. The registrar then
//     publishes the point in its replicated state ("y/<label>": the tag,
//     the set, and the key's version, which tells one registration of a
//     label from a later one).
//   - Every federate of the set (every joined federate, for a
//     federation-wide point, late joiners too) that sees the point is
//     announced it. Achieving it publishes "a/<label>" (success, version)
//     in the achiever's state.
//   - One federate decides: the registrar, or, once it is gone, the
//     member with the lowest handle. When every live member of the set
//     achieved the point, it publishes "z/<label>" (version, the failed),
//     and everyone that was announced the point hears
//     FederationSynchronized. A member that resigns or is lost is no longer
//     waited for. The registrar then frees the key: the label is reusable.

// syncPoint is one synchronization point this federate knows of.
type syncPoint struct {
	registrar FederateHandle
	version   uint64
	tag       []byte
	set       []FederateHandle // sorted; nil: every joined federate
	announced bool             // to this federate
	achieved  map[FederateHandle]bool
	done      bool
	// joinedBefore is, once the registrar of a federation-wide point
	// is gone, the highest handle joined then: a federate joining later
	// reads no state of the registrar's, is never announced the point,
	// and is not waited for. 0 while the registrar is a member.
	joinedBefore FederateHandle
}

// syncState is the synchronization sub-machine.
type syncState struct {
	points map[string]*syncPoint
	// registering are the labels this federate asked to register, until
	// the register answers.
	registering map[string]bool
	// releasing are the labels whose register key this federate is
	// freeing after they synchronized, each with the registration asked
	// for meanwhile (nil: none), which starts once the key is free: until
	// then the key is still this federate's, and acquiring it would look
	// like a fresh registration.
	releasing map[string]func()
	// gone are the federates that resigned or were lost: a set member
	// not known here is waited for unless it is gone (it was joined when
	// the point was registered; its join may not have reached us yet).
	gone map[FederateHandle]bool
}

// notSeenYet reports whether federate f, which another member named as
// joined (in a synchronization point's set, a save's saved set), has not
// reached this federate yet: neither its join nor its departure was
// heard here.
func (c *Core) notSeenYet(f FederateHandle) bool {
	return f != c.self && !c.federation.isMember(f) && !c.syncPoints.gone[f]
}

func newSyncState() syncState {
	return syncState{
		points:      make(map[string]*syncPoint),
		registering: make(map[string]bool),
		releasing:   make(map[string]func()),
		gone:        make(map[FederateHandle]bool),
	}
}

// members reports whether f takes part in p.
func (p *syncPoint) member(f FederateHandle) bool {
	return p.set == nil || slices.Contains(p.set, f)
}

// RegisterFederationSynchronizationPoint (§4.11) registers label for the
// federates of set (nil: every joined federate);
// SynchronizationPointRegistrationSucceeded or Failed follows.
func (c *Core) RegisterFederationSynchronizationPoint(label string, tag []byte, set []FederateHandle) error {
	if err := c.check(); err != nil {
		return err
	}
	for _, f := range set {
		if f == 0 {
			return fmt.Errorf("%w: 0 in the synchronization set", hla.ErrInvalidFederateHandle)
		}
	}
	if set != nil {
		set = slices.Clone(set)
		slices.Sort(set)
		set = slices.Compact(set)
		if len(set) == 0 {
			set = nil
		}
	}
	// A label is unique while its point is pending: re-registering one's
	// own fails like anyone else's (the register would only say this
	// federate holds the key already).
	if p := c.syncPoints.points[label]; c.syncPoints.registering[label] || (p != nil && p.registrar == c.self && !p.done) {
		c.push(hla.SynchronizationPointRegistrationFailed{Label: label, Reason: hla.SynchronizationPointLabelNotUnique})
		return nil
	}
	c.syncPoints.registering[label] = true
	tag = slices.Clone(tag)
	start := func() { c.registerSync(label, tag, set) }
	if _, busy := c.syncPoints.releasing[label]; busy {
		c.syncPoints.releasing[label] = start
		return nil
	}
	start()
	return nil
}

// registerSync asks the register for label's key; with a set, on the
// condition that every federate of it is joined where the acquisition
// is decided, which is where joins are decided too: a federate whose
// join returned counts, whatever this federate was told of it yet.
func (c *Core) registerSync(label string, tag []byte, set []FederateHandle) {
	op := Op{Kind: OpAcquire, Key: registerSyncPoint + label, Value: tag}
	if set != nil {
		op.Joined = set
	}
	c.startOp(op, func(r OpResult) {
		delete(c.syncPoints.registering, label)
		if r.NotJoined {
			c.push(hla.SynchronizationPointRegistrationFailed{Label: label, Reason: hla.SynchronizationSetMemberNotJoined})
			return
		}
		if r.Err != nil || !r.Held {
			c.push(hla.SynchronizationPointRegistrationFailed{Label: label, Reason: hla.SynchronizationPointLabelNotUnique})
			return
		}
		p := &syncPoint{registrar: c.self, version: r.Version, tag: tag, set: set, achieved: make(map[FederateHandle]bool)}
		c.syncPoints.points[label] = p
		c.setState(keySyncPoint+label, encodeSyncPoint(p))
		c.push(hla.SynchronizationPointRegistrationSucceeded{Label: label})
		if p.member(c.self) {
			p.announced = true
			c.push(hla.AnnounceSynchronizationPoint{Label: label, Tag: slices.Clone(tag)})
		}
		c.syncCheck(label)
	})
}

// SynchronizationPointAchieved (§4.14) tells the federation this
// federate reached label (successfully or not). Errors:
// ErrSynchronizationPointLabelNotAnnounced.
func (c *Core) SynchronizationPointAchieved(label string, success bool) error {
	if err := c.check(); err != nil {
		return err
	}
	p := c.syncPoints.points[label]
	if p == nil || !p.announced || p.done {
		return fmt.Errorf("%w: %q", hla.ErrSynchronizationPointLabelNotAnnounced, label)
	}
	if _, ok := p.achieved[c.self]; ok {
		return fmt.Errorf("%w: %q was achieved already", hla.ErrSynchronizationPointLabelNotAnnounced, label)
	}
	p.achieved[c.self] = success
	v := binary.AppendUvarint([]byte{boolByte(success)}, p.version)
	c.setState(keySyncAchieved+label, v)
	c.syncCheck(label)
	return nil
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// encodeSyncPoint writes a point for the registrar's state: version,
// tag, and the set (count 0: federation-wide).
func encodeSyncPoint(p *syncPoint) []byte {
	b := binary.AppendUvarint(nil, p.version)
	b = binary.AppendUvarint(b, uint64(len(p.tag)))
	b = append(b, p.tag...)
	b = binary.AppendUvarint(b, uint64(len(p.set)))
	for _, f := range p.set {
		b = binary.AppendUvarint(b, uint64(f))
	}
	return b
}

// decodeHandles reads a count and that many handles.
func decodeHandles(r *wireReader) []FederateHandle {
	n := r.uvarint("count")
	if r.err != nil || n > uint64(len(r.b)) {
		if r.err == nil {
			r.err = errMalformed
		}
		return nil
	}
	out := make([]FederateHandle, 0, n)
	for range n {
		out = append(out, FederateHandle(r.uvarint("handle")))
	}
	return out
}

// syncStateChanged folds another federate's synchronization state into
// this federate's view.
func (c *Core) syncStateChanged(h FederateHandle, key string, value []byte) {
	switch {
	case strings.HasPrefix(key, keySyncPoint):
		label := key[len(keySyncPoint):]
		if value == nil {
			return // freed after it was synchronized
		}
		r := wireReader{b: value}
		version := r.uvarint("version")
		tag := r.bytes("tag")
		set := decodeHandles(&r)
		if r.err != nil || len(r.b) != 0 {
			c.stats.Malformed++
			return
		}
		if len(set) == 0 {
			set = nil
		}
		if p := c.syncPoints.points[label]; p != nil && p.version >= version {
			return
		}
		p := &syncPoint{registrar: h, version: version, tag: slices.Clone(tag), set: set, achieved: make(map[FederateHandle]bool)}
		c.syncPoints.points[label] = p
		// Achievements that came before the point did.
		c.federation.eachState(keySyncAchieved+label, func(f FederateHandle, v []byte) { c.noteAchieved(p, f, v) })
		if p.member(c.self) && c.federation.joined() {
			p.announced = true
			c.push(hla.AnnounceSynchronizationPoint{Label: label, Tag: slices.Clone(tag)})
		}
		c.syncCheck(label)
	case strings.HasPrefix(key, keySyncAchieved):
		label := key[len(keySyncAchieved):]
		if p := c.syncPoints.points[label]; p != nil && value != nil {
			c.noteAchieved(p, h, value)
			c.syncCheck(label)
		}
	case strings.HasPrefix(key, keySyncDone):
		label := key[len(keySyncDone):]
		if value == nil {
			return
		}
		r := wireReader{b: value}
		version := r.uvarint("version")
		failed := decodeHandles(&r)
		if r.err != nil || len(r.b) != 0 {
			c.stats.Malformed++
			return
		}
		if p := c.syncPoints.points[label]; p != nil && p.version == version {
			c.synchronized(label, p, failed)
		}
	}
}

// noteAchieved records f's achievement of p from its state value.
func (c *Core) noteAchieved(p *syncPoint, f FederateHandle, value []byte) {
	if len(value) < 2 || value[0] > 1 {
		c.stats.Malformed++
		return
	}
	if v, n := binary.Uvarint(value[1:]); n > 0 && v == p.version {
		p.achieved[f] = value[0] == 1
	}
}

// decider reports whether this federate decides p: its registrar, or,
// when the registrar is gone, the live member with the lowest handle.
func (c *Core) decider(p *syncPoint) bool {
	if p.registrar == c.self {
		return true
	}
	if c.federation.isMember(p.registrar) {
		return false
	}
	lowest := c.self
	for f := range c.federation.members {
		if p.member(f) && f < lowest && (p.joinedBefore == 0 || f <= p.joinedBefore) {
			lowest = f
		}
	}
	return lowest == c.self && p.member(c.self)
}

// syncCheck synchronizes label when this federate decides it and every
// live member achieved it.
func (c *Core) syncCheck(label string) {
	p := c.syncPoints.points[label]
	if p == nil || p.done || !c.decider(p) {
		return
	}
	live := []FederateHandle{c.self}
	for f := range c.federation.members {
		live = append(live, f)
	}
	for _, f := range p.set {
		if c.notSeenYet(f) {
			return // joined when the point was registered; not seen here yet
		}
	}
	var failed []FederateHandle
	for _, f := range live {
		if !p.member(f) || (p.joinedBefore != 0 && f > p.joinedBefore) {
			continue
		}
		ok, achieved := p.achieved[f]
		if !achieved {
			return
		}
		if !ok {
			failed = append(failed, f)
		}
	}
	slices.Sort(failed)
	b := binary.AppendUvarint(nil, p.version)
	b = binary.AppendUvarint(b, uint64(len(failed)))
	for _, f := range failed {
		b = binary.AppendUvarint(b, uint64(f))
	}
	c.setState(keySyncDone+label, b)
	c.synchronized(label, p, failed)
}

// synchronized ends p: FederationSynchronized for a federate that was
// announced it; the registrar frees the label; the states go.
func (c *Core) synchronized(label string, p *syncPoint, failed []FederateHandle) {
	if p.done {
		return
	}
	p.done = true
	delete(c.syncPoints.points, label)
	if p.announced && c.federation.joined() {
		c.push(hla.FederationSynchronized{Label: label, Failed: failed})
	}
	if _, mine := p.achieved[c.self]; mine {
		c.setState(keySyncAchieved+label, nil)
	}
	if p.registrar == c.self {
		c.setState(keySyncPoint+label, nil)
		c.syncPoints.releasing[label] = nil
		c.startOp(Op{Kind: OpRelease, Key: registerSyncPoint + label}, func(OpResult) {
			next := c.syncPoints.releasing[label]
			delete(c.syncPoints.releasing, label)
			if next != nil {
				next()
			}
		})
	}
}

// syncMembersChanged re-checks every point after federate h left (it is
// waited for no more; it may have been the decider) or joined (a set
// member the decider was waiting to hear of).
func (c *Core) syncMembersChanged(h FederateHandle, left bool) {
	if left {
		c.syncPoints.gone[h] = true
		for _, p := range c.syncPoints.points {
			if p.registrar == h && p.set == nil && p.joinedBefore == 0 {
				p.joinedBefore = max(h, c.self)
				for f := range c.federation.members {
					p.joinedBefore = max(p.joinedBefore, f)
				}
			}
		}
	}
	labels := keysOf(c.syncPoints.points)
	for _, l := range labels {
		c.syncCheck(l)
	}
}
