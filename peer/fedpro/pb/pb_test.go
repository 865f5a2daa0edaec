package pb

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// roundTrip marshals in, unmarshals the bytes into a new message of the
// same type, checks the copy equals in, and returns it with the bytes.
func roundTrip[M proto.Message](t *testing.T, in M) (M, []byte) {
	t.Helper()
	b, err := proto.Marshal(in)
	if err != nil {
		t.Fatalf("marshal %T: %v", in, err)
	}
	if len(b) == 0 {
		t.Fatalf("marshal %T: no bytes", in)
	}
	out := in.ProtoReflect().New().Interface().(M)
	if err := proto.Unmarshal(b, out); err != nil {
		t.Fatalf("unmarshal %T: %v", in, err)
	}
	if !proto.Equal(in, out) {
		t.Fatalf("%T changed in a round trip:\n in: %v\nout: %v", in, in, out)
	}
	return out, b
}

func TestCallRequestJoinRoundTrip(t *testing.T) {
	in := &CallRequest{CallRequest: &CallRequest_JoinFederationExecutionWithNameAndModulesRequest{
		JoinFederationExecutionWithNameAndModulesRequest: &JoinFederationExecutionWithNameAndModulesRequest{
			FederateName:   "tank-1",
			FederateType:   "Tank",
			FederationName: "demo",
			AdditionalFomModules: &FomModuleSet{FomModule: []*FomModule{
				{FomModule: &FomModule_File{File: &FileFomModule{Name: "tank.xml", Content: []byte("<objectModel/>")}}},
				{FomModule: &FomModule_Url{Url: "file:///fom/radio.xml"}},
				{FomModule: &FomModule_CompressedModule{CompressedModule: []byte{'P', 'K', 3, 4}}},
			}},
		},
	}}
	out, _ := roundTrip(t, in)
	j := out.GetJoinFederationExecutionWithNameAndModulesRequest()
	if j == nil {
		t.Fatalf("case lost: got %T", out.GetCallRequest())
	}
	if j.GetFederateName() != "tank-1" || j.GetFederateType() != "Tank" || j.GetFederationName() != "demo" {
		t.Errorf("join arguments: %v", j)
	}
	mods := j.GetAdditionalFomModules().GetFomModule()
	if len(mods) != 3 || mods[0].GetFile().GetName() != "tank.xml" || mods[1].GetUrl() != "file:///fom/radio.xml" ||
		!bytes.Equal(mods[2].GetCompressedModule(), []byte{'P', 'K', 3, 4}) {
		t.Errorf("FOM modules: %v", mods)
	}

	// The plain join is case 15 and its federateType is field 1: a
	// CallRequest holding only {federateType: "T"} is
	//   0x7a (field 15, length-delimited), 3, 0x0a (field 1, length-delimited), 1, 'T'.
	plain := &CallRequest{CallRequest: &CallRequest_JoinFederationExecutionRequest{
		JoinFederationExecutionRequest: &JoinFederationExecutionRequest{FederateType: "T"},
	}}
	_, b := roundTrip(t, plain)
	if want := []byte{0x7a, 3, 0x0a, 1, 'T'}; !bytes.Equal(b, want) {
		t.Errorf("JoinFederationExecutionRequest wire bytes %x, want %x", b, want)
	}

	// The answer carries the JoinResult.
	resp := &CallResponse{CallResponse: &CallResponse_JoinFederationExecutionResponse{
		JoinFederationExecutionResponse: &JoinFederationExecutionResponse{Result: &JoinResult{
			FederateHandle:                &FederateHandle{Data: []byte{0, 0, 0, 7}},
			LogicalTimeImplementationName: "HLAinteger64Time",
		}},
	}}
	r, _ := roundTrip(t, resp)
	if got := r.GetJoinFederationExecutionResponse().GetResult(); !bytes.Equal(got.GetFederateHandle().GetData(), []byte{0, 0, 0, 7}) ||
		got.GetLogicalTimeImplementationName() != "HLAinteger64Time" {
		t.Errorf("join result: %v", got)
	}
}

func TestCallResponseExceptionRoundTrip(t *testing.T) {
	in := &CallResponse{CallResponse: &CallResponse_ExceptionData{ExceptionData: &ExceptionData{
		ExceptionName: "FederationExecutionDoesNotExist",
		Details:       "no federation execution named demo",
	}}}
	out, b := roundTrip(t, in)
	ex := out.GetExceptionData()
	if ex == nil {
		t.Fatalf("exceptionData lost: got %T", out.GetCallResponse())
	}
	if ex.GetExceptionName() != "FederationExecutionDoesNotExist" || ex.GetDetails() != "no federation execution named demo" {
		t.Errorf("exception: %v", ex)
	}
	if out.GetJoinFederationExecutionResponse() != nil {
		t.Error("an exception answer also reads as a join response")
	}
	// exceptionData is case 1 of the CallResponse oneof.
	if b[0] != 0x0a {
		t.Errorf("first byte %#x, want 0x0a (field 1, length-delimited)", b[0])
	}
}

