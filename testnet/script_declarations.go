package testnet

import (
	"fmt"
	"strings"

	"github.com/meshrti/meshrti/peer"
)

// Declaration management: publications and subscriptions of object
// classes, interaction classes and directed interactions.

func (s *simulation) publish(c *call) (*serviceError, error) {
	class, attrs, err := s.classAttrs(c.a)
	if err != nil {
		return nil, err
	}
	return fail(c.name, c.f.PublishObjectClassAttributes(class, attrs...))
}

func (s *simulation) subscribe(c *call) (*serviceError, error) {
	a, f, name := c.a, c.f, c.name
	class, attrs, rs, withRegions, err := s.classAttrsRegions(a)
	if err != nil {
		return nil, err
	}
	if withRegions {
		rate, _ := a.get("rate")
		pair := peer.AttributeRegions{Attributes: attrs, Regions: rs}
		if c.passive || rate != "" {
			return fail(name, f.SubscribeObjectClassAttributesWithRegionsPassively(class, rate, pair))
		}
		return fail(name, f.SubscribeObjectClassAttributesWithRegions(class, pair))
	}
	if rate, ok := a.get("rate"); ok {
		return fail(name, f.SubscribeObjectClassAttributesWithRate(class, rate, !c.passive, attrs...))
	}
	if c.passive {
		return fail(name, f.SubscribeObjectClassAttributesPassively(class, attrs...))
	}
	return fail(name, f.SubscribeObjectClassAttributes(class, attrs...))
}

func (s *simulation) unpublish(c *call) (*serviceError, error) {
	oc, err := s.objectClass(c.a)
	if err != nil {
		return nil, err
	}
	return s.withdraw(c, oc.Handle, c.f.UnpublishObjectClassAttributes, c.f.UnpublishObjectClass)
}

func (s *simulation) unsubscribe(c *call) (*serviceError, error) {
	oc, err := s.objectClass(c.a)
	if err != nil {
		return nil, err
	}
	if rs, ok, err := s.regionsArg(c.a); err != nil {
		return nil, err
	} else if ok {
		attrs, err := s.attrsOrDimensioned(c.a, oc)
		if err != nil {
			return nil, err
		}
		return fail(c.name, c.f.UnsubscribeObjectClassAttributesWithRegions(oc.Handle, peer.AttributeRegions{Attributes: attrs, Regions: rs}))
	}
	return s.withdraw(c, oc.Handle, c.f.UnsubscribeObjectClassAttributes, c.f.UnsubscribeObjectClass)
}

// withdraw ends the publication or subscription of class that c names:
// of the attributes attrs= lists by some, or, without attrs=, of the
// whole class by whole.
func (s *simulation) withdraw(c *call, class peer.ObjectClassHandle, some func(peer.ObjectClassHandle, ...peer.AttributeHandle) error, whole func(peer.ObjectClassHandle) error) (*serviceError, error) {
	if _, ok := c.a.vals["attrs"]; !ok {
		return fail(c.name, whole(class))
	}
	attrs, err := s.attrsOf(c.a, class)
	if err != nil {
		return nil, err
	}
	return fail(c.name, some(class, attrs...))
}

// interactionDeclaration runs publish-interaction, subscribe-interaction
// (passive, regions=), unpublish-interaction and unsubscribe-interaction
// (regions=).
func (s *simulation) interactionDeclaration(c *call) (*serviceError, error) {
	cmd, name, f := c.cmd.name, c.name, c.f
	ic, err := s.interactionClass(c.a)
	if err != nil {
		return nil, err
	}
	h := ic.Handle
	rs, withRegions, err := s.regionsArg(c.a)
	if err != nil {
		return nil, err
	}
	switch {
	case withRegions && cmd == "subscribe-interaction" && c.passive:
		return fail(name, f.SubscribeInteractionClassPassivelyWithRegions(h, rs...))
	case withRegions && cmd == "subscribe-interaction":
		return fail(name, f.SubscribeInteractionClassWithRegions(h, rs...))
	case withRegions && cmd == "unsubscribe-interaction":
		return fail(name, f.UnsubscribeInteractionClassWithRegions(h, rs...))
	case withRegions:
		return nil, fmt.Errorf("%s takes no regions", cmd)
	}
	switch cmd {
	case "publish-interaction":
		return fail(name, f.PublishInteractionClass(h))
	case "subscribe-interaction":
		if c.passive {
			return fail(name, f.SubscribeInteractionClassPassively(h))
		}
		return fail(name, f.SubscribeInteractionClass(h))
	case "unpublish-interaction":
		return fail(name, f.UnpublishInteractionClass(h))
	}
	return fail(name, f.UnsubscribeInteractionClass(h))
}

// directedDeclaration runs publish-directed, subscribe-directed
// (universally), unpublish-directed and unsubscribe-directed.
func (s *simulation) directedDeclaration(c *call) (*serviceError, error) {
	cmd, name, f := c.cmd.name, c.name, c.f
	oc, err := s.objectClass(c.a)
	if err != nil {
		return nil, err
	}
	var ics []peer.InteractionClassHandle
	if names, ok := c.a.get("interactions"); ok {
		for _, n := range strings.Split(names, ",") {
			ic, ok := s.fdd.InteractionClass(n)
			if !ok {
				return nil, fmt.Errorf("no interaction class %s", n)
			}
			ics = append(ics, ic.Handle)
		}
	}
	switch {
	case cmd == "publish-directed":
		return fail(name, f.PublishObjectClassDirectedInteractions(oc.Handle, ics...))
	case cmd == "subscribe-directed" && c.universally:
		return fail(name, f.SubscribeObjectClassDirectedInteractionsUniversally(oc.Handle, ics...))
	case cmd == "subscribe-directed":
		return fail(name, f.SubscribeObjectClassDirectedInteractions(oc.Handle, ics...))
	case cmd == "unpublish-directed":
		return fail(name, f.UnpublishObjectClassDirectedInteractions(oc.Handle, ics...))
	}
	return fail(name, f.UnsubscribeObjectClassDirectedInteractions(oc.Handle, ics...))
}
