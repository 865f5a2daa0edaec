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
	"testing"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/fomxml/codec"
	"github.com/meshrti/meshrti/internal/bench"
	"github.com/meshrti/meshrti/internal/nodetest"
	"github.com/meshrti/meshrti/internal/tick"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/record"
)

// demoRecording writes a recording of the demo FOM by hand: a discovery,
// a callsign, time-stamped positions at 1..steps (a frame each), a ping
// and a removal. It returns the file's path.
func demoRecording(t *testing.T, steps int) string {
	t.Helper()
	cd := demoTestCodec(t)
	path := filepath.Join(t.TempDir(), "demo.rec")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := record.NewWriter(f, record.Header{
		Federation: "demo", Recorder: "rec", Started: time.Now(), TimeRepresentation: peer.HLAfloat64Time,
		MIM:     record.Module{Designator: "HLAstandardMIM", Text: string(fomxml.StandardMIMXML())},
		Modules: []record.Module{{Designator: "demo.xml", Text: string(demoFOM)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	enc := func(typ string, v any) []byte {
		b, err := cd.Encode(typ, v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	write := func(ev record.Event) {
		if err := w.Write(&ev); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	write(record.Event{Kind: record.KindDiscover, Federate: "A", Class: "HLAobjectRoot.Aircraft", Object: "jet-1"})
	write(record.Event{Kind: record.KindUpdate, Federate: "A", Class: "HLAobjectRoot.Aircraft", Object: "jet-1", Transportation: "HLAreliable",
		Values: []record.Value{{Name: "Callsign", Data: enc("HLAunicodeString", "JET1")}}})
	for s := 1; s <= steps; s++ {
		write(record.Event{Kind: record.KindUpdate, HasTime: true, Time: float64(s), TSO: true, SentTSO: true, Federate: "A",
			Class: "HLAobjectRoot.Aircraft", Object: "jet-1", Transportation: "HLAreliable",
			Values: []record.Value{{Name: "Position", Data: enc("Position3D", map[string]any{"Band": "X", "Location": []any{float64(s), 2.0, 3.0}})}}})
	}
	write(record.Event{Kind: record.KindInteraction, Federate: "B", Class: "HLAinteractionRoot.Ping", Transportation: "HLAreliable",
		Values: []record.Value{{Name: "Seq", Data: enc("HLAinteger64BE", 7)}, {Name: "Payload", Data: enc("HLAopaqueData", []byte{1, 2})}}})
	write(record.Event{Kind: record.KindRemove, Federate: "A", Class: "HLAobjectRoot.Aircraft", Object: "jet-1"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// demoTestCodec is the codec of the demo FOM's data types.
func demoTestCodec(t *testing.T) *codec.Codec {
	t.Helper()
	doc, err := fomxml.ParseBytes("demo.xml", demoFOM)
	if err != nil {
		t.Fatal(err)
	}
	fdd, err := fomxml.Merge(doc)
	if err != nil {
		t.Fatal(err)
	}
	cd, err := codec.New(fdd)
	if err != nil {
		t.Fatal(err)
	}
	return cd
}

// TestRecordShowJSON checks every field of "record show -json": kinds,
// times (null in receive order), orders, senders, qualified classes,
// instance names (none for interactions) and values decoded by type.
func TestRecordShowJSON(t *testing.T) {
	path := demoRecording(t, 2)
	code, out, errOut := runCmd(t, "record", "show", path, "-json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := []string{
		`{"kind":"discover","time":null,"order":"RO","federate":"A","class":"HLAobjectRoot.Aircraft","object":"jet-1","values":{}}`,
		`{"kind":"update","time":null,"order":"RO","federate":"A","class":"HLAobjectRoot.Aircraft","object":"jet-1","values":{"Callsign":"JET1"}}`,
		`{"kind":"update","time":1,"order":"TSO","federate":"A","class":"HLAobjectRoot.Aircraft","object":"jet-1","values":{"Position":{"Band":"X","Location":[1,2,3]}}}`,
		`{"kind":"update","time":2,"order":"TSO","federate":"A","class":"HLAobjectRoot.Aircraft","object":"jet-1","values":{"Position":{"Band":"X","Location":[2,2,3]}}}`,
		`{"kind":"interaction","time":null,"order":"RO","federate":"B","class":"HLAinteractionRoot.Ping","values":{"Payload":"AQI=","Seq":7}}`,
		`{"kind":"remove","time":null,"order":"RO","federate":"A","class":"HLAobjectRoot.Aircraft","object":"jet-1","values":{}}`,
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), out)
	}
	for i := range want {
		var got, exp any
		if err := json.Unmarshal([]byte(lines[i]), &got); err != nil {
			t.Fatalf("line %d is not JSON: %v: %s", i, err, lines[i])
		}
		json.Unmarshal([]byte(want[i]), &exp)
		if fmt.Sprint(got) != fmt.Sprint(exp) {
			t.Errorf("line %d:\n got %s\nwant %s", i, lines[i], want[i])
		}
	}
	// The text form decodes too.
	code, out, errOut = runCmd(t, "record", "show", path)
	if code != 0 || !strings.Contains(out, `1 TSO update HLAobjectRoot.Aircraft "jet-1" from A: Position={"Band":"X","Location":[1,2,3]}`) ||
		!strings.Contains(out, "end: 6 events") {
		t.Fatalf("exit %d: %s\n%s", code, out, errOut)
	}
}

// TestRecordShowDamaged: show prints what precedes the damage and exits 1
// saying where it stopped; another format version is refused.
func TestRecordShowDamaged(t *testing.T) {
	path := demoRecording(t, 5)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.rec")
	if err := os.WriteFile(cut, b[:len(b)-30], 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCmd(t, "record", "show", "-json", cut)
	if code != 1 || !strings.Contains(errOut, "stopped at byte") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if n := strings.Count(out, "\n"); n < 5 || n >= 9 {
		t.Fatalf("%d lines before the damage:\n%s", n, out)
	}
	b[len(record.Magic)+1] = 9 // version 9
	other := filepath.Join(t.TempDir(), "v9.rec")
	if err := os.WriteFile(other, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runCmd(t, "record", "show", other)
	if code != 1 || !strings.Contains(errOut, "format version 9; this program reads version 1") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

// TestReplayDamaged replays a truncated file into a recorded federation:
// it plays the events before the damage, says where it stopped, and the
// recorder saw exactly those; a file of another version is refused.
func TestReplayDamaged(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	path := demoRecording(t, 40)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Cut inside the frame of the position at time 31 (frame 0 is the
	// header's; then the discovery, the callsign and 30 positions play).
	off := frameStart(t, b, 33) + 20
	cut := filepath.Join(t.TempDir(), "cut.rec")
	if err := os.WriteFile(cut, b[:off], 0o644); err != nil {
		t.Fatal(err)
	}
	m := newMemNet(t)
	second := filepath.Join(t.TempDir(), "second.rec")
	var stop func() error
	res, err := (&record.Player{Ready: func(*peer.Federate) {
		stop = startRecorder(t, ctx, m.config("damaged", "R", false), second)
	}}).PlayFile(ctx, m.config("damaged", "player", false), cut)
	var de *record.DamageError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), fmt.Sprintf("stopped at byte %d after 32 events", frameStart(t, b, 33))) {
		t.Fatalf("replay error %v, want a DamageError after 32 events", err)
	}
	if res.Events != 32 || res.Time != 30 {
		t.Fatalf("replayed %d events up to %v, want 32 up to 30", res.Events, res.Time)
	}
	waitRecorded(t, second, 33, 20*time.Second) // and the removal at the end
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	_, evs, err := readRecording(t, second)
	if !errors.Is(err, io.EOF) || len(evs) != 33 || evs[31].Time != 30 || evs[32].Kind != record.KindRemove {
		t.Fatalf("recorded %d events (%v)", len(evs), err)
	}

	bad := bytes.Clone(b)
	bad[len(record.Magic)+1] = 2
	other := filepath.Join(t.TempDir(), "v2.rec")
	if err := os.WriteFile(other, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	var ve *record.VersionError
	if _, err := (&record.Player{}).PlayFile(ctx, m.config("other", "player", false), other); !errors.As(err, &ve) {
		t.Fatalf("replay of a version 2 file: %v", err)
	}
}

// frameStart returns the offset of the i-th frame (0 is the header's).
func frameStart(t *testing.T, b []byte, i int) int {
	t.Helper()
	off := len(record.Magic) + 2
	for ; i > 0; i-- {
		off += 13 + int(uint32(b[off])<<24|uint32(b[off+1])<<16|uint32(b[off+2])<<8|uint32(b[off+3]))
		if off >= len(b) {
			t.Fatalf("no frame %d", i)
		}
	}
	return off
}

// TestRecordSIGINT runs the recorder as a process beside a ping and a
// pong federate over loopback multicast, interrupts it, and finds the
// file closed cleanly with what was exchanged: updates and interactions.
func TestRecordSIGINT(t *testing.T) {
	bin, ctx, fed, port := processTest(t, "rec-test", 30000)
	path := filepath.Join(t.TempDir(), "run.rec")
	pong := start(t, ctx, bin, "node", "-role", "pong", "-name", "pong", "-create", "-federation", fed, "-mcast-port", port, "-timeout", "80s")
	seed := strings.TrimSpace(pong.line(t, "gossip ", 20*time.Second))
	rec := start(t, ctx, bin, "record", "-federation", fed, "-mcast-port", port, "-seeds", seed, "-o", path)
	rec.line(t, "recording ", 30*time.Second)
	ping := start(t, ctx, bin, "node", "-role", "ping", "-name", "ping", "-federation", fed, "-mcast-port", port,
		"-seeds", seed, "-count", "300", "-size", "100", "-timeout", "80s")
	if err := ping.wait(); err != nil {
		t.Fatalf("ping: %v", err)
	}
	if err := pong.wait(); err != nil {
		t.Fatalf("pong: %v", err)
	}
	// The recorder writes what it has whenever nothing is queued: the
	// unfinished file already reads, up to its last frame.
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, evs, err := readRecording(t, path)
		var de *record.DamageError
		if !errors.As(err, &de) || !strings.Contains(err.Error(), "without its end record") {
			t.Fatalf("recording in progress: %v", err)
		}
		if len(evs) >= 300 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := rec.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Skipf("cannot send SIGINT here: %v", err)
	}
	n := strings.TrimSpace(rec.line(t, "recorded ", 20*time.Second))
	if err := rec.wait(); err != nil {
		t.Fatalf("recorder: %v", err)
	}
	_, evs, err := readRecording(t, path)
	if !errors.Is(err, io.EOF) {
		t.Fatalf("after SIGINT the recording ends with %v, want a clean end", err)
	}
	if !strings.HasPrefix(n, fmt.Sprintf("%d events", len(evs))) {
		t.Fatalf("recorder says %q, the file holds %d events", n, len(evs))
	}
	kinds := map[record.Kind]int{}
	classes := map[string]int{}
	for _, ev := range evs {
		kinds[ev.Kind]++
		classes[ev.Class]++
	}
	if kinds[record.KindDiscover] != 1 || classes["HLAobjectRoot.Aircraft"] < 302 || classes["HLAinteractionRoot.Ping"] < 200 || classes["HLAinteractionRoot.Pong"] < 200 {
		t.Fatalf("recorded %v, by class %v", kinds, classes)
	}
}

// TestBenchRecord runs "bench record" small: the recorder, in pong's
// place, wrote every update, and the result has its fields.
func TestBenchRecord(t *testing.T) {
	var res recordBenchResult
	nodetest.JSON(t, &res, 7, "bench", "record", "-count", "20000", "-json")
	if res.Bench != "record" || res.Payload != 100 || res.Updates != 20000 || res.Recorded != 20000 ||
		res.UpdatesPerS <= 0 || res.RecordedPerS <= 0 || res.FileBytes <= 0 || res.Ratio != res.RecordedPerS/res.UpdatesPerS {
		t.Fatalf("result %+v", res)
	}
}

// TestRecordUntilAndSubsets: a recorder with -until 10 stops by itself
// once granted 10, closing its file cleanly; one limited to
// -interactions Ping records no Aircraft, one limited to -classes
// Aircraft no interaction.
func TestRecordUntilAndSubsets(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	path := demoRecording(t, 40)
	m := newMemNet(t)
	dir := t.TempDir()
	until, pings, aircraft := filepath.Join(dir, "until.rec"), filepath.Join(dir, "pings.rec"), filepath.Join(dir, "aircraft.rec")
	var stops []func() error
	_, err := (&record.Player{Ready: func(*peer.Federate) {
		stops = append(stops,
			startRecorderWith(t, ctx, m.config("subsets", "R1", false), until, record.Recorder{Until: 10, HasUntil: true}),
			startRecorderWith(t, ctx, m.config("subsets", "R2", false), pings, record.Recorder{Interactions: []string{"Ping"}, Classes: []string{"Jet"}}),
			startRecorderWith(t, ctx, m.config("subsets", "R3", false), aircraft, record.Recorder{Classes: []string{"HLAobjectRoot.Aircraft"}, Interactions: []string{"Pong"}}))
	}}).PlayFile(ctx, m.config("subsets", "player", false), path)
	if err != nil {
		t.Fatal(err)
	}
	waitRecorded(t, pings, 1, 20*time.Second)
	waitRecorded(t, aircraft, 43, 20*time.Second)
	for i, stop := range stops {
		if err := stop(); err != nil {
			t.Fatalf("recorder %d: %v", i+1, err)
		}
	}
	// R1 ended at its grant of 10: the discovery, the callsign and the
	// positions at 1..10, and the ping if it came before (it is in
	// receive order, sent after the position at 40: it overtakes the
	// positions that R1 holds until its grants).
	_, evs, err := readRecording(t, until)
	evs = slices.DeleteFunc(evs, func(ev record.Event) bool { return ev.Class == "HLAinteractionRoot.Ping" })
	if !errors.Is(err, io.EOF) || len(evs) != 12 || evs[11].Time != 10 {
		for _, ev := range evs {
			t.Logf("%s %v %v %s", ev.Kind, ev.TSO, ev.Time, ev.Class)
		}
		t.Fatalf("-until 10: %d events besides the ping (%v)", len(evs), err)
	}
	_, evs, err = readRecording(t, pings)
	if !errors.Is(err, io.EOF) || len(evs) != 1 || evs[0].Class != "HLAinteractionRoot.Ping" {
		t.Fatalf("-interactions Ping -classes Jet: %d events (%v)", len(evs), err)
	}
	_, evs, err = readRecording(t, aircraft)
	if !errors.Is(err, io.EOF) || len(evs) != 43 {
		t.Fatalf("-classes Aircraft: %d events (%v)", len(evs), err)
	}
	for _, ev := range evs {
		if ev.Class != "HLAobjectRoot.Aircraft" {
			t.Fatalf("-classes Aircraft recorded %s %s", ev.Kind, ev.Class)
		}
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"record", "-o", until, "-classes"}, &out, &errOut); code != 2 {
		t.Fatalf("a flag without its value: exit %d", code)
	}
	if code := run([]string{"record", "-federation", "x"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "usage: federate-node record") {
		t.Fatalf("no -o: exit %d, %s", code, errOut.String())
	}
}

// TestReplaySpeed: at -speed 50, 20 steps of logical time (1 to 20) take
// at least 19/50 s of wall-clock time: the player waits for the recorded
// pace before each advance.
func TestReplaySpeed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	path := demoRecording(t, 20)
	m := newMemNet(t)
	res, err := (&record.Player{Speed: 50}).PlayFile(ctx, m.config("paced", "player", false), path)
	if err != nil {
		t.Fatal(err)
	}
	if res.Time != 20 {
		t.Fatalf("replayed up to %v", res.Time)
	}
	if res.Played < 19*time.Second/50 {
		t.Fatalf("20 steps at speed 50 took %v, less than the recorded pace allows", res.Played)
	}
	// And as fast as allowed, much less (not a timing assertion: the
	// paced run waited 0.38 s by construction).
	fast, err := (&record.Player{}).PlayFile(ctx, m.config("unpaced", "player", false), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("paced %v, fast %v", res.Played, fast.Played)
}

// The built-in federates of `node` encode every value by the demo FOM's
// data types, so a recording of them reads clean: a recorder beside a
// pong, a ping (pings, updates of the opaque Blob, the report pings) and
// two tick federates (time-stamped positions) records events whose every
// value `record show -json` decodes.
func TestRecordNodeRolesDecode(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	m := newMemNet(t)
	path := filepath.Join(t.TempDir(), "roles.rec")
	join := func(name string, create bool) *peer.Federate {
		f, err := peer.Join(ctx, m.config("roles", name, create))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	pong := join("pong", true)
	stop := startRecorder(t, ctx, m.config("roles", "rec", false), path)
	ping := join("ping", false)
	ticks := []*peer.Federate{join("tick1", false), join("tick2", false)}
	errs := make(chan error, 4)
	go func() { _, err := bench.RunPong(ctx, pong); errs <- err }()
	go func() { _, err := bench.RunPing(ctx, ping, 50, 16); errs <- err }()
	for _, f := range ticks {
		go func() { _, err := tick.Run(ctx, f, tick.Config{Peers: 2, Steps: 3, Out: io.Discard}); errs <- err }()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	// 50 updates, 200 round trips and the reports, 6 positions.
	waitRecorded(t, path, 50+6, 30*time.Second)
	time.Sleep(500 * time.Millisecond) // the last pongs
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCmd(t, "record", "show", path, "-json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	kinds := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev struct {
			Kind   string         `json:"kind"`
			Class  string         `json:"class"`
			Values map[string]any `json:"values"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		for name, v := range ev.Values {
			kinds[ev.Class+"."+name]++
			if m, ok := v.(map[string]any); ok && m["undecoded"] != nil {
				t.Fatalf("%s %s: %s does not decode: %v", ev.Kind, ev.Class, name, m["error"])
			}
		}
	}
	for _, want := range []string{"HLAobjectRoot.Aircraft.Blob", "HLAobjectRoot.Aircraft.Position", "HLAinteractionRoot.Ping.Payload", "HLAinteractionRoot.Pong.Payload", "HLAinteractionRoot.Ping.Seq"} {
		if kinds[want] == 0 {
			t.Errorf("no %s recorded: %v", want, kinds)
		}
	}
	t.Logf("values decoded: %v", kinds)
}
