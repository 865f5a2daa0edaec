package reliable

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"testing"

	"github.com/meshrti/meshrti/peer/transport"
)

// pair returns a sender (node 1) and a receiver (node 2) joined to group
// 1 after their handshake, both configured by tune.
func pair(t *testing.T, tune func(*Config)) (s, r *Endpoint) {
	t.Helper()
	mk := func(id NodeID) *Endpoint {
		c := Config{Self: id, Incarnation: 1, Federation: "test"}
		if tune != nil {
			tune(&c)
		}
		e, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		e.Join(1)
		return e
	}
	s, r = mk(1), mk(2)
	handshake(t, s, r)
	return s, r
}

// pump ticks r and passes frames between s and r losslessly for n ticks;
// it returns what r reported.
func pump(t *testing.T, s, r *Endpoint, n int) Ready {
	t.Helper()
	var got Ready
	for range n {
		r.Tick()
		rd := take(r)
		got.Deliver = append(got.Deliver, rd.Deliver...)
		got.Gaps = append(got.Gaps, rd.Gaps...)
		for _, o := range rd.Out {
			mustStep(t, s, 1, o.Frame)
		}
		for _, o := range take(s).Out {
			mustStep(t, r, 1, o.Frame)
		}
	}
	rd := take(r)
	got.Deliver = append(got.Deliver, rd.Deliver...)
	got.Gaps = append(got.Gaps, rd.Gaps...)
	return got
}

// TestBundling: with Config.Bundle, messages wait in an open frame until
// Flush, Tick or a full frame; one frame carries many, delivered in order.
func TestBundling(t *testing.T) {
	s, r := pair(t, func(c *Config) { c.Bundle = true })
	for i := range 10 {
		if _, err := s.Send(1, []byte{byte(i)}, true); err != nil {
			t.Fatal(err)
		}
	}
	if s.HasReady() {
		t.Fatal("bundled messages sent before Flush")
	}
	s.Flush()
	out := take(s).Out
	if len(out) != 1 {
		t.Fatalf("10 small messages took %d frames", len(out))
	}
	mustStep(t, r, 1, out[0].Frame)
	rd := take(r)
	if got := seqs(rd.Deliver); !slices.Equal(got, []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}) {
		t.Fatalf("delivered %v", got)
	}
	for i, d := range rd.Deliver {
		if !bytes.Equal(d.Payload, []byte{byte(i)}) {
			t.Errorf("message %d carries %v", i+1, d.Payload)
		}
	}

	// A full frame is sealed at once; the rest waits.
	per := s.MaxPayload() / 103 // 100 bytes and 3 of entry overhead... at most
	for range per + 1 {
		s.Send(1, make([]byte, 100), true)
	}
	if out := take(s).Out; len(out) != 1 || len(out[0].Frame) > s.cfg.MaxFrame {
		t.Fatalf("a full bundle: %d frames", len(out))
	}
	s.Tick() // the timer seals the rest (and sends the tail probe)
	data := 0
	for _, o := range take(s).Out {
		if h, _ := parseHeader(o.Frame); h.kind == kindData {
			data++
		}
	}
	if data != 1 {
		t.Fatalf("Tick sealed %d data frames", data)
	}
	if st := s.Stats(); st.DataFrames != 3 || st.Sent != uint64(11+per) {
		t.Errorf("stats %+v", st)
	}

	// Best-effort messages bundle apart from reliable ones.
	s.Send(1, []byte("r"), true)
	s.Send(1, []byte("b"), false)
	s.Send(1, []byte("r2"), true)
	s.Flush()
	if ks := kinds(take(s).Out); !slices.Equal(ks, []kind{kindData, kindBestEffort}) {
		t.Errorf("frames %v", ks)
	}
}

