package core

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// msgEqual reports whether a and b are the same message on the wire: nil
// and empty byte strings and maps are equal, and times compare by bits.
func msgEqual(a, b *wireMsg) bool {
	if a.Kind != b.Kind || a.ID != b.ID || a.Obj != b.Obj || a.Class != b.Class || a.Name != b.Name ||
		!bytes.Equal(a.Tag, b.Tag) || a.TSO != b.TSO || a.HasTime != b.HasTime ||
		math.Float64bits(a.Time) != math.Float64bits(b.Time) || !bytes.Equal(a.TimeMsg, b.TimeMsg) ||
		a.Ref != b.Ref || a.RefSeq != b.RefSeq || a.Branch != b.Branch ||
		len(a.Values) != len(b.Values) {
		return false
	}
	for h, v := range a.Values {
		w, ok := b.Values[h]
		if !ok || !bytes.Equal(v, w) {
			return false
		}
	}
	return true
}

// roundTrip encodes m, checks the encoding three ways, decodes it and
// checks the result equals m.
func roundTrip(t *testing.T, m *wireMsg) []byte {
	t.Helper()
	b, err := encodeMsg(m)
	if err != nil {
		t.Fatalf("encodeMsg(%+v): %v", m, err)
	}
	if len(b) != msgSize(m) || cap(b) != len(b) {
		t.Errorf("encodeMsg(%+v): len %d cap %d, msgSize %d", m, len(b), cap(b), msgSize(m))
	}
	prefix := []byte("prefix")
	if a := appendMsg(prefix, m); !bytes.Equal(a[:len(prefix)], []byte("prefix")) || !bytes.Equal(a[len(prefix):], b) {
		t.Errorf("appendMsg(prefix, %+v) = %x, want prefix + %x", m, a, b)
	}
	got, err := decodeMsg(b)
	if err != nil {
		t.Fatalf("decodeMsg(encodeMsg(%+v)) = %v", m, err)
	}
	if !msgEqual(got, m) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, m)
	}
	return b
}

// fieldMsg returns a message of kind k with exactly the fields in flags
// set to non-zero values.
func fieldMsg(k uint8, flags uint16) *wireMsg {
	m := &wireMsg{Kind: k}
	if flags&flagID != 0 {
		m.ID = 300
	}
	if flags&flagObj != 0 {
		m.Obj = ObjectInstanceHandle{Federate: 3, Serial: 1 << 40}
	}
	if flags&flagClass != 0 {
		m.Class = 17
	}
	if flags&flagName != 0 {
		m.Name = "Tank-1"
	}
	if flags&flagValues != 0 {
		m.Values = map[uint64][]byte{9: []byte("nine"), 1: {1}, 200: {}, math.MaxUint64: bytes.Repeat([]byte{7}, 130)}
	}
	if flags&flagTag != 0 {
		m.Tag = []byte("tag")
	}
	m.TSO = flags&flagTSO != 0
	m.HasTime = flags&flagHasTime != 0
	if flags&flagTime != 0 {
		m.Time = 12.25
	}
	if flags&flagTimeMsg != 0 {
		m.TimeMsg = []byte{0x81, 0xa1, 'k', 1}
	}
	if flags&flagRef != 0 {
		m.Ref, m.RefSeq = 1<<35, 7
	}
	if flags&flagEpoch != 0 {
		m.Epoch = 1 << 33
	}
	m.Named = flags&flagNamed != 0
	if flags&flagAction != 0 {
		m.Action = 4
	}
	if flags&flagData != 0 {
		m.Data = []byte{1, 2, 3}
	}
	if flags&flagRegions != 0 {
		m.Regions = []byte{1, 1, 5, 0, 10}
	}
	return m
}

// Every kind with every combination of fields round-trips, and the
// header says which fields are present.
func TestWireRoundTripAllFields(t *testing.T) {
	for k := kindRegister; k <= kindOwnership; k++ {
		for f := uint32(0); f <= uint32(flagsKnown); f++ {
			flags := uint16(f)
			m := fieldMsg(k, flags)
			b := roundTrip(t, m)
			if b[0] != 0x10|k || uint16(b[1])<<8|uint16(b[2]) != flags {
				t.Fatalf("kind %d flags %#x: header %x", k, flags, b[:3])
			}
		}
	}
}

