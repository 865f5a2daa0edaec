package bench

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshrti/meshrti/internal/nodetest"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/reliable"
)

// TestBenchLifecycleProcesses runs bench lifecycle in two processes with
// RTI-chosen and with reserved names, and checks its line: every instance
// discovered and reflected once, the late subscriber's figure and the raw
// floor included. Like TestBenchJSON it measures nothing.
func TestBenchLifecycleProcesses(t *testing.T) {
	for i, extra := range [][]string{nil, {"-reserve"}} {
		var res LifecycleResult
		args := append([]string{"bench", "lifecycle", "-json", "-count", "300"}, extra...)
		out := nodetest.JSON(t, &res, 13+i, args...)
		reserved := len(extra) > 0
		if res.Bench != "lifecycle" || res.Instances != 300 || res.ReservedNames != reserved || res.Reflected != 300 || res.Error != "" {
			t.Errorf("%v: result %+v", args, res)
		}
		if res.DuplicateDiscoveries != 0 || res.DuplicateReflections != 0 || res.Strays != 0 {
			t.Errorf("%v: %d duplicate discoveries, %d duplicate reflections, %d strays",
				args, res.DuplicateDiscoveries, res.DuplicateReflections, res.Strays)
		}
		if res.RegisteredPerS <= 0 || res.DiscoveredPerS <= 0 || res.LateDiscoveredPerS <= 0 || res.LateSeconds <= 0 {
			t.Errorf("%v: registered %v/s, discovered %v/s, late %v/s", args, res.RegisteredPerS, res.DiscoveredPerS, res.LateDiscoveredPerS)
		}
		if res.RawPerS <= 0 || res.Ratio <= 0 || res.LateRatio <= 0 || res.RawReceived < 2 || res.RawSent != 600 || res.GOMAXPROCS < 1 {
			t.Errorf("%v: floor %v pairs/s (%d of %d datagrams), ratio %v, late ratio %v, GOMAXPROCS %d",
				args, res.RawPerS, res.RawReceived, res.RawSent, res.Ratio, res.LateRatio, res.GOMAXPROCS)
		}
		if res.RegisterBytes < 20 || res.RegisterBytes > 80 || res.UpdateBytes < res.Payload+10 || res.UpdateBytes > res.Payload+80 {
			t.Errorf("%v: estimated %d-byte registrations and %d-byte updates", args, res.RegisterBytes, res.UpdateBytes)
		}
		if reserved && res.ReserveSeconds <= 0 {
			t.Errorf("%v: reserve_seconds %v", args, res.ReserveSeconds)
		}
		// The keys the issue names, spelled as given.
		for _, k := range []string{`"bench":"lifecycle"`, `"instances"`, `"registered_per_s"`, `"discovered_per_s"`,
			`"late_discovered_per_s"`, `"raw_per_s"`, `"ratio"`, `"gomaxprocs"`} {
			if !bytes.Contains(out, []byte(k)) {
				t.Errorf("line lacks %s: %s", k, out)
			}
		}
	}
	for _, args := range [][]string{{"-count", "0"}, {"-payload", "-1"}, {"-role", "nonsense"}, {"-nonsense"}, {"extra"}} {
		var o, e bytes.Buffer
		if code := Main(append([]string{"lifecycle"}, args...), &o, &e); code != 2 {
			t.Errorf("bench lifecycle %v: exit %d, want 2 (%s)", args, code, strings.TrimSpace(e.String()))
		}
	}
}

