package reliable

import (
	"encoding/binary"
	"slices"
)

// onData handles a reliable message (first transmission or repair).
func (e *Endpoint) onData(s *stream, seq uint64, en entry) {
	if !s.started {
		e.onUnsynced(s, seq, en)
		return
	}
	switch {
	case seq < s.next:
		e.stats.Duplicates++
	case seq == s.next:
		e.deliverReliable(s, seq, en)
		s.next++
		e.drain(s)
	case seq-s.next >= uint64(e.cfg.ReorderBuffer):
		e.stats.ReorderDropped++
	default:
		if _, dup := s.buf[seq]; dup {
			e.stats.Duplicates++
			break
		}
		if s.buf == nil {
			s.buf = make(map[uint64]entry)
		}
		s.buf[seq] = en
	}
	s.hw = max(s.hw, seq)
	e.schedule(s)
}

// onBestEffort delivers a best-effort message at once unless it is a
// duplicate; the last 64 sequence numbers are remembered. A fragmented
// one is delivered only if its fragments arrive one after the other, in
// order; otherwise it is dropped and counted as Incomplete.
func (e *Endpoint) onBestEffort(s *stream, seq uint64, en entry) {
	switch {
	case seq > s.beHigh:
		if d := seq - s.beHigh; d >= 64 {
			s.beMask = 1
		} else {
			s.beMask = s.beMask<<d | 1
		}
		s.beHigh = seq
	case s.beHigh-seq >= 64:
		e.stats.Duplicates++ // too old to tell: drop, as a duplicate may
		return
	default:
		bit := uint64(1) << (s.beHigh - seq)
		if s.beMask&bit != 0 {
			e.stats.Duplicates++
			return
		}
		s.beMask |= bit
	}
	payload := en.payload
	r := &s.beFrag
	if r.active && (en.flags&entryCont == 0 || seq != r.next) {
		*r = reassembly{}
		e.stats.Incomplete++
	}
	switch {
	case en.flags&entryCont == 0 && en.flags&entryMore != 0:
		*r = reassembly{active: true, first: seq, next: seq + 1, buf: append([]byte(nil), payload...)}
		return
	case en.flags&entryCont != 0:
		if !r.active {
			return // the start is lost: counted when the message was dropped, or now
		}
		if len(r.buf)+len(payload) > e.cfg.MaxMessage {
			*r = reassembly{}
			e.stats.Incomplete++
			return
		}
		r.buf = append(r.buf, payload...)
		r.next++
		if en.flags&entryMore != 0 {
			return
		}
		payload = r.buf
		*r = reassembly{}
		e.stats.Reassembled++
	}
	e.deliver = append(e.deliver, Delivery{
		From:        s.key.from,
		Incarnation: s.p.inc,
		Group:       s.key.group,
		Seq:         seq,
		Payload:     payload,
	})
	e.stats.DeliveredBestEffort++
}

// onUnsynced holds a reliable message of a stream whose start is not
// known yet: it is delivered after the SYNC if owed, dropped if not. At
// most ReorderBuffer messages are held; later ones are dropped (and
// repaired after the SYNC if owed).
func (e *Endpoint) onUnsynced(s *stream, seq uint64, en entry) {
	e.heard(s)
	s.hw = max(s.hw, seq)
	if _, dup := s.buf[seq]; dup {
		e.stats.Duplicates++
		return
	}
	if len(s.buf) >= e.cfg.ReorderBuffer {
		e.stats.ReorderDropped++
		return
	}
	if s.buf == nil {
		s.buf = make(map[uint64]entry)
	}
	s.buf[seq] = en
}

// onHeartbeat learns the sender's highest sequence hw and the oldest it
// still holds, low.
func (e *Endpoint) onHeartbeat(s *stream, hw, low uint64) {
	if !s.started {
		// Noted; the SYNC tells where the stream starts and what is gone.
		e.heard(s)
		s.hw = max(s.hw, hw)
		return
	}
	s.hw = max(s.hw, hw)
	if low > s.next {
		e.skipTo(s, low)
	}
	e.schedule(s)
}

// onGone learns that the sender holds nothing below low.
func (e *Endpoint) onGone(s *stream, low uint64) {
	if !s.started {
		e.heard(s)
		return
	}
	if low > s.next {
		e.skipTo(s, low)
	}
	e.schedule(s)
}

