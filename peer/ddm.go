package peer

// Data distribution management (IEEE 1516.1-2010 §9.5-§9.13): updates,
// interactions and subscriptions with regions. Without regions a
// subscription or an update uses the default region, which overlaps
// every region (docs/ddm.md).

// RegisterObjectInstanceWithRegions (§9.5) registers an instance of
// class whose pairs' attributes are updated with the pairs' regions;
// name "" lets the RTI choose it. Errors: as RegisterObjectInstance and
// AssociateRegionsForUpdates, and ErrAttributeNotPublished.
func (f *Federate) RegisterObjectInstanceWithRegions(class ObjectClassHandle, pairs []AttributeRegions, name string) (r0 ObjectInstanceHandle, err error) {
	defer f.reported("registerObjectInstanceWithRegions", &err, func() ([]string, []string) { return texts(class, pairs, name), texts(r0) })
	return callValue(f, func() (ObjectInstanceHandle, error) {
		return f.core.RegisterObjectInstanceWithRegions(class, pairs, name)
	})
}

// AssociateRegionsForUpdates (§9.6): updates of the pairs' attributes of
// obj are sent with the pairs' regions. Errors: ErrObjectInstanceNotKnown,
// ErrAttributeNotDefined, ErrRegionNotCreatedByThisFederate,
// ErrInvalidRegion, ErrInvalidRegionContext.
func (f *Federate) AssociateRegionsForUpdates(obj ObjectInstanceHandle, pairs ...AttributeRegions) (err error) {
	defer f.reported("associateRegionsForUpdates", &err, func() ([]string, []string) { return texts(obj, pairs), nil })
	return f.call(func() error { return f.core.AssociateRegionsForUpdates(obj, pairs) })
}

// UnassociateRegionsForUpdates (§9.7). Errors: ErrObjectInstanceNotKnown,
// ErrAttributeNotDefined, ErrRegionNotCreatedByThisFederate,
// ErrInvalidRegion.
func (f *Federate) UnassociateRegionsForUpdates(obj ObjectInstanceHandle, pairs ...AttributeRegions) (err error) {
	defer f.reported("unassociateRegionsForUpdates", &err, func() ([]string, []string) { return texts(obj, pairs), nil })
	return f.call(func() error { return f.core.UnassociateRegionsForUpdates(obj, pairs) })
}

// SubscribeObjectClassAttributesWithRegions (§9.8) subscribes actively to
// the pairs' attributes of class within the pairs' regions: updates whose
// regions overlap none of them are not reflected. Errors:
// ErrObjectClassNotDefined, ErrAttributeNotDefined,
// ErrRegionNotCreatedByThisFederate, ErrInvalidRegion,
// ErrInvalidRegionContext.
func (f *Federate) SubscribeObjectClassAttributesWithRegions(class ObjectClassHandle, pairs ...AttributeRegions) (err error) {
	defer f.reported("subscribeObjectClassAttributesWithRegions", &err, func() ([]string, []string) { return texts(class, pairs), nil })
	return f.call(func() error { return f.core.SubscribeObjectClassAttributesWithRegions(class, pairs, true, "") })
}

// SubscribeObjectClassAttributesWithRegionsPassively is
// SubscribeObjectClassAttributesWithRegions without relevance advisories
// at the publishers, at most at update rate rate ("" for none).
func (f *Federate) SubscribeObjectClassAttributesWithRegionsPassively(class ObjectClassHandle, rate string, pairs ...AttributeRegions) (err error) {
	defer f.reported("subscribeObjectClassAttributesWithRegionsPassively", &err, func() ([]string, []string) { return texts(class, rate, pairs), nil })
	return f.call(func() error { return f.core.SubscribeObjectClassAttributesWithRegions(class, pairs, false, rate) })
}

// UnsubscribeObjectClassAttributesWithRegions (§9.9). Errors:
// ErrObjectClassNotDefined, ErrAttributeNotDefined,
// ErrRegionNotCreatedByThisFederate, ErrInvalidRegion.
func (f *Federate) UnsubscribeObjectClassAttributesWithRegions(class ObjectClassHandle, pairs ...AttributeRegions) (err error) {
	defer f.reported("unsubscribeObjectClassAttributesWithRegions", &err, func() ([]string, []string) { return texts(class, pairs), nil })
	return f.call(func() error { return f.core.UnsubscribeObjectClassAttributesWithRegions(class, pairs) })
}

