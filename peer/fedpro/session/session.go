package session

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"sync"
	"time"
)

// Session is one federate's session. It outlives its transport
// connection: a federate whose connection drops may resume the session on
// a new one within Config.ResumeWindow. Its methods are safe for
// concurrent use.
type Session struct {
	srv       *Server
	id        uint64
	handler   SessionHandler
	responder CallbackResponder // handler, if it wants callback responses
	quick     QuickCaller       // handler, if some of its calls may run on the reader
	wake      chan struct{}     // capacity 1: items queued or state changed

	mu          sync.Mutex
	conn        *connection // attached connection; nil while detached
	detachedAt  time.Time
	next        uint32   // sequence number of the next RTI message
	pending     []*frame // to write on conn, in sequence order
	spare       []*frame // a written batch's array, emptied, for the next pending
	retained    []*frame // HLA messages not yet acknowledged, in sequence order
	backlog     int64    // their bytes (Config.MaxBacklog)
	freedTo     uint32   // newest HLA message freed by an acknowledgement, or noSequence
	lastRecv    uint32   // newest HLA message from the federate, or noSequence
	lastOwn     uint32   // newest call, heartbeat or terminate from the federate, or noSequence
	lastAny     uint32   // newest sequence number from the federate
	replayFloor uint32   // after a resume: HLA messages up to here are duplicates; or noSequence
	items       []item   // for the session's goroutine, in order
	running     bool     // a Call or CallbackResponse runs (on the session's goroutine or the reader)
	ended       bool
	reason      error
}

// frame is one RTI message. Its header is encoded when it is written, with
// the session's last received sequence number at that time.
type frame struct {
	typ     MsgType
	seq     uint32
	head    []byte // fixed fields at the start of the body
	payload []byte // protobuf bytes, not copied
	last    bool   // close the connection once written
	fixed   [8]byte
}

// size is the frame's size on the wire, header included.
func (f *frame) size() int { return HeaderSize + len(f.head) + len(f.payload) }

func (f *frame) appendTo(dst []byte, sessionID uint64, lastRecv uint32) []byte {
	dst = AppendHeader(dst, Header{Size: uint32(f.size()), Seq: f.seq, SessionID: sessionID, LastReceived: lastRecv, Type: f.typ})
	dst = append(dst, f.head...)
	return append(dst, f.payload...)
}

// maxPayload is the largest payload a message with 4 bytes of fixed
// fields can carry in its 32-bit size.
const maxPayload = math.MaxUint32 - HeaderSize - 4

type itemKind uint8

const (
	itemCall itemKind = iota
	itemCallbackResponse
	itemTerminate
)

// item is work for the session's goroutine.
type item struct {
	kind    itemKind
	seq     uint32 // call request, or callback answered
	payload []byte
}

func newSession(srv *Server, id uint64, firstSeq uint32) *Session {
	s := &Session{
		srv:         srv,
		id:          id,
		wake:        make(chan struct{}, 1),
		detachedAt:  time.Now(),
		next:        2, // 1 is the new session status
		freedTo:     noSequence,
		lastRecv:    noSequence,
		lastOwn:     noSequence,
		lastAny:     0,
		replayFloor: noSequence,
	}
	if validSeq(firstSeq) {
		s.lastAny = firstSeq
	}
	return s
}

// ID returns the session id, which the federate quotes in every message.
func (s *Session) ID() uint64 { return s.id }

// PushCallback queues a callback request with payload (a protobuf
// CallbackRequest) for the federate and returns at once: it never waits
// for the network or for the federate's response. The session keeps
// payload until the federate acknowledges it, to replay it after a
// resume, so payload must not be changed afterwards. Callbacks reach the
// federate in the order pushed. PushCallback may be called from any
// goroutine, Call included; after the session ended it returns an error
// wrapping ErrSessionClosed and the reason.
func (s *Session) PushCallback(payload []byte) error {
	_, err := s.PushCallbackNumbered(payload)
	return err
}

// PushCallbackNumbered is PushCallback, and returns the callback's
// sequence number: the number the federate's callback response names
// (CallbackResponder), so that the handler knows which callback the
// federate has been handed.
func (s *Session) PushCallbackNumbered(payload []byte) (uint32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.admitCallbackLocked(len(payload)); err != nil {
		return 0, err
	}
	return s.enqueueLocked(MsgCallbackRequest, nil, payload).seq, nil
}

