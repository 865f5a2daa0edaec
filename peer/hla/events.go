package hla

import "github.com/meshrti/meshrti/lbts"

// Event is one callback of the FederateAmbassador side, as returned by
// Next. The set is closed: every event is one of the types below.
type Event interface{ isEvent() }

// DiscoverObjectInstance (§6.9): an instance of a class this federate
// subscribes to is known. Class is the known class: the instance's
// registered class or, when the federate subscribes only to an ancestor,
// that ancestor (class-hierarchy promotion).
type DiscoverObjectInstance struct {
	Object ObjectInstanceHandle
	Class  ObjectClassHandle
	Name   string
	// Producer is the federate that registered the instance. Next always
	// gives it (a meshrti extension, for diagnostics); the standard
	// conveys it only while the HLAconveyProducingFederate switch is on
	// (§6.9), so Dispatch and the Federate Protocol convey the zero
	// handle (the protocol: no field) while it is off. Likewise for the
	// Producer of the reflect, receive and remove events.
	Producer FederateHandle
}

// ReflectAttributeValues (§6.11): new values of subscribed attributes.
// Time is nil for receive-order messages sent without a time stamp.
type ReflectAttributeValues struct {
	Object         ObjectInstanceHandle
	Values         AttributeValues
	Tag            []byte
	SentOrder      OrderType
	ReceivedOrder  OrderType
	Time           LogicalTime
	Producer       FederateHandle
	Transportation string
	// Retraction is the sender's handle for a message sent in
	// time-stamp order (the handle the sender may Retract, and that a
	// RequestRetraction names); the zero handle otherwise.
	Retraction MessageRetractionHandle
}

// ReceiveInteraction (§6.13): an interaction of a subscribed class. Class is
// the subscribed class (possibly an ancestor of the sent class), and
// Values hold only that class's parameters.
type ReceiveInteraction struct {
	Class          InteractionClassHandle
	Values         ParameterValues
	Tag            []byte
	SentOrder      OrderType
	ReceivedOrder  OrderType
	Time           LogicalTime
	Producer       FederateHandle
	Transportation string
	// Retraction: see ReflectAttributeValues.
	Retraction MessageRetractionHandle
}

// ReceiveDirectedInteraction (HLA 4, §6.15): an interaction sent to the
// instance Object (SendDirectedInteraction), received as Class; the
// other fields as for ReceiveInteraction.
type ReceiveDirectedInteraction struct {
	Class          InteractionClassHandle
	Object         ObjectInstanceHandle
	Values         ParameterValues
	Tag            []byte
	SentOrder      OrderType
	ReceivedOrder  OrderType
	Time           LogicalTime
	Producer       FederateHandle
	Transportation string
	Retraction     MessageRetractionHandle
}

func (ReceiveDirectedInteraction) isEvent() {}

// RemoveObjectInstance (§6.15): a known instance was deleted, or its owner
// resigned or was lost.
type RemoveObjectInstance struct {
	Object        ObjectInstanceHandle
	Tag           []byte
	SentOrder     OrderType
	ReceivedOrder OrderType
	Time          LogicalTime
	Producer      FederateHandle
	// Retraction: see ReflectAttributeValues.
	Retraction MessageRetractionHandle
}

// ObjectInstanceNameReservationSucceeded (§6.3).
type ObjectInstanceNameReservationSucceeded struct{ Name string }

// ObjectInstanceNameReservationFailed (§6.3).
type ObjectInstanceNameReservationFailed struct{ Name string }

// TimeRegulationEnabled (§8.3): the federate is time-regulating at Time.
type TimeRegulationEnabled struct{ Time LogicalTime }

// TimeConstrainedEnabled (§8.6): the federate is time-constrained at Time.
type TimeConstrainedEnabled struct{ Time LogicalTime }

// TimeAdvanceGrant (§8.13): the federate's logical time is now Time. It
// answers every kind of time advance; Request says which (a meshrti
// extension). Every time-stamp-order message up to Time was delivered
// before this event (only those below Time after TimeAdvanceRequestAvailable
// and NextMessageRequestAvailable: more at exactly Time may follow; and
// FlushQueueRequest delivers every queued one, also later ones).
type TimeAdvanceGrant struct {
	Time    LogicalTime
	Request lbts.RequestKind
}

