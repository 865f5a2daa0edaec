package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func testHeader() Header {
	return Header{
		Federation: "demo", Recorder: "rec", Started: time.Unix(1700000000, 5),
		TimeRepresentation: "HLAfloat64Time",
		MIM:                Module{Designator: "HLAstandardMIM", Text: "<objectModel/>"},
		Modules:            []Module{{Designator: "a.xml", Text: "<objectModel>a</objectModel>"}, {Designator: "b.xml", Text: ""}},
	}
}

// testEvents returns n events of every kind, some with times, names
// repeated (table references) and new (inline definitions).
func testEvents(n int) []Event {
	var evs []Event
	for i := 0; i < n; i++ {
		obj := fmt.Sprintf("obj-%d", i%7)
		switch i % 5 {
		case 0:
			evs = append(evs, Event{Kind: KindDiscover, Federate: "F1", Class: "HLAobjectRoot.Aircraft", Object: obj})
		case 1, 2:
			evs = append(evs, Event{Kind: KindUpdate, HasTime: true, Time: float64(i) / 2, TSO: true, SentTSO: true,
				Federate: fmt.Sprintf("F%d", i%3), Class: "HLAobjectRoot.Aircraft", Object: obj, Transportation: "HLAreliable",
				Tag: []byte("t"), Values: []Value{{Name: "Position", Data: []byte{byte(i), 1, 2, 3}}, {Name: fmt.Sprintf("A%d", i), Data: nil}}})
		case 3:
			evs = append(evs, Event{Kind: KindInteraction, Federate: "F2", Class: "HLAinteractionRoot.Ping",
				Transportation: "HLAbestEffort", Values: []Value{{Name: "Seq", Data: bytes.Repeat([]byte{byte(i)}, i%40)}}})
		case 4:
			ev := Event{Kind: KindRemove, Federate: "F1", Class: "HLAobjectRoot.Aircraft", Object: obj, Tag: []byte("bye")}
			if i%2 == 0 {
				ev.HasTime, ev.Time, ev.TSO = true, float64(i), true
			}
			evs = append(evs, ev)
		}
	}
	return evs
}

