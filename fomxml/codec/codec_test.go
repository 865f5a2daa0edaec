package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/meshrti/meshrti/fomxml"
)

type myInt int

type roundTripCase struct {
	typ  string
	in   any
	hex  string
	want any // decoded value; nil means in
}

// roundTripCases are hand-computed layouts; FuzzDecode uses them as seeds.
func roundTripCases() []roundTripCase {
	m := func(kv ...any) map[string]any {
		r := make(map[string]any)
		for i := 0; i+1 < len(kv); i += 2 {
			r[kv[i].(string)] = kv[i+1]
		}
		return r
	}
	rec10 := m("F1", uint64(1), "F2", int64(-2), "F3", int64(3), "F4", int64(-4), "F5", 5.5, "F6", 6.25,
		"F7", true, "F8", int64(8), "F9", -9.5, "F10", uint64(10))
	return []roundTripCase{
		{"HLAinteger32BE", int64(1), "00000001", nil},
		{"HLAinteger32LE", int64(1), "01000000", nil},
		{"HLAinteger16BE", int64(-2), "fffe", nil},
		{"HLAinteger16LE", int64(-2), "feff", nil},
		{"HLAinteger64BE", int64(math.MinInt64), "8000000000000000", nil},
		{"HLAinteger64LE", int64(1), "0100000000000000", nil},
		{"HLAfloat64BE", 1.0, "3ff0000000000000", nil},
		{"HLAfloat64LE", 1.0, "000000000000f03f", nil},
		{"HLAfloat32BE", 1.5, "3fc00000", nil},
		{"HLAfloat32LE", 1.5, "0000c03f", nil},
		{"HLAoctet", uint64(255), "ff", nil},
		{"HLAoctetPairBE", uint64(0x1234), "1234", nil},
		{"HLAoctetPairLE", uint64(0x1234), "3412", nil},
		{"HLAinteger64Time", int64(7), "0000000000000007", nil},
		{"HLAfloat64Time", 2.0, "4000000000000000", nil},
		{"HLAcount", int64(3), "00000003", nil},
		{"HLAboolean", true, "00000001", nil},
		{"HLAboolean", false, "00000000", nil},
		{"HLAASCIIstring", "hi", "00000002 6869", nil},
		{"HLAASCIIstring", "", "00000000", nil},
		{"HLAunicodeString", "hé😀", "00000004 0068 00e9 d83d de00", nil},
		{"HLAunicodeString", "", "00000000", nil},
		{"HLAopaqueData", []byte{0xde, 0xad}, "00000002 dead", nil},
		{"HLAhandle", []byte{}, "00000000", nil},
		{"HLAtoken", []byte{}, "", nil},
		{"HLAhandleList", []any{[]byte{1}, []byte{2, 3}}, "00000002 | 00000001 01 000000 | 00000002 0203", nil},
		{"HLAresignAction", "NoAction", "00000006", nil},
		{"HLAobjectClassBasedCount", m("HLAobjectClass", []byte{1, 2}, "HLAcount", int64(5)), "00000002 0102 0000 | 00000005", nil},
		{"HLAinteractionSubscription", m("HLAinteractionClass", []byte{9}, "HLAactive", true), "00000001 09 000000 | 00000001", nil},
		{"UnsignedShort", uint64(65535), "ffff", nil},
		{"RPRunsignedInteger8BE", uint64(200), "c8", nil},
		{"Int32LEx", int64(-2), "feffffff", nil},
		{"Real32", 1.5, "3fc00000", nil},
		{"Channel", uint64(3), "0003", nil},
		{"int16", int64(-1), "ffff", nil},
		{"WaiterTasks", "Serving", "00000002", nil},
		{"Color", "Blue", "02", nil},
		{"Multi", "High", "0009", nil},
		{"Multi", "Low", "0001", nil},
		{"ColorList", []any{"Red", "Blue"}, "00000002 00 02", nil},
		// A fixed record {HLAoctet, HLAinteger32BE} has 3 padding octets.
		{"OctetInt", m("A", uint64(1), "B", int64(2)), "01 000000 00000002", nil},
		{"Nested", m("A", uint64(1), "R", m("A", uint64(2), "B", int64(3))), "01 000000 | 02 000000 00000003", nil},
		{"SpatialStruct", m("WorldLocation", m("X", 1.0, "Y", 2.0, "Z", -1.0), "IsFrozen", false),
			"3ff0000000000000 4000000000000000 bff0000000000000 00000000", nil},
		{"Empty", m(), "", nil},
		// A variable array of HLAfloat64BE has 4 padding octets after the count.
		{"Float64List", []any{1.0, 2.0}, "00000002 00000000 | 3ff0000000000000 4000000000000000", nil},
		{"Float64List", []any{}, "00000000", nil},
		{"OctetIntList", []any{m("A", uint64(1), "B", int64(2)), m("A", uint64(3), "B", int64(4))},
			"00000002 | 01 000000 00000002 | 03 000000 00000004", nil},
		{"StringList", []any{"a", "bc"}, "00000002 | 00000001 61 000000 | 00000002 6263", nil},
		{"Int16x3", []any{int64(1), int64(2), int64(3)}, "0001 0002 0003", nil},
		{"Matrix2x3", []any{[]any{int64(1), int64(2), int64(3)}, []any{int64(4), int64(5), int64(6)}},
			"00000001 00000002 00000003 00000004 00000005 00000006", nil},
		{"Marking", "ABC", "414243 0000000000000000", nil},
		{"Marking", "ABCDEFGHIJK", "4142434445464748494a4b", nil},
		{"Bytes4", []byte{1, 2, 3, 4}, "01020304", nil},
		{"OctetArray3", []byte{9, 8, 7}, "090807", nil},
		{"Uni4", "ab", "0061 0062 0000 0000", nil},
		{"OctetIntPair", []any{m("A", uint64(1), "B", int64(2)), m("A", uint64(3), "B", int64(4))},
			"01 000000 00000002 | 03 000000 00000004", nil},
		{"Bounded", []any{int64(7)}, "00000001 00000007", nil},
		// A variant record with an HLAinteger32BE-based discriminant and an
		// HLAfloat64BE alternative has 4 padding octets.
		{"Var", m("Kind", "AsFloat", "F", 1.0), "00000001 00000000 3ff0000000000000", nil},
		{"Var", m("Kind", "AsOctet", "O", uint64(7)), "00000002 00000000 07", nil},
		// An alternative without data is the discriminant alone: no padding.
		{"Var", m("Kind", "Empty"), "00000003", nil},
		{"VarThenOctet", m("V", m("Kind", "Empty"), "B", uint64(5)), "00000003 | 05", nil},
		{"VarThenOctet", m("V", m("Kind", "AsFloat", "F", 1.0), "B", uint64(5)), "00000001 00000000 3ff0000000000000 | 05", nil},
		{"Var", m("Kind", "Other1", "Rest", int64(5)), "00000004 00000000 0005", nil},
		{"Var", m("Kind", "Other2", "Rest", int64(-1)), "00000005 00000000 ffff", nil},
		{"SmallVar", m("Kind", "AsOctet", "O", uint64(7)), "00000002 07", nil},
		{"SmallVar", m("Kind", "Empty", "S", int64(-1)), "00000003 ffff", nil},
		{"ColorVar", m("C", "Red", "D", 1.0), "00 00000000000000 3ff0000000000000", nil},
		{"ColorVar", m("C", "Blue"), "02", nil},
		{"Tree", m("Value", int64(1), "Children", []any{m("Value", int64(2), "Children", []any{})}),
			"00000001 | 00000001 | 00000002 00000000", nil},
		{"Chain", m("Kind", "HLAtrue", "Next", m("Kind", "HLAtrue", "Next", m("Kind", "HLAfalse"))),
			"00000001 00000001 00000000", nil},
		{"Lengthless", []any{int64(1), int64(2)}, "00000001 00000002", nil},
		{"Lengthless", []any{}, "", nil},
		{"LengthlessBytes", []byte{1, 2, 3}, "010203", nil},
		{"LengthlessRecs", []any{m("A", uint64(1), "B", int64(2)), m("A", uint64(3), "B", int64(4))},
			"01 000000 00000002 | 03 000000 00000004", nil},
		{"RecLengthless", m("A", uint64(1), "L", []any{int64(5)}), "01 000000 00000005", nil},
		{"RecLengthless", m("A", uint64(1), "L", []any{}), "01 000000", nil},
		{"NullTerm", "abc", "61626300", nil},
		{"NullTerm", "", "00", nil},
		{"RecPad", m("A", uint64(1), "B", uint64(2)), "01 000000 02 000000",
			m("A", uint64(1), "P", []byte{0, 0, 0}, "B", uint64(2), "Q", []byte{0, 0, 0})},
		{"Rec10", rec10,
			"01 00 fffe | 00000003 | fffffffffffffffc | 40b00000 00000000 | 4019000000000000 | 00000001 | 08000000 | 00000000000023c0 | 000a", nil},
	}
}