// TestFragmentation: a message larger than a frame goes as fragments and
// is delivered whole; a lost fragment is repaired.
func TestFragmentation(t *testing.T) {
	s, r := pair(t, nil)
	msg := make([]byte, 5000)
	for i := range msg {
		msg[i] = byte(i * 7)
	}
	seq, err := s.Send(1, msg, true)
	if err != nil {
		t.Fatal(err)
	}
	out := take(s).Out
	if len(out) != 4 || seq != 4 || s.Stats().Fragments != 4 {
		t.Fatalf("5000 bytes: %d frames, last seq %d, stats %+v", len(out), seq, s.Stats())
	}
	for i, o := range out {
		if i != 2 { // the third fragment is lost
			mustStep(t, r, 1, o.Frame)
		}
	}
	pre := take(r)
	if len(pre.Deliver) != 0 {
		t.Fatalf("delivered before the message was whole: %+v", pre.Deliver)
	}
	rd := pump(t, s, r, 10)
	if len(rd.Deliver) != 1 || rd.Deliver[0].Seq != 4 || !bytes.Equal(rd.Deliver[0].Payload, msg) || len(rd.Gaps) != 0 {
		t.Fatalf("after repair: %d deliveries, gaps %+v", len(rd.Deliver), rd.Gaps)
	}
	if r.Stats().Reassembled != 1 {
		t.Errorf("stats %+v", r.Stats())
	}

	// Best effort: reassembled when every fragment arrives in order,
	// dropped (and counted) when one is missing.
	s.Send(1, msg, false)
	for _, o := range take(s).Out {
		mustStep(t, r, 1, o.Frame)
	}
	s.Send(1, msg, false)
	for i, o := range take(s).Out {
		if i != 1 {
			mustStep(t, r, 1, o.Frame)
		}
	}
	rd = take(r)
	if len(rd.Deliver) != 1 || !bytes.Equal(rd.Deliver[0].Payload, msg) || rd.Deliver[0].Reliable {
		t.Fatalf("best effort: %d deliveries", len(rd.Deliver))
	}
	if st := r.Stats(); st.Incomplete != 1 || st.Reassembled != 2 {
		t.Errorf("stats %+v", st)
	}
}

// TestReassemblyLost: a fragmented message that can never complete is
// reported as one gap with the messages lost with it, its memory freed;
// a receiver's MaxMessage bounds what it reassembles.
func TestReassemblyLost(t *testing.T) {
	s, r := pair(t, func(c *Config) { c.AckTimeoutTicks, c.RetransmitBuffer = 1, 1 })
	big := make([]byte, 3000)
	s.Send(1, []byte("before"), true) // 1
	s.Send(1, big, true)              // 2..4
	s.Send(1, []byte("after"), true)  // 5
	out := take(s).Out
	for i, o := range out {
		if i != 2 { // fragment 3 is lost
			mustStep(t, r, 1, o.Frame)
		}
	}
	pre := take(r)
	for range 3 { // the receiver stalls; the sender lets go of 3
		s.Tick()
		take(s)
	}
	rd := pump(t, s, r, 10)
	rd.Deliver = append(pre.Deliver, rd.Deliver...)
	if got := seqs(rd.Deliver); !slices.Equal(got, []uint64{1, 5}) {
		t.Errorf("delivered %v", got)
	}
	if want := []Gap{{1, 1, 1, 2, 4}}; !slices.Equal(rd.Gaps, want) {
		t.Errorf("gaps %+v, want %+v", rd.Gaps, want)
	}
	if st := r.Stats(); st.Incomplete != 1 || st.GapMessages != 3 {
		t.Errorf("stats %+v", st)
	}
	for _, st := range r.stream {
		if st.frag.active || st.frag.buf != nil {
			t.Error("reassembly memory kept")
		}
	}

	// A receiver with a smaller MaxMessage refuses the message as a gap.
	s2, r2 := pair(t, nil)
	r2.cfg.MaxMessage = 2000
	s2.Send(1, big, true)
	s2.Send(1, []byte("next"), true)
	for _, o := range take(s2).Out {
		mustStep(t, r2, 1, o.Frame)
	}
	rd = take(r2)
	if got := seqs(rd.Deliver); !slices.Equal(got, []uint64{4}) || !slices.Equal(rd.Gaps, []Gap{{1, 1, 1, 1, 3}}) {
		t.Errorf("over MaxMessage: delivered %v, gaps %+v", got, rd.Gaps)
	}

	// The sender's own bound.
	if _, err := s2.Send(1, make([]byte, DefaultMaxMessage+1), true); !errors.Is(err, ErrTooLarge) {
		t.Errorf("err %v", err)
	}
}