// write records evs with a flush every flushEvery events (0: never) and
// closes when closeIt.
func write(t testing.TB, evs []Event, flushEvery int, closeIt bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	for i := range evs {
		if err := w.Write(&evs[i]); err != nil {
			t.Fatal(err)
		}
		if flushEvery > 0 && i%flushEvery == flushEvery-1 {
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if closeIt {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	} else if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readAll reads every event and the error that ended reading.
func readAll(b []byte) (Header, []Event, error) {
	r, err := NewReader(bytes.NewReader(b))
	if err != nil {
		return Header{}, nil, err
	}
	var evs []Event
	for {
		ev, err := r.Next()
		if err != nil {
			return r.Header(), evs, err
		}
		evs = append(evs, *ev)
	}
}

func sameEvent(a, b Event) bool {
	if a.Kind != b.Kind || a.HasTime != b.HasTime || a.Time != b.Time || a.TSO != b.TSO || a.SentTSO != b.SentTSO ||
		a.Federate != b.Federate || a.Class != b.Class || a.Object != b.Object || a.Transportation != b.Transportation ||
		!bytes.Equal(a.Tag, b.Tag) || len(a.Values) != len(b.Values) {
		return false
	}
	for i := range a.Values {
		if a.Values[i].Name != b.Values[i].Name || !bytes.Equal(a.Values[i].Data, b.Values[i].Data) {
			return false
		}
	}
	return true
}

func checkPrefix(t *testing.T, got, want []Event) {
	t.Helper()
	if len(got) > len(want) {
		t.Fatalf("read %d events, wrote %d", len(got), len(want))
	}
	for i := range got {
		if !sameEvent(got[i], want[i]) {
			t.Fatalf("event %d: read %+v, wrote %+v", i, got[i], want[i])
		}
	}
}

func TestRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 10, 5000} {
		evs := testEvents(n)
		b := write(t, evs, 0, true)
		h, got, err := readAll(b)
		if !errors.Is(err, io.EOF) {
			t.Fatalf("n=%d: reading ended with %v, want io.EOF", n, err)
		}
		checkPrefix(t, got, evs)
		if len(got) != n {
			t.Fatalf("n=%d: read %d events", n, len(got))
		}
		want := testHeader()
		if h.Federation != want.Federation || h.Recorder != want.Recorder || !h.Started.Equal(want.Started) ||
			h.TimeRepresentation != want.TimeRepresentation || h.MIM != want.MIM || fmt.Sprint(h.Modules) != fmt.Sprint(want.Modules) {
			t.Fatalf("header %+v, want %+v", h, want)
		}
	}
}

// TestFramesCompress checks that many similar events take less room
// than their bodies would, and that frames are cut at FrameSize.
func TestFramesCompress(t *testing.T) {
	evs := testEvents(20000)
	b := write(t, evs, 0, true)
	var raw int
	for _, ev := range evs {
		for _, v := range ev.Values {
			raw += len(v.Name) + len(v.Data)
		}
		raw += len(ev.Class) + len(ev.Object) + len(ev.Federate)
	}
	if len(b) >= raw/2 {
		t.Fatalf("file of %d bytes for %d bytes of names and values", len(b), raw)
	}
	frames := 0
	for off := preambleLen; off < len(b); frames++ {
		off += frameHeaderLen + int(binary.BigEndian.Uint32(b[off:]))
		if off > len(b) {
			t.Fatalf("frame runs past the end")
		}
	}
	if frames < 3 {
		t.Fatalf("%d frames; want the events cut into several", frames)
	}
}

// TestIncompressible: frames of random values are stored as they are
// (after one try at compressing them) and read back.
func TestIncompressible(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	var evs []Event
	raw := 0
	for i := 0; i < 3000; i++ {
		v := make([]byte, 100)
		for j := range v {
			v[j] = byte(rnd.Uint32())
		}
		raw += len(v)
		evs = append(evs, Event{Kind: KindUpdate, Federate: "F", Class: "C", Object: "o", Values: []Value{{Name: "V", Data: v}}})
	}
	b := write(t, evs, 0, true)
	_, got, err := readAll(b)
	if !errors.Is(err, io.EOF) || len(got) != len(evs) {
		t.Fatalf("read %d of %d events: %v", len(got), len(evs), err)
	}
	checkPrefix(t, got, evs)
	stored := 0
	for off := preambleLen; off < len(b); off += frameHeaderLen + int(binary.BigEndian.Uint32(b[off:])) {
		if b[off+8] == encStored {
			stored++
		}
	}
	if stored < 3 || len(b) > raw+12*len(evs) {
		t.Fatalf("%d stored frames, %d bytes for %d of values", stored, len(b), raw)
	}
}

// TestTruncated cuts a recording at every byte: reading gives a prefix
// of the events, then a DamageError naming where it stopped.
func TestTruncated(t *testing.T) {
	evs := testEvents(60)
	b := write(t, evs, 7, true)
	lastFull := 0
	for cut := 0; cut < len(b); cut++ {
		_, got, err := readAll(b[:cut])
		var de *DamageError
		if !errors.As(err, &de) {
			t.Fatalf("cut at %d: error %v, want a DamageError", cut, err)
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("stopped at byte %d", de.Offset)) || de.Offset > int64(cut) {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		if de.Events != int64(len(got)) {
			t.Fatalf("cut at %d: error counts %d events, %d read", cut, de.Events, len(got))
		}
		checkPrefix(t, got, evs)
		if len(got) < lastFull {
			t.Fatalf("cut at %d: %d events, a shorter cut gave %d", cut, len(got), lastFull)
		}
		lastFull = len(got)
	}
	_, got, err := readAll(b)
	if !errors.Is(err, io.EOF) || len(got) != len(evs) {
		t.Fatalf("whole file: %d events, %v", len(got), err)
	}
}

// TestUnclosed: a writer that was never closed (a crash) leaves a file
// that reads to its last flush and says it is unfinished.
func TestUnclosed(t *testing.T) {
	evs := testEvents(30)
	b := write(t, evs, 0, false)
	_, got, err := readAll(b)
	var de *DamageError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "without its end record") || de.Offset != int64(len(b)) {
		t.Fatalf("error %v, want a DamageError at byte %d naming the missing end record", err, len(b))
	}
	if len(got) != len(evs) {
		t.Fatalf("read %d of %d events", len(got), len(evs))
	}
}

func TestWrongVersion(t *testing.T) {
	b := write(t, testEvents(3), 0, true)
	b = bytes.Clone(b)
	binary.BigEndian.PutUint16(b[len(Magic):], Version+1)
	_, err := NewReader(bytes.NewReader(b))
	var ve *VersionError
	if !errors.As(err, &ve) || ve.Got != Version+1 || !strings.Contains(err.Error(), "version 2") {
		t.Fatalf("error %v, want a VersionError for version %d", err, Version+1)
	}
	if _, err := NewReader(strings.NewReader("<objectModel> not a recording")); !errors.Is(err, ErrNotRecording) {
		t.Fatalf("a text file: %v, want ErrNotRecording", err)
	}
}

// TestCorruptCRC flips one byte in each frame in turn: the events of the
// frames before it are read, then reading stops at that frame.
func TestCorruptCRC(t *testing.T) {
	evs := testEvents(50)
	b := write(t, evs, 10, true)
	var starts []int
	for off := preambleLen; off < len(b); off += frameHeaderLen + int(binary.BigEndian.Uint32(b[off:])) {
		starts = append(starts, off)
	}
	for i, off := range starts {
		for _, at := range []int{off + 4, off + 9, off + frameHeaderLen} {
			if at >= len(b) {
				continue
			}
			bad := bytes.Clone(b)
			bad[at] ^= 0x40
			_, got, err := readAll(bad)
			var de *DamageError
			if !errors.As(err, &de) || de.Offset != int64(off) {
				t.Fatalf("frame %d, byte %d flipped: %v, want a DamageError at %d", i, at, err, off)
			}
			checkPrefix(t, got, evs)
			if i > 0 && at != off+4 && !strings.Contains(err.Error(), "CRC") {
				t.Fatalf("frame %d, byte %d flipped: %v, want a CRC mismatch", i, at, err)
			}
		}
	}
}

// TestOversizeEvent: an event too large for a frame is refused and
// leaves the writer usable, its names undefined.
func TestOversizeEvent(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	big := Event{Kind: KindUpdate, Federate: "new-fed", Class: "C", Object: "o", Values: []Value{{Name: "V", Data: make([]byte, MaxFrame)}}}
	if err := w.Write(&big); err == nil {
		t.Fatal("an oversize event was accepted")
	}
	small := Event{Kind: KindUpdate, Federate: "new-fed", Class: "C", Object: "o", Values: []Value{{Name: "V", Data: []byte{1}}}}
	if err := w.Write(&small); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, got, err := readAll(buf.Bytes())
	if !errors.Is(err, io.EOF) || len(got) != 1 || !sameEvent(got[0], small) {
		t.Fatalf("read %+v, %v", got, err)
	}
}

func FuzzReader(f *testing.F) {
	f.Add(write(f, testEvents(20), 0, true))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := NewReader(bytes.NewReader(b))
		if err != nil {
			return
		}
		for i := 0; i < 1e6; i++ {
			if _, err := r.Next(); err != nil {
				return
			}
		}
	})
}
