package core

import (
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer/hla"
)

// Tracing: with Config.Trace, the core writes one JSON object per line
// for what the federate did and saw (joins, time switches, requests and
// grants, lookahead changes, sends and deliveries of updates,
// interactions and deletes, lost peers, its resignation) into
// Ready.Trace, whole lines only. docs/trace.md defines the format;
// testnet/tracecheck verifies a trace.

// tracer writes a federate's trace. It is owned by the federate's loop
// goroutine; nil means no tracing, and every hook checks for nil first so
// an untraced federate pays nothing.
type tracer struct {
	fed string
	buf []byte // the lines written so far (Ready.Trace)
	// names remembers senders' names, for messages that are delivered
	// after their sender left the member list (time-stamped messages
	// queued before it was lost).
	names map[FederateHandle]string
	start int // where the line being written starts in buf
}

func newTracer(fed string) *tracer {
	return &tracer{fed: fed, buf: make([]byte, 0, 256), names: make(map[FederateHandle]string)}
}

// begin starts a line {"ev":ev,"fed":fed. It, str and num return t, so
// that a short line is one chain of calls.
func (t *tracer) begin(ev string) *tracer {
	t.start = len(t.buf)
	t.buf = append(t.buf, `{"ev":`...)
	t.buf = appendJSONString(t.buf, ev)
	t.buf = append(t.buf, `,"fed":`...)
	t.buf = appendJSONString(t.buf, t.fed)
	return t
}

func (t *tracer) str(k, v string) *tracer {
	t.buf = append(t.buf, ',', '"')
	t.buf = append(t.buf, k...)
	t.buf = append(t.buf, '"', ':')
	t.buf = appendJSONString(t.buf, v)
	return t
}

