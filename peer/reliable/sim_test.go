package reliable

import (
	"cmp"
	"container/heap"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/meshrti/meshrti/peer/transport"
)

// The simulation below is an in-test multicast channel with loss,
// duplication and delay (hence reordering), counted in ticks. It drives
// Endpoints from one goroutine and checks, as events happen, that every
// reliable stream is delivered exactly once and in order or reported as a
// gap from the Start the endpoint reported, and that each Start owes the
// receiver what it is owed (the oracle below).

type simConfig struct {
	loss, dup float64
	corrupt   float64 // probability that a copy has one bit flipped
	maxDelay  int     // ticks; each copy is delayed uniformly in [0, maxDelay]
	key       []byte
	tune      func(*Config)
	sizes     []int // payload sizes to draw from; nil: 100 bytes
	inbox     bool  // SYNCs and NAKs go to inboxes (Config.Inbox), two nodes to each
}

// simInbox is the inbox of node id when simConfig.inbox is set: nodes
// share them in pairs, so a node also hears some frames for another.
func simInbox(id NodeID) transport.Group { return transport.Group(0x03000000 + uint32(id)/2) }

type simNode struct {
	id     NodeID
	e      *Endpoint
	inbox  transport.Group // 0 without simConfig.inbox
	groups map[transport.Group]bool
	// start is where each stream of the current joins starts: set by
	// Ready.Starts.
	start    map[streamKey]uint64
	startLog []Start
	// joined is the current join of each group joined.
	joined map[transport.Group]simJoin
	// startedIn is, for each started stream, the sender's join of the
	// group that was current when it started (zero when none).
	startedIn map[streamKey]simJoin
	// fresh is each started stream's Start.Fresh.
	fresh map[streamKey]uint64
	// joinHellos holds, for each stream, the nonces of the sender's join
	// HELLOs accepted during the current join of its group.
	joinHellos map[streamKey]map[uint64]bool
	// cursor is the next sequence number expected in each stream's
	// deliveries and gaps.
	cursor map[streamKey]uint64
	beSeen map[streamKey]map[uint64]bool
	gaps   int
	gapLog []Gap
	errs   map[error]int
}

type seqEvent struct {
	from, to uint64
	gap      bool
}

type simFrame struct {
	at        int
	order     int
	from      *simNode
	to        *simNode
	g         transport.Group
	frame     []byte
	corrupted bool
}

// frameHeap orders frames in flight by due tick, then by send order.
type frameHeap []simFrame

func (h frameHeap) Len() int { return len(h) }
func (h frameHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].order < h[j].order
}
func (h frameHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *frameHeap) Push(x any)   { *h = append(*h, x.(simFrame)) }
func (h *frameHeap) Pop() any {
	old := *h
	f := old[len(old)-1]
	*h = old[:len(old)-1]
	return f
}

type sim struct {
	t       testing.TB
	inboxed int // addressed frames sent to inboxes
	seed    uint64
	rng     *rand.Rand
	cfg     simConfig
	nodes   []*simNode
	queue   frameHeap
	order   int
	now     int
	sent    map[streamKey]uint64 // last reliable seq sent per (sender, group)
	beSent  map[streamKey]uint64
	// sentAt is the tick each reliable message was sent at, by sequence
	// (sentAt[k][q-1]).
	sentAt map[streamKey][]int
	joins  int // joins so far, to order them
	// corrupted counts the copies corrupted on the way.
	corrupted int
	// drop, when set, may drop a copy before the channel faults apply.
	drop func(from, to *simNode, h header) bool
	// hook, when set, runs at each tick of runWorkload before the nodes
	// send, with the number of ticks so far.
	hook func(tick int)

	// The oracle. heardAt is a sender's highest sequence when it first
	// accepted a HELLO or SYNC of a receiver's join (during one join of its
	// own); recorded is the start H the sender recorded for that join. A
	// recorded H must not change and must not exceed heardAt. A Start of
	// receiver R's stream from sender S (checked in onStart and
	// onJoinHello) must
	//
	//   - owe R everything S sent after it learned of R's join: Start-1
	//     is at most heardAt of S's current join's record of R's join;
	//   - owe R everything S sent after a join of S that R was a member
	//     before, and that R heard announced: when R's join came before
	//     the join of S current at the Start, and R accepted one of that
	//     join's HELLOs (before or after the Start), Start-1 is at most
	//     S's position at that join;
	//   - not owe R much history: Start-1 is at least what S had sent
	//     before R joined, less the announcement span of S's joins and
	//     the channel's delay (see lowestStart).
	heardAt  map[learnKey]uint64
	recorded map[learnKey]uint64
	// senderJoins are the joins of every node, by (node, group, nonce).
	senderJoins map[senderJoinKey]simJoin
	// historyStarts counts the Starts that owe history (Fresh > Seq).
	historyStarts int
}

// simJoin is one join of a group by a node.
type simJoin struct {
	nonce uint64
	order int    // in the order of every join of the simulation
	heard int    // the same order, of the join's hearing: order, or a later Listen
	tick  int    // sim tick of the join, or of the Listen
	pos   uint64 // the node's highest reliable sequence on the group then
}

type senderJoinKey struct {
	id    NodeID
	g     transport.Group
	nonce uint64
}

// learnKey is (sender S, S's join nonce, group, receiver R, R's nonce).
type learnKey struct {
	s      NodeID
	snonce uint64
	g      transport.Group
	r      NodeID
	rnonce uint64
}

