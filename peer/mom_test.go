package peer

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/meshrti/meshrti/fomxml/codec"
	"github.com/meshrti/meshrti/peer/transport"
	"github.com/meshrti/meshrti/version"
)

// momView is what a monitoring federate learned of the MOM's
// HLAfederate instances: their values, decoded, by instance.
type momView struct {
	t      *testing.T
	f      *Federate
	enc    *codec.Codec
	class  ObjectClassHandle
	names  map[ObjectInstanceHandle]string
	values map[ObjectInstanceHandle]map[string]any
}

func newMOMView(t *testing.T, f *Federate) *momView {
	t.Helper()
	enc, err := codec.New(f.FDD())
	if err != nil {
		t.Fatal(err)
	}
	class, err := f.GetObjectClassHandle("HLAobjectRoot.HLAmanager.HLAfederate")
	if err != nil {
		t.Fatal(err)
	}
	return &momView{t: t, f: f, enc: enc, class: class, names: map[ObjectInstanceHandle]string{}, values: map[ObjectInstanceHandle]map[string]any{}}
}

// attrs lists every attribute of HLAfederate.
func (v *momView) attrs() []AttributeHandle {
	oc, _ := v.f.FDD().ObjectClass("HLAobjectRoot.HLAmanager.HLAfederate")
	var attrs []AttributeHandle
	for _, a := range oc.AllAttributes() {
		attrs = append(attrs, a.Handle)
	}
	return attrs
}

// subscribe subscribes to every attribute of HLAfederate.
func (v *momView) subscribe() {
	v.t.Helper()
	if err := v.f.SubscribeObjectClassAttributes(v.class, v.attrs()...); err != nil {
		v.t.Fatal(err)
	}
}

// take records one event; it reports whether the event was the MOM's.
func (v *momView) take(ev Event) bool {
	v.t.Helper()
	switch e := ev.(type) {
	case DiscoverObjectInstance:
		if e.Class != v.class {
			return false
		}
		v.names[e.Object] = e.Name
	case ReflectAttributeValues:
		if _, ok := v.names[e.Object]; !ok {
			return false
		}
		oc, _ := v.f.FDD().ObjectClass("HLAobjectRoot.HLAmanager.HLAfederate")
		m := v.values[e.Object]
		if m == nil {
			m = map[string]any{}
			v.values[e.Object] = m
		}
		for a, b := range e.Values {
			at, ok := oc.AttributeByHandle(a)
			if !ok {
				v.t.Fatalf("reflected attribute %d is not HLAfederate's", a)
			}
			x, err := v.enc.Decode(at.DataType, b)
			if err != nil {
				v.t.Fatalf("%s (%s) does not decode: %v", at.Name, at.DataType, err)
			}
			m[at.Name] = x
		}
	case RemoveObjectInstance:
		if _, ok := v.names[e.Object]; !ok {
			return false
		}
		delete(v.names, e.Object)
		delete(v.values, e.Object)
	default:
		return false
	}
	return true
}

