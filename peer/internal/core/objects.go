package core

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/meshrti/meshrti/ddm"
	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer/dgram"
	"github.com/meshrti/meshrti/peer/hla"
)

// objects is the object-management sub-machine: the instances this
// federate knows, registered here or discovered, by handle and by name.
//
// An instance is identified apart from who updates it: its handle is
// (registering federate, serial), unique without coordination, and any
// federate that holds one of its attributes' tokens (ownership.go) sends
// updates for it, announces it to new subscribers, or deletes it with the
// delete privilege. A receiver discovers an instance from its
// registration, from an owner's answer to a discovery query, or from an
// update, always under its registered name: RTI-chosen names are derived
// from the handle, and an update of an instance with a reserved name says
// so (wireMsg.Named) and carries the name while its sender may have
// receivers that joined recently; an update that says so without the name
// waits (a bounded while) for the registration that names it.
type objects struct {
	self   FederateHandle
	serial uint64
	inst   map[ObjectInstanceHandle]*instance
	names  map[string]ObjectInstanceHandle

	reserved map[string]bool // names reserved by this federate, not yet used

	// Instances removed here, and federates whose instances were all
	// removed (lost, under a deleting directive), so that a message
	// still in flight (a time-stamped update held until a grant) cannot
	// bring one back.
	deleted map[ObjectInstanceHandle]bool
	gone    map[FederateHandle]bool

	// Instances this federate deleted locally, each with the count of
	// discovery queries it had sent then (queries). An announcement
	// answers a query; one that comes before this federate asks again
	// answers a query older than the local delete, and does not bring
	// the instance back: its next update does (§6.16).
	localDeleted map[ObjectInstanceHandle]uint64
	queries      uint64

	// Order-type overrides (changeAttributeOrderType and
	// changeInteractionOrderType): they replace the FOM's order for this
	// federate's sends.
	attrOrder map[ObjectInstanceHandle]map[AttributeHandle]OrderType
	intOrder  map[InteractionClassHandle]OrderType

	// Transportation overrides (requestAttributeTransportationTypeChange
	// and requestInteractionTransportationTypeChange) for this
	// federate's sends.
	attrTransport map[ObjectInstanceHandle]map[AttributeHandle]hla.TransportationType
	intTransport  map[InteractionClassHandle]hla.TransportationType

	// Rate-limited subscriptions: the tick each instance was last
	// reflected, and the values that came since, merged, waiting for the
	// next slot.
	rateLast map[ObjectInstanceHandle]int64
	rateHeld map[ObjectInstanceHandle]*hla.ReflectAttributeValues

	// Multiple name reservations under way.
	multi []*multiReservation

	answerBuf []ObjectInstanceHandle // answerQuery's scratch

	// unnamed holds updates of instances with reserved names heard
	// before their name, until the name comes (or they expire).
	unnamed map[ObjectInstanceHandle]*unnamedUpdates
	ticks   int64

	// update's scratch space, reused by every update: the messages it
	// returns are encoded and sent before the call returns and never
	// kept.
	updPairs [updKinds][]valuePair
	updMsgs  [updKinds]wireMsg
	updOut   []outMsg
	updIn    *instance // the instance of the last update

	// The MOM's update and reflection counts of instances forgotten, by
	// registered class (instance.momUpd, momRefl).
	goneUpd, goneRefl map[uint64][2]uint64
}

// instance is an object instance this federate knows.
type instance struct {
	class *fomxml.ObjectClass // registered class
	known *fomxml.ObjectClass // the class this federate knows it as
	name  string
	named bool // the name was reserved, not derived from the handle
	// momSeen says whether this federate updated (momUpdated) or
	// reflected (momReflected) the instance yet, and momUpd and momRefl
	// count its updates sent and reflections received, reliable [0] and
	// best effort [1], for the MOM's counts (kept per class once the
	// instance is forgotten: objects.gone...).
	momSeen uint8
	momUpd  [2]uint32
	momRefl [2]uint32
}

// unnamedUpdates are updates waiting for their instance's name.
type unnamedUpdates struct {
	since int64
	msgs  []heldMsg
}

// updKinds is how many ways an update's values split (see update).
const updKinds = 4

// Bounds of the wait for a reserved name (see objects): an instance's
// updates wait at most unnamedTicks ticks, at most maxUnnamed of them.
const (
	unnamedTicks = 2000
	maxUnnamed   = 256
)

// nameWindowTicks is how long after a sender learned of a new receiver
// on a group its updates of instances with reserved names carry the
// name: a receiver that joined late learns the name from the owner's
// answer to its discovery query, sent at once, well within this.
const nameWindowTicks = 400

func newObjects(self FederateHandle) objects {
	return objects{
		self:         self,
		inst:         make(map[ObjectInstanceHandle]*instance),
		names:        make(map[string]ObjectInstanceHandle),
		reserved:     make(map[string]bool),
		deleted:      make(map[ObjectInstanceHandle]bool),
		gone:         make(map[FederateHandle]bool),
		localDeleted: make(map[ObjectInstanceHandle]uint64),
		attrOrder:    make(map[ObjectInstanceHandle]map[AttributeHandle]OrderType),
		intOrder:     make(map[InteractionClassHandle]OrderType),

		attrTransport: make(map[ObjectInstanceHandle]map[AttributeHandle]hla.TransportationType),
		intTransport:  make(map[InteractionClassHandle]hla.TransportationType),
		rateLast:      make(map[ObjectInstanceHandle]int64),
		rateHeld:      make(map[ObjectInstanceHandle]*hla.ReflectAttributeValues),
		unnamed:       make(map[ObjectInstanceHandle]*unnamedUpdates),
	}
}

