package reliable

import (
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/meshrti/meshrti/peer/transport"
)

// ctrlFrame builds an unkeyed frame of kind k from incarnation 1 of node
// from, with a body of 64-bit fields.
func ctrlFrame(fed string, k kind, from NodeID, seq uint64, g transport.Group, fields ...uint64) []byte {
	b := make([]byte, HeaderLen, HeaderLen+8*len(fields))
	putHeader(b, header{kind: k, group: g, fed: FederationID(fed), sender: from, inc: 1, seq: seq})
	for _, v := range fields {
		b = binary.BigEndian.AppendUint64(b, v)
	}
	return withCRC(b)
}

// dataFrame builds an unkeyed data frame of federation "test" from
// incarnation 1 of node from, holding one message.
func dataFrame(from NodeID, seq uint64, g transport.Group, payload string) []byte {
	b := make([]byte, HeaderLen)
	putHeader(b, header{kind: kindData, group: g, fed: FederationID("test"), sender: from, inc: 1, seq: seq})
	return withCRC(appendEntry(b, 0, []byte(payload)))
}

// withCRC appends the checksum trailer of an unkeyed frame.
func withCRC(b []byte) []byte {
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// sealAs seals frame (header and body, no trailer) with key as its sender
// run would, with frame counter counter.
func sealAs(tb testing.TB, frame []byte, key []byte, id uint8, counter uint64) []byte {
	var s sealer
	h, err := parseHeader(frame)
	if err != nil {
		return frame
	}
	if err := s.setKeys([]Key{{ID: id, Secret: key}}, h.sender, h.inc); err != nil {
		tb.Fatal(err)
	}
	s.counter = counter - 1
	frame[3] |= authBit
	frame = append(frame, make([]byte, TrailerLen)...)
	s.seal(frame)
	return frame
}

// helloFrame builds a HELLO of federation "test".
func helloFrame(from NodeID, nonce uint64, g transport.Group, hw uint64, target NodeID, tinc, echo uint64) []byte {
	return ctrlFrame("test", kindHello, from, nonce, g, hw, uint64(target), tinc, echo)
}

// syncFrame builds a SYNC of federation "test".
func syncFrame(from NodeID, nonce uint64, g transport.Group, y syncBody) []byte {
	return ctrlFrame("test", kindSync, from, nonce, g, uint64(y.target), y.inc, y.nonce, y.echo, y.start, y.low, y.hw, max(y.cut, y.start), y.age, y.join)
}

// nextID is the id of the next node added to s (its frames may be dropped
// from within addNode).
func (s *sim) nextID() NodeID { return NodeID(len(s.nodes) + 1) }

// kinds returns the kinds of the frames in out.
func kinds(out []Outgoing) []kind {
	var ks []kind
	for _, o := range out {
		h, _ := parseHeader(o.Frame)
		ks = append(ks, h.kind)
	}
	return ks
}

// TestJoinHellos: a join sends a HELLO at once and four retries at
// doubling intervals; joining again does nothing; a re-join has a new
// nonce; the HELLO vouches for the sender's position at the join.
func TestJoinHellos(t *testing.T) {
	e := newEP(t, 1, 1, nil)
	e.Join(5)
	rd := take(e)
	if len(rd.Out) != 1 {
		t.Fatalf("Join sent %d frames", len(rd.Out))
	}
	h, _ := parseHeader(rd.Out[0].Frame)
	body := rd.Out[0].Frame[HeaderLen : len(rd.Out[0].Frame)-crcLen]
	if h.kind != kindHello || h.seq != 1 || rd.Out[0].Group != 5 || !slices.Equal(body, make([]byte, helloBodyLen)) {
		t.Errorf("HELLO %+v body % x", h, body)
	}
	e.Join(5)
	if e.HasReady() {
		t.Error("joining again sent something")
	}
	var at []int
	for i := 1; i <= 100; i++ {
		e.Tick()
		for range take(e).Out {
			at = append(at, i)
		}
	}
	d := DefaultNakDelayTicks
	if want := []int{d, 3 * d, 7 * d, 15 * d}; !slices.Equal(at, want) {
		t.Errorf("retries at %v, want %v", at, want)
	}
	if e.Stats().Hellos != joinHellos {
		t.Errorf("%d HELLOs", e.Stats().Hellos)
	}
	for range 3 {
		e.Send(7, nil, true)
	}
	take(e)
	e.Join(7)
	h, _ = parseHeader(take(e).Out[0].Frame)
	if h.seq != 2 || e.groups[7].joinHW != 3 {
		t.Errorf("second join: nonce %d, position %d", h.seq, e.groups[7].joinHW)
	}
	e.Leave(5)
	e.Join(5)
	out := take(e).Out
	if ks := kinds(out); !slices.Equal(ks, []kind{kindLeave, kindHello}) {
		t.Fatalf("leave and re-join sent %v", ks)
	}
	if f := out[0].Frame; binary.BigEndian.Uint64(f[32:]) != 1 {
		t.Errorf("leave of nonce %d, want 1", binary.BigEndian.Uint64(f[32:]))
	}
	if f := out[1].Frame; binary.BigEndian.Uint64(f[32:]) != 3 {
		t.Errorf("re-join nonce %d, want 3", binary.BigEndian.Uint64(f[32:]))
	}
}

// TestReceiverRecords exercises a sender's table of receivers.
func TestReceiverRecords(t *testing.T) {
	s := newEP(t, 1, 1, nil, 1)
	take(s)
	endJoin(s.groups[1])
	for range 2 {
		s.Send(1, []byte("x"), true)
	}
	take(s)
	step := func(f []byte) Ready {
		t.Helper()
		mustStep(t, s, 1, f)
		return take(s)
	}
	wantSync := func(rd Ready, target NodeID, start uint64) {
		t.Helper()
		if len(rd.Out) != 1 {
			t.Fatalf("%d frames, want a SYNC", len(rd.Out))
		}
		h, _ := parseHeader(rd.Out[0].Frame)
		y := parseSync(rd.Out[0].Frame[HeaderLen:])
		if h.kind != kindSync || h.seq != s.groups[1].nonce || y.target != target || y.inc != 1 || y.start != start || y.low != 1 || y.hw != s.hwOf(1) {
			t.Errorf("got %v %+v, want a SYNC to %d starting after %d", h.kind, y, target, start)
		}
	}
	rcv := s.groups[1].rcv

	// A join HELLO: recorded at our position, answered.
	wantSync(step(helloFrame(10, 2, 1, 0, 0, 0, 0)), 10, 2)
	s.Send(1, []byte("x"), true)
	take(s)
	// A retry: same record, not answered again (a joiner that missed the
	// SYNC asks for it with a HELLO addressed to us when it hears us).
	if rd := step(helloFrame(10, 2, 1, 0, 0, 0, 0)); len(rd.Out) != 0 || rcv[10].start != 2 {
		t.Errorf("retry: %v, start %d", kinds(rd.Out), rcv[10].start)
	}
	for range DefaultNakDelayTicks {
		s.Tick()
	}
	take(s)
	if rd := step(helloFrame(10, 2, 1, 0, 0, 0, 0)); len(rd.Out) != 0 {
		t.Errorf("later retry answered: %v", kinds(rd.Out))
	}
	wantSync(step(helloFrame(10, 2, 1, 0, 1, 1, 0)), 10, 2) // asked by name: answered
	// An earlier join's HELLO: ignored.
	if rd := step(helloFrame(10, 1, 1, 0, 0, 0, 0)); len(rd.Out) != 0 || rcv[10].nonce != 2 {
		t.Errorf("stale HELLO: %v, nonce %d", kinds(rd.Out), rcv[10].nonce)
	}
	// A re-join: recorded anew.
	wantSync(step(helloFrame(10, 3, 1, 0, 0, 0, 0)), 10, 3)
	// A request addressed to us echoes an earlier position of ours.
	wantSync(step(helloFrame(11, 1, 1, 0, 1, 1, 1)), 11, 1)
	// A request addressed to another incarnation of us: no echo.
	wantSync(step(helloFrame(12, 1, 1, 0, 1, 7, 1)), 12, 3)
	// Overheard requests: an unknown member is recorded and told, a
	// known one is not answered.
	wantSync(step(helloFrame(13, 1, 1, 0, 99, 1, 0)), 13, 3)
	if rd := step(helloFrame(13, 1, 1, 0, 99, 1, 0)); len(rd.Out) != 0 {
		t.Errorf("answered a request to another node: %v", kinds(rd.Out))
	}
	// A SYNC answering our HELLO: the member is recorded at the echo and
	// told; the SYNC for our join starts its stream.
	rd := step(syncFrame(14, 1, 1, syncBody{target: 1, inc: 1, nonce: s.groups[1].nonce, echo: 0, start: 4, low: 1, hw: 6}))
	wantSync(rd, 14, 0)
	if want := []Start{{14, 1, 1, 5, 5}}; !slices.Equal(rd.Starts, want) {
		t.Errorf("starts %+v, want %+v", rd.Starts, want)
	}
	// A SYNC for an earlier join of ours does not start a stream, but
	// tells us of a member.
	rd = step(syncFrame(15, 1, 1, syncBody{target: 1, inc: 1, nonce: 9, echo: 0, start: 0, low: 1, hw: 0}))
	wantSync(rd, 15, 0)
	if len(rd.Starts) != 0 {
		t.Errorf("stale SYNC started %+v", rd.Starts)
	}
	if len(rcv) != 6 {
		t.Errorf("%d receivers", len(rcv))
	}
	s.ForgetSender(15)
	if rcv[15] != nil {
		t.Error("forgotten node still recorded")
	}

	// The table is bounded: the receiver recorded first goes.
	for range DefaultNakDelayTicks {
		s.Tick()
	}
	for id := NodeID(1000); len(rcv) < maxReceivers; id++ {
		mustStep(t, s, 1, helloFrame(id, 1, 1, 0, 0, 0, 0))
	}
	take(s)
	mustStep(t, s, 1, helloFrame(999, 1, 1, 0, 0, 0, 0))
	if len(rcv) != maxReceivers || s.Stats().ReceiversEvicted != 1 || rcv[10] != nil || rcv[999] == nil {
		t.Errorf("%d receivers, %d evicted; 10 kept %v", len(rcv), s.Stats().ReceiversEvicted, rcv[10] != nil)
	}
}

// TestStartsPrecedeDeliveries: the messages held before the SYNC are
// delivered in the same Ready as the Start, which comes first.
func TestStartsPrecedeDeliveries(t *testing.T) {
	s := newEP(t, 1, 1, nil, 1)
	r := newEP(t, 2, 1, nil, 1)
	take(s)
	endJoin(s.groups[1])
	hello := take(r).Out[0].Frame
	endJoin(r.groups[1])
	mustStep(t, s, 1, hello)
	take(s) // the SYNC is lost
	for i := range 3 {
		mustStep(t, r, 1, sendFrame(t, s, 1, string(rune('a'+i)), true))
	}
	var req []byte
	for req == nil {
		s.Tick()
		take(s)
		r.Tick()
		if rd := take(r); len(rd.Out) > 0 {
			if len(rd.Deliver)+len(rd.Starts) != 0 || kinds(rd.Out)[0] != kindHello {
				t.Fatalf("before the SYNC: %+v", rd)
			}
			req = rd.Out[0].Frame
		}
	}
	mustStep(t, s, 1, req)
	rd := take(s)
	if !slices.Equal(kinds(rd.Out), []kind{kindSync}) {
		t.Fatalf("answer %v", kinds(rd.Out))
	}
	mustStep(t, r, 1, rd.Out[0].Frame)
	rd = take(r)
	if want := []Start{{1, 1, 1, 1, 1}}; !slices.Equal(rd.Starts, want) || !slices.Equal(seqs(rd.Deliver), []uint64{1, 2, 3}) {
		t.Errorf("starts %+v, delivered %v", rd.Starts, seqs(rd.Deliver))
	}
	// A second SYNC is ignored.
	mustStep(t, r, 1, syncFrame(1, 1, 1, syncBody{target: 2, inc: 1, nonce: 1, start: 2, low: 1, hw: 3}))
	if rd := take(r); len(rd.Starts) != 0 || len(rd.Deliver) != 0 {
		t.Errorf("second SYNC: %+v", rd)
	}
}

// TestSyncReportsGone: the sender learned of the receiver before sending,
// but the receiver stalled (it acknowledged nothing) and the sender no
// longer holds the first messages when the SYNC finally arrives: they are
// reported as a gap, never skipped.
func TestSyncReportsGone(t *testing.T) {
	s, _ := New(Config{Self: 1, Incarnation: 1, Federation: "test", RetransmitBuffer: 4, AckTimeoutTicks: 1})
	r := newEP(t, 2, 1, nil, 1)
	s.Join(1)
	take(s)
	endJoin(s.groups[1])
	mustStep(t, s, 1, take(r).Out[0].Frame) // r's HELLO
	endJoin(r.groups[1])
	take(s) // the SYNC is lost, and every data frame
	for range 10 {
		sendFrame(t, s, 1, "x", true)
	}
	var got Ready
	for i := 0; i < 200 && r.Stats().Delivered < 4; i++ {
		s.Tick()
		for _, o := range take(s).Out {
			mustStep(t, r, 1, o.Frame)
		}
		r.Tick()
		rd := take(r)
		got.Starts = append(got.Starts, rd.Starts...)
		got.Deliver = append(got.Deliver, rd.Deliver...)
		got.Gaps = append(got.Gaps, rd.Gaps...)
		for _, o := range rd.Out {
			mustStep(t, s, 1, o.Frame)
		}
	}
	if want := []Start{{1, 1, 1, 1, 1}}; !slices.Equal(got.Starts, want) {
		t.Errorf("starts %+v, want %+v", got.Starts, want)
	}
	if want := []Gap{{1, 1, 1, 1, 6}}; !slices.Equal(got.Gaps, want) {
		t.Errorf("gaps %+v, want %+v", got.Gaps, want)
	}
	if d := seqs(got.Deliver); !slices.Equal(d, []uint64{7, 8, 9, 10}) {
		t.Errorf("delivered %v", d)
	}
	if r.Stats().SyncRequests == 0 {
		t.Error("no SYNC request")
	}
}

// checkStarts checks that b started a's stream on group 1 at want, has
// delivered up to cursor (the next sequence number it expects) and saw
// no gap.
func checkStarts(t *testing.T, b, a *simNode, want []Start, cursor uint64) {
	t.Helper()
	k := streamKey{a.id, 1}
	if !slices.Equal(b.startLog, want) || b.cursor[k] != cursor || b.gaps != 0 {
		t.Errorf("starts %+v cursor %d gaps %d; want %+v, %d, 0", b.startLog, b.cursor[k], b.gaps, want, cursor)
	}
}

// TestJoinBeforeFirstMessage: a receiver that joined before the sender's
// first message, once the sender knows of it, gets every message, even
// when the first ones are lost, at 10-30% loss on every frame.
func TestJoinBeforeFirstMessage(t *testing.T) {
	seeds := seedCount(60, 15)
	unknown := 0
	for seed := range uint64(seeds) {
		s := newSim(t, seed, simConfig{loss: []float64{0.1, 0.2, 0.3}[seed%3], maxDelay: int(seed % 4)})
		var snd, rcv *simNode
		if seed%2 == 0 {
			snd = s.addNode(1)
			s.tick()
			rcv = s.addNode(1)
		} else { // the sender joins after the receiver
			rcv = s.addNode(1)
			s.tick()
			snd = s.addNode(1)
		}
		s.addNode(1) // another member
		s.warmUp()
		r := snd.e.groups[1].rcv[rcv.id]
		if r == nil || r.nonce != rcv.e.groups[1].nonce {
			unknown++ // every HELLO exchange failed: nothing is owed
			continue
		}
		if r.start != 0 {
			t.Fatalf("seed %d: recorded at %d before sending", seed, r.start)
		}
		s.drop = func(from, to *simNode, h header) bool {
			return from == snd && to == rcv && h.kind == kindData && h.seq <= 3
		}
		for range 30 {
			s.send(snd, 1, true)
			s.tick()
		}
		s.settle(5000)
		k := streamKey{snd.id, 1}
		if rcv.start[k] != 1 || rcv.cursor[k] != 31 || rcv.gaps != 0 {
			t.Errorf("seed %d: start %d cursor %d gaps %d; want 1, 31, 0", seed, rcv.start[k], rcv.cursor[k], rcv.gaps)
		}
	}
	if unknown > seeds/20 {
		t.Errorf("%d of %d handshakes failed", unknown, seeds)
	}
	t.Logf("%d of %d handshakes failed", unknown, seeds)
}

// TestSenderJoinsAfterReceiver: a sender joins a group and sends at once;
// a receiver that was a member gets everything from 1, even when the
// first messages are lost: the sender's join HELLO starts the receiver's
// stream after the join position, and the receiver's answer echoes it.
// (The channel keeps order here; TestNewSenderCrossesReceiverHello and
// TestLateSenderSendsAtOnce cover the other orders.)
func TestSenderJoinsAfterReceiver(t *testing.T) {
	seeds := seedCount(20, 20)
	for seed := range uint64(seeds) {
		s := newSim(t, seed, simConfig{})
		rcv := s.addNode(1)
		other := s.addNode(1)
		s.warmUp()
		snd := s.nextID()
		helloLost, hellos := seed%2 == 1, 0
		s.drop = func(from, to *simNode, h header) bool {
			if from.id != snd || to != rcv {
				return false
			}
			switch h.kind {
			case kindData:
				// The first ones are lost, and more at random, unless the
				// first HELLO is lost (then the receiver could learn of
				// the sender from a later message first: see "every HELLO
				// lost" in TestHandshakeRetries).
				return !helloLost && (h.seq <= 3 || s.rng.Float64() < 0.2)
			case kindHello:
				hellos++
				return helloLost && hellos == 1
			}
			return false
		}
		s.addNode(1)
		for range 10 {
			s.send(s.nodeByID(snd), 1, true)
		}
		s.settle(5000)
		k := streamKey{snd, 1}
		for _, n := range []*simNode{rcv, other} {
			if n.start[k] != 1 || n.cursor[k] != 11 || n.gaps != 0 {
				t.Errorf("seed %d node %d: start %d cursor %d gaps %d; want 1, 11, 0", seed, n.id, n.start[k], n.cursor[k], n.gaps)
			}
		}
	}
}

// TestJoinMidStream: a receiver that joins while a sender is sending gets
// exactly the messages after its start, all of them, and a Start telling
// where.
func TestJoinMidStream(t *testing.T) {
	s := newSim(t, 1, simConfig{})
	a, b := s.addNode(1), s.addNode()
	s.warmUp()
	for range 5 {
		s.send(a, 1, true)
	}
	s.tick()
	s.join(b, 1)
	s.tick()
	for range 5 {
		s.send(a, 1, true)
	}
	s.settle(100)
	checkStarts(t, b, a, []Start{{a.id, 1, 1, 6, 6}}, 11)
	k := streamKey{a.id, 1}

	// Joining after the sender went idle: the stream starts after its
	// last message.
	c := s.addNode(1)
	for range 3 * DefaultHeartbeatTicks * heartbeatBackoff {
		s.tick()
	}
	if c.start[k] != 11 {
		t.Errorf("idle sender: start %d, want 11", c.start[k])
	}
	s.send(a, 1, true)
	s.settle(100)
	if c.cursor[k] != 12 || c.gaps != 0 {
		t.Errorf("cursor %d gaps %d; want 12, 0", c.cursor[k], c.gaps)
	}
}

// TestJoinMidStreamLossy: receivers join a busy group at 20% loss; each
// gets everything from its start, which is no later than the sender's
// position when it first heard from the receiver (the simulation's
// oracle) and not much earlier than its join.
func TestJoinMidStreamLossy(t *testing.T) {
	seeds := seedCount(10, 10)
	for seed := range uint64(seeds) {
		s := newSim(t, seed, simConfig{loss: 0.2, maxDelay: 2})
		a := s.addNode(1)
		s.addNode(1)
		late := []*simNode{s.addNode(), s.addNode()}
		for i := range 120 {
			s.send(a, 1, true)
			if i == 30 || i == 31 {
				s.join(late[i-30], 1)
			}
			s.tick()
		}
		s.settle(5000)
		k := streamKey{a.id, 1}
		for _, n := range late {
			if n.start[k] < 20 || n.start[k] > 40 || n.cursor[k] != 121 || n.gaps != 0 {
				t.Errorf("seed %d node %d: start %d cursor %d gaps %d", seed, n.id, n.start[k], n.cursor[k], n.gaps)
			}
		}
	}
}

// TestHandshakeRetries: lost HELLOs and SYNCs are retried.
func TestHandshakeRetries(t *testing.T) {
	t.Run("lost HELLOs", func(t *testing.T) {
		s := newSim(t, 1, simConfig{})
		a := s.addNode(1)
		s.warmUp()
		bid := s.nextID()
		lost := 0
		s.drop = func(from, to *simNode, h header) bool {
			if from.id == bid && h.kind == kindHello && lost < 3 {
				lost++
				return true
			}
			return false
		}
		b := s.addNode(1)
		s.warmUp()
		if lost != 3 {
			t.Fatalf("%d HELLOs lost", lost)
		}
		if want := []Start{{a.id, 1, 1, 1, 1}}; !slices.Equal(b.startLog, want) {
			t.Errorf("starts %+v, want %+v", b.startLog, want)
		}
		if b.e.Stats().Hellos != joinHellos || b.e.Stats().SyncRequests != 0 {
			t.Errorf("stats %+v", b.e.Stats())
		}
	})
	t.Run("lost SYNCs", func(t *testing.T) {
		s := newSim(t, 1, simConfig{})
		a := s.addNode(1)
		s.warmUp()
		bid := s.nextID()
		s.drop = func(from, to *simNode, h header) bool {
			return from == a && to.id == bid && h.kind == kindSync && s.now < 100
		}
		b := s.addNode(1)
		s.warmUp()
		for range 5 {
			s.send(a, 1, true)
			s.tick()
		}
		if len(b.startLog) != 0 || b.e.Stats().BeforeStart != 0 {
			t.Fatalf("started with every SYNC lost: %+v", b.startLog)
		}
		s.settle(500)
		k := streamKey{a.id, 1}
		if b.start[k] != 1 || b.cursor[k] != 6 || b.e.Stats().SyncRequests == 0 {
			t.Errorf("start %d cursor %d, %d requests", b.start[k], b.cursor[k], b.e.Stats().SyncRequests)
		}
	})
	t.Run("every HELLO lost", func(t *testing.T) {
		// The documented limit: the sender learns of the receiver only
		// from its SYNC request, which echoes the first position it saw.
		s := newSim(t, 1, simConfig{})
		a := s.addNode(1)
		s.warmUp()
		bid := s.nextID()
		joinEnd := s.now + joinWindow(1)
		s.drop = func(from, to *simNode, h header) bool {
			return from.id == bid && h.kind == kindHello && s.now <= joinEnd ||
				from == a && to.id == bid && h.kind == kindData && h.seq <= 2
		}
		b := s.addNode(1)
		s.warmUp()
		for range 5 {
			s.send(a, 1, true)
		}
		s.settle(500)
		checkStarts(t, b, a, []Start{{a.id, 1, 1, 3, 3}}, 6)
	})
}

// TestLeaveRejoin: leaving discards a stream; a re-join is a new join
// with a new start, and SYNCs of the old join do not start it.
func TestLeaveRejoin(t *testing.T) {
	s := newSim(t, 1, simConfig{})
	a, b := s.addNode(1), s.addNode(1)
	s.warmUp()
	for range 5 {
		s.send(a, 1, true)
	}
	s.settle(100)
	s.leave(b, 1)
	for range 3 {
		s.send(a, 1, true)
	}
	s.tick()
	// The SYNC a sent for b's first join, replayed after the re-join.
	oldSync := ctrlFrame("sim", kindSync, a.id, a.e.groups[1].nonce, 1, uint64(b.id), 1, 1, 0, 0, 1, 8, 0, 0, 0)
	s.join(b, 1)
	if err := b.e.Step(1, oldSync); err != nil {
		t.Fatal(err)
	}
	if b.e.HasReady() && len(b.e.Ready().Starts) != 0 {
		t.Fatal("a SYNC of the first join started the stream")
	}
	s.process(b)
	s.tick()
	for range 2 {
		s.send(a, 1, true)
	}
	s.settle(100)
	checkStarts(t, b, a, []Start{{a.id, 1, 1, 1, 1}, {a.id, 1, 1, 9, 9}}, 11)
	if r := a.e.groups[1].rcv[b.id]; r == nil || r.nonce != b.e.groups[1].nonce || r.start != 8 {
		t.Errorf("record %+v", r)
	}
}

// TestNewSenderCrossesReceiverHello reproduces a race seen in package
// peer: receiver R is a member of g; a new sender S joins g and sends its
// first message at once; one of R's join HELLO retries, sent before R
// heard anything of S (so echoing nothing), reaches S after that message,
// and R gets the message before any SYNC. S must not make R start after
// it: R was a member before S joined, so it is owed everything S sent
// after its join.
func TestNewSenderCrossesReceiverHello(t *testing.T) {
	for _, order := range []string{"HELLO then SYNC", "SYNC then HELLO", "HELLO, SYNC lost"} {
		t.Run(order, func(t *testing.T) {
			r := newEP(t, 2, 1, nil, 1)
			take(r) // R's first join HELLO: nobody else is there yet
			s := newEP(t, 1, 1, nil, 1)
			join := take(s).Out[0].Frame // S's join HELLO, at position 0
			data := sendFrame(t, s, 1, "first", true)
			var rHello []byte // R's next join HELLO retry
			for rHello == nil {
				r.Tick()
				if out := take(r).Out; len(out) > 0 {
					rHello = out[0].Frame
				}
			}
			mustStep(t, s, 1, rHello) // S learns of R after sending seq 1
			rd := take(s)
			if !slices.Equal(kinds(rd.Out), []kind{kindSync}) {
				t.Fatalf("S answered %v", kinds(rd.Out))
			}
			sync := rd.Out[0].Frame
			if y := parseSync(sync[HeaderLen:]); y.start != 0 || s.groups[1].rcv[2].start != 0 {
				t.Errorf("S recorded R at %d and told it %d, want 0: its join is being announced", s.groups[1].rcv[2].start, y.start)
			}

			var got Ready
			step := func(f []byte) {
				t.Helper()
				mustStep(t, r, 1, f)
				rd := take(r)
				got.Starts = append(got.Starts, rd.Starts...)
				got.Deliver = append(got.Deliver, rd.Deliver...)
				got.Gaps = append(got.Gaps, rd.Gaps...)
				got.Out = append(got.Out, rd.Out...)
			}
			step(data) // before any SYNC: held
			if len(got.Starts)+len(got.Deliver) != 0 {
				t.Fatalf("started before the handshake: %+v", got)
			}
			switch order {
			case "HELLO then SYNC":
				step(join)
				if len(got.Starts) != 1 || len(got.Deliver) != 1 {
					t.Errorf("the join HELLO did not start the stream: %+v", got)
				}
				step(sync)
			case "SYNC then HELLO": // the first join HELLO was delayed
				step(sync)
				step(join)
			case "HELLO, SYNC lost":
				step(join)
			}
			want := []Start{{From: 1, Incarnation: 1, Group: 1, Seq: 1, Fresh: 1}}
			if !slices.Equal(got.Starts, want) || !slices.Equal(seqs(got.Deliver), []uint64{1}) || len(got.Gaps) != 0 {
				t.Errorf("starts %+v, delivered %v, gaps %+v; want %+v, [1], none", got.Starts, seqs(got.Deliver), got.Gaps, want)
			}
			if st := r.Stats(); st.BeforeStart != 0 || st.SyncRequests != 0 {
				t.Errorf("%d messages before the start, %d SYNC requests", st.BeforeStart, st.SyncRequests)
			}
			// A later SYNC with a later start does not move the stream.
			step(syncFrame(1, s.groups[1].nonce, 1, syncBody{target: 2, inc: 1, nonce: r.groups[1].nonce, echo: 0, start: 1, low: 1, hw: 1}))
			if len(got.Starts) != 1 {
				t.Errorf("restarted: %+v", got.Starts)
			}
			// R's answers reach S: its record does not change.
			for _, o := range got.Out {
				mustStep(t, s, 1, o.Frame)
			}
			if rec := s.groups[1].rcv[2]; rec.start != 0 {
				t.Errorf("S's record of R is %d after its answers, want 0", rec.start)
			}
			mustStep(t, r, 1, sendFrame(t, s, 1, "second", true))
			if d := seqs(take(r).Deliver); !slices.Equal(d, []uint64{2}) {
				t.Errorf("then delivered %v", d)
			}
		})
	}
}

// TestJoinHelloStartsStream: a join HELLO starts a stream that has not
// started at the lowest position of the sender the receiver saw vouched
// for (the HELLO's or lower), which is what its answer echoes and so what
// the sender records; a SYNC request or a join HELLO of a started stream
// starts nothing.
func TestJoinHelloStartsStream(t *testing.T) {
	r := newEP(t, 2, 1, nil, 1)
	handshake(t, r)
	data := func(seq uint64) []byte { return dataFrame(1, seq, 1, "x") }
	mustStep(t, r, 1, data(4)) // vouches for 3
	mustStep(t, r, 1, data(7))
	mustStep(t, r, 1, helloFrame(1, 1, 1, 9, 5, 1, 0)) // a SYNC request to another node
	if rd := take(r); len(rd.Starts) != 0 {
		t.Fatalf("a SYNC request started %+v", rd.Starts)
	}
	mustStep(t, r, 1, helloFrame(1, 2, 1, 6, 0, 0, 0)) // a join HELLO at position 6
	rd := take(r)
	if want := []Start{{1, 1, 1, 4, 4}}; !slices.Equal(rd.Starts, want) || !slices.Equal(seqs(rd.Deliver), []uint64{4}) {
		t.Errorf("starts %+v, delivered %v; want %+v, [4]", rd.Starts, seqs(rd.Deliver), want)
	}
	if !slices.Equal(kinds(rd.Out), []kind{kindSync}) {
		t.Fatalf("answer %v", kinds(rd.Out))
	}
	if y := parseSync(rd.Out[0].Frame[HeaderLen:]); y.target != 1 || y.echo != 3 {
		t.Errorf("answer %+v: want it to echo 3", y)
	}
	s := newEP(t, 1, 1, nil, 1)
	take(s)
	endJoin(s.groups[1])
	for range 9 {
		s.Send(1, nil, true)
	}
	take(s)
	mustStep(t, s, 1, rd.Out[0].Frame)
	if rec := s.groups[1].rcv[2]; rec == nil || rec.start != 3 {
		t.Errorf("the sender recorded %+v, want a start after 3", rec)
	}
	// 5 and 6 are NAKed; a later join HELLO starts nothing.
	for range 2 * DefaultNakDelayTicks {
		r.Tick()
	}
	if ks := kinds(take(r).Out); !slices.Equal(ks, []kind{kindNAK}) {
		t.Errorf("sent %v, want a NAK", ks)
	}
	mustStep(t, r, 1, helloFrame(1, 3, 1, 8, 0, 0, 0))
	if rd := take(r); len(rd.Starts) != 0 {
		t.Errorf("restarted %+v", rd.Starts)
	}
}

// TestLateSenderSendsAtOnce: members join a group; a sender joins it a
// little later, while their join HELLOs are still going out, and sends at
// once, over a lossy, reordering channel. Every member that was joined
// before the sender and heard one of its join HELLOs (all but the
// documented limit, which the oracle also checks) gets every message from
// 1, without a gap.
func TestLateSenderSendsAtOnce(t *testing.T) {
	seeds := seedCount(200, 40)
	unheard := 0
	for seed := *seedFlag; seed < *seedFlag+uint64(seeds); seed++ {
		r := rand.New(rand.NewPCG(seed, 2))
		d := 1 + r.IntN(2)
		s := newSim(t, seed, simConfig{
			loss:     []float64{0, 0.1, 0.3}[seed%3],
			dup:      []float64{0, 0.1}[r.IntN(2)],
			maxDelay: r.IntN(4),
			tune:     func(c *Config) { c.NakDelayTicks = d },
		})
		var rcvs []*simNode
		for range 1 + r.IntN(3) {
			rcvs = append(rcvs, s.addNode(1))
			for range r.IntN(3 * d) {
				s.tick()
			}
		}
		for range r.IntN(joinSpan*d + 2) {
			s.tick()
		}
		snd := s.addNode(1)
		for range 1 + r.IntN(3) {
			s.send(snd, 1, true)
		}
		for range 20 {
			if r.IntN(2) == 0 {
				s.send(snd, 1, true)
			}
			s.tick()
		}
		s.cfg.loss = 0
		s.settle(5000)
		k := streamKey{snd.id, 1}
		for _, n := range rcvs {
			if !n.joinHellos[k][snd.joined[1].nonce] {
				unheard++ // every join HELLO lost: the documented limit
				continue
			}
			if n.start[k] != 1 || n.cursor[k] != s.sent[k]+1 || n.gaps != 0 {
				t.Errorf("seed %d node %d: start %d cursor %d gaps %d; want 1, %d, 0", seed, n.id, n.start[k], n.cursor[k], n.gaps, s.sent[k]+1)
			}
		}
	}
	t.Logf("%d receivers heard none of the sender's join HELLOs", unheard)
}

// TestFreshAfterSendersRecentJoin: a receiver that joins a group while a
// sender's join of it is still announced is owed everything after the
// sender's join position (it may have been a member before; neither can
// tell from the handshake), but the Start tells it which of those the
// sender sent before the receiver came: what was sent before it joined
// is below Start.Fresh, what the sender sends once it knows of the join
// is at or above it, also when the receiver starts from a retry of the
// sender's join HELLO, at any loss. A receiver that was a member before
// the sender joined counts everything after the sender's join position
// as fresh.
func TestFreshAfterSendersRecentJoin(t *testing.T) {
	owedHistory := 0
	seeds := seedCount(60, 12)
	for seed := range uint64(seeds) {
		r := rand.New(rand.NewPCG(seed, 5))
		s := newSim(t, seed, simConfig{loss: []float64{0, 0.2, 0.4}[seed%3], maxDelay: r.IntN(2)})
		d := 1 // the sim's NakDelayTicks
		early := s.addNode(1)
		snd := s.addNode(1)
		k := streamKey{snd.id, 1}
		// snd sends while its join is announced (30×NakDelayTicks).
		for range 3 + r.IntN(5) {
			s.send(snd, 1, true)
			s.tick()
		}
		before := s.sent[k]
		for range r.IntN(8) {
			s.tick() // no message: the receiver's join comes later still
		}
		if s.now >= announceSpan*d {
			t.Fatalf("seed %d: the receiver would join after the announcement", seed)
		}
		late := s.addNode(1)
		for range 10 {
			s.send(snd, 1, true)
			s.tick()
		}
		s.cfg.loss = 0
		s.settle(5000)
		st := late.start[k]
		fresh := late.fresh[k]
		if st <= before {
			owedHistory++ // the case at hand: owed what was sent before it came
		}
		if fresh <= before {
			t.Errorf("seed %d: fresh from %d, but the sender sent 1..%d before the receiver joined", seed, fresh, before)
		}
		if early.fresh[k] != early.start[k] {
			t.Errorf("seed %d: a member before the sender joined: fresh %d, start %d", seed, early.fresh[k], early.start[k])
		}
		if late.cursor[k] != s.sent[k]+1 || late.gaps != 0 {
			t.Errorf("seed %d: the late receiver delivered up to %d of %d, %d gaps", seed, late.cursor[k]-1, s.sent[k], late.gaps)
		}
	}
	if owedHistory < seeds/2 {
		t.Errorf("only %d of %d late receivers were owed history", owedHistory, seeds)
	}
}

// TestFreshByClock: with a Config.Clock the join handshake tells a
// sender that joined a group just before a receiver, in the same tick,
// from one that joined just after it: what the first sent before the
// receiver came is history (below Start.Fresh), while a receiver that
// was a member before the second joined counts all it sends as fresh.
// By ticks alone the first case cannot be told, and what was sent in
// that tick counts as fresh.
func TestFreshByClock(t *testing.T) {
	for _, tc := range []struct {
		name         string
		clock        bool
		senderFirst  bool
		start, fresh uint64
	}{
		{"sender first", true, true, 1, 4},
		{"sender first, ticks", false, true, 1, 1},
		{"receiver first", true, false, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var us int64
			cfg := simConfig{}
			if tc.clock {
				cfg.tune = func(c *Config) { c.Clock = func() int64 { return us } }
			}
			s := newSim(t, 1, cfg)
			var snd, rcv *simNode
			if tc.senderFirst {
				snd = s.addNode(1)
				for range 3 {
					s.send(snd, 1, true)
				}
				s.deliverDue()
				us += 1000
				rcv = s.addNode(1)
			} else {
				rcv = s.addNode(1)
				s.deliverDue()
				us += 1000
				snd = s.addNode(1)
				for range 3 {
					s.send(snd, 1, true)
				}
			}
			if s.now != 0 {
				t.Fatalf("the joins are %d ticks apart", s.now)
			}
			for range 3 {
				s.send(snd, 1, true)
				s.tick()
			}
			s.settle(1000)
			k := streamKey{snd.id, 1}
			if rcv.start[k] != tc.start || rcv.fresh[k] != tc.fresh {
				t.Errorf("start %d, fresh %d; want %d, %d", rcv.start[k], rcv.fresh[k], tc.start, tc.fresh)
			}
			if rcv.cursor[k] != 7 || rcv.gaps != 0 {
				t.Errorf("delivered up to %d, %d gaps", rcv.cursor[k]-1, rcv.gaps)
			}
		})
	}
}