// until takes events until done holds.
func (v *momView) until(what string, done func() bool) {
	v.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !done() {
		if time.Now().After(deadline) {
			v.t.Fatalf("MOM view: no %s in 10 s: names %v values %v", what, v.names, v.values)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		ev, err := v.f.Next(ctx)
		cancel()
		if err == nil {
			v.take(ev)
		}
	}
}

// of returns the decoded values of federate name's instance.
func (v *momView) of(name string) map[string]any {
	for h, n := range v.names {
		if n == "HLAfederate."+name {
			return v.values[h]
		}
	}
	return nil
}

func (v *momView) handleOf(name string) ObjectInstanceHandle {
	for h, n := range v.names {
		if n == "HLAfederate."+name {
			return h
		}
	}
	return ObjectInstanceHandle{}
}

func TestMOMFederateInstances(t *testing.T) {
	m, _ := cleanFederation(t, 3, 41)
	a, b, c := m.feds[0], m.feds[1], m.feds[2]
	quiet := m.addWith("Quiet", testDoc(t), func(c *Config) { c.NoMOM = true })
	v := newMOMView(t, a)
	if err := a.EnableAsynchronousDelivery(); err != nil {
		t.Fatal(err) // A will be constrained: receive-order updates come while it is not advancing
	}
	v.subscribe()
	v.until("discovery of the three", func() bool { return len(v.names) == 3 })
	for _, f := range []*Federate{a, b, c} {
		if h := v.handleOf(f.Name()); h.Federate != f.Handle() {
			t.Errorf("%s's MOM instance %v", f.Name(), h)
		}
	}
	if h := v.handleOf(quiet.Name()); !h.IsZero() {
		t.Errorf("a federate without the MOM has an instance: %v", h)
	}

	// B regulates and advances, and registers and updates an instance.
	enable(t, b, a, 5)
	if err := b.TimeAdvanceRequest(Float64Time(10)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, b, 5*time.Second, isType[TimeAdvanceGrant])
	h := handles(t, b)
	updateTwice(t, b, c, h)

	if err := a.RequestAttributeValueUpdateForClass(v.class, nil, v.attrs()...); err != nil {
		t.Fatal(err)
	}
	v.until("every instance's values", func() bool { return len(v.values) == 3 && v.of(b.Name())["HLAupdatesSent"] == int64(2) })
	vb, vc, va := v.of(b.Name()), v.of(c.Name()), v.of(a.Name())
	want := map[string]any{
		"HLAfederateName": b.Name(), "HLAtimeRegulating": true, "HLAtimeConstrained": false,
		"HLAupdatesSent": int64(2), "HLAobjectInstancesRegistered": int64(1), "HLAobjectInstancesUpdated": int64(1),
		"HLAobjectInstancesThatCanBeDeleted": int64(1), "HLAtimeManagerState": "TimeGranted", "HLAfederateState": "ActiveFederate",
		"HLAconveyProducingFederate": "Disabled", "HLARTIversion": version.RTI(),
	}
	for k, w := range want {
		if vb[k] != w {
			t.Errorf("B's %s = %v (%T), want %v", k, vb[k], vb[k], w)
		}
	}
	if got := timeOf(t, b, vb["HLAlogicalTime"]); got != 10 {
		t.Errorf("B's HLAlogicalTime %v, want 10", got)
	}
	if got := timeOf(t, b, vb["HLAlookahead"]); got != 5 {
		t.Errorf("B's HLAlookahead %v, want 5", got)
	}
	if hb, err := b.DecodeFederateHandle(vb["HLAfederateHandle"].([]byte)); err != nil || hb != b.Handle() {
		t.Errorf("B's HLAfederateHandle decodes to %v, %v", hb, err)
	}
	if vc["HLAreflectionsReceived"] != int64(2) || vc["HLAobjectInstancesDiscovered"] != int64(1) || vc["HLAobjectInstancesReflected"] != int64(1) {
		t.Errorf("C's counts: %v reflections, %v discovered, %v reflected", vc["HLAreflectionsReceived"], vc["HLAobjectInstancesDiscovered"], vc["HLAobjectInstancesReflected"])
	}
	if va["HLAtimeConstrained"] != true || va["HLAfederateType"] != "" {
		t.Errorf("A: constrained %v, type %q", va["HLAtimeConstrained"], va["HLAfederateType"])
	}
	if mods, ok := va["HLAFOMmoduleDesignatorList"].([]any); !ok || len(mods) != 1 {
		t.Errorf("A's FOM modules: %v", va["HLAFOMmoduleDesignatorList"])
	}

	// A request for one instance and one attribute is answered with it.
	hc := v.handleOf(c.Name())
	logical, _ := b.GetAttributeHandle(v.class, "HLAlogicalTime")
	delete(v.values, hc)
	if err := a.RequestAttributeValueUpdate(hc, nil, logical); err != nil {
		t.Fatal(err)
	}
	v.until("C's logical time", func() bool { return v.values[hc] != nil })
	if len(v.values[hc]) != 1 || v.values[hc]["HLAlogicalTime"] == nil {
		t.Errorf("C's answer to a request for one attribute: %v", v.values[hc])
	}

	// Nobody but the RTI changes a MOM instance.
	hb := v.handleOf(b.Name())
	if err := a.UpdateAttributeValues(hb, AttributeValues{logical: []byte{0}}, nil); !errors.Is(err, ErrAttributeNotOwned) {
		t.Errorf("update of B's MOM instance: %v", err)
	}
	if err := a.DeleteObjectInstance(hb, nil); !errors.Is(err, ErrDeletePrivilegeNotHeld) {
		t.Errorf("delete of B's MOM instance: %v", err)
	}
	if err := a.PublishObjectClassAttributes(v.class, logical); err != nil {
		t.Fatal(err)
	}
	if err := a.AttributeOwnershipAcquisitionIfAvailable(hb, logical); !errors.Is(err, ErrAttributeNotPublished) {
		t.Errorf("acquisition of B's MOM attribute: %v", err)
	}
	if err := a.QueryAttributeOwnership(hb, logical); err != nil {
		t.Fatal(err)
	}
	ev, _ := waitFor(t, a, 5*time.Second, isType[AttributeIsOwnedByRTI])
	if e := ev.(AttributeIsOwnedByRTI); e.Object != hb || e.Attribute != logical {
		t.Errorf("ownership answer %+v", e)
	}
	if owned, err := a.IsAttributeOwnedByFederate(v.handleOf(a.Name()), logical); err != nil || owned {
		t.Errorf("A owns its own MOM attribute: %v, %v", owned, err)
	}

	// A federate that resigns, whatever the action, or is lost, takes
	// its instance with it; a federate lost under the default directive
	// leaves its other instances (C still knows B's Vehicle).
	if err := c.ResignFederationExecution(t.Context(), NoAction); err != nil {
		t.Fatal(err)
	}
	v.until("C's instance removed", func() bool { return v.handleOf(c.Name()).IsZero() })
	m.reg.Crash(m.name, b.Handle())
	v.until("B's instance removed", func() bool { return v.handleOf(b.Name()).IsZero() })
	if v.handleOf(a.Name()).IsZero() {
		t.Error("A's own instance went too")
	}
}

// timeOf decodes an HLAlogicalTime or HLAtimeInterval value.
func timeOf(t *testing.T, f *Federate, v any) float64 {
	t.Helper()
	b, ok := v.([]byte)
	if !ok {
		t.Fatalf("a time value is %T", v)
	}
	lt, err := f.GetTimeFactory().Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	x, err := f.cfg.timeKind().Value(lt)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// momClient sends MOM requests and collects the reports a federate
// receives, decoded.
type momClient struct {
	t   *testing.T
	f   *Federate
	enc *codec.Codec
	got []momReport
}

type momReport struct {
	class string // under HLAinteractionRoot.HLAmanager.
	args  map[string]any
}

func newMOMClient(t *testing.T, f *Federate) *momClient {
	t.Helper()
	enc, err := codec.New(f.FDD())
	if err != nil {
		t.Fatal(err)
	}
	c := &momClient{t: t, f: f, enc: enc}
	for _, n := range []string{"HLAfederate.HLAreport", "HLAfederation.HLAreport"} {
		ic, ok := f.FDD().InteractionClass("HLAinteractionRoot.HLAmanager." + n)
		if !ok {
			t.Fatalf("no %s", n)
		}
		for _, leaf := range ic.Children { // each report with its own parameters
			if err := f.SubscribeInteractionClass(leaf.Handle); err != nil {
				t.Fatal(err)
			}
		}
	}
	return c
}

// send publishes and sends HLAinteractionRoot.HLAmanager.<name>.
func (c *momClient) send(name string, args map[string]any) {
	c.t.Helper()
	ic, ok := c.f.FDD().InteractionClass("HLAinteractionRoot.HLAmanager." + name)
	if !ok {
		c.t.Fatalf("no MOM interaction %s", name)
	}
	if err := c.f.PublishInteractionClass(ic.Handle); err != nil {
		c.t.Fatal(err)
	}
	vals := ParameterValues{}
	for n, v := range args {
		p, ok := ic.Parameter(n)
		if !ok {
			c.t.Fatalf("%s has no parameter %s", name, n)
		}
		b, err := c.enc.Encode(p.DataType, v)
		if err != nil {
			c.t.Fatalf("%s.%s: %v", name, n, err)
		}
		vals[p.Handle] = b
	}
	if err := c.f.SendInteraction(ic.Handle, vals, nil); err != nil {
		c.t.Fatal(err)
	}
}

// wait takes events until n reports of class have come (besides those
// taken before), and returns them.
func (c *momClient) wait(class string, n int) []momReport {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var out []momReport
		for _, r := range c.got {
			if r.class == class {
				out = append(out, r)
			}
		}
		if len(out) >= n {
			if len(out) > n {
				c.t.Fatalf("%d %s reports, want %d: %v", len(out), class, n, out)
			}
			c.got = slices.DeleteFunc(c.got, func(r momReport) bool { return r.class == class })
			return out
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%d of %d %s reports in 10 s; have %v", len(out), n, class, c.got)
		}
		c.waitOne()
	}
}

// waitOne takes the next event, if one comes within 10 ms, keeping a
// report.
// setReporting sends the HLAadjust interaction name (a reporting
// switch) for f with state on, and waits until f has taken it: f answers
// a publication request sent after it.
func (c *momClient) setReporting(name string, f *Federate, on bool) {
	c.t.Helper()
	to := map[string]any{"HLAfederate": handleBytes(f.Handle())}
	c.send("HLAfederate.HLAadjust."+name, map[string]any{"HLAfederate": to["HLAfederate"], "HLAreportingState": on})
	c.send("HLAfederate.HLArequest.HLArequestPublications", to)
	c.wait("HLAfederate.HLAreport.HLAreportInteractionPublication", 1)
	c.wait("HLAfederate.HLAreport.HLAreportObjectClassPublication", 1)
}

func (c *momClient) waitOne() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	ev, err := c.f.Next(ctx)
	cancel()
	if e, ok := ev.(ReceiveInteraction); err == nil && ok {
		ic, _ := c.f.FDD().InteractionClassByHandle(e.Class)
		if !ic.IsMOM() {
			return
		}
		r := momReport{class: strings.TrimPrefix(ic.QualifiedName, "HLAinteractionRoot.HLAmanager."), args: map[string]any{}}
		for h, b := range e.Values {
			p, _ := ic.ParameterByHandle(h)
			v, err := c.enc.Decode(p.DataType, b)
			if err != nil {
				c.t.Fatalf("%s.%s does not decode: %v", r.class, p.Name, err)
			}
			r.args[p.Name] = v
		}
		c.got = append(c.got, r)
	}
}

