package agree

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// The tests in this file drive replicas through an in-memory network that
// drops, duplicates, reorders and partitions messages, with crashes and
// arbitrary roster changes, from one seeded random source: no sockets, no
// clock, no goroutines. A failure prints the seed; the same seed replays
// the same run.

var (
	flagSeeds = flag.Int("seeds", 80, "random runs per simulation test (a quarter with -short); given, also the linearizability check's (default 300)")
	flagSeed  = flag.Uint64("seed", 0, "replay this one seed of the simulation tests")
)

// seeds returns the seeds a simulation test runs.
func seeds(n int) []uint64 {
	if *flagSeed != 0 {
		return []uint64{*flagSeed}
	}
	if testing.Short() {
		n /= 4
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = uint64(i + 1)
	}
	return out
}

type simNode struct {
	r     *Replica
	alive bool
	side  int // partition side

	checked  uint64   // index up to which checkLogs looked
	checkedR *Replica // at which incarnation
}

type simNet struct {
	t       *testing.T
	seed    uint64
	rng     *rand.Rand
	nodes   map[string]*simNode
	names   []string
	queue   []Message
	nextInc uint64

	// invariant bookkeeping
	log       map[uint64][]byte            // value each instance chose, as learned by anyone
	rosters   map[uint64][]NodeID          // acceptor set every round of an instance used
	proposals map[uint64]map[Ballot][]byte // phase-2 value per (instance, ballot)
	accepts   map[uint64]map[Ballot]map[NodeID]bool
	chosen    map[uint64][]byte // value a quorum accepted
	states    map[uint64]string // canonical state after each index
	results   map[string][]opDone

	// cfgRand, when set, seeds each replica the way Start does with
	// Config.Rand; transcript, when set, records every message sent.
	cfgRand    *rand.Rand
	transcript *strings.Builder

	// For the linearizability check (linearizability_test.go): outside
	// turns off the checks above, which look inside the replicas, so that
	// only what clients see is judged; unsafe makes every acceptor
	// accept below its promise (a bug on purpose); onReady sees every
	// ready a replica gives.
	outside bool
	unsafe  bool
	onReady func(name string, rd Ready)
}

// localTimings are the agreement timings package gossip gives a replica
// under its ProfileLocal (gossip/config.go, profileTimings; gossip's
// TestLocalTimings keeps the two equal).
var localTimings = ReplicaConfig{RoundTimeout: 15, MaxBackoff: 8, SyncTimeout: 15, RecoverAfter: 25}

func newSimNet(t *testing.T, seed uint64, n int) *simNet {
	return newSimNetRand(t, seed, n, nil)
}

// newSimNetRand is newSimNet with replicas made as package gossip's
// Start makes them (localTimings), their random sources drawn from
// cfgRand (nil: from the network's rng).
func newSimNetRand(t *testing.T, seed uint64, n int, cfgRand *rand.Rand) *simNet {
	s := &simNet{
		t: t, seed: seed, cfgRand: cfgRand,
		rng:       rand.New(rand.NewPCG(seed, 0x6d657368)),
		nodes:     map[string]*simNode{},
		log:       map[uint64][]byte{},
		rosters:   map[uint64][]NodeID{},
		proposals: map[uint64]map[Ballot][]byte{},
		accepts:   map[uint64]map[Ballot]map[NodeID]bool{},
		chosen:    map[uint64][]byte{},
		states:    map[uint64]string{},
		results:   map[string][]opDone{},
	}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("n%d", i)
		s.names = append(s.names, name)
		var genesis *FSM
		if i == 0 {
			genesis = NewFSM("log-1", s.id(name, 1), 5)
		}
		s.start(name, 1, genesis)
	}
	return s
}

func (s *simNet) id(name string, inc uint64) NodeID { return NodeID{Name: name, Inc: inc} }

func (s *simNet) start(name string, inc uint64, genesis *FSM) {
	var r *Replica
	if s.cfgRand != nil {
		cfg := localTimings
		cfg.ID, cfg.Rand = s.id(name, inc), rand.New(rand.NewPCG(s.cfgRand.Uint64(), s.cfgRand.Uint64()))
		r = NewReplica(cfg, genesis)
	} else {
		r = NewReplica(ReplicaConfig{
			ID:           s.id(name, inc),
			Rand:         rand.New(rand.NewPCG(s.rng.Uint64(), s.rng.Uint64())),
			RoundTimeout: 12,
			MaxBackoff:   8,
			SyncTimeout:  5,
			RecoverAfter: 8,
			TailLen:      4096,
		}, genesis)
	}
	if !s.outside {
		r.trace = &replicaTrace{proposed: s.onPropose, accepted: s.onAccept}
	}
	r.acc.unsafeAccept = s.unsafe
	s.nodes[name] = &simNode{r: r, alive: true}
}

func (s *simNet) fail(format string, args ...any) {
	s.t.Helper()
	s.t.Fatalf("seed %d: "+format, append([]any{s.seed}, args...)...)
}

