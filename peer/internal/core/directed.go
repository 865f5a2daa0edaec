package core

import (
	"fmt"
	"slices"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer/hla"
)

// Directed interactions (HLA 4, IEEE 1516.1-2025 §5.6-§5.7, §5.12-§5.13,
// §6.12, §6.15): an interaction sent to one object instance.
//
//   - A federate publishes interaction classes for an object class; it
//     may then send them to instances of that class or a subclass.
//   - A federate subscribes interaction classes at an object class. It
//     receives those sent to instances it owns (holds the instance's
//     HLAprivilegeToDeleteObject) of that class or a subclass;
//     "universally", those sent to every instance of them it knows.
//   - The interaction travels like any other, on its class's group, with
//     the instance in the message; each receiver decides by its own
//     subscriptions and tokens (docs/peer.md, "Directed interactions").
//
// A subscription at an interaction class also takes its subclasses
// (received as the subscribed class, as for interactions); the object
// class of the instance is the one the receiver knows it as.
//
// Only what the FDD declares may be directed: an object class's
// <directedInteraction>s and its ancestors' (fomxml.DirectedInteraction;
// each covers its interaction class, not that class's subclasses).
// Publish, subscribe, their withdrawals and send refuse any other
// interaction class with ErrInteractionClassNotDefined, the exception
// the HLA 4 API gives these services for an interaction class that is
// not defined for the use (there is no more specific one).

// directedClasses checks and returns the interaction classes hs, each
// declared in the FDD as directed at oc or an ancestor.
func (c *Core) directedClasses(oc *fomxml.ObjectClass, hs []InteractionClassHandle) ([]*fomxml.InteractionClass, error) {
	out := make([]*fomxml.InteractionClass, 0, len(hs))
	for _, h := range hs {
		ic, err := c.interactionClass(h)
		if err != nil {
			return nil, err
		}
		if err := checkDirected(oc, ic); err != nil {
			return nil, err
		}
		out = append(out, ic)
	}
	return out, nil
}

// checkDirected refuses an interaction class the FDD does not declare as
// directed at oc or an ancestor.
func checkDirected(oc *fomxml.ObjectClass, ic *fomxml.InteractionClass) error {
	if _, ok := oc.DirectedInteraction(ic.Handle); !ok {
		return fmt.Errorf("%w: %s is not a directed interaction of %s in the FDD", hla.ErrInteractionClassNotDefined, ic.QualifiedName, oc.QualifiedName)
	}
	return nil
}

// PublishObjectClassDirectedInteractions (§5.6) declares that this
// federate may send the interaction classes ics to instances of class.
func (c *Core) PublishObjectClassDirectedInteractions(class ObjectClassHandle, ics []InteractionClassHandle) error {
	set, classes, err := c.declareDirected(c.declared.pubDirected, class, ics)
	if err != nil {
		return err
	}
	for _, ic := range classes {
		if !set[ic.Handle] {
			set[ic.Handle] = true
			c.applyGroups(c.routing.publishInteraction(ic))
		}
	}
	return nil
}

// UnpublishObjectClassDirectedInteractions (§5.7) withdraws ics (all
// when nil) at class.
func (c *Core) UnpublishObjectClassDirectedInteractions(class ObjectClassHandle, ics []InteractionClassHandle) error {
	return c.withdrawDirected(c.declared.pubDirected, class, ics, c.routing.unpublishInteraction)
}

// SubscribeObjectClassDirectedInteractions (§5.12) asks for the
// interaction classes ics sent to instances of class this federate owns,
// or, universally, to every instance of class it knows.
func (c *Core) SubscribeObjectClassDirectedInteractions(class ObjectClassHandle, ics []InteractionClassHandle, universally bool) error {
	set, classes, err := c.declareDirected(c.declared.subDirected, class, ics)
	if err != nil {
		return err
	}
	for _, ic := range classes {
		if _, had := set[ic.Handle]; !had {
			c.applyGroups(c.routing.subscribeInteraction(ic))
		}
		set[ic.Handle] = universally
	}
	return nil
}

// UnsubscribeObjectClassDirectedInteractions (§5.13) withdraws ics (all
// when nil) at class.
func (c *Core) UnsubscribeObjectClassDirectedInteractions(class ObjectClassHandle, ics []InteractionClassHandle) error {
	return c.withdrawDirected(c.declared.subDirected, class, ics, c.routing.unsubscribeInteraction)
}