// drain takes events for d, keeping the reports.
func (c *momClient) drain(d time.Duration) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		c.waitOne()
	}
}

func handleBytes[H ~uint64](h H) []byte { return EncodeHandle(h) }

// The MOM's requests and reports, on a clean network and under 5% loss,
// 2% duplication and 5% reordering (the data plane repairs; nothing of
// the MOM's is lost or doubled).
func TestMOMInteractions(t *testing.T) {
	for _, c := range []struct {
		name   string
		faults transport.Faults
	}{
		{"clean", transport.Faults{}},
		{"faults", transport.Faults{Loss: 0.05, Duplicate: 0.02, Reorder: 0.05}},
	} {
		t.Run(c.name, func(t *testing.T) { testMOMInteractions(t, c.faults) })
	}
}

// updateTwice has b register a Vehicle that c discovers and update its
// label twice, and waits until c has reflected both updates: the counts
// the MOM tests read. It returns the instance.
func updateTwice(t *testing.T, b, c *Federate, h testHandles) ObjectInstanceHandle {
	t.Helper()
	obj := labelFlow(t, b, c, h, 5*time.Second)
	for i := 0; i < 2; i++ {
		if err := b.UpdateAttributeValues(obj, AttributeValues{h.label: []byte("x")}, nil); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, c, 5*time.Second, isType[ReflectAttributeValues])
	waitFor(t, c, 5*time.Second, isType[ReflectAttributeValues])
	return obj
}

