package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/fomxml/codec"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/record"
	"github.com/meshrti/meshrti/peer/transport"
)

// memNet is an in-memory network and control plane for federates of this
// process.
type memNet struct {
	net *transport.Network
	reg *peer.MemRegistry
	doc *fomxml.Document
}

func newMemNet(t *testing.T) *memNet {
	doc, err := fomxml.ParseBytes("demo.xml", demoFOM)
	if err != nil {
		t.Fatal(err)
	}
	return &memNet{net: transport.NewNetwork(transport.NetworkConfig{Seed: 1}), reg: peer.NewMemRegistry(), doc: doc}
}

// config is a joining federate's configuration; modules says whether it
// brings the demo FOM (and may create the federation).
func (m *memNet) config(federation, name string, modules bool) peer.Config {
	cfg := peer.Config{
		Federation: federation, FederateName: name, FederateType: "test",
		Control: m.reg.Control(federation), Transport: m.net.Endpoint(name), TickInterval: 2 * time.Millisecond,
	}
	if modules {
		cfg.FOMModules, cfg.Create = []*fomxml.Document{m.doc}, true
	}
	return cfg
}

// stepper is a regulating, constrained federate that owns one named
// Aircraft and updates its Position at every step; the first one also
// sends a RadarContact every 10 steps.
type stepper struct {
	fed      *peer.Federate
	cd       *codec.Codec
	name     string
	aircraft peer.ObjectClassHandle
	position peer.AttributeHandle
	callsign peer.AttributeHandle
	contact  peer.InteractionClassHandle
	params   map[string]peer.ParameterHandle
}

func newStepper(t *testing.T, ctx context.Context, m *memNet, federation, name string) *stepper {
	t.Helper()
	fed, err := peer.Join(ctx, m.config(federation, name, true))
	if err != nil {
		t.Fatalf("join %s: %v", name, err)
	}
	t.Cleanup(func() { fed.Close() })
	cd, err := codec.New(fed.FDD())
	if err != nil {
		t.Fatal(err)
	}
	s := &stepper{fed: fed, cd: cd, name: name, params: map[string]peer.ParameterHandle{}}
	fdd := fed.FDD()
	ac, _ := fdd.ObjectClass("Aircraft")
	pos, _ := ac.Attribute("Position")
	cs, _ := ac.Attribute("Callsign")
	rc, _ := fdd.InteractionClass("RadarContact")
	s.aircraft, s.position, s.callsign, s.contact = ac.Handle, pos.Handle, cs.Handle, rc.Handle
	for _, p := range rc.AllParameters() {
		s.params[p.Name] = p.Handle
	}
	if err := errors.Join(fed.PublishObjectClassAttributes(ac.Handle, pos.Handle, cs.Handle), fed.PublishInteractionClass(rc.Handle),
		fed.EnableTimeRegulation(peer.Float64Time(1))); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *stepper) enc(t *testing.T, typ string, v any) []byte {
	b, err := s.cd.Encode(typ, v)
	if err != nil {
		t.Errorf("encode %s: %v", typ, err)
	}
	return b
}

