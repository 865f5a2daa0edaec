package session

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Config configures a Server. Zero fields mean the default. A Config is
// not changed after NewServer.
type Config struct {
	// ResumeWindow is how long a session survives a dropped connection:
	// the federate may resume it within this time, and gets the messages
	// it missed. Zero means DefaultResumeWindow; negative means sessions
	// end as soon as their connection drops.
	ResumeWindow time.Duration
	// MaxMessage is the largest message, header included, accepted from
	// a federate; a larger one ends its session (ErrTooLarge). Zero means
	// DefaultMaxMessage.
	MaxMessage int
	// HeartbeatTimeout ends a session whose federate sent nothing for
	// this long while connected (ErrHeartbeatTimeout), unless one of its
	// calls is queued or running, and closes a new connection that sends
	// no first message within it. Zero means never. Set it well above the
	// federates' heartbeat interval (60 s by default in Pitch's client).
	HeartbeatTimeout time.Duration
	// MaxBacklog bounds the bytes of messages a session keeps for its
	// federate until acknowledged (to replay after a resume): a callback
	// that would pass it ends the session (ErrBacklog), so a federate that
	// stops acknowledging cannot grow the daemon's memory without end.
	// Zero means DefaultMaxBacklog; negative means no bound.
	MaxBacklog int64
	// Logf, if set, receives one line per session event and per refused
	// message. It may be called from any goroutine.
	Logf func(format string, args ...any)
}

// Defaults for the zero fields of Config.
const (
	DefaultResumeWindow = 60 * time.Second
	DefaultMaxMessage   = 64 << 20
	DefaultMaxBacklog   = 512 << 20
)

// minMaxMessage is the smallest MaxMessage that lets a session start.
const minMaxMessage = HeaderSize + 8

