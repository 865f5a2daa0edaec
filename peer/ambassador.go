package peer

import (
	"context"
	"errors"
	"fmt"
	"reflect"
)

// FederateAmbassador is the push-style callback interface of the 1516e
// API, for code ported from C++ or Java. Dispatch drives it from a
// federate's event stream. A method that returns an error stops Dispatch
// (the standard's FederateInternalError).
type FederateAmbassador interface {
	SynchronizationPointRegistrationSucceeded(label string) error
	SynchronizationPointRegistrationFailed(label string, reason SynchronizationPointFailureReason) error
	AnnounceSynchronizationPoint(label string, tag []byte) error
	FederationSynchronized(label string, failed []FederateHandle) error
	// Save and restore (§4.17-§4.32). InitiateFederateSave's time is
	// valid when hasTime.
	InitiateFederateSave(label string, t LogicalTime, hasTime bool) error
	FederationSaved() error
	FederationNotSaved(reason SaveFailureReason) error
	FederationSaveStatusResponse(statuses []FederateHandleSaveStatusPair) error
	RequestFederationRestoreSucceeded(label string) error
	RequestFederationRestoreFailed(label string) error
	FederationRestoreBegun() error
	InitiateFederateRestore(label, name string, h FederateHandle) error
	FederationRestored() error
	FederationNotRestored(reason RestoreFailureReason) error
	FederationRestoreStatusResponse(statuses []FederateRestoreStatus) error
	// ReportFederationExecutions (§4.8) answers
	// Federate.ListFederationExecutions.
	ReportFederationExecutions(list []FederationExecutionInformation) error
	DiscoverObjectInstance(obj ObjectInstanceHandle, class ObjectClassHandle, name string, producer FederateHandle) error
	ReflectAttributeValues(obj ObjectInstanceHandle, values AttributeValues, tag []byte, sent OrderType, info ReflectInfo) error
	ReceiveInteraction(class InteractionClassHandle, values ParameterValues, tag []byte, sent OrderType, info ReflectInfo) error
	// ReceiveDirectedInteraction (HLA 4): an interaction sent to the
	// instance obj.
	ReceiveDirectedInteraction(class InteractionClassHandle, obj ObjectInstanceHandle, values ParameterValues, tag []byte, sent OrderType, info ReflectInfo) error
	RemoveObjectInstance(obj ObjectInstanceHandle, tag []byte, sent OrderType, info ReflectInfo) error
	ObjectInstanceNameReservationSucceeded(name string) error
	ObjectInstanceNameReservationFailed(name string) error
	TimeRegulationEnabled(t LogicalTime) error
	TimeConstrainedEnabled(t LogicalTime) error
	TimeAdvanceGrant(t LogicalTime) error
	ConnectionLost(reason string) error
	// RequestRetraction (§8.22): a message this federate already received
	// was retracted by its sender.
	RequestRetraction(h MessageRetractionHandle) error

	StartRegistrationForObjectClass(class ObjectClassHandle) error
	StopRegistrationForObjectClass(class ObjectClassHandle) error
	TurnInteractionsOn(class InteractionClassHandle) error
	TurnInteractionsOff(class InteractionClassHandle) error
	MultipleObjectInstanceNameReservationSucceeded(names []string) error
	MultipleObjectInstanceNameReservationFailed(names []string) error
	AttributesInScope(obj ObjectInstanceHandle, attrs []AttributeHandle) error
	AttributesOutOfScope(obj ObjectInstanceHandle, attrs []AttributeHandle) error
	ProvideAttributeValueUpdate(obj ObjectInstanceHandle, attrs []AttributeHandle, tag []byte) error
	TurnUpdatesOnForObjectInstance(obj ObjectInstanceHandle, attrs []AttributeHandle, updateRate string) error
	TurnUpdatesOffForObjectInstance(obj ObjectInstanceHandle, attrs []AttributeHandle) error
	ConfirmAttributeTransportationTypeChange(obj ObjectInstanceHandle, attrs []AttributeHandle, t TransportationType) error
	ReportAttributeTransportationType(obj ObjectInstanceHandle, attr AttributeHandle, t TransportationType) error
	ConfirmInteractionTransportationTypeChange(class InteractionClassHandle, t TransportationType) error
	ReportInteractionTransportationType(fed FederateHandle, class InteractionClassHandle, t TransportationType) error

	RequestAttributeOwnershipAssumption(obj ObjectInstanceHandle, attrs []AttributeHandle, tag []byte) error
	RequestDivestitureConfirmation(obj ObjectInstanceHandle, attrs []AttributeHandle) error
	AttributeOwnershipAcquisitionNotification(obj ObjectInstanceHandle, attrs []AttributeHandle, tag []byte) error
	AttributeOwnershipUnavailable(obj ObjectInstanceHandle, attrs []AttributeHandle) error
	RequestAttributeOwnershipRelease(obj ObjectInstanceHandle, attrs []AttributeHandle, tag []byte) error
	ConfirmAttributeOwnershipAcquisitionCancellation(obj ObjectInstanceHandle, attrs []AttributeHandle) error
	InformAttributeOwnership(obj ObjectInstanceHandle, attr AttributeHandle, owner FederateHandle) error
	AttributeIsNotOwned(obj ObjectInstanceHandle, attr AttributeHandle) error
	AttributeIsOwnedByRTI(obj ObjectInstanceHandle, attr AttributeHandle) error
}