var stepErrors = []error{ErrMalformed, ErrVersion, ErrWrongFederation, ErrWrongGroup, ErrChecksum, ErrAuth, ErrReplay, ErrOwnFrame, ErrStaleIncarnation, ErrNotJoined}

func newSim(t testing.TB, seed uint64, cfg simConfig) *sim {
	return &sim{
		t:           t,
		seed:        seed,
		rng:         rand.New(rand.NewPCG(seed, 0x5eed)),
		cfg:         cfg,
		sent:        make(map[streamKey]uint64),
		beSent:      make(map[streamKey]uint64),
		sentAt:      make(map[streamKey][]int),
		heardAt:     make(map[learnKey]uint64),
		recorded:    make(map[learnKey]uint64),
		senderJoins: make(map[senderJoinKey]simJoin),
	}
}

func (s *sim) fatalf(format string, args ...any) {
	s.t.Helper()
	s.t.Fatalf("seed %d, tick %d: %s", s.seed, s.now, fmt.Sprintf(format, args...))
}

func (s *sim) addNode(groups ...transport.Group) *simNode {
	id := NodeID(len(s.nodes) + 1)
	cfg := Config{
		Self:          id,
		Incarnation:   1,
		Federation:    "sim",
		Key:           s.cfg.key,
		NakDelayTicks: 1,
		Rand:          rand.New(rand.NewPCG(s.seed, uint64(id))),
	}
	if s.cfg.inbox {
		cfg.Inbox = simInbox
	}
	if s.cfg.tune != nil {
		s.cfg.tune(&cfg)
	}
	e, err := New(cfg)
	if err != nil {
		s.t.Fatal(err)
	}
	n := &simNode{
		id:         id,
		e:          e,
		groups:     make(map[transport.Group]bool),
		start:      make(map[streamKey]uint64),
		cursor:     make(map[streamKey]uint64),
		joined:     make(map[transport.Group]simJoin),
		startedIn:  make(map[streamKey]simJoin),
		fresh:      make(map[streamKey]uint64),
		joinHellos: make(map[streamKey]map[uint64]bool),
		beSeen:     make(map[streamKey]map[uint64]bool),
		errs:       make(map[error]int),
	}
	if s.cfg.inbox {
		n.inbox = simInbox(id)
	}
	s.nodes = append(s.nodes, n)
	for _, g := range groups {
		s.join(n, g)
	}
	return n
}

// join has n join g and sends its HELLO.
func (s *sim) join(n *simNode, g transport.Group) {
	if n.groups[g] {
		return
	}
	n.groups[g] = true
	n.e.Join(g)
	s.joins++
	j := simJoin{nonce: n.e.groups[g].nonce, order: s.joins, heard: s.joins, tick: s.now, pos: s.sent[streamKey{n.id, g}]}
	n.joined[g] = j
	s.senderJoins[senderJoinKey{n.id, g, j.nonce}] = j
	s.process(n)
}

// leave has n leave g: its streams of g end without a report.
func (s *sim) leave(n *simNode, g transport.Group) {
	delete(n.groups, g)
	n.e.Leave(g)
	delete(n.joined, g)
	n.forgetStreams(g)
	s.process(n)
}

// forgetStreams drops what n knew of the streams it received on g: they
// end without a report (a leave, or a new join as a receiver).
func (n *simNode) forgetStreams(g transport.Group) {
	for k := range n.start {
		if k.group == g {
			delete(n.start, k)
			delete(n.cursor, k)
			delete(n.startedIn, k)
			delete(n.fresh, k)
		}
	}
	for k := range n.joinHellos {
		if k.group == g {
			delete(n.joinHellos, k)
		}
	}
}

// listen has n listen to g anew (Endpoint.Listen): a new join of g as a
// receiver, its streams of g ending without a report.
func (s *sim) listen(n *simNode, g transport.Group) {
	if !n.groups[g] {
		return
	}
	old := n.e.groups[g].nonce
	n.e.Listen(g)
	// As a sender n keeps its records of its receivers, now under its
	// new nonce.
	nonce := n.e.groups[g].nonce
	for _, m := range []map[learnKey]uint64{s.heardAt, s.recorded} {
		for k, v := range m {
			if k.s == n.id && k.snonce == old && k.g == g {
				k.snonce = nonce
				m[k] = v
			}
		}
	}
	n.forgetStreams(g)
	s.joins++
	// As a sender its join stays the one it made (order, position).
	j := simJoin{nonce: n.e.groups[g].nonce, order: n.joined[g].order, heard: s.joins, tick: s.now, pos: n.joined[g].pos}
	n.joined[g] = j
	s.senderJoins[senderJoinKey{n.id, g, j.nonce}] = j
	s.process(n)
}

// nodeByID returns the node with id.
func (s *sim) nodeByID(id NodeID) *simNode { return s.nodes[id-1] }