// generatedName is the RTI-chosen name of instance h: it starts with HLA,
// which federates may not reserve, and holds the unique handle, so it
// never collides, and every federate derives it alike.
func generatedName(h ObjectInstanceHandle) string {
	return "HLAobject_" + strconv.FormatUint(uint64(h.Federate), 10) + "_" + strconv.FormatUint(h.Serial, 10)
}

// CheckName applies the standard's rule for object instance and
// federate names: not empty, and not starting with "HLA" (reserved for
// the RTI).
func CheckName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty name", hla.ErrIllegalName)
	}
	if strings.HasPrefix(name, "HLA") {
		return fmt.Errorf("%w: %q starts with HLA", hla.ErrIllegalName, name)
	}
	return nil
}

// ---- Services ----

// ReserveObjectInstanceName (§6.2) asks the federation for a unique
// object instance name, through the control plane's register (an Op);
// the answer comes as an ObjectInstanceNameReservationSucceeded or
// ...Failed event.
func (c *Core) ReserveObjectInstanceName(name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	c.startOp(Op{Kind: OpAcquire, Key: nameKey(name)}, func(r OpResult) {
		if r.Err == nil && r.Held {
			c.objects.reserved[name] = true
			c.push(hla.ObjectInstanceNameReservationSucceeded{Name: name})
			return
		}
		c.push(hla.ObjectInstanceNameReservationFailed{Name: name})
	})
	return nil
}

// RegisterObjectInstance (§6.8) creates an instance of a published class
// and returns its handle. name is "" for an RTI-chosen name, otherwise a
// name this federate reserved. The federate holds the tokens of the
// attributes it publishes and of the privilege to delete.
func (c *Core) RegisterObjectInstance(class ObjectClassHandle, name string) (ObjectInstanceHandle, error) {
	return c.register(class, name, nil)
}

// register registers an instance of class, its attributes associated
// with the regions of pairs (checked) before it is announced, so that
// the announcement carries them.
func (c *Core) register(class ObjectClassHandle, name string, pairs []AttributeRegions) (ObjectInstanceHandle, error) {
	oc, err := c.objectClass(class)
	if err != nil {
		return ObjectInstanceHandle{}, err
	}
	pub := c.declared.pubObj[class]
	if len(pub) == 0 {
		return ObjectInstanceHandle{}, fmt.Errorf("%w: %s", hla.ErrObjectClassNotPublished, oc.QualifiedName)
	}
	o := &c.objects
	named := name != ""
	if named {
		if _, used := o.names[name]; used {
			return ObjectInstanceHandle{}, fmt.Errorf("%w: %q", hla.ErrObjectInstanceNameInUse, name)
		}
		if !o.reserved[name] {
			return ObjectInstanceHandle{}, fmt.Errorf("%w: %q", hla.ErrObjectInstanceNameNotReserved, name)
		}
		delete(o.reserved, name)
	}
	o.serial++
	h := ObjectInstanceHandle{Federate: c.self, Serial: o.serial}
	if !named {
		name = generatedName(h)
	}
	in := &instance{class: oc, known: oc, name: name, named: named}
	o.inst[h] = in
	o.names[name] = h
	c.ownership.register(h, pub, privilegeToDelete(oc))
	if pairs != nil {
		if err := c.AssociateRegionsForUpdates(h, pairs); err != nil {
			return h, err // cannot happen: checked before
		}
	}
	_, err = c.send(outMsg{group: c.routing.objectRoute(oc), reliable: true, msg: c.registerMsg(h, in)})
	c.attrRelevance(h)
	c.mom.registered++
	return h, err
}

// registerMsg announces instance h: its registered class and name, and
// the tokens the announcing federate holds of it that are not the
// registrar's first (attribute, epoch: what a receiver could not assume),
// so that a late receiver knows who owns what. The message is the
// core's scratch space: send encodes it before the next one.
func (c *Core) registerMsg(h ObjectInstanceHandle, in *instance) *wireMsg {
	m := &c.regMsg
	*m = wireMsg{Kind: kindRegister, Obj: h, Class: uint64(in.class.Handle), Name: in.name, Pairs: m.Pairs[:0]}
	c.regBuf = c.regBuf[:0]
	for a, e := range c.ownership.heldOf(h) {
		if e == 0 && c.ownership.registrar(h) == c.self {
			continue // the registrar's first token: every receiver assumes it
		}
		start := len(c.regBuf)
		c.regBuf = binary.AppendUvarint(c.regBuf, e)
		m.Pairs = append(m.Pairs, valuePair{H: uint64(a), V: c.regBuf[start:len(c.regBuf):len(c.regBuf)]})
	}
	if len(c.regBuf) > 0 {
		// Appending may have moved the buffer: point the values at its
		// final array.
		off := 0
		for i := range m.Pairs {
			n := len(m.Pairs[i].V)
			m.Pairs[i].V = c.regBuf[off : off+n : off+n]
			off += n
		}
	}
	sortPairs(m.Pairs)
	if len(c.regions.assoc) > 0 {
		m.Regions = c.instanceRegions(h)
	}
	return m
}

