package lbts

import (
	"fmt"
	"maps"
	"math"
	"slices"
)

// FederateID identifies a federate in the federation execution. The peer
// layer chooses it (the federate handle); 0 is never a valid ID. An ID
// must not be reused by a later incarnation, since a Node orders each
// federate's messages by Epoch alone.
type FederateID uint64

// Message is one federate's time state, its "promise", as broadcast to
// every other federate on the control group. It holds only plain numbers,
// bools and maps, so msgpack and encoding/json carry it as is.
//
// A Node builds its own Messages (Ready.Messages) and consumes its peers'
// (Step). A later Message from the same federate supersedes an earlier
// one; delivery may lose, duplicate and reorder them.
type Message struct {
	// From is the sender.
	From FederateID `json:"from" msgpack:"from"`
	// Epoch numbers the sender's states; it grows whenever the content
	// changes. A receiver ignores a Message whose Epoch is not above the
	// last it has seen from From. Periodic resends keep their Epoch.
	Epoch uint64 `json:"epoch" msgpack:"epoch"`
	// Regulating is true while the sender is time-regulating, and already
	// while its enableTimeRegulation is pending.
	Regulating bool `json:"regulating,omitempty" msgpack:"regulating,omitempty"`
	// Constrained is true while the sender is time-constrained (not while
	// its enableTimeConstrained is pending).
	Constrained bool `json:"constrained,omitempty" msgpack:"constrained,omitempty"`
	// Bound is the promise, meaningful when Regulating: no TSO message
	// from the sender will carry a time stamp below Bound. It is the
	// sender's logical time + lookahead when idle, its requested time +
	// lookahead while a time advance is pending, and it never decreases
	// while the sender stays regulating.
	Bound float64 `json:"bound" msgpack:"bound"`
	// Granted is the sender's current logical time.
	Granted float64 `json:"granted" msgpack:"granted"`
	// Covers maps each data-plane group on which the sender has sent TSO
	// messages to the sequence number of its last TSO message there. A
	// receiver counts this Message only once it has received (or been
	// told it lost) everything up to those numbers on the groups it has
	// joined, so the promise never overtakes the messages it covers.
	Covers map[uint32]uint64 `json:"covers,omitempty" msgpack:"covers,omitempty"`
	// Request is non-zero while the sender has an enable request
	// (regulation or constrained) waiting for acknowledgements: the Epoch
	// at which it made its latest such request.
	Request uint64 `json:"request,omitempty" msgpack:"request,omitempty"`
	// Acks acknowledges other federates' pending requests: Acks[f] = r
	// says the sender counts a Message of f with Request r, so its own
	// state (this Message) already takes f's promise into account.
	Acks map[FederateID]uint64 `json:"acks,omitempty" msgpack:"acks,omitempty"`
	// AckAsk grows each time the sender, still waiting for
	// acknowledgements of its Request, asks again (Config.DirectAcks):
	// members answer with a directed Message even if they acknowledged
	// the Request before. 0 while Request is 0.
	AckAsk uint64 `json:"ack_ask,omitempty" msgpack:"ack_ask,omitempty"`

	// Strict says Bound is exclusive: no TSO message from the sender will
	// carry exactly Bound either. It is set at zero lookahead after a
	// TAR, NMR or FQR grant (and while a TAR is pending), which forbid
	// sending at the granted time itself.
	Strict bool `json:"strict,omitempty" msgpack:"strict,omitempty"`
	// Pending is the sender's pending time advance, if any, and Requested
	// its time. Receivers use it to tell whether a consistent cut could
	// help: a sender that is not advancing will raise its Bound by itself.
	Pending   RequestKind `json:"pending,omitempty" msgpack:"pending,omitempty"`
	Requested float64     `json:"requested,omitempty" msgpack:"requested,omitempty"`
	// Waiting says the sender waits for its GALT to rise: a time advance
	// or enableTimeConstrained is pending, or its enableTimeRegulation
	// waits to jump ahead.
	Waiting bool `json:"waiting,omitempty" msgpack:"waiting,omitempty"`
	// State grows whenever the sender's time state changes (time,
	// request, promise, modes, queue, sends); round fields do not count.
	// A waiting receiver starts a new cut only after some State changed.
	State uint64 `json:"state,omitempty" msgpack:"state,omitempty"`
	// Session identifies the sender's current period of time regulation
	// (the Epoch of its latest enableTimeRegulation). A cut Report counts
	// only while ReportSession equals Session.
	Session uint64 `json:"session,omitempty" msgpack:"session,omitempty"`
	// Cut is the consistent-cut round the sender has entered. It is
	// in-band like Bound: Covers holds everything sent before the cut,
	// so once a receiver counts this Message it holds every TSO message
	// the sender sent before entering the round.
	Cut uint64 `json:"cut,omitempty" msgpack:"cut,omitempty"`
	// ReportRound is the round the Report is for (0: none yet). Report
	// is the sender's conditional bound for that round: taken once it
	// had received everything sent before every member's cut, it is the
	// lowest time stamp it may send from then on unless it first
	// receives a TSO message below it, lowered to anything it sent since
	// its own cut. ReportStrict makes it exclusive; ReportNone means
	// unbounded (the sender is not regulating).
	ReportRound   uint64  `json:"report_round,omitempty" msgpack:"report_round,omitempty"`
	Report        float64 `json:"report,omitempty" msgpack:"report,omitempty"`
	ReportStrict  bool    `json:"report_strict,omitempty" msgpack:"report_strict,omitempty"`
	ReportNone    bool    `json:"report_none,omitempty" msgpack:"report_none,omitempty"`
	ReportSession uint64  `json:"report_session,omitempty" msgpack:"report_session,omitempty"`
}