// ReflectInfo carries the optional parts of a reflect, receive or remove
// callback: the time stamp (nil in receive order), the order it was
// received in, the producing federate, the transportation, and the
// sender's retraction handle for a message sent in time-stamp order (the
// handle a later RequestRetraction names; the zero handle otherwise).
// Dispatch leaves Producer zero while the HLAconveyProducingFederate
// switch is off.
type ReflectInfo struct {
	Time           LogicalTime
	ReceivedOrder  OrderType
	Producer       FederateHandle
	Transportation string
	Retraction     MessageRetractionHandle
}

// NullFederateAmbassador implements every method by doing nothing. Embed it
// and override what you need.
type NullFederateAmbassador struct{}

func (NullFederateAmbassador) DiscoverObjectInstance(ObjectInstanceHandle, ObjectClassHandle, string, FederateHandle) error {
	return nil
}
func (NullFederateAmbassador) ReflectAttributeValues(ObjectInstanceHandle, AttributeValues, []byte, OrderType, ReflectInfo) error {
	return nil
}
func (NullFederateAmbassador) ReceiveInteraction(InteractionClassHandle, ParameterValues, []byte, OrderType, ReflectInfo) error {
	return nil
}
func (NullFederateAmbassador) ReceiveDirectedInteraction(InteractionClassHandle, ObjectInstanceHandle, ParameterValues, []byte, OrderType, ReflectInfo) error {
	return nil
}
func (NullFederateAmbassador) RemoveObjectInstance(ObjectInstanceHandle, []byte, OrderType, ReflectInfo) error {
	return nil
}
func (NullFederateAmbassador) ObjectInstanceNameReservationSucceeded(string) error { return nil }
func (NullFederateAmbassador) ObjectInstanceNameReservationFailed(string) error    { return nil }
func (NullFederateAmbassador) TimeRegulationEnabled(LogicalTime) error             { return nil }
func (NullFederateAmbassador) TimeConstrainedEnabled(LogicalTime) error            { return nil }
func (NullFederateAmbassador) TimeAdvanceGrant(LogicalTime) error                  { return nil }
func (NullFederateAmbassador) ConnectionLost(string) error                         { return nil }
func (NullFederateAmbassador) RequestRetraction(MessageRetractionHandle) error     { return nil }
func (NullFederateAmbassador) StartRegistrationForObjectClass(ObjectClassHandle) error {
	return nil
}
func (NullFederateAmbassador) StopRegistrationForObjectClass(ObjectClassHandle) error { return nil }
func (NullFederateAmbassador) TurnInteractionsOn(InteractionClassHandle) error        { return nil }
func (NullFederateAmbassador) TurnInteractionsOff(InteractionClassHandle) error       { return nil }
func (NullFederateAmbassador) MultipleObjectInstanceNameReservationSucceeded([]string) error {
	return nil
}
func (NullFederateAmbassador) MultipleObjectInstanceNameReservationFailed([]string) error {
	return nil
}
func (NullFederateAmbassador) AttributesInScope(ObjectInstanceHandle, []AttributeHandle) error {
	return nil
}
func (NullFederateAmbassador) AttributesOutOfScope(ObjectInstanceHandle, []AttributeHandle) error {
	return nil
}
func (NullFederateAmbassador) ProvideAttributeValueUpdate(ObjectInstanceHandle, []AttributeHandle, []byte) error {
	return nil
}
func (NullFederateAmbassador) TurnUpdatesOnForObjectInstance(ObjectInstanceHandle, []AttributeHandle, string) error {
	return nil
}
func (NullFederateAmbassador) TurnUpdatesOffForObjectInstance(ObjectInstanceHandle, []AttributeHandle) error {
	return nil
}
func (NullFederateAmbassador) ConfirmAttributeTransportationTypeChange(ObjectInstanceHandle, []AttributeHandle, TransportationType) error {
	return nil
}
func (NullFederateAmbassador) ReportAttributeTransportationType(ObjectInstanceHandle, AttributeHandle, TransportationType) error {
	return nil
}
func (NullFederateAmbassador) ConfirmInteractionTransportationTypeChange(InteractionClassHandle, TransportationType) error {
	return nil
}
func (NullFederateAmbassador) ReportInteractionTransportationType(FederateHandle, InteractionClassHandle, TransportationType) error {
	return nil
}
func (NullFederateAmbassador) SynchronizationPointRegistrationSucceeded(string) error { return nil }
func (NullFederateAmbassador) SynchronizationPointRegistrationFailed(string, SynchronizationPointFailureReason) error {
	return nil
}
func (NullFederateAmbassador) AnnounceSynchronizationPoint(string, []byte) error    { return nil }
func (NullFederateAmbassador) InitiateFederateSave(string, LogicalTime, bool) error { return nil }
func (NullFederateAmbassador) FederationSaved() error                               { return nil }
func (NullFederateAmbassador) FederationNotSaved(SaveFailureReason) error           { return nil }
func (NullFederateAmbassador) FederationSaveStatusResponse([]FederateHandleSaveStatusPair) error {
	return nil
}
func (NullFederateAmbassador) RequestFederationRestoreSucceeded(string) error { return nil }
func (NullFederateAmbassador) RequestFederationRestoreFailed(string) error    { return nil }
func (NullFederateAmbassador) FederationRestoreBegun() error                  { return nil }
func (NullFederateAmbassador) InitiateFederateRestore(string, string, FederateHandle) error {
	return nil
}
func (NullFederateAmbassador) FederationRestored() error                        { return nil }
func (NullFederateAmbassador) FederationNotRestored(RestoreFailureReason) error { return nil }
func (NullFederateAmbassador) ReportFederationExecutions([]FederationExecutionInformation) error {
	return nil
}
func (NullFederateAmbassador) FederationRestoreStatusResponse([]FederateRestoreStatus) error {
	return nil
}
func (NullFederateAmbassador) FederationSynchronized(string, []FederateHandle) error { return nil }
func (NullFederateAmbassador) RequestAttributeOwnershipAssumption(ObjectInstanceHandle, []AttributeHandle, []byte) error {
	return nil
}
func (NullFederateAmbassador) RequestDivestitureConfirmation(ObjectInstanceHandle, []AttributeHandle) error {
	return nil
}
func (NullFederateAmbassador) AttributeOwnershipAcquisitionNotification(ObjectInstanceHandle, []AttributeHandle, []byte) error {
	return nil
}
func (NullFederateAmbassador) AttributeOwnershipUnavailable(ObjectInstanceHandle, []AttributeHandle) error {
	return nil
}
func (NullFederateAmbassador) RequestAttributeOwnershipRelease(ObjectInstanceHandle, []AttributeHandle, []byte) error {
	return nil
}
func (NullFederateAmbassador) ConfirmAttributeOwnershipAcquisitionCancellation(ObjectInstanceHandle, []AttributeHandle) error {
	return nil
}
func (NullFederateAmbassador) InformAttributeOwnership(ObjectInstanceHandle, AttributeHandle, FederateHandle) error {
	return nil
}
func (NullFederateAmbassador) AttributeIsNotOwned(ObjectInstanceHandle, AttributeHandle) error {
	return nil
}
func (NullFederateAmbassador) AttributeIsOwnedByRTI(ObjectInstanceHandle, AttributeHandle) error {
	return nil
}

