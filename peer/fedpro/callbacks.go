package fedpro

import (
	"encoding/binary"

	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/fedpro/pb"
)

// callbackOf turns one of f's events into its Federate Protocol
// callback; nil for events the protocol has no callback for (meshrti's
// membership notices, lost messages).
//
// The producing federate of a discover, reflect, receive or remove is
// conveyed only while the federation's HLAconveyProducingFederate switch
// is on (1516.1 §6.9): the public clients choose the callback form (the
// 1516e discover with or without the producer, the supplemental infos)
// by whether the field is there. Sent regions are never conveyed.
func callbackOf(f *peer.Federate, ev peer.Event) *pb.CallbackRequest {
	return callbackWith(f, ev, conveysProducer(f))
}

// conveysProducer reports whether f's federation's
// HLAconveyProducingFederate switch is on (read directly: the getter is
// a service the MOM reports).
func conveysProducer(f *peer.Federate) bool {
	d := f.FDD()
	return d != nil && d.Switches.ConveyProducingFederate
}

// callbackWith is callbackOf with the producing federate conveyed or
// not. It uses f only for the events with a logical time.
func callbackWith(f *peer.Federate, ev peer.Event, convey bool) *pb.CallbackRequest {
	cb := &pb.CallbackRequest{}
	producer := func(h peer.FederateHandle) *pb.FederateHandle {
		if !convey {
			return nil
		}
		return pbFed(h)
	}
	switch e := ev.(type) {
	case peer.ConnectionLost:
		cb.CallbackRequest = &pb.CallbackRequest_ConnectionLost{ConnectionLost: &pb.ConnectionLost{FaultDescription: e.Reason}}
	case peer.SynchronizationPointRegistrationSucceeded:
		cb.CallbackRequest = &pb.CallbackRequest_SynchronizationPointRegistrationSucceeded{SynchronizationPointRegistrationSucceeded: &pb.SynchronizationPointRegistrationSucceeded{SynchronizationPointLabel: e.Label}}
	case peer.SynchronizationPointRegistrationFailed:
		reason := pb.SynchronizationPointFailureReason_SYNCHRONIZATION_POINT_LABEL_NOT_UNIQUE
		if e.Reason == peer.SynchronizationSetMemberNotJoined {
			reason = pb.SynchronizationPointFailureReason_SYNCHRONIZATION_SET_MEMBER_NOT_JOINED
		}
		cb.CallbackRequest = &pb.CallbackRequest_SynchronizationPointRegistrationFailed{SynchronizationPointRegistrationFailed: &pb.SynchronizationPointRegistrationFailed{SynchronizationPointLabel: e.Label, Reason: reason}}
	case peer.AnnounceSynchronizationPoint:
		cb.CallbackRequest = &pb.CallbackRequest_AnnounceSynchronizationPoint{AnnounceSynchronizationPoint: &pb.AnnounceSynchronizationPoint{SynchronizationPointLabel: e.Label, UserSuppliedTag: e.Tag}}
	case peer.FederationSynchronized:
		cb.CallbackRequest = &pb.CallbackRequest_FederationSynchronized{FederationSynchronized: &pb.FederationSynchronized{SynchronizationPointLabel: e.Label, FailedToSyncSet: pbFedSet(e.Failed)}}
	case peer.InitiateFederateSave:
		if e.HasTime {
			cb.CallbackRequest = &pb.CallbackRequest_InitiateFederateSaveWithTime{InitiateFederateSaveWithTime: &pb.InitiateFederateSaveWithTime{Label: e.Label, Time: pbTime(f, e.Time)}}
		} else {
			cb.CallbackRequest = &pb.CallbackRequest_InitiateFederateSave{InitiateFederateSave: &pb.InitiateFederateSave{Label: e.Label}}
		}
	case peer.FederationSaved:
		cb.CallbackRequest = &pb.CallbackRequest_FederationSaved{FederationSaved: &pb.FederationSaved{}}
	case peer.FederationNotSaved:
		cb.CallbackRequest = &pb.CallbackRequest_FederationNotSaved{FederationNotSaved: &pb.FederationNotSaved{Reason: pbSaveFailure(e.Reason)}}
	case peer.FederationSaveStatusResponse:
		arr := &pb.FederateHandleSaveStatusPairArray{}
		for _, p := range e.Statuses {
			arr.FederateHandleSaveStatusPair = append(arr.FederateHandleSaveStatusPair, &pb.FederateHandleSaveStatusPair{FederateHandle: pbFed(p.Federate), SaveStatus: pbSaveStatus(p.Status)})
		}
		cb.CallbackRequest = &pb.CallbackRequest_FederationSaveStatusResponse{FederationSaveStatusResponse: &pb.FederationSaveStatusResponse{Response: arr}}
	case peer.RequestFederationRestoreSucceeded:
		cb.CallbackRequest = &pb.CallbackRequest_RequestFederationRestoreSucceeded{RequestFederationRestoreSucceeded: &pb.RequestFederationRestoreSucceeded{Label: e.Label}}
	case peer.RequestFederationRestoreFailed:
		cb.CallbackRequest = &pb.CallbackRequest_RequestFederationRestoreFailed{RequestFederationRestoreFailed: &pb.RequestFederationRestoreFailed{Label: e.Label}}
	case peer.FederationRestoreBegun:
		cb.CallbackRequest = &pb.CallbackRequest_FederationRestoreBegun{FederationRestoreBegun: &pb.FederationRestoreBegun{}}
	case peer.InitiateFederateRestore:
		cb.CallbackRequest = &pb.CallbackRequest_InitiateFederateRestore{InitiateFederateRestore: &pb.InitiateFederateRestore{Label: e.Label, FederateName: e.Name, PostRestoreFederateHandle: pbFed(e.Handle)}}
	case peer.FederationRestored:
		cb.CallbackRequest = &pb.CallbackRequest_FederationRestored{FederationRestored: &pb.FederationRestored{}}
	case peer.FederationNotRestored:
		cb.CallbackRequest = &pb.CallbackRequest_FederationNotRestored{FederationNotRestored: &pb.FederationNotRestored{Reason: pbRestoreFailure(e.Reason)}}
	case peer.FederationRestoreStatusResponse:
		arr := &pb.FederateRestoreStatusArray{}
		for _, p := range e.Statuses {
			arr.FederateRestoreStatus = append(arr.FederateRestoreStatus, &pb.FederateRestoreStatus{PreRestoreHandle: pbFed(p.PreRestore), PostRestoreHandle: pbFed(p.PostRestore), RestoreStatus: pbRestoreStatus(p.Status)})
		}
		cb.CallbackRequest = &pb.CallbackRequest_FederationRestoreStatusResponse{FederationRestoreStatusResponse: &pb.FederationRestoreStatusResponse{Response: arr}}
	case peer.StartRegistrationForObjectClass:
		cb.CallbackRequest = &pb.CallbackRequest_StartRegistrationForObjectClass{StartRegistrationForObjectClass: &pb.StartRegistrationForObjectClass{ObjectClass: pbClass(e.Class)}}
	case peer.StopRegistrationForObjectClass:
		cb.CallbackRequest = &pb.CallbackRequest_StopRegistrationForObjectClass{StopRegistrationForObjectClass: &pb.StopRegistrationForObjectClass{ObjectClass: pbClass(e.Class)}}
	case peer.TurnInteractionsOn:
		cb.CallbackRequest = &pb.CallbackRequest_TurnInteractionsOn{TurnInteractionsOn: &pb.TurnInteractionsOn{InteractionClass: pbInteraction(e.Class)}}
	case peer.TurnInteractionsOff:
		cb.CallbackRequest = &pb.CallbackRequest_TurnInteractionsOff{TurnInteractionsOff: &pb.TurnInteractionsOff{InteractionClass: pbInteraction(e.Class)}}
	case peer.ObjectInstanceNameReservationSucceeded:
		cb.CallbackRequest = &pb.CallbackRequest_ObjectInstanceNameReservationSucceeded{ObjectInstanceNameReservationSucceeded: &pb.ObjectInstanceNameReservationSucceeded{ObjectInstanceName: e.Name}}
	case peer.ObjectInstanceNameReservationFailed:
		cb.CallbackRequest = &pb.CallbackRequest_ObjectInstanceNameReservationFailed{ObjectInstanceNameReservationFailed: &pb.ObjectInstanceNameReservationFailed{ObjectInstanceName: e.Name}}
	case peer.MultipleObjectInstanceNameReservationSucceeded:
		cb.CallbackRequest = &pb.CallbackRequest_MultipleObjectInstanceNameReservationSucceeded{MultipleObjectInstanceNameReservationSucceeded: &pb.MultipleObjectInstanceNameReservationSucceeded{ObjectInstanceNames: e.Names}}
	case peer.MultipleObjectInstanceNameReservationFailed:
		cb.CallbackRequest = &pb.CallbackRequest_MultipleObjectInstanceNameReservationFailed{MultipleObjectInstanceNameReservationFailed: &pb.MultipleObjectInstanceNameReservationFailed{ObjectInstanceNames: e.Names}}
	case peer.DiscoverObjectInstance:
		cb.CallbackRequest = &pb.CallbackRequest_DiscoverObjectInstance{DiscoverObjectInstance: &pb.DiscoverObjectInstance{ObjectInstance: pbObj(e.Object), ObjectClass: pbClass(e.Class), ObjectInstanceName: e.Name, ProducingFederate: producer(e.Producer)}}
	case peer.ReflectAttributeValues:
		tr := pbTransportName(e.Transportation)
		if e.Time == nil {
			cb.CallbackRequest = &pb.CallbackRequest_ReflectAttributeValues{ReflectAttributeValues: &pb.ReflectAttributeValues{ObjectInstance: pbObj(e.Object), AttributeValues: pbAttrValues(e.Values), UserSuppliedTag: e.Tag, TransportationType: tr, ProducingFederate: producer(e.Producer)}}
			break
		}
		r := &pb.ReflectAttributeValuesWithTime{ObjectInstance: pbObj(e.Object), AttributeValues: pbAttrValues(e.Values), UserSuppliedTag: e.Tag, TransportationType: tr, ProducingFederate: producer(e.Producer),
			Time: pbTime(f, e.Time), SentOrderType: pbOrder(e.SentOrder), ReceivedOrderType: pbOrder(e.ReceivedOrder), OptionalRetraction: optRetraction(e.Retraction)}
		cb.CallbackRequest = &pb.CallbackRequest_ReflectAttributeValuesWithTime{ReflectAttributeValuesWithTime: r}
	case peer.ReceiveInteraction:
		tr := pbTransportName(e.Transportation)
		if e.Time == nil {
			cb.CallbackRequest = &pb.CallbackRequest_ReceiveInteraction{ReceiveInteraction: &pb.ReceiveInteraction{InteractionClass: pbInteraction(e.Class), ParameterValues: pbParamValues(e.Values), UserSuppliedTag: e.Tag, TransportationType: tr, ProducingFederate: producer(e.Producer)}}
			break
		}
		r := &pb.ReceiveInteractionWithTime{InteractionClass: pbInteraction(e.Class), ParameterValues: pbParamValues(e.Values), UserSuppliedTag: e.Tag, TransportationType: tr, ProducingFederate: producer(e.Producer),
			Time: pbTime(f, e.Time), SentOrderType: pbOrder(e.SentOrder), ReceivedOrderType: pbOrder(e.ReceivedOrder), OptionalRetraction: optRetraction(e.Retraction)}
		cb.CallbackRequest = &pb.CallbackRequest_ReceiveInteractionWithTime{ReceiveInteractionWithTime: r}
	case peer.ReceiveDirectedInteraction:
		tr := pbTransportName(e.Transportation)
		if e.Time == nil {
			cb.CallbackRequest = &pb.CallbackRequest_ReceiveDirectedInteraction{ReceiveDirectedInteraction: &pb.ReceiveDirectedInteraction{InteractionClass: pbInteraction(e.Class), ObjectInstance: pbObj(e.Object), ParameterValues: pbParamValues(e.Values), UserSuppliedTag: e.Tag, TransportationType: tr, ProducingFederate: producer(e.Producer)}}
			break
		}
		r := &pb.ReceiveDirectedInteractionWithTime{InteractionClass: pbInteraction(e.Class), ObjectInstance: pbObj(e.Object), ParameterValues: pbParamValues(e.Values), UserSuppliedTag: e.Tag, TransportationType: tr, ProducingFederate: producer(e.Producer),
			Time: pbTime(f, e.Time), SentOrderType: pbOrder(e.SentOrder), ReceivedOrderType: pbOrder(e.ReceivedOrder), OptionalRetraction: optRetraction(e.Retraction)}
		cb.CallbackRequest = &pb.CallbackRequest_ReceiveDirectedInteractionWithTime{ReceiveDirectedInteractionWithTime: r}
	case peer.RemoveObjectInstance:
		if e.Time == nil {
			cb.CallbackRequest = &pb.CallbackRequest_RemoveObjectInstance{RemoveObjectInstance: &pb.RemoveObjectInstance{ObjectInstance: pbObj(e.Object), UserSuppliedTag: e.Tag, ProducingFederate: producer(e.Producer)}}
			break
		}
		r := &pb.RemoveObjectInstanceWithTime{ObjectInstance: pbObj(e.Object), UserSuppliedTag: e.Tag, ProducingFederate: producer(e.Producer),
			Time: pbTime(f, e.Time), SentOrderType: pbOrder(e.SentOrder), ReceivedOrderType: pbOrder(e.ReceivedOrder), OptionalRetraction: optRetraction(e.Retraction)}
		cb.CallbackRequest = &pb.CallbackRequest_RemoveObjectInstanceWithTime{RemoveObjectInstanceWithTime: r}
	case peer.AttributesInScope:
		cb.CallbackRequest = &pb.CallbackRequest_AttributesInScope{AttributesInScope: &pb.AttributesInScope{ObjectInstance: pbObj(e.Object), Attributes: pbAttrSet(e.Attributes)}}
	case peer.AttributesOutOfScope:
		cb.CallbackRequest = &pb.CallbackRequest_AttributesOutOfScope{AttributesOutOfScope: &pb.AttributesOutOfScope{ObjectInstance: pbObj(e.Object), Attributes: pbAttrSet(e.Attributes)}}
	case peer.ProvideAttributeValueUpdate:
		cb.CallbackRequest = &pb.CallbackRequest_ProvideAttributeValueUpdate{ProvideAttributeValueUpdate: &pb.ProvideAttributeValueUpdate{ObjectInstance: pbObj(e.Object), Attributes: pbAttrSet(e.Attributes), UserSuppliedTag: e.Tag}}
	case peer.TurnUpdatesOnForObjectInstance:
		if e.UpdateRate != "" {
			cb.CallbackRequest = &pb.CallbackRequest_TurnUpdatesOnForObjectInstanceWithRate{TurnUpdatesOnForObjectInstanceWithRate: &pb.TurnUpdatesOnForObjectInstanceWithRate{ObjectInstance: pbObj(e.Object), Attributes: pbAttrSet(e.Attributes), UpdateRateDesignator: e.UpdateRate}}
			break
		}
		cb.CallbackRequest = &pb.CallbackRequest_TurnUpdatesOnForObjectInstance{TurnUpdatesOnForObjectInstance: &pb.TurnUpdatesOnForObjectInstance{ObjectInstance: pbObj(e.Object), Attributes: pbAttrSet(e.Attributes)}}
	case peer.TurnUpdatesOffForObjectInstance:
		cb.CallbackRequest = &pb.CallbackRequest_TurnUpdatesOffForObjectInstance{TurnUpdatesOffForObjectInstance: &pb.TurnUpdatesOffForObjectInstance{ObjectInstance: pbObj(e.Object), Attributes: pbAttrSet(e.Attributes)}}
	case peer.ConfirmAttributeTransportationTypeChange:
		cb.CallbackRequest = &pb.CallbackRequest_ConfirmAttributeTransportationTypeChange{ConfirmAttributeTransportationTypeChange: &pb.ConfirmAttributeTransportationTypeChange{ObjectInstance: pbObj(e.Object), Attributes: pbAttrSet(e.Attributes), TransportationType: pbTransport(e.Transportation)}}
	case peer.ReportAttributeTransportationType:
		cb.CallbackRequest = &pb.CallbackRequest_ReportAttributeTransportationType{ReportAttributeTransportationType: &pb.ReportAttributeTransportationType{ObjectInstance: pbObj(e.Object), Attribute: pbAttr(e.Attribute), TransportationType: pbTransport(e.Transportation)}}
	case peer.ConfirmInteractionTransportationTypeChange:
		cb.CallbackRequest = &pb.CallbackRequest_ConfirmInteractionTransportationTypeChange{ConfirmInteractionTransportationTypeChange: &pb.ConfirmInteractionTransportationTypeChange{InteractionClass: pbInteraction(e.Class), TransportationType: pbTransport(e.Transportation)}}
	case peer.ReportInteractionTransportationType:
		cb.CallbackRequest = &pb.CallbackRequest_ReportInteractionTransportationType{ReportInteractionTransportationType: &pb.ReportInteractionTransportationType{Federate: pbFed(e.Federate), InteractionClass: pbInteraction(e.Class), TransportationType: pbTransport(e.Transportation)}}
	case peer.RequestAttributeOwnershipAssumption:
		cb.CallbackRequest = &pb.CallbackRequest_RequestAttributeOwnershipAssumption{RequestAttributeOwnershipAssumption: &pb.RequestAttributeOwnershipAssumption{ObjectInstance: pbObj(e.Object), OfferedAttributes: pbAttrSet(e.Attributes), UserSuppliedTag: e.Tag}}
	case peer.RequestDivestitureConfirmation:
		cb.CallbackRequest = &pb.CallbackRequest_RequestDivestitureConfirmation{RequestDivestitureConfirmation: &pb.RequestDivestitureConfirmation{ObjectInstance: pbObj(e.Object), ReleasedAttributes: pbAttrSet(e.Attributes), UserSuppliedTag: e.Tag}}
	case peer.AttributeOwnershipAcquisitionNotification:
		cb.CallbackRequest = &pb.CallbackRequest_AttributeOwnershipAcquisitionNotification{AttributeOwnershipAcquisitionNotification: &pb.AttributeOwnershipAcquisitionNotification{ObjectInstance: pbObj(e.Object), SecuredAttributes: pbAttrSet(e.Attributes), UserSuppliedTag: e.Tag}}
	case peer.AttributeOwnershipUnavailable:
		cb.CallbackRequest = &pb.CallbackRequest_AttributeOwnershipUnavailable{AttributeOwnershipUnavailable: &pb.AttributeOwnershipUnavailable{ObjectInstance: pbObj(e.Object), Attributes: pbAttrSet(e.Attributes)}}
	case peer.RequestAttributeOwnershipRelease:
		cb.CallbackRequest = &pb.CallbackRequest_RequestAttributeOwnershipRelease{RequestAttributeOwnershipRelease: &pb.RequestAttributeOwnershipRelease{ObjectInstance: pbObj(e.Object), CandidateAttributes: pbAttrSet(e.Attributes), UserSuppliedTag: e.Tag}}
	case peer.ConfirmAttributeOwnershipAcquisitionCancellation:
		cb.CallbackRequest = &pb.CallbackRequest_ConfirmAttributeOwnershipAcquisitionCancellation{ConfirmAttributeOwnershipAcquisitionCancellation: &pb.ConfirmAttributeOwnershipAcquisitionCancellation{ObjectInstance: pbObj(e.Object), Attributes: pbAttrSet(e.Attributes)}}
	case peer.InformAttributeOwnership:
		cb.CallbackRequest = &pb.CallbackRequest_InformAttributeOwnership{InformAttributeOwnership: &pb.InformAttributeOwnership{ObjectInstance: pbObj(e.Object), Attributes: pbAttrSet([]peer.AttributeHandle{e.Attribute}), Federate: pbFed(e.Owner)}}
	case peer.AttributeIsNotOwned:
		cb.CallbackRequest = &pb.CallbackRequest_AttributeIsNotOwned{AttributeIsNotOwned: &pb.AttributeIsNotOwned{ObjectInstance: pbObj(e.Object), Attributes: pbAttrSet([]peer.AttributeHandle{e.Attribute})}}
	case peer.AttributeIsOwnedByRTI:
		cb.CallbackRequest = &pb.CallbackRequest_AttributeIsOwnedByRTI{AttributeIsOwnedByRTI: &pb.AttributeIsOwnedByRTI{ObjectInstance: pbObj(e.Object), Attributes: pbAttrSet([]peer.AttributeHandle{e.Attribute})}}
	case peer.TimeRegulationEnabled:
		cb.CallbackRequest = &pb.CallbackRequest_TimeRegulationEnabled{TimeRegulationEnabled: &pb.TimeRegulationEnabled{Time: pbTime(f, e.Time)}}
	case peer.TimeConstrainedEnabled:
		cb.CallbackRequest = &pb.CallbackRequest_TimeConstrainedEnabled{TimeConstrainedEnabled: &pb.TimeConstrainedEnabled{Time: pbTime(f, e.Time)}}
	case peer.TimeAdvanceGrant:
		cb.CallbackRequest = &pb.CallbackRequest_TimeAdvanceGrant{TimeAdvanceGrant: &pb.TimeAdvanceGrant{Time: pbTime(f, e.Time)}}
	case peer.RequestRetraction:
		cb.CallbackRequest = &pb.CallbackRequest_RequestRetraction{RequestRetraction: &pb.RequestRetraction{Retraction: pbRetraction(e.Handle)}}
	default:
		return nil
	}
	return cb
}