func (t *tracer) num(k string, v float64) *tracer {
	t.buf = append(t.buf, ',', '"')
	t.buf = append(t.buf, k...)
	t.buf = append(t.buf, '"', ':')
	if math.IsNaN(v) || math.IsInf(v, 0) {
		t.buf = append(t.buf, "null"...)
		return t
	}
	t.buf = strconv.AppendFloat(t.buf, v, 'g', -1, 64)
	return t
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

func (c *Core) traceJoin() {
	t := c.tracer
	t.fed = c.cfg.Name
	t.begin("join")
	t.str("handle", strconv.FormatUint(uint64(c.self), 10))
	t.end()
}

func (c *Core) traceTime(ev string, tm float64) {
	t := c.tracer
	t.begin(ev)
	if ev == "regulation" {
		t.num("lookahead", c.timeCore.Lookahead())
	}
	t.num("t", tm)
	t.end()
}

// traceSave records this federate's save point (InitiateFederateSave);
// traceRestore its return to one, on restore branch branch: what it
// delivered since that save point may come again.
func (c *Core) traceSave(label string) { c.tracer.begin("save").str("label", label).end() }

func (c *Core) traceRestore(label string, branch uint64) {
	c.tracer.begin("restore").str("label", label).num("branch", float64(branch)).end()
}

func (c *Core) traceRequest(kind string, tm float64) {
	c.tracer.begin("request").str("kind", kind).num("t", tm).end()
}

func (c *Core) traceLookahead(l float64) { c.tracer.begin("lookahead").num("lookahead", l).end() }

// traceSend records a sent update, interaction or delete; best says it
// went best effort (no repair: nobody is owed it).
func (c *Core) traceSend(m *wireMsg, best bool) {
	kind := msgKindName(m.Kind)
	if kind == "" {
		return
	}
	t := c.tracer
	t.begin("send")
	t.msg(c.cfg.Name, m.ID)
	t.str("kind", kind)
	t.str("order", orderName(m.TSO))
	if m.TSO {
		t.num("ts", m.Time)
	} else {
		t.null("ts")
	}
	var class string
	if m.Kind == kindInteraction {
		if c, ok := c.fdd.InteractionClassByHandle(InteractionClassHandle(m.Class)); ok {
			class = c.QualifiedName
		}
	} else if c, ok := c.fdd.ObjectClassByHandle(ObjectClassHandle(m.Class)); ok {
		class = c.QualifiedName
	}
	t.str("class", class)
	if m.Kind == kindUpdate {
		// Which instance and attributes, at which epoch: the checker
		// owes a subscriber the update only when it subscribes one of
		// them and was not told of a newer epoch (fencing).
		t.str("obj", m.Obj.String())
		oc, _ := c.fdd.ObjectClassByHandle(ObjectClassHandle(m.Class))
		ps := pairsOf(m)
		t.buf = append(t.buf, `,"attrs":[`...)
		for i, p := range ps {
			if i > 0 {
				t.buf = append(t.buf, ',')
			}
			t.attrName(oc, AttributeHandle(p.H))
		}
		t.buf = append(t.buf, ']')
		t.num("epoch", float64(m.Epoch))
	}
	if best {
		t.flag("best")
	}
	t.end()
}

// attrName writes the name of attribute a of oc (its handle when oc is
// nil or lacks it) as a JSON string.
func (t *tracer) attrName(oc *fomxml.ObjectClass, a AttributeHandle) {
	name := strconv.FormatUint(uint64(a), 10)
	if oc != nil {
		name = attributeName(oc, a)
	}
	t.buf = appendJSONString(t.buf, name)
}

// attrNames writes "attrs": the names of attrs of oc, in their order.
func (t *tracer) attrNames(oc *fomxml.ObjectClass, attrs []AttributeHandle) {
	t.buf = append(t.buf, `,"attrs":[`...)
	for i, a := range attrs {
		if i > 0 {
			t.buf = append(t.buf, ',')
		}
		t.attrName(oc, a)
	}
	t.buf = append(t.buf, ']')
}

// flag writes "k":true.
func (t *tracer) flag(k string) {
	t.buf = append(t.buf, ',', '"')
	t.buf = append(t.buf, k...)
	t.buf = append(t.buf, `":true`...)
}

// traceSubscription records this federate's subscription to object
// class oc as it is now: the attributes subscribed (none: not
// subscribed), whether regions narrow any of them, whether an update
// rate limits them.
func (c *Core) traceSubscription(oc *fomxml.ObjectClass) {
	set := c.declared.subObj[oc.Handle]
	attrs := keysOf(set)
	t := c.tracer
	t.begin("subscribe").str("class", oc.QualifiedName)
	t.attrNames(oc, attrs)
	if len(attrs) > 0 {
		t.flag("sub")
	}
	for _, a := range attrs {
		if !c.regions.subs[oc.Handle][a].covers() {
			t.flag("regions")
			break
		}
	}
	if c.declared.subMode[oc.Handle].rate != "" {
		t.flag("rate")
	}
	t.end()
}

// traceInteractionSubscription records this federate's subscription to
// interaction class ic as it is now.
func (c *Core) traceInteractionSubscription(ic InteractionClassHandle) {
	cl, ok := c.fdd.InteractionClassByHandle(ic)
	if !ok {
		return
	}
	t := c.tracer
	t.begin("subscribe").str("class", cl.QualifiedName)
	if c.declared.subInt[ic] {
		t.flag("sub")
		if s := c.regions.intSubs[ic]; !s.covers() {
			t.flag("regions")
		}
	}
	t.end()
}

// traceDeliver records the delivery of m when evs (what applying it
// produced) hold the reflection, interaction or removal it carried.
func (c *Core) traceDeliver(m *wireMsg, from FederateHandle, received OrderType, evs []Event) {
	delivered := false
	var attrs []AttributeHandle
	for _, ev := range evs {
		switch ev := ev.(type) {
		case hla.ReflectAttributeValues:
			delivered = true
			for a := range ev.Values {
				attrs = append(attrs, a)
			}
		case hla.ReceiveInteraction:
			delivered = true
		case hla.RemoveObjectInstance:
			delivered = true
			if oc, ok := c.fdd.ObjectClassByHandle(ObjectClassHandle(m.Class)); ok && privilegeToDelete(oc) != 0 {
				attrs = append(attrs, privilegeToDelete(oc))
			}
		}
	}
	if !delivered || msgKindName(m.Kind) == "" {
		return
	}
	t := c.tracer
	t.begin("deliver")
	t.msg(c.senderName(from), m.ID)
	t.src(from)
	tso := received == TimeStamp
	t.str("order", orderName(tso))
	if tso {
		t.num("ts", m.Time)
	} else {
		t.null("ts")
	}
	if m.Kind == kindUpdate || m.Kind == kindDelete {
		// Which tokens, at which epoch: the checker refuses a delivery
		// of an epoch older than one the receiver knew.
		t.str("obj", m.Obj.String())
		slices.Sort(attrs)
		oc, _ := c.fdd.ObjectClassByHandle(ObjectClassHandle(m.Class))
		t.attrNames(oc, attrs)
		t.num("epoch", float64(m.Epoch))
	}
	t.end()
}

// senderName is the name of federate h for message ids; "#<handle>"
// when no member list knows it yet (the data plane can be faster than
// membership); checkers map it back through the sender's join line.
func (c *Core) senderName(h FederateHandle) string {
	if n, ok := c.tracer.names[h]; ok {
		return n
	}
	if m, ok := c.federation.members[h]; ok {
		c.tracer.names[h] = m.Name
		return m.Name
	}
	return "#" + strconv.FormatUint(uint64(h), 10)
}

// traceForget remembers a leaving member's name and, when it was lost,
// writes the lost event.
func (c *Core) traceForget(h FederateHandle, name string, lost bool) {
	c.tracer.names[h] = name
	if !lost {
		return
	}
	t := c.tracer
	t.begin("lost")
	t.str("peer", name)
	t.end()
}

// traceGap records that the reliable layer reported n messages of
// sender h lost for good (MessagesLost): which ones, the trace cannot
// say, so the checker owes this federate none of h's messages after it.
func (c *Core) traceGap(h FederateHandle, n uint64) {
	t := c.tracer
	t.begin("gap")
	t.str("peer", c.senderName(h))
	t.src(h)
	t.num("msgs", float64(n))
	t.end()
}

// traceRemoved records that instance h was removed here without a
// message that deletes it: its federate left, deleting it.
func (c *Core) traceRemoved(h ObjectInstanceHandle) {
	t := c.tracer
	t.begin("removed")
	t.str("obj", h.String())
	t.end()
}

func (c *Core) traceResign() {
	t := c.tracer
	t.begin("resign")
	t.end()
}

// traceRetract records that this federate retracted its message id.
func (c *Core) traceRetract(id uint64) {
	t := c.tracer
	t.begin("retract")
	t.msg(c.cfg.Name, id)
	t.end()
}

// traceRetracted records a retraction received from another federate:
// dropped says the message was still queued (it will not be delivered);
// otherwise it was delivered and the federate is asked to retract it.
func (c *Core) traceRetracted(from FederateHandle, id uint64, dropped bool) {
	t := c.tracer
	t.begin("retracted")
	t.msg(c.senderName(from), id)
	t.src(from)
	if dropped {
		t.str("outcome", "dropped")
	} else {
		t.str("outcome", "requested")
	}
	t.end()
}

// traceOwner records that this federate's view of who owns attribute a of
// obj changed: owner (0: nobody) at epoch.
func (c *Core) traceOwner(obj ObjectInstanceHandle, a AttributeHandle, owner FederateHandle, epoch uint64) {
	if c.tracer == nil {
		return
	}
	t := c.tracer
	t.begin("owner")
	t.str("obj", obj.String())
	name := strconv.FormatUint(uint64(a), 10)
	if in := c.objects.inst[obj]; in != nil {
		name = attributeName(in.class, a)
	}
	t.str("attr", name)
	switch {
	case owner == 0:
		t.null("owner")
	case owner == c.self:
		t.str("owner", c.cfg.Name)
	default:
		t.str("owner", c.senderName(owner))
	}
	t.num("epoch", float64(epoch))
	t.end()
}
