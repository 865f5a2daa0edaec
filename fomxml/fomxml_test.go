package fomxml

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// sharedFOM returns the directory of the shared real-world FOMs
// (../shared/fom beside the repository, or $MESHRTI_SHARED/fom), or skips
// the test when there is none.
func sharedFOM(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("MESHRTI_SHARED"); d != "" {
		return filepath.Join(d, "fom")
	}
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("no go.mod above the test directory")
		}
		dir = parent
	}
	fom := filepath.Join(dir, "..", "shared", "fom")
	if _, err := os.Stat(fom); err != nil {
		t.Skipf("shared FOMs not found at %s (set MESHRTI_SHARED to run this test)", fom)
	}
	return fom
}

func glob(t testing.TB, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no files match %s (%v)", pattern, err)
	}
	sort.Strings(files)
	return files
}

func TestLoadSharedFOMs(t *testing.T) {
	dir := sharedFOM(t)
	cases := []struct {
		name                   string
		files                  []string
		minObjects, minInterns int
		wantClass              string
	}{
		{"rpr2", glob(t, filepath.Join(dir, "rpr2", "*.xml")), 60, 150, "HLAobjectRoot.BaseEntity.PhysicalEntity.Platform.Aircraft"},
		{"restaurant", glob(t, filepath.Join(dir, "restaurant", "*.xml")), 30, 90, "HLAobjectRoot.Food.Drink.Soda"},
		{"standard MIM over ours", glob(t, filepath.Join(dir, "standard", "*.xml")), 4, 85, "HLAobjectRoot.HLAmanager.HLAfederate"},
		{"misc", glob(t, filepath.Join(dir, "misc", "*.xml")), 5, 85, "HLAobjectRoot.A"},
	}
	for _, f := range glob(t, filepath.Join(dir, "misc", "*.xml")) {
		cases = append(cases, struct {
			name                   string
			files                  []string
			minObjects, minInterns int
			wantClass              string
		}{"misc/" + filepath.Base(f), []string{f}, 1, 85, "HLAobjectRoot"})
	}
	if len(cases[0].files) != 14 || len(cases[1].files) != 4 {
		t.Fatalf("want 14 RPR and 4 Restaurant modules, have %d and %d", len(cases[0].files), len(cases[1].files))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fdd, err := Load(c.files...)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if len(fdd.Modules) != len(c.files)+1 || fdd.Modules[0].File != MIMDesignator {
				t.Errorf("modules %v: want the MIM first, then %d files", fdd.Modules, len(c.files))
			}
			if len(fdd.ObjectClasses) < c.minObjects || len(fdd.InteractionClasses) < c.minInterns {
				t.Errorf("%s: fewer classes than expected", fdd)
			}
			if _, ok := fdd.ObjectClass(c.wantClass); !ok {
				t.Errorf("class %s missing", c.wantClass)
			}
			if ws := fdd.Warnings(); len(ws) != 0 {
				t.Errorf("warnings:\n%s", warningLines(ws))
			}
		})
	}
}

// lenientInvalid are the modules under invalid/ whose only defect is one
// of the leniencies (docs/fom.md): an enumerator without a value. Alone
// they load, with one warning on the enumerator's line; after the
// Restaurant modules they are refused all the same, since the value
// inferred (0) differs from Restaurant's WaiterTasks.TakingOrder (1).
// (The variant-record files whose alternative has no data type also hold
// one of the leniencies, but they name types that exist nowhere, so they
// stay refused either way.)
var lenientInvalid = map[string]string{
	"enumeratedEnumeratorValueEmpty.xml":   "enumerator WaiterTasks.TakingOrder has an empty <value>; it takes the value 0",
	"enumeratedEnumeratorValueMissing.xml": "enumerator WaiterTasks.TakingOrder has no <value>; it takes the value 0",
}

