package core

import (
	"fmt"
	"slices"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer/hla"
)

// Requests for attribute values (1516.1-2010 §6.19, §6.20) and local
// deletes (§6.16).
//
// A request travels on the group of the instance's class (or of the
// class and its subclasses, for a request by class), where every owner
// of the class's attributes listens (owners publish the class). Each
// owner answers with ProvideAttributeValueUpdate for the attributes it
// owns; its federate then updates them.

// RequestAttributeValueUpdate (§6.19) asks the owners of attrs of
// instance obj for their current values. Errors:
// ErrObjectInstanceNotKnown, ErrAttributeNotDefined.
func (c *Core) RequestAttributeValueUpdate(obj ObjectInstanceHandle, attrs []AttributeHandle, tag []byte) error {
	in, err := c.ownedInstance(obj, attrs)
	if err != nil {
		return err
	}
	m := &wireMsg{Kind: kindRequestUpdate, Obj: obj, Class: uint64(in.class.Handle), Pairs: handlePairs(attrs), Tag: tag}
	switch obj {
	case c.momHandle():
		c.momRequested(obj, 0, m.Pairs, tag) // its RTI is here
		return nil
	case federationMOM:
		c.momFederationValues(attrs, tag) // every node has it
		return nil
	}
	_, err = c.send(outMsg{group: c.routing.objectRoute(in.class), reliable: true, msg: m})
	return err
}

// RequestClassAttributeValueUpdate (§6.19, the class overload) asks the
// owners of attrs of every instance of class (and its subclasses) for
// their current values. Errors: ErrObjectClassNotDefined,
// ErrAttributeNotDefined.
func (c *Core) RequestClassAttributeValueUpdate(class ObjectClassHandle, attrs []AttributeHandle, tag []byte) error {
	oc, err := c.classAttrs(class, attrs)
	if err != nil {
		return err
	}
	for _, r := range c.routing.subscriptionRoutes(oc) {
		m := &wireMsg{Kind: kindRequestUpdate, Class: uint64(r.class), Pairs: handlePairs(attrs), Tag: tag}
		if _, err := c.send(outMsg{group: r.group, reliable: true, msg: m}); err != nil {
			return err
		}
		if _, known := c.objects.inst[c.momHandle()]; known {
			c.momRequested(ObjectInstanceHandle{}, r.class, m.Pairs, tag) // this federate's own
		}
		if _, known := c.objects.inst[federationMOM]; known && c.mom.federationClass != nil && r.class == c.mom.federationClass.Handle {
			c.momFederationValues(attrs, tag)
		}
	}
	return nil
}

// handlePairs lists attribute handles as value pairs without values,
// ascending.
func handlePairs(attrs []AttributeHandle) []valuePair {
	hs := slices.Clone(attrs)
	slices.Sort(hs)
	hs = slices.Compact(hs)
	ps := make([]valuePair, len(hs))
	for i, a := range hs {
		ps[i] = valuePair{H: uint64(a)}
	}
	return ps
}

// onRequestUpdate answers another federate's request: one
// ProvideAttributeValueUpdate per instance this federate owns requested
// attributes of.
func (c *Core) onRequestUpdate(m *wireMsg, from FederateHandle) {
	if !m.Obj.IsZero() {
		c.provide(m.Obj, m.Pairs, m.Tag)
		return
	}
	oc, ok := c.fdd.ObjectClassByHandle(ObjectClassHandle(m.Class))
	if !ok {
		return
	}
	var hs []ObjectInstanceHandle
	for h := range c.ownership.held {
		if in := c.objects.inst[h]; in != nil && in.class == oc {
			hs = append(hs, h)
		}
	}
	slices.SortFunc(hs, compareHandles)
	for _, h := range hs {
		c.provide(h, m.Pairs, m.Tag)
	}
}

// provide asks this federate's federate to update the attributes of h
// among ps that it owns.
func (c *Core) provide(h ObjectInstanceHandle, ps []valuePair, tag []byte) {
	held := c.ownership.heldOf(h)
	if len(held) == 0 {
		return
	}
	var attrs []AttributeHandle
	for _, p := range ps {
		if _, ok := held[AttributeHandle(p.H)]; ok {
			attrs = append(attrs, AttributeHandle(p.H))
		}
	}
	if len(attrs) > 0 {
		c.push(hla.ProvideAttributeValueUpdate{Object: h, Attributes: attrs, Tag: slices.Clone(tag)})
	}
}

// LocalDeleteObjectInstance (§6.16) makes this federate forget an
// instance it knows: nobody else is told, and the instance is discovered
// again when it is next heard of (updated or announced). Errors:
// ErrObjectInstanceNotKnown; ErrFederateOwnsAttributes while this
// federate owns any of its attributes.
func (c *Core) LocalDeleteObjectInstance(obj ObjectInstanceHandle) error {
	in, ok := c.objects.inst[obj]
	if !ok {
		return fmt.Errorf("%w: %v", hla.ErrObjectInstanceNotKnown, obj)
	}
	if c.ownership.holdsAny(obj) {
		return fmt.Errorf("%w: of %v", hla.ErrFederateOwnsAttributes, obj)
	}
	if len(c.ownership.acquiring[obj]) > 0 {
		return fmt.Errorf("%w: of %v", hla.ErrOwnershipAcquisitionPending, obj)
	}
	c.objects.forget(obj, in)
	c.objects.localDeleted[obj] = c.objects.queries
	c.ownership.forget(obj)
	c.forgetAssociations(obj)
	c.rescope(obj, true)
	return nil
}