// admitCallbackLocked checks that a callback of n bytes may be queued:
// it fits in a message, the session has not ended, and the backlog stays
// within MaxBacklog (else the session ends with ErrBacklog). s.mu is held.
func (s *Session) admitCallbackLocked(n int) error {
	if uint64(n) > maxPayload {
		return fmt.Errorf("%w: callback of %d bytes", ErrTooLarge, n)
	}
	if s.ended {
		return fmt.Errorf("%w: %w", ErrSessionClosed, s.reason)
	}
	if max := s.srv.cfg.MaxBacklog; max > 0 && s.backlog+int64(n) > max {
		s.srv.logf("session %016x: ended: %d bytes unacknowledged, over %d", s.id, s.backlog, max)
		s.endLocked(fmt.Errorf("%w: %d bytes, over %d", ErrBacklog, s.backlog+int64(n), max))
		return fmt.Errorf("%w: %w", ErrSessionClosed, s.reason)
	}
	return nil
}

// QueueCallback is PushCallbackNumbered without the write: the callback
// is numbered and queued, and goes out with the next Flush (or with
// anything written on the session after it: a call response, a pushed
// callback). A handler that has several callbacks ready queues them all
// and flushes once, so that they share one write. Call Flush when
// nothing more is ready; QueueCallback never writes.
func (s *Session) QueueCallback(payload []byte) (uint32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.admitCallbackLocked(len(payload)); err != nil {
		return 0, err
	}
	return s.queueLocked(MsgCallbackRequest, nil, payload).seq, nil
}

// Flush writes the messages queued for the federate (QueueCallback). It
// never waits for the network: on a TCP connection whose socket buffer
// has room it writes them at once, in one write, on the calling
// goroutine; otherwise (a full buffer, TLS, a write under way) it leaves
// them to the connection's writer. Any goroutine may call it.
func (s *Session) Flush() {
	s.mu.Lock()
	c := s.conn
	if c == nil || len(s.pending) == 0 {
		s.mu.Unlock()
		return
	}
	if c.raw == nil || c.writing || c.unwritten != nil || s.pending[len(s.pending)-1].last {
		c.notify()
		s.mu.Unlock()
		return
	}
	c.writing = true
	batch := s.pending
	s.pending = nil
	lastRecv := s.lastRecv
	buf := c.wbuf
	c.wbuf = nil
	s.mu.Unlock()
	for _, f := range batch {
		buf = f.appendTo(buf, s.id, lastRecv)
	}
	n, err := c.raw(buf)
	s.mu.Lock()
	defer s.mu.Unlock()
	c.writing = false
	s.recycleLocked(batch)
	switch {
	case err != nil || n < len(buf):
		// The writer writes the rest, waiting as it may, and meets the
		// error again if there was one.
		c.unwritten = append([]byte(nil), buf[max(n, 0):]...)
		c.notify()
	case len(s.pending) > 0:
		c.notify() // queued meanwhile: the writer takes it
	}
	if cap(buf) <= maxKeptBuffer {
		c.wbuf = buf[:0]
	}
}

// maxKeptBuffer bounds the write buffer a connection keeps between
// writes; maxWrite is how many bytes of messages the writer gathers into
// one write.
const (
	maxKeptBuffer = 64 << 10
	maxWrite      = 64 << 10
)

// busy reports whether a call is queued or running.
func (s *Session) busy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running || len(s.items) > 0
}

// poke wakes the session's goroutine.
func (s *Session) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// enqueueLocked numbers an RTI message and queues it for the attached
// connection's writer. HLA messages are also retained for replay until
// acknowledged; control messages are written only on the connection
// attached now.
func (s *Session) enqueueLocked(typ MsgType, head, payload []byte) *frame {
	f := s.queueLocked(typ, head, payload)
	if s.conn != nil {
		s.conn.notify()
	}
	return f
}

// queueLocked is enqueueLocked without waking the writer: the caller
// calls Flush once it has unlocked.
func (s *Session) queueLocked(typ MsgType, head, payload []byte) *frame {
	f := &frame{typ: typ, seq: s.next, payload: payload}
	f.head = append(f.fixed[:0], head...) // in the frame: one allocation, not two
	s.next = nextSeq(s.next)
	if typ.hla() {
		s.retained = append(s.retained, f)
		s.backlog += int64(f.size())
	}
	if s.conn != nil {
		if s.pending == nil {
			s.pending, s.spare = s.spare, nil
		}
		s.pending = append(s.pending, f)
	}
	return f
}

