package peer

import (
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
			band := func(f *Federate, r RegionHandle, lo uint64) {
				t.Helper()
				must(f.SetRangeBounds(r, h.band, RangeBounds{Lower: lo, Upper: lo + 1}))
				must(f.CommitRegionModifications(r))
			}
			rb, err := b.CreateRegion(h.band)
			must(err)
			band(b, rb, 7)
			must(b.SubscribeInteractionClassWithRegions(h.call, rb))
			must(c.SubscribeInteractionClass(h.call))
			must(b.EnableTimeConstrained())
			waitEvent[TimeConstrainedEnabled](t, b)
			must(a.EnableInteractionRelevanceAdvisorySwitch())
			must(a.PublishInteractionClass(h.call))
			waitFor(t, a, wait, isType[TurnInteractionsOn])
			ra, err := a.CreateRegion(h.band)
			must(err)
			band(a, ra, 5)
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
			band(b, rb, 5)
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
