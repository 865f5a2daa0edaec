package dis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/fomxml/codec"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/transport"
)

var (
	rprDocsOnce sync.Once
	rprDocs     []*fomxml.Document
	rprDocsErr  error
)

// rig is a federation on an in-memory network with the RPR FOM, for the
// gateway's tests; the DIS side uses real loopback sockets.
type rig struct {
	t    *testing.T
	net  *transport.Network
	reg  *peer.MemRegistry
	docs []*fomxml.Document
	feds []*peer.Federate
	cd   *codec.Codec
	m    *Mapper
}

func newRig(t *testing.T) *rig {
	t.Helper()
	files := rprFiles(t)
	rprDocsOnce.Do(func() {
		for _, f := range files {
			d, err := fomxml.ParseFile(f)
			if err != nil {
				rprDocsErr = err
				return
			}
			rprDocs = append(rprDocs, d)
		}
	})
	if rprDocsErr != nil {
		t.Fatal(rprDocsErr)
	}
	before := runtime.NumGoroutine()
	r := &rig{t: t, net: transport.NewNetwork(transport.NetworkConfig{Seed: 1}), reg: peer.NewMemRegistry(), docs: rprDocs}
	r.m = rprMapper(t, MapperConfig{})
	r.cd, _ = codec.New(r.m.fdd)
	t.Cleanup(func() {
		for _, f := range r.feds {
			f.Close()
		}
		waitGoroutines(t, before)
	})
	return r
}

// waitGoroutines waits until no more goroutines run than before.
func waitGoroutines(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines before, %d after:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// join joins a federate named name with the RPR modules (and extra).
func (r *rig) join(federation, name string, extra ...*fomxml.Document) *peer.Federate {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f, err := peer.Join(ctx, peer.Config{
		Federation: federation, FederateName: name, Create: true,
		FOMModules: append(append([]*fomxml.Document{}, r.docs...), extra...),
		Control:    r.reg.Control(federation), Transport: r.net.Endpoint(name), TickInterval: 2 * time.Millisecond,
	})
	if err != nil {
		r.t.Fatalf("join %s: %v", name, err)
	}
	r.feds = append(r.feds, f)
	return f
}

// gateway starts a gateway, closed at the test's end.
func (r *rig) gateway(cfg Config) *Gateway {
	r.t.Helper()
	g, err := New(cfg)
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { g.Close() })
	return g
}

// subscribeAll subscribes f to every entity class with all attributes,
// and to WeaponFire and MunitionDetonation.
func (r *rig) subscribeAll(f *peer.Federate) {
	r.t.Helper()
	for _, c := range r.m.EntityClasses() {
		var attrs []peer.AttributeHandle
		for _, a := range c.AllAttributes() {
			attrs = append(attrs, a.Handle)
		}
		if err := f.SubscribeObjectClassAttributes(c.Handle, attrs...); err != nil {
			r.t.Fatal(err)
		}
	}
	for _, ic := range []*fomxml.InteractionClass{r.m.FireClass(), r.m.DetonationClass()} {
		if err := f.SubscribeInteractionClass(ic.Handle); err != nil {
			r.t.Fatal(err)
		}
	}
}

// publish publishes class with all its attributes on f, and the two
// interactions.
func (r *rig) publish(f *peer.Federate, class string) *fomxml.ObjectClass {
	r.t.Helper()
	c := mustClass(r.t, r.m.fdd, class)
	var attrs []peer.AttributeHandle
	for _, a := range c.AllAttributes() {
		attrs = append(attrs, a.Handle)
	}
	if err := errors.Join(f.PublishObjectClassAttributes(c.Handle, attrs...), f.PublishInteractionClass(r.m.FireClass().Handle),
		f.PublishInteractionClass(r.m.DetonationClass().Handle)); err != nil {
		r.t.Fatal(err)
	}
	return c
}

// firstEvent returns the first event of f within d that match accepts,
// or the error that ended the wait.
func firstEvent(f *peer.Federate, d time.Duration, match func(peer.Event) bool) (peer.Event, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	for {
		ev, err := f.Next(ctx)
		if err != nil || match(ev) {
			return ev, err
		}
	}
}

// next waits up to d for an event of f that match accepts.
func next(t *testing.T, f *peer.Federate, d time.Duration, what string, match func(peer.Event) bool) peer.Event {
	t.Helper()
	ev, err := firstEvent(f, d, match)
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
	return ev
}

