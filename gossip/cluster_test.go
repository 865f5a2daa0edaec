package gossip

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/meshrti/meshrti/version"
)

// These tests run real memberlist clusters on 127.0.0.1 with free ports
// and the local profile. Each starts 2 to 5 nodes, waits with short polls
// and deadlines, closes everything and checks that no goroutine is left.

// node is a Cluster under test with the events it delivered.
type node struct {
	*Cluster
	mu     sync.Mutex
	events []Event
	done   chan struct{}
}

func (n *node) collect() {
	defer close(n.done)
	for ev := range n.Events() {
		n.mu.Lock()
		n.events = append(n.events, ev)
		n.mu.Unlock()
	}
}

// seen returns the events of kind k so far.
func (n *node) seen(k EventKind) []Event {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []Event
	for _, ev := range n.events {
		if ev.Kind == k {
			out = append(out, ev)
		}
	}
	return out
}

type harness struct {
	t     *testing.T
	fed   string
	nodes []*node
}

// newHarness starts count nodes of one federation: the first founds it,
// the others join through it. edit may change each node's Config.
func newHarness(t *testing.T, count int, edit func(i int, c *Config)) *harness {
	t.Helper()
	checkLeaks(t)
	h := &harness{t: t, fed: "fed-" + strings.ReplaceAll(t.Name(), "/", "-")}
	t.Cleanup(h.closeAll)
	for i := 0; i < count; i++ {
		if _, err := h.start(i, edit); err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
	}
	h.waitMembers(count)
	return h
}

func (h *harness) config(i int, edit func(i int, c *Config)) Config {
	c := Config{Federation: h.fed, NodeName: fmt.Sprintf("n%d", i)}
	c.Meta.DataPlane = fmt.Sprintf("udp://127.0.0.1:%d", 40000+i)
	if len(h.nodes) > 0 {
		c.Seeds = []string{h.nodes[0].LocalNode().Addr}
	}
	if os.Getenv("GOSSIP_TEST_LOG") != "" {
		c.Logger = zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr, TimeFormat: "15:04:05.000"}).
			Level(zerolog.DebugLevel).With().Timestamp().Str("test", h.t.Name()).Logger()
	}
	if edit != nil {
		edit(i, &c)
	}
	return c
}

func (h *harness) start(i int, edit func(i int, c *Config)) (*node, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Start(ctx, h.config(i, edit))
	if err != nil {
		return nil, err
	}
	n := &node{Cluster: c, done: make(chan struct{})}
	go n.collect()
	h.nodes = append(h.nodes, n)
	return n, nil
}

