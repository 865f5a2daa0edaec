package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/fomxml/codec"
	"github.com/meshrti/meshrti/internal/monitor"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/transport"
)

// monFed is a federation on loopback for the monitor's tests: federates
// joined in this process, each with a driver goroutine that the test's
// cleanup stops and waits for.
type monFed struct {
	t     *testing.T
	name  string
	port  int
	seeds []string
	ctx   context.Context
	wg    sync.WaitGroup
}

func newMonFed(t *testing.T, salt int) *monFed {
	ctx, cancel := context.WithCancel(context.Background())
	f := &monFed{t: t, name: fmt.Sprintf("monitor-%d-%d", os.Getpid(), salt), port: 20000 + (os.Getpid()+salt)%20000, ctx: ctx}
	t.Cleanup(func() {
		cancel()
		f.wg.Wait()
	})
	return f
}

// config is the configuration of federate name; the first one creates
// the federation, the others join through its gossip address.
func (f *monFed) config(name string) peer.Config {
	cfg := peer.Config{
		Federation: f.name, FederateName: name, FederateType: "test/" + strings.TrimRight(name, "0123456789-"),
		Create: len(f.seeds) == 0, AdoptTime: true,
		Multicast: transport.UDPConfig{Port: f.port, Interface: "lo"},
		Gossip:    peer.GossipConfig{BindAddr: "127.0.0.1", Seeds: f.seeds},
	}
	return cfg
}

// join joins federate name with the demo FOM; Close on cleanup.
func (f *monFed) join(name string) *peer.Federate {
	f.t.Helper()
	cfg := f.config(name)
	doc, err := fomxml.ParseBytes("demo.xml", demoFOM)
	if err != nil {
		f.t.Fatal(err)
	}
	cfg.FOMModules = []*fomxml.Document{doc}
	ctx, cancel := context.WithTimeout(f.ctx, 30*time.Second)
	defer cancel()
	fed, err := peer.Join(ctx, cfg)
	if err != nil {
		f.t.Fatalf("join %s: %v", name, err)
	}
	f.t.Cleanup(func() { fed.Close() })
	if len(f.seeds) == 0 {
		a, ok := fed.GossipAddr()
		if !ok {
			f.t.Fatal("no gossip address")
		}
		f.seeds = []string{a}
	}
	return fed
}

// until reads fed's events until done says so.
func until(ctx context.Context, fed *peer.Federate, done func(peer.Event) bool) error {
	for {
		ev, err := fed.Next(ctx)
		if err != nil {
			return err
		}
		if done(ev) {
			return nil
		}
	}
}

// fly makes fed a flying aircraft: regulating (lookahead 1) and
// constrained, one Position update and one time step every delay, until
// the federation's test ends or fed resigns.
func (f *monFed) fly(fed *peer.Federate, delay time.Duration) {
	f.t.Helper()
	cd, err := codec.New(fed.FDD())
	if err != nil {
		f.t.Fatal(err)
	}
	aircraft, position := f.handles(fed)
	is := func(want peer.Event) func(peer.Event) bool {
		return func(ev peer.Event) bool { return fmt.Sprintf("%T", ev) == fmt.Sprintf("%T", want) }
	}
	if err := fed.PublishObjectClassAttributes(aircraft, position); err != nil {
		f.t.Fatal(err)
	}
	if err := fed.EnableTimeRegulation(peer.Float64Time(1)); err != nil {
		f.t.Fatal(err)
	}
	if err := until(f.ctx, fed, is(peer.TimeRegulationEnabled{})); err != nil {
		f.t.Fatal(err)
	}
	if err := fed.EnableTimeConstrained(); err != nil {
		f.t.Fatal(err)
	}
	if err := until(f.ctx, fed, is(peer.TimeConstrainedEnabled{})); err != nil {
		f.t.Fatal(err)
	}
	if err := fed.ReserveObjectInstanceName(fed.Name()); err != nil {
		f.t.Fatal(err)
	}
	if err := until(f.ctx, fed, is(peer.ObjectInstanceNameReservationSucceeded{})); err != nil {
		f.t.Fatal(err)
	}
	obj, err := fed.RegisterObjectInstance(aircraft, fed.Name())
	if err != nil {
		f.t.Fatal(err)
	}
	t0, err := fed.QueryLogicalTime() // a later regulator starts where the federation is
	if err != nil {
		f.t.Fatal(err)
	}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		fail := func(err error) {
			if f.ctx.Err() == nil && !errors.Is(err, peer.ErrClosed) {
				f.t.Logf("%s: %v", fed.Name(), err)
			}
		}
		for step := t0.Float() + 1; ; step++ {
			b, _ := cd.Encode("Position3D", map[string]any{"Band": "X", "Location": []any{step, 2 * step, 1000.0}})
			if err := fed.UpdateAttributeValuesWithTime(obj, peer.AttributeValues{position: b}, nil, peer.Float64Time(step)); err != nil {
				fail(err)
				return
			}
			if err := fed.TimeAdvanceRequest(peer.Float64Time(step)); err != nil {
				fail(err)
				return
			}
			if err := until(f.ctx, fed, is(peer.TimeAdvanceGrant{})); err != nil {
				fail(err)
				return
			}
			select {
			case <-f.ctx.Done():
				return
			case <-time.After(delay):
			}
		}
	}()
}

