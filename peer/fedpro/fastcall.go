package fedpro

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/fedpro/pb"
	"github.com/meshrti/meshrti/peer/hla"
)

// The update call, decoded by hand (fastUpdate): the commonest call a
// client makes, on the path every update takes. proto.Unmarshal builds
// the request's six messages or more through reflection before the
// update can be sent; reading the wire directly builds only the values.

// fastUpdateField and fastUpdateResponse are the CallRequest field
// number of UpdateAttributeValuesRequest and the encoding of its
// CallResponse (the empty UpdateAttributeValuesResponse, the case
// numbered one above).
var fastUpdateField, fastUpdateResponse = fastCallOf(&pb.UpdateAttributeValuesRequest{})

// fastCallOf returns the CallRequest field number of req's call and the
// encoding of its CallResponse, which must be the empty message of the
// case numbered one above.
func fastCallOf(req proto.Message) (protowire.Number, []byte) {
	name := req.ProtoReflect().Descriptor().FullName()
	fields := (&pb.CallRequest{}).ProtoReflect().Descriptor().Oneofs().ByName("callRequest").Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if fd.Message() != nil && fd.Message().FullName() == name {
			n := fd.Number() + 1
			resp := (&pb.CallResponse{}).ProtoReflect().Descriptor().Fields().ByNumber(n)
			if resp == nil || resp.Message() == nil || resp.Message().Fields().Len() != 0 {
				panic(fmt.Sprintf("fedpro: the response of %s is not the empty message after it", name))
			}
			return fd.Number(), protowire.AppendVarint(protowire.AppendTag(nil, n, protowire.BytesType), 0)
		}
	}
	panic(fmt.Sprintf("fedpro: CallRequest has no %s", name))
}

// fastUpdate serves payload if it is an UpdateAttributeValuesRequest in
// the plain form every client writes: each field once, every handle
// present, no unknown field. It returns the call's response as Call
// would (an exception, or the empty response's encoding), or nil, nil
// for any other payload, which dispatch then serves: what fastUpdate
// accepts it reads as proto.Unmarshal would, and the update goes to the
// federate as the service in the table sends it.
func (s *Session) fastUpdate(payload []byte) (*pb.CallResponse, []byte) {
	obj, vs, tag, ok := decodeFastUpdate(payload)
	if !ok {
		return nil, nil
	}
	return s.serveFast(func(f *peer.Federate) error { return f.UpdateAttributeValues(obj, vs, tag) }, fastUpdateResponse)
}

// serveFast answers a call a hand decoder took: call makes it on the
// session's federate; the response is the exception, or resp, the
// encoding of the call's empty response.
func (s *Session) serveFast(call func(*peer.Federate) error, resp []byte) (*pb.CallResponse, []byte) {
	f, err := s.federate()
	if err == nil {
		err = call(f)
	}
	if err != nil {
		return exception(err), nil
	}
	return nil, resp
}

// decodeFastUpdate decodes a CallRequest holding an
// UpdateAttributeValuesRequest, in the plain form fastUpdate accepts.
// Values and tag alias payload (a session keeps a call's payload).
func decodeFastUpdate(payload []byte) (obj peer.ObjectInstanceHandle, vs peer.AttributeValues, tag []byte, ok bool) {
	body, ok := onlyField(payload, fastUpdateField)
	if !ok {
		return obj, nil, nil, false
	}
	objData, vs, tag, ok := decodeSendBody[peer.AttributeHandle](body)
	if !ok {
		return obj, nil, nil, false
	}
	o, err := hla.DecodeObjectInstanceHandle(objData)
	if err != nil {
		return obj, nil, nil, false // the generic path names the error
	}
	return o, vs, tag, true
}