// A subscriber's count finds duplicates, strays and missing instances.
func TestLifecycleCount(t *testing.T) {
	const registrar = peer.FederateHandle(7)
	obj := func(f peer.FederateHandle, s uint64) peer.ObjectInstanceHandle {
		return peer.ObjectInstanceHandle{Federate: f, Serial: s}
	}
	discover := func(h peer.ObjectInstanceHandle) peer.Event {
		return peer.DiscoverObjectInstance{Object: h, Name: fmt.Sprintf("HLAobject_%d_%d", h.Federate, h.Serial), Producer: h.Federate}
	}
	reflect := func(h peer.ObjectInstanceHandle) peer.Event {
		return peer.ReflectAttributeValues{Object: h, Producer: h.Federate}
	}
	for _, tc := range []struct {
		name    string
		events  []peer.Event
		reflect bool
		want    string // in the error; "" for none
	}{
		{"clean", []peer.Event{discover(obj(7, 1)), reflect(obj(7, 1)), discover(obj(7, 2)), reflect(obj(7, 2))}, true, ""},
		{"late, no reflections", []peer.Event{discover(obj(7, 1)), discover(obj(7, 2))}, false, ""},
		{"duplicate discovery", []peer.Event{discover(obj(7, 1)), discover(obj(7, 1)), discover(obj(7, 2))}, false, "1 duplicate discoveries"},
		{"duplicate reflection", []peer.Event{discover(obj(7, 1)), reflect(obj(7, 1)), reflect(obj(7, 1)), discover(obj(7, 2)), reflect(obj(7, 2))}, true, "1 duplicate reflections"},
		{"stray", []peer.Event{discover(obj(7, 1)), discover(obj(8, 1)), discover(obj(7, 2))}, false, "1 events about other instances"},
		{"reflection first", []peer.Event{reflect(obj(7, 1)), discover(obj(7, 1)), discover(obj(7, 2))}, false, "1 events about other instances"},
		{"missing", []peer.Event{discover(obj(7, 1)), reflect(obj(7, 1))}, true, "1 instances discovered and 1 reflected, want 2"},
		{"missing reflection", []peer.Event{discover(obj(7, 1)), reflect(obj(7, 1)), discover(obj(7, 2))}, true, "2 instances discovered and 1 reflected"},
	} {
		c := newLifecycleCount(registrar)
		for _, ev := range tc.events {
			if err := c.note(ev); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
		}
		err := c.check(2, tc.reflect, false)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
		}
	}
	// Reserved names must each come once.
	c := newLifecycleCount(registrar)
	c.note(peer.DiscoverObjectInstance{Object: obj(7, 1), Name: lifecycleName(0), Producer: registrar})
	c.note(peer.DiscoverObjectInstance{Object: obj(7, 2), Name: "other", Producer: registrar})
	if err := c.check(2, false, true); err == nil || !strings.Contains(err.Error(), `"lc-1"`) {
		t.Errorf("a reserved name not discovered: %v", err)
	}
	// What ends a run.
	for _, ev := range []peer.Event{
		peer.MessagesLost{Producer: registrar, Messages: 3},
		peer.FederateLost{Federate: registrar, Name: lifecycleRegistrarName},
		peer.ConnectionLost{Reason: "test"},
	} {
		if err := newLifecycleCount(registrar).note(ev); err == nil {
			t.Errorf("%T: no error", ev)
		}
	}
}

