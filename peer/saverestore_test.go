package peer

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/meshrti/meshrti/peer/transport"
)

// saveAll runs a save of label through every federate of m, each writing
// its name as its own state unless skip says otherwise; it returns each
// federate's outcome.
func saveAll(t *testing.T, m *memFederation, label string, write func(f *Federate) bool) []Event {
	t.Helper()
	if err := m.feds[0].RequestFederationSave(label); err != nil {
		t.Fatal(err)
	}
	for _, f := range m.feds {
		waitFor(t, f, 5*time.Second, isType[InitiateFederateSave])
		if err := f.FederateSaveBegun(); err != nil {
			t.Fatal(err)
		}
		if write(f) {
			w, err := f.SavedStateWriter(label)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.WriteString(w, "state of "+f.Name()); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.FederateSaveComplete(); err != nil {
			t.Fatal(err)
		}
	}
	var outcomes []Event
	for _, f := range m.feds {
		ev, _ := waitFor(t, f, 5*time.Second, func(ev Event) bool {
			return isType[FederationSaved](ev) || isType[FederationNotSaved](ev)
		})
		outcomes = append(outcomes, ev)
	}
	return outcomes
}

// A save writes each federate's RTI state and its own under the label,
// synced and in place only once the federation saved; a restore reads
// them back. A restore of a label whose files are damaged or missing is
// refused, and a save the RTI cannot write fails with RTIUnableToSave.
func TestSaveFilesAndRestore(t *testing.T) {
	m := newMemFederation(t, 3, transport.Faults{}, 41)
	all := func(*Federate) bool { return true }
	for i, ev := range saveAll(t, m, "one", all) {
		if _, ok := ev.(FederationSaved); !ok {
			t.Fatalf("%s: %#v, want FederationSaved", m.feds[i].Name(), ev)
		}
	}
	dir := filepath.Join(m.dir, "fed", "one")
	for _, f := range m.feds {
		for _, ext := range []string{".rti", ".state"} {
			if _, err := os.Stat(filepath.Join(dir, f.Name()+ext)); err != nil {
				t.Errorf("after the save: %v", err)
			}
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.pending")); len(left) > 0 {
		t.Errorf("pending files left after the save: %v", left)
	}

	// Restore: every federate reads its own state back.
	a := m.feds[0]
	if err := a.RequestFederationRestore("one"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, a, 5*time.Second, isType[RequestFederationRestoreSucceeded])
	for _, f := range m.feds {
		ev, _ := waitFor(t, f, 5*time.Second, isType[InitiateFederateRestore])
		if in := ev.(InitiateFederateRestore); in.Name != f.Name() || in.Handle != f.Handle() || in.Label != "one" {
			t.Errorf("%s: %+v", f.Name(), in)
		}
		if err := a.RequestFederationRestore("again"); !errors.Is(err, ErrRestoreInProgress) {
			t.Errorf("a second restore during the restore: %v", err)
		}
		r, err := f.RestoredStateReader("one")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r)
		r.Close()
		if string(b) != "state of "+f.Name() {
			t.Errorf("%s read back %q", f.Name(), b)
		}
		if err := f.FederateRestoreComplete(); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range m.feds {
		waitFor(t, f, 5*time.Second, isType[FederationRestored])
	}

	// A failed save leaves the label's earlier save in place; a
	// federate that wrote no state of its own has none after a save.
	skip := m.feds[1]
	for _, ev := range saveAll(t, m, "one", func(f *Federate) bool { return f != skip }) {
		if _, ok := ev.(FederationSaved); !ok {
			t.Fatalf("%#v, want FederationSaved", ev)
		}
	}
	if _, err := skip.RestoredStateReader("one"); !errors.Is(err, ErrSpecifiedSaveLabelDoesNotExist) {
		t.Errorf("reading the state %s did not write: %v", skip.Name(), err)
	}
	if err := a.RequestFederationSave("one"); err != nil {
		t.Fatal(err)
	}
	for _, f := range m.feds {
		waitFor(t, f, 5*time.Second, isType[InitiateFederateSave])
	}
	if err := m.feds[2].AbortFederationSave(); err != nil {
		t.Fatal(err)
	}
	for _, f := range m.feds {
		ev, _ := waitFor(t, f, 5*time.Second, isType[FederationNotSaved])
		if r := ev.(FederationNotSaved).Reason; r != SaveAborted {
			t.Errorf("%s: not saved for %v", f.Name(), r)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, a.Name()+".rti")); err != nil {
		t.Errorf("the earlier save of the label is gone after an aborted one: %v", err)
	}

	// A damaged saved state: the restore is refused.
	if err := os.WriteFile(filepath.Join(dir, m.feds[2].Name()+".rti"), []byte("\x81\xa6format\x07garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := a.RequestFederationRestore("one"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, a, 5*time.Second, isType[RequestFederationRestoreFailed])

	// A save directory that cannot be written: RTIUnableToSave.
	if err := os.WriteFile(filepath.Join(m.dir, "fed", "blocked"), nil, 0o644); err != nil {
		t.Fatal(err) // a file where the label's directory would go
	}
	for _, ev := range saveAll(t, m, "blocked", func(*Federate) bool { return false }) {
		if e, ok := ev.(FederationNotSaved); !ok || e.Reason != RTIUnableToSave {
			t.Errorf("save into a blocked directory: %#v, want FederationNotSaved RTIUnableToSave", ev)
		}
	}
}