func TestWireRoundTripTable(t *testing.T) {
	for _, m := range []*wireMsg{
		{Kind: kindResign},
		{Kind: kindRetract, ID: 9, Ref: 4, RefSeq: 0},
		{Kind: kindRetract, Ref: math.MaxUint64, RefSeq: math.MaxUint64},
		{Kind: kindQuery, Class: 5},
		{Kind: kindRegister, ID: 1, Obj: ObjectInstanceHandle{Federate: 2, Serial: 3}, Class: 4, Name: "héllo\x00"},
		benchUpdate(),
		benchInteraction(),
		{Kind: kindDelete, Obj: ObjectInstanceHandle{Federate: 1}, Tag: []byte{0}, TSO: true, HasTime: true},
		{Kind: kindTime, TimeMsg: bytes.Repeat([]byte{0xff}, 1000)},
		{Kind: kindUpdate, ID: math.MaxUint64, Obj: ObjectInstanceHandle{Federate: math.MaxUint64, Serial: math.MaxUint64}, Class: math.MaxUint64},
		{Kind: kindUpdate, Values: map[uint64][]byte{0: nil}},                    // an empty value
		{Kind: kindUpdate, Values: map[uint64][]byte{}, Tag: []byte{}, Name: ""}, // empty, not nil
		{Kind: kindUpdate, HasTime: true, Time: 0},
		{Kind: kindUpdate, Time: math.Copysign(0, -1)},
		{Kind: kindUpdate, Time: math.NaN()},
		{Kind: kindUpdate, Time: math.Inf(-1)},
		{Kind: kindUpdate, Time: math.SmallestNonzeroFloat64},
		{Kind: kindUpdate, Values: manyValues(1000, 3)}, // more handles than appendMsg's stack array
	} {
		roundTrip(t, m)
	}
}

func manyValues(n int, size int) map[uint64][]byte {
	vs := make(map[uint64][]byte, n)
	for i := range n {
		vs[uint64(i)*uint64(i)*977] = bytes.Repeat([]byte{byte(i)}, size)
	}
	return vs
}

