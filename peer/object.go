package peer

import (
	"time"

	"github.com/meshrti/meshrti/peer/updatecond"
)

// Object management (IEEE 1516.1-2010 §6): names, registration, updates,
// interactions, deletes. Each service runs in the federate's core
// (peer/internal/core, objects.go).

// ReserveObjectInstanceName (§6.2) asks the federation for a unique
// object instance name, through the control plane's register. The answer
// comes as an ObjectInstanceNameReservationSucceeded or ...Failed event.
// Errors: ErrIllegalName (empty, or starting with "HLA").
func (f *Federate) ReserveObjectInstanceName(name string) (err error) {
	defer f.reported("reserveObjectInstanceName", &err, func() ([]string, []string) { return texts(name), nil })
	return f.call(func() error { return f.core.ReserveObjectInstanceName(name) })
}

// RegisterObjectInstance (§6.8) creates an instance of a published class
// and returns its handle. name is "" for an RTI-chosen name, otherwise a
// name this federate reserved. The federate owns the attributes it
// publishes and the privilege to delete. Errors:
// ErrObjectClassNotDefined, ErrObjectClassNotPublished,
// ErrObjectInstanceNameNotReserved, ErrObjectInstanceNameInUse.
func (f *Federate) RegisterObjectInstance(class ObjectClassHandle, name string) (r0 ObjectInstanceHandle, err error) {
	defer f.reported("registerObjectInstance", &err, func() ([]string, []string) { return texts(class, name), texts(r0) })
	return callValue(f, func() (ObjectInstanceHandle, error) { return f.core.RegisterObjectInstance(class, name) })
}

// UpdateAttributeValues (§6.10) sends new values of owned attributes in
// receive order. Errors: ErrObjectInstanceNotKnown,
// ErrAttributeNotDefined, ErrAttributeNotOwned.
func (f *Federate) UpdateAttributeValues(obj ObjectInstanceHandle, values AttributeValues, tag []byte) (err error) {
	defer f.reported("updateAttributeValues", &err, func() ([]string, []string) { return texts(obj, values, tag), nil })
	values, send, err := f.condition(obj, values, nil)
	if err != nil || !send {
		return err
	}
	return f.callSend(func() error {
		_, err := f.core.UpdateAttributeValues(obj, values, tag, nil)
		return err
	})
}

// UpdateAttributeValuesWithTime (§6.10) sends new values with a time
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
func (f *Federate) UpdateAttributeValuesWithTimeRetractable(obj ObjectInstanceHandle, values AttributeValues, tag []byte, t LogicalTime) (r0 MessageRetractionHandle, err error) {
	defer f.reported("updateAttributeValues", &err, func() ([]string, []string) { return texts(obj, values, tag, t), texts(r0) })
	if t == nil {
		return MessageRetractionHandle{}, errNilTime
	}
	values, send, err := f.condition(obj, values, t)
	if err != nil || !send {
		return MessageRetractionHandle{}, err
	}
	var h MessageRetractionHandle
	err = f.callSend(func() (err error) {
		h, err = f.core.UpdateAttributeValues(obj, values, tag, t)
		return err
	})
	return h, err
}

// SendInteraction (§6.12) sends an interaction of a published class in
// receive order. Errors: ErrInteractionClassNotDefined,
// ErrInteractionClassNotPublished, ErrInteractionParameterNotDefined.
func (f *Federate) SendInteraction(class InteractionClassHandle, values ParameterValues, tag []byte) (err error) {
	defer f.reported("sendInteraction", &err, func() ([]string, []string) { return texts(class, values, tag), nil })
	return f.callSend(func() error {
		_, err := f.core.SendInteraction(class, values, tag, nil)
		return err
	})
}

// SendInteractionWithTime (§6.12) sends an interaction with a time stamp;
// see UpdateAttributeValuesWithTime for the rules (the class's order may
// be changed with ChangeInteractionOrderType).
func (f *Federate) SendInteractionWithTime(class InteractionClassHandle, values ParameterValues, tag []byte, t LogicalTime) error {
	_, err := f.SendInteractionWithTimeRetractable(class, values, tag, t)
	return err
}

// SendInteractionWithTimeRetractable is SendInteractionWithTime returning
// the retraction handle; see UpdateAttributeValuesWithTimeRetractable.
func (f *Federate) SendInteractionWithTimeRetractable(class InteractionClassHandle, values ParameterValues, tag []byte, t LogicalTime) (r0 MessageRetractionHandle, err error) {
	defer f.reported("sendInteraction", &err, func() ([]string, []string) { return texts(class, values, tag, t), texts(r0) })
	if t == nil {
		return MessageRetractionHandle{}, errNilTime
	}
	var h MessageRetractionHandle
	err = f.callSend(func() (err error) {
		h, err = f.core.SendInteraction(class, values, tag, t)
		return err
	})
	return h, err
}

