package reliable

import (
	"bytes"
	"errors"
	"testing"

	"github.com/meshrti/meshrti/peer/transport"
)

// An aimed message reaches its target once and nobody else, on the group
// itself (no inboxes) and through an inbox two nodes share; it is
// authenticated like every frame and bounded to one frame.
func TestSendAimed(t *testing.T) {
	const g transport.Group = 7
	t.Run("on the group", func(t *testing.T) {
		a, b, c := newEP(t, 1, 1, nil, g), newEP(t, 2, 1, nil, g), newEP(t, 3, 1, nil, g)
		handshake(t, a, b, c)
		if err := a.SendAimed(g, 2, []byte("for b")); err != nil {
			t.Fatal(err)
		}
		got := exchange(t, a, b, c)
		if len(got[1].Deliver) != 1 || !bytes.Equal(got[1].Deliver[0].Payload, []byte("for b")) || got[1].Deliver[0].Reliable {
			t.Errorf("b got %+v", got[1].Deliver)
		}
		if len(got[2].Deliver) != 0 || c.Stats().NotMine != 1 {
			t.Errorf("c got %+v, NotMine %d", got[2].Deliver, c.Stats().NotMine)
		}
		if a.Stats().SentAimed != 1 {
			t.Errorf("SentAimed %d", a.Stats().SentAimed)
		}
	})
	t.Run("through a shared inbox", func(t *testing.T) {
		inbox := func(id NodeID) transport.Group { return transport.Group(100 + id/2) }
		key := bytes.Repeat([]byte{9}, 32)
		eps := make([]*Endpoint, 4)
		for i := 1; i < len(eps); i++ {
			e, err := New(Config{Self: NodeID(i), Incarnation: 1, Federation: "test", Key: key, Inbox: inbox})
			if err != nil {
				t.Fatal(err)
			}
			e.Join(g)
			eps[i] = e
		}
		a, b, c := eps[1], eps[2], eps[3] // b and c share inbox 101
		handshake(t, a, b, c)
		if err := a.SendAimed(g, 3, []byte("for c")); err != nil {
			t.Fatal(err)
		}
		rd := take(a)
		if len(rd.Out) != 1 || rd.Out[0].Group != inbox(3) {
			t.Fatalf("sent %+v, want one frame on inbox %d", rd.Out, inbox(3))
		}
		f := rd.Out[0].Frame
		mustStep(t, b, inbox(3), f)
		mustStep(t, c, inbox(3), f)
		if err := c.Step(inbox(3), f); !errors.Is(err, ErrReplay) {
			t.Errorf("the aimed frame again: %v", err)
		}
		if d := take(b).Deliver; len(d) != 0 || b.Stats().NotMine != 1 {
			t.Errorf("b got %+v, NotMine %d", d, b.Stats().NotMine)
		}
		d := take(c).Deliver
		if len(d) != 1 || !bytes.Equal(d[0].Payload, []byte("for c")) || d[0].Group != g || d[0].From != 1 {
			t.Errorf("c got %+v", d)
		}
		// A flipped bit in the target fails authentication.
		bad := bytes.Clone(f)
		bad[HeaderLen] ^= 1
		if err := b.Step(inbox(3), bad); !errors.Is(err, ErrAuth) {
			t.Errorf("tampered aimed frame: %v", err)
		}
	})
	t.Run("too large", func(t *testing.T) {
		a := newEP(t, 1, 1, nil, g)
		if err := a.SendAimed(g, 2, make([]byte, a.bodyMax)); !errors.Is(err, ErrTooLarge) {
			t.Errorf("SendAimed of %d bytes: %v", a.bodyMax, err)
		}
		if err := a.SendAimed(g, 2, make([]byte, a.bodyMax-aimedTargetLen-entryOverhead(a.bodyMax))); err != nil {
			t.Errorf("the largest aimed message: %v", err)
		}
	})
	t.Run("malformed", func(t *testing.T) {
		a, b := newEP(t, 1, 1, nil, g), newEP(t, 2, 1, nil, g)
		f, body := a.newFrame(kindAimed, g, 1, 4) // shorter than a target
		copy(body, "abcd")
		a.seal.seal(f)
		if err := b.Step(g, f); !errors.Is(err, ErrMalformed) || b.Stats().Malformed != 1 {
			t.Errorf("short aimed frame: %v, %+v", err, b.Stats())
		}
	})
}