// run registers the stepper's instance, sends its callsign, then steps
// 1..steps, and lingers before resigning so that receivers get their
// last grant first.
func (s *stepper) run(t *testing.T, ctx context.Context, steps int, contacts bool) error {
	if err := s.fed.ReserveObjectInstanceName(s.name + "-aircraft"); err != nil {
		return err
	}
	if err := waitFor[peer.ObjectInstanceNameReservationSucceeded](ctx, s.fed); err != nil {
		return err
	}
	obj, err := s.fed.RegisterObjectInstance(s.aircraft, s.name+"-aircraft")
	if err != nil {
		return err
	}
	if err := s.fed.UpdateAttributeValues(obj, peer.AttributeValues{s.callsign: s.enc(t, "HLAunicodeString", "call-"+s.name)}, []byte("cs")); err != nil {
		return err
	}
	for step := 1; step <= steps; step++ {
		ts := float64(step)
		pos := s.enc(t, "Position3D", map[string]any{"Band": "X", "Location": []any{ts, float64(len(s.name)), -ts / 2}})
		if err := s.fed.UpdateAttributeValuesWithTime(obj, peer.AttributeValues{s.position: pos}, nil, peer.Float64Time(ts)); err != nil {
			return fmt.Errorf("update at %v: %w", ts, err)
		}
		if contacts && step%10 == 0 {
			vals := peer.ParameterValues{
				s.params["Target"]: s.enc(t, "HLAunicodeString", fmt.Sprintf("target-%d", step)),
				s.params["Range"]:  s.enc(t, "Meters", ts*100),
				s.params["Report"]: s.enc(t, "ContactReport", map[string]any{"Band": "S", "Fine": map[string]any{"Band": "L", "Location": []any{1.0, 2.0, ts}}}),
			}
			if err := s.fed.SendInteractionWithTime(s.contact, vals, []byte("rc"), peer.Float64Time(ts)); err != nil {
				return fmt.Errorf("interaction at %v: %w", ts, err)
			}
		}
		if err := s.fed.TimeAdvanceRequest(peer.Float64Time(ts)); err != nil {
			return err
		}
		if err := waitFor[peer.TimeAdvanceGrant](ctx, s.fed); err != nil {
			return fmt.Errorf("grant %v: %w", ts, err)
		}
	}
	lctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	for {
		if _, err := s.fed.Next(lctx); err != nil {
			break
		}
	}
	cancel()
	rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer rcancel()
	return s.fed.ResignFederationExecution(rctx, peer.DeleteObjects)
}

// readRecording reads a recording, finished or not, and returns its
// events and the error that ended it (io.EOF when closed cleanly).
func readRecording(t *testing.T, path string) (record.Header, []record.Event, error) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return record.Header{}, nil, err
	}
	rd, err := record.NewReader(bytes.NewReader(b))
	if err != nil {
		return record.Header{}, nil, err
	}
	var evs []record.Event
	for {
		ev, err := rd.Next()
		if err != nil {
			return rd.Header(), evs, err
		}
		evs = append(evs, *ev)
	}
}

// waitRecorded waits until the recording at path holds at least n events.
func waitRecorded(t *testing.T, path string, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		_, evs, _ := readRecording(t, path)
		if len(evs) >= n {
			return
		}
		if time.Now().After(deadline) {
			for _, ev := range evs[max(0, len(evs)-5):] {
				t.Logf("last: %s %v %v %s %s", ev.Kind, ev.HasTime, ev.Time, ev.Object, ev.Class)
			}
			t.Fatalf("%s: %d of %d events recorded after %v", path, len(evs), n, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startRecorder records federation into path until the returned stop is
// called; it returns once the recorder is subscribed.
func startRecorder(t *testing.T, ctx context.Context, cfg peer.Config, path string) (stop func() error) {
	t.Helper()
	return startRecorderWith(t, ctx, cfg, path, record.Recorder{})
}

// startRecorderWith is startRecorder with options; stop also returns
// when the recorder ended by itself (-until).
func startRecorderWith(t *testing.T, ctx context.Context, cfg peer.Config, path string, rec record.Recorder) (stop func() error) {
	t.Helper()
	rctx, cancel := context.WithCancel(ctx)
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		rec.Ready = func(*peer.Federate) { close(ready) }
		_, err := rec.RecordFile(rctx, cfg, path)
		done <- err
	}()
	select {
	case <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("recorder: %v", err)
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("recorder not ready after 30s")
	}
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() { cancel(); err = <-done })
		return err
	}
	t.Cleanup(func() { stop() })
	return stop
}