// eventSource is what Dispatch reads; *Federate implements it.
type eventSource interface {
	Next(ctx context.Context) (Event, error)
}

// Dispatch calls amb for every event of fed, in order, on the calling
// goroutine, until ctx ends, the federate closes (it then returns nil), or
// a callback fails (its error is returned wrapped in
// ErrFederateInternalError). Events without a FederateAmbassador method
// (the meshrti extensions) are skipped. Callbacks may call back into fed.
// While the federation's HLAconveyProducingFederate switch is off (the
// default: GetConveyProducingFederateSwitch), the producing federate of
// a discover, reflect, receive or remove is the zero handle, as the
// standard conveys none (§6.9).
func Dispatch(ctx context.Context, fed eventSource, amb FederateAmbassador) error {
	for {
		ev, err := fed.Next(ctx)
		if errors.Is(err, ErrClosed) {
			return nil
		}
		if err != nil {
			return err
		}
		if f, ok := fed.(*Federate); ok && !f.conveysProducer() {
			ev = withoutProducer(ev)
		}
		if err := dispatchOne(amb, ev); err != nil {
			if f, ok := fed.(*Federate); ok {
				f.reportException(ev, err)
			}
			return fmt.Errorf("%w: %T: %w", ErrFederateInternalError, ev, err)
		}
	}
}

