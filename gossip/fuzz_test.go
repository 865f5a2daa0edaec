package gossip

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/meshrti/meshrti/gossip/internal/agree"
	"github.com/vmihailenco/msgpack/v5"
)

// The fuzz targets feed the inbound handlers arbitrary bytes: memberlist's
// NotifyMsg and MergeRemoteState on a Cluster without memberlist or
// goroutines, and a pure replica stepping arbitrary decoded messages. The
// property is that nothing panics (or allocates without bound) and that
// the replica's invariants hold afterwards. In a normal `go test` they run
// their seed corpus only; fuzz them with
//
//	go test -run=NONE -fuzz=FuzzReplicaStep -fuzztime=1m ./gossip

const fuzzLog = "log-fuzz"

var (
	fuzzSelf = agree.NodeID{Name: "self", Inc: 1}
	fuzzA    = agree.NodeID{Name: "a", Inc: 1}
	fuzzB    = agree.NodeID{Name: "b", Inc: 1}
)

// fuzzState is a log of three acceptors (self, a, b) with a federation
// (time representation, two modules, two federates) and two held keys
// (one acquired, one swapped).
func fuzzState() (*agree.FSM, [][]byte) {
	f := agree.NewFSM(fuzzLog, fuzzSelf, 5)
	m1, m2 := testModule("m1", []byte("<objectModel/>")), testModule("m2", []byte("<objectModel>2</objectModel>"))
	entries := [][]byte{agree.EncodeBatch(agree.Batch{Proposer: fuzzA, Ops: []agree.Op{{Seq: 1, Kind: agree.OpAddAcceptor}}}), agree.EncodeBatch(agree.Batch{Proposer: fuzzB, Ops: []agree.Op{{Seq: 1, Kind: agree.OpAddAcceptor}}}), agree.EncodeBatch(agree.Batch{Proposer: fuzzSelf, Ops: []agree.Op{
		{Seq: 1, Kind: agree.OpCreateFed, Name: "fed", Time: "HLAfloat64Time", Modules: []agree.ModuleRec{m1}},
		{Seq: 2, Kind: agree.OpJoinFed, Name: "Self", Type: "t"},
		{Seq: 3, Kind: agree.OpAcquire, Key: "k", Value: []byte("v")},
	}}), agree.EncodeBatch(agree.Batch{Proposer: fuzzA, Ops: []agree.Op{
		{Seq: 2, Kind: agree.OpJoinFed, Name: "A", Time: "HLAfloat64Time", Modules: []agree.ModuleRec{m2}, Known: 1},
		{Seq: 3, Kind: agree.OpCompareAndSwap, Key: "c", Expect: 0, Value: []byte("a")},
	}}),
	}
	for _, e := range entries {
		f.Apply(e)
	}
	return f, entries
}

