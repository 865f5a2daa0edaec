package reliable

import (
	"encoding/binary"
	"errors"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/meshrti/meshrti/peer/transport"
)

func newEP(t testing.TB, self NodeID, inc uint64, key []byte, groups ...transport.Group) *Endpoint {
	t.Helper()
	e, err := New(Config{Self: self, Incarnation: inc, Federation: "test", Key: key})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups {
		e.Join(g)
	}
	return e
}

// take returns e's Ready and advances past it.
func take(e *Endpoint) Ready {
	rd := e.Ready()
	out := Ready{
		Out:     slices.Clone(rd.Out),
		Starts:  slices.Clone(rd.Starts),
		Deliver: slices.Clone(rd.Deliver),
		Gaps:    slices.Clone(rd.Gaps),
	}
	e.Advance(rd)
	return out
}

// exchange passes the frames the endpoints send to the others that joined
// their group, losslessly, until none has any left; it returns what each
// endpoint reported meanwhile (Out excluded).
func exchange(t testing.TB, eps ...*Endpoint) []Ready {
	t.Helper()
	got := make([]Ready, len(eps))
	for busy := true; busy; {
		busy = false
		for i, e := range eps {
			rd := take(e)
			got[i].Starts = append(got[i].Starts, rd.Starts...)
			got[i].Deliver = append(got[i].Deliver, rd.Deliver...)
			got[i].Gaps = append(got[i].Gaps, rd.Gaps...)
			for _, o := range rd.Out {
				busy = true
				for _, r := range eps {
					if r != e && r.groups[o.Group] != nil {
						mustStep(t, r, o.Group, o.Frame)
					}
				}
			}
		}
	}
	return got
}

// handshake runs exchange and then ends the endpoints' join
// announcements (see endJoin).
func handshake(t testing.TB, eps ...*Endpoint) []Ready {
	t.Helper()
	got := exchange(t, eps...)
	for _, e := range eps {
		for _, gs := range e.groupList {
			endJoin(gs)
		}
	}
	return got
}

// endJoin cancels the pending join HELLO retries of gs, so that later
// ticks send only what a test expects, and ends the join's announcement,
// as if it had been long ago.
func endJoin(gs *groupState) {
	gs.hellos = 0
	gs.announced = 0
}

// sendFrame has e send one message and returns its frame.
func sendFrame(t testing.TB, e *Endpoint, g transport.Group, payload string, reliable bool) []byte {
	t.Helper()
	if _, err := e.Send(g, []byte(payload), reliable); err != nil {
		t.Fatal(err)
	}
	rd := take(e)
	if len(rd.Out) != 1 {
		t.Fatalf("Send produced %d frames", len(rd.Out))
	}
	return rd.Out[0].Frame
}

func mustStep(t testing.TB, e *Endpoint, g transport.Group, f []byte) {
	t.Helper()
	if err := e.Step(g, f); err != nil {
		t.Fatal(err)
	}
}

func seqs(ds []Delivery) []uint64 {
	var s []uint64
	for _, d := range ds {
		s = append(s, d.Seq)
	}
	return s
}

func TestConfig(t *testing.T) {
	for _, cfg := range []Config{
		{Federation: "f"},
		{Self: 1},
		{Self: 1, Federation: "f", Key: []byte("short")},
		{Self: 1, Federation: "f", RetransmitBuffer: -1},
		{Self: 1, Federation: "f", NakDelayTicks: -1},
		{Self: 1, Federation: "f", MaxFrame: 64},
		{Self: 1, Federation: "f", MaxFrame: 70000},
	} {
		if _, err := New(cfg); err == nil || !strings.HasPrefix(err.Error(), "reliable: ") {
			t.Errorf("New(%+v) = %v", cfg, err)
		}
	}
	e, err := New(Config{Self: 1, Federation: "f"})
	if err != nil {
		t.Fatal(err)
	}
	c := e.cfg
	if c.RetransmitBuffer != DefaultRetransmitBuffer || c.ReorderBuffer != DefaultReorderBuffer ||
		c.HeartbeatTicks != DefaultHeartbeatTicks || c.NakDelayTicks != DefaultNakDelayTicks ||
		c.NakRetryTicks != 3*DefaultNakDelayTicks || c.MaxFrame != DefaultMaxFrame || c.Rand == nil {
		t.Errorf("defaults: %+v", c)
	}
	// A frame holds one entry: a flags byte and a 2-byte length.
	if e.MaxPayload() != DefaultMaxFrame-HeaderLen-crcLen-3 {
		t.Errorf("MaxPayload %d", e.MaxPayload())
	}
	k := newEP(t, 1, 1, testKey)
	if k.MaxPayload() != DefaultMaxFrame-HeaderLen-TrailerLen-3 {
		t.Errorf("keyed MaxPayload %d", k.MaxPayload())
	}
}

