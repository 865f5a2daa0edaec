package peer

import "github.com/meshrti/meshrti/peer/hla"

// The vocabulary of the API lives in package hla (so that the federate
// core, peer/internal/core, shares it); peer re-exports every name: the types as
// aliases, the exceptions as the same error values, so that
// errors.Is(err, peer.ErrX) and errors.Is(err, hla.ErrX) agree.

// Handles, values and enumerations.
type (
	FederateHandle          = hla.FederateHandle
	ObjectInstanceHandle    = hla.ObjectInstanceHandle
	AttributeValues         = hla.AttributeValues
	ParameterValues         = hla.ParameterValues
	OrderType               = hla.OrderType
	ResignAction            = hla.ResignAction
	LogicalTime             = hla.LogicalTime
	Float64Time             = hla.Float64Time
	Integer64Time           = hla.Integer64Time
	InvalidLogicalTimeError = hla.InvalidLogicalTimeError
	MessageRetractionHandle = hla.MessageRetractionHandle
	ObjectClassHandle       = hla.ObjectClassHandle
	AttributeHandle         = hla.AttributeHandle
	InteractionClassHandle  = hla.InteractionClassHandle
	ParameterHandle         = hla.ParameterHandle
	DimensionHandle         = hla.DimensionHandle
)

// Callbacks: see the types in package hla for each one's meaning.
type (
	Event                                  = hla.Event
	DiscoverObjectInstance                 = hla.DiscoverObjectInstance
	ReflectAttributeValues                 = hla.ReflectAttributeValues
	ReceiveInteraction                     = hla.ReceiveInteraction
	RemoveObjectInstance                   = hla.RemoveObjectInstance
	ObjectInstanceNameReservationSucceeded = hla.ObjectInstanceNameReservationSucceeded
	ObjectInstanceNameReservationFailed    = hla.ObjectInstanceNameReservationFailed
	TimeRegulationEnabled                  = hla.TimeRegulationEnabled
	TimeConstrainedEnabled                 = hla.TimeConstrainedEnabled
	TimeAdvanceGrant                       = hla.TimeAdvanceGrant
	RequestRetraction                      = hla.RequestRetraction
	FederateLost                           = hla.FederateLost
	FederateJoined                         = hla.FederateJoined
	FederateResigned                       = hla.FederateResigned
	ConnectionLost                         = hla.ConnectionLost
	MessagesLost                           = hla.MessagesLost
)

// Enumerations and names.
const (
	Receive                            = hla.Receive
	TimeStamp                          = hla.TimeStamp
	UnconditionallyDivestAttributes    = hla.UnconditionallyDivestAttributes
	DeleteObjects                      = hla.DeleteObjects
	CancelPendingOwnershipAcquisitions = hla.CancelPendingOwnershipAcquisitions
	DeleteObjectsThenDivest            = hla.DeleteObjectsThenDivest
	CancelThenDeleteThenDivest         = hla.CancelThenDeleteThenDivest
	NoAction                           = hla.NoAction
	HLAfloat64Time                     = hla.HLAfloat64Time
	HLAinteger64Time                   = hla.HLAinteger64Time
)

