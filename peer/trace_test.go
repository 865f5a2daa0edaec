package peer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer/transport"
	"github.com/meshrti/meshrti/testnet/tracecheck"
)

// syncBuffer is a bytes.Buffer safe for the test's reads while
// federates write: it writes as the trace writer does, under its lock.
type syncBuffer struct {
	lockedWriter
	b bytes.Buffer
}

func newSyncBuffer() *syncBuffer {
	s := &syncBuffer{}
	s.w = &s.b
	return s
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// traceLine is a parsed trace line: the checker's view of it, and all of
// its keys.
type traceLine struct {
	tracecheck.Event
	raw map[string]any
}

func parseTrace(t *testing.T, s string) []traceLine {
	t.Helper()
	var out []traceLine
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		if !json.Valid(sc.Bytes()) {
			t.Fatalf("invalid JSON line %q", sc.Text())
		}
		var l traceLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(sc.Bytes(), &l.raw); err != nil {
			t.Fatal(err)
		}
		out = append(out, l)
	}
	return out
}

// TestTrace: two federates (and a third that crashes) over the in-memory
// network write one trace; it holds every expected event, and a message's
// id is the same at its sender and its receiver.
func TestTrace(t *testing.T) {
	buf := newSyncBuffer()
	w := NewTraceWriter(buf)
	net := transport.NewNetwork(transport.NetworkConfig{Seed: 21})
	reg := NewMemRegistry()
	doc := testDoc(t)
	var feds []*Federate
	t.Cleanup(func() {
		for _, f := range feds {
			f.Close()
		}
	})
	join := func(name string) *Federate {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		f, err := Join(ctx, Config{
			Federation: "trace", FederateName: name, FOMModules: []*fomxml.Document{doc}, Create: true,
			Control: reg.Control("trace"), Transport: net.Endpoint(name), TickInterval: 2 * time.Millisecond,
			Trace: w,
		})
		if err != nil {
			t.Fatalf("join %s: %v", name, err)
		}
		feds = append(feds, f)
		return f
	}
	a, b, c := join("A"), join("B"), join("C")
	h := handles(t, a)
	must := mustOK(t)
	must(b.SubscribeObjectClassAttributes(h.vehicle, h.position, h.label))
	must(b.SubscribeInteractionClass(h.honk))
	must(a.PublishObjectClassAttributes(h.vehicle, h.position, h.label))
	must(a.PublishInteractionClass(h.honk))
	enable(t, a, b, 1)
	must(b.EnableAsynchronousDelivery()) // B gets the receive-order update while not advancing
	must(a.ModifyLookahead(Float64Time(2)))
	obj, err := a.RegisterObjectInstance(h.vehicle, "")
	must(err)
	waitFor(t, b, 5*time.Second, isType[DiscoverObjectInstance])
	must(a.UpdateAttributeValues(obj, AttributeValues{h.label: []byte("x")}, nil))
	waitFor(t, b, 5*time.Second, isType[ReflectAttributeValues])
	must(a.UpdateAttributeValuesWithTime(obj, AttributeValues{h.position: []byte("p")}, nil, Float64Time(10)))
	must(a.SendInteractionWithTime(h.honk, nil, nil, Float64Time(11)))
	must(b.TimeAdvanceRequest(Float64Time(20)))
	must(a.TimeAdvanceRequest(Float64Time(20)))
	waitFor(t, a, 5*time.Second, isType[TimeAdvanceGrant])
	waitFor(t, b, 5*time.Second, isType[TimeAdvanceGrant])

	reg.Crash("trace", c.Handle())
	net.Crash("C")
	waitFor(t, b, 5*time.Second, isType[FederateLost])
	c.Close()
	must(a.ResignFederationExecution(t.Context(), DeleteObjects))
	waitFor(t, b, 5*time.Second, isType[FederateResigned])
	b.Close()

	lines := parseTrace(t, buf.String())
	find := func(desc string, match func(l traceLine) bool) traceLine {
		t.Helper()
		for _, l := range lines {
			if match(l) {
				return l
			}
		}
		t.Fatalf("no %s in trace:\n%s", desc, buf.String())
		return traceLine{}
	}
	for _, f := range []*Federate{a, b, c} {
		l := find("join of "+f.Name(), func(l traceLine) bool { return l.Ev == "join" && l.Fed == f.Name() })
		if l.Handle == "" {
			t.Errorf("join without handle: %+v", l.raw)
		}
	}
	find("regulation", func(l traceLine) bool {
		return l.Ev == "regulation" && l.Fed == "A" && l.Lookahead != nil && *l.Lookahead == 1
	})
	find("lookahead", func(l traceLine) bool {
		return l.Ev == "lookahead" && l.Fed == "A" && l.Lookahead != nil && *l.Lookahead == 2
	})
	find("constrained", func(l traceLine) bool { return l.Ev == "constrained" && l.Fed == "B" })
	find("request", func(l traceLine) bool {
		return l.Ev == "request" && l.Fed == "B" && l.Kind == "TAR" && l.T != nil && *l.T == 20
	})
	for _, f := range []string{"A", "B"} {
		find("grant of "+f, func(l traceLine) bool { return l.Ev == "grant" && l.Fed == f && l.T != nil && *l.T == 20 })
	}
	upd := find("TSO update send", func(l traceLine) bool {
		return l.Ev == "send" && l.Fed == "A" && l.Kind == "update" && l.Order == "TSO" && l.TS != nil && *l.TS == 10 &&
			l.Class == "HLAobjectRoot.Vehicle"
	})
	ro := find("RO update send", func(l traceLine) bool {
		return l.Ev == "send" && l.Fed == "A" && l.Kind == "update" && l.Order == "RO"
	})
	if v, ok := ro.raw["ts"]; !ok || v != nil {
		t.Errorf("RO send: ts %v, want null: %+v", v, ro.raw)
	}
	hk := find("interaction send", func(l traceLine) bool {
		return l.Ev == "send" && l.Fed == "A" && l.Kind == "interaction" && l.Order == "TSO" && l.TS != nil && *l.TS == 11 &&
			l.Class == "HLAinteractionRoot.Honk"
	})
	for _, s := range []traceLine{upd, ro, hk} {
		if !strings.HasPrefix(s.Msg, "A/") {
			t.Errorf("msg %q", s.Msg)
		}
		d := find("delivery of "+s.Msg, func(l traceLine) bool { return l.Ev == "deliver" && l.Fed == "B" && l.Msg == s.Msg })
		if d.Order != s.Order || (d.TS == nil) != (s.TS == nil) || d.TS != nil && *d.TS != *s.TS {
			t.Errorf("send %+v delivered as %+v", s.raw, d.raw)
		}
	}
	if upd.Msg == ro.Msg || upd.Msg == hk.Msg {
		t.Errorf("message ids not unique: %s %s %s", ro.Msg, upd.Msg, hk.Msg)
	}
	find("lost", func(l traceLine) bool { return l.Ev == "lost" && l.Fed == "B" && l.Peer == "C" })
	find("resign", func(l traceLine) bool { return l.Ev == "resign" && l.Fed == "A" })

	// B's TSO deliveries come before its grant to 20, in time order.
	var order []string
	for _, l := range lines {
		if l.Fed == "B" && (l.Ev == "grant" || l.Ev == "deliver" && l.Order == "TSO") {
			order = append(order, l.Ev+" "+l.Msg)
		}
	}
	if want := []string{"deliver " + upd.Msg, "deliver " + hk.Msg, "grant "}; strings.Join(order, ",") != strings.Join(want, ",") {
		t.Errorf("B's TSO deliveries and grants: %q, want %q", order, want)
	}
}
