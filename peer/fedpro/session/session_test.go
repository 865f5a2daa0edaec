package session

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestNewSession(t *testing.T) {
	h := newTestHandler()
	srv := startServer(t, Config{}, h)
	f := dialFed(t, srv.addr)
	m, err := f.open()
	if err != nil {
		t.Fatal(err)
	}
	// The status is message 1 of the session, acknowledges no HLA message
	// and gives the session id the federate quotes from now on.
	if m.lrm != tNone || len(m.body) != 4 {
		t.Errorf("status %v: want last received none and a 4-byte reason", m)
	}
	ts := h.next(t)
	if ts.s.ID() != m.sid {
		t.Errorf("Session.ID() = %x, status carries %x", ts.s.ID(), m.sid)
	}
	if st := srv.Stats(); st.Sessions != 1 || st.Opened != 1 || st.BadMessages != 0 {
		t.Errorf("Stats = %+v", st)
	}
	// A second federate gets another session, also numbered from 1.
	g := dialFed(t, srv.addr)
	g.mustOpen()
	if g.sid == f.sid {
		t.Errorf("two sessions share id %x", f.sid)
	}
	if n := srv.Sessions(); n != 2 {
		t.Errorf("Sessions() = %d, want 2", n)
	}
}

func TestNewSessionRefused(t *testing.T) {
	for _, tc := range []struct {
		name    string
		msg     []byte
		openErr error
		reason  uint32
		bad     bool
	}{
		{name: "protocol version 2", msg: encodeMsg(0, 0, tNone, tNewSession, be32(2)), reason: 1},
		{name: "out of resources", msg: encodeMsg(0, 0, tNone, tNewSession, be32(1)), openErr: fmt.Errorf("full: %w", ErrOutOfResources), reason: 2},
		{name: "Open fails", msg: encodeMsg(0, 0, tNone, tNewSession, be32(1)), openErr: errors.New("no"), reason: 99},
		{name: "session id set", msg: encodeMsg(0, 77, tNone, tNewSession, be32(1)), reason: 99, bad: true},
		{name: "no version", msg: encodeMsg(0, 0, tNone, tNewSession, nil), reason: 99, bad: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newTestHandler()
			h.openErr = tc.openErr
			srv := startServer(t, Config{}, h)
			f := dialFed(t, srv.addr)
			if err := f.write(tc.msg); err != nil {
				t.Fatal(err)
			}
			m := f.mustRead()
			if m.typ != tNewSessionStatus || m.size != 28 || m.u32(0) != tc.reason || m.seq > 0x7fffffff {
				t.Fatalf("got %v, want a new session status with reason %d and a valid sequence number", m, tc.reason)
			}
			f.expectClosed()
			st := srv.Stats()
			if st.Sessions != 0 || st.Opened != 0 || (st.BadMessages == 1) != tc.bad {
				t.Errorf("Stats = %+v", st)
			}
		})
	}
}

func TestHeartbeat(t *testing.T) {
	h := newTestHandler()
	srv := startServer(t, Config{}, h)
	f := dialFed(t, srv.addr)
	f.mustOpen()
	for i := range uint32(3) {
		hb := f.mustSend(tHeartbeat, nil)
		m := f.expect(tHeartbeatResponse, 2+i)
		if m.size != 28 || m.u32(0) != hb {
			t.Errorf("heartbeat %d answered with %v", hb, m)
		}
	}
	// MAK's client packs 0 into the last received field of a heartbeat.
	if err := f.write(encodeMsg(f.seq, f.sid, 0, tHeartbeat, nil)); err != nil {
		t.Fatal(err)
	}
	if m := f.expect(tHeartbeatResponse, 5); m.u32(0) != f.seq {
		t.Errorf("got %v", m)
	}
}

func TestHeartbeatDuringCall(t *testing.T) {
	h, release := heldCalls(func([]byte) []byte { return []byte("late") })
	srv := startServer(t, Config{}, h)
	f := dialFed(t, srv.addr)
	f.mustOpen()
	call := f.mustSend(tCallRequest, []byte("slow"))
	hb := f.mustSend(tHeartbeat, nil)
	// The heartbeat is answered while the call is still running.
	if m := f.expect(tHeartbeatResponse, 2); m.u32(0) != hb {
		t.Errorf("got %v", m)
	}
	close(release)
	if m := f.expect(tCallResponse, 3); m.u32(0) != call || string(m.body[4:]) != "late" {
		t.Errorf("got %v", m)
	}
}

// countingListener records every Write on its connections.
type countingListener struct {
	net.Listener
	mu     sync.Mutex
	writes [][]byte
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, l: l}, nil
}

type countingConn struct {
	net.Conn
	l *countingListener
}

