package session

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The test federate has its own framing, written from the protocol
// description and not from this package's encoder, so the tests check the
// wire format.

// Message type numbers as a federate sees them.
const (
	tNewSession        = 1
	tNewSessionStatus  = 2
	tHeartbeat         = 3
	tHeartbeatResponse = 4
	tTerminateSession  = 5
	tSessionTerminated = 6
	tResumeRequest     = 10
	tResumeStatus      = 11
	tCallRequest       = 20
	tCallResponse      = 21
	tCallbackRequest   = 22
	tCallbackResponse  = 23

	tNone = 0x80000000 // "no sequence number"
)

// wireMsg is a message as read off the wire.
type wireMsg struct {
	size uint32
	seq  uint32
	sid  uint64
	lrm  uint32 // last received
	typ  uint32
	body []byte
}

func (m wireMsg) String() string {
	return fmt.Sprintf("{type %d seq %d sid %x lrm %#x size %d body %q}", m.typ, m.seq, m.sid, m.lrm, m.size, m.body)
}

// u32 returns the i-th big-endian uint32 of the body.
func (m wireMsg) u32(i int) uint32 {
	if len(m.body) < 4*(i+1) {
		return 0xdeadbeef
	}
	return binary.BigEndian.Uint32(m.body[4*i:])
}

// encodeMsg builds one message: 4-byte size, 4-byte sequence number,
// 8-byte session id, 4-byte last received, 4-byte type, then the body.
func encodeMsg(seq uint32, sid uint64, lrm uint32, typ uint32, body []byte) []byte {
	b := make([]byte, 24, 24+len(body))
	binary.BigEndian.PutUint32(b[0:4], uint32(24+len(body)))
	binary.BigEndian.PutUint32(b[4:8], seq)
	binary.BigEndian.PutUint64(b[8:16], sid)
	binary.BigEndian.PutUint32(b[16:20], lrm)
	binary.BigEndian.PutUint32(b[20:24], typ)
	return append(b, body...)
}

func be32(vs ...uint32) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.BigEndian.AppendUint32(b, v)
	}
	return b
}

// fed is a test federate. Its methods that return an error may be used
// from any goroutine; the must* ones only from the test's.
type fed struct {
	t       testing.TB
	addr    string
	nc      net.Conn
	sid     uint64
	seq     uint32                   // next own sequence number
	lastHLA uint32                   // newest call response or callback request read, or tNone
	dial    func() (net.Conn, error) // nil: TCP to addr
}

func dialFed(t testing.TB, addr string) *fed {
	t.Helper()
	f := &fed{t: t, addr: addr, seq: 1, lastHLA: tNone}
	if err := f.redial(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.nc.Close() })
	return f
}

func (f *fed) redial() error {
	dial := f.dial
	if dial == nil {
		dial = func() (net.Conn, error) { return net.Dial("tcp", f.addr) }
	}
	nc, err := dial()
	if err != nil {
		return err
	}
	f.nc = nc
	return nil
}

func (f *fed) write(b []byte) error {
	f.nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, err := f.nc.Write(b)
	return err
}

// send numbers and sends one message, acknowledging lastHLA.
func (f *fed) send(typ uint32, body []byte) (uint32, error) {
	seq := f.seq
	f.seq++
	return seq, f.write(encodeMsg(seq, f.sid, f.lastHLA, typ, body))
}

func (f *fed) mustSend(typ uint32, body []byte) uint32 {
	f.t.Helper()
	seq, err := f.send(typ, body)
	if err != nil {
		f.t.Fatal(err)
	}
	return seq
}

// read reads one message: the size, then the rest.
func (f *fed) read() (wireMsg, error) {
	f.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	var sz [4]byte
	if _, err := io.ReadFull(f.nc, sz[:]); err != nil {
		return wireMsg{}, err
	}
	size := binary.BigEndian.Uint32(sz[:])
	if size < 24 || size > 1<<26 {
		return wireMsg{}, fmt.Errorf("message size %d", size)
	}
	rest := make([]byte, size-4)
	if _, err := io.ReadFull(f.nc, rest); err != nil {
		return wireMsg{}, err
	}
	m := wireMsg{
		size: size,
		seq:  binary.BigEndian.Uint32(rest[0:4]),
		sid:  binary.BigEndian.Uint64(rest[4:12]),
		lrm:  binary.BigEndian.Uint32(rest[12:16]),
		typ:  binary.BigEndian.Uint32(rest[16:20]),
		body: rest[20:],
	}
	if m.typ == tCallResponse || m.typ == tCallbackRequest {
		f.lastHLA = m.seq
	}
	return m, nil
}

