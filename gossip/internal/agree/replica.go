package agree

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// This file holds the replica: one process's view of the agreement log.
// It is a pure state machine in the style of etcd raft's RawNode:
// messages, ticks and requests go in through Step, Tick, Submit and Read;
// what to send and what was decided comes out of Ready. It is not safe for
// concurrent use; the Cluster's loop goroutine owns it.
//
// The log is a sequence of instances 0, 1, 2, ... Each instance is one
// single-decree Paxos whose acceptors are the roster found in the state
// after all earlier instances (Lamport's reconfigurable Paxos with a
// window of one). A replica proposes for instance i only once it knows
// every value chosen before i, so every proposer of instance i uses the
// same acceptor set.

// ReplicaConfig configures a replica. Times are in ticks.
type ReplicaConfig struct {
	ID           NodeID
	Rand         *rand.Rand
	RoundTimeout int // a round without a quorum of answers is abandoned (doubling per failure, up to 8x)
	MaxBackoff   int // a failed round waits 1..MaxBackoff ticks (growing) before retrying
	SyncTimeout  int // an unanswered sync request is retried after this
	RecoverAfter int // an accepted but unlearned value is driven to a decision after this
	TailLen      int // chosen values kept to answer "decided" and catch-up
	MaxBatch     int // ops per log entry
	MaxFuture    int // commits buffered ahead of a gap
	// ForwardTimeout: a batch forwarded to the leader and not decided in
	// this many ticks comes back to be forwarded again (or, after two
	// such timeouts in a row, proposed by this replica itself).
	ForwardTimeout int
}

func (c *ReplicaConfig) fill() {
	orDefault(&c.RoundTimeout, 10)
	orDefault(&c.MaxBackoff, 8)
	orDefault(&c.SyncTimeout, 10)
	orDefault(&c.RecoverAfter, 2*c.RoundTimeout)
	orDefault(&c.TailLen, 1024)
	orDefault(&c.MaxBatch, 64)
	orDefault(&c.MaxFuture, 1024)
	orDefault(&c.ForwardTimeout, 4*c.RoundTimeout)
	if c.Rand == nil {
		panic("gossip: replicaConfig.Rand is nil")
	}
}

// orDefault sets *v to def when it is not positive.
func orDefault(v *int, def int) {
	if *v <= 0 {
		*v = def
	}
}

// promise is one acceptor's phase-1b answer within a round.
type promise struct {
	acc Ballot
	val []byte
	has bool
}

// round is one attempt, at one ballot, to get an instance decided.
type round struct {
	inst     uint64
	ballot   Ballot
	roster   []NodeID
	phase    int // 1: collecting promises; 2: collecting accepts
	promises map[NodeID]promise
	accepts  map[NodeID]bool
	value    []byte     // phase 2: the value proposed
	ops      []Op       // our ops in this round's batch
	batch    []byte     // their encoding
	reads    []uint64   // reads registered before this round started
	fwd      []*fwdItem // the forwarded batches this round proposes, if any
	ticks    int
	timeout  int // ticks; doubles with each failed attempt (up to 8x)

	preempter NodeID // the proposer whose higher ballot refused this round, if one did
}

func (rd *round) member(id NodeID) bool {
	for _, a := range rd.roster {
		if a == id {
			return true
		}
	}
	return false
}

// fwdItem is a batch another replica forwarded to this one, the leader,
// to propose on its behalf.
type fwdItem struct {
	origin NodeID
	b      Batch
	size   int
	maxSeq uint64 // the highest op sequence number in it
	ttl    int    // ticks left before it is dropped
}

// opDone is the result of one submitted op.
type opDone struct {
	Seq    uint64
	Result OpResult
}

// Ready is what the replica asks its owner to do.
type Ready struct {
	Messages []Message // to send; To.Name == "" means gossip to all
	Done     []opDone  // submitted ops with their results
	Reads    []uint64  // reads whose barrier passed: answer from State() now
	Changes  []Change  // what applied entries changed, in order
	// SyncStalled names the peer a sync request went to that has not
	// answered within SyncTimeout ticks (it left, or holds less than
	// it did). The replica asks it again; the caller may name another
	// member to ask instead (SyncFrom).
	SyncStalled string
}

func (rd *Ready) Empty() bool {
	return len(rd.Messages) == 0 && len(rd.Done) == 0 && len(rd.Reads) == 0 && len(rd.Changes) == 0 && rd.SyncStalled == ""
}

