package peer

// Declaration management (IEEE 1516.1-2010 §5): what a federate
// publishes and subscribes to. Each service runs in the federate's core
// (peer/internal/core, declarations.go); subscribers join the groups of
// what they subscribe to, publishers those of what they publish.

// PublishObjectClassAttributes (§5.2) declares that this federate may
// register instances of class and update the given attributes. Errors:
// ErrObjectClassNotDefined, ErrAttributeNotDefined.
func (f *Federate) PublishObjectClassAttributes(class ObjectClassHandle, attrs ...AttributeHandle) error {
	return f.call(func() error { return f.core.PublishObjectClassAttributes(class, nonNil(attrs)) })
}

// UnpublishObjectClass (§5.3) withdraws every attribute of class.
func (f *Federate) UnpublishObjectClass(class ObjectClassHandle) error {
	return f.call(func() error { return f.core.UnpublishObjectClassAttributes(class, nil) })
}

// UnpublishObjectClassAttributes (§5.3) withdraws some attributes.
func (f *Federate) UnpublishObjectClassAttributes(class ObjectClassHandle, attrs ...AttributeHandle) error {
	if len(attrs) == 0 {
		return nil
	}
	return f.call(func() error { return f.core.UnpublishObjectClassAttributes(class, attrs) })
}

// PublishInteractionClass (§5.4).
func (f *Federate) PublishInteractionClass(class InteractionClassHandle) error {
	return f.call(func() error { return f.core.PublishInteractionClass(class) })
}

// UnpublishInteractionClass (§5.5).
func (f *Federate) UnpublishInteractionClass(class InteractionClassHandle) error {
	return f.call(func() error { return f.core.UnpublishInteractionClass(class) })
}

// SubscribeObjectClassAttributes (§5.6) asks for instances of class and
// its subclasses (discovered as class unless a subclass is subscribed
// too) and for updates of the given attributes. Instances registered
// before the subscription are discovered as well, once it has
// attributes.
func (f *Federate) SubscribeObjectClassAttributes(class ObjectClassHandle, attrs ...AttributeHandle) error {
	return f.call(func() error { return f.core.SubscribeObjectClassAttributes(class, nonNil(attrs)) })
}

// UnsubscribeObjectClass (§5.7).
func (f *Federate) UnsubscribeObjectClass(class ObjectClassHandle) error {
	return f.call(func() error { return f.core.UnsubscribeObjectClassAttributes(class, nil) })
}

// UnsubscribeObjectClassAttributes (§5.7).
func (f *Federate) UnsubscribeObjectClassAttributes(class ObjectClassHandle, attrs ...AttributeHandle) error {
	if len(attrs) == 0 {
		return nil
	}
	return f.call(func() error { return f.core.UnsubscribeObjectClassAttributes(class, attrs) })
}

// SubscribeInteractionClass (§5.8): interactions of class and its
// subclasses arrive as class, with class's parameters.
func (f *Federate) SubscribeInteractionClass(class InteractionClassHandle) error {
	return f.call(func() error { return f.core.SubscribeInteractionClass(class) })
}

// UnsubscribeInteractionClass (§5.9).
func (f *Federate) UnsubscribeInteractionClass(class InteractionClassHandle) error {
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
