package tracecheck

import (
	"slices"
	"testing"
)

// takeoverHead: A and B save at 5; B's process is killed, and B joins
// again (handle 7) while the federation is at 9; then the federation
// restores the save, the new B as the saved one.
const takeoverHead = `{"ev":"join","fed":"A","handle":"1"}
{"ev":"join","fed":"B","handle":"2"}
{"ev":"regulation","fed":"A","lookahead":1,"t":0}
{"ev":"regulation","fed":"B","lookahead":1,"t":0}
{"ev":"constrained","fed":"B","t":0}
{"ev":"grant","fed":"B","t":5}
{"ev":"save","fed":"A","label":"s"}
{"ev":"save","fed":"B","label":"s"}
{"ev":"send","fed":"A","msg":"A/1","kind":"update","order":"TSO","ts":7}
{"ev":"deliver","fed":"B","msg":"A/1","src":"1","order":"TSO","ts":7}
{"ev":"grant","fed":"B","t":7}
{"ev":"join","fed":"B","handle":"7"}
{"ev":"regulation","fed":"B","lookahead":1,"t":9}
{"ev":"constrained","fed":"B","t":9}
{"ev":"send","fed":"A","msg":"A/2","kind":"update","order":"TSO","ts":10}
{"ev":"deliver","fed":"B","msg":"A/2","src":"1","order":"TSO","ts":10}
{"ev":"grant","fed":"B","t":10}
{"ev":"restore","fed":"A","label":"s","branch":3}
{"ev":"restore","fed":"B","label":"s","branch":3}
`

// A federate that joined in place of a crashed one restores from that
// one's save point: its time goes back to the save's (its grants from
// there on are checked against the save point's, not its own of the
// abandoned branch), and what it delivered before may come again.
func TestRestoreInPlaceOfCrashed(t *testing.T) {
	clean := takeoverHead + `{"ev":"send","fed":"A","msg":"A/3","kind":"update","order":"TSO","ts":7}
{"ev":"deliver","fed":"B","msg":"A/3","src":"1","order":"TSO","ts":7}
{"ev":"grant","fed":"B","t":7}
`
	if rep := report(t, clean); len(rep.Violations) != 0 {
		t.Errorf("a restore in place of a crashed federate: %v", rep.Violations)
	}
	for _, c := range []struct{ tail, rule string }{
		// Below the save point's grant: the borrowed save point holds it.
		{`{"ev":"grant","fed":"B","t":4}
`, "grants never decrease"},
		{`{"ev":"send","fed":"A","msg":"A/3","kind":"update","order":"TSO","ts":5}
{"ev":"deliver","fed":"B","msg":"A/3","src":"1","order":"TSO","ts":5}
`, "no TSO delivery at or below the last grant"},
	} {
		rep := report(t, takeoverHead+c.tail)
		if !slices.ContainsFunc(rep.Violations, func(v Violation) bool { return v.Rule == c.rule }) {
			t.Errorf("%q after the restore not reported; got %v", c.rule, rep.Violations)
		}
	}
	// Without the restore line, the new B's grant to 7 after 10 is one.
	rep := report(t, takeoverHead[:len(takeoverHead)-len(`{"ev":"restore","fed":"B","label":"s","branch":3}
`)]+`{"ev":"grant","fed":"B","t":7}
`)
	if !slices.ContainsFunc(rep.Violations, func(v Violation) bool { return v.Rule == "grants never decrease" }) {
		t.Errorf("a grant going back without a restore not reported: %v", rep.Violations)
	}
}
