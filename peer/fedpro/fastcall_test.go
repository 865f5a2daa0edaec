package fedpro

import (
	"bytes"
	"maps"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/fedpro/pb"
)

// An update the hand decoder accepts decodes as proto.Unmarshal reads
// it; every other payload is left to the generic path.
func TestFastUpdateDecode(t *testing.T) {
	obj := pbObj(peer.ObjectInstanceHandle{})
	if b := pbObj(peer.ObjectInstanceHandle{}).GetData(); len(b) == 0 {
		t.Fatal("an object handle encodes to nothing")
	}
	attr := func(h uint64) *pb.AttributeHandle { return pbAttr(peer.AttributeHandle(h)) }
	update := func(r *pb.UpdateAttributeValuesRequest) []byte {
		b, err := proto.Marshal(&pb.CallRequest{CallRequest: &pb.CallRequest_UpdateAttributeValuesRequest{UpdateAttributeValuesRequest: r}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	values := func(vs ...*pb.AttributeHandleValue) *pb.AttributeHandleValueMap {
		return &pb.AttributeHandleValueMap{AttributeHandleValue: vs}
	}
	plain := update(&pb.UpdateAttributeValuesRequest{ObjectInstance: obj, AttributeValues: values(&pb.AttributeHandleValue{AttributeHandle: attr(3), Value: []byte("v")})})
	accepted := map[string][]byte{
		"one value": plain,
		"tag": update(&pb.UpdateAttributeValuesRequest{ObjectInstance: obj, UserSuppliedTag: []byte("tag"),
			AttributeValues: values(&pb.AttributeHandleValue{AttributeHandle: attr(3), Value: []byte("v")}, &pb.AttributeHandleValue{AttributeHandle: attr(4), Value: bytes.Repeat([]byte{7}, 1000)})}),
		"no values":      update(&pb.UpdateAttributeValuesRequest{ObjectInstance: obj, AttributeValues: values()}),
		"empty value":    update(&pb.UpdateAttributeValuesRequest{ObjectInstance: obj, AttributeValues: values(&pb.AttributeHandleValue{AttributeHandle: attr(1)})}),
		"a handle twice": update(&pb.UpdateAttributeValuesRequest{ObjectInstance: obj, AttributeValues: values(&pb.AttributeHandleValue{AttributeHandle: attr(1), Value: []byte("a")}, &pb.AttributeHandleValue{AttributeHandle: attr(1), Value: []byte("b")})}),
	}
	// A tag present but empty: field 3 of the request, length 0.
	{
		var r pb.UpdateAttributeValuesRequest
		r.ObjectInstance, r.AttributeValues = obj, values(&pb.AttributeHandleValue{AttributeHandle: attr(2), Value: []byte("x")})
		inner, _ := proto.Marshal(&r)
		inner = protowire.AppendBytes(protowire.AppendTag(inner, 3, protowire.BytesType), nil)
		accepted["empty tag, given"] = protowire.AppendBytes(protowire.AppendTag(nil, fastUpdateField, protowire.BytesType), inner)
	}
	refused := map[string][]byte{
		"no object":      update(&pb.UpdateAttributeValuesRequest{AttributeValues: values()}),
		"no values":      update(&pb.UpdateAttributeValuesRequest{ObjectInstance: obj}),
		"bad object":     update(&pb.UpdateAttributeValuesRequest{ObjectInstance: &pb.ObjectInstanceHandle{Data: []byte{1}}, AttributeValues: values()}),
		"no handle":      update(&pb.UpdateAttributeValuesRequest{ObjectInstance: obj, AttributeValues: values(&pb.AttributeHandleValue{Value: []byte("v")})}),
		"bad handle":     update(&pb.UpdateAttributeValuesRequest{ObjectInstance: obj, AttributeValues: values(&pb.AttributeHandleValue{AttributeHandle: &pb.AttributeHandle{Data: []byte{1, 2, 3}}})}),
		"field twice":    append(plain[:len(plain):len(plain)], plain...),
		"unknown field":  protowire.AppendBytes(protowire.AppendTag(plain[:len(plain):len(plain)], 1, protowire.BytesType), nil),
		"cut short":      plain[:len(plain)-1],
		"another call":   mustMarshal(t, &pb.CallRequest{CallRequest: &pb.CallRequest_SendInteractionRequest{SendInteractionRequest: &pb.SendInteractionRequest{}}}),
		"timed update":   mustMarshal(t, &pb.CallRequest{CallRequest: &pb.CallRequest_UpdateAttributeValuesWithTimeRequest{UpdateAttributeValuesWithTimeRequest: &pb.UpdateAttributeValuesWithTimeRequest{ObjectInstance: obj, AttributeValues: values()}}}),
		"empty":          nil,
		"garbage":        {0xff, 0xff, 0xff},
		"varint in body": protowire.AppendBytes(protowire.AppendTag(nil, fastUpdateField, protowire.BytesType), protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 1)),
	}
	checkFastDecode(t, accepted, refused, decodeFastUpdate, func(r *pb.CallRequest) (peer.ObjectInstanceHandle, peer.AttributeValues, []byte, error) {
		u := r.GetUpdateAttributeValuesRequest()
		obj, vs, err := objValues(u.GetObjectInstance(), u.GetAttributeValues())
		return obj, vs, u.GetUserSuppliedTag(), err
	})
	want, _ := proto.Marshal(&pb.CallResponse{CallResponse: &pb.CallResponse_UpdateAttributeValuesResponse{UpdateAttributeValuesResponse: &pb.UpdateAttributeValuesResponse{}}})
	if !bytes.Equal(fastUpdateResponse, want) {
		t.Errorf("the update's response % x, want % x", fastUpdateResponse, want)
	}
}

func mustMarshal(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// An interaction the hand decoder accepts decodes as proto.Unmarshal
// reads it; every other payload is left to the generic path.
func TestFastInteractionDecode(t *testing.T) {
	class := pbInteraction(5)
	param := func(h uint64) *pb.ParameterHandle { return pbParam(peer.ParameterHandle(h)) }
	send := func(r *pb.SendInteractionRequest) []byte {
		return mustMarshal(t, &pb.CallRequest{CallRequest: &pb.CallRequest_SendInteractionRequest{SendInteractionRequest: r}})
	}
	values := func(vs ...*pb.ParameterHandleValue) *pb.ParameterHandleValueMap {
		return &pb.ParameterHandleValueMap{ParameterHandleValue: vs}
	}
	plain := send(&pb.SendInteractionRequest{InteractionClass: class, ParameterValues: values(&pb.ParameterHandleValue{ParameterHandle: param(3), Value: []byte("v")})})
	accepted := map[string][]byte{
		"one value": plain,
		"tag": send(&pb.SendInteractionRequest{InteractionClass: class, UserSuppliedTag: []byte("tag"),
			ParameterValues: values(&pb.ParameterHandleValue{ParameterHandle: param(3), Value: []byte("v")}, &pb.ParameterHandleValue{ParameterHandle: param(1 << 40), Value: bytes.Repeat([]byte{7}, 1000)})}),
		"no values":      send(&pb.SendInteractionRequest{InteractionClass: class, ParameterValues: values()}),
		"empty value":    send(&pb.SendInteractionRequest{InteractionClass: class, ParameterValues: values(&pb.ParameterHandleValue{ParameterHandle: param(1)})}),
		"a handle twice": send(&pb.SendInteractionRequest{InteractionClass: class, ParameterValues: values(&pb.ParameterHandleValue{ParameterHandle: param(1), Value: []byte("a")}, &pb.ParameterHandleValue{ParameterHandle: param(1), Value: []byte("b")})}),
	}
	refused := map[string][]byte{
		"no class":      send(&pb.SendInteractionRequest{ParameterValues: values()}),
		"no values":     send(&pb.SendInteractionRequest{InteractionClass: class}),
		"bad class":     send(&pb.SendInteractionRequest{InteractionClass: &pb.InteractionClassHandle{Data: []byte{1}}, ParameterValues: values()}),
		"no handle":     send(&pb.SendInteractionRequest{InteractionClass: class, ParameterValues: values(&pb.ParameterHandleValue{Value: []byte("v")})}),
		"bad handle":    send(&pb.SendInteractionRequest{InteractionClass: class, ParameterValues: values(&pb.ParameterHandleValue{ParameterHandle: &pb.ParameterHandle{Data: []byte{1, 2, 3}}})}),
		"field twice":   append(plain[:len(plain):len(plain)], plain...),
		"unknown field": protowire.AppendBytes(protowire.AppendTag(plain[:len(plain):len(plain)], 1, protowire.BytesType), nil),
		"cut short":     plain[:len(plain)-1],
		"an update":     mustMarshal(t, &pb.CallRequest{CallRequest: &pb.CallRequest_UpdateAttributeValuesRequest{UpdateAttributeValuesRequest: &pb.UpdateAttributeValuesRequest{ObjectInstance: pbObj(peer.ObjectInstanceHandle{}), AttributeValues: &pb.AttributeHandleValueMap{}}}}),
		"timed":         mustMarshal(t, &pb.CallRequest{CallRequest: &pb.CallRequest_SendInteractionWithTimeRequest{SendInteractionWithTimeRequest: &pb.SendInteractionWithTimeRequest{InteractionClass: class, ParameterValues: values()}}}),
		"empty":         nil,
	}
	checkFastDecode(t, accepted, refused, decodeFastInteraction, func(r *pb.CallRequest) (peer.InteractionClassHandle, peer.ParameterValues, []byte, error) {
		s := r.GetSendInteractionRequest()
		class, vs, err := interactionValues(s.GetInteractionClass(), s.GetParameterValues())
		return class, vs, s.GetUserSuppliedTag(), err
	})
	want := mustMarshal(t, &pb.CallResponse{CallResponse: &pb.CallResponse_SendInteractionResponse{SendInteractionResponse: &pb.SendInteractionResponse{}}})
	if !bytes.Equal(fastInteractionResponse, want) {
		t.Errorf("the interaction's response % x, want % x", fastInteractionResponse, want)
	}
}

// An update and an interaction through the hand decoders are answered
// as through the generic path: the empty response, or the exception,
// counted.
func TestFastCallsAnswered(t *testing.T) {
	update := mustMarshal(t, &pb.CallRequest{CallRequest: &pb.CallRequest_UpdateAttributeValuesRequest{UpdateAttributeValuesRequest: &pb.UpdateAttributeValuesRequest{
		ObjectInstance: pbObj(peer.ObjectInstanceHandle{}), AttributeValues: &pb.AttributeHandleValueMap{}}}})
	interaction := mustMarshal(t, &pb.CallRequest{CallRequest: &pb.CallRequest_SendInteractionRequest{SendInteractionRequest: &pb.SendInteractionRequest{
		InteractionClass: pbInteraction(1), ParameterValues: &pb.ParameterHandleValueMap{}}}})
	for _, c := range []struct {
		name    string
		payload []byte
		byHand  bool
	}{
		{"update", update, func() bool { _, _, _, ok := decodeFastUpdate(update); return ok }()},
		{"interaction", interaction, func() bool { _, _, _, ok := decodeFastInteraction(interaction); return ok }()},
	} {
		if !c.byHand {
			t.Errorf("the %s is not decoded by hand", c.name)
			continue
		}
		h := NewHost(Config{})
		s := h.NewSession(func([]byte) error { return nil })
		var resp pb.CallResponse
		if err := proto.Unmarshal(s.Call(c.payload), &resp); err != nil {
			t.Fatal(err)
		}
		s.Close(nil)
		if got := resp.GetExceptionData().GetExceptionName(); got != "NotConnected" {
			t.Errorf("an %s before connecting answered %v, want NotConnected", c.name, &resp)
		}
		if st := h.Stats(); st.Calls != 1 || st.Exceptions != 1 {
			t.Errorf("%s: stats %+v, want one call, one exception", c.name, st)
		}
	}
}

// BenchmarkSendInteractionCall is the decoding of an interaction call of
// one 100-byte value through protobuf and by hand.
func BenchmarkSendInteractionCall(b *testing.B) {
	payload, err := proto.Marshal(&pb.CallRequest{CallRequest: &pb.CallRequest_SendInteractionRequest{SendInteractionRequest: &pb.SendInteractionRequest{
		InteractionClass: pbInteraction(1), ParameterValues: pbParamValues(peer.ParameterValues{2: make([]byte, 100)})}}})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("protobuf", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var req pb.CallRequest
			if err := proto.Unmarshal(payload, &req); err != nil {
				b.Fatal(err)
			}
			r := req.GetSendInteractionRequest()
			if _, _, err := interactionValues(r.GetInteractionClass(), r.GetParameterValues()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("hand", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, _, ok := decodeFastInteraction(payload); !ok {
				b.Fatal("not taken")
			}
		}
	})
}

// checkDecoded compares what a hand decoder made of a call (its object
// or class, values and tag) with what protobuf made of it: the same
// values, and nil where protobuf has nil (an absent value or tag).
// checkFastDecode checks that decode, a hand decoder, accepts each
// payload of accepted and gets from it what the generic path gets
// (proto.Unmarshal, then generic on the request), and that it refuses
// each payload of refused.
func checkFastDecode[K comparable, M ~map[H][]byte, H comparable](t *testing.T, accepted, refused map[string][]byte,
	decode func([]byte) (K, M, []byte, bool), generic func(*pb.CallRequest) (K, M, []byte, error)) {
	t.Helper()
	for name, payload := range accepted {
		key, vs, tag, ok := decode(payload)
		if !ok {
			t.Errorf("%s: not accepted", name)
			continue
		}
		var req pb.CallRequest
		if err := proto.Unmarshal(payload, &req); err != nil {
			t.Fatal(err)
		}
		wantKey, want, wantTag, err := generic(&req)
		if err != nil {
			t.Fatal(err)
		}
		checkDecoded(t, name, key, wantKey, vs, want, tag, wantTag)
	}
	for name, payload := range refused {
		if _, _, _, ok := decode(payload); ok {
			t.Errorf("%s: accepted", name)
		}
	}
}

func checkDecoded[K comparable, M ~map[H][]byte, H comparable](t *testing.T, name string, key, wantKey K, vs, want M, tag, wantTag []byte) {
	t.Helper()
	if key != wantKey || !maps.EqualFunc(vs, want, bytes.Equal) || !bytes.Equal(tag, wantTag) || (tag == nil) != (wantTag == nil) {
		t.Errorf("%s: decoded %v %v %q, want %v %v %q", name, key, vs, tag, wantKey, want, wantTag)
	}
	for h, v := range vs {
		if (v == nil) != (want[h] == nil) {
			t.Errorf("%s: value of %v nil %v, want nil %v", name, h, v == nil, want[h] == nil)
		}
	}
}