// randMsg returns a message with random fields, each present or not,
// with values drawn to hit uvarint boundaries and odd floats.
func randMsg(r *rand.Rand) *wireMsg {
	u64 := func() uint64 {
		switch r.IntN(4) {
		case 0:
			return 0
		case 1:
			return uint64(r.IntN(300))
		case 2:
			return 1<<(7*r.IntN(10)) - uint64(r.IntN(2))
		default:
			return r.Uint64()
		}
	}
	bs := func(max int) []byte {
		switch r.IntN(4) {
		case 0:
			return nil
		case 1:
			return []byte{}
		}
		b := make([]byte, r.IntN(max+1))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	m := &wireMsg{
		Kind:    kindRegister + uint8(r.IntN(int(kindOwnership))),
		ID:      u64(),
		Obj:     ObjectInstanceHandle{Federate: FederateHandle(u64()), Serial: u64()},
		Class:   u64(),
		Name:    string(bs(20)),
		Tag:     bs(20),
		TSO:     r.IntN(2) == 0,
		HasTime: r.IntN(2) == 0,
		TimeMsg: bs(200),
		Named:   r.IntN(2) == 0,
		Action:  uint8(r.IntN(3)),
	}
	if r.IntN(2) == 0 {
		m.Epoch = u64()
	}
	switch r.IntN(5) {
	case 0:
		m.Time = math.Float64frombits(r.Uint64())
	case 1:
		m.Time = []float64{math.Inf(1), math.NaN(), math.Copysign(0, -1), math.MaxFloat64}[r.IntN(4)]
	case 2:
		m.Time = float64(r.IntN(1000)) / 4
	}
	switch r.IntN(3) {
	case 0:
	case 1:
		m.Values = map[uint64][]byte{}
	default:
		m.Values = make(map[uint64][]byte)
		for range r.IntN(40) {
			m.Values[u64()] = bs(300)
		}
	}
	return m
}

func TestWireRoundTripRandom(t *testing.T) {
	seed := rand.Uint64()
	r := rand.New(rand.NewPCG(seed, 1))
	for i := range 5000 {
		m := randMsg(r)
		b, err := encodeMsg(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeMsg(b)
		if err != nil || !msgEqual(got, m) {
			t.Fatalf("seed %d, message %d: round trip of %+v: %+v, %v", seed, i, m, got, err)
		}
	}
}

// The encoding depends on the message only, not on map order or history.
func TestWireDeterministic(t *testing.T) {
	want, _ := encodeMsg(&wireMsg{Kind: kindUpdate, Values: manyValues(50, 2)})
	for range 50 {
		// A map filled in another order, and grown and shrunk.
		vs := make(map[uint64][]byte)
		for i := range 200 {
			vs[uint64(10_000+i)] = nil
		}
		for h, v := range manyValues(50, 2) {
			vs[h] = v
		}
		for i := range 200 {
			delete(vs, uint64(10_000+i))
		}
		got, _ := encodeMsg(&wireMsg{Kind: kindUpdate, Values: vs})
		if !bytes.Equal(got, want) {
			t.Fatalf("encodings differ:\n%x\n%x", got, want)
		}
	}
	// nil and empty encode alike.
	a, _ := encodeMsg(&wireMsg{Kind: kindUpdate})
	b, _ := encodeMsg(&wireMsg{Kind: kindUpdate, Values: map[uint64][]byte{}, Tag: []byte{}, TimeMsg: []byte{}})
	if !bytes.Equal(a, b) {
		t.Errorf("empty fields change the encoding: %x, %x", a, b)
	}
}

// A known message has a known encoding, so a format change is a visible
// decision.
func TestWireGolden(t *testing.T) {
	m := &wireMsg{
		Kind: kindUpdate, ID: 300, Obj: ObjectInstanceHandle{Federate: 2, Serial: 3}, Class: 4,
		Values: map[uint64][]byte{5: []byte("bb"), 1: []byte("a")}, Tag: []byte("t"),
		TSO: true, HasTime: true, Time: 1.5,
	}
	const want = "12" + "01f7" + // version 1, kind 2; flags ID Obj Class Values Tag TSO HasTime Time
		"ac02" + "0203" + "04" + // ID 300, Obj 2.3, Class 4
		"02" + "01" + "01" + "61" + "05" + "02" + "6262" + // 2 values: 1="a", 5="bb"
		"01" + "74" + // tag "t"
		"3ff8000000000000" // 1.5
	if got := fmt.Sprintf("%x", appendMsg(nil, m)); got != want {
		t.Errorf("encoding\n got %s\nwant %s", got, want)
	}
}

func TestWireMalformed(t *testing.T) {
	valid := func(m *wireMsg) []byte { b, _ := encodeMsg(m); return b }
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	hdr := func(k uint8, flags uint16) []byte { return []byte{0x10 | k, byte(flags >> 8), byte(flags)} }
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"nil", nil, "shorter than the 3-byte header"},
		{"short header", []byte{0x12, 0}, "shorter than the 3-byte header"},
		{"version 0", []byte{0x02, 0, 0}, "unknown version 0"},
		{"version 3", []byte{0x32, 0, 0}, "unknown version 3"},
		{"version 2 truncated", []byte{0x22, 0, 0}, "truncated branch"},
		{"msgpack map", []byte{0x81, 0xa1, 'k', 0x02}, "unknown version 8"},
		{"kind 0", hdr(0, 0), "unknown kind 0"},
		{"kind 11", hdr(11, 0), "unknown kind 11"},
		{"kind 15", hdr(15, 0), "unknown kind 15"},
		{"truncated regions", cat(hdr(kindUpdate, flagRegions), []byte{9, 1}), "regions 9 does not fit"},
		{"truncated data", cat(hdr(kindResign, flagData), []byte{4, 1}), "data 4 does not fit"},
		{"truncated epoch", hdr(kindUpdate, flagEpoch), "truncated epoch"},
		{"truncated resign action", hdr(kindResign, flagAction), "truncated resign action"},
		{"truncated retraction", cat(hdr(kindRetract, flagRef), []byte{5}), "truncated retracted sequence"},
		{"truncated id", hdr(kindUpdate, flagID), "truncated id"},
		{"truncated uvarint", cat(hdr(kindUpdate, flagID), []byte{0x80}), "truncated id"},
		{"uvarint overflow", cat(hdr(kindUpdate, flagID), bytes.Repeat([]byte{0xff}, 10), []byte{1}), "id overflows 64 bits"},
		{"truncated serial", cat(hdr(kindUpdate, flagObj), []byte{1}), "truncated object serial"},
		{"truncated class", hdr(kindUpdate, flagClass), "truncated class"},
		{"name beyond input", cat(hdr(kindRegister, flagName), []byte{5, 'a', 'b'}), "name 5 does not fit in the 2 bytes left"},
		{"huge name", cat(hdr(kindRegister, flagName), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}), "does not fit"},
		{"truncated tag", cat(hdr(kindUpdate, flagTag), []byte{2, 'x'}), "tag 2 does not fit"},
		{"truncated time message", cat(hdr(kindTime, flagTimeMsg), []byte{3, 1, 2}), "time message 3 does not fit"},
		{"truncated time", cat(hdr(kindUpdate, flagTime), []byte{0x3f, 0xf8, 0, 0, 0, 0, 0}), "truncated time"},
		{"value count beyond input", cat(hdr(kindUpdate, flagValues), []byte{3, 1, 0, 2, 0}), "value count 3 does not fit in the 4 bytes left"},
		{"huge value count", cat(hdr(kindUpdate, flagValues), []byte{0xff, 0xff, 0xff, 0xff, 0x0f}), "value count 4294967295 does not fit"},
		{"truncated value", cat(hdr(kindUpdate, flagValues), []byte{1, 1, 5, 'a', 'b', 'c'}), "value 5 does not fit in the 3 bytes left"},
		{"truncated handle", cat(hdr(kindUpdate, flagValues), []byte{1, 0x80, 0x80}), "truncated value handle"},
		{"duplicate handle", cat(hdr(kindUpdate, flagValues), []byte{2, 7, 1, 'a', 7, 1, 'b'}), "duplicate value handle 7"},
		{"descending handles", cat(hdr(kindUpdate, flagValues), []byte{2, 7, 1, 'a', 6, 1, 'b'}), "value handle 6 after 7, not ascending"},
		{"trailing byte", cat(valid(benchUpdate()), []byte{0}), "1 trailing bytes"},
		{"trailing bytes, no fields", cat(hdr(kindResign, 0), []byte{1, 2, 3}), "3 trailing bytes"},
		{"field flagged but absent", valid(&wireMsg{Kind: kindUpdate, ID: 1})[:3], "truncated id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := decodeMsg(tc.b)
			if err == nil {
				t.Fatalf("decodeMsg(%x) = %+v, want an error", tc.b, m)
			}
			if !errors.Is(err, errMalformed) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("decodeMsg(%x) = %v, want errMalformed mentioning %q", tc.b, err, tc.want)
			}
			if m != nil {
				t.Errorf("decodeMsg returned a message with its error: %+v", m)
			}
		})
	}
}