// Replica is one process's agreement state: acceptor, proposer, learner.
type Replica struct {
	cfg ReplicaConfig
	id  NodeID
	fsm *FSM // nil until the first sync (or genesis)
	acc acceptor

	tail     [][]byte // values of instances tailBase .. fsm.Index-1
	tailBase uint64
	future   map[uint64][]byte // commits seen ahead of a gap

	seq     uint64
	pending []Op
	readSeq uint64
	reads   []uint64
	round   *round
	backoff int
	attempt int
	maxN    uint64
	recover bool
	stall   int
	srtt8   int // smoothed ticks a decided round took, times 8 (0: none yet)

	known     uint64 // highest index a peer reported
	knownFrom NodeID
	syncWait  int
	Mismatch  int    // messages from another log, dropped
	Rejected  uint64 // messages refused as invalid (mismatch included)

	// Forwarding (liveness only; see docs/agreement.md): a replica
	// whose leader is another forwards its ops there instead of
	// proposing them, so that many proposers do not duel.
	leader   NodeID     // zero: propose everything itself
	serve    bool       // take forwarded batches (the owner is not leaving)
	fwd      []Op       // our ops forwarded, waiting for their decision
	fwdTo    NodeID     // where fwd went
	fwdWait  int        // ticks before fwd counts as lost
	fwdFails int        // forwards lost in a row
	fwdIndex uint64     // the applied index when fwd was last sent
	fwdSent  int        // times fwd was sent again to the same leader
	fwdq     []*fwdItem // batches forwarded to us, in arrival order

	out   Ready
	selfq []Message

	trace *replicaTrace // tests only: nil in production
}

// replicaTrace lets a test watch every proposal and acceptance, including
// those a replica makes to itself without a message leaving it.
type replicaTrace struct {
	proposed func(inst uint64, b Ballot, roster []NodeID, v []byte)
	accepted func(acc NodeID, inst uint64, b Ballot, v []byte)
}

// NewReplica returns a replica. genesis is the founder's initial state,
// or nil for a replica that must sync from a peer first.
func NewReplica(cfg ReplicaConfig, genesis *FSM) *Replica {
	cfg.fill()
	r := &Replica{cfg: cfg, id: cfg.ID, fsm: genesis, future: map[uint64][]byte{}}
	if genesis != nil {
		r.tailBase = genesis.Index
	}
	return r
}

// SetLeader names the replica to forward ops to (zero, or this replica:
// propose them here), and whether this replica takes batches others
// forward (serve). A batch in flight to another leader comes back, to be
// forwarded to the new one.
func (r *Replica) SetLeader(leader NodeID, serve bool) {
	r.serve = serve
	if !serve {
		r.fwdq = nil
	}
	if leader == r.leader {
		return
	}
	r.leader = leader
	if len(r.fwd) > 0 && r.fwdTo != leader {
		r.unforward(false)
	}
	r.flush()
}

// unforward takes the forwarded ops back, to the front of the queue.
func (r *Replica) unforward(lost bool) {
	r.pending = append(r.fwd, r.pending...)
	r.fwd, r.fwdTo, r.fwdWait, r.fwdSent = nil, NodeID{}, 0, 0
	if lost {
		r.fwdFails++
	}
}

// maxResends bounds how often a forwarded batch is sent again to the
// same leader, while the log moves, before it counts as lost.
const maxResends = 4

// forwardExpired runs when a forwarded batch was not decided within
// ForwardTimeout. When the log moved meanwhile, the leader is deciding
// entries, ours among those queued behind a slow round (a loaded machine
// makes every round slow): the batch is sent to it again, which replaces
// the queued copy or restores one it dropped, instead of counting as
// lost. Counting it lost would, after two, make this replica propose
// its own ops, and many replicas doing so at once duel each other and
// the leader, so that nothing is decided at all (32 federates resigning
// at once on a loaded machine saw ops wait out their 5 s). When the log
// stood still, or after maxResends, the forward is lost as before.
func (r *Replica) forwardExpired() {
	if r.fsm != nil && r.fsm.Index > r.fwdIndex && r.fwdSent < maxResends && r.fwdTo == r.leader {
		r.fwdSent++
		r.sendForward()
		return
	}
	r.unforward(true)
}

// sendForward sends the forwarded ops to the leader and starts waiting.
func (r *Replica) sendForward() {
	r.fwdTo, r.fwdWait, r.fwdIndex = r.leader, r.cfg.ForwardTimeout, r.fsm.Index
	r.send(Message{Type: MsgForward, To: r.leader, Value: EncodeBatch(Batch{Proposer: r.id, Ops: r.fwd, Base: r.fsm.Index + 1})})
}

