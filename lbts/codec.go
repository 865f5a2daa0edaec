package lbts

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// A compact binary encoding of Message, for the peer layer's control
// group. It replaces msgpack there: a time loop sends one Message per
// step to every peer, and msgpack's reflection made decoding them the
// largest cost of a step (docs/time.md, Cost).
//
// Format, version 1:
//
//	byte 0      codecVersion (1; a msgpack map starts at 0x80 or above)
//	bytes 1-2   flags, big-endian uint16 (the mf* constants)
//	From        uvarint
//	Epoch       uvarint
//	Bound       8 bytes, IEEE 754 bits, big-endian
//	Granted     8 bytes
//	then, for each flag set, in flag order:
//	  mfCovers  count uvarint, then (group uvarint, seq uvarint), groups ascending
//	  mfAcks    count uvarint, then (federate uvarint, request uvarint), ascending
//	  mfRequest Request uvarint
//	  mfPending Pending byte, Requested 8 bytes
//	  mfState   State uvarint
//	  mfSession Session uvarint
//	  mfCut     Cut uvarint
//	  mfReport  ReportRound uvarint, Report 8 bytes, ReportSession uvarint
//	  mfAckAsk  AckAsk uvarint
//	the boolean flags carry no bytes.
const codecVersion = 1

const (
	mfRegulating uint16 = 1 << iota
	mfConstrained
	mfStrict
	mfWaiting
	mfReportStrict
	mfReportNone
	mfCovers
	mfAcks
	mfRequest
	mfPending
	mfState
	mfSession
	mfCut
	mfReport
	mfAckAsk

	mfKnown = mfAckAsk<<1 - 1
)

// AppendBinary appends m's binary encoding to b and returns the extended
// slice.
func (m *Message) AppendBinary(b []byte) ([]byte, error) {
	var f uint16
	set := func(cond bool, bit uint16) {
		if cond {
			f |= bit
		}
	}
	set(m.Regulating, mfRegulating)
	set(m.Constrained, mfConstrained)
	set(m.Strict, mfStrict)
	set(m.Waiting, mfWaiting)
	set(m.ReportStrict, mfReportStrict)
	set(m.ReportNone, mfReportNone)
	set(len(m.Covers) > 0, mfCovers)
	set(len(m.Acks) > 0, mfAcks)
	set(m.Request != 0, mfRequest)
	set(m.Pending != NoRequest || m.Requested != 0, mfPending)
	set(m.State != 0, mfState)
	set(m.Session != 0, mfSession)
	set(m.Cut != 0, mfCut)
	set(m.ReportRound != 0 || m.Report != 0 || m.ReportSession != 0, mfReport)
	set(m.AckAsk != 0, mfAckAsk)
	b = append(b, codecVersion, byte(f>>8), byte(f))
	b = binary.AppendUvarint(b, uint64(m.From))
	b = binary.AppendUvarint(b, m.Epoch)
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(m.Bound))
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(m.Granted))
	if f&mfCovers != 0 {
		b = appendPairs(b, m.Covers)
	}
	if f&mfAcks != 0 {
		b = appendPairs(b, m.Acks)
	}
	if f&mfRequest != 0 {
		b = binary.AppendUvarint(b, m.Request)
	}
	if f&mfPending != 0 {
		b = append(b, byte(m.Pending))
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(m.Requested))
	}
	if f&mfState != 0 {
		b = binary.AppendUvarint(b, m.State)
	}
	if f&mfSession != 0 {
		b = binary.AppendUvarint(b, m.Session)
	}
	if f&mfCut != 0 {
		b = binary.AppendUvarint(b, m.Cut)
	}
	if f&mfReport != 0 {
		b = binary.AppendUvarint(b, m.ReportRound)
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(m.Report))
		b = binary.AppendUvarint(b, m.ReportSession)
	}
	if f&mfAckAsk != 0 {
		b = binary.AppendUvarint(b, m.AckAsk)
	}
	return b, nil
}

// MarshalBinary returns m's binary encoding (see AppendBinary).
func (m *Message) MarshalBinary() ([]byte, error) { return m.AppendBinary(make([]byte, 0, 64)) }

// appendPairs appends the count of m, then its (key, value) pairs as
// uvarints in ascending key order (so one Message has one encoding).
func appendPairs[K ~uint32 | ~uint64](b []byte, m map[K]uint64) []byte {
	var stack [8]K
	ks := stack[:0]
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	b = binary.AppendUvarint(b, uint64(len(ks)))
	for _, k := range ks {
		b = binary.AppendUvarint(b, uint64(k))
		b = binary.AppendUvarint(b, m[k])
	}
	return b
}

// IsBinary reports whether b starts like a binary-encoded Message (as
// opposed to, say, a msgpack one).
func IsBinary(b []byte) bool { return len(b) > 0 && b[0] == codecVersion }

// UnmarshalBinary decodes a Message encoded by AppendBinary into *m,
// which it overwrites. Malformed input returns an error wrapping
// ErrBadMessage and never panics; the decoded Message is not validated
// (Step does that).
func (m *Message) UnmarshalBinary(b []byte) error {
	return m.unmarshal(b, 0)
}

