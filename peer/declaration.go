package peer

// Declaration management (IEEE 1516.1-2010 §5): what a federate
// publishes and subscribes to. Each service runs in the federate's core
// (peer/internal/core, declarations.go); subscribers join the groups of
// what they subscribe to, publishers those of what they publish. Active
// subscriptions reach the publishers through the control plane's
// replicated state, for the relevance advisories
// (StartRegistrationForObjectClass, StopRegistrationForObjectClass,
// TurnInteractionsOn, TurnInteractionsOff).

// PublishObjectClassAttributes (§5.2) declares that this federate may
// register instances of class and update the given attributes. A second
// call adds its attributes to those published before (the unpublish
// services take them away); a call with no attributes adds nothing.
// Errors: ErrObjectClassNotDefined, ErrAttributeNotDefined.
func (f *Federate) PublishObjectClassAttributes(class ObjectClassHandle, attrs ...AttributeHandle) (err error) {
	defer f.reported("publishObjectClassAttributes", &err, func() ([]string, []string) { return texts(class, attrs), nil })
	return f.call(func() error { return f.core.PublishObjectClassAttributes(class, nonNil(attrs)) })
}

// UnpublishObjectClass (§5.3) withdraws every attribute of class.
func (f *Federate) UnpublishObjectClass(class ObjectClassHandle) (err error) {
	defer f.reported("unpublishObjectClass", &err, func() ([]string, []string) { return texts(class), nil })
	return f.call(func() error { return f.core.UnpublishObjectClassAttributes(class, nil) })
}

// UnpublishObjectClassAttributes (§5.3) withdraws some attributes; with
// none it withdraws nothing (UnpublishObjectClass withdraws all). A class
// left with no published attribute is no longer published.
func (f *Federate) UnpublishObjectClassAttributes(class ObjectClassHandle, attrs ...AttributeHandle) (err error) {
	defer f.reported("unpublishObjectClassAttributes", &err, func() ([]string, []string) { return texts(class, attrs), nil })
	return f.call(func() error { return f.core.UnpublishObjectClassAttributes(class, nonNil(attrs)) })
}

// PublishInteractionClass (§5.4).
func (f *Federate) PublishInteractionClass(class InteractionClassHandle) (err error) {
	defer f.reported("publishInteractionClass", &err, func() ([]string, []string) { return texts(class), nil })
	return f.call(func() error { return f.core.PublishInteractionClass(class) })
}

// UnpublishInteractionClass (§5.5).
func (f *Federate) UnpublishInteractionClass(class InteractionClassHandle) (err error) {
	defer f.reported("unpublishInteractionClass", &err, func() ([]string, []string) { return texts(class), nil })
	return f.call(func() error { return f.core.UnpublishInteractionClass(class) })
}

// SubscribeObjectClassAttributes (§5.6) asks for instances of class and
// its subclasses (discovered as class unless a subclass is subscribed
// too) and for updates of the given attributes. Instances registered
// before the subscription are discovered as well, once it has
// attributes. A second call adds its attributes to those subscribed
// before (the unsubscribe services take them away); a call with no
// attributes adds nothing.
func (f *Federate) SubscribeObjectClassAttributes(class ObjectClassHandle, attrs ...AttributeHandle) (err error) {
	defer f.reported("subscribeObjectClassAttributes", &err, func() ([]string, []string) { return texts(class, attrs), nil })
	return f.call(func() error { return f.core.SubscribeObjectClassAttributes(class, nonNil(attrs), true, "") })
}

// UnsubscribeObjectClass (§5.7).
func (f *Federate) UnsubscribeObjectClass(class ObjectClassHandle) (err error) {
	defer f.reported("unsubscribeObjectClass", &err, func() ([]string, []string) { return texts(class), nil })
	return f.call(func() error { return f.core.UnsubscribeObjectClassAttributes(class, nil) })
}

// UnsubscribeObjectClassAttributes (§5.7) removes some attributes from
// the subscription of class; with none it removes nothing
// (UnsubscribeObjectClass removes all).
func (f *Federate) UnsubscribeObjectClassAttributes(class ObjectClassHandle, attrs ...AttributeHandle) (err error) {
	defer f.reported("unsubscribeObjectClassAttributes", &err, func() ([]string, []string) { return texts(class, attrs), nil })
	return f.call(func() error { return f.core.UnsubscribeObjectClassAttributes(class, nonNil(attrs)) })
}

// SubscribeInteractionClass (§5.8): interactions of class and its
// subclasses arrive as class, with class's parameters.
func (f *Federate) SubscribeInteractionClass(class InteractionClassHandle) (err error) {
	defer f.reported("subscribeInteractionClass", &err, func() ([]string, []string) { return texts(class), nil })
	return f.call(func() error { return f.core.SubscribeInteractionClass(class, true) })
}

// UnsubscribeInteractionClass (§5.9).
func (f *Federate) UnsubscribeInteractionClass(class InteractionClassHandle) (err error) {
	defer f.reported("unsubscribeInteractionClass", &err, func() ([]string, []string) { return texts(class), nil })
	return f.call(func() error { return f.core.UnsubscribeInteractionClass(class) })
}

// nonNil returns hs, or an empty slice for nil: the core reads nil as
// "every attribute".
func nonNil(hs []AttributeHandle) []AttributeHandle {
	if hs == nil {
		return []AttributeHandle{}
	}
	return hs
}

// SubscribeObjectClassAttributesPassively (§5.6, active false) is
// SubscribeObjectClassAttributes without telling the publishers: it
// triggers no StartRegistrationForObjectClass or TurnUpdatesOn advisory
// at them.
func (f *Federate) SubscribeObjectClassAttributesPassively(class ObjectClassHandle, attrs ...AttributeHandle) (err error) {
	defer f.reported("subscribeObjectClassAttributesPassively", &err, func() ([]string, []string) { return texts(class, attrs), nil })
	return f.call(func() error { return f.core.SubscribeObjectClassAttributes(class, nonNil(attrs), false, "") })
}

// SubscribeObjectClassAttributesWithRate (§5.6 with an update rate
// designator) subscribes actively or passively, and has instances of
// class reflected at most at the FOM's update rate named rate (updates
// that come sooner are merged and reflected at the next slot; updates in
// time-stamp order are never held back). ErrInvalidUpdateRateDesignator
// for a rate the FOM lacks.
func (f *Federate) SubscribeObjectClassAttributesWithRate(class ObjectClassHandle, rate string, active bool, attrs ...AttributeHandle) (err error) {
	defer f.reported("subscribeObjectClassAttributes", &err, func() ([]string, []string) { return texts(class, rate, active, attrs), nil })
	return f.call(func() error { return f.core.SubscribeObjectClassAttributes(class, nonNil(attrs), active, rate) })
}

// SubscribeInteractionClassPassively (§5.8, active false) is
// SubscribeInteractionClass without telling the publishers (no
// TurnInteractionsOn advisory).
func (f *Federate) SubscribeInteractionClassPassively(class InteractionClassHandle) (err error) {
	defer f.reported("subscribeInteractionClassPassively", &err, func() ([]string, []string) { return texts(class), nil })
	return f.call(func() error { return f.core.SubscribeInteractionClass(class, false) })
}
