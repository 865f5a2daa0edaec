package peer

import (
	"bytes"
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/meshrti/meshrti/peer/transport"
)

// TestDataPlaneUnderFaults: 20% loss, 10% duplication, reordering and
// corruption on every link, with small and fragmented (5000-byte) values,
// keyed and not: every update arrives exactly once, in order, with every
// byte intact, and the counters show that the faults happened.
func TestDataPlaneUnderFaults(t *testing.T) {
	for _, key := range [][]byte{nil, []byte("a federation key of 32 bytes....")} {
		faults := transport.Faults{Loss: 0.2, Duplicate: 0.1, Reorder: 0.2, Corrupt: 0.05, Jitter: time.Millisecond}
		m := newMemFederation(t, 0, faults, 11)
		doc := testDoc(t)
		tune := func(c *Config) { c.Key = key }
		pub := m.addWith("pub", doc, tune)
		sub := m.addWith("sub", doc, tune)
		h := handles(t, pub)
		obj := labelFlow(t, pub, sub, h, 10*time.Second)
		value := func(i int) []byte {
			n := 20
			if i%7 == 0 {
				n = 5000 // fragmented
			}
			b := make([]byte, n)
			binary.BigEndian.PutUint32(b, uint32(i))
			for j := 4; j < n; j++ {
				b[j] = byte(i*31 + j)
			}
			return b
		}
		const n = 400
		for i := range n {
			if err := pub.UpdateAttributeValues(obj, AttributeValues{h.label: value(i)}, nil); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		for want := 0; want < n; {
			ev, err := sub.Next(ctx)
			if err != nil {
				t.Fatalf("keyed %v: after %d of %d: %v\npub %+v\nsub %+v", key != nil, want, n, err, pub.Stats(), sub.Stats())
			}
			r, ok := ev.(ReflectAttributeValues)
			if !ok {
				continue
			}
			if got := r.Values[h.label]; !bytes.Equal(got, value(want)) {
				t.Fatalf("keyed %v: reflection %d carries %d bytes starting %x", key != nil, want, len(got), got[:min(8, len(got))])
			}
			want++
		}
		cancel()
		ps, ss := pub.Stats().Reliable, sub.Stats().Reliable
		if ps.Retransmits == 0 || ss.NAKs == 0 || ss.Duplicates+ss.Replayed == 0 || ss.Reassembled == 0 ||
			ss.BadChecksum+ss.AuthFailed+ps.BadChecksum+ps.AuthFailed == 0 || sub.Stats().Gaps != 0 {
			t.Errorf("keyed %v: the faults left no trace or a gap: pub %+v\nsub %+v", key != nil, ps, ss)
		}
	}
}
