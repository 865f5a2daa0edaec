package peer

// Directed interactions (HLA 4, IEEE 1516.1-2025): an interaction sent
// to one object instance. A federate publishes interaction classes for
// an object class and sends them to instances of it
// (SendDirectedInteraction); a federate that subscribed them at the
// instance's class (or an ancestor) receives them
// (ReceiveDirectedInteraction) when it owns the instance (holds its
// HLAprivilegeToDeleteObject), or, subscribed universally, for every
// instance it knows. Only the interaction classes the FDD declares
// directed at the object class or an ancestor (HLA 4
// <directedInteraction>, each covering its interaction class, not its
// subclasses) may be used there: any other is
// ErrInteractionClassNotDefined. See docs/peer.md, "Directed
// interactions".

// PublishObjectClassDirectedInteractions declares that this federate
// may send the interaction classes ics to instances of class and its
// subclasses. Errors: ErrObjectClassNotDefined,
// ErrInteractionClassNotDefined (not an interaction class, or not
// declared directed at class or an ancestor).
func (f *Federate) PublishObjectClassDirectedInteractions(class ObjectClassHandle, ics ...InteractionClassHandle) (err error) {
	defer f.reported("publishObjectClassDirectedInteractions", &err, func() ([]string, []string) { return texts(class, ics), nil })
	return f.call(func() error { return f.core.PublishObjectClassDirectedInteractions(class, ics) })
}

// UnpublishObjectClassDirectedInteractions withdraws ics at class, or
// every directed interaction class published at class when ics is empty.
func (f *Federate) UnpublishObjectClassDirectedInteractions(class ObjectClassHandle, ics ...InteractionClassHandle) (err error) {
	defer f.reported("unpublishObjectClassDirectedInteractions", &err, func() ([]string, []string) { return texts(class, ics), nil })
	if len(ics) == 0 {
		ics = nil
	}
	return f.call(func() error { return f.core.UnpublishObjectClassDirectedInteractions(class, ics) })
}

// SubscribeObjectClassDirectedInteractions asks for the interaction
// classes ics (and their subclasses) sent to instances of class (and
// its subclasses) that this federate owns.
func (f *Federate) SubscribeObjectClassDirectedInteractions(class ObjectClassHandle, ics ...InteractionClassHandle) (err error) {
	defer f.reported("subscribeObjectClassDirectedInteractions", &err, func() ([]string, []string) { return texts(class, ics), nil })
	return f.call(func() error { return f.core.SubscribeObjectClassDirectedInteractions(class, ics, false) })
}

// SubscribeObjectClassDirectedInteractionsUniversally asks for them sent
// to every instance of class this federate knows, owned or not.
func (f *Federate) SubscribeObjectClassDirectedInteractionsUniversally(class ObjectClassHandle, ics ...InteractionClassHandle) (err error) {
	defer f.reported("subscribeObjectClassDirectedInteractionsUniversally", &err, func() ([]string, []string) { return texts(class, ics), nil })
	return f.call(func() error { return f.core.SubscribeObjectClassDirectedInteractions(class, ics, true) })
}

// UnsubscribeObjectClassDirectedInteractions withdraws ics at class, or
// every one subscribed at class when ics is empty.
func (f *Federate) UnsubscribeObjectClassDirectedInteractions(class ObjectClassHandle, ics ...InteractionClassHandle) (err error) {
	defer f.reported("unsubscribeObjectClassDirectedInteractions", &err, func() ([]string, []string) { return texts(class, ics), nil })
	if len(ics) == 0 {
		ics = nil
	}
	return f.call(func() error { return f.core.UnsubscribeObjectClassDirectedInteractions(class, ics) })
}

// SendDirectedInteraction sends an interaction of class to the instance
// obj. Errors: ErrObjectInstanceNotKnown, ErrInteractionClassNotDefined
// (not declared directed at the class obj is known as, or an ancestor),
// ErrInteractionClassNotPublished (not published for that class or an
// ancestor), ErrInteractionParameterNotDefined.
func (f *Federate) SendDirectedInteraction(class InteractionClassHandle, obj ObjectInstanceHandle, values ParameterValues, tag []byte) error {
	_, err := f.SendDirectedInteractionWithTime(class, obj, values, tag, nil)
	return err
}

// SendDirectedInteractionWithTime sends it with a time stamp (nil: none)
// and returns its retraction handle when it travels in time-stamp order.
func (f *Federate) SendDirectedInteractionWithTime(class InteractionClassHandle, obj ObjectInstanceHandle, values ParameterValues, tag []byte, t LogicalTime) (r0 MessageRetractionHandle, err error) {
	defer f.reported("sendDirectedInteraction", &err, func() ([]string, []string) { return texts(class, obj, values, tag, t), texts(r0) })
	var h MessageRetractionHandle
	err = f.callSend(func() error {
		var err error
		h, err = f.core.SendDirectedInteraction(class, obj, values, tag, t)
		return err
	})
	return h, err
}