// Every module under invalid/ must be rejected, alone and after the
// Restaurant modules (some of them extend its types), with an
// ErrorReadingFDD that names the file and a line in it; the lenient ones
// (lenientInvalid) load alone, with a warning. With Options.Strict, every
// one is rejected in both cases.
func TestInvalidSharedFOMs(t *testing.T) {
	dir := sharedFOM(t)
	restaurant := glob(t, filepath.Join(dir, "restaurant", "*.xml"))
	invalid := glob(t, filepath.Join(dir, "invalid", "*.xml"))
	if len(invalid) < 40 {
		t.Fatalf("only %d invalid modules", len(invalid))
	}
	for _, f := range invalid {
		for _, withRestaurant := range []bool{false, true} {
			files := []string{f}
			if withRestaurant {
				files = append(restaurant, f)
			}
			if _, err := (Options{Strict: true}).Load(files...); err == nil {
				t.Errorf("%s (with Restaurant: %v) loaded under Strict; want an error", filepath.Base(f), withRestaurant)
			}
			fdd, err := Load(files...)
			if want, ok := lenientInvalid[filepath.Base(f)]; ok && !withRestaurant {
				if err != nil {
					t.Errorf("%s: %v; want it loaded with a warning", filepath.Base(f), err)
					continue
				}
				ws := fdd.Warnings()
				if len(ws) != 1 || ws[0].Pos.File != f || ws[0].Pos.Line != 24 || !strings.Contains(ws[0].Msg, want) {
					t.Errorf("%s: warnings %v, want one at line 24 containing %q", filepath.Base(f), ws, want)
				}
				continue
			}
			if err == nil {
				t.Errorf("%s (with Restaurant: %v) loaded; want an error", filepath.Base(f), withRestaurant)
				continue
			}
			if _, ok := lenientInvalid[filepath.Base(f)]; ok && !errors.Is(err, ErrInconsistent) {
				t.Errorf("%s with Restaurant: %v; want ErrInconsistent", filepath.Base(f), err)
			}
			if !errors.Is(err, ErrReading) && !errors.Is(err, ErrInconsistent) {
				t.Errorf("%s: error %v is neither ErrReading nor ErrInconsistent", filepath.Base(f), err)
			}
			var e *Error
			if !errors.As(err, &e) || e.File != f || e.Line <= 0 {
				t.Errorf("%s: error %q does not locate the problem in the file", filepath.Base(f), err)
			}
		}
	}
}

// The variant-record files extend the Restaurant types; with them loaded,
// each must fail for the reason its name gives, not for a missing type.
func TestInvalidSharedFOMReasons(t *testing.T) {
	dir := sharedFOM(t)
	restaurant := glob(t, filepath.Join(dir, "restaurant", "*.xml"))
	want := map[string]string{
		"arrayCardinalityNegative.xml":                      "negative",
		"arrayCardinalityNonNumeric.xml":                    "not a number",
		"arrayDatatypeDoesntExist.xml":                      "DoesNotExist is not defined",
		"basicSizeNegative.xml":                             "out of range",
		"enumeratedNoEnumerators.xml":                       "no enumerators",
		"enumeratedEnumeratorValueNonNumeric.xml":           "not an integer",
		"simpleRepresentationNotABasicType.xml":             "not a basic data representation",
		"variantRecordAlternativeDatatypeDoesntExist.xml":   "DoesNotExist is not defined",
		"variantRecordAlternativeEnumeratorDoesntExist.xml": "not an enumerator of WaiterTasks",
		"variantRecordAlternativeNameMissing.xml":           "has no <name>",
		// These hold a leniency (accepted with a warning) and fail for
		// another defect, or a conflict with Restaurant.
		"variantRecordAlternativeDatatypeMissing.xml": "DynamicArray is not defined",
		"variantRecordAlternativeDatatypeEmpty.xml":   "DynamicArray is not defined",
		"enumeratedEnumeratorValueMissing.xml":        "enumerator 1 is TakingOrder=[0], was TakingOrder=[1]",
		"enumeratedEnumeratorValueEmpty.xml":          "enumerator 1 is TakingOrder=[0], was TakingOrder=[1]",
	}
	for file, msg := range want {
		_, err := Load(append(restaurant, filepath.Join(dir, "invalid", file))...)
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: error %v, want one containing %q", file, err, msg)
		}
	}
}

// Our own MIM and the reference MIM must be structurally identical: the
// reference merged on top of ours is an identical redefinition.
func TestMIMMatchesReference(t *testing.T) {
	dir := sharedFOM(t)
	ref, err := ParseFile(filepath.Join(dir, "standard", "HLAstandardMIM.xml"))
	if err != nil {
		t.Fatal(err)
	}
	ours, err := Merge()
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := MergeWithMIM(ref)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := dump(ours, false), dump(theirs, false); a != b {
		t.Errorf("our MIM differs from the reference:\n%s", firstDiff(a, b))
	}
}