func TestSendTooLarge(t *testing.T) {
	e := newEP(t, 1, 1, nil)
	if _, err := e.Send(1, make([]byte, e.MaxPayload()), true); err != nil {
		t.Fatal(err)
	}
	if f := take(e).Out; len(f) != 1 || len(f[0].Frame) != DefaultMaxFrame {
		t.Errorf("a message of MaxPayload bytes took %d frames", len(f))
	}
	if _, err := e.Send(1, make([]byte, DefaultMaxMessage+1), true); !errors.Is(err, ErrTooLarge) {
		t.Errorf("err = %v, want ErrTooLarge", err)
	}
	small, _ := New(Config{Self: 1, Federation: "test", MaxMessage: 10})
	if _, err := small.Send(1, make([]byte, 11), false); !errors.Is(err, ErrTooLarge) {
		t.Errorf("err = %v, want ErrTooLarge", err)
	}
	if _, err := e.Send(1, make([]byte, e.MaxPayload()+1), true); err != nil {
		t.Errorf("one byte over a frame: %v", err)
	}
	if f := take(e).Out; len(f) != 2 || len(f[0].Frame) != DefaultMaxFrame {
		t.Errorf("one byte over a frame took %d frames", len(f))
	}
}

func TestFrameHeader(t *testing.T) {
	e := newEP(t, 0x0102030405060708, 9, nil)
	f := sendFrame(t, e, 0xa0b0c0d0, "hi", true)
	want := []byte{
		0x6d, 0x72, 3, byte(kindData),
		0xa0, 0xb0, 0xc0, 0xd0,
	}
	want = binary.BigEndian.AppendUint64(want, FederationID("test"))
	want = binary.BigEndian.AppendUint64(want, 0x0102030405060708)
	want = binary.BigEndian.AppendUint64(want, 9)
	want = binary.BigEndian.AppendUint64(want, 1)
	want = append(want, 0, 2, 'h', 'i') // one entry: flags, length, payload
	want = withCRC(want)
	if !slices.Equal(f, want) {
		t.Errorf("frame\n% x\nwant\n% x", f, want)
	}
}

// stepCase is a frame and the error Step must return for it, with the
// counter that must grow.
type stepCase struct {
	name    string
	g       transport.Group
	frame   []byte
	err     error
	counter func(Stats) uint64
}