func (s *simNet) onPropose(inst uint64, b Ballot, roster []NodeID, v []byte) {
	if prev, ok := s.rosters[inst]; ok {
		if fmt.Sprint(prev) != fmt.Sprint(roster) {
			s.fail("instance %d: rounds disagree on the acceptors: %v vs %v", inst, prev, roster)
		}
	} else {
		s.rosters[inst] = append([]NodeID(nil), roster...)
	}
	if s.proposals[inst] == nil {
		s.proposals[inst] = map[Ballot][]byte{}
	}
	if prev, ok := s.proposals[inst][b]; ok && !bytes.Equal(prev, v) {
		s.fail("instance %d ballot %v proposed two values", inst, b)
	}
	s.proposals[inst][b] = v
}

func (s *simNet) onAccept(acc NodeID, inst uint64, b Ballot, v []byte) {
	if s.accepts[inst] == nil {
		s.accepts[inst] = map[Ballot]map[NodeID]bool{}
	}
	if s.accepts[inst][b] == nil {
		s.accepts[inst][b] = map[NodeID]bool{}
	}
	s.accepts[inst][b][acc] = true
	roster, ok := s.rosters[inst]
	if !ok {
		s.fail("instance %d: acceptance before any proposal", inst)
	}
	n := 0
	for _, a := range roster {
		if s.accepts[inst][b][a] {
			n++
		}
	}
	if n >= Quorum(len(roster)) {
		if prev, ok := s.chosen[inst]; ok && !bytes.Equal(prev, v) {
			s.fail("instance %d: two different values chosen", inst)
		}
		if l, ok := s.log[inst]; ok && !bytes.Equal(l, v) {
			s.fail("instance %d: chosen value differs from the learned one", inst)
		}
		s.chosen[inst] = v
	}
}

// checkLogs compares what every replica applied with what the others
// applied and with what a quorum accepted. It looks only at what changed
// since the last call.
func (s *simNet) checkLogs() {
	for _, name := range s.names {
		n := s.nodes[name]
		r := n.r
		if r.fsm == nil || (n.checked == r.fsm.Index && n.checkedR == r) {
			continue
		}
		from := r.tailBase
		if n.checkedR == r && n.checked > from {
			from = n.checked
		}
		for inst := from; inst < r.fsm.Index; inst++ {
			v := r.tail[inst-r.tailBase]
			if prev, ok := s.log[inst]; ok {
				if !bytes.Equal(prev, v) {
					s.fail("instance %d: %s learned a different value", inst, name)
				}
				continue
			}
			s.log[inst] = v
			if c, ok := s.chosen[inst]; ok && !bytes.Equal(c, v) {
				s.fail("instance %d: %s learned a value that was not chosen", inst, name)
			}
		}
		n.checked, n.checkedR = r.fsm.Index, r
	}
}

// checkStates: replicas at the same index hold the same state (apply is
// deterministic and snapshots carry it faithfully). It is costly, so runs
// call it now and then.
func (s *simNet) checkStates() {
	for _, name := range s.names {
		r := s.nodes[name].r
		if r.fsm == nil {
			continue
		}
		enc := canonical(r.fsm)
		if prev, ok := s.states[r.fsm.Index]; ok && prev != enc {
			s.fail("two replicas at index %d disagree on the state:\n%s\n%s: %s", r.fsm.Index, prev, name, enc)
		}
		s.states[r.fsm.Index] = enc
	}
}

// canonical renders a state so that equal states render equally (fmt
// prints maps in key order).
func canonical(f *FSM) string {
	var v any
	if err := msgpack.Unmarshal(f.Encode(), &v); err != nil {
		panic(err)
	}
	return fmt.Sprint(v)
}

func (s *simNet) connected(a, b string) bool {
	na, nb := s.nodes[a], s.nodes[b]
	return na != nil && nb != nil && na.alive && nb.alive && na.side == nb.side
}

func (s *simNet) collect(name string) {
	n := s.nodes[name]
	rd := n.r.Ready()
	if s.onReady != nil {
		s.onReady(name, rd)
	}
	s.results[name] = append(s.results[name], rd.Done...)
	if s.transcript != nil {
		for _, m := range rd.Messages {
			fmt.Fprintf(s.transcript, "%s: %v\n", name, m)
		}
		fmt.Fprintf(s.transcript, "%s: backoff %d\n", name, n.r.backoff)
	}
	for _, m := range rd.Messages {
		if m.To.Name == "" {
			for _, other := range s.names {
				if other != name {
					mm := m
					mm.To = NodeID{Name: other}
					s.queue = append(s.queue, mm)
				}
			}
			continue
		}
		s.queue = append(s.queue, m)
	}
}

// deliver moves one random message, maybe dropping or duplicating it.
func (s *simNet) deliver(lossy bool) {
	if len(s.queue) == 0 {
		return
	}
	i := s.rng.IntN(len(s.queue))
	m := s.queue[i]
	if lossy && s.rng.IntN(10) == 0 {
		// duplicate: leave it queued as well
	} else {
		s.queue = append(s.queue[:i], s.queue[i+1:]...)
	}
	if lossy && s.rng.IntN(8) == 0 {
		return // dropped
	}
	if !s.connected(m.From.Name, m.To.Name) {
		return
	}
	s.nodes[m.To.Name].r.Step(m)
	s.collect(m.To.Name)
}

