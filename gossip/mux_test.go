package gossip

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/meshrti/meshrti/version"
)

// daemons are Muxes on 127.0.0.1 standing for daemons on three hosts,
// the first the founding one (its Anchors found the federations).
type daemons struct {
	t       *testing.T
	muxes   []*Mux
	seeds   []string
	anchors *Anchors
}

func newDaemons(t *testing.T, n int) *daemons {
	t.Helper()
	checkLeaks(t)
	d := &daemons{t: t}
	for range n {
		m, err := NewMux(MuxConfig{})
		if err != nil {
			t.Fatal(err)
		}
		d.muxes = append(d.muxes, m)
		d.seeds = append(d.seeds, m.Addr())
	}
	d.anchors = NewAnchors(Config{Mux: d.muxes[0], Seeds: d.seeds})
	t.Cleanup(func() {
		d.anchors.Close()
		for _, m := range d.muxes {
			if err := m.Close(); err != nil {
				t.Error(err)
			}
		}
	})
	return d
}

// start starts a node of federation on daemon k, every daemon a seed.
func (d *daemons) start(k int, federation string) (*Cluster, error) {
	return Start(ctxT(d.t), Config{Federation: federation, Mux: d.muxes[k], Seeds: d.seeds})
}

// Three daemons, all seeds of each other, the first founding: clients
// of each create the same federation at once. Exactly one creation
// succeeds, every node holds the one log the founding daemon's anchor
// founded, and the three federates joined see each other. A federation
// created on one daemon is joined from the others; the anchor leaves
// when it is destroyed. Each daemon carries its nodes on one address.
func TestMuxCreateFromAnyDaemon(t *testing.T) {
	d := newDaemons(t, 3)
	const fed = "three-hosts"
	cs := make([]*Cluster, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for k := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := d.start(k, fed)
			if err != nil {
				errs[k] = err
				return
			}
			cs[k] = c
			errs[k] = c.CreateFederation(ctxT(t), FederationSpec{TimeRepresentation: "HLAfloat64Time"})
		}()
	}
	wg.Wait()
	defer func() {
		for _, c := range cs {
			if c != nil {
				c.Close()
			}
		}
	}()
	created := 0
	for k, err := range errs {
		switch {
		case err == nil:
			created++
		case errors.Is(err, ErrFederationExists):
		default:
			t.Fatalf("daemon %d: %v", k, err)
		}
	}
	if created != 1 {
		t.Fatalf("%d creations succeeded, want exactly 1: %v", created, errs)
	}
	cs[0].viewMu.RLock()
	log := cs[0].view.log
	cs[0].viewMu.RUnlock()
	for k, c := range cs {
		c.viewMu.RLock()
		l := c.view.log
		c.viewMu.RUnlock()
		if l != log || l == "" {
			t.Errorf("daemon %d holds log %q, daemon 0 %q", k, l, log)
		}
		if got, want := c.LocalNode().Addr, d.muxes[k].Addr(); got != want {
			t.Errorf("daemon %d's node at %s, want the daemon's address %s", k, got, want)
		}
	}
	if got := d.anchors.Federations(); len(got) != 1 || got[0] != fed {
		t.Errorf("anchored %v, want [%s]", got, fed)
	}
	for k, c := range cs {
		if _, err := c.JoinFederate(ctxT(t), JoinSpec{Name: fmt.Sprintf("F%d", k), Type: "t", TimeRepresentation: "HLAfloat64Time"}); err != nil {
			t.Fatalf("join on daemon %d: %v", k, err)
		}
	}
	waitFor(t, 10*time.Second, func() bool {
		for _, c := range cs {
			if len(c.Federates()) != 3 || len(c.Members()) != 4 { // 3 federates' nodes and the anchor
				return false
			}
		}
		return true
	}, "every node sees 3 federates and 4 members")
	// A second node on daemon 2 joins through daemon 2's own address:
	// the Mux hands the join to its first node of the federation.
	c4, err := Start(ctxT(t), Config{Federation: fed, Mux: d.muxes[2], Seeds: []string{d.seeds[2]}})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, func() bool { return len(c4.Members()) == 5 }, "the fourth node sees 5 members")
	c4.Close()
	for k, c := range cs {
		if err := c.ResignFederate(ctxT(t)); err != nil {
			t.Fatalf("resign on daemon %d: %v", k, err)
		}
	}
	if err := cs[1].DestroyFederation(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, func() bool { return len(d.anchors.Federations()) == 0 }, "the anchor left")
	for _, m := range d.muxes {
		if st := m.Stats(); st.Malformed != 0 {
			t.Errorf("mux %s: %+v", m.Addr(), st)
		}
	}
}

