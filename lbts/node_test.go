package lbts

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"testing"
)

func mustNew(t *testing.T, id FederateID) *Node {
	t.Helper()
	n, err := New(Config{Self: id})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// drain acts on every Ready of n and returns what it produced.
func drain(n *Node) (msgs []Message, rds []Ready) {
	for n.HasReady() {
		rd := n.Ready()
		msgs = append(msgs, rd.Messages...)
		rds = append(rds, rd)
		n.Advance(rd)
	}
	return msgs, rds
}

func grants(rds []Ready) []float64 {
	var g []float64
	for _, rd := range rds {
		if rd.Grant != nil {
			g = append(g, *rd.Grant)
		}
	}
	return g
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"zero self", Config{}, false},
		{"minimal", Config{Self: 1}, true},
		{"initial time", Config{Self: 1, InitialTime: -5}, true},
		{"nan time", Config{Self: 1, InitialTime: math.NaN()}, false},
		{"inf time", Config{Self: 1, InitialTime: math.Inf(1)}, false},
		{"negative ticks", Config{Self: 1, PromiseEveryTicks: -1}, false},
		{"ticks", Config{Self: 1, PromiseEveryTicks: 3}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg)
			if (err == nil) != tc.ok {
				t.Fatalf("New(%+v) = %v, want ok=%v", tc.cfg, err, tc.ok)
			}
		})
	}
}

// constrainedBehind adds federate 2, a regulator promising bound that
// never advances, enables n constrained with 2's acknowledgement, and
// reports whether n is constrained.
func constrainedBehind(n *Node, bound float64) bool {
	n.AddFederate(2)
	n.Step(Message{From: 2, Epoch: 1, Regulating: true, Bound: bound})
	n.EnableConstrained()
	n.Step(Message{From: 2, Epoch: 2, Regulating: true, Bound: bound, Acks: map[FederateID]uint64{1: n.consReq}})
	drain(n)
	return n.Constrained()
}