func TestCallbackReflectRoundTrip(t *testing.T) {
	in := &CallbackRequest{CallbackRequest: &CallbackRequest_ReflectAttributeValues{
		ReflectAttributeValues: &ReflectAttributeValues{
			ObjectInstance: &ObjectInstanceHandle{Data: []byte{1, 2}},
			AttributeValues: &AttributeHandleValueMap{AttributeHandleValue: []*AttributeHandleValue{
				{AttributeHandle: &AttributeHandle{Data: []byte{9}}, Value: []byte("position")},
				{AttributeHandle: &AttributeHandle{Data: []byte{10}}, Value: []byte{}},
			}},
			UserSuppliedTag:    []byte("tag"),
			TransportationType: &TransportationTypeHandle{Data: []byte{1}},
			ProducingFederate:  &FederateHandle{Data: []byte{0, 3}},
			OptionalSentRegions: &ConveyedRegionSet{ConveyedRegions: []*ConveyedRegion{{
				DimensionAndRange: []*DimensionAndRange{{
					DimensionHandle: &DimensionHandle{Data: []byte{4}},
					RangeBounds:     &RangeBounds{Lower: 10, Upper: 20},
				}},
			}}},
		},
	}}
	out, b := roundTrip(t, in)
	r := out.GetReflectAttributeValues()
	if r == nil {
		t.Fatalf("case lost: got %T", out.GetCallbackRequest())
	}
	avs := r.GetAttributeValues().GetAttributeHandleValue()
	if len(avs) != 2 || !bytes.Equal(avs[0].GetAttributeHandle().GetData(), []byte{9}) || string(avs[0].GetValue()) != "position" {
		t.Errorf("attribute values: %v", avs)
	}
	if string(r.GetUserSuppliedTag()) != "tag" || !bytes.Equal(r.GetProducingFederate().GetData(), []byte{0, 3}) {
		t.Errorf("tag or producer: %v", r)
	}
	rb := r.GetOptionalSentRegions().GetConveyedRegions()[0].GetDimensionAndRange()[0].GetRangeBounds()
	if rb.GetLower() != 10 || rb.GetUpper() != 20 {
		t.Errorf("range bounds: %v", rb)
	}
	// reflectAttributeValues is case 31: tag (31<<3)|2 = 0xfa 0x01.
	if b[0] != 0xfa || b[1] != 0x01 {
		t.Errorf("first bytes %x, want fa01", b[:2])
	}

	// And the federate's answer to it.
	ok, _ := roundTrip(t, &CallbackResponse{CallbackResponse: &CallbackResponse_CallbackSucceeded{CallbackSucceeded: &CallbackSucceeded{}}})
	if ok.GetCallbackSucceeded() == nil {
		t.Error("callbackSucceeded lost")
	}
	failed, _ := roundTrip(t, &CallbackResponse{CallbackResponse: &CallbackResponse_CallbackFailed{
		CallbackFailed: &ExceptionData{ExceptionName: "ObjectInstanceNotKnown", Details: "x"},
	}})
	if failed.GetCallbackFailed().GetExceptionName() != "ObjectInstanceNotKnown" {
		t.Error("callbackFailed lost")
	}
}

// The number of cases of each envelope's oneof in the IEEE 1516.1-2025
// Federate Protocol schema (see doc.go).
const (
	callRequestCases      = 178
	callResponseCases     = 179 // exceptionData plus one response per call
	callbackRequestCases  = 62
	callbackResponseCases = 2
)

// oneofCases returns the cases of m's single oneof, checking that every
// field of m belongs to it and that the case numbers run 1..n.
func oneofCases(t *testing.T, m proto.Message, oneof protoreflect.Name) protoreflect.FieldDescriptors {
	t.Helper()
	md := m.ProtoReflect().Descriptor()
	if md.Oneofs().Len() != 1 {
		t.Fatalf("%s has %d oneofs, want 1", md.FullName(), md.Oneofs().Len())
	}
	od := md.Oneofs().Get(0)
	if od.Name() != oneof {
		t.Errorf("%s's oneof is %q, want %q", md.FullName(), od.Name(), oneof)
	}
	if od.Fields().Len() != md.Fields().Len() {
		t.Errorf("%s has %d fields outside its oneof", md.FullName(), md.Fields().Len()-od.Fields().Len())
	}
	seen := map[protoreflect.FieldNumber]bool{}
	for i := 0; i < od.Fields().Len(); i++ {
		f := od.Fields().Get(i)
		if f.Kind() != protoreflect.MessageKind {
			t.Errorf("%s.%s is a %v, want a message", md.FullName(), f.Name(), f.Kind())
		}
		seen[f.Number()] = true
	}
	for n := 1; n <= od.Fields().Len(); n++ {
		if !seen[protoreflect.FieldNumber(n)] {
			t.Errorf("%s has no case %d", md.FullName(), n)
		}
	}
	return od.Fields()
}