func TestStepRejects(t *testing.T) {
	sender := newEP(t, 1, 5, nil)
	good := sendFrame(t, sender, 1, "payload", true)
	other, _ := New(Config{Self: 1, Incarnation: 5, Federation: "other"})
	foreign := sendFrame(t, other, 1, "x", true)
	keyed := newEP(t, 1, 5, testKey)
	keyedFrame := sendFrame(t, keyed, 1, "x", true)

	mutate := func(f func(b []byte) []byte) []byte { return f(slices.Clone(good)) }
	hdr := func(k kind, seq uint64, body ...byte) []byte {
		b := make([]byte, HeaderLen)
		putHeader(b, header{kind: k, group: 1, fed: FederationID("test"), sender: 1, inc: 5, seq: seq})
		return withCRC(append(b, body...))
	}
	nakBody := func(n uint16, ranges ...uint64) []byte {
		b := binary.BigEndian.AppendUint64(nil, 2)
		b = binary.BigEndian.AppendUint64(b, 1)
		b = binary.BigEndian.AppendUint16(b, n)
		for _, r := range ranges {
			b = binary.BigEndian.AppendUint64(b, r)
		}
		return b
	}
	u64s := func(vs ...uint64) []byte {
		var b []byte
		for _, v := range vs {
			b = binary.BigEndian.AppendUint64(b, v)
		}
		return b
	}
	// sync: target, incarnation, nonce, echo, start, low, hw
	malformed := func(s Stats) uint64 { return s.Malformed }
	cases := []stepCase{
		{"empty", 1, nil, ErrMalformed, malformed},
		{"truncated header", 1, good[:HeaderLen-1], ErrMalformed, malformed},
		{"bad magic", 1, mutate(func(b []byte) []byte { b[0] = 'x'; return b }), ErrMalformed, malformed},
		{"bad version", 1, mutate(func(b []byte) []byte { b[2] = 1; return b }), ErrVersion, func(s Stats) uint64 { return s.BadVersion }},
		{"corrupted payload", 1, mutate(func(b []byte) []byte { b[HeaderLen+2] ^= 4; return b }), ErrChecksum, func(s Stats) uint64 { return s.BadChecksum }},
		{"corrupted checksum", 1, mutate(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), ErrChecksum, func(s Stats) uint64 { return s.BadChecksum }},
		{"no checksum", 1, good[:HeaderLen+2], ErrMalformed, malformed},
		{"empty bundle", 1, hdr(kindData, 1), ErrMalformed, malformed},
		{"entry flags", 1, hdr(kindData, 1, 4, 1, 'x'), ErrMalformed, malformed},
		{"entry length past the end", 1, hdr(kindData, 1, 0, 2, 'x'), ErrMalformed, malformed},
		{"entry length truncated", 1, hdr(kindData, 1, 0, 0x80), ErrMalformed, malformed},
		{"bundle past the largest sequence", 1, hdr(kindData, MaxSeq, 0, 1, 'x', 0, 1, 'y'), ErrMalformed, malformed},
		{"ack short", 1, hdr(kindAck, 0, 1), ErrMalformed, malformed},
		{"ack count mismatch", 1, hdr(kindAck, 0, append([]byte{0, 2}, u64s(1, 5, 3)...)...), ErrMalformed, malformed},
		{"ack of too large a sequence", 1, hdr(kindAck, 0, append([]byte{0, 1}, u64s(1, 5, MaxSeq+1)...)...), ErrMalformed, malformed},
		{"leave with a body", 1, hdr(kindLeave, 1, 0), ErrMalformed, malformed},
		{"unknown kind", 1, mutate(func(b []byte) []byte { b[3] = 12; return b }), ErrMalformed, malformed},
		{"aimed without a target", 1, hdr(kindAimed, 1, 1, 2, 3), ErrMalformed, malformed},
		{"kind zero", 1, mutate(func(b []byte) []byte { b[3] = 0; return b }), ErrMalformed, malformed},
		{"sequence zero", 1, hdr(kindData, 0), ErrMalformed, malformed},
		{"sequence too large", 1, hdr(kindData, MaxSeq+1), ErrMalformed, malformed},
		{"nak range too large", 1, hdr(kindNAK, 0, nakBody(1, 1, MaxSeq+1)...), ErrMalformed, malformed},
		{"heartbeat short", 1, hdr(kindHeartbeat, 3, 0, 0, 0, 1), ErrMalformed, malformed},
		{"heartbeat low past high", 1, hdr(kindHeartbeat, 3, 0, 0, 0, 0, 0, 0, 0, 5), ErrMalformed, malformed},
		{"heartbeat low zero", 1, hdr(kindHeartbeat, 3, 0, 0, 0, 0, 0, 0, 0, 0), ErrMalformed, malformed},
		{"gone short", 1, hdr(kindGone, 3, 1), ErrMalformed, malformed},
		{"nak short", 1, hdr(kindNAK, 0, 1, 2, 3), ErrMalformed, malformed},
		{"nak no ranges", 1, hdr(kindNAK, 0, nakBody(0)...), ErrMalformed, malformed},
		{"nak count mismatch", 1, hdr(kindNAK, 0, nakBody(2, 1, 2)...), ErrMalformed, malformed},
		{"nak reversed range", 1, hdr(kindNAK, 0, nakBody(1, 5, 2)...), ErrMalformed, malformed},
		{"nak range from zero", 1, hdr(kindNAK, 0, nakBody(1, 0, 2)...), ErrMalformed, malformed},
		{"hello short", 1, hdr(kindHello, 1, u64s(0, 0, 0)...), ErrMalformed, malformed},
		{"hello long", 1, hdr(kindHello, 1, u64s(0, 0, 0, 0, 0)...), ErrMalformed, malformed},
		{"hello nonce zero", 1, hdr(kindHello, 0, u64s(0, 0, 0, 0)...), ErrMalformed, malformed},
		{"hello hw too large", 1, hdr(kindHello, 1, u64s(MaxSeq+1, 0, 0, 0)...), ErrMalformed, malformed},
		{"hello echo too large", 1, hdr(kindHello, 1, u64s(0, 2, 1, MaxSeq+1)...), ErrMalformed, malformed},
		{"sync short", 1, hdr(kindSync, 1, u64s(2, 1, 1, 0, 0, 1)...), ErrMalformed, malformed},
		{"sync nonce zero", 1, hdr(kindSync, 0, u64s(2, 1, 1, 0, 0, 1, 0)...), ErrMalformed, malformed},
		{"sync target nonce zero", 1, hdr(kindSync, 1, u64s(2, 1, 0, 0, 0, 1, 0)...), ErrMalformed, malformed},
		{"sync start past hw", 1, hdr(kindSync, 1, u64s(2, 1, 1, 0, 5, 1, 4)...), ErrMalformed, malformed},
		{"sync low zero", 1, hdr(kindSync, 1, u64s(2, 1, 1, 0, 0, 0, 4)...), ErrMalformed, malformed},
		{"sync low past hw", 1, hdr(kindSync, 1, u64s(2, 1, 1, 0, 0, 6, 4)...), ErrMalformed, malformed},
		{"sync hw too large", 1, hdr(kindSync, 1, u64s(2, 1, 1, 0, 0, 1, MaxSeq+1)...), ErrMalformed, malformed},
		{"sync echo too large", 1, hdr(kindSync, 1, u64s(2, 1, 1, MaxSeq+1, 0, 1, 4)...), ErrMalformed, malformed},
		{"other federation", 1, foreign, ErrWrongFederation, func(s Stats) uint64 { return s.WrongFederation }},
		{"wrong group", 7, good, ErrWrongGroup, func(s Stats) uint64 { return s.WrongGroup }},
		{"own frame", 1, sendFrame(t, newEP(t, 2, 1, nil), 1, "me", true), ErrOwnFrame, func(s Stats) uint64 { return s.Own }},
		{"not joined", 3, sendFrame(t, sender, 3, "x", true), ErrNotJoined, func(s Stats) uint64 { return s.NotJoined }},
		{"hello not joined", 3, func() []byte {
			b := make([]byte, HeaderLen)
			putHeader(b, header{kind: kindHello, group: 3, fed: FederationID("test"), sender: 1, inc: 5, seq: 1})
			return withCRC(append(b, u64s(0, 0, 0, 0)...))
		}(), ErrNotJoined, func(s Stats) uint64 { return s.NotJoined }},
		{"authenticated, no key", 1, keyedFrame, ErrAuth, func(s Stats) uint64 { return s.AuthFailed }},
	}
	r := newEP(t, 2, 1, nil, 1)
	runStepCases(t, r, cases)

	// Keyed receiver.
	sender = newEP(t, 1, 5, testKey)
	good = sendFrame(t, sender, 1, "payload", true)
	wrongKey := newEP(t, 1, 5, []byte("another key of 16+ bytes"))
	unkeyed := newEP(t, 1, 5, nil)
	auth := func(s Stats) uint64 { return s.AuthFailed }
	kr := newEP(t, 2, 1, testKey, 1)
	mustStep(t, kr, 1, good)
	cases = []stepCase{
		{"replayed", 1, good, ErrReplay, func(s Stats) uint64 { return s.Replayed }},
		{"unauthenticated", 1, sendFrame(t, unkeyed, 1, "x", true), ErrAuth, auth},
		{"wrong key", 1, sendFrame(t, wrongKey, 1, "x", true), ErrAuth, auth},
		{"flipped payload", 1, mutate(func(b []byte) []byte { b[HeaderLen] ^= 1; return b }), ErrAuth, auth},
		{"flipped sequence", 1, mutate(func(b []byte) []byte { b[HeaderLen-1] ^= 1; return b }), ErrAuth, auth},
		{"flipped counter", 1, mutate(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), ErrAuth, auth},
		{"flipped tag", 1, mutate(func(b []byte) []byte { b[len(b)-TrailerLen] ^= 1; return b }), ErrAuth, auth},
		{"unknown key id", 1, mutate(func(b []byte) []byte { b[len(b)-1-counterLen] = 7; return b }), ErrAuth, auth},
		{"other sender's key", 1, mutate(func(b []byte) []byte { b[23] ^= 1; return b }), ErrAuth, auth},
		{"tag cut off", 1, good[:len(good)-tagLen], ErrAuth, auth},
		{"auth bit cleared", 1, mutate(func(b []byte) []byte { b[3] &^= authBit; return b }), ErrAuth, auth},
		{"trailer only", 1, good[:HeaderLen+TrailerLen-1], ErrAuth, auth},
	}
	runStepCases(t, kr, cases)

	// A replay of an old frame stays rejected after many newer ones.
	var frames [][]byte
	for range ReplayWindow + 10 {
		frames = append(frames, sendFrame(t, sender, 1, "x", true))
	}
	for _, f := range frames {
		mustStep(t, kr, 1, f)
	}
	before := kr.Stats().Replayed
	for _, f := range [][]byte{good, frames[0], frames[len(frames)-1]} {
		if err := kr.Step(1, f); !errors.Is(err, ErrReplay) {
			t.Errorf("replay: %v", err)
		}
	}
	if kr.Stats().Replayed != before+3 {
		t.Error("replays not counted")
	}
}