func testMOMInteractions(t *testing.T, faults transport.Faults) {
	m := newMemFederation(t, 3, faults, 43)
	a, b, c := m.feds[0], m.feds[1], m.feds[2]
	mc := newMOMClient(t, a)
	h := handles(t, b)
	if err := b.SubscribeInteractionClass(h.honk); err != nil {
		t.Fatal(err)
	}
	obj := updateTwice(t, b, c, h)
	toB := map[string]any{"HLAfederate": handleBytes(b.Handle())}

	mc.send("HLAfederate.HLArequest.HLArequestPublications", toB)
	pub := mc.wait("HLAfederate.HLAreport.HLAreportObjectClassPublication", 1)[0].args
	if pub["HLAnumberOfClasses"] != int64(1) || !bytes.Equal(pub["HLAobjectClass"].([]byte), handleBytes(h.vehicle)) {
		t.Errorf("B's object class publication %v", pub)
	}
	if attrs := pub["HLAattributeList"].([]any); len(attrs) != 1 || !bytes.Equal(attrs[0].([]byte), handleBytes(h.label)) {
		t.Errorf("B's published attributes %v", attrs)
	}
	if ip := mc.wait("HLAfederate.HLAreport.HLAreportInteractionPublication", 1)[0].args; len(ip["HLAinteractionClassList"].([]any)) != 0 {
		t.Errorf("B's interaction publications %v", ip)
	}

	mc.send("HLAfederate.HLArequest.HLArequestSubscriptions", toB)
	is := mc.wait("HLAfederate.HLAreport.HLAreportInteractionSubscription", 1)[0].args["HLAinteractionClassList"].([]any)
	if len(is) != 1 || !bytes.Equal(is[0].(map[string]any)["HLAinteractionClass"].([]byte), handleBytes(h.honk)) || is[0].(map[string]any)["HLAactive"] != true {
		t.Errorf("B's interaction subscriptions %v", is)
	}
	if os := mc.wait("HLAfederate.HLAreport.HLAreportObjectClassSubscription", 1)[0].args; os["HLAnumberOfClasses"] != int64(0) {
		t.Errorf("B's object class subscriptions %v", os)
	}

	mc.send("HLAfederate.HLArequest.HLArequestUpdatesSent", toB)
	for _, r := range mc.wait("HLAfederate.HLAreport.HLAreportUpdatesSent", 2) {
		counts := r.args["HLAupdateCounts"].([]any)
		switch r.args["HLAtransportation"] {
		case "HLAreliable":
			if len(counts) != 1 || counts[0].(map[string]any)["HLAcount"] != int64(2) {
				t.Errorf("B's reliable updates %v", counts)
			}
		case "HLAbestEffort":
			if len(counts) != 0 {
				t.Errorf("B's best-effort updates %v", counts)
			}
		default:
			t.Errorf("report %v", r.args)
		}
	}
	mc.send("HLAfederate.HLArequest.HLArequestReflectionsReceived", map[string]any{"HLAfederate": handleBytes(c.Handle())})
	for _, r := range mc.wait("HLAfederate.HLAreport.HLAreportReflectionsReceived", 2) {
		if counts := r.args["HLAreflectCounts"].([]any); r.args["HLAtransportation"] == "HLAreliable" && (len(counts) != 1 || counts[0].(map[string]any)["HLAcount"] != int64(2)) {
			t.Errorf("C's reliable reflections %v", counts)
		}
	}

	mc.send("HLAfederate.HLArequest.HLArequestObjectInstanceInformation", map[string]any{"HLAfederate": handleBytes(b.Handle()), "HLAobjectInstance": obj.Encode()})
	info := mc.wait("HLAfederate.HLAreport.HLAreportObjectInstanceInformation", 1)[0].args
	if !bytes.Equal(info["HLAregisteredClass"].([]byte), handleBytes(h.vehicle)) || len(info["HLAownedInstanceAttributeList"].([]any)) != 2 {
		t.Errorf("instance information %v", info)
	}

	// What this MOM does not do is said so, by the federate's node.
	mc.send("HLAfederate.HLAservice.HLAresignFederationExecution", map[string]any{"HLAfederate": handleBytes(b.Handle()), "HLAresignAction": "NoAction"})
	ex := mc.wait("HLAfederate.HLAreport.HLAreportMOMexception", 1)[0].args
	if ex["HLAservice"] != "HLAinteractionRoot.HLAmanager.HLAfederate.HLAservice.HLAresignFederationExecution" || !bytes.Equal(ex["HLAfederate"].([]byte), handleBytes(b.Handle())) {
		t.Errorf("exception %v", ex)
	}

	// Services on a federate's behalf: C is made constrained and
	// subscribed; a service that fails, or lacks a parameter, is reported.
	toC := map[string]any{"HLAfederate": handleBytes(c.Handle())}
	mc.send("HLAfederate.HLAservice.HLAenableTimeConstrained", toC)
	waitFor(t, c, 5*time.Second, isType[TimeConstrainedEnabled])
	mc.send("HLAfederate.HLAservice.HLAsubscribeInteractionClass", map[string]any{"HLAfederate": handleBytes(c.Handle()), "HLAinteractionClass": handleBytes(h.longHonk), "HLAactive": false})
	mc.send("HLAfederate.HLArequest.HLArequestSubscriptions", toC)
	is = mc.wait("HLAfederate.HLAreport.HLAreportInteractionSubscription", 1)[0].args["HLAinteractionClassList"].([]any)
	if len(is) != 1 || !bytes.Equal(is[0].(map[string]any)["HLAinteractionClass"].([]byte), handleBytes(h.longHonk)) || is[0].(map[string]any)["HLAactive"] != false {
		t.Errorf("C's interaction subscriptions after the service %v", is)
	}
	mc.wait("HLAfederate.HLAreport.HLAreportObjectClassSubscription", 1)
	mc.send("HLAfederate.HLAservice.HLApublishInteractionClass", map[string]any{"HLAfederate": handleBytes(c.Handle()), "HLAinteractionClass": handleBytes(InteractionClassHandle(12345))})
	ex = mc.wait("HLAfederate.HLAreport.HLAreportMOMexception", 1)[0].args
	if !strings.Contains(ex["HLAexception"].(string), "not defined") || ex["HLAparameterError"] != false {
		t.Errorf("a service that fails: %v", ex)
	}
	mc.send("HLAfederate.HLAservice.HLAtimeAdvanceRequest", toC)
	ex = mc.wait("HLAfederate.HLAreport.HLAreportMOMexception", 1)[0].args
	if ex["HLAparameterError"] != true {
		t.Errorf("a service without its parameter: %v", ex)
	}

	// Service reporting: C's calls are reported while it is on, and C
	// may not subscribe to the reports meanwhile.
	mc.setReporting("HLAsetServiceReporting", c, true)
	if err := c.PublishInteractionClass(h.honk); err != nil {
		t.Fatal(err)
	}
	report, _ := c.FDD().InteractionClass("HLAinteractionRoot.HLAmanager.HLAfederate.HLAreport.HLAreportServiceInvocation")
	if err := c.SubscribeInteractionClass(report.Handle); !errors.Is(err, ErrFederateServiceInvocationsAreBeingReportedViaMOM) {
		t.Errorf("subscribing to the reports of its own services: %v", err)
	}
	inv := mc.wait("HLAfederate.HLAreport.HLAreportServiceInvocation", 2)
	if inv[0].args["HLAservice"] != "publishInteractionClass" || inv[0].args["HLAsuccessIndicator"] != true || inv[0].args["HLAserialNumber"] != int64(0) ||
		!slices.Equal(inv[0].args["HLAsuppliedArguments"].([]any), []any{strconv.FormatUint(uint64(h.honk), 10)}) {
		t.Errorf("first service report %v", inv[0].args)
	}
	if inv[1].args["HLAservice"] != "subscribeInteractionClass" || inv[1].args["HLAsuccessIndicator"] != false || !strings.Contains(inv[1].args["HLAexception"].(string), "reported via MOM") {
		t.Errorf("second service report %v", inv[1].args)
	}
	mc.setReporting("HLAsetServiceReporting", c, false)
	if err := c.UnpublishInteractionClass(h.honk); err != nil {
		t.Fatal(err)
	}

	// Exception reporting: an error B's callback returns is reported.
	mc.setReporting("HLAsetExceptionReporting", b, true)
	if err := a.PublishInteractionClass(h.honk); err != nil {
		t.Fatal(err)
	}
	if err := a.SendInteraction(h.honk, ParameterValues{h.loudness: []byte("9")}, nil); err != nil {
		t.Fatal(err)
	}
	dctx, dcancel := context.WithTimeout(t.Context(), 5*time.Second)
	if err := Dispatch(dctx, b, failingAmbassador{}); !errors.Is(err, ErrFederateInternalError) {
		t.Errorf("dispatch to a failing callback: %v", err)
	}
	dcancel()
	rep := mc.wait("HLAfederate.HLAreport.HLAreportException", 1)[0].args
	if rep["HLAservice"] != "receiveInteraction" || rep["HLAexception"] != "the callback failed" {
		t.Errorf("exception report %v", rep)
	}

	// HLAsetTiming: B's values come every second without a request.
	v := newMOMView(t, a)
	if err := a.EnableAsynchronousDelivery(); err != nil {
		t.Fatal(err)
	}
	v.subscribe()
	v.until("discovery", func() bool { return !v.handleOf(b.Name()).IsZero() })
	mc.send("HLAfederate.HLAadjust.HLAsetTiming", map[string]any{"HLAfederate": handleBytes(b.Handle()), "HLAreportPeriod": 1})
	v.until("a periodic report of B", func() bool { return v.of(b.Name())["HLAfederateName"] == b.Name() })
	// C, constrained and not advancing, holds its receive-order messages;
	// its node answers for its MOM instance all the same.
	hc := v.handleOf(c.Name())
	delete(v.values, hc)
	if err := a.RequestAttributeValueUpdate(hc, nil, v.attrs()...); err != nil {
		t.Fatal(err)
	}
	v.until("the values of constrained C", func() bool { return v.values[hc] != nil })
	if v.values[hc]["HLAtimeConstrained"] != true {
		t.Errorf("C's values: %v", v.values[hc])
	}

	// About the federation: one report, from this federate's own node.
	if err := b.RegisterFederationSynchronizationPoint("p", nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, a, 5*time.Second, isType[AnnounceSynchronizationPoint])
	mc.send("HLAfederation.HLArequest.HLArequestSynchronizationPoints", nil)
	if sp := mc.wait("HLAfederation.HLAreport.HLAreportSynchronizationPoints", 1)[0].args["HLAsyncPoints"].([]any); len(sp) != 1 || sp[0] != "p" {
		t.Errorf("synchronization points %v", sp)
	}
	mc.send("HLAfederation.HLArequest.HLArequestSynchronizationPointStatus", nil)
	st := mc.wait("HLAfederation.HLAreport.HLAreportSynchronizationPointStatus", 1)[0].args
	if fs := st["HLAsyncPointFederates"].([]any); st["HLAsyncPointName"] != "p" || len(fs) != 3 || fs[0].(map[string]any)["HLAfederateSynchStatus"] != "MovingToSynchPoint" {
		t.Errorf("synchronization point status %v", st)
	}
	mc.send("HLAfederation.HLArequest.HLArequestMIMdata", nil)
	if mim := mc.wait("HLAfederation.HLAreport.HLAreportMIMdata", 1)[0].args["HLAMIMdata"].(string); !strings.Contains(mim, "HLAmanager") {
		t.Errorf("MIM data %.80q", mim)
	}
	mc.send("HLAfederation.HLArequest.HLArequestFOMmoduleData", map[string]any{"HLAFOMmoduleIndicator": 0})
	if fom := mc.wait("HLAfederation.HLAreport.HLAreportFOMmoduleData", 1)[0].args["HLAFOMmoduleData"].(string); !strings.Contains(fom, "Vehicle") {
		t.Errorf("FOM module data %.80q", fom)
	}

	// A federation-wide switch: refused, to the sender, by its node.
	mc.send("HLAfederation.HLAadjust.HLAsetSwitches", map[string]any{"HLAautoProvide": "Enabled"})
	ex = mc.wait("HLAfederate.HLAreport.HLAreportMOMexception", 1)[0].args
	if ex["HLAservice"] != "HLAinteractionRoot.HLAmanager.HLAfederation.HLAadjust.HLAsetSwitches" || !bytes.Equal(ex["HLAfederate"].([]byte), handleBytes(a.Handle())) {
		t.Errorf("federation switches: %v", ex)
	}

	// The federation's own MOM instance.
	fedClass, err := a.GetObjectClassHandle("HLAobjectRoot.HLAmanager.HLAfederation")
	if err != nil {
		t.Fatal(err)
	}
	oc, _ := a.FDD().ObjectClass("HLAobjectRoot.HLAmanager.HLAfederation")
	var all []AttributeHandle
	for _, at := range oc.AllAttributes() {
		all = append(all, at.Handle)
	}
	if err := a.SubscribeObjectClassAttributes(fedClass, all...); err != nil {
		t.Fatal(err)
	}
	ev, _ := waitFor(t, a, 5*time.Second, func(ev Event) bool { d, ok := ev.(DiscoverObjectInstance); return ok && d.Class == fedClass })
	fedObj := ev.(DiscoverObjectInstance).Object
	if err := a.RequestAttributeValueUpdate(fedObj, nil, all...); err != nil {
		t.Fatal(err)
	}
	ev, _ = waitFor(t, a, 5*time.Second, func(ev Event) bool { r, ok := ev.(ReflectAttributeValues); return ok && r.Object == fedObj })
	vals := map[string]any{}
	for at, bs := range ev.(ReflectAttributeValues).Values {
		a, _ := oc.AttributeByHandle(at)
		x, err := mc.enc.Decode(a.DataType, bs)
		if err != nil {
			t.Fatalf("%s: %v", a.Name, err)
		}
		vals[a.Name] = x
	}
	if vals["HLAfederationName"] != "fed" || len(vals["HLAfederatesInFederation"].([]any)) != 3 || vals["HLAtimeImplementationName"] != "HLAfloat64Time" || vals["HLAMIMdesignator"] != "HLAstandardMIM" {
		t.Errorf("the federation's MOM instance: %v", vals)
	}

	// A lost federate is reported once, by this federate's node.
	m.reg.Crash(m.name, c.Handle())
	lost := mc.wait("HLAfederate.HLAreport.HLAreportFederateLost", 1)[0].args
	if lost["HLAfederateName"] != c.Name() || !bytes.Equal(lost["HLAfederate"].([]byte), handleBytes(c.Handle())) {
		t.Errorf("federate lost %v", lost)
	}
	// Nothing more comes: no report was doubled.
	mc.drain(300 * time.Millisecond)
	if len(mc.got) > 0 {
		t.Errorf("reports left over: %v", mc.got)
	}
}

