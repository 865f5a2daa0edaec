package peer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/meshrti/meshrti/lbts"
	"github.com/meshrti/meshrti/peer/transport"
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
	if f.cfg.Manual {
		// The in-process registry answers at once: no goroutine, so
		// that the run stays deterministic.
		return f.call(func() error {
			ok, err := f.ctl.Acquire(context.Background(), "objectName/"+name)
			f.reserved(name, ok, err)
			return nil
		})
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
				f.reserved(name, ok, err)
				return nil
			})
		}()
		return nil
	})
}

// reserved reports the control plane's answer to a name reservation.
// Under mu.
func (f *Federate) reserved(name string, ok bool, err error) {
	if err == nil && ok {
		f.st.reserved[name] = true
		f.events.push(ObjectInstanceNameReservationSucceeded{Name: name})
		return
	}
	if err != nil {
		f.log.Warn().Err(err).Str("name", name).Msg("name reservation failed")
	}
	f.events.push(ObjectInstanceNameReservationFailed{Name: name})
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
	return f.callSend(func() error {
		_, err := f.update(obj, values, tag, false, 0)
		return err
	})
}

// UpdateAttributeValuesWithTime (§6.6) sends new values with a time
// stamp. Attributes whose order is TimeStamp (the FOM's, or the one set
// with ChangeAttributeOrderType) travel in time-stamp order when this
// federate is time-regulating; t must then be at least its logical time
// plus lookahead, or an *InvalidLogicalTimeError is returned. It is
// UpdateAttributeValuesWithTimeRetractable without the handle.
func (f *Federate) UpdateAttributeValuesWithTime(obj ObjectInstanceHandle, values AttributeValues, tag []byte, t LogicalTime) error {
	_, err := f.UpdateAttributeValuesWithTimeRetractable(obj, values, tag, t)
	return err
}

// UpdateAttributeValuesWithTimeRetractable is UpdateAttributeValuesWithTime
// returning the message's retraction handle (the 1516e overload with a
// time returns it), for Retract. The handle is valid (h.Valid()) only
// when values went out in time-stamp order over reliable transport, as
// the standard's MessageRetractionReturn says whether it is.
func (f *Federate) UpdateAttributeValuesWithTimeRetractable(obj ObjectInstanceHandle, values AttributeValues, tag []byte, t LogicalTime) (MessageRetractionHandle, error) {
	ts, err := f.tk.Value(t)
	if err != nil {
		return MessageRetractionHandle{}, err
	}
	var h MessageRetractionHandle
	err = f.callSend(func() (err error) {
		h, err = f.update(obj, values, tag, true, ts)
		return err
	})
	return h, err
}

func (f *Federate) update(obj ObjectInstanceHandle, values AttributeValues, tag []byte, hasTime bool, ts float64) (MessageRetractionHandle, error) {
	reg, err := f.mayStamp(hasTime, ts)
	if err != nil {
		return MessageRetractionHandle{}, err
	}
	outs, err := f.st.update(obj, values, tag, hasTime, ts, reg)
	if err != nil {
		return MessageRetractionHandle{}, err
	}
	if f.blocked(outs) {
		return MessageRetractionHandle{}, errBlocked
	}
	return f.sendAll(outs, ts)
}

// sendAll sends messages and records time-stamped ones with the time
// core. It returns the retraction handle of the reliable time-stamp-order
// message among them (an update has at most one), or the zero handle.
func (f *Federate) sendAll(outs []outMsg, ts float64) (MessageRetractionHandle, error) {
	var h MessageRetractionHandle
	for _, o := range outs {
		seq, err := f.send(o)
		if err != nil {
			return h, err
		}
		if f.trace != nil {
			f.traceSend(o.msg)
		}
		if o.msg.TSO && o.reliable {
			if err := f.tm.SentTSO(uint32(o.group), seq, ts); err != nil {
				return h, f.timeError(err, ts)
			}
			h = f.recordSent(o, seq, ts)
		}
	}
	return h, nil
}

// SendInteraction (§6.8) sends an interaction of a published class in
// receive order.
func (f *Federate) SendInteraction(class InteractionClassHandle, values ParameterValues, tag []byte) error {
	return f.callSend(func() error {
		_, err := f.interact(class, values, tag, false, 0)
		return err
	})
}

