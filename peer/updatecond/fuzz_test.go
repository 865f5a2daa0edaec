package updatecond

import (
	"testing"
	"time"

	"github.com/meshrti/meshrti/peer/hla"
)

// FuzzFilter offers arbitrary octets for every attribute of Tank, frame
// after frame: Filter must not panic, and its counters must add up.
func FuzzFilter(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0}, uint8(8))
	f.Add([]byte{0x40, 0x59, 0, 0, 0, 0, 0, 0, 0x40, 0x59, 0x40, 0, 0, 0, 0, 0}, uint8(8))
	f.Add([]byte{0, 0, 0, 1, 0, 0, 0, 0, 0x7f, 0xf8, 0, 0, 0, 0, 0, 1}, uint8(3))
	fx := newFixture(f)
	cls := fx.class(f, "Tank")
	attrs := cls.AllAttributes()
	f.Fuzz(func(t *testing.T, data []byte, width uint8) {
		filter := fx.filter(t, Config{})
		w := int(width%32) + 1
		var offered uint64
		for frame := 0; len(data) > 0; frame++ {
			vals := hla.AttributeValues{}
			for _, a := range attrs {
				n := min(w, len(data))
				vals[a.Handle] = data[:n]
				data = data[n:]
			}
			offered += uint64(len(vals))
			out := filter.Filter(obj(1), cls.Handle, vals, Now{Wall: time.Duration(frame) * time.Second})
			for h := range out {
				if _, ok := vals[h]; !ok {
					t.Fatalf("sent %v, which was not offered", h)
				}
			}
		}
		st := filter.Stats()
		if st.Offered != offered || st.Sent+st.Suppressed != st.Offered {
			t.Fatalf("stats %+v, offered %d", st, offered)
		}
	})
}
