package reliable

// Replay window: a sliding bitmap over frame counters, kept per sender
// (and reset with its incarnation), as in IPsec and WireGuard. The bitmap
// is a ring of 64-bit words indexed by counter; advancing the highest
// counter clears the words it passes.
const (
	replayWords = 16
	// ReplayWindow is how far behind a sender's highest frame counter an
	// authenticated frame may arrive and still be accepted (once).
	ReplayWindow = (replayWords - 1) * 64
)

type replayWindow struct {
	high uint64
	bits [replayWords]uint64
}

// accept reports whether counter c is fresh, and records it.
func (w *replayWindow) accept(c uint64) bool {
	if c == 0 {
		return false
	}
	if c > w.high {
		cur, next := w.high/64, c/64
		n := next - cur
		if n > replayWords {
			n = replayWords
		}
		for i := uint64(1); i <= n; i++ {
			w.bits[(cur+i)%replayWords] = 0
		}
		w.high = c
	} else if w.high-c >= ReplayWindow {
		return false
	}
	word, bit := &w.bits[(c/64)%replayWords], uint64(1)<<(c%64)
	if *word&bit != 0 {
		return false
	}
	*word |= bit
	return true
}
