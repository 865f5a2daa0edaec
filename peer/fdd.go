package peer

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/meshrti/meshrti/ddm"
	"github.com/meshrti/meshrti/fomxml"
)

// The federation's FDD: the standard MIM, then the modules its creator
// gave, then the modules joiners added, in the order the control plane
// recorded them. A joiner reads the record, merges its own modules after
// it (ErrInconsistentFDD when they conflict), and joins adding the
// modules the record lacks; the control plane refuses that join if the
// record changed since it was read (ErrModulesChanged), and the joiner
// tries again, so two joiners with conflicting modules cannot both get
// in unchecked. Every member extends its FDD when modules are added
// (ModulesChanged): handles are hashes of names, so nothing known
// changes its handle.

// maxJoinTries bounds how often a join is retried because the
// federation's modules changed meanwhile.
const maxJoinTries = 16

// joinFederation creates the federation if asked and needed, checks this
// federate's time representation and modules against it, and joins. It
// returns the FDD.
func (f *Federate) joinFederation(ctx context.Context) (*fomxml.FDD, error) {
	cfg := &f.cfg
	rep := string(cfg.timeKind())
	for try := 0; ; try++ {
		spec, exists, err := f.ctl.Federation(ctx)
		if err != nil {
			return nil, err
		}
		if !exists {
			if !cfg.Create {
				return nil, fmt.Errorf("%w: %s", ErrFederationExecutionDoesNotExist, cfg.Federation)
			}
			// A creator's modules make the FDD alone.
			var mimDoc *fomxml.Document
			if f.localMIM != nil {
				if mimDoc, err = f.moduleDoc(*f.localMIM); err != nil {
					return nil, fmt.Errorf("%w: %w", ErrErrorReadingMIM, err)
				}
			}
			if _, err := cfg.checkDocs(mimDoc, f.docs); err != nil {
				return nil, err
			}
			cells := cfg.Regions.Normalized()
			err := f.ctl.CreateFederation(ctx, FederationSpec{TimeRepresentation: rep, Modules: f.local, MIM: f.localMIM, Regions: &cells, DataPlane: string(cfg.transportMode())})
			if err != nil && !errors.Is(err, ErrFederationExecutionAlreadyExists) {
				return nil, err
			}
			continue // read what was created
		}
		if cfg.AdoptTime && spec.TimeRepresentation != "" && spec.TimeRepresentation != rep {
			cfg.TimeRepresentation = spec.TimeRepresentation // cfg is f.cfg
			rep = string(cfg.timeKind())
		}
		if spec.TimeRepresentation != "" && spec.TimeRepresentation != rep {
			return nil, fmt.Errorf("%w: the federation uses %s, this federate %s", ErrCouldNotCreateLogicalTimeFactory, spec.TimeRepresentation, rep)
		}
		f.mim = nil
		if spec.MIM != nil {
			if f.mim, err = f.moduleDoc(*spec.MIM); err != nil {
				return nil, fmt.Errorf("%w: %w", ErrErrorReadingMIM, err)
			}
		}
		fdd, adds, err := f.merge(spec.Modules, true)
		if err != nil {
			return nil, err
		}
		if err := f.adoptCells(spec.Regions, fdd); err != nil {
			return nil, err
		}
		f.handle, f.name, err = f.ctl.JoinFederate(ctx, JoinRequest{
			Name: cfg.FederateName, Type: cfg.FederateType, TimeRepresentation: rep,
			Modules: adds, KnownModules: len(spec.Modules),
		})
		if errors.Is(err, ErrModulesChanged) && try < maxJoinTries {
			continue
		}
		if err != nil {
			return nil, err
		}
		f.modules = append(spec.Modules, adds...)
		f.fedDataPlane = spec.DataPlane
		return fdd, nil
	}
}

// adoptCells makes the federation's DDM cell configuration (nil: the
// record predates it) this federate's, and checks that it fits fdd.
// Senders and receivers compute cells independently, so a federate with
// other cells would send into groups nobody joined and join groups
// nobody sends into: a joiner configured otherwise adopts the
// federation's, as it adopts the FDD, and says so in the log.
func (f *Federate) adoptCells(agreed *ddm.Config, fdd *fomxml.FDD) error {
	cfg := &f.cfg
	if agreed != nil && !agreed.Equal(cfg.Regions) {
		ev := f.log.Warn()
		if cfg.Regions.Equal(ddm.Config{}) {
			ev = f.log.Info() // it asked for nothing in particular
		}
		ev.Str("federation", cfg.Federation).
			Int("defaultCells", agreed.DefaultCells).Int("maxJoins", agreed.MaxJoins).Interface("cells", agreed.Cells).
			Int("configuredDefaultCells", cfg.Regions.DefaultCells).Int("configuredMaxJoins", cfg.Regions.MaxJoins).Interface("configuredCells", cfg.Regions.Cells).
			Msg("using the federation's DDM cells (agreed at its creation) instead of Config.Regions")
		cfg.Regions = agreed.Normalized()
	}
	if _, err := ddm.NewSpace(fdd, cfg.Regions); err != nil {
		if agreed != nil {
			return fmt.Errorf("%w: the federation's DDM cells: %w", ErrRTIinternalError, err)
		}
		return fmt.Errorf("peer: Config.Regions: %w", err)
	}
	return nil
}

