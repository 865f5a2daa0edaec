package reliable

import (
	"encoding/binary"
	"testing"

	"github.com/meshrti/meshrti/peer/transport"
)

// Fuzz input format: a mode byte, then records of a 2-byte big-endian
// length and a frame. Mode 0: unkeyed receiver. Mode 1: keyed receiver,
// frames as given (almost all must fail authentication). Mode 2: keyed
// receiver, each frame's trailer cut and the frame sealed with the key
// as its sender would (an insider sending garbage), so the fuzzer reaches
// the protocol behind the tag. Mode 3: unkeyed receiver, each frame's
// checksum replaced by the right one.

func appendRecord(b, frame []byte) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(frame)))
	return append(b, frame...)
}

// fuzzSeeds returns realistic traffic between a sender and a receiver on
// group 1, as seen by the receiver (node 2, incarnation 1, joined to
// groups 1 then 2): the join handshake (HELLOs and the SYNCs to the
// receiver), data, best effort, heartbeats, NAKs (from another receiver),
// retransmissions and gone frames.
func fuzzSeeds(tb testing.TB, key []byte) [][]byte {
	s, _ := New(Config{Self: 1, Incarnation: 1, Federation: "test", Key: key, RetransmitBuffer: 4})
	other, _ := New(Config{Self: 3, Incarnation: 1, Federation: "test", Key: key})
	r, _ := New(Config{Self: 2, Incarnation: 1, Federation: "test", Key: key})
	s.Join(1)
	other.Join(1)
	r.Join(1)
	r.Join(2)
	var out [][]byte
	eps := []*Endpoint{s, other, r}
	for busy := true; busy; {
		busy = false
		for _, e := range eps {
			for _, o := range take(e).Out {
				busy = true
				if e != r {
					out = append(out, o.Frame)
				}
				for _, to := range eps {
					if to != e && to.groups[o.Group] != nil {
						to.Step(o.Group, o.Frame)
					}
				}
			}
		}
	}
	for i := range 8 {
		if _, err := s.Send(1, []byte{byte(i), 1, 2, 3}, i%3 != 2); err != nil {
			tb.Fatal(err)
		}
	}
	for range DefaultHeartbeatTicks {
		s.Tick()
	}
	for i, o := range take(s).Out {
		out = append(out, o.Frame)
		if i != 1 && i != 6 { // the other receiver misses two
			other.Step(o.Group, o.Frame)
		}
	}
	for range 10 {
		other.Tick()
	}
	for _, o := range take(other).Out {
		out = append(out, o.Frame)
		s.Step(o.Group, o.Frame)
	}
	for _, o := range take(s).Out {
		out = append(out, o.Frame)
	}
	return out
}

func FuzzStep(f *testing.F) {
	for mode, key := range [][]byte{nil, testKey, testKey, nil} {
		frames := fuzzSeeds(f, key)
		all := []byte{byte(mode)}
		for i, fr := range frames {
			f.Add(appendRecord([]byte{byte(mode)}, fr))
			all = appendRecord(all, fr)
			if i%3 == 0 {
				all = appendRecord(all, fr) // duplicates
			}
		}
		f.Add(all)
	}
	f.Fuzz(fuzzOne)
}