// String formats m compactly, for logs and tests.
func (m Message) String() string {
	s := fmt.Sprintf("from=%d epoch=%d granted=%s", m.From, m.Epoch, fmtTime(m.Granted))
	if m.Regulating {
		s += " regulating bound=" + fmtTime(m.Bound)
	}
	if m.Strict {
		s += " strict"
	}
	if m.Constrained {
		s += " constrained"
	}
	if m.Pending != NoRequest {
		s += fmt.Sprintf(" %v=%s", m.Pending, fmtTime(m.Requested))
	}
	if m.Cut != 0 {
		s += fmt.Sprintf(" cut=%d", m.Cut)
	}
	if m.ReportRound != 0 {
		r := "none"
		if !m.ReportNone {
			r = fmtTime(m.Report)
			if m.ReportStrict {
				r = ">" + r
			}
		}
		s += fmt.Sprintf(" report=%d:%s", m.ReportRound, r)
	}
	if len(m.Covers) > 0 {
		s += " covers=" + fmtMap(m.Covers)
	}
	if m.Request != 0 {
		s += fmt.Sprintf(" request=%d", m.Request)
	}
	if len(m.Acks) > 0 {
		s += " acks=" + fmtMap(m.Acks)
	}
	return s
}

// validate reports what is wrong with a Message from a peer.
func (m *Message) validate() error {
	switch {
	case m.From == 0:
		return fmt.Errorf("%w: federate ID 0", ErrBadMessage)
	case m.Epoch == 0:
		return fmt.Errorf("%w: from %d: epoch 0", ErrBadMessage, m.From)
	case !isFinite(m.Granted):
		return fmt.Errorf("%w: from %d: granted time %v", ErrBadMessage, m.From, m.Granted)
	case m.Regulating && !isFinite(m.Bound):
		return fmt.Errorf("%w: from %d: bound %v", ErrBadMessage, m.From, m.Bound)
	case m.Regulating && m.Bound < m.Granted:
		return fmt.Errorf("%w: from %d: bound %s below granted time %s",
			ErrBadMessage, m.From, fmtTime(m.Bound), fmtTime(m.Granted))
	case m.Pending > FlushQueueRequest:
		return fmt.Errorf("%w: from %d: request kind %d", ErrBadMessage, m.From, m.Pending)
	case m.Pending != NoRequest && !isFinite(m.Requested):
		return fmt.Errorf("%w: from %d: requested time %v", ErrBadMessage, m.From, m.Requested)
	case m.ReportRound > m.Cut:
		return fmt.Errorf("%w: from %d: report for round %d beyond cut %d", ErrBadMessage, m.From, m.ReportRound, m.Cut)
	case m.ReportRound != 0 && !m.ReportNone && !isFinite(m.Report):
		return fmt.Errorf("%w: from %d: report %v", ErrBadMessage, m.From, m.Report)
	}
	return nil
}