// forwarding reports whether new ops go to the leader.
func (r *Replica) forwarding() bool {
	return !r.leader.isZero() && r.leader != r.id && r.fwdFails < 2
}

// Synced reports whether the replica has a log (genesis or a sync).
func (r *Replica) Synced() bool { return r.fsm != nil }

// State returns the applied state; nil before Synced. The caller must not
// modify it and must not keep it across calls that change the replica.
func (r *Replica) State() *FSM { return r.fsm }

// CheckInvariants returns an error when the replica's invariants do not
// hold (for tests and fuzzing): its state is consistent (FSM.Check), the
// tail of chosen values ends at the state's index, and a round under way
// is for the next instance.
func (r *Replica) CheckInvariants() error {
	if r.fsm == nil {
		return nil
	}
	if err := r.fsm.Check(); err != nil {
		return fmt.Errorf("replica state: %w", err)
	}
	if r.fsm.Index < r.tailBase || uint64(len(r.tail)) != r.fsm.Index-r.tailBase {
		return fmt.Errorf("tail of %d entries from %d at index %d", len(r.tail), r.tailBase, r.fsm.Index)
	}
	if r.round != nil && r.round.inst != r.fsm.Index {
		return fmt.Errorf("round for instance %d at index %d", r.round.inst, r.fsm.Index)
	}
	return nil
}

// Submit queues an op for the log and returns its sequence number, which
// its opDone carries.
func (r *Replica) Submit(o Op) uint64 {
	r.seq++
	o.Seq = r.seq
	r.pending = append(r.pending, o)
	r.flush()
	return r.seq
}

// Cancel forgets a submitted op if it is not yet part of a proposal and
// reports whether it did. An op already proposed may still be chosen; its
// result is then reported.
func (r *Replica) Cancel(seq uint64) bool {
	for i, o := range r.pending {
		if o.Seq == seq {
			r.pending = append(r.pending[:i:i], r.pending[i+1:]...)
			return true
		}
	}
	return false
}

// Read registers a linearizable read and returns its id. The id comes
// back in ready.Reads once a quorum has confirmed that nothing beyond the
// applied state was chosen when the read began.
func (r *Replica) Read() uint64 {
	r.readSeq++
	r.reads = append(r.reads, r.readSeq)
	r.flush()
	return r.readSeq
}

// CancelRead forgets a read.
func (r *Replica) CancelRead(id uint64) {
	drop := func(s []uint64) []uint64 {
		for i, x := range s {
			if x == id {
				return append(s[:i:i], s[i+1:]...)
			}
		}
		return s
	}
	r.reads = drop(r.reads)
	if r.round != nil {
		r.round.reads = drop(r.round.reads)
	}
}

// Observe tells the replica that peer reported log at index (from a
// push-pull exchange); a replica behind it asks that peer to catch it up.
func (r *Replica) Observe(peer string, log string, index uint64) {
	r.observe(NodeID{Name: peer}, log, index)
	r.flush()
}

// Step handles one message from a peer.
func (r *Replica) Step(m Message) {
	r.step(m)
	r.flush()
}

// Tick advances the replica's notion of time by one tick.
func (r *Replica) Tick() {
	if r.round != nil {
		r.round.ticks++
		if r.round.ticks >= r.round.timeout {
			r.endRound(true)
		}
	} else if r.backoff > 0 {
		r.backoff--
	}
	if r.fwdWait > 0 {
		r.fwdWait--
		if r.fwdWait == 0 {
			r.forwardExpired()
		}
	}
	kept := r.fwdq[:0]
	for _, it := range r.fwdq {
		if it.ttl--; it.ttl > 0 {
			kept = append(kept, it)
		}
	}
	r.fwdq = kept
	if r.syncWait > 0 {
		r.syncWait--
		if r.syncWait == 0 {
			r.out.SyncStalled = r.knownFrom.Name
			r.requestSync()
		}
	}
	if r.fsm != nil && r.round == nil && r.acc.pendingValue(r.fsm.Index) {
		r.stall++
		if r.stall >= r.cfg.RecoverAfter {
			r.stall = 0
			r.recover = true
		}
	}
	r.flush()
}

// Ready returns what to do now and clears it.
func (r *Replica) Ready() Ready {
	out := r.out
	r.out = Ready{}
	return out
}