// maxSpare bounds the array of a written batch kept for the next one.
const maxSpare = 1024

// recycleLocked keeps batch's array, once written, for the next
// messages queued: one array serves every write instead of one per
// write.
func (s *Session) recycleLocked(batch []*frame) {
	if cap(batch) > maxSpare || cap(batch) <= cap(s.spare) {
		return
	}
	clear(batch)
	s.spare = batch[:0]
}

// start attaches the connection that opened the session, queues the new
// session status (sequence number 1) and any callbacks pushed during
// Open, and starts the connection's writer.
func (s *Session) start(c *connection) {
	s.quick, _ = s.handler.(QuickCaller)
	s.mu.Lock()
	if !s.ended {
		s.conn = c
		status := &frame{typ: MsgNewSessionStatus, seq: 1, head: u32s(newSessionSuccess)}
		s.pending = append([]*frame{status}, s.retained...)
		c.notify()
	}
	s.mu.Unlock()
	go s.writeLoop(c)
}

// run is the session's goroutine: it hands calls to the handler in
// order, ends the session when the resume window passes, and calls
// Closed at the end.
func (s *Session) run() {
	defer s.srv.wg.Done()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		s.mu.Lock()
		if s.ended && !s.running { // an item the reader runs finishes first
			reason := s.reason
			s.mu.Unlock()
			s.srv.forget(s, reason)
			s.srv.logf("session %016x: closed: %v", s.id, reason)
			s.handler.Closed(reason)
			return
		}
		if len(s.items) > 0 && !s.running && !s.ended {
			it := s.items[0]
			s.items[0] = item{}
			s.items = s.items[1:]
			s.running = true
			s.mu.Unlock()
			s.do(it)
			s.done()
			continue
		}
		var expire <-chan time.Time
		if s.conn == nil && !s.ended {
			window := s.srv.cfg.ResumeWindow
			left := window - time.Since(s.detachedAt)
			if left <= 0 {
				s.endLocked(fmt.Errorf("%w (%v)", ErrExpired, window))
				s.mu.Unlock()
				continue
			}
			timer.Reset(left)
			expire = timer.C
		}
		s.mu.Unlock()
		select {
		case <-s.wake:
		case <-expire:
		}
	}
}

// do handles one item, with s.running set: on the session's goroutine,
// or on the reader (runQuick).
func (s *Session) do(it item) {
	switch it.kind {
	case itemCall:
		resp := s.handler.Call(it.payload)
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.ended {
			return
		}
		if uint64(len(resp)) > maxPayload {
			s.endLocked(fmt.Errorf("session: call response of %d bytes does not fit a message", len(resp)))
			return
		}
		var head [4]byte
		binary.BigEndian.PutUint32(head[:], it.seq)
		s.queueLocked(MsgCallResponse, head[:], resp)
	case itemCallbackResponse:
		s.responder.CallbackResponse(it.seq, it.payload)
	case itemTerminate:
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.ended {
			return
		}
		// Answer, then close the connection once the answer is written.
		f := s.enqueueLocked(MsgSessionTerminated, nil, nil)
		f.last = true
		s.ended, s.reason = true, ErrTerminated
		s.items, s.retained, s.backlog = nil, nil, 0
		s.poke()
	}
}

// done ends the item that do ran: it writes what the item queued (a
// call response), and wakes the session's goroutine if items wait or the
// session ended meanwhile.
func (s *Session) done() {
	s.mu.Lock()
	s.running = false
	if len(s.items) > 0 || s.ended {
		s.poke()
	}
	s.mu.Unlock()
	s.Flush()
}

// runQuick runs it on the reader's goroutine, which receive gave it to
// with s.running set, sparing the switch to the session's goroutine.
func (s *Session) runQuick(it item) {
	s.do(it)
	s.done()
}