// Validate reports a Config that NewServer cannot use.
func (c Config) Validate() error {
	switch {
	case c.MaxMessage < 0 || (c.MaxMessage > 0 && c.MaxMessage < minMaxMessage):
		return fmt.Errorf("session: MaxMessage %d: want 0 (default) or at least %d", c.MaxMessage, minMaxMessage)
	case c.HeartbeatTimeout < 0:
		return fmt.Errorf("session: negative HeartbeatTimeout %v", c.HeartbeatTimeout)
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.ResumeWindow == 0 {
		c.ResumeWindow = DefaultResumeWindow
	}
	if c.MaxMessage == 0 {
		c.MaxMessage = DefaultMaxMessage
	}
	if c.MaxBacklog == 0 {
		c.MaxBacklog = DefaultMaxBacklog
	}
	return c
}

// Handler opens sessions.
type Handler interface {
	// Open is called for a new session, on the goroutine of the
	// connection that asked for it, before the federate is answered. It
	// returns what handles the session's calls. An error refuses the
	// session: the federate gets reason "out of resources" if the error
	// wraps ErrOutOfResources, "other error" otherwise.
	Open(s *Session) (SessionHandler, error)
}

// SessionHandler handles the calls of one session. Its methods are called
// one at a time, never two at once: from the session's goroutine, or, for
// a QuickCaller, some from the connection's reader.
type SessionHandler interface {
	// Call handles one call request payload (a protobuf CallRequest) and
	// returns the call response payload (a protobuf CallResponse). Calls
	// of one session are handled one at a time, in the order the
	// federate sent them; heartbeats are answered meanwhile. Call may
	// keep payload; the session keeps the returned slice until the
	// federate acknowledges it, so it must not be changed afterwards.
	// Call may call PushCallback: those callbacks reach the federate
	// before the response.
	Call(payload []byte) []byte
	// Closed is called once when the session ends (terminated by the
	// federate, resume window expired, protocol error, Server.Close),
	// after the last Call returned, with the reason; see the Err values.
	Closed(reason error)
}

// QuickCaller may be implemented by a SessionHandler with calls that
// return at once, never waiting on the network or on other federates (an
// update, an interaction). A call Quick accepts, arriving while nothing
// else of the session's is queued or running, is run by the
// connection's reader instead of the session's goroutine, and so are
// the callback responses (CallbackResponse, which must then return at
// once too): the order and the one-at-a-time guarantee hold, and the
// switch between goroutines is spared. Heartbeats that arrive during
// such a call are answered after it.
type QuickCaller interface {
	// Quick reports whether the call request payload is such a call. It
	// is called on the reader, with the session locked: it must only
	// look at payload.
	Quick(payload []byte) bool
}

// CallbackResponder may be implemented by a SessionHandler that wants the
// federate's callback responses. It is optional: callbacks are delivered
// without waiting for responses, and responses are dropped if nobody
// wants them.
type CallbackResponder interface {
	// CallbackResponse reports the federate's response to the callback
	// request with sequence number callback. Payload is the protobuf
	// CallbackResponse; it is empty when the federate acknowledged with a
	// bare header (as MAK's Python client does). It is called in order
	// with Call, one at a time with it (for a QuickCaller, on the
	// connection's reader when the session is idle: it must return at
	// once).
	CallbackResponse(callback uint32, payload []byte)
}

// Stats counts what a Server has done since NewServer.
type Stats struct {
	Sessions       int    // sessions open now
	Opened         uint64 // sessions opened
	Resumed        uint64 // successful resumes
	BadMessages    uint64 // connections or sessions ended for breaking the protocol
	RefusedResumes uint64 // resume requests refused
}

// Server accepts Federate Protocol connections and runs their sessions.
// Its methods are safe for concurrent use.
type Server struct {
	cfg     Config
	handler Handler
	done    chan struct{} // closed by Close

	mu         sync.Mutex
	closing    bool
	listeners  map[*net.Listener]struct{}
	conns      map[*connection]struct{}
	sessions   map[uint64]*Session
	tombstones map[uint64]error // recently ended sessions, for clear refusals
	tombOrder  []uint64

	wg sync.WaitGroup // every goroutine the Server starts

	opened, resumed, badMessages, refusedResumes atomic.Uint64
}

// maxTombstones bounds how many ended sessions a Server remembers, to
// give a clear reason when one of them is resumed.
const maxTombstones = 1024

// NewServer returns a Server that opens sessions with h. A cfg that fails
// Validate, or a nil h, makes Serve return an error.
func NewServer(cfg Config, h Handler) *Server {
	return &Server{
		cfg:        cfg.withDefaults(),
		handler:    h,
		done:       make(chan struct{}),
		listeners:  map[*net.Listener]struct{}{},
		conns:      map[*connection]struct{}{},
		sessions:   map[uint64]*Session{},
		tombstones: map[uint64]error{},
	}
}

// Serve accepts connections on l and serves each on its own goroutines.
// It may be called for several listeners at once (TCP and TLS, say). It
// blocks until l fails or Close is called, closes l and returns the
// error; after Close it returns ErrServerClosed. Connections already
// accepted keep running until Close.
func (s *Server) Serve(l net.Listener) error {
	defer l.Close()
	if err := s.cfg.Validate(); err != nil {
		return err
	}
	if s.handler == nil {
		return errors.New("session: Server has no Handler")
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return ErrServerClosed
	}
	s.listeners[&l] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, &l)
		s.mu.Unlock()
	}()

	var delay time.Duration
	for {
		nc, err := l.Accept()
		if err != nil {
			if s.isClosing() {
				return ErrServerClosed
			}
			if te, ok := err.(interface{ Temporary() bool }); ok && te.Temporary() {
				// Like net/http: back off on EMFILE and the like.
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				s.logf("session: accept: %v; retrying in %v", err, delay)
				select {
				case <-time.After(delay):
				case <-s.done:
				}
				continue
			}
			return err
		}
		delay = 0
		c := newConnection(nc)
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			nc.Close()
			return ErrServerClosed
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serveConn(c)
	}
}

