package codec

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/meshrti/meshrti/fomxml"
)

// TestStandardTypesMatchMIM checks the built-in MIM data types against the
// MIM the parser embeds: every standard type, structurally identical.
func TestStandardTypesMatchMIM(t *testing.T) {
	f, err := fomxml.Merge()
	if err != nil {
		t.Fatal(err)
	}
	known := make(map[string]bool)
	for _, name := range standardTypeNames() {
		known[name] = true
		want, got := f.DataTypes[name], standardType(name)
		if want == nil {
			t.Errorf("%s: not in the parsed MIM", name)
			continue
		}
		if got == nil {
			t.Errorf("%s: standardType returns nil", name)
			continue
		}
		if got.Kind != want.Kind || got.Size != want.Size || got.Endian != want.Endian ||
			got.Representation != want.Representation || got.Element != want.Element {
			t.Errorf("%s: got %+v, want %+v", name, got, want)
		}
		if got.Kind != fomxml.KindBasic && got.Encoding != want.Encoding {
			t.Errorf("%s: encoding %q, want %q", name, got.Encoding, want.Encoding)
		}
		if got.Cardinality.Dynamic != want.Cardinality.Dynamic ||
			(!want.Cardinality.Dynamic && !reflect.DeepEqual(got.Cardinality.Ranges, want.Cardinality.Ranges)) {
			t.Errorf("%s: cardinality %+v, want %+v", name, got.Cardinality, want.Cardinality)
		}
		if len(got.Enumerators) != len(want.Enumerators) {
			t.Errorf("%s: enumerators %v, want %v", name, got.Enumerators, want.Enumerators)
		} else {
			for i := range got.Enumerators {
				if got.Enumerators[i].Name != want.Enumerators[i].Name || !reflect.DeepEqual(got.Enumerators[i].Values, want.Enumerators[i].Values) {
					t.Errorf("%s: enumerator %v, want %v", name, got.Enumerators[i], want.Enumerators[i])
				}
			}
		}
		if len(got.Fields) != len(want.Fields) {
			t.Errorf("%s: fields %v, want %v", name, got.Fields, want.Fields)
		} else {
			for i := range got.Fields {
				if got.Fields[i].Name != want.Fields[i].Name || got.Fields[i].DataType != want.Fields[i].DataType {
					t.Errorf("%s: field %v, want %v", name, got.Fields[i], want.Fields[i])
				}
			}
		}
	}
	for name := range f.DataTypes {
		if !known[name] {
			t.Errorf("MIM data type %s is missing from standardType", name)
		}
	}
	c, err := New(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range c.Names() {
		if _, err := c.Type(name); err != nil {
			t.Errorf("MIM type: %v", err)
		}
	}
}

// TestRPRFOM compiles the RPR FOM 2.0 when a copy is at hand. Only the
// types built on RPRextendedVariantRecord may be unusable.
func TestRPRFOM(t *testing.T) {
	dir := os.Getenv("MESHRTI_RPR_FOM")
	if dir == "" {
		dir = "/work/shared/fom/rpr2"
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "*.xml"))
	if len(paths) == 0 {
		t.Skip("no RPR FOM at", dir, "(set MESHRTI_RPR_FOM)")
	}
	f, err := fomxml.Load(paths...)
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(f)
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	for _, name := range c.Names() {
		if _, err := c.Type(name); err != nil {
			bad = append(bad, name)
			if !errors.Is(err, ErrUnsupportedEncoding) {
				t.Errorf("%v", err)
			}
		}
	}
	sort.Strings(bad)
	t.Logf("%d of %d types unusable: %v", len(bad), len(c.Names()), bad)

	// A few RPR values, encoded and decoded.
	for _, tc := range []struct {
		typ string
		v   any
	}{
		{"WorldLocationStruct", map[string]any{"X": 1.0, "Y": 2.0, "Z": 3.0}},
		{"EntityTypeStruct", map[string]any{"EntityKind": 1, "Domain": 2, "CountryCode": 225, "Category": 1, "Subcategory": 2, "Specific": 3, "Extra": 0}},
		{"RTIobjectId", "obj-1"},
		{"MarkingStruct", map[string]any{"MarkingEncodingType": "ASCII", "MarkingData": []byte("TANK\x00\x00\x00\x00\x00\x00\x00")}},
	} {
		b, err := c.Encode(tc.typ, tc.v)
		if err != nil {
			t.Errorf("Encode(%s): %v", tc.typ, err)
			continue
		}
		if _, err := c.Decode(tc.typ, b); err != nil {
			t.Errorf("Decode(%s, % x): %v", tc.typ, b, err)
		}
	}

	// Random data into every usable type: no panic, and whatever decodes
	// re-encodes.
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 256)
	for _, name := range c.Names() {
		ty, err := c.Type(name)
		if err != nil {
			continue
		}
		for i := 0; i < 300; i++ {
			b := buf[:rng.IntN(len(buf))]
			for j := range b {
				b[j] = byte(rng.Uint32())
				if rng.IntN(3) == 0 {
					b[j] = 0
				}
			}
			v, err := ty.Decode(b)
			if err != nil {
				continue
			}
			if _, err := ty.Encode(v); err != nil {
				t.Errorf("%s: % x decodes to %v, which does not encode: %v", name, b, v, err)
			}
		}
	}
}