func (c *countingConn) Write(b []byte) (int, error) {
	c.l.mu.Lock()
	c.l.writes = append(c.l.writes, bytes.Clone(b))
	c.l.mu.Unlock()
	return c.Conn.Write(b)
}

func TestCallRoundTrip(t *testing.T) {
	h := newTestHandler()
	h.call = func(_ *testSession, p []byte) []byte {
		if len(p) == 0 {
			return nil
		}
		return append([]byte("re:"), p...)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &countingListener{Listener: l}
	srv := serveOn(t, Config{}, h, cl)
	f := dialFed(t, srv.addr)
	f.mustOpen()
	ts := h.next(t)

	// One call at a time.
	want := []string{}
	next := uint32(2)
	for i := range 5 {
		p := fmt.Sprintf("call %d", i)
		want = append(want, p)
		seq := f.mustSend(tCallRequest, []byte(p))
		m := f.expect(tCallResponse, next)
		next++
		if m.u32(0) != seq || string(m.body[4:]) != "re:"+p || m.size != uint32(28+len(p)+3) {
			t.Errorf("call %d (seq %d) answered with %v", i, seq, m)
		}
		if m.lrm != seq {
			t.Errorf("response %v: last received %d, want the call's %d", m, m.lrm, seq)
		}
	}
	// Pipelined calls are handled one at a time, in order, and each
	// response names its request.
	var seqs []uint32
	for i := range 20 {
		p := fmt.Sprintf("pipelined %d", i)
		want = append(want, p)
		seqs = append(seqs, f.mustSend(tCallRequest, []byte(p)))
	}
	for i, seq := range seqs {
		m := f.expect(tCallResponse, next)
		next++
		if m.u32(0) != seq || string(m.body[4:]) != fmt.Sprintf("re:pipelined %d", i) {
			t.Errorf("pipelined call %d answered with %v", seq, m)
		}
	}
	// An empty payload both ways.
	seq := f.mustSend(tCallRequest, nil)
	want = append(want, "")
	if m := f.expect(tCallResponse, next); m.size != 28 || m.u32(0) != seq {
		t.Errorf("got %v", m)
	}
	if got := ts.callLog(); !slices.Equal(got, want) {
		t.Errorf("handler saw %q, want %q", got, want)
	}
	if ts.overlap.Load() {
		t.Error("calls ran concurrently")
	}

	// Every Write carried whole messages (those queued together share
	// one), and the writes carried every message once, in sequence order.
	cl.mu.Lock()
	defer cl.mu.Unlock()
	want1 := uint32(1)
	for i, w := range cl.writes {
		if len(w) == 0 {
			t.Errorf("write %d is empty", i)
		}
		for len(w) > 0 {
			if len(w) < 24 || binary.BigEndian.Uint32(w) < 24 || int(binary.BigEndian.Uint32(w)) > len(w) {
				t.Fatalf("write %d splits a message: %d bytes left, % x", i, len(w), w[:min(len(w), 24)])
			}
			if seq := binary.BigEndian.Uint32(w[4:]); seq != want1 {
				t.Errorf("write %d: message %d, want %d", i, seq, want1)
			}
			want1++
			w = w[binary.BigEndian.Uint32(w):]
		}
	}
	if want1-1 != next { // next: the empty call's response
		t.Errorf("the writes carried %d messages, want %d", want1-1, next)
	}
}

func TestCallbacks(t *testing.T) {
	h := newTestHandler()
	h.call = func(ts *testSession, p []byte) []byte {
		// Callbacks pushed during a call reach the federate before the
		// response.
		for i := range 3 {
			if err := ts.s.PushCallback([]byte(fmt.Sprintf("%s/cb%d", p, i))); err != nil {
				panic(err)
			}
		}
		return []byte("done")
	}
	_, f, ts := openedSession(t, Config{}, h)

	call := f.mustSend(tCallRequest, []byte("c"))
	for i := range uint32(3) {
		if m := f.expect(tCallbackRequest, 2+i); string(m.body) != fmt.Sprintf("c/cb%d", i) {
			t.Errorf("got %v", m)
		}
	}
	if m := f.expect(tCallResponse, 5); m.u32(0) != call || string(m.body[4:]) != "done" {
		t.Errorf("got %v", m)
	}

	// Callbacks pushed between calls, none acknowledged: delivery never
	// waits for the federate's responses.
	const n = 300
	for i := range n {
		if err := ts.s.PushCallback([]byte(fmt.Sprint("after ", i))); err != nil {
			t.Fatal(err)
		}
	}
	for i := range uint32(n) {
		if m := f.expect(tCallbackRequest, 6+i); string(m.body) != fmt.Sprint("after ", i) {
			t.Fatalf("got %v", m)
		}
	}

	// Both acknowledgement styles reach a CallbackResponder: MAK's bare
	// header numbered with the callback's sequence number, and Pitch's
	// callback response carrying the number and a CallbackResponse.
	if err := f.write(encodeMsg(6, f.sid, f.lastHLA, tCallbackResponse, nil)); err != nil {
		t.Fatal(err)
	}
	f.mustSend(tCallbackResponse, append(be32(7), "ok"...))
	for _, want := range []cbResp{{6, ""}, {7, "ok"}} {
		select {
		case got := <-ts.cbs:
			if got != want {
				t.Errorf("callback response %+v, want %+v", got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no callback response %+v", want)
		}
	}
	// The session goes on after them.
	hb := f.mustSend(tHeartbeat, nil)
	if m := f.expect(tHeartbeatResponse, 6+n); m.u32(0) != hb {
		t.Errorf("got %v", m)
	}

	// After the session ends, PushCallback says so.
	f.mustSend(tTerminateSession, nil)
	f.expect(tSessionTerminated, 7+n)
	ts.waitClosed(t)
	if err := ts.s.PushCallback([]byte("x")); !errors.Is(err, ErrSessionClosed) || !errors.Is(err, ErrTerminated) {
		t.Errorf("PushCallback after terminate = %v", err)
	}
}

func TestTerminate(t *testing.T) {
	h, release := heldCalls(func(p []byte) []byte { return p })
	srv, f, ts := openedSession(t, Config{}, h)

	// Terminate right after a call still running: the call is answered
	// first, then the terminate, then the connection closes.
	call := f.mustSend(tCallRequest, []byte("last"))
	f.mustSend(tTerminateSession, nil)
	time.Sleep(20 * time.Millisecond)
	close(release)
	if m := f.expect(tCallResponse, 2); m.u32(0) != call {
		t.Errorf("got %v", m)
	}
	if m := f.expect(tSessionTerminated, 3); m.size != 24 {
		t.Errorf("got %v", m)
	}
	f.expectClosed()
	if err := ts.waitClosed(t); !errors.Is(err, ErrTerminated) {
		t.Errorf("Closed(%v), want ErrTerminated", err)
	}
	if n := srv.Sessions(); n != 0 {
		t.Errorf("Sessions() = %d after terminate", n)
	}
	if n := ts.nClose.Load(); n != 1 {
		t.Errorf("Closed called %d times", n)
	}
	// The session cannot be resumed.
	if m := f.resume(tNone); m.u32(0) != 1 {
		t.Errorf("resume after terminate: %v, want status 1", m)
	}
}

func TestResumeReplay(t *testing.T) {
	h := newTestHandler()
	inCall := make(chan struct{}, 1)
	release := make(chan struct{})
	h.call = func(ts *testSession, p []byte) []byte {
		if string(p) == "c2" {
			inCall <- struct{}{}
			<-release
		}
		return append([]byte("re:"), p...)
	}
	srv, f, ts := openedSession(t, Config{ResumeWindow: 10 * time.Second}, h)
	got := map[string]int{} // every HLA message received, by content

	record := func(m wireMsg) {
		switch m.typ {
		case tCallbackRequest:
			got[string(m.body)]++
		case tCallResponse:
			got[fmt.Sprintf("%d:%s", m.u32(0), m.body[4:])]++
		}
	}
	c1 := f.mustSend(tCallRequest, []byte("c1"))
	record(f.expect(tCallResponse, 2))
	for i := 1; i <= 5; i++ {
		ts.s.PushCallback([]byte(fmt.Sprint("cb", i))) // 3..7
	}
	record(f.expect(tCallbackRequest, 3))
	record(f.expect(tCallbackRequest, 4))
	// This call acknowledges up to message 4, and is still running when
	// the connection drops, with callbacks 5 to 7 unread.
	c2 := f.mustSend(tCallRequest, []byte("c2"))
	<-inCall
	waitFor(t, "acknowledgement", func() bool { return slices.Equal(ts.s.retainedSeqs(), []uint32{5, 6, 7}) })
	f.nc.Close()
	waitFor(t, "the session to notice the drop", ts.s.detached)

	// While the federate is away the call completes and a callback is
	// pushed; both are kept.
	close(release)
	waitFor(t, "the late response", func() bool { return len(ts.s.retainedSeqs()) == 4 })
	ts.s.PushCallback([]byte("cb6")) // 9
	if seqs := ts.s.retainedSeqs(); !slices.Equal(seqs, []uint32{5, 6, 7, 8, 9}) {
		t.Fatalf("retained %v", seqs)
	}

	m := f.resume(1)
	if m.u32(0) != 0 || m.u32(1) != c2 || m.seq != 10 || m.sid != f.sid {
		t.Fatalf("resume status %v: want ok, last received federate message %d, seq 10", m, c2)
	}
	// The replay: exactly the HLA messages after 4, with their numbers.
	for _, seq := range []uint32{5, 6, 7} {
		record(f.expect(tCallbackRequest, seq))
	}
	resp := f.expect(tCallResponse, 8)
	if resp.u32(0) != c2 {
		t.Errorf("replayed response %v answers %d, want %d", resp, resp.u32(0), c2)
	}
	record(resp)
	record(f.expect(tCallbackRequest, 9))
	// New messages continue after the resume status.
	ts.s.PushCallback([]byte("cb7"))
	record(f.expect(tCallbackRequest, 11))

	// The federate replays c2, which the session had: it is dropped.
	if err := f.write(encodeMsg(c2, f.sid, f.lastHLA, tCallRequest, []byte("c2"))); err != nil {
		t.Fatal(err)
	}
	c3 := f.mustSend(tCallRequest, []byte("c3"))
	if c3 != c2+1 {
		t.Fatalf("c3 = %d", c3)
	}
	record(f.expect(tCallResponse, 12))

	want := map[string]int{
		fmt.Sprintf("%d:re:c1", c1): 1, fmt.Sprintf("%d:re:c2", c2): 1, fmt.Sprintf("%d:re:c3", c3): 1,
		"cb1": 1, "cb2": 1, "cb3": 1, "cb4": 1, "cb5": 1, "cb6": 1, "cb7": 1,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("received %v\nwant %v", got, want)
	}
	if calls := ts.callLog(); !slices.Equal(calls, []string{"c1", "c2", "c3"}) {
		t.Errorf("handler saw %q", calls)
	}
	if st := srv.Stats(); st.Resumed != 1 || st.BadMessages != 0 || st.Sessions != 1 {
		t.Errorf("Stats = %+v", st)
	}
}

// TestResumeRepeatedly drops the connection at random points while
// callbacks stream, and checks that each arrives once, in order.
func TestResumeRepeatedly(t *testing.T) {
	h := newTestHandler()
	srv, f, ts := openedSession(t, Config{}, h)

	const n = 2000
	pushed := make(chan struct{})
	go func() {
		defer close(pushed)
		for i := range n {
			if err := ts.s.PushCallback([]byte(fmt.Sprint(i))); err != nil {
				t.Error(err)
				return
			}
			if i%100 == 0 {
				time.Sleep(time.Millisecond)
			}
		}
	}()
	next := 0
	drops := 0
	for next < n {
		m := f.mustRead()
		if m.typ == tHeartbeatResponse {
			continue
		}
		if m.typ != tCallbackRequest || string(m.body) != fmt.Sprint(next) {
			t.Fatalf("got %v, want callback %d", m, next)
		}
		next++
		if next%97 == 0 {
			// Acknowledge now and then, so the session frees what it holds.
			f.mustSend(tHeartbeat, nil)
		}
		if next%331 == 0 {
			drops++
			if m := f.resume(1); m.u32(0) != 0 {
				t.Fatalf("resume %d refused: %v", drops, m)
			}
		}
	}
	<-pushed
	if st := srv.Stats(); st.Resumed != uint64(drops) {
		t.Errorf("Stats = %+v after %d drops", st, drops)
	}
	// Everything is acknowledged with the next message; nothing is kept.
	f.mustSend(tHeartbeat, nil)
	waitFor(t, "the replay buffer to empty", func() bool { return len(ts.s.retainedSeqs()) == 0 })
}

func TestResumeTakeover(t *testing.T) {
	h := newTestHandler()
	srv, f, ts := openedSession(t, Config{}, h)
	// A resume on a second connection while the first still looks alive
	// takes the session over and closes the first.
	old := f.nc
	g := &fed{t: t, addr: srv.addr, sid: f.sid, seq: f.seq, lastHLA: tNone}
	if err := g.redial(); err != nil {
		t.Fatal(err)
	}
	defer g.nc.Close()
	if err := g.write(encodeMsg(tNone, g.sid, tNone, tResumeRequest, be32(tNone, tNone))); err != nil {
		t.Fatal(err)
	}
	if m := g.expect(tResumeStatus, 2); m.u32(0) != 0 || m.u32(1) != tNone {
		t.Fatalf("resume status %v", m)
	}
	f.nc = old
	f.expectClosed()
	g.mustSend(tCallRequest, []byte("x"))
	g.expect(tCallResponse, 3)
	if srv.Sessions() != 1 || ts.nClose.Load() != 0 {
		t.Error("takeover ended the session")
	}
}

func TestResumeExpired(t *testing.T) {
	h := newTestHandler()
	srv, f, ts := openedSession(t, Config{ResumeWindow: 100 * time.Millisecond}, h)
	f.nc.Close()
	if err := ts.waitClosed(t); !errors.Is(err, ErrExpired) {
		t.Fatalf("Closed(%v), want ErrExpired", err)
	}
	if n := srv.Sessions(); n != 0 {
		t.Errorf("Sessions() = %d", n)
	}
	if m := f.resume(tNone); m.u32(0) != 1 || m.u32(1) != tNone {
		t.Errorf("resume after expiry: %v, want status 1 (invalid session)", m)
	}
	f.expectClosed()
	if st := srv.Stats(); st.RefusedResumes != 1 {
		t.Errorf("Stats = %+v", st)
	}
	if !srv.log.has("refused (status 1): session ended: session: not resumed within the resume window") {
		t.Error("the refusal does not say why")
	}
}

func TestResumeWindowNegative(t *testing.T) {
	h := newTestHandler()
	_, f, ts := openedSession(t, Config{ResumeWindow: -1}, h)
	f.nc.Close()
	if err := ts.waitClosed(t); !errors.Is(err, ErrConnectionLost) {
		t.Fatalf("Closed(%v), want ErrConnectionLost", err)
	}
}

func TestResumeUnknownSession(t *testing.T) {
	h := newTestHandler()
	srv := startServer(t, Config{}, h)
	f := dialFed(t, srv.addr)
	f.sid = 0x1234567890
	if m := f.resume(tNone); m.u32(0) != 1 || m.sid != f.sid {
		t.Errorf("got %v, want status 1 (invalid session)", m)
	}
	f.expectClosed()
	if st := srv.Stats(); st.RefusedResumes != 1 || st.Sessions != 0 {
		t.Errorf("Stats = %+v", st)
	}
	if !srv.log.has("unknown session") {
		t.Error("the refusal does not say why")
	}
	// A garbled resume request.
	if err := f.redial(); err != nil {
		t.Fatal(err)
	}
	if err := f.write(encodeMsg(tNone, f.sid, tNone, tResumeRequest, be32(1))); err != nil {
		t.Fatal(err)
	}
	if m := f.mustRead(); m.typ != tResumeStatus || m.u32(0) != 99 {
		t.Errorf("got %v, want status 99", m)
	}
	f.expectClosed()
	if st := srv.Stats(); st.BadMessages != 1 {
		t.Errorf("Stats = %+v", st)
	}
}

func TestResumeRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		lrr    uint32 // last received RTI message claimed
		oldest uint32
		status uint32
	}{
		// Messages 2 and 3 were acknowledged and freed: a federate that
		// says it has only 2 cannot be served.
		{name: "freed", lrr: 2, oldest: 1, status: 2},
		{name: "none received but freed", lrr: tNone, oldest: 1, status: 2},
		{name: "beyond sent", lrr: 40, oldest: 1, status: 99},
		// The federate no longer holds message 3 onwards, but the
		// session received only up to 2.
		{name: "federate lost messages", lrr: 3, oldest: 4, status: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newTestHandler()
			_, f, ts := openedSession(t, Config{}, h)
			ts.s.PushCallback([]byte("a"))
			ts.s.PushCallback([]byte("b"))
			f.expect(tCallbackRequest, 2)
			f.expect(tCallbackRequest, 3)
			f.mustSend(tHeartbeat, nil) // acknowledges 3
			f.expect(tHeartbeatResponse, 4)
			f.mustSend(tCallRequest, []byte("x")) // 2
			f.expect(tCallResponse, 5)

			f.lastHLA = tc.lrr
			if m := f.resume(tc.oldest); m.u32(0) != tc.status {
				t.Fatalf("resume status %v, want %d", m, tc.status)
			}
			f.expectClosed()
			if err := ts.waitClosed(t); !errors.Is(err, ErrResumeRefused) {
				t.Errorf("Closed(%v), want ErrResumeRefused", err)
			}
		})
	}
}

