package core

// Codec choice: a hand-written binary codec (appendMsg, decodeMsg), not
// msgpack. msgpack reflects over the struct and the map, so even with a
// reused Encoder/Decoder it allocates per field and per value; the
// hand-written codec allocates nothing to append into a buffer with room
// or to decode into a reused message, and only a few times (the slice,
// or the message and its map) otherwise. Its encoding is also 37-46% smaller
// (update 134 bytes vs 213, interaction 73 vs 134) and deterministic.
//
// The benchmarks in wire_bench_test.go measure both codecs on an update
// (3 values, ~100 bytes) and an interaction (4 parameters), in ns/op and
// allocs/op, with msgpack's Encoder and Decoder fresh or reused
// (GetEncoder/GetDecoder) and ours into a fresh or a reused buffer
// (appendMsg(buf[:0], m), decodeMsgInto(b, &m)); the reused binary codec
// allocates nothing, msgpack 10 to 30 times per message. Run them with:
//
//	go test -run '^$' -bench 'WireEncode|WireDecode|WireSize' -benchmem -cpu 1 -count 6 ./peer/internal/core/
//
// Most of what remains is the Values map (iterating it on encode, filling
// it on decode).

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// Data-plane message kinds. Every payload the reliable layer carries for a
// federate is one wireMsg, encoded by appendMsg.
const (
	kindRegister      uint8 = 1  // an object instance exists (also the answer to a query)
	kindUpdate        uint8 = 2  // attribute values
	kindDelete        uint8 = 3  // an object instance is deleted
	kindInteraction   uint8 = 4  // an interaction
	kindQuery         uint8 = 5  // "who has instances of this class?" from a new subscriber
	kindTime          uint8 = 6  // a time-management message (promise)
	kindResign        uint8 = 7  // the sender resigns
	kindRetract       uint8 = 8  // the sender retracts a time-stamped message (Ref, RefSeq)
	kindRequestUpdate uint8 = 9  // "provide these attributes' values" (Obj or Class, Pairs' handles, Tag)
	kindOwnership     uint8 = 10 // an ownership step (Action: which; Obj, Class, Pairs: attribute -> epoch, Tag, Ref: the federate it is for)
)

// wireMsg is the one data-plane message shape. Fields not used by a kind
// stay empty and cost nothing on the wire. The msgpack tags are kept only
// so that wire_bench_test.go can compare against msgpack.
type wireMsg struct {
	Kind    uint8                `msgpack:"k"`
	ID      uint64               `msgpack:"i,omitempty"` // sender's message counter, for traces
	Obj     ObjectInstanceHandle `msgpack:"o,omitempty"`
	Class   uint64               `msgpack:"c,omitempty"`
	Name    string               `msgpack:"n,omitempty"`
	Values  map[uint64][]byte    `msgpack:"v,omitempty"`
	Tag     []byte               `msgpack:"g,omitempty"`
	TSO     bool                 `msgpack:"s,omitempty"`
	HasTime bool                 `msgpack:"h,omitempty"`
	Time    float64              `msgpack:"t,omitempty"`
	TimeMsg []byte               `msgpack:"m,omitempty"` // an encoded lbts message, opaque here; a kindResign's send positions (appendPositions)

	// Pairs holds the values instead of Values on the hot paths: sorted
	// by handle, strictly ascending, without a map to build or fill.
	// appendMsg encodes Pairs when it is not empty (and Values is
	// ignored); decodeMsgPairs fills Pairs instead of Values. Both
	// encode alike.
	Pairs []valuePair `msgpack:"-"`

	// Ref and RefSeq name the message a kindRetract retracts: its ID
	// (the serial of its MessageRetractionHandle) and its sequence number
	// on the group the retraction travels on (the same group).
	Ref    uint64 `msgpack:"r,omitempty"`
	RefSeq uint64 `msgpack:"q,omitempty"`

	// Epoch is the ownership epoch of the attributes an update carries
	// (all of them: a sender splits an update whose attributes' tokens
	// have different epochs), or of the delete privilege a delete
	// exercises. Receivers drop what is older than the newest epoch they
	// know (ownership.go). Zero, the registrar's first epoch, costs
	// nothing on the wire.
	Epoch uint64 `msgpack:"e,omitempty"`
	// Named says the instance of an update has a reserved name, which a
	// receiver that has not heard the registration cannot derive from
	// the handle (RTI-chosen names are). The name itself rides along in
	// Name while the sender may have new receivers (objects.go).
	Named bool `msgpack:"a,omitempty"`
	// Action is the resign action of a kindResign, the step of a
	// kindOwnership.
	Action uint8 `msgpack:"x,omitempty"`
	// Data is opaque to the codec: the tokens a resigning federate
	// releases (encodeTokens).
	Data []byte `msgpack:"d,omitempty"`
	// Regions are the update or send regions of an update or
	// interaction sent with regions (encodeRegions), opaque to the codec;
	// none is the default region, which overlaps everything.
	Regions []byte `msgpack:"rg,omitempty"`

	// Branch is the sender's restore branch: how many federation
	// restores it has gone through (savepoints.go). Receivers drop what
	// an older branch sent and hold what a newer one sent until they
	// restore too. Zero, before any restore, costs nothing on the wire.
	Branch uint64 `msgpack:"b,omitempty"`
}

