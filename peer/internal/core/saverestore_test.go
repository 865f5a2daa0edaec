package core

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// Malformed save and restore states from another federate, and damaged
// saved states, are counted or refused, never a panic; a saved state of
// another format version is refused.
func TestSaveRestoreBadInput(t *testing.T) {
	tn := newTestNet(t, 2)
	c := tn.cores[0]
	r := rand.New(rand.NewPCG(7, 7))
	keys := []string{keySave, keySaveStatus, keySaveOutcome, keyRestore, keyRestoreStatus, keyRestoreBegin, keyRestoreOutcome, keyBranch}
	version := uint64(100)
	for i := range 2000 {
		b := make([]byte, r.IntN(24))
		for j := range b {
			b[j] = byte(r.UintN(256))
		}
		if i%3 == 0 && len(b) > 0 {
			b[0] = byte(i % 5) // small versions and statuses: closer to real values
		}
		version++
		c.StateChanged(2, keys[i%len(keys)], b, version)
	}
	if c.stats.Malformed == 0 {
		t.Error("2000 random save and restore states: none counted malformed")
	}
	tn.flush() // and the core goes on

	for _, b := range [][]byte{nil, {}, {0xc1}, []byte("garbage"), bytes.Repeat([]byte{0x92}, 50)} {
		if _, err := decodeSnapshot(b); err == nil {
			t.Errorf("decodeSnapshot(%q): no error", b)
		}
	}
	other, err := msgpack.Marshal(&snapshot{Format: snapshotFormat + 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decodeSnapshot(other); err == nil {
		t.Error("a saved state of another format version was accepted")
	}
	good, err := c.captureSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	s, err := decodeSnapshot(good)
	if err != nil {
		t.Fatal(err)
	}
	me := restoreAs{name: s.Name, handle: FederateHandle(s.Self)}
	if err := c.snapshotFits(s, "", me, nil); err != nil {
		t.Errorf("this federate's own state does not fit: %v", err)
	}
	if err := c.snapshotFits(s, "", restoreAs{name: "someone else", handle: me.handle}, nil); err == nil {
		t.Error("another federate's state fits")
	}
	for n := range len(good) {
		if _, err := decodeSnapshot(good[:n]); err == nil {
			t.Errorf("a state cut to %d of %d bytes decodes", n, len(good))
		}
	}
}
