package fedpro

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/fedpro/pb"
)

// handler serves one call: the request's payload message in, the
// response's payload message out. A nil response with a nil error is
// the call's empty response (act).
type handler struct {
	resp protoreflect.FullName // the response message the call answers with
	fn   func(s *Session, req protoreflect.Message) (proto.Message, error)
}

// A callTable holds the served calls, by request message.
type callTable map[protoreflect.FullName]handler

// handlers are the calls this package serves: every group of calls is
// listed here, each group's function listing its calls.
var handlers = newCallTable(
	federationCalls, // §4
	objectCalls,     // §5, §6
	transportCalls,  // §6, §10 transportation types
	ownershipCalls,  // §7
	timeCalls,       // §8
	ddmCalls,        // §9
	supportCalls,    // §10 names and handles
	switchCalls,     // §10 switches and normalization
	directedCalls,   // HLA 4 directed interactions
)

// newCallTable returns the table that groups fill.
func newCallTable(groups ...func(callTable)) callTable {
	t := callTable{}
	for _, add := range groups {
		add(t)
	}
	return t
}

// Each call is added to a table by one of three helpers, by what it
// needs:
//
//   - act: the session's federate, and an empty response (most calls);
//   - ask: the session's federate, and a response that carries one
//     value, its result field (the queries);
//   - on: the session itself, and a response it makes (connecting,
//     creating, joining and the other calls that need no federate).
//
// A request added twice, or whose response does not fit, panics when
// the table is built, at package initialization (a test catches it).

// on adds to t fn as the service of the call whose request is Req,
// answered with Resp.
func on[Req, Resp proto.Message](t callTable, fn func(*Session, Req) (Resp, error)) {
	var resp Resp
	if responseOf[Req]().FullName() != resp.ProtoReflect().Descriptor().FullName() {
		panic(fmt.Sprintf("fedpro: %T is not the response of %T", resp, *new(Req)))
	}
	add[Req](t, func(s *Session, req Req) (proto.Message, error) { return fn(s, req) })
}

// act adds to t fn as the service of the call whose request is Req and
// whose response is empty: fn runs with the session's federate (without
// one the call answers NotConnected or FederateNotExecutionMember,
// before its arguments are decoded).
func act[Req proto.Message](t callTable, fn func(*peer.Federate, Req) error) {
	add[Req](t, func(s *Session, req Req) (proto.Message, error) {
		f, err := s.federate()
		if err != nil {
			return nil, err
		}
		return nil, fn(f, req)
	})
}

// ask adds to t fn as the service of the call whose request is Req and
// whose response carries fn's value in its result field: fn runs with
// the session's federate (without one the call answers as act says).
// T is the result field's Go type: a message pointer, an enum, or a
// scalar.
func ask[Req proto.Message, T any](t callTable, fn func(*peer.Federate, Req) (T, error)) {
	rd := responseOf[Req]()
	mt, err := protoregistry.GlobalTypes.FindMessageByName(rd.FullName())
	if err != nil {
		panic("fedpro: " + err.Error())
	}
	result := rd.Fields().ByName("result")
	if result == nil {
		panic(fmt.Sprintf("fedpro: %s has no result", rd.FullName()))
	}
	var zero T
	checkResult(mt.New(), result, zero)
	add[Req](t, func(s *Session, req Req) (proto.Message, error) {
		f, err := s.federate()
		if err != nil {
			return nil, err
		}
		v, err := fn(f, req)
		if err != nil {
			return nil, err
		}
		m := mt.New()
		if rv := resultValue(v); rv.IsValid() {
			m.Set(result, rv)
		}
		return m.Interface(), nil
	})
}

// resultValue is v as the value of a result field; invalid for a nil
// message (the field is left unset).
func resultValue(v any) protoreflect.Value {
	switch v := v.(type) {
	case proto.Message:
		if m := v.ProtoReflect(); m.IsValid() {
			return protoreflect.ValueOfMessage(m)
		}
		return protoreflect.Value{}
	case protoreflect.Enum:
		return protoreflect.ValueOfEnum(v.Number())
	}
	return protoreflect.ValueOf(v)
}

// checkResult panics unless a T (zero, its zero value) fits the result
// field of m.
func checkResult(m protoreflect.Message, result protoreflect.FieldDescriptor, zero any) {
	switch z := zero.(type) {
	case proto.Message:
		if result.Message() == nil || z.ProtoReflect().Descriptor().FullName() != result.Message().FullName() {
			panic(fmt.Sprintf("fedpro: %T does not fit %s", zero, result.FullName()))
		}
	case protoreflect.Enum:
		if result.Enum() == nil || z.Descriptor().FullName() != result.Enum().FullName() {
			panic(fmt.Sprintf("fedpro: %T does not fit %s", zero, result.FullName()))
		}
	default:
		m.Set(result, protoreflect.ValueOf(zero)) // panics when the kind differs
	}
}

// add adds to t fn as the service of the call whose request is Req.
func add[Req proto.Message](t callTable, fn func(*Session, Req) (proto.Message, error)) {
	var req Req
	name := req.ProtoReflect().Descriptor().FullName()
	if _, dup := t[name]; dup {
		panic("fedpro: call added twice: " + string(name))
	}
	t[name] = handler{
		resp: responseOf[Req]().FullName(),
		fn: func(s *Session, m protoreflect.Message) (proto.Message, error) {
			return fn(s, m.Interface().(Req))
		},
	}
}

// responseOf is the response message of the call whose request is Req:
// the message of the CallResponse case numbered one above the request's
// CallRequest case.
func responseOf[Req proto.Message]() protoreflect.MessageDescriptor {
	var req Req
	name := req.ProtoReflect().Descriptor().FullName()
	fields := callOneof.Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if fd.Message() == nil || fd.Message().FullName() != name {
			continue
		}
		if rfd := responseOneof.Fields().ByNumber(fd.Number() + 1); rfd != nil && rfd.Message() != nil {
			return rfd.Message()
		}
	}
	panic("fedpro: no call request and response for " + string(name))
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
	if out == nil {
		// The call's empty response (act): its encoding is fixed.
		if rfd != nil {
			if b := emptyResponses[rfd.Number()]; b != nil {
				return nil, b
			}
		}
		return exception(fmt.Errorf("%w: %s answered with nothing", peer.ErrRTIinternalError, fd.Name())), nil
	}
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
