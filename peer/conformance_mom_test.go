package peer

import (
	"bytes"
	"encoding/binary"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The MOM's reports a federate waits on (IEEE 1516.1-2010 §11, the
// MIM): HLAreportInteractionsSent and ...Received after their requests,
// whatever form the request's HLAfederate takes (the MIM's HLAhandle, or
// a handle's bytes alone, 8 or 4 of them); HLAreportException for a
// service that fails while exception reporting is on;
// HLAreportServiceInvocation, numbered from 0, for every service the
// federate invokes (with its arguments, and its results or its
// exception) and every callback at it, while service reporting is on;
// and HLAreportMOMexception, to its sender, for a request whose
// HLAfederate names nobody.
func TestConformanceMOMReports(t *testing.T) {
	m, h := cleanFederation(t, 2, 41)
	a, b := m.feds[0], m.feds[1]
	must := mustOK(t)
	mc := newMOMClient(t, a)
	const wait = 5 * time.Second

	// Interactions: B sends Honk three times and LongHonk twice to A.
	must(a.SubscribeInteractionClass(h.honk))
	must(a.SubscribeInteractionClass(h.longHonk))
	must(b.PublishInteractionClass(h.honk))
	must(b.PublishInteractionClass(h.longHonk))
	for i, ic := range []InteractionClassHandle{h.honk, h.honk, h.honk, h.longHonk, h.longHonk} {
		must(b.SendInteraction(ic, ParameterValues{h.loudness: []byte{byte(i)}}, nil))
		waitFor(t, a, wait, func(ev Event) bool {
			ri, ok := ev.(ReceiveInteraction)
			return ok && bytes.Equal(ri.Values[h.loudness], []byte{byte(i)})
		})
	}
	want := map[string]int64{strconv.FormatUint(uint64(h.honk), 10): 3, strconv.FormatUint(uint64(h.longHonk), 10): 2}
	counts := func(r momReport) map[string]int64 {
		out := map[string]int64{}
		for _, e := range r.args["HLAinteractionCounts"].([]any) {
			c := e.(map[string]any)
			out[strconv.FormatUint(binary.BigEndian.Uint64(c["HLAinteractionClass"].([]byte)), 10)] = c["HLAinteractionCount"].(int64)
		}
		return out
	}
	hlaHandle := func(b []byte) []byte { return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...) }
	raw := func(name string, params map[string][]byte) {
		t.Helper()
		ic, _ := a.FDD().InteractionClass("HLAinteractionRoot.HLAmanager." + name)
		must(a.PublishInteractionClass(ic.Handle))
		vals := ParameterValues{}
		for n, v := range params {
			p, _ := ic.Parameter(n)
			vals[p.Handle] = v
		}
		must(a.SendInteraction(ic.Handle, vals, nil))
	}
	b8 := EncodeHandle(b.Handle())
	for _, form := range []struct {
		name string
		enc  []byte
	}{
		{"HLAhandle", hlaHandle(b8)},
		{"the handle's bytes", b8},
		{"HLAhandle of 4 bytes", hlaHandle(b8[4:])},
	} {
		raw("HLAfederate.HLArequest.HLArequestInteractionsSent", map[string][]byte{"HLAfederate": form.enc})
		for _, r := range mc.wait("HLAfederate.HLAreport.HLAreportInteractionsSent", 2) {
			if !bytes.Equal(r.args["HLAfederate"].([]byte), b8) {
				t.Errorf("%s: a report about %x", form.name, r.args["HLAfederate"])
			}
			if r.args["HLAtransportation"] == "HLAreliable" && !maps.Equal(counts(r), want) {
				t.Errorf("%s: B sent %v, want Honk 3 and LongHonk 2", form.name, counts(r))
			}
		}
	}
	mc.send("HLAfederate.HLArequest.HLArequestInteractionsReceived", map[string]any{"HLAfederate": handleBytes(a.Handle())})
	for _, r := range mc.wait("HLAfederate.HLAreport.HLAreportInteractionsReceived", 2) {
		if got := counts(r); r.args["HLAtransportation"] == "HLAreliable" && (got[strconv.FormatUint(uint64(h.honk), 10)] != 3 || got[strconv.FormatUint(uint64(h.longHonk), 10)] != 2) {
			t.Errorf("A received %v, want Honk 3 and LongHonk 2 among them", got)
		}
	}
	// A request naming no federate is refused to its sender.
	raw("HLAfederate.HLArequest.HLArequestInteractionsSent", map[string][]byte{"HLAfederate": {1, 2, 3}})
	if ex := mc.wait("HLAfederate.HLAreport.HLAreportMOMexception", 1)[0].args; ex["HLAparameterError"] != true ||
		ex["HLAservice"] != "HLAinteractionRoot.HLAmanager.HLAfederate.HLArequest.HLArequestInteractionsSent" || !bytes.Equal(ex["HLAfederate"].([]byte), EncodeHandle(a.Handle())) {
		t.Errorf("a request naming nobody: %v", ex)
	}

	// Exception reporting: a service of B's that fails.
	mc.setReporting("HLAsetExceptionReporting", b, true)
	if _, err := b.GetObjectClassHandle("BogusClass"); err == nil {
		t.Fatal("a bogus class has a handle")
	}
	if rep := mc.wait("HLAfederate.HLAreport.HLAreportException", 1)[0].args; rep["HLAservice"] != "getObjectClassHandle" || !strings.Contains(rep["HLAexception"].(string), "BogusClass") {
		t.Errorf("exception report %v", rep)
	}
	mc.setReporting("HLAsetExceptionReporting", b, false)

	// Service reporting: B's services, their arguments and results, and
	// the callbacks at B.
	mc.setReporting("HLAsetServiceReporting", b, true)
	strs := func(v any) []string {
		var out []string
		for _, e := range v.([]any) {
			out = append(out, e.(string))
		}
		return out
	}
	_, err := b.GetObjectClassHandle("Vehicle")
	must(err)
	_, err = b.GetObjectClassHandle("BogusClass")
	if err == nil {
		t.Fatal("a bogus class has a handle")
	}
	must(b.RegisterFederationSynchronizationPoint("test", []byte("Hello")))
	waitFor(t, b, wait, isType[AnnounceSynchronizationPoint])
	reps := mc.wait("HLAfederate.HLAreport.HLAreportServiceInvocation", 5)
	type inv struct {
		service            string
		ok                 bool
		supplied, returned []string
	}
	var got []inv
	for i, r := range reps {
		if r.args["HLAserialNumber"] != int64(i) {
			t.Errorf("report %d numbered %v", i, r.args["HLAserialNumber"])
		}
		got = append(got, inv{r.args["HLAservice"].(string), r.args["HLAsuccessIndicator"].(bool), strs(r.args["HLAsuppliedArguments"]), strs(r.args["HLAreturnedArguments"])})
		if ok := r.args["HLAsuccessIndicator"].(bool); ok != (r.args["HLAexception"] == "") {
			t.Errorf("report %d: success %v, exception %q", i, ok, r.args["HLAexception"])
		}
	}
	hello := "[0x48,0x65,0x6c,0x6c,0x6f]"
	for i, w := range []inv{
		{"getObjectClassHandle", true, []string{"Vehicle"}, []string{strconv.FormatUint(uint64(h.vehicle), 10)}},
		{"getObjectClassHandle", false, []string{"BogusClass"}, nil},
		{"registerFederationSynchronizationPoint", true, []string{"test", hello}, nil},
		{"synchronizationPointRegistrationSucceeded", true, []string{"test"}, nil},
		{"announceSynchronizationPoint", true, []string{"test", hello}, nil},
	} {
		if i >= len(got) || got[i].service != w.service || got[i].ok != w.ok || !slices.Equal(got[i].supplied, w.supplied) || !slices.Equal(got[i].returned, w.returned) {
			t.Errorf("service report %d: %+v, want %+v", i, got[i], w)
		}
	}
}