// Close closes the listeners and every connection, ends every session
// (each handler's Closed is called with ErrServerClosed), and returns
// once every goroutine the Server started has exited. It waits for Calls
// in progress to return. It returns the first error from closing a
// listener.
func (s *Server) Close() error {
	s.mu.Lock()
	if !s.closing {
		s.closing = true
		close(s.done)
	}
	var ls []net.Listener
	for l := range s.listeners {
		ls = append(ls, *l)
	}
	var cs []*connection
	for c := range s.conns {
		cs = append(cs, c)
	}
	var ss []*Session
	for _, sess := range s.sessions {
		ss = append(ss, sess)
	}
	s.mu.Unlock()

	var err error
	for _, l := range ls {
		if e := l.Close(); e != nil && !errors.Is(e, net.ErrClosed) && err == nil {
			err = e
		}
	}
	for _, sess := range ss {
		sess.end(ErrServerClosed)
	}
	for _, c := range cs {
		c.nc.Close()
	}
	s.wg.Wait()
	return err
}

// Sessions returns the number of open sessions, connected or waiting to
// be resumed. A session leaves the count just before its Closed is
// called.
func (s *Server) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// Stats returns the Server's counters.
func (s *Server) Stats() Stats {
	return Stats{
		Sessions:       s.Sessions(),
		Opened:         s.opened.Load(),
		Resumed:        s.resumed.Load(),
		BadMessages:    s.badMessages.Load(),
		RefusedResumes: s.refusedResumes.Load(),
	}
}

func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

func (s *Server) logf(format string, args ...any) {
	if s.cfg.Logf != nil {
		s.cfg.Logf(format, args...)
	}
}

// connection is one transport connection. It carries at most one session,
// and is attached to it until it drops, the session ends or a resume on
// another connection takes the session over.
type connection struct {
	nc   net.Conn
	wake chan struct{} // capacity 1: the session has frames for the writer
	done chan struct{} // closed when detached from its session
	// raw writes without waiting (Flush); nil where it cannot (TLS, or
	// not a Unix socket), and then the writer writes everything.
	raw func([]byte) (int, error)

	// Under the session's mu:
	writing   bool   // the writer or a Flush is writing on the connection
	unwritten []byte // what a Flush could not write at once: the writer's first
	wbuf      []byte // Flush's buffer, kept between writes
}

func newConnection(nc net.Conn) *connection {
	return &connection{nc: nc, wake: make(chan struct{}, 1), done: make(chan struct{}), raw: rawWriter(nc)}
}

func (c *connection) notify() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// serveConn reads c: first a new session or resume request, then the
// session's messages. It runs on its own goroutine.
func (s *Server) serveConn(c *connection) {
	defer s.wg.Done()
	defer func() {
		c.nc.Close()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}()
	r := bufio.NewReaderSize(rawReader(c.nc), 64<<10)
	h, body, err := s.readMessage(c, r)
	if err != nil {
		if isBad(err) {
			s.badMessages.Add(1)
			s.logf("session: %v: first message: %v", c.nc.RemoteAddr(), err)
		} else if !errors.Is(err, io.EOF) {
			s.logf("session: %v: first message: %v", c.nc.RemoteAddr(), err)
		}
		return
	}
	var sess *Session
	switch h.Type {
	case MsgNewSession:
		sess = s.newSession(c, h, body)
	case MsgResumeRequest:
		sess = s.resume(c, h, body)
	default:
		s.badMessages.Add(1)
		s.logf("session: %v: first message is %v; want %v or %v", c.nc.RemoteAddr(), h.Type, MsgNewSession, MsgResumeRequest)
	}
	if sess == nil {
		return
	}
	for {
		h, body, err := s.readMessage(c, r)
		if errors.Is(err, errIdle) && sess.busy() {
			// A federate may say nothing while it waits for a call
			// (MAK's client sends no heartbeat then).
			continue
		}
		if err == nil {
			var it item
			var quick bool
			if it, quick, err = sess.receive(c, h, body); quick {
				sess.runQuick(it)
			}
		}
		if err != nil {
			sess.connFailed(c, err)
			return
		}
	}
}