// RequestRetraction (§8.22): the sender retracted a time-stamped message
// that this federate has already received (a reflection, interaction or
// removal whose Retraction is Handle). A retracted message that was still
// queued is simply never delivered.
type RequestRetraction struct{ Handle MessageRetractionHandle }

// FederateLost is a meshrti extension: another federate's node stopped
// answering and was declared dead. It no longer takes part in time
// management; its objects were removed (RemoveObjectInstance events come
// before this one) according to the federation's automatic resign action.
type FederateLost struct {
	Federate FederateHandle
	Name     string
}

// FederateJoined is a meshrti extension: another federate joined.
type FederateJoined struct {
	Federate FederateHandle
	Name     string
	Type     string
}

// FederateResigned is a meshrti extension: another federate resigned.
type FederateResigned struct {
	Federate FederateHandle
	Name     string
}

// ConnectionLost (§4.4): this federate lost its federation; no more events
// follow.
type ConnectionLost struct{ Reason string }

func (DiscoverObjectInstance) isEvent()                 {}
func (ReflectAttributeValues) isEvent()                 {}
func (ReceiveInteraction) isEvent()                     {}
func (RemoveObjectInstance) isEvent()                   {}
func (ObjectInstanceNameReservationSucceeded) isEvent() {}
func (ObjectInstanceNameReservationFailed) isEvent()    {}
func (TimeRegulationEnabled) isEvent()                  {}
func (TimeConstrainedEnabled) isEvent()                 {}
func (TimeAdvanceGrant) isEvent()                       {}
func (RequestRetraction) isEvent()                      {}
func (FederateLost) isEvent()                           {}
func (FederateJoined) isEvent()                         {}
func (FederateResigned) isEvent()                       {}
func (ConnectionLost) isEvent()                         {}

// MessagesLost is a meshrti extension: the data plane gave up on reliable
// messages from a federate. They were sent but can no longer be repaired:
// this federate fell too far behind (a stall longer than
// Config.StallTimeout, or a partition), or the sender was lost with them
// unsent. Updates, interactions or deletes among them were not delivered.
// Messages counts the data-plane messages lost (fragments of one large
// value count one each). Gaps are also counted in Stats.Gaps.
type MessagesLost struct {
	Producer FederateHandle
	Messages uint64
}

func (MessagesLost) isEvent() {}

// StartRegistrationForObjectClass (§5.10): another federate now actively
// subscribes to attributes of class that this federate publishes: it
// should register instances (object class relevance advisory switch on).
type StartRegistrationForObjectClass struct{ Class ObjectClassHandle }

// StopRegistrationForObjectClass (§5.11): no other federate actively
// subscribes to them any more.
type StopRegistrationForObjectClass struct{ Class ObjectClassHandle }

// TurnInteractionsOn (§5.12): another federate now actively subscribes
// to the interaction class this federate publishes (interaction
// relevance advisory switch on).
type TurnInteractionsOn struct{ Class InteractionClassHandle }

// TurnInteractionsOff (§5.13): no other federate subscribes to it any
// more.
type TurnInteractionsOff struct{ Class InteractionClassHandle }

// MultipleObjectInstanceNameReservationSucceeded (§6.6): every name was
// reserved for this federate.
type MultipleObjectInstanceNameReservationSucceeded struct{ Names []string }

// MultipleObjectInstanceNameReservationFailed (§6.6): not every name
// could be reserved; none is.
type MultipleObjectInstanceNameReservationFailed struct{ Names []string }

// AttributesInScope (§6.17): attributes of a known instance that this
// federate subscribes to and another federate owns (attribute scope
// advisory switch on).
type AttributesInScope struct {
	Object     ObjectInstanceHandle
	Attributes []AttributeHandle
}

// AttributesOutOfScope (§6.18): attributes that left scope.
type AttributesOutOfScope struct {
	Object     ObjectInstanceHandle
	Attributes []AttributeHandle
}

