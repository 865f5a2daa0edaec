package core

import (
	"bytes"
	"math"
	"testing"
)

// FuzzWireRoundTrip: decoding never panics, and whatever decodes
// re-encodes to bytes that decode to an equal message and are a fixed
// point of decode-encode. (FuzzDecodeMsg in badinput_test.go checks only
// the kind.)
func FuzzWireRoundTrip(f *testing.F) {
	for _, m := range []*wireMsg{benchUpdate(), benchInteraction(), {Kind: kindResign}, fieldMsg(kindRegister, flagsKnown)} {
		b, _ := encodeMsg(m)
		f.Add(b)
	}
	for i := range 16 {
		b, _ := encodeMsg(fieldMsg(kindUpdate, uint16(1)<<i))
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add([]byte{0x12, 0x00, 0x10, 0x02, 0x07, 0x01, 'a', 0x07, 0x01, 'b'}) // duplicate handle
	f.Fuzz(func(t *testing.T, data []byte) {
		orig := bytes.Clone(data)
		m, err := decodeMsg(data)
		if !bytes.Equal(data, orig) {
			t.Fatal("decodeMsg changed its input")
		}
		if err != nil {
			if m != nil {
				t.Fatalf("decodeMsg returned %+v with error %v", m, err)
			}
			return
		}
		if !validKind(m.Kind) {
			t.Fatalf("kind %d accepted", m.Kind)
		}
		b, err := encodeMsg(m)
		if err != nil {
			t.Fatalf("encodeMsg(%+v): %v", m, err)
		}
		if len(b) > len(data) {
			t.Fatalf("re-encoding grew from %d to %d bytes", len(data), len(b))
		}
		m2, err := decodeMsg(b)
		if err != nil {
			t.Fatalf("re-encoded %x does not decode: %v", b, err)
		}
		if !msgEqual(m, m2) {
			t.Fatalf("re-encoded message differs:\n%+v\n%+v", m, m2)
		}
		if b2 := appendMsg(nil, m2); !bytes.Equal(b, b2) {
			t.Fatalf("encoding is not a fixed point:\n%x\n%x", b, b2)
		}
		var into wireMsg
		into.Values = map[uint64][]byte{12345: []byte("stale")}
		if err := decodeMsgInto(data, &into); err != nil || !msgEqual(&into, m) {
			t.Fatalf("decodeMsgInto = %+v, %v; decodeMsg = %+v", into, err, m)
		}
	})
}

// FuzzWireEncode: any message built from fuzzed fields round-trips.
func FuzzWireEncode(f *testing.F) {
	f.Add(kindUpdate, uint64(1), uint64(2), uint64(3), uint64(4), "name", []byte("tag"), true, true, 1.5, []byte(nil), []byte("\x01\x02\x03\x04"))
	f.Add(kindTime, uint64(0), uint64(0), uint64(0), uint64(0), "", []byte(nil), false, false, math.NaN(), []byte("lbts"), []byte(nil))
	f.Fuzz(func(t *testing.T, kind uint8, id, fed, serial, class uint64, name string, tag []byte, tso, hasTime bool, tm float64, timeMsg, values []byte) {
		if !validKind(kind) {
			return
		}
		m := &wireMsg{
			Kind: kind, ID: id, Obj: ObjectInstanceHandle{Federate: FederateHandle(fed), Serial: serial}, Class: class,
			Name: name, Tag: tag, TSO: tso, HasTime: hasTime, Time: tm, TimeMsg: timeMsg,
		}
		// values: each byte b is a handle b>>2 with a value of b&3 bytes
		// taken from what follows.
		for len(values) > 0 {
			h, n := uint64(values[0]>>2), int(values[0]&3)
			values = values[1:]
			n = min(n, len(values))
			if m.Values == nil {
				m.Values = make(map[uint64][]byte)
			}
			m.Values[h], values = values[:n], values[n:]
		}
		roundTrip(t, m)
	})
}
