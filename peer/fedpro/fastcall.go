package fedpro

import (
	"google.golang.org/protobuf/encoding/protowire"
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
var fastUpdateField, fastUpdateResponse = func() (protowire.Number, []byte) {
	name := (&pb.UpdateAttributeValuesRequest{}).ProtoReflect().Descriptor().FullName()
	fields := (&pb.CallRequest{}).ProtoReflect().Descriptor().Oneofs().ByName("callRequest").Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if fd.Message() != nil && fd.Message().FullName() == name {
			n := fd.Number() + 1
			resp := (&pb.CallResponse{}).ProtoReflect().Descriptor().Fields().ByNumber(n)
			if resp == nil || resp.Message() == nil || resp.Message().Fields().Len() != 0 {
				panic("fedpro: the update call's response is not the empty message after it")
			}
			return fd.Number(), protowire.AppendVarint(protowire.AppendTag(nil, n, protowire.BytesType), 0)
		}
	}
	panic("fedpro: CallRequest has no UpdateAttributeValuesRequest")
}()

// fastUpdate serves payload if it is an UpdateAttributeValuesRequest in
// the plain form every client writes: each field once, every handle
// present, no unknown field. It returns the call's response as Call
// would (an exception, or the empty response's encoding), or nil, nil
// for any other payload, which dispatch then serves: what fastUpdate
// accepts it reads as proto.Unmarshal would, and the update goes to the
// federate as the registered service sends it.
func (s *Session) fastUpdate(payload []byte) (*pb.CallResponse, []byte) {
	obj, vs, tag, ok := decodeFastUpdate(payload)
	if !ok {
		return nil, nil
	}
	f, err := s.federate()
	if err == nil {
		err = f.UpdateAttributeValues(obj, vs, tag)
	}
	if err != nil {
		return exception(err), nil
	}
	return nil, fastUpdateResponse
}

// decodeFastUpdate decodes a CallRequest holding an
// UpdateAttributeValuesRequest, in the plain form fastUpdate accepts.
// Values and tag alias payload (a session keeps a call's payload).
func decodeFastUpdate(payload []byte) (obj peer.ObjectInstanceHandle, vs peer.AttributeValues, tag []byte, ok bool) {
	body, ok := onlyField(payload, fastUpdateField)
	if !ok {
		return obj, nil, nil, false
	}
	var objData, values []byte
	var seen [4]bool
	for len(body) > 0 {
		num, b, n := bytesField(body)
		if n < 0 || num < 1 || num > 3 || seen[num] {
			return obj, nil, nil, false
		}
		seen[num] = true
		body = body[n:]
		switch num {
		case 1:
			if objData, ok = onlyField(b, 1); !ok {
				return obj, nil, nil, false
			}
		case 2:
			values = b
		case 3:
			tag = orNil(b)
		}
	}
	if !seen[1] || !seen[2] {
		return obj, nil, nil, false
	}
	o, err := hla.DecodeObjectInstanceHandle(objData)
	if err != nil {
		return obj, nil, nil, false // the generic path names the error
	}
	vs = make(peer.AttributeValues, 1)
	for len(values) > 0 {
		num, entry, n := bytesField(values)
		if n < 0 || num != 1 {
			return obj, nil, nil, false
		}
		values = values[n:]
		var handle, value []byte
		hasHandle, hasValue := false, false
		for len(entry) > 0 {
			num, b, m := bytesField(entry)
			switch {
			case m < 0:
				return obj, nil, nil, false
			case num == 1 && !hasHandle:
				if handle, ok = onlyField(b, 1); !ok {
					return obj, nil, nil, false
				}
				hasHandle = true
			case num == 2 && !hasValue:
				value, hasValue = orNil(b), true
			default:
				return obj, nil, nil, false
			}
			entry = entry[m:]
		}
		if !hasHandle {
			return obj, nil, nil, false
		}
		a, err := hla.DecodeHandle[peer.AttributeHandle](handle)
		if err != nil {
			return obj, nil, nil, false
		}
		vs[a] = value
	}
	return o, vs, tag, true
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