// flush runs messages addressed to this replica itself and starts a
// round when there is work, until nothing more happens.
func (r *Replica) flush() {
	for {
		if len(r.selfq) == 0 {
			r.maybeStart()
			if len(r.selfq) == 0 {
				return
			}
		}
		m := r.selfq[0]
		r.selfq = r.selfq[1:]
		r.step(m)
	}
}

func (r *Replica) send(m Message) {
	m.From = r.id
	if r.fsm != nil {
		m.Log = r.fsm.Log
		m.Index = r.fsm.Index
	}
	if m.To == r.id {
		r.selfq = append(r.selfq, m)
		return
	}
	r.out.Messages = append(r.out.Messages, m)
}

func (r *Replica) step(m Message) {
	if m.Type < MsgPrepare || m.Type > MsgForward || m.From.Name == "" {
		r.Rejected++
		return
	}
	if r.fsm == nil {
		switch m.Type {
		case MsgSyncResp:
			r.handleSyncResp(m)
		default:
			r.observe(m.From, m.Log, m.Index)
		}
		return
	}
	if m.Log != r.fsm.Log && !(m.Type == MsgSyncReq && m.Log == "") {
		r.Mismatch++
		r.Rejected++
		return
	}
	r.observe(m.From, m.Log, m.Index)
	switch m.Type {
	case MsgPrepare:
		if !r.open(m) {
			return
		}
		ok, st := r.acc.prepare(m.Inst, m.Ballot)
		reply := Message{Type: MsgPromise, To: m.From, Inst: m.Inst, Ballot: m.Ballot, OK: ok}
		if ok {
			if st.Accepted.N > 0 {
				reply.AccBallot, reply.Value, reply.HasValue = st.Accepted, st.Value, true
			}
		} else {
			reply.AccBallot = st.Promised
		}
		r.send(reply)

	case MsgAccept:
		if !r.open(m) {
			return
		}
		ok, promised := r.acc.accept(m.Inst, m.Ballot, m.Value)
		if ok && r.trace != nil {
			r.trace.accepted(r.id, m.Inst, m.Ballot, m.Value)
		}
		r.send(Message{Type: MsgAccepted, To: m.From, Inst: m.Inst, Ballot: m.Ballot, OK: ok, AccBallot: promised})

	case MsgPromise:
		rd := r.answered(m, 1)
		if rd == nil {
			return
		}
		rd.promises[m.From] = promise{acc: m.AccBallot, val: m.Value, has: m.HasValue}
		if len(rd.promises) >= Quorum(len(rd.roster)) {
			r.phase2()
		}

	case MsgAccepted:
		rd := r.answered(m, 2)
		if rd == nil {
			return
		}
		rd.accepts[m.From] = true
		if len(rd.accepts) >= Quorum(len(rd.roster)) {
			r.sampleRound(rd.ticks)
			r.learn(rd.inst, rd.value, true)
		}

	case MsgDecided:
		if m.HasValue {
			r.learn(m.Inst, m.Value, false)
		}

	case MsgCommit:
		if m.HasValue {
			r.learn(m.Inst, m.Value, true)
		} else {
			r.observe(m.From, m.Log, m.Inst+1)
		}

	case MsgSyncReq:
		r.handleSyncReq(m)

	case MsgSyncResp:
		r.handleSyncResp(m)

	case MsgForward:
		r.handleForward(m)
	}
}

// open reports whether m, a phase-1a or phase-2a request, is for this
// replica and for an instance not decided here yet; for one decided
// already it sends the decision back instead.
func (r *Replica) open(m Message) bool {
	if m.To != r.id {
		return false
	}
	if m.Inst < r.fsm.Index {
		r.sendDecided(m.From, m.Inst)
		return false
	}
	return true
}

// answered returns the round that m, a phase-1b or phase-2b answer,
// answers in phase, or nil when it answers none (noted as a refusal) or
// refuses (noted, and the round ends to be retried).
func (r *Replica) answered(m Message, phase int) *round {
	rd := r.round
	if rd == nil || rd.phase != phase || m.Inst != rd.inst || m.Ballot != rd.ballot || !rd.member(m.From) {
		r.noteRefusal(m)
		return nil
	}
	if !m.OK {
		r.noteRefusal(m)
		r.endRound(true)
		return nil
	}
	return rd
}

