package testnet

import (
	"fmt"

	"github.com/meshrti/meshrti/lbts"
	"github.com/meshrti/meshrti/peer"
)

// Message identity: tests put a unique tag on every update, interaction
// and delete they send, so the checker can follow one message to every
// receiver.

// tagged returns the tag and time-stamp-order facts of an event that
// carries a message, or ok false.
func tagged(ev peer.Event) (tag string, tso bool, t float64, producer peer.FederateHandle, ok bool) {
	switch e := ev.(type) {
	case peer.ReflectAttributeValues:
		return kindTag("reflect", e.Tag), e.ReceivedOrder == peer.TimeStamp, timeOf(e.Time), e.Producer, true
	case peer.ReceiveInteraction:
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

// Violation is one broken invariant, naming the federate and the event.
type Violation struct {
	Federate string
	Index    int // position in the federate's log
	Rule     string
	Detail   string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s event %d: %s: %s", v.Federate, v.Index, v.Rule, v.Detail)
}

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
func Check(logs []*Log) []Violation {
	var out []Violation
	orders := make([][]string, len(logs))
	type tsoDelivery struct {
		idx      int
		t        float64
		producer peer.FederateHandle
		tag      string
	}
	for i, l := range logs {
		name := l.Fed.Name()
		evs := l.Events()
		lastGrant, granted := 0.0, false
		strict := true               // the last grant rules out TSO at its time
		availAt, avail := 0.0, false // the last grant answered TARA or NMRA, at availAt
		var lastTSO struct {
			t float64
			p peer.FederateHandle
		}
		var pending []tsoDelivery // TSO deliveries since the last grant
		// settle checks the deliveries before a grant; flush says the
		// grant answered a flush queue request (or none is known yet).
		settle := func(gt float64, flush bool) {
			for _, p := range pending {
				if flush {
					continue
				}
				if p.t > gt {
					out = append(out, Violation{name, p.idx, "TSO before grant", fmt.Sprintf("time %v delivered before the grant to %v", p.t, gt)})
				}
				if p.t < lastTSO.t || (p.t == lastTSO.t && p.producer < lastTSO.p) {
					out = append(out, Violation{name, p.idx, "TSO order", fmt.Sprintf("%s (%v, %d) after (%v, %d)", p.tag, p.t, p.producer, lastTSO.t, lastTSO.p)})
				}
				lastTSO.t, lastTSO.p = p.t, p.producer
				if !(avail && p.t == availAt) {
					orders[i] = append(orders[i], p.tag)
				}
			}
			pending = pending[:0]
		}
		seen := make(map[string]int)
		for j, ev := range evs {
			if g, ok := ev.(peer.TimeAdvanceGrant); ok {
				gt := g.Time.Float()
				if granted && gt < lastGrant {
					out = append(out, Violation{name, j, "grants never decrease", fmt.Sprintf("grant %v after %v", gt, lastGrant)})
				}
				flush := g.Request == lbts.FlushQueueRequest
				settle(gt, flush)
				lastGrant, granted = gt, true
				strict = !flush && g.Request != lbts.TimeAdvanceRequestAvailable && g.Request != lbts.NextMessageRequestAvailable
				avail, availAt = !strict && !flush, gt
				if !strict {
					// Messages at the granted time (FQR: at or above it)
					// may still follow, from any producer.
					lastTSO.t, lastTSO.p = gt, 0
				}
				continue
			}
			tag, tso, t, producer, ok := tagged(ev)
			if !ok {
				continue
			}
			if prev, dup := seen[tag]; dup {
				out = append(out, Violation{name, j, "exactly once", fmt.Sprintf("%s delivered again (first at %d)", tag, prev)})
			}
			seen[tag] = j
			if !tso {
				continue
			}
			if granted && (t < lastGrant || strict && t == lastGrant) {
				out = append(out, Violation{name, j, "no TSO at or below the grant", fmt.Sprintf("%s at %v after grant %v", tag, t, lastGrant)})
			}
			pending = append(pending, tsoDelivery{j, t, producer, tag})
		}
		// Deliveries after the last grant: a pending flush may have
		// delivered them ahead of time, so only the order within is
		// checked when it holds.
		if len(pending) > 0 {
			sorted := true
			for k := 1; k < len(pending); k++ {
				if pending[k].t < pending[k-1].t {
					sorted = false
				}
			}
			settle(pending[len(pending)-1].t, !sorted)
		}
	}
	// Same relative order everywhere: compare each log with the first
	// that shares messages with it, on the messages they share.
	pos := make([]map[string]int, len(orders))
	for i, o := range orders {
		pos[i] = make(map[string]int, len(o))
		for k, tag := range o {
			pos[i][tag] = k
		}
	}
	for i := 1; i < len(orders); i++ {
		for j := 0; j < i; j++ {
			last, lastTag := -1, ""
			for _, tag := range orders[i] {
				k, ok := pos[j][tag]
				if !ok {
					continue
				}
				if k < last {
					out = append(out, Violation{logs[i].Fed.Name(), pos[i][tag], "same TSO order everywhere",
						fmt.Sprintf("%s and %s are in the other order at %s", lastTag, tag, logs[j].Fed.Name())})
					break
				}
				last, lastTag = k, tag
			}
		}
	}
	return out
}
