package testnet

import (
	"fmt"

	"github.com/meshrti/meshrti/peer"
)

// Object management: names, instances, updates, interactions, deletes,
// update requests and transportation types.

// names runs reserve and release-name (name=N), reserve-names and
// release-names (names=N,M).
func (s *simulation) names(c *call) (*serviceError, error) {
	f := c.f
	if one, ok := map[string]func(string) error{
		"reserve":      f.ReserveObjectInstanceName,
		"release-name": f.ReleaseObjectInstanceName,
	}[c.cmd.name]; ok {
		n, err := c.a.need("name")
		if err != nil {
			return nil, err
		}
		return fail(c.name, one(n))
	}
	ns, err := c.a.list("names")
	if err != nil {
		return nil, err
	}
	many := map[string]func(...string) error{
		"reserve-names": f.ReserveMultipleObjectInstanceName,
		"release-names": f.ReleaseMultipleObjectInstanceName,
	}[c.cmd.name]
	return fail(c.name, many(ns...))
}

// register registers an instance and remembers it by its label: as=,
// else its name=, else the name the RTI chose.
func (s *simulation) register(c *call) (*serviceError, error) {
	a, f, name := c.a, c.f, c.name
	oc, err := s.objectClass(a)
	if err != nil {
		return nil, err
	}
	label, _ := a.get("as")
	n, _ := a.get("name")
	var h peer.ObjectInstanceHandle
	if rs, ok, err := s.regionsArg(a); err != nil {
		return nil, err
	} else if ok {
		attrs, err := s.attrsOrDimensioned(a, oc)
		if err != nil {
			return nil, err
		}
		h, err = f.RegisterObjectInstanceWithRegions(oc.Handle, []peer.AttributeRegions{{Attributes: attrs, Regions: rs}}, n)
		if err != nil {
			return fail(name, err)
		}
	} else if h, err = f.RegisterObjectInstance(oc.Handle, n); err != nil {
		return fail(name, err)
	}
	if label == "" {
		label = n
	}
	if label == "" {
		if label, err = f.GetObjectInstanceName(h); err != nil {
			return fail(name, err)
		}
	}
	if _, dup := s.objs[label]; dup {
		return nil, fmt.Errorf("object label %s used twice", label)
	}
	s.objs[label] = &simObject{h: h, class: oc.Handle, name: n}
	s.objLabel[h] = label
	return nil, nil
}

// stamp reads a message's ts=T, hasTS false when it is absent, and its
// tag (see tag).
func (s *simulation) stamp(fed string, a *args) (ts float64, hasTS bool, tag []byte, err error) {
	if ts, hasTS, err = a.float("ts"); err != nil {
		return 0, false, nil, err
	}
	return ts, hasTS, s.tag(fed, a), nil
}

// retractable keeps the retraction handle of a time-stamped message sent
// with tag and returns the service's error.
func (s *simulation) retractable(name string, tag []byte, h peer.MessageRetractionHandle, err error) (*serviceError, error) {
	s.keepHandle(tag, h)
	return fail(name, err)
}

func (s *simulation) update(c *call) (*serviceError, error) {
	a, f, name := c.a, c.f, c.name
	o, err := s.object(a)
	if err != nil {
		return nil, err
	}
	ts, hasTS, tag, err := s.stamp(name, a)
	if err != nil {
		return nil, err
	}
	oc, _ := s.fdd.ObjectClassByHandle(o.class)
	vals, err := attrValues(a, oc)
	if err != nil {
		return nil, err
	}
	if hasTS {
		h, err := f.UpdateAttributeValuesWithTimeRetractable(o.h, vals, tag, peer.Float64Time(ts))
		return s.retractable(name, tag, h, err)
	}
	return fail(name, f.UpdateAttributeValues(o.h, vals, tag))
}

func (s *simulation) sendDirected(c *call) (*serviceError, error) {
	a, f, name := c.a, c.f, c.name
	ic, err := s.interactionClass(a)
	if err != nil {
		return nil, err
	}
	o, err := s.object(a)
	if err != nil {
		return nil, err
	}
	ts, hasTS, tag, err := s.stamp(name, a)
	if err != nil {
		return nil, err
	}
	vals, err := paramValues(a, ic)
	if err != nil {
		return nil, err
	}
	if hasTS {
		h, err := f.SendDirectedInteractionWithTime(ic.Handle, o.h, vals, tag, peer.Float64Time(ts))
		return s.retractable(name, tag, h, err)
	}
	return fail(name, f.SendDirectedInteraction(ic.Handle, o.h, vals, tag))
}

