package peer

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// Federation save and restore (IEEE 1516.1-2010 §4.16-§4.32), decided
// through the control plane; see docs/saverestore.md.
//
// A save writes, per federate, the RTI's state for it (time, declarations,
// known and owned instances, tokens, queued messages) and whatever the
// federate writes itself to SavedStateWriter, under
// Config.SaveDir/<federation>/<label>/. A restore reads them back in every
// federate at once; the federate reads its own from RestoredStateReader.

// RequestFederationSave (§4.16) asks every federate to save now, under
// label: each is told so (InitiateFederateSave) and answers
// FederateSaveBegun, then FederateSaveComplete or NotComplete;
// FederationSaved or FederationNotSaved ends it. A federate that is
// advancing is told once it is granted. Errors: ErrSaveInProgress,
// ErrRestoreInProgress.
func (f *Federate) RequestFederationSave(label string) (err error) {
	defer f.reported("requestFederationSave", &err, func() ([]string, []string) { return texts(label), nil })
	return f.call(func() error { return f.core.RequestFederationSave(label, false, nil) })
}

// RequestFederationSaveWithTime (§4.16, the timed overload): each
// federate is told to save when its logical time reaches t (a federate
// that uses no time at once; one already past t fails the save,
// SaveTimeCannotBeHonored). Errors: ErrLogicalTimeAlreadyPassed,
// ErrInvalidLogicalTime, ErrFederateUnableToUseTime (this federate is
// neither regulating nor constrained).
func (f *Federate) RequestFederationSaveWithTime(label string, t LogicalTime) (err error) {
	defer f.reported("requestFederationSave", &err, func() ([]string, []string) { return texts(label, t), nil })
	return f.call(func() error { return f.core.RequestFederationSave(label, true, t) })
}

// FederateSaveBegun (§4.18) tells the RTI the federate starts saving.
// Errors: ErrSaveNotInitiated.
func (f *Federate) FederateSaveBegun() (err error) {
	defer f.reported("federateSaveBegun", &err, nil)
	return f.callAny(f.core.FederateSaveBegun)
}

// FederateSaveComplete (§4.19): the federate saved its state; the RTI
// writes its own once everything sent before the save has arrived.
// Errors: ErrFederateHasNotBegunSave.
func (f *Federate) FederateSaveComplete() (err error) {
	defer f.reported("federateSaveComplete", &err, nil)
	return f.callAny(func() error { return f.core.FederateSaveComplete(true) })
}

// FederateSaveNotComplete (§4.19): the federate could not save; the
// federation is not saved (FederateReportedFailureDuringSave). Errors:
// ErrFederateHasNotBegunSave.
func (f *Federate) FederateSaveNotComplete() (err error) {
	defer f.reported("federateSaveNotComplete", &err, nil)
	return f.callAny(func() error { return f.core.FederateSaveComplete(false) })
}

// AbortFederationSave (§4.21) ends the save under way: FederationNotSaved
// (SaveAborted). Errors: ErrSaveNotInProgress.
func (f *Federate) AbortFederationSave() (err error) {
	defer f.reported("abortFederationSave", &err, nil)
	return f.callAny(f.core.AbortFederationSave)
}

// QueryFederationSaveStatus (§4.22): FederationSaveStatusResponse
// answers.
func (f *Federate) QueryFederationSaveStatus() (err error) {
	defer f.reported("queryFederationSaveStatus", &err, nil)
	return f.callAny(func() error {
		if err := f.core.SaveRestoreError(); errors.Is(err, ErrRestoreInProgress) {
			return err
		}
		return f.core.QueryFederationSaveStatus()
	})
}

// RequestFederationRestore (§4.24) asks the federation to go back to the
// save labelled label: RequestFederationRestoreSucceeded (every federate
// has its saved state) or Failed answers; then FederationRestoreBegun and
// InitiateFederateRestore in every federate, each answering
// FederateRestoreComplete or NotComplete, and FederationRestored or
// FederationNotRestored ends it. Errors: ErrSaveInProgress,
// ErrRestoreInProgress.
func (f *Federate) RequestFederationRestore(label string) (err error) {
	defer f.reported("requestFederationRestore", &err, func() ([]string, []string) { return texts(label), nil })
	return f.call(func() error { return f.core.RequestFederationRestore(label) })
}

// FederateRestoreComplete (§4.28): the federate restored its state.
// Errors: ErrRestoreNotRequested.
func (f *Federate) FederateRestoreComplete() (err error) {
	defer f.reported("federateRestoreComplete", &err, nil)
	return f.callAny(func() error { return f.core.FederateRestoreComplete(true) })
}

// FederateRestoreNotComplete (§4.28): it could not; the federation is
// not restored (FederateReportedFailureDuringRestore). Errors:
// ErrRestoreNotRequested.
func (f *Federate) FederateRestoreNotComplete() (err error) {
	defer f.reported("federateRestoreNotComplete", &err, nil)
	return f.callAny(func() error { return f.core.FederateRestoreComplete(false) })
}

// AbortFederationRestore (§4.30) ends the restore under way:
// FederationNotRestored (RestoreAborted). Errors: ErrRestoreNotInProgress.
func (f *Federate) AbortFederationRestore() (err error) {
	defer f.reported("abortFederationRestore", &err, nil)
	return f.callAny(f.core.AbortFederationRestore)
}

