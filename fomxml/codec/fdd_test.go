package codec

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/meshrti/meshrti/fomxml"
)

// Builders for hand-made FDDs.

func basicT(name string, size int, e fomxml.Endian, interp string) *fomxml.DataType {
	return &fomxml.DataType{Name: name, Kind: fomxml.KindBasic, Size: size, Endian: e, Interpretation: interp}
}

func simpleT(name, rep string) *fomxml.DataType {
	return &fomxml.DataType{Name: name, Kind: fomxml.KindSimple, Representation: rep}
}

func enumT(name, rep string, pairs ...any) *fomxml.DataType {
	d := &fomxml.DataType{Name: name, Kind: fomxml.KindEnumerated, Representation: rep}
	for i := 0; i+1 < len(pairs); i += 2 {
		var vals []int64
		switch v := pairs[i+1].(type) {
		case int:
			vals = []int64{int64(v)}
		case []int64:
			vals = v
		}
		d.Enumerators = append(d.Enumerators, fomxml.Enumerator{Name: pairs[i].(string), Values: vals})
	}
	return d
}

func fixedT(name, elem string, dims ...int64) *fomxml.DataType {
	d := &fomxml.DataType{Name: name, Kind: fomxml.KindArray, Element: elem, Encoding: "HLAfixedArray"}
	for _, n := range dims {
		d.Cardinality.Ranges = append(d.Cardinality.Ranges, fomxml.CardinalityRange{Min: n, Max: n})
	}
	return d
}

func varT(name, elem string) *fomxml.DataType {
	return &fomxml.DataType{Name: name, Kind: fomxml.KindArray, Element: elem, Encoding: "HLAvariableArray",
		Cardinality: fomxml.Cardinality{Dynamic: true, Text: "Dynamic"}}
}

func arrayT(name, elem, encoding string, card fomxml.Cardinality) *fomxml.DataType {
	return &fomxml.DataType{Name: name, Kind: fomxml.KindArray, Element: elem, Encoding: encoding, Cardinality: card}
}

func recordT(name string, fields ...string) *fomxml.DataType {
	d := &fomxml.DataType{Name: name, Kind: fomxml.KindFixedRecord, Encoding: "HLAfixedRecord"}
	for i := 0; i+1 < len(fields); i += 2 {
		d.Fields = append(d.Fields, fomxml.Field{Name: fields[i], DataType: fields[i+1]})
	}
	return d
}

func variantT(name, disc, discType string, alts ...fomxml.Alternative) *fomxml.DataType {
	return &fomxml.DataType{Name: name, Kind: fomxml.KindVariantRecord, Encoding: "HLAvariantRecord",
		Discriminant: disc, Representation: discType, Alternatives: alts}
}

func fdd(types ...*fomxml.DataType) *fomxml.FDD {
	f := &fomxml.FDD{DataTypes: make(map[string]*fomxml.DataType)}
	for _, t := range types {
		f.DataTypes[t.Name] = t
	}
	return f
}

