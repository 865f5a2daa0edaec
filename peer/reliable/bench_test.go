package reliable

import (
	"testing"

	"github.com/meshrti/meshrti/peer/transport"
)

// benchSendStep measures one sender and one receiver exchanging reliable
// 100-byte messages on one group: Send, Ready, Step, Ready, Advance, with
// the receiver's ACKs going back. With bundle, the sender flushes every
// 32 messages.
func benchSendStep(b *testing.B, key []byte, bundle bool) {
	mk := func(id NodeID) *Endpoint {
		e, err := New(Config{Self: id, Incarnation: 1, Federation: "test", Key: key, Bundle: bundle})
		if err != nil {
			b.Fatal(err)
		}
		e.Join(1)
		return e
	}
	s, r := mk(1), mk(2)
	handshake(b, s, r)
	payload := make([]byte, 100)
	b.ReportAllocs()
	b.SetBytes(int64(len(payload)))
	n := 0
	for b.Loop() {
		if _, err := s.Send(1, payload, true); err != nil {
			b.Fatal(err)
		}
		n++
		if bundle && n%32 != 0 {
			continue
		}
		s.Flush()
		rd := s.Ready()
		for _, o := range rd.Out {
			if err := r.Step(o.Group, o.Frame); err != nil {
				b.Fatal(err)
			}
		}
		s.Advance(rd)
		rr := r.Ready()
		for _, o := range rr.Out {
			if err := s.Step(o.Group, o.Frame); err != nil {
				b.Fatal(err)
			}
		}
		r.Advance(rr)
	}
	if m, _ := s.Backlog(1); m > uint64(s.cfg.Window) {
		b.Fatalf("backlog %d: ACKs do not flow", m)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "msgs/s")
}

func BenchmarkSendStep(b *testing.B)             { benchSendStep(b, nil, false) }
func BenchmarkSendStepKeyed(b *testing.B)        { benchSendStep(b, testKey, false) }
func BenchmarkSendStepBundled(b *testing.B)      { benchSendStep(b, nil, true) }
func BenchmarkSendStepBundledKeyed(b *testing.B) { benchSendStep(b, testKey, true) }

// BenchmarkStep measures the receiver alone: in-order reliable 100-byte
// frames from 8 senders on 4 groups, after their SYNCs.
func BenchmarkStep(b *testing.B) {
	r := newEP(b, 100, 1, nil, 0, 1, 2, 3)
	hellos := r.Ready().Out // every fresh receiver sends the same
	const senders, groups, perStream = 8, 4, 4096
	var frames []Outgoing
	for i := range senders {
		s := newEP(b, NodeID(i+1), 1, nil, 0, 1, 2, 3)
		take(s) // its own HELLOs: not needed
		for _, o := range hellos {
			if err := s.Step(o.Group, o.Frame); err != nil {
				b.Fatal(err)
			}
		}
		frames = append(frames, take(s).Out...) // its SYNCs to r
		for range perStream {
			for g := range groups {
				s.Send(transport.Group(g), make([]byte, 100), true)
			}
			frames = append(frames, s.Ready().Out...)
			s.Advance(s.Ready())
		}
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if n == len(frames) {
			b.StopTimer()
			r = newEP(b, 100, 1, nil, 0, 1, 2, 3)
			n = 0
			b.StartTimer()
		}
		o := frames[n]
		if err := r.Step(o.Group, o.Frame); err != nil {
			b.Fatal(err)
		}
		r.Advance(r.Ready())
		n++
	}
}