func (f *fed) mustRead() wireMsg {
	f.t.Helper()
	m, err := f.read()
	if err != nil {
		f.t.Fatalf("read: %v", err)
	}
	return m
}

// expect reads one message and checks its type and sequence number.
func (f *fed) expect(typ, seq uint32) wireMsg {
	f.t.Helper()
	m := f.mustRead()
	if m.typ != typ || m.seq != seq {
		f.t.Fatalf("got %v, want type %d seq %d", m, typ, seq)
	}
	if m.sid != f.sid {
		f.t.Fatalf("got %v for session %x, want %x", m, m.sid, f.sid)
	}
	return m
}

// expectClosed checks that the server closes the connection.
func (f *fed) expectClosed() {
	f.t.Helper()
	m, err := f.read()
	if err == nil {
		f.t.Fatalf("got %v, want the connection closed", m)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		f.t.Fatalf("connection still open: %v", err)
	}
}

// open starts a session the way both public clients do: sequence number
// 0, session id 0, protocol version 1.
func (f *fed) open() (wireMsg, error) {
	if err := f.write(encodeMsg(0, 0, tNone, tNewSession, be32(1))); err != nil {
		return wireMsg{}, err
	}
	m, err := f.read()
	if err != nil {
		return m, err
	}
	if m.typ != tNewSessionStatus || m.seq != 1 || m.size != 28 || m.u32(0) != 0 || m.sid == 0 {
		return m, fmt.Errorf("new session status %v, want type 2 seq 1 reason 0", m)
	}
	f.sid = m.sid
	return m, nil
}

func (f *fed) mustOpen() {
	f.t.Helper()
	if _, err := f.open(); err != nil {
		f.t.Fatal(err)
	}
}

// resume reconnects and asks to resume, returning the resume status.
func (f *fed) resume(oldest uint32) wireMsg {
	f.t.Helper()
	f.nc.Close()
	if err := f.redial(); err != nil {
		f.t.Fatal(err)
	}
	if err := f.write(encodeMsg(tNone, f.sid, f.lastHLA, tResumeRequest, be32(f.lastHLA, oldest))); err != nil {
		f.t.Fatal(err)
	}
	m := f.mustRead()
	if m.typ != tResumeStatus || m.size != 32 || !(m.seq <= 0x7fffffff) {
		f.t.Fatalf("resume status %v", m)
	}
	return m
}

// testHandler opens testSessions.
type testHandler struct {
	opened  chan *testSession
	openErr error
	call    func(ts *testSession, p []byte) []byte // nil: answer "re:"+p
	quick   func(p []byte) bool                    // non-nil: the sessions are QuickCallers
}

func newTestHandler() *testHandler {
	return &testHandler{opened: make(chan *testSession, 1024)}
}

func (h *testHandler) Open(s *Session) (SessionHandler, error) {
	if h.openErr != nil {
		return nil, h.openErr
	}
	ts := &testSession{h: h, s: s, closed: make(chan error, 2), cbs: make(chan cbResp, 1024)}
	h.opened <- ts
	if h.quick != nil {
		return quickSession{ts}, nil
	}
	return ts, nil
}

// quickSession is a testSession that is a QuickCaller.
type quickSession struct{ *testSession }

func (q quickSession) Quick(p []byte) bool { return q.h.quick(p) }

// next returns the next session opened.
func (h *testHandler) next(t testing.TB) *testSession {
	t.Helper()
	select {
	case ts := <-h.opened:
		return ts
	case <-time.After(10 * time.Second):
		t.Fatal("no session opened")
		return nil
	}
}

type cbResp struct {
	seq     uint32
	payload string
}

type testSession struct {
	h       *testHandler
	s       *Session
	inCall  atomic.Int32
	overlap atomic.Bool // two handler methods ran at once
	mu      sync.Mutex
	calls   []string
	closed  chan error
	nClose  atomic.Int32
	cbs     chan cbResp
}