func TestRoundTrip(t *testing.T) {
	c := mustCodec(t)
	tests := roundTripCases()
	for _, tc := range tests {
		want := h(tc.hex)
		got, err := c.Encode(tc.typ, tc.in)
		if err != nil {
			t.Errorf("Encode(%s, %v): %v", tc.typ, tc.in, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("Encode(%s, %v) = % x, want % x", tc.typ, tc.in, got, want)
		}
		v, err := c.Decode(tc.typ, want)
		if err != nil {
			t.Errorf("Decode(%s, % x): %v", tc.typ, want, err)
			continue
		}
		wantV := tc.want
		if wantV == nil {
			wantV = tc.in
		}
		if !reflect.DeepEqual(v, wantV) {
			t.Errorf("Decode(%s, % x) = %#v, want %#v", tc.typ, want, v, wantV)
		}
	}
}

func TestEncodeAcceptsGoTypes(t *testing.T) {
	c := mustCodec(t)
	i := 5
	type rec struct {
		A     uint8
		Other int `hla:"B"`
		skip  int
	}
	tests := []struct {
		typ string
		in  any
		hex string
	}{
		{"HLAinteger32BE", 5, "00000005"},
		{"HLAinteger32BE", int32(5), "00000005"},
		{"HLAinteger32BE", uint8(5), "00000005"},
		{"HLAinteger32BE", 5.0, "00000005"},
		{"HLAinteger32BE", json.Number("5"), "00000005"},
		{"HLAinteger32BE", myInt(5), "00000005"},
		{"HLAinteger32BE", &i, "00000005"},
		{"HLAinteger64BE", uint64(math.MaxInt64), "7fffffffffffffff"},
		{"UnsignedShort", json.Number("65535"), "ffff"},
		{"HLAfloat64BE", 1, "3ff0000000000000"},
		{"HLAfloat64BE", json.Number("1.5"), "3ff8000000000000"},
		{"HLAfloat64BE", float32(1.5), "3ff8000000000000"},
		{"HLAfloat32BE", 1.5, "3fc00000"},
		{"HLAboolean", "HLAtrue", "00000001"},
		{"HLAboolean", 1, "00000001"},
		{"HLAboolean", json.Number("0"), "00000000"},
		{"WaiterTasks", 2, "00000002"},
		{"WaiterTasks", json.Number("3"), "00000003"},
		{"Color", uint8(1), "01"},
		{"Int16x3", []int{1, 2, 3}, "0001 0002 0003"},
		{"Int16x3", [3]int16{1, 2, 3}, "0001 0002 0003"},
		{"Float64List", []float64{1}, "00000001 00000000 3ff0000000000000"},
		{"OctetInt", rec{A: 1, Other: 2, skip: 3}, "01 000000 00000002"},
		{"OctetInt", &rec{A: 1, Other: 2}, "01 000000 00000002"},
		{"OctetInt", map[string]int{"A": 1, "B": 2}, "01 000000 00000002"},
		{"Bytes4", "AQIDBA==", "01020304"},
		{"Bytes4", []any{1, 2, 3, 4}, "01020304"},
		{"HLAopaqueData", []int{1, 2}, "00000002 0102"},
		{"Marking", []byte("AB"), "4142 000000000000000000"},
		{"HLAASCIIstring", []byte("hi"), "00000002 6869"},
		{"HLAASCIIstring", []any{104, 105}, "00000002 6869"},
		{"HLAunicodeString", []uint16{0x68}, "00000001 0068"},
		{"RecPad", map[string]any{"A": 1, "P": nil, "B": 2, "Q": []byte{0, 0, 0}}, "01 000000 02 000000"},
		{"Var", map[string]any{"Kind": 1, "F": 1}, "00000001 00000000 3ff0000000000000"},
		{"Chain", map[string]any{"Kind": false}, "00000000"},
	}
	for _, tc := range tests {
		got, err := c.Encode(tc.typ, tc.in)
		if err != nil {
			t.Errorf("Encode(%s, %#v): %v", tc.typ, tc.in, err)
			continue
		}
		if want := h(tc.hex); !bytes.Equal(got, want) {
			t.Errorf("Encode(%s, %#v) = % x, want % x", tc.typ, tc.in, got, want)
		}
	}
}

func TestAppendEncodeOffset(t *testing.T) {
	c := mustCodec(t)
	// Padding is relative to the start of the encoding, not of dst.
	dst := []byte{0xaa}
	got, err := c.AppendEncode(dst, "OctetInt", map[string]any{"A": 1, "B": 2})
	if err != nil {
		t.Fatal(err)
	}
	if want := h("aa 01 000000 00000002"); !bytes.Equal(got, want) {
		t.Errorf("AppendEncode = % x, want % x", got, want)
	}
	// On error dst keeps its length.
	got, err = c.AppendEncode(dst, "OctetInt", map[string]any{"A": 1})
	if err == nil || len(got) != 1 {
		t.Errorf("AppendEncode with missing field = % x, %v", got, err)
	}
}

func TestEncodeErrors(t *testing.T) {
	c := mustCodec(t)
	deep := map[string]any{"Value": 0, "Children": []any{}}
	for i := 0; i < 2*MaxDepth; i++ {
		deep = map[string]any{"Value": i, "Children": []any{deep}}
	}
	cyclic := map[string]any{"Value": 1}
	cyclic["Children"] = []any{cyclic}
	tests := []struct {
		typ  string
		in   any
		kind error
		msg  string // substring of the message, if set
	}{
		{"SpatialStruct", map[string]any{"WorldLocation": map[string]any{"X": "abc", "Y": 0, "Z": 0}, "IsFrozen": true},
			ErrInvalidValue, "codec: SpatialStruct.WorldLocation.X: want number, got string"},
		{"HLAinteger32BE", "1", ErrInvalidValue, "codec: HLAinteger32BE: want integer, got string"},
		{"HLAinteger32BE", nil, ErrInvalidValue, "want integer, got nil"},
		{"HLAinteger32BE", 1.5, ErrInvalidValue, "want integer, got number 1.5"},
		{"HLAinteger32BE", int64(1) << 40, ErrInvalidValue, "out of range for 32-bit signed integer"},
		{"HLAinteger16BE", 40000, ErrInvalidValue, "out of range"},
		{"HLAoctet", 256, ErrInvalidValue, "out of range for 8-bit unsigned integer"},
		{"HLAoctet", -1, ErrInvalidValue, "out of range"},
		{"HLAinteger64BE", uint64(math.MaxUint64), ErrInvalidValue, "out of range"},
		{"HLAinteger64BE", 1e19, ErrInvalidValue, "out of range"},
		{"HLAfloat32BE", 1e300, ErrInvalidValue, "out of range for 32-bit float"},
		{"HLAfloat64BE", json.Number("x"), ErrInvalidValue, "want number"},
		{"HLAboolean", 2, ErrInvalidValue, "not a value of an enumerator of HLAboolean"},
		{"HLAboolean", "yes", ErrInvalidValue, `"yes" is not an enumerator of HLAboolean`},
		{"WaiterTasks", "Nope", ErrInvalidValue, `codec: WaiterTasks: "Nope" is not an enumerator of WaiterTasks`},
		{"WaiterTasks", 9, ErrInvalidValue, "9 is not a value of an enumerator"},
		{"WaiterTasks", true, ErrInvalidValue, "want enumerator name or value, got bool"},
		{"Color", 300, ErrInvalidValue, "out of range"},
		{"HLAunicodeString", "a\xffb", ErrInvalidValue, "invalid UTF-8"},
		{"HLAunicodeString", 5, ErrInvalidValue, "want string or array, got int"},
		{"HLAopaqueData", "not base64!", ErrInvalidValue, "base64"},
		{"Float64List", "x", ErrInvalidValue, "want array, got string"},
		{"Float64List", []any{1.0, "x"}, ErrInvalidValue, "codec: Float64List[1]: want number, got string"},
		{"Int16x3", []int{1, 2}, ErrInvalidValue, "want 3 elements, got 2"},
		{"Bytes4", []byte{1}, ErrInvalidValue, "want 4 elements, got 1"},
		{"Marking", "ABCDEFGHIJKL", ErrInvalidValue, "want 11 elements, got 12"},
		{"Uni4", "abcde", ErrInvalidValue, "want 4 elements"},
		{"Bounded", []int{}, ErrInvalidValue, "0 elements, outside cardinality [1..3]"},
		{"Bounded", []int{1, 2, 3, 4}, ErrInvalidValue, "outside cardinality"},
		{"OctetInt", map[string]any{"A": 1}, ErrInvalidValue, `codec: OctetInt: missing field "B"`},
		{"OctetInt", map[string]any{"A": 1, "B": 2, "C": 3}, ErrInvalidValue, `unknown field "C"`},
		{"OctetInt", []int{1, 2}, ErrInvalidValue, "want record"},
		{"OctetInt", nil, ErrInvalidValue, "got nil"},
		{"Nested", map[string]any{"A": 1, "R": map[string]any{"A": 1, "B": "x"}}, ErrInvalidValue, "codec: Nested.R.B: want integer"},
		{"OctetIntList", []any{map[string]any{"A": 1, "B": 2}, map[string]any{"A": 1}}, ErrInvalidValue, `codec: OctetIntList[1]: missing field "B"`},
		{"Var", map[string]any{"F": 1.0}, ErrInvalidValue, `missing discriminant "Kind"`},
		{"Var", map[string]any{"Kind": "Nope"}, ErrInvalidValue, `codec: Var.Kind: "Nope" is not an enumerator`},
		{"Var", map[string]any{"Kind": "AsFloat"}, ErrInvalidValue, `missing alternative "F"`},
		{"Var", map[string]any{"Kind": "AsFloat", "F": 1.0, "O": 1}, ErrInvalidValue, `field "O" is not the discriminant or the alternative`},
		{"Var", map[string]any{"Kind": "Empty", "F": 1.0}, ErrInvalidValue, `field "F"`},
		{"Var", map[string]any{"Kind": "AsFloat", "F": "x"}, ErrInvalidValue, "codec: Var.F: want number"},
		{"SmallVar", map[string]any{"Kind": "Other1"}, ErrInvalidValue, "selects no alternative"},
		{"NullTerm", "a\x00b", ErrInvalidValue, "NUL"},
		{"NullTerm", []any{1}, ErrInvalidValue, "want string or []byte"},
		{"RecPad", map[string]any{"A": 1, "B": 2, "P": []byte{0}}, ErrInvalidValue, "codec: RecPad.P: want 3 padding octets here, got 1"},
		{"RecLengthlessMiddle", map[string]any{"L": []int{}, "B": 1}, ErrUnsupportedEncoding, "codec: RecLengthlessMiddle.L: RPRlengthlessArray is supported only at the end"},
		{"Tree", deep, ErrTooDeep, "nested deeper than"},
		{"Tree", cyclic, ErrTooDeep, ""},
		{"NoSuchType", 1, ErrUnknownType, "codec: NoSuchType: unknown data type"},
		{"Extended", map[string]any{}, ErrUnsupportedEncoding, `codec: Extended: unsupported encoding "RPRextendedVariantRecord"`},
		{"UsesExtended", map[string]any{}, ErrUnsupportedEncoding, `codec: UsesExtended: data type Extended: unsupported encoding`},
		{"Sparse", []int{}, ErrUnsupportedEncoding, `"SparseArray"`},
		{"RangeFixed", []int{1, 2}, ErrUnsupportedType, "HLAfixedArray with cardinality"},
		{"MultiVar", []int{}, ErrUnsupportedType, "multi-dimensional HLAvariableArray"},
		{"MissingRef", map[string]any{}, ErrUnknownType, "codec: MissingRef: data type NoSuchType: unknown data type"},
		{"Self", map[string]any{}, ErrUnsupportedType, "recursive definition"},
		{"SelfArr", []any{}, ErrUnsupportedType, "recursive definition"},
		{"HasSelf", map[string]any{}, ErrUnsupportedType, "codec: HasSelf: recursive definition"},
		{"Odd24", 1, ErrUnsupportedType, "24 bits"},
		{"Mystery", 1, ErrUnsupportedType, "cannot tell"},
		{"OdList", []int{}, ErrUnsupportedType, "data type Odd24"},
	}
	for _, tc := range tests {
		_, err := c.Encode(tc.typ, tc.in)
		if !errors.Is(err, tc.kind) {
			t.Errorf("Encode(%s, %v) error = %v, want %v", tc.typ, tc.in, err, tc.kind)
			continue
		}
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("Encode(%s): error %T is not *Error", tc.typ, err)
		}
		if !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("Encode(%s, %v) error = %q, want it to contain %q", tc.typ, tc.in, err, tc.msg)
		}
		if !strings.HasPrefix(err.Error(), "codec: ") {
			t.Errorf("error %q lacks the codec: prefix", err)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	c := mustCodec(t)
	strict := mustCodec(t, Strict())
	// A Tree nested deeper than MaxDepth: each level is a value and a
	// one-element list.
	var deep []byte
	for i := 0; i < MaxDepth; i++ {
		deep = append(deep, h("00000000 00000001")...)
	}
	deep = append(deep, h("00000000 00000000")...)
	tests := []struct {
		c    *Codec
		typ  string
		hex  string
		kind error
		msg  string
	}{
		{c, "HLAinteger32BE", "0000", ErrShortBuffer, "codec: HLAinteger32BE: short buffer: need 4 bytes at offset 0, have 2"},
		{c, "HLAinteger32BE", "0000000000", ErrTrailingData, "codec: HLAinteger32BE: trailing data: 1 bytes"},
		{c, "HLAinteger32BE", "", ErrShortBuffer, "need 4"},
		{c, "OctetInt", "01 000000 0000", ErrShortBuffer, "codec: OctetInt.B: short buffer"},
		{c, "OctetInt", "01 00", ErrShortBuffer, "codec: OctetInt.B: short buffer: need 3 bytes at offset 1"},
		{c, "WaiterTasks", "00000009", ErrInvalidData, "codec: WaiterTasks: 9 is not a value of an enumerator of WaiterTasks"},
		{c, "HLAboolean", "00000002", ErrInvalidData, "2 is not a value of an enumerator of HLAboolean"},
		{c, "HLAboolean", "ffffffff", ErrInvalidData, "-1 is not"},
		{c, "Float64List", "7fffffff", ErrShortBuffer, "element count 2147483647"},
		{c, "Float64List", "00000002 00000000 3ff0000000000000", ErrShortBuffer, "element count 2"},
		{c, "Float64List", "ffffffff", ErrInvalidData, "negative element count -1"},
		{c, "HLAASCIIstring", "00000005 6869", ErrShortBuffer, "element count 5"},
		{c, "HLAunicodeString", "00000002 0068", ErrShortBuffer, ""},
		{c, "Bounded", "00000000", ErrInvalidData, "element count 0 outside cardinality [1..3]"},
		{c, "Int16x3", "0001 0002", ErrShortBuffer, "3 elements need at least 6 bytes"},
		{c, "Var", "00000009 00000000", ErrInvalidData, "codec: Var.Kind: 9 is not a value of an enumerator of VarKind"},
		{c, "Var", "00000001 00000000 3ff0", ErrShortBuffer, "codec: Var.F: short buffer"},
		{c, "SmallVar", "00000004 0000", ErrInvalidData, "discriminant Other1 selects no alternative"},
		{c, "NullTerm", "616263", ErrShortBuffer, "no terminating NUL"},
		{c, "Lengthless", "00000001 0000", ErrShortBuffer, "codec: Lengthless[1]: short buffer"},
		{c, "RecLengthlessMiddle", "01", ErrUnsupportedEncoding, "RPRlengthlessArray"},
		{c, "Tree", string(toHex(deep)), ErrTooDeep, "nested deeper than 100"},
		{c, "Self", "00", ErrUnsupportedType, "recursive definition"},
		{c, "Extended", "00", ErrUnsupportedEncoding, ""},
		{c, "NoSuchType", "00", ErrUnknownType, ""},
		{strict, "OctetInt", "01 ff0000 00000002", ErrInvalidData, "codec: OctetInt.B: nonzero padding at offset 1"},
		{strict, "HLAunicodeString", "00000001 d800", ErrInvalidData, "unpaired UTF-16 surrogate"},
		{strict, "HLAunicodeString", "00000002 de00 d83d", ErrInvalidData, "unpaired"},
		{strict, "RecLengthless", "01", ErrShortBuffer, ""},
	}
	for _, tc := range tests {
		_, err := tc.c.Decode(tc.typ, h(tc.hex))
		if !errors.Is(err, tc.kind) {
			t.Errorf("Decode(%s, %s) error = %v, want %v", tc.typ, tc.hex, err, tc.kind)
			continue
		}
		if !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("Decode(%s, %s) error = %q, want it to contain %q", tc.typ, tc.hex, err, tc.msg)
		}
	}
}