func (s *simNet) randomOp(name string) Op {
	r := s.nodes[name].r
	switch k := s.rng.IntN(10); k {
	case 0, 1:
		return Op{Kind: OpAcquire, Key: fmt.Sprintf("k%d", s.rng.IntN(3)), Value: []byte(name)}
	case 2:
		if s.rng.IntN(2) == 0 {
			key := fmt.Sprintf("k%d", s.rng.IntN(3))
			var v uint64
			if r.fsm != nil {
				v = r.fsm.Keys[key].Version
			}
			return Op{Kind: OpCompareAndSwap, Key: key, Expect: v + uint64(s.rng.IntN(2)), Value: []byte(name)}
		}
		return Op{Kind: OpRelease, Key: fmt.Sprintf("k%d", s.rng.IntN(3))}
	case 3:
		return Op{Kind: OpCreateFed, Name: "fed", Time: s.randomTime(), Modules: s.randomModules()}
	case 4:
		return Op{Kind: OpDestroyFed}
	case 5, 6:
		return Op{Kind: OpJoinFed, Name: fmt.Sprintf("f%d", s.rng.IntN(3)), Type: "t",
			Time: s.randomTime(), Modules: s.randomModules(), Known: s.rng.IntN(3)}
	case 7:
		return Op{Kind: OpResignFed}
	case 8:
		return Op{Kind: OpAddAcceptor}
	default:
		if s.rng.IntN(3) != 0 {
			return Op{Kind: OpAddAcceptor}
		}
		// Remove a random acceptor, alive or not: safety must not depend
		// on the failure detector being right.
		if r.fsm != nil && len(r.fsm.Roster) > 0 {
			return Op{Kind: OpLost, Node: r.fsm.Roster[s.rng.IntN(len(r.fsm.Roster))]}
		}
		return Op{Kind: OpAddAcceptor}
	}
}

// randomTime is a time representation, sometimes none.
func (s *simNet) randomTime() string {
	return []string{"", "float", "float", "integer"}[s.rng.IntN(4)]
}

// randomModules is up to two of four small modules.
func (s *simNet) randomModules() []ModuleRec {
	var out []ModuleRec
	for range s.rng.IntN(3) {
		k := s.rng.IntN(4)
		out = append(out, ModuleRec{Name: fmt.Sprintf("m%d", k), Digest: fmt.Sprintf("d%d", k), Content: []byte{byte(k)}})
	}
	return out
}

// netEvent is the network's share of a random step, by the roll x (the
// cases below 95 that precede it are the replicas' own): below 95 a
// push-pull, below 97 a partition (lossy only), else a heal.
func (s *simNet) netEvent(x int, name string, lossy bool) {
	switch {
	case x < 95:
		s.pushPull(name)
	case x < 97:
		if lossy {
			s.partition()
		}
	default:
		s.heal()
	}
}

// pushPull is memberlist's push-pull: name learns the agreement log and
// index of a random peer, if connected.
func (s *simNet) pushPull(name string) {
	other := s.names[s.rng.IntN(len(s.names))]
	if other != name && s.connected(name, other) && s.nodes[other].r.fsm != nil {
		f := s.nodes[other].r.fsm
		s.nodes[name].r.Observe(other, f.Log, f.Index)
		s.collect(name)
	}
}

// partition puts every node on a random one of two sides.
func (s *simNet) partition() {
	for _, nn := range s.names {
		s.nodes[nn].side = s.rng.IntN(2)
	}
}

// heal connects every node again.
func (s *simNet) heal() {
	for _, nn := range s.names {
		s.nodes[nn].side = 0
	}
}

func (s *simNet) step(lossy bool) {
	name := s.names[s.rng.IntN(len(s.names))]
	n := s.nodes[name]
	switch x := s.rng.IntN(100); {
	case x < 70:
		s.deliver(lossy)
	case x < 85:
		if n.alive {
			n.r.Tick()
			s.collect(name)
		}
	case x < 88:
		if n.alive && n.r.Synced() {
			n.r.Submit(s.randomOp(name))
			s.collect(name)
		}
	case x < 99:
		s.netEvent(x, name, lossy)
	default:
		if lossy && s.rng.IntN(10) == 0 {
			// crash and restart as a new incarnation with no memory
			s.nextInc++
			s.start(name, 100+s.nextInc, nil)
		}
	}
	s.checkLogs()
}

func TestReplicaSafetyUnderFaults(t *testing.T) {
	for _, seed := range seeds(*flagSeeds) {
		s := newSimNet(t, seed, 5)
		for i := 0; i < 2500; i++ {
			s.step(true)
			if i%500 == 0 {
				s.checkStates()
			}
		}
		// Heal: everything connected, nothing lost; the log must still
		// agree, and a live roster majority must make progress.
		s.heal()
		for i := 0; i < 2500; i++ {
			s.step(false)
		}
		s.checkLogs()
		s.checkStates()
	}
}

