package testnet

import (
	"fmt"
	"maps"
	"slices"

	"github.com/meshrti/meshrti/lbts"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/testnet/tracecheck"
)

// Message identity: tests put a unique tag on every update, interaction
// and delete they send, so the checker can follow one message to every
// receiver.

// tagged returns the tag and time-stamp-order facts of an event that
// carries a message, or ok false.
func tagged(ev peer.Event) (tag string, tso bool, t float64, producer peer.FederateHandle, ok bool) {
	// Untagged messages are not the script's (the MOM's, for one): the
	// script tags every message it sends, and the tag is its identity.
	switch e := ev.(type) {
	case peer.ReflectAttributeValues:
		if len(e.Tag) == 0 {
			return "", false, 0, 0, false
		}
		return kindTag("reflect", e.Tag), e.ReceivedOrder == peer.TimeStamp, timeOf(e.Time), e.Producer, true
	case peer.ReceiveInteraction:
		if len(e.Tag) == 0 {
			return "", false, 0, 0, false
		}
		return kindTag("interaction", e.Tag), e.ReceivedOrder == peer.TimeStamp, timeOf(e.Time), e.Producer, true
	case peer.RemoveObjectInstance:
		if len(e.Tag) == 0 {
			return "", false, 0, 0, false
		}
		return kindTag("remove", e.Tag), e.ReceivedOrder == peer.TimeStamp, timeOf(e.Time), e.Producer, true
	}
	return "", false, 0, 0, false
}

func kindTag(kind string, tag []byte) string { return kind + ":" + string(tag) }

func timeOf(t peer.LogicalTime) float64 {
	if t == nil {
		return 0
	}
	return t.Float()
}

// Violation is one broken invariant, naming the federate and the event
// (its position in the federate's log, or a trace's line number).
type Violation = tracecheck.Violation

// Check verifies the invariants of ARCHITECTURE.md that a federate's own
// event stream shows, for every log, and the cross-federate ordering
// invariant across them:
//
//   - grants never decrease (invariant 4);
//   - a time-stamp-order message delivered after a grant to g has a time
//     stamp above g (at least g when the grant answered an Available
//     request or a flush queue request), and one delivered before the
//     grant to g has a time stamp at most g, unless the grant answered a
//     flush queue request, which delivers ahead of time (invariant 1);
//   - a federate's time-stamp-order deliveries are in (time, producer)
//     order, and every two federates deliver the time-stamp-order
//     messages they both received in the same relative order
//     (invariant 2), leaving out what a flush queue request delivered
//     and, after an Available grant to g, later deliveries at exactly g
//     (the standard lets both break the order);
//   - no tagged message is delivered twice to one federate (invariant 5,
//     the "at most once" half; tests count the "at least once" half).
//
// Check reads every log from its start; a Checker does the same work
// once per event over a run that goes on.
func Check(logs []*Log) []Violation {
	return NewChecker(logs, false).Check()
}

// A Checker checks the invariants of Check as a run goes on: each Check
// call reads only the events recorded since the one before, so checking
// after every step of a long run costs what the step added, not the
// whole history. With discard set, it also drops what it has read from
// the logs (Log.Events and WaitFor then see only later events; Tagged
// counts what was dropped), so that a run of millions of deliveries does
// not keep them all.
//
// Two federates deliver their time-stamp-order messages in the same
// relative order when each delivers in (time, producer) order, which is
// checked per log, and messages with the same time and producer (a
// "tie") come in the same order everywhere; the Checker keeps only the
// ties to compare them across logs.
type Checker struct {
	logs    []*Log
	discard bool
	st      []*logCheck
	found   []Violation         // settled: what later events cannot change
	ties    map[tsoKey][]tieRun // settled runs of two or more deliveries with one key
}

// NewChecker returns a Checker for logs; see Checker for discard.
func NewChecker(logs []*Log, discard bool) *Checker {
	c := &Checker{logs: logs, discard: discard, st: make([]*logCheck, len(logs)), ties: make(map[tsoKey][]tieRun)}
	for i := range logs {
		c.st[i] = &logCheck{seen: make(map[string]seenAt)}
	}
	return c
}

// Tagged returns how many tagged messages log i delivered in the events
// the Checker has read.
func (c *Checker) Tagged(i int) int { return c.st[i].tagged }

type tsoKey struct {
	t        float64
	producer peer.FederateHandle
}

type tsoDelivery struct {
	idx int
	key tsoKey
	tag string
}

