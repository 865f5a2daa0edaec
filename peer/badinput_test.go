package peer

import (
	"bytes"
	"context"
	"encoding/binary"
	"math/rand"
	"testing"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer/internal/core"
	"github.com/meshrti/meshrti/peer/reliable"
	"github.com/meshrti/meshrti/peer/transport"
)

// keyedFederation is two federates sharing a federation key, over one
// in-memory network that an attacker endpoint can also send on.
func keyedFederation(t *testing.T, key []byte) (*transport.Network, []*Federate) {
	t.Helper()
	net := transport.NewNetwork(transport.NetworkConfig{Seed: 7})
	reg := NewMemRegistry()
	doc := testDoc(t)
	var feds []*Federate
	for _, name := range []string{"A", "B"} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		f, err := Join(ctx, Config{
			Federation: "keyed", FederateName: name, FOMModules: []*fomxml.Document{doc}, Create: true,
			Control: reg.Control("keyed"), Transport: net.Endpoint(name), Key: key, TickInterval: 2 * time.Millisecond,
		})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		feds = append(feds, f)
	}
	return net, feds
}

// Malformed, truncated and random frames, frames of another federation,
// frames with the wrong key and replayed frames are dropped and counted;
// the federates go on working.
func TestBadFramesAreDroppedAndCounted(t *testing.T) {
	key := []byte("0123456789abcdef-federation-key")
	net, feds := keyedFederation(t, key)
	a, b := feds[0], feds[1]
	h := handles(t, a)
	must := mustOK(t)
	must(b.SubscribeInteractionClass(h.honk))
	must(a.PublishInteractionClass(h.honk))

	// The attacker sends on the groups the federates use.
	evil := net.Endpoint("evil")
	defer evil.Close()
	groups := []transport.Group{core.ControlGroup, core.InteractionGroup(h.honk)}
	rnd := rand.New(rand.NewSource(1))
	send := func(frame []byte) {
		for _, g := range groups {
			must(evil.Send(g, frame))
		}
	}
	// A genuine frame from another federation with the right key, one
	// from this federation with the wrong key, and one from this
	// federation without a key.
	forge := func(federation string, k []byte) []byte {
		ep, err := reliable.New(reliable.Config{Self: 999, Incarnation: 1, Federation: federation, Key: k})
		must(err)
		ep.Join(core.InteractionGroup(h.honk))
		if _, err := ep.Send(core.InteractionGroup(h.honk), []byte("forged"), true); err != nil {
			t.Fatal(err)
		}
		rd := ep.Ready()
		var last []byte
		for _, o := range rd.Out {
			last = o.Frame
		}
		return last
	}
	otherFed := forge("another-federation", key)
	wrongKey := forge("keyed", []byte("not-the-key-at-all-0123456789"))
	noKey := forge("keyed", nil)
	before := b.Stats().Reliable
	send(nil)
	send([]byte{0x6d})
	send(bytes.Repeat([]byte{0xff}, 40))
	for i := 0; i < 50; i++ {
		junk := make([]byte, rnd.Intn(200))
		rnd.Read(junk)
		send(junk)
	}
	send(otherFed)
	send(otherFed[:len(otherFed)/2]) // truncated
	send(wrongKey)
	send(noKey)

	// The federates still talk: an interaction gets through.
	must(a.SendInteraction(h.honk, ParameterValues{h.loudness: []byte{9}}, []byte("real")))
	ev, _ := waitFor(t, b, 5*time.Second, isType[ReceiveInteraction])
	if ri := ev.(ReceiveInteraction); string(ri.Tag) != "real" {
		t.Fatalf("got %#v", ri)
	}
	after := b.Stats().Reliable
	dropped := func(name string, x, y uint64) {
		if y <= x {
			t.Errorf("%s not counted: %d before, %d after", name, x, y)
		}
	}
	dropped("malformed", before.Malformed, after.Malformed)
	dropped("wrong federation", before.WrongFederation, after.WrongFederation)
	dropped("wrong key", before.AuthFailed, after.AuthFailed)
	if after.Delivered > before.Delivered+10 {
		t.Errorf("forged frames delivered: %d -> %d", before.Delivered, after.Delivered)
	}
	// Replay: a real frame of A captured and sent again is refused.
	rep := net.Endpoint("replayer")
	defer rep.Close()
	must(rep.Join(core.InteractionGroup(h.honk)))
	must(a.SendInteraction(h.honk, ParameterValues{h.loudness: []byte{1}}, []byte("once")))
	// Capture A's data frame (kind 1), not another frame on the group.
	var captured []byte
	for captured == nil {
		select {
		case p := <-rep.Recv():
			if len(p.Data) > 40 && p.Data[3]&0x3f == 1 && binary.BigEndian.Uint64(p.Data[16:]) == uint64(a.Handle()) {
				captured = p.Data
			}
		case <-time.After(5 * time.Second):
			t.Fatal("nothing to capture")
		}
	}
	waitFor(t, b, 5*time.Second, func(ev Event) bool {
		ri, ok := ev.(ReceiveInteraction)
		return ok && string(ri.Tag) == "once"
	})
	before = b.Stats().Reliable
	for i := 0; i < 3; i++ {
		must(rep.Send(core.InteractionGroup(h.honk), captured))
	}
	deadline := time.Now().Add(5 * time.Second)
	for b.Stats().Reliable.Replayed <= before.Replayed && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := b.Stats().Reliable.Replayed; got <= before.Replayed {
		t.Errorf("replayed frames not counted (%d)", got)
	}
	if b.Pending() != 0 {
		ev, _ := waitFor(t, b, time.Second, func(Event) bool { return true })
		t.Errorf("replay produced an event: %#v", ev)
	}
}