// errIdle wraps the deadline error of a federate silent for
// Config.HeartbeatTimeout between two messages.
var errIdle = errors.New("session: federate idle")

// isBad reports whether err is the federate's fault.
func isBad(err error) bool {
	return errors.Is(err, ErrBadMessage) || errors.Is(err, ErrTooLarge)
}

// readMessage reads one message from r. Errors wrapping ErrBadMessage or
// ErrTooLarge mean the stream cannot be read further.
//
// With Config.HeartbeatTimeout, silence before a message returns an error
// wrapping errIdle, after which the next message can still be read; a
// message that stalls for as long cannot be finished.
func (s *Server) readMessage(c *connection, r *bufio.Reader) (Header, []byte, error) {
	if t := s.cfg.HeartbeatTimeout; t > 0 {
		c.nc.SetReadDeadline(time.Now().Add(t))
		if _, err := r.Peek(1); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				err = fmt.Errorf("%w: %w", errIdle, err)
			}
			return Header{}, nil, err
		}
		c.nc.SetReadDeadline(time.Now().Add(t))
	}
	// The header is parsed in r's buffer: read into an array of its
	// own, through the io.Reader, the array would be allocated.
	hb, err := r.Peek(HeaderSize)
	if err != nil {
		if len(hb) > 0 && err == io.EOF {
			err = io.ErrUnexpectedEOF // as io.ReadFull says it
		}
		return Header{}, nil, err
	}
	h, err := ParseHeader(hb)
	if err != nil {
		return Header{}, nil, err
	}
	r.Discard(HeaderSize)
	if uint64(h.Size) > uint64(s.cfg.MaxMessage) {
		return Header{}, nil, fmt.Errorf("%w: %v of %d bytes, limit %d", ErrTooLarge, h.Type, h.Size, s.cfg.MaxMessage)
	}
	n := int(h.Size) - HeaderSize
	if n <= 64<<10 {
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			return Header{}, nil, noEOF(err)
		}
		return h, body, nil
	}
	// A large body grows as it arrives, so a size alone commits no memory.
	var b bytes.Buffer
	m, err := b.ReadFrom(io.LimitReader(r, int64(n)))
	if err == nil && m < int64(n) {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return Header{}, nil, noEOF(err)
	}
	return h, b.Bytes(), nil
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// writeDirect writes one message on a connection that has no writer: the
// answer to a refused new session or resume request.
func (s *Server) writeDirect(c *connection, h Header, body []byte) {
	h.Size = uint32(HeaderSize + len(body))
	buf := append(AppendHeader(make([]byte, 0, h.Size), h), body...)
	c.nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
	c.nc.Write(buf)
}

// refuseNew answers a new session request with a failure reason.
func (s *Server) refuseNew(c *connection, reason uint32, why error) {
	s.logf("session: %v: new session refused (reason %d): %v", c.nc.RemoteAddr(), reason, why)
	s.writeDirect(c, Header{Seq: 1, LastReceived: noSequence, Type: MsgNewSessionStatus}, u32s(reason))
}