// tieRun is a log's deliveries of one (time, producer), in its order.
type tieRun struct {
	log  int
	key  tsoKey
	idx  []int
	tags []string
}

type seenAt struct {
	idx int
	t   float64 // time stamp, when tso
	tso bool
}

// logCheck is the state of one log's check between events.
type logCheck struct {
	next      int // index of the next event to read
	lastGrant float64
	granted   bool
	strict    bool // the last grant rules out TSO at its time
	availAt   float64
	avail     bool // the last grant answered TARA or NMRA, at availAt
	lastTSO   tsoKey
	pending   []tsoDelivery // TSO deliveries since the last grant
	run       tieRun        // the open run of deliveries with one key
	ties      []tieRun      // closed runs of two or more
	seen      map[string]seenAt
	prunedAt  int // len(seen) after the last pruning
	tagged    int
	// saves are the states at each save's initiation, by label: a
	// restore goes back to one (what came after never happened).
	saves map[string]*logCheck
}

// saved returns a copy of s's state for a restore to go back to.
func (s *logCheck) saved() *logCheck {
	c := *s
	c.pending = slices.Clone(s.pending)
	c.run.idx, c.run.tags = slices.Clone(s.run.idx), slices.Clone(s.run.tags)
	c.ties = nil
	c.seen = maps.Clone(s.seen)
	c.saves = nil
	return &c
}

// Check reads what the logs recorded since the last call and returns
// every violation found so far. Deliveries after a log's last grant are
// judged as Check does at the end of a log (a later grant may show they
// answered a flush queue request); their verdict is settled by the
// grant that follows them.
func (c *Checker) Check() []Violation {
	out := append([]Violation(nil), c.found...)
	var provisional []tieRun
	for i, l := range c.logs {
		s := c.st[i]
		name := l.name()
		evs, base := l.from(s.next)
		for j, ev := range evs {
			s.event(i, name, base+j, ev, &c.found, &out)
		}
		s.next = base + len(evs)
		if c.discard {
			l.discardBefore(s.next)
		}
		for _, r := range s.ties {
			vs := c.compareTie(r, c.ties[r.key])
			c.found = append(c.found, vs...)
			out = append(out, vs...)
			c.ties[r.key] = append(c.ties[r.key], r)
		}
		s.ties = s.ties[:0]
		// Deliveries after the last grant: a pending flush may have
		// delivered them ahead of time, so only the order within is
		// checked when it holds. Judged on copies: the grant that
		// follows settles them.
		lastTSO, run := s.lastTSO, s.run
		run.idx, run.tags = append([]int(nil), run.idx...), append([]string(nil), run.tags...)
		if len(s.pending) > 0 {
			sorted := true
			for k := 1; k < len(s.pending); k++ {
				if s.pending[k].key.t < s.pending[k-1].key.t {
					sorted = false
				}
			}
			s.settle(i, name, s.pending, s.pending[len(s.pending)-1].key.t, !sorted, &lastTSO, &run, &provisional, &out)
		}
		if len(run.tags) > 1 {
			provisional = append(provisional, run)
		}
	}
	for k, r := range provisional {
		out = append(out, c.compareTie(r, slices.Concat(c.ties[r.key], provisional[:k]))...)
	}
	return out
}