// handleForward queues a batch another replica asks this one, its
// leader, to propose. The batch is the origin's own (its ops, its
// sequence numbers): whoever proposes it, it takes effect as the
// origin's, at most once.
func (r *Replica) handleForward(m Message) {
	if !r.serve || m.To != r.id {
		return
	}
	var b Batch
	if err := Decode(m.Value, &b); err != nil || b.Proposer != m.From || len(b.Ops) == 0 {
		r.Rejected++
		return
	}
	b.More = nil
	it := &fwdItem{origin: b.Proposer, b: b, size: len(m.Value), maxSeq: b.Ops[len(b.Ops)-1].Seq, ttl: 4 * r.cfg.ForwardTimeout}
	if r.fwdDone(it) {
		return
	}
	for i, x := range r.fwdq {
		if x.origin == it.origin {
			r.fwdq[i] = it // a retry replaces the earlier one, in its place
			return
		}
	}
	if len(r.fwdq) < r.cfg.MaxFuture {
		r.fwdq = append(r.fwdq, it)
	}
}

// fwdDone reports whether every op of a forwarded batch was applied.
func (r *Replica) fwdDone(it *fwdItem) bool {
	if _, gone := r.fsm.Gone[it.origin.Key()]; gone {
		return true // it would be skipped (applyBatch)
	}
	s, ok := r.fsm.Sessions[it.origin.Key()]
	return ok && s.Seq >= it.maxSeq
}

func (r *Replica) noteRefusal(m Message) {
	if !m.OK && m.AccBallot.N > r.maxN {
		r.maxN = m.AccBallot.N
	}
	if !m.OK && r.round != nil && m.Inst == r.round.inst && m.Ballot == r.round.ballot {
		r.round.preempter = m.AccBallot.Node
	}
}

func (r *Replica) sendDecided(to NodeID, inst uint64) {
	reply := Message{Type: MsgDecided, To: to, Inst: inst}
	if inst >= r.tailBase && inst < r.fsm.Index {
		reply.Value, reply.HasValue = r.tail[inst-r.tailBase], true
	}
	r.send(reply)
}

// maybeStart starts a round when there is work and nothing stops it.
// Ops go to the leader when there is one; a round here proposes our own
// ops (unless some are forwarded: they come first, and a batch must
// start with our oldest op not yet applied), else a forwarded batch,
// and confirms the reads waiting.
func (r *Replica) maybeStart() {
	if r.round != nil || r.fsm == nil || r.backoff > 0 {
		return
	}
	if len(r.fwd) == 0 && len(r.pending) > 0 && r.forwarding() {
		n := r.batchLen()
		r.fwd = append([]Op(nil), r.pending[:n]...)
		r.pending = append([]Op(nil), r.pending[n:]...)
		r.fwdSent = 0
		r.sendForward()
	}
	own := len(r.pending) > 0 && len(r.fwd) == 0
	if !own && len(r.reads) == 0 && !r.recover && len(r.fwdq) == 0 {
		return
	}
	r.recover = false
	r.maxN++
	rd := &round{
		inst:     r.fsm.Index,
		ballot:   Ballot{N: r.maxN, Node: r.id},
		roster:   append([]NodeID(nil), r.fsm.Roster...),
		phase:    1,
		promises: map[NodeID]promise{},
		accepts:  map[NodeID]bool{},
		reads:    r.reads,
		timeout:  r.roundTimeout() << min(r.attempt, 3),
	}
	r.reads = nil
	// One entry carries our own batch and, after it, batches forwarded
	// to us, acceptors' first (one that is leaving must see its seat
	// given up before it goes, or the roster keeps a seat nobody answers
	// for), up to the entry's size limit.
	var top Batch
	size := 0
	if own {
		n := r.batchLen()
		rd.ops = append([]Op(nil), r.pending[:n]...)
		r.pending = append([]Op(nil), r.pending[n:]...)
		top = Batch{Proposer: r.id, Ops: rd.ops}
		for _, o := range rd.ops {
			size += o.size()
		}
	}
	if len(r.fwdq) > 0 {
		slices.SortStableFunc(r.fwdq, func(a, b *fwdItem) int {
			ia, ib := r.fsm.InRoster(a.origin), r.fsm.InRoster(b.origin)
			switch {
			case ia && !ib:
				return -1
			case ib && !ia:
				return 1
			}
			return 0
		})
		n := 0
		for n < len(r.fwdq) && n < r.cfg.MaxBatch && (n == 0 && !own || size+r.fwdq[n].size <= MaxBatchBytes) {
			size += r.fwdq[n].size
			n++
		}
		rd.fwd = append([]*fwdItem(nil), r.fwdq[:n]...)
		r.fwdq = append([]*fwdItem(nil), r.fwdq[n:]...)
		for _, it := range rd.fwd {
			if top.Proposer.isZero() {
				top = it.b
			} else {
				top.More = append(top.More, it.b)
			}
		}
	}
	if !top.Proposer.isZero() {
		rd.batch = EncodeBatch(top)
	}
	r.round = rd
	for _, a := range rd.roster {
		r.send(Message{Type: MsgPrepare, To: a, Inst: rd.inst, Ballot: rd.ballot})
	}
}