// TestRequestErrors checks the HLA exceptions of each request in each
// state.
func TestRequestErrors(t *testing.T) {
	type setup func(*Node)
	none := func(*Node) {}
	regulating := func(n *Node) { n.EnableRegulation(1); drain(n) }
	constrained := func(n *Node) { n.EnableConstrained(); drain(n) }
	advancing := func(n *Node) {
		// A member that never answers keeps the grant pending.
		if !constrainedBehind(n, 1) {
			panic("not constrained")
		}
		n.RequestAdvance(5)
		drain(n)
	}
	regPending := func(n *Node) { n.AddFederate(2); n.EnableRegulation(1); drain(n) }
	consPending := func(n *Node) { n.AddFederate(2); n.EnableConstrained(); drain(n) }

	cases := []struct {
		name  string
		setup setup
		call  func(*Node) error
		want  error
	}{
		{"tar ok", none, func(n *Node) error { return n.RequestAdvance(0) }, nil},
		{"tar past", none, func(n *Node) error { return n.RequestAdvance(-1) }, ErrTimeAlreadyPassed},
		{"tar nan", none, func(n *Node) error { return n.RequestAdvance(math.NaN()) }, ErrInvalidTime},
		{"tar twice", advancing, func(n *Node) error { return n.RequestAdvance(6) }, ErrInTimeAdvance},
		{"tar reg pending", regPending, func(n *Node) error { return n.RequestAdvance(6) }, ErrRegulationPending},
		{"tar cons pending", consPending, func(n *Node) error { return n.RequestAdvance(6) }, ErrConstrainedPending},
		{"enable reg ok", none, func(n *Node) error { return n.EnableRegulation(0) }, nil},
		{"enable reg negative", none, func(n *Node) error { return n.EnableRegulation(-1) }, ErrInvalidLookahead},
		{"enable reg inf", none, func(n *Node) error { return n.EnableRegulation(math.Inf(1)) }, ErrInvalidLookahead},
		{"enable reg twice", regulating, func(n *Node) error { return n.EnableRegulation(1) }, ErrRegulationAlreadyEnabled},
		{"enable reg pending", regPending, func(n *Node) error { return n.EnableRegulation(1) }, ErrRegulationPending},
		{"enable reg advancing", advancing, func(n *Node) error { return n.EnableRegulation(1) }, ErrInTimeAdvance},
		{"disable reg", regulating, func(n *Node) error { return n.DisableRegulation() }, nil},
		{"disable reg not", none, func(n *Node) error { return n.DisableRegulation() }, ErrRegulationNotEnabled},
		{"disable reg pending", regPending, func(n *Node) error { return n.DisableRegulation() }, ErrRegulationNotEnabled},
		{"enable cons twice", constrained, func(n *Node) error { return n.EnableConstrained() }, ErrConstrainedAlreadyEnabled},
		{"enable cons pending", consPending, func(n *Node) error { return n.EnableConstrained() }, ErrConstrainedPending},
		{"enable cons advancing", func(n *Node) { n.RequestAdvance(5) }, func(n *Node) error { return n.EnableConstrained() }, ErrInTimeAdvance},
		{"disable cons", constrained, func(n *Node) error { return n.DisableConstrained() }, nil},
		{"disable cons not", none, func(n *Node) error { return n.DisableConstrained() }, ErrConstrainedNotEnabled},
		{"modify ok", regulating, func(n *Node) error { return n.ModifyLookahead(3) }, nil},
		{"modify not regulating", none, func(n *Node) error { return n.ModifyLookahead(3) }, ErrRegulationNotEnabled},
		{"modify nan", regulating, func(n *Node) error { return n.ModifyLookahead(math.NaN()) }, ErrInvalidLookahead},
		{"send not regulating", none, func(n *Node) error { return n.CheckSend(10) }, ErrRegulationNotEnabled},
		{"send below bound", regulating, func(n *Node) error { return n.CheckSend(0.5) }, ErrInvalidTime},
		{"send at bound", regulating, func(n *Node) error { return n.CheckSend(1) }, nil},
		{"send inf", regulating, func(n *Node) error { return n.CheckSend(math.Inf(1)) }, ErrInvalidTime},
	}
	// The other request kinds share TAR's exceptions (1516.1 8.9-8.12).
	for _, k := range []RequestKind{TimeAdvanceRequestAvailable, NextMessageRequest, NextMessageRequestAvailable, FlushQueueRequest} {
		req := func(t float64) func(*Node) error { return func(n *Node) error { return n.Request(k, t) } }
		cases = append(cases, []struct {
			name  string
			setup setup
			call  func(*Node) error
			want  error
		}{
			{k.String() + " ok", none, req(0), nil},
			{k.String() + " past", none, req(-1), ErrTimeAlreadyPassed},
			{k.String() + " nan", none, req(math.NaN()), ErrInvalidTime},
			{k.String() + " while advancing", advancing, req(6), ErrInTimeAdvance},
			{k.String() + " reg pending", regPending, req(6), ErrRegulationPending},
			{k.String() + " cons pending", consPending, req(6), ErrConstrainedPending},
			{"enable cons while " + k.String(), func(n *Node) { n.Request(k, 5) }, func(n *Node) error { return n.EnableConstrained() }, ErrInTimeAdvance},
		}...)
	}
	cases = append(cases, []struct {
		name  string
		setup setup
		call  func(*Node) error
		want  error
	}{
		{"bad kind", none, func(n *Node) error { return n.Request(NoRequest, 1) }, ErrBadRequest},
		{"bad kind 9", none, func(n *Node) error { return n.Request(9, 1) }, ErrBadRequest},
		{"retract not regulating", none, func(n *Node) error { return n.CheckRetract(5) }, ErrRegulationNotEnabled},
		{"retract past", regulating, func(n *Node) error { return n.CheckRetract(0) }, ErrCannotRetract},
		{"retract future", regulating, func(n *Node) error { return n.CheckRetract(0.5) }, nil},
	}...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := mustNew(t, 1)
			tc.setup(n)
			err := tc.call(n)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}

func TestInvalidTimeError(t *testing.T) {
	n := mustNew(t, 1)
	n.EnableRegulation(2)
	drain(n)
	err := n.SentTSO(1, 1, 1.5)
	var ite *InvalidTimeError
	if !errors.As(err, &ite) {
		t.Fatalf("SentTSO below bound: %v, want *InvalidTimeError", err)
	}
	if ite.Op != "send" || ite.Requested != 1.5 || ite.Min != 2 || !errors.Is(err, ErrInvalidTime) {
		t.Fatalf("got %+v", ite)
	}
	if m := n.message(true); len(m.Covers) != 0 {
		t.Fatalf("refused send recorded a cover: %v", m.Covers)
	}
	if err := n.SentTSO(1, 1, 2); err != nil {
		t.Fatal(err)
	}
	if err := n.SentTSO(1, 1, 3); err == nil {
		t.Fatal("SentTSO accepted a repeated sequence number")
	}
	n.RequestAdvance(5)
	err = n.RequestAdvance(6)
	if !errors.Is(err, ErrInTimeAdvance) {
		t.Fatal(err)
	}
	drain(n)
	err = n.RequestAdvance(4)
	if !errors.As(err, &ite) || !errors.Is(err, ErrTimeAlreadyPassed) || ite.Min != 5 {
		t.Fatalf("RequestAdvance(4) at 5: %v", err)
	}
	if want := "lbts: advance at 4: logical time already passed (must be >= 5)"; err.Error() != want {
		t.Fatalf("Error() = %q, want %q", err.Error(), want)
	}
}

func TestStepBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    Message
		want error
	}{
		{"ok", Message{From: 2, Epoch: 1}, nil},
		{"own loopback", Message{From: 1, Epoch: 1}, nil},
		{"zero from", Message{Epoch: 1}, ErrBadMessage},
		{"zero epoch", Message{From: 2}, ErrBadMessage},
		{"nan granted", Message{From: 2, Epoch: 1, Granted: math.NaN()}, ErrBadMessage},
		{"inf bound", Message{From: 2, Epoch: 1, Regulating: true, Bound: math.Inf(1)}, ErrBadMessage},
		{"bound below granted", Message{From: 2, Epoch: 1, Regulating: true, Bound: 1, Granted: 2}, ErrBadMessage},
		{"removed", Message{From: 3, Epoch: 1}, ErrFederateRemoved},
		{"bad pending kind", Message{From: 2, Epoch: 1, Pending: 7}, ErrBadMessage},
		{"nan requested", Message{From: 2, Epoch: 1, Pending: NextMessageRequest, Requested: math.NaN()}, ErrBadMessage},
		{"report beyond cut", Message{From: 2, Epoch: 1, Cut: 1, ReportRound: 2}, ErrBadMessage},
		{"inf report", Message{From: 2, Epoch: 1, Cut: 1, ReportRound: 1, Report: math.Inf(1)}, ErrBadMessage},
		{"unbounded report", Message{From: 2, Epoch: 1, Cut: 1, ReportRound: 1, ReportNone: true}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := mustNew(t, 1)
			n.RemoveFederate(3)
			err := n.Step(tc.m)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("Step(%v) = %v, want %v", tc.m, err, tc.want)
			}
			if tc.want != nil && n.Status().Members != 0 {
				t.Fatalf("bad input changed membership")
			}
		})
	}
	n := mustNew(t, 1)
	for _, m := range []TSO{{From: 0, Time: 1}, {From: 2, Time: math.NaN()}, {From: 2, Time: math.Inf(-1)}} {
		if err := n.ReceiveTSO(m); !errors.Is(err, ErrBadMessage) {
			t.Errorf("ReceiveTSO(%+v) = %v, want ErrBadMessage", m, err)
		}
	}
}

