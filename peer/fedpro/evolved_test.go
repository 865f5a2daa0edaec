package fedpro

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshrti/meshrti/peer/fedpro/pb"
)

// evolvedExceptions are the exceptions of the 1516e API (IEEE
// 1516.1-2010, the C++ and Java APIs' exception classes).
var evolvedExceptions = strings.Fields(`
AlreadyConnected AsynchronousDeliveryAlreadyDisabled AsynchronousDeliveryAlreadyEnabled
AttributeAcquisitionWasNotCanceled AttributeAcquisitionWasNotRequested
AttributeAlreadyBeingAcquired AttributeAlreadyBeingChanged AttributeAlreadyBeingDivested
AttributeAlreadyOwned AttributeDivestitureWasNotRequested AttributeNotDefined AttributeNotOwned
AttributeNotPublished AttributeNotRecognized AttributeNotSubscribed
AttributeRelevanceAdvisorySwitchIsOff AttributeRelevanceAdvisorySwitchIsOn
AttributeScopeAdvisorySwitchIsOff AttributeScopeAdvisorySwitchIsOn BadInitializationParameter
CallNotAllowedFromWithinCallback ConnectionFailed CouldNotCreateLogicalTimeFactory CouldNotDecode
CouldNotDiscover CouldNotEncode CouldNotInitiateRestore CouldNotOpenFDD CouldNotOpenMIM
DeletePrivilegeNotHeld DesignatorIsHLAstandardMIM ErrorReadingFDD ErrorReadingMIM
FederateAlreadyExecutionMember FederateHandleNotKnown FederateHasNotBegunSave FederateInternalError
FederateIsExecutionMember FederateNameAlreadyInUse FederateNotExecutionMember
FederateOwnsAttributes FederateServiceInvocationsAreBeingReportedViaMOM FederateUnableToUseTime
FederatesCurrentlyJoined FederationExecutionAlreadyExists FederationExecutionDoesNotExist
IllegalName IllegalTimeArithmetic InTimeAdvancingState InconsistentFDD
InteractionClassAlreadyBeingChanged InteractionClassNotDefined InteractionClassNotPublished
InteractionClassNotRecognized InteractionClassNotSubscribed InteractionParameterNotDefined
InteractionParameterNotRecognized InteractionRelevanceAdvisorySwitchIsOff
InteractionRelevanceAdvisorySwitchIsOn InternalError InvalidAttributeHandle InvalidDimensionHandle
InvalidFederateHandle InvalidInteractionClassHandle InvalidLocalSettingsDesignator
InvalidLogicalTime InvalidLogicalTimeInterval InvalidLookahead InvalidMessageRetractionHandle
InvalidObjectClassHandle InvalidOrderName InvalidOrderType InvalidParameterHandle InvalidRangeBound
InvalidRegion InvalidRegionContext InvalidResignAction InvalidServiceGroup
InvalidTransportationName InvalidTransportationType InvalidUpdateRateDesignator
JoinedFederateIsNotInTimeAdvancingState LogicalTimeAlreadyPassed MessageCanNoLongerBeRetracted
NameNotFound NameSetWasEmpty NoAcquisitionPending NoFederateWillingToAcquireAttribute
NoRequestToEnableTimeConstrainedWasPending NoRequestToEnableTimeRegulationWasPending NotConnected
ObjectClassNotDefined ObjectClassNotKnown ObjectClassNotPublished
ObjectClassRelevanceAdvisorySwitchIsOff ObjectClassRelevanceAdvisorySwitchIsOn
ObjectInstanceNameInUse ObjectInstanceNameNotReserved ObjectInstanceNotKnown
OwnershipAcquisitionPending RTIinternalError RegionDoesNotContainSpecifiedDimension
RegionInUseForUpdateOrSubscription RegionNotCreatedByThisFederate RequestForTimeConstrainedPending
RequestForTimeRegulationPending RestoreInProgress RestoreNotInProgress RestoreNotRequested
SaveInProgress SaveNotInProgress SaveNotInitiated SpecifiedSaveLabelDoesNotExist
SynchronizationPointLabelNotAnnounced TimeConstrainedAlreadyEnabled TimeConstrainedIsNotEnabled
TimeRegulationAlreadyEnabled TimeRegulationIsNotEnabled UnableToPerformSave UnknownName
UnsupportedCallbackModel`)

// Every exception a call may answer with has a 1516e name for a 1516e
// client's session (ExceptionName with evolved): the ones HLA 4 renamed
// go by their 1516e names, the rest by the names both editions share.
func TestConformanceEvolvedExceptionNames(t *testing.T) {
	evolved := map[string]bool{}
	for _, n := range evolvedExceptions {
		evolved[n] = true
	}
	for _, x := range exceptionNames {
		for _, err := range []error{x.err, fmt.Errorf("context: %w", x.err)} {
			if got := ExceptionName(err, false); got != x.name {
				t.Errorf("ExceptionName(%v, HLA 4) = %s, want %s", err, got, x.name)
			}
			got := ExceptionName(err, true)
			if !evolved[got] {
				t.Errorf("ExceptionName(%v, 1516e) = %s, which 1516e does not have", err, got)
			}
			if want, renamed := evolvedNames[x.name]; renamed && got != want || !renamed && got != x.name {
				t.Errorf("ExceptionName(%v, 1516e) = %s, HLA 4 says %s", err, got, x.name)
			}
		}
	}
	if got := ExceptionName(errors.New("no exception"), true); got != "RTIinternalError" {
		t.Errorf("an error that wraps no exception: %s", got)
	}
}

