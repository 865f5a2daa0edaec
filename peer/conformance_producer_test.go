package peer

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer/transport"
)

// producerRecorder records the producing federate each callback of
// Dispatch conveys.
type producerRecorder struct {
	NullFederateAmbassador
	mu  sync.Mutex
	got map[string]FederateHandle
}

func (r *producerRecorder) note(what string, h FederateHandle) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got[what] = h
	return nil
}

func (r *producerRecorder) DiscoverObjectInstance(_ ObjectInstanceHandle, _ ObjectClassHandle, _ string, producer FederateHandle) error {
	return r.note("discover", producer)
}

func (r *producerRecorder) ReflectAttributeValues(_ ObjectInstanceHandle, _ AttributeValues, _ []byte, _ OrderType, info ReflectInfo) error {
	return r.note("reflect", info.Producer)
}

func (r *producerRecorder) ReceiveInteraction(_ InteractionClassHandle, _ ParameterValues, _ []byte, _ OrderType, info ReflectInfo) error {
	return r.note("receive", info.Producer)
}

func (r *producerRecorder) RemoveObjectInstance(_ ObjectInstanceHandle, _ []byte, _ OrderType, info ReflectInfo) error {
	return r.note("remove", info.Producer)
}

// switchesDoc is the test FOM with the two convey switches set to on.
func switchesDoc(t *testing.T, on bool) *fomxml.Document {
	t.Helper()
	src := testFOM
	if on {
		src = strings.Replace(src, "</objectModel>",
			`<switches><conveyRegionDesignatorSets isEnabled="true"/><conveyProducingFederate isEnabled="true"/></switches></objectModel>`, 1)
	}
	d, err := fomxml.ParseBytes("switches.xml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// The producing federate is conveyed only while the FDD's
// HLAconveyProducingFederate switch is on (1516.1 §6.9): Dispatch gives
// the zero handle to the discover, reflect, receive and remove
// callbacks while it is off (the default), the real one while it is
// on; the getters and the MOM's HLAconveyProducingFederate and
// HLAconveyRegionDesignatorSets say what the FDD set.
func TestConformanceProducingFederate(t *testing.T) {
	for _, on := range []bool{false, true} {
		t.Run(fmt.Sprintf("switch %v", on), func(t *testing.T) {
			doc := switchesDoc(t, on)
			m := &memFederation{t: t, net: transport.NewNetwork(transport.NetworkConfig{Seed: 7}), reg: NewMemRegistry(), name: "producer", dir: t.TempDir()}
			t.Cleanup(m.close)
			a, b, c := m.add("A", doc), m.add("B", doc), m.add("C", doc)
			for _, f := range []*Federate{a, b} {
				if v, err := f.GetConveyProducingFederateSwitch(); err != nil || v != on {
					t.Errorf("%s: GetConveyProducingFederateSwitch = %v, %v; want %v", f.Name(), v, err, on)
				}
				if v, err := f.GetConveyRegionDesignatorSetsSwitch(); err != nil || v != on {
					t.Errorf("%s: GetConveyRegionDesignatorSetsSwitch = %v, %v; want %v", f.Name(), v, err, on)
				}
			}

			h := handles(t, a)
			must := mustOK(t)
			must(b.SubscribeObjectClassAttributes(h.vehicle, h.label))
			must(b.SubscribeInteractionClass(h.honk))
			must(a.PublishObjectClassAttributes(h.vehicle, h.label))
			must(a.PublishInteractionClass(h.honk))

			rec := &producerRecorder{got: map[string]FederateHandle{}}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- Dispatch(ctx, b, rec) }()
			defer func() {
				cancel()
				if err := <-done; err != nil && ctx.Err() == nil {
					t.Errorf("Dispatch: %v", err)
				}
			}()
			seen := func(what string) bool {
				rec.mu.Lock()
				defer rec.mu.Unlock()
				_, ok := rec.got[what]
				return ok
			}
			waitUntil := func(what string) {
				t.Helper()
				for deadline := time.Now().Add(10 * time.Second); !seen(what); time.Sleep(2 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatalf("no %s callback in 10 s", what)
					}
				}
			}

			obj, err := a.RegisterObjectInstance(h.vehicle, "")
			must(err)
			waitUntil("discover")
			must(a.UpdateAttributeValues(obj, AttributeValues{h.label: []byte("x")}, []byte("u")))
			waitUntil("reflect")
			must(a.SendInteraction(h.honk, ParameterValues{h.loudness: []byte{0, 0, 0, 1}}, []byte("i")))
			waitUntil("receive")
			must(a.DeleteObjectInstance(obj, []byte("d")))
			waitUntil("remove")

			want := FederateHandle(0)
			if on {
				want = a.Handle()
			}
			rec.mu.Lock()
			for _, what := range []string{"discover", "reflect", "receive", "remove"} {
				if got := rec.got[what]; got != want {
					t.Errorf("%s conveyed producing federate %v, want %v (switch %v)", what, got, want, on)
				}
			}
			rec.mu.Unlock()

			// The MOM reports the switches as the FDD set them.
			v := newMOMView(t, c)
			v.subscribe()
			v.until("A's MOM instance", func() bool { return !v.handleOf(a.Name()).IsZero() })
			must(c.RequestAttributeValueUpdateForClass(v.class, nil, v.attrs()...))
			v.until("A's switches", func() bool { return v.of(a.Name())["HLAconveyProducingFederate"] != nil })
			wantSw := "Disabled"
			if on {
				wantSw = "Enabled"
			}
			for _, sw := range []string{"HLAconveyProducingFederate", "HLAconveyRegionDesignatorSets"} {
				if got := v.of(a.Name())[sw]; got != wantSw {
					t.Errorf("the MOM reports %s = %v, want %s", sw, got, wantSw)
				}
			}
		})
	}
}
