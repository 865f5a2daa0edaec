package tracecheck

import (
	"maps"
	"slices"
	"strings"
)

// The owed-message rules: a reliable message a federate was owed and
// never got. The other rules look only at what was delivered; these look
// for what was not. A receiver is owed a sender's message on a class
// once its stream of that class from the sender has started (it
// delivered one of them: the data plane's join handshake owes it
// everything after its join position, and the first delivery is at or
// after that), for as long as its subscription stays as it was then and
// covers the message, and until it records the sender lost:
//
//   - no holes: a receive-order message sent between two messages of the
//     stream that the receiver delivered was delivered too (the stream is
//     in order: the later one could not come first);
//   - per-sender order: what a stream delivers in receive order comes in
//     the order it was sent;
//   - no grant past an owed message: a time-stamp-order message whose
//     time stamp a grant of the constrained receiver passed (at or below
//     a TAR or NMR grant, below a TARA or NMRA grant) was delivered; the
//     rule "no TSO delivery at or below the last grant" already refuses
//     it after the grant.
//
// Left out, since the trace cannot tell what was owed there: messages
// sent best effort or with regions, subscriptions narrowed by regions or
// an update rate, updates whose epoch the receiver saw overtaken for one
// of its attributes (fencing drops them), retracted messages, the MOM's
// classes, and federates that restored (a restore replays a branch).
// Nor is a time-stamped update owed when the receiver removed its
// instance before the grant that passed it: a delete in receive order,
// or its sender's resignation, may overtake it, and it then has nothing
// to reflect.

// mark is one line of a federate's own history that the owed-message
// rules read: a subscription as it stands after the line, a time switch,
// a grant, a lost peer.
type mark struct {
	line  int
	kind  string // "subscribe", "constrained", "unconstrained", "grant", "lost"
	class string
	sub   bool
	attrs []string
	// narrowed: regions or an update rate limit the subscription.
	narrowed bool
	t        float64 // grant
	strict   bool    // the grant answered TAR or NMR: ts == t is passed too
	flush    bool    // the grant answered FQR
	peer     string  // lost, gap: the other federate's name
	src      string  // gap: its handle
}

// see records that the federate saw epoch e of instance attribute k.
func (s *traceFed) see(k string, e float64) {
	if e > s.seen[k] {
		s.seen[k] = e
	}
}

// stream is what a receiver got of one sender's messages of one class.
type stream struct {
	from     string // the sender's incarnation key
	class    string
	first    int // the lowest counter delivered
	last     int // the highest counter delivered
	startAt  int // the receiver's line of its first delivery
	lastLine int // the receiver's line of the delivery of counter last
	// ro are the receive-order deliveries: counter and line.
	ro [][2]int
}

// checkOwed applies the owed-message rules to every receiver and returns
// how many (receiver, message) pairs it found owed.
func checkOwed(feds map[string]*traceFed, names map[string]string, sends map[string]traceSend, retracted map[string]bool,
	show func(string) string, bad func(fed string, line int, rule, format string, args ...any)) int {
	owed := 0
	// Each sender's messages by class, in counter order.
	byClass := map[string][]string{} // sender key \x00 class -> ids
	for id, sd := range sends {
		if sd.kind != "update" && sd.kind != "interaction" || sd.best || retracted[id] || strings.Contains(sd.class, "HLAmanager") {
			continue
		}
		k := sd.key + "\x00" + sd.class
		byClass[k] = append(byClass[k], id)
	}
	for _, ids := range byClass {
		slices.SortFunc(ids, func(a, b string) int { return sends[a].n - sends[b].n })
	}
	for _, rkey := range slices.Sorted(maps.Keys(feds)) {
		r := feds[rkey]
		if r.restored {
			continue
		}
		streams := map[string]*stream{}
		for id, line := range r.delivered {
			sd, ok := sends[id]
			if !ok || sd.key == rkey || feds[sd.key] == nil || feds[sd.key].restored {
				continue
			}
			k := sd.key + "\x00" + sd.class
			if _, ok := byClass[k]; !ok {
				continue
			}
			st := streams[k]
			if st == nil {
				st = &stream{from: sd.key, class: sd.class, first: sd.n, last: sd.n, startAt: line, lastLine: line}
				streams[k] = st
			}
			if r.ro[id] {
				st.ro = append(st.ro, [2]int{sd.n, line})
			}
			if sd.n > st.last {
				st.last, st.lastLine = sd.n, line
			}
			st.first = min(st.first, sd.n)
			st.startAt = min(st.startAt, line)
		}
		for _, k := range slices.Sorted(maps.Keys(streams)) {
			st := streams[k]
			sub, settled := r.subscriptionAt(st.class, st.startAt)
			if sub == nil || sub.narrowed || !settled {
				continue
			}
			// One stream is one reliable stream of the data plane:
			// what it delivers in receive order comes in the order sent.
			slices.SortFunc(st.ro, func(a, b [2]int) int { return a[1] - b[1] })
			for i := 1; i < len(st.ro); i++ {
				if st.ro[i][0] < st.ro[i-1][0] {
					bad(names[rkey], st.ro[i][1], "receive-order messages of a stream are delivered in the order sent",
						"%s/%d delivered after %s/%d", names[st.from], st.ro[i][0], names[st.from], st.ro[i-1][0])
					break
				}
			}
			// Owed until the sender is lost, or the data plane reports
			// some of its messages lost for good (a gap: which ones, the
			// trace cannot say).
			lostAt := r.lostAt(names[st.from], handleOf(st.from), st.startAt)
			for _, id := range byClass[k] {
				sd := sends[id]
				if sd.n <= st.first || !sub.covers(sd) || r.fenced(sd) {
					continue
				}
				if sd.order != "TSO" && sd.n > st.last {
					continue // the stream's tail: perhaps still on its way
				}
				if sd.order == "TSO" && (sd.ts == nil || r.passedBy(*sd.ts, st.startAt, lostAt) == 0) {
					continue // no grant passed it yet
				}
				if sd.order == "TSO" && sd.kind == "update" && r.removedBefore(sd.obj, r.passedBy(*sd.ts, st.startAt, lostAt)) {
					continue // its instance was gone here before its time came
				}
				owed++
				if _, ok := r.delivered[id]; ok {
					continue
				}
				if sd.order != "TSO" {
					if sd.n < st.last && (lostAt == 0 || st.lastLine < lostAt) {
						bad(names[rkey], st.lastLine, "every reliable message of a stream is delivered",
							"%s (receive order) never delivered, though %s's later messages of %s were", show(id), names[st.from], st.class)
					}
					continue
				}
				bad(names[rkey], r.passedBy(*sd.ts, st.startAt, lostAt), "no grant passes a message owed",
					"granted past %s at %v, never delivered", show(id), *sd.ts)
			}
		}
	}
	return owed
}

