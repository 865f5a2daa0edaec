package lbts

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestGarbageNeverPanics feeds a node random, often inconsistent input
// from peers (promises that shrink, reports for wild rounds, TSO messages
// in the past, retractions of unknown messages) between random requests
// of its own. Bad input may be refused with an error; nothing may panic,
// and the node's time may never go back.
func TestGarbageNeverPanics(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		n, err := New(Config{Self: 1})
		if err != nil {
			t.Fatal(err)
		}
		f := func() float64 {
			switch r.IntN(12) {
			case 0:
				return math.NaN()
			case 1:
				return math.Inf(1 - 2*r.IntN(2))
			}
			return float64(r.IntN(40)) / 2
		}
		last := n.Time()
		epochs := map[FederateID]uint64{}
		for step := 0; step < 400; step++ {
			from := FederateID(1 + r.IntN(4))
			switch r.IntN(9) {
			case 0, 1:
				epochs[from] += uint64(r.IntN(3))
				m := Message{From: from, Epoch: epochs[from], Regulating: r.IntN(2) == 0,
					Constrained: r.IntN(2) == 0, Bound: f(), Granted: f(), Strict: r.IntN(2) == 0,
					Pending: RequestKind(r.IntN(7)), Requested: f(), Waiting: r.IntN(2) == 0,
					State: r.Uint64N(5), Session: r.Uint64N(3), Cut: r.Uint64N(4),
					ReportRound: r.Uint64N(4), Report: f(), ReportStrict: r.IntN(2) == 0,
					ReportNone: r.IntN(3) == 0, ReportSession: r.Uint64N(3),
					Request: r.Uint64N(5), Acks: map[FederateID]uint64{1: r.Uint64N(9)},
					Covers: map[uint32]uint64{uint32(r.IntN(3)): r.Uint64N(5)}}
				n.Step(m)
			case 2:
				n.ReceiveTSO(TSO{From: from, Group: uint32(r.IntN(3)), Seq: r.Uint64N(6), Time: f()})
			case 3:
				n.Received(from, uint32(r.IntN(3)), r.Uint64N(6))
				n.Retract(from, uint32(r.IntN(3)), r.Uint64N(6))
			case 4:
				n.Request(RequestKind(r.IntN(7)), f())
			case 5:
				switch r.IntN(6) {
				case 0:
					n.EnableRegulation(f())
				case 1:
					n.EnableConstrained()
				case 2:
					n.DisableRegulation()
				case 3:
					n.DisableConstrained()
				case 4:
					n.ModifyLookahead(f())
				case 5:
					n.SentTSO(uint32(r.IntN(3)), r.Uint64N(9), f())
				}
			case 6:
				if r.IntN(4) == 0 {
					n.RemoveFederate(from)
				} else {
					n.AddFederate(from)
				}
			case 7:
				n.Tick()
				n.Joined(uint32(r.IntN(3)))
			case 8:
				for n.HasReady() {
					rd := n.Ready()
					n.Advance(rd)
				}
			}
			n.GALT()
			n.LITS()
			n.Status()
			if n.Time() < last {
				t.Fatalf("seed %d: time went back from %v to %v", seed, last, n.Time())
			}
			last = n.Time()
		}
	}
}