// ProvideAttributeValueUpdate (§6.20): a federate asked for the current
// values of attributes this federate owns; it should update them.
type ProvideAttributeValueUpdate struct {
	Object     ObjectInstanceHandle
	Attributes []AttributeHandle
	Tag        []byte
}

// TurnUpdatesOnForObjectInstance (§6.21): another federate subscribes to
// attributes this federate owns of an instance (attribute relevance
// advisory switch on). UpdateRate names the subscriber's update rate
// designator, "" when none.
type TurnUpdatesOnForObjectInstance struct {
	Object     ObjectInstanceHandle
	Attributes []AttributeHandle
	UpdateRate string
}

// TurnUpdatesOffForObjectInstance (§6.22): no other federate subscribes
// to them any more.
type TurnUpdatesOffForObjectInstance struct {
	Object     ObjectInstanceHandle
	Attributes []AttributeHandle
}

// ConfirmAttributeTransportationTypeChange (§6.24): the attributes of
// the instance travel by Transportation from now on.
type ConfirmAttributeTransportationTypeChange struct {
	Object         ObjectInstanceHandle
	Attributes     []AttributeHandle
	Transportation TransportationType
}

// ReportAttributeTransportationType (§6.26): the answer to
// QueryAttributeTransportationType.
type ReportAttributeTransportationType struct {
	Object         ObjectInstanceHandle
	Attribute      AttributeHandle
	Transportation TransportationType
}

// ConfirmInteractionTransportationTypeChange (§6.28): this federate's
// interactions of Class travel by Transportation from now on.
type ConfirmInteractionTransportationTypeChange struct {
	Class          InteractionClassHandle
	Transportation TransportationType
}

// ReportInteractionTransportationType (§6.30): the answer to
// QueryInteractionTransportationType: how Federate sends Class.
type ReportInteractionTransportationType struct {
	Federate       FederateHandle
	Class          InteractionClassHandle
	Transportation TransportationType
}

func (StartRegistrationForObjectClass) isEvent()                {}
func (StopRegistrationForObjectClass) isEvent()                 {}
func (TurnInteractionsOn) isEvent()                             {}
func (TurnInteractionsOff) isEvent()                            {}
func (MultipleObjectInstanceNameReservationSucceeded) isEvent() {}
func (MultipleObjectInstanceNameReservationFailed) isEvent()    {}
func (AttributesInScope) isEvent()                              {}
func (AttributesOutOfScope) isEvent()                           {}
func (ProvideAttributeValueUpdate) isEvent()                    {}
func (TurnUpdatesOnForObjectInstance) isEvent()                 {}
func (TurnUpdatesOffForObjectInstance) isEvent()                {}
func (ConfirmAttributeTransportationTypeChange) isEvent()       {}
func (ReportAttributeTransportationType) isEvent()              {}
func (ConfirmInteractionTransportationTypeChange) isEvent()     {}
func (ReportInteractionTransportationType) isEvent()            {}

// RequestAttributeOwnershipAssumption (§7.4): another federate offers
// attributes it owns (a negotiated divestiture) that this federate could
// take; it may ask for them with AttributeOwnershipAcquisition.
type RequestAttributeOwnershipAssumption struct {
	Object     ObjectInstanceHandle
	Attributes []AttributeHandle
	Tag        []byte
}

// RequestDivestitureConfirmation (§7.5): a federate asked for attributes
// this federate is offering; ConfirmDivestiture gives them to it. Tag is
// the offer's (a meshrti addition).
type RequestDivestitureConfirmation struct {
	Object     ObjectInstanceHandle
	Attributes []AttributeHandle
	Tag        []byte
}

// AttributeOwnershipAcquisitionNotification (§7.7): this federate owns
// the attributes now.
type AttributeOwnershipAcquisitionNotification struct {
	Object     ObjectInstanceHandle
	Attributes []AttributeHandle
	Tag        []byte
}

// AttributeOwnershipUnavailable (§7.10): the attributes an
// AttributeOwnershipAcquisitionIfAvailable asked for are owned by
// another federate that does not offer them.
type AttributeOwnershipUnavailable struct {
	Object     ObjectInstanceHandle
	Attributes []AttributeHandle
}