// TestAcceptance checks the time core's basic promises: no grant while
// a regulator's time plus lookahead does not pass the request, a TSO
// message at t delivered before the grant to t, a send below time plus
// lookahead refused, a removed regulator no longer holding back.
func TestAcceptance(t *testing.T) {
	// setup: 1 regulates with lookahead 1, 2 is constrained.
	setup := func(t *testing.T) *cluster {
		c := newCluster()
		c.fail = func(format string, args ...any) { t.Helper(); t.Fatalf(format, args...) }
		c.add(1, 0, 1).n.EnableRegulation(1)
		c.add(2, 0, 1).n.EnableConstrained()
		c.stabilize()
		if !c.nodes[1].n.Regulating() || !c.nodes[2].n.Constrained() {
			t.Fatal("enables did not complete")
		}
		return c
	}

	t.Run("not granted while regulator's time+lookahead <= t", func(t *testing.T) {
		c := setup(t)
		c.nodes[2].n.RequestAdvance(10)
		c.nodes[1].n.RequestAdvance(9) // promise 9 + 1 = 10, not above 10
		c.stabilize()
		if c.nodes[2].grants != 0 {
			t.Fatalf("granted at time %v while regulator promises only 10", c.nodes[2].time)
		}
		if g, ok := c.nodes[2].n.GALT(); !ok || g != 10 {
			t.Fatalf("GALT = %v, %v; want 10", g, ok)
		}
		// The regulator advances: now granted.
		c.nodes[1].n.RequestAdvance(9.5)
		c.stabilize()
		if c.nodes[2].grants != 1 || c.nodes[2].time != 10 {
			t.Fatalf("after the regulator advanced: %d grants, time %v", c.nodes[2].grants, c.nodes[2].time)
		}
	})

	t.Run("TSO at 10 delivered before grant to 10", func(t *testing.T) {
		c := setup(t)
		if err := c.send(1, 1, 10, false); err != nil {
			t.Fatal(err)
		}
		c.nodes[2].n.RequestAdvance(10)
		c.nodes[1].n.RequestAdvance(20)
		c.process()
		// Deliver everything to 2 and look at its single Ready.
		for len(c.inflight) > 0 {
			c.deliver(c.inflight[0])
			c.inflight = c.inflight[1:]
		}
		n := c.nodes[2].n
		rd := n.Ready()
		if rd.Grant == nil || *rd.Grant != 10 || len(rd.Deliver) != 1 || rd.Deliver[0].Time != 10 {
			t.Fatalf("Ready = %+v, want the message at 10 and the grant to 10", rd)
		}
		n.Advance(rd)
	})

	t.Run("send below time+lookahead fails", func(t *testing.T) {
		c := setup(t)
		var ite *InvalidTimeError
		if err := c.send(1, 1, 0.99, false); !errors.As(err, &ite) {
			t.Fatalf("send at 0.99 with bound 1: %v", err)
		}
		c.nodes[1].n.RequestAdvance(5)
		if err := c.send(1, 1, 5.5, false); !errors.As(err, &ite) || ite.Min != 6 {
			t.Fatalf("send at 5.5 while advancing to 5: %v", err)
		}
	})

	t.Run("removed regulator no longer holds back", func(t *testing.T) {
		c := setup(t)
		c.nodes[2].n.RequestAdvance(10)
		c.stabilize()
		if c.nodes[2].grants != 0 {
			t.Fatal("granted too early")
		}
		c.remove(1)
		c.process()
		if c.nodes[2].grants != 1 || c.nodes[2].time != 10 {
			t.Fatalf("after removal: %d grants, time %v", c.nodes[2].grants, c.nodes[2].time)
		}
		if _, ok := c.nodes[2].n.GALT(); ok {
			t.Fatal("GALT still bounded")
		}
	})

	t.Run("promise waits for its covers", func(t *testing.T) {
		c := setup(t)
		c.nodes[2].n.RequestAdvance(10)
		c.send(1, 1, 3, false)
		c.nodes[1].n.RequestAdvance(20)
		c.process()
		// Control first: the promise does not count.
		for i := 0; i < len(c.inflight); {
			if c.inflight[i].to == 2 && c.inflight[i].ctrl != nil {
				c.deliverAt(i)
				continue
			}
			i++
		}
		c.process()
		if g, _ := c.nodes[2].n.GALT(); g != 1 || c.nodes[2].grants != 0 {
			t.Fatalf("promise counted before its message: GALT %v", g)
		}
		// The data arrives: the message, then the grant.
		c.stabilize()
		if c.nodes[2].grants != 1 || len(c.nodes[2].delivered) != 1 {
			t.Fatalf("after the data: %d grants, %d delivered", c.nodes[2].grants, len(c.nodes[2].delivered))
		}
	})
}