// TestFlowControl: a sender holds what its receivers have not
// acknowledged, reports Blocked at Window, and opens again as ACKs come;
// a stalled or departed receiver stops holding the window.
func TestFlowControl(t *testing.T) {
	s, r := pair(t, func(c *Config) { c.Window, c.RetransmitBuffer, c.AckTimeoutTicks = 8, 2, 50 })
	var frames [][]byte
	for i := range 8 {
		if s.Blocked(1) {
			t.Fatalf("blocked after %d", i)
		}
		frames = append(frames, sendFrame(t, s, 1, "m", true))
	}
	if m, b := s.Backlog(1); m != 8 || b != 8 || !s.Blocked(1) {
		t.Fatalf("backlog %d msgs %d bytes, blocked %v", m, b, s.Blocked(1))
	}
	// Blocked asked the receivers where they are.
	if ks := kinds(take(s).Out); !slices.Equal(ks, []kind{kindHeartbeat}) {
		t.Fatalf("blocked sent %v", ks)
	}
	if s.Blocked(1); s.HasReady() {
		t.Error("a second probe within NakDelayTicks")
	}
	// The receiver acknowledges every Window/4 = 2 deliveries.
	var acks int
	for _, f := range frames[:4] {
		mustStep(t, r, 1, f)
		for _, o := range take(r).Out {
			acks++
			mustStep(t, s, 1, o.Frame)
		}
	}
	if acks != 2 || s.Blocked(1) {
		t.Fatalf("%d ACKs, blocked %v", acks, s.Blocked(1))
	}
	if m, _ := s.Backlog(1); m != 4 {
		t.Errorf("backlog %d, want 4", m)
	}
	if held := len(s.sends[1].held) - s.sends[1].heldHead; held != 4+2 {
		t.Errorf("holding %d messages, want 4 unacknowledged and 2 of history", held)
	}

	// The receiver falls silent: after AckTimeoutTicks it stalls.
	for range 60 {
		s.Tick()
	}
	take(s)
	if st := s.Stats(); st.ReceiversStalled != 1 || s.Blocked(1) {
		t.Fatalf("stats %+v", st)
	}
	if m, _ := s.Backlog(1); m != 0 {
		t.Errorf("backlog %d after the stall", m)
	}
	// It comes back: its ACK holds the window again.
	for _, f := range frames[4:] {
		mustStep(t, r, 1, f)
	}
	s.Tick()
	for _, o := range take(s).Out { // the heartbeat it answers
		mustStep(t, r, 1, o.Frame)
	}
	for _, o := range take(r).Out {
		mustStep(t, s, 1, o.Frame)
	}
	if st := s.Stats(); st.ReceiversResumed != 1 {
		t.Errorf("stats %+v", st)
	}
	sendFrame(t, s, 1, "n", true)
	if m, _ := s.Backlog(1); m != 1 {
		t.Errorf("backlog %d, want 1", m)
	}
	// It leaves: the window is free.
	r.Leave(1)
	for _, o := range take(r).Out {
		mustStep(t, s, 1, o.Frame)
	}
	if m, _ := s.Backlog(1); m != 0 {
		t.Errorf("backlog %d after LEAVE", m)
	}
}

// TestBacklogOpenBundle: messages still in an open bundle count in the
// backlog, alone (no receiver known) and with a receiver; an ACK beyond
// what was sealed is ignored.
func TestBacklogOpenBundle(t *testing.T) {
	lone := newEP(t, 1, 1, nil)
	lone.cfg.Bundle = true
	lone.Send(5, []byte("abc"), true)
	if m, b := lone.Backlog(5); m != 1 || b != 3 || lone.Blocked(5) {
		t.Errorf("alone: backlog %d %d", m, b)
	}
	s, r := pair(t, func(c *Config) { c.Bundle = true })
	s.Send(1, []byte("abc"), true)
	if m, b := s.Backlog(1); m != 1 || b != 3 {
		t.Errorf("backlog %d %d", m, b)
	}
	// r claims to have everything through 7: only what was sealed counts.
	ack := ctrlFrame("test", kindAck, 2, 0, 1)
	ack = append(ack[:len(ack)-crcLen], 0, 1)
	ack = binary.BigEndian.AppendUint64(ack, 1)
	ack = binary.BigEndian.AppendUint64(ack, 1)
	ack = withCRC(binary.BigEndian.AppendUint64(ack, 7))
	mustStep(t, s, 1, ack)
	if m, _ := s.Backlog(1); m != 1 {
		t.Errorf("backlog %d after a premature ACK", m)
	}
	_ = r
}

