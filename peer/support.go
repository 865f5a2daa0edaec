package peer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer/hla"
	"github.com/meshrti/meshrti/peer/internal/core"
)

// Support services (IEEE 1516.1-2010 §10): names and handles. Class,
// attribute, interaction and parameter handles are the FDD's (hashes of
// names, the same in every process) and need no lock. A class or
// dimension the FDD lacks may be a joiner's that this federate has not
// heard of yet: the lookup then reads the federation's agreed modules
// first (lookup).

// GetObjectClassHandle (§10.6) accepts a fully qualified name, a name
// without the root, or a unique bare name.
func (f *Federate) GetObjectClassHandle(name string) (r0 ObjectClassHandle, err error) {
	defer f.reported("getObjectClassHandle", &err, func() ([]string, []string) { return texts(name), texts(r0) })
	c, ok := lookup(f, (*fomxml.FDD).ObjectClass, name)
	if !ok {
		return 0, fmt.Errorf("%w: object class %q", ErrNameNotFound, name)
	}
	return c.Handle, nil
}

// GetObjectClassName (§10.7) returns the fully qualified name.
func (f *Federate) GetObjectClassName(h ObjectClassHandle) (r0 string, err error) {
	defer f.reported("getObjectClassName", &err, func() ([]string, []string) { return texts(h), texts(r0) })
	c, ok := lookup(f, (*fomxml.FDD).ObjectClassByHandle, h)
	if !ok {
		return "", fmt.Errorf("%w: %d", ErrInvalidObjectClassHandle, h)
	}
	return c.QualifiedName, nil
}