// RequestAttributeOwnershipRelease (§7.11): another federate asks for
// attributes this federate owns.
type RequestAttributeOwnershipRelease struct {
	Object     ObjectInstanceHandle
	Attributes []AttributeHandle
	Tag        []byte
}

// ConfirmAttributeOwnershipAcquisitionCancellation (§7.16): the
// acquisition of the attributes was cancelled.
type ConfirmAttributeOwnershipAcquisitionCancellation struct {
	Object     ObjectInstanceHandle
	Attributes []AttributeHandle
}

// InformAttributeOwnership (§7.18): Owner owns the attribute.
type InformAttributeOwnership struct {
	Object    ObjectInstanceHandle
	Attribute AttributeHandle
	Owner     FederateHandle
}

// AttributeIsNotOwned (§7.18): nobody owns the attribute.
type AttributeIsNotOwned struct {
	Object    ObjectInstanceHandle
	Attribute AttributeHandle
}

// AttributeIsOwnedByRTI (§7.18): the attribute is the RTI's (the MOM's).
type AttributeIsOwnedByRTI struct {
	Object    ObjectInstanceHandle
	Attribute AttributeHandle
}

func (RequestAttributeOwnershipAssumption) isEvent()              {}
func (RequestDivestitureConfirmation) isEvent()                   {}
func (AttributeOwnershipAcquisitionNotification) isEvent()        {}
func (AttributeOwnershipUnavailable) isEvent()                    {}
func (RequestAttributeOwnershipRelease) isEvent()                 {}
func (ConfirmAttributeOwnershipAcquisitionCancellation) isEvent() {}
func (InformAttributeOwnership) isEvent()                         {}
func (AttributeIsNotOwned) isEvent()                              {}
func (AttributeIsOwnedByRTI) isEvent()                            {}

// enumName returns the name of v in names, a table of an enumeration's
// names indexed by value, or unknown when it has none there.
func enumName[T ~uint8 | ~int](v T, names []string, unknown string) string {
	if int(v) < 0 || int(v) >= len(names) || names[v] == "" {
		return unknown
	}
	return names[v]
}

// SynchronizationPointFailureReason says why a synchronization point's
// registration failed (§4.12).
type SynchronizationPointFailureReason uint8

const (
	// SynchronizationPointLabelNotUnique: the label is in use (registered
	// and not yet synchronized).
	SynchronizationPointLabelNotUnique SynchronizationPointFailureReason = iota + 1
	// SynchronizationSetMemberNotJoined: the set names a federate that is
	// not joined.
	SynchronizationSetMemberNotJoined
)

func (r SynchronizationPointFailureReason) String() string {
	return enumName(r, syncFailureNames[:], "unknown")
}

var syncFailureNames = [...]string{
	SynchronizationPointLabelNotUnique: "SYNCHRONIZATION_POINT_LABEL_NOT_UNIQUE",
	SynchronizationSetMemberNotJoined:  "SYNCHRONIZATION_SET_MEMBER_NOT_JOINED",
}

// SynchronizationPointRegistrationSucceeded (§4.12): this federate's
// registration of Label succeeded.
type SynchronizationPointRegistrationSucceeded struct {
	Label string
}

// SynchronizationPointRegistrationFailed (§4.12): it failed, for Reason.
type SynchronizationPointRegistrationFailed struct {
	Label  string
	Reason SynchronizationPointFailureReason
}

// AnnounceSynchronizationPoint (§4.13): a synchronization point this
// federate is to achieve was registered.
type AnnounceSynchronizationPoint struct {
	Label string
	Tag   []byte
}

// FederationSynchronized (§4.15): every federate of the point's set
// achieved it; Failed are those that said they did not succeed.
type FederationSynchronized struct {
	Label  string
	Failed []FederateHandle
}

func (SynchronizationPointRegistrationSucceeded) isEvent() {}
func (SynchronizationPointRegistrationFailed) isEvent()    {}
func (AnnounceSynchronizationPoint) isEvent()              {}
func (FederationSynchronized) isEvent()                    {}

