package core

import (
	"bytes"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// The benchmarks behind the codec choice in wire.go. Rerun with
//
//	go test -run '^$' -bench 'WireEncode|WireDecode|WireSize' -benchmem -cpu 1 -count 6 ./peer/
//
// msgpack is msgpack.Marshal/Unmarshal, as wire.go used before;
// msgpackReused keeps one Encoder (and its buffer) and one Decoder across
// messages. binary is the hand-written codec as callers use it now
// (encodeMsg, decodeMsg: a new slice, a new message); binaryReused
// appends into one buffer and decodes into one wireMsg.

// benchUpdate is a typical attribute update: three values of about 100
// bytes in all, time-stamped, with an 8-byte tag.
func benchUpdate() *wireMsg {
	return &wireMsg{
		Kind:  kindUpdate,
		ID:    123456,
		Obj:   ObjectInstanceHandle{Federate: 7, Serial: 4242},
		Class: 17,
		Values: map[uint64][]byte{
			1: bytes.Repeat([]byte{'p'}, 24), // a position
			2: bytes.Repeat([]byte{'v'}, 24), // a velocity
			5: bytes.Repeat([]byte{'n'}, 52), // a name or a small struct
		},
		Tag:     []byte("tag-0001"),
		TSO:     true,
		HasTime: true,
		Time:    1234.5,
	}
}

// benchInteraction is a typical interaction with four parameters.
func benchInteraction() *wireMsg {
	return &wireMsg{
		Kind:  kindInteraction,
		ID:    123457,
		Class: 23,
		Values: map[uint64][]byte{
			1: []byte("fire"),
			2: bytes.Repeat([]byte{'x'}, 24),
			3: bytes.Repeat([]byte{'y'}, 16),
			4: {0, 0, 0, 42},
		},
		Tag: []byte("tag-0002"),
	}
}

var benchMsgs = []struct {
	name string
	msg  func() *wireMsg
}{
	{"update", benchUpdate},
	{"interaction", benchInteraction},
}

func BenchmarkWireEncode(b *testing.B) {
	for _, bm := range benchMsgs {
		m := bm.msg()
		b.Run("msgpack/"+bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := msgpack.Marshal(m); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("msgpackReused/"+bm.name, func(b *testing.B) {
			var buf bytes.Buffer
			enc := msgpack.GetEncoder()
			defer msgpack.PutEncoder(enc)
			enc.Reset(&buf)
			b.ReportAllocs()
			for b.Loop() {
				buf.Reset()
				if err := enc.Encode(m); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("binary/"+bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := encodeMsg(m); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("binaryReused/"+bm.name, func(b *testing.B) {
			var buf []byte
			b.ReportAllocs()
			for b.Loop() {
				buf = appendMsg(buf[:0], m)
			}
		})
	}
}

func BenchmarkWireDecode(b *testing.B) {
	for _, bm := range benchMsgs {
		p, err := msgpack.Marshal(bm.msg())
		if err != nil {
			b.Fatal(err)
		}
		b.Run("msgpack/"+bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var m wireMsg
				if err := msgpack.Unmarshal(p, &m); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("msgpackReused/"+bm.name, func(b *testing.B) {
			r := bytes.NewReader(p)
			dec := msgpack.GetDecoder()
			defer msgpack.PutDecoder(dec)
			var m wireMsg
			b.ReportAllocs()
			for b.Loop() {
				r.Reset(p)
				dec.Reset(r)
				if err := dec.Decode(&m); err != nil {
					b.Fatal(err)
				}
			}
		})
		p, err = encodeMsg(bm.msg())
		if err != nil {
			b.Fatal(err)
		}
		b.Run("binary/"+bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := decodeMsg(p); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("binaryReused/"+bm.name, func(b *testing.B) {
			var m wireMsg
			b.ReportAllocs()
			for b.Loop() {
				if err := decodeMsgInto(p, &m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWireSize reports the encoded sizes, in bytes per message.
func BenchmarkWireSize(b *testing.B) {
	for _, bm := range benchMsgs {
		m := bm.msg()
		mp, err := msgpack.Marshal(m)
		if err != nil {
			b.Fatal(err)
		}
		bin, err := encodeMsg(m)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bm.name, func(b *testing.B) {
			for b.Loop() {
			}
			b.ReportMetric(float64(len(mp)), "msgpack-bytes")
			b.ReportMetric(float64(len(bin)), "binary-bytes")
		})
	}
}