// fuzzOne steps the frames of one fuzz input through a receiver, ticking
// after each, and checks that it never panics, that every stream's
// deliveries and gaps continue its Start exactly, and that every frame is
// accepted or counted under one drop reason.
func fuzzOne(t *testing.T, data []byte) {
	if len(data) == 0 {
		return
	}
	mode := data[0] % 4
	var key []byte
	if mode == 1 || mode == 2 {
		key = testKey
	}
	r, err := New(Config{Self: 2, Incarnation: 1, Federation: "test", Key: key, ReorderBuffer: 16})
	if err != nil {
		t.Fatal(err)
	}
	r.Join(1)
	r.Join(2)
	var counter uint64
	type incKey struct {
		streamKey
		inc uint64
	}
	cursor := map[incKey]uint64{}
	check := func() {
		rd := r.Ready()
		for _, st := range rd.Starts {
			k := incKey{streamKey{st.From, st.Group}, st.Incarnation}
			if _, ok := cursor[k]; ok || st.Seq == 0 {
				t.Fatalf("start %+v of a started stream", st)
			}
			cursor[k] = st.Seq
		}
		events := map[incKey][]seqEvent{}
		for _, d := range rd.Deliver {
			if d.Reliable {
				k := incKey{streamKey{d.From, d.Group}, d.Incarnation}
				events[k] = append(events[k], seqEvent{from: d.Seq, to: d.Seq})
			}
		}
		for _, g := range rd.Gaps {
			if g.FromSeq > g.ToSeq {
				t.Fatalf("gap %+v", g)
			}
			k := incKey{streamKey{g.From, g.Group}, g.Incarnation}
			events[k] = append(events[k], seqEvent{from: g.FromSeq, to: g.ToSeq, gap: true})
		}
		for k, evs := range events {
			sortEvents(evs)
			for _, ev := range evs {
				c, ok := cursor[k]
				if !ok {
					t.Fatalf("stream %v: [%d, %d] before its start", k, ev.from, ev.to)
				}
				if ev.from != c {
					t.Fatalf("stream %v: [%d, %d] after cursor %d", k, ev.from, ev.to, c)
				}
				cursor[k] = ev.to + 1
			}
		}
		r.Advance(rd)
	}
	var steps, accepted uint64
	rest := data[1:]
	for len(rest) >= 2 {
		n := int(binary.BigEndian.Uint16(rest))
		rest = rest[2:]
		if n > len(rest) {
			n = len(rest)
		}
		frame := append([]byte(nil), rest[:n]...)
		rest = rest[n:]
		switch {
		case mode == 2 && len(frame) >= HeaderLen+TrailerLen:
			counter++
			frame = sealAs(t, frame[:len(frame)-TrailerLen], key, 0, counter)
		case mode == 3 && len(frame) >= HeaderLen+crcLen:
			frame = withCRC(frame[:len(frame)-crcLen])
		}
		g := transport.Group(1)
		if len(frame) >= 8 {
			g = transport.Group(binary.BigEndian.Uint32(frame[4:]))
		}
		steps++
		err := r.Step(g, frame)
		if err == nil {
			accepted++
		}
		r.Tick()
		check()
	}
	for range 30 {
		r.Tick()
	}
	r.ForgetSender(1)
	check()
	// Every Step is accepted or counted under exactly one reason.
	st := r.Stats()
	drops := st.Malformed + st.BadVersion + st.WrongFederation + st.WrongGroup + st.BadChecksum + st.AuthFailed +
		st.Replayed + st.Own + st.StaleIncarnation + st.NotJoined
	if st.Received != accepted || st.Received+drops != steps {
		t.Fatalf("%d steps, %d accepted: stats %+v", steps, accepted, st)
	}
}

func sortEvents(evs []seqEvent) {
	for i := 1; i < len(evs); i++ {
		for j := i; j > 0 && evs[j].from < evs[j-1].from; j-- {
			evs[j], evs[j-1] = evs[j-1], evs[j]
		}
	}
}

// FuzzNAK feeds a sender that holds messages 1..60 (some released) NAKs
// with fuzzed bodies from a known receiver: it never panics, and answers
// only with retransmissions of sequences it holds, within what was asked,
// and gone frames for what it no longer holds.
func FuzzNAK(f *testing.F) {
	nak := func(ranges ...uint64) []byte {
		b := binary.BigEndian.AppendUint64(nil, 1)
		b = binary.BigEndian.AppendUint64(b, 1)
		b = binary.BigEndian.AppendUint16(b, uint16(len(ranges)/2))
		for _, r := range ranges {
			b = binary.BigEndian.AppendUint64(b, r)
		}
		return b
	}
	f.Add(nak(1, 3))
	f.Add(nak(5, 5, 9, 70))
	f.Add(nak(1, MaxSeq))
	f.Add(nak(30, 20))
	f.Add([]byte{0, 1, 2})
	f.Fuzz(func(t *testing.T, body []byte) {
		s, err := New(Config{Self: 1, Incarnation: 1, Federation: "test", RetransmitBuffer: 8, Bundle: true, MaxFrame: 300})
		if err != nil {
			t.Fatal(err)
		}
		s.Join(1)
		for i := range 60 {
			s.Send(1, make([]byte, 1+i%40), true)
		}
		s.Flush()
		st := s.sends[1]
		endJoin(s.groups[1])
		s.release(st) // no receiver known: keep only the history
		take(s)
		low, hw := s.low(st), st.hw
		frame := make([]byte, HeaderLen)
		putHeader(frame, header{kind: kindNAK, group: 1, fed: FederationID("test"), sender: 2, inc: 1})
		frame = withCRC(append(frame, body...))
		err = s.Step(1, frame)
		out := take(s).Out
		if err != nil && len(out) != 0 {
			t.Fatalf("a refused NAK (%v) was answered", err)
		}
		for _, o := range out {
			h, err := parseHeader(o.Frame)
			if err != nil {
				t.Fatal(err)
			}
			switch h.kind {
			case kindRetransmit:
				ents, err := parseBundle(nil, o.Frame[HeaderLen:len(o.Frame)-crcLen], h.seq)
				if err != nil {
					t.Fatal(err)
				}
				if h.seq < low || h.seq+uint64(len(ents))-1 > hw {
					t.Fatalf("retransmitted %d..%d, holding %d..%d", h.seq, h.seq+uint64(len(ents))-1, low, hw)
				}
			case kindGone:
				if h.seq != low {
					t.Fatalf("gone frame says %d, holding from %d", h.seq, low)
				}
			default:
				t.Fatalf("answered a NAK with a %v frame", h.kind)
			}
		}
	})
}
