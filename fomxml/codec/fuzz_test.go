package codec

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
	"unicode/utf8"
)

// usableTypes returns the names of the test FDD's types that compile.
func usableTypes(c *Codec) []string {
	var names []string
	for _, name := range c.Names() {
		if _, err := c.Type(name); err == nil {
			names = append(names, name)
		}
	}
	return names
}

// canonical reports whether every valid encoding of n is the one Encode
// produces for its decoded value (given Strict decoding): false for types
// containing float32 (NaN payloads) or multi-valued enumerators.
func canonical(n *node, seen map[*node]bool) bool {
	if seen[n] {
		return true
	}
	seen[n] = true
	switch n.op {
	case opScalar:
		return !(n.kind == kFloat && n.size == 4)
	case opEnum:
		return len(n.byValue) == len(n.byName)
	}
	ok := true
	n.children(func(ch *node) {
		if !canonical(ch, seen) {
			ok = false
		}
	})
	return ok
}

func FuzzDecode(f *testing.F) {
	lenient := mustCodec(f)
	strict := mustCodec(f, Strict())
	names := usableTypes(lenient)
	for i := range names {
		for _, s := range []string{"", "00000000", "0000000100000000", "00000001 00000000 3ff0000000000000",
			"00000002 01000000 00000002 03000000 00000004", "41424300", "7fffffff", "ffffffff 00"} {
			f.Add(uint16(i), h(s))
		}
	}
	index := make(map[string]int, len(names))
	for i, name := range names {
		index[name] = i
	}
	for _, tc := range roundTripCases() {
		f.Add(uint16(index[tc.typ]), h(tc.hex))
	}
	f.Fuzz(func(t *testing.T, idx uint16, data []byte) {
		name := names[int(idx)%len(names)]
		// Lenient: no panic; a decoded value re-encodes, stably.
		if v, err := lenient.Decode(name, data); err == nil {
			b2, err := lenient.Encode(name, v)
			if err != nil {
				t.Fatalf("%s: decoded % x to %#v, which does not encode: %v", name, data, v, err)
			}
			v2, err := lenient.Decode(name, b2)
			if err != nil {
				t.Fatalf("%s: re-encoding % x does not decode: %v", name, b2, err)
			}
			b3, err := lenient.Encode(name, v2)
			if err != nil || !bytes.Equal(b2, b3) {
				t.Fatalf("%s: unstable re-encoding: % x then % x (%v)", name, b2, b3, err)
			}
		}
		// Strict: a decoded value of a canonical type re-encodes to the input.
		v, err := strict.Decode(name, data)
		if err != nil {
			return
		}
		b2, err := strict.Encode(name, v)
		if err != nil {
			t.Fatalf("%s: decoded % x to %#v, which does not encode: %v", name, data, v, err)
		}
		ty, _ := strict.Type(name)
		if canonical(ty.n, map[*node]bool{}) && !bytes.Equal(b2, data) {
			t.Fatalf("%s: decoded % x to %#v, which encodes as % x", name, data, v, b2)
		}
	})
}