// badCase sends bad input on an open session and expects it to end with
// ErrBadMessage (or ErrTooLarge) and a reason that contains why.
func badCase(t *testing.T, cfg Config, send func(f *fed), want error, why string) {
	t.Helper()
	h := newTestHandler()
	srv := startServer(t, cfg, h)
	// A bystander session that must keep working.
	other := dialFed(t, srv.addr)
	other.mustOpen()
	h.next(t)

	f := dialFed(t, srv.addr)
	f.mustOpen()
	ts := h.next(t)
	send(f)
	f.expectClosed()
	err := ts.waitClosed(t)
	if !errors.Is(err, want) || !strings.Contains(err.Error(), why) {
		t.Errorf("Closed(%v), want %v containing %q", err, want, why)
	}
	if st := srv.Stats(); st.BadMessages != 1 || st.Sessions != 1 {
		t.Errorf("Stats = %+v", st)
	}
	seq := other.mustSend(tCallRequest, []byte("still here"))
	if m := other.expect(tCallResponse, 2); m.u32(0) != seq {
		t.Errorf("bystander got %v", m)
	}
}

func TestGarbledMessage(t *testing.T) {
	t.Run("size smaller than header", func(t *testing.T) {
		badCase(t, Config{}, func(f *fed) {
			b := encodeMsg(1, f.sid, tNone, tCallRequest, nil)
			binary.BigEndian.PutUint32(b, 5)
			f.write(b)
		}, ErrBadMessage, "smaller than the 24-byte header")
	})
	t.Run("noise", func(t *testing.T) {
		badCase(t, Config{}, func(f *fed) {
			f.write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
		}, ErrBadMessage, "")
	})
	t.Run("short callback response", func(t *testing.T) {
		badCase(t, Config{}, func(f *fed) { f.mustSend(tCallbackResponse, []byte{1, 2}) }, ErrBadMessage, "body of 2 bytes")
	})
	t.Run("before a session", func(t *testing.T) {
		h := newTestHandler()
		srv := startServer(t, Config{}, h)
		f := dialFed(t, srv.addr)
		f.write([]byte("\x00\x00\x00\x01garbage garbage garbage garbage"))
		f.expectClosed()
		g := dialFed(t, srv.addr)
		g.write(encodeMsg(1, 0, tNone, tCallRequest, []byte("no session")))
		g.expectClosed()
		if st := srv.Stats(); st.BadMessages != 2 || st.Opened != 0 {
			t.Errorf("Stats = %+v", st)
		}
		// And the server still opens sessions.
		dialFed(t, srv.addr).mustOpen()
	})
}

