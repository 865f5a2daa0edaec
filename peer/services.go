package peer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/meshrti/meshrti/lbts"
)

// ---- Declaration management (IEEE 1516.1-2010 §5) ----

// PublishObjectClassAttributes (§5.2) declares that this federate may
// register instances of class and update the given attributes.
func (f *Federate) PublishObjectClassAttributes(class ObjectClassHandle, attrs ...AttributeHandle) error {
	return f.call(func() error {
		join, err := f.st.publishObject(class, attrs)
		if err != nil {
			return err
		}
		return f.joinGroups(join)
	})
}

// UnpublishObjectClass (§5.3) withdraws every attribute of class.
func (f *Federate) UnpublishObjectClass(class ObjectClassHandle) error {
	return f.call(func() error {
		leave, err := f.st.unpublishObject(class, nil)
		if err != nil {
			return err
		}
		return f.leaveGroups(leave)
	})
}

// UnpublishObjectClassAttributes (§5.3) withdraws some attributes.
func (f *Federate) UnpublishObjectClassAttributes(class ObjectClassHandle, attrs ...AttributeHandle) error {
	if len(attrs) == 0 {
		return nil
	}
	return f.call(func() error {
		leave, err := f.st.unpublishObject(class, attrs)
		if err != nil {
			return err
		}
		return f.leaveGroups(leave)
	})
}

// PublishInteractionClass (§5.4).
func (f *Federate) PublishInteractionClass(class InteractionClassHandle) error {
	return f.call(func() error {
		join, err := f.st.publishInteraction(class)
		if err != nil {
			return err
		}
		return f.joinGroups(join)
	})
}

// UnpublishInteractionClass (§5.5).
func (f *Federate) UnpublishInteractionClass(class InteractionClassHandle) error {
	return f.call(func() error {
		leave, err := f.st.unpublishInteraction(class)
		if err != nil {
			return err
		}
		return f.leaveGroups(leave)
	})
}

// SubscribeObjectClassAttributes (§5.6) asks for instances of class and
// its subclasses (discovered as class unless a subclass is subscribed
// too) and for updates of the given attributes. Instances registered
// before the subscription are discovered as well.
func (f *Federate) SubscribeObjectClassAttributes(class ObjectClassHandle, attrs ...AttributeHandle) error {
	return f.call(func() error {
		join, queries, err := f.st.subscribeObject(class, attrs)
		if err != nil {
			return err
		}
		if err := f.joinGroups(join); err != nil {
			return err
		}
		for _, q := range queries {
			if _, err := f.send(q); err != nil {
				return err
			}
		}
		return nil
	})
}

// UnsubscribeObjectClass (§5.7).
func (f *Federate) UnsubscribeObjectClass(class ObjectClassHandle) error {
	return f.call(func() error {
		leave, err := f.st.unsubscribeObject(class, nil)
		if err != nil {
			return err
		}
		return f.leaveGroups(leave)
	})
}

// UnsubscribeObjectClassAttributes (§5.7).
func (f *Federate) UnsubscribeObjectClassAttributes(class ObjectClassHandle, attrs ...AttributeHandle) error {
	if len(attrs) == 0 {
		return nil
	}
	return f.call(func() error {
		leave, err := f.st.unsubscribeObject(class, attrs)
		if err != nil {
			return err
		}
		return f.leaveGroups(leave)
	})
}

// SubscribeInteractionClass (§5.8): interactions of class and its
// subclasses arrive as class, with class's parameters.
func (f *Federate) SubscribeInteractionClass(class InteractionClassHandle) error {
	return f.call(func() error {
		join, err := f.st.subscribeInteraction(class)
		if err != nil {
			return err
		}
		return f.joinGroups(join)
	})
}

// UnsubscribeInteractionClass (§5.9).
func (f *Federate) UnsubscribeInteractionClass(class InteractionClassHandle) error {
	return f.call(func() error {
		leave, err := f.st.unsubscribeInteraction(class)
		if err != nil {
			return err
		}
		return f.leaveGroups(leave)
	})
}

// ---- Object management (§6) ----

// ReserveObjectInstanceName (§6.2) asks the federation for a unique
// object instance name. The answer comes as an
// ObjectInstanceNameReservationSucceeded or ...Failed event.
func (f *Federate) ReserveObjectInstanceName(name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	return f.call(func() error {
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				select {
				case <-f.stop:
					cancel()
				case <-ctx.Done():
				}
			}()
			ok, err := f.ctl.Acquire(ctx, "objectName/"+name)
			_ = f.call(func() error {
				if err == nil && ok {
					f.st.reserved[name] = true
					f.events.push(ObjectInstanceNameReservationSucceeded{Name: name})
				} else {
					if err != nil {
						f.log.Warn().Err(err).Str("name", name).Msg("name reservation failed")
					}
					f.events.push(ObjectInstanceNameReservationFailed{Name: name})
				}
				return nil
			})
		}()
		return nil
	})
}