// onStart checks a Start reported by n against the oracle.
func (s *sim) onStart(n *simNode, st Start) {
	k := streamKey{st.From, st.Group}
	if _, ok := n.start[k]; ok {
		s.fatalf("node %d: stream %v started twice in one join", n.id, k)
	}
	if !n.groups[st.Group] {
		s.fatalf("node %d: start %+v on a group not joined", n.id, st)
	}
	if st.Incarnation != 1 {
		s.fatalf("node %d: start %+v of an incarnation never run", n.id, st)
	}
	if st.Seq == 0 || st.Seq-1 > s.sent[k] {
		s.fatalf("node %d: start %+v after the last message sent, %d", n.id, st, s.sent[k])
	}
	if st.Fresh < st.Seq || st.Fresh-1 > s.sent[k] {
		s.fatalf("node %d: start %+v: fresh before the start or after the last message sent, %d", n.id, st, s.sent[k])
	}
	rj := n.joined[st.Group]
	snd := s.nodeByID(st.From)
	sj, sJoined := snd.joined[st.Group]
	if sJoined {
		if heard, ok := s.heardAt[learnKey{snd.id, sj.nonce, st.Group, n.id, rj.nonce}]; ok && st.Fresh-1 > heard {
			s.fatalf("node %d: start %+v, but %d learned of its join %d at %d: what it sent after is not history", n.id, st, snd.id, rj.nonce, heard)
		}
		if sj.order > rj.heard && n.joinHellos[k][sj.nonce] && st.Fresh-1 > sj.pos {
			s.fatalf("node %d: start %+v, but it was a member before %d joined at %d, and heard that join's HELLO", n.id, st, snd.id, sj.pos)
		}
		n.startedIn[k] = sj
	}
	if low := s.lowestStart(snd, k, rj); st.Seq-1 < low {
		s.fatalf("node %d: start %+v owes history: %d had sent %d when it joined", n.id, st, snd.id, low)
	}
	if low := s.lowestFresh(k, rj); st.Fresh-1 < low {
		s.fatalf("node %d: start %+v counts history as fresh: %d had sent %d before it joined (less the channel's delay)", n.id, st, snd.id, low)
	}
	n.start[k] = st.Seq
	n.fresh[k] = st.Fresh
	if st.Fresh > st.Seq {
		s.historyStarts++
	}
	n.startLog = append(n.startLog, st)
}

// lowestStart bounds from below the position a stream k of a receiver
// joined at rj may start after: what the sender had sent before rj, less
// what it sent in the announcement span of its joins (a member that hears
// a join HELLO, or that the sender learns of while its join is announced,
// starts after the join's position) and in the channel's delay (a vouch
// for a position may arrive that much later).
func (s *sim) lowestStart(snd *simNode, k streamKey, rj simJoin) uint64 {
	return s.sentBefore(k, rj.tick-announceSpan*snd.e.cfg.NakDelayTicks-s.cfg.maxDelay-1)
}

// lowestFresh bounds from below the last position a stream k of a
// receiver joined at rj counts as history (Start.Fresh-1): what the sender
// had sent before rj, less the channel's delay (a frame sent before the
// join may arrive after it and vouch for the positions after it).
func (s *sim) lowestFresh(k streamKey, rj simJoin) uint64 {
	return s.sentBefore(k, rj.tick-s.cfg.maxDelay-1)
}

// sentBefore counts the messages stream k's sender sent before tick.
func (s *sim) sentBefore(k streamKey, tick int) uint64 {
	n := uint64(0)
	for _, at := range s.sentAt[k] {
		if at >= tick {
			break
		}
		n++
	}
	return n
}

// onJoinHello notes that n accepted a join HELLO of nonce from sender k's
// join, and checks a stream already started against it.
func (s *sim) onJoinHello(n *simNode, k streamKey, nonce uint64) {
	if n.joinHellos[k] == nil {
		n.joinHellos[k] = make(map[uint64]bool)
	}
	n.joinHellos[k][nonce] = true
	_, started := n.start[k]
	st := n.fresh[k]
	sj := n.startedIn[k]
	if started && sj.nonce == nonce && sj.order > n.joined[k.group].heard && st-1 > sj.pos {
		s.fatalf("node %d: stream %v started at %d, but it was a member before the sender joined at %d, and heard that join's HELLO", n.id, k, st, sj.pos)
	}
}

// snapshot checks n's receiver records against the oracle and records
// them.
func (s *sim) snapshot(n *simNode) {
	for _, gs := range n.e.groupList {
		for _, r := range gs.rcv {
			if r.nonce == 0 {
				continue // learned from an ACK, not the join handshake
			}
			k := learnKey{n.id, gs.nonce, gs.g, r.id, r.nonce}
			heard, ok := s.heardAt[k]
			if !ok {
				s.fatalf("node %d recorded %d (join %d) on group %d without hearing from it", n.id, r.id, r.nonce, gs.g)
			}
			if r.start > heard {
				s.fatalf("node %d recorded %d (join %d) on group %d at %d, after it heard from it at %d", n.id, r.id, r.nonce, gs.g, r.start, heard)
			}
			if h, ok := s.recorded[k]; ok {
				if h != r.start {
					s.fatalf("node %d changed its record of %d (join %d) on group %d from %d to %d", n.id, r.id, r.nonce, gs.g, h, r.start)
				}
				continue
			}
			s.recorded[k] = r.start
		}
	}
}

// payload encodes (sender, group, seq) and pads to size bytes.
// simPayload is the payload of the message of (from, g) whose first
// sequence is seq: a header naming them, then bytes derived from them, so
// that a delivery can be checked byte for byte.
func simPayload(from NodeID, g transport.Group, seq uint64, size int) []byte {
	b := make([]byte, max(size, 20))
	binary.BigEndian.PutUint64(b, uint64(from))
	binary.BigEndian.PutUint32(b[8:], uint32(g))
	binary.BigEndian.PutUint64(b[12:], seq)
	for i := 20; i < len(b); i++ {
		b[i] = byte(uint64(i)*7 + seq*13 + uint64(from))
	}
	return b
}

