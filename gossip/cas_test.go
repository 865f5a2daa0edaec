package gossip

import (
	"bytes"
	"github.com/meshrti/meshrti/gossip/internal/agree"
	"sync"
	"testing"
	"time"
)

// TestFSMCompareAndSwap applies a sequence of register ops to one state
// and checks each result: a compare-and-swap swaps exactly when the key's
// version is the expected one, held or free, and every change, whatever
// op made it, adds one to the version.
func TestFSMCompareAndSwap(t *testing.T) {
	a, b := agree.NodeID{Name: "a", Inc: 1}, agree.NodeID{Name: "b", Inc: 1}
	a2 := agree.NodeID{Name: "a", Inc: 2} // a restarted: another process
	cas := func(expect uint64, v string) agree.Op {
		var val []byte
		if v != "" {
			val = []byte(v)
		}
		return agree.Op{Kind: agree.OpCompareAndSwap, Key: "k", Expect: expect, Value: val}
	}
	held := func(v uint64, by agree.NodeID, val string) agree.KeyEntry {
		return agree.KeyEntry{Version: v, Holder: by, Value: []byte(val)}
	}
	free := func(v uint64) agree.KeyEntry { return agree.KeyEntry{Version: v} }
	f := agree.NewFSM("l", a, 5)
	for _, tc := range []struct {
		name    string
		by      agree.NodeID
		op      agree.Op
		code    agree.ResultCode
		want    agree.KeyEntry // the key's state after, and the result's entry (but opLost's)
		changed bool           // a chKey change is reported
	}{
		{"unused key, expect 0", a, cas(0, "a1"), agree.CodeOK, held(1, a, "a1"), true},
		{"same expect again", b, cas(0, "b1"), agree.CodeVersionMismatch, held(1, a, "a1"), false},
		{"expect ahead", b, cas(2, "b1"), agree.CodeVersionMismatch, held(1, a, "a1"), false},
		{"held by another, expect matches: taken", b, cas(1, "b1"), agree.CodeOK, held(2, b, "b1"), true},
		{"holder swaps its own value", b, cas(2, "b2"), agree.CodeOK, held(3, b, "b2"), true},
		{"acquire of a held key", a, agree.Op{Kind: agree.OpAcquire, Key: "k", Value: []byte("x")}, agree.CodeOK, held(3, b, "b2"), false},
		{"release by another", a, agree.Op{Kind: agree.OpRelease, Key: "k"}, agree.CodeNotHolder, held(3, b, "b2"), false},
		{"release by the holder", b, agree.Op{Kind: agree.OpRelease, Key: "k"}, agree.CodeOK, free(4), true},
		{"free key, stale expect", a, cas(3, "a2"), agree.CodeVersionMismatch, free(4), false},
		{"free key, expect matches", a, cas(4, "a2"), agree.CodeOK, held(5, a, "a2"), true},
		{"the holder is lost: released", b, agree.Op{Kind: agree.OpLost, Node: a}, agree.CodeOK, free(6), true},
		{"a's new process, nil value", a2, cas(6, ""), agree.CodeOK, agree.KeyEntry{Version: 7, Holder: a2}, true},
		{"a's old process is not the holder", a, agree.Op{Kind: agree.OpRelease, Key: "k"}, agree.CodeNotHolder, agree.KeyEntry{Version: 7, Holder: a2}, false},
		{"acquire after release", b, agree.Op{Kind: agree.OpAcquire, Key: "k", Value: []byte("b3")}, agree.CodeOK, agree.KeyEntry{Version: 7, Holder: a2}, false},
	} {
		tc.op.Seq = f.Sessions[tc.by.Key()].Seq + 1
		_, res, changes := f.Apply(agree.EncodeBatch(agree.Batch{Proposer: tc.by, Ops: []agree.Op{tc.op}}))
		if len(res) != 1 {
			t.Fatalf("%s: %d results", tc.name, len(res))
		}
		got := res[0]
		if got.Code != tc.code || (tc.op.Kind != agree.OpLost && !sameKeyEntry(got.Entry, tc.want)) {
			t.Errorf("%s: got %v %+v, want %v %+v", tc.name, got.Code, got.Entry, tc.code, tc.want)
		}
		if st := f.Keys["k"]; !sameKeyEntry(st, tc.want) {
			t.Errorf("%s: state %+v, want %+v", tc.name, st, tc.want)
		}
		if changed := len(changes) == 1 && changes[0].Kind == agree.ChKey && sameKeyEntry(changes[0].Entry, tc.want); changed != tc.changed {
			t.Errorf("%s: changes %+v, want a key change: %v", tc.name, changes, tc.changed)
		}
	}

	// A duplicate of a swap (the same op proposed twice, in two entries)
	// is applied once.
	o := agree.Op{Kind: agree.OpCompareAndSwap, Key: "d", Expect: 0, Value: []byte("1"), Seq: f.Sessions[b.Key()].Seq + 1}
	f.Apply(agree.EncodeBatch(agree.Batch{Proposer: b, Ops: []agree.Op{o}}))
	o2 := o
	o2.Expect = 1
	f.Apply(agree.EncodeBatch(agree.Batch{Proposer: b, Ops: []agree.Op{o2}}))
	if e := f.Keys["d"]; e.Version != 1 {
		t.Fatalf("duplicate swap applied twice: %+v", e)
	}
	// Two swaps of one proposer in one entry apply in order.
	s := f.Sessions[a.Key()].Seq
	_, res, _ := f.Apply(agree.EncodeBatch(agree.Batch{Proposer: a, Ops: []agree.Op{
		{Seq: s + 1, Kind: agree.OpCompareAndSwap, Key: "d", Expect: 1, Value: []byte("x")},
		{Seq: s + 2, Kind: agree.OpCompareAndSwap, Key: "d", Expect: 1, Value: []byte("y")},
	}}))
	if len(res) != 2 || res[0].Code != agree.CodeOK || res[1].Code != agree.CodeVersionMismatch || string(f.Keys["d"].Value) != "x" {
		t.Fatalf("two swaps in one entry: %+v, key %+v", res, f.Keys["d"])
	}
}

