package peer

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/meshrti/meshrti/peer/transport"
)

// A receiver whose region moves over a band gets only what is sent there
// after the move: B, time-constrained and not advancing, holds a
// receive-order interaction sent on band 5 while its region covers band
// 7 (C subscribes without regions, so the interaction reaches the
// class's group, and B with it); B then tunes to band 5 and advances:
// only the interaction sent after the move arrives.
func TestConformanceDDMHistory(t *testing.T) {
	for _, tc := range []struct {
		name   string
		faults transport.Faults
	}{
		{"clean", transport.Faults{}},
		{"loss", transport.Faults{Loss: 0.1, Reorder: 0.05}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, h := newDDMFederation(t, 3)
			a, b, c := m.feds[0], m.feds[1], m.feds[2]
			const wait = 20 * time.Second
			must := mustOK(t)
			rb := regionAt(t, b, 7, h.band)
			must(b.SubscribeInteractionClassWithRegions(h.call, rb))
			must(c.SubscribeInteractionClass(h.call))
			must(b.EnableTimeConstrained())
			waitEvent[TimeConstrainedEnabled](t, b)
			must(a.EnableInteractionRelevanceAdvisorySwitch())
			must(a.PublishInteractionClass(h.call))
			waitFor(t, a, wait, isType[TurnInteractionsOn])
			ra := regionAt(t, a, 5, h.band)
			m.net.SetFaults(tc.faults)

			base := b.Stats().Delivered
			must(a.SendInteractionWithRegions(h.call, ParameterValues{h.text: []byte("before")}, []RegionHandle{ra}, nil))
			waitFor(t, c, wait, isType[ReceiveInteraction])
			// B holds it (as far as its counters tell) before it moves.
			deadline := time.Now().Add(wait)
			for b.Stats().Delivered == base {
				if time.Now().After(deadline) {
					t.Fatalf("B never received the interaction: %+v", b.Stats())
				}
				time.Sleep(2 * time.Millisecond)
			}
			moveRegion(t, b, rb, 5, h.band)
			must(b.TimeAdvanceRequest(Float64Time(1)))
			var got []string
			_, skipped := waitFor(t, b, wait, isType[TimeAdvanceGrant])
			for _, ev := range skipped {
				if ri, ok := ev.(ReceiveInteraction); ok {
					got = append(got, string(ri.Values[h.text]))
				}
			}
			must(a.SendInteractionWithRegions(h.call, ParameterValues{h.text: []byte("after")}, []RegionHandle{ra}, nil))
			must(b.TimeAdvanceRequest(Float64Time(2)))
			for {
				ev, _ := waitFor(t, b, wait, func(ev Event) bool {
					return isType[ReceiveInteraction](ev) || isType[TimeAdvanceGrant](ev)
				})
				if ri, ok := ev.(ReceiveInteraction); ok {
					got = append(got, string(ri.Values[h.text]))
					continue
				}
				if slices.Contains(got, "after") {
					break
				}
				// Granted before "after" came: ask again.
				must(b.TimeAdvanceRequest(Float64Time(ev.(TimeAdvanceGrant).Time.(Float64Time) + 1)))
			}
			if len(got) != 1 || got[0] != "after" {
				t.Errorf("B received %q, want only \"after\"", got)
			}
		})
	}
}