func runStepCases(t *testing.T, r *Endpoint, cases []stepCase) {
	t.Helper()
	for _, tc := range cases {
		before := tc.counter(r.Stats())
		delivered := r.Stats().Delivered
		err := r.Step(tc.g, tc.frame)
		if !errors.Is(err, tc.err) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.err)
			continue
		}
		if !strings.HasPrefix(err.Error(), "reliable: ") {
			t.Errorf("%s: error %q lacks the package prefix", tc.name, err)
		}
		if got := tc.counter(r.Stats()); got != before+1 {
			t.Errorf("%s: counter %d -> %d", tc.name, before, got)
		}
		if r.Stats().Delivered != delivered {
			t.Errorf("%s: a rejected frame was delivered", tc.name)
		}
	}
}

// sentFrames makes endpoints 1, the sender, and 2 on group 1, handshaken,
// and the n frames of messages the sender sends on group 1, reliable or
// not, their payloads the numbers from first.
func sentFrames(t *testing.T, n, first int, reliable bool) (s, r *Endpoint, fs [][]byte) {
	t.Helper()
	s = newEP(t, 1, 1, nil, 1)
	r = newEP(t, 2, 1, nil, 1)
	handshake(t, s, r)
	for i := range n {
		fs = append(fs, sendFrame(t, s, 1, strconv.Itoa(first+i), reliable))
	}
	return s, r, fs
}

func TestInOrderAndDuplicates(t *testing.T) {
	_, r, fs := sentFrames(t, 6, 1, true)
	for _, i := range []int{0, 2, 3, 2, 0, 1, 5, 4, 5} {
		mustStep(t, r, 1, fs[i])
	}
	rd := take(r)
	if got := seqs(rd.Deliver); !slices.Equal(got, []uint64{1, 2, 3, 4, 5, 6}) {
		t.Errorf("delivered %v", got)
	}
	for _, d := range rd.Deliver {
		if string(d.Payload) != strconv.FormatUint(d.Seq, 10) || !d.Reliable || d.From != 1 || d.Incarnation != 1 || d.Group != 1 {
			t.Errorf("delivery %+v", d)
		}
	}
	if st := r.Stats(); st.Duplicates != 3 || st.Delivered != 6 {
		t.Errorf("stats %+v", st)
	}
}