func (h *harness) closeAll() {
	for _, n := range h.nodes {
		_ = n.Close()
		<-n.done
	}
	// Close returns only after everything the Cluster started has
	// finished (a goroutine may still be on its way out of its final
	// return, hence the brief grace).
	deadline := time.Now().Add(500 * time.Millisecond)
	for {
		stacks := clusterGoroutines()
		if stacks == "" {
			break
		}
		if time.Now().After(deadline) {
			h.t.Errorf("goroutines started by a Cluster survive Close:\n%s", stacks)
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// live returns the nodes not closed or halted.
func (h *harness) live() []*node {
	var out []*node
	for _, n := range h.nodes {
		if !n.closing.Load() {
			out = append(out, n)
		}
	}
	return out
}

func (h *harness) waitMembers(count int) {
	h.t.Helper()
	h.waitEvery(func(n *node) bool { return len(n.Members()) == count }, "every node sees %d members", count)
}

// waitRoster waits until every live node's roster has size members.
func (h *harness) waitRoster(size int) {
	h.t.Helper()
	h.waitEvery(func(n *node) bool { return len(n.Roster()) == size }, "every roster has %d acceptors", size)
}

// joinAll creates the federation and joins a federate on every node,
// named fed0, fed1, ... in node order.
func (h *harness) joinAll() {
	h.t.Helper()
	if err := h.nodes[0].CreateFederation(ctxT(h.t), FederationSpec{}); err != nil {
		h.t.Fatal(err)
	}
	for i, n := range h.nodes {
		if _, err := n.JoinFederate(ctxT(h.t), JoinSpec{Name: fmt.Sprintf("fed%d", i), Type: "t"}); err != nil {
			h.t.Fatal(err)
		}
	}
}

// waitEvery waits until cond holds for every live node.
func (h *harness) waitEvery(cond func(*node) bool, format string, args ...any) {
	h.t.Helper()
	waitFor(h.t, 10*time.Second, func() bool {
		for _, n := range h.live() {
			if !cond(n) {
				return false
			}
		}
		return true
	}, format, args...)
}

func waitFor(t *testing.T, d time.Duration, cond func() bool, format string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting until "+format, append([]any{d}, args...)...)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lazy formats as what its function returns when it is printed, so a
// waitFor message can say what was still missing at the deadline.
type lazy func() string

func (l lazy) String() string { return l() }

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// checkLeaks registers a cleanup (run after the harness closed every
// node) that fails if the goroutine count does not return to what it was.
func checkLeaks(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		// memberlist's own goroutines notice its shutdown a moment later.
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				buf = buf[:runtime.Stack(buf, true)]
				t.Errorf("%d goroutines before, %d after:\n%s", before, runtime.NumGoroutine(), buf)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// clusterGoroutines returns the stacks of goroutines that Start or a
// Cluster method started.
func clusterGoroutines() string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var own []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "created by github.com/meshrti/meshrti/gossip.Start") ||
			strings.Contains(g, "created by github.com/meshrti/meshrti/gossip.(*Cluster)") {
			own = append(own, g)
		}
	}
	return strings.Join(own, "\n\n")
}

func TestMembershipAndMetadata(t *testing.T) {
	h := newHarness(t, 3, nil)
	for _, n := range h.nodes {
		local := n.LocalNode()
		if !strings.HasPrefix(local.Addr, "127.0.0.1:") {
			t.Fatalf("%s advertises %s, want 127.0.0.1", n.Name(), local.Addr)
		}
		for i, m := range n.Members() {
			want := fmt.Sprintf("udp://127.0.0.1:%d", 40000+i)
			if m.Name != fmt.Sprintf("n%d", i) || m.Meta.DataPlane != want || m.Meta.ProtocolVersion != version.Protocol || m.Meta.Release != version.Release() || m.State != MemberAlive {
				t.Fatalf("%s sees member %d as %+v", n.Name(), i, m)
			}
		}
	}
	// Metadata changes reach everyone as EventUpdated.
	if err := h.nodes[1].SetMeta(Meta{FederateType: "t2", DataPlane: "udp://127.0.0.1:41000"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, func() bool {
		for _, n := range h.nodes {
			ms := n.Members()
			if ms[1].Meta.DataPlane != "udp://127.0.0.1:41000" {
				return false
			}
		}
		for _, ev := range h.nodes[0].seen(EventUpdated) {
			if ev.Member.Name == "n1" && ev.Member.Meta.FederateType == "t2" && ev.Member.Meta.ProtocolVersion == version.Protocol {
				return true
			}
		}
		return false
	}, "the new metadata is visible")
	if err := h.nodes[0].SetMeta(Meta{DataPlane: strings.Repeat("x", 600)}); !errors.Is(err, ErrMetaTooLarge) {
		t.Fatalf("oversized metadata: %v", err)
	}
	for _, ev := range h.nodes[0].seen(EventJoined) {
		if !strings.HasPrefix(ev.Member.Addr, "127.0.0.1:") {
			t.Fatalf("joined event with address %s", ev.Member.Addr)
		}
	}
	if got := len(h.nodes[0].seen(EventJoined)); got < 3 {
		t.Fatalf("n0 saw %d joins, want 3", got)
	}
}

func TestWrongKeyCannotJoin(t *testing.T) {
	h := newHarness(t, 2, func(i int, c *Config) { c.Key = []byte("federation secret") })
	for _, tc := range []struct {
		name string
		edit func(i int, c *Config)
	}{
		{"wrong key", func(i int, c *Config) { c.Key = []byte("another secret") }},
		{"no key", nil},
		{"other federation", func(i int, c *Config) { c.Key = []byte("federation secret"); c.Federation = "other" }},
	} {
		_, err := h.start(9, tc.edit)
		if err == nil {
			t.Fatalf("%s: Start succeeded", tc.name)
		}
	}
	time.Sleep(300 * time.Millisecond)
	for _, n := range h.nodes {
		if got := len(n.Members()); got != 2 {
			t.Fatalf("%s sees %d members after intruders tried, want 2", n.Name(), got)
		}
	}
	// The right key still works.
	if _, err := h.start(3, func(i int, c *Config) { c.Key = []byte("federation secret") }); err != nil {
		t.Fatal(err)
	}
	h.waitMembers(3)
}

// A joiner whose seed holds the log but does not answer its request
// for it (it left, or is stuck) gets the log from another member. The
// LAN profile's push-pull comes every 30 s, and its wait for the log
// is 15 s: without asking another member, the joiner would not sync
// before its context ends.
func TestJoinSyncsFromAnotherWhenTheSeedDoesNotAnswer(t *testing.T) {
	lan := func(i int, c *Config) {
		c.Profile = ProfileLAN
		c.Timeout = 2 * time.Second // the leaves at the end wait less
	}
	h := newHarness(t, 2, lan)
	seed := h.nodes[1]
	stuck := make(chan struct{})
	t.Cleanup(func() { close(stuck) }) // before the harness closes the nodes
	seed.post(func() { <-stuck })      // its loop answers nothing now
	n, err := h.start(2, func(i int, c *Config) {
		lan(i, c)
		c.Seeds = []string{seed.LocalNode().Addr}
	})
	if err != nil {
		t.Fatalf("joining through a seed that does not answer: %v", err)
	}
	if len(n.Roster()) == 0 {
		t.Error("the joiner synced but has no roster")
	}
	if got := n.Stats().SyncsRedirected; got == 0 {
		t.Error("no sync request went to another member: the seed answered")
	}
}

func TestReplicatedStateReachesLateJoiner(t *testing.T) {
	h := newHarness(t, 3, nil)
	for i, n := range h.nodes {
		if err := n.SetState("pub/Aircraft", []byte(fmt.Sprintf("v1-%d", i))); err != nil {
			t.Fatal(err)
		}
		if err := n.SetState("pub/Aircraft", []byte(fmt.Sprintf("v2-%d", i))); err != nil {
			t.Fatal(err)
		}
		_ = n.SetState("gone", []byte("x"))
		_ = n.SetState("gone", nil)
	}
	// A value too big for gossip goes over the reliable channel.
	big := bytes.Repeat([]byte("r"), 5000)
	if err := h.nodes[2].SetState("regions", big); err != nil {
		t.Fatal(err)
	}
	late, err := h.start(3, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := func(st map[string]map[string][]byte) bool {
		for i := 0; i < 3; i++ {
			if string(st[fmt.Sprintf("n%d", i)]["pub/Aircraft"]) != fmt.Sprintf("v2-%d", i) {
				return false
			}
			if _, ok := st[fmt.Sprintf("n%d", i)]["gone"]; ok {
				return false
			}
		}
		return bytes.Equal(st["n2"]["regions"], big)
	}
	waitFor(t, 10*time.Second, func() bool {
		for _, n := range h.nodes {
			if !want(n.States()) {
				return false
			}
		}
		return true
	}, "every node, the late joiner included, has every node's latest state")
	waitFor(t, 5*time.Second, func() bool {
		for _, ev := range late.seen(EventStateChanged) {
			if ev.Member.Name == "n1" && string(ev.Value) == "v2-1" && ev.Version == 2 {
				return true
			}
		}
		return false
	}, "the late joiner got a state event with the owner's version")
	// Versioned entries: live keys only, sorted by owner then key.
	var got []string
	for _, e := range late.StateEntries() {
		got = append(got, fmt.Sprintf("%s/%s@%d", e.Owner, e.Key, e.Version))
	}
	wantEntries := []string{"n0/pub/Aircraft@2", "n1/pub/Aircraft@2", "n2/pub/Aircraft@2", "n2/regions@5"}
	if !slices.Equal(got, wantEntries) {
		t.Fatalf("StateEntries = %v, want %v", got, wantEntries)
	}
	// The late joiner's own state spreads too.
	_ = late.SetState("sub/Radar", []byte("on"))
	waitFor(t, 5*time.Second, func() bool {
		return string(h.nodes[0].States()["n3"]["sub/Radar"]) == "on"
	}, "the late joiner's state reaches n0")
}

func TestCreateFederationRace(t *testing.T) {
	h := newHarness(t, 3, nil)
	h.waitRoster(3)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = h.nodes[i+1].CreateFederation(ctxT(t), FederationSpec{Name: h.fed, TimeRepresentation: "HLAfloat64Time"})
		}()
	}
	wg.Wait()
	ok, exists := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, ErrFederationExists):
			exists++
		default:
			t.Fatalf("create: %v", err)
		}
	}
	if ok != 1 || exists != 1 {
		t.Fatalf("racing creates: %d succeeded, %d found it existing; want 1 and 1", ok, exists)
	}
	if err := h.nodes[0].CreateFederation(ctxT(t), FederationSpec{}); !errors.Is(err, ErrFederationExists) {
		t.Fatalf("third create: %v", err)
	}
	if err := h.nodes[0].CreateFederation(ctxT(t), FederationSpec{Name: "other"}); !errors.Is(err, ErrFederationMismatch) {
		t.Fatalf("create of another federation: %v", err)
	}
	list, err := h.nodes[0].ListFederations(ctxT(t))
	if err != nil || len(list) != 1 || list[0].Name != h.fed || list[0].TimeRepresentation != "HLAfloat64Time" {
		t.Fatalf("ListFederations = %+v, %v", list, err)
	}
}

