package peer

// Synchronization points (IEEE 1516.1-2010 §4.11-§4.15), decided through
// the control plane: of two federates that race to register one label,
// one succeeds.

// RegisterFederationSynchronizationPoint (§4.11) registers label for
// every joined federate (late joiners too): each is announced it
// (AnnounceSynchronizationPoint), and once all achieved it,
// FederationSynchronized follows. SynchronizationPointRegistrationSucceeded
// or Failed (the label is in use) tells this federate how it went.
func (f *Federate) RegisterFederationSynchronizationPoint(label string, tag []byte) (err error) {
	defer f.reported("registerFederationSynchronizationPoint", &err, func() ([]string, []string) { return texts(label, tag), nil })
	return f.call(func() error { return f.core.RegisterFederationSynchronizationPoint(label, tag, nil) })
}

// RegisterFederationSynchronizationPointWithSet (§4.11, the overload
// with a set) registers label for the federates of set only; the
// registration fails (SynchronizationSetMemberNotJoined) when one of them
// is not joined. Errors: ErrInvalidFederateHandle.
func (f *Federate) RegisterFederationSynchronizationPointWithSet(label string, tag []byte, set ...FederateHandle) (err error) {
	defer f.reported("registerFederationSynchronizationPoint", &err, func() ([]string, []string) { return texts(label, tag, set), nil })
	if set == nil {
		set = []FederateHandle{}
	}
	return f.call(func() error { return f.core.RegisterFederationSynchronizationPoint(label, tag, set) })
}

// SynchronizationPointAchieved (§4.14) tells the federation this federate
// reached label, successfully or not (those that did not are named in
// FederationSynchronized). Errors: ErrSynchronizationPointLabelNotAnnounced.
func (f *Federate) SynchronizationPointAchieved(label string, successfully bool) (err error) {
	defer f.reported("synchronizationPointAchieved", &err, func() ([]string, []string) { return texts(label, successfully), nil })
	return f.call(func() error { return f.core.SynchronizationPointAchieved(label, successfully) })
}