func TestBestEffort(t *testing.T) {
	s, r, fs := sentFrames(t, 5, 0, false)
	for _, i := range []int{1, 0, 1, 4, 4, 3} { // 2 is lost
		mustStep(t, r, 1, fs[i])
	}
	rd := take(r)
	if got := seqs(rd.Deliver); !slices.Equal(got, []uint64{2, 1, 5, 4}) {
		t.Errorf("delivered %v, want arrival order without duplicates", got)
	}
	for range 100 {
		r.Tick()
	}
	if rd := take(r); !rd.Empty() || r.Stats().NAKs != 0 {
		t.Errorf("best-effort loss caused %+v", rd)
	}
	// Reliable and best-effort sequences are separate.
	if seq, _ := s.Send(1, nil, true); seq != 1 {
		t.Errorf("first reliable seq %d", seq)
	}
	take(s)
	// Too old to tell: dropped.
	var many [][]byte
	for i := range 70 {
		many = append(many, sendFrame(t, s, 1, strconv.Itoa(i), false))
	}
	mustStep(t, r, 1, many[69])
	mustStep(t, r, 1, many[0])
	if got := seqs(take(r).Deliver); !slices.Equal(got, []uint64{75}) {
		t.Errorf("delivered %v", got)
	}
}

func TestNewIncarnationResetsStream(t *testing.T) {
	r := newEP(t, 2, 1, nil, 1)
	s1 := newEP(t, 1, 1, nil, 1)
	handshake(t, r, s1)
	a := sendFrame(t, s1, 1, "a1", true)
	b := sendFrame(t, s1, 1, "a2", true)
	c := sendFrame(t, s1, 1, "a3", true)
	mustStep(t, r, 1, a)
	mustStep(t, r, 1, c) // 2 missing, 3 buffered
	take(r)

	s2 := newEP(t, 1, 2, nil, 1) // the sender restarts; its HELLOs are lost
	take(s2)
	endJoin(s2.groups[1])
	sendFrame(t, s2, 1, "b1", true)
	f2 := sendFrame(t, s2, 1, "b2", true)
	mustStep(t, r, 1, f2) // b1 was lost
	rd := take(r)
	// The old stream is flushed: gap 2, deliver 3 (incarnation 1).
	if len(rd.Gaps) != 1 || rd.Gaps[0] != (Gap{From: 1, Incarnation: 1, Group: 1, FromSeq: 2, ToSeq: 2}) {
		t.Errorf("gaps %+v", rd.Gaps)
	}
	if len(rd.Deliver) != 1 || rd.Deliver[0].Seq != 3 || rd.Deliver[0].Incarnation != 1 {
		t.Errorf("delivered %+v", rd.Deliver)
	}
	// The new stream starts at 1, so b1 is NAKed, not skipped.
	if want := []Start{{From: 1, Incarnation: 2, Group: 1, Seq: 1, Fresh: 1}}; !slices.Equal(rd.Starts, want) {
		t.Errorf("starts %+v, want %+v", rd.Starts, want)
	}
	for range 5 {
		r.Tick()
	}
	rd = take(r)
	if len(rd.Out) != 1 {
		t.Fatalf("want one NAK, got %d frames", len(rd.Out))
	}
	mustStep(t, s2, 1, rd.Out[0].Frame)
	rd2 := take(s2)
	if len(rd2.Out) != 1 {
		t.Fatalf("want one retransmission, got %d frames", len(rd2.Out))
	}
	mustStep(t, r, 1, rd2.Out[0].Frame)
	rd = take(r)
	if got := seqs(rd.Deliver); !slices.Equal(got, []uint64{1, 2}) || rd.Deliver[0].Incarnation != 2 || string(rd.Deliver[0].Payload) != "b1" {
		t.Errorf("new incarnation delivered %+v", rd.Deliver)
	}
	// The old incarnation is stale now.
	if err := r.Step(1, b); !errors.Is(err, ErrStaleIncarnation) {
		t.Errorf("old frame: %v", err)
	}
	// The restarted sender's SYNC does not move the stream.
	got := exchange(t, r, s2)
	if len(got[0].Starts) != 0 || r.Stats().Starts != 2 {
		t.Errorf("starts after the new incarnation's SYNC: %+v", got[0].Starts)
	}
}