// TSO is a time-stamp-ordered message as the time core sees it: who sent
// it, where, its place in the sender's sequence on that group, and its
// time stamp. Payload is opaque here and handed back on delivery.
type TSO struct {
	// From is the sender.
	From FederateID
	// Group is the data-plane group the message came on.
	Group uint32
	// Seq is the message's sequence number in From's sequence on Group.
	Seq uint64
	// Time is the time stamp.
	Time float64
	// Payload is whatever the peer layer attached; lbts does not look.
	Payload any
}

// less orders TSO messages by (Time, From, Seq, Group). Every receiver
// uses it, so every receiver delivers the same messages in the same
// relative order. Group breaks the tie between two messages a sender sent
// with the same time stamp and sequence number on different groups.
func (a *TSO) less(b *TSO) bool {
	if a.Time != b.Time {
		return a.Time < b.Time
	}
	if a.From != b.From {
		return a.From < b.From
	}
	if a.Seq != b.Seq {
		return a.Seq < b.Seq
	}
	return a.Group < b.Group
}

// RequestKind says which kind of time advance is pending, or which one a
// grant answers.
type RequestKind uint8

const (
	// NoRequest: the federate is not in the time advancing state.
	NoRequest RequestKind = iota
	// TimeAdvanceRequest: timeAdvanceRequest (TAR, 1516.1 8.8).
	TimeAdvanceRequest
	// TimeAdvanceRequestAvailable: timeAdvanceRequestAvailable (TARA, 8.9).
	TimeAdvanceRequestAvailable
	// NextMessageRequest: nextMessageRequest (NMR, 8.10).
	NextMessageRequest
	// NextMessageRequestAvailable: nextMessageRequestAvailable (NMRA, 8.11).
	NextMessageRequestAvailable
	// FlushQueueRequest: flushQueueRequest (FQR, 8.12).
	FlushQueueRequest
)

// String returns the HLA abbreviation of k.
func (k RequestKind) String() string {
	if int(k) < len(requestKindNames) {
		return requestKindNames[k]
	}
	return fmt.Sprintf("RequestKind(%d)", uint8(k))
}

var requestKindNames = [...]string{
	NoRequest:                   "none",
	TimeAdvanceRequest:          "TAR",
	TimeAdvanceRequestAvailable: "TARA",
	NextMessageRequest:          "NMR",
	NextMessageRequestAvailable: "NMRA",
	FlushQueueRequest:           "FQR",
}

// available reports whether k is one of the Available variants, after
// whose grant to t TSO messages at exactly t may still arrive and, at
// zero lookahead, the federate may still send at t.
func (k RequestKind) available() bool {
	return k == TimeAdvanceRequestAvailable || k == NextMessageRequestAvailable
}

// nextMessage reports whether k grants to the next message's time (NMR,
// NMRA) rather than to the requested time.
func (k RequestKind) nextMessage() bool {
	return k == NextMessageRequest || k == NextMessageRequestAvailable
}