func (ts *testSession) enter() func() {
	if ts.inCall.Add(1) != 1 {
		ts.overlap.Store(true)
	}
	return func() { ts.inCall.Add(-1) }
}

func (ts *testSession) Call(p []byte) []byte {
	defer ts.enter()()
	ts.mu.Lock()
	ts.calls = append(ts.calls, string(p))
	ts.mu.Unlock()
	if ts.h.call != nil {
		return ts.h.call(ts, p)
	}
	return append([]byte("re:"), p...)
}

func (ts *testSession) CallbackResponse(seq uint32, p []byte) {
	defer ts.enter()()
	ts.cbs <- cbResp{seq, string(p)}
}

func (ts *testSession) Closed(reason error) {
	defer ts.enter()()
	ts.nClose.Add(1)
	ts.closed <- reason
}

func (ts *testSession) callLog() []string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]string(nil), ts.calls...)
}

// waitClosed returns the reason the session closed with.
func (ts *testSession) waitClosed(t testing.TB) error {
	t.Helper()
	select {
	case err := <-ts.closed:
		if ts.overlap.Load() {
			t.Error("handler methods ran concurrently")
		}
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("session not closed")
		return nil
	}
}

// logBuf collects the server's log lines.
type logBuf struct {
	t     testing.TB
	mu    sync.Mutex
	lines []string
}

func (l *logBuf) logf(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	l.mu.Lock()
	l.lines = append(l.lines, s)
	l.mu.Unlock()
	l.t.Log(s)
}

func (l *logBuf) has(sub string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.lines {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// testServer serves h on a loopback listener until the test ends, then
// closes it and checks that no goroutine of the package is left.
type testServer struct {
	*Server
	addr  string
	log   *logBuf
	serve chan error
}

// heldCalls returns a handler whose calls wait until release is closed,
// then answer reply(payload), and release.
func heldCalls(reply func([]byte) []byte) (h *testHandler, release chan struct{}) {
	h = newTestHandler()
	release = make(chan struct{})
	h.call = func(_ *testSession, p []byte) []byte {
		<-release
		return reply(p)
	}
	return h, release
}

// openedSession serves h with cfg and opens a session to it, returning
// the server, the federate's end and the handler's session.
func openedSession(t testing.TB, cfg Config, h *testHandler) (*testServer, *fed, *testSession) {
	t.Helper()
	srv := startServer(t, cfg, h)
	f := dialFed(t, srv.addr)
	f.mustOpen()
	return srv, f, h.next(t)
}

func startServer(t testing.TB, cfg Config, h Handler) *testServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return serveOn(t, cfg, h, l)
}

func serveOn(t testing.TB, cfg Config, h Handler, l net.Listener) *testServer {
	t.Helper()
	lb := &logBuf{t: t}
	cfg.Logf = lb.logf
	ts := &testServer{Server: NewServer(cfg, h), addr: l.Addr().String(), log: lb, serve: make(chan error, 1)}
	go func() { ts.serve <- ts.Serve(l) }()
	t.Cleanup(func() {
		ts.Close()
		if err := <-ts.serve; !errors.Is(err, ErrServerClosed) {
			t.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
		checkNoGoroutines(t)
	})
	return ts
}

// checkNoGoroutines fails if a goroutine running this package's server
// code is still alive shortly after; like goleak, but for this package.
func checkNoGoroutines(t testing.TB) {
	t.Helper()
	var left []string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		left = packageGoroutines()
		if len(left) == 0 {
			return
		}
	}
	t.Errorf("%d goroutines left:\n%s", len(left), strings.Join(left, "\n\n"))
}

func packageGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, fn := range []string{"session.(*Server).", "session.(*Session).", "session.(*connection)."} {
			if strings.Contains(g, fn) {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// waitFor polls cond until it holds.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// detached reports whether s has no connection.
func (s *Session) detached() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn == nil
}

// retainedSeqs returns the sequence numbers kept for replay.
func (s *Session) retainedSeqs() []uint32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []uint32
	for _, f := range s.retained {
		out = append(out, f.seq)
	}
	return out
}