func TestJoinFederateRaceResignDestroy(t *testing.T) {
	const count = 5
	h := newHarness(t, count, nil)
	h.waitRoster(count)
	if _, err := h.nodes[0].JoinFederate(ctxT(t), JoinSpec{Name: "x", Type: "t"}); !errors.Is(err, ErrFederationNotFound) {
		t.Fatalf("join before create: %v", err)
	}
	if err := h.nodes[0].CreateFederation(ctxT(t), FederationSpec{Name: h.fed}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	handles := make([]uint64, count)
	errs := make([]error, count)
	for i, n := range h.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			handles[i], errs[i] = n.JoinFederate(ctxT(t), JoinSpec{Name: "Radar", Type: "radar"})
		}()
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil:
			if winner >= 0 {
				t.Fatalf("both %d and %d joined as Radar", winner, i)
			}
			winner = i
		case !errors.Is(err, ErrNameInUse):
			t.Fatalf("node %d: %v", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("nobody joined")
	}
	// The losers join under other names (one generated).
	for i, n := range h.nodes {
		if i == winner {
			continue
		}
		name := fmt.Sprintf("Radar%d", i)
		if i == (winner+1)%count {
			name = ""
		}
		h, err := n.JoinFederate(ctxT(t), JoinSpec{Name: name, Type: "radar"})
		if err != nil {
			t.Fatalf("node %d joins as %q: %v", i, name, err)
		}
		handles[i] = h
	}
	if _, err := h.nodes[winner].JoinFederate(ctxT(t), JoinSpec{Name: "again", Type: "t"}); !errors.Is(err, ErrAlreadyJoined) {
		t.Fatalf("second join: %v", err)
	}
	// Every member has the same view of names and handles.
	waitFor(t, 5*time.Second, func() bool {
		ref := h.nodes[0].Federates()
		if len(ref) != count {
			return false
		}
		for _, n := range h.nodes[1:] {
			if !slices.Equal(n.Federates(), ref) {
				return false
			}
		}
		return true
	}, "all members agree on the federates")
	seenHandles := map[uint64]bool{}
	for i, n := range h.nodes {
		fi, ok := n.LocalFederate()
		if !ok || fi.Handle != handles[i] || fi.Node != n.Name() {
			t.Fatalf("node %d: LocalFederate = %+v, %v; handle %d", i, fi, ok, handles[i])
		}
		if seenHandles[fi.Handle] {
			t.Fatalf("handle %d twice", fi.Handle)
		}
		seenHandles[fi.Handle] = true
		if i == winner && fi.Name != "Radar" {
			t.Fatalf("winner is %q", fi.Name)
		}
		if i == (winner+1)%count && fi.Name != fmt.Sprintf("radar-%d", fi.Handle) {
			t.Fatalf("generated name %q", fi.Name)
		}
	}
	// The metadata carries the federate.
	waitFor(t, 5*time.Second, func() bool {
		for _, m := range h.nodes[0].Members() {
			if m.Meta.FederateHandle == 0 || m.Meta.FederateName == "" {
				return false
			}
		}
		return true
	}, "every member's metadata names its federate")

	if err := h.nodes[0].DestroyFederation(ctxT(t)); !errors.Is(err, ErrFederatesJoined) {
		t.Fatalf("destroy while joined: %v", err)
	}
	// Resigning frees the name.
	other := (winner + 2) % count
	if err := h.nodes[winner].ResignFederate(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if err := h.nodes[winner].ResignFederate(ctxT(t)); !errors.Is(err, ErrNotJoined) {
		t.Fatalf("second resign: %v", err)
	}
	if err := h.nodes[other].ResignFederate(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	hd, err := h.nodes[other].JoinFederate(ctxT(t), JoinSpec{Name: "Radar", Type: "radar"})
	if err != nil {
		t.Fatalf("joining under a freed name: %v", err)
	}
	if seenHandles[hd] {
		t.Fatalf("handle %d reused", hd)
	}
	// Everyone resigns; now destroy works, once.
	for _, n := range h.nodes {
		if _, ok := n.LocalFederate(); ok {
			if err := n.ResignFederate(ctxT(t)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := h.nodes[3].DestroyFederation(ctxT(t)); err != nil {
		t.Fatalf("destroy: %v", err)
	}
	if err := h.nodes[4].DestroyFederation(ctxT(t)); !errors.Is(err, ErrFederationNotFound) {
		t.Fatalf("second destroy: %v", err)
	}
	waitFor(t, 5*time.Second, func() bool {
		return len(h.nodes[1].seen(EventFederationDestroyed)) == 1 && len(h.nodes[1].seen(EventFederateJoined)) == count+1
	}, "n1 saw the federates join and the federation go")
}

func TestRegister(t *testing.T) {
	h := newHarness(t, 3, nil)
	h.waitRoster(3)
	a, b := h.nodes[1], h.nodes[2]
	e, ok, err := a.Acquire(ctxT(t), "obj/Tank1", []byte("a"))
	if err != nil || !ok || e.Holder != "n1" || e.Version != 1 {
		t.Fatalf("acquire = %+v %v %v", e, ok, err)
	}
	e, ok, err = b.Acquire(ctxT(t), "obj/Tank1", []byte("b"))
	if err != nil || ok || e.Holder != "n1" || string(e.Value) != "a" {
		t.Fatalf("second acquire = %+v %v %v", e, ok, err)
	}
	v, err := b.Propose(ctxT(t), "obj/Tank1", []byte("b"))
	if err != nil || string(v) != "a" {
		t.Fatalf("propose = %q %v", v, err)
	}
	if _, err := b.Release(ctxT(t), "obj/Tank1"); !errors.Is(err, ErrNotHolder) {
		t.Fatalf("release by another: %v", err)
	}
	e, err = a.Release(ctxT(t), "obj/Tank1")
	if err != nil || !e.Free() || e.Version != 2 {
		t.Fatalf("release = %+v %v", e, err)
	}
	// A read from a third node sees the latest decision.
	e, err = h.nodes[0].Read(ctxT(t), "obj/Tank1")
	if err != nil || !e.Free() || e.Version != 2 {
		t.Fatalf("read = %+v %v", e, err)
	}
	v, err = b.Propose(ctxT(t), "obj/Tank1", []byte("b"))
	if err != nil || string(v) != "b" {
		t.Fatalf("propose on a free key = %q %v", v, err)
	}
	e, err = h.nodes[0].Read(ctxT(t), "obj/Tank1")
	if err != nil || e.Holder != "n2" || e.Version != 3 {
		t.Fatalf("read = %+v %v", e, err)
	}
	waitFor(t, 5*time.Second, func() bool {
		e, ok := a.Lookup("obj/Tank1")
		return ok && e.Holder == "n2" && len(a.Entries("obj/")) == 1
	}, "n1's local view catches up")
	// Racing acquires from every node: one winner, all agree.
	var wg sync.WaitGroup
	wins := make([]bool, len(h.nodes))
	for i, n := range h.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, won, err := n.Acquire(ctxT(t), "sync/ReadyToRun", []byte(n.Name()))
			if err != nil {
				t.Error(err)
			}
			wins[i] = won
		}()
	}
	wg.Wait()
	if c := countTrue(wins); c != 1 {
		t.Fatalf("%d winners, want 1", c)
	}
}

func countTrue(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

func TestFailedMemberIsLostAndReleased(t *testing.T) {
	const count = 4
	h := newHarness(t, count, nil)
	h.waitRoster(count)
	h.joinAll()
	victim := h.nodes[2]
	if _, ok, err := victim.Acquire(ctxT(t), "obj/Ship", nil); err != nil || !ok {
		t.Fatalf("acquire: %v %v", ok, err)
	}
	killed := time.Now()
	if err := victim.Halt(); err != nil {
		t.Fatal(err)
	}
	survivors := h.live()
	// Every survivor reports the failure within the failure detection
	// time (about 2 s; generous under -race). The failure names the lost
	// federate when the survivor's view already held fed2's join; a
	// survivor that learns of that join later (its commit raced the
	// crash) reports fed2 when the register releases it instead.
	var missing string
	waitFor(t, 8*time.Second, func() bool {
		missing = ""
		for _, n := range survivors {
			failed, lost := false, false
			for _, ev := range n.seen(EventFailed) {
				failed = failed || ev.Member.Name == "n2"
				lost = lost || (ev.Member.Name == "n2" && ev.Federate.Name == "fed2")
			}
			for _, ev := range n.seen(EventFederateResigned) {
				lost = lost || (ev.Federate.Name == "fed2" && ev.Lost)
			}
			switch {
			case !failed:
				missing += fmt.Sprintf(" %s: no failure of n2;", n.Name())
			case !lost:
				missing += fmt.Sprintf(" %s: fed2 not reported lost;", n.Name())
			}
		}
		return missing == ""
	}, "every survivor reports n2 failed and fed2 lost (%v)", lazy(func() string { return missing }))
	t.Logf("failure reported to all survivors after %v", time.Since(killed).Round(time.Millisecond))
	// A survivor releases the lost node's federate, keys and seat.
	waitFor(t, 10*time.Second, func() bool {
		for _, n := range survivors {
			if len(n.Federates()) != count-1 || slices.Contains(n.Roster(), "n2") {
				return false
			}
			if e, _ := n.Lookup("obj/Ship"); !e.Free() {
				return false
			}
		}
		return true
	}, "the survivors release n2's federate, key and acceptor seat")
	t.Logf("holdings released after %v", time.Since(killed).Round(time.Millisecond))
	for _, ev := range survivors[0].seen(EventFederateResigned) {
		if ev.Federate.Name != "fed2" || !ev.Lost {
			t.Fatalf("unexpected resign event %+v", ev)
		}
	}
	// The name is free again.
	if err := survivors[0].ResignFederate(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := survivors[0].JoinFederate(ctxT(t), JoinSpec{Name: "fed2", Type: "t"}); err != nil {
		t.Fatalf("taking the lost federate's name: %v", err)
	}
	// A graceful Close releases at once and is reported as Left.
	leaver := survivors[2]
	if err := leaver.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, func() bool {
		for _, n := range survivors[:2] {
			if len(n.seen(EventLeft)) == 0 || len(n.Federates()) != count-2 {
				t.Logf("%s: %v %v %v", n.Name(), n.seen(EventLeft), n.Federates(), n.Roster())
				return false
			}
		}
		return true
	}, "the survivors see the leaver leave and its federate go")
}

func TestNoQuorum(t *testing.T) {
	h := newHarness(t, 3, func(i int, c *Config) { c.Timeout = 700 * time.Millisecond })
	h.waitRoster(3)
	if _, _, err := h.nodes[0].Acquire(ctxT(t), "k", nil); err != nil {
		t.Fatal(err)
	}
	_ = h.nodes[1].Halt()
	_ = h.nodes[2].Halt()
	// The answer comes once the node sees the quorum gone (memberlist's
	// failure detection, then Config.Timeout), not at the caller's
	// deadline: a minute here, so that a loaded machine's slower
	// detection cannot be mistaken for waiting on it.
	start := time.Now()
	actx, acancel := context.WithTimeout(context.Background(), time.Minute)
	defer acancel()
	_, _, err := h.nodes[0].Acquire(actx, "k2", nil)
	if !errors.Is(err, ErrNoQuorum) || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("acquire without a quorum: %v (after %v)", err, time.Since(start))
	}
	if actx.Err() != nil {
		t.Fatalf("ErrNoQuorum only at the caller's deadline (after %v)", time.Since(start))
	}
	t.Logf("ErrNoQuorum after %v", time.Since(start).Round(time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := h.nodes[0].Read(ctx, "k"); !errors.Is(err, ErrNoQuorum) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("read without a quorum: %v", err)
	}
	if e, ok := h.nodes[0].Lookup("k"); !ok || e.Holder != "n0" {
		t.Fatalf("local view lost: %+v", e)
	}
}

func TestClosedCluster(t *testing.T) {
	h := newHarness(t, 1, nil)
	n := h.nodes[0]
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, _, err := n.Acquire(context.Background(), "k", nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("acquire after close: %v", err)
	}
	if err := n.SetState("k", nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("SetState after close: %v", err)
	}
	if _, ok := <-n.Events(); ok {
		t.Fatal("events channel still open")
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []Config{
		{},
		{Federation: strings.Repeat("f", 300)},
		{Federation: "f", Profile: "moon"},
		{Federation: "f", BindAddr: "localhost"},
		{Federation: "f", Seeds: []string{"127.0.0.1"}},
		{Federation: "f", Meta: Meta{DataPlane: strings.Repeat("d", 600)}},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
	if err := (&Config{Federation: "f", Seeds: []string{"127.0.0.1:7946"}}).Validate(); err != nil {
		t.Fatal(err)
	}
}

// A suspicion is one node's alone: n0's failure detector declares n2
// dead (Suspect) while n2 runs on. n0 reports EventFailed; nobody
// removes n2's federate while n0's LostGrace runs, n2's state stays
// visible as a federate's, and when the suspicion clears n0 reports n2
// joined again with nothing else changed. A suspicion that outlasts
// LostGrace becomes a removal, which every member applies alike and n2
// learns of.
func TestSuspicionIsLocal(t *testing.T) {
	var hearing atomic.Bool // n1 hears n2 by other means (Config.Heard)
	hearing.Store(true)
	h := newHarness(t, 3, func(i int, c *Config) {
		switch i {
		case 0:
			c.LostGrace = time.Minute
		case 1:
			c.Heard = func(node string) time.Time {
				if node == "n2" && hearing.Load() {
					return time.Now()
				}
				return time.Time{}
			}
		}
	})
	h.waitRoster(3)
	h.joinAll()
	if err := h.nodes[2].SetState("k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	h.waitEvery(func(n *node) bool { return len(n.Federates()) == 3 }, "every node sees three federates")
	waitFor(t, 5*time.Second, func() bool { return hasState(h.nodes[0].FederateStateEntries(), "n2", "k") }, "n0 sees n2's state")
	a := h.nodes[0]
	if err := a.Suspect("n9", true); !errors.Is(err, ErrUnknownMember) {
		t.Errorf("Suspect of a stranger: %v", err)
	}
	if err := a.Suspect("n2", true); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, func() bool { return len(a.seen(EventFailed)) > 0 }, "n0 reports n2 failed")
	if evs := a.seen(EventFailed); len(evs) != 1 || evs[0].Member.Name != "n2" || evs[0].Federate.Name != "fed2" {
		t.Errorf("n0's failures: %+v", evs)
	}
	// n2 updates its metadata: memberlist tells n0, which still holds it
	// dead, as a node that hears no refutation would.
	if err := h.nodes[2].SetMeta(Meta{DataPlane: "udp://127.0.0.1:1"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // past the other nodes' LostGrace, had they suspected n2
	for _, n := range h.nodes {
		if len(n.Federates()) != 3 || len(n.seen(EventFederateResigned)) != 0 {
			t.Errorf("%s: federates %v, resignations %v", n.Name(), n.Federates(), n.seen(EventFederateResigned))
		}
	}
	if hasState(a.StateEntries(), "n2", "k") || !hasState(a.FederateStateEntries(), "n2", "k") {
		t.Error("while n2 is suspected, its state should leave StateEntries but stay in FederateStateEntries")
	}
	if err := a.Suspect("n2", false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, func() bool {
		joined := a.seen(EventJoined)
		last := joined[len(joined)-1]
		return last.Member.Name == "n2" && last.Member.Meta.DataPlane == "udp://127.0.0.1:1"
	}, "n0 reports n2 joined again, with the metadata it set meanwhile")
	if !hasState(a.StateEntries(), "n2", "k") {
		t.Error("n2's state is not back in StateEntries")
	}

	// n1's suspicion of n2, with the default LostGrace, waits while n1
	// still hears n2 by other means, then becomes n2's removal: every
	// member, n2 included, applies it.
	if err := h.nodes[1].Suspect("n2", true); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	if st := h.nodes[1].Stats(); st.LostProposals != 0 || st.LostDeferred == 0 || len(h.nodes[1].Federates()) != 3 {
		t.Errorf("n1 proposed %d removals (deferred %d) while it heard n2: %v", st.LostProposals, st.LostDeferred, h.nodes[1].Federates())
	}
	hearing.Store(false)
	h.waitEvery(func(n *node) bool {
		return slices.ContainsFunc(n.seen(EventFederateResigned), func(ev Event) bool { return ev.Lost && ev.Federate.Name == "fed2" })
	}, "every node, n2 included, sees fed2 removed as lost")
}

func hasState(es []StateEntry, owner, key string) bool {
	return slices.ContainsFunc(es, func(e StateEntry) bool { return e.Owner == owner && e.Key == key })
}

// TestMinorityProposesNoRemoval: a node that sees no majority of the
// acceptors alive (one half of two) proposes no removal, since the
// register would decide it only after the heal, against live members;
// once it sees a majority again, it removes the member still dead.
func TestMinorityProposesNoRemoval(t *testing.T) {
	h := newHarness(t, 4, nil)
	h.waitRoster(4)
	h.joinAll()
	h.waitEvery(func(n *node) bool { return len(n.Federates()) == 4 }, "every node sees four federates")
	a := h.nodes[0]
	for _, name := range []string{"n2", "n3"} {
		if err := a.Suspect(name, true); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 5*time.Second, func() bool { return a.Stats().LostNoMajority > 0 }, "n0 holds back for want of a majority")
	time.Sleep(time.Second) // several housekeeping rounds past LostGrace
	if st := a.Stats(); st.LostProposals != 0 {
		t.Errorf("n0 saw 2 of 4 acceptors and proposed %d removals", st.LostProposals)
	}
	for _, n := range h.nodes {
		if len(n.Federates()) != 4 || len(n.seen(EventFederateResigned)) != 0 {
			t.Errorf("%s: federates %v, resignations %v", n.Name(), n.Federates(), n.seen(EventFederateResigned))
		}
	}
	if err := a.Suspect("n2", false); err != nil {
		t.Fatal(err)
	}
	h.waitEvery(func(n *node) bool {
		return slices.ContainsFunc(n.seen(EventFederateResigned), func(ev Event) bool { return ev.Lost && ev.Federate.Name == "fed3" })
	}, "with 3 of 4 seen, n0 removes fed3, and every node applies it")
	if st := a.Stats(); st.LostProposals == 0 {
		t.Error("n0 removed fed3 without proposing it")
	}
	for _, n := range h.nodes {
		if slices.ContainsFunc(n.seen(EventFederateResigned), func(ev Event) bool { return ev.Federate.Name == "fed2" }) {
			t.Errorf("%s: fed2 removed", n.Name())
		}
	}
}