// subscriptionAt returns the subscription under which the federate
// receives messages of class (its nearest subscribed ancestor, or
// itself) as it stood at line, and whether no later line changed it or
// the subscription of another class of the chain.
func (s *traceFed) subscriptionAt(class string, line int) (*mark, bool) {
	state := map[string]*mark{} // class -> the last subscribe line
	settled := true
	for i := range s.marks {
		m := &s.marks[i]
		if m.kind != "subscribe" || !inChain(m.class, class) {
			continue
		}
		if m.line > line {
			if prev := state[m.class]; prev == nil || !sameSubscription(prev, m) {
				settled = false
			}
			continue
		}
		state[m.class] = m
	}
	for c := class; c != ""; c = parentClass(c) {
		if m := state[c]; m != nil && m.sub {
			return m, settled
		}
	}
	return nil, settled
}

// inChain reports whether c is class or one of its ancestors.
func inChain(c, class string) bool {
	return c == class || strings.HasPrefix(class, c+".")
}

func parentClass(c string) string {
	if i := strings.LastIndexByte(c, '.'); i >= 0 {
		return c[:i]
	}
	return ""
}

func sameSubscription(a, b *mark) bool {
	return a.sub == b.sub && a.narrowed == b.narrowed && slices.Equal(a.attrs, b.attrs)
}

// covers reports whether the subscription gets the message: any
// interaction of the class chain, an update of a subscribed attribute.
func (m *mark) covers(sd traceSend) bool {
	if sd.kind != "update" {
		return true
	}
	for _, a := range sd.attrs {
		if slices.Contains(m.attrs, a) {
			return true
		}
	}
	return false
}

// fenced reports whether the federate saw a newer epoch of one of the
// update's attributes than the update's: it may have dropped it.
func (s *traceFed) fenced(sd traceSend) bool {
	for _, a := range sd.attrs {
		if s.seen[sd.obj+"\x00"+a] > sd.epoch {
			return true
		}
	}
	return false
}

// removedBefore reports whether the federate removed instance obj
// before line.
func (s *traceFed) removedBefore(obj string, line int) bool {
	at, ok := s.removed[obj]
	return ok && at < line
}

// lostAt returns the first line after line from where the federate
// recorded peer (of handle) lost, or a gap in its messages; 0 when none.
func (s *traceFed) lostAt(peer, handle string, from int) int {
	for _, m := range s.marks {
		if m.line <= from {
			continue
		}
		if m.kind == "lost" && m.peer == peer || m.kind == "gap" && (m.src == handle || m.src == "" && m.peer == peer) {
			return m.line
		}
	}
	return 0
}

// handleOf returns the handle of an incarnation key (see incarnation);
// "" for a key without one.
func handleOf(key string) string {
	if i := strings.IndexByte(key, 0); i >= 0 {
		return key[i+1:]
	}
	return ""
}

// passedBy returns the line of the first grant after line from (and
// before line until, when until is not 0) that passed time stamp ts
// while the federate was constrained; 0 when none did.
func (s *traceFed) passedBy(ts float64, from, until int) int {
	constrained := false
	for _, m := range s.marks {
		if until > 0 && m.line > until {
			break
		}
		switch m.kind {
		case "constrained":
			constrained = true
		case "unconstrained":
			constrained = false
		case "grant":
			if !constrained || m.line <= from || m.flush {
				continue
			}
			if ts < m.t || m.strict && ts == m.t {
				return m.line
			}
		}
	}
	return 0
}