// The same while the sender's join of the cell's group is recent: three
// federates on band 5 make the sender join the cell's group (to send
// into it) and send "before" there; R, on band 7, moves to band 5 while
// the sender's join is still announced, so that the join handshake owes
// R everything the sender sent after its join, "before" included. R must
// not get it: it was sent before R's region moved (Stats().History
// counts it); what the sender sends after the move reaches R.
func TestConformanceDDMHistoryRecentSender(t *testing.T) {
	m, doc := emptyDDMFederation(t, "ddm", 37)
	// Slow ticks keep the sender's join announced (30 NakDelayTicks)
	// well past the steps below.
	slow := func(c *Config) { c.TickInterval = 10 * time.Millisecond }
	s := m.addWith("S", doc, slow)
	var band5 []*Federate
	for _, n := range []string{"W", "X", "Y"} {
		band5 = append(band5, m.addWith(n, doc, slow))
	}
	r := m.addWith("R", doc, slow)
	h := ddmHandlesOf(t, s)
	must := mustOK(t)
	const wait = 10 * time.Second
	region := func(f *Federate, lo uint64) RegionHandle { return regionAt(t, f, lo, h.band) }
	rr := region(r, 7)
	must(r.SubscribeInteractionClassWithRegions(h.call, rr))
	must(s.PublishInteractionClass(h.call))
	rs := region(s, 5)
	for _, f := range band5 {
		must(f.SubscribeInteractionClassWithRegions(h.call, region(f, 5)))
	}
	seen, got := textsReceived(h.text)
	// Once the sender knows of the band 5 subscriptions (and so joined
	// the cell's group), "before" goes there.
	start := time.Now()
	pollUntil(t, wait, func() (bool, string) {
		must(s.SendInteractionWithRegions(h.call, ParameterValues{h.text: []byte("before")}, []RegionHandle{rs}, nil))
		return got(band5[0], "before"), "band 5 never got the interaction"
	})
	for _, f := range band5[1:] {
		waitFor(t, f, wait, func(ev Event) bool {
			ri, ok := ev.(ReceiveInteraction)
			return ok && string(ri.Values[h.text]) == "before"
		})
	}
	// R moves to band 5.
	moveRegion(t, r, rr, 5, h.band)
	moved := time.Since(start)
	pollUntil(t, wait, func() (bool, string) {
		must(s.SendInteractionWithRegions(h.call, ParameterValues{h.text: []byte("after")}, []RegionHandle{rs}, nil))
		return got(r, "after"), "R never got what was sent after its move"
	})
	got(r, "none") // and whatever R still holds
	if slices.Contains(seen[r], "before") {
		t.Errorf("R received what was sent before its region moved: %q", seen[r])
	}
	if moved < 250*time.Millisecond && r.Stats().History == 0 {
		// The move came while the sender's join was announced: the
		// handshake owed R "before", which R dropped as history.
		t.Errorf("R moved %v after the sender joined, within its announcement, but dropped no history: %+v", moved, r.Stats())
	}
}

// The same when the receiver sent into the cell before its region moved
// over it: R publishes the class, and W's subscription on band 5 makes
// R join the cell's group to send (in the data plane only: it hears none
// of the cell's traffic); S, subscribed on band 5 too, hears R's join
// there, and the handshake starts R's stream from S. S sends "before";
// then R subscribes on band 5 and begins hearing the cell. R must not
// get "before" (S still holds it, and repairs it to a stream started at
// the send-only join), only what S sends after.
func TestConformanceDDMHistorySendFirst(t *testing.T) {
	m, doc := emptyDDMFederation(t, "ddm", 37)
	s := m.addWith("S", doc, nil)
	w := m.addWith("W", doc, nil)
	r := m.addWith("R", doc, nil)
	h := ddmHandlesOf(t, s)
	must := mustOK(t)
	const wait = 10 * time.Second
	region := func(f *Federate, lo uint64) RegionHandle { return regionAt(t, f, lo, h.band) }
	must(w.SubscribeInteractionClassWithRegions(h.call, region(w, 5)))
	must(s.SubscribeInteractionClassWithRegions(h.call, region(s, 5)))
	must(r.EnableInteractionRelevanceAdvisorySwitch())
	must(r.PublishInteractionClass(h.call))
	waitFor(t, r, wait, isType[TurnInteractionsOn]) // R knows of W's subscription: joined to send
	// R's join HELLOs go on for 15 NakDelayTicks: S, hearing the cell,
	// answers them, and R's stream from S starts.
	time.Sleep(400 * time.Millisecond)
	must(s.PublishInteractionClass(h.call))
	rs := region(s, 5)
	seen, got := textsReceived(h.text)
	pollUntil(t, wait, func() (bool, string) {
		must(s.SendInteractionWithRegions(h.call, ParameterValues{h.text: []byte("before")}, []RegionHandle{rs}, nil))
		return got(w, "before"), "W never got the interaction"
	})
	time.Sleep(100 * time.Millisecond)
	must(r.SubscribeInteractionClassWithRegions(h.call, region(r, 5)))
	pollUntil(t, wait, func() (bool, string) {
		must(s.SendInteractionWithRegions(h.call, ParameterValues{h.text: []byte("after")}, []RegionHandle{rs}, nil))
		return got(r, "after"), "R never got what was sent after its subscription"
	})
	got(r, "none") // and whatever R still holds
	if slices.Contains(seen[r], "before") {
		t.Errorf("R received what was sent before its region moved: %q", seen[r])
	}
}

// textsReceived returns what each federate received of param, and a
// function that takes a federate's interactions for up to 20 ms and
// reports whether one carried text.
func textsReceived(param ParameterHandle) (map[*Federate][]string, func(f *Federate, text string) bool) {
	seen := map[*Federate][]string{}
	return seen, func(f *Federate, text string) bool {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		for {
			ev, err := f.Next(ctx)
			if err != nil {
				return false
			}
			if ri, ok := ev.(ReceiveInteraction); ok {
				seen[f] = append(seen[f], string(ri.Values[param]))
				if string(ri.Values[param]) == text {
					return true
				}
			}
		}
	}
}