// TestReplicaRacingAcquire: proposers race for one key under a lossy,
// reordering network; at most one ever holds it at a time, and every
// replica agrees who does.
func TestReplicaRacingAcquire(t *testing.T) {
	for _, seed := range seeds(*flagSeeds / 2) {
		s := newSimNet(t, seed, 5)
		// Grow the roster to everyone first.
		for _, nn := range s.names[1:] {
			s.nodes[nn].r.Observe("n0", "log-1", 0)
			s.collect(nn)
		}
		for i := 0; i < 3000 && len(s.queue) > 0; i++ {
			s.deliver(false)
		}
		for _, nn := range s.names[1:] {
			s.nodes[nn].r.Submit(Op{Kind: OpAddAcceptor})
			s.collect(nn)
		}
		s.run(20000, false, nil)
		if got := len(s.nodes["n0"].r.fsm.Roster); got != 5 {
			t.Fatalf("seed %d: roster has %d acceptors, want 5", seed, got)
		}
		seqs := map[string]uint64{}
		for _, nn := range s.names {
			seqs[nn] = s.nodes[nn].r.Submit(Op{Kind: OpAcquire, Key: "name", Value: []byte(nn)})
			s.collect(nn)
		}
		finished := func() bool {
			for _, nn := range s.names {
				found := false
				for _, d := range s.results[nn] {
					found = found || d.Seq == seqs[nn]
				}
				if !found {
					return false
				}
			}
			return true
		}
		s.run(20000, true, finished)
		s.run(40000, false, finished)
		winners := 0
		for _, nn := range s.names {
			var got *opDone
			for i := range s.results[nn] {
				if s.results[nn][i].Seq == seqs[nn] {
					got = &s.results[nn][i]
				}
			}
			if got == nil {
				t.Fatalf("seed %d: %s: acquire never finished", seed, nn)
			}
			if got.Result.Entry.Holder.Name == nn {
				winners++
			}
		}
		if winners != 1 {
			t.Fatalf("seed %d: %d winners, want 1", seed, winners)
		}
		s.checkLogs()
	}
}

// run delivers messages and ticks until done reports true (checked now
// and then) or the budget is spent.
func (s *simNet) run(budget int, lossy bool, done func() bool) {
	for i := 0; i < budget; i++ {
		if done != nil && i%32 == 0 && done() {
			break
		}
		if len(s.queue) > 0 && s.rng.IntN(4) != 0 {
			s.deliver(lossy)
		} else {
			name := s.names[s.rng.IntN(len(s.names))]
			if s.nodes[name].alive {
				s.nodes[name].r.Tick()
				s.collect(name)
			}
		}
		if i%64 == 0 {
			s.checkLogs()
		}
	}
	s.checkStates()
}

// TestReplicaReadIsLinearizable: a read that finishes after an acquire
// finished sees it.
func TestReplicaReadIsLinearizable(t *testing.T) {
	s := newSimNet(t, 7, 3)
	for _, nn := range s.names[1:] {
		s.nodes[nn].r.Observe("n0", "log-1", 0)
		s.collect(nn)
		s.run(2000, false, nil)
		s.nodes[nn].r.Submit(Op{Kind: OpAddAcceptor})
		s.collect(nn)
		s.run(2000, false, nil)
	}
	seq := s.nodes["n1"].r.Submit(Op{Kind: OpAcquire, Key: "x", Value: []byte("v")})
	s.collect("n1")
	s.results["n1"] = nil
	finished := func() bool {
		for _, d := range s.results["n1"] {
			if d.Seq == seq {
				return true
			}
		}
		return false
	}
	// deliver only until n1 knows its result; n2 may still be behind
	for i := 0; i < 100000 && !finished(); i++ {
		s.deliver(false)
		if len(s.queue) == 0 {
			s.nodes["n1"].r.Tick()
			s.collect("n1")
		}
	}
	if !finished() {
		t.Fatal("acquire did not finish")
	}
	// Drop all gossip so n2 learns only through its read.
	s.queue = nil
	id := s.nodes["n2"].r.Read()
	s.collect("n2")
	done := false
	for i := 0; i < 100000 && !done; i++ {
		if len(s.queue) > 0 {
			m := s.queue[0]
			s.queue = s.queue[1:]
			if s.connected(m.From.Name, m.To.Name) {
				s.nodes[m.To.Name].r.Step(m)
				rd := s.nodes[m.To.Name].r.Ready()
				for _, x := range rd.Reads {
					if m.To.Name == "n2" && x == id {
						done = true
					}
				}
				for _, mm := range rd.Messages {
					if mm.To.Name != "" {
						s.queue = append(s.queue, mm)
					}
				}
			}
		} else {
			s.nodes["n2"].r.Tick()
			rd := s.nodes["n2"].r.Ready()
			for _, x := range rd.Reads {
				if x == id {
					done = true
				}
			}
			s.queue = append(s.queue, rd.Messages...)
		}
	}
	if !done {
		t.Fatal("read did not finish")
	}
	if e := s.nodes["n2"].r.fsm.Keys["x"]; e.Holder.Name != "n1" {
		t.Fatalf("read after acquire saw holder %q, want n1", e.Holder.Name)
	}
}