// fuzzMessages are real messages of the fuzz log, for seed corpora.
func fuzzMessages() []agree.Message {
	f, entries := fuzzState()
	join := agree.EncodeBatch(agree.Batch{Proposer: fuzzB, Ops: []agree.Op{{Seq: 2, Kind: agree.OpJoinFed, Name: "B",
		Modules: []agree.ModuleRec{testModule("m3", []byte("<objectModel>3</objectModel>"))}, Known: 2}}})
	hdr := func(t agree.MsgType, from, to agree.NodeID) agree.Message {
		return agree.Message{Type: t, Log: fuzzLog, From: from, To: to, Index: f.Index, Inst: f.Index}
	}
	prep := hdr(agree.MsgPrepare, fuzzA, fuzzSelf)
	prep.Ballot = agree.Ballot{N: 1, Node: fuzzA}
	prom := hdr(agree.MsgPromise, fuzzA, fuzzSelf)
	prom.Ballot, prom.OK, prom.AccBallot, prom.HasValue, prom.Value = agree.Ballot{N: 1, Node: fuzzSelf}, true, agree.Ballot{N: 1, Node: fuzzB}, true, join
	acc := hdr(agree.MsgAccept, fuzzA, fuzzSelf)
	acc.Ballot, acc.Value = agree.Ballot{N: 2, Node: fuzzA}, join
	accd := hdr(agree.MsgAccepted, fuzzB, fuzzSelf)
	accd.Ballot, accd.OK, accd.AccBallot = agree.Ballot{N: 1, Node: fuzzSelf}, true, agree.Ballot{N: 1, Node: fuzzSelf}
	dec := hdr(agree.MsgDecided, fuzzB, fuzzSelf)
	dec.Inst, dec.HasValue, dec.Value = 1, true, entries[1]
	commit := hdr(agree.MsgCommit, fuzzB, agree.NodeID{})
	commit.HasValue, commit.Value = true, join
	req := agree.Message{Type: agree.MsgSyncReq, From: agree.NodeID{Name: "new", Inc: 7}, To: fuzzSelf}
	snap := hdr(agree.MsgSyncResp, fuzzA, fuzzSelf)
	snap.Snapshot = f.Encode()
	snap.Index++
	tail := hdr(agree.MsgSyncResp, fuzzA, fuzzSelf)
	tail.Inst, tail.Entries = 0, entries
	f.Apply(join) // a snapshot one entry ahead, which a synced replica installs
	ahead := hdr(agree.MsgSyncResp, fuzzB, fuzzSelf)
	ahead.Snapshot = f.Encode()
	return []agree.Message{prep, prom, acc, accd, dec, commit, req, snap, tail, ahead}
}

// detached returns a Cluster of the fuzz log without memberlist or
// goroutines: its inbound handlers may be called directly, and runDetached
// finishes what they queued for the loop.
func detached(tb testing.TB) *Cluster {
	tb.Helper()
	f, _ := fuzzState()
	c := newCluster(Config{Federation: "fuzz", NodeName: fuzzSelf.Name}, profileTimings(ProfileLocal), fuzzSelf)
	for _, id := range []agree.NodeID{fuzzSelf, fuzzA, fuzzB} {
		c.members[id.Name] = Member{Name: id.Name, State: MemberAlive, inc: id.Inc}
	}
	c.bcast = &memberlist.TransmitLimitedQueue{NumNodes: func() int { return 3 }, RetransmitMult: 3}
	c.core = newCore(fuzzSelf, c.tm, rand.New(rand.NewPCG(1, 2)), f)
	c.view.keys = map[string]agree.KeyEntry{}
	c.refreshView(nil)
	return c
}

// runDetached does what the loop would: run the queued closures and act on the
// replica's output, except sending.
func (c *Cluster) runDetached() {
	for {
		fs := c.inbox.drain()
		for _, f := range fs {
			f()
		}
		c.core.Tick()
		rd := c.core.Ready()
		c.stats.rejected.Store(c.core.Rejected)
		if len(rd.Changes) > 0 {
			c.refreshView(rd.Changes)
		}
		if len(fs) == 0 {
			return
		}
	}
}

// checkReplica fails when a replica's invariants do not hold.
func checkReplica(t *testing.T, r *agree.Replica) {
	t.Helper()
	if err := r.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}

// bomb declares 2^32-1 replicated-state entries in eight bytes; decoded
// without a check, it made msgpack allocate 343 GB and killed the process.
var bomb = []byte{0x81, 0xa1, 's', 0xdd, 0xff, 0xff, 0xff, 0xff}

func FuzzNotifyMsg(f *testing.F) {
	for _, m := range fuzzMessages() {
		f.Add(encodeWire(wireAgree, m))
	}
	f.Add(encodeWire(wireState, stateEntry{Owner: "a", Epoch: 3, Key: "pub/Aircraft", Version: 2, Value: []byte("x")}))
	f.Add(encodeWire(wireState, stateEntry{Owner: "a", Epoch: 4, Key: "pub/Aircraft", Version: 1, Deleted: true}))
	f.Add(encodeWire(wireBye, fuzzA))
	f.Add(append([]byte{wireAgree}, bomb[3:]...))
	f.Add(append([]byte{wireState}, bomb...))
	f.Add([]byte{0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		c := detached(t)
		d := &delegate{c}
		d.NotifyMsg(b)
		d.NotifyMsg(b) // duplicates are normal
		c.runDetached()
		checkReplica(t, c.core)
		if st := c.Stats(); st.MalformedMessages != 0 && st.MalformedMessages != 2 {
			t.Fatalf("one payload counted %d times", st.MalformedMessages)
		}
		_ = c.StateEntries()
		_, _ = c.Federation()
	})
}