func (s *sim) send(n *simNode, g transport.Group, reliable bool) {
	k := streamKey{n.id, g}
	want := s.beSent[k] + 1
	if reliable {
		want = s.sent[k] + 1
	}
	size := 100
	if len(s.cfg.sizes) > 0 {
		size = s.cfg.sizes[s.rng.IntN(len(s.cfg.sizes))]
	}
	seq, err := n.e.Send(g, simPayload(n.id, g, want, size), reliable)
	if err != nil {
		s.fatalf("send: %v", err)
	}
	if seq < want || seq != want && size <= n.e.MaxPayload() {
		s.fatalf("node %d group %d: Send of %d bytes returned seq %d, want %d", n.id, g, size, seq, want)
	}
	if reliable {
		s.sent[k] = seq
		for range seq - want + 1 {
			s.sentAt[k] = append(s.sentAt[k], s.now)
		}
	} else {
		s.beSent[k] = seq
	}
	s.process(n)
}

// process acts on n's Ready: multicasts its frames and checks its
// deliveries and gaps.
func (s *sim) process(n *simNode) {
	if !n.e.HasReady() {
		return
	}
	rd := n.e.Ready()
	for _, o := range rd.Out {
		s.multicast(n, o)
	}
	for _, st := range rd.Starts {
		s.onStart(n, st)
	}
	// Within a stream, reliable deliveries and gaps each come in sequence
	// order; merged by sequence they must continue the stream exactly.
	events := map[streamKey][]seqEvent{}
	var keys []streamKey
	add := func(k streamKey, ev seqEvent) {
		evs := events[k]
		if len(evs) == 0 {
			keys = append(keys, k)
		} else if last := evs[len(evs)-1]; last.gap == ev.gap && last.to >= ev.from {
			s.fatalf("node %d stream %v: [%d, %d] after [%d, %d] in one Ready", n.id, k, ev.from, ev.to, last.from, last.to)
		}
		events[k] = append(evs, ev)
	}
	for _, d := range rd.Deliver {
		k := streamKey{d.From, d.Group}
		if len(d.Payload) < 20 {
			s.fatalf("node %d: delivery %+v of %d bytes", n.id, d, len(d.Payload))
		}
		from, g, first := binary.BigEndian.Uint64(d.Payload), binary.BigEndian.Uint32(d.Payload[8:]), binary.BigEndian.Uint64(d.Payload[12:])
		if NodeID(from) != d.From || transport.Group(g) != d.Group || first > d.Seq ||
			!slices.Equal(d.Payload, simPayload(d.From, d.Group, first, len(d.Payload))) {
			s.fatalf("node %d: delivery %+v carries a wrong payload of (%d, %d, %d)", n.id, d, from, g, first)
		}
		if !d.Reliable {
			if n.beSeen[k] == nil {
				n.beSeen[k] = make(map[uint64]bool)
			}
			if n.beSeen[k][d.Seq] {
				s.fatalf("node %d: best-effort %d/%d/%d delivered twice (join %+v)", n.id, d.From, d.Group, d.Seq, n.joined[d.Group])
			}
			n.beSeen[k][d.Seq] = true
			continue
		}
		add(k, seqEvent{from: first, to: d.Seq})
	}
	for _, gp := range rd.Gaps {
		n.gaps++
		n.gapLog = append(n.gapLog, gp)
		add(streamKey{gp.From, gp.Group}, seqEvent{from: gp.FromSeq, to: gp.ToSeq, gap: true})
	}
	for _, k := range keys {
		evs := events[k]
		slices.SortStableFunc(evs, func(a, b seqEvent) int { return cmp.Compare(a.from, b.from) })
		for _, ev := range evs {
			s.advance(n, k, ev.from, ev.to, ev.gap)
		}
	}
	n.e.Advance(rd)
}

// advance checks that [from, to] continues stream k at n.
func (s *sim) advance(n *simNode, k streamKey, from, to uint64, gap bool) {
	cur, ok := n.cursor[k]
	if !ok {
		start, ok := n.start[k]
		if !ok {
			s.fatalf("node %d: event on stream %v before its Start", n.id, k)
		}
		cur = start
	}
	if from != cur || to < from {
		s.fatalf("node %d stream %v: got [%d, %d] (gap %v), want it to start at %d", n.id, k, from, to, gap, cur)
	}
	if to > s.sent[k] {
		s.fatalf("node %d stream %v: [%d, %d] beyond the last sent %d", n.id, k, from, to, s.sent[k])
	}
	n.cursor[k] = to + 1
}

func (s *sim) multicast(from *simNode, o Outgoing) {
	h, err := parseHeader(o.Frame)
	if err != nil {
		s.fatalf("node %d sent a bad frame: %v", from.id, err)
	}
	if s.cfg.inbox && (h.kind.addressed() && o.Group == h.group || !h.kind.inboxed() && o.Group != h.group) {
		s.fatalf("node %d sent a %v frame of group %d on group %d", from.id, h.kind, h.group, o.Group)
	}
	if s.cfg.inbox && o.Group != h.group {
		s.inboxed++
	}
	for _, to := range s.nodes {
		if !to.groups[o.Group] && to != from && (to.inbox == 0 || to.inbox != o.Group) {
			continue
		}
		if s.drop != nil && s.drop(from, to, h) {
			continue
		}
		if to != from && s.rng.Float64() < s.cfg.loss {
			continue
		}
		copies := 1
		if s.rng.Float64() < s.cfg.dup {
			copies = 2
		}
		for range copies {
			s.order++
			f := simFrame{
				at:    s.now + s.rng.IntN(s.cfg.maxDelay+1),
				order: s.order,
				from:  from,
				to:    to,
				g:     o.Group,
				frame: o.Frame,
			}
			if to != from && s.rng.Float64() < s.cfg.corrupt {
				f.frame = slices.Clone(o.Frame)
				bit := s.rng.IntN(8 * len(f.frame))
				f.frame[bit/8] ^= 1 << (bit % 8)
				f.corrupted = true
				s.corrupted++
			}
			heap.Push(&s.queue, f)
		}
	}
}

