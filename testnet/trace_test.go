package testnet

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshrti/meshrti/peer"
)

// cleanTrace is a small run that breaks no rule: A regulates (lookahead
// 1), B and C are constrained and deliver A's messages in time order.
const cleanTrace = `
{"ev":"join","fed":"A","handle":"1"}
{"ev":"join","fed":"B","handle":"2"}
{"ev":"join","fed":"C","handle":"3"}
{"ev":"regulation","fed":"A","lookahead":1,"t":0}
{"ev":"constrained","fed":"B","t":0}
{"ev":"constrained","fed":"C","t":0}
{"ev":"send","fed":"A","msg":"A/1","kind":"update","order":"TSO","ts":1,"class":"HLAobjectRoot.Aircraft"}
{"ev":"send","fed":"A","msg":"A/2","kind":"interaction","order":"TSO","ts":2,"class":"HLAinteractionRoot.Contact"}
{"ev":"send","fed":"A","msg":"A/3","kind":"update","order":"RO","ts":null,"class":"HLAobjectRoot.Aircraft"}
{"ev":"request","fed":"A","kind":"TAR","t":2}
{"ev":"grant","fed":"A","t":2}
{"ev":"send","fed":"A","msg":"A/4","kind":"update","order":"TSO","ts":3,"class":"HLAobjectRoot.Aircraft"}
{"ev":"deliver","fed":"B","msg":"A/3","order":"RO","ts":null}
{"ev":"request","fed":"B","kind":"TAR","t":2}
{"ev":"deliver","fed":"B","msg":"A/1","order":"TSO","ts":1}
{"ev":"deliver","fed":"B","msg":"A/2","order":"TSO","ts":2}
{"ev":"grant","fed":"B","t":2}
{"ev":"deliver","fed":"B","msg":"A/4","order":"TSO","ts":3}
{"ev":"deliver","fed":"C","msg":"A/1","order":"TSO","ts":1}
{"ev":"deliver","fed":"C","msg":"A/2","order":"TSO","ts":2}
{"ev":"request","fed":"C","kind":"TAR","t":3}
{"ev":"deliver","fed":"C","msg":"A/4","order":"TSO","ts":3}
{"ev":"grant","fed":"C","t":3}
{"ev":"lost","fed":"B","peer":"C"}
{"ev":"resign","fed":"A"}
`