// privilegeToDelete returns the handle of class oc's HLAprivilegeToDeleteObject
// attribute (every class inherits it from the MIM's HLAobjectRoot), or 0.
func privilegeToDelete(oc *fomxml.ObjectClass) AttributeHandle {
	if a, ok := oc.Attribute("HLAprivilegeToDeleteObject"); ok {
		return a.Handle
	}
	return 0
}

// UpdateAttributeValues (§6.10) sends new values of attributes this
// federate owns; with a time (hasTime) it is the time-stamped overload:
// attributes whose order is TimeStamp travel in time-stamp order when
// the federate is regulating, and t must then be allowed
// (*hla.InvalidLogicalTimeError). It returns the message's retraction
// handle, valid when values went out in time-stamp order over reliable
// transport. ErrBlocked: back-pressure holds it, nothing was sent.
func (c *Core) UpdateAttributeValues(obj ObjectInstanceHandle, values AttributeValues, tag []byte, t LogicalTime) (MessageRetractionHandle, error) {
	hasTime, ts, reg, err := c.stamp(t)
	if err != nil {
		return MessageRetractionHandle{}, err
	}
	outs, err := c.update(obj, values, tag, hasTime, ts, reg)
	if err != nil {
		return MessageRetractionHandle{}, err
	}
	if c.blocked(outs) {
		return MessageRetractionHandle{}, ErrBlocked
	}
	mrh, err := c.sendAll(outs, ts)
	if err == nil && c.mom.class != nil {
		c.mom.updatesSent++
		in := c.objects.updIn
		if in.momSeen&momUpdated == 0 {
			c.mom.seen(in, momUpdated)
		}
		for _, o := range outs {
			if o.reliable {
				in.momUpd[0]++
			} else {
				in.momUpd[1]++
			}
		}
	}
	return mrh, err
}

// UpdateClass checks an update as UpdateAttributeValues does (a known
// instance, defined attributes this federate owns) and returns the
// instance's registered class, for update conditions applied before it.
func (c *Core) UpdateClass(h ObjectInstanceHandle, values AttributeValues) (ObjectClassHandle, error) {
	in, ok := c.objects.inst[h]
	if !ok {
		return 0, fmt.Errorf("%w: %v", hla.ErrObjectInstanceNotKnown, h)
	}
	if err := momGuard(h, hla.ErrAttributeNotOwned); err != nil {
		return 0, err
	}
	return in.class.Handle, c.checkOwned(h, in, values)
}

// checkOwned checks that values are of defined attributes this federate
// owns.
func (c *Core) checkOwned(h ObjectInstanceHandle, in *instance, values AttributeValues) error {
	held := c.ownership.heldOf(h)
	for a := range values {
		attr, ok := in.class.AttributeByHandle(a)
		if !ok {
			return fmt.Errorf("%w: attribute %d of class %s", hla.ErrAttributeNotDefined, a, in.class.QualifiedName)
		}
		if _, ok := held[a]; !ok {
			return fmt.Errorf("%w: %s of %v", hla.ErrAttributeNotOwned, attr.Name, h)
		}
	}
	return nil
}

// paramsOf returns the values of m's parameters that the interaction
// class as defines (it may be an ancestor of the class sent).
func paramsOf(m *wireMsg, as *fomxml.InteractionClass) ParameterValues {
	ps := pairsOf(m)
	vals := make(ParameterValues, len(ps))
	for _, p := range ps {
		if _, ok := as.ParameterByHandle(ParameterHandle(p.H)); ok {
			vals[ParameterHandle(p.H)] = p.V
		}
	}
	return vals
}

// stamp converts the optional time t of an update, interaction or delete
// (nil means none) and checks it with mayStamp, which also reports
// whether the federate is regulating.
func (c *Core) stamp(t LogicalTime) (hasTime bool, ts float64, regulating bool, err error) {
	if t != nil {
		if ts, err = c.timeKind.Value(t); err != nil {
			return false, ts, false, err
		}
		hasTime = true
	}
	regulating, err = c.mayStamp(hasTime, ts)
	return hasTime, ts, regulating, err
}

