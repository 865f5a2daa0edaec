package gossip

import (
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

func TestStateStoreMerge(t *testing.T) {
	a := newStateStore("a", 10)
	b := newStateStore("b", 20)
	e1 := a.set("pub", []byte("1"))
	e2 := a.set("pub", []byte("2"))
	e3 := a.set("sub", []byte{})
	// Out of order and duplicated: the highest version wins.
	for _, e := range []stateEntry{e2, e1, e2, e3} {
		b.merge(e)
	}
	got := b.view(func(string) bool { return true })["a"]
	if string(got["pub"]) != "2" || got["sub"] == nil || len(got["sub"]) != 0 {
		t.Fatalf("merged view %q", got)
	}
	// Our own keys are never taken from others.
	if ch := a.merge(stateEntry{Owner: "a", Epoch: 99, Key: "pub", Version: 100, Value: []byte("x")}); ch != nil {
		t.Fatalf("own key overwritten: %v", ch)
	}
	// A deletion travels as a tombstone.
	del := a.set("pub", nil)
	buf, _ := msgpack.Marshal(&del)
	var wire stateEntry
	if err := msgpack.Unmarshal(buf, &wire); err != nil {
		t.Fatal(err)
	}
	if ch := b.merge(wire); len(ch) != 1 || !ch[0].Deleted {
		t.Fatalf("deletion: %v", ch)
	}
	if _, ok := b.view(func(string) bool { return true })["a"]["pub"]; ok {
		t.Fatal("deleted key still visible")
	}
	// A restarted owner (newer epoch) replaces everything it had.
	ch := b.merge(stateEntry{Owner: "a", Epoch: 11, Key: "new", Version: 1, Value: []byte("n")})
	if len(ch) != 2 || ch[0].Key != "sub" || !ch[0].Deleted || ch[1].Key != "new" {
		t.Fatalf("new epoch: %v", ch)
	}
	// The old epoch is ignored from now on.
	if ch := b.merge(e2); ch != nil {
		t.Fatalf("old epoch accepted: %v", ch)
	}
	if got := b.view(func(o string) bool { return o != "a" }); len(got) != 0 {
		t.Fatalf("filter ignored: %v", got)
	}
}