func TestStandardMIM(t *testing.T) {
	fdd, err := Merge()
	if err != nil {
		t.Fatal(err)
	}
	root, ok := fdd.ObjectClass("HLAobjectRoot")
	if !ok || root != fdd.ObjectRoot {
		t.Fatal("no HLAobjectRoot")
	}
	if _, ok := root.Attribute("HLAprivilegeToDeleteObject"); !ok {
		t.Error("HLAobjectRoot lacks HLAprivilegeToDeleteObject")
	}
	for _, name := range []string{
		"HLAobjectRoot.HLAmanager.HLAfederate", "HLAobjectRoot.HLAmanager.HLAfederation",
	} {
		c, ok := fdd.ObjectClass(name)
		if !ok || !c.IsMOM() {
			t.Errorf("MOM class %s missing", name)
		}
	}
	ic, ok := fdd.InteractionClass("HLAinteractionRoot.HLAmanager.HLAfederate.HLAadjust.HLAsetTiming")
	if !ok {
		t.Fatal("HLAsetTiming missing")
	}
	if _, ok := ic.Parameter("HLAfederate"); !ok {
		t.Error("HLAsetTiming does not inherit HLAfederate")
	}
	for _, n := range []string{
		"HLAinteger16BE", "HLAinteger32BE", "HLAinteger64BE", "HLAinteger16LE", "HLAinteger32LE",
		"HLAinteger64LE", "HLAfloat32BE", "HLAfloat64BE", "HLAfloat32LE", "HLAfloat64LE",
		"HLAoctet", "HLAoctetPairBE", "HLAoctetPairLE", "HLAboolean", "HLAASCIIstring",
		"HLAunicodeString", "HLAopaqueData", "HLAtoken", "HLAbyte", "HLAhandle",
	} {
		if _, ok := fdd.DataType(n); !ok {
			t.Errorf("standard data type %s missing", n)
		}
	}
	if tr, ok := fdd.Transportation("HLAbestEffort"); !ok || tr.Reliable {
		t.Error("HLAbestEffort missing or reliable")
	}
}

// The same model written in the two OMT editions merges to the same FDD.
func TestEditions2000And2010Agree(t *testing.T) {
	a := mustLoad(t, "testdata/air.xml")
	b := mustLoad(t, "testdata/air2000.xml")
	if a.Modules[1].Format != format2010 || b.Modules[1].Format != format2000 {
		t.Errorf("formats %s, %s", a.Modules[1].Format, b.Modules[1].Format)
	}
	if b.Modules[1].Name != "Air test module" {
		t.Errorf("2000 module name %q", b.Modules[1].Name)
	}
	if da, db := dump(a, false), dump(b, false); da != db {
		t.Errorf("editions differ:\n%s", firstDiff(da, db))
	}
	// Spot-check the properties both must have read.
	c, _ := b.ObjectClass("Aircraft")
	pos, ok := c.Attribute("Position")
	if !ok || pos.Order != OrderTimeStamp || pos.Transportation != "HLAbestEffort" ||
		strings.Join(pos.Dimensions, ",") != "Altitude,Band" || pos.DataType != "Position3D" {
		t.Errorf("Position read as %+v", pos)
	}
	if !b.Switches.AutoProvide || b.Switches.ConveyRegionDesignatorSets || b.Switches.AutomaticResignAction != "DeleteObjectsThenDivest" {
		t.Errorf("switches %+v", b.Switches)
	}
	if b.Time.TimeStamp != "HLAfloat64BE" || len(b.SyncPoints) != 1 || len(b.UpdateRates) != 1 || b.UpdateRates[0].Rate != 60 {
		t.Errorf("time %+v, sync points %d, update rates %v", b.Time, len(b.SyncPoints), b.UpdateRates)
	}
	rep, _ := b.DataType("ContactReport")
	if len(rep.Alternatives) != 2 || strings.Join(rep.Alternatives[1].Enumerators, ",") != "S,X" || rep.Alternatives[0].DataType != "" {
		t.Errorf("ContactReport alternatives %+v", rep.Alternatives)
	}
}

func TestScaffoldingAndIdenticalRedefinition(t *testing.T) {
	fdd := mustLoad(t, "testdata/air.xml", "testdata/ext.xml")
	heli, ok := fdd.ObjectClass("HLAobjectRoot.Aircraft.Helicopter")
	if !ok {
		t.Fatal("Helicopter missing")
	}
	if heli.Module != "testdata/ext.xml" {
		t.Errorf("Helicopter from %s", heli.Module)
	}
	air := heli.Parent
	if air.Module != "testdata/air.xml" || len(air.Attributes) != 2 {
		t.Errorf("scaffolded Aircraft lost its definition: module %s, %d attributes", air.Module, len(air.Attributes))
	}
	var names []string
	for _, a := range heli.AllAttributes() {
		names = append(names, a.Name)
	}
	if got := strings.Join(names, ","); got != "HLAprivilegeToDeleteObject,Callsign,Position,Rotors" {
		t.Errorf("Helicopter attributes %s", got)
	}
	if !heli.IsSubclassOf(air) || air.IsSubclassOf(heli) {
		t.Error("IsSubclassOf is wrong")
	}
	lost, ok := fdd.InteractionClass("RadarContact.Lost")
	if !ok {
		t.Fatal("RadarContact.Lost missing")
	}
	if _, ok := lost.Parameter("Range"); !ok {
		t.Error("Lost does not inherit Range")
	}
	// The scaffold (ext.xml) before the definition (air.xml) works too.
	if _, err := Load("testdata/ext.xml", "testdata/air.xml"); err != nil {
		t.Errorf("scaffold first: %v", err)
	}
}