// SendInteractionWithTime (§6.8) sends an interaction with a time stamp;
// see UpdateAttributeValuesWithTime for the rules (the class's order may
// be changed with ChangeInteractionOrderType).
func (f *Federate) SendInteractionWithTime(class InteractionClassHandle, values ParameterValues, tag []byte, t LogicalTime) error {
	_, err := f.SendInteractionWithTimeRetractable(class, values, tag, t)
	return err
}

// SendInteractionWithTimeRetractable is SendInteractionWithTime returning
// the retraction handle; see UpdateAttributeValuesWithTimeRetractable.
func (f *Federate) SendInteractionWithTimeRetractable(class InteractionClassHandle, values ParameterValues, tag []byte, t LogicalTime) (MessageRetractionHandle, error) {
	ts, err := f.tk.Value(t)
	if err != nil {
		return MessageRetractionHandle{}, err
	}
	var h MessageRetractionHandle
	err = f.callSend(func() (err error) {
		h, err = f.interact(class, values, tag, true, ts)
		return err
	})
	return h, err
}

func (f *Federate) interact(class InteractionClassHandle, values ParameterValues, tag []byte, hasTime bool, ts float64) (MessageRetractionHandle, error) {
	reg, err := f.mayStamp(hasTime, ts)
	if err != nil {
		return MessageRetractionHandle{}, err
	}
	o, err := f.st.interaction(class, values, tag, hasTime, ts, reg)
	if err != nil {
		return MessageRetractionHandle{}, err
	}
	if f.blocked([]outMsg{o}) {
		return MessageRetractionHandle{}, errBlocked
	}
	return f.sendAll([]outMsg{o}, ts)
}

// DeleteObjectInstance (§6.10) deletes an instance this federate holds
// the delete privilege of.
func (f *Federate) DeleteObjectInstance(obj ObjectInstanceHandle, tag []byte) error {
	return f.call(func() error {
		_, err := f.del(obj, tag, false, 0)
		return err
	})
}

// DeleteObjectInstanceWithTime (§6.10) deletes with a time stamp; a
// regulating federate's time-stamped delete travels in time-stamp order.
func (f *Federate) DeleteObjectInstanceWithTime(obj ObjectInstanceHandle, tag []byte, t LogicalTime) error {
	_, err := f.DeleteObjectInstanceWithTimeRetractable(obj, tag, t)
	return err
}

// DeleteObjectInstanceWithTimeRetractable is DeleteObjectInstanceWithTime
// returning the retraction handle; see
// UpdateAttributeValuesWithTimeRetractable. Retracting a delete does not
// give the instance back to the sender: only the receivers that had not
// yet been delivered the removal keep the instance.
func (f *Federate) DeleteObjectInstanceWithTimeRetractable(obj ObjectInstanceHandle, tag []byte, t LogicalTime) (MessageRetractionHandle, error) {
	ts, err := f.tk.Value(t)
	if err != nil {
		return MessageRetractionHandle{}, err
	}
	var h MessageRetractionHandle
	err = f.call(func() (err error) {
		h, err = f.del(obj, tag, true, ts)
		return err
	})
	return h, err
}

