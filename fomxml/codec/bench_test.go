package codec

import (
	"testing"
)

// rec10 is the Go form of the test FDD's Rec10 record, for the typed
// helpers.
type rec10 struct {
	F1  uint8
	F2  int16
	F3  int32
	F4  int64
	F5  float32
	F6  float64
	F7  bool
	F8  int32
	F9  float64
	F10 uint16
}

func appendRec10(b []byte, r *rec10) []byte {
	b = AppendOctet(b, r.F1)
	b = AppendPadding(b, 2)
	b = AppendInt16BE(b, r.F2)
	b = AppendPadding(b, 4)
	b = AppendInt32BE(b, r.F3)
	b = AppendPadding(b, 8)
	b = AppendInt64BE(b, r.F4)
	b = AppendFloat32BE(b, r.F5)
	b = AppendPadding(b, 8)
	b = AppendFloat64BE(b, r.F6)
	b = AppendBoolean(b, r.F7)
	b = AppendInt32LE(b, r.F8)
	b = AppendFloat64LE(b, r.F9)
	b = AppendOctetPairBE(b, r.F10)
	return b
}

func readRec10(b []byte) (r rec10, err error) {
	rest := b
	skip := func(boundary int) {
		if err == nil {
			rest, err = SkipPadding(rest, len(b)-len(rest), boundary)
		}
	}
	if r.F1, rest, err = ReadOctet(rest); err != nil {
		return r, err
	}
	skip(2)
	if err != nil {
		return r, err
	}
	if r.F2, rest, err = ReadInt16BE(rest); err != nil {
		return r, err
	}
	if r.F3, rest, err = ReadInt32BE(rest); err != nil {
		return r, err
	}
	if r.F4, rest, err = ReadInt64BE(rest); err != nil {
		return r, err
	}
	if r.F5, rest, err = ReadFloat32BE(rest); err != nil {
		return r, err
	}
	skip(8)
	if err != nil {
		return r, err
	}
	if r.F6, rest, err = ReadFloat64BE(rest); err != nil {
		return r, err
	}
	if r.F7, rest, err = ReadBoolean(rest); err != nil {
		return r, err
	}
	if r.F8, rest, err = ReadInt32LE(rest); err != nil {
		return r, err
	}
	if r.F9, rest, err = ReadFloat64LE(rest); err != nil {
		return r, err
	}
	if r.F10, rest, err = ReadOctetPairBE(rest); err != nil {
		return r, err
	}
	if len(rest) != 0 {
		return r, ErrTrailingData
	}
	return r, nil
}

var (
	rec10Value = map[string]any{"F1": 1, "F2": -2, "F3": 3, "F4": -4, "F5": 5.5, "F6": 6.25,
		"F7": true, "F8": 8, "F9": -9.5, "F10": 10}
	rec10Typed = rec10{F1: 1, F2: -2, F3: 3, F4: -4, F5: 5.5, F6: 6.25, F7: true, F8: 8, F9: -9.5, F10: 10}
)

func TestRec10TypedMatchesDynamic(t *testing.T) {
	c := mustCodec(t)
	dyn, err := c.Encode("Rec10", rec10Value)
	if err != nil {
		t.Fatal(err)
	}
	typed := appendRec10(nil, &rec10Typed)
	if string(dyn) != string(typed) {
		t.Fatalf("dynamic % x != typed % x", dyn, typed)
	}
	r, err := readRec10(dyn)
	if err != nil || r != rec10Typed {
		t.Fatalf("readRec10 = %+v, %v", r, err)
	}
}

func BenchmarkEncodeFixedRecord10(b *testing.B) {
	c := mustCodec(b)
	b.Run("dynamic", func(b *testing.B) {
		buf := make([]byte, 0, 64)
		b.ReportAllocs()
		for b.Loop() {
			var err error
			if buf, err = c.AppendEncode(buf[:0], "Rec10", rec10Value); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("dynamic-Type", func(b *testing.B) {
		ty, err := c.Type("Rec10")
		if err != nil {
			b.Fatal(err)
		}
		buf := make([]byte, 0, 64)
		b.ReportAllocs()
		for b.Loop() {
			if buf, err = ty.AppendEncode(buf[:0], rec10Value); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("dynamic-Encode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Encode("Rec10", rec10Value); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("typed", func(b *testing.B) {
		buf := make([]byte, 0, 64)
		b.ReportAllocs()
		for b.Loop() {
			buf = appendRec10(buf[:0], &rec10Typed)
		}
	})
}

func BenchmarkDecodeFixedRecord10(b *testing.B) {
	c := mustCodec(b)
	data, err := c.Encode("Rec10", rec10Value)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("dynamic", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Decode("Rec10", data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("typed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := readRec10(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}