// update splits values into messages by transportation and order (and
// ownership epoch): tso says the message goes in time-stamp order (a
// time was given and the federate is regulating).
func (c *Core) update(h ObjectInstanceHandle, values AttributeValues, tag []byte, hasTime bool, t float64, regulating bool) ([]outMsg, error) {
	o := &c.objects
	in, ok := o.inst[h]
	if !ok {
		return nil, fmt.Errorf("%w: %v", hla.ErrObjectInstanceNotKnown, h)
	}
	if err := momGuard(h, hla.ErrAttributeNotOwned); err != nil {
		return nil, err
	}
	o.updIn = in
	// Values split by how they travel, in a deterministic order:
	// reliable before best effort, receive order before time stamp.
	const (
		tsoBit     = 1
		bestEffort = 2
	)
	split := &o.updPairs
	for k := range split {
		split[k] = split[k][:0]
	}
	held := c.ownership.heldOf(h)
	var epoch uint64
	mixed, first := false, true
	for a, v := range values {
		attr, ok := in.class.AttributeByHandle(a)
		if !ok {
			return nil, fmt.Errorf("%w: attribute %d of class %s", hla.ErrAttributeNotDefined, a, in.class.QualifiedName)
		}
		e, ok := held[a]
		if !ok {
			return nil, fmt.Errorf("%w: %s of %v", hla.ErrAttributeNotOwned, attr.Name, h)
		}
		if first {
			epoch, first = e, false
		} else if e != epoch {
			mixed = true
		}
		k := 0
		if !c.attrReliable(h, attr) {
			k |= bestEffort
		}
		if hasTime && regulating && c.attrTSO(h, attr) {
			k |= tsoBit
		}
		split[k] = append(split[k], valuePair{uint64(a), v})
	}
	if len(values) == 0 && len(held) == 0 {
		return nil, fmt.Errorf("%w: no attribute of %v", hla.ErrAttributeNotOwned, h)
	}
	route := c.routing.objectRoute(in.class)
	withName := in.named && c.endpoint.NewReceiverWithin(route, nameWindowTicks)
	out := o.updOut[:0]
	for k, vs := range split {
		// An update with no values still tells subscribers the object
		// exists.
		if len(vs) == 0 && (k != 0 || len(values) != 0) {
			continue
		}
		sortPairs(vs)
		m := &o.updMsgs[k]
		*m = wireMsg{
			Kind: kindUpdate, Obj: h, Class: uint64(in.class.Handle), Pairs: vs, Tag: tag,
			TSO: k&tsoBit != 0, HasTime: hasTime, Time: t, Epoch: epoch, Named: in.named,
		}
		if withName {
			m.Name = in.name
		}
		if mixed {
			out = splitEpochs(out, m, held, route, k&bestEffort == 0)
			continue
		}
		out = append(out, outMsg{group: route, reliable: k&bestEffort == 0, msg: m})
	}
	o.updOut = out
	if len(c.regions.assoc) > 0 {
		out = c.withRegions(out, h)
	}
	return out, nil
}

// splitEpochs appends one message per ownership epoch among m's values
// (attributes whose tokens moved a different number of times), so that
// every message carries the epoch of all its values.
func splitEpochs(out []outMsg, m *wireMsg, held map[AttributeHandle]uint64, route dgram.Group, reliable bool) []outMsg {
	var epochs []uint64
	for _, p := range m.Pairs {
		e := held[AttributeHandle(p.H)]
		if !slices.Contains(epochs, e) {
			epochs = append(epochs, e)
		}
	}
	slices.Sort(epochs)
	for _, e := range epochs {
		cp := *m
		cp.Epoch = e
		cp.Pairs = nil
		for _, p := range m.Pairs {
			if held[AttributeHandle(p.H)] == e {
				cp.Pairs = append(cp.Pairs, p)
			}
		}
		out = append(out, outMsg{group: route, reliable: reliable, msg: &cp})
	}
	return out
}

func (c *Core) reliable(transportation string) bool {
	if t, ok := c.fdd.Transportation(transportation); ok {
		return t.Reliable
	}
	return true
}

// SendInteraction (§6.12) sends an interaction of a published class; with
// a time, the time-stamped overload (see UpdateAttributeValues).
func (c *Core) SendInteraction(class InteractionClassHandle, values ParameterValues, tag []byte, t LogicalTime) (MessageRetractionHandle, error) {
	return c.sendInteraction(class, values, tag, t, nil)
}

// sendInteraction sends an interaction with regions (none: the default
// region).
func (c *Core) sendInteraction(class InteractionClassHandle, values ParameterValues, tag []byte, t LogicalTime, regions []ddm.Region) (MessageRetractionHandle, error) {
	return c.sendInteractionTo(class, ObjectInstanceHandle{}, values, tag, t, regions)
}

// sendInteractionTo sends an interaction, directed to obj when obj is not
// zero (directed.go: its sender checked the directed publication).
func (c *Core) sendInteractionTo(class InteractionClassHandle, obj ObjectInstanceHandle, values ParameterValues, tag []byte, t LogicalTime, regions []ddm.Region) (MessageRetractionHandle, error) {
	hasTime, ts, reg, err := c.stamp(t)
	if err != nil {
		return MessageRetractionHandle{}, err
	}
	ic, err := c.interactionClass(class)
	if err != nil {
		return MessageRetractionHandle{}, err
	}
	if obj.IsZero() && !c.declared.pubInt[class] {
		return MessageRetractionHandle{}, fmt.Errorf("%w: %s", hla.ErrInteractionClassNotPublished, ic.QualifiedName)
	}
	vals := make([]valuePair, 0, len(values))
	for p, v := range values {
		if _, ok := ic.ParameterByHandle(p); !ok {
			return MessageRetractionHandle{}, fmt.Errorf("%w: parameter %d of %s", hla.ErrInteractionParameterNotDefined, p, ic.QualifiedName)
		}
		vals = append(vals, valuePair{uint64(p), v})
	}
	sortPairs(vals)
	o := outMsg{group: c.routing.interactionRoute(ic), reliable: c.interactionReliable(ic), msg: &wireMsg{
		Kind: kindInteraction, Class: uint64(class), Obj: obj, Pairs: vals, Tag: tag,
		TSO: hasTime && reg && c.interactionTSO(ic), HasTime: hasTime, Time: ts,
	}}
	if len(regions) > 0 {
		o.msg.Regions = encodeRegions(regions)
		cells, plain := c.interactionTargets(ic, regions)
		if !route(&o, cells, plain) {
			c.stats.Spared++
			return MessageRetractionHandle{}, nil
		}
	}
	outs := []outMsg{o}
	if c.blocked(outs) {
		return MessageRetractionHandle{}, ErrBlocked
	}
	mrh, err := c.sendAll(outs, ts)
	if err == nil && c.mom.class != nil {
		c.mom.interactionsSent++
		c.mom.count(c.mom.sentByClass, class, o.reliable)
		if ic.IsMOM() {
			c.momInteraction(ic, vals, c.self)
		}
	}
	return mrh, err
}

