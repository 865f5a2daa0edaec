package peer

import (
	"io"
	"math"
	"strconv"
	"sync"
	"unicode/utf8"
)

// Tracing: when Config.Trace is set, the federate writes one JSON object
// per line for what it did and saw (joins, time switches, requests and
// grants, lookahead changes, sends and deliveries of updates,
// interactions and deletes, lost peers, its resignation). docs/trace.md defines the format; testnet.CheckTrace
// verifies a trace.
//
// Every line is one Write call, made from the federate's own loop
// goroutine (or from Join before the loop starts), so one federate's lines
// never interleave. A writer shared by several federates must be safe for
// concurrent use: wrap it with NewTraceWriter.

// NewTraceWriter returns a writer that serializes Write calls to w, for a
// trace shared by several federates.
func NewTraceWriter(w io.Writer) io.Writer { return &lockedWriter{w: w} }

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// tracer writes a federate's trace. It is owned by the federate's loop
// goroutine; nil means no tracing, and every hook checks for nil first so
// an untraced federate pays nothing.
type tracer struct {
	w    io.Writer
	fed  string
	buf  []byte
	fail bool
	// names remembers senders' names, for messages that are delivered
	// after their sender left the member list (time-stamped messages
	// queued before it was lost).
	names map[FederateHandle]string
}

func newTracer(w io.Writer) *tracer {
	if w == nil {
		return nil
	}
	return &tracer{w: w, buf: make([]byte, 0, 256), names: make(map[FederateHandle]string)}
}

// begin starts a line {"ev":ev,"fed":fed.
func (t *tracer) begin(ev string) {
	t.buf = append(t.buf[:0], `{"ev":`...)
	t.buf = appendJSONString(t.buf, ev)
	t.buf = append(t.buf, `,"fed":`...)
	t.buf = appendJSONString(t.buf, t.fed)
}

func (t *tracer) str(k, v string) {
	t.buf = append(t.buf, ',', '"')
	t.buf = append(t.buf, k...)
	t.buf = append(t.buf, '"', ':')
	t.buf = appendJSONString(t.buf, v)
}

func (t *tracer) num(k string, v float64) {
	t.buf = append(t.buf, ',', '"')
	t.buf = append(t.buf, k...)
	t.buf = append(t.buf, '"', ':')
	if math.IsNaN(v) || math.IsInf(v, 0) {
		t.buf = append(t.buf, "null"...)
		return
	}
	t.buf = strconv.AppendFloat(t.buf, v, 'g', -1, 64)
}

func (t *tracer) null(k string) {
	t.buf = append(t.buf, ',', '"')
	t.buf = append(t.buf, k...)
	t.buf = append(t.buf, `":null`...)
}

// msg writes "msg":"<sender>/<id>".
func (t *tracer) msg(sender string, id uint64) {
	t.buf = append(t.buf, `,"msg":`...)
	t.buf = appendJSONString(t.buf, sender+"/"+strconv.FormatUint(id, 10))
}

// src writes "src":"<handle>": the sending federate of a message another
// federate sent, which tells a restarted federate (a new handle under
// the same name, its message ids counting from 1 again) from the one
// before it.
func (t *tracer) src(h FederateHandle) {
	t.buf = append(t.buf, `,"src":"`...)
	t.buf = strconv.AppendUint(t.buf, uint64(h), 10)
	t.buf = append(t.buf, '"')
}

func (t *tracer) end() {
	t.buf = append(t.buf, '}', '\n')
	if t.fail {
		return
	}
	if _, err := t.w.Write(t.buf); err != nil {
		t.fail = true // one failed write ends the trace; the federate goes on
	}
}

// appendJSONString appends s as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}

func orderName(tso bool) string {
	if tso {
		return "TSO"
	}
	return "RO"
}

func msgKindName(k uint8) string {
	switch k {
	case kindUpdate:
		return "update"
	case kindInteraction:
		return "interaction"
	case kindDelete:
		return "delete"
	}
	return ""
}

// ---- Hooks, called on the loop goroutine ----