func FuzzMergeRemoteState(f *testing.F) {
	st, _ := fuzzState()
	for _, pp := range []pushPull{
		{Node: "a", Log: fuzzLog, Index: st.Index + 3, States: []stateEntry{
			{Owner: "a", Epoch: 3, Key: "pub/Aircraft", Version: 2, Value: []byte("x")},
			{Owner: "b", Epoch: 1, Key: "sub", Version: 9, Deleted: true},
		}},
		{Node: "self", Log: "other", Index: 1},
		{},
	} {
		buf, err := msgpack.Marshal(&pp)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(buf, false)
		f.Add(buf, true)
	}
	f.Add(bomb, true)
	f.Fuzz(func(t *testing.T, buf []byte, join bool) {
		c := detached(t)
		d := &delegate{c}
		d.MergeRemoteState(buf, join)
		c.runDetached()
		checkReplica(t, c.core)
		_ = c.StateEntries()
		_ = c.States()
	})
}

// FuzzReplicaStep steps a synced replica in the middle of a round, and
// an unsynced one, with one arbitrary message (twice), then ticks them
// and submits work.
func FuzzReplicaStep(f *testing.F) {
	_, entries := fuzzState()
	ents, _ := msgpack.Marshal(entries)
	for _, m := range fuzzMessages() {
		flags := uint8(0)
		if m.To == fuzzSelf {
			flags |= 1
		}
		if m.Log != "" {
			flags |= 2
		}
		if m.OK {
			flags |= 4
		}
		if m.HasValue {
			flags |= 8
		}
		e := []byte(nil)
		if len(m.Entries) > 0 {
			e = ents
		}
		f.Add(uint8(m.Type), m.From.Name, m.From.Inc, flags, m.Index, m.Inst, m.Ballot.N, m.AccBallot.N, m.Value, e, m.Snapshot)
	}
	f.Fuzz(func(t *testing.T, typ uint8, from string, fromInc uint64, flags uint8, index, inst, bn, an uint64, value, entries, snapshot []byte) {
		st, _ := fuzzState()
		synced := newCore(fuzzSelf, profileTimings(ProfileLocal), rand.New(rand.NewPCG(1, 2)), st)
		synced.Submit(agree.Op{Kind: agree.OpAcquire, Key: "mine", Value: []byte("1")}) // a round in phase 1
		unsynced := newCore(agree.NodeID{Name: "new", Inc: 1}, profileTimings(ProfileLocal), rand.New(rand.NewPCG(3, 4)), nil)

		m := agree.Message{Type: agree.MsgType(typ), From: agree.NodeID{Name: from, Inc: fromInc}, Index: index, Inst: inst,
			Ballot: agree.Ballot{N: bn, Node: fuzzSelf}, AccBallot: agree.Ballot{N: an, Node: agree.NodeID{Name: from, Inc: fromInc}},
			OK: flags&4 != 0, HasValue: flags&8 != 0, Value: value, Snapshot: snapshot}
		if flags&1 != 0 {
			m.To = fuzzSelf
		}
		if flags&2 != 0 {
			m.Log = fuzzLog
		}
		if flags&16 != 0 {
			m.Ballot.Node = m.From
		}
		if len(entries) > 0 {
			var es [][]byte
			if decode(entries, &es) == nil {
				m.Entries = es
			} else {
				m.Entries = [][]byte{entries}
			}
		}
		for _, r := range []*agree.Replica{synced, unsynced} {
			r.Step(m)
			r.Step(m)
			for range 3 {
				r.Tick()
			}
			r.Ready()
			checkReplica(t, r)
			if r.Synced() {
				r.Submit(agree.Op{Kind: agree.OpJoinFed, Name: "x", Modules: []agree.ModuleRec{testModule("z", []byte("z"))}, Known: 5})
				r.Read()
				r.Ready()
				checkReplica(t, r)
			}
		}
		if synced.State().Log != fuzzLog {
			t.Fatalf("the log identity changed to %q", synced.State().Log)
		}
	})
}

