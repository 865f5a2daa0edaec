package testnet

import (
	"fmt"

	"github.com/meshrti/meshrti/fomxml"
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

// msgArgs is what a script line that sends a message names.
type msgArgs struct {
	ic          *fomxml.InteractionClass
	o           *simObject
	ts          float64
	hasTS       bool
	tag         []byte
	rs          []peer.RegionHandle
	withRegions bool
	attrs       peer.AttributeValues // with an object and no class
	params      peer.ParameterValues // with a class
}

// The parts of a message a command reads besides its ts= and tag=.
const (
	msgClass   = 1 << iota // cls=: the interaction class
	msgObject              // obj=: the object instance
	msgRegions             // regions=, optional
	msgValues              // the attribute or parameter values
)

// readMsg reads the parts of a message a command names, in this order:
// class, object, ts= and tag=, regions, values. The first argument in
// error is the one reported.
func (s *simulation) readMsg(c *call, parts int) (*msgArgs, error) {
	a := c.a
	m := &msgArgs{}
	var err error
	if parts&msgClass != 0 {
		if m.ic, err = s.interactionClass(a); err != nil {
			return nil, err
		}
	}
	if parts&msgObject != 0 {
		if m.o, err = s.object(a); err != nil {
			return nil, err
		}
	}
	if m.ts, m.hasTS, m.tag, err = s.stamp(c.name, a); err != nil {
		return nil, err
	}
	if parts&msgRegions != 0 {
		if m.rs, m.withRegions, err = s.regionsArg(a); err != nil {
			return nil, err
		}
	}
	if parts&msgValues != 0 {
		if m.ic != nil {
			m.params, err = paramValues(a, m.ic)
		} else {
			oc, _ := s.fdd.ObjectClassByHandle(m.o.class)
			m.attrs, err = attrValues(a, oc)
		}
		if err != nil {
			return nil, err
		}
	}
	return m, nil
}

// deliverMessage sends m through withTime when it has a time stamp,
// keeping the retraction handle, else through now, and returns the
// service's error.
func (s *simulation) deliverMessage(c *call, m *msgArgs, withTime func(peer.LogicalTime) (peer.MessageRetractionHandle, error), now func() error) (*serviceError, error) {
	if m.hasTS {
		h, err := withTime(peer.Float64Time(m.ts))
		s.keepHandle(m.tag, h)
		return fail(c.name, err)
	}
	return fail(c.name, now())
}

func (s *simulation) update(c *call) (*serviceError, error) {
	m, err := s.readMsg(c, msgObject|msgValues)
	if err != nil {
		return nil, err
	}
	f := c.f
	return s.deliverMessage(c, m, func(t peer.LogicalTime) (peer.MessageRetractionHandle, error) {
		return f.UpdateAttributeValuesWithTimeRetractable(m.o.h, m.attrs, m.tag, t)
	}, func() error { return f.UpdateAttributeValues(m.o.h, m.attrs, m.tag) })
}

func (s *simulation) sendDirected(c *call) (*serviceError, error) {
	m, err := s.readMsg(c, msgClass|msgObject|msgValues)
	if err != nil {
		return nil, err
	}
	f := c.f
	return s.deliverMessage(c, m, func(t peer.LogicalTime) (peer.MessageRetractionHandle, error) {
		return f.SendDirectedInteractionWithTime(m.ic.Handle, m.o.h, m.params, m.tag, t)
	}, func() error { return f.SendDirectedInteraction(m.ic.Handle, m.o.h, m.params, m.tag) })
}

func (s *simulation) send(c *call) (*serviceError, error) {
	m, err := s.readMsg(c, msgClass|msgRegions|msgValues)
	if err != nil {
		return nil, err
	}
	f := c.f
	if m.withRegions {
		return s.deliverMessage(c, m, func(t peer.LogicalTime) (peer.MessageRetractionHandle, error) {
			return f.SendInteractionWithRegionsAndTime(m.ic.Handle, m.params, m.rs, m.tag, t)
		}, func() error { return f.SendInteractionWithRegions(m.ic.Handle, m.params, m.rs, m.tag) })
	}
	return s.deliverMessage(c, m, func(t peer.LogicalTime) (peer.MessageRetractionHandle, error) {
		return f.SendInteractionWithTimeRetractable(m.ic.Handle, m.params, m.tag, t)
	}, func() error { return f.SendInteraction(m.ic.Handle, m.params, m.tag) })
}

func (s *simulation) delete(c *call) (*serviceError, error) {
	m, err := s.readMsg(c, msgObject)
	if err != nil {
		return nil, err
	}
	f := c.f
	return s.deliverMessage(c, m, func(t peer.LogicalTime) (peer.MessageRetractionHandle, error) {
		return f.DeleteObjectInstanceWithTimeRetractable(m.o.h, m.tag, t)
	}, func() error { return f.DeleteObjectInstance(m.o.h, m.tag) })
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