// The HLA exceptions of IEEE 1516.1-2010 (the 1516e API's Exception.h), as
// sentinel errors (see package hla). A service that fails returns one of
// them, possibly wrapped with context; test with errors.Is:
//
//	if errors.Is(err, peer.ErrObjectClassNotPublished) { ... }
var (
	ErrAlreadyConnected                                 = hla.ErrAlreadyConnected
	ErrAsynchronousDeliveryAlreadyDisabled              = hla.ErrAsynchronousDeliveryAlreadyDisabled
	ErrAsynchronousDeliveryAlreadyEnabled               = hla.ErrAsynchronousDeliveryAlreadyEnabled
	ErrAttributeAcquisitionWasNotCanceled               = hla.ErrAttributeAcquisitionWasNotCanceled
	ErrAttributeAcquisitionWasNotRequested              = hla.ErrAttributeAcquisitionWasNotRequested
	ErrAttributeAlreadyBeingAcquired                    = hla.ErrAttributeAlreadyBeingAcquired
	ErrAttributeAlreadyBeingChanged                     = hla.ErrAttributeAlreadyBeingChanged
	ErrAttributeAlreadyBeingDivested                    = hla.ErrAttributeAlreadyBeingDivested
	ErrAttributeAlreadyOwned                            = hla.ErrAttributeAlreadyOwned
	ErrAttributeDivestitureWasNotRequested              = hla.ErrAttributeDivestitureWasNotRequested
	ErrAttributeNotDefined                              = hla.ErrAttributeNotDefined
	ErrAttributeNotOwned                                = hla.ErrAttributeNotOwned
	ErrAttributeNotPublished                            = hla.ErrAttributeNotPublished
	ErrAttributeNotRecognized                           = hla.ErrAttributeNotRecognized
	ErrAttributeNotSubscribed                           = hla.ErrAttributeNotSubscribed
	ErrAttributeRelevanceAdvisorySwitchIsOff            = hla.ErrAttributeRelevanceAdvisorySwitchIsOff
	ErrAttributeRelevanceAdvisorySwitchIsOn             = hla.ErrAttributeRelevanceAdvisorySwitchIsOn
	ErrAttributeScopeAdvisorySwitchIsOff                = hla.ErrAttributeScopeAdvisorySwitchIsOff
	ErrAttributeScopeAdvisorySwitchIsOn                 = hla.ErrAttributeScopeAdvisorySwitchIsOn
	ErrBadInitializationParameter                       = hla.ErrBadInitializationParameter
	ErrCallNotAllowedFromWithinCallback                 = hla.ErrCallNotAllowedFromWithinCallback
	ErrConnectionFailed                                 = hla.ErrConnectionFailed
	ErrCouldNotCreateLogicalTimeFactory                 = hla.ErrCouldNotCreateLogicalTimeFactory
	ErrCouldNotDecode                                   = hla.ErrCouldNotDecode
	ErrCouldNotDiscover                                 = hla.ErrCouldNotDiscover
	ErrCouldNotEncode                                   = hla.ErrCouldNotEncode
	ErrCouldNotInitiateRestore                          = hla.ErrCouldNotInitiateRestore
	ErrCouldNotOpenFDD                                  = hla.ErrCouldNotOpenFDD
	ErrCouldNotOpenMIM                                  = hla.ErrCouldNotOpenMIM
	ErrDeletePrivilegeNotHeld                           = hla.ErrDeletePrivilegeNotHeld
	ErrDesignatorIsHLAstandardMIM                       = hla.ErrDesignatorIsHLAstandardMIM
	ErrReadingFDD                                       = hla.ErrReadingFDD
	ErrErrorReadingMIM                                  = hla.ErrErrorReadingMIM
	ErrFederateAlreadyExecutionMember                   = hla.ErrFederateAlreadyExecutionMember
	ErrFederateHandleNotKnown                           = hla.ErrFederateHandleNotKnown
	ErrFederateHasNotBegunSave                          = hla.ErrFederateHasNotBegunSave
	ErrFederateInternalError                            = hla.ErrFederateInternalError
	ErrFederateIsExecutionMember                        = hla.ErrFederateIsExecutionMember
	ErrFederateNameAlreadyInUse                         = hla.ErrFederateNameAlreadyInUse
	ErrFederateNotExecutionMember                       = hla.ErrFederateNotExecutionMember
	ErrFederateOwnsAttributes                           = hla.ErrFederateOwnsAttributes
	ErrFederateServiceInvocationsAreBeingReportedViaMOM = hla.ErrFederateServiceInvocationsAreBeingReportedViaMOM
	ErrFederateUnableToUseTime                          = hla.ErrFederateUnableToUseTime
	ErrFederatesCurrentlyJoined                         = hla.ErrFederatesCurrentlyJoined
	ErrFederationExecutionAlreadyExists                 = hla.ErrFederationExecutionAlreadyExists
	ErrFederationExecutionDoesNotExist                  = hla.ErrFederationExecutionDoesNotExist
	ErrIllegalName                                      = hla.ErrIllegalName
	ErrIllegalTimeArithmetic                            = hla.ErrIllegalTimeArithmetic
	ErrInTimeAdvancingState                             = hla.ErrInTimeAdvancingState
	ErrInconsistentFDD                                  = hla.ErrInconsistentFDD
	ErrInteractionClassAlreadyBeingChanged              = hla.ErrInteractionClassAlreadyBeingChanged
	ErrInteractionClassNotDefined                       = hla.ErrInteractionClassNotDefined
	ErrInteractionClassNotPublished                     = hla.ErrInteractionClassNotPublished
	ErrInteractionClassNotRecognized                    = hla.ErrInteractionClassNotRecognized
	ErrInteractionClassNotSubscribed                    = hla.ErrInteractionClassNotSubscribed
	ErrInteractionParameterNotDefined                   = hla.ErrInteractionParameterNotDefined
	ErrInteractionParameterNotRecognized                = hla.ErrInteractionParameterNotRecognized
	ErrInteractionRelevanceAdvisorySwitchIsOff          = hla.ErrInteractionRelevanceAdvisorySwitchIsOff
	ErrInteractionRelevanceAdvisorySwitchIsOn           = hla.ErrInteractionRelevanceAdvisorySwitchIsOn
	ErrInternalError                                    = hla.ErrInternalError
	ErrInvalidAttributeHandle                           = hla.ErrInvalidAttributeHandle
	ErrInvalidDimensionHandle                           = hla.ErrInvalidDimensionHandle
	ErrInvalidFederateHandle                            = hla.ErrInvalidFederateHandle
	ErrInvalidInteractionClassHandle                    = hla.ErrInvalidInteractionClassHandle
	ErrInvalidLocalSettingsDesignator                   = hla.ErrInvalidLocalSettingsDesignator
	ErrInvalidLogicalTime                               = hla.ErrInvalidLogicalTime
	ErrInvalidLogicalTimeInterval                       = hla.ErrInvalidLogicalTimeInterval
	ErrInvalidLookahead                                 = hla.ErrInvalidLookahead
	ErrInvalidMessageRetractionHandle                   = hla.ErrInvalidMessageRetractionHandle
	ErrInvalidObjectClassHandle                         = hla.ErrInvalidObjectClassHandle
	ErrInvalidOrderName                                 = hla.ErrInvalidOrderName
	ErrInvalidOrderType                                 = hla.ErrInvalidOrderType
	ErrInvalidParameterHandle                           = hla.ErrInvalidParameterHandle
	ErrInvalidRangeBound                                = hla.ErrInvalidRangeBound
	ErrInvalidRegion                                    = hla.ErrInvalidRegion
	ErrInvalidRegionContext                             = hla.ErrInvalidRegionContext
	ErrInvalidResignAction                              = hla.ErrInvalidResignAction
	ErrInvalidServiceGroup                              = hla.ErrInvalidServiceGroup
	ErrInvalidTransportationName                        = hla.ErrInvalidTransportationName
	ErrInvalidTransportationType                        = hla.ErrInvalidTransportationType
	ErrInvalidUpdateRateDesignator                      = hla.ErrInvalidUpdateRateDesignator
	ErrJoinedFederateIsNotInTimeAdvancingState          = hla.ErrJoinedFederateIsNotInTimeAdvancingState
	ErrLogicalTimeAlreadyPassed                         = hla.ErrLogicalTimeAlreadyPassed
	ErrMessageCanNoLongerBeRetracted                    = hla.ErrMessageCanNoLongerBeRetracted
	ErrNameNotFound                                     = hla.ErrNameNotFound
	ErrNameSetWasEmpty                                  = hla.ErrNameSetWasEmpty
	ErrNoAcquisitionPending                             = hla.ErrNoAcquisitionPending
	ErrNoFederateWillingToAcquireAttribute              = hla.ErrNoFederateWillingToAcquireAttribute
	ErrNoRequestToEnableTimeConstrainedWasPending       = hla.ErrNoRequestToEnableTimeConstrainedWasPending
	ErrNoRequestToEnableTimeRegulationWasPending        = hla.ErrNoRequestToEnableTimeRegulationWasPending
	ErrNotConnected                                     = hla.ErrNotConnected
	ErrObjectClassNotDefined                            = hla.ErrObjectClassNotDefined
	ErrObjectClassNotKnown                              = hla.ErrObjectClassNotKnown
	ErrObjectClassNotPublished                          = hla.ErrObjectClassNotPublished
	ErrObjectClassRelevanceAdvisorySwitchIsOff          = hla.ErrObjectClassRelevanceAdvisorySwitchIsOff
	ErrObjectClassRelevanceAdvisorySwitchIsOn           = hla.ErrObjectClassRelevanceAdvisorySwitchIsOn
	ErrObjectInstanceNameInUse                          = hla.ErrObjectInstanceNameInUse
	ErrObjectInstanceNameNotReserved                    = hla.ErrObjectInstanceNameNotReserved
	ErrObjectInstanceNotKnown                           = hla.ErrObjectInstanceNotKnown
	ErrOwnershipAcquisitionPending                      = hla.ErrOwnershipAcquisitionPending
	ErrRTIinternalError                                 = hla.ErrRTIinternalError
	ErrRegionDoesNotContainSpecifiedDimension           = hla.ErrRegionDoesNotContainSpecifiedDimension
	ErrRegionInUseForUpdateOrSubscription               = hla.ErrRegionInUseForUpdateOrSubscription
	ErrRegionNotCreatedByThisFederate                   = hla.ErrRegionNotCreatedByThisFederate
	ErrRequestForTimeConstrainedPending                 = hla.ErrRequestForTimeConstrainedPending
	ErrRequestForTimeRegulationPending                  = hla.ErrRequestForTimeRegulationPending
	ErrRestoreInProgress                                = hla.ErrRestoreInProgress
	ErrRestoreNotInProgress                             = hla.ErrRestoreNotInProgress
	ErrRestoreNotRequested                              = hla.ErrRestoreNotRequested
	ErrSaveInProgress                                   = hla.ErrSaveInProgress
	ErrSaveNotInProgress                                = hla.ErrSaveNotInProgress
	ErrSaveNotInitiated                                 = hla.ErrSaveNotInitiated
	ErrSpecifiedSaveLabelDoesNotExist                   = hla.ErrSpecifiedSaveLabelDoesNotExist
	ErrSynchronizationPointLabelNotAnnounced            = hla.ErrSynchronizationPointLabelNotAnnounced
	ErrTimeConstrainedAlreadyEnabled                    = hla.ErrTimeConstrainedAlreadyEnabled
	ErrTimeConstrainedIsNotEnabled                      = hla.ErrTimeConstrainedIsNotEnabled
	ErrTimeRegulationAlreadyEnabled                     = hla.ErrTimeRegulationAlreadyEnabled
	ErrTimeRegulationIsNotEnabled                       = hla.ErrTimeRegulationIsNotEnabled
	ErrUnableToPerformSave                              = hla.ErrUnableToPerformSave
	ErrUnknownName                                      = hla.ErrUnknownName
	ErrUnsupportedCallbackModel                         = hla.ErrUnsupportedCallbackModel
)

