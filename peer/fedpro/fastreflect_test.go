package fedpro

import (
	"bytes"
	"slices"
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

// fastCallback writes a reflection or received interaction without a
// time stamp as marshalCallback(callbackWith(...)) does: byte for byte
// when the values have at most one entry (a map's entries come out in
// no fixed order), as the same message otherwise; and takes no other
// event.
func TestFastCallback(t *testing.T) {
	for msg, fields := range map[proto.Message]int{&pb.ReceiveInteraction{}: 6, &pb.ParameterHandleValueMap{}: 1, &pb.ParameterHandleValue{}: 2, &pb.InteractionClassHandle{}: 1, &pb.ParameterHandle{}: 1} {
		if n := msg.ProtoReflect().Descriptor().Fields().Len(); n != fields {
			t.Errorf("%s has %d fields; the hand encoder knows %d", msg.ProtoReflect().Descriptor().FullName(), n, fields)
		}
	}
	big := bytes.Repeat([]byte{7}, 300)
	obj := peer.ObjectInstanceHandle{Federate: 3, Serial: 1 << 40}
	var events []peer.Event
	for _, tag := range [][]byte{nil, {}, []byte("tag"), big} {
		for _, tr := range []string{"", "HLAreliable", "HLAbestEffort"} {
			events = append(events,
				peer.ReflectAttributeValues{Object: obj, Tag: tag, Transportation: tr, Producer: 9},
				peer.ReflectAttributeValues{Object: obj, Values: peer.AttributeValues{}, Tag: tag, Transportation: tr},
				peer.ReflectAttributeValues{Values: peer.AttributeValues{1: []byte("v")}, Tag: tag, Transportation: tr, Producer: 1 << 50},
				peer.ReflectAttributeValues{Object: obj, Values: peer.AttributeValues{1 << 33: nil}, Tag: tag, Transportation: tr},
				peer.ReflectAttributeValues{Object: obj, Values: peer.AttributeValues{1: []byte("a"), 2: big, 3: {}, 4: []byte("d")}, Tag: tag, Transportation: tr, Producer: 2},
				peer.ReceiveInteraction{Class: 5, Tag: tag, Transportation: tr, Producer: 9},
				peer.ReceiveInteraction{Class: 1 << 60, Values: peer.ParameterValues{7: big}, Tag: tag, Transportation: tr},
				peer.ReceiveInteraction{Values: peer.ParameterValues{7: []byte("x"), 8: nil, 9: big}, Tag: tag, Transportation: tr, Producer: 4},
			)
		}
	}
	for i, ev := range events {
		for _, convey := range []bool{false, true} {
			got, ok := fastCallback(ev, convey)
			if !ok {
				t.Fatalf("%d: %T not taken", i, ev)
			}
			cb := callbackWith(nil, ev, convey)
			want, err := marshalCallback(cb)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			switch e := ev.(type) {
			case peer.ReflectAttributeValues:
				n = len(e.Values)
			case peer.ReceiveInteraction:
				n = len(e.Values)
			}
			if n <= 1 && !bytes.Equal(got, want) {
				t.Errorf("%d (convey %v): % x\nwant % x", i, convey, got, want)
			}
			var back pb.CallbackRequest
			if err := proto.Unmarshal(got, &back); err != nil {
				t.Fatalf("%d: %v", i, err)
			}
			sortValues(&back)
			sortValues(cb)
			if !proto.Equal(&back, cb) {
				t.Errorf("%d (convey %v): %v\nwant %v", i, convey, &back, cb)
			}
			if len(got) != len(want) {
				t.Errorf("%d: %d bytes, want %d", i, len(got), len(want))
			}
		}
	}
	tsTime := peer.ReflectAttributeValues{Object: obj, Time: fakeTime{}}
	for _, ev := range []peer.Event{tsTime, peer.ReceiveInteraction{Class: 1, Time: fakeTime{}}, peer.DiscoverObjectInstance{Object: obj}, peer.TimeAdvanceGrant{}} {
		if _, ok := fastCallback(ev, true); ok {
			t.Errorf("%T (%v) taken by the hand encoder", ev, ev)
		}
	}
}

// sortValues orders the value entries of a reflection or received
// interaction by handle, so that two encodings of one map compare.
func sortValues(cb *pb.CallbackRequest) {
	if m := cb.GetReflectAttributeValues().GetAttributeValues(); m != nil {
		slices.SortFunc(m.AttributeHandleValue, func(a, b *pb.AttributeHandleValue) int {
			return bytes.Compare(a.GetAttributeHandle().GetData(), b.GetAttributeHandle().GetData())
		})
	}
	if m := cb.GetReceiveInteraction().GetParameterValues(); m != nil {
		slices.SortFunc(m.ParameterHandleValue, func(a, b *pb.ParameterHandleValue) int {
			return bytes.Compare(a.GetParameterHandle().GetData(), b.GetParameterHandle().GetData())
		})
	}
}

// fakeTime is a logical time, for events that have one.
type fakeTime struct{ peer.LogicalTime }

// BenchmarkCallbackReflect is the reflection callback of one 100-byte
// value, through callbackOf and marshalCallback, and straight from the
// event.
func BenchmarkCallbackReflect(b *testing.B) {
	ev := peer.ReflectAttributeValues{Object: peer.ObjectInstanceHandle{Federate: 1, Serial: 2}, Values: peer.AttributeValues{3: make([]byte, 100)}, Transportation: "HLAreliable"}
	b.Run("messages", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := marshalCallback(callbackWith(nil, ev, false)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := fastCallback(ev, false); !ok {
				b.Fatal("not taken")
			}
		}
	})
}