func toHex(b []byte) []byte {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return out
}

func TestLenientDecode(t *testing.T) {
	c := mustCodec(t)
	tests := []struct {
		typ  string
		hex  string
		want any
	}{
		// Padding octets are not checked unless Strict.
		{"OctetInt", "01 ffffff 00000002", map[string]any{"A": uint64(1), "B": int64(2)}},
		// Unpaired surrogates become U+FFFD.
		{"HLAunicodeString", "00000002 d800 0041", "\uFFFDA"},
		{"HLAunicodeString", "00000001 dc00", "\uFFFD"},
		// An empty lengthless array at the end may omit its padding.
		{"RecLengthless", "01", map[string]any{"A": uint64(1), "L": []any{}}},
		// The padding after a discriminant is skipped, whatever it holds.
		{"Var", "00000002 01020304 07", map[string]any{"Kind": "AsOctet", "O": uint64(7)}},
		// A second value of a multi-valued enumerator.
		{"Multi", "0003", "Low"},
		// Trailing NULs of a fixed character array are dropped; inner ones kept.
		{"Marking", "41 00 42 0000000000000000", "A\x00B"},
		{"Uni4", "0041 0000 0000 0000", "A"},
	}
	for _, tc := range tests {
		v, err := c.Decode(tc.typ, h(tc.hex))
		if err != nil {
			t.Errorf("Decode(%s, %s): %v", tc.typ, tc.hex, err)
			continue
		}
		if !reflect.DeepEqual(v, tc.want) {
			t.Errorf("Decode(%s, %s) = %#v, want %#v", tc.typ, tc.hex, v, tc.want)
		}
	}
}

