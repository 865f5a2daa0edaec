package peer

import (
	"testing"

	"github.com/meshrti/meshrti/gossip"
)

// A replicated-state change from a node whose federate is not known yet
// is held, newest per key, and handed over once the federate joins: the
// gossip store has taken its version and will not report it again.
func TestGossipStateBeforeJoinIsKept(t *testing.T) {
	g := &gossipControl{events: NewControlEvents()}
	ev := func(key string, v uint64, val string) gossip.Event {
		return gossip.Event{Kind: gossip.EventStateChanged, Member: gossip.Member{Name: "n1"}, Key: key, Version: v, Value: []byte(val)}
	}
	g.hold(ev("s/o/1", 2, "new"))
	g.hold(ev("s/o/1", 1, "old")) // older: ignored
	g.hold(ev("y/ready", 3, "point"))
	g.replayEarly(gossip.FederateInfo{Handle: 7, Node: "other"})
	if got := g.events.Take(nil); len(got) != 0 {
		t.Fatalf("another node's join replayed %v", got)
	}
	g.replayEarly(gossip.FederateInfo{Handle: 7, Node: "n1"})
	got := g.events.Take(nil)
	if len(got) != 2 {
		t.Fatalf("replayed %d events, want 2: %+v", len(got), got)
	}
	if got[0].Key != "s/o/1" || string(got[0].Value) != "new" || got[0].Version != 2 || got[0].Member.Handle != 7 || got[0].Kind != StateChanged {
		t.Errorf("first %+v", got[0])
	}
	if got[1].Key != "y/ready" || got[1].Member.Handle != 7 {
		t.Errorf("second %+v", got[1])
	}
	g.replayEarly(gossip.FederateInfo{Handle: 7, Node: "n1"})
	if again := g.events.Take(nil); len(again) != 0 {
		t.Errorf("replayed twice: %v", again)
	}
}