// newSession handles CTRL_NEW_SESSION: it opens a session, attaches c and
// answers with CTRL_NEW_SESSION_STATUS, sequence number 1. It returns nil
// if the session was refused.
func (s *Server) newSession(c *connection, h Header, body []byte) *Session {
	switch {
	case len(body) != 4:
		s.badMessages.Add(1)
		s.refuseNew(c, newSessionOtherError, fmt.Errorf("%w: %v body of %d bytes, want 4", ErrBadMessage, h.Type, len(body)))
		return nil
	case binary.BigEndian.Uint32(body) != ProtocolVersion:
		s.refuseNew(c, newSessionUnsupportedProtocol, fmt.Errorf("protocol version %d, want %d", binary.BigEndian.Uint32(body), ProtocolVersion))
		return nil
	case h.SessionID != 0:
		s.badMessages.Add(1)
		s.refuseNew(c, newSessionOtherError, fmt.Errorf("%w: %v carries session id %#x, want 0", ErrBadMessage, h.Type, h.SessionID))
		return nil
	}
	id, err := s.newID()
	if err != nil {
		s.refuseNew(c, newSessionOtherError, err)
		return nil
	}
	sess := newSession(s, id, h.Seq)
	sh, err := s.handler.Open(sess)
	if err != nil {
		reason := newSessionOtherError
		if errors.Is(err, ErrOutOfResources) {
			reason = newSessionOutOfResources
		}
		s.refuseNew(c, reason, fmt.Errorf("opening the session: %w", err))
		return nil
	}
	if sh == nil {
		s.refuseNew(c, newSessionOtherError, errors.New("the handler's Open returned no SessionHandler"))
		return nil
	}
	sess.handler = sh
	sess.responder, _ = sh.(CallbackResponder)
	s.mu.Lock()
	_, taken := s.sessions[id]
	if s.closing || taken {
		s.mu.Unlock()
		why := ErrServerClosed
		if taken {
			why = errors.New("session: session id collision")
		}
		sh.Closed(why)
		s.refuseNew(c, newSessionOtherError, why)
		return nil
	}
	s.sessions[id] = sess
	s.wg.Add(2) // the session's goroutine and c's writer
	s.mu.Unlock()
	s.opened.Add(1)
	s.logf("session %016x: opened for %v", id, c.nc.RemoteAddr())
	sess.start(c)
	go sess.run()
	return sess
}

// newID returns a random session id that is not 0 and not in use.
func (s *Server) newID() (uint64, error) {
	var b [8]byte
	for range 8 {
		if _, err := rand.Read(b[:]); err != nil {
			return 0, fmt.Errorf("session: session id: %w", err)
		}
		id := binary.BigEndian.Uint64(b[:])
		s.mu.Lock()
		_, taken := s.sessions[id]
		s.mu.Unlock()
		if id != 0 && !taken {
			return id, nil
		}
	}
	return 0, errors.New("session: no free session id")
}

// resume handles CTRL_RESUME_REQUEST: it attaches c to the session named
// in the header, answers with CTRL_RESUME_STATUS and replays the HLA
// messages after the federate's last received one. It returns nil if the
// resume was refused.
func (s *Server) resume(c *connection, h Header, body []byte) *Session {
	refuse := func(status uint32, why error) {
		s.refusedResumes.Add(1)
		s.logf("session %016x: resume from %v refused (status %d): %v", h.SessionID, c.nc.RemoteAddr(), status, why)
		s.writeDirect(c, Header{Seq: 1, SessionID: h.SessionID, LastReceived: noSequence, Type: MsgResumeStatus}, u32s(status, noSequence))
	}
	if len(body) != 8 {
		s.badMessages.Add(1)
		refuse(resumeOtherError, fmt.Errorf("%w: %v body of %d bytes, want 8", ErrBadMessage, h.Type, len(body)))
		return nil
	}
	lastRecv := binary.BigEndian.Uint32(body[0:])
	oldestAvail := binary.BigEndian.Uint32(body[4:])
	s.mu.Lock()
	sess := s.sessions[h.SessionID]
	why := s.tombstones[h.SessionID]
	if s.closing {
		sess, why = nil, ErrServerClosed
	}
	s.mu.Unlock()
	if sess == nil {
		if why == nil {
			why = errors.New("unknown session")
		} else {
			why = fmt.Errorf("session ended: %w", why)
		}
		refuse(resumeInvalidSession, why)
		return nil
	}
	if !sess.resume(c, lastRecv, oldestAvail) {
		return nil
	}
	return sess
}

// forget removes an ended session, remembering why it ended.
func (s *Server) forget(sess *Session, reason error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sessions[sess.id] != sess {
		return
	}
	delete(s.sessions, sess.id)
	if len(s.tombOrder) == maxTombstones {
		delete(s.tombstones, s.tombOrder[0])
		s.tombOrder = s.tombOrder[1:]
	}
	s.tombstones[sess.id] = reason
	s.tombOrder = append(s.tombOrder, sess.id)
}