func checkString(t *testing.T, s string) TraceReport {
	t.Helper()
	rep, err := CheckTraceReport(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestCheckTraceClean(t *testing.T) {
	rep := checkString(t, cleanTrace)
	if len(rep.Violations) != 0 {
		t.Errorf("violations in a clean trace: %v", rep.Violations)
	}
	if rep.Federates != 3 || rep.Sends != 4 || rep.Deliveries != 7 || rep.Grants != 3 || rep.UnknownSenders != 0 {
		t.Errorf("report %+v", rep)
	}
	vs, err := CheckTrace(strings.NewReader(cleanTrace))
	if err != nil || len(vs) != 0 {
		t.Errorf("CheckTrace: %v, %v", vs, err)
	}
}

// Each broken trace must be caught, by the named rule.
func TestCheckTraceViolations(t *testing.T) {
	const head = `{"ev":"regulation","fed":"A","lookahead":1,"t":0}
{"ev":"constrained","fed":"B","t":0}
`
	for _, tc := range []struct {
		name, trace, rule string
	}{
		{"grant decreases", `{"ev":"grant","fed":"B","t":5}
{"ev":"grant","fed":"B","t":4}`, "grants never decrease"},
		{"TSO at the grant after it", head + `{"ev":"send","fed":"A","msg":"A/1","kind":"update","order":"TSO","ts":5}
{"ev":"request","fed":"B","kind":"TAR","t":5}
{"ev":"grant","fed":"B","t":5}
{"ev":"deliver","fed":"B","msg":"A/1","order":"TSO","ts":5}`, "no TSO delivery at or below the last grant"},
		{"TSO below the grant after it", head + `{"ev":"send","fed":"A","msg":"A/1","kind":"update","order":"TSO","ts":3}
{"ev":"grant","fed":"B","t":5}
{"ev":"deliver","fed":"B","msg":"A/1","order":"TSO","ts":3}`, "no TSO delivery at or below the last grant"},
		{"TSO above the next grant", head + `{"ev":"send","fed":"A","msg":"A/1","kind":"update","order":"TSO","ts":7}
{"ev":"deliver","fed":"B","msg":"A/1","order":"TSO","ts":7}
{"ev":"grant","fed":"B","t":5}`, "TSO delivered before a grant is at most its time"},
		{"order differs", head + `{"ev":"constrained","fed":"C","t":0}
{"ev":"send","fed":"A","msg":"A/1","kind":"update","order":"TSO","ts":2}
{"ev":"send","fed":"A","msg":"A/2","kind":"update","order":"TSO","ts":2}
{"ev":"deliver","fed":"B","msg":"A/1","order":"TSO","ts":2}
{"ev":"deliver","fed":"B","msg":"A/2","order":"TSO","ts":2}
{"ev":"deliver","fed":"C","msg":"A/2","order":"TSO","ts":2}
{"ev":"deliver","fed":"C","msg":"A/1","order":"TSO","ts":2}`, "TSO messages are delivered in the same order everywhere"},
		{"delivered twice", head + `{"ev":"send","fed":"A","msg":"A/1","kind":"interaction","order":"RO","ts":null}
{"ev":"deliver","fed":"B","msg":"A/1","order":"RO","ts":null}
{"ev":"deliver","fed":"B","msg":"A/1","order":"RO","ts":null}`, "no message is delivered twice"},
		{"never sent", head + `{"ev":"send","fed":"A","msg":"A/1","kind":"interaction","order":"RO","ts":null}
{"ev":"deliver","fed":"B","msg":"A/2","order":"RO","ts":null}`, "every delivered message was sent"},
		{"id reused", head + `{"ev":"send","fed":"A","msg":"A/1","kind":"interaction","order":"RO","ts":null}
{"ev":"send","fed":"A","msg":"A/1","kind":"interaction","order":"RO","ts":null}`, "message ids are unique"},
		{"send below lookahead", head + `{"ev":"grant","fed":"A","t":4}
{"ev":"send","fed":"A","msg":"A/1","kind":"update","order":"TSO","ts":4.5}`, "regulating sends at or above time + lookahead"},
		{"send below lookahead at enable", `{"ev":"regulation","fed":"A","lookahead":2,"t":3}
{"ev":"send","fed":"A","msg":"A/1","kind":"update","order":"TSO","ts":4}`, "regulating sends at or above time + lookahead"},
		{"RO send delivered TSO", head + `{"ev":"send","fed":"A","msg":"A/1","kind":"update","order":"RO","ts":null}
{"ev":"deliver","fed":"B","msg":"A/1","order":"TSO","ts":2}`, "TSO deliveries were sent TSO"},
		{"time stamp changed", head + `{"ev":"send","fed":"A","msg":"A/1","kind":"update","order":"TSO","ts":2}
{"ev":"deliver","fed":"B","msg":"A/1","order":"TSO","ts":3}`, "deliveries keep the time stamp"},
		{"two holders in one epoch", `{"ev":"owner","fed":"A","obj":"1.1","attr":"Position","owner":"A","epoch":1}
{"ev":"owner","fed":"B","obj":"1.1","attr":"Position","owner":"B","epoch":1}`, "one holder per token and epoch"},
		{"epoch goes back", `{"ev":"owner","fed":"B","obj":"1.1","attr":"Position","owner":"A","epoch":4294967296}
{"ev":"owner","fed":"B","obj":"1.1","attr":"Position","owner":null,"epoch":3}`, "ownership epochs only grow"},
		{"stale update reflected", `{"ev":"send","fed":"A","msg":"A/1","kind":"update","order":"RO","ts":null,"class":"Aircraft"}
{"ev":"owner","fed":"B","obj":"1.1","attr":"Position","owner":"C","epoch":2}
{"ev":"deliver","fed":"B","msg":"A/1","order":"RO","ts":null,"obj":"1.1","attrs":["Position"],"epoch":1}`, "no update of an older epoch is reflected"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := checkString(t, tc.trace)
			found := false
			for _, v := range rep.Violations {
				if v.Rule == tc.rule {
					found = true
				}
			}
			if !found {
				t.Errorf("rule %q not reported; got %v", tc.rule, rep.Violations)
			}
		})
	}
}

// Ownership lines that keep the rules pass: one holder per epoch (the
// same federate may say so twice), views that only grow, deliveries at
// the newest epoch.
func TestCheckTraceOwnershipClean(t *testing.T) {
	rep := checkString(t, `{"ev":"owner","fed":"A","obj":"1.1","attr":"Position","owner":"B","epoch":1}
{"ev":"owner","fed":"B","obj":"1.1","attr":"Position","owner":"B","epoch":1}
{"ev":"owner","fed":"B","obj":"1.1","attr":"Position","owner":"B","epoch":1}
{"ev":"send","fed":"B","msg":"B/1","kind":"update","order":"RO","ts":null,"class":"Aircraft"}
{"ev":"deliver","fed":"A","msg":"B/1","order":"RO","ts":null,"obj":"1.1","attrs":["Position"],"epoch":1}
{"ev":"owner","fed":"A","obj":"1.1","attr":"Position","owner":null,"epoch":2}
{"ev":"owner","fed":"C","obj":"1.1","attr":"Position","owner":"C","epoch":4294967296}`)
	if len(rep.Violations) != 0 || rep.Owners != 5 {
		t.Errorf("owners %d, violations %v", rep.Owners, rep.Violations)
	}
}

// After TARA a grant to g still admits TSO messages at g, not below.
func TestCheckTraceAvailable(t *testing.T) {
	const base = `{"ev":"send","fed":"A","msg":"A/1","kind":"update","order":"TSO","ts":5}
{"ev":"request","fed":"B","kind":"TARA","t":5}
{"ev":"grant","fed":"B","t":5}
`
	if rep := checkString(t, base+`{"ev":"deliver","fed":"B","msg":"A/1","order":"TSO","ts":5}`); len(rep.Violations) != 0 {
		t.Errorf("TARA: %v", rep.Violations)
	}
}

// "#HANDLE/N" ids name the sender by the handle of its join.
func TestCheckTraceHandleIDs(t *testing.T) {
	const base = `{"ev":"join","fed":"A","handle":"7"}
{"ev":"send","fed":"A","msg":"A/1","kind":"update","order":"RO","ts":null}
{"ev":"deliver","fed":"B","msg":"#7/1","order":"RO","ts":null}
`
	if rep := checkString(t, base); len(rep.Violations) != 0 || rep.UnknownSenders != 0 {
		t.Errorf("report %+v", rep)
	}
	rep := checkString(t, base+`{"ev":"deliver","fed":"B","msg":"A/1","order":"RO","ts":null}`)
	if len(rep.Violations) != 1 || rep.Violations[0].Rule != "no message is delivered twice" {
		t.Errorf("violations %v", rep.Violations)
	}
}

// A federate restarted under its name (a second join, a new handle)
// counts its message ids from 1 again: "src" tells its messages from
// the crashed one's, and its state (time, grants) starts afresh.
func TestCheckTraceRestart(t *testing.T) {
	const base = `{"ev":"join","fed":"A","handle":"1"}
{"ev":"join","fed":"B","handle":"2"}
{"ev":"regulation","fed":"A","lookahead":1,"t":0}
{"ev":"request","fed":"A","kind":"TAR","t":10}
{"ev":"grant","fed":"A","t":10}
{"ev":"send","fed":"A","msg":"A/1","kind":"update","order":"TSO","ts":11}
{"ev":"send","fed":"A","msg":"A/2","kind":"update","order":"TSO","ts":12}
{"ev":"deliver","fed":"B","msg":"A/1","src":"1","order":"TSO","ts":11}
{"ev":"lost","fed":"B","peer":"A"}
{"ev":"join","fed":"A","handle":"3"}
{"ev":"regulation","fed":"A","lookahead":1,"t":0}
{"ev":"request","fed":"A","kind":"TAR","t":1}
{"ev":"grant","fed":"A","t":1}
{"ev":"send","fed":"A","msg":"A/1","kind":"update","order":"RO","ts":null}
{"ev":"deliver","fed":"B","msg":"A/1","src":"3","order":"RO","ts":null}
`
	rep := checkString(t, base)
	if len(rep.Violations) != 0 || rep.UnknownSenders != 0 || rep.Federates != 3 {
		t.Errorf("report %+v, want no violation and 3 federates (A twice, B)", rep)
	}
	// The second A's message delivered as the first A's: a TSO delivery
	// of a message sent in receive order, and the first A's message 2
	// delivered twice.
	rep = checkString(t, base+`{"ev":"deliver","fed":"B","msg":"A/1","src":"3","order":"RO","ts":null}
{"ev":"deliver","fed":"B","msg":"A/2","src":"1","order":"TSO","ts":12}
{"ev":"deliver","fed":"B","msg":"A/2","src":"1","order":"TSO","ts":12}
{"ev":"deliver","fed":"B","msg":"A/2","src":"3","order":"RO","ts":null}
`)
	var rules []string
	for _, v := range rep.Violations {
		rules = append(rules, v.Rule)
	}
	want := []string{"no message is delivered twice", "no message is delivered twice", "every delivered message was sent"}
	if fmt.Sprint(rules) != fmt.Sprint(want) {
		t.Errorf("violations %v, want rules %v", rep.Violations, want)
	}
	// Without "src" a receiver's id names the last incarnation.
	rep = checkString(t, base+`{"ev":"deliver","fed":"C","msg":"A/1","order":"RO","ts":null}`)
	if len(rep.Violations) != 0 {
		t.Errorf("violations %v", rep.Violations)
	}
}

// A smaller lookahead lowers the send bound.
func TestCheckTraceLookahead(t *testing.T) {
	const base = `{"ev":"regulation","fed":"A","lookahead":2,"t":0}
{"ev":"lookahead","fed":"A","lookahead":0.5}
{"ev":"send","fed":"A","msg":"A/1","kind":"update","order":"TSO","ts":0.5}
`
	if rep := checkString(t, base); len(rep.Violations) != 0 {
		t.Errorf("violations %v", rep.Violations)
	}
	if rep := checkString(t, base+`{"ev":"send","fed":"A","msg":"A/2","kind":"update","order":"TSO","ts":0.25}`); len(rep.Violations) != 1 {
		t.Errorf("violations %v", rep.Violations)
	}
}

// A partial trace: deliveries from a sender without events count apart.
func TestCheckTracePartial(t *testing.T) {
	rep := checkString(t, `{"ev":"deliver","fed":"B","msg":"X/1","order":"RO","ts":null}
{"ev":"deliver","fed":"B","msg":"X/2","order":"RO","ts":null}`)
	if len(rep.Violations) != 0 || rep.UnknownSenders != 2 {
		t.Errorf("report %+v", rep)
	}
}

func TestCheckTraceMalformed(t *testing.T) {
	for _, s := range []string{"{", `{"ev":"grant"}`, `{"ev":"grant","fed":"A"}`, `{"ev":"send","fed":"A"}`} {
		if _, err := CheckTraceReport(strings.NewReader(s)); err == nil {
			t.Errorf("%q: no error", s)
		}
	}
}

// lockedBuffer is a trace sink the test can read.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestTraceScripts runs every scenario script with tracing, in real time
// (RealTime: goroutines and real quiet periods, the concurrency that
// TestScripts' deterministic runs leave out), and checks the traces and
// that the outputs are the expected ones in this mode too.
func TestTraceScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("scripts: %v %v", files, err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel() // each script has its own network
			in, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var buf lockedBuffer
			ctx, cancel := context.WithTimeout(RealTime(WithTrace(context.Background(), &buf)), time.Minute)
			defer cancel()
			var diff bytes.Buffer
			res, err := RunScript(ctx, bytes.NewReader(in), &diff, false)
			if err != nil {
				t.Fatal(err)
			}
			if res.Mismatches > 0 {
				t.Errorf("in real time, %d of %d steps differ:\n%s", res.Mismatches, res.Steps, diff.String())
			}
			rep := checkString(t, buf.String())
			for _, v := range rep.Violations {
				t.Error(v)
			}
			if rep.Lines == 0 || rep.UnknownSenders != 0 {
				t.Errorf("report %+v", rep)
			}
		})
	}
}