// The MOM across a save and a restore: the instances known at the save
// are known after the restore, their values still come when asked for,
// and the federation's instance names the last save.
func TestMOMSaveRestore(t *testing.T) {
	m, _ := cleanFederation(t, 2, 47)
	a, b := m.feds[0], m.feds[1]
	if err := a.EnableAsynchronousDelivery(); err != nil {
		t.Fatal(err)
	}
	v := newMOMView(t, a)
	v.subscribe()
	v.until("both instances", func() bool { return len(v.names) == 2 })
	for _, ev := range saveAll(t, m, "mom", func(*Federate) bool { return false }) {
		if _, ok := ev.(FederationSaved); !ok {
			t.Fatalf("save: %#v", ev)
		}
	}
	if err := a.RequestFederationRestore("mom"); err != nil {
		t.Fatal(err)
	}
	for _, f := range m.feds {
		waitFor(t, f, 5*time.Second, isType[InitiateFederateRestore])
		if err := f.FederateRestoreComplete(); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range m.feds {
		waitFor(t, f, 5*time.Second, isType[FederationRestored])
	}
	hb := v.handleOf(b.Name())
	if name, err := a.GetObjectInstanceName(hb); err != nil || name != "HLAfederate."+b.Name() {
		t.Fatalf("B's MOM instance after the restore: %q, %v", name, err)
	}
	delete(v.values, hb)
	if err := a.RequestAttributeValueUpdate(hb, nil, v.attrs()...); err != nil {
		t.Fatal(err)
	}
	v.until("B's values after the restore", func() bool { return v.values[hb]["HLAfederateName"] == b.Name() })

	fedClass, _ := a.FDD().ObjectClass("HLAobjectRoot.HLAmanager.HLAfederation")
	var all []AttributeHandle
	for _, at := range fedClass.AllAttributes() {
		all = append(all, at.Handle)
	}
	if err := a.SubscribeObjectClassAttributes(fedClass.Handle, all...); err != nil {
		t.Fatal(err)
	}
	ev, _ := waitFor(t, a, 5*time.Second, func(ev Event) bool { d, ok := ev.(DiscoverObjectInstance); return ok && d.Class == fedClass.Handle })
	fed := ev.(DiscoverObjectInstance).Object
	last, _ := fedClass.Attribute("HLAlastSaveName")
	if err := a.RequestAttributeValueUpdate(fed, nil, last.Handle); err != nil {
		t.Fatal(err)
	}
	ev, _ = waitFor(t, a, 5*time.Second, func(ev Event) bool { r, ok := ev.(ReflectAttributeValues); return ok && r.Object == fed })
	if got, err := v.enc.Decode("HLAunicodeString", ev.(ReflectAttributeValues).Values[last.Handle]); err != nil || got != "mom" {
		t.Errorf("HLAlastSaveName %v, %v", got, err)
	}
}

// failingAmbassador fails every interaction it is given.
type failingAmbassador struct{ NullFederateAmbassador }

func (failingAmbassador) ReceiveInteraction(InteractionClassHandle, ParameterValues, []byte, OrderType, ReflectInfo) error {
	return errors.New("the callback failed")
}

// Every MOM request, with its parameters garbled, addressed to a
// federate: its node answers what it can, reports the rest, and panics
// at nothing; the federation goes on.
func TestMOMBadInput(t *testing.T) {
	m, _ := cleanFederation(t, 2, 53)
	a, b := m.feds[0], m.feds[1]
	mc := newMOMClient(t, a)
	rng := rand.New(rand.NewPCG(53, 1))
	garble := func() []byte {
		bs := make([]byte, rng.IntN(24))
		for i := range bs {
			bs[i] = byte(rng.Uint32())
		}
		return bs
	}
	sent := 0
	for round := 0; round < 20; round++ {
		for _, ic := range a.FDD().InteractionClasses {
			if !ic.IsMOM() || len(ic.Children) > 0 || strings.Contains(ic.QualifiedName, ".HLAreport.") {
				continue
			}
			if err := a.PublishInteractionClass(ic.Handle); err != nil {
				t.Fatal(err)
			}
			vals := ParameterValues{}
			for _, p := range ic.AllParameters() {
				switch {
				case p.Name == "HLAfederate" && round%2 == 0:
					b8, _ := mc.enc.Encode("HLAhandle", handleBytes(b.Handle()))
					vals[p.Handle] = b8 // addressed to B, the rest garbled
				case rng.IntN(4) > 0:
					vals[p.Handle] = garble()
				}
			}
			if err := a.SendInteraction(ic.Handle, vals, nil); err != nil {
				t.Fatal(err)
			}
			sent++
		}
	}
	// B refused many of them, saying so; B still answers, and still works.
	mc.wait("HLAfederate.HLAreport.HLAreportMOMexception", 50)
	mc.got = nil
	mc.send("HLAfederate.HLArequest.HLArequestPublications", map[string]any{"HLAfederate": handleBytes(b.Handle())})
	mc.wait("HLAfederate.HLAreport.HLAreportInteractionPublication", 1)
	if _, err := b.QueryLogicalTime(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d garbled MOM requests sent", sent)
}

// The HLA 4 switch getters follow the switches; the MOM's reporting
// switches refuse a federate without the MOM, and a closed federate
// answers nothing.
func TestSwitchGettersAndReporting(t *testing.T) {
	m, _ := cleanFederation(t, 1, 59)
	a := m.feds[0]
	quiet := m.addWith("Quiet", testDoc(t), func(c *Config) { c.NoMOM = true })
	if on, err := a.GetObjectClassRelevanceAdvisorySwitch(); err != nil || on {
		t.Fatalf("relevance at join: %v, %v", on, err)
	}
	if err := a.EnableObjectClassRelevanceAdvisorySwitch(); err != nil {
		t.Fatal(err)
	}
	if on, err := a.GetObjectClassRelevanceAdvisorySwitch(); err != nil || !on {
		t.Errorf("relevance after Enable: %v, %v", on, err)
	}
	for _, set := range []func(bool) error{a.SetServiceReportingSwitch, a.SetExceptionReportingSwitch} {
		if err := set(true); err != nil {
			t.Fatal(err)
		}
	}
	if on, err := a.GetExceptionReportingSwitch(); err != nil || !on {
		t.Errorf("exception reporting: %v, %v", on, err)
	}
	if err := quiet.SetServiceReportingSwitch(true); !errors.Is(err, ErrRTIinternalError) {
		t.Errorf("service reporting without the MOM: %v", err)
	}
	if err := quiet.SetExceptionReportingSwitch(true); !errors.Is(err, ErrRTIinternalError) {
		t.Errorf("exception reporting without the MOM: %v", err)
	}
	if err := quiet.ResignFederationExecution(t.Context(), NoAction); err != nil {
		t.Fatal(err)
	}
	if _, err := quiet.GetServiceReportingSwitch(); !errors.Is(err, ErrFederateNotExecutionMember) {
		t.Errorf("a resigned federate's switch: %v", err)
	}
	if err := quiet.ListFederationExecutions(t.Context()); !errors.Is(err, ErrFederateNotExecutionMember) {
		t.Errorf("a resigned federate lists: %v", err)
	}
}
