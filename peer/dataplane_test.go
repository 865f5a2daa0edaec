package peer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer/transport"
)

// unicastTune makes a memFederation federate use the in-memory unicast
// transport.
func unicastTune(c *Config) {
	c.TransportMode = TransportUnicast
	c.Transport = transport.NewMemUnicast(c.Transport.(*transport.MemEndpoint))
}

// exchange checks that an update from pub reaches every sub.
func exchange(t *testing.T, pub *Federate, subs ...*Federate) {
	t.Helper()
	h := handles(t, pub)
	for _, s := range subs {
		if err := s.SubscribeObjectClassAttributes(h.vehicle, h.position, h.label); err != nil {
			t.Fatal(err)
		}
	}
	if err := pub.PublishObjectClassAttributes(h.car, h.position, h.label); err != nil {
		t.Fatal(err)
	}
	obj, err := pub.RegisterObjectInstance(h.car, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range subs {
		waitFor(t, s, 10*time.Second, isType[DiscoverObjectInstance])
	}
	if err := pub.UpdateAttributeValues(obj, AttributeValues{h.label: []byte("red")}, nil); err != nil {
		t.Fatal(err)
	}
	for _, s := range subs {
		ev, _ := waitFor(t, s, 10*time.Second, isType[ReflectAttributeValues])
		if r := ev.(ReflectAttributeValues); string(r.Values[h.label]) != "red" {
			t.Errorf("%s reflected %+v", s.Name(), r)
		}
	}
}

// TestUnicastFederation: federates on the in-memory unicast transport
// learn each other's groups through the control plane and exchange
// updates; a lost member's announcement is dropped from the directory.
func TestUnicastFederation(t *testing.T) {
	m := &memFederation{t: t, net: transport.NewNetwork(transport.NetworkConfig{Seed: 5}), reg: NewMemRegistry(), name: "uni", dir: t.TempDir()}
	t.Cleanup(m.close)
	doc := testDoc(t)
	a := m.addWith("A", doc, unicastTune)
	b := m.addWith("B", doc, unicastTune)
	c := m.addWith("C", doc, unicastTune)
	exchange(t, a, b, c)
	dirOf := func(f *Federate) transport.DirectoryStats {
		return f.tr.(*transport.MemUnicast).DirectoryStats()
	}
	if st := dirOf(a); st.Members != 2 || st.Malformed != 0 {
		t.Errorf("A's directory: %+v, want 2 members", st)
	}
	m.reg.Crash("uni", c.Handle())
	waitFor(t, a, 10*time.Second, isType[FederateLost])
	if st := dirOf(a); st.Members != 1 || st.Removes != 1 {
		t.Errorf("A's directory after C was lost: %+v, want 1 member", st)
	}
	// A malformed announcement is dropped and counted; nothing else
	// changes.
	ctl := m.reg.Control("uni")
	if _, _, err := ctl.JoinFederate(context.Background(), JoinRequest{Name: "Bad"}); err != nil {
		t.Fatal(err)
	}
	if err := ctl.SetState(keyDataPlane, []byte("not an announcement")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for dirOf(a).Malformed == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if st := dirOf(a); st.Malformed != 1 || st.Members != 1 {
		t.Errorf("A's directory after a malformed announcement: %+v", st)
	}
}

// TestTransportModeAgreed: the creator's mode is recorded; a joiner
// asking for another one is refused with ErrTransportMismatch, one
// asking for auto adopts the federation's.
func TestTransportModeAgreed(t *testing.T) {
	m := &memFederation{t: t, net: transport.NewNetwork(transport.NetworkConfig{Seed: 6}), reg: NewMemRegistry(), name: "agree", dir: t.TempDir()}
	t.Cleanup(m.close)
	doc := testDoc(t)
	a := m.addWith("A", doc, unicastTune)
	if a.mode != TransportUnicast {
		t.Fatalf("creator's mode %q", a.mode)
	}
	spec, _, err := m.reg.Control("agree").Federation(context.Background())
	if err != nil || spec.DataPlane != string(TransportUnicast) {
		t.Fatalf("recorded data plane %q, %v; want unicast", spec.DataPlane, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = Join(ctx, Config{Federation: "agree", FederateName: "M", FOMModules: []*fomxml.Document{doc},
		Control: m.reg.Control("agree"), Transport: m.net.Endpoint("M")})
	if !errors.Is(err, ErrTransportMismatch) || !errors.Is(err, ErrRTIinternalError) {
		t.Fatalf("multicast joiner of a unicast federation: %v, want ErrTransportMismatch", err)
	}
	// auto with the default transports adopts the recorded mode.
	au, err := Join(ctx, Config{Federation: "agree", FederateName: "Auto", FOMModules: []*fomxml.Document{doc},
		Control: m.reg.Control("agree"), TransportMode: TransportAuto, TickInterval: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer au.Close()
	if _, ok := au.tr.(*transport.Unicast); !ok || au.mode != TransportUnicast {
		t.Errorf("auto joiner uses %T (%s), want the unicast transport", au.tr, au.mode)
	}
	// Bad settings are refused before anything is joined.
	for _, cfg := range []Config{
		{Federation: "x", TransportMode: "carrier-pigeon"},
		{Federation: "x", TransportMode: TransportAuto, Transport: m.net.Endpoint("X1")},
		{Federation: "x", TransportMode: TransportUnicast, Transport: m.net.Endpoint("X2")},
		{Federation: "x", Transport: transport.NewMemUnicast(m.net.Endpoint("X3"))},
		{Federation: "x", Advertise: "no-port"},
	} {
		if err := cfg.Validate(); err == nil {
			t.Errorf("Validate(%+v) accepted it", cfg)
		}
	}
}

// TestUnicastOverGossip: the real unicast transport on loopback, with
// the gossip control plane carrying the announcements; a joiner with
// auto adopts the creator's unicast.
func TestUnicastOverGossip(t *testing.T) {
	doc := testDoc(t)
	federation := fmt.Sprintf("uni-gossip-%d", os.Getpid())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	join := func(name string, mode TransportMode, seeds []string) *Federate {
		f, err := Join(ctx, Config{
			Federation: federation, FederateName: name, FOMModules: []*fomxml.Document{doc}, Create: seeds == nil,
			Gossip: GossipConfig{Seeds: seeds}, TransportMode: mode, TickInterval: 2 * time.Millisecond,
		})
		if err != nil {
			t.Fatalf("join %s: %v", name, err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	a := join("A", TransportUnicast, nil)
	seed, _ := a.GossipAddr()
	b := join("B", TransportAuto, []string{seed})
	if _, ok := b.tr.(*transport.Unicast); !ok {
		t.Fatalf("auto joiner of a unicast federation uses %T", b.tr)
	}
	exchange(t, a, b)
	if st := a.tr.(*transport.Unicast).Stats(); st.Sent == 0 || st.Received == 0 {
		t.Errorf("A's unicast transport: %+v", st)
	}
	// The record travels through the gossip register: a multicast
	// joiner is refused.
	_, err := Join(ctx, Config{
		Federation: federation, FederateName: "M", FOMModules: []*fomxml.Document{doc},
		Gossip: GossipConfig{Seeds: []string{seed}}, TickInterval: 2 * time.Millisecond,
	})
	if !errors.Is(err, ErrTransportMismatch) {
		t.Errorf("multicast joiner of a unicast federation over gossip: %v, want ErrTransportMismatch", err)
	}
}

// TestAutoProbesMulticast: two federates with auto in a federation
// created with auto probe multicast on loopback, where it works, and
// settle on it; a third adopts it.
func TestAutoProbesMulticast(t *testing.T) {
	auto, port := newAutoFederation(t, "auto"), 47000+os.Getpid()%1000
	feds := joinAtOnce(t, auto.config("A", port), auto.config("B", port))
	c := joinAtOnce(t, auto.config("C", port))[0]
	for _, f := range append(feds, c) {
		if _, ok := f.tr.(*transport.UDP); !ok || f.mode != TransportMulticast {
			t.Errorf("%s uses %T (%s), want multicast", f.Name(), f.tr, f.mode)
		}
	}
	exchange(t, feds[0], feds[1], c)
}

// autoFederation is a federation over a registry of its own whose
// federates ask for TransportAuto.
type autoFederation struct {
	reg        *MemRegistry
	doc        *fomxml.Document
	federation string
}

// newAutoFederation names the federation prefix and this process's id.
func newAutoFederation(t *testing.T, prefix string) autoFederation {
	return autoFederation{reg: NewMemRegistry(), doc: testDoc(t), federation: fmt.Sprintf("%s-%d", prefix, os.Getpid())}
}

// config is the Config of federate name, creating the federation if need
// be, multicast on port.
func (a autoFederation) config(name string, port int) Config {
	return Config{
		Federation: a.federation, FederateName: name, FOMModules: []*fomxml.Document{a.doc}, Create: true,
		Control: a.reg.Control(a.federation), TransportMode: TransportAuto, TickInterval: 2 * time.Millisecond,
		Multicast: transport.UDPConfig{Port: port},
	}
}

// joinAtOnce joins a federate of each of cfgs, all at once, failing t
// on an error or after 30 s; they close when the test ends. It returns
// them in the order their joins ended.
func joinAtOnce(t *testing.T, cfgs ...Config) []*Federate {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	type res struct {
		f   *Federate
		err error
	}
	out := make(chan res, len(cfgs))
	for _, cfg := range cfgs {
		go func() {
			f, err := Join(ctx, cfg)
			out <- res{f, err}
		}()
	}
	var feds []*Federate
	var errs []error
	for range cfgs {
		r := <-out
		if r.err != nil {
			errs = append(errs, r.err)
			continue
		}
		feds = append(feds, r.f)
		t.Cleanup(func() { r.f.Close() })
	}
	if len(errs) > 0 {
		t.Fatal(errors.Join(errs...))
	}
	return feds
}

// TestAutoFallsBackToUnicast: in a federation created with auto, two
// federates whose multicast cannot reach each other (here: different
// multicast ports, as across a router) settle on unicast, and still
// exchange updates.
func TestAutoFallsBackToUnicast(t *testing.T) {
	auto, port := newAutoFederation(t, "auto-uni"), 46000+os.Getpid()%1000
	feds := joinAtOnce(t, auto.config("A", port), auto.config("B", port+1))
	for _, f := range feds {
		if f.TransportMode() != TransportUnicast {
			t.Errorf("%s settled on %s, want unicast", f.Name(), f.TransportMode())
		}
	}
	exchange(t, feds[0], feds[1])
}