// writeLoop writes the session's messages on c, in sequence order, those
// queued together in one write (up to maxWrite bytes), until c is
// detached or a write fails. It runs on its own goroutine, and writes
// what Flush cannot write at once.
func (s *Session) writeLoop(c *connection) {
	defer s.srv.wg.Done()
	var buf []byte
	for {
		s.mu.Lock()
		if s.conn != c {
			s.mu.Unlock()
			return
		}
		if c.writing || (len(s.pending) == 0 && c.unwritten == nil) {
			s.mu.Unlock()
			select {
			case <-c.wake:
			case <-c.done:
			}
			continue
		}
		c.writing = true
		batch, left := s.pending, c.unwritten
		s.pending, c.unwritten = nil, nil
		lastRecv := s.lastRecv
		s.mu.Unlock()
		if len(left) > 0 {
			if _, err := c.nc.Write(left); err != nil {
				s.connFailed(c, fmt.Errorf("write: %w", err))
				return
			}
		}
		for i := 0; i < len(batch); {
			buf = buf[:0]
			last := false
			for i < len(batch) && !last && (len(buf) == 0 || len(buf)+batch[i].size() <= maxWrite) {
				buf = batch[i].appendTo(buf, s.id, lastRecv)
				last = batch[i].last
				i++
			}
			if _, err := c.nc.Write(buf); err != nil {
				s.connFailed(c, fmt.Errorf("write: %w", err))
				return
			}
			if last {
				s.mu.Lock()
				if s.conn == c {
					s.detachLocked()
				}
				s.mu.Unlock()
				return
			}
		}
		if cap(buf) > 1<<20 {
			buf = nil
		}
		s.mu.Lock()
		c.writing = false
		s.recycleLocked(batch)
		s.mu.Unlock()
	}
}

// detachLocked closes the attached connection and keeps the session for
// a resume.
func (s *Session) detachLocked() {
	c := s.conn
	s.conn, s.pending = nil, nil
	s.detachedAt = time.Now()
	close(c.done)
	c.nc.Close()
	s.poke()
}

// end ends the session with reason, unless it already ended.
func (s *Session) end(reason error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.endLocked(reason)
}

func (s *Session) endLocked(reason error) {
	if s.ended {
		return
	}
	s.ended, s.reason = true, reason
	s.items, s.retained, s.backlog = nil, nil, 0
	if s.conn != nil {
		s.detachLocked()
	}
	s.poke()
}

// connFailed handles the end of reading or writing c: a protocol error or
// a heartbeat timeout ends the session; anything else is a dropped
// connection, which the federate may resume.
func (s *Session) connFailed(c *connection, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != c {
		// Already detached: replaced by a resume, ended, or terminated.
		c.nc.Close()
		return
	}
	switch {
	case isBad(err):
		s.srv.badMessages.Add(1)
		s.srv.logf("session %016x: %v", s.id, err)
		s.endLocked(err)
	case s.ended:
		// Terminating, and the federate closed before the answer was
		// written.
		s.detachLocked()
	case errors.Is(err, os.ErrDeadlineExceeded) && s.srv.cfg.HeartbeatTimeout > 0:
		s.endLocked(fmt.Errorf("%w (%v)", ErrHeartbeatTimeout, s.srv.cfg.HeartbeatTimeout))
	case s.srv.cfg.ResumeWindow < 0:
		s.endLocked(fmt.Errorf("%w: %v", ErrConnectionLost, err))
	default:
		s.srv.logf("session %016x: connection from %v lost (%v); resumable for %v", s.id, c.nc.RemoteAddr(), err, s.srv.cfg.ResumeWindow)
		s.detachLocked()
	}
}

