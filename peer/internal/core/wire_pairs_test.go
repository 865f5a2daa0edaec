package core

import (
	"bytes"
	"slices"
	"testing"
)

// TestWirePairs: values given as Pairs encode exactly as the same values
// in a map, and decodeMsgPairs returns them sorted, or an error where
// decodeMsg does.
func TestWirePairs(t *testing.T) {
	withMap := &wireMsg{Kind: kindUpdate, Class: 7, Values: map[uint64][]byte{9: []byte("nine"), 2: nil, 5: []byte("five")}, Tag: []byte("t")}
	withPairs := &wireMsg{Kind: kindUpdate, Class: 7, Pairs: []valuePair{{2, nil}, {5, []byte("five")}, {9, []byte("nine")}}, Tag: []byte("t")}
	a, b := appendMsg(nil, withMap), appendMsg(nil, withPairs)
	if !bytes.Equal(a, b) {
		t.Fatalf("map encodes\n% x\npairs encode\n% x", a, b)
	}
	if msgSize(withPairs) != len(b) {
		t.Errorf("msgSize %d, encoded %d", msgSize(withPairs), len(b))
	}
	m, err := decodeMsgPairs(a)
	if err != nil {
		t.Fatal(err)
	}
	if m.Values != nil || !slices.EqualFunc(m.Pairs, withPairs.Pairs, func(x, y valuePair) bool { return x.H == y.H && bytes.Equal(x.V, y.V) }) {
		t.Errorf("decoded pairs %+v, values %v", m.Pairs, m.Values)
	}
	if got := pairsOf(withMap); !slices.EqualFunc(got, withPairs.Pairs, func(x, y valuePair) bool { return x.H == y.H && bytes.Equal(x.V, y.V) }) {
		t.Errorf("pairsOf(map) = %+v", got)
	}
	for i := range a {
		_, err1 := decodeMsg(a[:i])
		_, err2 := decodeMsgPairs(a[:i])
		if (err1 == nil) != (err2 == nil) {
			t.Errorf("prefix %d: decodeMsg %v, decodeMsgPairs %v", i, err1, err2)
		}
	}
	ps := []valuePair{{5, nil}, {1, nil}, {3, nil}, {2, nil}}
	sortPairs(ps)
	if !slices.IsSortedFunc(ps, func(x, y valuePair) int { return int(x.H) - int(y.H) }) {
		t.Errorf("sortPairs: %+v", ps)
	}
}