func TestFSMFederationRules(t *testing.T) {
	a, b := NodeID{"a", 1}, NodeID{"b", 1}
	f := NewFSM("l", a, 5)
	apply := func(p NodeID, o Op) OpResult {
		t.Helper()
		o.Seq = f.Sessions[p.Key()].Seq + 1
		_, res, _ := f.Apply(EncodeBatch(Batch{Proposer: p, Ops: []Op{o}}))
		if len(res) != 1 {
			t.Fatalf("op %v: %d results", o.Kind, len(res))
		}
		return res[0]
	}
	if r := apply(a, Op{Kind: OpJoinFed, Name: "x"}); r.Code != CodeNotFound {
		t.Fatalf("join before create: %v", r.Code)
	}
	if r := apply(a, Op{Kind: OpCreateFed, Name: "fed"}); r.Code != CodeOK {
		t.Fatalf("create: %v", r.Code)
	}
	if r := apply(b, Op{Kind: OpCreateFed, Name: "fed"}); r.Code != CodeExists {
		t.Fatalf("second create: %v", r.Code)
	}
	r1 := apply(a, Op{Kind: OpJoinFed, Name: "x", Type: "t"})
	if r1.Code != CodeOK || r1.Handle != 1 {
		t.Fatalf("join: %+v", r1)
	}
	if r := apply(b, Op{Kind: OpJoinFed, Name: "x"}); r.Code != CodeNameInUse {
		t.Fatalf("duplicate name: %v", r.Code)
	}
	r2 := apply(b, Op{Kind: OpJoinFed, Type: "radar"})
	if r2.Code != CodeOK || r2.Handle != 2 || r2.Name != "radar-2" {
		t.Fatalf("generated name: %+v", r2)
	}
	if r := apply(a, Op{Kind: OpDestroyFed}); r.Code != CodeFederatesJoined {
		t.Fatalf("destroy while joined: %v", r.Code)
	}
	if r := apply(a, Op{Kind: OpAcquire, Key: "obj", Value: []byte("1")}); r.Entry.Holder != a || r.Entry.Version != 1 {
		t.Fatalf("acquire: %+v", r)
	}
	if r := apply(b, Op{Kind: OpRelease, Key: "obj"}); r.Code != CodeNotHolder {
		t.Fatalf("release by non-holder: %v", r.Code)
	}
	// a is lost: its federate leaves, its key is freed, b can take both.
	apply(b, Op{Kind: OpLost, Node: a})
	if f.Keys["obj"].Holder != (NodeID{}) || f.Keys["obj"].Version != 2 {
		t.Fatalf("key after loss: %+v", f.Keys["obj"])
	}
	if r := apply(b, Op{Kind: OpRelease, Key: "obj"}); r.Code != CodeOK {
		t.Fatalf("release of a free key: %v", r.Code)
	}
	if r := apply(b, Op{Kind: OpResignFed}); r.Code != CodeOK {
		t.Fatalf("resign: %v", r.Code)
	}
	if r := apply(b, Op{Kind: OpDestroyFed}); r.Code != CodeOK {
		t.Fatalf("destroy: %v", r.Code)
	}
	// the roster never empties
	if len(f.Roster) != 1 || f.Roster[0] != a {
		t.Fatalf("roster %v", f.Roster)
	}
	// A duplicate op (same seq) is applied once.
	o := Op{Kind: OpAcquire, Key: "d", Value: []byte("1"), Seq: f.Sessions[b.Key()].Seq + 1}
	f.Apply(EncodeBatch(Batch{Proposer: b, Ops: []Op{o}}))
	f.Apply(EncodeBatch(Batch{Proposer: b, Ops: []Op{o}}))
	if f.Keys["d"].Version != 1 {
		t.Fatalf("duplicate applied twice: %+v", f.Keys["d"])
	}
	ids := f.Identities()
	sort.Slice(ids, func(i, j int) bool { return ids[i].less(ids[j]) })
	if len(ids) != 2 {
		t.Fatalf("identities %v", ids)
	}
}

// TestConfigRandReplays: replicas made as Start makes them, with their
// sources drawn from Config.Rand, make the same choices under the same
// seed (the same messages and backoffs in the same order) and other
// choices under another seed. (gossip's TestSourcesReplay checks the
// sources Start draws.)
func TestConfigRandReplays(t *testing.T) {
	run := func(cfgSeed uint64) string {
		s := newSimNetRand(t, 3, 5, rand.New(rand.NewPCG(cfgSeed, 0)))
		s.transcript = &strings.Builder{}
		for i := 0; i < 3000; i++ {
			s.step(true)
		}
		return s.transcript.String()
	}
	a, b, other := run(11), run(11), run(12)
	if a != b {
		t.Fatalf("the same Config.Rand seed made different choices")
	}
	if a == other {
		t.Fatalf("another Config.Rand seed made the same choices: the replicas do not draw from it")
	}
	if !strings.Contains(a, "backoff 2") && !strings.Contains(a, "backoff 3") {
		t.Fatalf("no random backoff in the run; the test does not exercise the source")
	}
}

