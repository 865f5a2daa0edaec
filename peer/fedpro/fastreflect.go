package fedpro

import (
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/meshrti/meshrti/peer/fedpro/pb"
)

// The reflection callback, encoded by hand (appendFastReflect): the
// commonest callback, on the path every update takes. proto.Marshal
// walks the message through reflection, twice (size, then bytes); the
// encoder here writes the same bytes from the fields directly.

// fastReflectField is the CallbackRequest field number of
// ReflectAttributeValues.
var fastReflectField = func() protowire.Number {
	fd := (&pb.CallbackRequest{}).ProtoReflect().Descriptor().Fields().ByName("reflectAttributeValues")
	if fd == nil {
		panic("fedpro: CallbackRequest has no reflectAttributeValues")
	}
	return fd.Number()
}()

// marshalCallback encodes cb as proto.Marshal does, by hand for a
// reflection in the form callbackOf builds.
func marshalCallback(cb *pb.CallbackRequest) ([]byte, error) {
	if r := cb.GetReflectAttributeValues(); r != nil {
		if n, ok := reflectSize(r); ok {
			b := make([]byte, 0, protowire.SizeTag(fastReflectField)+protowire.SizeBytes(n))
			b = protowire.AppendVarint(protowire.AppendTag(b, fastReflectField, protowire.BytesType), uint64(n))
			return appendReflect(b, r), nil
		}
	}
	return proto.Marshal(cb)
}

// reflectSize is the encoded size of r, and whether the hand encoder
// takes r: no field but those callbackOf sets, no nil value entry.
func reflectSize(r *pb.ReflectAttributeValues) (int, bool) {
	if r.OptionalSentRegions != nil || len(r.ProtoReflect().GetUnknown()) > 0 {
		return 0, false
	}
	n := 0
	if r.ObjectInstance != nil {
		n += msgSize(1, handleSize(r.ObjectInstance.Data))
	}
	if m := r.AttributeValues; m != nil {
		k, ok := valuesSize(m)
		if !ok {
			return 0, false
		}
		n += msgSize(2, k)
	}
	if len(r.UserSuppliedTag) > 0 {
		n += protowire.SizeTag(3) + protowire.SizeBytes(len(r.UserSuppliedTag))
	}
	if r.TransportationType != nil {
		n += msgSize(4, handleSize(r.TransportationType.Data))
	}
	if r.ProducingFederate != nil {
		n += msgSize(5, handleSize(r.ProducingFederate.Data))
	}
	return n, true
}

// valuesSize is the encoded size of m's fields.
func valuesSize(m *pb.AttributeHandleValueMap) (int, bool) {
	n := 0
	for _, v := range m.AttributeHandleValue {
		if v == nil {
			return 0, false
		}
		n += msgSize(1, valueSize(v))
	}
	return n, true
}

func valueSize(v *pb.AttributeHandleValue) int {
	n := 0
	if v.AttributeHandle != nil {
		n += msgSize(1, handleSize(v.AttributeHandle.Data))
	}
	if len(v.Value) > 0 {
		n += protowire.SizeTag(2) + protowire.SizeBytes(len(v.Value))
	}
	return n
}

// handleSize is the encoded size of a handle message's fields: its data.
func handleSize(data []byte) int {
	if len(data) == 0 {
		return 0
	}
	return protowire.SizeTag(1) + protowire.SizeBytes(len(data))
}

// msgSize is the size of a message field numbered num whose fields take
// n bytes.
func msgSize(num protowire.Number, n int) int {
	return protowire.SizeTag(num) + protowire.SizeBytes(n)
}

func appendReflect(b []byte, r *pb.ReflectAttributeValues) []byte {
	if r.ObjectInstance != nil {
		b = appendHandle(b, 1, r.ObjectInstance.Data)
	}
	if m := r.AttributeValues; m != nil {
		k, _ := valuesSize(m)
		b = protowire.AppendVarint(protowire.AppendTag(b, 2, protowire.BytesType), uint64(k))
		for _, v := range m.AttributeHandleValue {
			b = protowire.AppendVarint(protowire.AppendTag(b, 1, protowire.BytesType), uint64(valueSize(v)))
			if v.AttributeHandle != nil {
				b = appendHandle(b, 1, v.AttributeHandle.Data)
			}
			if len(v.Value) > 0 {
				b = protowire.AppendBytes(protowire.AppendTag(b, 2, protowire.BytesType), v.Value)
			}
		}
	}
	if len(r.UserSuppliedTag) > 0 {
		b = protowire.AppendBytes(protowire.AppendTag(b, 3, protowire.BytesType), r.UserSuppliedTag)
	}
	if r.TransportationType != nil {
		b = appendHandle(b, 4, r.TransportationType.Data)
	}
	if r.ProducingFederate != nil {
		b = appendHandle(b, 5, r.ProducingFederate.Data)
	}
	return b
}

// appendHandle appends a handle message as field num.
func appendHandle(b []byte, num protowire.Number, data []byte) []byte {
	b = protowire.AppendVarint(protowire.AppendTag(b, num, protowire.BytesType), uint64(handleSize(data)))
	if len(data) > 0 {
		b = protowire.AppendBytes(protowire.AppendTag(b, 1, protowire.BytesType), data)
	}
	return b
}