// RegisterObjectInstance (§6.4) creates an instance of a published class
// and returns its handle. name is "" for an RTI-chosen name, otherwise a
// name this federate reserved.
func (f *Federate) RegisterObjectInstance(class ObjectClassHandle, name string) (ObjectInstanceHandle, error) {
	var h ObjectInstanceHandle
	err := f.call(func() error {
		var o outMsg
		var err error
		h, o, err = f.st.register(class, name)
		if err != nil {
			return err
		}
		_, err = f.send(o)
		return err
	})
	return h, err
}

// UpdateAttributeValues (§6.6) sends new values of owned attributes in
// receive order.
func (f *Federate) UpdateAttributeValues(obj ObjectInstanceHandle, values AttributeValues, tag []byte) error {
	return f.callSend(func() error { return f.update(obj, values, tag, false, 0) })
}

// UpdateAttributeValuesWithTime (§6.6) sends new values with a time
// stamp. Attributes whose order is TimeStamp travel in time-stamp order
// when this federate is time-regulating; t must then be at least its
// logical time plus lookahead, or an *InvalidLogicalTimeError is returned.
func (f *Federate) UpdateAttributeValuesWithTime(obj ObjectInstanceHandle, values AttributeValues, tag []byte, t LogicalTime) error {
	ts, err := f.tk.value(t)
	if err != nil {
		return err
	}
	return f.callSend(func() error { return f.update(obj, values, tag, true, ts) })
}

func (f *Federate) update(obj ObjectInstanceHandle, values AttributeValues, tag []byte, hasTime bool, ts float64) error {
	reg, err := f.mayStamp(hasTime, ts)
	if err != nil {
		return err
	}
	outs, err := f.st.update(obj, values, tag, hasTime, ts, reg)
	if err != nil {
		return err
	}
	if f.blocked(outs) {
		return errBlocked
	}
	return f.sendAll(outs, ts)
}

// sendAll sends messages and records time-stamped ones with the time core.
func (f *Federate) sendAll(outs []outMsg, ts float64) error {
	for _, o := range outs {
		seq, err := f.send(o)
		if err != nil {
			return err
		}
		if f.trace != nil {
			f.traceSend(o.msg)
		}
		if o.msg.TSO && o.reliable {
			if err := f.tm.SentTSO(uint32(o.group), seq, ts); err != nil {
				return f.timeError(err, ts)
			}
		}
	}
	return nil
}

// SendInteraction (§6.8) sends an interaction of a published class in
// receive order.
func (f *Federate) SendInteraction(class InteractionClassHandle, values ParameterValues, tag []byte) error {
	return f.callSend(func() error { return f.interact(class, values, tag, false, 0) })
}

// SendInteractionWithTime (§6.8) sends an interaction with a time stamp;
// see UpdateAttributeValuesWithTime for the rules.
func (f *Federate) SendInteractionWithTime(class InteractionClassHandle, values ParameterValues, tag []byte, t LogicalTime) error {
	ts, err := f.tk.value(t)
	if err != nil {
		return err
	}
	return f.callSend(func() error { return f.interact(class, values, tag, true, ts) })
}

func (f *Federate) interact(class InteractionClassHandle, values ParameterValues, tag []byte, hasTime bool, ts float64) error {
	reg, err := f.mayStamp(hasTime, ts)
	if err != nil {
		return err
	}
	o, err := f.st.interaction(class, values, tag, hasTime, ts, reg)
	if err != nil {
		return err
	}
	if f.blocked([]outMsg{o}) {
		return errBlocked
	}
	return f.sendAll([]outMsg{o}, ts)
}

// DeleteObjectInstance (§6.10) deletes an instance this federate holds
// the delete privilege of.
func (f *Federate) DeleteObjectInstance(obj ObjectInstanceHandle, tag []byte) error {
	return f.call(func() error { return f.del(obj, tag, false, 0) })
}

// DeleteObjectInstanceWithTime (§6.10) deletes with a time stamp.
func (f *Federate) DeleteObjectInstanceWithTime(obj ObjectInstanceHandle, tag []byte, t LogicalTime) error {
	ts, err := f.tk.value(t)
	if err != nil {
		return err
	}
	return f.call(func() error { return f.del(obj, tag, true, ts) })
}