// TestKeyRotation: keys rotate in three steps without losing a frame,
// and a retired key is refused.
func TestKeyRotation(t *testing.T) {
	a, b := Key{ID: 1, Secret: testKey}, Key{ID: 2, Secret: []byte("a second federation key, 32 byte")}
	s, r := pair(t, func(c *Config) { c.Keys = []Key{a} })
	old := sendFrame(t, s, 1, "1", true)
	mustStep(t, r, 1, old)
	for _, e := range []*Endpoint{s, r} { // step 1: accept the new key
		if err := e.SetKeys([]Key{a, b}); err != nil {
			t.Fatal(err)
		}
	}
	mustStep(t, r, 1, sendFrame(t, s, 1, "2", true))
	if err := s.SetKeys([]Key{b, a}); err != nil { // step 2: send with it
		t.Fatal(err)
	}
	f3 := sendFrame(t, s, 1, "3", true)
	if f3[len(f3)-1-counterLen] != b.ID {
		t.Fatalf("sealed with key %d", f3[len(f3)-1-counterLen])
	}
	mustStep(t, r, 1, f3)
	for _, e := range []*Endpoint{s, r} { // step 3: retire the old key
		if err := e.SetKeys([]Key{b}); err != nil {
			t.Fatal(err)
		}
	}
	mustStep(t, r, 1, sendFrame(t, s, 1, "4", true))
	if got := seqs(take(r).Deliver); !slices.Equal(got, []uint64{1, 2, 3, 4}) {
		t.Errorf("delivered %v", got)
	}
	// A frame under the retired key is refused, even fresh.
	old2 := sealAs(t, dataFrame(1, 5, 1, "x")[:HeaderLen+3], testKey, a.ID, 1<<40)
	if err := r.Step(1, old2); !errors.Is(err, ErrAuth) {
		t.Errorf("retired key: %v", err)
	}
	if err := s.SetKeys(nil); err == nil {
		t.Error("SetKeys(nil) accepted")
	}
	if err := s.SetKeys([]Key{{ID: 3, Secret: []byte("short")}}); err == nil {
		t.Error("short key accepted")
	}
	if err := s.SetKeys([]Key{b, b}); err == nil {
		t.Error("duplicate key id accepted")
	}
	unkeyed := newEP(t, 9, 1, nil)
	if err := unkeyed.SetKeys([]Key{b}); err == nil {
		t.Error("keys given to an unkeyed endpoint")
	}
}

// TestFaultsAcceptance: 20% loss, 10% duplication, reordering and
// corruption on every link, with bundles, fragments and best-effort
// messages, keyed and not: every reliable message exactly once and in
// order, no corrupted value delivered (the simulation compares every
// payload byte), and the counters show that the faults happened and were
// repaired.
func TestFaultsAcceptance(t *testing.T) {
	for _, key := range [][]byte{nil, testKey} {
		s := newSim(t, 7, simConfig{
			loss: 0.2, dup: 0.1, corrupt: 0.05, maxDelay: 3, key: key,
			sizes: []int{20, 100, 1000, 5000},
			tune:  func(c *Config) { c.Bundle = true },
		})
		groups := []transport.Group{1, 2}
		for range 4 {
			s.addNode(groups...)
		}
		s.warmUp()
		s.runWorkload(600, 3, groups, 0.1, 0)
		s.settle(5000)
		if !s.complete() {
			t.Fatal("not every stream complete")
		}
		st := s.totalStats()
		dropped := uint64(0)
		for _, n := range s.nodes {
			ns := n.e.Stats()
			dropped += ns.BadChecksum + ns.AuthFailed
		}
		t.Logf("keyed %v: %d corrupted copies, %d dropped for it; stats %+v", key != nil, s.corrupted, dropped, st)
		if s.totalGaps() != 0 {
			t.Errorf("%d gaps", s.totalGaps())
		}
		if st.NAKs == 0 || st.Retransmits == 0 || st.Duplicates == 0 || s.corrupted == 0 || dropped == 0 {
			t.Errorf("the faults left no trace: %d corrupted, %d dropped, stats %+v", s.corrupted, dropped, st)
		}
	}
}

