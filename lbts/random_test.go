package lbts

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

var (
	seedFlag  = flag.Uint64("seed", 0, "replay the randomized run with this seed")
	seedsFlag = flag.Int("seeds", 100, "number of random seeds for TestRandomized (an eighth for TestRandomizedZeroLookahead; a tenth with -short)")
)

// TestRandomized runs federations of 3 to 8 nodes over a network that
// delays, reorders, duplicates and loses control messages (a lost one is
// made good by the periodic resend) and loses data messages now and then
// (the data plane reports the gap); data streams stay in order per
// sender and group, as the reliable data plane keeps them. Every node
// sends TSO messages around its send floor and requests advances of
// every kind (TAR, TARA, NMR, NMRA, FQR; some nodes only TAR and NMR),
// with lookahead 0 for some; some enable regulation or constrained late,
// some toggle regulation, and one may crash. After every step the
// cluster checks invariants 1, 2 and 4, that a send is accepted exactly
// when it is at or above the send floor and that every accepted send
// keeps the 1516.1 rule for the last grant kind (3), and that when every
// node waits in a time advance some request is granted within a bounded
// number of steps (7, also at zero lookahead); at the end every run must
// have reached the target time and all constrained receivers that used
// only TAR and NMR must agree on the relative order of what they
// delivered (2).
//
// A failure prints its seed; `go test ./lbts -run TestRandomized -seed=N`
// replays it.
func TestRandomized(t *testing.T) {
	runs := *seedsFlag
	if testing.Short() {
		runs = max(1, runs/10)
	}
	total, ok := runSeeds(t, runs, false)
	if ok && runs >= 50 && (total.Directed == 0 || total.DirectedLost == 0 || total.AckAsks == 0) {
		t.Errorf("directed acknowledgements not exercised: %d sent, %d lost, %d asks again", total.Directed, total.DirectedLost, total.AckAsks)
	}
}

// randStats says what the runs exercised.
type randStats struct {
	Steps, Grants, Delivered, LateEnables, Toggles, Crashes int
	Kinds                                                   [6]int // requests by kind
	ZeroLookahead, CtrlLost, DataLost, Rounds, MaxStall     int
	Directed, DirectedLost, AckAsks                         int // Config.DirectAcks (odd seeds)
}

func (s *randStats) add(o randStats) {
	s.Steps += o.Steps
	s.Grants += o.Grants
	s.Delivered += o.Delivered
	s.LateEnables += o.LateEnables
	s.Toggles += o.Toggles
	s.Crashes += o.Crashes
	for i := range s.Kinds {
		s.Kinds[i] += o.Kinds[i]
	}
	s.ZeroLookahead += o.ZeroLookahead
	s.Directed += o.Directed
	s.DirectedLost += o.DirectedLost
	s.AckAsks += o.AckAsks
	s.CtrlLost += o.CtrlLost
	s.DataLost += o.DataLost
	s.Rounds += o.Rounds
	s.MaxStall = max(s.MaxStall, o.MaxStall)
}

type randRole struct {
	regulating, constrained bool
	lookahead               float64
	regAt, consAt           int  // steps at which to enable; 0: at once
	regDone, consDone       bool // enable called
	holdBack                bool // no advance requests before both enables
	allKinds                bool // uses TARA, NMRA and FQR too, not only TAR and NMR
}

func (r *randRole) enabled() bool { return r.regDone && r.consDone }

// TestRandomizedZeroLookahead is TestRandomized with every node
// regulating and constrained at lookahead 0 from the start and no
// toggles or crashes: the case only the consistent cut can keep going.
func TestRandomizedZeroLookahead(t *testing.T) {
	runs := max(1, *seedsFlag/8) // each run is many times longer
	if testing.Short() {
		runs = max(1, runs/10)
	}
	runSeeds(t, runs, true)
}