func (f *Federate) del(obj ObjectInstanceHandle, tag []byte, hasTime bool, ts float64) error {
	reg, err := f.mayStamp(hasTime, ts)
	if err != nil {
		return err
	}
	o, err := f.st.delete(obj, tag, hasTime, ts, reg)
	if err != nil {
		return err
	}
	return f.sendAll([]outMsg{o}, ts)
}

// ---- Time management (§8) ----

// mayStamp checks a time stamp given to an update, interaction or delete:
// a regulating federate may not send below its time plus lookahead. It
// reports whether the federate is regulating, which decides whether the
// message travels in time-stamp order.
func (f *Federate) mayStamp(hasTime bool, ts float64) (regulating bool, err error) {
	regulating = f.tm.Regulating()
	if hasTime && regulating {
		if err := f.tm.CheckSend(ts); err != nil {
			return regulating, f.timeError(err, ts)
		}
	}
	return regulating, nil
}

// timeError maps the time core's errors onto the HLA exceptions.
func (f *Federate) timeError(err error, given float64) error {
	var ite *lbts.InvalidTimeError
	if errors.As(err, &ite) {
		if ite.Op == "advance" {
			return fmt.Errorf("%w: %v is before the federate's time %v", ErrLogicalTimeAlreadyPassed, f.tk.make(ite.Requested), f.tk.make(ite.Min))
		}
		return &InvalidLogicalTimeError{Given: f.tk.make(ite.Requested), Earliest: f.tk.make(ite.Min)}
	}
	for _, m := range []struct{ from, to error }{
		{lbts.ErrInTimeAdvance, ErrInTimeAdvancingState},
		{lbts.ErrRegulationPending, ErrRequestForTimeRegulationPending},
		{lbts.ErrConstrainedPending, ErrRequestForTimeConstrainedPending},
		{lbts.ErrRegulationAlreadyEnabled, ErrTimeRegulationAlreadyEnabled},
		{lbts.ErrConstrainedAlreadyEnabled, ErrTimeConstrainedAlreadyEnabled},
		{lbts.ErrRegulationNotEnabled, ErrTimeRegulationIsNotEnabled},
		{lbts.ErrConstrainedNotEnabled, ErrTimeConstrainedIsNotEnabled},
		{lbts.ErrInvalidLookahead, ErrInvalidLookahead},
		{lbts.ErrTimeAlreadyPassed, ErrLogicalTimeAlreadyPassed},
		{lbts.ErrInvalidTime, ErrInvalidLogicalTime},
	} {
		if errors.Is(err, m.from) {
			return fmt.Errorf("%w: %w", m.to, err)
		}
	}
	return fmt.Errorf("%w: %w", ErrRTIinternalError, err)
}

// EnableTimeRegulation (§8.2) makes the federate time-regulating with the
// given lookahead. TimeRegulationEnabled follows.
func (f *Federate) EnableTimeRegulation(lookahead LogicalTime) error {
	l, err := f.tk.interval(lookahead)
	if err != nil {
		return err
	}
	return f.call(func() error {
		if err := f.tm.EnableRegulation(l); err != nil {
			return f.timeError(err, l)
		}
		return nil
	})
}

// DisableTimeRegulation (§8.4).
func (f *Federate) DisableTimeRegulation() error {
	return f.call(func() error {
		if err := f.tm.DisableRegulation(); err != nil {
			return f.timeError(err, 0)
		}
		return nil
	})
}

// EnableTimeConstrained (§8.5). TimeConstrainedEnabled follows.
func (f *Federate) EnableTimeConstrained() error {
	return f.call(func() error {
		if err := f.tm.EnableConstrained(); err != nil {
			return f.timeError(err, 0)
		}
		return nil
	})
}

// DisableTimeConstrained (§8.7).
func (f *Federate) DisableTimeConstrained() error {
	return f.call(func() error {
		if err := f.tm.DisableConstrained(); err != nil {
			return f.timeError(err, 0)
		}
		return nil
	})
}

// TimeAdvanceRequest (§8.8) asks to advance to t. TimeAdvanceGrant
// follows, after every time-stamp-order message up to t.
func (f *Federate) TimeAdvanceRequest(t LogicalTime) error {
	ts, err := f.tk.value(t)
	if err != nil {
		return err
	}
	return f.call(func() error {
		if err := f.tm.RequestAdvance(ts); err != nil {
			return f.timeError(err, ts)
		}
		f.rel.Flush() // bundling never delays a grant
		if f.trace != nil {
			f.traceRequest("TAR", ts)
		}
		return nil
	})
}