func TestForgetSender(t *testing.T) {
	r := newEP(t, 2, 1, nil, 1, 2)
	s := newEP(t, 1, 1, nil, 1, 2)
	handshake(t, r, s)
	var fs [][]byte
	for i := range 5 {
		fs = append(fs, sendFrame(t, s, 1, strconv.Itoa(i), true))
	}
	g2 := sendFrame(t, s, 2, "other group", true)
	mustStep(t, r, 1, fs[0])
	mustStep(t, r, 1, fs[2])
	mustStep(t, r, 1, fs[4])
	mustStep(t, r, 2, g2)
	take(r)
	if len(r.groups[1].rcv) != 1 {
		t.Fatal("the sender is not recorded as a receiver")
	}
	r.ForgetSender(1)
	rd := take(r)
	if got := seqs(rd.Deliver); !slices.Equal(got, []uint64{3, 5}) {
		t.Errorf("delivered %v", got)
	}
	want := []Gap{{1, 1, 1, 2, 2}, {1, 1, 1, 4, 4}}
	if !slices.Equal(rd.Gaps, want) {
		t.Errorf("gaps %+v, want %+v", rd.Gaps, want)
	}
	if err := r.Step(1, fs[1]); !errors.Is(err, ErrStaleIncarnation) {
		t.Errorf("frame of a forgotten sender: %v", err)
	}
	if len(r.stream) != 0 || len(r.streams) != 0 || len(r.peers) != 0 || len(r.groups[1].rcv) != 0 || len(r.groups[2].rcv) != 0 {
		t.Error("state not dropped")
	}
	// It may come back as a new incarnation, which joins anew.
	s2 := newEP(t, 1, 2, nil, 1, 2)
	got := exchange(t, r, s2)
	mustStep(t, r, 1, sendFrame(t, s2, 1, "back", true))
	if got := seqs(take(r).Deliver); !slices.Equal(got, []uint64{1}) {
		t.Errorf("after return delivered %v", got)
	}
	if len(got[0].Starts) != 2 || !slices.ContainsFunc(got[0].Starts, func(st Start) bool { return st == Start{1, 2, 1, 1, 1} }) {
		t.Errorf("starts after return %+v", got[0].Starts)
	}
}

// TestForgetSenderAtEnds: the ends a departing sender named extend what
// is reported lost past the last frame received, on the streams that
// started; a group the receiver did not join reports nothing.
func TestForgetSenderAtEnds(t *testing.T) {
	r := newEP(t, 2, 1, nil, 1, 2)
	s := newEP(t, 1, 1, nil, 1, 2, 3)
	handshake(t, r, s)
	mustStep(t, r, 1, sendFrame(t, s, 1, "1", true))
	mustStep(t, r, 1, sendFrame(t, s, 1, "2", true))
	sendFrame(t, s, 1, "never received", true)
	mustStep(t, r, 2, sendFrame(t, s, 2, "only", true))
	take(r)
	r.ForgetSender(1, End{Group: 1, Seq: 5}, End{Group: 2, Seq: 1}, End{Group: 3, Seq: 7})
	rd := take(r)
	if len(rd.Deliver) != 0 {
		t.Errorf("delivered %v", seqs(rd.Deliver))
	}
	want := []Gap{{From: 1, Incarnation: 1, Group: 1, FromSeq: 3, ToSeq: 5}}
	if !slices.Equal(rd.Gaps, want) {
		t.Errorf("gaps %+v, want %+v", rd.Gaps, want)
	}
}

// sendWithGap has s send reliable messages 1, 2 and 3 on group 1, of
// which r receives 1 and 3: 2 is lost.
func sendWithGap(t *testing.T, s, r *Endpoint) {
	t.Helper()
	mustStep(t, r, 1, sendFrame(t, s, 1, "1", true))
	sendFrame(t, s, 1, "lost", true)
	mustStep(t, r, 1, sendFrame(t, s, 1, "3", true))
}

// TestUnsyncedStream: before its SYNC a stream holds reliable messages,
// delivers and NAKs nothing, and asks the sender for a SYNC.
func TestUnsyncedStream(t *testing.T) {
	s := newEP(t, 1, 1, nil, 1)
	r1 := newEP(t, 2, 1, nil, 1)
	handshake(t, s, r1)
	sendWithGap(t, s, r1)
	late := newEP(t, 3, 1, nil, 1)
	take(late) // its HELLOs are lost
	endJoin(late.groups[1])
	for range 5 {
		r1.Tick()
	}
	nak := take(r1).Out[0].Frame
	mustStep(t, late, 1, nak) // no started stream: nothing to suppress
	mustStep(t, s, 1, nak)
	retx := take(s).Out[0].Frame
	mustStep(t, late, 1, retx) // a repair of history: held
	mustStep(t, late, 1, sendFrame(t, s, 1, "4", true))
	if rd := take(late); len(rd.Deliver) != 0 || len(rd.Starts) != 0 || len(late.stream[0].buf) != 2 {
		t.Fatalf("unsynced: %+v, holding %d", rd, len(late.stream[0].buf))
	}
	// It asks the sender (only) for a SYNC after NakRetryTicks plus up to
	// a NAK delay, not for repairs, and echoes the first position it saw.
	var req []byte
	for range 4 * DefaultNakDelayTicks {
		late.Tick()
		for _, o := range take(late).Out {
			h, _ := parseHeader(o.Frame)
			if h.kind != kindHello {
				t.Fatalf("unsynced stream sent a %v", h.kind)
			}
			req = o.Frame
		}
	}
	if req == nil || late.Stats().SyncRequests != 1 || late.Stats().NAKs != 0 {
		t.Fatalf("no SYNC request: %+v", late.Stats())
	}
	body := req[HeaderLen:]
	if target, inc, echo := binary.BigEndian.Uint64(body[8:]), binary.BigEndian.Uint64(body[16:]), binary.BigEndian.Uint64(body[24:]); target != 1 || inc != 1 || echo != 3 {
		t.Errorf("request for %d/%d echoing %d, want 1/1 echoing 3", target, inc, echo)
	}
	mustStep(t, s, 1, req)
	mustStep(t, r1, 1, req) // another member learns of it too
	if r1.groups[1].rcv[3] == nil || s.groups[1].rcv[3].start != 3 {
		t.Errorf("records: %+v %+v", r1.groups[1].rcv[3], s.groups[1].rcv[3])
	}
	got := exchange(t, s, late)
	if want := []Start{{1, 1, 1, 4, 4}}; !slices.Equal(got[1].Starts, want) {
		t.Errorf("starts %+v, want %+v", got[1].Starts, want)
	}
	if d := seqs(got[1].Deliver); !slices.Equal(d, []uint64{4}) || late.Stats().BeforeStart != 1 {
		t.Errorf("delivered %v, %d before the start", d, late.Stats().BeforeStart)
	}
	if late.Stats().NAKs != 0 {
		t.Error("the late joiner asked for history")
	}
}

