package fedpro

import (
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/hla"
)

// exceptionNames names the exception each sentinel error is reported as:
// its HLA 4 (IEEE 1516.1-2025) name, which differs from the 1516e one for
// the FOM exceptions (CouldNotOpenFOM, ErrorReadingFOM, InconsistentFOM)
// and for transportation types (InvalidTransportationTypeHandle); a 1516e
// client's session gets the 1516e names (evolvedNames). The
// few 1516e exceptions HLA 4 dropped keep their 1516e name (none is
// thrown by a call). Then package peer's own sentinels, as the exception
// a client can act on. A test checks that every sentinel of packages hla
// and peer is here.
var exceptionNames = []struct {
	err  error
	name string
}{
	{hla.ErrAlreadyConnected, "AlreadyConnected"},
	{hla.ErrAsynchronousDeliveryAlreadyDisabled, "AsynchronousDeliveryAlreadyDisabled"},
	{hla.ErrAsynchronousDeliveryAlreadyEnabled, "AsynchronousDeliveryAlreadyEnabled"},
	{hla.ErrAttributeAcquisitionWasNotCanceled, "AttributeAcquisitionWasNotCanceled"},
	{hla.ErrAttributeAcquisitionWasNotRequested, "AttributeAcquisitionWasNotRequested"},
	{hla.ErrAttributeAlreadyBeingAcquired, "AttributeAlreadyBeingAcquired"},
	{hla.ErrAttributeAlreadyBeingChanged, "AttributeAlreadyBeingChanged"},
	{hla.ErrAttributeAlreadyBeingDivested, "AttributeAlreadyBeingDivested"},
	{hla.ErrAttributeAlreadyOwned, "AttributeAlreadyOwned"},
	{hla.ErrAttributeDivestitureWasNotRequested, "AttributeDivestitureWasNotRequested"},
	{hla.ErrAttributeNotDefined, "AttributeNotDefined"},
	{hla.ErrAttributeNotOwned, "AttributeNotOwned"},
	{hla.ErrAttributeNotPublished, "AttributeNotPublished"},
	{hla.ErrAttributeNotRecognized, "AttributeNotRecognized"},
	{hla.ErrAttributeNotSubscribed, "AttributeNotSubscribed"},
	{hla.ErrAttributeRelevanceAdvisorySwitchIsOff, "AttributeRelevanceAdvisorySwitchIsOff"},
	{hla.ErrAttributeRelevanceAdvisorySwitchIsOn, "AttributeRelevanceAdvisorySwitchIsOn"},
	{hla.ErrAttributeScopeAdvisorySwitchIsOff, "AttributeScopeAdvisorySwitchIsOff"},
	{hla.ErrAttributeScopeAdvisorySwitchIsOn, "AttributeScopeAdvisorySwitchIsOn"},
	{hla.ErrBadInitializationParameter, "BadInitializationParameter"},
	{hla.ErrCallNotAllowedFromWithinCallback, "CallNotAllowedFromWithinCallback"},
	{hla.ErrConnectionFailed, "ConnectionFailed"},
	{hla.ErrCouldNotCreateLogicalTimeFactory, "CouldNotCreateLogicalTimeFactory"},
	{hla.ErrCouldNotDecode, "CouldNotDecode"},
	{hla.ErrCouldNotDiscover, "CouldNotDiscover"},
	{hla.ErrCouldNotEncode, "CouldNotEncode"},
	{hla.ErrCouldNotInitiateRestore, "CouldNotInitiateRestore"},
	{hla.ErrCouldNotOpenFDD, "CouldNotOpenFOM"},
	{hla.ErrCouldNotOpenMIM, "CouldNotOpenMIM"},
	{hla.ErrDeletePrivilegeNotHeld, "DeletePrivilegeNotHeld"},
	{hla.ErrDesignatorIsHLAstandardMIM, "DesignatorIsHLAstandardMIM"},
	{hla.ErrReadingFDD, "ErrorReadingFOM"},
	{hla.ErrErrorReadingMIM, "ErrorReadingMIM"},
	{hla.ErrFederateAlreadyExecutionMember, "FederateAlreadyExecutionMember"},
	{hla.ErrFederateHandleNotKnown, "FederateHandleNotKnown"},
	{hla.ErrFederateHasNotBegunSave, "FederateHasNotBegunSave"},
	{hla.ErrFederateInternalError, "FederateInternalError"},
	{hla.ErrFederateIsExecutionMember, "FederateIsExecutionMember"},
	{hla.ErrFederateNameAlreadyInUse, "FederateNameAlreadyInUse"},
	{hla.ErrFederateNotExecutionMember, "FederateNotExecutionMember"},
	{hla.ErrFederateOwnsAttributes, "FederateOwnsAttributes"},
	{hla.ErrFederateServiceInvocationsAreBeingReportedViaMOM, "FederateServiceInvocationsAreBeingReportedViaMOM"},
	{hla.ErrFederateUnableToUseTime, "FederateUnableToUseTime"},
	{hla.ErrFederatesCurrentlyJoined, "FederatesCurrentlyJoined"},
	{hla.ErrFederationExecutionAlreadyExists, "FederationExecutionAlreadyExists"},
	{hla.ErrFederationExecutionDoesNotExist, "FederationExecutionDoesNotExist"},
	{hla.ErrIllegalName, "IllegalName"},
	{hla.ErrIllegalTimeArithmetic, "IllegalTimeArithmetic"},
	{hla.ErrInTimeAdvancingState, "InTimeAdvancingState"},
	{hla.ErrInconsistentFDD, "InconsistentFOM"},
	{hla.ErrInteractionClassAlreadyBeingChanged, "InteractionClassAlreadyBeingChanged"},
	{hla.ErrInteractionClassNotDefined, "InteractionClassNotDefined"},
	{hla.ErrInteractionClassNotPublished, "InteractionClassNotPublished"},
	{hla.ErrInteractionClassNotRecognized, "InteractionClassNotRecognized"},
	{hla.ErrInteractionClassNotSubscribed, "InteractionClassNotSubscribed"},
	{hla.ErrInteractionParameterNotDefined, "InteractionParameterNotDefined"},
	{hla.ErrInteractionParameterNotRecognized, "InteractionParameterNotRecognized"},
	{hla.ErrInteractionRelevanceAdvisorySwitchIsOff, "InteractionRelevanceAdvisorySwitchIsOff"},
	{hla.ErrInteractionRelevanceAdvisorySwitchIsOn, "InteractionRelevanceAdvisorySwitchIsOn"},
	{hla.ErrInternalError, "InternalError"},
	{hla.ErrInvalidAttributeHandle, "InvalidAttributeHandle"},
	{hla.ErrInvalidDimensionHandle, "InvalidDimensionHandle"},
	{hla.ErrInvalidFederateHandle, "InvalidFederateHandle"},
	{hla.ErrInvalidInteractionClassHandle, "InvalidInteractionClassHandle"},
	{hla.ErrInvalidLocalSettingsDesignator, "InvalidLocalSettingsDesignator"},
	{hla.ErrInvalidLogicalTime, "InvalidLogicalTime"},
	{hla.ErrInvalidLogicalTimeInterval, "InvalidLogicalTimeInterval"},
	{hla.ErrInvalidLookahead, "InvalidLookahead"},
	{hla.ErrInvalidMessageRetractionHandle, "InvalidMessageRetractionHandle"},
	{hla.ErrInvalidObjectClassHandle, "InvalidObjectClassHandle"},
	{hla.ErrInvalidOrderName, "InvalidOrderName"},
	{hla.ErrInvalidOrderType, "InvalidOrderType"},
	{hla.ErrInvalidParameterHandle, "InvalidParameterHandle"},
	{hla.ErrInvalidRangeBound, "InvalidRangeBound"},
	{hla.ErrInvalidRegion, "InvalidRegion"},
	{hla.ErrInvalidRegionContext, "InvalidRegionContext"},
	{hla.ErrInvalidResignAction, "InvalidResignAction"},
	{hla.ErrInvalidServiceGroup, "InvalidServiceGroup"},
	{hla.ErrInvalidTransportationName, "InvalidTransportationName"},
	{hla.ErrInvalidTransportationType, "InvalidTransportationTypeHandle"},
	{hla.ErrInvalidUpdateRateDesignator, "InvalidUpdateRateDesignator"},
	{hla.ErrJoinedFederateIsNotInTimeAdvancingState, "JoinedFederateIsNotInTimeAdvancingState"},
	{hla.ErrLogicalTimeAlreadyPassed, "LogicalTimeAlreadyPassed"},
	{hla.ErrMessageCanNoLongerBeRetracted, "MessageCanNoLongerBeRetracted"},
	{hla.ErrNameNotFound, "NameNotFound"},
	{hla.ErrNameSetWasEmpty, "NameSetWasEmpty"},
	{hla.ErrNoAcquisitionPending, "NoAcquisitionPending"},
	{hla.ErrNoFederateWillingToAcquireAttribute, "NoFederateWillingToAcquireAttribute"},
	{hla.ErrNoRequestToEnableTimeConstrainedWasPending, "NoRequestToEnableTimeConstrainedWasPending"},
	{hla.ErrNoRequestToEnableTimeRegulationWasPending, "NoRequestToEnableTimeRegulationWasPending"},
	{hla.ErrNotConnected, "NotConnected"},
	{hla.ErrObjectClassNotDefined, "ObjectClassNotDefined"},
	{hla.ErrObjectClassNotKnown, "ObjectClassNotKnown"},
	{hla.ErrObjectClassNotPublished, "ObjectClassNotPublished"},
	{hla.ErrObjectClassRelevanceAdvisorySwitchIsOff, "ObjectClassRelevanceAdvisorySwitchIsOff"},
	{hla.ErrObjectClassRelevanceAdvisorySwitchIsOn, "ObjectClassRelevanceAdvisorySwitchIsOn"},
	{hla.ErrObjectInstanceNameInUse, "ObjectInstanceNameInUse"},
	{hla.ErrObjectInstanceNameNotReserved, "ObjectInstanceNameNotReserved"},
	{hla.ErrObjectInstanceNotKnown, "ObjectInstanceNotKnown"},
	{hla.ErrOwnershipAcquisitionPending, "OwnershipAcquisitionPending"},
	{hla.ErrRTIinternalError, "RTIinternalError"},
	{hla.ErrRegionDoesNotContainSpecifiedDimension, "RegionDoesNotContainSpecifiedDimension"},
	{hla.ErrRegionInUseForUpdateOrSubscription, "RegionInUseForUpdateOrSubscription"},
	{hla.ErrRegionNotCreatedByThisFederate, "RegionNotCreatedByThisFederate"},
	{hla.ErrRequestForTimeConstrainedPending, "RequestForTimeConstrainedPending"},
	{hla.ErrRequestForTimeRegulationPending, "RequestForTimeRegulationPending"},
	{hla.ErrRestoreInProgress, "RestoreInProgress"},
	{hla.ErrRestoreNotInProgress, "RestoreNotInProgress"},
	{hla.ErrRestoreNotRequested, "RestoreNotRequested"},
	{hla.ErrSaveInProgress, "SaveInProgress"},
	{hla.ErrSaveNotInProgress, "SaveNotInProgress"},
	{hla.ErrSaveNotInitiated, "SaveNotInitiated"},
	{hla.ErrSpecifiedSaveLabelDoesNotExist, "SpecifiedSaveLabelDoesNotExist"},
	{hla.ErrSynchronizationPointLabelNotAnnounced, "SynchronizationPointLabelNotAnnounced"},
	{hla.ErrTimeConstrainedAlreadyEnabled, "TimeConstrainedAlreadyEnabled"},
	{hla.ErrTimeConstrainedIsNotEnabled, "TimeConstrainedIsNotEnabled"},
	{hla.ErrTimeRegulationAlreadyEnabled, "TimeRegulationAlreadyEnabled"},
	{hla.ErrTimeRegulationIsNotEnabled, "TimeRegulationIsNotEnabled"},
	{hla.ErrUnableToPerformSave, "UnableToPerformSave"},
	{hla.ErrUnknownName, "UnknownName"},
	{hla.ErrUnsupportedCallbackModel, "UnsupportedCallbackModel"},
	{hla.ErrUnauthorized, "Unauthorized"},             // HLA 4's: a connect's credentials refused (auth.go)
	{hla.ErrInvalidCredentials, "InvalidCredentials"}, // HLA 4's: credentials that do not decode

	{peer.ErrClosed, "NotConnected"},                 // a closed federate (its services wrap their own exception too)
	{peer.ErrWouldBlock, "RTIinternalError"},         // back pressure: the standard has no exception for it
	{peer.ErrModulesChanged, "RTIinternalError"},     // the join is retried; it is internal if it ever surfaces
	{peer.ErrStopCycles, "RTIinternalError"},         // RunCycles' own control value
	{peer.ErrSetMemberNotJoined, "RTIinternalError"}, // the registration fails with a reason instead; internal if it ever surfaces
	{peer.ErrTransportMismatch, "RTIinternalError"},  // a joiner's data-plane mode is not the federation's; the standard has no exception for it
}