func TestReadyOrder(t *testing.T) {
	// A delivery that arises after a callback waits for the next Ready.
	n := mustNew(t, 1)
	drain(n)
	n.ReceiveTSO(TSO{From: 2, Seq: 1, Time: 5})
	n.RequestAdvance(1)
	n.progress() // decide the grant now, before the next message
	n.ReceiveTSO(TSO{From: 2, Seq: 2, Time: 6})
	rd := n.Ready()
	if len(rd.Deliver) != 1 || rd.Grant == nil || rd.Deliver[0].Seq != 1 {
		t.Fatalf("first Ready = %+v", rd)
	}
	n.Advance(rd)
	rd = n.Ready()
	if len(rd.Deliver) != 1 || rd.Grant != nil || rd.Deliver[0].Seq != 2 {
		t.Fatalf("second Ready = %+v", rd)
	}
	n.Advance(rd)
	if n.HasReady() {
		t.Fatal("work left")
	}
	// Ready twice without Advance returns the same work.
	n.ReceiveTSO(TSO{From: 2, Seq: 3, Time: 7})
	a, b := n.Ready(), n.Ready()
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("Ready not repeatable: %+v vs %+v", a, b)
	}
}

func TestPeriodicResend(t *testing.T) {
	n, _ := New(Config{Self: 1, PromiseEveryTicks: 3})
	msgs, _ := drain(n)
	if len(msgs) != 1 || msgs[0].Epoch == 0 {
		t.Fatalf("initial state: %v", msgs)
	}
	// Idle (never regulating, constrained, asking or acknowledging):
	// nothing to tell, so no resend and no greeting for newcomers.
	for range 10 {
		n.Tick()
	}
	n.AddFederate(2)
	if got, _ := drain(n); len(got) != 0 {
		t.Fatalf("an idle node sent %v", got)
	}
	// Once it has said something, it resends every 3 ticks, also when
	// it has nothing left to say, and a resend keeps its epoch.
	n.Step(Message{From: 2, Epoch: 1, Request: 1})
	if msgs, _ = drain(n); len(msgs) != 1 || msgs[0].Acks[2] != 1 {
		t.Fatalf("acknowledgement: %v", msgs)
	}
	n.Step(Message{From: 2, Epoch: 2}) // request done
	var last Message
	for i := 1; i <= 6; i++ {
		n.Tick()
		got, _ := drain(n)
		if (len(got) > 0) != (i%3 == 0) {
			t.Fatalf("after %d ticks: %v", i, got)
		}
		if len(got) == 0 {
			continue
		}
		if len(got[0].Acks) != 0 {
			t.Fatalf("stale acknowledgement resent: %v", got[0])
		}
		if i == 6 && got[0].Epoch != last.Epoch {
			t.Fatalf("unchanged resend changed epoch: %v then %v", last, got[0])
		}
		last = got[0]
	}
}