// runSeeds replays -seed verbosely when it is given (ok false), else does
// runs random runs from a random base seed, zero lookahead everywhere when
// zero, and returns the sum of what they exercised. A failing seed fails
// t with the command that replays it.
func runSeeds(t *testing.T, runs int, zero bool) (total randStats, ok bool) {
	t.Helper()
	if *seedFlag != 0 {
		if _, err := runRandomOpts(*seedFlag, true, zero); err != nil {
			t.Fatalf("seed %d: %v", *seedFlag, err)
		}
		return total, false
	}
	base := rand.Uint64()
	for i := range runs {
		seed := base + uint64(i)
		if seed == 0 {
			continue
		}
		st, err := runRandomOpts(seed, false, zero)
		if err != nil {
			t.Fatalf("seed %d: %v\nreplay: go test ./lbts -run %s -seed=%d -v", seed, err, t.Name(), seed)
		}
		total.add(st)
	}
	t.Logf("%d runs: %+v", runs, total)
	return total, true
}

func runRandom(seed uint64, verbose bool) (st randStats, err error) {
	return runRandomOpts(seed, verbose, false)
}

func runRandomOpts(seed uint64, verbose, zero bool) (st randStats, err error) {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	c := newCluster()
	if seed%2 == 1 {
		// Odd seeds acknowledge with directed Messages, a fifth of
		// them lost.
		c.directAcks = true
		c.loseDirected = func() bool { return r.IntN(5) == 0 }
	}
	var trace strings.Builder
	if verbose {
		c.log = &trace
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
			if verbose {
				err = fmt.Errorf("%v\ntrace:\n%s", p, tail(trace.String(), 60))
			}
		}
	}()

	const target = 25.0
	const maxSteps = 400000
	n := 3 + r.IntN(6)
	groups := 1 + r.IntN(3)
	roles := map[FederateID]*randRole{}
	var all []*simNode
	for i := 1; i <= n; i++ {
		id := FederateID(i)
		var gs []uint32
		for g := 1; g <= groups; g++ {
			if r.IntN(10) < 7 {
				gs = append(gs, uint32(g))
			}
		}
		all = append(all, c.add(id, 0, gs...))
		role := &randRole{
			regulating:  r.IntN(10) < 7,
			constrained: r.IntN(10) < 7,
			lookahead:   []float64{0, 0, 0.5, 1, 2, 0.1 + r.Float64()*2}[r.IntN(6)],
			allKinds:    r.IntN(2) == 0,
		}
		if zero {
			role.regulating, role.constrained, role.lookahead = true, true, 0
		}
		if role.lookahead == 0 {
			st.ZeroLookahead++
		}
		if r.IntN(10) < 3 && !zero {
			role.regAt = 1 + r.IntN(3000)
		}
		if r.IntN(10) < 2 && !zero {
			role.consAt = 1 + r.IntN(3000)
		}
		role.holdBack = r.IntN(2) == 0
		roles[id] = role
	}
	crashAt, crashID := -1, FederateID(0)
	lost := map[int][]FederateID{} // step -> nodes to tell
	if r.IntN(10) < 3 && !zero {
		crashAt, crashID = r.IntN(4000), FederateID(1+r.IntN(n))
	}

	c.process()
	alive := func() []*simNode {
		var s []*simNode
		for _, id := range c.ids() {
			s = append(s, c.nodes[id])
		}
		return s
	}
	pick := func() *simNode {
		a := alive()
		return a[r.IntN(len(a))]
	}
	idle := func(s *simNode) bool {
		st := s.n.Status()
		return st.Request == NoRequest && !st.RegulationPending && !st.ConstrainedPending
	}

	// stall counts steps in which every node waited in a time advance
	// and nothing was granted (invariant 7).
	const maxStall = 30000
	stall, grantsBefore := 0, 0
	totalGrants := func() int {
		g := 0
		for _, s := range all {
			g += s.grants
		}
		return g
	}
	for step := 0; step < maxSteps; step++ {
		// Scheduled events.
		for _, s := range alive() {
			role := roles[s.id]
			if !role.regDone && step >= role.regAt && idle(s) {
				role.regDone = true
				if role.regAt > 0 {
					st.LateEnables++
				}
				if role.regulating && !s.n.Regulating() {
					if err := s.n.EnableRegulation(role.lookahead); err != nil {
						return st, fmt.Errorf("step %d: node %d: EnableRegulation: %v", step, s.id, err)
					}
				}
			}
			if !role.consDone && step >= role.consAt && (idle(s) || s.n.Status().RegulationPending) {
				role.consDone = true
				if role.consAt > 0 {
					st.LateEnables++
				}
				if role.constrained {
					if err := s.n.EnableConstrained(); err != nil {
						return st, fmt.Errorf("step %d: node %d: EnableConstrained: %v", step, s.id, err)
					}
				}
			}
		}
		if step == crashAt && c.nodes[crashID] != nil && len(c.nodes) > 1 {
			c.logf(crashID, "crash")
			st.Crashes++
			c.crash(crashID, func() bool { return r.IntN(2) == 0 })
			for _, id := range c.ids() {
				at := step + r.IntN(300)
				lost[at] = append(lost[at], id)
			}
		}
		for _, id := range lost[step] {
			c.notifyLost(id, crashID)
		}

		switch w := r.IntN(100); {
		case w < 55:
			// Deliver up to n random packets: about as many as one
			// broadcast creates, so the network keeps up.
			for k := r.IntN(2 * n); k >= 0 && len(c.inflight) > 0; k-- {
				i := c.streamHead(r.IntN(len(c.inflight)))
				p := c.inflight[i]
				if p.ctrl != nil && r.IntN(20) == 0 {
					c.inflight = append(c.inflight, p) // duplicate
				}
				if r.IntN(40) == 0 {
					// Lost: a control Message is resent on a later Tick;
					// the data plane reports a data message it gave up on.
					c.inflight = slices.Delete(c.inflight, i, i+1)
					if p.ctrl != nil {
						st.CtrlLost++
					} else if to := c.nodes[p.to]; to != nil {
						st.DataLost++
						to.n.Gap(p.from, p.group, p.seq)
					}
					continue
				}
				c.deliverAt(i)
			}
		case w < 70:
			s := pick()
			if !idle(s) || (roles[s.id].holdBack && !roles[s.id].enabled()) {
				break
			}
			if s.n.Time() >= target {
				// Done, but after an Available grant (or none) a zero-
				// lookahead federate may still send at target; a TAR
				// there closes it, as a federate done with time would.
				if !s.lastStrict && s.n.Regulating() && roles[s.id].lookahead == 0 {
					if err := s.n.RequestAdvance(target); err != nil {
						return st, fmt.Errorf("step %d: node %d: closing TAR: %v", step, s.id, err)
					}
				}
				break
			}
			d := []float64{0, 0.5, 1, r.Float64() * 3}[r.IntN(4)]
			kinds := []RequestKind{TimeAdvanceRequest, NextMessageRequest}
			if roles[s.id].allKinds {
				kinds = []RequestKind{TimeAdvanceRequest, NextMessageRequest, TimeAdvanceRequestAvailable,
					NextMessageRequestAvailable, TimeAdvanceRequest, NextMessageRequest, FlushQueueRequest}
			}
			k := kinds[r.IntN(len(kinds))]
			st.Kinds[k]++
			if err := s.n.Request(k, min(target, s.n.Time()+d)); err != nil {
				return st, fmt.Errorf("step %d: node %d: %v: %v", step, s.id, k, err)
			}
		case w < 85:
			s := pick()
			b, ok := s.n.Bound()
			if !ok || !s.n.Regulating() {
				break
			}
			g := uint32(1 + r.IntN(groups))
			if err := c.send(s.id, g, b-0.01, false); err == nil {
				return st, fmt.Errorf("step %d: node %d: send at %v below bound %v accepted (invariant 3)", step, s.id, b-0.01, b)
			}
			f := s.n.sendFloor()
			ts := f.v + []float64{0, 0, 0.5, 1, r.Float64() * 3}[r.IntN(5)]
			err := c.send(s.id, g, ts, false)
			if want := ts > f.v || !f.strict; (err == nil) != want {
				return st, fmt.Errorf("step %d: node %d: send at %v with floor %+v: %v", step, s.id, ts, f, err)
			}
			if err == nil {
				if err := checkSendRule(s, roles[s.id].lookahead, ts); err != nil {
					return st, fmt.Errorf("step %d: node %d: invariant 3: %v", step, s.id, err)
				}
			}
		case w < 90:
			s := pick()
			c.send(s.id, uint32(1+r.IntN(groups)), 0, true)
		case w < 98:
			pick().n.Tick()
		default:
			// Toggle regulation now and then.
			s := pick()
			role := roles[s.id]
			if zero || !role.regulating || !role.enabled() || !idle(s) {
				break
			}
			st.Toggles++
			if s.n.Regulating() {
				s.n.DisableRegulation()
			} else {
				s.n.EnableRegulation(role.lookahead)
			}
		}
		c.process()

		for _, s := range alive() {
			q, ok := s.n.queue.min()
			if ok && s.n.Constrained() && (q < s.n.floor || (q == s.n.floor && s.n.floorStrict)) {
				return st, fmt.Errorf("step %d: node %d: message at %v still queued at time %v", step, s.id, q, s.n.Time())
			}
		}
		waiting := true
		for _, s := range alive() {
			if !roles[s.id].enabled() || s.n.Status().Request == NoRequest {
				waiting = false
				break
			}
		}
		if g := totalGrants(); !waiting || g != grantsBefore {
			stall, grantsBefore = 0, g
		} else if stall++; stall > maxStall {
			var b strings.Builder
			for _, s := range alive() {
				fmt.Fprintf(&b, "\n  %s role=%+v", fmtStatus(s.n.Status()), *roles[s.id])
			}
			return st, fmt.Errorf("step %d: every node waits and nothing was granted for %d steps (invariant 7); %d in flight:%s",
				step, maxStall, len(c.inflight), b.String())
		}
		st.MaxStall = max(st.MaxStall, stall)

		done := true
		for _, s := range alive() {
			if role := roles[s.id]; !role.enabled() || !idle(s) || s.n.Time() < target {
				done = false
				break
			}
		}
		if done {
			c.checkSameOrder(all)
			st.Steps = step
			for _, s := range all {
				st.Rounds += int(s.n.round)
				st.AckAsks += int(s.n.ackAsk)
			}
			st.Directed, st.DirectedLost = c.directed, c.directedLost
			for _, s := range all {
				st.Grants += s.grants
				st.Delivered += len(s.delivered)
			}
			return st, nil
		}
	}
	var b strings.Builder
	for _, s := range alive() {
		fmt.Fprintf(&b, "\n  %s role=%+v", fmtStatus(s.n.Status()), *roles[s.id])
	}
	return st, fmt.Errorf("no progress after %d steps (invariant 7); %d in flight:%s", maxSteps, len(c.inflight), b.String())
}