// deliverReliable delivers the reliable entry of seq, the next of s: a
// whole message, or a fragment to reassemble. A fragment whose message
// can no longer complete (its start was not delivered, or it grew past
// MaxMessage) is reported as a gap with the rest of its message.
func (e *Endpoint) deliverReliable(s *stream, seq uint64, en entry) {
	r := &s.frag
	switch {
	case en.flags&entryCont == 0:
		if r.active { // the sender began a new message: the last cannot end
			e.gap(s, seq-1, seq-1)
		}
		if en.flags&entryMore != 0 {
			*r = reassembly{active: true, first: seq, buf: append(make([]byte, 0, 2*len(en.payload)), en.payload...)}
			return
		}
		e.deliverMessage(s, seq, en.payload)
	case !r.active:
		e.gap(s, seq, seq) // a fragment of a message whose start is lost
	case len(r.buf)+len(en.payload) > e.cfg.MaxMessage:
		e.gap(s, seq, seq)
	default:
		r.buf = append(r.buf, en.payload...)
		if en.flags&entryMore == 0 {
			b := r.buf
			*r = reassembly{}
			e.stats.Reassembled++
			e.deliverMessage(s, seq, b)
		}
	}
}

// deliverMessage delivers a whole reliable message ending at seq.
func (e *Endpoint) deliverMessage(s *stream, seq uint64, payload []byte) {
	e.deliver = append(e.deliver, Delivery{
		From:        s.key.from,
		Incarnation: s.p.inc,
		Group:       s.key.group,
		Seq:         seq,
		Reliable:    true,
		Payload:     payload,
	})
	e.stats.Delivered++
}

// gap reports the reliable messages from..to of s lost for good. A
// message being reassembled is lost with them: the gap starts at its
// first fragment. A gap right after the last one reported for s extends
// it.
func (e *Endpoint) gap(s *stream, from, to uint64) {
	if s.frag.active {
		from = s.frag.first
		s.frag = reassembly{}
		e.stats.Incomplete++
	}
	if n := len(e.gaps); n > 0 {
		last := &e.gaps[n-1]
		if last.From == s.key.from && last.Incarnation == s.p.inc && last.Group == s.key.group && last.ToSeq+1 == from {
			e.stats.GapMessages += to - last.ToSeq
			last.ToSeq = to
			return
		}
	}
	e.gaps = append(e.gaps, Gap{
		From:        s.key.from,
		Incarnation: s.p.inc,
		Group:       s.key.group,
		FromSeq:     from,
		ToSeq:       to,
	})
	e.stats.Gaps++
	e.stats.GapMessages += to - from + 1
}

// drain delivers the buffered messages that follow s.next.
func (e *Endpoint) drain(s *stream) {
	for len(s.buf) > 0 {
		p, ok := s.buf[s.next]
		if !ok {
			return
		}
		delete(s.buf, s.next)
		e.deliverReliable(s, s.next, p)
		s.next++
	}
}

// skipTo moves s.next up to upto: buffered messages below upto are
// delivered, missing ones reported as gaps, in sequence order.
func (e *Endpoint) skipTo(s *stream, upto uint64) {
	if upto <= s.next {
		return
	}
	var below []uint64
	for q := range s.buf {
		if q < upto {
			below = append(below, q)
		}
	}
	slices.Sort(below)
	cur := s.next
	for _, q := range below {
		if q > cur {
			e.gap(s, cur, q-1)
		}
		e.deliverReliable(s, q, s.buf[q])
		delete(s.buf, q)
		cur = q + 1
	}
	if cur < upto {
		e.gap(s, cur, upto-1)
	}
	s.next = upto
	s.hw = max(s.hw, upto-1)
	e.drain(s)
}

// flush ends s: everything known to exist is delivered or reported. An
// unsynced stream has no start: nothing of it is reported.
func (e *Endpoint) flush(s *stream) {
	if !s.started {
		return
	}
	end := s.hw
	for q := range s.buf {
		end = max(end, q)
	}
	e.skipTo(s, end+1)
	if s.frag.active { // its last fragments were never sent
		e.gap(s, s.frag.first, s.next-1)
	}
}

// schedule arms the NAK timer of s when it misses messages.
func (e *Endpoint) schedule(s *stream) {
	if s.nakAt != 0 || s.next > s.hw {
		return
	}
	d := e.cfg.NakDelayTicks
	wait := d + e.cfg.Rand.IntN(d+1)
	if e.cfg.Inbox != nil {
		// NAKs go to the sender's inbox, where no other receiver
		// hears them to hold its own back: the wait only lets a
		// reordered message arrive, and half of it does.
		wait = max(1, d/2) + e.cfg.Rand.IntN(d/2+1)
	}
	s.nakAt = e.now + int64(wait)
	e.arm(s)
}

