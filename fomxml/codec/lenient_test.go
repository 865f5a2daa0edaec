package codec

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/meshrti/meshrti/fomxml"
)

// The types of modules fomxml accepts with warnings (docs/fom.md,
// "Leniencies") encode and decode.
func TestLenientModules(t *testing.T) {
	fdd, err := fomxml.Load("../testdata/lenient-variant.xml", "../testdata/lenient-enum.xml")
	if err != nil {
		t.Fatal(err)
	}
	if len(fdd.Warnings()) == 0 {
		t.Fatal("the lenient test modules give no warnings")
	}
	c, err := New(fdd)
	if err != nil {
		t.Fatal(err)
	}
	m := func(kv ...any) map[string]any {
		out := make(map[string]any)
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i].(string)] = kv[i+1]
		}
		return out
	}
	for _, tc := range []struct {
		typ string
		in  any
		hex string
	}{
		// Alternatives without a data type (missing, empty or NA) are the
		// discriminant alone, without the padding an alternative with data
		// gets (its boundary is 8, HLAfloat64BE's).
		{"SensorReport", m("State", "Tracking", "Range", 2.0), "00000001 00000000 4000000000000000"},
		{"SensorReport", m("State", "Off"), "00000002"},
		{"SensorReport", m("State", "Idle"), "00000003"},
		{"SensorReport", m("State", "Jammed"), "00000004"},
		// Red is written twice (1 and 9) and encodes as its first value;
		// Amber and Flashing had no value and took 2 and 10.
		{"SignalColor", "Red", "01"},
		{"SignalColor", "Amber", "02"},
		{"SignalColor", "Green", "04"},
		{"SignalColor", "Flashing", "0a"},
		{"Mode", "Manual", "0000"},
		{"Mode", "Automatic", "0001"},
		{"Mode", "Remote", "0007"},
	} {
		b, err := c.Encode(tc.typ, tc.in)
		if err != nil || !bytes.Equal(b, h(tc.hex)) {
			t.Errorf("Encode(%s, %v) = % x, %v; want %s", tc.typ, tc.in, b, err, tc.hex)
			continue
		}
		v, err := c.Decode(tc.typ, b)
		if err != nil || !reflect.DeepEqual(v, tc.in) {
			t.Errorf("Decode(%s, % x) = %v, %v; want %v", tc.typ, b, v, err, tc.in)
		}
	}
	// The repeat's value decodes as the repeated name.
	if v, err := c.Decode("SignalColor", h("09")); err != nil || v != "Red" {
		t.Errorf("Decode(SignalColor, 09) = %v, %v; want Red", v, err)
	}
	// Padding after a data-less alternative is trailing data.
	if _, err := c.Decode("SensorReport", h("00000002 00000000")); !errors.Is(err, ErrTrailingData) {
		t.Errorf("padded data-less alternative: %v", err)
	}
}

// A hand-made FDD may list an enumerator name twice, or give two names
// one value: a name encodes as its first value, a value decodes as the
// first enumerator listed with it.
func TestRepeatedAndSharedEnumerators(t *testing.T) {
	c, err := New(fdd(
		enumT("Dup", "HLAoctet", "A", 1, "B", 2, "A", 3, "C", 2),
		variantT("SameAlt", "K", "Dup",
			fomxml.Alternative{Name: "x", DataType: "HLAoctet", Enumerators: []string{"B", "C"}},
			fomxml.Alternative{Name: "y", Enumerators: []string{"A"}}),
		variantT("NoAltForC", "K", "Dup",
			fomxml.Alternative{Name: "x", DataType: "HLAoctet", Enumerators: []string{"B"}}),
		variantT("Ambiguous", "K", "Dup",
			fomxml.Alternative{Name: "x", DataType: "HLAoctet", Enumerators: []string{"B"}},
			fomxml.Alternative{Name: "y", Enumerators: []string{"C"}}),
		variantT("AmbiguousOther", "K", "Dup",
			fomxml.Alternative{Name: "x", DataType: "HLAoctet", Enumerators: []string{"B"}},
			fomxml.Alternative{Name: "rest", Other: true}),
	))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in, hex, out string
	}{
		{"A", "01", "A"}, {"B", "02", "B"}, {"C", "02", "B"},
	} {
		b, err := c.Encode("Dup", tc.in)
		if err != nil || !bytes.Equal(b, h(tc.hex)) {
			t.Errorf("Encode(Dup, %s) = % x, %v; want %s", tc.in, b, err, tc.hex)
		}
		if v, err := c.Decode("Dup", b); err != nil || v != tc.out {
			t.Errorf("Decode(Dup, % x) = %v, %v; want %s", b, v, err, tc.out)
		}
	}
	if v, err := c.Decode("Dup", h("03")); err != nil || v != "A" {
		t.Errorf("Decode(Dup, 03) = %v, %v; want A", v, err)
	}
	if v, err := c.Decode("SameAlt", h("03")); err != nil || !reflect.DeepEqual(v, map[string]any{"K": "A"}) {
		t.Errorf("Decode(SameAlt, 03) = %v, %v", v, err)
	}
	if _, err := c.Type("NoAltForC"); err != nil {
		t.Errorf("NoAltForC: %v", err)
	}
	for _, name := range []string{"Ambiguous", "AmbiguousOther"} {
		if _, err := c.Type(name); !errors.Is(err, ErrUnsupportedType) || !strings.Contains(err.Error(), "enumerator C encodes as 2, which decodes as B, and they select different alternatives") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