// deliverDue steps every frame due by now, including those sent in
// response.
func (s *sim) deliverDue() {
	for {
		if len(s.queue) == 0 || s.queue[0].at > s.now {
			return
		}
		f := heap.Pop(&s.queue).(simFrame)
		s.step(f)
	}
}

func (s *sim) step(f simFrame) {
	n := f.to
	notMine := n.e.stats.NotMine
	err := n.e.Step(f.g, f.frame)
	// The group the frame is of: an addressed frame comes through an
	// inbox.
	g := f.g
	if h, herr := parseHeader(f.frame); herr == nil && n.inbox != 0 && f.g == n.inbox {
		g = h.group
	}
	if f.corrupted && err == nil {
		s.fatalf("node %d accepted a corrupted frame from %d", n.id, f.from.id)
	}
	if err != nil {
		matched := false
		for _, se := range stepErrors {
			if errors.Is(err, se) {
				n.errs[se]++
				matched = true
			}
		}
		if !matched {
			s.fatalf("node %d: Step error %v matches no sentinel", n.id, err)
		}
		if f.from != n && !f.corrupted && !errors.Is(err, ErrReplay) && !(errors.Is(err, ErrNotJoined) && !n.groups[g]) &&
			!(errors.Is(err, ErrWrongGroup) && f.g == n.inbox) {
			// Honest frames are only ever dropped as replays (a duplicate
			// in keyed mode), or for a group left since they were sent.
			s.fatalf("node %d: honest frame from %d dropped: %v", n.id, f.from.id, err)
		}
		s.process(n)
		return
	}
	h, _ := parseHeader(f.frame)
	if n.e.stats.NotMine != notMine {
		s.process(n) // another node's, through the inbox: ignored
		return
	}
	if h.kind == kindHello || h.kind == kindSync {
		if gs := n.e.groups[g]; gs != nil {
			k := learnKey{n.id, gs.nonce, g, h.sender, h.seq}
			if _, ok := s.heardAt[k]; !ok {
				s.heardAt[k] = n.e.hwOf(g)
			}
		}
		s.snapshot(n)
		if h.kind == kindHello && binary.BigEndian.Uint64(f.frame[HeaderLen+8:]) == 0 {
			s.onJoinHello(n, streamKey{h.sender, g}, h.seq)
		}
	}
	s.process(n)
}

// tick advances every node by one tick and delivers what is due.
func (s *sim) tick() {
	s.now++
	for _, n := range s.nodes {
		n.e.Tick()
		s.process(n)
	}
	s.deliverDue()
}

// complete reports whether every receiver has every stream up to the last
// message sent (delivered or reported) from its start: every stream that
// started, and every stream of a sender that is a member of the group
// (which must start).
func (s *sim) complete() bool {
	for _, n := range s.nodes {
		for k, last := range s.sent {
			if k.from == n.id || !n.groups[k.group] || last == 0 {
				continue
			}
			if s.cursorOf(n, k) != last+1 {
				if _, started := n.start[k]; started || s.nodeByID(k.from).groups[k.group] {
					return false
				}
			}
		}
	}
	return true
}

// cursorOf returns the next sequence n expects on stream k: 0 before its
// Start.
func (s *sim) cursorOf(n *simNode, k streamKey) uint64 {
	if c, ok := n.cursor[k]; ok {
		return c
	}
	return n.start[k]
}

// settle ticks until complete, failing after limit ticks.
func (s *sim) settle(limit int) {
	s.t.Helper()
	for range limit {
		if s.complete() && len(s.queue) == 0 {
			return
		}
		s.tick()
	}
	for _, n := range s.nodes {
		for k, last := range s.sent {
			if k.from != n.id && n.groups[k.group] && s.cursorOf(n, k) != last+1 {
				s.t.Logf("node %d stream %v: cursor %d (start %d), last sent %d; stats %+v", n.id, k, s.cursorOf(n, k), n.start[k], last, n.e.Stats())
			}
		}
	}
	s.fatalf("not complete after %d ticks", limit)
}

func (s *sim) totalGaps() int {
	total := 0
	for _, n := range s.nodes {
		total += n.gaps
	}
	return total
}

func (s *sim) totalStats() Stats {
	var t Stats
	for _, n := range s.nodes {
		st := n.e.Stats()
		t.Sent += st.Sent
		t.Retransmits += st.Retransmits
		t.RetransmitFrames += st.RetransmitFrames
		t.AimedRepairs += st.AimedRepairs
		t.NotMine += st.NotMine
		t.Heartbeats += st.Heartbeats
		t.NAKs += st.NAKs
		t.NAKsObserved += st.NAKsObserved
		t.Gones += st.Gones
		t.Delivered += st.Delivered
		t.Duplicates += st.Duplicates
		t.Gaps += st.Gaps
		t.GapMessages += st.GapMessages
		t.Hellos += st.Hellos
		t.SyncRequests += st.SyncRequests
		t.Syncs += st.Syncs
		t.Starts += st.Starts
		t.BeforeStart += st.BeforeStart
		t.DataFrames += st.DataFrames
		t.Fragments += st.Fragments
		t.Reassembled += st.Reassembled
		t.Incomplete += st.Incomplete
		t.Acks += st.Acks
		t.BadChecksum += st.BadChecksum
		t.AuthFailed += st.AuthFailed
	}
	return t
}