func (f *Federate) del(obj ObjectInstanceHandle, tag []byte, hasTime bool, ts float64) (MessageRetractionHandle, error) {
	reg, err := f.mayStamp(hasTime, ts)
	if err != nil {
		return MessageRetractionHandle{}, err
	}
	o, err := f.st.delete(obj, tag, hasTime, ts, reg)
	if err != nil {
		return MessageRetractionHandle{}, err
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
			return fmt.Errorf("%w: %v is before the federate's time %v", ErrLogicalTimeAlreadyPassed, f.tk.Make(ite.Requested), f.tk.Make(ite.Min))
		}
		return &InvalidLogicalTimeError{Given: f.tk.Make(ite.Requested), Earliest: f.tk.Make(ite.Min), After: ite.Strict}
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
	l, err := f.tk.Interval(lookahead)
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

// DisableTimeConstrained (§8.7). Time-stamp-order messages still queued
// are delivered at once, in receive order (ReceivedOrder Receive), and
// receive-order messages held for the time advancing state follow.
func (f *Federate) DisableTimeConstrained() error {
	return f.call(func() error {
		if err := f.tm.DisableConstrained(); err != nil {
			return f.timeError(err, 0)
		}
		f.flush() // the queue first, then what was held
		f.releaseHeld()
		return nil
	})
}

// TimeAdvanceRequest (§8.8) asks to advance to t. TimeAdvanceGrant
// follows, after every time-stamp-order message up to t.
//
// The five time advance services fail alike (§8.8-§8.12):
// ErrLogicalTimeAlreadyPassed when t is before the federate's time,
// ErrInvalidLogicalTime for a time of the wrong representation or not
// finite, ErrInTimeAdvancingState while another request is pending, and
// ErrRequestForTimeRegulationPending or ErrRequestForTimeConstrainedPending
// while an enable is pending.
func (f *Federate) TimeAdvanceRequest(t LogicalTime) error {
	return f.advance(lbts.TimeAdvanceRequest, t)
}

// TimeAdvanceRequestAvailable (§8.9) asks to advance to t, like
// TimeAdvanceRequest, but the grant may come before every message at
// exactly t has arrived: time-stamp-order messages at t may still be
// delivered after TimeAdvanceGrant(t) (by the next request). At zero
// lookahead the federate may then still send at t.
func (f *Federate) TimeAdvanceRequestAvailable(t LogicalTime) error {
	return f.advance(lbts.TimeAdvanceRequestAvailable, t)
}

// NextMessageRequest (§8.10) asks to advance to the time stamp of the
// next time-stamp-order message, if it is at most t, or else to t: every
// message at that time is delivered, then TimeAdvanceGrant to it.
func (f *Federate) NextMessageRequest(t LogicalTime) error {
	return f.advance(lbts.NextMessageRequest, t)
}

// NextMessageRequestAvailable (§8.11) is NextMessageRequest granted as
// TimeAdvanceRequestAvailable is: more messages at exactly the granted
// time may follow the grant.
func (f *Federate) NextMessageRequestAvailable(t LogicalTime) error {
	return f.advance(lbts.NextMessageRequestAvailable, t)
}

// FlushQueueRequest (§8.12) delivers every queued time-stamp-order
// message at once, also those beyond t, and grants the smallest of t,
// the GALT and the earliest delivered message's time stamp (never below
// the federate's time). Later messages may then arrive with time stamps
// below some already delivered.
func (f *Federate) FlushQueueRequest(t LogicalTime) error {
	return f.advance(lbts.FlushQueueRequest, t)
}

// advance starts a time advance of the given kind. Receive-order
// messages held for the time advancing state (asynchronous delivery off)
// are delivered at once.
func (f *Federate) advance(kind lbts.RequestKind, t LogicalTime) error {
	ts, err := f.tk.Value(t)
	if err != nil {
		return err
	}
	return f.call(func() error {
		if err := f.tm.Request(kind, ts); err != nil {
			return f.timeError(err, ts)
		}
		f.rel.Flush() // bundling never delays a grant
		if f.trace != nil {
			f.traceRequest(kind.String(), ts)
		}
		f.releaseHeld()
		return nil
	})
}

// EnableAsynchronousDelivery (§8.14): receive-order messages are
// delivered whenever they arrive, also to a time-constrained federate
// that is not in the time advancing state. Held ones are delivered now.
func (f *Federate) EnableAsynchronousDelivery() error {
	return f.call(func() error {
		if f.st.async {
			return ErrAsynchronousDeliveryAlreadyEnabled
		}
		f.st.async = true
		f.releaseHeld()
		return nil
	})
}

// DisableAsynchronousDelivery (§8.15), the default: a time-constrained
// federate gets receive-order messages only while a time advance is
// pending; until then they wait, in the order they came.
func (f *Federate) DisableAsynchronousDelivery() error {
	return f.call(func() error {
		if !f.st.async {
			return ErrAsynchronousDeliveryAlreadyDisabled
		}
		f.st.async = false
		return nil
	})
}

// Retract (§8.21) withdraws a time-stamp-order message this federate
// sent, named by the handle a ...Retractable service returned. Receivers
// that still hold it queued drop it; those that were already delivered it
// get RequestRetraction. Errors: ErrTimeRegulationIsNotEnabled when the
// federate is not time-regulating; ErrInvalidMessageRetractionHandle for
// a handle that is not this federate's, is zero, or was retracted
// already; ErrMessageCanNoLongerBeRetracted when the message's time
// stamp is not above the federate's logical time (at it after a grant to
// an Available request), since receivers may have been granted past it.
func (f *Federate) Retract(h MessageRetractionHandle) error {
	return f.callSend(func() error {
		if !f.tm.Regulating() {
			return ErrTimeRegulationIsNotEnabled
		}
		if h.Federate != f.handle || h.Serial == 0 || h.Serial > f.msgID {
			return fmt.Errorf("%w: %v", ErrInvalidMessageRetractionHandle, h)
		}
		s, ok := f.st.sentTSO[h.Serial]
		if !ok {
			// A handle this federate gave out whose record was dropped
			// once it could no longer be retracted.
			return fmt.Errorf("%w: %v", ErrMessageCanNoLongerBeRetracted, h)
		}
		if s.retracted {
			return fmt.Errorf("%w: %v was retracted already", ErrInvalidMessageRetractionHandle, h)
		}
		if err := f.tm.CheckRetract(s.ts); err != nil {
			if errors.Is(err, lbts.ErrCannotRetract) {
				delete(f.st.sentTSO, h.Serial)
				return fmt.Errorf("%w: %v at %v", ErrMessageCanNoLongerBeRetracted, h, f.tk.Make(s.ts))
			}
			return f.timeError(err, s.ts)
		}
		o := outMsg{group: transport.Group(s.group), reliable: true, msg: &wireMsg{Kind: kindRetract, Ref: h.Serial, RefSeq: s.seq}}
		if f.blocked([]outMsg{o}) {
			return errBlocked
		}
		seq, err := f.send(o)
		if err != nil {
			return err
		}
		// Later promises cover the retraction, so that no receiver is
		// granted past the message before the retraction reaches it.
		if err := f.tm.Covered(s.group, seq); err != nil {
			return fmt.Errorf("%w: %w", ErrRTIinternalError, err)
		}
		s.retracted = true
		if f.trace != nil {
			f.traceRetract(h.Serial)
		}
		return nil
	})
}

// ChangeAttributeOrderType (§8.23) sets the order (Receive or TimeStamp)
// in which this federate sends the given attributes of an instance it
// owns, overriding the FOM. Errors: ErrObjectInstanceNotKnown,
// ErrAttributeNotDefined, ErrAttributeNotOwned, and ErrInvalidOrderType
// for an order that is neither.
func (f *Federate) ChangeAttributeOrderType(obj ObjectInstanceHandle, order OrderType, attrs ...AttributeHandle) error {
	return f.call(func() error { return f.st.changeAttributeOrder(obj, order, attrs) })
}

// ChangeInteractionOrderType (§8.24) sets the order in which this
// federate sends interactions of a class it publishes, overriding the
// FOM. Errors: ErrInteractionClassNotDefined,
// ErrInteractionClassNotPublished, ErrInvalidOrderType.
func (f *Federate) ChangeInteractionOrderType(class InteractionClassHandle, order OrderType) error {
	return f.call(func() error { return f.st.changeInteractionOrder(class, order) })
}

// ModifyLookahead (§8.19).
func (f *Federate) ModifyLookahead(lookahead LogicalTime) error {
	l, err := f.tk.Interval(lookahead)
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
	return f.tk.Make(t), err
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
	return f.tk.Make(l), err
}

// QueryGALT (§8.16) returns the greatest available logical time, and
// false when no regulating federate bounds it.
func (f *Federate) QueryGALT() (LogicalTime, bool, error) {
	var t float64
	var ok bool
	err := f.call(func() error { t, ok = f.tm.GALT(); return nil })
	return f.tk.Make(t), ok, err
}

// QueryLITS (§8.18) returns the least incoming time stamp: the smaller of
// the GALT and the earliest queued time-stamp-order message, and false
// when neither bounds it.
func (f *Federate) QueryLITS() (LogicalTime, bool, error) {
	var t float64
	var ok bool
	err := f.call(func() error { t, ok = f.tm.LITS(); return nil })
	return f.tk.Make(t), ok, err
}

// ---- Federation management (§4) ----

// ResignFederationExecution (§4.10) leaves the federation: it applies
// action to this federate's objects, tells the others, frees the
// federate's name, and closes the federate.
func (f *Federate) ResignFederationExecution(ctx context.Context, action ResignAction) error {
	if !action.Valid() {
		return fmt.Errorf("%w: %d", ErrInvalidResignAction, int(action))
	}
	err := f.call(func() error {
		if len(f.st.owned) > 0 && !action.Deletes() && action != UnconditionallyDivestAttributes {
			return fmt.Errorf("%w: %d object instances", ErrFederateOwnsAttributes, len(f.st.owned))
		}
		if action.Deletes() {
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
	if f.cfg.Manual {
		return // nothing would tick while it waited
	}
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