func TestWrongMessageType(t *testing.T) {
	for _, tc := range []struct {
		typ uint32
		why string
	}{
		{99, "unknown message type 99"},
		{tCallResponse, "goes from the RTI to the federate"},
		{tSessionTerminated, "goes from the RTI to the federate"},
		{tNewSession, "already carries a session"},
	} {
		t.Run(fmt.Sprint(tc.typ), func(t *testing.T) {
			badCase(t, Config{}, func(f *fed) { f.mustSend(tc.typ, be32(1)) }, ErrBadMessage, tc.why)
		})
	}
}

func TestOversizedMessage(t *testing.T) {
	t.Run("over", func(t *testing.T) {
		badCase(t, Config{MaxMessage: 1024}, func(f *fed) {
			// Only the header: the session ends without waiting for the body.
			b := encodeMsg(1, f.sid, tNone, tCallRequest, nil)
			binary.BigEndian.PutUint32(b, 1025)
			f.write(b)
		}, ErrTooLarge, "1025 bytes, limit 1024")
	})
	t.Run("at the limit", func(t *testing.T) {
		h := newTestHandler()
		srv := startServer(t, Config{MaxMessage: 1024}, h)
		f := dialFed(t, srv.addr)
		f.mustOpen()
		seq := f.mustSend(tCallRequest, bytes.Repeat([]byte{'x'}, 1000))
		if m := f.expect(tCallResponse, 2); m.u32(0) != seq || len(m.body) != 1007 {
			t.Errorf("got %v", m)
		}
	})
	t.Run("large body arrives slowly", func(t *testing.T) {
		h := newTestHandler()
		srv := startServer(t, Config{}, h)
		f := dialFed(t, srv.addr)
		f.mustOpen()
		p := bytes.Repeat([]byte("0123456789abcdef"), 300<<10/16)
		b := encodeMsg(f.seq, f.sid, tNone, tCallRequest, p)
		for len(b) > 0 {
			n := min(len(b), 50<<10)
			f.write(b[:n])
			b = b[n:]
			time.Sleep(time.Millisecond)
		}
		if m := f.expect(tCallResponse, 2); m.u32(0) != 1 || !bytes.Equal(m.body[7:], p) {
			t.Errorf("got a response of %d bytes", len(m.body))
		}
	})
}