// withoutProducer is ev as the callbacks convey it while the
// HLAconveyProducingFederate switch is off (§6.9): with the zero
// producing federate.
func withoutProducer(ev Event) Event {
	switch e := ev.(type) {
	case DiscoverObjectInstance:
		e.Producer = 0
		return e
	case ReflectAttributeValues:
		e.Producer = 0
		return e
	case ReceiveInteraction:
		e.Producer = 0
		return e
	case ReceiveDirectedInteraction:
		e.Producer = 0
		return e
	case RemoveObjectInstance:
		e.Producer = 0
		return e
	}
	return ev
}

func dispatchOne(amb FederateAmbassador, ev Event) error {
	switch e := ev.(type) {
	case DiscoverObjectInstance:
		return amb.DiscoverObjectInstance(e.Object, e.Class, e.Name, e.Producer)
	case ReflectAttributeValues:
		return amb.ReflectAttributeValues(e.Object, e.Values, e.Tag, e.SentOrder,
			ReflectInfo{Time: e.Time, ReceivedOrder: e.ReceivedOrder, Producer: e.Producer, Transportation: e.Transportation, Retraction: e.Retraction})
	case ReceiveInteraction:
		return amb.ReceiveInteraction(e.Class, e.Values, e.Tag, e.SentOrder,
			ReflectInfo{Time: e.Time, ReceivedOrder: e.ReceivedOrder, Producer: e.Producer, Transportation: e.Transportation, Retraction: e.Retraction})
	case ReceiveDirectedInteraction:
		return amb.ReceiveDirectedInteraction(e.Class, e.Object, e.Values, e.Tag, e.SentOrder,
			ReflectInfo{Time: e.Time, ReceivedOrder: e.ReceivedOrder, Producer: e.Producer, Transportation: e.Transportation, Retraction: e.Retraction})
	case RemoveObjectInstance:
		return amb.RemoveObjectInstance(e.Object, e.Tag, e.SentOrder, ReflectInfo{Time: e.Time, ReceivedOrder: e.ReceivedOrder, Producer: e.Producer, Retraction: e.Retraction})
	case ObjectInstanceNameReservationSucceeded:
		return amb.ObjectInstanceNameReservationSucceeded(e.Name)
	case ObjectInstanceNameReservationFailed:
		return amb.ObjectInstanceNameReservationFailed(e.Name)
	case TimeRegulationEnabled:
		return amb.TimeRegulationEnabled(e.Time)
	case TimeConstrainedEnabled:
		return amb.TimeConstrainedEnabled(e.Time)
	case TimeAdvanceGrant:
		return amb.TimeAdvanceGrant(e.Time)
	case ConnectionLost:
		return amb.ConnectionLost(e.Reason)
	case RequestRetraction:
		return amb.RequestRetraction(e.Handle)
	case StartRegistrationForObjectClass:
		return amb.StartRegistrationForObjectClass(e.Class)
	case StopRegistrationForObjectClass:
		return amb.StopRegistrationForObjectClass(e.Class)
	case TurnInteractionsOn:
		return amb.TurnInteractionsOn(e.Class)
	case TurnInteractionsOff:
		return amb.TurnInteractionsOff(e.Class)
	case MultipleObjectInstanceNameReservationSucceeded:
		return amb.MultipleObjectInstanceNameReservationSucceeded(e.Names)
	case MultipleObjectInstanceNameReservationFailed:
		return amb.MultipleObjectInstanceNameReservationFailed(e.Names)
	case AttributesInScope:
		return amb.AttributesInScope(e.Object, e.Attributes)
	case AttributesOutOfScope:
		return amb.AttributesOutOfScope(e.Object, e.Attributes)
	case ProvideAttributeValueUpdate:
		return amb.ProvideAttributeValueUpdate(e.Object, e.Attributes, e.Tag)
	case TurnUpdatesOnForObjectInstance:
		return amb.TurnUpdatesOnForObjectInstance(e.Object, e.Attributes, e.UpdateRate)
	case TurnUpdatesOffForObjectInstance:
		return amb.TurnUpdatesOffForObjectInstance(e.Object, e.Attributes)
	case ConfirmAttributeTransportationTypeChange:
		return amb.ConfirmAttributeTransportationTypeChange(e.Object, e.Attributes, e.Transportation)
	case ReportAttributeTransportationType:
		return amb.ReportAttributeTransportationType(e.Object, e.Attribute, e.Transportation)
	case ConfirmInteractionTransportationTypeChange:
		return amb.ConfirmInteractionTransportationTypeChange(e.Class, e.Transportation)
	case ReportInteractionTransportationType:
		return amb.ReportInteractionTransportationType(e.Federate, e.Class, e.Transportation)
	case RequestAttributeOwnershipAssumption:
		return amb.RequestAttributeOwnershipAssumption(e.Object, e.Attributes, e.Tag)
	case RequestDivestitureConfirmation:
		return amb.RequestDivestitureConfirmation(e.Object, e.Attributes)
	case AttributeOwnershipAcquisitionNotification:
		return amb.AttributeOwnershipAcquisitionNotification(e.Object, e.Attributes, e.Tag)
	case AttributeOwnershipUnavailable:
		return amb.AttributeOwnershipUnavailable(e.Object, e.Attributes)
	case RequestAttributeOwnershipRelease:
		return amb.RequestAttributeOwnershipRelease(e.Object, e.Attributes, e.Tag)
	case ConfirmAttributeOwnershipAcquisitionCancellation:
		return amb.ConfirmAttributeOwnershipAcquisitionCancellation(e.Object, e.Attributes)
	case InformAttributeOwnership:
		return amb.InformAttributeOwnership(e.Object, e.Attribute, e.Owner)
	case AttributeIsNotOwned:
		return amb.AttributeIsNotOwned(e.Object, e.Attribute)
	case AttributeIsOwnedByRTI:
		return amb.AttributeIsOwnedByRTI(e.Object, e.Attribute)
	case SynchronizationPointRegistrationSucceeded:
		return amb.SynchronizationPointRegistrationSucceeded(e.Label)
	case SynchronizationPointRegistrationFailed:
		return amb.SynchronizationPointRegistrationFailed(e.Label, e.Reason)
	case AnnounceSynchronizationPoint:
		return amb.AnnounceSynchronizationPoint(e.Label, e.Tag)
	case FederationSynchronized:
		return amb.FederationSynchronized(e.Label, e.Failed)
	case InitiateFederateSave:
		return amb.InitiateFederateSave(e.Label, e.Time, e.HasTime)
	case FederationSaved:
		return amb.FederationSaved()
	case FederationNotSaved:
		return amb.FederationNotSaved(e.Reason)
	case FederationSaveStatusResponse:
		return amb.FederationSaveStatusResponse(e.Statuses)
	case RequestFederationRestoreSucceeded:
		return amb.RequestFederationRestoreSucceeded(e.Label)
	case RequestFederationRestoreFailed:
		return amb.RequestFederationRestoreFailed(e.Label)
	case FederationRestoreBegun:
		return amb.FederationRestoreBegun()
	case InitiateFederateRestore:
		return amb.InitiateFederateRestore(e.Label, e.Name, e.Handle)
	case FederationRestored:
		return amb.FederationRestored()
	case FederationNotRestored:
		return amb.FederationNotRestored(e.Reason)
	case FederationRestoreStatusResponse:
		return amb.FederationRestoreStatusResponse(e.Statuses)
	case ReportFederationExecutions:
		return amb.ReportFederationExecutions(e.Executions)
	}
	return nil
}

// reportException reports the error a callback returned through the MOM,
// when its exception reporting is on (HLAsetExceptionReporting).
func (f *Federate) reportException(ev Event, err error) {
	name, ok := callbackName(ev)
	if !ok {
		name = reflect.TypeOf(ev).Name()
	}
	f.callDriver(func() error {
		f.core.ReportException(name, err)
		return nil
	})
}