// TestSizeLimits: a log entry holds about MaxBatchBytes of ops, a
// catch-up answer about MaxSyncBytes of entries (each at least one), so
// large values never make a message memberlist refuses (20 MB); a
// learner catches up over several answers.
func TestSizeLimits(t *testing.T) {
	a := NodeID{Name: "a", Inc: 1}
	r := NewReplica(ReplicaConfig{ID: a, Rand: rand.New(rand.NewPCG(1, 1))}, NewFSM("l", a, 5))
	big := make([]byte, 600<<10)
	r.pending = []Op{{Kind: OpAcquire, Value: big}, {Kind: OpAcquire, Value: big}, {Kind: OpAcquire}}
	if n := r.batchLen(); n != 1 {
		t.Fatalf("batch of %d ops of 600 KB", n)
	}
	r.pending = []Op{{Kind: OpAcquire, Value: make([]byte, 3*MaxBatchBytes)}}
	if n := r.batchLen(); n != 1 {
		t.Fatalf("an op over the limit is not taken alone: %d", n)
	}
	r.pending = nil

	// a is the only acceptor: each Submit is decided at once.
	for i := range 12 {
		r.Submit(Op{Kind: OpAcquire, Key: fmt.Sprint(i), Value: make([]byte, 1<<20)})
	}
	r.Ready()
	if r.fsm.Index != 12 {
		t.Fatalf("index %d", r.fsm.Index)
	}
	// b holds the same log at index 0 and catches up from a.
	b := NewReplica(ReplicaConfig{ID: NodeID{Name: "b", Inc: 1}, Rand: rand.New(rand.NewPCG(2, 2))}, NewFSM("l", a, 5))
	b.Observe("a", "l", r.fsm.Index)
	answers := 0
	for range 100 {
		var toA []Message
		for _, m := range b.Ready().Messages {
			if m.To.Name == "a" {
				toA = append(toA, m)
			}
		}
		if len(toA) == 0 {
			break
		}
		for _, m := range toA {
			r.Step(m)
			for _, resp := range r.Ready().Messages {
				if resp.Type != MsgSyncResp {
					continue
				}
				answers++
				size := 0
				for _, e := range resp.Entries {
					size += len(e)
				}
				if len(resp.Entries) == 0 || len(resp.Snapshot) > 0 || (len(resp.Entries) > 1 && size > MaxSyncBytes) {
					t.Fatalf("answer with %d entries, %d bytes, snapshot %d bytes", len(resp.Entries), size, len(resp.Snapshot))
				}
				b.Step(resp)
			}
		}
	}
	if b.fsm.Index != 12 || answers < 3 {
		t.Fatalf("b at %d after %d answers", b.fsm.Index, answers)
	}
}

// TestFSMForwardedBatches: an entry carrying batches forwarded to its
// proposer applies each as its own proposer's, once, and a stale copy of
// a forwarded batch takes no effect after its origin departed or once it
// is older than fwdWindow entries (a forwarded batch is not bound to one
// instance, so a late copy must not open a new session).
func TestFSMForwardedBatches(t *testing.T) {
	lead, x, y := NodeID{"lead", 1}, NodeID{"x", 1}, NodeID{"y", 1}
	f := NewFSM("l", lead, 5)
	entry := func(top Batch, more ...Batch) []applied {
		t.Helper()
		top.More = more
		ps, _ := f.applyAll(EncodeBatch(top))
		return ps
	}
	entry(Batch{Proposer: lead, Ops: []Op{{Kind: OpCreateFed, Name: "fed", Seq: 1}}})
	xJoin := Batch{Proposer: x, Base: f.Index + 1, Ops: []Op{{Kind: OpJoinFed, Name: "x", Seq: 1}}}
	yJoin := Batch{Proposer: y, Base: f.Index + 1, Ops: []Op{{Kind: OpJoinFed, Name: "y", Seq: 1}, {Kind: OpAcquire, Key: "k", Seq: 2}}}
	ps := entry(Batch{Proposer: lead, Ops: []Op{{Kind: OpAcquire, Key: "lead", Seq: 2}}}, xJoin, yJoin)
	if len(ps) != 3 || ps[1].proposer != x || len(ps[1].results) != 1 || ps[2].proposer != y || len(ps[2].results) != 2 || ps[2].last != 2 {
		t.Fatalf("applied %+v", ps)
	}
	if f.Keys["k"].Holder != y || f.Keys["lead"].Holder != lead || len(f.Fed.Federates) != 2 {
		t.Fatalf("keys %+v, federates %+v", f.Keys, f.Fed.Federates)
	}
	// The same batch again (a retry chosen later): skipped by sequence.
	if ps := entry(yJoin); len(ps) != 1 || len(ps[0].results) != 0 {
		t.Fatalf("retry applied: %+v", ps)
	}
	// y departs (resign, then its own removal); a stale copy of its join
	// arrives after: no new federate, no key.
	entry(Batch{Proposer: y, Ops: []Op{{Kind: OpResignFed, Seq: 3}, {Kind: OpLost, Node: y, Seq: 4}}})
	if _, ok := f.Sessions[y.Key()]; ok {
		t.Fatal("y's session outlived its departure")
	}
	if ps := entry(yJoin); len(ps) != 1 || len(ps[0].results) != 0 || len(f.Fed.Federates) != 1 || f.Keys["k"].Holder == y {
		t.Fatalf("stale forwarded batch of a departed node applied: %+v, federates %+v, k %+v", ps, f.Fed.Federates, f.Keys["k"])
	}
	// y's own (not forwarded) batch is bound to its instance and applies
	// as before: a node that comes back as y is not refused here.
	if ps := entry(Batch{Proposer: y, Ops: []Op{{Kind: OpAcquire, Key: "own", Seq: 1}}}); len(ps[0].results) != 1 {
		t.Fatalf("y's own batch: %+v", ps)
	}
	// A forwarded batch older than fwdWindow entries is skipped, and the
	// tombstone of a departure goes after as many.
	entry(Batch{Proposer: x, Ops: []Op{{Kind: OpLost, Node: x, Seq: 2}}})
	old := Batch{Proposer: NodeID{"z", 1}, Base: f.Index + 1, Ops: []Op{{Kind: OpAcquire, Key: "z", Seq: 1}}}
	for range fwdWindow + 1 {
		entry(Batch{})
	}
	if _, ok := f.Gone[x.Key()]; ok {
		t.Fatalf("x's tombstone kept past the window: %v", f.Gone)
	}
	if ps := entry(old); len(ps[0].results) != 0 || f.Keys["z"].Holder != (NodeID{}) {
		t.Fatalf("a forwarded batch older than the window applied: %+v", ps)
	}
	old.Base = f.Index + 1
	if ps := entry(old); len(ps[0].results) != 1 {
		t.Fatalf("the batch forwarded again: %+v", ps)
	}
}