// Transportation types travel as handles: HLAreliable is 1,
// HLAbestEffort 2 (GetTransportationTypeHandle), in 4 bytes, big-endian:
// the public clients make these two handles themselves in that form
// (their getHLAdefaultReliable) and refuse any other in a callback.
func pbTransport(t peer.TransportationType) *pb.TransportationTypeHandle {
	return &pb.TransportationTypeHandle{Data: binary.BigEndian.AppendUint32(nil, uint32(t))}
}

// optRetraction is a callback's optional retraction handle: nil for none.
func optRetraction(h peer.MessageRetractionHandle) *pb.MessageRetractionHandle {
	if h == (peer.MessageRetractionHandle{}) {
		return nil
	}
	return pbRetraction(h)
}

func pbTransportName(name string) *pb.TransportationTypeHandle {
	if name == "HLAbestEffort" {
		return pbTransport(peer.HLAbestEffort)
	}
	return pbTransport(peer.HLAreliable)
}

// The protocol's names of the save and restore outcomes and states; a
// value a table lacks is the protocol's catch-all (see the functions).
var (
	pbSaveFailures = map[peer.SaveFailureReason]pb.SaveFailureReason{
		peer.FederateReportedFailureDuringSave: pb.SaveFailureReason_FEDERATE_REPORTED_FAILURE_DURING_SAVE,
		peer.FederateResignedDuringSave:        pb.SaveFailureReason_FEDERATE_RESIGNED_DURING_SAVE,
		peer.RTIDetectedFailureDuringSave:      pb.SaveFailureReason_RTI_DETECTED_FAILURE_DURING_SAVE,
		peer.SaveTimeCannotBeHonored:           pb.SaveFailureReason_SAVE_TIME_CANNOT_BE_HONORED,
		peer.SaveAborted:                       pb.SaveFailureReason_SAVE_ABORTED,
	}
	pbRestoreFailures = map[peer.RestoreFailureReason]pb.RestoreFailureReason{
		peer.FederateReportedFailureDuringRestore: pb.RestoreFailureReason_FEDERATE_REPORTED_FAILURE_DURING_RESTORE,
		peer.FederateResignedDuringRestore:        pb.RestoreFailureReason_FEDERATE_RESIGNED_DURING_RESTORE,
		peer.RTIDetectedFailureDuringRestore:      pb.RestoreFailureReason_RTI_DETECTED_FAILURE_DURING_RESTORE,
		peer.RestoreAborted:                       pb.RestoreFailureReason_RESTORE_ABORTED,
	}
	pbSaveStatuses = map[peer.SaveStatus]pb.SaveStatus{
		peer.FederateWaitingForSaveToBegin:      pb.SaveStatus_FEDERATE_INSTRUCTED_TO_SAVE,
		peer.FederateSaving:                     pb.SaveStatus_FEDERATE_SAVING,
		peer.FederateWaitingForFederationToSave: pb.SaveStatus_FEDERATE_WAITING_FOR_FEDERATION_TO_SAVE,
	}
	pbRestoreStatuses = map[peer.RestoreStatus]pb.RestoreStatus{
		peer.FederateRestoreRequestPending:         pb.RestoreStatus_FEDERATE_RESTORE_REQUEST_PENDING,
		peer.FederateWaitingForRestoreToBegin:      pb.RestoreStatus_FEDERATE_WAITING_FOR_RESTORE_TO_BEGIN,
		peer.FederatePreparedToRestore:             pb.RestoreStatus_FEDERATE_PREPARED_TO_RESTORE,
		peer.FederateRestoring:                     pb.RestoreStatus_FEDERATE_RESTORING,
		peer.FederateWaitingForFederationToRestore: pb.RestoreStatus_FEDERATE_WAITING_FOR_FEDERATION_TO_RESTORE,
	}
)

// lookupOr is table's value for k, or def when the table lacks k.
func lookupOr[K comparable, V any](table map[K]V, k K, def V) V {
	if v, ok := table[k]; ok {
		return v
	}
	return def
}

func pbSaveFailure(r peer.SaveFailureReason) pb.SaveFailureReason {
	return lookupOr(pbSaveFailures, r, pb.SaveFailureReason_RTI_UNABLE_TO_SAVE)
}

func pbRestoreFailure(r peer.RestoreFailureReason) pb.RestoreFailureReason {
	return lookupOr(pbRestoreFailures, r, pb.RestoreFailureReason_RTI_UNABLE_TO_RESTORE)
}

func pbSaveStatus(s peer.SaveStatus) pb.SaveStatus {
	return lookupOr(pbSaveStatuses, s, pb.SaveStatus_NO_SAVE_IN_PROGRESS)
}

func pbRestoreStatus(s peer.RestoreStatus) pb.RestoreStatus {
	return lookupOr(pbRestoreStatuses, s, pb.RestoreStatus_NO_RESTORE_IN_PROGRESS)
}