func TestWrongSequenceNumber(t *testing.T) {
	for _, tc := range []struct {
		name string
		send func(f *fed)
		why  string
	}{
		{"no sequence number", func(f *fed) {
			f.write(encodeMsg(tNone, f.sid, tNone, tCallRequest, nil))
		}, "sequence number none"},
		{"going back", func(f *fed) {
			f.write(encodeMsg(5, f.sid, tNone, tCallRequest, nil))
			f.expect(tCallResponse, 2)
			f.write(encodeMsg(3, f.sid, tNone, tHeartbeat, nil))
		}, "sequence number 3 after 5"},
		{"acknowledges unsent message", func(f *fed) {
			f.write(encodeMsg(1, f.sid, 50, tHeartbeat, nil))
		}, "acknowledges RTI message 50, but the last one sent is 1"},
		{"answers unsent callback", func(f *fed) {
			f.mustSend(tCallbackResponse, be32(9))
		}, "to callback 9"},
		{"wrong session", func(f *fed) {
			f.write(encodeMsg(1, f.sid+1, tNone, tHeartbeat, nil))
		}, "on the connection of session"},
	} {
		t.Run(tc.name, func(t *testing.T) { badCase(t, Config{}, tc.send, ErrBadMessage, tc.why) })
	}
}

func TestHeartbeatTimeout(t *testing.T) {
	h := newTestHandler()
	h.call = func(ts *testSession, p []byte) []byte {
		time.Sleep(500 * time.Millisecond)
		return p
	}
	srv, f, ts := openedSession(t, Config{HeartbeatTimeout: 200 * time.Millisecond}, h)
	// Heartbeats keep the session alive...
	for range 5 {
		time.Sleep(50 * time.Millisecond)
		f.mustSend(tHeartbeat, nil)
		f.mustRead()
	}
	// ...and so does waiting, silent, for a long call...
	seq := f.mustSend(tCallRequest, []byte("long"))
	if m := f.expect(tCallResponse, 7); m.u32(0) != seq {
		t.Errorf("got %v", m)
	}
	// ...but silence ends it.
	if err := ts.waitClosed(t); !errors.Is(err, ErrHeartbeatTimeout) {
		t.Fatalf("Closed(%v), want ErrHeartbeatTimeout", err)
	}
	f.expectClosed()
	// So does a message that stops halfway, call or not.
	f = dialFed(t, srv.addr)
	f.mustOpen()
	ts = h.next(t)
	f.mustSend(tCallRequest, []byte("long"))
	f.write(encodeMsg(f.seq, f.sid, tNone, tHeartbeat, nil)[:10])
	if err := ts.waitClosed(t); !errors.Is(err, ErrHeartbeatTimeout) {
		t.Fatalf("Closed(%v), want ErrHeartbeatTimeout", err)
	}
	// A connection that never speaks is closed too.
	g := dialFed(t, srv.addr)
	g.expectClosed()
}