func (f *Federate) traceJoin() {
	t := f.trace
	t.fed = f.name
	t.begin("join")
	t.str("handle", strconv.FormatUint(uint64(f.handle), 10))
	t.end()
}

func (f *Federate) traceTime(ev string, tm float64) {
	t := f.trace
	t.begin(ev)
	if ev == "regulation" {
		t.num("lookahead", f.tm.Lookahead())
	}
	t.num("t", tm)
	t.end()
}

func (f *Federate) traceRequest(kind string, tm float64) {
	t := f.trace
	t.begin("request")
	t.str("kind", kind)
	t.num("t", tm)
	t.end()
}

func (f *Federate) traceLookahead(l float64) {
	t := f.trace
	t.begin("lookahead")
	t.num("lookahead", l)
	t.end()
}

// traceSend records a sent update, interaction or delete.
func (f *Federate) traceSend(m *wireMsg) {
	kind := msgKindName(m.Kind)
	if kind == "" {
		return
	}
	t := f.trace
	t.begin("send")
	t.msg(f.name, m.ID)
	t.str("kind", kind)
	t.str("order", orderName(m.TSO))
	if m.TSO {
		t.num("ts", m.Time)
	} else {
		t.null("ts")
	}
	var class string
	if m.Kind == kindInteraction {
		if c, ok := f.fdd.InteractionClassByHandle(InteractionClassHandle(m.Class)); ok {
			class = c.QualifiedName
		}
	} else if c, ok := f.fdd.ObjectClassByHandle(ObjectClassHandle(m.Class)); ok {
		class = c.QualifiedName
	}
	t.str("class", class)
	t.end()
}

// traceDeliver records the delivery of m when evs (what applying it
// produced) hold the reflection, interaction or removal it carried.
func (f *Federate) traceDeliver(m *wireMsg, from FederateHandle, received OrderType, evs []Event) {
	delivered := false
	for _, ev := range evs {
		switch ev.(type) {
		case ReflectAttributeValues, ReceiveInteraction, RemoveObjectInstance:
			delivered = true
		}
	}
	if !delivered || msgKindName(m.Kind) == "" {
		return
	}
	t := f.trace
	t.begin("deliver")
	t.msg(f.senderName(from), m.ID)
	t.src(from)
	tso := received == TimeStamp
	t.str("order", orderName(tso))
	if tso {
		t.num("ts", m.Time)
	} else {
		t.null("ts")
	}
	t.end()
}

// senderName is the name of federate h for message ids; "#<handle>"
// when no member list knows it yet (the data plane can be faster than
// membership); checkers map it back through the sender's join line.
func (f *Federate) senderName(h FederateHandle) string {
	if n, ok := f.trace.names[h]; ok {
		return n
	}
	if m, ok := f.members[h]; ok {
		f.trace.names[h] = m.Name
		return m.Name
	}
	for _, m := range f.ctl.Members() {
		if m.Handle == h {
			f.trace.names[h] = m.Name
			return m.Name
		}
	}
	return "#" + strconv.FormatUint(uint64(h), 10)
}

// traceForget remembers a leaving member's name and, when it was lost,
// writes the lost event.
func (f *Federate) traceForget(h FederateHandle, name string, why MemberEventKind) {
	f.trace.names[h] = name
	if why != MemberLost {
		return
	}
	t := f.trace
	t.begin("lost")
	t.str("peer", name)
	t.end()
}

func (f *Federate) traceResign() {
	t := f.trace
	t.begin("resign")
	t.end()
}

// traceRetract records that this federate retracted its message id.
func (f *Federate) traceRetract(id uint64) {
	t := f.trace
	t.begin("retract")
	t.msg(f.name, id)
	t.end()
}

// traceRetracted records a retraction received from another federate:
// dropped says the message was still queued (it will not be delivered);
// otherwise it was delivered and the federate is asked to retract it.
func (f *Federate) traceRetracted(from FederateHandle, id uint64, dropped bool) {
	t := f.trace
	t.begin("retracted")
	t.msg(f.senderName(from), id)
	t.src(from)
	if dropped {
		t.str("outcome", "dropped")
	} else {
		t.str("outcome", "requested")
	}
	t.end()
}
