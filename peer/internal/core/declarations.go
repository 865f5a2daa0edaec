package core

import (
	"fmt"
	"slices"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer/hla"
)

// declarations is the declaration-management sub-machine: what this
// federate publishes and subscribes to (IEEE 1516.1-2010 §5).
type declarations struct {
	pubObj map[ObjectClassHandle]map[AttributeHandle]bool
	subObj map[ObjectClassHandle]map[AttributeHandle]bool
	pubInt map[InteractionClassHandle]bool
	subInt map[InteractionClassHandle]bool
	// How each class is subscribed: actively or passively (a passive
	// subscription triggers no relevance advisories at the publishers),
	// and at which update rate.
	subMode    map[ObjectClassHandle]subMode
	subIntMode map[InteractionClassHandle]bool // active

	// Directed interactions (HLA 4, directed.go): the interaction classes
	// this federate sends to, and receives at, instances of each object
	// class; a subscription's value says "universally".
	pubDirected map[ObjectClassHandle]map[InteractionClassHandle]bool
	subDirected map[ObjectClassHandle]map[InteractionClassHandle]bool
}

// subMode is how an object class is subscribed.
type subMode struct {
	active bool
	rate   string // update rate designator; "" for none
}

func newDeclarations() declarations {
	return declarations{
		pubDirected: make(map[ObjectClassHandle]map[InteractionClassHandle]bool),
		subDirected: make(map[ObjectClassHandle]map[InteractionClassHandle]bool),
		pubObj:      make(map[ObjectClassHandle]map[AttributeHandle]bool),
		subObj:      make(map[ObjectClassHandle]map[AttributeHandle]bool),
		pubInt:      make(map[InteractionClassHandle]bool),
		subInt:      make(map[InteractionClassHandle]bool),
		subMode:     make(map[ObjectClassHandle]subMode),
		subIntMode:  make(map[InteractionClassHandle]bool),
	}
}

func (c *Core) objectClass(h ObjectClassHandle) (*fomxml.ObjectClass, error) {
	oc, ok := c.fdd.ObjectClassByHandle(h)
	if !ok {
		return nil, fmt.Errorf("%w: object class %d", hla.ErrObjectClassNotDefined, h)
	}
	return oc, nil
}

func (c *Core) interactionClass(h InteractionClassHandle) (*fomxml.InteractionClass, error) {
	ic, ok := c.fdd.InteractionClassByHandle(h)
	if !ok {
		return nil, fmt.Errorf("%w: interaction class %d", hla.ErrInteractionClassNotDefined, h)
	}
	return ic, nil
}

// classAttrs is object class h, once every handle in attrs is one of its
// attributes: ErrObjectClassNotDefined or ErrAttributeNotDefined.
func (c *Core) classAttrs(h ObjectClassHandle, attrs []AttributeHandle) (*fomxml.ObjectClass, error) {
	oc, err := c.objectClass(h)
	if err != nil {
		return nil, err
	}
	if err := checkAttrs(oc, attrs); err != nil {
		return nil, err
	}
	return oc, nil
}

// checkAttrs checks that every handle is an attribute of oc (declared or
// inherited).
func checkAttrs(oc *fomxml.ObjectClass, hs []AttributeHandle) error {
	for _, h := range hs {
		if _, ok := oc.AttributeByHandle(h); !ok {
			return fmt.Errorf("%w: attribute %d of class %s", hla.ErrAttributeNotDefined, h, oc.QualifiedName)
		}
	}
	return nil
}

// withdraw removes attributes (all when hs is nil) from a class's entry
// in decl, a publication or subscription table. emptied is true when the
// class had attributes and has none left there; its entry is then
// removed (an entry that had none is removed too, without emptied).
func withdraw(decl map[ObjectClassHandle]map[AttributeHandle]bool, oc *fomxml.ObjectClass, hs []AttributeHandle) (existed, emptied bool) {
	set, ok := decl[oc.Handle]
	if !ok {
		return false, false
	}
	had := len(set) > 0
	if hs == nil {
		clear(set)
	}
	for _, h := range hs {
		delete(set, h)
	}
	if len(set) > 0 {
		return true, false
	}
	delete(decl, oc.Handle)
	return true, had
}