// SubscribeInteractionClassWithRegions (§9.10). Errors:
// ErrInteractionClassNotDefined, ErrRegionNotCreatedByThisFederate,
// ErrInvalidRegion, ErrInvalidRegionContext.
func (f *Federate) SubscribeInteractionClassWithRegions(class InteractionClassHandle, regions ...RegionHandle) (err error) {
	defer f.reported("subscribeInteractionClassWithRegions", &err, func() ([]string, []string) { return texts(class, regions), nil })
	return f.call(func() error { return f.core.SubscribeInteractionClassWithRegions(class, regions, true) })
}

// SubscribeInteractionClassPassivelyWithRegions is
// SubscribeInteractionClassWithRegions without relevance advisories.
func (f *Federate) SubscribeInteractionClassPassivelyWithRegions(class InteractionClassHandle, regions ...RegionHandle) (err error) {
	defer f.reported("subscribeInteractionClassPassivelyWithRegions", &err, func() ([]string, []string) { return texts(class, regions), nil })
	return f.call(func() error { return f.core.SubscribeInteractionClassWithRegions(class, regions, false) })
}

// UnsubscribeInteractionClassWithRegions (§9.11). Errors:
// ErrInteractionClassNotDefined, ErrRegionNotCreatedByThisFederate,
// ErrInvalidRegion.
func (f *Federate) UnsubscribeInteractionClassWithRegions(class InteractionClassHandle, regions ...RegionHandle) (err error) {
	defer f.reported("unsubscribeInteractionClassWithRegions", &err, func() ([]string, []string) { return texts(class, regions), nil })
	return f.call(func() error { return f.core.UnsubscribeInteractionClassWithRegions(class, regions) })
}

// SendInteractionWithRegions (§9.12) sends an interaction that only
// subscribers whose regions overlap regions receive. Errors: as
// SendInteraction, and ErrRegionNotCreatedByThisFederate,
// ErrInvalidRegion, ErrInvalidRegionContext.
func (f *Federate) SendInteractionWithRegions(class InteractionClassHandle, values ParameterValues, regions []RegionHandle, tag []byte) (err error) {
	defer f.reported("sendInteractionWithRegions", &err, func() ([]string, []string) { return texts(class, values, regions, tag), nil })
	return f.callSend(func() error {
		_, err := f.core.SendInteractionWithRegions(class, values, regions, tag, nil)
		return err
	})
}

// SendInteractionWithRegionsAndTime (§9.12, the timed overload) returns
// the retraction handle of a time-stamp-order send.
func (f *Federate) SendInteractionWithRegionsAndTime(class InteractionClassHandle, values ParameterValues, regions []RegionHandle, tag []byte, t LogicalTime) (r0 MessageRetractionHandle, err error) {
	defer f.reported("sendInteractionWithRegions", &err, func() ([]string, []string) { return texts(class, values, regions, tag, t), texts(r0) })
	if t == nil {
		return MessageRetractionHandle{}, errNilTime
	}
	var h MessageRetractionHandle
	err = f.callSend(func() (err error) {
		h, err = f.core.SendInteractionWithRegions(class, values, regions, tag, t)
		return err
	})
	return h, err
}

// RequestAttributeValueUpdateWithRegions (§9.13) asks the owners of the
// pairs' attributes of instances of class for their values; the answers
// reach this federate as its subscription regions allow. Errors:
// ErrObjectClassNotDefined, ErrAttributeNotDefined,
// ErrRegionNotCreatedByThisFederate, ErrInvalidRegion,
// ErrInvalidRegionContext.
func (f *Federate) RequestAttributeValueUpdateWithRegions(class ObjectClassHandle, pairs []AttributeRegions, tag []byte) (err error) {
	defer f.reported("requestAttributeValueUpdateWithRegions", &err, func() ([]string, []string) { return texts(class, pairs, tag), nil })
	return f.call(func() error { return f.core.RequestAttributeValueUpdateWithRegions(class, pairs, tag) })
}