// DeleteObjectInstance (§6.14) deletes an instance whose delete privilege
// this federate holds; with a time, a regulating federate's delete
// travels in time-stamp order. Retracting a delete does not give the
// instance back to the sender: only the receivers that had not yet been
// delivered the removal keep it.
func (c *Core) DeleteObjectInstance(obj ObjectInstanceHandle, tag []byte, t LogicalTime) (MessageRetractionHandle, error) {
	hasTime, ts, reg, err := c.stamp(t)
	if err != nil {
		return MessageRetractionHandle{}, err
	}
	if err := momGuard(obj, hla.ErrDeletePrivilegeNotHeld); err != nil {
		return MessageRetractionHandle{}, err
	}
	o, err := c.deleteMsg(obj, tag, hasTime, ts, reg)
	if err != nil {
		return MessageRetractionHandle{}, err
	}
	mrh, err := c.sendAll([]outMsg{o}, ts)
	if err == nil {
		c.mom.deleted++
	}
	return mrh, err
}

// deleteMsg removes an instance whose delete privilege this federate
// holds and returns the message that tells the others.
func (c *Core) deleteMsg(h ObjectInstanceHandle, tag []byte, hasTime bool, t float64, regulating bool) (outMsg, error) {
	in, ok := c.objects.inst[h]
	if !ok {
		return outMsg{}, fmt.Errorf("%w: %v", hla.ErrObjectInstanceNotKnown, h)
	}
	epoch, ok := c.ownership.holds(h, privilegeToDelete(in.class))
	if !ok {
		return outMsg{}, fmt.Errorf("%w: object %v", hla.ErrDeletePrivilegeNotHeld, h)
	}
	c.objects.forget(h, in)
	c.ownership.forget(h)
	c.forgetAssociations(h)
	c.attrRelevance(h)
	c.rescope(h, true)
	return outMsg{group: c.routing.objectRoute(in.class), reliable: true, msg: &wireMsg{
		Kind: kindDelete, Obj: h, Class: uint64(in.class.Handle), Tag: tag,
		TSO: hasTime && regulating, HasTime: hasTime, Time: t, Epoch: epoch,
	}}, nil
}

// forget removes instance h (known as in) from the tables.
func (o *objects) forget(h ObjectInstanceHandle, in *instance) {
	if in.momUpd != [2]uint32{} || in.momRefl != [2]uint32{} {
		addCounts(&o.goneUpd, uint64(in.class.Handle), in.momUpd)
		addCounts(&o.goneRefl, uint64(in.class.Handle), in.momRefl)
	}
	delete(o.inst, h)
	if o.names[in.name] == h {
		delete(o.names, in.name)
	}
	delete(o.attrOrder, h)
	delete(o.attrTransport, h)
	delete(o.unnamed, h)
	delete(o.rateLast, h)
	delete(o.rateHeld, h)
}

// ---- Support services on objects (§10) ----

// ObjectInstanceHandle returns the instance known here by name (§10.9).
func (c *Core) ObjectInstanceHandle(name string) (ObjectInstanceHandle, error) {
	h, ok := c.objects.names[name]
	if !ok {
		return ObjectInstanceHandle{}, fmt.Errorf("%w: %q", hla.ErrObjectInstanceNotKnown, name)
	}
	return h, nil
}

// ObjectInstanceName returns the name of a known instance (§10.10).
func (c *Core) ObjectInstanceName(h ObjectInstanceHandle) (string, error) {
	in, ok := c.objects.inst[h]
	if !ok {
		return "", fmt.Errorf("%w: %v", hla.ErrObjectInstanceNotKnown, h)
	}
	return in.name, nil
}

// KnownObjectClass returns the class an instance is known as here
// (§10.8).
func (c *Core) KnownObjectClass(h ObjectInstanceHandle) (ObjectClassHandle, error) {
	in, ok := c.objects.inst[h]
	if !ok {
		return 0, fmt.Errorf("%w: %v", hla.ErrObjectInstanceNotKnown, h)
	}
	return in.known.Handle, nil
}

// ---- Receiving ----