// PublishObjectClassAttributes (§5.2) declares that this federate may
// register instances of class and update the given attributes. Each
// call adds to what earlier calls published of class (only the
// unpublish services take attributes away), and a call with no
// attributes adds nothing: it neither publishes class nor changes its
// publication.
func (c *Core) PublishObjectClassAttributes(class ObjectClassHandle, attrs []AttributeHandle) error {
	oc, err := c.classAttrs(class, attrs)
	if err != nil {
		return err
	}
	if len(attrs) == 0 {
		return nil
	}
	set := c.declared.pubObj[class]
	if set == nil {
		set = make(map[AttributeHandle]bool)
		c.declared.pubObj[class] = set
		c.applyGroups(c.routing.publishObject(oc))
	}
	for _, h := range attrs {
		set[h] = true
	}
	c.classRelevance()
	c.resendCells()
	return nil
}

// UnpublishObjectClassAttributes (§5.3) withdraws the given attributes
// of class, or all of them when attrs is nil (UnpublishObjectClass, which
// also gives up the privilege to delete); an empty, non-nil attrs
// withdraws nothing. Attributes this federate owns of instances of class
// are divested unconditionally. A class left with no published
// attribute is no longer published. ErrOwnershipAcquisitionPending while
// it is acquiring any of them.
func (c *Core) UnpublishObjectClassAttributes(class ObjectClassHandle, attrs []AttributeHandle) error {
	oc, err := c.classAttrs(class, attrs)
	if err != nil {
		return err
	}
	if attrs != nil && len(attrs) == 0 {
		return nil
	}
	withdrawn := func(a AttributeHandle) bool { return attrs == nil || slices.Contains(attrs, a) }
	var hs []ObjectInstanceHandle
	for h, in := range c.objects.inst {
		if in.class != oc {
			continue
		}
		for a := range c.ownership.acquiring[h] {
			if withdrawn(a) {
				return fmt.Errorf("%w: attribute %d of %v", hla.ErrOwnershipAcquisitionPending, a, h)
			}
		}
		if c.ownership.holdsAny(h) {
			hs = append(hs, h)
		}
	}
	slices.SortFunc(hs, compareHandles)
	for _, h := range hs {
		var give []AttributeHandle
		for a := range c.ownership.heldOf(h) {
			if withdrawn(a) {
				give = append(give, a)
			}
		}
		slices.Sort(give)
		c.divest(h, c.objects.inst[h], give, nil, true)
	}
	if existed, _ := withdraw(c.declared.pubObj, oc, attrs); existed && c.declared.pubObj[class] == nil {
		c.applyGroups(c.routing.unpublishObject(oc))
	}
	c.classRelevance()
	c.resendCells()
	return nil
}

// PublishInteractionClass (§5.4).
func (c *Core) PublishInteractionClass(class InteractionClassHandle) error {
	ic, err := c.interactionClass(class)
	if err != nil {
		return err
	}
	if c.declared.pubInt[class] {
		return nil
	}
	c.declared.pubInt[class] = true
	c.applyGroups(c.routing.publishInteraction(ic))
	c.interactionRelevance()
	c.resendCells()
	return nil
}

// UnpublishInteractionClass (§5.5).
func (c *Core) UnpublishInteractionClass(class InteractionClassHandle) error {
	ic, err := c.interactionClass(class)
	if err != nil {
		return err
	}
	if !c.declared.pubInt[class] {
		return nil
	}
	delete(c.declared.pubInt, class)
	c.applyGroups(c.routing.unpublishInteraction(ic))
	delete(c.advisories.intOn, class)
	c.resendCells()
	return nil
}

// SubscribeObjectClassAttributes (§5.6) asks for instances of class and
// its subclasses and for updates of the given attributes, actively
// (publishers are advised of it) or passively, at most at the rate the
// update rate designator rate names ("" for no limit). Instances
// registered before are discovered too: once the subscription has
// attributes, a discovery query goes out on each of its groups and the
// instances' owners announce them again. Subscribing a class again adds
// attributes (only the unsubscribe services take them away); its
// activeness and rate are the last call's. A call with no attributes
// adds nothing: it neither subscribes class nor changes its
// subscription.
func (c *Core) SubscribeObjectClassAttributes(class ObjectClassHandle, attrs []AttributeHandle, active bool, rate string) error {
	oc, err := c.classAttrs(class, attrs)
	if err != nil {
		return err
	}
	if rate != "" {
		if _, err := c.UpdateRateValue(rate); err != nil {
			return err
		}
	}
	if len(attrs) == 0 {
		return nil
	}
	c.subscribedPlain(class, attrs)
	return c.subscribeObject(oc, attrs, active, rate)
}

