package gossip

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/meshrti/meshrti/gossip/internal/agree"
	"github.com/vmihailenco/msgpack/v5"
)

func testModule(name string, content []byte) agree.ModuleRec {
	sum := sha256.Sum256(content)
	return agree.ModuleRec{Name: name, Digest: hex.EncodeToString(sum[:]), Content: content}
}

func digests(ms []agree.ModuleRec) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Name)
	}
	return out
}

// TestFSMFederationModules: the federation record keeps the time
// representation and the modules; a join that adds modules is a
// compare-and-set on the module count.
func TestFSMFederationModules(t *testing.T) {
	a, b, c := agree.NodeID{Name: "a", Inc: 1}, agree.NodeID{Name: "b", Inc: 1}, agree.NodeID{Name: "c", Inc: 1}
	f := agree.NewFSM("l", a, 5)
	var changes []agree.Change
	apply := func(p agree.NodeID, o agree.Op) agree.OpResult {
		t.Helper()
		o.Seq = f.Sessions[p.Key()].Seq + 1
		var res []agree.OpResult
		_, res, changes = f.Apply(agree.EncodeBatch(agree.Batch{Proposer: p, Ops: []agree.Op{o}}))
		if len(res) != 1 {
			t.Fatalf("op %v: %d results", o.Kind, len(res))
		}
		return res[0]
	}
	m1, m2, m3 := testModule("m1", []byte("one")), testModule("m2", []byte("two")), testModule("m3", []byte("three"))

	if r := apply(a, agree.Op{Kind: agree.OpCreateFed, Name: "fed", Time: "HLAfloat64Time", Modules: []agree.ModuleRec{m1, m2, m1}}); r.Code != agree.CodeOK {
		t.Fatalf("create: %v", r.Code)
	}
	if got := digests(f.Fed.Modules); !slices.Equal(got, []string{"m1", "m2"}) || f.Fed.Time != "HLAfloat64Time" {
		t.Fatalf("record after create: %v %q", got, f.Fed.Time)
	}
	if len(changes) != 1 || changes[0].Kind != agree.ChFedCreated || len(changes[0].Modules) != 2 {
		t.Fatalf("create changes: %+v", changes)
	}

	// Another time representation is refused; none is not checked.
	if r := apply(b, agree.Op{Kind: agree.OpJoinFed, Name: "b", Time: "HLAinteger64Time"}); r.Code != agree.CodeTimeRepresentation {
		t.Fatalf("join with another time: %v", r.Code)
	}
	// Adding a module against a stale count changes nothing.
	if r := apply(b, agree.Op{Kind: agree.OpJoinFed, Name: "b", Modules: []agree.ModuleRec{m3}, Known: 1}); r.Code != agree.CodeModulesChanged {
		t.Fatalf("join with a stale module count: %v", r.Code)
	}
	if len(f.Fed.Modules) != 2 || len(f.Fed.Federates) != 0 || len(changes) != 0 {
		t.Fatalf("a refused join changed the record: %v %v %v", digests(f.Fed.Modules), f.Fed.Federates, changes)
	}
	// Modules the record holds need no check, whatever the count.
	if r := apply(b, agree.Op{Kind: agree.OpJoinFed, Name: "b", Time: "HLAfloat64Time", Modules: []agree.ModuleRec{m2}, Known: 0}); r.Code != agree.CodeOK {
		t.Fatalf("join with known modules: %v", r.Code)
	}
	if len(f.Fed.Modules) != 2 || len(changes) != 1 || changes[0].Kind != agree.ChFederateJoined {
		t.Fatalf("join with known modules: %v %+v", digests(f.Fed.Modules), changes)
	}
	// A name in use adds nothing either.
	if r := apply(c, agree.Op{Kind: agree.OpJoinFed, Name: "b", Modules: []agree.ModuleRec{m3}, Known: 2}); r.Code != agree.CodeNameInUse {
		t.Fatalf("join under a used name: %v", r.Code)
	}
	if len(f.Fed.Modules) != 2 {
		t.Fatalf("a refused join added modules: %v", digests(f.Fed.Modules))
	}
	// With the current count the new module is appended, announced
	// before the federate.
	if r := apply(c, agree.Op{Kind: agree.OpJoinFed, Name: "c", Modules: []agree.ModuleRec{m3, m1}, Known: 2}); r.Code != agree.CodeOK {
		t.Fatalf("join adding a module: %v", r.Code)
	}
	if got := digests(f.Fed.Modules); !slices.Equal(got, []string{"m1", "m2", "m3"}) {
		t.Fatalf("record after join: %v", got)
	}
	if len(changes) != 2 || changes[0].Kind != agree.ChFedModules || len(changes[0].Modules) != 3 || changes[1].Kind != agree.ChFederateJoined {
		t.Fatalf("join changes: %+v", changes)
	}
	// The modules a change carries stay as they were when the record grows.
	announced := changes[0].Modules
	if r := apply(a, agree.Op{Kind: agree.OpJoinFed, Name: "a", Modules: []agree.ModuleRec{testModule("m4", []byte("four"))}, Known: 3}); r.Code != agree.CodeOK {
		t.Fatalf("join: %v", r.Code)
	}
	if len(announced) != 3 || len(f.Fed.Modules) != 4 {
		t.Fatalf("announced %d, record %d", len(announced), len(f.Fed.Modules))
	}

	// The size limit holds for creators and joiners alike.
	g := agree.NewFSM("l", a, 5)
	f = g
	big := testModule("big", make([]byte, agree.MaxModuleBytes/2+1))
	if r := apply(a, agree.Op{Kind: agree.OpCreateFed, Name: "fed", Modules: []agree.ModuleRec{big, testModule("big2", make([]byte, agree.MaxModuleBytes/2+2))}}); r.Code != agree.CodeModulesTooLarge || f.Fed != nil {
		t.Fatalf("create over the limit: %v", r.Code)
	}
	apply(a, agree.Op{Kind: agree.OpCreateFed, Name: "fed", Modules: []agree.ModuleRec{big}})
	if r := apply(b, agree.Op{Kind: agree.OpJoinFed, Name: "b", Modules: []agree.ModuleRec{testModule("big2", make([]byte, agree.MaxModuleBytes/2+2))}, Known: 1}); r.Code != agree.CodeModulesTooLarge {
		t.Fatalf("join over the limit: %v", r.Code)
	}
	if len(f.Fed.Federates) != 0 || len(f.Fed.Modules) != 1 {
		t.Fatal("a join over the limit changed the record")
	}
}