func TestLeaveDiscards(t *testing.T) {
	r := newEP(t, 2, 1, nil, 1)
	s := newEP(t, 1, 1, nil, 1)
	handshake(t, r, s)
	sendWithGap(t, s, r)
	take(r)
	r.Leave(1)
	if ks := kinds(take(r).Out); !slices.Equal(ks, []kind{kindLeave}) {
		t.Errorf("Leave sent %v", ks)
	}
	for range 100 {
		r.Tick()
	}
	if rd := take(r); !rd.Empty() {
		t.Errorf("after Leave: %+v", rd)
	}
	if err := r.Step(1, sendFrame(t, s, 1, "4", true)); !errors.Is(err, ErrNotJoined) {
		t.Errorf("after Leave: %v", err)
	}
	if len(r.groups) != 0 || len(r.groupList) != 0 || len(r.stream) != 0 {
		t.Error("state of the group kept")
	}
}

func TestReadyAdvance(t *testing.T) {
	e := newEP(t, 1, 1, nil)
	e.Send(1, []byte("a"), true)
	rd := e.Ready()
	if again := e.Ready(); len(again.Out) != 1 || &again.Out[0] != &rd.Out[0] {
		t.Error("Ready changed without Advance")
	}
	e.Send(1, []byte("b"), true) // arrives between Ready and Advance
	e.Advance(rd)
	if !e.HasReady() {
		t.Fatal("the second frame was lost by Advance")
	}
	rd = e.Ready()
	if len(rd.Out) != 1 || binary.BigEndian.Uint64(rd.Out[0].Frame[32:]) != 2 {
		t.Errorf("left %d frames", len(rd.Out))
	}
	e.Advance(rd)
	if e.HasReady() || !e.Ready().Empty() {
		t.Error("not empty")
	}
}

func TestHeartbeatBackoff(t *testing.T) {
	e := newEP(t, 1, 1, nil)
	for range 100 {
		e.Tick()
	}
	if e.HasReady() {
		t.Fatal("heartbeat before any message")
	}
	e.Send(1, []byte("x"), true)
	e.Send(2, []byte("y"), false) // best effort only: no heartbeats
	take(e)
	var at []int
	for i := 1; i <= 2000; i++ {
		e.Tick()
		for _, o := range take(e).Out {
			h, _ := parseHeader(o.Frame)
			if h.kind != kindHeartbeat || h.seq != 1 || o.Group != 1 {
				t.Fatalf("unexpected %v frame seq %d", h.kind, h.seq)
			}
			at = append(at, i)
		}
	}
	// The tail probe one tick after the message (ProbeTicks), then
	// HeartbeatTicks later; no receiver holds anything back, so the
	// interval doubles up to quietBackoff × HeartbeatTicks (it stops at
	// heartbeatBackoff while something is unacknowledged, see
	// TestHeartbeatWhileUnacked).
	want := []int{1, 11, 31, 71, 151, 311, 631, 1271, 1911}
	if !slices.Equal(at, want) {
		t.Errorf("heartbeats at %v, want %v", at, want)
	}
}

func TestRetransmitHoldoff(t *testing.T) {
	s := newEP(t, 1, 1, nil, 1)
	r1 := newEP(t, 2, 1, nil, 1)
	handshake(t, s, r1)
	sendWithGap(t, s, r1)
	var nak []byte
	for nak == nil {
		r1.Tick()
		if rd := take(r1); len(rd.Out) > 0 {
			nak = rd.Out[0].Frame
		}
	}
	mustStep(t, s, 1, nak)
	if rd := take(s); len(rd.Out) != 1 {
		t.Fatalf("%d frames, want one retransmission", len(rd.Out))
	}
	mustStep(t, s, 1, nak) // a second NAK right away (e.g. from another receiver)
	if rd := take(s); len(rd.Out) != 0 {
		t.Errorf("retransmitted again within the holdoff")
	}
	for range DefaultNakDelayTicks {
		s.Tick()
	}
	take(s)
	mustStep(t, s, 1, nak)
	if rd := take(s); len(rd.Out) != 1 {
		t.Errorf("no retransmission after the holdoff")
	}
}