// event checks one event of log i at index idx; settled violations go to
// found and out.
func (s *logCheck) event(i int, name string, idx int, ev peer.Event, found, out *[]Violation) {
	add := func(v Violation) {
		*found = append(*found, v)
		*out = append(*out, v)
	}
	if g, ok := ev.(peer.TimeAdvanceGrant); ok {
		gt := g.Time.Float()
		if s.granted && gt < s.lastGrant {
			add(Violation{Federate: name, Index: idx, Rule: "grants never decrease", Detail: fmt.Sprintf("grant %v after %v", gt, s.lastGrant)})
		}
		flush := g.Request == lbts.FlushQueueRequest
		var vs []Violation
		s.settle(i, name, s.pending, gt, flush, &s.lastTSO, &s.run, &s.ties, &vs)
		for _, v := range vs {
			add(v)
		}
		s.pending = s.pending[:0]
		s.lastGrant, s.granted = gt, true
		s.strict = !flush && g.Request != lbts.TimeAdvanceRequestAvailable && g.Request != lbts.NextMessageRequestAvailable
		s.avail, s.availAt = !s.strict && !flush, gt
		if !s.strict {
			// Messages at the granted time (FQR: at or above it)
			// may still follow, from any producer.
			s.lastTSO = tsoKey{gt, 0}
		}
		s.prune()
		return
	}
	switch e := ev.(type) {
	case peer.InitiateFederateSave:
		if s.saves == nil {
			s.saves = make(map[string]*logCheck)
		}
		s.saves[e.Label] = s.saved()
		return
	case peer.InitiateFederateRestore:
		// Back to this log's state at the save; a federate that was not
		// in the save (it joined after, and restores a crashed one's
		// state) starts afresh: none of what it saw happened.
		st := s.saves[e.Label]
		if st == nil {
			st = &logCheck{seen: make(map[string]seenAt)}
		}
		next, tagged, saves, ties := s.next, s.tagged, s.saves, s.ties
		*s = *st.saved()
		s.next, s.tagged, s.saves, s.ties = next, tagged, saves, ties
		return
	}
	tag, tso, t, producer, ok := tagged(ev)
	if !ok {
		return
	}
	s.tagged++
	if prev, dup := s.seen[tag]; dup {
		add(Violation{Federate: name, Index: idx, Rule: "exactly once", Detail: fmt.Sprintf("%s delivered again (first at %d)", tag, prev.idx)})
	}
	s.seen[tag] = seenAt{idx, t, tso}
	if !tso {
		return
	}
	if s.granted && (t < s.lastGrant || s.strict && t == s.lastGrant) {
		add(Violation{Federate: name, Index: idx, Rule: "no TSO at or below the grant", Detail: fmt.Sprintf("%s at %v after grant %v", tag, t, s.lastGrant)})
	}
	s.pending = append(s.pending, tsoDelivery{idx, tsoKey{t, producer}, tag})
}

// prune forgets the time-stamp-order tags below the last grant once the
// set has doubled: delivering one of them again would break "no TSO at
// or below the grant", which is checked without the set.
func (s *logCheck) prune() {
	if len(s.seen) < 2*s.prunedAt+1024 {
		return
	}
	for tag, at := range s.seen {
		if at.tso && at.t < s.lastGrant {
			delete(s.seen, tag)
		}
	}
	s.prunedAt = len(s.seen)
}

// settle checks the deliveries before a grant to gt; flush says the
// grant answered a flush queue request (or none is known yet). It moves
// lastTSO and the tie runs on.
func (s *logCheck) settle(i int, name string, pending []tsoDelivery, gt float64, flush bool, lastTSO *tsoKey, run *tieRun, closed *[]tieRun, out *[]Violation) {
	if flush {
		return
	}
	for _, p := range pending {
		if p.key.t > gt {
			*out = append(*out, Violation{Federate: name, Index: p.idx, Rule: "TSO before grant", Detail: fmt.Sprintf("time %v delivered before the grant to %v", p.key.t, gt)})
		}
		if p.key.t < lastTSO.t || (p.key.t == lastTSO.t && p.key.producer < lastTSO.producer) {
			*out = append(*out, Violation{Federate: name, Index: p.idx, Rule: "TSO order", Detail: fmt.Sprintf("%s (%v, %d) after (%v, %d)", p.tag, p.key.t, p.key.producer, lastTSO.t, lastTSO.producer)})
		}
		*lastTSO = p.key
		if s.avail && p.key.t == s.availAt {
			continue
		}
		if len(run.tags) > 0 && run.key == p.key {
			run.idx, run.tags = append(run.idx, p.idx), append(run.tags, p.tag)
			continue
		}
		if len(run.tags) > 1 {
			*closed = append(*closed, *run)
		}
		*run = tieRun{log: i, key: p.key, idx: []int{p.idx}, tags: []string{p.tag}}
	}
}

// compareTie checks that run r delivers the messages it shares with each
// run of the same (time, producer) in another log in the same order.
func (c *Checker) compareTie(r tieRun, others []tieRun) []Violation {
	var out []Violation
	for _, o := range others {
		if o.log == r.log || o.key != r.key {
			continue
		}
		pos := make(map[string]int, len(o.tags))
		for k, tag := range o.tags {
			pos[tag] = k
		}
		last, lastTag := -1, ""
		for k, tag := range r.tags {
			p, ok := pos[tag]
			if !ok {
				continue
			}
			if p < last {
				out = append(out, Violation{Federate: c.logs[r.log].name(), Index: r.idx[k], Rule: "same TSO order everywhere", Detail: fmt.Sprintf("%s and %s are in the other order at %s", lastTag, tag, c.logs[o.log].name())})
				break
			}
			last, lastTag = p, tag
		}
	}
	return out
}
