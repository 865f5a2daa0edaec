package reliable

import "testing"

// TestFrameOfApart checks that frames cut from one block are zeroed,
// apart (writing one, even appending to it, leaves the next as it
// was), and that a large frame gets memory of its own.
func TestFrameOfApart(t *testing.T) {
	var e Endpoint
	var prev []byte
	for i := range 3 * frameBlock / 100 {
		f := e.frameOf(100)
		if len(f) != 100 || cap(f) != 100 {
			t.Fatalf("frame %d: len %d cap %d, want 100 and 100", i, len(f), cap(f))
		}
		for j, c := range f {
			if c != 0 {
				t.Fatalf("frame %d: byte %d is %d, not zeroed", i, j, c)
			}
		}
		for j := range f {
			f[j] = byte(i)
		}
		if prev != nil && prev[0] != byte(i-1) {
			t.Fatalf("frame %d overwrote frame %d", i, i-1)
		}
		prev = f
		_ = append(f, 0xff) // must not reach the next frame (zeroed, above)
	}
	big := e.frameOf(frameSmall + 1)
	if len(big) != frameSmall+1 || cap(big) != frameSmall+1 {
		t.Fatalf("large frame: len %d cap %d", len(big), cap(big))
	}
}