// A node the federation removed (its removal applied: it is in Gone)
// that then proposes the removal of another node, from the stale view of
// a node that was cut off, removes nobody; its other ops apply.
func TestFSMDepartedCannotRemove(t *testing.T) {
	x, y, z := NodeID{Name: "x", Inc: 1}, NodeID{Name: "y", Inc: 1}, NodeID{Name: "z", Inc: 1}
	f := NewFSM("l", x, 5)
	f.Fed = &FederationRec{Federates: []FederateRec{{Handle: 1, Name: "fx", Node: x}, {Handle: 2, Name: "fy", Node: y}}}
	f.Apply(EncodeBatch(Batch{Proposer: z, Ops: []Op{{Kind: OpLost, Node: y, Seq: 1}}}))
	if len(f.Fed.Federates) != 1 {
		t.Fatalf("z's removal of y: %+v", f.Fed.Federates)
	}
	_, res, _ := f.Apply(EncodeBatch(Batch{Proposer: y, Ops: []Op{{Kind: OpLost, Node: x, Seq: 1}, {Kind: OpAcquire, Key: "k", Seq: 2}}}))
	if len(f.Fed.Federates) != 1 || f.Fed.Federates[0].Node != x {
		t.Errorf("the removed y removed x: %+v", f.Fed.Federates)
	}
	if len(res) != 2 || f.Keys["k"].Holder != y {
		t.Errorf("y's other op: results %+v, k %+v", res, f.Keys["k"])
	}
}

// An acceptor that leaves right after its own removal is decided hands
// the decision to the others (Farewell): the last acceptor, which
// accepted it but heard no commit (gossip did not carry it before the
// leaver was gone), could never learn it otherwise, with the roster that
// decides it gone, and could decide nothing more.
func TestFarewellHandsOverTheLastDecision(t *testing.T) {
	s := newSimNet(t, 1, 2)
	n0, n1 := s.nodes["n0"].r, s.nodes["n1"].r
	n1.Observe("n0", "log-1", 0)
	s.collect("n1")
	n1.Submit(Op{Kind: OpAddAcceptor})
	s.collect("n1")
	s.run(5000, false, func() bool { return len(n0.fsm.Roster) == 2 && n1.fsm != nil && n1.fsm.Index == n0.fsm.Index })
	if len(n0.fsm.Roster) != 2 {
		t.Fatalf("roster %v, want both", n0.fsm.Roster)
	}
	// n1 asks for its removal; n0 accepts it, but hears no commit.
	seq := n1.Submit(Op{Kind: OpLost, Node: n1.id})
	s.collect("n1")
	removed := func() bool {
		return slices.ContainsFunc(s.results["n1"], func(d opDone) bool { return d.Seq == seq })
	}
	for i := 0; i < 5000 && !removed(); i++ {
		if len(s.queue) == 0 {
			n1.Tick()
			s.collect("n1")
			continue
		}
		m := s.queue[0]
		s.queue = s.queue[1:]
		if m.To.Name == "n0" && (m.Type == MsgCommit || m.Type == MsgDecided) {
			continue
		}
		s.nodes[m.To.Name].r.Step(m)
		s.collect(m.To.Name)
	}
	if !removed() {
		t.Fatal("n1's removal was not decided")
	}
	if len(n0.fsm.Roster) != 2 {
		t.Fatalf("n0 learned the removal already (roster %v): the test tests nothing", n0.fsm.Roster)
	}
	farewell := n1.Farewell(4)
	s.nodes["n1"].alive = false
	s.queue = nil
	for _, m := range farewell {
		m.To = n0.id
		n0.Step(m)
		s.collect("n0")
	}
	if !slices.Equal(n0.fsm.Roster, []NodeID{n0.id}) {
		t.Fatalf("roster after the farewell %v, want n0 alone", n0.fsm.Roster)
	}
	done := n0.Submit(Op{Kind: OpAcquire, Key: "k", Value: []byte("v")})
	s.collect("n0")
	for i := 0; i < 200 && !slices.ContainsFunc(s.results["n0"], func(d opDone) bool { return d.Seq == done }); i++ {
		for len(s.queue) > 0 {
			m := s.queue[0]
			s.queue = s.queue[1:]
			if m.To.Name == "n0" {
				n0.Step(m)
				s.collect("n0")
			}
		}
		n0.Tick()
		s.collect("n0")
	}
	if !slices.ContainsFunc(s.results["n0"], func(d opDone) bool { return d.Seq == done }) {
		t.Error("n0 decided nothing after the farewell")
	}
}