// Added with the declaration, object and support services.
type (
	RegionHandle       = hla.RegionHandle
	RangeBounds        = hla.RangeBounds
	AttributeRegions   = hla.AttributeRegions
	TransportationType = hla.TransportationType
	ServiceGroup       = hla.ServiceGroup
	TimeFactory        = hla.TimeFactory

	StartRegistrationForObjectClass                = hla.StartRegistrationForObjectClass
	StopRegistrationForObjectClass                 = hla.StopRegistrationForObjectClass
	TurnInteractionsOn                             = hla.TurnInteractionsOn
	TurnInteractionsOff                            = hla.TurnInteractionsOff
	MultipleObjectInstanceNameReservationSucceeded = hla.MultipleObjectInstanceNameReservationSucceeded
	MultipleObjectInstanceNameReservationFailed    = hla.MultipleObjectInstanceNameReservationFailed
	AttributesInScope                              = hla.AttributesInScope
	AttributesOutOfScope                           = hla.AttributesOutOfScope
	ProvideAttributeValueUpdate                    = hla.ProvideAttributeValueUpdate
	TurnUpdatesOnForObjectInstance                 = hla.TurnUpdatesOnForObjectInstance
	TurnUpdatesOffForObjectInstance                = hla.TurnUpdatesOffForObjectInstance
	ConfirmAttributeTransportationTypeChange       = hla.ConfirmAttributeTransportationTypeChange
	ReportAttributeTransportationType              = hla.ReportAttributeTransportationType
	ConfirmInteractionTransportationTypeChange     = hla.ConfirmInteractionTransportationTypeChange
	ReportInteractionTransportationType            = hla.ReportInteractionTransportationType
)