// declareDirected checks class and the interaction classes ics directed
// at it for a publication or subscription, and returns them with class's
// set in sets (c.declared.pubDirected or subDirected), made when missing.
func (c *Core) declareDirected(sets map[ObjectClassHandle]map[InteractionClassHandle]bool, class ObjectClassHandle, ics []InteractionClassHandle) (map[InteractionClassHandle]bool, []*fomxml.InteractionClass, error) {
	oc, err := c.objectClass(class)
	if err != nil {
		return nil, nil, err
	}
	classes, err := c.directedClasses(oc, ics)
	if err != nil {
		return nil, nil, err
	}
	return inner(sets, class), classes, nil
}

// withdrawDirected removes ics (all when nil) from class's set in sets
// (c.declared.pubDirected or subDirected), in handle order, applying leave's
// routing change for each.
func (c *Core) withdrawDirected(sets map[ObjectClassHandle]map[InteractionClassHandle]bool, class ObjectClassHandle, ics []InteractionClassHandle, leave func(*fomxml.InteractionClass) groupDelta) error {
	oc, err := c.objectClass(class)
	if err != nil {
		return err
	}
	if _, err := c.directedClasses(oc, ics); err != nil {
		return err
	}
	set := sets[class]
	for _, h := range keysOf(set) {
		if ics != nil && !slices.Contains(ics, h) {
			continue
		}
		ic, _ := c.interactionClass(h)
		delete(set, h)
		c.applyGroups(leave(ic))
	}
	if len(set) == 0 {
		delete(sets, class)
	}
	return nil
}

// SendDirectedInteraction (§6.12) sends an interaction of class to the
// instance obj. Errors: ErrObjectInstanceNotKnown,
// ErrInteractionClassNotDefined (not declared directed at the class this
// federate knows obj as, or an ancestor), ErrInteractionClassNotPublished
// (not published for that class or an ancestor),
// ErrInteractionParameterNotDefined, and the time errors of
// SendInteraction.
func (c *Core) SendDirectedInteraction(class InteractionClassHandle, obj ObjectInstanceHandle, values ParameterValues, tag []byte, t LogicalTime) (MessageRetractionHandle, error) {
	in, ok := c.objects.inst[obj]
	if !ok {
		return MessageRetractionHandle{}, fmt.Errorf("%w: %v", hla.ErrObjectInstanceNotKnown, obj)
	}
	ic, err := c.interactionClass(class)
	if err != nil {
		return MessageRetractionHandle{}, err
	}
	// By handle, from the current FDD: in.known may be from the one before
	// a joining federate's modules (SetFDD), which may add declarations.
	known, err := c.objectClass(in.known.Handle)
	if err != nil {
		return MessageRetractionHandle{}, err
	}
	if err := checkDirected(known, ic); err != nil {
		return MessageRetractionHandle{}, err
	}
	published := false
	for x := in.known; x != nil && !published; x = x.Parent {
		published = c.declared.pubDirected[x.Handle][class]
	}
	if !published {
		return MessageRetractionHandle{}, fmt.Errorf("%w: %s for %s", hla.ErrInteractionClassNotPublished, ic.QualifiedName, in.known.QualifiedName)
	}
	return c.sendInteractionTo(class, obj, values, tag, t, nil)
}

// directedDelivery returns the interaction class a directed interaction
// of ic to the instance in is received as here, or nil when it is not:
// a subscription at in's known class or an ancestor, for ic or an
// ancestor, universal or with this federate holding the instance's
// delete privilege.
func (c *Core) directedDelivery(ic *fomxml.InteractionClass, obj ObjectInstanceHandle, in *instance) *fomxml.InteractionClass {
	owner := -1 // unknown yet
	for oc := in.known; oc != nil; oc = oc.Parent {
		set := c.declared.subDirected[oc.Handle]
		if len(set) == 0 {
			continue
		}
		for x := ic; x != nil; x = x.Parent {
			universally, ok := set[x.Handle]
			if !ok {
				continue
			}
			if !universally {
				if owner < 0 {
					owner = 0
					if _, held := c.ownership.holds(obj, privilegeToDelete(in.class)); held {
						owner = 1
					}
				}
				if owner == 0 {
					continue
				}
			}
			return x
		}
	}
	return nil
}

// applyDirected turns a directed interaction into its event, or nothing.
func (c *Core) applyDirected(evs []Event, m *wireMsg, d delivery, ic *fomxml.InteractionClass, sent OrderType, t LogicalTime, mrh MessageRetractionHandle) []Event {
	in, ok := c.objects.inst[m.Obj]
	if !ok {
		return evs
	}
	as := c.directedDelivery(ic, m.Obj, in)
	if as == nil {
		return evs
	}
	vals := paramsOf(m, as)
	return append(evs, hla.ReceiveDirectedInteraction{
		Class: as.Handle, Object: m.Obj, Values: vals, Tag: m.Tag, SentOrder: sent, ReceivedOrder: d.received,
		Time: t, Producer: d.from, Transportation: transportName(d.reliable), Retraction: mrh,
	})
}
