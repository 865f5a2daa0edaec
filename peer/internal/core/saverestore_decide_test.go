package core

import (
	"testing"

	"github.com/meshrti/meshrti/peer/hla"
)

// The save's outcome, decided from this federate's status and the live
// participants': it waits while one has not finished, unless one aborted
// or was past the save time (then it fails at once), and names the
// worst failure.
func TestSaveOutcome(t *testing.T) {
	const b, c = FederateHandle(2), FederateHandle(3)
	for _, tc := range []struct {
		name       string
		self, b, c uint8
		left       hla.SaveFailureReason // a participant left
		reason     hla.SaveFailureReason
		done       bool
	}{
		{name: "waits for one begun", self: ssComplete, b: ssBegun, c: ssComplete},
		{name: "saved", self: ssComplete, b: ssComplete, c: ssComplete, done: true},
		{name: "aborted at once", self: ssBegun, b: ssAbort, c: ssInitiated, reason: hla.SaveAborted, done: true},
		{name: "too late at once", self: ssBegun, b: ssInitiated, c: ssTooLate, reason: hla.SaveTimeCannotBeHonored, done: true},
		{name: "unable", self: ssComplete, b: ssUnable, c: ssComplete, reason: hla.RTIUnableToSave, done: true},
		{name: "not complete", self: ssNotComplete, b: ssComplete, c: ssComplete, reason: hla.FederateReportedFailureDuringSave, done: true},
		{name: "unable before not complete", self: ssNotComplete, b: ssUnable, c: ssComplete, reason: hla.RTIUnableToSave, done: true},
		{name: "a participant left", self: ssBegun, b: ssBegun, c: ssBegun, left: hla.FederateResignedDuringSave, reason: hla.FederateResignedDuringSave, done: true},
	} {
		s := saveUnderWay{version: 1, phase: saveInitiated, status: tc.self, failed: tc.left,
			statuses: map[FederateHandle]memberSave{b: {status: tc.b}, c: {status: tc.c}}}
		reason, done := s.outcome([]FederateHandle{b, c})
		if reason != tc.reason || done != tc.done {
			t.Errorf("%s: outcome %v, done %v; want %v, %v", tc.name, reason, done, tc.reason, tc.done)
		}
	}
	// A participant that left is not waited for.
	s := saveUnderWay{version: 1, phase: saveInitiated, status: ssComplete, statuses: map[FederateHandle]memberSave{b: {status: ssBegun}}}
	if reason, done := s.outcome(nil); reason != 0 || !done {
		t.Errorf("without the live participant: outcome %v, done %v", reason, done)
	}
	// A status of another save is ignored.
	s.noteStatus(b, 2, memberSave{status: ssAbort})
	if s.statuses[b].status != ssBegun {
		t.Errorf("a status of save 2 changed save 1's")
	}
}

// The restore begins once every live participant answered, when all have
// their saved state; its outcome waits for every one to restore, unless
// one aborted.
func TestRestoreDecisions(t *testing.T) {
	const self, b = FederateHandle(1), FederateHandle(2)
	r := restoreUnderWay{version: 1, phase: restorePending, statuses: map[FederateHandle]uint8{self: rsReady}}
	if _, done := r.begins(self, []FederateHandle{b}); done {
		t.Error("began before b answered")
	}
	r.noteStatus(b, 1, rsMissing)
	if begins, done := r.begins(self, []FederateHandle{b}); begins || !done {
		t.Errorf("b misses its state: begins %v, done %v", begins, done)
	}
	if begins, done := r.begins(self, nil); !begins || !done {
		t.Errorf("without b: begins %v, done %v", begins, done)
	}
	r.phase = restoreBegun
	r.statuses = map[FederateHandle]uint8{self: rsComplete, b: rsReady}
	if _, done := r.outcome(self, []FederateHandle{b}); done {
		t.Error("decided before b restored")
	}
	r.noteStatus(b, 1, rsNotComplete)
	if reason, done := r.outcome(self, []FederateHandle{b}); reason != hla.FederateReportedFailureDuringRestore || !done {
		t.Errorf("b failed: outcome %v, done %v", reason, done)
	}
	r.statuses[self] = rsReady
	r.noteStatus(b, 1, rsAbort)
	if reason, done := r.outcome(self, []FederateHandle{b}); reason != hla.RestoreAborted || !done {
		t.Errorf("b aborted: outcome %v, done %v", reason, done)
	}
}