// Transportation types and service groups.
const (
	HLAreliable                = hla.HLAreliable
	HLAbestEffort              = hla.HLAbestEffort
	FederationManagement       = hla.FederationManagement
	DeclarationManagement      = hla.DeclarationManagement
	ObjectManagement           = hla.ObjectManagement
	OwnershipManagement        = hla.OwnershipManagement
	TimeManagement             = hla.TimeManagement
	DataDistributionManagement = hla.DataDistributionManagement
	SupportServices            = hla.SupportServices
)

// EncodeHandle encodes a handle of one number (federate, object class,
// interaction class, attribute, parameter, dimension) as the decode
// services read it; see package hla.
func EncodeHandle[H ~uint64](h H) []byte { return hla.EncodeHandle(h) }

// Synchronization point callbacks and their failure reasons.
type (
	SynchronizationPointRegistrationSucceeded = hla.SynchronizationPointRegistrationSucceeded
	SynchronizationPointRegistrationFailed    = hla.SynchronizationPointRegistrationFailed
	AnnounceSynchronizationPoint              = hla.AnnounceSynchronizationPoint
	FederationSynchronized                    = hla.FederationSynchronized
	SynchronizationPointFailureReason         = hla.SynchronizationPointFailureReason
)

const (
	SynchronizationPointLabelNotUnique = hla.SynchronizationPointLabelNotUnique
	SynchronizationSetMemberNotJoined  = hla.SynchronizationSetMemberNotJoined
)