// TestListenStartsAnew: Listen is a new join of the group as a receiver:
// the stream started before starts again, and what the sender sent
// before counts as history (below Start.Fresh; owed all the same while
// the sender's own join is announced), what it sends after is fresh.
// As a sender the listener keeps its join: its receivers go on.
func TestListenStartsAnew(t *testing.T) {
	s := newSim(t, 3, simConfig{})
	snd := s.addNode(1)
	rcv := s.addNode(1)
	k := streamKey{snd.id, 1}
	for range 3 {
		s.send(snd, 1, true)
		s.send(rcv, 1, true)
		s.tick()
	}
	s.settle(100)
	if rcv.cursor[k] != 4 {
		t.Fatalf("delivered up to %d before the Listen", rcv.cursor[k]-1)
	}
	s.listen(rcv, 1)
	for range 3 {
		s.send(snd, 1, true)
		s.send(rcv, 1, true)
		s.tick()
	}
	s.settle(1000)
	if rcv.fresh[k] != 4 || rcv.cursor[k] != 7 || rcv.gaps != 0 {
		t.Errorf("after the Listen: start %d, fresh %d, delivered up to %d, %d gaps; want fresh 4, up to 6", rcv.start[k], rcv.fresh[k], rcv.cursor[k]-1, rcv.gaps)
	}
	if got := snd.cursor[streamKey{rcv.id, 1}]; got != 7 || len(snd.startLog) != 1 {
		t.Errorf("the listener's own stream: delivered up to %d, starts %+v", got-1, snd.startLog)
	}
}