// evolvedNames are the 1516e (IEEE 1516.1-2010) names of the exceptions
// HLA 4 renamed or added, for the sessions of 1516e clients: a client of
// the 1516e API knows only 1516e's exceptions, and takes a name it does
// not know for an RTIinternalError. HLA 4's connect exceptions about
// credentials are 1516e's ConnectionFailed.
var evolvedNames = map[string]string{
	"CouldNotOpenFOM":                 "CouldNotOpenFDD",
	"ErrorReadingFOM":                 "ErrorReadingFDD",
	"InconsistentFOM":                 "InconsistentFDD",
	"InvalidTransportationTypeHandle": "InvalidTransportationType",
	"Unauthorized":                    "ConnectionFailed",
	"InvalidCredentials":              "ConnectionFailed",
}

// ExceptionName is the name of the HLA exception err is, as a client of
// the HLA 4 API knows it, or with evolved as a client of the 1516e API
// does (CouldNotOpenFDD, ErrorReadingFDD, InconsistentFDD,
// InvalidTransportationType where HLA 4 says ...FOM and
// InvalidTransportationTypeHandle): RTIinternalError for an error that
// wraps no HLA exception. The name comes from the error's type, never
// its text.
func ExceptionName(err error, evolved bool) string {
	name := exceptionName(err)
	if evolved {
		if e, ok := evolvedNames[name]; ok {
			return e
		}
	}
	return name
}

// exceptionName is the name of the HLA exception err is: that of the
// first sentinel found walking err and what it wraps, outermost first,
// each error matching the sentinel it is or, for typed errors with an Is
// method (hla.InvalidLogicalTimeError), that Is accepts. An error that
// wraps no sentinel is RTIinternalError.
func exceptionName(err error) string {
	name := ""
	var walk func(error)
	walk = func(e error) {
		if e == nil || name != "" {
			return
		}
		is, _ := e.(interface{ Is(error) bool })
		for _, x := range exceptionNames {
			if e == x.err || (is != nil && is.Is(x.err)) {
				name = x.name
				return
			}
		}
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			for _, w := range u.Unwrap() {
				walk(w)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	walk(err)
	if name == "" {
		return "RTIinternalError"
	}
	return name
}