func TestTypeInfo(t *testing.T) {
	c := mustCodec(t)
	tests := []struct {
		typ   string
		align int
		size  int // -1: variable
	}{
		{"HLAoctet", 1, 1},
		{"HLAinteger16BE", 2, 2},
		{"HLAfloat64LE", 8, 8},
		{"HLAboolean", 4, 4},
		{"HLAASCIIstring", 4, -1},
		{"Float64List", 8, -1},
		{"OctetInt", 4, 8},
		{"Nested", 4, 12},
		{"Int16x3", 2, 6},
		{"OctetIntPair", 4, 16},
		{"Matrix2x3", 4, 24},
		{"Var", 8, -1},
		{"SmallVar", 4, -1},
		{"ColorVar", 8, -1},
		{"Tree", 4, -1},
		{"Chain", 4, -1},
		{"HLAtoken", 1, 0},
		{"Empty", 1, 0},
		{"Rec10", 8, 50},
		{"Lengthless", 4, -1},
		{"Pad64", 1, -1},
	}
	for _, tc := range tests {
		ty, err := c.Type(tc.typ)
		if err != nil {
			t.Errorf("Type(%s): %v", tc.typ, err)
			continue
		}
		if ty.Name() != tc.typ {
			t.Errorf("Name() = %q", ty.Name())
		}
		if got := ty.OctetBoundary(); got != tc.align {
			t.Errorf("%s: OctetBoundary() = %d, want %d", tc.typ, got, tc.align)
		}
		size, ok := ty.FixedSize()
		if !ok {
			size = -1
		}
		if size != tc.size {
			t.Errorf("%s: FixedSize() = %d, %v; want %d", tc.typ, size, ok, tc.size)
		}
	}
	names := c.Names()
	if len(names) < 60 || !strings.Contains(strings.Join(names, " "), "HLAunicodeString") {
		t.Errorf("Names() = %v", names)
	}
	if _, err := New(nil); err == nil {
		t.Error("New(nil) succeeded")
	}
}

