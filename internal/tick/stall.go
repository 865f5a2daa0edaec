package tick

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/meshrti/meshrti/lbts"
)

// TimeStatuser is what WatchStalls reads: *peer.Federate.
type TimeStatuser interface {
	TimeStatus() (lbts.Status, error)
}

// WatchStalls prints a line to w, "time stalled: ...", each time fed has
// waited longer than after for a time advance that is not granted (its
// logical time and request unchanged), with what holds the grant back:
// GALT and who holds it, the members not heard from since a restore,
// and the members whose newest promise waits for messages it covers. It
// checks every after/4 until stop is called; stop waits for it to end.
func WatchStalls(fed TimeStatuser, w io.Writer, after time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tk := time.NewTicker(after / 4)
		defer tk.Stop()
		var last lbts.Status
		var since time.Time
		reported := false
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-tk.C:
				st, err := fed.TimeStatus()
				if err != nil {
					return
				}
				if st.Request == lbts.NoRequest || st.Time != last.Time || st.Requested != last.Requested || st.Request != last.Request {
					last, since, reported = st, now, false
					continue
				}
				if !reported && now.Sub(since) >= after {
					fmt.Fprintln(w, stallLine(st, now.Sub(since)))
					reported = true
				}
			}
		}
	}()
	return func() { cancel(); wg.Wait() }
}

// stallLine formats what holds a pending time advance back.
func stallLine(st lbts.Status, waited time.Duration) string {
	s := fmt.Sprintf("time stalled: %s to %v for %v at %v: galt %v held by %d, %d members, %d queued",
		st.Request, st.Requested, waited.Round(time.Second), st.Time, st.GALT, st.HeldBy, st.Members, st.Queued)
	if len(st.Awaiting) > 0 {
		s += fmt.Sprintf(", awaiting %v since a restore", st.Awaiting)
	}
	for _, u := range st.Uncovered {
		s += fmt.Sprintf(", %d's promise waits for group %d seq %d (have %d)", u.From, u.Group, u.Want, u.Have)
	}
	return s
}
