package agree

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// slowNet is a clocked in-memory network: every message takes a random
// latency of lo..hi ticks, and every replica ticks once per tick. It
// stands for a loaded machine, where a Paxos round takes longer than the
// configured round timeout. No loss: the question is liveness.
type slowNet struct {
	rng    *rand.Rand
	lo, hi int
	now    int
	names  []string
	reps   map[string]*Replica
	queue  []timedMsg
	done   map[string][]opDone
}

type timedMsg struct {
	due int
	m   Message
}

// newSlowNet starts acceptors a0..a(acc-1), a0 the leader every replica
// forwards to, and origins o0..o(origins-1), all from the same state:
// the acceptors seated, nothing else decided.
func newSlowNet(seed uint64, acc, origins, lo, hi int) *slowNet {
	n := &slowNet{rng: rand.New(rand.NewPCG(seed, 7)), lo: lo, hi: hi, reps: map[string]*Replica{}, done: map[string][]opDone{}}
	id := func(name string) NodeID { return NodeID{Name: name, Inc: 1} }
	f := NewFSM("slow", id("a0"), 5)
	for i := 1; i < acc; i++ {
		f.applyAll(EncodeBatch(Batch{Proposer: id(fmt.Sprintf("a%d", i)), Ops: []Op{{Kind: OpAddAcceptor, Seq: 1}}}))
	}
	enc := f.Encode()
	add := func(name string) {
		g, err := DecodeFSM(enc)
		if err != nil {
			panic(err)
		}
		tm := localTimings
		r := NewReplica(ReplicaConfig{
			ID: id(name), Rand: rand.New(rand.NewPCG(n.rng.Uint64(), n.rng.Uint64())),
			RoundTimeout: tm.RoundTimeout, MaxBackoff: tm.MaxBackoff, SyncTimeout: tm.SyncTimeout, RecoverAfter: tm.RecoverAfter,
		}, g)
		r.SetLeader(id("a0"), true)
		n.names = append(n.names, name)
		n.reps[name] = r
	}
	for i := range acc {
		add(fmt.Sprintf("a%d", i))
	}
	for i := range origins {
		add(fmt.Sprintf("o%d", i))
	}
	return n
}

func (n *slowNet) collect(name string) {
	rd := n.reps[name].Ready()
	n.done[name] = append(n.done[name], rd.Done...)
	for _, m := range rd.Messages {
		to := []string{m.To.Name}
		if m.To.Name == "" {
			to = nil
			for _, o := range n.names {
				if o != name {
					to = append(to, o)
				}
			}
		}
		for _, o := range to {
			mm := m
			mm.To = NodeID{Name: o, Inc: 1}
			n.queue = append(n.queue, timedMsg{due: n.now + n.lo + n.rng.IntN(n.hi-n.lo+1), m: mm})
		}
	}
}

// tick delivers what is due, in random order, then ticks every replica.
func (n *slowNet) tick() {
	n.now++
	var due []timedMsg
	n.queue = slices.DeleteFunc(n.queue, func(t timedMsg) bool {
		if t.due <= n.now {
			due = append(due, t)
			return true
		}
		return false
	})
	n.rng.Shuffle(len(due), func(i, j int) { due[i], due[j] = due[j], due[i] })
	for _, t := range due {
		n.reps[t.m.To.Name].Step(t.m)
		n.collect(t.m.To.Name)
	}
	for _, name := range n.names {
		n.reps[name].Tick()
		n.collect(name)
	}
}

// TestReplicaSlowRoundsDecideForwards: 32 replicas
// forward ops to the leader at once, each one op after another as a
// federate's join, resign and removal go, on a network where a round
// takes up to four times the configured round timeout. Every op is
// decided, and every replica applies the same log.
func TestReplicaSlowRoundsDecideForwards(t *testing.T) {
	const origins, perOrigin, limit = 32, 4, 1000
	tm := localTimings
	// A round is four latencies: 2x to 4x the round timeout.
	lo, hi := tm.RoundTimeout/2, tm.RoundTimeout
	for _, seed := range seeds(40) {
		n := newSlowNet(seed, 5, origins, lo, hi)
		submit := func(name string, k int) {
			n.reps[name].Submit(Op{Kind: OpAcquire, Key: fmt.Sprintf("k/%s/%d", name, k), Value: []byte(name)})
			n.collect(name)
		}
		for i := range origins {
			submit(fmt.Sprintf("o%d", i), 0)
		}
		decided := func() int {
			c := 0
			for i := range origins {
				name := fmt.Sprintf("o%d", i)
				if d := len(n.done[name]); d < perOrigin && d > 0 && n.reps[name].seq == uint64(d) {
					submit(name, d)
				}
				c += len(n.done[name])
			}
			return c
		}
		for n.now < limit && decided() < origins*perOrigin {
			n.tick()
		}
		if d := decided(); d < origins*perOrigin {
			t.Fatalf("seed %d: %d of %d ops decided within %d ticks", seed, d, origins*perOrigin, limit)
		}
		for i := range origins {
			name := fmt.Sprintf("o%d", i)
			for _, d := range n.done[name] {
				if d.Result.Code != CodeOK {
					t.Fatalf("seed %d: %s: result %+v", seed, name, d.Result)
				}
			}
		}
		// Let the commits spread, then every replica holds the same state,
		// every key held by its origin.
		for range 4 * hi {
			n.tick()
		}
		want := n.reps["a0"].State().Encode()
		for _, name := range n.names {
			if f := n.reps[name].State(); !bytes.Equal(f.Encode(), want) {
				t.Fatalf("seed %d: %s holds another state at index %d (a0 at %d)", seed, name, f.Index, n.reps["a0"].State().Index)
			}
		}
		for i := range origins {
			name := fmt.Sprintf("o%d", i)
			for k := range perOrigin {
				if h := n.reps["a0"].State().Keys[fmt.Sprintf("k/%s/%d", name, k)].Holder; h.Name != name {
					t.Fatalf("seed %d: k/%s/%d held by %v", seed, name, k, h)
				}
			}
		}
	}
}
