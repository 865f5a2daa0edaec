package fedpro

import (
	"bytes"
	"testing"

	"github.com/meshrti/meshrti/peer/fedpro/pb"
)

// Through the Federate Protocol: Horn, which fpFOM declares directed at
// Car, is accepted; Wave, an interaction class it does not declare there,
// is refused with InteractionClassNotDefined by publish, subscribe (both
// kinds) and send.
func TestConformanceDirectedInteractionsDeclared(t *testing.T) {
	a, b, car, speed := newFPNet(t).pairJoined(t)
	horn, wave := a.interactionHandle("Horn"), a.interactionHandle("Wave")
	set := func(hs ...*pb.InteractionClassHandle) *pb.InteractionClassHandleSet {
		return &pb.InteractionClassHandleSet{InteractionClassHandle: hs}
	}
	attrs := &pb.AttributeHandleSet{AttributeHandle: []*pb.AttributeHandle{speed}}
	a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_PublishObjectClassAttributesRequest{PublishObjectClassAttributesRequest: &pb.PublishObjectClassAttributesRequest{ObjectClass: car, Attributes: attrs}}})
	b.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_SubscribeObjectClassAttributesRequest{SubscribeObjectClassAttributesRequest: &pb.SubscribeObjectClassAttributesRequest{ObjectClass: car, Attributes: attrs}}})
	obj := a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_RegisterObjectInstanceRequest{RegisterObjectInstanceRequest: &pb.RegisterObjectInstanceRequest{ObjectClass: car}}}).GetRegisterObjectInstanceResponse().GetResult()
	b.wait("discover", func(cb *pb.CallbackRequest) bool { return cb.GetDiscoverObjectInstance() != nil })

	const want = "InteractionClassNotDefined"
	b.fails(&pb.CallRequest{CallRequest: &pb.CallRequest_PublishObjectClassDirectedInteractionsRequest{PublishObjectClassDirectedInteractionsRequest: &pb.PublishObjectClassDirectedInteractionsRequest{ObjectClass: car, InteractionClasses: set(wave)}}}, want)
	b.fails(&pb.CallRequest{CallRequest: &pb.CallRequest_PublishObjectClassDirectedInteractionsRequest{PublishObjectClassDirectedInteractionsRequest: &pb.PublishObjectClassDirectedInteractionsRequest{ObjectClass: car, InteractionClasses: set(horn, wave)}}}, want)
	a.fails(&pb.CallRequest{CallRequest: &pb.CallRequest_SubscribeObjectClassDirectedInteractionsRequest{SubscribeObjectClassDirectedInteractionsRequest: &pb.SubscribeObjectClassDirectedInteractionsRequest{ObjectClass: car, InteractionClasses: set(wave)}}}, want)
	a.fails(&pb.CallRequest{CallRequest: &pb.CallRequest_SubscribeObjectClassDirectedInteractionsUniversallyRequest{SubscribeObjectClassDirectedInteractionsUniversallyRequest: &pb.SubscribeObjectClassDirectedInteractionsUniversallyRequest{ObjectClass: car, InteractionClasses: set(wave)}}}, want)
	b.fails(&pb.CallRequest{CallRequest: &pb.CallRequest_SendDirectedInteractionRequest{SendDirectedInteractionRequest: &pb.SendDirectedInteractionRequest{
		InteractionClass: wave, ObjectInstance: obj, ParameterValues: &pb.ParameterHandleValueMap{}}}}, want)

	// The declared one goes through.
	a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_SubscribeObjectClassDirectedInteractionsRequest{SubscribeObjectClassDirectedInteractionsRequest: &pb.SubscribeObjectClassDirectedInteractionsRequest{ObjectClass: car, InteractionClasses: set(horn)}}})
	b.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_PublishObjectClassDirectedInteractionsRequest{PublishObjectClassDirectedInteractionsRequest: &pb.PublishObjectClassDirectedInteractionsRequest{ObjectClass: car, InteractionClasses: set(horn)}}})
	b.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_SendDirectedInteractionRequest{SendDirectedInteractionRequest: &pb.SendDirectedInteractionRequest{
		InteractionClass: horn, ObjectInstance: obj, ParameterValues: &pb.ParameterHandleValueMap{}, UserSuppliedTag: []byte("declared")}}})
	r := a.wait("directed interaction", func(cb *pb.CallbackRequest) bool { return cb.GetReceiveDirectedInteraction() != nil }).GetReceiveDirectedInteraction()
	if string(r.GetUserSuppliedTag()) != "declared" || !bytes.Equal(r.GetInteractionClass().GetData(), horn.GetData()) {
		t.Errorf("received %v", r)
	}
}
