package peer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer/transport"
)

// joinGossip joins a federate over the real control plane (a gossip
// member on 127.0.0.1) and the in-memory data plane.
func joinGossip(t *testing.T, net *transport.Network, federation, name string, seeds []string, create bool) (*Federate, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return Join(ctx, Config{
		Federation: federation, FederateName: name, FOMModules: []*fomxml.Document{testDoc(t)}, Create: create,
		Gossip: GossipConfig{Seeds: seeds}, Transport: net.Endpoint(fmt.Sprintf("%s-%d", name, time.Now().UnixNano())), TickInterval: 2 * time.Millisecond,
		Logger: testLogger(t, name),
	})
}

// testLogger logs a federate's diagnostics to stderr, at debug level,
// when PEER_TEST_LOG is set; else it logs nothing.
func testLogger(t *testing.T, name string) zerolog.Logger {
	if os.Getenv("PEER_TEST_LOG") == "" {
		return zerolog.Nop()
	}
	return zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr, TimeFormat: "15:04:05.000", NoColor: true}).
		Level(zerolog.DebugLevel).With().Timestamp().Str("test", t.Name()).Str("fed", name).Logger()
}

// gossipMember joins name as joinGossip does, failing t on an error: the
// federation's first member, which creates it, when seed is empty, else
// through seed. It closes when the test ends.
func gossipMember(t *testing.T, net *transport.Network, federation, name, seed string) *Federate {
	t.Helper()
	var seeds []string
	if seed != "" {
		seeds = []string{seed}
	}
	f, err := joinGossip(t, net, federation, name, seeds, seed == "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// Over the gossip control plane: names are unique, a federation that
// does not exist cannot be joined, handles agree, and a federate whose
// node goes away is reported lost and no longer holds back time.
func TestGossipControlPlane(t *testing.T) {
	net := transport.NewNetwork(transport.NetworkConfig{Seed: 3})
	federation := fmt.Sprintf("gossip-test-%d", os.Getpid())
	if _, err := joinGossip(t, net, federation, "nobody", nil, false); !errors.Is(err, ErrFederationExecutionDoesNotExist) {
		t.Fatalf("join without create: %v", err)
	}
	a := gossipMember(t, net, federation, "A", "")
	seed, ok := a.GossipAddr()
	if !ok {
		t.Fatal("no gossip address")
	}
	b := gossipMember(t, net, federation, "B", seed)
	if _, err := joinGossip(t, net, federation, "B", []string{seed}, false); !errors.Is(err, ErrFederateNameAlreadyInUse) {
		t.Errorf("second B: %v", err)
	}
	ev, _ := waitFor(t, a, 10*time.Second, isType[FederateJoined])
	if j := ev.(FederateJoined); j.Federate != b.Handle() || j.Name != "B" {
		t.Errorf("joined %+v, want B with handle %d", j, b.Handle())
	}
	if h, err := a.GetFederateHandle("B"); err != nil || h != b.Handle() {
		t.Errorf("A's view of B: %d, %v; B says %d", h, err, b.Handle())
	}
	// B regulates, A is constrained and waits on B; B's node goes away.
	enable(t, b, a, 1)
	if err := a.TimeAdvanceRequest(Float64Time(20)); err != nil {
		t.Fatal(err)
	}
	noGrantYet(t, a, 1)
	start := time.Now()
	b.Close()
	ev, skipped := waitFor(t, a, 15*time.Second, isType[TimeAdvanceGrant])
	if g := grantOf(t, ev); g != 20 {
		t.Errorf("granted %v", g)
	}
	lost := false
	for _, e := range skipped {
		if l, ok := e.(FederateLost); ok && l.Federate == b.Handle() {
			lost = true
		}
	}
	if !lost {
		t.Errorf("no FederateLost for B before the grant: %#v", skipped)
	}
	t.Logf("B lost and A granted %v after B's node went away", time.Since(start).Round(time.Millisecond))
}

// Over the gossip control plane: a federation created with a MIM of its
// creator's gives a joiner that MIM, and a member's list reports the
// federation with its time representation.
func TestGossipMIMAndList(t *testing.T) {
	net := transport.NewNetwork(transport.NetworkConfig{Seed: 4})
	federation := fmt.Sprintf("gossip-mim-%d", os.Getpid())
	const manager = "<objectClass>\n        <name>HLAmanager</name>"
	mim := testMIM(t, "extendedMIM.xml", manager, "<objectClass><name>MIMExtra</name><sharing>PublishSubscribe</sharing></objectClass>\n      "+manager)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	a, err := Join(ctx, Config{
		Federation: federation, FederateName: "A", FOMModules: []*fomxml.Document{testDoc(t)}, Create: true, MIMModule: mim,
		Transport: net.Endpoint("mim-A"), TickInterval: 2 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	seed, _ := a.GossipAddr()
	b := gossipMember(t, net, federation, "B", seed)
	if fdd := b.FDD(); fdd.Modules[0].File != "extendedMIM.xml" {
		t.Errorf("B's first module %q, want the federation's MIM", fdd.Modules[0].File)
	} else if _, ok := fdd.ObjectClass("HLAobjectRoot.MIMExtra"); !ok {
		t.Error("B's FDD lacks the MIM's class")
	}
	if err := b.ListFederationExecutions(ctx); err != nil {
		t.Fatal(err)
	}
	ev := waitEvent[ReportFederationExecutions](t, b)
	if len(ev.Executions) != 1 || ev.Executions[0] != fei(federation, "HLAfloat64Time") {
		t.Errorf("report %v", ev.Executions)
	}
}