// A session whose connect says API.version=IEEE 1516-2010 (as Pitch's
// 1516e client's does) gets the 1516e names of the exceptions HLA 4
// renamed; any other session the HLA 4 names. The additional settings
// are applied when API.version is all they hold.
func TestEvolvedSessionExceptionNames(t *testing.T) {
	// A module that redefines a class of the MIM otherwise: the
	// federation's modules are inconsistent.
	clash := strings.Replace(fpFOM, "<objects><objectClass><name>HLAobjectRoot</name>",
		`<objects><objectClass><name>HLAobjectRoot</name><objectClass><name>HLAmanager</name><sharing>Neither</sharing>
      <objectClass><name>HLAfederate</name><sharing>Publish</sharing>
        <attribute><name>HLAfederateHandle</name><dataType>HLAopaqueData</dataType><updateType>Static</updateType><updateCondition>NA</updateCondition><ownership>NoTransfer</ownership><sharing>Publish</sharing><transportation>HLAreliable</transportation><order>Receive</order></attribute>
      </objectClass></objectClass>`, 1)
	file := func(name, content string) *pb.FomModule {
		return &pb.FomModule{FomModule: &pb.FomModule_File{File: &pb.FileFomModule{Name: name, Content: []byte(content)}}}
	}
	create := func(ms ...*pb.FomModule) *pb.CallRequest {
		return &pb.CallRequest{CallRequest: &pb.CallRequest_CreateFederationExecutionWithModulesRequest{CreateFederationExecutionWithModulesRequest: &pb.CreateFederationExecutionWithModulesRequest{
			FederationName: "evolved", FomModules: &pb.FomModuleSet{FomModule: ms}}}}
	}
	missing := &pb.FomModule{FomModule: &pb.FomModule_Url{Url: filepath.Join(t.TempDir(), "missing.xml")}}
	for _, tc := range []struct {
		settings string
		code     pb.AdditionalSettingsResultCode
		want     []string // inconsistent, missing, unreadable, bad transportation
	}{
		{"", pb.AdditionalSettingsResultCode_SETTINGS_IGNORED, []string{"InconsistentFOM", "CouldNotOpenFOM", "ErrorReadingFOM", "InvalidTransportationTypeHandle"}},
		{"API.version=IEEE 1516-2010\n", pb.AdditionalSettingsResultCode_SETTINGS_APPLIED, []string{"InconsistentFDD", "CouldNotOpenFDD", "ErrorReadingFDD", "InvalidTransportationType"}},
		{"API.version=IEEE 1516-2010\ncrcAddress=localhost", pb.AdditionalSettingsResultCode_SETTINGS_IGNORED, []string{"InconsistentFDD", "CouldNotOpenFDD", "ErrorReadingFDD", "InvalidTransportationType"}},
		{"API.version=IEEE 1516-2025", pb.AdditionalSettingsResultCode_SETTINGS_APPLIED, []string{"InconsistentFOM", "CouldNotOpenFOM", "ErrorReadingFOM", "InvalidTransportationTypeHandle"}},
	} {
		t.Run(fmt.Sprintf("%q", tc.settings), func(t *testing.T) {
			c := newFPNet(t).client(t, "A")
			r := c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_ConnectWithConfigurationRequest{ConnectWithConfigurationRequest: &pb.ConnectWithConfigurationRequest{
				RtiConfiguration: &pb.RtiConfiguration{AdditionalSettings: tc.settings}}}})
			if got := r.GetConnectWithConfigurationResponse().GetConfigurationResult().GetAdditionalSettingsResultCode(); got != tc.code {
				t.Errorf("additional settings %v, want %v", got, tc.code)
			}
			c.fails(create(fpModule(), file("clash.xml", clash)), tc.want[0])
			c.fails(create(missing), tc.want[1])
			c.fails(create(file("bad.xml", "<objectModel")), tc.want[2])
			c.joinConnected("A", true)
			c.fails(&pb.CallRequest{CallRequest: &pb.CallRequest_GetTransportationTypeNameRequest{GetTransportationTypeNameRequest: &pb.GetTransportationTypeNameRequest{
				TransportationType: &pb.TransportationTypeHandle{Data: []byte{0, 0, 0, 9}}}}}, tc.want[3])
			// Names both editions share are the same.
			c.fails(&pb.CallRequest{CallRequest: &pb.CallRequest_GetObjectClassHandleRequest{GetObjectClassHandleRequest: &pb.GetObjectClassHandleRequest{ObjectClassName: "Bogus"}}}, "NameNotFound")
		})
	}
}
