package peer

import (
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/meshrti/meshrti/peer/updatecond"
)

// With update conditions, a publisher offers a value every frame and only
// what changed enough goes on the wire: the subscriber reflects exactly
// what the conditions let through.
func TestUpdateConditions(t *testing.T) {
	m, doc := emptyFederation(t, 60)
	cfg := updatecond.Config{Default: updatecond.Policy{Threshold: updatecond.Threshold{Kind: updatecond.Absolute, Value: 1}}}
	pub := m.addWith("pub", doc, func(c *Config) { c.UpdateConditions = &cfg })
	sub := m.add("sub", doc)
	h := handles(t, pub)
	obj := vehicleFlow(t, pub, sub, h, 5*time.Second, h.position)
	// A ramp of 0.25 a frame: a value passes every fourth frame (it moved
	// by at least 1 since the last one sent), 25 of 100 plus the first.
	const frames = 100
	for i := range frames {
		v := binary.BigEndian.AppendUint64(nil, math.Float64bits(float64(i)*0.25))
		if err := pub.UpdateAttributeValues(obj, AttributeValues{h.position: v}, nil); err != nil {
			t.Fatal(err)
		}
	}
	st := pub.UpdateConditionStats()
	if st.Offered != frames || st.Sent != 25 {
		t.Fatalf("offered %d, sent %d; want %d and 25", st.Offered, st.Sent, frames)
	}
	var last float64
	for range st.Sent {
		ev, _ := waitFor(t, sub, 5*time.Second, isType[ReflectAttributeValues])
		last = math.Float64frombits(binary.BigEndian.Uint64(ev.(ReflectAttributeValues).Values[h.position]))
	}
	if last != 24 {
		t.Errorf("last reflected %v, want 24", last)
	}
	time.Sleep(20 * time.Millisecond)
	if n := sub.Pending(); n != 0 {
		t.Errorf("%d more events, want none", n)
	}
	// A failing update changes no condition: it is refused first.
	if err := pub.UpdateAttributeValues(obj, AttributeValues{h.label: []byte("x")}, nil); err == nil {
		t.Error("an update of an attribute not owned was accepted")
	}
	if got := pub.UpdateConditionStats().Offered; got != frames {
		t.Errorf("offered %d after a refused update, want %d", got, frames)
	}
}