// valuePair is one attribute or parameter value.
type valuePair struct {
	H uint64
	V []byte
}

// pairsOf returns the values of m in ascending handle order: m.Pairs, or
// m.Values sorted.
func pairsOf(m *wireMsg) []valuePair {
	if len(m.Pairs) > 0 || len(m.Values) == 0 {
		return m.Pairs
	}
	ps := make([]valuePair, 0, len(m.Values))
	for h, v := range m.Values {
		ps = append(ps, valuePair{h, v})
	}
	slices.SortFunc(ps, func(a, b valuePair) int { return cmp.Compare(a.H, b.H) })
	return ps
}

// The wire format, version 1:
//
//	byte 0      wireVersion<<4 | Kind
//	bytes 1-2   presence flags, big-endian uint16 (the flag* constants)
//	then, for each flag set, in flag order:
//	  flagID      ID: uvarint
//	  flagObj     Obj: Federate uvarint, Serial uvarint
//	  flagClass   Class: uvarint
//	  flagName    Name: uvarint length, bytes
//	  flagValues  Values: uvarint count, then count times
//	              (handle uvarint, length uvarint, bytes),
//	              handles strictly ascending
//	  flagTag     Tag: uvarint length, bytes
//	  flagTime    Time: 8 bytes, IEEE 754 bits, big-endian
//	  flagTimeMsg TimeMsg: uvarint length, bytes
//	  flagRef     Ref uvarint, RefSeq uvarint
//	  flagEpoch   Epoch uvarint
//	  flagAction  Action: one byte
//	  flagData    Data: uvarint length, bytes
//	  flagRegions Regions: uvarint length, bytes
//	flagTSO, flagHasTime and flagNamed carry no bytes.
//
// Version 2 is version 1 with the restore branch (Branch, uvarint)
// right after the flags; a message of branch 0 is written as version 1.
//
// A field is present when it is not its zero value (Time: when its bits
// are not all zero, so -0 and NaN survive), so one message has one
// encoding. The decoder accepts a present field holding its zero value
// and non-minimal uvarints; it refuses everything else that does not fit.
const wireVersion = 1

// wireVersionBranch is version 1 with a restore branch.
const wireVersionBranch = 2

const (
	flagID uint16 = 1 << iota
	flagObj
	flagClass
	flagName
	flagValues
	flagTag
	flagTSO
	flagHasTime
	flagTime
	flagTimeMsg
	flagRef
	flagEpoch
	flagNamed
	flagAction
	flagData
	flagRegions

	flagsKnown uint16 = 1<<16 - 1 // every bit: version 1 has no room for more fields
)

// errMalformed is wrapped by every decoding error.
var errMalformed = errors.New("peer: malformed message")

// encodeMsg returns m's encoding in a new slice of exactly its size.
func encodeMsg(m *wireMsg) ([]byte, error) {
	if !validKind(m.Kind) {
		return nil, fmt.Errorf("peer: encode message: unknown kind %d", m.Kind)
	}
	return appendMsg(make([]byte, 0, msgSize(m)), m), nil
}

