package fedpro

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/fedpro/pb"
)

// unsupportedCalls are the calls meshrti deliberately does not serve, by
// their CallRequest case, with the exception each answers: meshrti has
// no default transportation type or order type to change.
var unsupportedCalls = map[protoreflect.Name]string{
	"changeDefaultAttributeTransportationTypeRequest": "RTIinternalError",
	"changeDefaultAttributeOrderTypeRequest":          "RTIinternalError",
}

// Every CallRequest case is either served (in the table, by act, ask or
// on) or named in unsupportedCalls, so that a call added to the protocol
// cannot go unnoticed; the unsupported ones answer their exception and
// are counted.
func TestEveryCallServedOrNamedUnsupported(t *testing.T) {
	fields := callOneof.Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		_, served := handlers[fd.Message().FullName()]
		want, unsupported := unsupportedCalls[fd.Name()]
		switch {
		case served && unsupported:
			t.Errorf("%s is served and named unsupported", fd.Name())
		case !served && !unsupported:
			t.Errorf("%s (case %d) is neither served nor named unsupported", fd.Name(), fd.Number())
		case unsupported:
			n := newFPNet(t)
			c := n.client(t, "A")
			var req pb.CallRequest
			req.ProtoReflect().Set(fd, protoreflect.ValueOfMessage(req.ProtoReflect().NewField(fd).Message()))
			e := c.call(&req).GetExceptionData()
			if e.GetExceptionName() != want || !strings.Contains(e.GetDetails(), errNotSupported.Error()) {
				t.Errorf("%s answers %q (%s), want %s, not supported", fd.Name(), e.GetExceptionName(), e.GetDetails(), want)
			}
			if st := c.host.Stats(); st.Unsupported != 1 {
				t.Errorf("%s: %d unsupported calls counted, want 1", fd.Name(), st.Unsupported)
			}
		}
	}
	for name := range unsupportedCalls {
		if fields.ByName(name) == nil {
			t.Errorf("unsupportedCalls names %s, which is no call", name)
		}
	}
}

// A call that needs a federate, made before connecting, answers
// NotConnected before it looks at its arguments; the calls that connect,
// disconnect and list need no federate.
func TestCallsBeforeConnecting(t *testing.T) {
	n := newFPNet(t)
	c := n.client(t, "A")
	noFederate := map[protoreflect.Name]bool{
		"connectRequest": true, "connectWithCredentialsRequest": true, "connectWithConfigurationRequest": true,
		"connectWithConfigurationAndCredentialsRequest": true, "disconnectRequest": true,
	}
	fields := callOneof.Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if _, served := handlers[fd.Message().FullName()]; !served || noFederate[fd.Name()] {
			continue
		}
		var req pb.CallRequest
		req.ProtoReflect().Set(fd, protoreflect.ValueOfMessage(req.ProtoReflect().NewField(fd).Message()))
		if e := c.call(&req).GetExceptionData(); e.GetExceptionName() != "NotConnected" {
			t.Errorf("%s before connecting: %q (%s), want NotConnected", fd.Name(), e.GetExceptionName(), e.GetDetails())
		}
	}
}

// Adding a call whose response type is not its case's, or whose result
// does not fit, panics (when the table is built, at package
// initialization, where a mistake shows at once).
func TestRegisterMismatchPanics(t *testing.T) {
	tab := callTable{}
	for name, register := range map[string]func(){
		"on with another response": func() {
			on(tab, func(*Session, *pb.ConnectRequest) (*pb.DisconnectResponse, error) { return nil, nil })
		},
		"ask with a result of another kind": func() {
			ask(tab, func(*peer.Federate, *pb.GetFederateNameRequest) (bool, error) { return false, nil })
		},
		"ask with a result of another message": func() {
			ask(tab, func(*peer.Federate, *pb.GetFederateHandleRequest) (*pb.ObjectClassHandle, error) { return nil, nil })
		},
	} {
		func() {
			defer func() {
				r := recover()
				if r == nil || strings.Contains(fmt.Sprint(r), "added twice") {
					t.Errorf("%s: panic %v, want one about the response", name, r)
				}
			}()
			register()
		}()
	}
	if len(tab) != 0 {
		t.Errorf("calls that do not fit were added: %d", len(tab))
	}
	if _, ok := handlers[(&pb.ConnectRequest{}).ProtoReflect().Descriptor().FullName()]; !ok {
		t.Fatal("connect is not served")
	}
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "added twice") {
				t.Errorf("a group added twice: panic %v, want one about the call added twice", r)
			}
		}()
		newCallTable(ddmCalls, ddmCalls)
	}()
}