// GetAttributeHandle (§10.11).
func (f *Federate) GetAttributeHandle(class ObjectClassHandle, name string) (r0 AttributeHandle, err error) {
	defer f.reported("getAttributeHandle", &err, func() ([]string, []string) { return texts(class, name), texts(r0) })
	c, ok := lookup(f, (*fomxml.FDD).ObjectClassByHandle, class)
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
func (f *Federate) GetAttributeName(class ObjectClassHandle, h AttributeHandle) (r0 string, err error) {
	defer f.reported("getAttributeName", &err, func() ([]string, []string) { return texts(class, h), texts(r0) })
	c, ok := lookup(f, (*fomxml.FDD).ObjectClassByHandle, class)
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
func (f *Federate) GetInteractionClassHandle(name string) (r0 InteractionClassHandle, err error) {
	defer f.reported("getInteractionClassHandle", &err, func() ([]string, []string) { return texts(name), texts(r0) })
	c, ok := lookup(f, (*fomxml.FDD).InteractionClass, name)
	if !ok {
		return 0, fmt.Errorf("%w: interaction class %q", ErrNameNotFound, name)
	}
	return c.Handle, nil
}

// GetInteractionClassName (§10.16).
func (f *Federate) GetInteractionClassName(h InteractionClassHandle) (r0 string, err error) {
	defer f.reported("getInteractionClassName", &err, func() ([]string, []string) { return texts(h), texts(r0) })
	c, ok := lookup(f, (*fomxml.FDD).InteractionClassByHandle, h)
	if !ok {
		return "", fmt.Errorf("%w: %d", ErrInvalidInteractionClassHandle, h)
	}
	return c.QualifiedName, nil
}

// GetParameterHandle (§10.17).
func (f *Federate) GetParameterHandle(class InteractionClassHandle, name string) (r0 ParameterHandle, err error) {
	defer f.reported("getParameterHandle", &err, func() ([]string, []string) { return texts(class, name), texts(r0) })
	c, ok := lookup(f, (*fomxml.FDD).InteractionClassByHandle, class)
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
func (f *Federate) GetParameterName(class InteractionClassHandle, h ParameterHandle) (r0 string, err error) {
	defer f.reported("getParameterName", &err, func() ([]string, []string) { return texts(class, h), texts(r0) })
	c, ok := lookup(f, (*fomxml.FDD).InteractionClassByHandle, class)
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
func (f *Federate) GetFederateHandle(name string) (r0 FederateHandle, err error) {
	defer f.reported("getFederateHandle", &err, func() ([]string, []string) { return texts(name), texts(r0) })
	if name == f.name {
		return f.handle, nil
	}
	var h FederateHandle
	err = f.callAny(func() error {
		if m, ok := f.core.MemberNamed(name); ok {
			h = m.Handle
			return nil
		}
		return fmt.Errorf("%w: federate %q", ErrNameNotFound, name)
	})
	return h, err
}

// GetFederateName (§10.5).
func (f *Federate) GetFederateName(h FederateHandle) (r0 string, err error) {
	defer f.reported("getFederateName", &err, func() ([]string, []string) { return texts(h), texts(r0) })
	if h == f.handle {
		return f.name, nil
	}
	var name string
	err = f.callAny(func() error {
		if m, ok := f.core.Member(h); ok {
			name = m.Name
			return nil
		}
		// A member whose join the federate has not handled yet.
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
func (f *Federate) GetObjectInstanceHandle(name string) (r0 ObjectInstanceHandle, err error) {
	defer f.reported("getObjectInstanceHandle", &err, func() ([]string, []string) { return texts(name), texts(r0) })
	return callAnyValue(f, func() (ObjectInstanceHandle, error) { return f.core.ObjectInstanceHandle(name) })
}

// GetObjectInstanceName (§10.10).
func (f *Federate) GetObjectInstanceName(h ObjectInstanceHandle) (r0 string, err error) {
	defer f.reported("getObjectInstanceName", &err, func() ([]string, []string) { return texts(h), texts(r0) })
	return callAnyValue(f, func() (string, error) { return f.core.ObjectInstanceName(h) })
}

// GetKnownObjectClassHandle (§10.8).
func (f *Federate) GetKnownObjectClassHandle(h ObjectInstanceHandle) (r0 ObjectClassHandle, err error) {
	defer f.reported("getKnownObjectClassHandle", &err, func() ([]string, []string) { return texts(h), texts(r0) })
	return callAnyValue(f, func() (ObjectClassHandle, error) { return f.core.KnownObjectClass(h) })
}

// GetAutomaticResignDirective (§10.2) returns this federate's automatic
// resign directive: what the others do with its objects if it is lost
// (the FOM's automaticResignAction switch at join).
func (f *Federate) GetAutomaticResignDirective() (r0 ResignAction, err error) {
	defer f.reported("getAutomaticResignDirective", &err, func() ([]string, []string) { return nil, texts(r0) })
	return callAnyValue(f, func() (ResignAction, error) { return f.core.AutomaticResignDirective(), nil })
}

// SetAutomaticResignDirective (§10.3) sets it, for every member to use.
// Errors: ErrInvalidResignAction.
func (f *Federate) SetAutomaticResignDirective(a ResignAction) (err error) {
	defer f.reported("setAutomaticResignDirective", &err, func() ([]string, []string) { return texts(a), nil })
	return f.callAny(func() error { return f.core.SetAutomaticResignDirective(a) })
}

// GetUpdateRateValue (§10.13) returns the FOM's update rate (updates per
// second) named designator. Errors: ErrInvalidUpdateRateDesignator.
func (f *Federate) GetUpdateRateValue(designator string) (r0 float64, err error) {
	defer f.reported("getUpdateRateValue", &err, func() ([]string, []string) { return texts(designator), texts(r0) })
	return callAnyValue(f, func() (float64, error) { return f.core.UpdateRateValue(designator) })
}

// GetUpdateRateValueForAttribute (§10.14) returns the rate at which this
// federate's subscription reflects attr of obj, 0 when it names none.
// Errors: ErrObjectInstanceNotKnown, ErrAttributeNotDefined.
func (f *Federate) GetUpdateRateValueForAttribute(obj ObjectInstanceHandle, attr AttributeHandle) (r0 float64, err error) {
	defer f.reported("getUpdateRateValueForAttribute", &err, func() ([]string, []string) { return texts(obj, attr), texts(r0) })
	return callAnyValue(f, func() (float64, error) { return f.core.UpdateRateValueForAttribute(obj, attr) })
}

// GetOrderType (§10.19) returns the order type named name ("Receive" or
// "TimeStamp"). Errors: ErrInvalidOrderName.
func (f *Federate) GetOrderType(name string) (r0 OrderType, err error) {
	defer f.reported("getOrderType", &err, func() ([]string, []string) { return texts(name), texts(r0) })
	for _, o := range []OrderType{Receive, TimeStamp} {
		if o.String() == name {
			return o, nil
		}
	}
	return 0, fmt.Errorf("%w: %q", ErrInvalidOrderName, name)
}

// GetOrderName (§10.20). Errors: ErrInvalidOrderType.
func (f *Federate) GetOrderName(o OrderType) (r0 string, err error) {
	defer f.reported("getOrderName", &err, func() ([]string, []string) { return texts(o), texts(r0) })
	if o != Receive && o != TimeStamp {
		return "", fmt.Errorf("%w: %d", ErrInvalidOrderType, int(o))
	}
	return o.String(), nil
}

// GetTransportationType (§10.21) returns the transportation type named
// name ("HLAreliable" or "HLAbestEffort"). Errors:
// ErrInvalidTransportationName.
func (f *Federate) GetTransportationType(name string) (r0 TransportationType, err error) {
	defer f.reported("getTransportationType", &err, func() ([]string, []string) { return texts(name), texts(r0) })
	for _, t := range []TransportationType{HLAreliable, HLAbestEffort} {
		if t.String() == name {
			return t, nil
		}
	}
	return 0, fmt.Errorf("%w: %q", ErrInvalidTransportationName, name)
}

// GetTransportationName (§10.22). Errors: ErrInvalidTransportationType.
func (f *Federate) GetTransportationName(t TransportationType) (r0 string, err error) {
	defer f.reported("getTransportationName", &err, func() ([]string, []string) { return texts(t), texts(r0) })
	if !t.Valid() {
		return "", fmt.Errorf("%w: %d", ErrInvalidTransportationType, int(t))
	}
	return t.String(), nil
}

// NormalizeFederateHandle (§10.31) maps a federate handle to the value
// it has on a region's HLAfederate dimension. Errors:
// ErrInvalidFederateHandle for the zero handle.
func (f *Federate) NormalizeFederateHandle(h FederateHandle) (r0 uint64, err error) {
	defer f.reported("normalizeFederateHandle", &err, func() ([]string, []string) { return texts(h), texts(r0) })
	if h == 0 {
		return 0, fmt.Errorf("%w: 0", ErrInvalidFederateHandle)
	}
	return uint64(h), nil
}

// NormalizeServiceGroup (§10.32) maps a service group to its value on
// the HLAserviceGroup dimension. Errors: ErrInvalidServiceGroup.
func (f *Federate) NormalizeServiceGroup(g ServiceGroup) (r0 uint64, err error) {
	defer f.reported("normalizeServiceGroup", &err, func() ([]string, []string) { return texts(g), texts(r0) })
	if !g.Valid() {
		return 0, fmt.Errorf("%w: %d", ErrInvalidServiceGroup, int(g))
	}
	return uint64(g), nil
}

// advisory switches (§10.33-§10.40).
func (f *Federate) setAdvisory(which core.Advisory, on bool) error {
	return f.call(func() error { return f.core.SetAdvisory(which, on) })
}

func (f *Federate) advisoryOn(which core.Advisory) (bool, error) {
	var on bool
	err := f.callAny(func() error {
		on = f.core.AdvisoryOn(which)
		return nil
	})
	return on, err
}

// GetObjectClassRelevanceAdvisorySwitch (HLA 4; 1516e has no getter)
// reports whether the object class relevance advisory switch is on.
func (f *Federate) GetObjectClassRelevanceAdvisorySwitch() (r0 bool, err error) {
	defer f.reported("getObjectClassRelevanceAdvisorySwitch", &err, func() ([]string, []string) { return nil, texts(r0) })
	return f.advisoryOn(core.ObjectClassRelevance)
}

// GetAttributeRelevanceAdvisorySwitch (HLA 4) reports whether the
// attribute relevance advisory switch is on.
func (f *Federate) GetAttributeRelevanceAdvisorySwitch() (r0 bool, err error) {
	defer f.reported("getAttributeRelevanceAdvisorySwitch", &err, func() ([]string, []string) { return nil, texts(r0) })
	return f.advisoryOn(core.AttributeRelevance)
}

// GetAttributeScopeAdvisorySwitch (HLA 4) reports whether the attribute
// scope advisory switch is on.
func (f *Federate) GetAttributeScopeAdvisorySwitch() (r0 bool, err error) {
	defer f.reported("getAttributeScopeAdvisorySwitch", &err, func() ([]string, []string) { return nil, texts(r0) })
	return f.advisoryOn(core.AttributeScope)
}

// GetInteractionRelevanceAdvisorySwitch (HLA 4) reports whether the
// interaction relevance advisory switch is on.
func (f *Federate) GetInteractionRelevanceAdvisorySwitch() (r0 bool, err error) {
	defer f.reported("getInteractionRelevanceAdvisorySwitch", &err, func() ([]string, []string) { return nil, texts(r0) })
	return f.advisoryOn(core.InteractionRelevance)
}

// SetServiceReportingSwitch (HLA 4; in 1516e the MOM's
// HLAsetServiceReporting) turns on or off the MOM's report of every
// service this federate calls (HLAreportServiceInvocation, docs/mom.md).
// Turning it on is refused while the federate subscribes to that report
// (ErrFederateServiceInvocationsAreBeingReportedViaMOM), and for a
// federate without the MOM (Config.NoMOM).
func (f *Federate) SetServiceReportingSwitch(on bool) (err error) {
	defer f.reported("setServiceReportingSwitch", &err, func() ([]string, []string) { return texts(on), nil })
	return f.callAny(func() error { return f.core.SetServiceReporting(on) })
}

// GetServiceReportingSwitch (HLA 4) reports whether service reporting is
// on.
func (f *Federate) GetServiceReportingSwitch() (r0 bool, err error) {
	defer f.reported("getServiceReportingSwitch", &err, func() ([]string, []string) { return nil, texts(r0) })
	return callAnyValue(f, func() (bool, error) { return f.core.ReportsServices(), nil })
}

// SetExceptionReportingSwitch (HLA 4; in 1516e the MOM's
// HLAsetExceptionReporting) turns on or off the MOM's report of every
// error this federate's callbacks return through Dispatch
// (HLAreportException).
func (f *Federate) SetExceptionReportingSwitch(on bool) (err error) {
	defer f.reported("setExceptionReportingSwitch", &err, func() ([]string, []string) { return texts(on), nil })
	return f.callAny(func() error { return f.core.SetExceptionReporting(on) })
}

// GetExceptionReportingSwitch (HLA 4) reports whether exception
// reporting is on.
func (f *Federate) GetExceptionReportingSwitch() (r0 bool, err error) {
	defer f.reported("getExceptionReportingSwitch", &err, func() ([]string, []string) { return nil, texts(r0) })
	return callAnyValue(f, func() (bool, error) { return f.core.ReportsExceptions(), nil })
}

// GetConveyProducingFederateSwitch (HLA 4) reports the federation's
// HLAconveyProducingFederate switch, as its FDD sets it (<switches>
// <conveyProducingFederate isEnabled="true"/>; off by default; meshrti
// does not change it at run time). While it is off the callbacks convey
// no producing federate (§6.9): Dispatch passes the zero handle, and the
// Federate Protocol leaves the field out.
func (f *Federate) GetConveyProducingFederateSwitch() (r0 bool, err error) {
	defer f.reported("getConveyProducingFederateSwitch", &err, func() ([]string, []string) { return nil, texts(r0) })
	return callAnyValue(f, func() (bool, error) { return f.conveysProducer(), nil })
}

// GetConveyRegionDesignatorSetsSwitch (HLA 4) reports the federation's
// HLAconveyRegionDesignatorSets switch, as its FDD sets it (off by
// default). meshrti conveys no sent regions even when it is on.
func (f *Federate) GetConveyRegionDesignatorSetsSwitch() (r0 bool, err error) {
	defer f.reported("getConveyRegionDesignatorSetsSwitch", &err, func() ([]string, []string) { return nil, texts(r0) })
	return callAnyValue(f, func() (bool, error) { return f.FDD().Switches.ConveyRegionDesignatorSets, nil })
}

// conveysProducer reports the HLAconveyProducingFederate switch.
func (f *Federate) conveysProducer() bool {
	d := f.FDD()
	return d != nil && d.Switches.ConveyProducingFederate
}

// EnableObjectClassRelevanceAdvisorySwitch (§10.33): StartRegistration
// and StopRegistrationForObjectClass come. ErrObjectClassRelevanceAdvisorySwitchIsOn.
func (f *Federate) EnableObjectClassRelevanceAdvisorySwitch() (err error) {
	defer f.reported("enableObjectClassRelevanceAdvisorySwitch", &err, nil)
	return f.setAdvisory(core.ObjectClassRelevance, true)
}

// DisableObjectClassRelevanceAdvisorySwitch (§10.34).
// ErrObjectClassRelevanceAdvisorySwitchIsOff.
func (f *Federate) DisableObjectClassRelevanceAdvisorySwitch() (err error) {
	defer f.reported("disableObjectClassRelevanceAdvisorySwitch", &err, nil)
	return f.setAdvisory(core.ObjectClassRelevance, false)
}

// EnableAttributeRelevanceAdvisorySwitch (§10.35): TurnUpdatesOn and
// TurnUpdatesOffForObjectInstance come. ErrAttributeRelevanceAdvisorySwitchIsOn.
func (f *Federate) EnableAttributeRelevanceAdvisorySwitch() (err error) {
	defer f.reported("enableAttributeRelevanceAdvisorySwitch", &err, nil)
	return f.setAdvisory(core.AttributeRelevance, true)
}

// DisableAttributeRelevanceAdvisorySwitch (§10.36).
// ErrAttributeRelevanceAdvisorySwitchIsOff.
func (f *Federate) DisableAttributeRelevanceAdvisorySwitch() (err error) {
	defer f.reported("disableAttributeRelevanceAdvisorySwitch", &err, nil)
	return f.setAdvisory(core.AttributeRelevance, false)
}

// EnableAttributeScopeAdvisorySwitch (§10.37): AttributesInScope and
// AttributesOutOfScope come. ErrAttributeScopeAdvisorySwitchIsOn.
func (f *Federate) EnableAttributeScopeAdvisorySwitch() (err error) {
	defer f.reported("enableAttributeScopeAdvisorySwitch", &err, nil)
	return f.setAdvisory(core.AttributeScope, true)
}

// DisableAttributeScopeAdvisorySwitch (§10.38).
// ErrAttributeScopeAdvisorySwitchIsOff.
func (f *Federate) DisableAttributeScopeAdvisorySwitch() (err error) {
	defer f.reported("disableAttributeScopeAdvisorySwitch", &err, nil)
	return f.setAdvisory(core.AttributeScope, false)
}

// EnableInteractionRelevanceAdvisorySwitch (§10.39): TurnInteractionsOn
// and TurnInteractionsOff come. ErrInteractionRelevanceAdvisorySwitchIsOn.
func (f *Federate) EnableInteractionRelevanceAdvisorySwitch() (err error) {
	defer f.reported("enableInteractionRelevanceAdvisorySwitch", &err, nil)
	return f.setAdvisory(core.InteractionRelevance, true)
}

// DisableInteractionRelevanceAdvisorySwitch (§10.40).
// ErrInteractionRelevanceAdvisorySwitchIsOff.
func (f *Federate) DisableInteractionRelevanceAdvisorySwitch() (err error) {
	defer f.reported("disableInteractionRelevanceAdvisorySwitch", &err, nil)
	return f.setAdvisory(core.InteractionRelevance, false)
}

// EnableCallbacks (§10.43) lets Next return callbacks again.
func (f *Federate) EnableCallbacks() (err error) {
	defer f.reported("enableCallbacks", &err, nil)
	if err := f.call(func() error { return nil }); err != nil {
		return err
	}
	f.events.hold(false)
	return nil
}

// DisableCallbacks (§10.44) holds callbacks back: Next waits (they stay
// queued) until EnableCallbacks.
func (f *Federate) DisableCallbacks() (err error) {
	defer f.reported("disableCallbacks", &err, nil)
	if err := f.call(func() error { return nil }); err != nil {
		return err
	}
	f.events.hold(true)
	return nil
}

// EvokeCallback (§10.41) waits up to approxMinSeconds for one callback
// and hands it to amb (the 1516e evoked callback model, for code ported
// from C++ or Java; Next is the Go way). It reports whether more
// callbacks are waiting. A callback's error comes back wrapped in
// ErrFederateInternalError.
func (f *Federate) EvokeCallback(amb FederateAmbassador, approxMinSeconds float64) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), secondsDuration(approxMinSeconds))
	defer cancel()
	ev, err := f.Next(ctx)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return false, nil
	case err != nil:
		return false, err
	}
	if err := dispatchOne(amb, ev); err != nil {
		return f.Pending() > 0, fmt.Errorf("%w: %T: %w", ErrFederateInternalError, ev, err)
	}
	return f.Pending() > 0, nil
}

// EvokeMultipleCallbacks (§10.42) hands callbacks to amb for at least
// approxMinSeconds (waiting for them) and at most approxMaxSeconds. It
// reports whether more callbacks are waiting.
func (f *Federate) EvokeMultipleCallbacks(amb FederateAmbassador, approxMinSeconds, approxMaxSeconds float64) (bool, error) {
	start := time.Now()
	minD, maxD := secondsDuration(approxMinSeconds), secondsDuration(max(approxMinSeconds, approxMaxSeconds))
	for {
		wait := minD - time.Since(start)
		if f.Pending() > 0 || wait <= 0 {
			wait = 0
		}
		if time.Since(start) >= maxD {
			return f.Pending() > 0, nil
		}
		if wait == 0 && f.Pending() == 0 {
			return false, nil
		}
		more, err := f.EvokeCallback(amb, max(wait, time.Millisecond).Seconds())
		if err != nil {
			return more, err
		}
	}
}

func secondsDuration(s float64) time.Duration {
	if s <= 0 || math.IsNaN(s) {
		return 0
	}
	if s > 1e6 {
		s = 1e6
	}
	return time.Duration(s * float64(time.Second))
}

// GetTimeFactory returns the factory of the federation's logical times
// (HLAfloat64Time or HLAinteger64Time): initial, final, zero and epsilon
// values, and their encoding.
func (f *Federate) GetTimeFactory() TimeFactory { return f.cfg.timeKind().Factory() }

// DecodeFederateHandle decodes an encoded federate handle (8 bytes, as
// EncodeHandle writes it). Errors: ErrCouldNotDecode.
func (f *Federate) DecodeFederateHandle(b []byte) (FederateHandle, error) {
	return hla.DecodeHandle[FederateHandle](b)
}

// DecodeObjectClassHandle decodes an encoded object class handle.
func (f *Federate) DecodeObjectClassHandle(b []byte) (ObjectClassHandle, error) {
	return hla.DecodeHandle[ObjectClassHandle](b)
}

// DecodeInteractionClassHandle decodes an encoded interaction class
// handle.
func (f *Federate) DecodeInteractionClassHandle(b []byte) (InteractionClassHandle, error) {
	return hla.DecodeHandle[InteractionClassHandle](b)
}

// DecodeObjectInstanceHandle decodes an encoded object instance handle
// (16 bytes, as ObjectInstanceHandle.Encode writes it).
func (f *Federate) DecodeObjectInstanceHandle(b []byte) (ObjectInstanceHandle, error) {
	return hla.DecodeObjectInstanceHandle(b)
}

// DecodeAttributeHandle decodes an encoded attribute handle.
func (f *Federate) DecodeAttributeHandle(b []byte) (AttributeHandle, error) {
	return hla.DecodeHandle[AttributeHandle](b)
}

// DecodeParameterHandle decodes an encoded parameter handle.
func (f *Federate) DecodeParameterHandle(b []byte) (ParameterHandle, error) {
	return hla.DecodeHandle[ParameterHandle](b)
}

// DecodeDimensionHandle decodes an encoded dimension handle.
func (f *Federate) DecodeDimensionHandle(b []byte) (DimensionHandle, error) {
	return hla.DecodeHandle[DimensionHandle](b)
}

// DecodeMessageRetractionHandle decodes an encoded retraction handle.
func (f *Federate) DecodeMessageRetractionHandle(b []byte) (MessageRetractionHandle, error) {
	return hla.DecodeMessageRetractionHandle(b)
}

// DecodeRegionHandle decodes an encoded region handle.
func (f *Federate) DecodeRegionHandle(b []byte) (RegionHandle, error) {
	return hla.DecodeRegionHandle(b)
}