// SaveFailureReason says why a federation save failed (§4.20).
type SaveFailureReason uint8

const (
	// RTIUnableToSave: the RTI could not write its state.
	RTIUnableToSave SaveFailureReason = iota + 1
	// FederateReportedFailureDuringSave: a federate called
	// FederateSaveNotComplete.
	FederateReportedFailureDuringSave
	// FederateResignedDuringSave: a federate resigned during the save.
	FederateResignedDuringSave
	// RTIDetectedFailureDuringSave: a federate was lost during the save.
	RTIDetectedFailureDuringSave
	// SaveTimeCannotBeHonored: a federate was already past the save time.
	SaveTimeCannotBeHonored
	// SaveAborted: a federate called AbortFederationSave.
	SaveAborted
)

func (r SaveFailureReason) String() string {
	return enumName(r, saveFailureNames[:], "unknown")
}

var saveFailureNames = [...]string{
	RTIUnableToSave:                   "RTI_UNABLE_TO_SAVE",
	FederateReportedFailureDuringSave: "FEDERATE_REPORTED_FAILURE_DURING_SAVE",
	FederateResignedDuringSave:        "FEDERATE_RESIGNED_DURING_SAVE",
	RTIDetectedFailureDuringSave:      "RTI_DETECTED_FAILURE_DURING_SAVE",
	SaveTimeCannotBeHonored:           "SAVE_TIME_CANNOT_BE_HONORED",
	SaveAborted:                       "SAVE_ABORTED",
}

// RestoreFailureReason says why a federation restore failed (§4.29).
type RestoreFailureReason uint8

const (
	// RTIUnableToRestore: the RTI could not read its saved state.
	RTIUnableToRestore RestoreFailureReason = iota + 1
	// FederateReportedFailureDuringRestore: a federate called
	// FederateRestoreNotComplete.
	FederateReportedFailureDuringRestore
	// FederateResignedDuringRestore: a federate resigned during the
	// restore.
	FederateResignedDuringRestore
	// RTIDetectedFailureDuringRestore: a federate was lost during the
	// restore.
	RTIDetectedFailureDuringRestore
	// RestoreAborted: a federate called AbortFederationRestore.
	RestoreAborted
)

func (r RestoreFailureReason) String() string {
	return enumName(r, restoreFailureNames[:], "unknown")
}

var restoreFailureNames = [...]string{
	RTIUnableToRestore:                   "RTI_UNABLE_TO_RESTORE",
	FederateReportedFailureDuringRestore: "FEDERATE_REPORTED_FAILURE_DURING_RESTORE",
	FederateResignedDuringRestore:        "FEDERATE_RESIGNED_DURING_RESTORE",
	RTIDetectedFailureDuringRestore:      "RTI_DETECTED_FAILURE_DURING_RESTORE",
	RestoreAborted:                       "RESTORE_ABORTED",
}

// SaveStatus is where one federate stands in a save (§4.23).
type SaveStatus uint8

const (
	FederateSaveNotInitiated SaveStatus = iota + 1
	FederateWaitingForSaveToBegin
	FederateSaving
	FederateWaitingForFederationToSave
)

func (s SaveStatus) String() string {
	return enumName(s, saveStatusNames[:], "unknown")
}

var saveStatusNames = [...]string{
	FederateSaveNotInitiated:           "FEDERATE_SAVE_NOT_INITIATED",
	FederateWaitingForSaveToBegin:      "FEDERATE_WAITING_FOR_SAVE_TO_BEGIN",
	FederateSaving:                     "FEDERATE_SAVING",
	FederateWaitingForFederationToSave: "FEDERATE_WAITING_FOR_FEDERATION_TO_SAVE",
}

// RestoreStatus is where one federate stands in a restore (§4.32).
type RestoreStatus uint8

const (
	NoRestoreInProgress RestoreStatus = iota + 1
	FederateRestoreRequestPending
	FederateWaitingForRestoreToBegin
	FederatePreparedToRestore
	FederateRestoring
	FederateWaitingForFederationToRestore
)

