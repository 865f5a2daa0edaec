package tick

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshrti/meshrti/lbts"
)

type fakeStatus struct {
	mu sync.Mutex
	st lbts.Status
}

func (f *fakeStatus) TimeStatus() (lbts.Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.st, nil
}

// lineWriter hands each Write to a channel: WatchStalls writes a line at
// a time.
type lineWriter chan string

func (w lineWriter) Write(p []byte) (int, error) {
	w <- string(p)
	return len(p), nil
}

// A time advance that stays pending is reported once, with what holds
// it back; one that is granted is not.
func TestWatchStalls(t *testing.T) {
	f := &fakeStatus{st: lbts.Status{Time: 20, Request: lbts.TimeAdvanceRequest, Requested: 21, GALT: 20, HeldBy: 4,
		Awaiting: []lbts.FederateID{4}, Uncovered: []lbts.Uncovered{{From: 2, Group: 9, Want: 12, Have: 10}}}}
	lines := make(lineWriter, 4)
	stop := WatchStalls(f, lines, 40*time.Millisecond)
	var out string
	select {
	case out = <-lines:
	case <-time.After(5 * time.Second):
		t.Fatal("no stall line in 5 s")
	}
	time.Sleep(100 * time.Millisecond) // a second line would come by now
	stop()
	if len(lines) != 0 || !strings.HasPrefix(out, "time stalled") {
		t.Fatalf("want one stall line, got %q and %d more", out, len(lines))
	}
	for _, want := range []string{"TAR to 21", "held by 4", "awaiting [4] since a restore", "2's promise waits for group 9 seq 12 (have 10)"} {
		if !strings.Contains(out, want) {
			t.Errorf("stall line %q lacks %q", out, want)
		}
	}

	// Granted every check: never stalled.
	quiet := make(lineWriter, 4)
	g := &fakeStatus{st: lbts.Status{Request: lbts.TimeAdvanceRequest, Requested: 1}}
	stop = WatchStalls(movingStatus{g}, quiet, 40*time.Millisecond)
	time.Sleep(200 * time.Millisecond)
	stop()
	if len(quiet) != 0 {
		t.Fatalf("a federate that advances was reported: %q", <-quiet)
	}
}

// movingStatus advances its time at every look.
type movingStatus struct{ f *fakeStatus }

func (m movingStatus) TimeStatus() (lbts.Status, error) {
	m.f.mu.Lock()
	defer m.f.mu.Unlock()
	m.f.st.Time++
	m.f.st.Requested = m.f.st.Time + 1
	return m.f.st, nil
}