// A federate that acknowledges nothing while callbacks pile up: past
// MaxBacklog bytes its session ends with ErrBacklog, and the server
// serves the next session; acknowledged callbacks are freed and do not
// count.
func TestBacklogBound(t *testing.T) {
	h := newTestHandler()
	srv, f, ts := openedSession(t, Config{MaxBacklog: 64 << 10}, h)
	payload := bytes.Repeat([]byte("x"), 1000)
	// Acknowledged as they come, far more than the bound passes.
	for i := range 200 {
		if err := ts.s.PushCallback(payload); err != nil {
			t.Fatalf("callback %d: %v", i, err)
		}
		f.mustRead()
		if i%10 == 9 {
			f.mustSend(tHeartbeat, nil) // carries the last received number
			f.mustRead()
		}
	}
	// Unacknowledged: the session ends at the bound.
	var err error
	n := 0
	for ; n < 1000 && err == nil; n++ {
		err = ts.s.PushCallback(payload)
	}
	if !errors.Is(err, ErrSessionClosed) || !errors.Is(err, ErrBacklog) {
		t.Fatalf("after %d unacknowledged callbacks: %v, want ErrBacklog", n, err)
	}
	if n > 70 {
		t.Errorf("%d callbacks of 1000 bytes passed a 64 KiB bound", n)
	}
	if err := ts.waitClosed(t); !errors.Is(err, ErrBacklog) {
		t.Errorf("Closed(%v), want ErrBacklog", err)
	}
	g := dialFed(t, srv.addr)
	g.mustOpen()
	h.next(t)
}

