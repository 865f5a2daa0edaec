package codec

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestTypedLayouts(t *testing.T) {
	must := func(b []byte, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name string
		got  []byte
		hex  string
	}{
		{"Int16BE", AppendInt16BE(nil, -2), "fffe"},
		{"Int16LE", AppendInt16LE(nil, -2), "feff"},
		{"Int32BE", AppendInt32BE(nil, 1), "00000001"},
		{"Int32LE", AppendInt32LE(nil, 1), "01000000"},
		{"Int64BE", AppendInt64BE(nil, 1), "0000000000000001"},
		{"Int64LE", AppendInt64LE(nil, 1), "0100000000000000"},
		{"Float32BE", AppendFloat32BE(nil, 1), "3f800000"},
		{"Float32LE", AppendFloat32LE(nil, 1), "0000803f"},
		{"Float64BE", AppendFloat64BE(nil, 1), "3ff0000000000000"},
		{"Float64LE", AppendFloat64LE(nil, 1), "000000000000f03f"},
		{"Octet", AppendOctet(nil, 0xab), "ab"},
		{"OctetPairBE", AppendOctetPairBE(nil, 0x1234), "1234"},
		{"OctetPairLE", AppendOctetPairLE(nil, 0x1234), "3412"},
		{"Byte", AppendByte(nil, 7), "07"},
		{"ASCIIChar", AppendASCIIChar(nil, 'A'), "41"},
		{"UnicodeChar", AppendUnicodeChar(nil, 0xe9), "00e9"},
		{"Boolean", AppendBoolean(nil, true), "00000001"},
		{"BooleanFalse", AppendBoolean(nil, false), "00000000"},
		{"ASCIIString", must(AppendASCIIString(nil, "hi")), "00000002 6869"},
		{"UnicodeString", must(AppendUnicodeString(nil, "h😀")), "00000003 0068 d83d de00"},
		{"OpaqueData", must(AppendOpaqueData(nil, []byte{1, 2})), "00000002 0102"},
		{"Handle", must(AppendHandle(nil, []byte{1})), "00000001 01"},
		{"LogicalTime", must(AppendLogicalTime(nil, []byte{0, 0, 0, 0, 0, 0, 0, 1})), "00000008 0000000000000001"},
		{"TimeInterval", must(AppendTimeInterval(nil, nil)), "00000000"},
		{"Token", AppendToken(nil), ""},
		{"HandleList", must(AppendHandleList(nil, [][]byte{{1}, {2, 3}})), "00000002 | 00000001 01 000000 | 00000002 0203"},
		{"UnicodeStringList", must(AppendUnicodeStringList(nil, []string{"a", "bc"})), "00000002 | 00000001 0061 0000 | 00000002 0062 0063"},
		{"Padding", AppendPadding([]byte{1}, 8), "01 00000000000000"},
		{"PaddingAligned", AppendPadding([]byte{1, 2, 3, 4}, 4), "01020304"},
		// A record {HLAoctet, HLAinteger32BE} built by hand.
		{"Record", AppendInt32BE(AppendPadding(AppendOctet(nil, 1), 4), 2), "01 000000 00000002"},
	}
	for _, tc := range tests {
		if want := h(tc.hex); !bytes.Equal(tc.got, want) {
			t.Errorf("%s: got % x, want % x", tc.name, tc.got, want)
		}
	}
}

func TestTypedRead(t *testing.T) {
	b := h("01 000000 00000002 | 3ff0000000000000 | 00000002 6869 | 0000 | 00000001")
	o, rest, err := ReadOctet(b)
	if err != nil || o != 1 {
		t.Fatalf("ReadOctet = %v, %v", o, err)
	}
	if rest, err = SkipPadding(rest, len(b)-len(rest), 4); err != nil {
		t.Fatal(err)
	}
	i, rest, err := ReadInt32BE(rest)
	if err != nil || i != 2 {
		t.Fatalf("ReadInt32BE = %v, %v", i, err)
	}
	f, rest, err := ReadFloat64BE(rest)
	if err != nil || f != 1 {
		t.Fatalf("ReadFloat64BE = %v, %v", f, err)
	}
	s, rest, err := ReadASCIIString(rest)
	if err != nil || s != "hi" {
		t.Fatalf("ReadASCIIString = %q, %v", s, err)
	}
	if rest, err = SkipPadding(rest, len(b)-len(rest), 4); err != nil {
		t.Fatal(err)
	}
	v, rest, err := ReadBoolean(rest)
	if err != nil || !v || len(rest) != 0 {
		t.Fatalf("ReadBoolean = %v, % x, %v", v, rest, err)
	}

	hs, rest, err := ReadHandleList(h("00000002 | 00000001 01 000000 | 00000002 0203 ff"))
	if err != nil || !reflect.DeepEqual(hs, [][]byte{{1}, {2, 3}}) || !bytes.Equal(rest, []byte{0xff}) {
		t.Errorf("ReadHandleList = %v, % x, %v", hs, rest, err)
	}
	ss, _, err := ReadUnicodeStringList(h("00000002 | 00000001 0061 0000 | 00000002 0062 0063"))
	if err != nil || !reflect.DeepEqual(ss, []string{"a", "bc"}) {
		t.Errorf("ReadUnicodeStringList = %q, %v", ss, err)
	}
	u, _, err := ReadUnicodeString(h("00000004 0068 00e9 d83d de00"))
	if err != nil || u != "hé😀" {
		t.Errorf("ReadUnicodeString = %q, %v", u, err)
	}
	u, _, err = ReadUnicodeString(h("00000001 d83d"))
	if err != nil || u != "\uFFFD" {
		t.Errorf("ReadUnicodeString(unpaired) = %q, %v", u, err)
	}
	if rest, err := ReadToken(b); err != nil || len(rest) != len(b) {
		t.Errorf("ReadToken consumed input")
	}
}

