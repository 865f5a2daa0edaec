package testnet

import (
	"fmt"
	"slices"
	"testing"

	"github.com/meshrti/meshrti/lbts"
	"github.com/meshrti/meshrti/peer"
)

func grant(t float64, kind lbts.RequestKind) peer.Event {
	return peer.TimeAdvanceGrant{Time: peer.Float64Time(t), Request: kind}
}

func tso(tag string, t float64, producer peer.FederateHandle) peer.Event {
	return peer.ReflectAttributeValues{Tag: []byte(tag), SentOrder: peer.TimeStamp, ReceivedOrder: peer.TimeStamp,
		Time: peer.Float64Time(t), Producer: producer}
}

func ro(tag string) peer.Event {
	return peer.ReceiveInteraction{Tag: []byte(tag), SentOrder: peer.Receive, ReceivedOrder: peer.Receive}
}

func fakeLogs(evs ...[]peer.Event) []*Log {
	logs := make([]*Log, len(evs))
	for i, e := range evs {
		logs[i] = &Log{label: fmt.Sprintf("F%d", i), events: e}
	}
	return logs
}

func rules(vs []Violation) map[string]int {
	m := make(map[string]int)
	for _, v := range vs {
		m[v.Rule]++
	}
	return m
}

// Each broken log must be caught by the named rule, and a clean one not.
func TestCheckViolations(t *testing.T) {
	const tar = lbts.TimeAdvanceRequest
	for _, tc := range []struct {
		name string
		logs [][]peer.Event
		rule string // "" for a clean run
	}{
		{"clean", [][]peer.Event{
			{tso("a", 1, 1), tso("b", 2, 1), grant(2, tar), tso("c", 3, 2), ro("r"), grant(3, tar)},
			{tso("a", 1, 1), ro("r"), tso("b", 2, 1), grant(2, tar), tso("c", 3, 2)},
		}, ""},
		{"grant decreases", [][]peer.Event{{grant(5, tar), grant(4, tar)}}, "grants never decrease"},
		{"TSO at the grant after it", [][]peer.Event{{grant(5, tar), tso("a", 5, 1)}}, "no TSO at or below the grant"},
		{"TSO at an Available grant is fine, below it is not", [][]peer.Event{
			{grant(5, lbts.TimeAdvanceRequestAvailable), tso("a", 5, 1), tso("b", 4, 1)}}, "no TSO at or below the grant"},
		{"TSO above the next grant", [][]peer.Event{{tso("a", 7, 1), grant(5, tar)}}, "TSO before grant"},
		{"TSO out of order in one log", [][]peer.Event{{tso("a", 3, 1), tso("b", 2, 1), grant(5, tar)}}, "TSO order"},
		{"producer order at one time", [][]peer.Event{{tso("a", 3, 2), tso("b", 3, 1), grant(5, tar)}}, "TSO order"},
		{"order of a tie differs", [][]peer.Event{
			{tso("a", 3, 1), tso("b", 3, 1), grant(5, tar)},
			{tso("b", 3, 1), tso("a", 3, 1), grant(5, tar)},
		}, "same TSO order everywhere"},
		{"order of a tie differs before the grant", [][]peer.Event{
			{tso("a", 3, 1), tso("b", 3, 1)},
			{tso("b", 3, 1), tso("a", 3, 1)},
		}, "same TSO order everywhere"},
		{"delivered twice", [][]peer.Event{{ro("r"), ro("r")}}, "exactly once"},
		{"TSO delivered twice", [][]peer.Event{{tso("a", 3, 1), tso("a", 3, 1)}}, "exactly once"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := rules(Check(fakeLogs(tc.logs...)))
			if tc.rule == "" {
				if len(got) != 0 {
					t.Errorf("violations in a clean run: %v", got)
				}
				return
			}
			if got[tc.rule] == 0 {
				t.Errorf("rule %q not reported; got %v", tc.rule, got)
			}
		})
	}
}