// answerQuery answers a discovery query for class (or, with obj set, for
// one instance): this federate announces the instances of exactly that
// class it holds tokens of.
func (c *Core) answerQuery(class uint64, obj ObjectInstanceHandle) {
	if !obj.IsZero() {
		if in, ok := c.objects.inst[obj]; ok && c.ownership.holdsAny(obj) {
			c.sendAnnouncement(obj, in)
		} else if obj == c.momHandle() && c.mom.class != nil {
			c.sendAnnouncement(obj, c.mom.instance)
		}
		return
	}
	oc, ok := c.fdd.ObjectClassByHandle(ObjectClassHandle(class))
	if !ok {
		return
	}
	if oc == c.mom.class && c.mom.class != nil {
		c.sendAnnouncement(c.momHandle(), c.mom.instance)
	}
	hs := c.objects.answerBuf[:0]
	for h, in := range c.objects.inst {
		if in.class == oc && c.ownership.holdsAny(h) {
			hs = append(hs, h)
		}
	}
	slices.SortFunc(hs, compareHandles)
	for _, h := range hs {
		c.sendAnnouncement(h, c.objects.inst[h])
	}
	c.objects.answerBuf = hs[:0]
}

// sendQuery sends a discovery query; the owners that hear it announce
// their instances.
func (c *Core) sendQuery(q outMsg) error {
	c.objects.queries++
	_, err := c.send(q)
	return err
}

func (c *Core) sendAnnouncement(h ObjectInstanceHandle, in *instance) {
	if _, err := c.send(outMsg{group: c.routing.objectRoute(in.class), reliable: true, msg: c.registerMsg(h, in)}); err != nil {
		c.stats.Malformed++ // cannot happen: a registration fits any frame
	}
}

// delivery is how a message reached the federate: its sender, the order
// it is delivered in, and its transportation.
type delivery struct {
	from     FederateHandle
	received OrderType
	reliable bool
	// outside, for a message with regions that waited (a held
	// receive-order message, a queued time-stamped one), is what its
	// regions did not let through when it arrived (arrivalOutside): a
	// region that moves over it while it waits does not let it in.
	outside arrivalFilter
}

// apply turns one delivered message into events, appended to evs (a
// reused buffer: no allocation for the slice on the hot path).
func (c *Core) apply(evs []Event, m *wireMsg, d delivery) []Event {
	sent := Receive
	if m.TSO {
		sent = TimeStamp
	}
	var t LogicalTime
	if m.HasTime {
		t = c.timeKind.Make(m.Time)
	}
	var mrh MessageRetractionHandle
	if m.TSO && d.reliable { // the sender gives out handles for these only
		mrh = MessageRetractionHandle{Federate: d.from, Serial: m.ID}
	}
	o := &c.objects
	switch m.Kind {
	case kindRegister:
		if len(m.Regions) > 0 && o.inst[m.Obj] == nil && !c.discoveryPasses(m.Regions, m.Class) {
			c.stats.Filtered++
			return evs
		}
		if q, ok := o.localDeleted[m.Obj]; ok && q == o.queries {
			return evs // an answer to a query older than the local delete
		}
		evs, found := c.discover(evs, m.Obj, m.Class, m.Name, d.from)
		if found {
			for _, p := range m.Pairs {
				e, n := binary.Uvarint(p.V)
				if n <= 0 {
					c.stats.Malformed++
					continue
				}
				if _, l := c.ownership.accept(m.Obj, AttributeHandle(p.H), d.from, e); l {
					c.traceOwner(m.Obj, AttributeHandle(p.H), d.from, e)
				}
			}
			evs = c.rescopeTo(evs, m.Obj, false)
		}
		return evs
	case kindRequestUpdate:
		c.onRequestUpdate(m, d.from)
		return evs
	case kindUpdate:
		oc, ok := c.fdd.ObjectClassByHandle(ObjectClassHandle(m.Class))
		if !ok {
			return evs
		}
		in := o.inst[m.Obj]
		if in == nil {
			if len(m.Regions) > 0 {
				as := c.declared.subscribedAs(oc)
				if as == nil || d.outside.all || !c.anyAttrPasses(m.Regions, as, pairsOf(m)) {
					c.stats.Filtered++
					return evs
				}
			}
			name := m.Name
			switch {
			case m.Named && name == "":
				// Its name comes with its registration: wait for it.
				c.holdUnnamed(m, d)
				return evs
			case !m.Named:
				name = generatedName(m.Obj)
			}
			var found bool
			if evs, found = c.discover(evs, m.Obj, m.Class, name, d.from); !found {
				return evs
			}
			in = o.inst[m.Obj]
		}
		sub := c.declared.subObj[in.known.Handle]
		ps := pairsOf(m)
		vals := make(AttributeValues, len(ps))
		var learned []AttributeHandle
		for _, p := range ps {
			a := AttributeHandle(p.H)
			if _, ok := oc.AttributeByHandle(a); !ok {
				continue
			}
			ok, l := c.ownership.accept(m.Obj, a, d.from, m.Epoch)
			if l {
				learned = append(learned, a)
				c.traceOwner(m.Obj, a, d.from, m.Epoch)
			}
			if !ok {
				c.stats.Stale++
				continue
			}
			if sub[a] {
				if len(m.Regions) > 0 && (d.outside.has(a) || !c.attrPasses(m.Regions, in.known, a)) {
					c.stats.Filtered++
					continue
				}
				vals[a] = p.V
			}
		}
		if len(learned) > 0 {
			evs = c.rescopeTo(evs, m.Obj, false)
			c.ownerMoved(m.Obj, in, learned, d.from)
		}
		if (len(m.Regions) > 0 || len(c.regions.lastRegions) > 0 && c.regions.lastRegions[m.Obj] != nil) && c.noteRegions(m.Obj, ps, m.Regions) && len(learned) == 0 {
			evs = c.rescopeTo(evs, m.Obj, false)
		}
		if len(vals) == 0 {
			return evs
		}
		ev := hla.ReflectAttributeValues{
			Object: m.Obj, Values: vals, Tag: m.Tag, SentOrder: sent, ReceivedOrder: d.received,
			Time: t, Producer: d.from, Transportation: transportName(d.reliable), Retraction: mrh,
		}
		if rate := c.declared.subMode[in.known.Handle].rate; rate != "" && !m.TSO && c.rateHold(ev, rate) {
			return evs
		}
		if in.momSeen&momReflected == 0 {
			c.mom.seen(in, momReflected)
		}
		if d.reliable {
			in.momRefl[0]++
		} else {
			in.momRefl[1]++
		}
		return append(evs, ev)
	case kindDelete:
		in := o.inst[m.Obj]
		if in == nil {
			return evs
		}
		ok, l := c.ownership.accept(m.Obj, privilegeToDelete(in.class), d.from, m.Epoch)
		if l {
			c.traceOwner(m.Obj, privilegeToDelete(in.class), d.from, m.Epoch)
		}
		if !ok {
			c.stats.Stale++
			return evs
		}
		o.forget(m.Obj, in)
		o.deleted[m.Obj] = true
		c.ownership.forget(m.Obj)
		c.forgetAssociations(m.Obj)
		c.rescope(m.Obj, true)
		return append(evs, hla.RemoveObjectInstance{Object: m.Obj, Tag: m.Tag, SentOrder: sent, ReceivedOrder: d.received, Time: t, Producer: d.from, Retraction: mrh})
	case kindInteraction:
		ic, ok := c.fdd.InteractionClassByHandle(InteractionClassHandle(m.Class))
		if !ok {
			return evs
		}
		if !m.Obj.IsZero() {
			return c.applyDirected(evs, m, d, ic, sent, t, mrh)
		}
		as := c.declared.interactionSubscribedAs(ic)
		if as == nil {
			return evs
		}
		if c.mom.class != nil {
			c.mom.count(c.mom.receivedByClass, ic.Handle, d.reliable)
		}
		if len(m.Regions) > 0 && (d.outside.all || !c.regionsPass(m.Regions, c.regions.intSubs[as.Handle], c.dimsOf(ic.Dimensions))) {
			c.stats.Filtered++
			return evs
		}
		vals := paramsOf(m, as)
		return append(evs, hla.ReceiveInteraction{
			Class: as.Handle, Values: vals, Tag: m.Tag, SentOrder: sent, ReceivedOrder: d.received,
			Time: t, Producer: d.from, Transportation: transportName(d.reliable), Retraction: mrh,
		})
	}
	return evs
}