// DeleteObjectInstance (§6.14) deletes an instance this federate holds
// the delete privilege of. Errors: ErrObjectInstanceNotKnown,
// ErrDeletePrivilegeNotHeld.
func (f *Federate) DeleteObjectInstance(obj ObjectInstanceHandle, tag []byte) (err error) {
	defer f.reported("deleteObjectInstance", &err, func() ([]string, []string) { return texts(obj, tag), nil })
	err = f.call(func() error {
		_, err := f.core.DeleteObjectInstance(obj, tag, nil)
		return err
	})
	f.forgetConditions(obj, err)
	return err
}

// DeleteObjectInstanceWithTime (§6.14) deletes with a time stamp; a
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
func (f *Federate) DeleteObjectInstanceWithTimeRetractable(obj ObjectInstanceHandle, tag []byte, t LogicalTime) (r0 MessageRetractionHandle, err error) {
	defer f.reported("deleteObjectInstance", &err, func() ([]string, []string) { return texts(obj, tag, t), texts(r0) })
	if t == nil {
		return MessageRetractionHandle{}, errNilTime
	}
	var h MessageRetractionHandle
	err = f.call(func() (err error) {
		h, err = f.core.DeleteObjectInstance(obj, tag, t)
		return err
	})
	f.forgetConditions(obj, err)
	return h, err
}

// ReleaseObjectInstanceName (§6.4) gives back a name this federate
// reserved and has not used. Errors: ErrObjectInstanceNameNotReserved.
func (f *Federate) ReleaseObjectInstanceName(name string) (err error) {
	defer f.reported("releaseObjectInstanceName", &err, func() ([]string, []string) { return texts(name), nil })
	return f.call(func() error { return f.core.ReleaseObjectInstanceName(name) })
}

// ReserveMultipleObjectInstanceName (§6.5) asks for several names at
// once, all or none: MultipleObjectInstanceNameReservationSucceeded or
// ...Failed follows. Errors: ErrNameSetWasEmpty, ErrIllegalName.
func (f *Federate) ReserveMultipleObjectInstanceName(names ...string) (err error) {
	defer f.reported("reserveMultipleObjectInstanceName", &err, func() ([]string, []string) { return texts(names), nil })
	return f.call(func() error { return f.core.ReserveMultipleObjectInstanceName(names) })
}

// ReleaseMultipleObjectInstanceName (§6.7) gives back names this
// federate reserved. Errors: ErrObjectInstanceNameNotReserved (and
// nothing is given back).
func (f *Federate) ReleaseMultipleObjectInstanceName(names ...string) (err error) {
	defer f.reported("releaseMultipleObjectInstanceName", &err, func() ([]string, []string) { return texts(names), nil })
	return f.call(func() error { return f.core.ReleaseMultipleObjectInstanceName(names) })
}

// LocalDeleteObjectInstance (§6.16) makes this federate forget an
// instance: the others are not told, and it is discovered again when it
// is next updated or announced. Errors: ErrObjectInstanceNotKnown,
// ErrFederateOwnsAttributes.
func (f *Federate) LocalDeleteObjectInstance(obj ObjectInstanceHandle) (err error) {
	defer f.reported("localDeleteObjectInstance", &err, func() ([]string, []string) { return texts(obj), nil })
	return f.call(func() error { return f.core.LocalDeleteObjectInstance(obj) })
}

// RequestAttributeValueUpdate (§6.19) asks the owners of attrs of obj for
// their current values: they get ProvideAttributeValueUpdate and update
// them. Errors: ErrObjectInstanceNotKnown, ErrAttributeNotDefined.
func (f *Federate) RequestAttributeValueUpdate(obj ObjectInstanceHandle, tag []byte, attrs ...AttributeHandle) (err error) {
	defer f.reported("requestAttributeValueUpdate", &err, func() ([]string, []string) { return texts(obj, tag, attrs), nil })
	return f.call(func() error { return f.core.RequestAttributeValueUpdate(obj, attrs, tag) })
}

