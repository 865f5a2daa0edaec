package tracecheck

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Event is one line of a JSON-lines trace (docs/trace.md). Fields a
// kind does not use are empty.
type Event struct {
	Ev        string   `json:"ev"`
	Fed       string   `json:"fed"`
	Handle    string   `json:"handle,omitempty"`
	Lookahead *float64 `json:"lookahead,omitempty"`
	Kind      string   `json:"kind,omitempty"`
	T         *float64 `json:"t,omitempty"`
	Msg       string   `json:"msg,omitempty"`
	Src       string   `json:"src,omitempty"`
	Order     string   `json:"order,omitempty"`
	TS        *float64 `json:"ts,omitempty"`
	Class     string   `json:"class,omitempty"`
	Peer      string   `json:"peer,omitempty"`
	// Save and restore: "save" marks a federate's save point, "restore"
	// its return to the one of Label, on restore Branch.
	Label  string   `json:"label,omitempty"`
	Branch *float64 `json:"branch,omitempty"`
	// Ownership: "owner" lines and the deliveries of updates and
	// deletes name the instance, the attribute(s) and the epoch; Owner
	// is nil when the attribute is unowned.
	Obj   string   `json:"obj,omitempty"`
	Attr  string   `json:"attr,omitempty"`
	Attrs []string `json:"attrs,omitempty"`
	Owner *string  `json:"owner,omitempty"`
	Epoch *float64 `json:"epoch,omitempty"`
	// Subscriptions ("subscribe" lines) and sends: Sub says the class is
	// subscribed (with Attrs, for an object class); Regions that regions
	// narrow the subscription; Rate that an update rate limits it; Best
	// that a send went best effort.
	Sub     bool `json:"sub,omitempty"`
	Regions bool `json:"regions,omitempty"`
	Rate    bool `json:"rate,omitempty"`
	Best    bool `json:"best,omitempty"`
}

// Violation is one broken rule, naming the federate and the line.
type Violation struct {
	Federate string
	Index    int // the line number (from 1, across every file read)
	Rule     string
	Detail   string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s event %d: %s: %s", v.Federate, v.Index, v.Rule, v.Detail)
}

// Report is what CheckReport found.
type Report struct {
	Lines      int // events read
	Federates  int // distinct federates with at least one event
	Sends      int
	Deliveries int
	Grants     int
	Owners     int // "owner" lines
	// UnknownSenders counts deliveries of messages whose sender has no
	// event in the trace at all: a partial trace, not a violation.
	UnknownSenders int
	// Owed counts the (receiver, message) pairs the owed-message rules
	// found owed: delivered, or reported as a violation.
	Owed       int
	Violations []Violation
}

// Check reads a trace and returns the violated rules (see
// CheckReport). Deliveries from senders absent from the trace are
// not violations; CheckReport counts them.
func Check(r io.Reader) ([]Violation, error) {
	rep, err := CheckReport(r)
	return rep.Violations, err
}

// traceFed is the checker's state for one federate.
type traceFed struct {
	granted    bool
	grant      float64
	strict     bool // the last grant answered TAR or NMR: no TSO at or below it may follow
	request    string
	pending    string  // the request not granted yet, "" when none
	avail      bool    // the last grant answered TARA or NMRA, at availAt
	availAt    float64 // messages delivered later at exactly this time are out of the common order
	regulating bool
	lookahead  float64
	time       float64 // logical time: the last grant or the time regulation was enabled at

	maxTS     float64 // the largest TSO deliver since the last grant
	maxTSLine int
	maxTSMsg  string

	delivered map[string]int // msg -> line
	tso       []string       // TSO deliveries in order

	epochs map[string]float64 // instance "\x00" attribute -> the newest epoch seen

	// Save points by label (the first pass's state then), and the
	// restore branch the federate is on.
	saves  map[string]*traceFed
	branch float64

	// What the owed-message rules read (owed.go): the federate's
	// subscriptions, time switches, grants and lost peers in line order,
	// the newest epoch it saw of each instance attribute, whether it
	// ever restored.
	marks    []mark
	seen     map[string]float64
	restored bool
	// ro holds the messages delivered in receive order (by id).
	ro map[string]bool
	// removed holds, by instance, the first line where the federate
	// removed it: it delivered a delete of it, or wrote "removed" (its
	// federate left, deleting it). Later updates of it have nothing to
	// reflect.
	removed map[string]int
}

