package peer

import (
	"testing"
	"time"

	"github.com/meshrti/meshrti/peer/transport"
)

// TestMessagesLostReported: a subscriber misses an update, and its
// publisher is gone before it can repair it: the loss is reported as a
// MessagesLost event (and counted), never skipped in silence.
func TestMessagesLostReported(t *testing.T) {
	m, doc := emptyFederation(t, 21)
	pub, sub := m.add("pub", doc), m.add("sub", doc)
	h := handles(t, pub)
	must := mustOK(t)
	obj := labelFlow(t, pub, sub, h, 5*time.Second)
	must(pub.UpdateAttributeValues(obj, AttributeValues{h.label: []byte("1")}, nil))
	waitFor(t, sub, 5*time.Second, isType[ReflectAttributeValues])

	m.net.SetLinkFaults("pub", "sub", transport.Faults{Loss: 1})
	must(pub.UpdateAttributeValues(obj, AttributeValues{h.label: []byte("2")}, nil))
	time.Sleep(20 * time.Millisecond) // the lossy link ate it
	m.net.SetLinkFaults("pub", "sub", transport.Faults{})
	m.net.SetLinkFaults("sub", "pub", transport.Faults{Loss: 1}) // its NAKs never arrive
	must(pub.UpdateAttributeValues(obj, AttributeValues{h.label: []byte("3")}, nil))
	time.Sleep(20 * time.Millisecond) // 3 arrives; 2 is asked for in vain
	pub.Close()                       // gone with 2 unrepaired

	ev, skipped := waitFor(t, sub, 10*time.Second, isType[MessagesLost])
	if l := ev.(MessagesLost); l.Producer != pub.Handle() || l.Messages == 0 {
		t.Errorf("lost %+v", l)
	}
	if sub.Stats().Gaps == 0 {
		t.Error("gap not counted")
	}
	for _, e := range skipped {
		if r, ok := e.(ReflectAttributeValues); ok && string(r.Values[h.label]) == "2" {
			t.Error("the lost update was delivered")
		}
	}
}