// RequestAttributeValueUpdateForClass (§6.19, the class overload) asks
// the owners of attrs of every instance of class and its subclasses.
// Errors: ErrObjectClassNotDefined, ErrAttributeNotDefined.
func (f *Federate) RequestAttributeValueUpdateForClass(class ObjectClassHandle, tag []byte, attrs ...AttributeHandle) (err error) {
	defer f.reported("requestAttributeValueUpdate", &err, func() ([]string, []string) { return texts(class, tag, attrs), nil })
	return f.call(func() error { return f.core.RequestClassAttributeValueUpdate(class, attrs, tag) })
}

// RequestAttributeTransportationTypeChange (§6.23) makes this
// federate's updates of attrs of obj travel by t (HLAbestEffort skips
// repair); ConfirmAttributeTransportationTypeChange follows. Errors:
// ErrObjectInstanceNotKnown, ErrAttributeNotDefined,
// ErrAttributeNotOwned, ErrInvalidTransportationType.
func (f *Federate) RequestAttributeTransportationTypeChange(obj ObjectInstanceHandle, t TransportationType, attrs ...AttributeHandle) (err error) {
	defer f.reported("requestAttributeTransportationTypeChange", &err, func() ([]string, []string) { return texts(obj, t, attrs), nil })
	return f.call(func() error { return f.core.RequestAttributeTransportationTypeChange(obj, attrs, t) })
}

// QueryAttributeTransportationType (§6.25):
// ReportAttributeTransportationType follows. Errors:
// ErrObjectInstanceNotKnown, ErrAttributeNotDefined.
func (f *Federate) QueryAttributeTransportationType(obj ObjectInstanceHandle, attr AttributeHandle) (err error) {
	defer f.reported("queryAttributeTransportationType", &err, func() ([]string, []string) { return texts(obj, attr), nil })
	return f.call(func() error { return f.core.QueryAttributeTransportationType(obj, attr) })
}

// RequestInteractionTransportationTypeChange (§6.27) makes this
// federate's interactions of class travel by t;
// ConfirmInteractionTransportationTypeChange follows. Errors:
// ErrInteractionClassNotDefined, ErrInteractionClassNotPublished,
// ErrInvalidTransportationType.
func (f *Federate) RequestInteractionTransportationTypeChange(class InteractionClassHandle, t TransportationType) (err error) {
	defer f.reported("requestInteractionTransportationTypeChange", &err, func() ([]string, []string) { return texts(class, t), nil })
	return f.call(func() error { return f.core.RequestInteractionTransportationTypeChange(class, t) })
}

// QueryInteractionTransportationType (§6.29):
// ReportInteractionTransportationType follows with how federate fed sends
// interactions of class. Errors: ErrInteractionClassNotDefined.
func (f *Federate) QueryInteractionTransportationType(fed FederateHandle, class InteractionClassHandle) (err error) {
	defer f.reported("queryInteractionTransportationType", &err, func() ([]string, []string) { return texts(fed, class), nil })
	return f.call(func() error { return f.core.QueryInteractionTransportationType(fed, class) })
}

// condition applies the update conditions (Config.UpdateConditions) to an
// update: it returns the values to send, and false when none passed
// (nothing is sent then). It checks the update first, as the service
// would, so that an update that would fail changes no condition's state.
// Applied once per call, outside the back-pressure retries, so that a
// held update is not filtered twice.
func (f *Federate) condition(obj ObjectInstanceHandle, values AttributeValues, t LogicalTime) (AttributeValues, bool, error) {
	if f.cond == nil || len(values) == 0 {
		return values, true, nil
	}
	var class ObjectClassHandle
	if err := f.call(func() (err error) { class, err = f.core.UpdateClass(obj, values); return err }); err != nil {
		return nil, false, err
	}
	now := updatecond.Now{Wall: time.Since(f.started)}
	if f.cfg.Manual {
		now.Wall = time.Duration(f.manualTicks.Load()) * f.cfg.tick()
	}
	if t != nil {
		now.Logical, now.HasLogical = t.Float(), true
	}
	f.condMu.Lock()
	v := f.cond.Filter(obj, class, values, now)
	f.condMu.Unlock()
	return v, len(v) > 0, nil
}

// forgetConditions drops the update conditions' state of a deleted
// instance.
func (f *Federate) forgetConditions(obj ObjectInstanceHandle, err error) {
	if f.cond == nil || err != nil {
		return
	}
	f.condMu.Lock()
	f.cond.Forget(obj)
	f.condMu.Unlock()
}

// UpdateConditionStats returns what the update conditions
// (Config.UpdateConditions) let through and held back; zero without
// them.
func (f *Federate) UpdateConditionStats() updatecond.Stats {
	if f.cond == nil {
		return updatecond.Stats{}
	}
	f.condMu.Lock()
	defer f.condMu.Unlock()
	return f.cond.Stats()
}
