package fedpro

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/fedpro/pb"
)

// The hand encoder writes a reflection callback byte for byte as
// proto.Marshal does, and leaves any other callback to it.
func TestMarshalCallbackReflect(t *testing.T) {
	// The schema the encoder writes: a change to it must fail here.
	for msg, fields := range map[proto.Message]int{&pb.ReflectAttributeValues{}: 6, &pb.AttributeHandleValueMap{}: 1, &pb.AttributeHandleValue{}: 2,
		&pb.ObjectInstanceHandle{}: 1, &pb.AttributeHandle{}: 1, &pb.TransportationTypeHandle{}: 1, &pb.FederateHandle{}: 1} {
		if n := msg.ProtoReflect().Descriptor().Fields().Len(); n != fields {
			t.Errorf("%s has %d fields; the hand encoder knows %d", msg.ProtoReflect().Descriptor().FullName(), n, fields)
		}
	}
	attr := func(h uint64, v string) *pb.AttributeHandleValue {
		return &pb.AttributeHandleValue{AttributeHandle: pbAttr(peer.AttributeHandle(h)), Value: []byte(v)}
	}
	big := string(bytes.Repeat([]byte{9}, 1000))
	obj := pbObj(peer.ObjectInstanceHandle{})
	reflects := []*pb.ReflectAttributeValues{
		{},
		{ObjectInstance: obj},
		{ObjectInstance: &pb.ObjectInstanceHandle{}, AttributeValues: &pb.AttributeHandleValueMap{}},
		{ObjectInstance: obj, AttributeValues: &pb.AttributeHandleValueMap{AttributeHandleValue: []*pb.AttributeHandleValue{attr(1, "a"), attr(200, big), attr(3, ""), {}}},
			UserSuppliedTag: []byte("tag"), TransportationType: pbTransportName("HLAbestEffort"), ProducingFederate: &pb.FederateHandle{Data: []byte{0, 0, 0, 7}}},
		{AttributeValues: &pb.AttributeHandleValueMap{AttributeHandleValue: []*pb.AttributeHandleValue{attr(1, big+big)}}, TransportationType: &pb.TransportationTypeHandle{}, ProducingFederate: &pb.FederateHandle{}},
	}
	// What callbackOf builds from an event's values.
	reflects = append(reflects, &pb.ReflectAttributeValues{ObjectInstance: obj, AttributeValues: pbAttrValues(peer.AttributeValues{1: []byte("x"), 2: []byte(big)}), TransportationType: pbTransportName("HLAreliable")})
	for i, r := range reflects {
		cb := &pb.CallbackRequest{CallbackRequest: &pb.CallbackRequest_ReflectAttributeValues{ReflectAttributeValues: r}}
		if _, ok := reflectSize(r); !ok {
			t.Errorf("%d: not taken by the hand encoder", i)
		}
		got, err := marshalCallback(cb)
		if err != nil {
			t.Fatal(err)
		}
		want, err := proto.Marshal(cb)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%d: % x\nwant % x", i, got, want)
		}
	}
	for name, r := range map[string]*pb.ReflectAttributeValues{
		"regions":   {ObjectInstance: obj, OptionalSentRegions: &pb.ConveyedRegionSet{}},
		"nil entry": {AttributeValues: &pb.AttributeHandleValueMap{AttributeHandleValue: []*pb.AttributeHandleValue{nil}}},
	} {
		if _, ok := reflectSize(r); ok {
			t.Errorf("%s: taken by the hand encoder", name)
		}
	}
	other := &pb.CallbackRequest{CallbackRequest: &pb.CallbackRequest_DiscoverObjectInstance{DiscoverObjectInstance: &pb.DiscoverObjectInstance{ObjectInstance: obj, ObjectInstanceName: "x"}}}
	got, err := marshalCallback(other)
	want, _ := proto.Marshal(other)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("discover: % x, %v; want % x", got, err, want)
	}
}
