package peer

// Object management (IEEE 1516.1-2010 §6): names, registration, updates,
// interactions, deletes. Each service runs in the federate's core
// (peer/internal/core, objects.go).

// ReserveObjectInstanceName (§6.2) asks the federation for a unique
// object instance name, through the control plane's register. The answer
// comes as an ObjectInstanceNameReservationSucceeded or ...Failed event.
// Errors: ErrIllegalName (empty, or starting with "HLA").
func (f *Federate) ReserveObjectInstanceName(name string) error {
	return f.call(func() error { return f.core.ReserveObjectInstanceName(name) })
}

// RegisterObjectInstance (§6.8) creates an instance of a published class
// and returns its handle. name is "" for an RTI-chosen name, otherwise a
// name this federate reserved. The federate owns the attributes it
// publishes and the privilege to delete. Errors:
// ErrObjectClassNotDefined, ErrObjectClassNotPublished,
// ErrObjectInstanceNameNotReserved, ErrObjectInstanceNameInUse.
func (f *Federate) RegisterObjectInstance(class ObjectClassHandle, name string) (ObjectInstanceHandle, error) {
	var h ObjectInstanceHandle
	err := f.call(func() (err error) {
		h, err = f.core.RegisterObjectInstance(class, name)
		return err
	})
	return h, err
}

// UpdateAttributeValues (§6.10) sends new values of owned attributes in
// receive order. Errors: ErrObjectInstanceNotKnown,
// ErrAttributeNotDefined, ErrAttributeNotOwned.
func (f *Federate) UpdateAttributeValues(obj ObjectInstanceHandle, values AttributeValues, tag []byte) error {
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
func (f *Federate) UpdateAttributeValuesWithTimeRetractable(obj ObjectInstanceHandle, values AttributeValues, tag []byte, t LogicalTime) (MessageRetractionHandle, error) {
	if t == nil {
		return MessageRetractionHandle{}, errNilTime
	}
	var h MessageRetractionHandle
	err := f.callSend(func() (err error) {
		h, err = f.core.UpdateAttributeValues(obj, values, tag, t)
		return err
	})
	return h, err
}

// SendInteraction (§6.12) sends an interaction of a published class in
// receive order. Errors: ErrInteractionClassNotDefined,
// ErrInteractionClassNotPublished, ErrInteractionParameterNotDefined.
func (f *Federate) SendInteraction(class InteractionClassHandle, values ParameterValues, tag []byte) error {
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
func (f *Federate) SendInteractionWithTimeRetractable(class InteractionClassHandle, values ParameterValues, tag []byte, t LogicalTime) (MessageRetractionHandle, error) {
	if t == nil {
		return MessageRetractionHandle{}, errNilTime
	}
	var h MessageRetractionHandle
	err := f.callSend(func() (err error) {
		h, err = f.core.SendInteraction(class, values, tag, t)
		return err
	})
	return h, err
}

// DeleteObjectInstance (§6.14) deletes an instance this federate holds
// the delete privilege of. Errors: ErrObjectInstanceNotKnown,
// ErrDeletePrivilegeNotHeld.
func (f *Federate) DeleteObjectInstance(obj ObjectInstanceHandle, tag []byte) error {
	return f.call(func() error {
		_, err := f.core.DeleteObjectInstance(obj, tag, nil)
		return err
	})
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
func (f *Federate) DeleteObjectInstanceWithTimeRetractable(obj ObjectInstanceHandle, tag []byte, t LogicalTime) (MessageRetractionHandle, error) {
	if t == nil {
		return MessageRetractionHandle{}, errNilTime
	}
	var h MessageRetractionHandle
	err := f.call(func() (err error) {
		h, err = f.core.DeleteObjectInstance(obj, tag, t)
		return err
	})
	return h, err
}