// handles returns the demo FOM's Aircraft class and its Position
// attribute.
func (f *monFed) handles(fed *peer.Federate) (peer.ObjectClassHandle, peer.AttributeHandle) {
	f.t.Helper()
	aircraft, err := fed.GetObjectClassHandle("Aircraft")
	if err != nil {
		f.t.Fatal(err)
	}
	position, err := fed.GetAttributeHandle(aircraft, "Position")
	if err != nil {
		f.t.Fatal(err)
	}
	return aircraft, position
}

// watch makes fed a radar: it subscribes to the aircraft's positions and
// reads its events until the test ends or fed resigns.
func (f *monFed) watch(fed *peer.Federate) {
	f.t.Helper()
	aircraft, position := f.handles(fed)
	if err := fed.SubscribeObjectClassAttributes(aircraft, position); err != nil {
		f.t.Fatal(err)
	}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		_ = until(f.ctx, fed, func(peer.Event) bool { return false })
	}()
}

// monitorOn joins a monitor federate and serves its page on a free
// port; it returns the page's base URL.
func (f *monFed) monitorOn() (string, *monitorServer) {
	f.t.Helper()
	cfg := f.config("monitor")
	ctx, cancel := context.WithTimeout(f.ctx, 30*time.Second)
	defer cancel()
	fed, err := peer.Join(ctx, cfg)
	if err != nil {
		f.t.Fatalf("join the monitor: %v", err)
	}
	srv, err := startMonitorServer(fed, f.name, "127.0.0.1:0", 200*time.Millisecond, f.t.Logf)
	if err != nil {
		fed.Close()
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() {
		srv.close()
		fed.Close()
	})
	return "http://" + srv.addr.String() + "/", srv
}

// startChildNode runs `federate-node node ARGS` in a child process (this
// test binary, TestMonitorHelperNode) and waits until it has joined.
func startChildNode(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestMonitorHelperNode$")
	cmd.Env = append(os.Environ(), "MESHRTI_TEST_NODE_ARGS="+strings.Join(append([]string{"node"}, args...), "\x1f"))
	p := startCmd(t, cmd)
	p.line(t, "joined ", 30*time.Second)
	go func() { // the rest of its output, until it ends
		for range p.lines {
		}
	}()
	return cmd
}

