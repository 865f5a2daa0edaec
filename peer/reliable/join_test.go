package reliable

import (
	"encoding/binary"
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
	return b
}

// helloFrame builds a HELLO of federation "test".
func helloFrame(from NodeID, nonce uint64, g transport.Group, hw uint64, target NodeID, tinc, echo uint64) []byte {
	return ctrlFrame("test", kindHello, from, nonce, g, hw, uint64(target), tinc, echo)
}

// syncFrame builds a SYNC of federation "test".
func syncFrame(from NodeID, nonce uint64, g transport.Group, y syncBody) []byte {
	return ctrlFrame("test", kindSync, from, nonce, g, uint64(y.target), y.inc, y.nonce, y.echo, y.start, y.low, y.hw)
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
	body := rd.Out[0].Frame[HeaderLen:]
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
	if f := take(e).Out[0].Frame; binary.BigEndian.Uint64(f[32:]) != 3 {
		t.Errorf("re-join nonce %d, want 3", binary.BigEndian.Uint64(f[32:]))
	}
}

// TestReceiverRecords exercises a sender's table of receivers.
func TestReceiverRecords(t *testing.T) {
	s := newEP(t, 1, 1, nil, 1)
	take(s)
	s.groups[1].hellos = 0
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
	// A retry: same record; answers rate-limited.
	if rd := step(helloFrame(10, 2, 1, 0, 0, 0, 0)); len(rd.Out) != 0 || rcv[10].start != 2 {
		t.Errorf("retry: %v, start %d", kinds(rd.Out), rcv[10].start)
	}
	for range DefaultNakDelayTicks {
		s.Tick()
	}
	take(s)
	wantSync(step(helloFrame(10, 2, 1, 0, 0, 0, 0)), 10, 2)
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
	if want := []Start{{14, 1, 1, 5}}; !slices.Equal(rd.Starts, want) {
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
	s.groups[1].hellos = 0
	hello := take(r).Out[0].Frame
	r.groups[1].hellos = 0
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
	if want := []Start{{1, 1, 1, 1}}; !slices.Equal(rd.Starts, want) || !slices.Equal(seqs(rd.Deliver), []uint64{1, 2, 3}) {
		t.Errorf("starts %+v, delivered %v", rd.Starts, seqs(rd.Deliver))
	}
	// A second SYNC is ignored.
	mustStep(t, r, 1, syncFrame(1, 1, 1, syncBody{target: 2, inc: 1, nonce: 1, start: 2, low: 1, hw: 3}))
	if rd := take(r); len(rd.Starts) != 0 || len(rd.Deliver) != 0 {
		t.Errorf("second SYNC: %+v", rd)
	}
}

// TestSyncReportsGone: the sender learned of the receiver before sending,
// but no longer holds the first messages when the SYNC finally arrives:
// they are reported as a gap, never skipped.
func TestSyncReportsGone(t *testing.T) {
	s, _ := New(Config{Self: 1, Incarnation: 1, Federation: "test", RetransmitBuffer: 4})
	r := newEP(t, 2, 1, nil, 1)
	s.Join(1)
	take(s)
	s.groups[1].hellos = 0
	mustStep(t, s, 1, take(r).Out[0].Frame) // r's HELLO
	r.groups[1].hellos = 0
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
	if want := []Start{{1, 1, 1, 1}}; !slices.Equal(got.Starts, want) {
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

// TestJoinBeforeFirstMessage: a receiver that joined before the sender's
// first message, once the sender knows of it, gets every message, even
// when the first ones are lost, at 10-30% loss on every frame.
func TestJoinBeforeFirstMessage(t *testing.T) {
	seeds := 60
	if testing.Short() {
		seeds = 15
	}
	if *simSeeds > 0 {
		seeds = *simSeeds
	}
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
// first messages are lost: the receiver's answer to the sender's join
// HELLO echoes the position the HELLO vouched for. (The channel keeps
// order here: had the messages overtaken the HELLO and the receiver told
// the sender about itself meanwhile, its start would be the first message
// it received, as the randomized simulation's oracle allows.)
func TestSenderJoinsAfterReceiver(t *testing.T) {
	seeds := 20
	if *simSeeds > 0 {
		seeds = *simSeeds
	}
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
	k := streamKey{a.id, 1}
	if want := []Start{{a.id, 1, 1, 6}}; !slices.Equal(b.startLog, want) || b.cursor[k] != 11 || b.gaps != 0 {
		t.Errorf("starts %+v cursor %d gaps %d; want %+v, 11, 0", b.startLog, b.cursor[k], b.gaps, want)
	}

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
// gets everything from the start its sender recorded (the simulation's
// oracle), which is no later than the sender's position when it first
// heard from the receiver.
func TestJoinMidStreamLossy(t *testing.T) {
	seeds := 10
	if *simSeeds > 0 {
		seeds = *simSeeds
	}
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
		if want := []Start{{a.id, 1, 1, 1}}; !slices.Equal(b.startLog, want) {
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
			return from == a && to.id == bid && h.kind == kindSync && s.now < 60
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
		k := streamKey{a.id, 1}
		if want := []Start{{a.id, 1, 1, 3}}; !slices.Equal(b.startLog, want) || b.cursor[k] != 6 || b.gaps != 0 {
			t.Errorf("starts %+v cursor %d gaps %d; want %+v, 6, 0", b.startLog, b.cursor[k], b.gaps, want)
		}
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
	oldSync := ctrlFrame("sim", kindSync, a.id, a.e.groups[1].nonce, 1, uint64(b.id), 1, 1, 0, 0, 1, 8)
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
	k := streamKey{a.id, 1}
	if want := []Start{{a.id, 1, 1, 1}, {a.id, 1, 1, 9}}; !slices.Equal(b.startLog, want) || b.cursor[k] != 11 || b.gaps != 0 {
		t.Errorf("starts %+v cursor %d gaps %d; want %+v, 11, 0", b.startLog, b.cursor[k], b.gaps, want)
	}
	if r := a.e.groups[1].rcv[b.id]; r == nil || r.nonce != b.e.groups[1].nonce || r.start != 8 {
		t.Errorf("record %+v", r)
	}
}