// comparable lines of a recording, decoded through its FOM, without the
// federate: time-stamped updates and interactions in order; discoveries,
// untimed updates and removals as sorted sets (their receive order
// relative to other senders is not reproducible).
func comparable(t *testing.T, h record.Header, evs []record.Event) (tso, ro []string) {
	t.Helper()
	fdd, err := h.FDD()
	if err != nil {
		t.Fatal(err)
	}
	cd, err := codec.New(fdd)
	if err != nil {
		t.Fatal(err)
	}
	dec := &valueDecoder{fdd: fdd, cd: cd}
	for i := range evs {
		s := dec.show(&evs[i])
		s.Federate = ""
		if evs[i].Kind == record.KindRemove {
			s.Time, s.Order = nil, ""
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if s.Time != nil && evs[i].Kind != record.KindRemove {
			tso = append(tso, string(b))
		} else {
			ro = append(ro, string(b))
		}
	}
	slices.Sort(ro)
	return tso, ro
}

// TestRecordReplayRecord records three federates stepping 1,000 times,
// replays the recording into a fresh federation while recording that
// one, and checks that both recordings hold the same values at the same
// time stamps.
func TestRecordReplayRecord(t *testing.T) {
	steps := 1000
	if testing.Short() {
		steps = 100
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	m := newMemNet(t)
	dir := t.TempDir()
	first, second := filepath.Join(dir, "first.rec"), filepath.Join(dir, "second.rec")

	var steppers []*stepper
	for i := range 3 {
		steppers = append(steppers, newStepper(t, ctx, m, "rr-one", fmt.Sprintf("S%d", i)))
	}
	for _, s := range steppers {
		if err := waitFor[peer.TimeRegulationEnabled](ctx, s.fed); err != nil {
			t.Fatal(err)
		}
	}
	stop1 := startRecorder(t, ctx, m.config("rr-one", "R1", false), first)
	for _, s := range steppers {
		if err := s.fed.EnableTimeConstrained(); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range steppers {
		if err := waitFor[peer.TimeConstrainedEnabled](ctx, s.fed); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, len(steppers))
	for i, s := range steppers {
		wg.Go(func() { errs[i] = s.run(t, ctx, steps, i == 0) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	// Discoveries, callsigns, positions, contacts, removals.
	want := 3 + 3 + 3*steps + steps/10 + 3
	waitRecorded(t, first, want, 30*time.Second)
	if err := stop1(); err != nil {
		t.Fatalf("recorder 1: %v", err)
	}
	t.Logf("recorded %d steps of 3 federates in %v", steps, time.Since(start))
	h1, evs1, err := readRecording(t, first)
	if !errors.Is(err, io.EOF) {
		t.Fatalf("first recording not closed cleanly: %v", err)
	}
	if len(evs1) != want {
		t.Fatalf("first recording holds %d events, want %d", len(evs1), want)
	}
	if h1.Federation != "rr-one" || len(h1.Modules) != 1 || !strings.Contains(h1.Modules[0].Text, "RadarContact") || !strings.Contains(h1.MIM.Text, "HLAmanager") {
		t.Fatalf("header: federation %q, %d modules", h1.Federation, len(h1.Modules))
	}

	// Replay into a fresh federation, recorded by R2 from the start.
	start = time.Now()
	var stop2 func() error
	res, err := (&record.Player{Ready: func(*peer.Federate) {
		stop2 = startRecorder(t, ctx, m.config("rr-two", "R2", false), second)
	}}).PlayFile(ctx, m.config("rr-two", "player", false), first)
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if res.Events != int64(len(evs1)) || res.Time != float64(steps) {
		t.Fatalf("replayed %d events up to %v, want %d up to %d", res.Events, res.Time, len(evs1), steps)
	}
	waitRecorded(t, second, want, 30*time.Second)
	if err := stop2(); err != nil {
		t.Fatalf("recorder 2: %v", err)
	}
	t.Logf("replayed and recorded again in %v", time.Since(start))
	h2, evs2, err := readRecording(t, second)
	if !errors.Is(err, io.EOF) {
		t.Fatalf("second recording not closed cleanly: %v", err)
	}
	tso1, ro1 := comparable(t, h1, evs1)
	tso2, ro2 := comparable(t, h2, evs2)
	if len(tso1) != 3*steps+steps/10 {
		t.Fatalf("first recording: %d time-stamped events", len(tso1))
	}
	for i := range max(len(tso1), len(tso2)) {
		if i >= len(tso1) || i >= len(tso2) || tso1[i] != tso2[i] {
			t.Fatalf("time-stamped event %d differs (%d and %d events):\nfirst:  %s\nsecond: %s", i, len(tso1), len(tso2), at(tso1, i), at(tso2, i))
		}
	}
	if !slices.Equal(ro1, ro2) {
		t.Fatalf("untimed events differ:\nfirst:  %q\nsecond: %q", ro1, ro2)
	}
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "(none)"
}

// waitFor reads fed's events until one is a T; a lost connection ends
// the wait.
func waitFor[T peer.Event](ctx context.Context, fed *peer.Federate) error {
	for {
		switch ev, err := fed.Next(ctx); ev := ev.(type) {
		case T:
			return nil
		case peer.ConnectionLost:
			return fmt.Errorf("connection lost: %s", ev.Reason)
		case nil:
			return err
		}
	}
}
