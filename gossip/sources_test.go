package gossip

import (
	"math/rand/v2"
	"testing"
)

// TestSourcesReplay: the choices Start makes itself (the default name,
// the log identity, the loop's and the replica's random sources) are the
// same under one Config.Rand seed, differ between two Clusters seeded
// from one Rand in turn, and come from crypto/rand without one.
// (agree's TestConfigRandReplays checks that replicas replay under one
// source.)
func TestSourcesReplay(t *testing.T) {
	s1, s2 := newSources(rand.New(rand.NewPCG(5, 5))), newSources(rand.New(rand.NewPCG(5, 5)))
	if s1.name != s2.name || s1.logID != s2.logID || s1.loop.Uint64() != s2.loop.Uint64() || s1.replica.Uint64() != s2.replica.Uint64() {
		t.Fatal("newSources differs under one seed")
	}
	if len(s1.name) != 8 || len(s1.logID) != 32 {
		t.Fatalf("name %q, log %q", s1.name, s1.logID)
	}
	// One Rand seeding two Clusters in turn gives them different sources.
	shared := rand.New(rand.NewPCG(5, 5))
	if x, y := newSources(shared), newSources(shared); x.name == y.name || x.logID == y.logID {
		t.Fatal("two Clusters seeded from one Rand in turn got the same sources")
	}
	// Without a Rand, crypto/rand: two processes never share a log identity.
	if x, y := newSources(nil), newSources(nil); x.logID == y.logID {
		t.Fatal("crypto-seeded log identities collide")
	}
}

// TestLocalTimings: agree's tests run replicas with the timings
// ProfileLocal gives them (agree's localTimings); this keeps the two
// equal.
func TestLocalTimings(t *testing.T) {
	tm := profileTimings(ProfileLocal)
	if got := [4]int{tm.roundTimeout, tm.maxBackoff, tm.syncTimeout, tm.recoverAfter}; got != [4]int{15, 8, 15, 25} {
		t.Fatalf("ProfileLocal's agreement timings are %v; agree's tests (replica_test.go, localTimings) assume 15, 8, 15, 25", got)
	}
}
