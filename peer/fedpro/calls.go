package fedpro

import (
	"errors"
	"fmt"

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

// errNotSupported is what a call meshrti does not serve answers with (as
// RTIinternalError, the exception every call may throw).
var errNotSupported = errors.New("not supported by meshrti")

// dispatch serves one encoded CallRequest and returns the encoded
// CallResponse: the call's response, or exceptionData.
func (s *Session) dispatch(payload []byte) *pb.CallResponse {
	var req pb.CallRequest
	if err := proto.Unmarshal(payload, &req); err != nil {
		return exception(fmt.Errorf("%w: the call request does not decode: %w", peer.ErrRTIinternalError, err))
	}
	fd := req.ProtoReflect().WhichOneof(callOneof)
	if fd == nil {
		return exception(fmt.Errorf("%w: a call request with no call", peer.ErrRTIinternalError))
	}
	inner := req.ProtoReflect().Get(fd).Message()
	h, ok := handlers[inner.Descriptor().FullName()]
	if !ok {
		s.host.stats.unsupported.Add(1)
		return exception(fmt.Errorf("%w: %s: %w", peer.ErrRTIinternalError, fd.Name(), errNotSupported))
	}
	out, err := h.fn(s, inner)
	if err != nil {
		return exception(err)
	}
	var resp pb.CallResponse
	rfd := responseOneof.Fields().ByNumber(fd.Number() + 1)
	if rfd == nil || rfd.Message() == nil || rfd.Message().FullName() != out.ProtoReflect().Descriptor().FullName() {
		return exception(fmt.Errorf("%w: %s answered with %s", peer.ErrRTIinternalError, fd.Name(), out.ProtoReflect().Descriptor().FullName()))
	}
	resp.ProtoReflect().Set(rfd, protoreflect.ValueOfMessage(out.ProtoReflect()))
	return &resp
}

// exception turns err into the response's exceptionData: the name of the
// HLA exception it wraps (exceptionName: RTIinternalError when none) and
// the error's text.
func exception(err error) *pb.CallResponse {
	return &pb.CallResponse{CallResponse: &pb.CallResponse_ExceptionData{ExceptionData: &pb.ExceptionData{
		ExceptionName: exceptionName(err),
		Details:       err.Error(),
	}}}
}