// runWorkload has every node send count messages, spread over ticks, on
// random groups among those it joined (a sender must hear the NAKs); a
// share of them best effort. With probability churn per tick, a random
// node leaves or joins a random group; a node that joins sends a reliable
// message there at once half of the time.
func (s *sim) runWorkload(count int, perTick int, groups []transport.Group, bestEffort, churn float64) {
	for i, tick := 0, 0; i < count; tick++ {
		if s.hook != nil {
			s.hook(tick)
		}
		if churn > 0 && s.rng.Float64() < churn {
			n, g := s.nodes[s.rng.IntN(len(s.nodes))], groups[s.rng.IntN(len(groups))]
			if n.groups[g] {
				s.leave(n, g)
			} else {
				s.join(n, g)
				if s.rng.IntN(2) == 0 {
					s.send(n, g, true)
				}
			}
		}
		for _, n := range s.nodes {
			for range perTick {
				g := groups[s.rng.IntN(len(groups))]
				if !n.groups[g] {
					continue
				}
				s.send(n, g, s.rng.Float64() >= bestEffort)
			}
		}
		i += perTick
		s.tick()
	}
}

// warmUp ticks until the joins' handshakes are done (every join HELLO
// sent and answered on a lossless channel, and the joins' announcements
// over).
func (s *sim) warmUp() {
	d := 0
	for _, n := range s.nodes {
		d = max(d, n.e.cfg.NakDelayTicks)
	}
	for range announceSpan*d + s.cfg.maxDelay + 2 {
		s.tick()
	}
}

// joinWindow is the number of ticks a join sends HELLOs for.
func joinWindow(nakDelay int) int { return (1<<(joinHellos-1) - 1) * nakDelay }

// startsAt reports whether every stream n started began at seq.
func startsAt(n *simNode, seq uint64) bool {
	for _, st := range n.startLog {
		if st.Seq != seq {
			return false
		}
	}
	return true
}

func TestSimTable(t *testing.T) {
	for _, tc := range []struct {
		name        string
		nodes       int
		groups      int
		count       int
		cfg         simConfig
		wantNoGaps  bool
		wantNoNAKs  bool
		wantRepairs bool
	}{
		{name: "lossless", nodes: 3, groups: 2, count: 200, wantNoGaps: true, wantNoNAKs: true},
		{name: "lossless keyed", nodes: 3, groups: 2, count: 200, cfg: simConfig{key: testKey}, wantNoGaps: true, wantNoNAKs: true},
		{name: "10% loss", nodes: 4, groups: 3, count: 300, cfg: simConfig{loss: 0.1}, wantNoGaps: true, wantRepairs: true},
		{name: "10% loss keyed", nodes: 4, groups: 3, count: 300, cfg: simConfig{loss: 0.1, key: testKey}, wantNoGaps: true, wantRepairs: true},
		{name: "loss dup reorder", nodes: 5, groups: 3, count: 300, cfg: simConfig{loss: 0.2, dup: 0.2, maxDelay: 3}, wantNoGaps: true, wantRepairs: true},
		{name: "loss dup reorder, inboxes", nodes: 5, groups: 3, count: 300, cfg: simConfig{loss: 0.2, dup: 0.2, maxDelay: 3, inbox: true}, wantNoGaps: true, wantRepairs: true},
		{name: "heavy loss", nodes: 3, groups: 1, count: 200, cfg: simConfig{loss: 0.5, maxDelay: 2}, wantNoGaps: true, wantRepairs: true},
		{name: "small retransmit buffer", nodes: 4, groups: 2, count: 300, cfg: simConfig{loss: 0.3, maxDelay: 2, tune: func(c *Config) {
			c.RetransmitBuffer, c.AckTimeoutTicks = 4, 2 // receivers stall: the sender releases
		}}},
		{name: "small retransmit buffer, patient sender", nodes: 4, groups: 2, count: 300, cfg: simConfig{loss: 0.3, maxDelay: 2, tune: func(c *Config) {
			c.RetransmitBuffer = 4 // unacknowledged messages are held anyway
		}}, wantNoGaps: true, wantRepairs: true},
		{name: "small reorder buffer", nodes: 3, groups: 2, count: 300, cfg: simConfig{loss: 0.2, maxDelay: 4, tune: func(c *Config) {
			c.ReorderBuffer = 4
		}}, wantNoGaps: true, wantRepairs: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(t, 1, tc.cfg)
			var groups []transport.Group
			for g := range tc.groups {
				groups = append(groups, transport.Group(10+g))
			}
			for range tc.nodes {
				s.addNode(groups...)
			}
			s.warmUp()
			s.runWorkload(tc.count, 3, groups, 0.1, 0)
			s.settle(5000)
			st := s.totalStats()
			t.Logf("stats %+v", st)
			if tc.wantNoGaps && s.totalGaps() != 0 {
				t.Errorf("%d gaps, want none", s.totalGaps())
			}
			if tc.wantNoNAKs && (st.NAKs != 0 || st.SyncRequests != 0) {
				t.Errorf("%d NAKs, %d SYNC requests on a lossless channel", st.NAKs, st.SyncRequests)
			}
			if tc.cfg.inbox && (s.inboxed == 0 || st.AimedRepairs == 0 || st.AimedRepairs == st.RetransmitFrames || st.NotMine == 0) {
				// Repairs go to inboxes and, when several ask, to the
				// group; nodes sharing an inbox ignore each other's.
				t.Errorf("%d frames to inboxes, %d of %d repair frames aimed, %d ignored", s.inboxed, st.AimedRepairs, st.RetransmitFrames, st.NotMine)
			}
			if tc.wantRepairs && (st.NAKs == 0 || st.Retransmits == 0) {
				t.Errorf("no repairs: %+v", st)
			}
			if tc.name == "small retransmit buffer" && s.totalGaps() == 0 {
				t.Errorf("no gaps with a 4-message retransmit buffer at 30%% loss")
			}
			if tc.cfg.loss < 0.5 {
				// The handshake is over before the first message: every
				// stream starts at 1 (at 50% loss it may not be).
				for _, n := range s.nodes {
					if len(n.startLog) != (tc.nodes-1)*tc.groups || !startsAt(n, 1) {
						t.Errorf("node %d starts %+v, want all %d at 1", n.id, n.startLog, (tc.nodes-1)*tc.groups)
					}
				}
			}
		})
	}
}

