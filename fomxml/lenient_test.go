package fomxml

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// lineOf returns the line of the nth (from 1) line of file containing s.
func lineOf(t *testing.T, file, s string, nth int) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, s) {
			if nth--; nth == 0 {
				return i + 1
			}
		}
	}
	t.Fatalf("%s: no line %d containing %q", file, nth, s)
	return 0
}

// checkWarnings compares warnings with want, one "line: text" per
// warning; text must be contained in the message.
func checkWarnings(t *testing.T, file string, got []Warning, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d warnings, want %d:\n%s", len(got), len(want), warningLines(got))
		return
	}
	for i, w := range got {
		line, text, _ := strings.Cut(want[i], ": ")
		if w.Pos.File != file || fmt.Sprint(w.Pos.Line) != line || !strings.Contains(w.Msg, text) {
			t.Errorf("warning %d is %q, want %s:%s containing %q", i, w, file, line, text)
		}
	}
}

func warningLines(ws []Warning) string {
	var b strings.Builder
	for _, w := range ws {
		b.WriteString(w.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// A variant-record alternative without a data type, or with an empty
// one, carries no data, as with NA; each gives a warning on its line.
func TestLenientVariantAlternativeWithoutDataType(t *testing.T) {
	const file = "testdata/lenient-variant.xml"
	fdd, err := Load(file)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	rep, ok := fdd.DataType("SensorReport")
	if !ok {
		t.Fatal("SensorReport missing")
	}
	var got []string
	for _, a := range rep.Alternatives {
		got = append(got, a.Name+":"+a.DataType)
	}
	if s := strings.Join(got, ","); s != "Range:HLAfloat64BE,Nothing:,Waiting:,Silence:" {
		t.Errorf("alternatives %s", s)
	}
	checkWarnings(t, file, fdd.Warnings(), []string{
		fmt.Sprintf("%d: alternative SensorReport.Nothing has no <dataType>; it carries no data", lineOf(t, file, "<alternative>", 2)),
		fmt.Sprintf("%d: alternative SensorReport.Waiting has an empty <dataType>; it carries no data", lineOf(t, file, "<alternative>", 3)),
	})

	// The same type written properly (NA) is an identical redefinition.
	proper := strings.NewReplacer(
		"<semantics>no dataType at all</semantics>", "<dataType>NA</dataType>",
		"<dataType></dataType>", "<dataType>NA</dataType>",
	).Replace(readFile(t, file))
	a, err := ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseBytes("proper.xml", []byte(proper))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Warnings()) != 0 {
		t.Errorf("NA gives warnings: %v", b.Warnings())
	}
	if _, err := Merge(a, b); err != nil {
		t.Errorf("the lenient and the proper module do not merge: %v", err)
	}
}

// Repeated enumerator names are one enumerator with the values of all
// its entries; an enumerator without a value takes the one after the
// previous enumerator's (0 for the first).
func TestLenientEnumerators(t *testing.T) {
	const file = "testdata/lenient-enum.xml"
	fdd, err := Load(file)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	for name, want := range map[string]string{
		"SignalColor": "[{Red [1 9]} {Amber [2]} {Green [4]} {Flashing [10]}]",
		"Mode":        "[{Manual [0]} {Automatic [1]} {Remote [7]}]",
	} {
		dt, ok := fdd.DataType(name)
		if !ok {
			t.Fatalf("%s missing", name)
		}
		if got := fmt.Sprint(dt.Enumerators); got != want {
			t.Errorf("%s enumerators %s, want %s", name, got, want)
		}
	}
	enum := func(n int) int { return lineOf(t, file, "<enumerator>", n) }
	checkWarnings(t, file, fdd.Warnings(), []string{
		fmt.Sprintf("%d: enumerator SignalColor.Amber has no <value>; it takes the value 2, one more than the previous enumerator's", enum(2)),
		fmt.Sprintf("%d: enumerator SignalColor.Red appears twice; the repeat adds its values to the first: Red has the values [1 9] and encodes as 1", enum(4)),
		fmt.Sprintf("%d: enumerator SignalColor.Flashing has an empty <value>; it takes the value 10", enum(5)),
		fmt.Sprintf("%d: enumerator Mode.Manual has no <value>; it takes the value 0, as the first enumerator", enum(6)),
		fmt.Sprintf("%d: enumerator Mode.Automatic has no <value>; it takes the value 1", enum(7)),
	})
	for _, w := range fdd.Warnings() {
		if !strings.HasPrefix(w.String(), fmt.Sprintf("%s:%d: enumerator ", file, w.Pos.Line)) {
			t.Errorf("String() = %q, want file:line: message", w)
		}
	}

	// Nothing comes after the largest value, and nothing can be counted
	// on from an unreadable one (that is an error of its own).
	for xml, want := range map[string]string{
		"<enumerator><name>A</name><value>9223372036854775807</value></enumerator><enumerator><name>B</name></enumerator>": "m.xml:1: enumerator E.B has no <value>, and the previous value 9223372036854775807 has no successor",
		"<enumerator><name>A</name><value>x</value></enumerator><enumerator><name>B</name></enumerator>":                   `m.xml:1: enumerator E.A: value "x" is not an integer`,
	} {
		_, err := ParseBytes("m.xml", []byte("<objectModel><dataTypes><enumeratedDataTypes><enumeratedData><name>E</name><representation>HLAinteger64BE</representation>"+
			xml+"</enumeratedData></enumeratedDataTypes></dataTypes></objectModel>"))
		if err == nil || err.Error() != want {
			t.Errorf("err = %v, want %s", err, want)
		}
	}
}

// Values shared by two enumerators decode as the first written with
// them; a repeat's value that an earlier enumerator has stays with that
// one.
func TestLenientSharedEnumeratorValues(t *testing.T) {
	d, err := ParseBytes("e.xml", []byte(`<objectModel><dataTypes><enumeratedDataTypes><enumeratedData>
<name>E</name><representation>HLAoctet</representation>
<enumerator><name>A</name><value>1</value></enumerator>
<enumerator><name>B</name><value>2</value></enumerator>
<enumerator><name>A</name><value>2</value><value>3</value></enumerator>
<enumerator><name>C</name><value>1</value></enumerator>
<enumerator><name>D</name><value>5</value><value>5</value></enumerator>
</enumeratedData></enumeratedDataTypes></dataTypes></objectModel>`))
	if err != nil {
		t.Fatal(err)
	}
	fdd, err := Merge(d)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := fdd.DataType("E")
	if got := fmt.Sprint(e.Enumerators); got != "[{A [1 3]} {B [2]} {C [1]} {D [5]}]" {
		t.Errorf("enumerators %s", got)
	}
	checkWarnings(t, "e.xml", fdd.Warnings(), []string{
		"5: enumerators B and A of E share the value 2; 2 decodes as B, the first written with it",
		"5: enumerator E.A appears twice; the repeat adds its values to the first: A has the values [1 3]",
		"6: enumerators A and C of E share the value 1; 1 decodes as A",
	})
}

// Enumerator values are decimal whatever their leading zeros (as other
// RTIs read them), or hexadecimal with 0x.
func TestEnumeratorValueSyntax(t *testing.T) {
	for in, want := range map[string]string{
		"010": "10", "0": "0", "-3": "-3", "+4": "4", "0x10": "16", "-0x10": "-16", " 7 ": "7",
		"08": "8", "1_000": "error", "--1": "error", "0b1": "error", "0o7": "error", "x": "error",
	} {
		d, err := ParseBytes("v.xml", []byte(`<objectModel><dataTypes><enumeratedDataTypes><enumeratedData>
<name>E</name><representation>HLAinteger32BE</representation>
<enumerator><name>A</name><value>`+in+`</value></enumerator>
</enumeratedData></enumeratedDataTypes></dataTypes></objectModel>`))
		got := "error"
		if err == nil {
			got = fmt.Sprint(d.dataTypes[0].Enumerators[0].Values[0])
		} else if !strings.Contains(err.Error(), "is not an integer") {
			t.Errorf("%q: %v", in, err)
		}
		if got != want {
			t.Errorf("value %q reads as %s, want %s", in, got, want)
		}
	}
}

// The 1516-2000 edition has the same leniencies: an empty or missing
// values attribute, an alternative without a dataType attribute.
func TestLenient2000Edition(t *testing.T) {
	d, err := ParseBytes("old.xml", []byte(`<objectModel DTDversion="1516.2" name="old"><dataTypes>
<enumeratedDataTypes>
<enumeratedData name="K" representation="HLAinteger32BE">
<enumerator name="X" values=""/>
<enumerator name="Y"/>
<enumerator name="Z" values="5,,6"/>
</enumeratedData>
</enumeratedDataTypes>
<variantRecordDataTypes>
<variantRecordData name="V" discriminant="k" dataType="K" encoding="HLAvariantRecord">
<alternative enumerator="X" name="none"/>
<alternative enumerator="Y, Z" name="some" dataType="HLAoctet"/>
</variantRecordData>
</variantRecordDataTypes>
</dataTypes></objectModel>`))
	if err != nil {
		t.Fatal(err)
	}
	checkWarnings(t, "old.xml", d.Warnings(), []string{
		"4: enumerator K.X has an empty <value>; it takes the value 0",
		"5: enumerator K.Y has no <value>; it takes the value 1",
		"6: enumerator K.Z has an empty <value> besides others; the empty one is ignored",
		"11: alternative V.none has no <dataType>; it carries no data",
	})
	fdd, err := Merge(d)
	if err != nil {
		t.Fatal(err)
	}
	k, _ := fdd.DataType("K")
	v, _ := fdd.DataType("V")
	if fmt.Sprint(k.Enumerators) != "[{X [0]} {Y [1]} {Z [5 6]}]" || v.Alternatives[0].DataType != "" {
		t.Errorf("K %v, V %+v", k.Enumerators, v.Alternatives)
	}
}

// Strict refuses each leniency, with an error that states the defect
// alone, at the warning's place.
func TestStrictRefusesLeniencies(t *testing.T) {
	strict := Options{Strict: true}
	for _, c := range []struct {
		file string
		want []string
	}{
		{"testdata/lenient-variant.xml", []string{
			"alternative SensorReport.Nothing has no <dataType>",
			"alternative SensorReport.Waiting has an empty <dataType>",
		}},
		{"testdata/lenient-enum.xml", []string{
			"enumerator SignalColor.Amber has no <value>",
			"enumerator SignalColor.Red appears twice",
			"enumerator SignalColor.Flashing has an empty <value>",
			"enumerator Mode.Manual has no <value>",
			"enumerator Mode.Automatic has no <value>",
		}},
	} {
		lenient := mustLoad(t, c.file)
		for _, run := range []struct {
			name string
			load func() error
		}{
			{"Load", func() error { _, err := strict.Load(c.file); return err }},
			{"ParseFile", func() error { _, err := strict.ParseFile(c.file); return err }},
			{"Merge of a lenient parse", func() error {
				d, err := ParseFile(c.file)
				if err != nil {
					return err
				}
				_, err = strict.Merge(d)
				return err
			}},
		} {
			err := run.load()
			var list ErrorList
			if !errors.Is(err, ErrReading) || !errors.As(err, &list) || len(list) != len(c.want) {
				t.Errorf("%s %s: %v, want %d errors", run.name, c.file, err, len(c.want))
				continue
			}
			for i, e := range list {
				w := lenient.Warnings()[i]
				if e.File != c.file || e.Line != w.Pos.Line || e.Msg != c.want[i] || !strings.HasPrefix(w.Msg, e.Msg+"; ") {
					t.Errorf("%s: error %q, want %q at line %d", run.name, e, c.want[i], w.Pos.Line)
				}
			}
		}
	}
}

// Merge keeps the documents' warnings, in merge order, and adds its own:
// a switch set differently by a later module. Strict makes that an
// ErrInconsistent naming both modules.
func TestMergeWarnings(t *testing.T) {
	a, err := ParseBytes("a.xml", []byte("<objectModel>\n<switches><autoProvide isEnabled=\"true\"/><serviceReporting isEnabled=\"false\"/></switches></objectModel>"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseBytes("b.xml", []byte("<objectModel>\n<switches autoProvide=\"Disabled\" serviceReporting=\"No\" automaticResignAction=\"NoAction\"/></objectModel>"))
	if err != nil {
		t.Fatal(err)
	}
	enum, err := ParseFile("testdata/lenient-enum.xml")
	if err != nil {
		t.Fatal(err)
	}
	fdd, err := Merge(enum, a, b)
	if err != nil {
		t.Fatal(err)
	}
	ws := fdd.Warnings()
	if n := len(enum.Warnings()); len(ws) != n+1 || !slices.Equal(ws[:n], enum.Warnings()) {
		t.Fatalf("warnings:\n%s", warningLines(ws))
	}
	if got := ws[len(ws)-1].String(); got != "b.xml:2: switch autoProvide is Disabled, but a.xml:2 set it to true first; the first setting stands" {
		t.Errorf("merge warning %q", got)
	}
	if !fdd.Switches.AutoProvide || fdd.Switches.AutomaticResignAction != "NoAction" {
		t.Errorf("switches %+v", fdd.Switches)
	}
	_, err = Options{Strict: true}.Merge(a, b)
	var e *Error
	if !errors.Is(err, ErrInconsistent) || !errors.As(err, &e) || e.File != "b.xml" || e.Other != "a.xml" ||
		e.Msg != "switch autoProvide is Disabled, was true" {
		t.Errorf("strict: %v", err)
	}
	// The documents are not changed by merging: the warnings stay theirs.
	if len(a.Warnings()) != 0 || len(b.Warnings()) != 0 {
		t.Error("documents gained warnings")
	}
	ws[0].Msg = "changed"
	if fdd.Warnings()[0].Msg == "changed" {
		t.Error("Warnings returns the FDD's own slice")
	}
}

// A clean module and the standard MIM give no warnings.
func TestNoWarningsForCleanModules(t *testing.T) {
	fdd := mustLoad(t, "testdata/air.xml", "testdata/ext.xml")
	if ws := fdd.Warnings(); len(ws) != 0 {
		t.Errorf("warnings:\n%s", warningLines(ws))
	}
	if ws := StandardMIM().Warnings(); len(ws) != 0 {
		t.Errorf("MIM warnings:\n%s", warningLines(ws))
	}
}

// What would make the federation ambiguous stays an error.
func TestAmbiguityStaysAnError(t *testing.T) {
	variant := func(enums, alts string) string {
		return `<objectModel><dataTypes><enumeratedDataTypes><enumeratedData><name>K</name><representation>HLAoctet</representation>` +
			enums + `</enumeratedData></enumeratedDataTypes><variantRecordDataTypes><variantRecordData><name>V</name>` +
			`<discriminant>k</discriminant><dataType>K</dataType>` + alts + `</variantRecordData></variantRecordDataTypes></dataTypes></objectModel>`
	}
	en := func(name, value string) string {
		return "<enumerator><name>" + name + "</name><value>" + value + "</value></enumerator>"
	}
	alt := func(name, enums, dt string) string {
		return "<alternative><enumerator>" + enums + "</enumerator><name>" + name + "</name><dataType>" + dt + "</dataType></alternative>"
	}
	for _, c := range []struct{ name, xml, want string }{
		{"shared value, different alternatives", variant(en("A", "1")+en("B", "1"), alt("x", "A", "HLAoctet")+alt("y", "B", "HLAfloat64BE")),
			"enumerator B encodes as 1, which decodes as A, and they select different alternatives (y and x)"},
		{"shared value, HLAother", variant(en("A", "1")+en("B", "1"), alt("x", "A", "HLAoctet")+alt("y", "HLAother", "NA")),
			"enumerator B encodes as 1, which decodes as A"},
		{"two HLAother", variant(en("A", "1"), alt("x", "HLAother", "HLAoctet")+alt("y", "HLAother", "NA")),
			"alternatives x and y are both HLAother"},
		{"repeated enumerator, two alternatives", variant(en("A", "1")+en("A", "2"), alt("x", "A", "HLAoctet")+alt("y", "A", "NA")),
			"enumerator A is already covered by alternative x"},
		{"alternative without enumerator", variant(en("A", "1"), "<alternative><name>x</name><dataType>NA</dataType></alternative>"),
			"has no <enumerator>"},
	} {
		_, err := Load(writeTemp(t, c.xml))
		if !errors.Is(err, ErrReading) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
	// Shared values are fine when they select the same alternative, or
	// when the later enumerator selects none (it cannot be encoded here).
	for _, xml := range []string{
		variant(en("A", "1")+en("B", "1"), alt("x", "A, B", "HLAoctet")),
		variant(en("A", "1")+en("B", "1"), alt("x", "A", "HLAoctet")),
	} {
		if _, err := Load(writeTemp(t, xml)); err != nil {
			t.Errorf("refused: %v", err)
		}
	}
	// An enumerator without a value whose inferred value differs from
	// another module's definition is a conflict, as any difference is.
	a := `<objectModel><dataTypes><enumeratedDataTypes><enumeratedData><name>K</name><representation>HLAoctet</representation>` +
		`<enumerator><name>A</name></enumerator></enumeratedData></enumeratedDataTypes></dataTypes></objectModel>`
	b := strings.Replace(a, "<name>A</name>", "<name>A</name><value>1</value>", 1)
	if _, err := Load(writeTemp(t, a), writeTemp(t, b)); !errors.Is(err, ErrInconsistent) {
		t.Errorf("inferred 0 against 1: %v", err)
	}
}

// Warnings are bounded like errors.
func TestWarningsAreBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("<objectModel><dataTypes><enumeratedDataTypes><enumeratedData><name>E</name><representation>HLAinteger32BE</representation>")
	for i := 0; i < 500; i++ {
		fmt.Fprintf(&b, "<enumerator><name>e%d</name></enumerator>", i)
	}
	b.WriteString("</enumeratedData></enumeratedDataTypes></dataTypes></objectModel>")
	d, err := ParseBytes("many.xml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	ws := d.Warnings()
	if len(ws) != maxWarnings+1 || !strings.Contains(ws[maxWarnings].Msg, "too many warnings") {
		t.Errorf("%d warnings, want %d ending in 'too many warnings'", len(ws), maxWarnings+1)
	}
	if e := d.dataTypes[0].Enumerators; len(e) != 500 || e[499].Values[0] != 499 {
		t.Errorf("values inferred wrongly: %v", e[len(e)-1])
	}
}

func TestWarningString(t *testing.T) {
	for w, want := range map[Warning]string{
		{Pos: Pos{File: "a.xml", Line: 3}, Msg: "m"}: "a.xml:3: m",
		{Pos: Pos{File: "a.xml"}, Msg: "m"}:          "a.xml: m",
	} {
		if w.String() != want {
			t.Errorf("%#v.String() = %q, want %q", w, w.String(), want)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeTemp(t *testing.T, content string) string {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "m*.xml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}