// A daemon that is not the founding one founds nothing: a join through
// it alone for a federation it has no member of fails at once.
func TestMuxNoFounderRefusesAtOnce(t *testing.T) {
	checkLeaks(t)
	m, err := NewMux(MuxConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	start := time.Now()
	_, err = Start(ctxT(t), Config{Federation: "nobody", Seeds: []string{m.Addr()}})
	if !errors.Is(err, ErrSeedsUnreachable) {
		t.Fatalf("got %v, want ErrSeedsUnreachable", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("refusal took %v", d)
	}
	if m.Stats().NoNode == 0 {
		t.Error("the refused join is not counted")
	}
}

// Whatever arrives that is not a framed packet or stream is dropped and
// counted; a frame of a node it does not host, too.
func TestMuxDropsGarbage(t *testing.T) {
	m, err := NewMux(MuxConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	u, err := net.Dial("udp", m.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	for _, p := range [][]byte{{}, {1, 2, 3}, {muxMagic, 9, 0}, {muxMagic, muxVersion, 200, 'x'}, append(frameHeader("ghost", 0), 0, 1)} {
		if _, err := u.Write(p); err != nil && len(p) > 0 {
			t.Fatal(err)
		}
	}
	c, err := net.Dial("tcp", m.Addr())
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("GET / HTTP/1.0\r\n\r\n"))
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Errorf("a garbage stream was answered: %d bytes, %v", n, err)
	}
	c.Close()
	waitFor(t, 5*time.Second, func() bool {
		st := m.Stats()
		return st.Malformed >= 4 && st.NoNode >= 1
	}, "garbage counted (%v)", lazy(func() string { return fmt.Sprintf("%+v", m.Stats()) }))
}

// A node of another wire protocol is refused, both named.
func TestProtocolVersionRefused(t *testing.T) {
	h := newHarness(t, 1, nil)
	_, err := h.start(1, func(_ int, c *Config) {
		c.Meta.ProtocolVersion = version.Protocol + 1
		c.Meta.Release = "v99.0.0"
	})
	if !errors.Is(err, ErrProtocolVersion) {
		t.Fatalf("got %v, want ErrProtocolVersion", err)
	}
	for _, want := range []string{fmt.Sprintf("wire protocol %d", version.Protocol), fmt.Sprint(version.Protocol + 1), "v99.0.0", version.Release()} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not name %q", err, want)
		}
	}
}

// FuzzMuxFrame: whatever a packet holds, reading its frame header and
// the label after it returns without panicking, and a frame made for a
// name reads back as that name and the rest.
func FuzzMuxFrame(f *testing.F) {
	f.Add([]byte{muxMagic, muxVersion, 2, 'n', '1', 244, 1, 'f', 9}, "n1")
	f.Add([]byte{}, "")
	f.Add([]byte{muxMagic, muxVersion, 255}, "x")
	f.Fuzz(func(t *testing.T, b []byte, name string) {
		if n, rest, ok := parseFrame(b); ok {
			if len(n)+3+len(rest) != len(b) {
				t.Fatalf("%q: name %q and %d bytes do not add up", b, n, len(rest))
			}
			_, _, _ = memberlist.RemoveLabelHeaderFromPacket(rest)
		}
		if len(name) > 255 {
			return
		}
		framed := append(frameHeader(name, len(b)), b...)
		n, rest, ok := parseFrame(framed)
		if !ok || n != name || !bytes.Equal(rest, b) {
			t.Fatalf("frame of %q and %q reads back as %v %q %q", name, b, ok, n, rest)
		}
	})
}

// A founding daemon that restarts while other daemons hold a federation
// anchors it again by joining its log through them, not by founding a
// second one: a node joining through the restarted daemon holds the
// same log as the others.
func TestMuxFounderRestartJoins(t *testing.T) {
	d := newDaemons(t, 3)
	const fed = "restart"
	var cs []*Cluster
	defer func() {
		for _, c := range cs {
			c.Close()
		}
	}()
	for _, k := range []int{1, 2} {
		c, err := d.start(k, fed)
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	if err := cs[0].CreateFederation(ctxT(t), FederationSpec{TimeRepresentation: "HLAfloat64Time"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, func() bool { return len(cs[1].Members()) == 3 }, "daemon 2's node sees the anchor and daemon 1's node")
	logOf := func(c *Cluster) string {
		c.viewMu.RLock()
		defer c.viewMu.RUnlock()
		return c.view.log
	}
	before := logOf(cs[0])
	// The founding daemon restarts on the same address: its anchor is
	// gone (it leaves, as a stopping daemon's do).
	port := d.muxes[0].advPort
	d.anchors.Close()
	if err := d.muxes[0].Close(); err != nil {
		t.Fatal(err)
	}
	m, err := NewMux(MuxConfig{BindPort: port})
	if err != nil {
		t.Fatal(err)
	}
	d.muxes[0] = m
	d.anchors = NewAnchors(Config{Mux: m, Seeds: d.seeds})
	waitFor(t, 10*time.Second, func() bool { return len(cs[1].Members()) == 2 }, "the old anchor gone")
	c, err := d.start(0, fed)
	if err != nil {
		t.Fatal(err)
	}
	cs = append(cs, c)
	if got := logOf(c); got != before {
		t.Fatalf("the restarted founding daemon's node holds log %q, the federation's is %q", got, before)
	}
	if _, ok := c.Federation(); !ok {
		t.Fatal("the federation is not known through the restarted daemon")
	}
	waitFor(t, 10*time.Second, func() bool { return len(cs[1].Members()) == 4 }, "the new anchor and node among the members")
}