func TestLeftGroupReleasesPromise(t *testing.T) {
	n := mustNew(t, 1)
	n.Joined(7)
	n.Step(Message{From: 2, Epoch: 1, Regulating: true, Bound: 5, Covers: map[uint32]uint64{7: 4}})
	if _, ok := n.GALT(); ok {
		t.Fatal("promise counted without its covers")
	}
	if u := n.Status().Uncovered; len(u) != 1 || u[0] != (Uncovered{From: 2, Group: 7, Want: 4, Have: 0}) {
		t.Fatalf("status says uncovered %+v, want 2's promise waiting for group 7 seq 4", u)
	}
	n.Left(7)
	if u := n.Status().Uncovered; len(u) != 0 {
		t.Fatalf("status says uncovered %+v after leaving the group", u)
	}
	if g, ok := n.GALT(); !ok || g != 5 {
		t.Fatalf("GALT after leaving the group = %v, %v", g, ok)
	}
}

func TestEnableWaitsForEveryMember(t *testing.T) {
	n := mustNew(t, 1)
	n.AddFederate(2)
	n.AddFederate(3)
	n.Step(Message{From: 3, Epoch: 1, Constrained: true, Granted: 7})
	n.EnableRegulation(1)
	drain(n)
	req := n.regReq
	// 3 acknowledges; 2 says nothing.
	n.Step(Message{From: 3, Epoch: 2, Constrained: true, Granted: 7, Acks: map[FederateID]uint64{1: req}})
	drain(n)
	if n.Regulating() {
		t.Fatal("enabled without 2's acknowledgement")
	}
	// An acknowledgement of an older request does not count.
	n.Step(Message{From: 2, Epoch: 1, Acks: map[FederateID]uint64{1: req - 1}})
	drain(n)
	if n.Regulating() {
		t.Fatal("enabled on a stale acknowledgement")
	}
	// 2 is lost: no more waiting. T' = max(0, 7).
	n.RemoveFederate(2)
	_, rds := drain(n)
	if !n.Regulating() || n.Time() != 7 {
		t.Fatalf("after removal: regulating=%v time=%v", n.Regulating(), n.Time())
	}
	if len(rds) == 0 || rds[0].RegulationEnabled == nil || *rds[0].RegulationEnabled != 7 {
		t.Fatalf("Ready = %+v", rds)
	}
	if b, _ := n.Bound(); b != 8 {
		t.Fatalf("bound %v, want 8", b)
	}
}