// testFDD is the FDD most tests and the fuzz target use. The standard MIM
// types come from the codec's fallback.
func testFDD() *fomxml.FDD {
	rng := func(lo, hi int64) fomxml.Cardinality {
		return fomxml.Cardinality{Ranges: []fomxml.CardinalityRange{{Min: lo, Max: hi}}}
	}
	return fdd(
		basicT("UnsignedShort", 16, fomxml.BigEndian, "Integer in the range [0, 2^16 - 1]"),
		&fomxml.DataType{Name: "RPRunsignedInteger8BE", Kind: fomxml.KindBasic, Size: 8, Endian: fomxml.BigEndian,
			Interpretation: "Integer in the range [0, 2^8-1]", Encoding: "8-bit unsigned integer."},
		basicT("Int32LEx", 32, fomxml.LittleEndian, "Integer in the range [-2^31, 2^31 - 1]"),
		basicT("Real32", 32, fomxml.BigEndian, "Single-precision floating point number"),
		basicT("Odd24", 24, fomxml.BigEndian, "Integer"),
		basicT("Mystery", 32, fomxml.BigEndian, "a thing"),
		simpleT("int16", "HLAinteger16BE"),
		simpleT("Octet", "HLAoctet"),
		simpleT("Channel", "UnsignedShort"),
		enumT("WaiterTasks", "HLAinteger32BE", "TakingOrder", 1, "Serving", 2, "Cleaning", 3),
		enumT("Color", "HLAoctet", "Red", 0, "Green", 1, "Blue", 2),
		enumT("Multi", "HLAinteger16BE", "Low", []int64{1, 2, 3}, "High", 9),
		enumT("VarKind", "HLAinteger32BE", "AsFloat", 1, "AsOctet", 2, "Empty", 3, "Other1", 4, "Other2", 5),
		recordT("OctetInt", "A", "HLAoctet", "B", "HLAinteger32BE"),
		recordT("WorldLocation", "X", "HLAfloat64BE", "Y", "HLAfloat64BE", "Z", "HLAfloat64BE"),
		recordT("SpatialStruct", "WorldLocation", "WorldLocation", "IsFrozen", "HLAboolean"),
		recordT("Nested", "A", "HLAoctet", "R", "OctetInt"),
		recordT("Rec10",
			"F1", "HLAoctet", "F2", "HLAinteger16BE", "F3", "HLAinteger32BE", "F4", "HLAinteger64BE",
			"F5", "HLAfloat32BE", "F6", "HLAfloat64BE", "F7", "HLAboolean", "F8", "HLAinteger32LE",
			"F9", "HLAfloat64LE", "F10", "HLAoctetPairBE"),
		recordT("Empty"),
		varT("Float64List", "HLAfloat64BE"),
		varT("OctetIntList", "OctetInt"),
		varT("StringList", "HLAASCIIstring"),
		varT("ColorList", "Color"),
		fixedT("Int16x3", "HLAinteger16BE", 3),
		fixedT("Matrix2x3", "HLAinteger32BE", 2, 3),
		fixedT("Marking", "HLAASCIIchar", 11),
		fixedT("Bytes4", "HLAbyte", 4),
		fixedT("OctetArray3", "Octet", 3),
		fixedT("Uni4", "HLAunicodeChar", 4),
		fixedT("OctetIntPair", "OctetInt", 2),
		arrayT("Bounded", "HLAinteger32BE", "HLAvariableArray", rng(1, 3)),
		variantT("Var", "Kind", "VarKind",
			fomxml.Alternative{Name: "F", DataType: "HLAfloat64BE", Enumerators: []string{"AsFloat"}},
			fomxml.Alternative{Name: "O", DataType: "HLAoctet", Enumerators: []string{"AsOctet"}},
			fomxml.Alternative{Name: "None", Enumerators: []string{"Empty"}},
			fomxml.Alternative{Name: "Rest", DataType: "HLAinteger16BE", Other: true}),
		recordT("VarThenOctet", "V", "Var", "B", "HLAoctet"),
		variantT("SmallVar", "Kind", "VarKind",
			fomxml.Alternative{Name: "O", DataType: "HLAoctet", Enumerators: []string{"AsOctet"}},
			fomxml.Alternative{Name: "S", DataType: "HLAinteger16BE", Enumerators: []string{"AsFloat", "Empty"}}),
		variantT("ColorVar", "C", "Color",
			fomxml.Alternative{Name: "D", DataType: "HLAfloat64BE", Enumerators: []string{"Red"}},
			fomxml.Alternative{Name: "N", Enumerators: []string{"Green", "Blue"}}),
		recordT("Tree", "Value", "HLAinteger32BE", "Children", "TreeList"),
		varT("TreeList", "Tree"),
		recordT("Self", "S", "Self"),
		fixedT("SelfArr", "SelfArr", 2),
		recordT("HasSelf", "A", "HLAoctet", "B", "Self"),
		variantT("Chain", "Kind", "HLAboolean",
			fomxml.Alternative{Name: "Next", DataType: "Chain", Enumerators: []string{"HLAtrue"}},
			fomxml.Alternative{Name: "End", Enumerators: []string{"HLAfalse"}}),
		arrayT("Lengthless", "HLAinteger32BE", "RPRlengthlessArray", fomxml.Cardinality{Dynamic: true}),
		arrayT("LengthlessBytes", "Octet", "RPRlengthlessArray", fomxml.Cardinality{Dynamic: true}),
		arrayT("LengthlessRecs", "OctetInt", "RPRlengthlessArray", fomxml.Cardinality{Dynamic: true}),
		recordT("RecLengthless", "A", "HLAoctet", "L", "Lengthless"),
		recordT("RecLengthlessMiddle", "L", "Lengthless", "B", "HLAoctet"),
		arrayT("NullTerm", "HLAASCIIchar", "RPRnullTerminatedArray", fomxml.Cardinality{Dynamic: true}),
		arrayT("Pad32", "Octet", "RPRpaddingTo32Array", fomxml.Cardinality{Dynamic: true}),
		arrayT("Pad64", "Octet", "RPRpaddingTo64Array", fomxml.Cardinality{Dynamic: true}),
		recordT("RecPad", "A", "HLAoctet", "P", "Pad32", "B", "HLAoctet", "Q", "Pad64"),
		&fomxml.DataType{Name: "Extended", Kind: fomxml.KindVariantRecord, Encoding: "RPRextendedVariantRecord",
			Discriminant: "K", Representation: "VarKind"},
		arrayT("Sparse", "HLAinteger32BE", "SparseArray", fomxml.Cardinality{Dynamic: true}),
		arrayT("RangeFixed", "HLAindex", "HLAfixedArray", rng(2, 5)),
		arrayT("MultiVar", "HLAoctetPairBE", "HLAvariableArray", fomxml.Cardinality{Ranges: []fomxml.CardinalityRange{{Min: 4, Max: 4}, {Min: 1, Max: 4}}}),
		recordT("MissingRef", "A", "NoSuchType"),
		recordT("UsesExtended", "E", "Extended"),
		varT("OdList", "Odd24"),
	)
}

func mustCodec(t testing.TB, opts ...Option) *Codec {
	t.Helper()
	c, err := New(testFDD(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// h parses hex with optional spaces and '|' separators.
func h(s string) []byte {
	s = strings.NewReplacer(" ", "", "|", "", "\n", "", "\t", "").Replace(s)
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}