// The message sizes are read from the data frames' bundles: a frame with
// entries of 3 and 5 payload bytes holds entries of 5 and 7 bytes; other
// frames are not bundles.
func TestLifecycleSizes(t *testing.T) {
	frame := make([]byte, reliable.HeaderLen, 64)
	binary.BigEndian.PutUint16(frame, 0x6d72)
	frame[2], frame[3] = 2, 1|0x40 // version, data frame asking for an ACK
	frame = append(frame, 0, 3, 'a', 'b', 'c', 0, 5, 1, 2, 3, 4, 5)
	frame = append(frame, 0, 0, 0, 0) // the checksum
	binary.BigEndian.PutUint64(frame[32:], 9)
	if seq, entries, ok := bundleEntries(frame); !ok || seq != 9 || !slices.Equal(entries, []tapEntry{{size: 5}, {size: 7}}) {
		t.Errorf("entries %v from %d, %v; want sizes [5 7] from 9 and no messages", entries, seq, ok)
	}
	for _, bad := range []func([]byte){
		func(b []byte) { b[3] = 3 },                       // a heartbeat
		func(b []byte) { b[3] = 0x81 },                    // keyed
		func(b []byte) { b[0] = 0 },                       // no magic
		func(b []byte) { b[reliable.HeaderLen+1] = 40 },   // an entry longer than the body
		func(b []byte) { b[reliable.HeaderLen+6] = 0x80 }, // a length that does not end
	} {
		b := slices.Clone(frame)
		bad(b)
		if _, entries, ok := bundleEntries(b); ok {
			t.Errorf("%x: entries %v", b, entries)
		}
	}
	// An entry's message kind and instance: a registration of 12.3, an
	// update of 12.3 of restore branch 1 with a counter, its second
	// fragment, and a time message (no instance).
	msgs := slices.Clone(frame[:reliable.HeaderLen])
	msgs = append(msgs, 0, 5, 1<<4|1, 0, 2, 12, 3)
	msgs = append(msgs, 1, 7, 2<<4|2, 0, 3, 1, 40, 12, 3)
	msgs = append(msgs, 2, 2, 1<<4|1, 0)
	msgs = append(msgs, 0, 3, 1<<4|6, 0, 0)
	msgs = append(msgs, 0, 0, 0, 0)
	want := []tapEntry{
		{size: 7, kind: 1, obj: peer.ObjectInstanceHandle{Federate: 12, Serial: 3}},
		{size: 9, kind: 2, obj: peer.ObjectInstanceHandle{Federate: 12, Serial: 3}},
		{size: 4},
		{size: 5, kind: 6},
	}
	if _, entries, ok := bundleEntries(msgs); !ok || !slices.Equal(entries, want) {
		t.Errorf("entries %+v, %v; want %+v", entries, ok, want)
	}
	// Only the instances' registrations and updates are summed, once
	// each, whatever else shares the group: here an answer to a query
	// about the warm-up instance (a registration of 12.1), another
	// federate's registration, a time message, a repeated registration
	// and an update of an instance beyond the k measured.
	regOf := func(f peer.FederateHandle, s uint64, size int) tapEntry {
		return tapEntry{size: size, kind: wireKindRegister, obj: peer.ObjectInstanceHandle{Federate: f, Serial: s}}
	}
	updOf := func(f peer.FederateHandle, s uint64, size int) tapEntry {
		return tapEntry{size: size, kind: wireKindUpdate, obj: peer.ObjectInstanceHandle{Federate: f, Serial: s}}
	}
	mixed := []tapEntry{regOf(12, 1, 1000), regOf(12, 2, 30), updOf(12, 2, 50), regOf(13, 3, 1000), {size: 1000, kind: 6},
		regOf(12, 3, 32), regOf(12, 2, 1000), updOf(12, 3, 52), updOf(12, 4, 1000)}
	if sumReg, sumUpd, regs, upds := lifecycleSums(mixed, 12, 2); sumReg != 62 || sumUpd != 102 || regs != 2 || upds != 2 {
		t.Errorf("sums %d and %d of %d registrations and %d updates, want 62 and 102 of 2 and 2", sumReg, sumUpd, regs, upds)
	}
	if _, _, regs, upds := lifecycleSums(mixed[:4], 12, 2); regs != 1 || upds != 1 {
		t.Errorf("%d registrations and %d updates of the first four entries, want 1 and 1", regs, upds)
	}
	// Measured over the in-memory network: plausible sizes, larger
	// with a longer name.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	names := make([]string, 200)
	for i := range names {
		names[i] = fmt.Sprintf("HLAobject_12_%d", i+2)
	}
	bf := lifecycleFlags{payload: 32, frame: 16000}
	reg, upd, err := lifecycleSizes(ctx, bf, 12, names)
	if err != nil {
		t.Fatal(err)
	}
	if reg < 15 || reg > 100 || upd < 32+10 || upd > 32+80 {
		t.Errorf("%d-byte registrations, %d-byte updates", reg, upd)
	}
	for i := range names {
		names[i] += "-longer"
	}
	if reg2, upd2, err := lifecycleSizes(ctx, bf, 12, names); err != nil || reg2 != reg+7 || upd2 != upd {
		t.Errorf("with names 7 bytes longer: %d and %d bytes (%v), want %d and %d", reg2, upd2, err, reg+7, upd)
	}
	bf.reserve = true
	for i := range names {
		names[i] = lifecycleName(i)
	}
	if rreg, rupd, err := lifecycleSizes(ctx, bf, 12, names); err != nil || rreg < 15 || rupd < upd {
		t.Errorf("reserved names: %d and %d bytes (%v)", rreg, rupd, err)
	}
}
