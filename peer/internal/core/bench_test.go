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
				tn.deliver(i, frames)
			}
		}
	}
	step(1)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%stepsPerTick == 0 {
			// The clock runs, as in a federate: without ticks the
			// reliable layer's history is never released, and its
			// growing array, copied as it grows, would be measured.
			for _, c := range tn.cores {
				c.Tick()
			}
		}
		step(float64(i + 2))
	}
}

// stepsPerTick is how many time steps BenchmarkTimeStep makes per tick
// of the cores' clock: a federate in lockstep makes a step in 20-50 us,
// and ticks every 5 ms (the default tick).
const stepsPerTick = 128

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

// BenchmarkOwnershipTransfer measures the core's own cost of one
// ownership transfer between two federates, as bench ownership makes
// them: the acquirer asks (AttributeOwnershipAcquisition), the owner
// hears the request and divests (AttributeOwnershipDivestitureIfWanted),
// the acquirer is notified; then the other way. No I/O: the frames go
// from one core to the other in the benchmark's loop.
func BenchmarkOwnershipTransfer(b *testing.B) {
	t := &testing.T{}
	tn := newTestNet(t, 2)
	obj := tn.registered(0, 1)
	tank, pos, _ := tn.handles()
	if err := tn.cores[1].PublishObjectClassAttributes(tank, []AttributeHandle{pos}); err != nil {
		b.Fatal(err)
	}
	tn.settle(3)
	tn.take(0)
	tn.take(1)
	attrs := []AttributeHandle{pos}
	var frames []transport.Packet
	// pass moves every core's Ready along until one of them queues an
	// event of the type want says; it returns that core's index.
	pass := func(want func(Event) bool) int {
		for range 100 {
			for i, c := range tn.cores {
				rd := c.Ready(true)
				found := false
				for _, ev := range rd.Events {
					if want(ev) {
						found = true
					}
				}
				frames = append(frames[:0], rd.Frames...)
				c.Advance(rd)
				tn.deliver(i, frames)
				if found {
					return i
				}
			}
		}
		b.Fatal("the transfer did not complete")
		return -1
	}
	isRequest := func(ev Event) bool { _, ok := ev.(hla.RequestAttributeOwnershipRelease); return ok }
	isNotified := func(ev Event) bool { _, ok := ev.(hla.AttributeOwnershipAcquisitionNotification); return ok }
	owner := 0
	transfer := func() {
		acq := 1 - owner
		if err := tn.cores[acq].AttributeOwnershipAcquisition(obj, attrs, nil); err != nil {
			b.Fatal(err)
		}
		if i := pass(isRequest); i != owner {
			b.Fatalf("the request reached core %d, want %d", i, owner)
		}
		given, err := tn.cores[owner].AttributeOwnershipDivestitureIfWanted(obj, attrs)
		if err != nil || len(given) != 1 {
			b.Fatalf("divestiture gave %v: %v", given, err)
		}
		if i := pass(isNotified); i != acq {
			b.Fatalf("the notification reached core %d, want %d", i, acq)
		}
		owner = acq
	}
	transfer()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		transfer()
	}
}
