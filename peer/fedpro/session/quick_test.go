package session

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// goid is the id of the calling goroutine.
func goid() string {
	var b [64]byte
	f := strings.Fields(string(b[:runtime.Stack(b[:], false)]))
	return f[1] // "goroutine 123 [running]:"
}

// A QuickCaller's quick calls and the callback responses run on the
// connection's reader while nothing else of the session's is queued or
// running; behind a call that runs, they wait their turn on the
// session's goroutine. The order and the one-at-a-time guarantee hold,
// and heartbeats are still answered during a slow call.
func TestQuickCalls(t *testing.T) {
	h := newTestHandler()
	h.quick = func(p []byte) bool { return bytes.HasPrefix(p, []byte("quick")) }
	release := make(chan struct{})
	var mu sync.Mutex
	ran := map[string]string{} // call: the goroutine it ran on
	h.call = func(_ *testSession, p []byte) []byte {
		mu.Lock()
		ran[string(p)] = goid()
		mu.Unlock()
		if string(p) == "slow" {
			<-release
		}
		return append([]byte("re:"), p...)
	}
	_, f, ts := openedSession(t, Config{}, h)
	next := uint32(2)
	answered := func(seq uint32, p string) {
		t.Helper()
		if m := f.expect(tCallResponse, next); m.u32(0) != seq || string(m.body[4:]) != "re:"+p {
			t.Errorf("%s answered with %v", p, m)
		}
		next++
	}
	q0 := f.mustSend(tCallRequest, []byte("quick 0"))
	answered(q0, "quick 0")
	slow := f.mustSend(tCallRequest, []byte("slow"))
	q1 := f.mustSend(tCallRequest, []byte("quick 1"))
	q2 := f.mustSend(tCallRequest, []byte("quick 2"))
	hb := f.mustSend(tHeartbeat, nil)
	if m := f.expect(tHeartbeatResponse, next); m.u32(0) != hb {
		t.Errorf("got %v", m)
	}
	next++
	close(release)
	answered(slow, "slow")
	answered(q1, "quick 1")
	answered(q2, "quick 2")
	q3 := f.mustSend(tCallRequest, []byte("quick 3"))
	answered(q3, "quick 3")
	// A callback response while idle, on the reader too.
	cb, err := ts.s.PushCallbackNumbered([]byte("cb"))
	if err != nil {
		t.Fatal(err)
	}
	if m := f.expect(tCallbackRequest, next); m.seq != cb {
		t.Errorf("got %v", m)
	}
	f.mustSend(tCallbackResponse, append(be32(cb), "ok"...))
	if got := <-ts.cbs; got != (cbResp{cb, "ok"}) {
		t.Errorf("callback response %+v", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if ran["quick 0"] == ran["slow"] || ran["quick 3"] != ran["quick 0"] {
		t.Errorf("quick calls alone ran on goroutines %s and %s, the slow call on %s: want the reader's, not the session's", ran["quick 0"], ran["quick 3"], ran["slow"])
	}
	if ran["quick 1"] != ran["slow"] || ran["quick 2"] != ran["slow"] {
		t.Errorf("quick calls behind the slow one ran on %s and %s, want the session's goroutine %s", ran["quick 1"], ran["quick 2"], ran["slow"])
	}
	want := []string{"quick 0", "slow", "quick 1", "quick 2", "quick 3"}
	if got := ts.callLog(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("calls ran in the order %q, want %q", got, want)
	}
	if ts.overlap.Load() {
		t.Error("handler methods ran concurrently")
	}
}

// QueueCallback writes nothing; Flush writes what was queued, in one
// write when the connection's writer does it.
func TestQueueCallbackFlush(t *testing.T) {
	for _, counted := range []bool{false, true} {
		t.Run(fmt.Sprint("counted ", counted), func(t *testing.T) {
			h := newTestHandler()
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			cl := &countingListener{Listener: l}
			var ln net.Listener = l
			if counted { // not a *net.TCPConn: the writer writes
				ln = cl
			}
			srv := serveOn(t, Config{}, h, ln)
			f := dialFed(t, srv.addr)
			f.mustOpen()
			ts := h.next(t)
			cl.mu.Lock()
			before := len(cl.writes)
			cl.mu.Unlock()
			var seqs []uint32
			for i := range 3 {
				seq, err := ts.s.QueueCallback([]byte(fmt.Sprint("q", i)))
				if err != nil {
					t.Fatal(err)
				}
				seqs = append(seqs, seq)
			}
			cl.mu.Lock()
			if len(cl.writes) != before {
				t.Errorf("%d writes before the flush", len(cl.writes)-before)
			}
			cl.mu.Unlock()
			ts.s.Flush()
			for i, seq := range seqs {
				if m := f.expect(tCallbackRequest, seq); string(m.body) != fmt.Sprint("q", i) || seq != uint32(2+i) {
					t.Errorf("callback %d (seq %d): %v", i, seq, m)
				}
			}
			if counted {
				cl.mu.Lock()
				defer cl.mu.Unlock()
				if len(cl.writes) != before+1 || len(cl.writes[before]) != 3*(24+2) {
					t.Errorf("%d writes after the flush, want one of the three callbacks", len(cl.writes)-before)
				}
			}
		})
	}
}

// Callbacks flushed while the federate reads nothing fill the socket:
// Flush leaves the rest to the writer, which writes it once the federate
// reads, every message whole and in order.
func TestFlushFullBuffer(t *testing.T) {
	h := newTestHandler()
	_, f, ts := openedSession(t, Config{}, h)
	payload := bytes.Repeat([]byte("x"), 32<<10)
	full := func() bool {
		ts.s.mu.Lock()
		defer ts.s.mu.Unlock()
		c := ts.s.conn
		return c != nil && (c.unwritten != nil || c.writing)
	}
	n := 0
	for ; n < 4096 && !full(); n++ { // up to 128 MiB
		binary.BigEndian.PutUint32(payload, uint32(n))
		if _, err := ts.s.QueueCallback(bytes.Clone(payload)); err != nil {
			t.Fatal(err)
		}
		ts.s.Flush()
	}
	if !full() {
		t.Fatalf("%d callbacks of %d bytes never filled the socket", n, len(payload))
	}
	for i := range 10 { // and more behind the writer
		binary.BigEndian.PutUint32(payload, uint32(n+i))
		if _, err := ts.s.QueueCallback(bytes.Clone(payload)); err != nil {
			t.Fatal(err)
		}
		ts.s.Flush()
	}
	n += 10
	t.Logf("the socket filled after %d callbacks of %d bytes", n-10, len(payload))
	for i := range n {
		m := f.expect(tCallbackRequest, uint32(2+i))
		if len(m.body) != len(payload) || binary.BigEndian.Uint32(m.body) != uint32(i) || !bytes.Equal(m.body[4:], payload[4:]) {
			t.Fatalf("callback %d: %d bytes, numbered %d", i, len(m.body), binary.BigEndian.Uint32(m.body))
		}
	}
}
