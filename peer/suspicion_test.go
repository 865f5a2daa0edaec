package peer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer/transport"
	"github.com/meshrti/meshrti/testnet/tracecheck"
)

// What a suspicion does and does not do (docs/gossip.md, "What a
// suspicion does"): three federates over the real gossip control plane
// (memberlist on 127.0.0.1) and the in-memory data plane, each
// regulating (lookahead 1) and constrained, each sending per step a
// time-stamped Position update, a receive-order Label update and a
// time-stamped Honk, all traced and checked afterwards.

// stepFed is one federate of these tests and what it registered.
type stepFed struct {
	*Federate
	obj ObjectInstanceHandle
}

// suspicionFederation joins A, B and C over gossip, each traced to the
// returned buffer (read it once they are closed); grace[i] is federate
// i's LostGrace (0: the default).
func suspicionFederation(t *testing.T, seed int64, grace [3]time.Duration) ([]*stepFed, testHandles, *bytes.Buffer, *transport.Network) {
	t.Helper()
	net := transport.NewNetwork(transport.NetworkConfig{Seed: seed})
	federation := fmt.Sprintf("suspicion-%d-%d", os.Getpid(), seed)
	buf := &bytes.Buffer{}
	trace := NewTraceWriter(buf)
	doc := testDoc(t)
	var feds []*stepFed
	seed0 := ""
	for i, name := range []string{"A", "B", "C"} {
		cfg := Config{
			Federation: federation, FederateName: name, FOMModules: []*fomxml.Document{doc}, Create: i == 0,
			Gossip:    GossipConfig{LostGrace: grace[i]},
			Transport: net.Endpoint(name), TickInterval: 2 * time.Millisecond,
			Trace: trace,
		}
		if seed0 != "" {
			cfg.Gossip.Seeds = []string{seed0}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		f, err := Join(ctx, cfg)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		if i == 0 {
			seed0, _ = f.GossipAddr()
		}
		feds = append(feds, &stepFed{Federate: f})
	}
	h := handles(t, feds[0].Federate)
	for _, f := range feds {
		must := mustOK(t)
		must(f.PublishObjectClassAttributes(h.vehicle, h.position, h.label))
		must(f.SubscribeObjectClassAttributes(h.vehicle, h.position, h.label))
		must(f.PublishInteractionClass(h.honk))
		must(f.SubscribeInteractionClass(h.honk))
		must(f.EnableTimeRegulation(Float64Time(1)))
		waitFor(t, f.Federate, 10*time.Second, isType[TimeRegulationEnabled])
		must(f.EnableTimeConstrained())
		waitFor(t, f.Federate, 10*time.Second, isType[TimeConstrainedEnabled])
	}
	for _, f := range feds {
		obj, err := f.RegisterObjectInstance(h.vehicle, "")
		if err != nil {
			t.Fatal(err)
		}
		f.obj = obj
	}
	for _, f := range feds {
		for range 2 {
			waitFor(t, f.Federate, 10*time.Second, isType[DiscoverObjectInstance])
		}
	}
	return feds, h, buf, net
}

// send has f send step k's messages: Position and Honk stamped k, Label
// in receive order.
func (f *stepFed) send(t *testing.T, h testHandles, k int) {
	t.Helper()
	must := mustOK(t)
	ts := Float64Time(float64(k))
	tag := []byte(fmt.Sprintf("%s/%d", f.Name(), k))
	must(f.UpdateAttributeValues(f.obj, AttributeValues{h.label: tag}, tag))
	must(f.UpdateAttributeValuesWithTime(f.obj, AttributeValues{h.position: tag}, tag, ts))
	must(f.SendInteractionWithTime(h.honk, ParameterValues{h.loudness: tag}, tag, ts))
}

// step has each federate of feds send step k's messages, ask for time k
// and be granted it. It returns the events each read meanwhile.
func step(t *testing.T, h testHandles, feds []*stepFed, k int) map[string][]Event {
	t.Helper()
	for _, f := range feds {
		f.send(t, h, k)
		if err := f.TimeAdvanceRequest(Float64Time(float64(k))); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string][]Event{}
	for _, f := range feds {
		ev, skipped := waitFor(t, f.Federate, 15*time.Second, isType[TimeAdvanceGrant])
		if g := grantOf(t, ev); g != float64(k) {
			t.Fatalf("%s granted %v, want %d", f.Name(), g, k)
		}
		seen[f.Name()] = skipped
	}
	return seen
}

// noneLost fails t when evs hold a FederateLost or ConnectionLost.
func noneLost(t *testing.T, who string, evs []Event) {
	t.Helper()
	for _, ev := range evs {
		switch ev.(type) {
		case FederateLost, ConnectionLost:
			t.Errorf("%s: %#v while nothing was lost", who, ev)
		}
	}
}

// checkTrace checks the run's trace and returns its report.
func checkTrace(t *testing.T, buf *bytes.Buffer) tracecheck.Report {
	t.Helper()
	rep, err := tracecheck.CheckReport(strings.NewReader(buf.String()))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range rep.Violations {
		t.Error(v)
	}
	return rep
}

// cluster returns f's gossip member, for fault injection.
func cluster(t *testing.T, f *Federate) interface {
	Suspect(name string, dead bool) error
	Name() string
} {
	t.Helper()
	g, ok := f.ctl.(*gossipControl)
	if !ok {
		t.Fatal("not on the gossip control plane")
	}
	return g.c
}

// A's failure detector alone declares C dead while C runs on: A keeps C
// (no FederateLost anywhere), holds time for it (not granted past C's
// promise while C waits), does not take C's attributes for orphaned nor
// synchronize without C, receives all of its messages, and when the
// suspicion clears nothing was lost or delivered twice. A's LostGrace is
// short, but A still hears C's data plane, so A never proposes C's
// removal.
func TestSuspicionIsNotLoss(t *testing.T) {
	feds, h, buf, _ := suspicionFederation(t, 11, [3]time.Duration{200 * time.Millisecond, 0, 0})
	a, b, c := feds[0], feds[1], feds[2]
	k := 0
	next := func(fs ...*stepFed) {
		k++
		for name, evs := range step(t, h, fs, k) {
			noneLost(t, name, evs)
		}
	}
	for range 3 {
		next(feds...)
	}
	if err := cluster(t, a.Federate).Suspect(cluster(t, c.Federate).Name(), true); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		next(feds...)
	}
	// Ownership: C's attributes are C's, not orphaned.
	if err := a.AttributeOwnershipAcquisitionIfAvailable(c.obj, h.position); err != nil {
		t.Fatal(err)
	}
	ev, skipped := waitFor(t, a.Federate, 10*time.Second, func(ev Event) bool {
		return isType[AttributeOwnershipUnavailable](ev) || isType[AttributeOwnershipAcquisitionNotification](ev)
	})
	noneLost(t, "A", skipped)
	if _, ok := ev.(AttributeOwnershipUnavailable); !ok {
		t.Errorf("A acquired the suspected C's attribute: %#v", ev)
	}
	// Synchronization: the point waits for C's achievement too.
	mustOK(t)(a.RegisterFederationSynchronizationPoint("held", nil))
	for _, f := range feds {
		waitFor(t, f.Federate, 10*time.Second, isType[AnnounceSynchronizationPoint])
	}
	mustOK(t)(a.SynchronizationPointAchieved("held", true))
	mustOK(t)(b.SynchronizationPointAchieved("held", true))
	time.Sleep(200 * time.Millisecond)
	for a.Pending() > 0 {
		ev, _ := waitFor(t, a.Federate, time.Second, func(Event) bool { return true })
		if _, ok := ev.(FederationSynchronized); ok {
			t.Fatal("synchronized without the suspected C's achievement")
		}
	}
	mustOK(t)(c.SynchronizationPointAchieved("held", true))
	for _, f := range feds {
		ev, skipped := waitFor(t, f.Federate, 10*time.Second, isType[FederationSynchronized])
		noneLost(t, f.Name(), skipped)
		if fs := ev.(FederationSynchronized); len(fs.Failed) != 0 {
			t.Errorf("%s: %+v", f.Name(), fs)
		}
	}
	// C waits at k: its promise (k + lookahead 1) holds A and B below
	// k+1, suspected or not.
	for _, f := range []*stepFed{a, b} {
		f.send(t, h, k+1)
		if err := f.TimeAdvanceRequest(Float64Time(float64(k + 3))); err != nil {
			t.Fatal(err)
		}
	}
	noGrantYet(t, a.Federate, float64(k+1))
	noGrantYet(t, b.Federate, float64(k+1))
	c.send(t, h, k+1)
	if err := c.TimeAdvanceRequest(Float64Time(float64(k + 3))); err != nil {
		t.Fatal(err)
	}
	for _, f := range feds {
		ev, skipped := waitFor(t, f.Federate, 15*time.Second, isType[TimeAdvanceGrant])
		if g := grantOf(t, ev); g != float64(k+3) {
			t.Fatalf("%s granted %v, want %d", f.Name(), g, k+3)
		}
		noneLost(t, f.Name(), skipped)
	}
	k += 3
	if err := cluster(t, a.Federate).Suspect(cluster(t, c.Federate).Name(), false); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		next(feds...)
	}
	for _, f := range feds {
		if n := f.Stats().Reliable.StaleIncarnation; n != 0 {
			t.Errorf("%s dropped %d frames as of a forgotten sender", f.Name(), n)
		}
	}
	if st := a.Stats(); st.Suspicions != 1 || st.Refutations != 1 || st.LostProposals != 0 || st.LostDeferred == 0 {
		t.Errorf("A's suspicions %d, refutations %d, removals proposed %d, deferred %d; want 1, 1, 0 and some",
			st.Suspicions, st.Refutations, st.LostProposals, st.LostDeferred)
	}
	for _, f := range feds {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := f.ResignFederationExecution(ctx, DeleteObjects); err != nil {
			t.Error(err)
		}
		cancel()
		f.Close()
	}
	rep := checkTrace(t, buf)
	if strings.Contains(buf.String(), `"ev":"lost"`) {
		t.Error("a federate was recorded lost")
	}
	// Every federate delivered each other's Position updates and Honks,
	// one per step (the Labels too, counted with the updates).
	const steps = 3 + 5 + 1 + 3
	for _, r := range []string{"A", "B", "C"} {
		for _, s := range []string{"A", "B", "C"} {
			if r == s {
				continue
			}
			if n := deliveries(buf.String(), r, s); n != 3*steps {
				t.Errorf("%s delivered %d messages of %s, want %d", r, n, s, 3*steps)
			}
		}
	}
	if rep.Owed == 0 {
		t.Errorf("the owed-message rules found nothing owed: %+v", rep)
	}
	t.Logf("trace: %d lines, %d deliveries, %d owed, %d violations", rep.Lines, rep.Deliveries, rep.Owed, len(rep.Violations))
}

