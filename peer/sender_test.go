package peer

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshrti/meshrti/peer/transport"
)

// senderRig is a sender with a stand-in core (its open frames are the
// messages being bundled, sealed when takeReady is asked to) and a
// transport that records each batch and can be made to hold a send
// until released.
type senderRig struct {
	mu      sync.Mutex
	s       sender
	wg      sync.WaitGroup
	open    []transport.Packet // guarded by mu: bundled, not sealed
	isBlock bool               // guarded by mu: back-pressure holds a group
	tr      *recordingTransport
}

func newSenderRig(t *testing.T, manual bool, holdBound time.Duration) *senderRig {
	r := &senderRig{tr: &recordingTransport{}}
	r.s.init(&r.mu, r, r.tr, &fedMetrics{}, manual, holdBound)
	r.s.start(&r.wg)
	t.Cleanup(func() {
		r.mu.Lock()
		last := r.s.close()
		r.mu.Unlock()
		r.s.sendInline(last)
		r.tr.release()
		r.s.wait()
		r.wg.Wait()
	})
	return r
}

func (r *senderRig) takeReady(seal bool) error {
	if seal {
		r.s.add(r.open)
		r.open = nil
	}
	return nil
}

func (r *senderRig) blocked() bool { return r.isBlock }

// turn is one turn that bundles the messages named in msgs: lock, "call
// the core", end the turn, unlock, send what the turn left to this
// goroutine. It reports whether this goroutine sent a batch.
func (r *senderRig) turn(atOnce bool, msgs ...string) bool {
	r.mu.Lock()
	for _, m := range msgs {
		r.open = append(r.open, transport.Packet{Group: 1, Data: []byte(m)})
	}
	if atOnce {
		r.s.sendAtOnce()
	}
	batch, _ := r.s.endTurn()
	r.mu.Unlock()
	r.s.sendInline(batch)
	return batch != nil
}

// recordingTransport records the batches handed to it, as strings of
// their frames' data joined by commas. While gate is set, a send waits
// for it to be closed.
type recordingTransport struct {
	mu      sync.Mutex
	batches []string
	gate    chan struct{}
	inSend  chan struct{} // closed when a send waits at the gate
}

func (tr *recordingTransport) hold() {
	tr.mu.Lock()
	tr.gate, tr.inSend = make(chan struct{}), make(chan struct{})
	tr.mu.Unlock()
}

func (tr *recordingTransport) release() {
	tr.mu.Lock()
	if tr.gate != nil {
		close(tr.gate)
		tr.gate = nil
	}
	tr.mu.Unlock()
}

func (tr *recordingTransport) SendBatch(pkts []transport.Packet) (int, error) {
	var names []string
	for _, p := range pkts {
		names = append(names, string(p.Data))
	}
	tr.mu.Lock()
	tr.batches = append(tr.batches, strings.Join(names, ","))
	gate, inSend := tr.gate, tr.inSend
	if gate == nil {
		inSend = nil
	}
	if inSend != nil {
		close(inSend) // the first send at the gate says so
		tr.inSend = nil
	}
	tr.mu.Unlock()
	if gate != nil {
		<-gate
	}
	return len(pkts), nil
}

func (tr *recordingTransport) sent() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]string(nil), tr.batches...)
}

func (tr *recordingTransport) Join(transport.Group) error         { return nil }
func (tr *recordingTransport) Leave(transport.Group) error        { return nil }
func (tr *recordingTransport) Send(transport.Group, []byte) error { panic("batches only") }
func (tr *recordingTransport) Recv() <-chan transport.Packet      { return nil }
func (tr *recordingTransport) Close() error                       { return nil }
func (tr *recordingTransport) waitSent(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b := tr.sent(); len(b) >= n || time.Now().After(deadline) {
			return b
		}
		time.Sleep(time.Millisecond)
	}
}