// receive handles one message from the federate on c. An error wrapping
// ErrBadMessage ends the session. With quick, the reader runs it
// (runQuick): a quick call or a callback response the session's
// goroutine would otherwise have been woken for, while nothing else of
// the session's is queued or running.
func (s *Session) receive(c *connection, h Header, body []byte) (it item, quick bool, err error) {
	if h.SessionID != s.id {
		return item{}, false, fmt.Errorf("%w: %v for session %016x on the connection of session %016x", ErrBadMessage, h.Type, h.SessionID, s.id)
	}
	switch h.Type {
	case MsgHeartbeat, MsgTerminateSession, MsgCallRequest, MsgCallbackResponse:
	case MsgNewSession, MsgResumeRequest:
		return item{}, false, fmt.Errorf("%w: %v on a connection that already carries a session", ErrBadMessage, h.Type)
	default:
		return item{}, false, fmt.Errorf("%w: %v goes from the RTI to the federate, not back", ErrBadMessage, h.Type)
	}
	if !validSeq(h.Seq) {
		return item{}, false, fmt.Errorf("%w: %v with sequence number %s", ErrBadMessage, h.Type, fmtSeq(h.Seq))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != c || s.ended {
		return item{}, false, nil // taken over by a resume, or ending: ignore
	}
	last := prevSeq(s.next)
	if validSeq(h.LastReceived) {
		if seqBefore(last, h.LastReceived) {
			return item{}, false, fmt.Errorf("%w: %v acknowledges RTI message %d, but the last one sent is %d", ErrBadMessage, h.Type, h.LastReceived, last)
		}
		s.ackLocked(h.LastReceived)
	}
	switch h.Type {
	case MsgHeartbeat:
		if err := s.orderLocked(h); err != nil {
			return item{}, false, err
		}
		s.enqueueLocked(MsgHeartbeatResponse, u32s(h.Seq), nil)
	case MsgTerminateSession:
		if err := s.orderLocked(h); err != nil {
			return item{}, false, err
		}
		s.items = append(s.items, item{kind: itemTerminate})
		s.poke()
	case MsgCallRequest:
		if s.duplicateLocked(h) {
			return item{}, false, nil
		}
		if err := s.orderLocked(h); err != nil {
			return item{}, false, err
		}
		s.receivedHLALocked(h.Seq)
		it := item{kind: itemCall, seq: h.Seq, payload: body}
		if s.quick != nil && s.idleLocked() && s.quick.Quick(body) {
			s.running = true
			return it, true, nil
		}
		s.items = append(s.items, it)
		s.poke()
	case MsgCallbackResponse:
		// Pitch's clients send the callback's sequence number and then
		// the CallbackResponse, numbering the message in their own
		// sequence; MAK's Python client sends a bare header numbered with
		// the callback's sequence number.
		to, payload, bare := h.Seq, []byte(nil), true
		switch {
		case len(body) >= 4:
			to, payload, bare = binary.BigEndian.Uint32(body), body[4:], false
		case len(body) > 0:
			return item{}, false, fmt.Errorf("%w: %v body of %d bytes", ErrBadMessage, h.Type, len(body))
		}
		if !validSeq(to) || seqBefore(last, to) {
			return item{}, false, fmt.Errorf("%w: %v to callback %s, but the last RTI message sent is %d", ErrBadMessage, h.Type, fmtSeq(to), last)
		}
		if !bare {
			if s.duplicateLocked(h) {
				return item{}, false, nil
			}
			s.receivedHLALocked(h.Seq)
		}
		if s.responder != nil {
			it := item{kind: itemCallbackResponse, seq: to, payload: payload}
			if s.quick != nil && s.idleLocked() {
				s.running = true
				return it, true, nil
			}
			s.items = append(s.items, it)
			s.poke()
		}
	}
	return item{}, false, nil
}

// idleLocked reports whether nothing of the session's is queued or
// running: an item may run on the reader.
func (s *Session) idleLocked() bool { return !s.running && len(s.items) == 0 }

// orderLocked checks that a call, heartbeat or terminate does not go back
// in the federate's sequence. Equal numbers pass: MAK's Python client
// numbers messages by what it received, so two may share one.
func (s *Session) orderLocked(h Header) error {
	if validSeq(s.lastOwn) && seqBefore(h.Seq, s.lastOwn) {
		return fmt.Errorf("%w: %v with sequence number %d after %d: the federate's sequence numbers must not go back", ErrBadMessage, h.Type, h.Seq, s.lastOwn)
	}
	s.lastOwn = h.Seq
	s.noteLocked(h.Seq)
	return nil
}

func (s *Session) noteLocked(seq uint32) {
	if seqBefore(s.lastAny, seq) {
		s.lastAny = seq
	}
}

// receivedHLALocked records an HLA message from the federate.
func (s *Session) receivedHLALocked(seq uint32) {
	if !validSeq(s.lastRecv) || seqBefore(s.lastRecv, seq) {
		s.lastRecv = seq
	}
	s.noteLocked(seq)
	if validSeq(s.replayFloor) && seqBefore(s.replayFloor, seq) {
		s.replayFloor = noSequence
	}
}

// duplicateLocked reports an HLA message the federate replayed after a
// resume although the session had it already.
func (s *Session) duplicateLocked(h Header) bool {
	if !validSeq(s.replayFloor) || seqBefore(s.replayFloor, h.Seq) {
		return false
	}
	s.srv.logf("session %016x: dropped %v %d: received before the resume", s.id, h.Type, h.Seq)
	return true
}

// ackLocked frees the retained HLA messages up to ack, which the federate
// has received.
func (s *Session) ackLocked(ack uint32) {
	i := 0
	for i < len(s.retained) && !seqBefore(ack, s.retained[i].seq) {
		i++
	}
	if i == 0 {
		return
	}
	s.freedTo = s.retained[i-1].seq
	for _, f := range s.retained[:i] {
		s.backlog -= int64(f.size())
	}
	if k := len(s.retained) - i; k <= i {
		// Move what is left to the front, so that the array serves the
		// next messages (slicing the front off would leave less room
		// at each acknowledgement, and append would allocate anew);
		// at most as many moves as messages freed.
		copy(s.retained, s.retained[i:])
		clear(s.retained[k:])
		s.retained = s.retained[:k]
		return
	}
	clear(s.retained[:i])
	s.retained = s.retained[i:]
}

// resume attaches c after a resume request whose federate last received
// RTI message lastRecv and still holds its messages from oldestAvail on.
// It answers on c, and reports whether the session was resumed; a refusal
// of a live session ends it.
func (s *Session) resume(c *connection, lastRecv, oldestAvail uint32) bool {
	s.mu.Lock()
	last := prevSeq(s.next)
	var status uint32
	var why error
	switch {
	case s.ended:
		status, why = resumeInvalidSession, fmt.Errorf("session ended: %w", s.reason)
	case validSeq(lastRecv) && seqBefore(last, lastRecv):
		status, why = resumeOtherError, fmt.Errorf("%w: the federate last received RTI message %d, but the last one sent is %d", ErrResumeRefused, lastRecv, last)
	case validSeq(s.freedTo) && (!validSeq(lastRecv) || seqBefore(lastRecv, s.freedTo)):
		status, why = resumeNotEnoughBuffered, fmt.Errorf("%w: the federate last received RTI message %s, but messages up to %d were acknowledged and freed", ErrResumeRefused, fmtSeq(lastRecv), s.freedTo)
	case validSeq(oldestAvail) && seqBefore(nextSeq(s.lastAny), oldestAvail):
		status, why = resumeNotEnoughBuffered, fmt.Errorf("%w: the federate holds its messages from %d on, but the last one received is %d", ErrResumeRefused, oldestAvail, s.lastAny)
	}
	if status != resumeOK {
		h := Header{Seq: s.next, SessionID: s.id, LastReceived: s.lastRecv, Type: MsgResumeStatus}
		s.next = nextSeq(s.next)
		s.endLocked(why)
		s.mu.Unlock()
		s.srv.refusedResumes.Add(1)
		s.srv.logf("session %016x: resume from %v refused (status %d): %v", s.id, c.nc.RemoteAddr(), status, why)
		s.srv.writeDirect(c, h, u32s(status, noSequence))
		return false
	}
	if s.conn != nil {
		s.srv.logf("session %016x: resumed on %v while still attached to %v; closing that", s.id, c.nc.RemoteAddr(), s.conn.nc.RemoteAddr())
		s.detachLocked()
	}
	if validSeq(lastRecv) {
		s.ackLocked(lastRecv)
	}
	s.conn = c
	s.enqueueLocked(MsgResumeStatus, u32s(resumeOK, s.lastRecv), nil)
	replay := len(s.retained)
	s.pending = append(s.pending, s.retained...)
	s.replayFloor = s.lastRecv
	floor := s.replayFloor
	s.srv.resumed.Add(1)
	s.srv.wg.Add(1)
	go s.writeLoop(c)
	s.poke()
	s.mu.Unlock()
	s.srv.logf("session %016x: resumed on %v: replaying %d messages after RTI message %s; last received federate message %s",
		s.id, c.nc.RemoteAddr(), replay, fmtSeq(lastRecv), fmtSeq(floor))
	return true
}