// TestWithoutFlowControlAcks: on a group both ends exempt from flow
// control, the receiver acknowledges nothing unasked (a stream of many
// messages costs no ACK) and the sender is never blocked; a receiver that
// did not exempt the group acknowledges every ackEvery messages; and an
// exempting receiver still answers a flow-controlled sender, which asks.
func TestWithoutFlowControlAcks(t *testing.T) {
	run := func(senderExempt, receiverExempt bool) (acks uint64, delivered int) {
		t.Helper()
		s, r := pair(t, func(c *Config) { c.Window = 16 })
		if senderExempt {
			s.WithoutFlowControl(1)
		}
		if receiverExempt {
			r.WithoutFlowControl(1)
		}
		acks0 := r.Stats().Acks
		for i := range 200 {
			if senderExempt && s.Blocked(1) {
				t.Fatalf("exempt sender blocked at message %d", i)
			}
			for !senderExempt && s.Blocked(1) {
				delivered += len(pump(t, s, r, 1).Deliver)
			}
			if _, err := s.Send(1, []byte{byte(i)}, true); err != nil {
				t.Fatal(err)
			}
			for _, o := range take(s).Out {
				mustStep(t, r, 1, o.Frame)
			}
			rd := take(r)
			delivered += len(rd.Deliver)
			for _, o := range rd.Out {
				mustStep(t, s, 1, o.Frame)
			}
		}
		delivered += len(pump(t, s, r, 60).Deliver)
		return r.Stats().Acks - acks0, delivered
	}
	if acks, n := run(true, true); acks != 0 || n != 200 {
		t.Errorf("both exempt: %d ACK frames, %d delivered; want 0 and 200", acks, n)
	}
	if acks, n := run(true, false); acks == 0 || n != 200 {
		t.Errorf("receiver not exempt: %d ACK frames, %d delivered; want some and 200", acks, n)
	}
	if acks, n := run(false, true); acks == 0 || n != 200 {
		t.Errorf("flow-controlled sender: %d ACK frames, %d delivered; want some (it asks) and 200", acks, n)
	}
}

// TestTailProbeAsksNoAck: the heartbeat one tick after a burst (the tail
// probe) tells where the stream ends without asking for ACKs, so that a
// burst does not make every receiver answer; the regular heartbeat after
// it asks while the receiver has not acknowledged, and the receiver's
// answer then stops the asking.
func TestTailProbeAsksNoAck(t *testing.T) {
	s, r := pair(t, nil)
	heartbeats := func() (asks []bool) {
		for _, o := range take(s).Out {
			h, err := parseHeader(o.Frame)
			if err != nil {
				t.Fatal(err)
			}
			if h.kind == kindHeartbeat {
				asks = append(asks, h.ackReq)
			}
			mustStep(t, r, 1, o.Frame)
		}
		return asks
	}
	if _, err := s.Send(1, []byte("m"), true); err != nil {
		t.Fatal(err)
	}
	heartbeats() // the data frame
	var seen []bool
	for range DefaultHeartbeatTicks + 1 {
		s.Tick()
		seen = append(seen, heartbeats()...)
	}
	if len(seen) != 2 || seen[0] || !seen[1] {
		t.Fatalf("heartbeats asking for ACKs: %v; want [false true] (the probe, then the regular one)", seen)
	}
	r.Tick() // the receiver answers the ask
	for _, o := range take(r).Out {
		mustStep(t, s, 1, o.Frame)
	}
	seen = nil
	for range 4 * DefaultHeartbeatTicks {
		s.Tick()
		seen = append(seen, heartbeats()...)
	}
	if len(seen) == 0 || slices.Contains(seen, true) {
		t.Fatalf("heartbeats after the ACK: %v; want some, none asking", seen)
	}
}

// TestHeartbeatAsksRarely: while a receiver has not acknowledged, the
// regular heartbeats keep coming but ask for ACKs at most once per
// HeartbeatTicks x heartbeatBackoff ticks.
func TestHeartbeatAsksRarely(t *testing.T) {
	s, _ := pair(t, nil)
	if _, err := s.Send(1, []byte("m"), true); err != nil {
		t.Fatal(err)
	}
	take(s) // the data frame; the receiver never hears it, nor answers
	every := int64(DefaultHeartbeatTicks * heartbeatBackoff)
	var beats, asks []int64
	for tick := int64(1); tick <= 3*every; tick++ {
		s.Tick()
		for _, o := range take(s).Out {
			h, err := parseHeader(o.Frame)
			if err != nil {
				t.Fatal(err)
			}
			if h.kind != kindHeartbeat {
				continue
			}
			beats = append(beats, tick)
			if h.ackReq {
				asks = append(asks, tick)
			}
		}
	}
	if len(asks) < 2 || len(beats) <= len(asks) {
		t.Fatalf("heartbeats at %v, asking at %v: want several heartbeats, at least two asking", beats, asks)
	}
	for i := 1; i < len(asks); i++ {
		if asks[i]-asks[i-1] < every {
			t.Fatalf("asks at %v: two within %d ticks", asks, every)
		}
	}
}