// ---- Transportation (§6.23-§6.30) ----

// attrReliable reports whether attribute a of instance h travels
// reliably from this federate: its override, else the FOM's.
func (c *Core) attrReliable(h ObjectInstanceHandle, a *fomxml.Attribute) bool {
	if t, ok := c.objects.attrTransport[h][a.Handle]; ok {
		return t == hla.HLAreliable
	}
	return c.reliable(a.Transportation)
}

// interactionReliable reports whether this federate's interactions of ic
// travel reliably.
func (c *Core) interactionReliable(ic *fomxml.InteractionClass) bool {
	if t, ok := c.objects.intTransport[ic.Handle]; ok {
		return t == hla.HLAreliable
	}
	return c.reliable(ic.Transportation)
}

func transportOf(reliable bool) hla.TransportationType {
	if reliable {
		return hla.HLAreliable
	}
	return hla.HLAbestEffort
}

// RequestAttributeTransportationTypeChange (§6.23) makes this
// federate's updates of attrs of obj travel by t;
// ConfirmAttributeTransportationTypeChange follows. Errors:
// ErrObjectInstanceNotKnown, ErrAttributeNotDefined,
// ErrAttributeNotOwned, ErrInvalidTransportationType. (A change takes
// effect at once, so none is ever still being changed.)
func (c *Core) RequestAttributeTransportationTypeChange(obj ObjectInstanceHandle, attrs []AttributeHandle, t hla.TransportationType) error {
	in, err := c.ownedInstance(obj, attrs)
	if err != nil {
		return err
	}
	if !t.Valid() {
		return fmt.Errorf("%w: %d", hla.ErrInvalidTransportationType, int(t))
	}
	if err := c.checkHeld(obj, in, attrs); err != nil {
		return err
	}
	m := inner(c.objects.attrTransport, obj)
	for _, a := range attrs {
		m[a] = t
	}
	c.push(hla.ConfirmAttributeTransportationTypeChange{Object: obj, Attributes: slices.Clone(attrs), Transportation: t})
	return nil
}

// QueryAttributeTransportationType (§6.25): ReportAttributeTransportationType
// follows with how attr of obj travels: from this federate when it owns
// it, else as the FOM says (an owner's change is not announced).
func (c *Core) QueryAttributeTransportationType(obj ObjectInstanceHandle, attr AttributeHandle) error {
	in, ok := c.objects.inst[obj]
	if !ok {
		return fmt.Errorf("%w: %v", hla.ErrObjectInstanceNotKnown, obj)
	}
	a, ok := in.class.AttributeByHandle(attr)
	if !ok {
		return fmt.Errorf("%w: attribute %d of class %s", hla.ErrAttributeNotDefined, attr, in.class.QualifiedName)
	}
	c.push(hla.ReportAttributeTransportationType{Object: obj, Attribute: attr, Transportation: transportOf(c.attrReliable(obj, a))})
	return nil
}

// RequestInteractionTransportationTypeChange (§6.27) makes this
// federate's interactions of class travel by t, and tells the others in
// its replicated state; ConfirmInteractionTransportationTypeChange
// follows. Errors: ErrInteractionClassNotDefined,
// ErrInteractionClassNotPublished, ErrInvalidTransportationType.
func (c *Core) RequestInteractionTransportationTypeChange(class InteractionClassHandle, t hla.TransportationType) error {
	ic, err := c.interactionClass(class)
	if err != nil {
		return err
	}
	if !c.declared.pubInt[class] {
		return fmt.Errorf("%w: %s", hla.ErrInteractionClassNotPublished, ic.QualifiedName)
	}
	if !t.Valid() {
		return fmt.Errorf("%w: %d", hla.ErrInvalidTransportationType, int(t))
	}
	c.objects.intTransport[class] = t
	c.setState(interactionTransportKey(class), []byte{byte(t)})
	c.push(hla.ConfirmInteractionTransportationTypeChange{Class: class, Transportation: t})
	return nil
}

// QueryInteractionTransportationType (§6.29):
// ReportInteractionTransportationType follows with how federate fed
// sends interactions of class: its own change when it published one in
// its replicated state, else as the FOM says. Errors:
// ErrInteractionClassNotDefined.
func (c *Core) QueryInteractionTransportationType(fed FederateHandle, class InteractionClassHandle) error {
	ic, err := c.interactionClass(class)
	if err != nil {
		return err
	}
	t := transportOf(c.reliable(ic.Transportation))
	if fed == c.self {
		t = transportOf(c.interactionReliable(ic))
	} else if v, _, ok := c.State(fed, interactionTransportKey(class)); ok && len(v) == 1 && hla.TransportationType(v[0]).Valid() {
		t = hla.TransportationType(v[0])
	}
	c.push(hla.ReportInteractionTransportationType{Federate: fed, Class: class, Transportation: t})
	return nil
}
