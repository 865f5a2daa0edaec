package lbts

import (
	"errors"
	"testing"
)

// regulatingPair returns a cluster of two nodes at time 0 in group 1,
// both regulating at lookahead 1 and constrained.
func regulatingPair(t *testing.T) (c *cluster, a, b *simNode) {
	t.Helper()
	c = newCluster()
	a = c.add(1, 0, 1)
	b = c.add(2, 0, 1)
	for _, s := range []*simNode{a, b} {
		if err := s.n.EnableRegulation(1); err != nil {
			t.Fatal(err)
		}
		if err := s.n.EnableConstrained(); err != nil {
			t.Fatal(err)
		}
		c.stabilize()
	}
	return c, a, b
}

// TestRestore saves two regulating, constrained nodes at 5 with a message
// at 7 queued, runs on to 10, restores both and runs the same steps
// again: the message at 7 is delivered again, and no node grants before
// it has heard every member after the restore.
func TestRestore(t *testing.T) {
	c, a, b := regulatingPair(t)
	step := func(to float64) {
		t.Helper()
		for _, s := range []*simNode{a, b} {
			if err := s.n.RequestAdvance(to); err != nil {
				t.Fatal(err)
			}
		}
		c.stabilize()
		for _, s := range []*simNode{a, b} {
			if s.time != to {
				t.Fatalf("node %d at %v, want %v", s.id, s.time, to)
			}
		}
	}
	step(5)
	if err := c.send(1, 1, 7, false); err != nil {
		t.Fatal(err)
	}
	c.stabilize()
	if err := b.n.RequestAdvance(6); err != nil {
		t.Fatal(err)
	}
	if _, err := b.n.Save(); !errors.Is(err, ErrNotQuiet) {
		t.Fatalf("Save while advancing: %v, want ErrNotQuiet", err)
	}
	if err := a.n.RequestAdvance(6); err != nil {
		t.Fatal(err)
	}
	c.stabilize()
	if a.time != 6 || b.time != 6 {
		t.Fatalf("at %v and %v, want 6", a.time, b.time)
	}
	sa, err := a.n.Save()
	if err != nil {
		t.Fatal(err)
	}
	sb, err := b.n.Save()
	if err != nil {
		t.Fatal(err)
	}
	if len(sb.Queue) != 1 || sb.Queue[0].Time != 7 {
		t.Fatalf("saved queue %+v, want the message at 7", sb.Queue)
	}
	step(10)
	if len(b.delivered) != 1 {
		t.Fatalf("delivered %v before the restore", b.delivered)
	}

	// The restore: the abandoned branch's messages never arrive.
	c.inflight = nil
	for _, r := range []struct {
		s  *simNode
		st Saved
	}{{a, sa}, {b, sb}} {
		for i := range r.st.Queue {
			r.st.Queue[i].Group, r.st.Queue[i].Seq = 0, 0
		}
		if err := r.s.n.Restore(r.st); err != nil {
			t.Fatal(err)
		}
		r.s.time, r.s.floor, r.s.floorStrict, r.s.last, r.s.delivered = 6, 6, true, nil, nil
	}
	if a.n.Time() != 6 || !a.n.Regulating() || !a.n.Constrained() || a.n.Lookahead() != 1 {
		t.Fatalf("restored status %+v", a.n.Status())
	}
	if err := a.n.RequestAdvance(6.5); err != nil {
		t.Fatal(err)
	}
	// Alone, a hears nothing: it must not grant on a GALT of no one.
	c.processNode(a)
	if a.time != 6 || a.n.Awaiting() != 1 {
		t.Fatalf("granted %v before hearing b after the restore (awaiting %d)", a.time, a.n.Awaiting())
	}
	if st := a.n.Status(); len(st.Awaiting) != 1 || st.Awaiting[0] != 2 {
		t.Fatalf("status says awaiting %v, want [2]", st.Awaiting)
	}
	c.stabilize()
	if a.time != 6.5 {
		t.Fatalf("a at %v after hearing b, want 6.5", a.time)
	}
	if err := b.n.RequestAdvance(6.5); err != nil {
		t.Fatal(err)
	}
	c.stabilize()
	step(10)
	if len(b.delivered) != 1 || b.delivered[0].Time != 7 {
		t.Fatalf("delivered %v after the restore, want the message at 7 again", b.delivered)
	}
}

// A node that rebases keeps its time and its pending request, forgets
// the others' promises, and grants only once it heard them again.
func TestRebase(t *testing.T) {
	c, a, b := regulatingPair(t)
	if err := a.n.RequestAdvance(3); err != nil {
		t.Fatal(err)
	}
	c.stabilize()
	if a.time != 0 {
		t.Fatalf("a granted %v with b at 0", a.time)
	}
	if err := a.n.Rebase(); err != nil {
		t.Fatal(err)
	}
	if !a.n.Advancing() || a.n.Time() != 0 || a.n.Awaiting() != 1 {
		t.Fatalf("after Rebase: %+v, awaiting %d", a.n.Status(), a.n.Awaiting())
	}
	if err := b.n.RequestAdvance(3); err != nil {
		t.Fatal(err)
	}
	c.stabilize()
	if a.time != 3 || b.time != 3 {
		t.Fatalf("at %v and %v, want 3", a.time, b.time)
	}
}