// Directed is a Message for one member.
type Directed struct {
	To      FederateID
	Message Message
}

// Ready is what a Node wants done now. The caller acts on it in this
// order, then calls Advance(rd):
//
//  1. broadcast Messages on the control group, and send each of Directed
//     to its member (any time before Advance);
//  2. deliver Deliver to the federate, in slice order;
//  3. report RegulationEnabled, then ConstrainedEnabled, then Grant, each
//     if non-nil.
//
// TSO messages in Deliver with Time <= *Grant belong before the grant;
// delivering them after it would break the federate's view of time.
//
// A Ready's slices, and what its pointers point at, belong to the Node
// and are reused after Advance.
type Ready struct {
	// Messages holds the node's own state to broadcast to every other
	// federate. For now it is at most one Message.
	Messages []Message
	// Deliver holds TSO messages the federate may now receive. For a
	// time-constrained federate they come in (Time, From, Seq, Group)
	// order; otherwise in the order they were received.
	Deliver []TSO
	// RegulationEnabled, if non-nil, is the logical time at which
	// time regulation is now enabled (timeRegulationEnabled callback).
	RegulationEnabled *float64
	// ConstrainedEnabled, if non-nil, is the logical time at which the
	// federate is now time-constrained (timeConstrainedEnabled callback).
	ConstrainedEnabled *float64
	// Grant, if non-nil, is a Time Advance Grant to that time.
	Grant *float64
	// GrantKind is the request Grant answers (the HLA callback is the
	// same timeAdvanceGrant for all of them).
	GrantKind RequestKind
	// Directed holds Messages for one member each (Config.DirectAcks):
	// send each to its To only. Unlike Messages they may go without
	// repair: a requester that misses one asks again.
	Directed []Directed

	ackTo int // entries of the node's ackTo this Ready answers
}

// Status is a snapshot of a Node for status pages, logs and tests.
type Status struct {
	// Self is the node's own federate.
	Self FederateID
	// Time is the logical time.
	Time float64
	// Lookahead is the effective lookahead (see Node.Lookahead).
	Lookahead float64
	// Regulating and Constrained are the enabled modes; the Pending
	// fields say an enable request is waiting.
	Regulating         bool
	RegulationPending  bool
	Constrained        bool
	ConstrainedPending bool
	// Request is the pending time advance, if any, and Requested its time.
	Request   RequestKind
	Requested float64
	// Bound is the node's own promise; valid when Regulating or
	// RegulationPending.
	Bound float64
	// GALT and LITS as from Node.GALT and Node.LITS; +Inf when none.
	GALT float64
	LITS float64
	// HeldBy is the regulating federate whose Bound is GALT, or 0.
	HeldBy FederateID
	// Members is the number of other federates the node knows.
	Members int
	// Queued is the number of TSO messages held for a later grant.
	Queued int
	// Violations counts TSO messages that arrived in the receiver's past.
	Violations uint64
	// Round is the consistent-cut round the node is in; CutGALT is the
	// bound the latest valid cut result gives (+Inf when none).
	Round   uint64
	CutGALT float64
	// Awaiting are the members not yet heard from since a Restore (the
	// node grants nothing until it is empty), in handle order.
	Awaiting []FederateID
	// Uncovered are the members whose newest Message waits for messages
	// it covers that have not arrived, each with the first such stream.
	Uncovered []Uncovered
}

// Uncovered says which data-plane stream holds a member's newest Message
// back: it covers sequence Want on Group, and Have is what arrived.
type Uncovered struct {
	From  FederateID
	Group uint32
	Want  uint64
	Have  uint64
}

func isFinite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// fmtMap formats a map with integer keys as k:v,k:v in key order.
func fmtMap[K ~uint32 | ~uint64, V ~uint64](m map[K]V) string {
	s := ""
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if s != "" {
			s += ","
		}
		s += fmt.Sprintf("%d:%d", k, m[k])
	}
	return s
}