// TestMonitorHelperNode is the child process of startChildNode; run
// alone it skips.
func TestMonitorHelperNode(t *testing.T) {
	args := os.Getenv("MESHRTI_TEST_NODE_ARGS")
	if args == "" {
		t.Skip("the child process of the monitor tests (MESHRTI_TEST_NODE_ARGS)")
	}
	os.Exit(run(strings.Split(args, "\x1f"), os.Stdout, os.Stderr))
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %s: %s", url, resp.Status, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// waitFederation polls /api/federation until ok accepts it.
func waitFederation(t *testing.T, base, what string, within time.Duration, ok func(monitor.Federation) bool) monitor.Federation {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var s monitor.Federation
		getJSON(t, base+"api/federation", &s)
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			b, _ := json.MarshalIndent(s, "", " ")
			t.Fatalf("%s: not within %v; last:\n%s", what, within, b)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func federate(s monitor.Federation, name string) (monitor.Federate, bool) {
	for _, f := range s.Federates {
		if f.Name == name {
			return f, true
		}
	}
	return monitor.Federate{}, false
}

// The monitor's JSON: every federate appears with its MOM values, which
// change as the federation runs; the objects per class and an instance's
// owner are shown; a federate that resigns is gone within a few
// seconds, one whose node crashed is shown as lost; /metrics and
// /events serve the same figures.
func TestMonitorAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a federation on loopback")
	}
	f := newMonFed(t, 53)
	alpha := f.join("alpha")
	f.fly(alpha, 50*time.Millisecond)
	beta := f.join("beta")
	f.watch(beta)
	gamma := startChildNode(t, "-role", "pong", "-name", "gamma", "-federation", f.name, "-seeds", f.seeds[0],
		"-mcast-port", fmt.Sprint(f.port), "-iface", "lo", "-timeout", "120s")
	base, _ := f.monitorOn()

	first := waitFederation(t, base, "alpha, beta, gamma and the monitor with values", 20*time.Second, func(s monitor.Federation) bool {
		a, _ := federate(s, "alpha")
		b, _ := federate(s, "beta")
		g, _ := federate(s, "gamma")
		_, m := federate(s, "monitor")
		return m && a.Time != nil && *a.Time > 0 && a.UpdatesSent > 0 && b.Reflections > 0 && g.Type != ""
	})
	if first.Federation != f.name || first.Monitor != "monitor" {
		t.Errorf("federation %q, monitor %q", first.Federation, first.Monitor)
	}
	a, _ := federate(first, "alpha")
	if a.Handle != uint64(alpha.Handle()) || a.Type != "test/alpha" || a.Host == "" || !a.Regulating || !a.Constrained ||
		a.Lookahead == nil || *a.Lookahead != 1 || a.State != "ActiveFederate" || a.Lost {
		t.Errorf("alpha: %+v", a)
	}
	if g, _ := federate(first, "gamma"); g.Type != "federate-node/pong" || g.Regulating || g.Time == nil || *g.Time != 0 {
		t.Errorf("gamma: %+v", g)
	}
	// Times and counts move, and the rates are seen.
	waitFederation(t, base, "alpha's time, updates and rate, beta's reflections moving on", 15*time.Second, func(s monitor.Federation) bool {
		a2, _ := federate(s, "alpha")
		b2, _ := federate(s, "beta")
		b1, _ := federate(first, "beta")
		return *a2.Time > *a.Time+2 && a2.UpdatesSent > a.UpdatesSent && a2.UpdatesPerSecond > 0 &&
			b2.Reflections > b1.Reflections && b2.ReflectionsPerSecond > 0
	})
	// Objects per class, from each federate's node.
	s := waitFederation(t, base, "one Aircraft, alpha's", 10*time.Second, func(s monitor.Federation) bool {
		return len(s.Objects) == 1 && s.Objects[0].Count == 1
	})
	if o := s.Objects[0]; o.Class != "HLAobjectRoot.Aircraft" || o.ByFederate["alpha"] != 1 {
		t.Errorf("objects: %+v", s.Objects)
	}
	// The owner of a chosen instance.
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Post(base+"api/choose?class=Aircraft&instance=alpha", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("choosing alpha's instance: %s", resp.Status)
		}
		time.Sleep(100 * time.Millisecond)
	}
	waitFederation(t, base, "alpha owning its Position", 10*time.Second, func(s monitor.Federation) bool {
		for _, at := range s.Ownership.Attributes {
			if at.Name == "Position" {
				return at.Owner == "alpha" && s.Ownership.Instance == "alpha" && s.Ownership.Class == "HLAobjectRoot.Aircraft"
			}
		}
		return false
	})

	// /metrics and /events.
	resp, err := http.Get(base + "metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		fmt.Sprintf(`meshrti_monitor_federate_logical_time{federate="alpha",federation=%q}`, f.name),
		fmt.Sprintf(`meshrti_monitor_federate_reflections_received_total{federate="beta",federation=%q}`, f.name),
		fmt.Sprintf(`meshrti_monitor_federates{federation=%q} 4`, f.name),
		"go_goroutines",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	checkEvents(t, base, "alpha")

	// Resigned: gone within a few seconds, and not lost.
	rctx, rcancel := context.WithTimeout(context.Background(), 10*time.Second)
	if err := beta.ResignFederationExecution(rctx, peer.DeleteObjects); err != nil {
		t.Fatal(err)
	}
	rcancel()
	waitFederation(t, base, "beta gone", 5*time.Second, func(s monitor.Federation) bool {
		_, ok := federate(s, "beta")
		return !ok
	})
	// Crashed: shown as lost.
	s = waitFederation(t, base, "gamma alive", 5*time.Second, func(s monitor.Federation) bool {
		g, ok := federate(s, "gamma")
		return ok && !g.Lost
	})
	if err := gamma.Process.Kill(); err != nil { // no resign, no gossip leave
		t.Fatal(err)
	}
	s = waitFederation(t, base, "gamma lost", 30*time.Second, func(s monitor.Federation) bool {
		g, ok := federate(s, "gamma")
		return ok && g.Lost && g.State == "lost"
	})
	if len(s.Lost) != 1 || s.Lost[0].Name != "gamma" || s.Lost[0].Reason == "" {
		t.Errorf("lost: %+v", s.Lost)
	}
	if _, ok := federate(s, "beta"); ok {
		t.Error("beta is back")
	}
	if a, _ := federate(s, "alpha"); a.Lost {
		t.Error("alpha lost")
	}
}

// checkEvents reads the first server-sent event of /events and checks
// it is a snapshot naming federate name.
func checkEvents(t *testing.T, base, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("events: Content-Type %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	events := 0
	for sc.Scan() && events < 2 {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var s monitor.Federation
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatalf("event: %v", err)
		}
		if _, ok := federate(s, name); !ok {
			t.Errorf("event without %s", name)
		}
		events++
	}
	if events < 2 {
		t.Errorf("%d events: %v", events, errors.Join(sc.Err(), ctx.Err()))
	}
}