// Every proper prefix of a valid message, and the message with any byte
// appended, is refused.
func TestWireTruncatedOrExtended(t *testing.T) {
	for _, m := range []*wireMsg{benchUpdate(), benchInteraction(), fieldMsg(kindRegister, flagsKnown)} {
		b, _ := encodeMsg(m)
		for n := range len(b) {
			if _, err := decodeMsg(b[:n]); err == nil {
				t.Errorf("%d-byte prefix of %x accepted", n, b)
			}
		}
		if _, err := decodeMsg(append(b[:len(b):len(b)], 0)); err == nil {
			t.Errorf("%x with a byte appended accepted", b)
		}
	}
}

func TestEncodeUnknownKind(t *testing.T) {
	for _, k := range []uint8{0, kindOwnership + 1, 0x12} {
		if _, err := encodeMsg(&wireMsg{Kind: k}); err == nil {
			t.Errorf("encodeMsg of kind %d succeeded", k)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("appendMsg of kind 0 did not panic")
		}
	}()
	appendMsg(nil, &wireMsg{})
}

// Decoded byte strings alias the payload but cannot be appended into the
// bytes that follow them.
func TestDecodeAliases(t *testing.T) {
	b, _ := encodeMsg(&wireMsg{Kind: kindUpdate, Values: map[uint64][]byte{1: []byte("ab"), 2: []byte("cd")}, Tag: []byte("tag")})
	m, err := decodeMsg(b)
	if err != nil {
		t.Fatal(err)
	}
	if i := bytes.Index(b, []byte("tag")); &m.Tag[0] != &b[i] {
		t.Error("Tag does not alias the payload")
	}
	_ = append(m.Values[1], 'X')
	if string(m.Values[2]) != "cd" || string(m.Tag) != "tag" {
		t.Errorf("appending to a value overwrote the next field: %q %q", m.Values[2], m.Tag)
	}
}