// TestTraceFaultyCluster: federates over a lossy, duplicating,
// reordering network send time-stamped and receive-order messages while
// advancing; one crashes midway. The trace breaks no rule.
func TestTraceFaultyCluster(t *testing.T) {
	seed := int64(3)
	if *seedFlag != 0 {
		seed = *seedFlag
	}
	const n, steps, crashAt = 5, 8, 4
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var buf lockedBuffer
	c := mustStart(t, ctx, Config{Federates: n, Seed: seed, Faults: faultsForTest, Trace: peer.NewTraceWriter(&buf)}, false)
	defer c.Close()
	logSeedOnFailure(t, seed, n, steps)
	h := lookup(t, c.Feds[0])
	for _, f := range c.Feds {
		pubSubAircraft(t, f, h, h.contact)
	}
	enableAll(t, ctx, c)
	objs := registerAll(t, ctx, c, h)
	alive := n
	for k := 1; k <= steps; k++ {
		if k == crashAt {
			c.Crash(n - 1)
			alive--
		}
		ts := peer.Float64Time(float64(k) + 0.5)
		for i, f := range c.Feds[:alive] {
			tag := []byte(fmt.Sprintf("F%d/%d", i, k))
			must(t, f.UpdateAttributeValuesWithTime(objs[i], peer.AttributeValues{h.position: tag}, tag, ts))
			must(t, f.UpdateAttributeValues(objs[i], peer.AttributeValues{h.status: tag}, tag))
			must(t, f.SendInteractionWithTime(h.contact, peer.ParameterValues{h.contactData: tag}, tag, ts))
			must(t, f.TimeAdvanceRequest(peer.Float64Time(float64(k))))
		}
		for i := range c.Feds[:alive] {
			if err := c.Logs[i].WaitFor(ctx, Granted(float64(k))); err != nil {
				t.Fatalf("step %d: %v", k, err)
			}
		}
	}
	for _, f := range c.Feds[:alive] {
		must(t, f.TimeAdvanceRequest(peer.Float64Time(steps+1)))
	}
	for i := range c.Feds[:alive] {
		must(t, c.Logs[i].WaitFor(ctx, Granted(steps+1)))
	}
	c.Close()

	rep := checkString(t, buf.String())
	for _, v := range rep.Violations {
		t.Error(v)
	}
	t.Logf("trace: %+v", rep)
	// Every survivor delivers, per step, a TSO update and interaction
	// and an RO update from each other survivor at least.
	if min := (alive - 1) * 3 * steps * alive; rep.Deliveries < min || rep.UnknownSenders != 0 {
		t.Errorf("report %+v, want at least %d deliveries", rep, min)
	}
	// The owed-message rules looked at every survivor's streams from
	// every other survivor (all but each stream's first message).
	if min := alive * (alive - 1) * 3 * (steps - 2); rep.Owed < min {
		t.Errorf("report %+v, want at least %d messages found owed", rep, min)
	}
	if !strings.Contains(buf.String(), `"ev":"lost"`) {
		t.Error("no lost event for the crashed federate")
	}
}

