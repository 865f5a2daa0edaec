package testnet

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/meshrti/meshrti/peer/transport"
)

// A deterministic cluster (Config.Deterministic) runs every federate in
// manual mode (peer.Config.Manual) on one goroutine, in virtual time: the
// in-memory network's delays run on the simulator's clock, each packet is
// handed to its receiver as an event of that clock, and each federate's
// timer ticks are events too. Events at the same virtual time run in the
// order they were scheduled. Nothing else chooses an order, so a run is a
// function of its seed and of the test's calls: the same seed replays it
// exactly, failure included.
//
// The test drives it through Log.WaitFor and the Cluster's Sleep and Do,
// which run the simulation until what they wait for has happened.

// sim is the event loop of a deterministic cluster.
type sim struct {
	c        *Cluster
	now      time.Duration
	seq      uint64
	q        simQueue      // timers and ticks
	in       []simDelivery // deliveries, all at now, in seq order, from head on
	head     int
	fedOf    map[*transport.MemEndpoint]int
	events   uint64 // events run, for the logs
	recorded uint64 // callbacks recorded in all
}

// simEvent is a network timer or a federate's tick.
type simEvent struct {
	at    time.Duration
	seq   uint64
	timer *simTimer // a network timer, or nil for a tick
	fed   int       // whose tick
}

// simDelivery is a packet on its way to a federate: it arrives at the
// virtual time it was handed over, after what was scheduled before it.
type simDelivery struct {
	seq uint64
	fed int
	pkt transport.Packet
}

// simTimer is a network delay scheduled on the simulator's clock.
type simTimer struct {
	f     func()
	state uint8 // 0 pending, 1 fired, 2 stopped
}

func (t *simTimer) Stop() bool {
	if t.state != 0 {
		return false
	}
	t.state = 2
	return true
}

// simQueue is a binary heap of events ordered by (at, seq).
type simQueue []simEvent

func (q simQueue) less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}

func (q *simQueue) push(ev simEvent) {
	*q = append(*q, ev)
	h := *q
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (q *simQueue) pop() simEvent {
	h := *q
	ev := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h[n] = simEvent{}
	h = h[:n]
	for i := 0; ; {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	*q = h
	return ev
}

func newSim(c *Cluster) *sim {
	return &sim{c: c, fedOf: make(map[*transport.MemEndpoint]int)}
}

func (s *sim) schedule(ev simEvent) {
	s.seq++
	ev.seq = s.seq
	s.q.push(ev)
}

// AfterFunc implements transport.Clock in virtual time.
func (s *sim) AfterFunc(d time.Duration, f func()) transport.Timer {
	t := &simTimer{f: f}
	s.schedule(simEvent{at: s.now + d, timer: t})
	return t
}

// deliver implements NetworkConfig.Deliver: the packet reaches its
// receiver as an event at the current virtual time.
func (s *sim) deliver(to *transport.MemEndpoint, p transport.Packet) {
	i, ok := s.fedOf[to]
	if !ok {
		return // not (or no longer) a federate's endpoint
	}
	if s.head == len(s.in) {
		s.in, s.head = s.in[:0], 0
	}
	s.seq++
	s.in = append(s.in, simDelivery{seq: s.seq, fed: i, pkt: p})
}

// add makes federate i, joined on endpoint ep, part of the simulation:
// its ticks start within one tick interval, at a phase of its own.
func (s *sim) add(i int, ep *transport.MemEndpoint) {
	s.fedOf[ep] = i
	tick := s.c.cfg.Tick
	s.schedule(simEvent{at: s.now + tick*time.Duration(1+i%16)/16, fed: i})
	s.record(i)
}

// record moves federate i's new callbacks to its log.
func (s *sim) record(i int) {
	f, l := s.c.Feds[i], s.c.Logs[i]
	if f.Pending() == 0 {
		return
	}
	l.mu.Lock()
	for f.Pending() > 0 {
		ev, err := f.Next(context.Background())
		if err != nil {
			break
		}
		l.events = append(l.events, ev)
		s.recorded++
	}
	l.mu.Unlock()
}

// recordAll records every federate's callbacks: the test's own calls
// may have left some.
func (s *sim) recordAll() {
	for i := range s.c.Feds {
		s.record(i)
	}
}

// step runs the next event: the first by (virtual time, scheduling
// order). It returns false when none is left.
func (s *sim) step() bool {
	if s.head < len(s.in) && (len(s.q) == 0 || s.q[0].at > s.now || s.q[0].seq > s.in[s.head].seq) {
		d := s.in[s.head]
		s.in[s.head] = simDelivery{}
		s.head++
		s.events++
		// A closed federate refuses the packet: it is gone.
		_ = s.c.Feds[d.fed].Deliver(d.pkt)
		s.record(d.fed)
		return true
	}
	if len(s.q) == 0 {
		return false
	}
	ev := s.q.pop()
	s.now = ev.at
	s.events++
	if ev.timer != nil {
		if ev.timer.state == 0 {
			ev.timer.state = 1
			ev.timer.f()
		}
		return true
	}
	if err := s.c.Feds[ev.fed].Tick(); err == nil {
		ev.at += s.c.cfg.Tick
		s.schedule(ev)
	}
	s.record(ev.fed)
	return true
}

// errSimStuck is returned when a wait exceeds its virtual-time bound.
var errSimStuck = errors.New("not reached in virtual time")

// runUntil runs events until done holds (checked after each event that
// added to log l, which is all done reads), the virtual clock passes
// limit, or ctx ends.
func (s *sim) runUntil(ctx context.Context, l *Log, done func() bool, limit time.Duration) error {
	s.recordAll()
	deadline := s.now + limit
	for n := 0; ; n++ {
		if done() {
			return nil
		}
		for seen := l.count(); l.count() == seen; n++ {
			if s.now > deadline {
				return fmt.Errorf("%w: %v (at %v)", errSimStuck, limit, s.now)
			}
			if n&4095 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			if !s.step() {
				return errors.New("testnet: the simulation ran out of events")
			}
		}
	}
}

// sleep runs every event up to d of virtual time from now.
func (s *sim) sleep(d time.Duration) {
	s.recordAll()
	end := s.now + d
	for s.head < len(s.in) || len(s.q) > 0 && s.q[0].at <= end {
		s.step()
	}
	s.now = end
}

// quiet runs the simulation until no federate has seen a new callback
// for d of virtual time, for at most limit, or until ctx ends.
func (s *sim) quiet(ctx context.Context, d, limit time.Duration) {
	s.recordAll()
	end := s.now + limit
	last, seen := s.now, s.recorded
	for n := 0; s.now < end; n++ {
		if n&4095 == 0 && ctx.Err() != nil {
			return
		}
		next := s.now // a delivery is due now
		if s.head == len(s.in) {
			if len(s.q) == 0 {
				return
			}
			next = s.q[0].at
		}
		if next > last+d {
			s.now = max(s.now, last+d)
			return
		}
		s.step()
		if s.recorded != seen {
			last, seen = s.now, s.recorded
		}
	}
}