func transportName(reliable bool) string {
	if reliable {
		return "HLAreliable"
	}
	return "HLAbestEffort"
}

// discover records a newly heard instance and appends its discover event,
// when the federate subscribes to its class or an ancestor and does not
// know it yet. found reports whether the instance is known afterwards.
// Updates that waited for its name follow.
func (c *Core) discover(evs []Event, h ObjectInstanceHandle, class uint64, name string, from FederateHandle) ([]Event, bool) {
	o := &c.objects
	if _, ok := o.inst[h]; ok {
		return evs, true
	}
	if h.IsZero() || c.ownership.registrar(h) == c.self && !isMOM(h) || name == "" {
		return evs, false
	}
	if o.deleted[h] || o.gone[h.Federate] {
		// Removed already; a late message does not bring it back.
		return evs, false
	}
	oc, ok := c.fdd.ObjectClassByHandle(ObjectClassHandle(class))
	if !ok {
		return evs, false
	}
	as := c.declared.subscribedAs(oc)
	if as == nil {
		return evs, false
	}
	in := &instance{class: oc, known: as, name: name, named: name != generatedName(h)}
	o.inst[h] = in
	delete(o.localDeleted, h)
	o.names[name] = h
	evs = append(evs, hla.DiscoverObjectInstance{Object: h, Class: as.Handle, Name: name, Producer: from})
	if w := o.unnamed[h]; w != nil {
		delete(o.unnamed, h)
		for _, u := range w.msgs {
			evs = c.apply(evs, u.msg, u.d)
		}
	}
	return evs, true
}

// holdUnnamed keeps an update of an unknown instance with a reserved
// name until its registration names it, and asks the instance's owners
// to announce it.
func (c *Core) holdUnnamed(m *wireMsg, d delivery) {
	o := &c.objects
	if o.deleted[m.Obj] || o.gone[m.Obj.Federate] {
		return
	}
	w := o.unnamed[m.Obj]
	if w == nil {
		w = &unnamedUpdates{since: o.ticks}
		o.unnamed[m.Obj] = w
		if oc, ok := c.fdd.ObjectClassByHandle(ObjectClassHandle(m.Class)); ok {
			q := outMsg{group: c.routing.objectRoute(oc), reliable: true, msg: &wireMsg{Kind: kindQuery, Class: m.Class, Obj: m.Obj}}
			if err := c.sendQuery(q); err != nil {
				c.stats.Unnamed++
			}
		}
	}
	if len(w.msgs) >= maxUnnamed {
		w.msgs = w.msgs[1:]
		c.stats.Unnamed++
	}
	w.msgs = append(w.msgs, heldMsg{keep(m), d})
}