// appendMsg appends m's encoding to dst and returns the extended slice.
// It does not allocate when dst has room. m.Kind must be one of the kind
// constants.
func appendMsg(dst []byte, m *wireMsg) []byte {
	if !validKind(m.Kind) {
		panic(fmt.Sprintf("peer: appendMsg: unknown kind %d", m.Kind))
	}
	flags := msgFlags(m)
	if m.Branch != 0 {
		dst = append(dst, wireVersionBranch<<4|m.Kind, byte(flags>>8), byte(flags))
		dst = binary.AppendUvarint(dst, m.Branch)
	} else {
		dst = append(dst, wireVersion<<4|m.Kind, byte(flags>>8), byte(flags))
	}
	if flags&flagID != 0 {
		dst = binary.AppendUvarint(dst, m.ID)
	}
	if flags&flagObj != 0 {
		dst = binary.AppendUvarint(dst, uint64(m.Obj.Federate))
		dst = binary.AppendUvarint(dst, m.Obj.Serial)
	}
	if flags&flagClass != 0 {
		dst = binary.AppendUvarint(dst, m.Class)
	}
	if flags&flagName != 0 {
		dst = binary.AppendUvarint(dst, uint64(len(m.Name)))
		dst = append(dst, m.Name...)
	}
	if flags&flagValues != 0 && len(m.Pairs) > 0 {
		dst = binary.AppendUvarint(dst, uint64(len(m.Pairs)))
		for _, p := range m.Pairs {
			dst = binary.AppendUvarint(dst, p.H)
			dst = binary.AppendUvarint(dst, uint64(len(p.V)))
			dst = append(dst, p.V...)
		}
	} else if flags&flagValues != 0 {
		var stack [16]uint64
		hs := stack[:0]
		for h := range m.Values {
			hs = append(hs, h)
		}
		slices.Sort(hs)
		dst = binary.AppendUvarint(dst, uint64(len(hs)))
		for _, h := range hs {
			v := m.Values[h]
			dst = binary.AppendUvarint(dst, h)
			dst = binary.AppendUvarint(dst, uint64(len(v)))
			dst = append(dst, v...)
		}
	}
	if flags&flagTag != 0 {
		dst = binary.AppendUvarint(dst, uint64(len(m.Tag)))
		dst = append(dst, m.Tag...)
	}
	if flags&flagTime != 0 {
		dst = binary.BigEndian.AppendUint64(dst, math.Float64bits(m.Time))
	}
	if flags&flagTimeMsg != 0 {
		dst = binary.AppendUvarint(dst, uint64(len(m.TimeMsg)))
		dst = append(dst, m.TimeMsg...)
	}
	if flags&flagRef != 0 {
		dst = binary.AppendUvarint(dst, m.Ref)
		dst = binary.AppendUvarint(dst, m.RefSeq)
	}
	if flags&flagEpoch != 0 {
		dst = binary.AppendUvarint(dst, m.Epoch)
	}
	if flags&flagAction != 0 {
		dst = append(dst, m.Action)
	}
	if flags&flagData != 0 {
		dst = binary.AppendUvarint(dst, uint64(len(m.Data)))
		dst = append(dst, m.Data...)
	}
	if flags&flagRegions != 0 {
		dst = binary.AppendUvarint(dst, uint64(len(m.Regions)))
		dst = append(dst, m.Regions...)
	}
	return dst
}

func validKind(k uint8) bool { return k >= kindRegister && k <= kindOwnership }

// msgFlags returns the presence flags of m's fields.
func msgFlags(m *wireMsg) uint16 {
	var f uint16
	if m.ID != 0 {
		f |= flagID
	}
	if m.Obj != (ObjectInstanceHandle{}) {
		f |= flagObj
	}
	if m.Class != 0 {
		f |= flagClass
	}
	if len(m.Name) != 0 {
		f |= flagName
	}
	if len(m.Values) != 0 || len(m.Pairs) != 0 {
		f |= flagValues
	}
	if len(m.Tag) != 0 {
		f |= flagTag
	}
	if m.TSO {
		f |= flagTSO
	}
	if m.HasTime {
		f |= flagHasTime
	}
	if math.Float64bits(m.Time) != 0 {
		f |= flagTime
	}
	if len(m.TimeMsg) != 0 {
		f |= flagTimeMsg
	}
	if m.Ref != 0 || m.RefSeq != 0 {
		f |= flagRef
	}
	if m.Epoch != 0 {
		f |= flagEpoch
	}
	if m.Named {
		f |= flagNamed
	}
	if m.Action != 0 {
		f |= flagAction
	}
	if len(m.Data) != 0 {
		f |= flagData
	}
	if len(m.Regions) != 0 {
		f |= flagRegions
	}
	return f
}