// A joiner whose only source of the log is gone before answering says
// so (Ready.SyncStalled), and syncs from the member it is then given.
func TestSyncFromAnotherWhenTheSourceIsGone(t *testing.T) {
	s := newSimNet(t, 1, 3)
	n0, n1, n2 := s.nodes["n0"].r, s.nodes["n1"].r, s.nodes["n2"].r
	s.nodes["n2"].alive = false // not there yet
	n1.Observe("n0", "log-1", 0)
	s.collect("n1")
	n0.Submit(Op{Kind: OpAcquire, Key: "k", Value: []byte("v")})
	s.collect("n0")
	s.run(5000, false, func() bool { return n0.fsm.Index > 0 && n1.fsm != nil && n1.fsm.Index == n0.fsm.Index })
	if n1.fsm == nil || n1.fsm.Index != n0.fsm.Index {
		t.Fatal("n1 did not sync from n0")
	}
	var stalled []string
	s.onReady = func(name string, rd Ready) {
		if name == "n2" && rd.SyncStalled != "" {
			stalled = append(stalled, rd.SyncStalled)
		}
	}
	// n2 joined through n1, which leaves before answering.
	s.queue = nil
	s.nodes["n2"].alive = true
	n2.Observe("n1", "log-1", n1.fsm.Index)
	s.collect("n2")
	s.nodes["n1"].alive = false
	for range 3 * n2.cfg.SyncTimeout {
		n2.Tick()
		s.collect("n2")
		for len(s.queue) > 0 {
			s.deliver(false)
		}
	}
	if n2.fsm != nil {
		t.Fatal("n2 synced from a node that is gone: the test tests nothing")
	}
	if len(stalled) == 0 || stalled[0] != "n1" {
		t.Fatalf("stalled on %v, want n1", stalled)
	}
	n2.SyncFrom("n0")
	s.collect("n2")
	for len(s.queue) > 0 {
		s.deliver(false)
	}
	if n2.fsm == nil || n2.fsm.Index != n0.fsm.Index {
		t.Fatalf("n2 after SyncFrom(n0): %v, want the log at %d", n2.fsm, n0.fsm.Index)
	}
	// Once synced, it asks nobody.
	n2.SyncFrom("n1")
	if rd := n2.Ready(); len(rd.Messages) != 0 {
		t.Errorf("a synced replica asked for the log: %v", rd.Messages)
	}
	// Behind again: it heard of a later entry from n1, which is gone
	// before answering; asked, n0 sends what n2 lacks.
	s.nodes["n2"].alive = false
	n0.Submit(Op{Kind: OpAcquire, Key: "k2", Value: []byte("v")})
	s.collect("n0")
	s.run(5000, false, func() bool { return n0.fsm.Index > n2.fsm.Index })
	s.queue = nil
	s.nodes["n2"].alive = true
	stalled = nil
	n2.Observe("n1", "log-1", n0.fsm.Index)
	s.collect("n2")
	for range 2 * n2.cfg.SyncTimeout {
		n2.Tick()
		s.collect("n2")
		for len(s.queue) > 0 {
			s.deliver(false)
		}
	}
	if len(stalled) == 0 || n2.fsm.Index == n0.fsm.Index {
		t.Fatalf("stalled on %v at %d of %d: want n1, still behind", stalled, n2.fsm.Index, n0.fsm.Index)
	}
	n2.SyncFrom("n0")
	s.collect("n2")
	for len(s.queue) > 0 {
		s.deliver(false)
	}
	if n2.fsm.Index != n0.fsm.Index {
		t.Errorf("n2 after SyncFrom(n0) at %d, want %d", n2.fsm.Index, n0.fsm.Index)
	}
}
