package transport

import (
	"testing"
	"time"
)

// checkPoll checks that every receiving socket of u polls for want.
func checkPoll(t *testing.T, u *UDP, want time.Duration) {
	t.Helper()
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.socks) == 0 {
		t.Fatal("no receiving socket")
	}
	for _, s := range u.socks {
		if s.mm.poll != want {
			t.Errorf("a receiving socket polls for %v, want %v", s.mm.poll, want)
		}
	}
}