// quiet asserts f gets no event match accepts for d.
func quiet(t *testing.T, f *peer.Federate, d time.Duration, what string, match func(peer.Event) bool) {
	t.Helper()
	if ev, err := firstEvent(f, d, match); err == nil {
		t.Fatalf("unexpected %s: %+v", what, ev)
	}
}

// disPeer is a DIS application on loopback: a socket that sends to the
// gateway and receives what the gateway sends.
type disPeer struct {
	t    *testing.T
	conn *net.UDPConn
}

func newDISPeer(t *testing.T) *disPeer {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &disPeer{t: t, conn: c}
}

func (p *disPeer) addr() string { return p.conn.LocalAddr().String() }

func (p *disPeer) send(to netip.AddrPort, pdu PDU) {
	p.t.Helper()
	b, err := Encode(pdu)
	if err != nil {
		p.t.Fatal(err)
	}
	p.sendRaw(to, b)
}

func (p *disPeer) sendRaw(to netip.AddrPort, b []byte) {
	p.t.Helper()
	if _, err := p.conn.WriteToUDPAddrPort(b, to); err != nil {
		p.t.Fatal(err)
	}
}

// next returns the first PDU match accepts that arrives before
// deadline, dropping the others, or nil when none does. With strict a
// datagram that does not decode fails the test (only the gateway sends
// there); without, it is dropped too.
func (p *disPeer) next(deadline time.Time, strict bool, match func(PDU) bool) PDU {
	p.t.Helper()
	buf := make([]byte, 1<<16)
	for {
		p.conn.SetReadDeadline(deadline)
		n, _, err := p.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			return nil
		}
		pdu, err := Decode(buf[:n])
		if err != nil {
			if strict {
				p.t.Fatalf("the gateway sent a PDU that does not decode: %v", err)
			}
			continue
		}
		if match(pdu) {
			return pdu
		}
	}
}

// recv waits up to d for a PDU that match accepts; others are dropped.
func (p *disPeer) recv(d time.Duration, what string, match func(PDU) bool) PDU {
	p.t.Helper()
	pdu := p.next(time.Now().Add(d), true, match)
	if pdu == nil {
		p.t.Fatalf("no %s within %v", what, d)
	}
	return pdu
}

// none asserts no PDU match accepts arrives for d.
func (p *disPeer) none(d time.Duration, what string, match func(PDU) bool) {
	p.t.Helper()
	if pdu := p.next(time.Now().Add(d), false, match); pdu != nil {
		p.t.Fatalf("unexpected %s: %+v", what, pdu)
	}
}

func isEntity(id EntityID) func(PDU) bool {
	return func(p PDU) bool { es, ok := p.(*EntityState); return ok && es.ID == id }
}

// decodeValues decodes the values of class by attribute name.
func (r *rig) decodeValues(class *fomxml.ObjectClass, vals peer.AttributeValues) map[string]any {
	r.t.Helper()
	out := map[string]any{}
	for h, b := range vals {
		a, ok := class.AttributeByHandle(h)
		if !ok {
			r.t.Fatalf("attribute %d not of %s", h, class.Name)
		}
		v, err := r.cd.Decode(a.DataType, b)
		if err != nil {
			r.t.Fatalf("%s: %v", a.Name, err)
		}
		out[a.Name] = v
	}
	return out
}

func fmtKeys(m map[string]any) string {
	var s []string
	for k := range m {
		s = append(s, k)
	}
	return fmt.Sprint(s)
}

// newBroadcastListener listens on a broadcast address, sharing it.
func newBroadcastListener(t *testing.T, addr string) *disPeer {
	t.Helper()
	lc := net.ListenConfig{Control: transport.ReuseAddr}
	pc, err := lc.ListenPacket(context.Background(), "udp4", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	return &disPeer{t: t, conn: pc.(*net.UDPConn)}
}

// introduce updates obj with vals until sink hears a PDU match accepts:
// the gateway may discover obj only after the first update went by (a
// federate answers its request for values; the tests' federates do not
// read their events), so the update is offered again every 300 ms.
func introduce(t *testing.T, f *peer.Federate, obj peer.ObjectInstanceHandle, vals peer.AttributeValues, tag []byte, sink *disPeer, what string, match func(PDU) bool) PDU {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if err := f.UpdateAttributeValues(obj, vals, tag); err != nil {
			t.Fatal(err)
		}
		if p := sink.next(time.Now().Add(300*time.Millisecond), false, match); p != nil {
			return p
		}
	}
	t.Fatalf("%s never came", what)
	return nil
}
