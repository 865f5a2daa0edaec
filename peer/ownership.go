package peer

// Ownership management (IEEE 1516.1-2010 §7): a token per (instance,
// attribute), moved directly between owners and, when unowned, taken
// through the federation's register (peer/internal/core,
// ownership_services.go; docs/ownership.md).

// UnconditionalAttributeOwnershipDivestiture (§7.2) gives up attrs of
// obj: to a federate that asked for them, or to nobody. Errors:
// ErrObjectInstanceNotKnown, ErrAttributeNotDefined, ErrAttributeNotOwned.
func (f *Federate) UnconditionalAttributeOwnershipDivestiture(obj ObjectInstanceHandle, attrs ...AttributeHandle) (err error) {
	defer f.reported("unconditionalAttributeOwnershipDivestiture", &err, func() ([]string, []string) { return texts(obj, attrs), nil })
	return f.call(func() error { return f.core.UnconditionalAttributeOwnershipDivestiture(obj, attrs) })
}

// NegotiatedAttributeOwnershipDivestiture (§7.3) offers attrs of obj;
// federates that could take them hear RequestAttributeOwnershipAssumption,
// and when one asks this federate hears RequestDivestitureConfirmation.
// Errors: ErrObjectInstanceNotKnown, ErrAttributeNotDefined,
// ErrAttributeNotOwned, ErrAttributeAlreadyBeingDivested.
func (f *Federate) NegotiatedAttributeOwnershipDivestiture(obj ObjectInstanceHandle, tag []byte, attrs ...AttributeHandle) (err error) {
	defer f.reported("negotiatedAttributeOwnershipDivestiture", &err, func() ([]string, []string) { return texts(obj, tag, attrs), nil })
	return f.call(func() error { return f.core.NegotiatedAttributeOwnershipDivestiture(obj, attrs, tag) })
}

// ConfirmDivestiture (§7.6) gives offered attributes to the federates
// that asked for them. Errors: ErrObjectInstanceNotKnown,
// ErrAttributeNotDefined, ErrAttributeNotOwned,
// ErrAttributeDivestitureWasNotRequested, ErrNoAcquisitionPending.
func (f *Federate) ConfirmDivestiture(obj ObjectInstanceHandle, tag []byte, attrs ...AttributeHandle) (err error) {
	defer f.reported("confirmDivestiture", &err, func() ([]string, []string) { return texts(obj, tag, attrs), nil })
	return f.call(func() error { return f.core.ConfirmDivestiture(obj, attrs, tag) })
}

// AttributeOwnershipAcquisition (§7.8) asks for attrs of obj: owners hear
// RequestAttributeOwnershipRelease; unowned ones are taken through the
// register. AttributeOwnershipAcquisitionNotification follows for what is
// secured. Errors: ErrObjectInstanceNotKnown, ErrAttributeNotDefined,
// ErrObjectClassNotPublished, ErrAttributeNotPublished,
// ErrFederateOwnsAttributes.
func (f *Federate) AttributeOwnershipAcquisition(obj ObjectInstanceHandle, tag []byte, attrs ...AttributeHandle) (err error) {
	defer f.reported("attributeOwnershipAcquisition", &err, func() ([]string, []string) { return texts(obj, tag, attrs), nil })
	return f.call(func() error { return f.core.AttributeOwnershipAcquisition(obj, attrs, tag) })
}

// AttributeOwnershipAcquisitionIfAvailable (§7.9) takes attrs of obj if
// they are unowned or offered: AttributeOwnershipAcquisitionNotification
// or AttributeOwnershipUnavailable follows. Errors: as
// AttributeOwnershipAcquisition, and ErrAttributeAlreadyBeingAcquired.
func (f *Federate) AttributeOwnershipAcquisitionIfAvailable(obj ObjectInstanceHandle, attrs ...AttributeHandle) (err error) {
	defer f.reported("attributeOwnershipAcquisitionIfAvailable", &err, func() ([]string, []string) { return texts(obj, attrs), nil })
	return f.call(func() error { return f.core.AttributeOwnershipAcquisitionIfAvailable(obj, attrs) })
}