// remove records that the federate removed instance obj at line.
func (s *traceFed) remove(obj string, line int) {
	if s.removed == nil {
		s.removed = map[string]int{}
	}
	if _, ok := s.removed[obj]; !ok {
		s.removed[obj] = line
	}
}

// savePoint copies the first pass's state of s for a restore.
func (s *traceFed) savePoint() *traceFed {
	c := *s
	c.epochs = maps.Clone(s.epochs)
	c.delivered, c.tso, c.saves = nil, nil, nil
	c.marks, c.seen, c.ro, c.removed = nil, nil, nil, nil
	return &c
}

func newTraceFed() *traceFed {
	return &traceFed{delivered: map[string]int{}, maxTS: math.Inf(-1), epochs: map[string]float64{}, seen: map[string]float64{}}
}

// traceHolder is the federate that held a token at an epoch.
type traceHolder struct {
	fed  string // incarnation key
	name string
	line int
}

type traceSend struct {
	fed   string
	key   string // the sender's incarnation key
	line  int
	order string
	ts    *float64
	// For the owed-message rules: the message's kind, class, counter,
	// and for updates the instance, attributes and epoch.
	kind  string
	class string
	n     int
	obj   string
	attrs []string
	epoch float64
	best  bool
}

type traceDeliver struct {
	fed   string // the receiver's incarnation key
	name  string // the receiver's name
	line  int
	msg   string // as written
	src   string // the sender's handle, if written
	obj   string // the instance of an update or delete
	id    string // canonical id (see incarnation), set after reading
	order string
	ts    *float64
	// unordered: delivered by a flush queue request, or at exactly the
	// time of an earlier Available grant; the common order need not hold.
	unordered bool
	// mark is "save" or "restore" for a save point or a return to one
	// (label in msg): not a delivery.
	mark string
	// taken: a restore to the save point of another incarnation of the
	// name (the federate joined in place of a crashed one after the
	// save): what it delivered before was on the abandoned branch.
	taken bool
}