func TestAcknowledgesRequests(t *testing.T) {
	n := mustNew(t, 1)
	drain(n)
	n.Step(Message{From: 2, Epoch: 4, Regulating: true, Bound: 3, Request: 4})
	msgs, _ := drain(n)
	if len(msgs) != 1 || msgs[0].Acks[2] != 4 {
		t.Fatalf("no prompt acknowledgement: %v", msgs)
	}
	// The same request again: no new message.
	n.Step(Message{From: 2, Epoch: 5, Regulating: true, Bound: 3, Request: 4})
	if msgs, _ := drain(n); len(msgs) != 0 {
		t.Fatalf("acknowledged twice: %v", msgs)
	}
	// Request done: the acknowledgement goes away from later messages.
	n.Step(Message{From: 2, Epoch: 6, Regulating: true, Bound: 3})
	n.Tick()
	for range DefaultPromiseEveryTicks {
		n.Tick()
	}
	msgs, _ = drain(n)
	if len(msgs) != 1 || len(msgs[0].Acks) != 0 {
		t.Fatalf("stale acknowledgement: %v", msgs)
	}
}

func TestZeroLookaheadNeedsStrictPromise(t *testing.T) {
	n := mustNew(t, 1)
	if !constrainedBehind(n, 0) {
		t.Fatal("GALT 0 >= time 0 should allow constrained")
	}
	n.RequestAdvance(0)
	if _, rds := drain(n); len(grants(rds)) != 0 {
		t.Fatal("granted 0 while a zero-lookahead regulator sits at 0")
	}
	n.Step(Message{From: 2, Epoch: 3, Regulating: true, Bound: 0.001, Granted: 0.001})
	if _, rds := drain(n); !reflect.DeepEqual(grants(rds), []float64{0}) {
		t.Fatalf("grants %v, want [0]", grants(rds))
	}
}

func TestLITS(t *testing.T) {
	n := mustNew(t, 1)
	n.EnableConstrained()
	drain(n)
	if _, ok := n.LITS(); ok {
		t.Fatal("LITS bounded with no regulator and no queue")
	}
	n.ReceiveTSO(TSO{From: 2, Seq: 1, Time: 4})
	if l, ok := n.LITS(); !ok || l != 4 {
		t.Fatalf("LITS = %v, %v", l, ok)
	}
	n.Step(Message{From: 2, Epoch: 1, Regulating: true, Bound: 3})
	if l, _ := n.LITS(); l != 3 {
		t.Fatalf("LITS = %v, want 3", l)
	}
}

func TestMessageJSON(t *testing.T) {
	m := Message{From: 3, Epoch: 9, Regulating: true, Constrained: true, Bound: 2.5, Granted: 1.5,
		Covers: map[uint32]uint64{1: 4, 7: 2}, Request: 8, Acks: map[FederateID]uint64{2: 5},
		Strict: true, Pending: NextMessageRequest, Requested: 4, State: 6, Session: 2, Cut: 3,
		ReportRound: 3, Report: 2.5, ReportStrict: true, ReportSession: 2}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var got Message
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Fatalf("round trip: %v, want %v", got, m)
	}
}

func TestRemovedSenderLateTSO(t *testing.T) {
	n := mustNew(t, 1)
	n.EnableConstrained()
	drain(n)
	n.RemoveFederate(2)
	if err := n.ReceiveTSO(TSO{From: 2, Seq: 1, Time: 3}); err != nil {
		t.Fatal(err)
	}
	n.RequestAdvance(3)
	_, rds := drain(n)
	if len(rds) == 0 || len(rds[0].Deliver) != 1 {
		t.Fatalf("late message from a removed federate not delivered: %+v", rds)
	}
}