func TestInconsistentModules(t *testing.T) {
	_, err := Load("testdata/air.xml", "testdata/conflict.xml")
	if !errors.Is(err, ErrInconsistent) {
		t.Fatalf("err = %v, want ErrInconsistent", err)
	}
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 3 {
		t.Fatalf("want 3 problems, got %v", err)
	}
	for _, e := range list {
		if e.File != "testdata/conflict.xml" || e.Other != "testdata/air.xml" || e.Line == 0 || e.OtherLine == 0 {
			t.Errorf("%q does not name both modules with lines", e)
		}
	}
	for _, want := range []string{"object class HLAobjectRoot.Aircraft", "dimension Altitude", "data type RadarBand"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}

// Handles depend only on names: any module order gives the same handles,
// and adding a module changes none of the existing ones.
func TestHandlesDeterministic(t *testing.T) {
	ab := mustLoad(t, "testdata/air.xml", "testdata/ext.xml")
	ba := mustLoad(t, "testdata/ext.xml", "testdata/air.xml")
	a := mustLoad(t, "testdata/air.xml")
	if x, y := dump(ab, true), dump(ba, true); x != y {
		t.Errorf("module order changes the FDD:\n%s", firstDiff(x, y))
	}
	for _, c := range a.ObjectClasses {
		d, ok := ab.ObjectClassByHandle(c.Handle)
		if !ok || d.QualifiedName != c.QualifiedName {
			t.Errorf("class %s has another handle once ext.xml is added", c.QualifiedName)
			continue
		}
		for _, at := range c.Attributes {
			if x, ok := d.AttributeByHandle(at.Handle); !ok || x.Name != at.Name {
				t.Errorf("attribute %s.%s changed handle", c.QualifiedName, at.Name)
			}
		}
	}
	for _, c := range a.InteractionClasses {
		d, ok := ab.InteractionClassByHandle(c.Handle)
		if !ok || d.QualifiedName != c.QualifiedName {
			t.Errorf("interaction %s has another handle once ext.xml is added", c.QualifiedName)
		}
	}
	for _, d := range a.Dimensions {
		if x, ok := ab.DimensionByHandle(d.Handle); !ok || x.Name != d.Name {
			t.Errorf("dimension %s changed handle", d.Name)
		}
	}
	// Handles are distinct and non-zero across kinds.
	seen := map[uint64]string{}
	check := func(h uint64, what string) {
		if h == 0 {
			t.Errorf("%s has handle 0", what)
		}
		if prev, ok := seen[h]; ok {
			t.Errorf("%s and %s share handle %d", what, prev, h)
		}
		seen[h] = what
	}
	for _, c := range ab.ObjectClasses {
		check(uint64(c.Handle), c.QualifiedName)
		for _, at := range c.Attributes {
			check(uint64(at.Handle), c.QualifiedName+"."+at.Name)
		}
	}
	for _, c := range ab.InteractionClasses {
		check(uint64(c.Handle), c.QualifiedName)
		for _, p := range c.Parameters {
			check(uint64(p.Handle), c.QualifiedName+"."+p.Name)
		}
	}
}

func TestLookups(t *testing.T) {
	fdd := mustLoad(t, "testdata/air.xml", "testdata/ext.xml")
	jet, ok := fdd.ObjectClass("HLAobjectRoot.Aircraft.Jet")
	if !ok {
		t.Fatal("Jet by full name")
	}
	for _, name := range []string{"Aircraft.Jet", "Jet"} {
		if c, ok := fdd.ObjectClass(name); !ok || c != jet {
			t.Errorf("ObjectClass(%q) did not find Jet", name)
		}
	}
	if _, ok := fdd.ObjectClass("Nope"); ok {
		t.Error("found a class that does not exist")
	}
	if _, ok := fdd.ObjectClass("HLAobjectRoot.Jet"); ok {
		t.Error("found Jet under the wrong parent")
	}
	pos, ok := jet.Attribute("Position")
	if !ok || pos.Class.Name != "Aircraft" {
		t.Errorf("Jet.Position: %v %v", pos, ok)
	}
	if a, ok := jet.AttributeByHandle(pos.Handle); !ok || a != pos {
		t.Error("AttributeByHandle of an inherited attribute")
	}
	air, _ := fdd.ObjectClass("Aircraft")
	if _, ok := air.Attribute("Engines"); ok {
		t.Error("a parent sees its child's attribute")
	}
	if d, ok := fdd.Dimension("Band"); !ok || d.UpperBound != 3 || d.Value != "[0..3)" {
		t.Errorf("dimension Band: %+v", d)
	}
	if _, ok := fdd.Dimension("Nope"); ok {
		t.Error("found a dimension that does not exist")
	}
}

func TestCardinality(t *testing.T) {
	cases := []struct {
		in     string
		ranges []CardinalityRange
		fixed  bool
		bad    bool
	}{
		{in: "3", ranges: []CardinalityRange{{3, 3}}, fixed: true},
		{in: "0", ranges: []CardinalityRange{{0, 0}}, fixed: true},
		{in: "Dynamic", ranges: []CardinalityRange{{0, -1}}},
		{in: "[1..2147483647]", ranges: []CardinalityRange{{1, 2147483647}}},
		{in: "(2..5)", ranges: []CardinalityRange{{2, 5}}},
		{in: "4,(1..4),Dynamic", ranges: []CardinalityRange{{4, 4}, {1, 4}, {0, -1}}},
		{in: "2, 3", ranges: []CardinalityRange{{2, 2}, {3, 3}}, fixed: true},
		{in: "", bad: true},
		{in: "-6", bad: true},
		{in: "four", bad: true},
		{in: "[5..2]", bad: true},
		{in: "[1..", bad: true},
		{in: "[1,2]", bad: true},
	}
	for _, c := range cases {
		got, err := ParseCardinality(c.in)
		if c.bad {
			if err == nil {
				t.Errorf("ParseCardinality(%q) = %+v, want an error", c.in, got)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseCardinality(%q): %v", c.in, err)
			continue
		}
		if fmt.Sprint(got.Ranges) != fmt.Sprint(c.ranges) || got.Fixed() != c.fixed {
			t.Errorf("ParseCardinality(%q) = %v fixed=%v, want %v fixed=%v", c.in, got.Ranges, got.Fixed(), c.ranges, c.fixed)
		}
	}
}

// Each malformed module gives a located ErrReading, never a panic.
func TestMalformedModules(t *testing.T) {
	deep := strings.Repeat("<objectClass><name>x</name>", MaxDepth+1)
	cases := []struct {
		name, xml, want string
		line            int
	}{
		{"empty", "", "no root element", 1},
		{"not xml", "hello", "no root element", 1},
		{"truncated", "<objectModel>\n<objects>\n<objectClass><name>HLAobjectRoot", "malformed XML", 3},
		{"wrong root", "<fom/>", "want <objectModel>", 1},
		{"mismatched", "<objectModel>\n</objects>", "malformed XML", 2},
		{"two roots", "<objectModel/><objectModel/>", "more than one root", 1},
		{"too deep", "<objectModel><objects>" + deep, "nested deeper", 1},
		{"wrong object root", "<objectModel><objects><objectClass><name>Root</name></objectClass></objects></objectModel>", "want HLAobjectRoot", 1},
		{"dotted name", "<objectModel><objects><objectClass><name>HLAobjectRoot</name><objectClass><name>a.b</name></objectClass></objectClass></objects></objectModel>", "contains a dot", 1},
		{"charset", `<?xml version="1.0" encoding="EBCDIC"?><objectModel/>`, "charset", 1},
		{"bad switch", "<objectModel><switches><autoProvide isEnabled=\"maybe\"/></switches></objectModel>", "switch autoProvide", 1},
		{"bad resign", "<objectModel><switches><automaticResignAction resignAction=\"Explode\"/></switches></objectModel>", "unknown resign action", 1},
		{"bad endian", "<objectModel><dataTypes><basicDataRepresentations><basicData><name>X</name><size>8</size><endian>Middle</endian></basicData></basicDataRepresentations></dataTypes></objectModel>", "want Big or Little", 1},
		{"bad bound", "<objectModel><dimensions><dimension><name>D</name><upperBound>-1</upperBound></dimension></dimensions></objectModel>", "upper bound", 1},
		{"bad reliable", "<objectModel><transportations><transportation><name>T</name><reliable>Maybe</reliable></transportation></transportations></objectModel>", "want Yes or No", 1},
		{"bad rate", "<objectModel><updateRates><updateRate><name>R</name><rate>fast</rate></updateRate></updateRates></objectModel>", "non-negative number", 1},
	}
	for _, c := range cases {
		_, err := ParseBytes("m.xml", []byte(c.xml))
		if err == nil {
			t.Errorf("%s: parsed", c.name)
			continue
		}
		var e *Error
		if !errors.Is(err, ErrReading) || !errors.As(err, &e) {
			t.Errorf("%s: %v is not a located ErrReading", c.name, err)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || e.File != "m.xml" || e.Line != c.line {
			t.Errorf("%s: got %q (line %d), want %q at line %d", c.name, err, e.Line, c.want, c.line)
		}
	}
}

func TestMergeReferenceErrors(t *testing.T) {
	mod := func(body string) *Document {
		d, err := ParseBytes("m.xml", []byte("<objectModel>"+body+"</objectModel>"))
		if err != nil {
			t.Fatalf("parse: %v", err)
		}
		return d
	}
	attr := func(name, extra string) string {
		return "<attribute><name>" + name + "</name>" + extra + "</attribute>"
	}
	cls := func(inner string) string {
		return "<objects><objectClass><name>HLAobjectRoot</name><objectClass><name>C</name>" + inner + "</objectClass></objectClass></objects>"
	}
	cases := []struct{ name, body, want string }{
		{"no data type", cls(attr("a", "")), "has no data type"},
		{"unknown data type", cls(attr("a", "<dataType>Nope</dataType>")), "data type Nope is not defined"},
		{"unknown transportation", cls(attr("a", "<dataType>HLAoctet</dataType><transportation>Carrier</transportation>")), "transportation Carrier"},
		{"bad order", cls(attr("a", "<dataType>HLAoctet</dataType><order>Sometimes</order>")), `order "Sometimes"`},
		{"unknown dimension", cls(attr("a", "<dataType>HLAoctet</dataType><dimensions><dimension>Z</dimension></dimensions>")), "dimension Z is not defined"},
		{"redeclared inherited", cls(attr("HLAprivilegeToDeleteObject", "<dataType>HLAtoken</dataType>")), "already inherited"},
		{"declared twice", cls(attr("a", "<dataType>HLAoctet</dataType>") + attr("a", "<dataType>HLAoctet</dataType>")), "declared twice"},
		{"self-containing record", "<dataTypes><fixedRecordDataTypes><fixedRecordData><name>R</name><field><name>f</name><dataType>R</dataType></field></fixedRecordData></fixedRecordDataTypes></dataTypes>", "contains itself"},
		{"cycle through array", "<dataTypes><arrayDataTypes><arrayData><name>A</name><dataType>B</dataType><cardinality>2</cardinality><encoding>HLAfixedArray</encoding></arrayData><arrayData><name>B</name><dataType>A</dataType><cardinality>2</cardinality><encoding>HLAfixedArray</encoding></arrayData></arrayDataTypes></dataTypes>", "contains itself"},
		{"cycle through a non-empty variable array", "<dataTypes><fixedRecordDataTypes><fixedRecordData><name>N</name><field><name>kids</name><dataType>NA1</dataType></field></fixedRecordData></fixedRecordDataTypes><arrayDataTypes><arrayData><name>NA1</name><dataType>N</dataType><cardinality>[1..5]</cardinality><encoding>HLAvariableArray</encoding></arrayData></arrayDataTypes></dataTypes>", "contains itself"},
		{"variant over non-enum", "<dataTypes><variantRecordDataTypes><variantRecordData><name>V</name><discriminant>d</discriminant><dataType>HLAoctet</dataType><alternative><enumerator>x</enumerator><name>a</name><dataType>NA</dataType></alternative></variantRecordData></variantRecordDataTypes></dataTypes>", "not enumerated"},
		{"variant enumerator twice", "<dataTypes><variantRecordDataTypes><variantRecordData><name>V</name><discriminant>d</discriminant><dataType>HLAboolean</dataType><alternative><enumerator>HLAtrue</enumerator><name>a</name><dataType>NA</dataType></alternative><alternative><enumerator>[HLAfalse..HLAtrue]</enumerator><name>b</name><dataType>NA</dataType></alternative></variantRecordData></variantRecordDataTypes></dataTypes>", "already covered"},
		{"variant backwards range", "<dataTypes><variantRecordDataTypes><variantRecordData><name>V</name><discriminant>d</discriminant><dataType>HLAboolean</dataType><alternative><enumerator>[HLAtrue..HLAfalse]</enumerator><name>a</name><dataType>NA</dataType></alternative></variantRecordData></variantRecordDataTypes></dataTypes>", "backwards"},
		// A repeated enumerator name used to be refused here ("appears
		// twice"); it is now a leniency: see TestLenientEnumerators.
		{"duplicate field", "<dataTypes><fixedRecordDataTypes><fixedRecordData><name>R</name><field><name>f</name><dataType>HLAoctet</dataType></field><field><name>f</name><dataType>HLAoctet</dataType></field></fixedRecordData></fixedRecordDataTypes></dataTypes>", "appears twice"},
		{"unknown time type", "<time><timeStamp><dataType>Clock</dataType></timeStamp></time>", "time stamp: data type Clock"},
		{"unknown parameter type", "<interactions><interactionClass><name>HLAinteractionRoot</name><interactionClass><name>I</name><parameter><name>p</name><dataType>Nope</dataType></parameter></interactionClass></interactionClass></interactions>", "data type Nope is not defined"},
	}
	for _, c := range cases {
		_, err := Merge(mod(c.body))
		if err == nil || !errors.Is(err, ErrReading) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want ErrReading containing %q", c.name, err, c.want)
		}
	}
	// Conflicts in the small tables name both modules.
	conflicts := []struct{ name, a, b, want string }{
		{"transportation", "<transportations><transportation><name>T</name><reliable>Yes</reliable></transportation></transportations>",
			"<transportations><transportation><name>T</name><reliable>No</reliable></transportation></transportations>", "transportation T"},
		{"update rate", "<updateRates><updateRate><name>R</name><rate>1</rate></updateRate></updateRates>",
			"<updateRates><updateRate><name>R</name><rate>2</rate></updateRate></updateRates>", "update rate R"},
		{"sync point", "<synchronizations><synchronizationPoint><label>L</label><dataType>HLAoctet</dataType></synchronizationPoint></synchronizations>",
			"<synchronizations><synchronizationPoint><label>L</label><dataType>HLAboolean</dataType></synchronizationPoint></synchronizations>", "synchronization point L"},
		{"time", "<time><timeStamp><dataType>HLAfloat64BE</dataType></timeStamp></time>",
			"<time><timeStamp><dataType>HLAinteger64BE</dataType></timeStamp></time>", "time stamp data type"},
		{"data type kind", "<dataTypes><simpleDataTypes><simpleData><name>S</name><representation>HLAoctet</representation></simpleData></simpleDataTypes></dataTypes>",
			"<dataTypes><arrayDataTypes><arrayData><name>S</name><dataType>HLAoctet</dataType><cardinality>1</cardinality><encoding>HLAfixedArray</encoding></arrayData></arrayDataTypes></dataTypes>", "data type S"},
		{"interaction", "<interactions><interactionClass><name>HLAinteractionRoot</name><interactionClass><name>I</name><parameter><name>p</name><dataType>HLAoctet</dataType></parameter></interactionClass></interactionClass></interactions>",
			"<interactions><interactionClass><name>HLAinteractionRoot</name><interactionClass><name>I</name><order>TimeStamp</order><parameter><name>p</name><dataType>HLAoctet</dataType></parameter></interactionClass></interactionClass></interactions>", "interaction class HLAinteractionRoot.I"},
		{"attribute property", cls(attr("a", "<dataType>HLAoctet</dataType>")), cls(attr("a", "<dataType>HLAoctet</dataType><order>TimeStamp</order>")), "attribute a has order"},
	}
	for _, c := range conflicts {
		a, err := ParseBytes("a.xml", []byte("<objectModel>"+c.a+"</objectModel>"))
		if err != nil {
			t.Fatal(err)
		}
		b, err := ParseBytes("b.xml", []byte("<objectModel>"+c.b+"</objectModel>"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Merge(a, b)
		var e *Error
		if !errors.Is(err, ErrInconsistent) || !errors.As(err, &e) || e.File != "b.xml" || e.Other != "a.xml" || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want ErrInconsistent b.xml vs a.xml containing %q", c.name, err, c.want)
		}
	}
}

// A record holding a variable array of itself is a tree: it may end, so
// it is allowed.
func TestRecursiveTypeThatEnds(t *testing.T) {
	d, err := ParseBytes("tree.xml", []byte(`<objectModel><dataTypes><fixedRecordDataTypes><fixedRecordData><name>Node</name><field><name>kids</name><dataType>Nodes</dataType></field></fixedRecordData></fixedRecordDataTypes><arrayDataTypes><arrayData><name>Nodes</name><dataType>Node</dataType><cardinality>Dynamic</cardinality><encoding>HLAvariableArray</encoding></arrayData></arrayDataTypes></dataTypes></objectModel>`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Merge(d); err != nil {
		t.Errorf("tree type rejected: %v", err)
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load("testdata/does-not-exist.xml")
	if !errors.Is(err, ErrCouldNotOpen) || !strings.Contains(err.Error(), "does-not-exist.xml") {
		t.Errorf("err = %v, want ErrCouldNotOpen naming the file", err)
	}
}

func TestSizeLimit(t *testing.T) {
	big := strings.NewReader("<objectModel>" + strings.Repeat(" ", MaxModuleBytes) + "</objectModel>")
	_, err := Parse("big.xml", big)
	if !errors.Is(err, ErrReading) || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("err = %v", err)
	}
}

func TestErrorListIsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("<objectModel><dataTypes><simpleDataTypes>")
	for i := 0; i < 500; i++ {
		b.WriteString("<simpleData><name></name></simpleData>")
	}
	b.WriteString("</simpleDataTypes></dataTypes></objectModel>")
	_, err := ParseBytes("many.xml", []byte(b.String()))
	var list ErrorList
	if !errors.As(err, &list) || len(list) != maxErrors+1 || !strings.Contains(list[len(list)-1].Msg, "too many errors") {
		t.Errorf("got %d errors, want %d ending in 'too many errors'", len(list), maxErrors+1)
	}
}

// dump renders an FDD canonically: everything structural, sorted, one
// line per item. withModules adds which module defined each class.
func dump(f *FDD, withModules bool) string {
	var lines []string
	add := func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }
	for _, c := range f.ObjectClasses {
		mod := ""
		if withModules {
			mod = c.Module
		}
		add("object %s %x %s %s", c.QualifiedName, c.Handle, c.Sharing, mod)
		for _, a := range c.Attributes {
			add("  attr %s %x %s %s %s %s %s %s %v", a.Name, a.Handle, a.DataType, a.UpdateType, a.Ownership,
				a.Sharing, a.Transportation, a.Order, a.Dimensions)
		}
	}
	for _, c := range f.InteractionClasses {
		add("interaction %s %x %s %s %s %v", c.QualifiedName, c.Handle, c.Sharing, c.Transportation, c.Order, c.Dimensions)
		for _, p := range c.Parameters {
			add("  param %s %x %s", p.Name, p.Handle, p.DataType)
		}
	}
	for _, d := range f.Dimensions {
		add("dimension %s %x %s %d %s %q", d.Name, d.Handle, d.DataType, d.UpperBound, d.Normalization, d.Value)
	}
	for _, t := range f.Transportations {
		add("transportation %s %v", t.Name, t.Reliable)
	}
	for _, u := range f.UpdateRates {
		add("rate %s %v", u.Name, u.Rate)
	}
	for _, s := range f.SyncPoints {
		add("sync %s %s %s", s.Label, s.DataType, s.Capability)
	}
	var names []string
	for n := range f.DataTypes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t := f.DataTypes[n]
		enc := strings.TrimPrefix(t.Encoding, "HLA")
		if t.Kind == KindBasic {
			enc = "" // prose for basic types
		}
		add("type %s %s size=%d endian=%d rep=%s elem=%s card=%v enc=%s enums=%v fields=%v disc=%s alts=%v",
			n, t.Kind, t.Size, t.Endian, t.Representation, t.Element, t.Cardinality.Ranges,
			enc, t.Enumerators, fieldsOf(t), t.Discriminant, altsOf(t))
	}
	add("time %+v tags %+v switches %+v", f.Time, f.Tags, f.Switches)
	return strings.Join(lines, "\n")
}

func fieldsOf(t *DataType) string {
	var s []string
	for _, f := range t.Fields {
		s = append(s, f.Name+":"+f.DataType)
	}
	return strings.Join(s, ",")
}

func altsOf(t *DataType) string {
	var s []string
	for _, a := range t.Alternatives {
		s = append(s, fmt.Sprintf("%s:%s:%v:%v", a.Name, a.DataType, a.Enumerators, a.Other))
	}
	return strings.Join(s, ",")
}

func firstDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(la) || i < len(lb); i++ {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, x, y)
		}
	}
	return "(no difference)"
}

// mustLoad loads and merges files, or fails t.
func mustLoad(t testing.TB, files ...string) *FDD {
	t.Helper()
	fdd, err := Load(files...)
	if err != nil {
		t.Fatal(err)
	}
	return fdd
}