// subscribeObject subscribes attrs of oc (checked): the groups, the
// mode, the interest, the discovery of what exists.
func (c *Core) subscribeObject(oc *fomxml.ObjectClass, attrs []AttributeHandle, active bool, rate string) error {
	class := oc.Handle
	if rate != "" {
		if _, err := c.UpdateRateValue(rate); err != nil {
			return err
		}
	}
	set := c.declared.subObj[class]
	if set == nil {
		set = make(map[AttributeHandle]bool)
		c.declared.subObj[class] = set
		c.applyGroups(c.routing.subscribeObject(oc))
	}
	had := len(set) > 0
	for _, h := range attrs {
		set[h] = true
	}
	c.declared.subMode[class] = subMode{active: active, rate: rate}
	c.publishInterest(oc)
	c.rescopeClass(oc)
	if had || len(set) == 0 {
		return nil
	}
	// The subscription has attributes now: discover what exists.
	for _, r := range c.routing.subscriptionRoutes(oc) {
		q := outMsg{group: r.group, reliable: true, msg: &wireMsg{Kind: kindQuery, Class: uint64(r.class)}}
		if _, narrowed := c.regions.subs[class]; narrowed {
			// With regions, the query carries the subscription: senders
			// filter by it (earlyInterest).
			q.msg.Ref = uint64(class)
			q.msg.Data = c.interestValue(oc)
		}
		if err := c.sendQuery(q); err != nil {
			return err
		}
	}
	c.momSelfDiscover()
	c.momFederationDiscover()
	return nil
}

// UnsubscribeObjectClassAttributes (§5.7) removes attributes from a
// subscription (all when attrs is nil: UnsubscribeObjectClass; none when
// it is empty and not nil). Known instances stay known.
func (c *Core) UnsubscribeObjectClassAttributes(class ObjectClassHandle, attrs []AttributeHandle) error {
	oc, err := c.classAttrs(class, attrs)
	if err != nil {
		return err
	}
	if attrs != nil && len(attrs) == 0 {
		return nil
	}
	c.unsubscribedAttrs(class, attrs)
	if existed, _ := withdraw(c.declared.subObj, oc, attrs); existed && c.declared.subObj[class] == nil {
		c.applyGroups(c.routing.unsubscribeObject(oc))
		delete(c.declared.subMode, class)
	}
	c.publishInterest(oc)
	c.rescopeClass(oc)
	return nil
}

// SubscribeInteractionClass (§5.8): interactions of class and its
// subclasses arrive as class, with class's parameters. A passive
// subscription triggers no relevance advisories at the publishers.
func (c *Core) SubscribeInteractionClass(class InteractionClassHandle, active bool) error {
	ic, err := c.interactionClass(class)
	if err != nil {
		return err
	}
	if c.mom.reportServices && ic.QualifiedName == momServiceReport {
		return fmt.Errorf("%w: %s", hla.ErrFederateServiceInvocationsAreBeingReportedViaMOM, ic.QualifiedName)
	}
	c.regions.intSub(class).plain = true
	c.subscribeInteraction(ic, active)
	return nil
}

// subscribeInteraction subscribes ic (checked): groups, mode, interest.
func (c *Core) subscribeInteraction(ic *fomxml.InteractionClass, active bool) {
	class := ic.Handle
	if !c.declared.subInt[class] {
		c.declared.subInt[class] = true
		c.applyGroups(c.routing.subscribeInteraction(ic))
	}
	c.declared.subIntMode[class] = active
	c.publishInteractionInterest(class)
}

// UnsubscribeInteractionClass (§5.9).
func (c *Core) UnsubscribeInteractionClass(class InteractionClassHandle) error {
	ic, err := c.interactionClass(class)
	if err != nil {
		return err
	}
	if !c.declared.subInt[class] {
		return nil
	}
	delete(c.declared.subInt, class)
	delete(c.declared.subIntMode, class)
	c.unsubscribedInteraction(class)
	c.applyGroups(c.routing.unsubscribeInteraction(ic))
	c.publishInteractionInterest(class)
	return nil
}

// subscribedAs returns the class an instance of oc is known as: oc itself
// or its nearest ancestor subscribed with attributes, or nil when nothing
// subscribed covers it.
func (d *declarations) subscribedAs(oc *fomxml.ObjectClass) *fomxml.ObjectClass {
	for x := oc; x != nil; x = x.Parent {
		if len(d.subObj[x.Handle]) > 0 {
			return x
		}
	}
	return nil
}

func (d *declarations) interactionSubscribedAs(ic *fomxml.InteractionClass) *fomxml.InteractionClass {
	for x := ic; x != nil; x = x.Parent {
		if d.subInt[x.Handle] {
			return x
		}
	}
	return nil
}