func tail(s string, lines int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > lines {
		l = l[len(l)-lines:]
	}
	return strings.Join(l, "\n")
}

// checkSendRule checks an accepted send at ts against the 1516.1 rule,
// from what the harness saw (not the node's own bookkeeping): at or
// above time + lookahead, requested time + lookahead while TAR or TARA
// is pending, and at zero lookahead not at the time itself after a TAR,
// NMR or FQR grant (or while TAR is pending).
func checkSendRule(s *simNode, l float64, ts float64) error {
	st := s.n.Status()
	base, strict := s.time, l == 0 && s.lastStrict
	switch st.Request {
	case TimeAdvanceRequest:
		base, strict = st.Requested, l == 0
	case TimeAdvanceRequestAvailable:
		base, strict = st.Requested, false
	}
	if ts < base+l || (strict && ts == base+l) {
		return fmt.Errorf("send at %v accepted: time %v, lookahead %v, %v pending, strict %v",
			ts, s.time, l, st.Request, strict)
	}
	return nil
}

// TestRandomizedFoundSeeds replays seeds that once broke an invariant.
func TestRandomizedFoundSeeds(t *testing.T) {
	for _, tc := range []struct {
		seed uint64
		why  string
	}{
		// A federate granted t by NMR at zero lookahead re-enabled
		// regulation at t and could send at t; a member granted t by
		// NMRA answered at t, below the first one's floor.
		{7844156576749257812, "strict grant kept while regulation is pending"},
		// A cut report computed with Lookahead(), promise - base,
		// rounded up by one unit in the last place above the sends
		// the grant then allowed (found with quiet federates).
		{14396194677184233849, "send floor during NMR from the set lookahead"},
	} {
		if _, err := runRandom(tc.seed, false); err != nil {
			t.Errorf("seed %d (%s): %v", tc.seed, tc.why, err)
		}
	}
}