// QueryFederationRestoreStatus (§4.31): FederationRestoreStatusResponse
// answers.
func (f *Federate) QueryFederationRestoreStatus() (err error) {
	defer f.reported("queryFederationRestoreStatus", &err, nil)
	return f.callAny(func() error {
		if err := f.core.SaveRestoreError(); errors.Is(err, ErrSaveInProgress) {
			return err
		}
		return f.core.QueryFederationRestoreStatus()
	})
}

// SavedStateWriter returns where the federate writes its own state for
// the save it was told of (InitiateFederateSave with label); close it
// before FederateSaveComplete. The file is synced to disk at Close, and
// becomes the label's when the federation saved (FederationSaved).
func (f *Federate) SavedStateWriter(label string) (io.WriteCloser, error) {
	dir, err := f.saveDir(label, true)
	if err != nil {
		return nil, err
	}
	return newSyncedFile(filepath.Join(dir, url.PathEscape(f.name)+".state"+pendingSuffix))
}

// pendingSuffix marks a save's files until the federation saved.
const pendingSuffix = ".pending"

// RestoredStateReader returns the federate's own state saved under label
// (after InitiateFederateRestore): the state of the saved federate it
// restores as, which InitiateFederateRestore names (its own, or, for a
// federate that joined in place of a crashed one, the crashed one's);
// ErrSpecifiedSaveLabelDoesNotExist when that one wrote none.
func (f *Federate) RestoredStateReader(label string) (io.ReadCloser, error) {
	dir, err := f.saveDir(label, false)
	if err != nil {
		return nil, err
	}
	name := f.name
	f.callDriver(func() error { name = f.core.RestoredName(); return nil })
	r, err := os.Open(filepath.Join(dir, url.PathEscape(name)+".state"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %q has no state of %q", ErrSpecifiedSaveLabelDoesNotExist, label, name)
	}
	return r, err
}

// saveDir returns the directory of label's save (made when mk).
func (f *Federate) saveDir(label string, mk bool) (string, error) {
	if label == "" {
		return "", fmt.Errorf("%w: empty label", ErrSpecifiedSaveLabelDoesNotExist)
	}
	root := f.cfg.SaveDir
	if root == "" {
		root = filepath.Join(os.TempDir(), "meshrti-saves")
	}
	dir := filepath.Join(root, url.PathEscape(f.cfg.Federation), url.PathEscape(label))
	if mk {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", fmt.Errorf("%w: %w", ErrRTIinternalError, err)
		}
	}
	return dir, nil
}

// saves is the core's store of RTI state: a file per federate in the
// label's directory, written whole, synced and renamed into place.
func (f *Federate) saves() dirStore { return dirStore{f} }

type dirStore struct{ f *Federate }

// setFile is the name of a label's saved set: every federate of the
// save writes the same, and a federate that joined in place of a crashed
// one learns from it whom it may restore as. (A federate's files end in
// .rti and .state.)
const setFile = "federates.set"

func (s dirStore) path(label, name string, mk bool) (string, error) {
	dir, err := s.f.saveDir(label, mk)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, url.PathEscape(name)+".rti"), nil
}

func (s dirStore) WriteSave(label string, data, set []byte) error {
	p, err := s.path(label, s.f.name, true)
	if err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{p, data}, {filepath.Join(filepath.Dir(p), setFile), set}} {
		w, err := newSyncedFile(f.name + pendingSuffix)
		if err != nil {
			return err
		}
		if _, err := w.Write(f.data); err != nil {
			w.abort()
			return err
		}
		if err := w.Close(); err != nil {
			return err
		}
	}
	return nil
}

// EndSave renames the pending files of label (the RTI's and the
// federate's own) into place, or removes them.
func (s dirStore) EndSave(label string, saved bool) {
	p, err := s.path(label, s.f.name, false)
	if err != nil {
		return
	}
	own := strings.TrimSuffix(p, ".rti") + ".state"
	// The set is the same in every federate's: the first to end the save
	// renames it, the others find it renamed already.
	for _, name := range []string{p, own, filepath.Join(filepath.Dir(p), setFile)} {
		if !saved {
			os.Remove(name + pendingSuffix)
			continue
		}
		if err := os.Rename(name+pendingSuffix, name); err != nil {
			// The federate wrote no state of its own: none may stay
			// from an earlier save of the label.
			if name == own && errors.Is(err, os.ErrNotExist) {
				os.Remove(own)
			}
		}
	}
	syncDir(filepath.Dir(p))
}

func (s dirStore) ReadSave(label, name string) ([]byte, error) {
	p, err := s.path(label, name, false)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(p)
}

func (s dirStore) ReadSet(label string) ([]byte, error) {
	dir, err := s.f.saveDir(label, false)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(filepath.Join(dir, setFile))
}

// syncedFile writes to a temporary file that Close syncs and renames to
// its name (then syncs the directory): a reader finds the whole file or
// none.
type syncedFile struct {
	*os.File
	name string
}

func newSyncedFile(name string) (*syncedFile, error) {
	tmp, err := os.CreateTemp(filepath.Dir(name), ".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRTIinternalError, err)
	}
	return &syncedFile{File: tmp, name: name}, nil
}

func (w *syncedFile) abort() {
	w.File.Close()
	os.Remove(w.File.Name())
}

func (w *syncedFile) Close() error {
	err := w.File.Sync()
	if cerr := w.File.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(w.File.Name(), w.name)
	}
	if err != nil {
		os.Remove(w.File.Name())
		return fmt.Errorf("%w: %w", ErrRTIinternalError, err)
	}
	syncDir(filepath.Dir(w.name))
	return nil
}

// syncDir syncs a directory, so that a rename in it is on disk.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