// merge returns the FDD of the federation's modules and, with own, this
// federate's after them, and the modules of this federate's the
// federation lacks.
func (f *Federate) merge(federation []Module, own bool) (*fomxml.FDD, []Module, error) {
	var docs []*fomxml.Document
	have := make(map[string]bool)
	for _, m := range federation {
		have[m.Digest] = true
		d, err := f.moduleDoc(m)
		if err != nil {
			return nil, nil, err
		}
		docs = append(docs, d)
	}
	var adds []Module
	if own {
		for i, m := range f.local {
			if !have[m.Digest] {
				have[m.Digest] = true
				adds = append(adds, m)
				docs = append(docs, f.docs[i])
			}
		}
	}
	fdd, err := mergeFDD(f.mim, docs)
	if err != nil {
		return nil, nil, fomError(err)
	}
	return fdd, adds, nil
}

// moduleDoc returns the parsed module m: this federate's own when it has
// it, else m's content parsed.
func (f *Federate) moduleDoc(m Module) (*fomxml.Document, error) {
	for i, l := range f.local {
		if l.Digest == m.Digest {
			return f.docs[i], nil
		}
	}
	zr, err := gzip.NewReader(bytes.NewReader(m.Content))
	if err != nil {
		return nil, fmt.Errorf("%w: the federation's module %s: %w", ErrReadingFDD, m.Name, err)
	}
	data, err := io.ReadAll(io.LimitReader(zr, fomxml.MaxModuleBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: the federation's module %s: %w", ErrReadingFDD, m.Name, err)
	}
	d, err := fomxml.ParseBytes(m.Name, data)
	if err != nil {
		return nil, fomError(err)
	}
	return d, nil
}

// extendFDD takes the federation's new module list: the FDD becomes their
// merge. Under mu.
func (f *Federate) extendFDD(modules []Module) {
	if len(modules) <= len(f.modules) {
		return // not news
	}
	fdd, _, err := f.merge(modules, false)
	if err != nil {
		// The join that added them was checked against the same list:
		// this federate's view cannot differ.
		f.log.Error().Err(err).Msg("the federation's FOM modules do not merge")
		return
	}
	f.modules = modules
	f.fdd.Store(fdd)
	f.core.SetFDD(fdd)
}

// catchUpTimeout bounds how long a lookup that missed waits for the
// control plane to tell the federation's modules.
const catchUpTimeout = 5 * time.Second

// lookup looks k up in the FDD with find. When find misses, k may be a
// joiner's (a class or dimension of a module it added): the joiner's Join
// returned once its modules were agreed, but this federate hears of them
// only when it takes the ModulesChanged event that follows. The lookup
// then reads the agreed module list (catchUp) and, if the FDD grew
// meanwhile (by that read or by the event), tries again, so that every
// member knows a joiner's classes as soon as its Join returns.
func lookup[K, V any](f *Federate, find func(*fomxml.FDD, K) (V, bool), k K) (V, bool) {
	fdd := f.FDD()
	v, ok := find(fdd, k)
	if !ok {
		f.catchUp()
		if now := f.FDD(); now != fdd {
			v, ok = find(now, k)
		}
	}
	return v, ok
}

// catchUp extends the FDD with the modules the control plane holds that
// this federate has not taken yet. A control plane that cannot answer
// (closed, no quorum within catchUpTimeout) leaves the FDD as it is.
func (f *Federate) catchUp() {
	if f.closed.Load() || f.ctl == nil {
		return
	}
	ctx, cancel := context.WithTimeout(f.opsCtx, catchUpTimeout)
	defer cancel()
	spec, ok, err := f.ctl.Federation(ctx)
	if err != nil || !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.extendFDD(spec.Modules)
}

// modulesOf returns docs as the control plane carries them: their source
// gzip-compressed, with its digest.
// moduleText returns the text of the federation's FOM module i (from 0),
// for the MOM. Under mu (the core calls it).
func (f *Federate) moduleText(i int) (string, error) {
	if i < 0 || i >= len(f.modules) {
		return "", fmt.Errorf("no FOM module %d of %d", i, len(f.modules))
	}
	d, err := f.moduleDoc(f.modules[i])
	if err != nil {
		return "", err
	}
	_, src := d.Source()
	return string(src), nil
}

// mimText returns the text of the federation's MIM, for the MOM.
func (f *Federate) mimText() string {
	if f.mim == nil {
		return string(fomxml.StandardMIMXML())
	}
	_, src := f.mim.Source()
	return string(src)
}

// mimModule is modulesOf for the MIM: nil for none.
func mimModule(mim *fomxml.Document) (*Module, error) {
	if mim == nil {
		return nil, nil
	}
	ms, err := modulesOf([]*fomxml.Document{mim})
	if err != nil {
		return nil, err
	}
	return &ms[0], nil
}

func modulesOf(docs []*fomxml.Document) ([]Module, error) {
	out := make([]Module, 0, len(docs))
	for _, d := range docs {
		file, src := d.Source()
		if src == nil {
			return nil, fmt.Errorf("%w: module %q was not parsed from a source", ErrCouldNotOpenFDD, d.Module.Name)
		}
		var b bytes.Buffer
		zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
		if err != nil {
			return nil, err
		}
		zw.Write(src)
		if err := zw.Close(); err != nil {
			return nil, err
		}
		sum := sha256.Sum256(b.Bytes())
		out = append(out, Module{Name: filepath.Base(file), Digest: hex.EncodeToString(sum[:]), Content: b.Bytes()})
	}
	return out, nil
}