// tick expires the updates that waited too long for their name.
func (o *objects) tick(c *Core) {
	o.ticks++
	if len(o.rateHeld) > 0 {
		c.rateFlush()
	}
	if len(c.ownership.retry) > 0 {
		c.retryClaims()
	}
	if len(o.unnamed) == 0 {
		return
	}
	for h, w := range o.unnamed {
		if o.ticks-w.since > unnamedTicks {
			c.stats.Unnamed += uint64(len(w.msgs))
			delete(o.unnamed, h)
		}
	}
}

// removeFederate handles the instances of a federate that left. lost
// says it was lost rather than resigning; deletes says its instances
// whose delete privilege it held are removed (a resign that deleted, or
// a lost federate under a deleting automatic resign directive). The
// remove events come in handle order.
func (c *Core) removeFederate(f FederateHandle, deletes bool) {
	o := &c.objects
	if h := (ObjectInstanceHandle{Federate: f, Serial: momSerial}); o.inst[h] != nil {
		// Its MOM instance goes with it, whatever the action.
		o.forget(h, o.inst[h])
		c.ownership.forget(h)
		c.rescope(h, true)
		c.push(hla.RemoveObjectInstance{Object: h, SentOrder: Receive, ReceivedOrder: Receive, Producer: f})
	}
	if !deletes {
		c.ownership.ownerLeft(f)
		c.rescopeOwner(f)
		c.ownersLeft(f)
		return
	}
	o.gone[f] = true
	for h := range o.localDeleted {
		if h.Federate == f {
			delete(o.localDeleted, h)
		}
	}
	var hs []ObjectInstanceHandle
	for h, in := range o.inst {
		if c.ownership.ownerOf(h, privilegeToDelete(in.class)) == f {
			hs = append(hs, h)
		}
	}
	slices.SortFunc(hs, compareHandles)
	for _, h := range hs {
		o.forget(h, o.inst[h])
		c.ownership.forget(h)
		c.forgetAssociations(h)
		c.rescope(h, true)
		if c.tracer != nil {
			c.traceRemoved(h)
		}
		c.push(hla.RemoveObjectInstance{Object: h, SentOrder: Receive, ReceivedOrder: Receive, Producer: f})
	}
	for h := range o.unnamed {
		if h.Federate == f {
			delete(o.unnamed, h)
		}
	}
	c.ownership.ownerLeft(f)
	c.rescopeOwner(f)
	c.ownersLeft(f)
}

// compareHandles orders instance handles by registrar, then serial.
func compareHandles(a, b ObjectInstanceHandle) int {
	if r := cmp.Compare(a.Federate, b.Federate); r != 0 {
		return r
	}
	return cmp.Compare(a.Serial, b.Serial)
}

// sortPairs sorts values by handle (a handful: insertion sort).
func sortPairs(ps []valuePair) {
	for i := 1; i < len(ps); i++ {
		for j := i; j > 0 && ps[j].H < ps[j-1].H; j-- {
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
}

// ---- Order-type overrides (§8.23, §8.24) ----

// attrTSO reports whether attribute a of instance h is sent in
// time-stamp order: the federate's override, else the FOM's order.
func (c *Core) attrTSO(h ObjectInstanceHandle, a *fomxml.Attribute) bool {
	if ot, ok := c.objects.attrOrder[h][a.Handle]; ok {
		return ot == TimeStamp
	}
	return a.Order == fomxml.OrderTimeStamp
}

// interactionTSO reports whether interactions of class ic are sent in
// time-stamp order.
func (c *Core) interactionTSO(ic *fomxml.InteractionClass) bool {
	if ot, ok := c.objects.intOrder[ic.Handle]; ok {
		return ot == TimeStamp
	}
	return ic.Order == fomxml.OrderTimeStamp
}

func checkOrder(order OrderType) error {
	if order != Receive && order != TimeStamp {
		return fmt.Errorf("%w: %d", hla.ErrInvalidOrderType, int(order))
	}
	return nil
}

// ChangeAttributeOrderType (§8.23) sets the order (Receive or TimeStamp)
// in which this federate sends the given attributes of an instance,
// overriding the FOM. It must own them.
func (c *Core) ChangeAttributeOrderType(h ObjectInstanceHandle, order OrderType, hs []AttributeHandle) error {
	if err := checkOrder(order); err != nil {
		return err
	}
	if _, err := c.heldInstance(h, hs); err != nil {
		return err
	}
	m := inner(c.objects.attrOrder, h)
	for _, a := range hs {
		m[a] = order
	}
	return nil
}

// ChangeInteractionOrderType (§8.24) sets the order in which this
// federate sends interactions of a class it publishes.
func (c *Core) ChangeInteractionOrderType(class InteractionClassHandle, order OrderType) error {
	if err := checkOrder(order); err != nil {
		return err
	}
	ic, err := c.interactionClass(class)
	if err != nil {
		return err
	}
	if !c.declared.pubInt[class] {
		return fmt.Errorf("%w: %s", hla.ErrInteractionClassNotPublished, ic.QualifiedName)
	}
	c.objects.intOrder[class] = order
	return nil
}
