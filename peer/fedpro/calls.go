package fedpro

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/fedpro/pb"
)

// handler serves one call: the request's payload message in, the
// response's payload message out.
type handler struct {
	resp protoreflect.FullName // the response message the call answers with
	fn   func(s *Session, req protoreflect.Message) (proto.Message, error)
}

// handlers are the registered calls, by request message.
var handlers = map[protoreflect.FullName]handler{}

// on registers fn as the service of the call whose request is Req,
// answered with Resp. Registering a request twice panics (at init: a
// test catches it).
func on[Req, Resp proto.Message](fn func(*Session, Req) (Resp, error)) {
	var req Req
	var resp Resp
	name := req.ProtoReflect().Descriptor().FullName()
	if _, dup := handlers[name]; dup {
		panic("fedpro: call registered twice: " + string(name))
	}
	handlers[name] = handler{
		resp: resp.ProtoReflect().Descriptor().FullName(),
		fn: func(s *Session, m protoreflect.Message) (proto.Message, error) {
			return fn(s, m.Interface().(Req))
		},
	}
}

var (
	callOneof     = (&pb.CallRequest{}).ProtoReflect().Descriptor().Oneofs().ByName("callRequest")
	responseOneof = (&pb.CallResponse{}).ProtoReflect().Descriptor().Oneofs().ByName("callResponse")
)

// quickCalls are the calls, by their field number in CallRequest, that
// return without waiting on the network or on other federates (but for
// back-pressure): the updates and interactions (Session.Quick).
var quickCalls = func() map[protowire.Number]bool {
	m := map[protowire.Number]bool{}
	for _, name := range []protoreflect.Name{
		"updateAttributeValuesRequest", "updateAttributeValuesWithTimeRequest",
		"sendInteractionRequest", "sendInteractionWithTimeRequest",
		"sendDirectedInteractionRequest", "sendDirectedInteractionWithTimeRequest",
	} {
		fd := callOneof.Fields().ByName(name)
		if fd == nil {
			panic("fedpro: no call " + string(name)) // at init: a test catches it
		}
		m[fd.Number()] = true
	}
	return m
}()

// Quick reports whether payload, an encoded CallRequest, is an update or
// an interaction: a call that returns without waiting on the network or
// on other federates, which the session layer may run on the
// connection's reader (session.QuickCaller). Only payloads that hold
// that one field and nothing else are.
func (s *Session) Quick(payload []byte) bool {
	num, typ, n := protowire.ConsumeTag(payload)
	if n < 0 || typ != protowire.BytesType || !quickCalls[num] {
		return false
	}
	_, m := protowire.ConsumeBytes(payload[n:])
	return m >= 0 && n+m == len(payload)
}

// errNotSupported is what a call meshrti does not serve answers with (as
// RTIinternalError, the exception every call may throw).
var errNotSupported = errors.New("not supported by meshrti")

// dispatch serves one encoded CallRequest and returns the CallResponse:
// the call's response, or exceptionData; or, for an empty response, its
// encoding, shared (emptyResponses).
func (s *Session) dispatch(payload []byte) (*pb.CallResponse, []byte) {
	var req pb.CallRequest
	if err := proto.Unmarshal(payload, &req); err != nil {
		return exception(fmt.Errorf("%w: the call request does not decode: %w", peer.ErrRTIinternalError, err)), nil
	}
	fd := req.ProtoReflect().WhichOneof(callOneof)
	if fd == nil {
		return exception(fmt.Errorf("%w: a call request with no call", peer.ErrRTIinternalError)), nil
	}
	inner := req.ProtoReflect().Get(fd).Message()
	h, ok := handlers[inner.Descriptor().FullName()]
	if !ok {
		s.host.stats.unsupported.Add(1)
		return exception(fmt.Errorf("%w: %s: %w", peer.ErrRTIinternalError, fd.Name(), errNotSupported)), nil
	}
	out, err := h.fn(s, inner)
	if err != nil {
		return exception(err), nil
	}
	rfd := responseOneof.Fields().ByNumber(fd.Number() + 1)
	if rfd == nil || rfd.Message() == nil || rfd.Message().FullName() != out.ProtoReflect().Descriptor().FullName() {
		return exception(fmt.Errorf("%w: %s answered with %s", peer.ErrRTIinternalError, fd.Name(), out.ProtoReflect().Descriptor().FullName())), nil
	}
	if proto.Size(out) == 0 {
		// An empty response (an update's, an interaction's): its
		// encoding is fixed, made once.
		if b := emptyResponses[rfd.Number()]; b != nil {
			return nil, b
		}
	}
	var resp pb.CallResponse
	resp.ProtoReflect().Set(rfd, protoreflect.ValueOfMessage(out.ProtoReflect()))
	return &resp, nil
}

// emptyResponses are the encodings of the CallResponses whose response
// message is empty, by the response's field number: the field's tag
// and a zero length. Shared, never changed.
var emptyResponses = func() map[protoreflect.FieldNumber][]byte {
	m := map[protoreflect.FieldNumber][]byte{}
	fields := responseOneof.Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if fd.Message() == nil {
			continue
		}
		m[fd.Number()] = protowire.AppendVarint(protowire.AppendTag(nil, fd.Number(), protowire.BytesType), 0)
	}
	return m
}()

// exception turns err into the response's exceptionData: the name of the
// HLA exception it wraps (exceptionName: RTIinternalError when none) and
// the error's text.
func exception(err error) *pb.CallResponse {
	return &pb.CallResponse{CallResponse: &pb.CallResponse_ExceptionData{ExceptionData: &pb.ExceptionData{
		ExceptionName: exceptionName(err),
		Details:       err.Error(),
	}}}
}
