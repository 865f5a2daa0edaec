package fedpro

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/fedpro/pb"
)

// Every callback of the schema that a meshrti federate can give has an
// event it comes from, and each event becomes its callback, which
// encodes. The cases no event gives are named, with why.
func TestEveryCallbackHasItsEvent(t *testing.T) {
	c := newFPNet(t).soloJoined(t)
	f, err := c.s.federate()
	if err != nil {
		t.Fatal(err)
	}
	obj := peer.ObjectInstanceHandle{Federate: 1, Serial: 2}
	ft := peer.Float64Time(3)
	events := []peer.Event{
		peer.ConnectionLost{Reason: "x"},
		peer.SynchronizationPointRegistrationSucceeded{Label: "l"},
		peer.SynchronizationPointRegistrationFailed{Label: "l", Reason: peer.SynchronizationSetMemberNotJoined},
		peer.AnnounceSynchronizationPoint{Label: "l"},
		peer.FederationSynchronized{Label: "l", Failed: []peer.FederateHandle{2}},
		peer.InitiateFederateSave{Label: "s"},
		peer.InitiateFederateSave{Label: "s", Time: ft, HasTime: true},
		peer.FederationSaved{},
		peer.FederationNotSaved{Reason: peer.SaveAborted},
		peer.FederationSaveStatusResponse{Statuses: []peer.FederateHandleSaveStatusPair{{Federate: 1, Status: peer.FederateSaving}}},
		peer.RequestFederationRestoreSucceeded{Label: "s"},
		peer.RequestFederationRestoreFailed{Label: "s"},
		peer.FederationRestoreBegun{},
		peer.InitiateFederateRestore{Label: "s", Name: "A", Handle: 1},
		peer.FederationRestored{},
		peer.FederationNotRestored{Reason: peer.RestoreAborted},
		peer.FederationRestoreStatusResponse{Statuses: []peer.FederateRestoreStatus{{PreRestore: 1, PostRestore: 1, Status: peer.FederateRestoring}}},
		peer.StartRegistrationForObjectClass{Class: 1},
		peer.StopRegistrationForObjectClass{Class: 1},
		peer.TurnInteractionsOn{Class: 1},
		peer.TurnInteractionsOff{Class: 1},
		peer.ObjectInstanceNameReservationSucceeded{Name: "n"},
		peer.ObjectInstanceNameReservationFailed{Name: "n"},
		peer.MultipleObjectInstanceNameReservationSucceeded{Names: []string{"n"}},
		peer.MultipleObjectInstanceNameReservationFailed{Names: []string{"n"}},
		peer.DiscoverObjectInstance{Object: obj, Class: 1, Name: "o", Producer: 1},
		peer.ReflectAttributeValues{Object: obj, Values: peer.AttributeValues{1: []byte("v")}},
		peer.ReflectAttributeValues{Object: obj, Values: peer.AttributeValues{1: []byte("v")}, Time: ft, SentOrder: peer.TimeStamp, ReceivedOrder: peer.TimeStamp, Retraction: peer.MessageRetractionHandle{Federate: 1, Serial: 1}},
		peer.ReceiveInteraction{Class: 1, Values: peer.ParameterValues{1: []byte("p")}},
		peer.ReceiveInteraction{Class: 1, Time: ft},
		peer.ReceiveDirectedInteraction{Class: 1, Object: obj},
		peer.ReceiveDirectedInteraction{Class: 1, Object: obj, Time: ft},
		peer.RemoveObjectInstance{Object: obj},
		peer.RemoveObjectInstance{Object: obj, Time: ft},
		peer.AttributesInScope{Object: obj, Attributes: []peer.AttributeHandle{1}},
		peer.AttributesOutOfScope{Object: obj, Attributes: []peer.AttributeHandle{1}},
		peer.ProvideAttributeValueUpdate{Object: obj, Attributes: []peer.AttributeHandle{1}},
		peer.TurnUpdatesOnForObjectInstance{Object: obj, Attributes: []peer.AttributeHandle{1}},
		peer.TurnUpdatesOnForObjectInstance{Object: obj, Attributes: []peer.AttributeHandle{1}, UpdateRate: "fast"},
		peer.TurnUpdatesOffForObjectInstance{Object: obj, Attributes: []peer.AttributeHandle{1}},
		peer.ConfirmAttributeTransportationTypeChange{Object: obj, Attributes: []peer.AttributeHandle{1}, Transportation: peer.HLAbestEffort},
		peer.ReportAttributeTransportationType{Object: obj, Attribute: 1, Transportation: peer.HLAreliable},
		peer.ConfirmInteractionTransportationTypeChange{Class: 1, Transportation: peer.HLAreliable},
		peer.ReportInteractionTransportationType{Federate: 1, Class: 1, Transportation: peer.HLAreliable},
		peer.RequestAttributeOwnershipAssumption{Object: obj, Attributes: []peer.AttributeHandle{1}},
		peer.RequestDivestitureConfirmation{Object: obj, Attributes: []peer.AttributeHandle{1}},
		peer.AttributeOwnershipAcquisitionNotification{Object: obj, Attributes: []peer.AttributeHandle{1}},
		peer.AttributeOwnershipUnavailable{Object: obj, Attributes: []peer.AttributeHandle{1}},
		peer.RequestAttributeOwnershipRelease{Object: obj, Attributes: []peer.AttributeHandle{1}},
		peer.ConfirmAttributeOwnershipAcquisitionCancellation{Object: obj, Attributes: []peer.AttributeHandle{1}},
		peer.InformAttributeOwnership{Object: obj, Attribute: 1, Owner: 1},
		peer.AttributeIsNotOwned{Object: obj, Attribute: 1},
		peer.AttributeIsOwnedByRTI{Object: obj, Attribute: 1},
		peer.TimeRegulationEnabled{Time: ft},
		peer.TimeConstrainedEnabled{Time: ft},
		peer.TimeAdvanceGrant{Time: ft},
		peer.RequestRetraction{Handle: peer.MessageRetractionHandle{Federate: 1, Serial: 1}},
	}
	oneof := (&pb.CallbackRequest{}).ProtoReflect().Descriptor().Oneofs().ByName("callbackRequest")
	covered := map[string]bool{}
	for _, ev := range events {
		cb := callbackOf(f, ev)
		if cb == nil {
			t.Errorf("%T: no callback", ev)
			continue
		}
		if _, err := proto.Marshal(cb); err != nil {
			t.Errorf("%T: %v", ev, err)
		}
		covered[string(cb.ProtoReflect().WhichOneof(oneof).Name())] = true
	}
	// meshrti's own notices have no callback.
	for _, ev := range []peer.Event{peer.FederateJoined{}, peer.FederateLost{}, peer.MessagesLost{}} {
		if callbackOf(f, ev) != nil {
			t.Errorf("%T became a callback", ev)
		}
	}
	// The callbacks no event gives, and why.
	apart := map[string]string{
		"reportFederationExecutions":            "pushed by listFederationExecutions itself (federation.go)",
		"reportFederationExecutionMembers":      "pushed by listFederationExecutionMembers itself",
		"reportFederationExecutionDoesNotExist": "pushed by listFederationExecutionMembers itself",
		"federateResigned":                      "the RTI never resigns a federate on its own",
		"flushQueueGrant":                       "a flush queue request is granted with timeAdvanceGrant",
	}
	for i := 0; i < oneof.Fields().Len(); i++ {
		name := string(oneof.Fields().Get(i).Name())
		if !covered[name] && apart[name] == "" {
			t.Errorf("callback %s: no event gives it", name)
		}
	}
	if len(covered)+len(apart) != oneof.Fields().Len() {
		t.Errorf("%d callbacks covered and %d apart, of %d", len(covered), len(apart), oneof.Fields().Len())
	}
}