// decodeMsgInto clears everything the previous message left and keeps
// the map.
func TestDecodeMsgIntoReuse(t *testing.T) {
	var m wireMsg
	b1, _ := encodeMsg(fieldMsg(kindUpdate, flagsKnown))
	if err := decodeMsgInto(b1, &m); err != nil {
		t.Fatal(err)
	}
	vals := m.Values
	b2, _ := encodeMsg(&wireMsg{Kind: kindInteraction, Class: 2, Values: map[uint64][]byte{4: {4}}})
	if err := decodeMsgInto(b2, &m); err != nil {
		t.Fatal(err)
	}
	if want := (&wireMsg{Kind: kindInteraction, Class: 2, Values: map[uint64][]byte{4: {4}}}); !msgEqual(&m, want) {
		t.Errorf("got %+v, want %+v", m, want)
	}
	b3, _ := encodeMsg(&wireMsg{Kind: kindResign})
	if err := decodeMsgInto(b3, &m); err != nil {
		t.Fatal(err)
	}
	if !msgEqual(&m, &wireMsg{Kind: kindResign}) {
		t.Errorf("got %+v, want a bare resign", m)
	}
	m.Values[99] = nil
	if _, ok := vals[99]; !ok {
		t.Error("decodeMsgInto did not reuse the map")
	}
}

func TestWireAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts")
	}
	up := benchUpdate()
	buf := appendMsg(nil, up)
	if n := testing.AllocsPerRun(100, func() { buf = appendMsg(buf[:0], up) }); n != 0 {
		t.Errorf("appendMsg into a buffer with room: %v allocations, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = encodeMsg(up) }); n != 1 {
		t.Errorf("encodeMsg: %v allocations, want 1", n)
	}
	var m wireMsg
	if n := testing.AllocsPerRun(100, func() { _ = decodeMsgInto(buf, &m) }); n != 0 {
		t.Errorf("decodeMsgInto reusing the message: %v allocations, want 0", n)
	}
}

// Payloads that pass the reliable layer but do not decode are counted as
// malformed messages, not delivered.
func TestMalformedPayloadCounted(t *testing.T) {
	for _, p := range [][]byte{nil, {0xc1}, {0x81, 0xa1, 'k', 0x63}, bytes.Repeat([]byte{0xdc, 0xff, 0xff}, 10)} {
		if _, err := decodeMsg(p); err == nil {
			t.Errorf("decodeMsg(%x) accepted", p)
		}
	}
	m := &wireMsg{Kind: kindInteraction, Class: 5, Values: map[uint64][]byte{1: {2}}, Tag: []byte("t"), HasTime: true, Time: 2.5, TSO: true}
	b, err := encodeMsg(m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeMsg(b)
	if err != nil || got.Class != 5 || got.Time != 2.5 || !got.TSO || string(got.Values[1]) != "\x02" {
		t.Errorf("round trip: %+v, %v", got, err)
	}
}

func FuzzDecodeMsg(f *testing.F) {
	b, _ := encodeMsg(&wireMsg{Kind: kindUpdate, Obj: ObjectInstanceHandle{Federate: 1, Serial: 2}, Values: map[uint64][]byte{3: {4}}})
	f.Add(b)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := decodeMsg(data)
		if err == nil && (m.Kind < kindRegister || m.Kind > kindOwnership) {
			t.Fatalf("kind %d accepted", m.Kind)
		}
	})
}

// A message of a restore branch is version 2 with the branch after the
// flags; branch 0 stays version 1, and a version 2 header naming branch
// 0 is malformed.
func TestWireBranch(t *testing.T) {
	m := &wireMsg{Kind: kindUpdate, ID: 5, Obj: ObjectInstanceHandle{Federate: 2, Serial: 1}, Branch: 300, Values: map[uint64][]byte{1: {9}}}
	b := roundTrip(t, m)
	if b[0] != 0x20|kindUpdate || b[3] != 0xac || b[4] != 0x02 {
		t.Fatalf("header %x, want version 2 and branch 300 after the flags", b[:5])
	}
	m.Branch = 0
	if b := roundTrip(t, m); b[0] != 0x10|kindUpdate {
		t.Fatalf("branch 0: header %x, want version 1", b[:3])
	}
	bad := []byte{0x20 | kindResign, 0, 0, 0}
	if _, err := decodeMsg(bad); !errors.Is(err, errMalformed) {
		t.Fatalf("version 2 with branch 0: %v, want malformed", err)
	}
}