func TestOneofCaseCounts(t *testing.T) {
	for _, tc := range []struct {
		msg   proto.Message
		oneof protoreflect.Name
		min   int
	}{
		{&CallRequest{}, "callRequest", callRequestCases},
		{&CallResponse{}, "callResponse", callResponseCases},
		{&CallbackRequest{}, "callbackRequest", callbackRequestCases},
		{&CallbackResponse{}, "callbackResponse", callbackResponseCases},
	} {
		cases := oneofCases(t, tc.msg, tc.oneof)
		name := tc.msg.ProtoReflect().Descriptor().Name()
		t.Logf("%s: %d cases", name, cases.Len())
		if cases.Len() < tc.min {
			t.Errorf("%s has %d oneof cases, want at least %d", name, cases.Len(), tc.min)
		}
	}
}

// TestCallResponsePairs: every call's response sits at the call's case
// number plus one, and is named like the call with Response for Request.
func TestCallResponsePairs(t *testing.T) {
	req := (&CallRequest{}).ProtoReflect().Descriptor().Fields()
	resp := (&CallResponse{}).ProtoReflect().Descriptor().Fields()
	if f := resp.ByNumber(1); f == nil || f.Name() != "exceptionData" || f.Message().Name() != "ExceptionData" {
		t.Fatalf("CallResponse case 1 is %v, want exceptionData ExceptionData", f)
	}
	for i := 0; i < req.Len(); i++ {
		rq := req.Get(i)
		rs := resp.ByNumber(rq.Number() + 1)
		if rs == nil {
			t.Errorf("no response for %s (case %d)", rq.Name(), rq.Number())
			continue
		}
		reqMsg, respMsg := string(rq.Message().Name()), string(rs.Message().Name())
		if want := reqMsg[:len(reqMsg)-len("Request")] + "Response"; respMsg != want {
			t.Errorf("case %d answers %s with %s, want %s", rq.Number(), reqMsg, respMsg, want)
		}
	}
}

// TestKnownCases pins the case numbers and message types of the calls and
// callbacks meshrti's Federate Protocol server is built around.
func TestKnownCases(t *testing.T) {
	for _, tc := range []struct {
		msg  proto.Message
		num  protoreflect.FieldNumber
		name protoreflect.Name
		typ  protoreflect.Name
	}{
		{&CallRequest{}, 1, "connectRequest", "ConnectRequest"},
		{&CallRequest{}, 5, "disconnectRequest", "DisconnectRequest"},
		{&CallRequest{}, 6, "createFederationExecutionRequest", "CreateFederationExecutionRequest"},
		{&CallRequest{}, 15, "joinFederationExecutionRequest", "JoinFederationExecutionRequest"},
		{&CallRequest{}, 19, "resignFederationExecutionRequest", "ResignFederationExecutionRequest"},
		{&CallRequest{}, 62, "updateAttributeValuesRequest", "UpdateAttributeValuesRequest"},
		{&CallRequest{}, 93, "timeAdvanceRequestRequest", "TimeAdvanceRequestRequest"},
		{&CallRequest{}, 178, "getNonRegulatedGrantSwitchRequest", "GetNonRegulatedGrantSwitchRequest"},
		{&CallResponse{}, 16, "joinFederationExecutionResponse", "JoinFederationExecutionResponse"},
		{&CallbackRequest{}, 1, "connectionLost", "ConnectionLost"},
		{&CallbackRequest{}, 30, "discoverObjectInstance", "DiscoverObjectInstance"},
		{&CallbackRequest{}, 31, "reflectAttributeValues", "ReflectAttributeValues"},
		{&CallbackRequest{}, 61, "timeAdvanceGrant", "TimeAdvanceGrant"},
		{&CallbackRequest{}, 62, "requestRetraction", "RequestRetraction"},
		{&CallbackResponse{}, 1, "callbackSucceeded", "CallbackSucceeded"},
		{&CallbackResponse{}, 2, "callbackFailed", "ExceptionData"},
	} {
		md := tc.msg.ProtoReflect().Descriptor()
		f := md.Fields().ByNumber(tc.num)
		if f == nil {
			t.Errorf("%s has no case %d", md.Name(), tc.num)
			continue
		}
		if f.Name() != tc.name || f.Message().Name() != tc.typ {
			t.Errorf("%s case %d is %s %s, want %s %s", md.Name(), tc.num, f.Message().Name(), f.Name(), tc.typ, tc.name)
		}
	}
	if got := (&CallRequest{}).ProtoReflect().Descriptor().FullName(); got != "rti1516_2025.fedpro.CallRequest" {
		t.Errorf("full name %s, want rti1516_2025.fedpro.CallRequest", got)
	}
}