// ReceiveDirectedInteraction is the HLA 4 directed interaction callback.
type ReceiveDirectedInteraction = hla.ReceiveDirectedInteraction

// Save and restore callbacks, reasons and statuses.
type (
	InitiateFederateSave              = hla.InitiateFederateSave
	FederationSaved                   = hla.FederationSaved
	FederationNotSaved                = hla.FederationNotSaved
	FederationSaveStatusResponse      = hla.FederationSaveStatusResponse
	RequestFederationRestoreSucceeded = hla.RequestFederationRestoreSucceeded
	RequestFederationRestoreFailed    = hla.RequestFederationRestoreFailed
	FederationRestoreBegun            = hla.FederationRestoreBegun
	InitiateFederateRestore           = hla.InitiateFederateRestore
	FederationRestored                = hla.FederationRestored
	FederationNotRestored             = hla.FederationNotRestored
	FederationRestoreStatusResponse   = hla.FederationRestoreStatusResponse
	SaveFailureReason                 = hla.SaveFailureReason
	RestoreFailureReason              = hla.RestoreFailureReason
	SaveStatus                        = hla.SaveStatus
	RestoreStatus                     = hla.RestoreStatus
	FederateHandleSaveStatusPair      = hla.FederateHandleSaveStatusPair
	FederationExecutionInformation    = hla.FederationExecutionInformation
	ReportFederationExecutions        = hla.ReportFederationExecutions
	FederateRestoreStatus             = hla.FederateRestoreStatus
)

const (
	RTIUnableToSave                       = hla.RTIUnableToSave
	FederateReportedFailureDuringSave     = hla.FederateReportedFailureDuringSave
	FederateResignedDuringSave            = hla.FederateResignedDuringSave
	RTIDetectedFailureDuringSave          = hla.RTIDetectedFailureDuringSave
	SaveTimeCannotBeHonored               = hla.SaveTimeCannotBeHonored
	SaveAborted                           = hla.SaveAborted
	RTIUnableToRestore                    = hla.RTIUnableToRestore
	FederateReportedFailureDuringRestore  = hla.FederateReportedFailureDuringRestore
	FederateResignedDuringRestore         = hla.FederateResignedDuringRestore
	RTIDetectedFailureDuringRestore       = hla.RTIDetectedFailureDuringRestore
	RestoreAborted                        = hla.RestoreAborted
	FederateSaveNotInitiated              = hla.FederateSaveNotInitiated
	FederateWaitingForSaveToBegin         = hla.FederateWaitingForSaveToBegin
	FederateSaving                        = hla.FederateSaving
	FederateWaitingForFederationToSave    = hla.FederateWaitingForFederationToSave
	NoRestoreInProgress                   = hla.NoRestoreInProgress
	FederateRestoreRequestPending         = hla.FederateRestoreRequestPending
	FederateWaitingForRestoreToBegin      = hla.FederateWaitingForRestoreToBegin
	FederatePreparedToRestore             = hla.FederatePreparedToRestore
	FederateRestoring                     = hla.FederateRestoring
	FederateWaitingForFederationToRestore = hla.FederateWaitingForFederationToRestore
)

// Ownership callbacks.
type (
	RequestAttributeOwnershipAssumption              = hla.RequestAttributeOwnershipAssumption
	RequestDivestitureConfirmation                   = hla.RequestDivestitureConfirmation
	AttributeOwnershipAcquisitionNotification        = hla.AttributeOwnershipAcquisitionNotification
	AttributeOwnershipUnavailable                    = hla.AttributeOwnershipUnavailable
	RequestAttributeOwnershipRelease                 = hla.RequestAttributeOwnershipRelease
	ConfirmAttributeOwnershipAcquisitionCancellation = hla.ConfirmAttributeOwnershipAcquisitionCancellation
	InformAttributeOwnership                         = hla.InformAttributeOwnership
	AttributeIsNotOwned                              = hla.AttributeIsNotOwned
	AttributeIsOwnedByRTI                            = hla.AttributeIsOwnedByRTI
)

// The HLA 4 names of the FOM exceptions (see package hla).
var (
	ErrCouldNotOpenFOM = hla.ErrCouldNotOpenFOM
	ErrErrorReadingFOM = hla.ErrErrorReadingFOM
	ErrInconsistentFOM = hla.ErrInconsistentFOM
)