// A's failure detector declares C dead and stays so, and A's data plane
// hears nothing of C: after its LostGrace, A proposes C's removal, the
// federation decides it, and every member forgets C in log order
// (FederateLost at A and B), C is told (ConnectionLost) though it runs
// on, its later frames are dropped as of a forgotten sender, and A and B
// advance without it.
func TestSuspicionAgreedRemoval(t *testing.T) {
	feds, h, buf, net := suspicionFederation(t, 12, [3]time.Duration{300 * time.Millisecond, time.Minute, time.Minute})
	a, b, c := feds[0], feds[1], feds[2]
	for k := 1; k <= 3; k++ {
		for name, evs := range step(t, h, feds, k) {
			noneLost(t, name, evs)
		}
	}
	// What C sends from now on never reaches A, and reaches B late,
	// after B forgot C: it must be dropped, not delivered.
	net.SetLinkFaults("C", "A", transport.Faults{Loss: 1})
	net.SetLinkFaults("C", "B", transport.Faults{Delay: 1500 * time.Millisecond})
	if err := cluster(t, a.Federate).Suspect(cluster(t, c.Federate).Name(), true); err != nil {
		t.Fatal(err)
	}
	// C is told it was removed.
	waitFor(t, c.Federate, 20*time.Second, isType[ConnectionLost])
	if err := c.TimeAdvanceRequest(Float64Time(10)); err == nil {
		t.Error("C could still ask to advance after ConnectionLost")
	}
	// A and B forget C, and advance past C's last promise.
	for _, f := range []*stepFed{a, b} {
		f.send(t, h, 4)
		if err := f.TimeAdvanceRequest(Float64Time(10)); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []*stepFed{a, b} {
		ev, skipped := waitFor(t, f.Federate, 20*time.Second, isType[TimeAdvanceGrant])
		if g := grantOf(t, ev); g != 10 {
			t.Errorf("%s granted %v, want 10", f.Name(), g)
		}
		i := slices.IndexFunc(skipped, isType[FederateLost])
		if i < 0 || skipped[i].(FederateLost).Name != "C" {
			t.Errorf("%s: no FederateLost for C before its grant: %v", f.Name(), skipped)
		}
	}
	// C's frames that arrive after its removal are dropped as a
	// forgotten sender's.
	pollUntil(t, 10*time.Second, func() (bool, string) {
		n := b.Stats().Reliable.StaleIncarnation
		return n > 0, fmt.Sprintf("frames of the removed C dropped at B: %d", n)
	})
	for _, f := range feds {
		f.Close()
	}
	checkTrace(t, buf)
	for _, r := range []string{"A", "B"} {
		if !strings.Contains(buf.String(), fmt.Sprintf(`{"ev":"lost","fed":%q,"peer":"C"}`, r)) {
			t.Errorf("%s did not record C lost", r)
		}
	}
}

// deliveries counts the deliver lines of receiver r for messages of
// sender s in trace (by the sender's handle: a receiver that has not
// heard of the sender's join yet writes "#HANDLE/N" for its name).
func deliveries(trace, r, s string) int {
	var handle string
	for line := range strings.Lines(trace) {
		var e tracecheck.Event
		if json.Unmarshal([]byte(line), &e) == nil && e.Ev == "join" && e.Fed == s {
			handle = e.Handle
		}
	}
	n := 0
	for line := range strings.Lines(trace) {
		var e tracecheck.Event
		if json.Unmarshal([]byte(line), &e) == nil && e.Ev == "deliver" && e.Fed == r && e.Src == handle {
			n++
		}
	}
	return n
}