// UnmarshalBinaryFor is UnmarshalBinary for the Node of federate self: of
// Acks it keeps only self's entry, the only one that Node reads (a
// Message acknowledges every pending request of the federation, so in a
// federation of n enabling at once each carries n entries; keeping them
// all cost every receiver a map of n per Message).
func (m *Message) UnmarshalBinaryFor(b []byte, self FederateID) error {
	if self == 0 {
		return fmt.Errorf("%w: decoding for federate 0", ErrBadMessage)
	}
	return m.unmarshal(b, self)
}

// unmarshal decodes b; a non-zero self keeps only self's acknowledgement.
func (m *Message) unmarshal(b []byte, self FederateID) error {
	*m = Message{}
	if len(b) < 3 {
		return fmt.Errorf("%w: %d bytes, shorter than the header", ErrBadMessage, len(b))
	}
	if b[0] != codecVersion {
		return fmt.Errorf("%w: unknown encoding version %d", ErrBadMessage, b[0])
	}
	f := uint16(b[1])<<8 | uint16(b[2])
	if f&^mfKnown != 0 {
		return fmt.Errorf("%w: unknown flags %#04x", ErrBadMessage, f&^mfKnown)
	}
	r := codecReader{b: b[3:]}
	m.Regulating = f&mfRegulating != 0
	m.Constrained = f&mfConstrained != 0
	m.Strict = f&mfStrict != 0
	m.Waiting = f&mfWaiting != 0
	m.ReportStrict = f&mfReportStrict != 0
	m.ReportNone = f&mfReportNone != 0
	m.From = FederateID(r.uvarint())
	m.Epoch = r.uvarint()
	m.Bound = r.float()
	m.Granted = r.float()
	if f&mfCovers != 0 {
		n := r.count()
		m.Covers = make(map[uint32]uint64, n)
		for range n {
			g := r.uvarint()
			if g > math.MaxUint32 {
				r.fail("group %d", g)
			}
			m.Covers[uint32(g)] = r.uvarint()
		}
	}
	if f&mfAcks != 0 {
		n := r.count()
		if self == 0 {
			m.Acks = make(map[FederateID]uint64, n)
		}
		for range n {
			id := FederateID(r.uvarint())
			v := r.uvarint()
			switch {
			case self == 0:
				m.Acks[id] = v
			case id == self:
				m.Acks = map[FederateID]uint64{id: v}
			}
		}
	}
	if f&mfRequest != 0 {
		m.Request = r.uvarint()
	}
	if f&mfPending != 0 {
		m.Pending = RequestKind(r.byte())
		m.Requested = r.float()
	}
	if f&mfState != 0 {
		m.State = r.uvarint()
	}
	if f&mfSession != 0 {
		m.Session = r.uvarint()
	}
	if f&mfCut != 0 {
		m.Cut = r.uvarint()
	}
	if f&mfReport != 0 {
		m.ReportRound = r.uvarint()
		m.Report = r.float()
		m.ReportSession = r.uvarint()
	}
	if f&mfAckAsk != 0 {
		m.AckAsk = r.uvarint()
	}
	if r.err != nil {
		return r.err
	}
	if len(r.b) != 0 {
		return fmt.Errorf("%w: %d trailing bytes", ErrBadMessage, len(r.b))
	}
	return nil
}

// codecReader reads fields from the front of b; after the first error it
// reads nothing more and returns zero values.
type codecReader struct {
	b   []byte
	err error
}

func (r *codecReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: "+format, append([]any{ErrBadMessage}, args...)...)
	}
	r.b = nil
}

// short fails the read for want of bytes, unless it failed already. It
// is kept out of line so that take, on every fixed-size field, inlines.
//
//go:noinline
func (r *codecReader) short(what string) {
	if r.err == nil {
		r.fail("%s", what)
	}
}

func (r *codecReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("truncated or overlong number")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a pair count; each pair takes at least 2 bytes.
func (r *codecReader) count() int {
	n := r.uvarint()
	if r.err == nil && n > uint64(len(r.b))/2 {
		r.fail("%d pairs do not fit in %d bytes", n, len(r.b))
	}
	if r.err != nil {
		return 0
	}
	return int(n)
}

func (r *codecReader) float() float64 {
	b := r.take(8, "truncated number")
	if b == nil {
		return 0
	}
	return math.Float64frombits(binary.BigEndian.Uint64(b))
}

func (r *codecReader) byte() byte {
	b := r.take(1, "truncated")
	if b == nil {
		return 0
	}
	return b[0]
}

// take consumes the next n (> 0) bytes, or returns nil: after an earlier
// failure (which emptied r.b), or when fewer remain (a failure that says
// short).
func (r *codecReader) take(n int, short string) []byte {
	if len(r.b) < n {
		r.short(short)
		return nil
	}
	b := r.b[:n]
	r.b = r.b[n:]
	return b
}
