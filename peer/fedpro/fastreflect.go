package fedpro

import (
	"encoding/binary"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/meshrti/meshrti/peer"
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

// The reflection and the received interaction without a time stamp,
// encoded straight from the event (fastCallback): callbackOf builds a
// dozen messages for one, which marshalCallback then walks; the
// encoder here writes the same bytes in one buffer, its only
// allocation. The two callbacks share their layout: the object instance
// (or interaction class) handle, the handle-value map, the tag, the
// transportation type and the producing federate, fields 1 to 5.

// fastInteractionField is the CallbackRequest field number of
// ReceiveInteraction.
var fastInteractionField = func() protowire.Number {
	fd := (&pb.CallbackRequest{}).ProtoReflect().Descriptor().Fields().ByName("receiveInteraction")
	if fd == nil {
		panic("fedpro: CallbackRequest has no receiveInteraction")
	}
	return fd.Number()
}()

// fastCallback encodes the callback of ev as
// marshalCallback(callbackWith(f, ev, convey)) does, for a reflection or
// a received interaction without a time stamp; ok is false for any other
// event.
func fastCallback(ev peer.Event, convey bool) (b []byte, ok bool) {
	switch e := ev.(type) {
	case peer.ReflectAttributeValues:
		if e.Time != nil {
			return nil, false
		}
		var obj [16]byte
		binary.BigEndian.PutUint64(obj[:], uint64(e.Object.Federate))
		binary.BigEndian.PutUint64(obj[8:], e.Object.Serial)
		return appendReceived(nil, fastReflectField, obj[:], e.Values, e.Tag, e.Transportation, e.Producer, convey), true
	case peer.ReceiveInteraction:
		if e.Time != nil {
			return nil, false
		}
		var class [8]byte
		binary.BigEndian.PutUint64(class[:], uint64(e.Class))
		return appendReceived(nil, fastInteractionField, class[:], e.Values, e.Tag, e.Transportation, e.Producer, convey), true
	}
	return nil, false
}

// appendReceived appends, as CallbackRequest field num, a reflection or
// received interaction: first (the object instance or interaction class
// handle's data), the values, tag, the transportation type named
// transport and, with convey, the producing federate. It allocates once,
// when b has too little room.
func appendReceived[M ~map[H][]byte, H ~uint64](b []byte, num protowire.Number, first []byte, vs M, tag []byte, transport string, producer peer.FederateHandle, convey bool) []byte {
	var handle [8]byte // a handle's data (hla.EncodeHandle)
	var tr [4]byte     // the transportation type's (pbTransport)
	binary.BigEndian.PutUint32(tr[:], uint32(peer.HLAreliable))
	if transport == "HLAbestEffort" { // as pbTransportName
		binary.BigEndian.PutUint32(tr[:], uint32(peer.HLAbestEffort))
	}
	entry := msgSize(1, handleSize(handle[:]))
	values := 0
	for _, v := range vs {
		values += msgSize(1, entryValueSize(entry, v))
	}
	n := msgSize(1, handleSize(first)) + msgSize(2, values)
	if len(tag) > 0 {
		n += protowire.SizeTag(3) + protowire.SizeBytes(len(tag))
	}
	n += msgSize(4, handleSize(tr[:]))
	if convey {
		n += msgSize(5, handleSize(handle[:]))
	}
	b = slices.Grow(b, protowire.SizeTag(num)+protowire.SizeBytes(n))
	b = protowire.AppendVarint(protowire.AppendTag(b, num, protowire.BytesType), uint64(n))
	b = appendHandle(b, 1, first)
	b = protowire.AppendVarint(protowire.AppendTag(b, 2, protowire.BytesType), uint64(values))
	for h, v := range vs {
		b = protowire.AppendVarint(protowire.AppendTag(b, 1, protowire.BytesType), uint64(entryValueSize(entry, v)))
		binary.BigEndian.PutUint64(handle[:], uint64(h))
		b = appendHandle(b, 1, handle[:])
		if len(v) > 0 {
			b = protowire.AppendBytes(protowire.AppendTag(b, 2, protowire.BytesType), v)
		}
	}
	if len(tag) > 0 {
		b = protowire.AppendBytes(protowire.AppendTag(b, 3, protowire.BytesType), tag)
	}
	b = appendHandle(b, 4, tr[:])
	if convey {
		binary.BigEndian.PutUint64(handle[:], uint64(producer))
		b = appendHandle(b, 5, handle[:])
	}
	return b
}

// entryValueSize is the encoded size of a handle-value entry's fields:
// the handle field of entry bytes, and the value.
func entryValueSize(entry int, v []byte) int {
	if len(v) > 0 {
		entry += protowire.SizeTag(2) + protowire.SizeBytes(len(v))
	}
	return entry
}