func (s *simulation) send(c *call) (*serviceError, error) {
	a, f, name := c.a, c.f, c.name
	ic, err := s.interactionClass(a)
	if err != nil {
		return nil, err
	}
	ts, hasTS, tag, err := s.stamp(name, a)
	if err != nil {
		return nil, err
	}
	rs, withRegions, err := s.regionsArg(a)
	if err != nil {
		return nil, err
	}
	vals, err := paramValues(a, ic)
	if err != nil {
		return nil, err
	}
	switch {
	case hasTS && withRegions:
		h, err := f.SendInteractionWithRegionsAndTime(ic.Handle, vals, rs, tag, peer.Float64Time(ts))
		return s.retractable(name, tag, h, err)
	case hasTS:
		h, err := f.SendInteractionWithTimeRetractable(ic.Handle, vals, tag, peer.Float64Time(ts))
		return s.retractable(name, tag, h, err)
	case withRegions:
		return fail(name, f.SendInteractionWithRegions(ic.Handle, vals, rs, tag))
	}
	return fail(name, f.SendInteraction(ic.Handle, vals, tag))
}

func (s *simulation) delete(c *call) (*serviceError, error) {
	a, f, name := c.a, c.f, c.name
	o, err := s.object(a)
	if err != nil {
		return nil, err
	}
	ts, hasTS, tag, err := s.stamp(name, a)
	if err != nil {
		return nil, err
	}
	if hasTS {
		h, err := f.DeleteObjectInstanceWithTimeRetractable(o.h, tag, peer.Float64Time(ts))
		return s.retractable(name, tag, h, err)
	}
	return fail(name, f.DeleteObjectInstance(o.h, tag))
}

func (s *simulation) localDelete(c *call) (*serviceError, error) {
	o, err := s.object(c.a)
	if err != nil {
		return nil, err
	}
	return fail(c.name, c.f.LocalDeleteObjectInstance(o.h))
}

// objectAttrs reads obj=O attrs=A,B when obj= is given; ok is false when
// it is not.
func (s *simulation) objectAttrs(a *args) (o *simObject, attrs []peer.AttributeHandle, ok bool, err error) {
	if _, ok := a.vals["obj"]; !ok {
		return nil, nil, false, nil
	}
	o, attrs, err = s.objectAndAttrs(a)
	return o, attrs, true, err
}

func (s *simulation) requestUpdate(c *call) (*serviceError, error) {
	a, f, name := c.a, c.f, c.name
	tag := s.tag(name, a)
	if o, attrs, ok, err := s.objectAttrs(a); err != nil {
		return nil, err
	} else if ok {
		return fail(name, f.RequestAttributeValueUpdate(o.h, tag, attrs...))
	}
	class, attrs, rs, withRegions, err := s.classAttrsRegions(a)
	if err != nil {
		return nil, err
	}
	if withRegions {
		return fail(name, f.RequestAttributeValueUpdateWithRegions(class, []peer.AttributeRegions{{Attributes: attrs, Regions: rs}}, tag))
	}
	return fail(name, f.RequestAttributeValueUpdateForClass(class, tag, attrs...))
}

func (s *simulation) transport(c *call) (*serviceError, error) {
	t, err := transportArg(c.a)
	if err != nil {
		return nil, err
	}
	if o, attrs, ok, err := s.objectAttrs(c.a); err != nil {
		return nil, err
	} else if ok {
		return fail(c.name, c.f.RequestAttributeTransportationTypeChange(o.h, t, attrs...))
	}
	ic, err := s.interactionClass(c.a)
	if err != nil {
		return nil, err
	}
	return fail(c.name, c.f.RequestInteractionTransportationTypeChange(ic.Handle, t))
}

func (s *simulation) queryTransport(c *call) (*serviceError, error) {
	if _, ok := c.a.vals["obj"]; ok {
		o, at, _, err := s.objectAttr(c.a)
		if err != nil {
			return nil, err
		}
		return fail(c.name, c.f.QueryAttributeTransportationType(o.h, at))
	}
	ic, err := s.interactionClass(c.a)
	if err != nil {
		return nil, err
	}
	other, err := c.a.need("fed")
	if err != nil {
		return nil, err
	}
	j, err := s.federate(other)
	if err != nil {
		return nil, err
	}
	return fail(c.name, c.f.QueryInteractionTransportationType(s.c.Feds[j].Handle(), ic.Handle))
}