// AttributeOwnershipReleaseDenied (§7.12) keeps attrs that another
// federate asked for. Errors: ErrObjectInstanceNotKnown,
// ErrAttributeNotDefined, ErrAttributeNotOwned.
func (f *Federate) AttributeOwnershipReleaseDenied(obj ObjectInstanceHandle, attrs ...AttributeHandle) (err error) {
	defer f.reported("attributeOwnershipReleaseDenied", &err, func() ([]string, []string) { return texts(obj, attrs), nil })
	return f.call(func() error { return f.core.AttributeOwnershipReleaseDenied(obj, attrs) })
}

// AttributeOwnershipDivestitureIfWanted (§7.13) gives the attributes of
// attrs that another federate asked for to it and returns them; the rest
// stay owned. Errors: ErrObjectInstanceNotKnown, ErrAttributeNotDefined,
// ErrAttributeNotOwned.
func (f *Federate) AttributeOwnershipDivestitureIfWanted(obj ObjectInstanceHandle, attrs ...AttributeHandle) (r0 []AttributeHandle, err error) {
	defer f.reported("attributeOwnershipDivestitureIfWanted", &err, func() ([]string, []string) { return texts(obj, attrs), texts(r0) })
	return callValue(f, func() ([]AttributeHandle, error) { return f.core.AttributeOwnershipDivestitureIfWanted(obj, attrs) })
}

// CancelNegotiatedAttributeOwnershipDivestiture (§7.14) withdraws an
// offer. Errors: ErrObjectInstanceNotKnown, ErrAttributeNotDefined,
// ErrAttributeNotOwned, ErrAttributeDivestitureWasNotRequested.
func (f *Federate) CancelNegotiatedAttributeOwnershipDivestiture(obj ObjectInstanceHandle, attrs ...AttributeHandle) (err error) {
	defer f.reported("cancelNegotiatedAttributeOwnershipDivestiture", &err, func() ([]string, []string) { return texts(obj, attrs), nil })
	return f.call(func() error { return f.core.CancelNegotiatedAttributeOwnershipDivestiture(obj, attrs) })
}

// CancelAttributeOwnershipAcquisition (§7.15) withdraws an acquisition;
// ConfirmAttributeOwnershipAcquisitionCancellation follows. Errors:
// ErrObjectInstanceNotKnown, ErrAttributeNotDefined,
// ErrAttributeAlreadyOwned, ErrAttributeAcquisitionWasNotRequested.
func (f *Federate) CancelAttributeOwnershipAcquisition(obj ObjectInstanceHandle, attrs ...AttributeHandle) (err error) {
	defer f.reported("cancelAttributeOwnershipAcquisition", &err, func() ([]string, []string) { return texts(obj, attrs), nil })
	return f.call(func() error { return f.core.CancelAttributeOwnershipAcquisition(obj, attrs) })
}

// QueryAttributeOwnership (§7.17): InformAttributeOwnership,
// AttributeIsNotOwned or AttributeIsOwnedByRTI follows. Errors:
// ErrObjectInstanceNotKnown, ErrAttributeNotDefined.
func (f *Federate) QueryAttributeOwnership(obj ObjectInstanceHandle, attr AttributeHandle) (err error) {
	defer f.reported("queryAttributeOwnership", &err, func() ([]string, []string) { return texts(obj, attr), nil })
	return f.call(func() error { return f.core.QueryAttributeOwnership(obj, attr) })
}

// IsAttributeOwnedByFederate (§7.19) reports whether this federate owns
// attr of obj. Errors: ErrObjectInstanceNotKnown, ErrAttributeNotDefined.
func (f *Federate) IsAttributeOwnedByFederate(obj ObjectInstanceHandle, attr AttributeHandle) (r0 bool, err error) {
	defer f.reported("isAttributeOwnedByFederate", &err, func() ([]string, []string) { return texts(obj, attr), texts(r0) })
	return callValue(f, func() (bool, error) { return f.core.IsAttributeOwnedByFederate(obj, attr) })
}