// msgSize returns the length of m's encoding.
func msgSize(m *wireMsg) int {
	flags := msgFlags(m)
	n := 3
	if m.Branch != 0 {
		n += uvarintLen(m.Branch)
	}
	if flags&flagID != 0 {
		n += uvarintLen(m.ID)
	}
	if flags&flagObj != 0 {
		n += uvarintLen(uint64(m.Obj.Federate)) + uvarintLen(m.Obj.Serial)
	}
	if flags&flagClass != 0 {
		n += uvarintLen(m.Class)
	}
	if flags&flagName != 0 {
		n += uvarintLen(uint64(len(m.Name))) + len(m.Name)
	}
	if flags&flagValues != 0 && len(m.Pairs) > 0 {
		n += uvarintLen(uint64(len(m.Pairs)))
		for _, p := range m.Pairs {
			n += uvarintLen(p.H) + uvarintLen(uint64(len(p.V))) + len(p.V)
		}
	} else if flags&flagValues != 0 {
		n += uvarintLen(uint64(len(m.Values)))
		for h, v := range m.Values {
			n += uvarintLen(h) + uvarintLen(uint64(len(v))) + len(v)
		}
	}
	if flags&flagTag != 0 {
		n += uvarintLen(uint64(len(m.Tag))) + len(m.Tag)
	}
	if flags&flagTime != 0 {
		n += 8
	}
	if flags&flagTimeMsg != 0 {
		n += uvarintLen(uint64(len(m.TimeMsg))) + len(m.TimeMsg)
	}
	if flags&flagRef != 0 {
		n += uvarintLen(m.Ref) + uvarintLen(m.RefSeq)
	}
	if flags&flagEpoch != 0 {
		n += uvarintLen(m.Epoch)
	}
	if flags&flagAction != 0 {
		n++
	}
	if flags&flagData != 0 {
		n += uvarintLen(uint64(len(m.Data))) + len(m.Data)
	}
	if flags&flagRegions != 0 {
		n += uvarintLen(uint64(len(m.Regions))) + len(m.Regions)
	}
	return n
}