// CheckReport reads a trace, one JSON object per line (blank lines
// are skipped, unknown event kinds ignored), and verifies:
//
//   - grants never decrease per federate;
//   - after a grant to g that answered TAR or NMR, no TSO delivery has a
//     time stamp at or below g (below g after TARA, NMRA or FQR);
//   - every TSO delivery before a grant to g has a time stamp at most g,
//     unless the grant answers FQR (a flush delivers ahead of time);
//   - every two federates deliver the TSO messages both deliver in the
//     same relative order, leaving out those a flush delivered and those
//     delivered after a TARA or NMRA grant to g at exactly g (the
//     standard lets both come out of the common order);
//   - no message is delivered twice to one federate, and no message id is
//     sent twice;
//   - every delivered message was sent (when its sender has events in the
//     trace; otherwise it counts in UnknownSenders), a TSO delivery was
//     sent TSO, with the same time stamp;
//   - a regulating federate never sends TSO below its logical time (last
//     grant, or the time regulation was enabled at) plus its lookahead
//     (the smallest since regulation was enabled);
//   - ownership ("owner" lines): no two federates hold one (instance,
//     attribute) at the same epoch; the epochs a federate sees of one
//     attribute never decrease; no federate reflects an update, or
//     removes an instance on a delete, of an epoch older than one it
//     had seen of those attributes (fencing).
//
// A receiver that does not know a sender's name yet writes the message
// id as "#HANDLE/N"; the checker maps HANDLE to the name through the
// sender's join event.
//
// A malformed line is an error; Violations found before it are returned.
// Violation.Index is the line number (from 1).
func CheckReport(r io.Reader) (Report, error) {
	var rep Report
	feds := map[string]*traceFed{}
	// A federate is one incarnation of a name: each join line starts a
	// new one (a restarted federate joins under its name with a new
	// handle, and counts its message ids from 1 again). feds and message
	// ids are keyed by incarnation (see incarnation); a name's lines
	// before its first join, or in a trace without joins, belong to an
	// incarnation keyed by the name alone, which its first join renames.
	cur := map[string]string{}     // name -> its current incarnation key
	names := map[string]string{}   // incarnation key -> name
	count := map[string]int{}      // name -> incarnations
	handles := map[string]string{} // handle -> incarnation key, from joins
	fed := func(name string) (*traceFed, string) {
		key, ok := cur[name]
		if !ok {
			key = name
			feds[key] = newTraceFed()
			names[key], cur[name] = name, key
			count[name]++
		}
		return feds[key], key
	}
	// The save points of each name by label, of its latest incarnation
	// that saved: a federate that joined in place of a crashed one after
	// a save restores as it, from its save point.
	named := map[string]map[string]*traceFed{}
	sends := map[string]traceSend{}
	retracted := map[string]bool{}      // message ids their senders retracted
	holders := map[string]traceHolder{} // instance, attribute, epoch -> holder
	var delivers []traceDeliver
	bad := func(fed string, line int, rule, format string, args ...any) {
		rep.Violations = append(rep.Violations, Violation{Federate: fed, Index: line, Rule: rule, Detail: fmt.Sprintf(format, args...)})
	}

	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(strings.TrimSpace(string(b))) == 0 {
			continue
		}
		var e Event
		if err := json.Unmarshal(b, &e); err != nil {
			return rep, fmt.Errorf("testnet: trace line %d: %w", line, err)
		}
		if e.Ev == "" || e.Fed == "" {
			return rep, fmt.Errorf("testnet: trace line %d: missing \"ev\" or \"fed\"", line)
		}
		rep.Lines++
		s, key := fed(e.Fed)
		switch e.Ev {
		case "join":
			if e.Handle != "" {
				nk := incarnation(e.Fed, e.Handle)
				if key == e.Fed {
					delete(feds, key) // the first join names the incarnation
					delete(names, key)
				} else {
					s = newTraceFed()
					count[e.Fed]++
				}
				feds[nk], names[nk], cur[e.Fed] = s, e.Fed, nk
				handles[e.Handle] = nk
			}
		case "save":
			if s.saves == nil {
				s.saves = map[string]*traceFed{}
			}
			s.saves[e.Label] = s.savePoint()
			if named[e.Fed] == nil {
				named[e.Fed] = map[string]*traceFed{}
			}
			named[e.Fed][e.Label] = s.saves[e.Label]
			delivers = append(delivers, traceDeliver{fed: key, name: e.Fed, line: line, msg: e.Label, mark: "save"})
		case "restore":
			sp, taken := s.saves[e.Label], false
			if sp == nil {
				sp, taken = named[e.Fed][e.Label], true
			}
			if sp != nil {
				delivered, tso, saves, marks, seen := s.delivered, s.tso, s.saves, s.marks, s.seen
				*s = *sp.savePoint()
				s.delivered, s.tso, s.saves, s.marks, s.seen = delivered, tso, saves, marks, seen
			} else {
				// Back to a save point the trace does not have: its time
				// is not known; the time rules start again from the
				// next grant.
				s.granted, s.strict, s.avail, s.pending = false, false, false, ""
				s.time = math.Inf(-1)
				s.maxTS, s.maxTSLine, s.maxTSMsg = math.Inf(-1), 0, ""
				taken = true
			}
			s.restored = true
			if e.Branch != nil {
				s.branch = *e.Branch
			}
			delivers = append(delivers, traceDeliver{fed: key, name: e.Fed, line: line, msg: e.Label, mark: "restore", taken: taken})
		case "regulation":
			s.regulating = true
			if e.Lookahead != nil {
				s.lookahead = *e.Lookahead
			}
			if e.T != nil && (!s.granted || *e.T > s.time) {
				s.time = *e.T
			}
		case "lookahead":
			// A decrease may take effect only as time advances and an
			// increase need not bind at once: keep the smaller.
			if e.Lookahead != nil && *e.Lookahead < s.lookahead {
				s.lookahead = *e.Lookahead
			}
		case "unregulated":
			s.regulating = false
		case "constrained", "unconstrained":
			s.marks = append(s.marks, mark{line: line, kind: e.Ev})
		case "subscribe":
			s.marks = append(s.marks, mark{line: line, kind: e.Ev, class: e.Class, sub: e.Sub, attrs: e.Attrs, narrowed: e.Regions || e.Rate})
		case "lost":
			s.marks = append(s.marks, mark{line: line, kind: e.Ev, peer: e.Peer})
		case "gap":
			s.marks = append(s.marks, mark{line: line, kind: e.Ev, peer: e.Peer, src: e.Src})
		case "removed":
			s.remove(e.Obj, line)
		case "retract":
			retracted[key+msgCounter(e.Msg)] = true
		case "request":
			s.request, s.pending = e.Kind, e.Kind
		case "grant":
			if e.T == nil {
				return rep, fmt.Errorf("testnet: trace line %d: grant without \"t\"", line)
			}
			g := *e.T
			rep.Grants++
			if s.granted && g < s.grant {
				bad(e.Fed, line, "grants never decrease", "grant to %v after grant to %v", g, s.grant)
			}
			if s.maxTS > g && s.pending != "FQR" {
				bad(e.Fed, line, "TSO delivered before a grant is at most its time",
					"%s at %v (line %d) delivered before grant to %v", s.maxTSMsg, s.maxTS, s.maxTSLine, g)
			}
			s.granted, s.grant, s.time = true, g, g
			switch s.request {
			case "TARA", "NMRA", "FQR":
				s.strict = false
			default:
				s.strict = true
			}
			s.avail, s.availAt = s.request == "TARA" || s.request == "NMRA", g
			s.marks = append(s.marks, mark{line: line, kind: e.Ev, t: g, strict: s.strict, flush: s.pending == "FQR"})
			s.pending = ""
			s.maxTS, s.maxTSLine, s.maxTSMsg = math.Inf(-1), 0, ""
		case "send":
			rep.Sends++
			if e.Msg == "" {
				return rep, fmt.Errorf("testnet: trace line %d: send without \"msg\"", line)
			}
			id := key + msgCounter(e.Msg)
			if prev, ok := sends[id]; ok {
				bad(e.Fed, line, "message ids are unique", "%s was sent already by %s (line %d)", e.Msg, prev.fed, prev.line)
			} else {
				sd := traceSend{fed: e.Fed, key: key, line: line, order: e.Order, ts: e.TS,
					kind: e.Kind, class: e.Class, obj: e.Obj, attrs: e.Attrs, best: e.Best}
				sd.n, _ = strconv.Atoi(strings.TrimPrefix(msgCounter(e.Msg), "/"))
				if e.Epoch != nil {
					sd.epoch = *e.Epoch
				}
				sends[id] = sd
			}
			if e.Order == "TSO" && s.regulating {
				if e.TS == nil {
					bad(e.Fed, line, "TSO sends have a time stamp", "%s has none", e.Msg)
				} else if bound := s.time + s.lookahead; *e.TS < bound {
					bad(e.Fed, line, "regulating sends at or above time + lookahead",
						"%s at %v below %v + %v", e.Msg, *e.TS, s.time, s.lookahead)
				}
			}
		case "owner":
			rep.Owners++
			if e.Obj == "" || e.Attr == "" || e.Epoch == nil {
				return rep, fmt.Errorf("testnet: trace line %d: owner without \"obj\", \"attr\" or \"epoch\"", line)
			}
			k := e.Obj + "\x00" + e.Attr
			s.see(k, *e.Epoch)
			if prev, ok := s.epochs[k]; ok && *e.Epoch < prev {
				bad(e.Fed, line, "ownership epochs only grow", "%s of %s at epoch %s after epoch %s",
					e.Attr, e.Obj, epochString(*e.Epoch), epochString(prev))
			} else {
				s.epochs[k] = *e.Epoch
			}
			if e.Owner == nil || *e.Owner != e.Fed {
				continue
			}
			hk := k + "\x00" + epochString(*e.Epoch) + "\x00" + fmt.Sprint(s.branch)
			if h, ok := holders[hk]; ok && h.fed != key {
				bad(e.Fed, line, "one holder per token and epoch", "%s of %s at epoch %s is held by %s too (line %d)",
					e.Attr, e.Obj, epochString(*e.Epoch), h.name, h.line)
			} else if !ok {
				holders[hk] = traceHolder{fed: key, name: e.Fed, line: line}
			}
		case "deliver":
			rep.Deliveries++
			if e.Msg == "" {
				return rep, fmt.Errorf("testnet: trace line %d: deliver without \"msg\"", line)
			}
			if e.Obj != "" && e.Epoch != nil {
				for _, a := range e.Attrs {
					s.see(e.Obj+"\x00"+a, *e.Epoch)
				}
				for _, a := range e.Attrs {
					if prev, ok := s.epochs[e.Obj+"\x00"+a]; ok && *e.Epoch < prev {
						bad(e.Fed, line, "no update of an older epoch is reflected", "%s of %s at epoch %s after epoch %s",
							a, e.Obj, epochString(*e.Epoch), epochString(prev))
					}
				}
			}
			d := traceDeliver{fed: key, name: e.Fed, line: line, msg: e.Msg, src: e.Src, obj: e.Obj, order: e.Order, ts: e.TS}
			if e.Order == "TSO" && e.TS != nil {
				d.unordered = s.pending == "FQR" || (s.avail && *e.TS == s.availAt)
			}
			delivers = append(delivers, d)
			if e.Order != "TSO" {
				continue
			}
			if e.TS == nil {
				bad(e.Fed, line, "TSO deliveries have a time stamp", "%s has none", e.Msg)
				continue
			}
			ts := *e.TS
			if s.granted && (ts < s.grant || s.strict && ts == s.grant) {
				bad(e.Fed, line, "no TSO delivery at or below the last grant",
					"%s at %v delivered after grant to %v", e.Msg, ts, s.grant)
			}
			if s.pending == "FQR" {
				continue // a flush delivers ahead of time
			}
			if ts > s.maxTS {
				s.maxTS, s.maxTSLine, s.maxTSMsg = ts, line, e.Msg
			}
		}
	}
	if err := sc.Err(); err != nil {
		return rep, fmt.Errorf("testnet: read trace: %w", err)
	}
	rep.Federates = len(feds)

	// Message identity: the sender's incarnation and its counter. The
	// receiver names the sender by handle ("src", or an id "#HANDLE/N"
	// written before it knew the sender's name) or, in traces without
	// "src", by name alone: then the name's incarnation if it has one,
	// else its last (such a trace cannot tell them apart).
	for i := range delivers {
		d := &delivers[i]
		if d.mark != "" {
			continue
		}
		sender, n := senderOf(d.msg), msgCounter(d.msg)
		switch {
		case d.src != "" && handles[d.src] != "":
			d.id = handles[d.src] + n
		case strings.HasPrefix(sender, "#") && handles[sender[1:]] != "":
			d.id = handles[sender[1:]] + n
		case d.src == "" && !strings.HasPrefix(sender, "#") && cur[sender] != "":
			// A trace without "src": the name's incarnation.
			d.id = cur[sender] + n
		default:
			// A sender with no line in the trace, or an incarnation of
			// it whose lines are missing (a process killed before its
			// trace had its join).
			d.id = "\x00unknown\x00" + d.msg // a sender with no event in the trace
		}
	}
	kept := delivers[:0]
	type savedDeliveries struct {
		delivered map[string]int
		tso       int
	}
	points := map[string]map[string]savedDeliveries{} // federate -> label -> what it had delivered at the save
	for _, d := range delivers {
		s := feds[d.fed]
		switch d.mark {
		case "save":
			if points[d.fed] == nil {
				points[d.fed] = map[string]savedDeliveries{}
			}
			points[d.fed][d.msg] = savedDeliveries{maps.Clone(s.delivered), len(s.tso)}
			continue
		case "restore":
			// What was delivered after the save point never happened:
			// it may be delivered again, and its order is not compared.
			if p, ok := points[d.fed][d.msg]; ok {
				s.delivered = maps.Clone(p.delivered)
				s.tso = s.tso[:p.tso]
			} else if d.taken {
				// Everything it delivered was on the abandoned branch.
				s.delivered = map[string]int{}
				s.tso = nil
			}
			continue
		}
		if prev, ok := s.delivered[d.id]; ok {
			bad(d.name, d.line, "no message is delivered twice", "%s delivered already (line %d)", d.msg, prev)
			continue
		}
		s.delivered[d.id] = d.line
		if d.order != "TSO" {
			if s.ro == nil {
				s.ro = map[string]bool{}
			}
			s.ro[d.id] = true
		}
		if d.order == "TSO" && d.ts != nil && !d.unordered {
			s.tso = append(s.tso, d.id)
		}
		kept = append(kept, d)
	}
	for _, d := range kept {
		sd, ok := sends[d.id]
		if ok && sd.kind == "delete" && d.obj != "" {
			feds[d.fed].remove(d.obj, d.line)
		}
		if !ok {
			if strings.HasPrefix(d.id, "\x00unknown\x00") {
				rep.UnknownSenders++
			} else {
				bad(d.name, d.line, "every delivered message was sent", "%s was never sent", d.msg)
			}
			continue
		}
		if d.order == "TSO" {
			if sd.order != "TSO" {
				bad(d.name, d.line, "TSO deliveries were sent TSO", "%s was sent %s", d.msg, sd.order)
			} else if d.ts != nil && sd.ts != nil && *d.ts != *sd.ts {
				bad(d.name, d.line, "deliveries keep the time stamp", "%s sent at %v, delivered at %v", d.msg, *sd.ts, *d.ts)
			}
		}
	}
	// show writes a canonical id as the trace writes ids: the name, with
	// the handle when the name had several incarnations.
	show := func(id string) string {
		i := strings.LastIndexByte(id, '/')
		key, n := id[:i], id[i:]
		name := names[key]
		if name == "" {
			return strings.TrimPrefix(id, "\x00unknown\x00")
		}
		if j := strings.IndexByte(key, 0); j >= 0 && count[name] > 1 {
			return name + "(handle " + key[j+1:] + ")" + n
		}
		return name + n
	}
	// Same relative order of shared TSO messages, for every pair.
	order := slices.Sorted(maps.Keys(feds))
	pos := make(map[string]map[string]int, len(order))
	for _, name := range order {
		p := make(map[string]int, len(feds[name].tso))
		for i, m := range feds[name].tso {
			p[m] = i
		}
		pos[name] = p
	}
	for i, a := range order {
		for _, b := range order[i+1:] {
			pb := pos[b]
			last, lastMsg := -1, ""
			for _, m := range feds[a].tso {
				j, ok := pb[m]
				if !ok {
					continue
				}
				if j < last {
					bad(names[b], feds[b].delivered[m], "TSO messages are delivered in the same order everywhere",
						"%s delivers %s before %s, %s after", names[a], show(lastMsg), show(m), names[b])
					break
				}
				last, lastMsg = j, m
			}
		}
	}
	rep.Owed = checkOwed(feds, names, sends, retracted, show, bad)
	sort.SliceStable(rep.Violations, func(i, j int) bool { return rep.Violations[i].Index < rep.Violations[j].Index })
	return rep, nil
}

// epochString writes an epoch as term.sequence (docs/ownership.md).
func epochString(e float64) string {
	u := uint64(e)
	return fmt.Sprintf("%d.%d", u>>32, u&(1<<32-1))
}

// senderOf is the sender part of a message id "SENDER/N".
func senderOf(msg string) string {
	if i := strings.LastIndexByte(msg, '/'); i >= 0 {
		return msg[:i]
	}
	return msg
}

// msgCounter is the counter part of a message id "SENDER/N", with its
// slash.
func msgCounter(msg string) string {
	if i := strings.LastIndexByte(msg, '/'); i >= 0 {
		return msg[i:]
	}
	return "/" + msg
}

// incarnation is the key of the federate that joined as name with
// handle: names may hold any character but NUL.
func incarnation(name, handle string) string { return name + "\x00" + handle }