// roundTimeout is how long a round waits for a quorum before it is
// abandoned (before doubling for failures): the configured RoundTimeout,
// or twice the smoothed time decided rounds took, whichever is longer.
// On a loaded machine a round can take longer than RoundTimeout; with
// a fixed timeout every round would then fail once, and the success
// that follows would reset it, so that each entry costs a failure and a
// backoff, and proposers waiting for each other's timeouts duel. The
// smoothing is TCP's (RFC 6298): srtt moves an eighth toward each sample.
func (r *Replica) roundTimeout() int {
	return max(r.cfg.RoundTimeout, r.srtt8/4+1)
}

// sampleRound records that a decided round took ticks ticks.
func (r *Replica) sampleRound(ticks int) {
	const maxSample = 1 << 16
	ticks = min(ticks, maxSample)
	if r.srtt8 == 0 {
		r.srtt8 = 8 * ticks
		return
	}
	r.srtt8 += ticks - r.srtt8/8
}

// batchLen is how many pending ops the next entry takes: up to MaxBatch
// and about MaxBatchBytes, at least one.
func (r *Replica) batchLen() int {
	n, size := 0, 0
	for n < len(r.pending) && n < r.cfg.MaxBatch {
		sz := r.pending[n].size()
		if n > 0 && size+sz > MaxBatchBytes {
			break
		}
		size += sz
		n++
	}
	return n
}

// phase2 runs when a quorum promised: propose the value accepted at the
// highest ballot among them, or our own batch when none accepted any.
func (r *Replica) phase2() {
	rd := r.round
	var best promise
	found := false
	for _, a := range rd.roster {
		p, ok := rd.promises[a]
		if ok && p.has && (!found || best.acc.less(p.acc)) {
			best, found = p, true
		}
	}
	if found {
		rd.value = best.val
	} else {
		// Nothing was chosen for rd.inst when this quorum promised, and
		// nothing at a lower ballot can be chosen any more: every read
		// registered before the round may answer from the applied state.
		r.out.Reads = append(r.out.Reads, rd.reads...)
		rd.reads = nil
		if rd.batch == nil {
			r.sampleRound(2 * rd.ticks) // one exchange of the two
			r.round = nil
			r.attempt = 0
			return
		}
		rd.value = rd.batch
	}
	rd.phase = 2
	if r.trace != nil {
		r.trace.proposed(rd.inst, rd.ballot, rd.roster, rd.value)
	}
	for _, a := range rd.roster {
		r.send(Message{Type: MsgAccept, To: a, Inst: rd.inst, Ballot: rd.ballot, Value: rd.value})
	}
}

// endRound ends the current round. Ops and reads not yet answered go back
// to the front of the queues; a failed round backs off at random first.
func (r *Replica) endRound(failed bool) {
	rd := r.round
	if rd == nil {
		return
	}
	r.round = nil
	r.pending = append(rd.ops, r.pending...)
	r.reads = append(rd.reads, r.reads...)
	if r.serve {
		var back []*fwdItem
		for _, it := range rd.fwd {
			if !r.fwdDone(it) {
				back = append(back, it)
			}
		}
		r.fwdq = append(back, r.fwdq...)
	}
	if failed {
		r.attempt++
		// The backoff is counted in rounds: on a loaded machine a round
		// takes many ticks, and proposers that back off for less than a
		// round only preempt each other again.
		limit := min(r.cfg.MaxBackoff, 1<<min(r.attempt, 16)) * max(1, r.srtt8/8)
		r.backoff = 1 + r.cfg.Rand.IntN(limit)
		if len(rd.ops) > 0 && r.fwdFails >= 2 && !r.leader.isZero() && rd.preempter == r.leader {
			// Our own ops lost to the leader's round where forwarding
			// them had failed before: the leader is proposing, late
			// rather than gone. Forward again: replicas that keep
			// proposing their own ops duel each other and the leader,
			// and nothing is decided (32 federates joining at once on a
			// loaded machine: over 900 rounds, 7 decided).
			r.fwdFails = 0
		}
	} else {
		r.attempt = 0
		r.backoff = 0
	}
}