func uvarintLen(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

// decodeMsg decodes a payload; anything malformed is an error (wrapping
// errMalformed) for the caller to count, never a panic. The returned
// message's Tag, TimeMsg and Values alias b, so the caller must not
// change b afterwards; the reliable layer hands over payloads it does
// not reuse. Name is copied.
func decodeMsg(b []byte) (*wireMsg, error) {
	m := new(wireMsg)
	if err := decodeMsgInto(b, m); err != nil {
		return nil, err
	}
	return m, nil
}

// decodeMsgInto is decodeMsg into *m, which it overwrites. It reuses
// m.Values, cleared, when it is not nil, so a decoded message without
// values may have an empty map instead of a nil one. On error *m holds
// an unspecified, partly decoded message.
func decodeMsgInto(b []byte, m *wireMsg) error {
	vals := m.Values
	clear(vals)
	*m = wireMsg{Values: vals}
	return decodeInto(b, m, false)
}

// decodeMsgPairs is decodeMsg filling m.Pairs instead of m.Values: no
// map to fill on the receive path.
func decodeMsgPairs(b []byte) (*wireMsg, error) {
	m := new(wireMsg)
	if err := decodeInto(b, m, true); err != nil {
		return nil, err
	}
	return m, nil
}

// decodeInto decodes b into the zeroed *m (reused Values aside), values
// into m.Pairs when pairs is set.
func decodeInto(b []byte, m *wireMsg, pairs bool) error {
	if len(b) < 3 {
		return fmt.Errorf("%w: %d bytes, shorter than the 3-byte header", errMalformed, len(b))
	}
	v := b[0] >> 4
	if v != wireVersion && v != wireVersionBranch {
		return fmt.Errorf("%w: unknown version %d", errMalformed, v)
	}
	m.Kind = b[0] & 0x0f
	if !validKind(m.Kind) {
		return fmt.Errorf("%w: unknown kind %d", errMalformed, m.Kind)
	}
	flags := uint16(b[1])<<8 | uint16(b[2]) // every flag is known (flagsKnown)
	r := wireReader{b: b[3:], pairs: pairs}
	if v == wireVersionBranch {
		if m.Branch = r.uvarint("branch"); m.Branch == 0 && r.err == nil {
			r.fail("branch 0 in a version 2 header")
		}
	}
	if flags&flagID != 0 {
		m.ID = r.uvarint("id")
	}
	if flags&flagObj != 0 {
		m.Obj.Federate = FederateHandle(r.uvarint("object federate"))
		m.Obj.Serial = r.uvarint("object serial")
	}
	if flags&flagClass != 0 {
		m.Class = r.uvarint("class")
	}
	if flags&flagName != 0 {
		m.Name = string(r.bytes("name"))
	}
	if flags&flagValues != 0 {
		r.values(m)
	}
	if flags&flagTag != 0 {
		m.Tag = r.bytes("tag")
	}
	m.TSO = flags&flagTSO != 0
	m.HasTime = flags&flagHasTime != 0
	if flags&flagTime != 0 {
		m.Time = r.float64("time")
	}
	if flags&flagTimeMsg != 0 {
		m.TimeMsg = r.bytes("time message")
	}
	if flags&flagRef != 0 {
		m.Ref = r.uvarint("retracted id")
		m.RefSeq = r.uvarint("retracted sequence")
	}
	if flags&flagEpoch != 0 {
		m.Epoch = r.uvarint("epoch")
	}
	m.Named = flags&flagNamed != 0
	if flags&flagAction != 0 {
		m.Action = r.byte("resign action")
	}
	if flags&flagData != 0 {
		m.Data = r.bytes("data")
	}
	if flags&flagRegions != 0 {
		m.Regions = r.bytes("regions")
	}
	if r.err != nil {
		return r.err
	}
	if len(r.b) != 0 {
		return fmt.Errorf("%w: %d trailing bytes", errMalformed, len(r.b))
	}
	return nil
}

// wireReader reads fields from the front of b. After the first error it
// reads nothing more and returns zero values.
type wireReader struct {
	b     []byte
	err   error
	pairs bool // values go to Pairs, not Values
}

func (r *wireReader) fail(format string, args ...any) {
	r.err = fmt.Errorf("%w: "+format, append([]any{errMalformed}, args...)...)
	r.b = nil
}

func (r *wireReader) uvarint(field string) uint64 {
	if r.err != nil {
		return 0
	}
	if len(r.b) > 0 && r.b[0] < 0x80 { // one byte: most lengths, handles and counts
		v := uint64(r.b[0])
		r.b = r.b[1:]
		return v
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		if n == 0 {
			r.fail("truncated %s", field)
		} else {
			r.fail("%s overflows 64 bits", field)
		}
		return 0
	}
	r.b = r.b[n:]
	return v
}

// length reads a length or count of items of at least size bytes each
// and checks that they fit in what is left.
func (r *wireReader) length(field string, size uint64) int {
	n := r.uvarint(field)
	if r.err != nil {
		return 0
	}
	if n > uint64(len(r.b))/size {
		r.fail("%s %d does not fit in the %d bytes left", field, n, len(r.b))
		return 0
	}
	return int(n)
}

// bytes reads a length-prefixed byte string. The result aliases r.b, its
// capacity cut to its length so that appending to it copies.
func (r *wireReader) bytes(field string) []byte {
	n := r.length(field, 1)
	if r.err != nil {
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

// take reads the next n bytes, nil when fewer are left.
func (r *wireReader) take(field string, n int) []byte {
	if r.err != nil {
		return nil
	}
	if len(r.b) < n {
		r.fail("truncated %s", field)
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *wireReader) byte(field string) byte {
	if v := r.take(field, 1); v != nil {
		return v[0]
	}
	return 0
}

func (r *wireReader) float64(field string) float64 {
	if v := r.take(field, 8); v != nil {
		return math.Float64frombits(binary.BigEndian.Uint64(v))
	}
	return 0
}

// values reads m.Values: a count, then that many (handle, value) pairs in
// strictly ascending handle order. Each pair takes at least 2 bytes.
func (r *wireReader) values(m *wireMsg) {
	n := r.length("value count", 2)
	if r.err != nil {
		return
	}
	if r.pairs {
		if cap(m.Pairs) < n {
			m.Pairs = make([]valuePair, 0, n)
		}
		m.Pairs = m.Pairs[:0]
	} else if m.Values == nil {
		m.Values = make(map[uint64][]byte, n)
	}
	var prev uint64
	for i := range n {
		h := r.uvarint("value handle")
		v := r.bytes("value")
		if r.err != nil {
			return
		}
		if i > 0 && h <= prev {
			if h == prev {
				r.fail("duplicate value handle %d", h)
			} else {
				r.fail("value handle %d after %d, not ascending", h, prev)
			}
			return
		}
		prev = h
		if r.pairs {
			m.Pairs = append(m.Pairs, valuePair{h, v})
		} else {
			m.Values[h] = v
		}
	}
}