// TestHostileInputIsCounted: dropped input is counted, by kind.
func TestHostileInputIsCounted(t *testing.T) {
	c := detached(t)
	d := &delegate{c}
	d.NotifyMsg(append([]byte{wireAgree}, bomb[3:]...))
	d.NotifyMsg(append([]byte{wireState}, bomb...))
	d.NotifyMsg([]byte{0x42, 0x80})
	d.NotifyMsg([]byte{wireBye})
	d.MergeRemoteState(bomb, false)
	other := fuzzMessages()[0]
	other.Log = "another log"
	d.NotifyMsg(encodeWire(wireAgree, other))
	bad := fuzzMessages()[7]
	bad.Snapshot = bad.Snapshot[:len(bad.Snapshot)/2]
	d.NotifyMsg(encodeWire(wireAgree, bad))
	c.runDetached()
	if got, want := c.Stats(), (Stats{MalformedMessages: 4, MalformedStates: 1, RejectedMessages: 2}); got != want {
		t.Fatalf("stats %+v, want %+v", got, want)
	}
	// Real messages still work.
	d.NotifyMsg(encodeWire(wireState, stateEntry{Owner: "a", Epoch: 1, Key: "k", Version: 1, Value: []byte("v")}))
	if es := c.StateEntries(); len(es) != 1 || es[0].Owner != "a" {
		t.Fatalf("state after hostile input: %+v", es)
	}
}

// TestHostileInputOverMemberlist: a member sending garbage over the
// reliable channel is counted and ignored; the cluster keeps working.
func TestHostileInputOverMemberlist(t *testing.T) {
	h := newHarness(t, 2, nil)
	h.waitRoster(2)
	ml := h.nodes[0].mlp.Load()
	target, _ := h.nodes[0].memberNode("n1")
	for _, b := range [][]byte{append([]byte{wireState}, bomb...), {0xA1, 0xc1}, {0x99, 0x99}} {
		if err := ml.SendReliable(target, b); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 5*time.Second, func() bool { return h.nodes[1].Stats().MalformedMessages == 3 }, "n1 counted three malformed messages")
	if _, ok, err := h.nodes[1].Acquire(ctxT(t), "k", nil); err != nil || !ok {
		t.Fatalf("acquire after hostile input: %v %v", ok, err)
	}
}

func TestCheckMsgpack(t *testing.T) {
	f, _ := fuzzState()
	for _, v := range []any{f, fuzzMessages(), pushPull{States: []stateEntry{{Owner: "a", Value: bytes.Repeat([]byte("x"), 70000)}}},
		map[string]any{"f32": float32(1), "f64": 2.5, "i8": int8(-100), "i16": int16(-1000), "i32": int32(-100000), "i64": int64(-1 << 40),
			"u16": uint16(1000), "u32": uint32(100000), "u64": uint64(1 << 40), "nil": nil, "t": true, "s": string(make([]byte, 300)),
			"a": make([]int, 20), "big": make([]int, 70000), "m": map[string]int{"x": 1}, "time": time.Unix(1, 0)}} {
		buf, err := msgpack.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := agree.CheckMsgpack(buf); err != nil {
			t.Fatalf("%T: %v", v, err)
		}
		for cut := range min(len(buf), 200) {
			if agree.CheckMsgpack(buf[:cut]) == nil {
				t.Fatalf("%T cut to %d bytes passes", v, cut)
			}
		}
	}
	for _, b := range [][]byte{bomb, {0xdf, 0, 0, 0, 2, 1, 2, 3}, {0xc6, 0xff, 0xff, 0xff, 0xff}, {0xc1}, {0x91}} {
		if agree.CheckMsgpack(b) == nil {
			t.Fatalf("% x passes", b)
		}
	}
}