// A Checker fed a run in pieces finds what Check finds over the whole
// run, and a discarding one drops what it read but keeps counting.
func TestCheckerIncremental(t *testing.T) {
	const tar = lbts.TimeAdvanceRequest
	var a, b []peer.Event
	for k := 1; k <= 3000; k++ {
		a = append(a, tso(fmt.Sprint("x", k), float64(k)-0.5, 1), tso(fmt.Sprint("y", k), float64(k)-0.5, 1), grant(float64(k), tar))
		if k == 2500 {
			// A tie in the other order, and a message delivered again
			// long after its set entry was pruned.
			b = append(b, tso(fmt.Sprint("y", k), float64(k)-0.5, 1), tso(fmt.Sprint("x", k), float64(k)-0.5, 1), tso("x1", 0.5, 1), grant(float64(k), tar))
			continue
		}
		b = append(b, tso(fmt.Sprint("x", k), float64(k)-0.5, 1), tso(fmt.Sprint("y", k), float64(k)-0.5, 1), grant(float64(k), tar))
	}
	want := rules(Check(fakeLogs(a, b)))
	if want["same TSO order everywhere"] != 1 || want["no TSO at or below the grant"] != 1 || want["TSO order"] != 1 || len(want) != 3 {
		t.Fatalf("whole run: %v", want)
	}
	for _, discard := range []bool{false, true} {
		logs := fakeLogs(nil, nil)
		c := NewChecker(logs, discard)
		var got map[string]int
		for lo := 0; lo < len(a); lo += 7 {
			for i, evs := range [][]peer.Event{a, b} {
				logs[i].mu.Lock()
				logs[i].events = append(logs[i].events, evs[lo:min(lo+7, len(evs))]...)
				logs[i].mu.Unlock()
			}
			got = rules(c.Check())
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("discard %v: in pieces %v, whole %v", discard, got, want)
		}
		if c.Tagged(0) != 6000 || c.Tagged(1) != 6001 {
			t.Errorf("discard %v: tagged %d and %d, want 6000 and 6001", discard, c.Tagged(0), c.Tagged(1))
		}
		if kept := len(logs[0].Events()); discard && kept != 0 || !discard && kept != len(a) {
			t.Errorf("discard %v: log keeps %d events", discard, kept)
		}
		if n := len(c.st[1].seen); n > 4000 {
			t.Errorf("discard %v: %d tags remembered after pruning", discard, n)
		}
	}
}

// A restore takes a log's checks back to its save point: a delivery
// after the save may come again, and the grants go back; within the
// restored branch a second delivery is still caught.
func TestCheckSaveRestore(t *testing.T) {
	save := peer.InitiateFederateSave{Label: "s"}
	restore := peer.InitiateFederateRestore{Label: "s"}
	run := []peer.Event{grant(1, lbts.TimeAdvanceRequest), save, tso("a", 2, 1), ro("r"), grant(5, lbts.TimeAdvanceRequest),
		restore, tso("a", 2, 1), ro("r"), grant(3, lbts.TimeAdvanceRequest)}
	if vs := Check(fakeLogs(run)); len(vs) != 0 {
		t.Errorf("after a restore: %v", vs)
	}
	if vs := rules(Check(fakeLogs(slices.Concat(run, []peer.Event{ro("r")})))); vs["exactly once"] != 1 {
		t.Errorf("a second delivery on the restored branch: %v", vs)
	}
	noRestore := slices.Delete(slices.Clone(run), 5, 6)
	if vs := rules(Check(fakeLogs(noRestore))); vs["exactly once"] != 2 || vs["grants never decrease"] != 1 {
		t.Errorf("without the restore: %v", vs)
	}
}

// A federate that joined after the save and restores a crashed one's
// state (its log has no save of the label) starts its checks afresh: its
// grants go back and what it saw before may come again; within the
// restored branch a second delivery is still caught.
func TestCheckRestoreWithoutSave(t *testing.T) {
	restore := peer.InitiateFederateRestore{Label: "s"}
	run := []peer.Event{tso("a", 6, 1), ro("r"), grant(7, lbts.TimeAdvanceRequest),
		restore, tso("a", 6, 1), ro("r"), grant(6, lbts.TimeAdvanceRequest)}
	if vs := Check(fakeLogs(run)); len(vs) != 0 {
		t.Errorf("after a restore of a save this log was not in: %v", vs)
	}
	if vs := rules(Check(fakeLogs(slices.Concat(run, []peer.Event{ro("r")})))); vs["exactly once"] != 1 {
		t.Errorf("a second delivery on the restored branch: %v", vs)
	}
}