// TestFederationRecordEncoding: records round-trip through snapshots; an
// empty record encodes without the new fields; entries and snapshots of
// the earlier format (a FOM digest, no modules) still apply and decode.
func TestFederationRecordEncoding(t *testing.T) {
	buf, err := msgpack.Marshal(&agree.FederationRec{})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := msgpack.Unmarshal(buf, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"t", "m", "f", "i"} {
		if _, ok := m[k]; ok {
			t.Fatalf("empty record encodes field %q: %v", k, m)
		}
	}
	var back agree.FederationRec
	if err := decode(buf, &back); err != nil || back.Time != "" || back.Modules != nil {
		t.Fatalf("empty record: %+v %v", back, err)
	}

	a := agree.NodeID{Name: "a", Inc: 1}
	f := agree.NewFSM("l", a, 5)
	mod := testModule("m", []byte("<objectModel/>"))
	mim := testModule("mim", []byte("<objectModel>mim</objectModel>"))
	f.Apply(agree.EncodeBatch(agree.Batch{Proposer: a, Ops: []agree.Op{{Seq: 1, Kind: agree.OpCreateFed, Name: "fed", Time: "HLAfloat64Time", Modules: []agree.ModuleRec{mod}, MIM: []agree.ModuleRec{mim}}}}))
	g, err := agree.DecodeFSM(f.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if g.Fed.Time != "HLAfloat64Time" || len(g.Fed.Modules) != 1 || !bytes.Equal(g.Fed.Modules[0].Content, mod.Content) || g.Fed.Modules[0].Digest != mod.Digest {
		t.Fatalf("record after a snapshot: %+v", g.Fed)
	}
	if fi := federationInfo(g.Fed); fi.MIM == nil || fi.MIM.Digest != mim.Digest || !bytes.Equal(fi.MIM.Content, mim.Content) {
		t.Fatalf("MIM after a snapshot: %+v", fi.MIM)
	}
	if !bytes.Equal(g.Encode(), f.Encode()) {
		t.Fatal("a decoded snapshot encodes differently")
	}

	// The earlier format: create carried the FOM digest in op.Type, the
	// record kept it under "f".
	type oldOp struct {
		Seq  uint64       `msgpack:"s"`
		Kind agree.OpKind `msgpack:"k"`
		Name string       `msgpack:"n,omitempty"`
		Type string       `msgpack:"t,omitempty"`
	}
	type oldBatch struct {
		Proposer agree.NodeID `msgpack:"p"`
		Ops      []oldOp      `msgpack:"o"`
	}
	old, _ := msgpack.Marshal(&oldBatch{Proposer: a, Ops: []oldOp{{Seq: 1, Kind: agree.OpCreateFed, Name: "fed", Type: "digest"}}})
	h := agree.NewFSM("l", a, 5)
	if _, res, _ := h.Apply(old); len(res) != 1 || res[0].Code != agree.CodeOK || h.Fed == nil || h.Fed.Name != "fed" {
		t.Fatalf("earlier create entry: %+v %+v", res, h.Fed)
	}
	type oldRec struct {
		Name       string `msgpack:"n"`
		FOMDigest  string `msgpack:"f,omitempty"`
		NextHandle uint64 `msgpack:"x"`
	}
	snap := map[string]any{"l": "l", "x": 1, "m": 5, "r": []agree.NodeID{a}, "k": map[string]agree.KeyEntry{}, "s": map[string]agree.Session{},
		"f": oldRec{Name: "fed", FOMDigest: "digest", NextHandle: 1}}
	buf, _ = msgpack.Marshal(snap)
	if g, err := agree.DecodeFSM(buf); err != nil || g.Fed == nil || g.Fed.Name != "fed" || g.Fed.Modules != nil {
		t.Fatalf("earlier snapshot: %+v %v", g, err)
	}
}

func TestModuleRecs(t *testing.T) {
	content := []byte("<objectModel/>")
	sum := sha256.Sum256(content)
	d := hex.EncodeToString(sum[:])
	recs, err := moduleRecs([]Module{{Name: "a", Content: content}, {Name: "b", Digest: d, Content: content}, {Name: "c", Digest: "AB" + d[2:], Content: []byte("x")}})
	if !errors.Is(err, ErrInvalidModule) {
		t.Fatalf("wrong digest: %v %v", recs, err)
	}
	recs, err = moduleRecs([]Module{{Name: "a", Content: content}, {Name: "b", Digest: d, Content: content}})
	if err != nil || len(recs) != 1 || recs[0].Digest != d {
		t.Fatalf("digest filled in and duplicates dropped: %+v %v", recs, err)
	}
	content[0] = 'X'
	if recs[0].Content[0] != '<' {
		t.Fatal("the caller's content is shared")
	}
	if _, err := moduleRecs([]Module{{Content: make([]byte, agree.MaxModuleBytes+1)}}); !errors.Is(err, ErrModulesTooLarge) {
		t.Fatalf("oversized: %v", err)
	}
}

// TestFederationModulesAcrossCluster: 200 KB modules travel in Paxos
// messages, catch-up entries and a late joiner's snapshot; every member
// ends with the same record and hears of each growth.
func TestFederationModulesAcrossCluster(t *testing.T) {
	h := newHarness(t, 2, nil)
	h.waitRoster(2)
	rng := rand.New(rand.NewPCG(1, 2))
	module := func(name string) Module {
		b := make([]byte, 200<<10)
		for i := range b {
			b[i] = byte(rng.Uint32()) // incompressible, like a gzip-compressed module
		}
		return Module{Name: name, Content: b}
	}
	fom, radar, late, mim := module("fom.xml"), module("radar.xml"), module("late.xml"), module("mim.xml")
	const timeRep = "HLAfloat64Time"
	huge := Module{Name: "huge", Content: make([]byte, agree.MaxModuleBytes-len(fom.Content)+1)}
	if err := h.nodes[0].CreateFederation(ctxT(t), FederationSpec{Modules: []Module{fom}, MIM: &huge}); !errors.Is(err, ErrModulesTooLarge) {
		t.Fatalf("create with a MIM over the limit: %v", err)
	}
	if err := h.nodes[0].CreateFederation(ctxT(t), FederationSpec{TimeRepresentation: timeRep, Modules: []Module{fom}, MIM: &mim}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, func() bool { _, ok := h.nodes[1].Federation(); return ok }, "n1 learns the federation")
	fi, _ := h.nodes[1].Federation()
	if len(fi.Modules) != 1 || !bytes.Equal(fi.Modules[0].Content, fom.Content) || fi.TimeRepresentation != timeRep {
		t.Fatalf("n1's record: %d modules, time %q", len(fi.Modules), fi.TimeRepresentation)
	}
	if _, err := h.nodes[1].JoinFederate(ctxT(t), JoinSpec{Name: "Radar", Type: "radar", TimeRepresentation: timeRep,
		Modules: []Module{fom, radar}, KnownModules: len(fi.Modules)}); err != nil {
		t.Fatal(err)
	}

	// A late joiner gets the record, modules included, in a snapshot.
	n2, err := h.start(2, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.waitMembers(3)
	waitFor(t, 5*time.Second, func() bool { fi, _ := n2.Federation(); return len(fi.Modules) == 2 }, "the late joiner has both modules")
	fi, _ = n2.Federation()
	if !bytes.Equal(fi.Modules[1].Content, radar.Content) || fi.Modules[1].Name != "radar.xml" {
		t.Fatal("the late joiner's second module differs")
	}
	if fi.MIM == nil || fi.MIM.Name != "mim.xml" || !bytes.Equal(fi.MIM.Content, mim.Content) {
		t.Fatalf("the late joiner's MIM: %+v", fi.MIM)
	}
	if _, err := n2.JoinFederate(ctxT(t), JoinSpec{Name: "Late", TimeRepresentation: "HLAinteger64Time"}); !errors.Is(err, ErrTimeRepresentation) {
		t.Fatalf("join with another time representation: %v", err)
	}
	if _, err := n2.JoinFederate(ctxT(t), JoinSpec{Name: "Late", Modules: []Module{late}, KnownModules: 1}); !errors.Is(err, ErrModulesChanged) {
		t.Fatalf("join against a stale module list: %v", err)
	}
	bad := late
	bad.Digest = hex.EncodeToString(make([]byte, sha256.Size))
	if _, err := n2.JoinFederate(ctxT(t), JoinSpec{Name: "Late", Modules: []Module{bad}, KnownModules: 2}); !errors.Is(err, ErrInvalidModule) {
		t.Fatalf("join with a wrong digest: %v", err)
	}
	if _, err := n2.JoinFederate(ctxT(t), JoinSpec{Name: "Late", Type: "late", TimeRepresentation: timeRep,
		Modules: []Module{late}, KnownModules: 2}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, func() bool {
		for _, n := range h.nodes {
			fi, _ := n.Federation()
			if len(fi.Modules) != 3 || len(fi.Federates) != 2 {
				return false
			}
		}
		return true
	}, "every member has the three modules and both federates")
	for _, n := range h.nodes {
		fi, _ := n.Federation()
		for i, want := range []Module{fom, radar, late} {
			if fi.Modules[i].Name != want.Name || !bytes.Equal(fi.Modules[i].Content, want.Content) {
				t.Fatalf("%s: module %d is %q", n.Name(), i, fi.Modules[i].Name)
			}
		}
	}
	// Every member heard of each growth, with the full list; the
	// founders also from the creation.
	waitFor(t, 5*time.Second, func() bool {
		for _, n := range h.nodes[:2] {
			evs := n.seen(EventFederationModulesChanged)
			if len(evs) != 2 || len(evs[0].Modules) != 2 || len(evs[1].Modules) != 3 {
				return false
			}
			if c := n.seen(EventFederationCreated); len(c) != 1 || len(c[0].Modules) != 1 {
				return false
			}
		}
		evs := n2.seen(EventFederationModulesChanged)
		return len(evs) >= 1 && len(evs[len(evs)-1].Modules) == 3
	}, "every member hears of the module changes")
	// What callers get is theirs: changing it does not change the record.
	fi, _ = h.nodes[0].Federation()
	fi.Modules[0].Content[0] ^= 0xff
	if again, _ := h.nodes[0].Federation(); !bytes.Equal(again.Modules[0].Content, fom.Content) {
		t.Fatal("Federation returns the record's own module content")
	}
	list, err := n2.ListFederations(ctxT(t))
	if err != nil || len(list) != 1 || len(list[0].Modules) != 3 {
		t.Fatalf("ListFederations: %v", err)
	}
	if st := n2.Stats(); st != (Stats{}) {
		t.Fatalf("input dropped: %+v", st)
	}
}

// TestFederationRecordCells: the DDM cell configuration a creator gives
// is kept in the record, survives a snapshot and is reported; a record
// without one (an earlier version's, or a creator's that gave none)
// encodes and decodes without it.
func TestFederationRecordCells(t *testing.T) {
	a := agree.NodeID{Name: "a", Inc: 1}
	cells := []byte(`{"DefaultCells":4}`)
	f := agree.NewFSM("l", a, 5)
	if _, res, _ := f.Apply(agree.EncodeBatch(agree.Batch{Proposer: a, Ops: []agree.Op{{Seq: 1, Kind: agree.OpCreateFed, Name: "fed", Cells: cells}}})); len(res) != 1 || res[0].Code != agree.CodeOK {
		t.Fatalf("create: %+v", res)
	}
	g, err := agree.DecodeFSM(f.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if fi := federationInfo(g.Fed); !bytes.Equal(fi.Cells, cells) {
		t.Fatalf("cells after a snapshot: %q, want %q", fi.Cells, cells)
	}

	h := agree.NewFSM("l", a, 5)
	h.Apply(agree.EncodeBatch(agree.Batch{Proposer: a, Ops: []agree.Op{{Seq: 1, Kind: agree.OpCreateFed, Name: "fed"}}}))
	var m map[string]any
	if err := msgpack.Unmarshal(h.Encode(), &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["f"].(map[string]any)["d"]; ok {
		t.Fatalf("a record without cells encodes them: %v", m["f"])
	}
	type oldRec struct {
		Name       string `msgpack:"n"`
		NextHandle uint64 `msgpack:"x"`
	}
	snap := map[string]any{"l": "l", "x": 1, "m": 5, "r": []agree.NodeID{a}, "k": map[string]agree.KeyEntry{}, "s": map[string]agree.Session{},
		"f": oldRec{Name: "fed", NextHandle: 1}}
	buf, _ := msgpack.Marshal(snap)
	if g, err := agree.DecodeFSM(buf); err != nil || g.Fed == nil || federationInfo(g.Fed).Cells != nil {
		t.Fatalf("earlier snapshot: %+v %v", g, err)
	}
}

// TestFederationRecordDataPlane: the data-plane mode a creator gives is
// kept in the record and survives a snapshot; a record without one
// reports none.
func TestFederationRecordDataPlane(t *testing.T) {
	a := agree.NodeID{Name: "a", Inc: 1}
	f := agree.NewFSM("l", a, 5)
	if _, res, _ := f.Apply(agree.EncodeBatch(agree.Batch{Proposer: a, Ops: []agree.Op{{Seq: 1, Kind: agree.OpCreateFed, Name: "fed", DataPlane: "unicast"}}})); len(res) != 1 || res[0].Code != agree.CodeOK {
		t.Fatalf("create: %+v", res)
	}
	g, err := agree.DecodeFSM(f.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if fi := federationInfo(g.Fed); fi.DataPlane != "unicast" {
		t.Fatalf("data plane after a snapshot: %q, want unicast", fi.DataPlane)
	}
	h := agree.NewFSM("l", a, 5)
	h.Apply(agree.EncodeBatch(agree.Batch{Proposer: a, Ops: []agree.Op{{Seq: 1, Kind: agree.OpCreateFed, Name: "fed"}}}))
	if fi := federationInfo(h.Fed); fi.DataPlane != "" {
		t.Fatalf("a record created without a data plane reports %q", fi.DataPlane)
	}
}

// A snapshot that replaces a node's view reports the federates gone as
// lost when the federation removed them as lost (the record keeps their
// handles), as resigned otherwise: a node that catches up from a
// snapshot after a partition learns that its own federate was removed.
func TestSnapshotReportsLost(t *testing.T) {
	old := view{fed: &agree.FederationRec{Federates: []agree.FederateRec{{Handle: 1, Name: "a"}, {Handle: 2, Name: "b"}, {Handle: 3, Name: "c"}}}}
	cur := view{fed: &agree.FederationRec{Federates: []agree.FederateRec{{Handle: 1, Name: "a"}}, Lost: []uint64{2}}}
	var got []string
	for _, ev := range diffViews(old, cur) {
		if ev.Kind == EventFederateResigned {
			got = append(got, fmt.Sprintf("%s lost=%v", ev.Federate.Name, ev.Lost))
		}
	}
	if want := []string{"b lost=true", "c lost=false"}; !slices.Equal(got, want) {
		t.Errorf("resignations %v, want %v", got, want)
	}
	// The record keeps the latest maxLostKept lost handles, oldest
	// dropped first.
	f := agree.NewFSM("l", agree.NodeID{Name: "a", Inc: 1}, 5)
	f.Fed = &agree.FederationRec{}
	var changes []agree.Change
	for h := uint64(1); h <= agree.MaxLostKept+5; h++ {
		id := agree.NodeID{Name: fmt.Sprintf("n%d", h), Inc: 1}
		f.Fed.Federates = append(f.Fed.Federates, agree.FederateRec{Handle: h, Node: id})
		f.DropNode(id, &changes)
	}
	if n := len(f.Fed.Lost); n != agree.MaxLostKept || f.Fed.Lost[0] != 6 || f.Fed.Lost[n-1] != agree.MaxLostKept+5 {
		t.Errorf("kept %d lost handles, %v..%v", n, f.Fed.Lost[0], f.Fed.Lost[n-1])
	}
}