func TestTypedErrors(t *testing.T) {
	_, _, err := ReadInt32BE([]byte{0, 0})
	if want := "codec: HLAinteger32BE: short buffer: need 4 bytes, have 2"; err == nil || err.Error() != want {
		t.Errorf("ReadInt32BE short = %v, want %q", err, want)
	}
	if !errors.Is(err, ErrShortBuffer) {
		t.Errorf("error does not wrap ErrShortBuffer")
	}
	tests := []struct {
		name string
		err  error
		kind error
		msg  string
	}{
		{"Float64LE", second(ReadFloat64LE(nil)), ErrShortBuffer, "codec: HLAfloat64LE: short buffer: need 8 bytes, have 0"},
		{"Octet", second(ReadOctet(nil)), ErrShortBuffer, "codec: HLAoctet: short buffer"},
		{"OctetPairLE", second(ReadOctetPairLE([]byte{1})), ErrShortBuffer, "codec: HLAoctetPairLE: short buffer: need 2 bytes, have 1"},
		{"Boolean", second(ReadBoolean(h("00000002"))), ErrInvalidData, "codec: HLAboolean: value 2 is not HLAtrue (1) or HLAfalse (0)"},
		{"ASCIIStringCount", second(ReadASCIIString(h("7fffffff 41"))), ErrShortBuffer, "codec: HLAASCIIstring: short buffer: element count 2147483647 needs 2147483647 bytes, have 1"},
		{"ASCIIStringNeg", second(ReadASCIIString(h("80000000"))), ErrInvalidData, "negative element count"},
		{"UnicodeStringCount", second(ReadUnicodeString(h("00000002 0041"))), ErrShortBuffer, "needs 4 bytes, have 2"},
		{"OpaqueShort", second(ReadOpaqueData(h("0000"))), ErrShortBuffer, "codec: HLAopaqueData: short buffer"},
		{"HandleListCount", second(ReadHandleList(h("00001000 00000000"))), ErrShortBuffer, "codec: HLAhandleList: short buffer"},
		{"HandleListElem", second(ReadHandleList(h("00000002 00000001 01 000000 00000005 01"))), ErrShortBuffer, "codec: HLAhandleList[1]: short buffer"},
		{"UnicodeInvalid", errOf(AppendUnicodeString(nil, "\xff")), ErrInvalidValue, "codec: HLAunicodeString: invalid UTF-8"},
		{"UnicodeListInvalid", errOf(AppendUnicodeStringList(nil, []string{"a", "\xff"})), ErrInvalidValue, "codec: HLAunicodeStringList[1]: invalid UTF-8"},
		{"SkipPadding", errOf(SkipPadding([]byte{0}, 1, 4)), ErrShortBuffer, "codec: padding: short buffer: need 3 bytes, have 1"},
	}
	for _, tc := range tests {
		if !errors.Is(tc.err, tc.kind) {
			t.Errorf("%s: error %v, want %v", tc.name, tc.err, tc.kind)
			continue
		}
		if !strings.Contains(tc.err.Error(), tc.msg) {
			t.Errorf("%s: error %q, want it to contain %q", tc.name, tc.err, tc.msg)
		}
	}
}

func second[T any](_ T, _ []byte, err error) error { return err }

func errOf(_ []byte, err error) error { return err }

func TestPadLen(t *testing.T) {
	for _, tc := range []struct{ off, b, want int }{
		{0, 8, 0}, {1, 8, 7}, {4, 8, 4}, {8, 8, 0}, {5, 4, 3}, {3, 1, 0}, {3, 2, 1}, {7, 0, 0},
	} {
		if got := PadLen(tc.off, tc.b); got != tc.want {
			t.Errorf("PadLen(%d, %d) = %d, want %d", tc.off, tc.b, got, tc.want)
		}
	}
}

func TestTypedRoundTripValues(t *testing.T) {
	for _, f := range []float64{0, math.Copysign(0, -1), math.Inf(1), math.MaxFloat64, math.SmallestNonzeroFloat64} {
		got, _, err := ReadFloat64LE(AppendFloat64LE(nil, f))
		if err != nil || math.Float64bits(got) != math.Float64bits(f) {
			t.Errorf("float64 %v -> %v, %v", f, got, err)
		}
	}
	for _, s := range []string{"", "a", "é", "😀", "a😀b\u0000c", "\uFFFF", "\U0010FFFF"} {
		b, err := AppendUnicodeString(nil, s)
		if err != nil {
			t.Fatal(err)
		}
		got, rest, err := ReadUnicodeString(b)
		if err != nil || got != s || len(rest) != 0 {
			t.Errorf("unicode %q -> %q, % x, %v", s, got, rest, err)
		}
	}
}