// A turn on a quiet data plane sends its frame itself; while that batch
// is in the transport the next turns' messages stay bundled (not
// sealed), and when it is out they leave together as the next batch,
// through the writer.
func TestSenderGroupCommit(t *testing.T) {
	r := newSenderRig(t, false, 0)
	r.tr.hold()
	inSend := r.tr.inSend
	inline := make(chan bool)
	go func() { inline <- r.turn(false, "a") }()
	<-inSend // "a" is in the transport, which holds it
	for _, m := range []string{"b", "c"} {
		if r.turn(false, m) {
			t.Fatalf("turn %s sent a batch while one was being sent", m)
		}
	}
	r.mu.Lock()
	bundled := len(r.open)
	r.mu.Unlock()
	if bundled != 2 {
		t.Fatalf("%d messages bundled while the batch was sent, want 2 (b, c)", bundled)
	}
	r.tr.release()
	if !<-inline {
		t.Fatal("the first turn on a quiet data plane did not send its frame itself")
	}
	got := r.tr.waitSent(t, 2)
	if strings.Join(got, " ") != "a b,c" {
		t.Fatalf("batches %q, want [a b,c]", got)
	}
	if led, n := r.s.led.Load(), r.s.batches.Load(); led != 1 || n != 2 {
		t.Fatalf("led %d of %d batches, want 1 of 2", led, n)
	}
}

// In a stream (the last send ended less than quietSpell ago) a turn
// hands its batch to the writer and goes on; a turn whose caller waits
// for an answer (sendAtOnce) sends its own, stream or not.
func TestSenderStreamAndAtOnce(t *testing.T) {
	r := newSenderRig(t, false, 0)
	r.mu.Lock()
	r.s.lastSend = time.Now().Add(time.Hour) // a send "just ended", for as long as the test runs
	r.mu.Unlock()
	if r.turn(false, "a") {
		t.Fatal("a turn in a stream sent its frame itself")
	}
	r.tr.waitSent(t, 1)
	// The writer has set lastSend to now after "a"; keep the stream going.
	r.mu.Lock()
	for r.s.writing {
		r.mu.Unlock()
		time.Sleep(time.Millisecond)
		r.mu.Lock()
	}
	r.s.lastSend = time.Now().Add(time.Hour)
	r.mu.Unlock()
	if !r.turn(true, "b") {
		t.Fatal("a turn that sends at once left its frame to the writer")
	}
	if got := r.tr.waitSent(t, 2); strings.Join(got, " ") != "a b" {
		t.Fatalf("batches %q, want [a b]", got)
	}
	if led := r.s.led.Load(); led != 1 {
		t.Fatalf("%d inline batches, want 1 (b)", led)
	}
}

// A call refused by back-pressure waits on the wake, which the first
// turn after which no group blocks closes, and only that one.
func TestSenderBackPressureWake(t *testing.T) {
	r := newSenderRig(t, false, 0)
	r.mu.Lock()
	r.isBlock = true
	wake := r.s.unblocked()
	r.mu.Unlock()
	r.turn(false)
	select {
	case <-wake:
		t.Fatal("woken while the group still blocks")
	default:
	}
	r.mu.Lock()
	r.isBlock = false
	r.mu.Unlock()
	r.turn(false)
	select {
	case <-wake:
	default:
		t.Fatal("not woken by a turn after which no group blocks")
	}
}

// Closing while a batch is being sent: what bundled up meanwhile is
// sealed by the closer and is the writer's last batch, sent before wait
// returns.
func TestSenderCloseSendsLast(t *testing.T) {
	r := &senderRig{tr: &recordingTransport{}}
	r.s.init(&r.mu, r, r.tr, &fedMetrics{}, false, 0)
	r.s.start(&r.wg)
	r.tr.hold()
	inSend := r.tr.inSend
	first := make(chan struct{})
	go func() {
		defer close(first)
		r.turn(false, "a")
	}()
	<-inSend
	r.turn(false, "b")
	r.mu.Lock()
	_ = r.takeReady(true) // as halt does: the core seals what it bundles
	if last := r.s.close(); last != nil {
		t.Errorf("close returned frames for its caller on a sender with a writer")
	}
	r.mu.Unlock()
	r.tr.release()
	r.s.wait()
	r.wg.Wait()
	<-first
	if got := r.tr.sent(); strings.Join(got, " ") != "a b" {
		t.Fatalf("batches %q, want [a b]", got)
	}
	if r.turn(false, "c") {
		t.Fatal("a closed sender sent a batch")
	}
}

// A manual sender starts no goroutine: every turn's frames, sealed at
// once, are its caller's to send.
func TestSenderManual(t *testing.T) {
	r := newSenderRig(t, true, 0)
	for _, m := range []string{"a", "b"} {
		if !r.turn(false, m) {
			t.Fatalf("manual turn %s left its frame to someone else", m)
		}
	}
	if got := r.tr.sent(); strings.Join(got, " ") != "a b" {
		t.Fatalf("batches %q, want [a b]", got)
	}
	if led := r.s.led.Load(); led != 0 {
		t.Fatalf("manual batches counted as led: %d", led)
	}
}
