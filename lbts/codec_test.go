package lbts

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

func randomMessage(r *rand.Rand) Message {
	u := func() uint64 {
		switch r.IntN(3) {
		case 0:
			return 0
		case 1:
			return r.Uint64N(300)
		}
		return r.Uint64()
	}
	f := func() float64 {
		switch r.IntN(4) {
		case 0:
			return 0
		case 1:
			return float64(r.IntN(100))
		case 2:
			return math.Inf(1)
		}
		return r.NormFloat64() * 1e6
	}
	m := Message{
		From: FederateID(u()), Epoch: u(), Regulating: r.IntN(2) == 0, Constrained: r.IntN(2) == 0,
		Bound: f(), Granted: f(), Request: u(), Strict: r.IntN(2) == 0,
		Pending: RequestKind(r.IntN(6)), Requested: f(), Waiting: r.IntN(2) == 0, State: u(), Session: u(),
		Cut: u(), ReportRound: u(), Report: f(), ReportStrict: r.IntN(2) == 0, ReportNone: r.IntN(2) == 0, ReportSession: u(),
		AckAsk: u(),
	}
	if n := r.IntN(12); n > 0 {
		m.Covers = map[uint32]uint64{}
		for range n {
			m.Covers[uint32(u())] = u()
		}
	}
	if n := r.IntN(12); n > 0 {
		m.Acks = map[FederateID]uint64{}
		for range n {
			m.Acks[FederateID(u())] = u()
		}
	}
	return m
}

func TestCodecRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		m := randomMessage(r)
		b, err := m.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if !IsBinary(b) {
			t.Fatalf("%x not recognized", b)
		}
		var got Message
		if err := got.UnmarshalBinary(b); err != nil {
			t.Fatalf("%v: %v", m, err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Fatalf("round trip:\n got %#v\nwant %#v", got, m)
		}
		// Every truncation is an error, never a panic.
		for k := 0; k < len(b); k++ {
			if err := got.UnmarshalBinary(b[:k]); !errors.Is(err, ErrBadMessage) {
				t.Fatalf("%x truncated to %d: %v", b, k, err)
			}
		}
		if err := got.UnmarshalBinary(append(b, 0)); !errors.Is(err, ErrBadMessage) {
			t.Fatalf("trailing byte accepted")
		}
		// Decoding for one federate keeps only its acknowledgement and
		// refuses what the full decoding refuses.
		for self := FederateID(1); self <= 4; self++ {
			if err := got.UnmarshalBinaryFor(b, self); err != nil {
				t.Fatalf("%v for %d: %v", m, self, err)
			}
			want := m
			want.Acks = nil
			if r, ok := m.Acks[self]; ok {
				want.Acks = map[FederateID]uint64{self: r}
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("for %d:\n got %#v\nwant %#v", self, got, want)
			}
			if err := got.UnmarshalBinaryFor(b[:len(b)-1], self); !errors.Is(err, ErrBadMessage) {
				t.Fatalf("%x truncated, for %d: %v", b, self, err)
			}
		}
	}
	var m Message
	if err := m.UnmarshalBinaryFor([]byte{codecVersion, 0, 0}, 0); !errors.Is(err, ErrBadMessage) {
		t.Errorf("decoding for federate 0: %v", err)
	}
}

func TestCodecGarbage(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 20000; i++ {
		b := make([]byte, r.IntN(60))
		for j := range b {
			b[j] = byte(r.Uint32())
		}
		if len(b) > 0 && r.IntN(2) == 0 {
			b[0] = codecVersion
		}
		var m Message
		_ = m.UnmarshalBinary(b) // must not panic
	}
	var m Message
	for _, b := range [][]byte{nil, {1}, {1, 0xff, 0xff}, {2, 0, 0}, {0x81, 0xa1, 'k'}} {
		if err := m.UnmarshalBinary(b); !errors.Is(err, ErrBadMessage) {
			t.Errorf("%x: %v", b, err)
		}
	}
}

func FuzzCodec(f *testing.F) {
	m := randomMessage(rand.New(rand.NewPCG(5, 6)))
	b, _ := m.MarshalBinary()
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		var m Message
		if m.UnmarshalBinary(b) != nil {
			return
		}
		c, _ := m.MarshalBinary()
		var m2 Message
		if err := m2.UnmarshalBinary(c); err != nil || !reflect.DeepEqual(m, m2) {
			t.Fatalf("re-encoding %x: %v", b, err)
		}
	})
}

func BenchmarkCodec(b *testing.B) {
	m := Message{From: 3, Epoch: 1234, Regulating: true, Constrained: true, Bound: 101, Granted: 100,
		Pending: TimeAdvanceRequest, Requested: 100, Waiting: true, State: 999, Session: 4, Covers: map[uint32]uint64{0x01000005: 77}}
	buf := make([]byte, 0, 128)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = m.AppendBinary(buf[:0])
		var got Message
		if err := got.UnmarshalBinary(buf); err != nil {
			b.Fatal(err)
		}
	}
}
