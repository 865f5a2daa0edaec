package session

import (
	"slices"
	"testing"
)

// Acknowledgements free the retained messages up to the one named, in
// any pattern, keeping the rest in order with their bytes counted; the
// array is reused from its front, so a steady exchange does not grow it.
func TestAckFreesInOrder(t *testing.T) {
	s := newSession(NewServer(Config{}, nil), 1, 1)
	s.mu.Lock()
	defer s.mu.Unlock()
	queue := func(n int) {
		for range n {
			s.queueLocked(MsgCallbackRequest, nil, make([]byte, 10))
		}
	}
	check := func(what string, from, to uint32) {
		t.Helper()
		var want, got []uint32
		for q := from; q != to; q = nextSeq(q) {
			want = append(want, q)
		}
		var backlog int64
		for _, f := range s.retained {
			got = append(got, f.seq)
			backlog += int64(f.size())
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: retained %v, want %v", what, got, want)
		}
		if backlog != s.backlog {
			t.Fatalf("%s: backlog %d, want %d", what, s.backlog, backlog)
		}
	}
	queue(10) // 2 to 11
	check("queued", 2, 12)
	s.ackLocked(4) // frees 3, leaves 7: sliced
	check("acked 4", 5, 12)
	s.ackLocked(9) // frees 5, leaves 2: moved to the front
	check("acked 9", 10, 12)
	s.ackLocked(9) // again: nothing
	check("acked 9 again", 10, 12)
	queue(3)
	check("queued 3 more", 10, 15)
	s.ackLocked(14)
	check("acked all", 15, 15)
	if s.freedTo != 14 {
		t.Fatalf("freedTo %d, want 14", s.freedTo)
	}
	// Steady: one message out, one acknowledged.
	queue(1)
	array := cap(s.retained)
	for i := range 1000 {
		queue(1)
		s.ackLocked(prevSeq(s.next))
		if cap(s.retained) != array {
			t.Fatalf("after %d exchanges the array holds %d, was %d", i, cap(s.retained), array)
		}
	}
	check("steady", s.next, s.next)
}