// A restore takes a federate back to its save point: what it delivered
// after the save may come again, its grants go back, and the ownership
// epochs start over on the new branch. Without the restore line the
// same deliveries are violations, and a second delivery within one
// branch still is.
func TestCheckTraceSaveRestore(t *testing.T) {
	const branch = `{"ev":"regulation","fed":"A","lookahead":1,"t":0}
{"ev":"constrained","fed":"B","t":0}
{"ev":"send","fed":"A","msg":"A/1","kind":"update","order":"TSO","ts":2}
{"ev":"send","fed":"A","msg":"A/2","kind":"update","order":"TSO","ts":6}
{"ev":"grant","fed":"B","t":1}
{"ev":"save","fed":"B","label":"one"}
{"ev":"save","fed":"A","label":"one"}
{"ev":"deliver","fed":"B","msg":"A/1","order":"TSO","ts":2}
{"ev":"grant","fed":"B","t":5}
{"ev":"owner","fed":"B","obj":"1.1","attr":"Position","owner":"B","epoch":7}
`
	const again = `{"ev":"deliver","fed":"B","msg":"A/1","order":"TSO","ts":2}
{"ev":"grant","fed":"B","t":3}
{"ev":"owner","fed":"B","obj":"1.1","attr":"Position","owner":"B","epoch":5}
{"ev":"owner","fed":"A","obj":"1.1","attr":"Position","owner":"A","epoch":7}
`
	const restore = `{"ev":"restore","fed":"B","label":"one","branch":4}
{"ev":"restore","fed":"A","label":"one","branch":4}
`
	rep := checkString(t, branch+restore+again)
	if len(rep.Violations) != 0 {
		t.Errorf("after a restore: %v", rep.Violations)
	}
	rep = checkString(t, branch+again)
	rules := map[string]bool{}
	for _, v := range rep.Violations {
		rules[v.Rule] = true
	}
	for _, r := range []string{"no message is delivered twice", "grants never decrease", "ownership epochs only grow"} {
		if !rules[r] {
			t.Errorf("without the restore, %q not reported; got %v", r, rep.Violations)
		}
	}
	rep = checkString(t, branch+restore+again+`{"ev":"deliver","fed":"B","msg":"A/1","order":"TSO","ts":2}
`)
	found := false
	for _, v := range rep.Violations {
		found = found || v.Rule == "no message is delivered twice"
	}
	if !found {
		t.Errorf("a second delivery on the restored branch not reported: %v", rep.Violations)
	}
}