// decodeSendBody decodes the body of an UpdateAttributeValuesRequest or
// a SendInteractionRequest, which share their layout (the object
// instance or interaction class handle, field 1; the handle-value map,
// field 2; the tag, field 3), in the plain form: each field once, the
// first two present, every handle present and decoding, nothing
// unknown. It returns the first handle's data, the values and the tag,
// aliasing body.
func decodeSendBody[H ~uint64](body []byte) (first []byte, vs map[H][]byte, tag []byte, ok bool) {
	var values []byte
	var seen [4]bool
	for len(body) > 0 {
		num, b, n := bytesField(body)
		if n < 0 || num < 1 || num > 3 || seen[num] {
			return nil, nil, nil, false
		}
		seen[num] = true
		body = body[n:]
		switch num {
		case 1:
			if first, ok = onlyField(b, 1); !ok {
				return nil, nil, nil, false
			}
		case 2:
			values = b
		case 3:
			tag = orNil(b)
		}
	}
	if !seen[1] || !seen[2] {
		return nil, nil, nil, false
	}
	vs = make(map[H][]byte, 1)
	for len(values) > 0 {
		num, entry, n := bytesField(values)
		if n < 0 || num != 1 {
			return nil, nil, nil, false
		}
		values = values[n:]
		var handle, value []byte
		hasHandle, hasValue := false, false
		for len(entry) > 0 {
			num, b, m := bytesField(entry)
			switch {
			case m < 0:
				return nil, nil, nil, false
			case num == 1 && !hasHandle:
				if handle, ok = onlyField(b, 1); !ok {
					return nil, nil, nil, false
				}
				hasHandle = true
			case num == 2 && !hasValue:
				value, hasValue = orNil(b), true
			default:
				return nil, nil, nil, false
			}
			entry = entry[m:]
		}
		if !hasHandle {
			return nil, nil, nil, false
		}
		h, err := hla.DecodeHandle[H](handle)
		if err != nil {
			return nil, nil, nil, false
		}
		vs[h] = value
	}
	return first, vs, tag, true
}

// The interaction call, decoded by hand as the update is
// (fastInteraction).

// fastInteractionCallField and fastInteractionResponse are the
// CallRequest field number of SendInteractionRequest and the encoding of
// its CallResponse (the empty SendInteractionResponse).
var fastInteractionCallField, fastInteractionResponse = fastCallOf(&pb.SendInteractionRequest{})

// fastInteraction is fastUpdate for a SendInteractionRequest: served as
// the service in the table serves it, or nil, nil for any other payload.
func (s *Session) fastInteraction(payload []byte) (*pb.CallResponse, []byte) {
	class, vs, tag, ok := decodeFastInteraction(payload)
	if !ok {
		return nil, nil
	}
	return s.serveFast(func(f *peer.Federate) error { return f.SendInteraction(class, vs, tag) }, fastInteractionResponse)
}

// decodeFastInteraction decodes a CallRequest holding a
// SendInteractionRequest, in the plain form decodeSendBody takes.
// Values and tag alias payload.
func decodeFastInteraction(payload []byte) (class peer.InteractionClassHandle, vs peer.ParameterValues, tag []byte, ok bool) {
	body, ok := onlyField(payload, fastInteractionCallField)
	if !ok {
		return 0, nil, nil, false
	}
	classData, vs, tag, ok := decodeSendBody[peer.ParameterHandle](body)
	if !ok {
		return 0, nil, nil, false
	}
	c, err := hla.DecodeHandle[peer.InteractionClassHandle](classData)
	if err != nil {
		return 0, nil, nil, false // the generic path names the error
	}
	return c, vs, tag, true
}

// bytesField reads one length-delimited field from b: its number, its
// bytes and the count of b it took; n < 0 if b does not start with one.
func bytesField(b []byte) (protoreflect.FieldNumber, []byte, int) {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 || typ != protowire.BytesType {
		return 0, nil, -1
	}
	v, m := protowire.ConsumeBytes(b[n:])
	if m < 0 {
		return 0, nil, -1
	}
	return num, v, n + m
}

// onlyField returns the bytes of field num when b is that one
// length-delimited field and nothing else (a handle: its data).
func onlyField(b []byte, num protowire.Number) ([]byte, bool) {
	got, v, n := bytesField(b)
	if n < 0 || got != num || n != len(b) {
		return nil, false
	}
	return orNil(v), true
}

// orNil is b, or nil when b is empty: proto.Unmarshal gives a proto3
// bytes field that is present but empty as nil, as if absent.
func orNil(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}