// suppress records that r was NAKed (by us or by another receiver) and
// needs no NAK from us before until.
func (e *Endpoint) suppress(s *stream, r seqRange, until int64) {
	if len(s.supp) == maxSuppressed {
		s.supp = append(s.supp[:0], s.supp[1:]...)
	}
	s.supp = append(s.supp, suppressed{r, until})
}

// nak sends a NAK for the messages s misses, except those NAKed recently,
// and re-arms the timer while anything is missing.
func (e *Endpoint) nak(s *stream) {
	s.nakAt = 0
	if s.next > s.hw {
		s.supp = s.supp[:0]
		return
	}
	keep := s.supp[:0]
	for _, r := range s.supp {
		if r.until > e.now && r.to >= s.next {
			keep = append(keep, r)
		}
	}
	clear(s.supp[len(keep):])
	s.supp = keep

	// Missing runs within the reorder window.
	end := min(s.hw, s.next+uint64(e.cfg.ReorderBuffer)-1)
	runs := e.scratch[:0]
	for q := s.next; q <= end; q++ {
		if _, ok := s.buf[q]; ok {
			continue
		}
		if n := len(runs); n > 0 && runs[n-1].to == q-1 {
			runs[n-1].to = q
		} else {
			runs = append(runs, seqRange{q, q})
		}
	}
	if len(runs) == 0 {
		e.scratch = runs
		return
	}
	s.nakAt = e.now + int64(e.cfg.NakDelayTicks) // look again later
	e.arm(s)
	for _, r := range s.supp {
		runs = subtract(runs, r.seqRange)
	}
	e.scratch = runs
	if len(runs) == 0 {
		return
	}
	if len(runs) > e.maxRanges {
		runs = runs[:e.maxRanges]
	}
	f, body := e.newFrame(kindNAK, s.key.group, 0, nakFixedLen+len(runs)*nakRangeLen)
	binary.BigEndian.PutUint64(body, uint64(s.key.from))
	binary.BigEndian.PutUint64(body[8:], s.p.inc)
	binary.BigEndian.PutUint16(body[16:], uint16(len(runs)))
	// Back off while our NAKs bring nothing: each NAK of a stream that
	// made no progress since the last one waits twice as long before it
	// is repeated, up to maxNakBackoff times NakRetryTicks. Under
	// overload (queues overflowing, repairs lost with everything else)
	// a fixed retry would add load where there is none to spare.
	if s.next != s.nakNext || s.nakBackoff == 0 {
		s.nakBackoff = 1
	} else {
		s.nakBackoff = min(2*s.nakBackoff, maxNakBackoff)
	}
	s.nakNext = s.next
	retry := e.cfg.NakRetryTicks * s.nakBackoff
	until := e.now + int64(retry+e.cfg.Rand.IntN(e.cfg.NakDelayTicks*s.nakBackoff+1))
	for i, r := range runs {
		binary.BigEndian.PutUint64(body[nakFixedLen+i*16:], r.from)
		binary.BigEndian.PutUint64(body[nakFixedLen+i*16+8:], r.to)
		e.suppress(s, r, until)
	}
	e.emit(e.to(s.key.from, s.key.group), f)
	e.stats.NAKs++
}

// maxNakBackoff bounds the backoff of repeated NAKs (see nak).
const maxNakBackoff = 8

// subtract removes r from the sorted, disjoint runs, in place.
func subtract(runs []seqRange, r seqRange) []seqRange {
	out := runs[:0]
	split, at := seqRange{}, -1 // at most one run contains r strictly
	for _, x := range runs {
		switch {
		case x.to < r.from || x.from > r.to:
			out = append(out, x)
		case x.from < r.from && x.to > r.to:
			out = append(out, seqRange{x.from, r.from - 1})
			split, at = seqRange{r.to + 1, x.to}, len(out)
		case x.from < r.from:
			out = append(out, seqRange{x.from, r.from - 1})
		case x.to > r.to:
			out = append(out, seqRange{r.to + 1, x.to})
		}
	}
	if at >= 0 {
		out = slices.Insert(out, at, split)
	}
	return out
}