func TestManyConcurrentSessions(t *testing.T) {
	h := newTestHandler()
	h.call = func(ts *testSession, p []byte) []byte {
		ts.s.PushCallback(append([]byte("cb:"), p...))
		return append([]byte("re:"), p...)
	}
	srv := startServer(t, Config{}, h)
	const sessions, calls = 64, 20
	var wg sync.WaitGroup
	for i := range sessions {
		wg.Go(func() {
			if err := runFederate(srv.addr, i, calls); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for range sessions {
		ts := h.next(t)
		if err := ts.waitClosed(t); !errors.Is(err, ErrTerminated) {
			t.Errorf("Closed(%v)", err)
		}
		if got := len(ts.callLog()); got != calls {
			t.Errorf("session handled %d calls", got)
		}
	}
	if st := srv.Stats(); st.Sessions != 0 || st.Opened != sessions || st.BadMessages != 0 {
		t.Errorf("Stats = %+v", st)
	}
}

// runFederate runs one session from a goroutine of its own.
func runFederate(addr string, id, calls int) error {
	f := &fed{addr: addr, seq: 1, lastHLA: tNone}
	if err := f.redial(); err != nil {
		return err
	}
	defer f.nc.Close()
	if _, err := f.open(); err != nil {
		return err
	}
	want := uint32(2)
	next := func(typ uint32) (wireMsg, error) {
		m, err := f.read()
		if err == nil && (m.typ != typ || m.seq != want || m.sid != f.sid) {
			err = fmt.Errorf("federate %d: got %v, want type %d seq %d", id, m, typ, want)
		}
		want++
		return m, err
	}
	for i := range calls {
		p := fmt.Sprintf("%d/%d", id, i)
		seq, err := f.send(tCallRequest, []byte(p))
		if err != nil {
			return err
		}
		if m, err := next(tCallbackRequest); err != nil || string(m.body) != "cb:"+p {
			return fmt.Errorf("callback %v: %v", m, err)
		}
		if m, err := next(tCallResponse); err != nil || m.u32(0) != seq || string(m.body[4:]) != "re:"+p {
			return fmt.Errorf("response %v: %v", m, err)
		}
		if i%5 == 0 {
			if _, err := f.send(tHeartbeat, nil); err != nil {
				return err
			}
			if _, err := next(tHeartbeatResponse); err != nil {
				return err
			}
		}
	}
	if _, err := f.send(tTerminateSession, nil); err != nil {
		return err
	}
	if _, err := next(tSessionTerminated); err != nil {
		return err
	}
	if m, err := f.read(); err == nil {
		return fmt.Errorf("federate %d: got %v after the session terminated", id, m)
	}
	return nil
}

func TestCloseWithSessionsOpen(t *testing.T) {
	h := newTestHandler()
	started := make(chan struct{}, 8)
	h.call = func(ts *testSession, p []byte) []byte {
		started <- struct{}{}
		time.Sleep(50 * time.Millisecond)
		return p
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(Config{}, h)
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(l) }()

	var feds []*fed
	var sessions []*testSession
	for i := range 6 {
		f := dialFed(t, l.Addr().String())
		f.mustOpen()
		feds = append(feds, f)
		sessions = append(sessions, h.next(t))
		if i < 2 {
			f.mustSend(tCallRequest, []byte("busy")) // still running at Close
		}
	}
	// One session is waiting for a resume.
	feds[5].nc.Close()
	waitFor(t, "the drop", sessions[5].s.detached)
	<-started
	<-started

	if err := srv.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
	// Close returned: every session is closed, every goroutine gone.
	for i, ts := range sessions {
		select {
		case err := <-ts.closed:
			if !errors.Is(err, ErrServerClosed) {
				t.Errorf("session %d: Closed(%v)", i, err)
			}
		default:
			t.Errorf("session %d not closed when Close returned", i)
		}
	}
	if err := <-serveErr; !errors.Is(err, ErrServerClosed) {
		t.Errorf("Serve = %v", err)
	}
	// Their goroutines are done; give them a moment to return.
	checkNoGoroutines(t)
	for _, f := range feds[:5] {
		f.expectClosed()
	}
	if n := srv.Sessions(); n != 0 {
		t.Errorf("Sessions() = %d", n)
	}
	if err := srv.Serve(l); !errors.Is(err, ErrServerClosed) {
		t.Errorf("Serve after Close = %v", err)
	}
	if err := sessions[0].s.PushCallback(nil); !errors.Is(err, ErrServerClosed) {
		t.Errorf("PushCallback after Close = %v", err)
	}
	if _, err := net.DialTimeout("tcp", l.Addr().String(), time.Second); err == nil {
		t.Error("listener still open")
	}
	srv.Close() // twice is fine
}

func TestConfigValidate(t *testing.T) {
	for _, cfg := range []Config{{MaxMessage: -1}, {MaxMessage: 10}, {HeartbeatTimeout: -time.Second}} {
		if err := cfg.Validate(); err == nil {
			t.Errorf("%+v: Validate = nil", cfg)
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		if err := NewServer(cfg, newTestHandler()).Serve(l); err == nil {
			t.Errorf("%+v: Serve = nil", cfg)
		}
		l.Close()
	}
	if err := (Config{}).Validate(); err != nil {
		t.Errorf("zero Config: %v", err)
	}
}