func (s RestoreStatus) String() string {
	return enumName(s, restoreStatusNames[:], "unknown")
}

var restoreStatusNames = [...]string{
	NoRestoreInProgress:                   "NO_RESTORE_IN_PROGRESS",
	FederateRestoreRequestPending:         "FEDERATE_RESTORE_REQUEST_PENDING",
	FederateWaitingForRestoreToBegin:      "FEDERATE_WAITING_FOR_RESTORE_TO_BEGIN",
	FederatePreparedToRestore:             "FEDERATE_PREPARED_TO_RESTORE",
	FederateRestoring:                     "FEDERATE_RESTORING",
	FederateWaitingForFederationToRestore: "FEDERATE_WAITING_FOR_FEDERATION_TO_RESTORE",
}

// FederationExecutionInformation names one federation execution and its
// logical time implementation (HLAfloat64Time or HLAinteger64Time).
type FederationExecutionInformation struct {
	FederationExecutionName       string
	LogicalTimeImplementationName string
}

// ReportFederationExecutions (§4.8) answers a member's
// ListFederationExecutions.
type ReportFederationExecutions struct {
	Executions []FederationExecutionInformation
}

func (ReportFederationExecutions) isEvent() {}

// FederateHandleSaveStatusPair is one federate's save status.
type FederateHandleSaveStatusPair struct {
	Federate FederateHandle
	Status   SaveStatus
}

// FederateRestoreStatus is one federate's restore status, with its
// handle before and after the restore.
type FederateRestoreStatus struct {
	PreRestore, PostRestore FederateHandle
	Status                  RestoreStatus
}

// InitiateFederateSave (§4.17): save now (HasTime false) or, for a timed
// save, at Time (this federate's logical time has reached it). The
// federate answers FederateSaveBegun, then FederateSaveComplete or
// NotComplete.
type InitiateFederateSave struct {
	Label   string
	Time    LogicalTime
	HasTime bool
}

// FederationSaved (§4.20): every federate saved.
type FederationSaved struct{}

// FederationNotSaved (§4.20): the save failed, for Reason.
type FederationNotSaved struct{ Reason SaveFailureReason }

// FederationSaveStatusResponse (§4.23) answers QueryFederationSaveStatus.
type FederationSaveStatusResponse struct {
	Statuses []FederateHandleSaveStatusPair
}

// RequestFederationRestoreSucceeded (§4.25): this federate's restore
// request was accepted; the restore begins.
type RequestFederationRestoreSucceeded struct{ Label string }

// RequestFederationRestoreFailed (§4.25): it was refused (no such save
// here, or the federation does not match it, or a save or restore is
// under way).
type RequestFederationRestoreFailed struct{ Label string }

// FederationRestoreBegun (§4.26): a restore begins; services are refused
// until it ends.
type FederationRestoreBegun struct{}

// InitiateFederateRestore (§4.27): restore the state saved under Label;
// Name and Handle are this federate's name and handle after the restore.
type InitiateFederateRestore struct {
	Label  string
	Name   string
	Handle FederateHandle
}

// FederationRestored (§4.29): every federate restored.
type FederationRestored struct{}

// FederationNotRestored (§4.29): the restore failed, for Reason.
type FederationNotRestored struct{ Reason RestoreFailureReason }

// FederationRestoreStatusResponse (§4.32) answers
// QueryFederationRestoreStatus.
type FederationRestoreStatusResponse struct {
	Statuses []FederateRestoreStatus
}

func (InitiateFederateSave) isEvent()              {}
func (FederationSaved) isEvent()                   {}
func (FederationNotSaved) isEvent()                {}
func (FederationSaveStatusResponse) isEvent()      {}
func (RequestFederationRestoreSucceeded) isEvent() {}
func (RequestFederationRestoreFailed) isEvent()    {}
func (FederationRestoreBegun) isEvent()            {}
func (InitiateFederateRestore) isEvent()           {}
func (FederationRestored) isEvent()                {}
func (FederationNotRestored) isEvent()             {}
func (FederationRestoreStatusResponse) isEvent()   {}