func TestStandardOnly(t *testing.T) {
	c, err := New(fdd())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range standardTypeNames() {
		if _, err := c.Type(name); err != nil {
			t.Errorf("standard type %s: %v", name, err)
		}
	}
	b, err := c.Encode("HLAsynchPointFederateList", []any{map[string]any{"HLAfederate": []byte{1}, "HLAfederateSynchStatus": "MovingToSynchPoint"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := h("00000001 | 00000001 01 000000 | 00000002"); !bytes.Equal(b, want) {
		t.Errorf("got % x, want % x", b, want)
	}
}

// TestFDDOverridesStandard checks that the FDD's definitions take
// precedence over the built-in MIM.
func TestFDDOverridesStandard(t *testing.T) {
	f := fdd(simpleT("HLAcount", "HLAinteger64BE"))
	c, err := New(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Encode("HLAcount", 1)
	if err != nil || len(b) != 8 {
		t.Errorf("Encode(HLAcount) = % x, %v; want 8 octets", b, err)
	}
}

func TestConcurrentUse(t *testing.T) {
	c := mustCodec(t)
	done := make(chan error)
	for g := 0; g < 8; g++ {
		go func(g int) {
			var err error
			for i := 0; i < 200 && err == nil; i++ {
				var b []byte
				b, err = c.Encode("OctetIntList", []any{map[string]any{"A": g, "B": i}})
				if err == nil {
					_, err = c.Decode("OctetIntList", b)
				}
			}
			done <- err
		}(g)
	}
	for g := 0; g < 8; g++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// TestJSONRoundTrip checks that decoded values survive encoding/json:
// integers come back as json.Number, []byte as base64 strings.
func TestJSONRoundTrip(t *testing.T) {
	c := mustCodec(t)
	for _, tc := range roundTripCases() {
		want := h(tc.hex)
		v, err := c.Decode(tc.typ, want)
		if err != nil {
			t.Fatal(err)
		}
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%s: %v", tc.typ, err)
		}
		dec := json.NewDecoder(bytes.NewReader(j))
		dec.UseNumber()
		var back any
		if err := dec.Decode(&back); err != nil {
			t.Fatal(err)
		}
		got, err := c.Encode(tc.typ, back)
		if err != nil {
			t.Errorf("%s: %s does not encode: %v", tc.typ, j, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: %s encodes as % x, want % x", tc.typ, j, got, want)
		}
	}
}

func TestCompileChecks(t *testing.T) {
	f := fdd(
		arrayT("LLTokens", "HLAtoken", "RPRlengthlessArray", fomxml.Cardinality{Dynamic: true}),
		recordT("UsesLL", "X", "LLTokens"),
		enumT("BadEnum", "HLAoctet", "Big", 300),
		enumT("FloatEnum", "HLAfloat32BE", "A", 1),
		simpleT("SimpleOfRecord", "UsesLL"),
		variantT("BadVariant", "K", "HLAinteger32BE"),
		variantT("BadAlt", "K", "HLAboolean", fomxml.Alternative{Name: "A", DataType: "HLAoctet", Enumerators: []string{"Nope"}}),
		variantT("SameName", "K", "HLAboolean", fomxml.Alternative{Name: "K", DataType: "HLAoctet", Enumerators: []string{"HLAtrue"}}),
		&fomxml.DataType{Name: "NoEncoding", Kind: fomxml.KindArray, Element: "HLAoctet", Cardinality: fomxml.Cardinality{Dynamic: true}},
		&fomxml.DataType{Name: "NoEndian", Kind: fomxml.KindBasic, Size: 16, Interpretation: "Integer"},
		basicT("Float8", 8, fomxml.BigEndian, "float"),
		basicT("MyUnsigned", 32, fomxml.LittleEndian, "unsigned counter"),
		basicT("MyDouble", 64, fomxml.BigEndian, "IEEE double"),
		basicT("MyByte", 8, fomxml.BigEndian, "an 8-bit value"),
		&fomxml.DataType{Name: "DynVar", Kind: fomxml.KindArray, Element: "HLAoctetPairBE", Encoding: "HLAvariableArray",
			Cardinality: fomxml.Cardinality{Ranges: []fomxml.CardinalityRange{{Min: 2, Max: -1}}, Text: "2+"}},
	)
	c, err := New(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		typ  string
		kind error
		msg  string
	}{
		{"LLTokens", ErrUnsupportedEncoding, "may encode to nothing"},
		{"UsesLL", ErrUnsupportedEncoding, "data type LLTokens"},
		{"BadEnum", ErrUnsupportedType, "value 300 of enumerator Big does not fit HLAoctet"},
		{"FloatEnum", ErrUnsupportedType, "not an integer"},
		{"SimpleOfRecord", ErrUnsupportedType, "representation UsesLL is not a basic data representation"},
		{"BadVariant", ErrUnsupportedType, "not an enumerated data type"},
		{"BadAlt", ErrUnsupportedType, "Nope is not an enumerator of HLAboolean"},
		{"SameName", ErrUnsupportedType, "name of the discriminant"},
		{"NoEncoding", ErrUnsupportedEncoding, "array without encoding"},
		{"NoEndian", ErrUnsupportedType, "without endianness"},
		{"Float8", ErrUnsupportedType, "8-bit floating point"},
	} {
		_, err := c.Type(tc.typ)
		if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("Type(%s) error = %v, want %v containing %q", tc.typ, err, tc.kind, tc.msg)
		}
	}
	for _, tc := range []struct {
		typ string
		in  any
		hex string
		out any
	}{
		{"MyUnsigned", uint32(math.MaxUint32), "ffffffff", uint64(math.MaxUint32)},
		{"MyDouble", 2.0, "4000000000000000", 2.0},
		{"MyByte", 7, "07", uint64(7)},
		{"DynVar", []int{1, 2, 3}, "00000003 0001 0002 0003", []any{uint64(1), uint64(2), uint64(3)}},
	} {
		b, err := c.Encode(tc.typ, tc.in)
		if err != nil || !bytes.Equal(b, h(tc.hex)) {
			t.Errorf("Encode(%s) = % x, %v; want %s", tc.typ, b, err, tc.hex)
			continue
		}
		v, err := c.Decode(tc.typ, b)
		if err != nil || !reflect.DeepEqual(v, tc.out) {
			t.Errorf("Decode(%s) = %#v, %v; want %#v", tc.typ, v, err, tc.out)
		}
	}
	if _, err := c.Encode("DynVar", []int{1}); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("DynVar with 1 element: %v", err)
	}
}