// learn records that inst chose value. Values for later instances wait in
// the future buffer until the gap before them is filled.
func (r *Replica) learn(inst uint64, value []byte, gossip bool) {
	if r.fsm == nil || inst < r.fsm.Index {
		return
	}
	if inst > r.fsm.Index {
		if len(r.future) < r.cfg.MaxFuture {
			r.future[inst] = value
		}
		return
	}
	r.applyEntry(value, gossip)
	r.drainFuture()
}

func (r *Replica) drainFuture() {
	for {
		v, ok := r.future[r.fsm.Index]
		if !ok {
			return
		}
		r.applyEntry(v, false)
	}
}

func (r *Replica) applyEntry(value []byte, gossip bool) {
	inst := r.fsm.Index
	forOther := gossip && r.round != nil && r.round.inst == inst && r.round.fwd != nil && r.round.phase == 2
	ps, changes := r.fsm.applyAll(value)
	r.tail = append(r.tail, value)
	if len(r.tail) > r.cfg.TailLen {
		r.tail = r.tail[1:]
		r.tailBase++
	}
	r.acc.forgetBelow(r.fsm.Index)
	delete(r.future, inst)
	r.stall = 0
	r.out.Changes = append(r.out.Changes, changes...)
	for _, p := range ps {
		if p.proposer == r.id {
			r.resolve(p.results)
		}
	}
	if gossip {
		r.send(Message{Type: MsgCommit, Inst: inst, Value: value, HasValue: true})
		if forOther {
			// Batches proposed for their origins: tell them straight away.
			for _, p := range ps {
				if p.proposer != r.id {
					r.send(Message{Type: MsgCommit, To: p.proposer, Inst: inst, Value: value, HasValue: true})
				}
			}
		}
	}
	// Forwarded batches this entry carried are done, also when their
	// origin departed in it (its session, which fwdDone reads, is gone
	// then, and proposing the batch again would apply it again).
	inEntry := func(it *fwdItem) bool {
		return slices.ContainsFunc(ps, func(p applied) bool { return p.proposer == it.origin && p.last >= it.maxSeq })
	}
	if r.round != nil {
		r.round.fwd = slices.DeleteFunc(r.round.fwd, inEntry)
	}
	if len(r.fwdq) > 0 {
		r.fwdq = slices.DeleteFunc(r.fwdq, func(it *fwdItem) bool { return inEntry(it) || r.fwdDone(it) })
	}
	if r.round != nil && r.round.inst < r.fsm.Index {
		r.endRound(false)
	}
}

// Farewell returns the decisions of the last n instances applied here,
// in order, as commits for the owner to hand every member directly
// before its process leaves. A decision this replica learned as the
// proposer goes out by gossip, which may not carry it before the process
// is gone; an acceptor that accepted it without learning it could then
// never learn it, when the rest of the roster that decides it is gone
// too (the last of several acceptors resigning at once, after the one
// whose removal that decision was).
func (r *Replica) Farewell(n int) []Message {
	if r.fsm == nil {
		return nil
	}
	from := max(r.tailBase, r.fsm.Index-min(r.fsm.Index, uint64(n)))
	var out []Message
	for inst := from; inst < r.fsm.Index; inst++ {
		out = append(out, Message{Type: MsgCommit, From: r.id, Log: r.fsm.Log, Index: r.fsm.Index,
			Inst: inst, Value: r.tail[inst-r.tailBase], HasValue: true})
	}
	return out
}

// resolve reports results of our own ops and removes them from the queues.
func (r *Replica) resolve(res []OpResult) {
	if len(res) > 0 {
		r.fwdFails = 0
	}
	for _, x := range res {
		r.out.Done = append(r.out.Done, opDone{Seq: x.Seq, Result: x})
		r.dropOp(x.Seq)
	}
}

func (r *Replica) dropOp(seq uint64) {
	if r.round != nil {
		for i, o := range r.round.ops {
			if o.Seq == seq {
				r.round.ops = append(r.round.ops[:i:i], r.round.ops[i+1:]...)
				break
			}
		}
	}
	for i, o := range r.pending {
		if o.Seq == seq {
			r.pending = append(r.pending[:i:i], r.pending[i+1:]...)
			break
		}
	}
	for i, o := range r.fwd {
		if o.Seq == seq {
			r.fwd = append(r.fwd[:i:i], r.fwd[i+1:]...)
			if len(r.fwd) == 0 {
				r.fwdTo, r.fwdWait, r.fwdFails, r.fwdSent = NodeID{}, 0, 0, 0
			}
			break
		}
	}
}