var (
	seedsFlag = flag.Int("seeds", 0, "number of seeds for the randomized tests (0: each test's default)")
	seedFlag  = flag.Uint64("seed", 0, "first seed of TestSimRandomized and TestLateSenderSendsAtOnce; -seed=N -seeds=1 replays seed N")
)

// seedCount is how many seeds a randomized test runs: full, short with
// -short, or the -seeds flag's number when it is given.
func seedCount(full, short int) int {
	switch {
	case *seedsFlag > 0:
		return *seedsFlag
	case testing.Short():
		return short
	}
	return full
}

var testKey = []byte("0123456789abcdef0123456789abcdef")

// TestSimRandomized runs random federations over random channels, with
// nodes joining and leaving groups while messages flow, and new nodes
// that join groups late and send on them at once. Every reliable message
// from a stream's Start on must be delivered exactly once in order or
// reported as a gap, and each Start must owe what the oracle says; with
// the default retransmit buffer there must be no gap.
func TestSimRandomized(t *testing.T) {
	seeds := seedCount(60, 10)
	var started, beforeStart, requests uint64
	late, history, listens := 0, 0, 0
	for seed := *seedFlag; seed < *seedFlag+uint64(seeds); seed++ {
		r := rand.New(rand.NewPCG(seed, 1))
		cfg := simConfig{
			loss:     []float64{0, 0.05, 0.1, 0.3}[r.IntN(4)],
			dup:      []float64{0, 0.1}[r.IntN(2)],
			maxDelay: r.IntN(4),
		}
		if r.IntN(2) == 0 {
			cfg.key = testKey
		}
		if r.IntN(3) == 0 {
			cfg.corrupt = 0.05
		}
		if r.IntN(3) == 0 {
			cfg.sizes = []int{20, 100, 300, 1000}
		}
		smallBuffer := r.IntN(4) == 0
		nakDelay := 1 + r.IntN(3)
		bundle := r.IntN(2) == 0
		maxFrame := []int{0, 0, 200}[r.IntN(3)]
		cfg.tune = func(c *Config) {
			c.NakDelayTicks = nakDelay
			c.Bundle = bundle
			c.MaxFrame = maxFrame
			if smallBuffer {
				c.RetransmitBuffer = 2 + r.IntN(30)
				c.ReorderBuffer = 2 + r.IntN(30)
			}
		}
		cfg.inbox = seed%2 == 1
		s := newSim(t, seed, cfg)
		var groups []transport.Group
		for g := range 1 + r.IntN(4) {
			groups = append(groups, transport.Group(100+g))
		}
		for range 2 + r.IntN(5) {
			var mine []transport.Group
			for _, g := range groups {
				if r.IntN(3) != 0 {
					mine = append(mine, g)
				}
			}
			s.addNode(mine...)
		}
		// Late senders: new nodes join some groups while the others send,
		// and send on them at once, before any tick.
		lateAt, listenAt := map[int]bool{}, map[int]bool{}
		for range r.IntN(3) {
			lateAt[r.IntN(40)] = true
		}
		// Listens: a node hears a group it joined anew.
		for range r.IntN(3) {
			listenAt[r.IntN(60)] = true
		}
		s.hook = func(tick int) {
			if listenAt[tick] {
				n := s.nodes[r.IntN(len(s.nodes))]
				s.listen(n, groups[r.IntN(len(groups))])
				listens++
			}
			if !lateAt[tick] {
				return
			}
			var mine []transport.Group
			for _, g := range groups {
				if r.IntN(2) == 0 {
					mine = append(mine, g)
				}
			}
			n := s.addNode(mine...)
			for _, g := range mine {
				for range 1 + r.IntN(3) {
					s.send(n, g, true)
				}
			}
		}
		churn := []float64{0, 0.02, 0.1}[r.IntN(3)]
		s.runWorkload(50+r.IntN(250), 1+r.IntN(5), groups, 0.2, churn)
		late += len(lateAt)
		s.cfg.loss = 0 // the network heals
		// A sender that left a group must be back to hear the NAKs.
		for _, n := range s.nodes {
			for _, g := range groups {
				if s.sent[streamKey{n.id, g}] > 0 && !n.groups[g] {
					s.join(n, g)
				}
			}
		}
		s.settle(20000)
		if !smallBuffer && s.totalGaps() != 0 {
			t.Errorf("seed %d: %d gaps with the default buffers", seed, s.totalGaps())
		}
		st := s.totalStats()
		started += st.Starts
		beforeStart += st.BeforeStart
		requests += st.SyncRequests
		history += s.historyStarts
	}
	t.Logf("%d starts (%d owing history), %d messages before a start, %d SYNC requests, %d late senders, %d listens", started, history, beforeStart, requests, late, listens)
	// A replay of one seed (-seed=N -seeds=1) or a few need not exercise
	// everything; the default runs, -short's included, must.
	if seeds >= 10 && (started == 0 || history == 0 || beforeStart == 0 || requests == 0 || late == 0 || listens == 0) {
		t.Error("the randomized runs did not exercise the handshake")
	}
}