// ModifyLookahead (§8.19).
func (f *Federate) ModifyLookahead(lookahead LogicalTime) error {
	l, err := f.tk.interval(lookahead)
	if err != nil {
		return err
	}
	return f.call(func() error {
		if err := f.tm.ModifyLookahead(l); err != nil {
			return f.timeError(err, l)
		}
		if f.trace != nil {
			f.traceLookahead(l)
		}
		return nil
	})
}

// QueryLogicalTime (§8.17) returns the federate's logical time.
func (f *Federate) QueryLogicalTime() (LogicalTime, error) {
	var t float64
	err := f.call(func() error { t = f.tm.Time(); return nil })
	return f.tk.make(t), err
}

// QueryLookahead (§8.20).
func (f *Federate) QueryLookahead() (LogicalTime, error) {
	var l float64
	err := f.call(func() error {
		if !f.tm.Regulating() {
			return ErrTimeRegulationIsNotEnabled
		}
		l = f.tm.Lookahead()
		return nil
	})
	return f.tk.make(l), err
}

// QueryGALT (§8.16) returns the greatest available logical time, and
// false when no regulating federate bounds it.
func (f *Federate) QueryGALT() (LogicalTime, bool, error) {
	var t float64
	var ok bool
	err := f.call(func() error { t, ok = f.tm.GALT(); return nil })
	return f.tk.make(t), ok, err
}

// ---- Federation management (§4) ----