func TestReorderBufferBound(t *testing.T) {
	s := newEP(t, 1, 1, nil, 1)
	r, _ := New(Config{Self: 2, Federation: "test", ReorderBuffer: 4})
	r.Join(1)
	handshake(t, s, r)
	var fs [][]byte
	for i := range 10 {
		fs = append(fs, sendFrame(t, s, 1, strconv.Itoa(i), true))
	}
	mustStep(t, r, 1, fs[0])
	for _, f := range fs[2:] { // 2 lost; 3..5 fit, 6.. do not
		mustStep(t, r, 1, f)
	}
	if len(r.stream[0].buf) != 3 || r.Stats().ReorderDropped != 5 {
		t.Errorf("buffered %d, dropped %d", len(r.stream[0].buf), r.Stats().ReorderDropped)
	}
	// Repair everything NAKed until complete.
	for range 100 {
		r.Tick()
		for _, o := range take(r).Out {
			mustStep(t, s, 1, o.Frame)
		}
		s.Tick()
		for _, o := range take(s).Out {
			r.Step(1, o.Frame)
		}
	}
	if r.stream[0].next != 11 || r.Stats().Gaps != 0 {
		t.Errorf("next %d, gaps %d", r.stream[0].next, r.Stats().Gaps)
	}
}

func TestReplayWindow(t *testing.T) {
	var w replayWindow
	accept := func(c uint64, want bool) {
		t.Helper()
		if got := w.accept(c); got != want {
			t.Errorf("accept(%d) = %v, want %v (high %d)", c, got, want, w.high)
		}
	}
	accept(0, false)
	accept(1, true)
	accept(1, false)
	accept(3, true)
	accept(2, true)
	accept(2, false)
	accept(100, true)
	accept(4, true) // within the window, unseen
	accept(4, false)
	accept(2000, true)
	accept(2000-ReplayWindow, false) // too old
	accept(2000-ReplayWindow+1, true)
	accept(1999, true)
	accept(1999, false)
	accept(1<<40, true) // a jump clears everything
	accept(1<<40-1, true)
	accept(1<<40-ReplayWindow+1, true)
	accept(1<<40-ReplayWindow+1, false)
}

func TestSubtract(t *testing.T) {
	r := func(a, b uint64) seqRange { return seqRange{a, b} }
	for _, tc := range []struct {
		runs []seqRange
		cut  seqRange
		want []seqRange
	}{
		{[]seqRange{r(1, 5)}, r(1, 5), nil},
		{[]seqRange{r(1, 5)}, r(6, 9), []seqRange{r(1, 5)}},
		{[]seqRange{r(1, 5)}, r(2, 3), []seqRange{r(1, 1), r(4, 5)}},
		{[]seqRange{r(1, 5), r(8, 9)}, r(2, 3), []seqRange{r(1, 1), r(4, 5), r(8, 9)}},
		{[]seqRange{r(1, 5), r(8, 9), r(11, 20)}, r(4, 12), []seqRange{r(1, 3), r(13, 20)}},
		{[]seqRange{r(1, 1), r(3, 3), r(5, 5)}, r(3, 3), []seqRange{r(1, 1), r(5, 5)}},
	} {
		got := subtract(slices.Clone(tc.runs), tc.cut)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%v - %v = %v, want %v", tc.runs, tc.cut, got, tc.want)
		}
	}
}

// TestPure keeps the package a pure state machine: no goroutines, locks,
// clock, network or OS (the transport import is for its Group type).
func TestPure(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range []string{"net", "os", "sync", "time", "math/rand"} {
				if p == bad || strings.HasPrefix(p, bad+"/") && p != "math/rand/v2" {
					t.Errorf("%s imports %q", path, p)
				}
			}
		}
		if strings.Contains(string(src), "go func") {
			t.Errorf("%s starts a goroutine", path)
		}
	}
}

// While a receiver has not acknowledged what it is owed, heartbeats keep
// asking at most heartbeatBackoff × HeartbeatTicks apart; once it is
// stalled (it holds nothing back any more) they slow down to the quiet
// cadence.
func TestHeartbeatWhileUnacked(t *testing.T) {
	s, r := newEP(t, 1, 1, nil, 1), newEP(t, 2, 1, nil, 1)
	handshake(t, s, r)
	if len(s.groups[1].rcv) != 1 {
		t.Fatalf("sender knows %d receivers", len(s.groups[1].rcv))
	}
	s.Send(1, []byte("x"), true)
	take(s) // lost: r never hears of it, so never acknowledges
	var at []int
	for i := 1; i <= 1000; i++ {
		s.Tick()
		for _, o := range take(s).Out {
			if h, _ := parseHeader(o.Frame); h.kind == kindHeartbeat {
				at = append(at, i)
			}
		}
	}
	// The tail probe at 1, then 11, 31, 71, 151, then every 80 while r
	// holds the window; r stalls after AckTimeoutTicks (400) and the
	// interval doubles again.
	want := []int{1, 11, 31, 71, 151, 231, 311, 391, 471, 631, 951}
	if !slices.Equal(at, want) {
		t.Errorf("heartbeats at %v, want %v", at, want)
	}
	if s.stats.ReceiversStalled != 1 {
		t.Errorf("%d receivers stalled, want 1", s.stats.ReceiversStalled)
	}
}