// TestNoGapsAtTenPercentLoss: N senders × M receivers × K groups, the
// handshake itself at 10% loss.
func TestNoGapsAtTenPercentLoss(t *testing.T) {
	s := newSim(t, 7, simConfig{loss: 0.1, maxDelay: 1})
	groups := []transport.Group{1, 2, 3}
	for range 3 {
		s.addNode(groups...) // senders (and receivers)
	}
	for range 4 {
		s.addNode(groups...) // receivers only
	}
	senders := s.nodes[:3]
	s.warmUp()
	for range 500 {
		for _, n := range senders {
			s.send(n, groups[s.rng.IntN(len(groups))], true)
		}
		s.tick()
	}
	s.settle(5000)
	if g := s.totalGaps(); g != 0 {
		t.Errorf("%d gaps", g)
	}
	st := s.totalStats()
	if want := uint64(3 * 500 * 6); st.Delivered != want {
		t.Errorf("delivered %d, want %d", st.Delivered, want)
	}
	t.Logf("stats %+v", st)
}

// TestLostTailRepairedByHeartbeat drops the first transmission of the last
// messages: only a heartbeat tells the receiver they exist.
func TestLostTailRepairedByHeartbeat(t *testing.T) {
	s := newSim(t, 1, simConfig{})
	a, b := s.addNode(1), s.addNode(1)
	s.warmUp()
	s.drop = func(from, to *simNode, h header) bool {
		return from == a && to == b && h.kind == kindData && h.seq > 7
	}
	for range 10 {
		s.send(a, 1, true)
	}
	s.tick()
	if got := b.cursor[streamKey{a.id, 1}]; got != 8 {
		t.Fatalf("cursor %d before repair, want 8", got)
	}
	if b.e.Stats().NAKs != 0 {
		t.Fatal("NAK before any heartbeat")
	}
	s.settle(100)
	if a.e.Stats().Heartbeats == 0 || b.e.Stats().NAKs == 0 || a.e.Stats().Retransmits != 3 {
		t.Errorf("sender %+v receiver %+v", a.e.Stats(), b.e.Stats())
	}
	if s.totalGaps() != 0 {
		t.Error("gaps")
	}
}

// TestGapReportedWhenGone: the receiver stalled, and the sender no
// longer holds what was lost.
func TestGapReportedWhenGone(t *testing.T) {
	s := newSim(t, 1, simConfig{tune: func(c *Config) { c.RetransmitBuffer, c.AckTimeoutTicks = 4, 1 }})
	a, b := s.addNode(1), s.addNode(1)
	s.warmUp()
	s.drop = func(from, to *simNode, h header) bool {
		return from == a && to == b && h.kind == kindData && (h.seq == 2 || h.seq == 3)
	}
	for range 20 {
		s.send(a, 1, true)
	}
	s.settle(100)
	want := []Gap{{From: a.id, Incarnation: 1, Group: 1, FromSeq: 2, ToSeq: 3}}
	if !slices.Equal(b.gapLog, want) {
		t.Errorf("gaps %+v, want %+v", b.gapLog, want)
	}
	if a.e.Stats().Gones != 1 {
		t.Errorf("%d gone frames, want 1", a.e.Stats().Gones)
	}
	if c := b.cursor[streamKey{a.id, 1}]; c != 21 {
		t.Errorf("cursor %d, want 21", c)
	}
}

// TestNAKSuppression: two receivers miss the same message; the one that
// NAKs second sees the first one's NAK and stays quiet.
func TestNAKSuppression(t *testing.T) {
	s := newSim(t, 1, simConfig{})
	a := s.addNode(1)
	quick := s.addNode(1)
	s.cfg.tune = func(c *Config) { c.NakDelayTicks = 4 }
	slow := s.addNode(1)
	s.warmUp()
	s.drop = func(from, to *simNode, h header) bool {
		return from == a && h.kind == kindData && h.seq == 2
	}
	for range 3 {
		s.send(a, 1, true)
	}
	s.settle(100)
	if q, sl := quick.e.Stats(), slow.e.Stats(); q.NAKs != 1 || sl.NAKs != 0 || sl.NAKsObserved != 1 {
		t.Errorf("quick NAKs %d, slow NAKs %d observed %d; want 1, 0, 1", q.NAKs, sl.NAKs, sl.NAKsObserved)
	}
	if r := a.e.Stats().Retransmits; r != 1 {
		t.Errorf("%d retransmissions, want 1", r)
	}
}