func FuzzTypedRoundTrip(f *testing.F) {
	f.Add(int16(-2), int32(1), int64(-1), uint32(0x3f800000), uint64(0x3ff0000000000000), byte(7), uint16(0x1234), true, "hé😀", []byte{1, 2, 3})
	f.Add(int16(0), int32(0), int64(0), uint32(0x7fc00001), uint64(0x7ff0000000000001), byte(0), uint16(0), false, "\xff", []byte{})
	f.Fuzz(func(t *testing.T, i16 int16, i32 int32, i64 int64, f32 uint32, f64 uint64, o byte, p uint16, bo bool, s string, data []byte) {
		// Readers on arbitrary data never panic.
		ReadInt16BE(data)
		ReadInt32LE(data)
		ReadFloat64BE(data)
		ReadBoolean(data)
		ReadASCIIString(data)
		ReadUnicodeString(data)
		ReadOpaqueData(data)
		ReadHandleList(data)
		ReadUnicodeStringList(data)

		// A record of every helper, padded as 1516.2 requires.
		var b []byte
		b = AppendOctet(b, o)
		b = AppendPadding(b, 2)
		b = AppendInt16BE(b, i16)
		b = AppendInt16LE(b, i16)
		b = AppendOctetPairBE(b, p)
		b = AppendOctetPairLE(b, p)
		b = AppendPadding(b, 4)
		b = AppendInt32BE(b, i32)
		b = AppendInt32LE(b, i32)
		b = AppendFloat32BE(b, math.Float32frombits(f32))
		b = AppendFloat32LE(b, math.Float32frombits(f32))
		b = AppendPadding(b, 8)
		b = AppendInt64BE(b, i64)
		b = AppendInt64LE(b, i64)
		b = AppendFloat64BE(b, math.Float64frombits(f64))
		b = AppendFloat64LE(b, math.Float64frombits(f64))
		b = AppendBoolean(b, bo)
		b, err := AppendASCIIString(b, s)
		if err != nil {
			t.Fatal(err)
		}
		b = AppendPadding(b, 4)
		b, err = AppendUnicodeString(b, s)
		if valid := utf8.ValidString(s); valid != (err == nil) {
			t.Fatalf("AppendUnicodeString(%q) error %v, valid UTF-8 %v", s, err, valid)
		}
		b = AppendPadding(b, 4)
		if b, err = AppendOpaqueData(b, data); err != nil {
			t.Fatal(err)
		}
		b = AppendPadding(b, 4)
		if b, err = AppendHandleList(b, [][]byte{data, {o}}); err != nil {
			t.Fatal(err)
		}

		r := b
		check := func(what string, ok bool, err error) {
			t.Helper()
			if err != nil || !ok {
				t.Fatalf("%s: mismatch (err %v) in % x", what, err, b)
			}
		}
		skip := func(boundary int) {
			t.Helper()
			var err error
			r, err = SkipPadding(r, len(b)-len(r), boundary)
			check("padding", true, err)
		}
		var (
			go8  byte
			g16  int16
			gp   uint16
			g32  int32
			gf32 float32
			g64  int64
			gf64 float64
			gb   bool
			gs   string
			gd   []byte
			ghl  [][]byte
		)
		go8, r, err = ReadOctet(r)
		check("octet", go8 == o, err)
		skip(2)
		g16, r, err = ReadInt16BE(r)
		check("int16BE", g16 == i16, err)
		g16, r, err = ReadInt16LE(r)
		check("int16LE", g16 == i16, err)
		gp, r, err = ReadOctetPairBE(r)
		check("octetPairBE", gp == p, err)
		gp, r, err = ReadOctetPairLE(r)
		check("octetPairLE", gp == p, err)
		skip(4)
		g32, r, err = ReadInt32BE(r)
		check("int32BE", g32 == i32, err)
		g32, r, err = ReadInt32LE(r)
		check("int32LE", g32 == i32, err)
		gf32, r, err = ReadFloat32BE(r)
		check("float32BE", math.Float32bits(gf32) == f32, err)
		gf32, r, err = ReadFloat32LE(r)
		check("float32LE", math.Float32bits(gf32) == f32, err)
		skip(8)
		g64, r, err = ReadInt64BE(r)
		check("int64BE", g64 == i64, err)
		g64, r, err = ReadInt64LE(r)
		check("int64LE", g64 == i64, err)
		gf64, r, err = ReadFloat64BE(r)
		check("float64BE", math.Float64bits(gf64) == f64, err)
		gf64, r, err = ReadFloat64LE(r)
		check("float64LE", math.Float64bits(gf64) == f64, err)
		gb, r, err = ReadBoolean(r)
		check("boolean", gb == bo, err)
		gs, r, err = ReadASCIIString(r)
		check("ASCIIstring", gs == s, err)
		skip(4)
		if utf8.ValidString(s) {
			gs, r, err = ReadUnicodeString(r)
			check("unicodeString", gs == s, err)
			skip(4)
		}
		gd, r, err = ReadOpaqueData(r)
		check("opaqueData", bytes.Equal(gd, data), err)
		skip(4)
		ghl, r, err = ReadHandleList(r)
		check("handleList", len(ghl) == 2 && bytes.Equal(ghl[0], data) && bytes.Equal(ghl[1], []byte{o}), err)
		check("rest", len(r) == 0, nil)
	})
}

// TestHugeCountNoAlloc checks that a hostile count does not make Decode
// allocate in proportion to it.
func TestHugeCountNoAlloc(t *testing.T) {
	c := mustCodec(t)
	b := binary.BigEndian.AppendUint32(nil, 0x7fffffff)
	b = append(b, make([]byte, 64)...)
	for _, name := range []string{"Float64List", "HLAopaqueData", "HLAunicodeString", "TreeList", "StringList", "HLAhandleList"} {
		allocs := testing.AllocsPerRun(10, func() {
			if _, err := c.Decode(name, b); err == nil {
				t.Errorf("%s: decode of a huge count succeeded", name)
			}
		})
		if allocs > 10 {
			t.Errorf("%s: %v allocations", name, allocs)
		}
	}
}