// ResignFederationExecution (§4.10) leaves the federation: it applies
// action to this federate's objects, tells the others, frees the
// federate's name, and closes the federate.
func (f *Federate) ResignFederationExecution(ctx context.Context, action ResignAction) error {
	if !action.valid() {
		return fmt.Errorf("%w: %d", ErrInvalidResignAction, int(action))
	}
	err := f.call(func() error {
		if len(f.st.owned) > 0 && !action.deletes() && action != UnconditionallyDivestAttributes {
			return fmt.Errorf("%w: %d object instances", ErrFederateOwnsAttributes, len(f.st.owned))
		}
		if action.deletes() {
			for h := range f.st.owned {
				o, err := f.st.delete(h, nil, false, 0, false)
				if err != nil {
					return err
				}
				if _, err := f.send(o); err != nil {
					return err
				}
				if f.trace != nil {
					f.traceSend(o.msg)
				}
			}
		}
		_, err := f.send(outMsg{group: controlGroup, reliable: true, msg: &wireMsg{Kind: kindResign}})
		if err == nil && f.trace != nil {
			f.traceResign()
		}
		return err
	})
	if err != nil {
		return err
	}
	// Give the reliable layer a moment to get the last messages out and
	// repaired; the control plane's resign reaches everyone regardless.
	f.linger(ctx)
	if err := f.ctl.ResignFederate(ctx); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// linger waits a few heartbeat rounds (bounded by ctx) so that receivers
// can ask for what they missed of the federate's last messages.
func (f *Federate) linger(ctx context.Context) {
	t := f.cfg.tick() * 20
	select {
	case <-ctx.Done():
	case <-f.done:
	case <-time.After(t):
	}
}

// ---- Support services (§10) ----

// GetObjectClassHandle (§10.6) accepts a fully qualified name, a name
// without the root, or a unique bare name.
func (f *Federate) GetObjectClassHandle(name string) (ObjectClassHandle, error) {
	c, ok := f.fdd.ObjectClass(name)
	if !ok {
		return 0, fmt.Errorf("%w: object class %q", ErrNameNotFound, name)
	}
	return c.Handle, nil
}

// GetObjectClassName (§10.7) returns the fully qualified name.
func (f *Federate) GetObjectClassName(h ObjectClassHandle) (string, error) {
	c, ok := f.fdd.ObjectClassByHandle(h)
	if !ok {
		return "", fmt.Errorf("%w: %d", ErrInvalidObjectClassHandle, h)
	}
	return c.QualifiedName, nil
}

// GetAttributeHandle (§10.11).
func (f *Federate) GetAttributeHandle(class ObjectClassHandle, name string) (AttributeHandle, error) {
	c, ok := f.fdd.ObjectClassByHandle(class)
	if !ok {
		return 0, fmt.Errorf("%w: %d", ErrInvalidObjectClassHandle, class)
	}
	a, ok := c.Attribute(name)
	if !ok {
		return 0, fmt.Errorf("%w: attribute %q of %s", ErrNameNotFound, name, c.QualifiedName)
	}
	return a.Handle, nil
}

// GetAttributeName (§10.12).
func (f *Federate) GetAttributeName(class ObjectClassHandle, h AttributeHandle) (string, error) {
	c, ok := f.fdd.ObjectClassByHandle(class)
	if !ok {
		return "", fmt.Errorf("%w: %d", ErrInvalidObjectClassHandle, class)
	}
	a, ok := c.AttributeByHandle(h)
	if !ok {
		return "", fmt.Errorf("%w: %d of %s", ErrAttributeNotDefined, h, c.QualifiedName)
	}
	return a.Name, nil
}

// GetInteractionClassHandle (§10.15).
func (f *Federate) GetInteractionClassHandle(name string) (InteractionClassHandle, error) {
	c, ok := f.fdd.InteractionClass(name)
	if !ok {
		return 0, fmt.Errorf("%w: interaction class %q", ErrNameNotFound, name)
	}
	return c.Handle, nil
}

// GetInteractionClassName (§10.16).
func (f *Federate) GetInteractionClassName(h InteractionClassHandle) (string, error) {
	c, ok := f.fdd.InteractionClassByHandle(h)
	if !ok {
		return "", fmt.Errorf("%w: %d", ErrInvalidInteractionClassHandle, h)
	}
	return c.QualifiedName, nil
}

// GetParameterHandle (§10.17).
func (f *Federate) GetParameterHandle(class InteractionClassHandle, name string) (ParameterHandle, error) {
	c, ok := f.fdd.InteractionClassByHandle(class)
	if !ok {
		return 0, fmt.Errorf("%w: %d", ErrInvalidInteractionClassHandle, class)
	}
	p, ok := c.Parameter(name)
	if !ok {
		return 0, fmt.Errorf("%w: parameter %q of %s", ErrNameNotFound, name, c.QualifiedName)
	}
	return p.Handle, nil
}

// GetParameterName (§10.18).
func (f *Federate) GetParameterName(class InteractionClassHandle, h ParameterHandle) (string, error) {
	c, ok := f.fdd.InteractionClassByHandle(class)
	if !ok {
		return "", fmt.Errorf("%w: %d", ErrInvalidInteractionClassHandle, class)
	}
	p, ok := c.ParameterByHandle(h)
	if !ok {
		return "", fmt.Errorf("%w: %d of %s", ErrInteractionParameterNotDefined, h, c.QualifiedName)
	}
	return p.Name, nil
}

// GetFederateHandle (§10.4).
func (f *Federate) GetFederateHandle(name string) (FederateHandle, error) {
	if name == f.name {
		return f.handle, nil
	}
	var h FederateHandle
	err := f.call(func() error {
		for _, m := range f.members {
			if m.Name == name {
				h = m.Handle
				return nil
			}
		}
		return fmt.Errorf("%w: federate %q", ErrNameNotFound, name)
	})
	return h, err
}

// GetFederateName (§10.5).
func (f *Federate) GetFederateName(h FederateHandle) (string, error) {
	if h == f.handle {
		return f.name, nil
	}
	var name string
	err := f.call(func() error {
		if m, ok := f.members[h]; ok {
			name = m.Name
			return nil
		}
		// A member whose join the loop has not handled yet.
		for _, m := range f.ctl.Members() {
			if m.Handle == h {
				name = m.Name
				return nil
			}
		}
		return fmt.Errorf("%w: %d", ErrFederateHandleNotKnown, h)
	})
	return name, err
}

// GetObjectInstanceHandle (§10.9).
func (f *Federate) GetObjectInstanceHandle(name string) (ObjectInstanceHandle, error) {
	var h ObjectInstanceHandle
	err := f.call(func() error {
		var ok bool
		if h, ok = f.st.names[name]; !ok {
			return fmt.Errorf("%w: %q", ErrObjectInstanceNotKnown, name)
		}
		return nil
	})
	return h, err
}

// GetObjectInstanceName (§10.10).
func (f *Federate) GetObjectInstanceName(h ObjectInstanceHandle) (string, error) {
	var name string
	err := f.call(func() error {
		if o, ok := f.st.owned[h]; ok {
			name = o.name
			return nil
		}
		if k, ok := f.st.known[h]; ok {
			name = k.name
			return nil
		}
		return fmt.Errorf("%w: %v", ErrObjectInstanceNotKnown, h)
	})
	return name, err
}

// GetKnownObjectClassHandle (§10.8).
func (f *Federate) GetKnownObjectClassHandle(h ObjectInstanceHandle) (ObjectClassHandle, error) {
	var c ObjectClassHandle
	err := f.call(func() error {
		if o, ok := f.st.owned[h]; ok {
			c = o.class.Handle
			return nil
		}
		if k, ok := f.st.known[h]; ok {
			c = k.known.Handle
			return nil
		}
		return fmt.Errorf("%w: %v", ErrObjectInstanceNotKnown, h)
	})
	return c, err
}