func TestAdvanceMisuse(t *testing.T) {
	n := mustNew(t, 1)
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	n.Advance(Ready{Deliver: []TSO{{}}})
}

// checkRegs reports whether n.regs holds exactly the members whose
// counted Message says Regulating, and whether the receive bookkeeping
// agrees with the members and streams.
func (n *Node) checkRegs() error {
	for id, m := range n.members {
		_, in := n.regs[id]
		if want := m.hasCounted && m.counted.Regulating; in != want {
			return fmt.Errorf("member %d: in regs %v, counted regulating %v", id, in, want)
		}
	}
	for id, m := range n.regs {
		if n.members[id] != m {
			return fmt.Errorf("regs holds %d, not a member", id)
		}
	}
	// And the receive bookkeeping: waiting counts the members with
	// pending Messages, and the cached stream entry is the map's.
	waiting := 0
	for _, m := range n.members {
		if len(m.pending) > 0 {
			waiting++
		}
	}
	if waiting != n.waiting {
		return fmt.Errorf("waiting is %d, %d members have pending Messages", n.waiting, waiting)
	}
	if n.last != nil && n.recvd[n.lastKey] != n.last {
		return fmt.Errorf("the cached entry of stream %v is not the map's", n.lastKey)
	}
	return nil
}

// With DirectAcks a member answers a request with a Message to the
// requester alone, answers again when asked again, and owes nothing
// once the request is over; a requester without every answer asks
// again, waiting longer each time.
func TestDirectAcks(t *testing.T) {
	a, err := New(Config{Self: 1, DirectAcks: true, PromiseEveryTicks: 10})
	if err != nil {
		t.Fatal(err)
	}
	a.AddFederate(2)
	drain(a)
	step := func(m Message) {
		t.Helper()
		if err := a.Step(m); err != nil {
			t.Fatal(err)
		}
	}
	directed := func() []Directed {
		t.Helper()
		var ds []Directed
		for a.HasReady() {
			rd := a.Ready()
			if len(rd.Messages) > 0 {
				t.Fatalf("broadcast %v, want only directed Messages", rd.Messages)
			}
			ds = append(ds, rd.Directed...)
			a.Advance(rd)
		}
		return ds
	}
	step(Message{From: 2, Epoch: 1, Request: 1})
	ds := directed()
	if len(ds) != 1 || ds[0].To != 2 || ds[0].Message.Acks[2] != 1 || len(ds[0].Message.Acks) != 1 || ds[0].Message.Epoch <= 1 {
		t.Fatalf("directed %+v, want one to 2 acknowledging request 1", ds)
	}
	step(Message{From: 2, Epoch: 2, Request: 1})
	if ds := directed(); len(ds) != 0 {
		t.Errorf("answered the same request again unasked: %+v", ds)
	}
	step(Message{From: 2, Epoch: 3, Request: 1, AckAsk: 1})
	if ds := directed(); len(ds) != 1 || ds[0].Message.Acks[2] != 1 {
		t.Errorf("asked again: directed %+v", ds)
	}
	// A request that ends before the answer goes owes nothing.
	step(Message{From: 2, Epoch: 4, Request: 4, AckAsk: 1})
	step(Message{From: 2, Epoch: 5})
	if a.HasReady() {
		t.Errorf("an answer is still owed for a request that is over: %+v", a.Ready())
	}

	// The requester's side: 3 never answers.
	r, err := New(Config{Self: 1, DirectAcks: true, PromiseEveryTicks: 10})
	if err != nil {
		t.Fatal(err)
	}
	r.AddFederate(3)
	drain(r)
	if err := r.EnableConstrained(); err != nil {
		t.Fatal(err)
	}
	drain(r)
	var asks []int
	last := uint64(0)
	for tick := 1; tick <= 40; tick++ {
		r.Tick()
		msgs, _ := drain(r)
		for _, m := range msgs {
			if m.AckAsk > last {
				last = m.AckAsk
				asks = append(asks, tick)
			}
		}
	}
	if len(asks) < 3 || asks[1]-asks[0] <= asks[0] || asks[2]-asks[1] <= asks[1]-asks[0] {
		t.Errorf("asked again at ticks %v, want growing waits", asks)
	}
}