func sameKeyEntry(x, y agree.KeyEntry) bool {
	return x.Version == y.Version && x.Holder == y.Holder && bytes.Equal(x.Value, y.Value)
}

// TestCompareAndSwap runs the swap through a 3-node cluster: racing swaps
// with the same expected version have exactly one winner, which every
// node then reads; a stale expect fails and shows the current version.
func TestCompareAndSwap(t *testing.T) {
	h := newHarness(t, 3, nil)
	h.waitRoster(3)
	const key = "own/Tank1/position"
	e, ok, err := h.nodes[1].CompareAndSwap(ctxT(t), key, 0, []byte("n1"))
	if err != nil || !ok || e.Holder != "n1" || e.Version != 1 || string(e.Value) != "n1" {
		t.Fatalf("swap of an unused key = %+v %v %v", e, ok, err)
	}
	e, ok, err = h.nodes[2].CompareAndSwap(ctxT(t), key, 0, []byte("n2"))
	if err != nil || ok || e.Holder != "n1" || e.Version != 1 {
		t.Fatalf("stale swap = %+v %v %v", e, ok, err)
	}
	if _, err := h.nodes[1].Release(ctxT(t), key); err != nil {
		t.Fatal(err)
	}

	for round := range 3 {
		cur, err := h.nodes[0].Read(ctxT(t), key)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		won := make([]bool, 2)
		got := make([]Entry, 2)
		for i, n := range h.nodes[1:] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				e, ok, err := n.CompareAndSwap(ctxT(t), key, cur.Version, []byte(n.Name()))
				if err != nil {
					t.Error(err)
				}
				got[i], won[i] = e, ok
			}()
		}
		wg.Wait()
		if c := countTrue(won); c != 1 {
			t.Fatalf("round %d: %d winners of two swaps expecting version %d, want 1: %+v", round, c, cur.Version, got)
		}
		w := 0
		if won[1] {
			w = 1
		}
		winner := h.nodes[1+w].Name()
		if e := got[w]; e.Holder != winner || e.Version != cur.Version+1 || string(e.Value) != winner {
			t.Fatalf("round %d: winner's entry %+v", round, e)
		}
		if e := got[1-w]; e.Version < cur.Version+1 {
			t.Fatalf("round %d: loser's entry %+v does not show the swap", round, e)
		}
		for _, n := range h.nodes {
			e, err := n.Read(ctxT(t), key)
			if err != nil || e.Holder != winner || e.Version != cur.Version+1 {
				t.Fatalf("round %d: %s reads %+v %v, want held by %s at %d", round, n.Name(), e, err, winner, cur.Version+1)
			}
		}
	}
	waitFor(t, 5*time.Second, func() bool {
		for _, n := range h.nodes {
			if len(n.seen(EventKeyChanged)) < 5 {
				return false
			}
		}
		return true
	}, "every node reports the swaps as key changes")
}
