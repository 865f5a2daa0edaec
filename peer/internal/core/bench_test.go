package core

import (
	"testing"

	"github.com/meshrti/meshrti/lbts"
	"github.com/meshrti/meshrti/peer/hla"
	"github.com/meshrti/meshrti/peer/transport"
)

// BenchmarkTimeStep measures the core's own cost of one lockstep time
// step of two regulating, constrained federates: each requests the next
// time, its promise crosses to the other, both are granted. No I/O: the
// frames go from one core to the other in the benchmark's loop, so what
// is measured is the core's fixed cost per step (per federate: divide by
// two), the part the driver and the system calls add to.
func BenchmarkTimeStep(b *testing.B) {
	tn := newTestNet(&testing.T{}, 2)
	// handed counts, per core, the callbacks ending a pending state that
	// the federate has been handed: each is handed over as soon as it is
	// queued, as Next does.
	handed := make([]uint64, len(tn.cores))
	handAll := func(i int, evs []Event) {
		for _, ev := range evs {
			if EndsPending(ev) {
				handed[i]++
				tn.cores[i].HandedOver(handed[i])
			}
		}
	}
	settle := func() {
		tn.settle(3)
		for i := range tn.cores {
			handAll(i, tn.take(i))
		}
	}
	for _, c := range tn.cores {
		if err := c.EnableTimeRegulation(hla.Float64Time(1)); err != nil {
			b.Fatal(err)
		}
	}
	settle()
	for _, c := range tn.cores {
		if err := c.EnableTimeConstrained(); err != nil {
			b.Fatal(err)
		}
	}
	settle()
	var frames []transport.Packet
	step := func(t float64) {
		for _, c := range tn.cores {
			if err := c.TimeAdvance(lbts.TimeAdvanceRequest, hla.Float64Time(t)); err != nil {
				b.Fatal(err)
			}
		}
		granted := 0
		for granted < 2 {
			for i, c := range tn.cores {
				rd := c.Ready(true)
				for _, ev := range rd.Events {
					if _, ok := ev.(hla.TimeAdvanceGrant); ok {
						granted++
					}
				}
				handAll(i, rd.Events)
				frames = append(frames[:0], rd.Frames...)
				c.Advance(rd)
				for _, p := range frames {
					for j, o := range tn.cores {
						if j != i && tn.groups[j][p.Group] {
							o.Step(p.Group, p.Data)
						}
					}
				}
			}
		}
	}
	step(1)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		step(float64(i + 2))
	}
}

// BenchmarkAnswerQuery measures a publisher's answer to a late
// subscriber's discovery query: one announcement per instance it holds
// (10,000 here), ns per instance.
func BenchmarkAnswerQuery(b *testing.B) {
	tn := newTestNet(&testing.T{}, 1)
	a := tn.cores[0]
	tank, pos, _ := tn.handles()
	if err := a.PublishObjectClassAttributes(tank, []AttributeHandle{pos}); err != nil {
		b.Fatal(err)
	}
	const n = 10000
	for range n {
		if _, err := a.RegisterObjectInstance(tank, ""); err != nil {
			b.Fatal(err)
		}
	}
	rd := a.Ready(true)
	a.Advance(rd)
	b.ResetTimer()
	for range b.N {
		a.answerQuery(uint64(tank), ObjectInstanceHandle{})
		rd := a.Ready(true)
		a.Advance(rd)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/instance")
}
