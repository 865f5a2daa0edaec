package core

import (
	"encoding/binary"
	"testing"
)

// TestCutBlockApart checks that what cutBlock cuts is zeroed and apart
// (an append to one never reaches the next), and that a large request
// gets memory of its own.
func TestCutBlockApart(t *testing.T) {
	var mem []byte
	var prev []byte
	for i := range 3 * epochBlock / 7 {
		s := cutBlock(&mem, 7, epochBlock)
		if len(s) != 7 || cap(s) != 7 {
			t.Fatalf("cut %d: len %d cap %d, want 7 and 7", i, len(s), cap(s))
		}
		for j, c := range s {
			if c != 0 {
				t.Fatalf("cut %d: byte %d is %d, not zeroed", i, j, c)
			}
		}
		for j := range s {
			s[j] = byte(i)
		}
		if prev != nil && prev[0] != byte(i-1) {
			t.Fatalf("cut %d overwrote cut %d", i, i-1)
		}
		prev = s
		_ = append(s, 0xff) // must not reach the next cut (zeroed, above)
	}
	if big := cutBlock(&mem, epochBlock/4+1, epochBlock); len(big) != epochBlock/4+1 || cap(big) != len(big) {
		t.Fatalf("large cut: len %d cap %d", len(big), cap(big))
	}
}

// TestEpochPairs checks epochPairs' pairs: ascending, duplicates
// dropped, each epoch its own varint, and none changed by the next call.
func TestEpochPairs(t *testing.T) {
	c := &Core{}
	epoch := func(a AttributeHandle) uint64 { return uint64(a) * 1000 }
	first := c.epochPairs([]AttributeHandle{3, 1, 2, 3}, epoch)
	for range 200 {
		c.epochPairs([]AttributeHandle{9, 8}, func(AttributeHandle) uint64 { return 1 << 40 })
	}
	if len(first) != 3 {
		t.Fatalf("%d pairs, want 3", len(first))
	}
	for i, p := range first {
		if p.H != uint64(i+1) {
			t.Fatalf("pair %d has handle %d, want %d", i, p.H, i+1)
		}
		e, n := binary.Uvarint(p.V)
		if n != len(p.V) || e != uint64(i+1)*1000 {
			t.Fatalf("pair %d: epoch %d (%d of %d bytes), want %d", i, e, n, len(p.V), (i+1)*1000)
		}
	}
	if ps := c.epochPairs([]AttributeHandle{5}, nil); len(ps) != 1 || ps[0].V != nil {
		t.Fatalf("without epochs: %v", ps)
	}
}