// observe notes that from has applied index entries of log, and asks it
// for what we miss.
func (r *Replica) observe(from NodeID, log string, index uint64) {
	if log == "" || from.Name == "" || from == r.id {
		return
	}
	if r.fsm != nil && (log != r.fsm.Log || index <= r.fsm.Index) {
		return
	}
	if r.knownFrom.isZero() || index >= r.known {
		r.known, r.knownFrom = index, from
	}
	r.requestSync()
}

// SyncFrom makes peer the node this replica asks for what it lacks of
// the log (all of it, as a snapshot, before the first sync), and asks
// it now. It is the answer to Ready.SyncStalled when another member is
// alive: a joiner whose only source of the log left before answering
// would otherwise wait for a peer it has not heard from to gossip. A
// peer that holds no more than this replica answers nothing, and
// stalls in its turn.
func (r *Replica) SyncFrom(peer string) {
	if peer == "" || peer == r.id.Name || (r.fsm != nil && r.known <= r.fsm.Index) {
		return
	}
	r.knownFrom = NodeID{Name: peer}
	r.syncWait = 0
	r.requestSync()
	r.flush()
}

func (r *Replica) requestSync() {
	if r.syncWait > 0 || r.knownFrom.isZero() {
		return
	}
	var have uint64
	if r.fsm != nil {
		if r.known <= r.fsm.Index {
			return
		}
		have = r.fsm.Index
	}
	r.syncWait = r.cfg.SyncTimeout
	r.send(Message{Type: MsgSyncReq, To: r.knownFrom, Inst: have})
}

const maxSyncEntries = 256

func (r *Replica) handleSyncReq(m Message) {
	reply := Message{Type: MsgSyncResp, To: m.From}
	switch {
	case m.Log != "" && m.Inst >= r.tailBase && m.Inst < r.fsm.Index:
		end := min(r.fsm.Index, m.Inst+maxSyncEntries)
		reply.Inst = m.Inst
		size := 0
		for _, v := range r.tail[m.Inst-r.tailBase : end-r.tailBase] {
			if len(reply.Entries) > 0 && size+len(v) > MaxSyncBytes {
				break // the learner asks again for the rest
			}
			size += len(v)
			reply.Entries = append(reply.Entries, v)
		}
	case m.Log == "" || m.Inst < r.fsm.Index:
		reply.Snapshot = r.fsm.Encode()
	default:
		return
	}
	r.send(reply)
}

func (r *Replica) handleSyncResp(m Message) {
	r.syncWait = 0
	if len(m.Snapshot) > 0 {
		f, err := DecodeFSM(m.Snapshot)
		switch {
		case err != nil:
			r.Rejected++
		case r.fsm == nil || (f.Log == r.fsm.Log && f.Index > r.fsm.Index):
			r.install(f)
		}
	}
	if r.fsm == nil {
		return
	}
	for i, v := range m.Entries {
		if m.Inst+uint64(i) == r.fsm.Index {
			r.applyEntry(v, false)
		}
	}
	r.drainFuture()
	r.requestSync()
}

// install replaces the state by a peer's snapshot, which is the state
// after a prefix of the same log (a fact, like any chosen value).
func (r *Replica) install(f *FSM) {
	r.fsm = f
	r.tail = nil
	r.tailBase = f.Index
	r.acc.forgetBelow(f.Index)
	for i := range r.future {
		if i < f.Index {
			delete(r.future, i)
		}
	}
	r.stall = 0
	r.out.Changes = append(r.out.Changes, Change{Kind: ChSnapshot})
	if s, ok := f.Sessions[r.id.Key()]; ok {
		results := map[uint64]OpResult{}
		for _, x := range s.Results {
			results[x.Seq] = x
		}
		var done []OpResult
		collect := func(ops []Op) {
			for _, o := range ops {
				if o.Seq <= s.Seq {
					x, ok := results[o.Seq]
					if !ok {
						x = OpResult{Seq: o.Seq, Code: CodeUnknown}
					}
					done = append(done, x)
				}
			}
		}
		if r.round != nil {
			collect(r.round.ops)
		}
		collect(r.fwd)
		collect(r.pending)
		r.resolve(done)
	}
	if r.round != nil && r.round.inst < f.Index {
		r.endRound(false)
	}
}
