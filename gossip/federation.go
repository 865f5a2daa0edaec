package gossip

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/meshrti/meshrti/gossip/internal/agree"
)

// FederateInfo is one joined federate.
type FederateInfo struct {
	Handle uint64 // decided once through the register; the same for every member
	Name   string // unique among joined federates
	Type   string
	Node   string // the node it runs on
}

func federateInfo(fr agree.FederateRec) FederateInfo {
	return FederateInfo{Handle: fr.Handle, Name: fr.Name, Type: fr.Type, Node: fr.Node.Name}
}

// Module is one FOM module (IEEE 1516.1-2010 §4.5): the federation
// record keeps the modules of every creator and joiner, in the order they
// were added, so every member can build the same FDD.
type Module struct {
	Name string // a designator for people and logs; not interpreted
	// Digest is the hex SHA-256 of Content. It identifies the module: two
	// modules with the same digest are the same module. CreateFederation
	// and JoinFederate fill it in when empty and refuse a wrong one.
	Digest string
	// Content is the module's XML, perhaps compressed by the caller: it
	// is opaque here.
	Content []byte
}

// FederationSpec describes a federation execution to create.
type FederationSpec struct {
	// Name must be Config.Federation, or empty (meaning it).
	Name string
	// TimeRepresentation names the logical time implementation, for
	// example "HLAfloat64Time". Joiners that name another one are
	// refused (ErrTimeRepresentation). Empty: not checked.
	TimeRepresentation string
	// Modules are the creator's FOM modules, in order (duplicates by
	// digest are dropped).
	Modules []Module
	// MIM, when set, replaces the standard MIM
	// (createFederationExecutionWithMIM). Like Modules it is opaque here;
	// it counts toward the 8 MiB limit.
	MIM *Module
	// Cells, when set, is the federation's DDM cell configuration, for
	// joiners to adopt (FederationInfo.Cells). It is opaque here, counts
	// toward the 8 MiB limit and never changes.
	Cells []byte
	// DataPlane, when set, names the federation's data-plane mode (for
	// meshrti's peer layer "multicast", "unicast" or "auto"), for
	// joiners to agree with (FederationInfo.DataPlane). It is opaque
	// here, at most 64 bytes, and never changes.
	DataPlane string
}

// JoinSpec describes a federate joining the federation execution.
type JoinSpec struct {
	// Name is the federate name; empty: one is generated from Type and
	// the handle (LocalFederate returns it).
	Name string
	Type string
	// TimeRepresentation, when set, must equal the federation's (when
	// the federation has one), or the join fails with
	// ErrTimeRepresentation.
	TimeRepresentation string
	// Modules are the joiner's additional FOM modules. Those whose digest
	// the record already holds are skipped; the others are appended to
	// the record when the join succeeds.
	Modules []Module
	// KnownModules is len(FederationInfo.Modules) of the record the
	// joiner checked its Modules against. When the joiner adds modules
	// and the record has grown since, the join fails with
	// ErrModulesChanged and nothing changes: re-read Federation, check
	// again, retry.
	KnownModules int
}

// FederationInfo describes a federation execution.
type FederationInfo struct {
	Name               string
	Creator            string // node that created it
	TimeRepresentation string // as given to CreateFederation
	// Modules are the creator's modules followed by those joiners added,
	// in order. Each Content is a copy the caller may keep.
	Modules []Module
	// MIM is the creator's MIM, nil for the standard one.
	MIM *Module
	// Cells is FederationSpec.Cells as created (a copy), nil when the
	// creator gave none or the record predates it.
	Cells []byte
	// DataPlane is FederationSpec.DataPlane as created, empty when the
	// creator gave none or the record predates it.
	DataPlane string
	Federates []FederateInfo
}

func federationInfo(f *agree.FederationRec) FederationInfo {
	fi := FederationInfo{Name: f.Name, Creator: f.Creator, TimeRepresentation: f.Time, Modules: modulesOf(f.Modules), Cells: bytes.Clone(f.Cells), DataPlane: f.DataPlane}
	if mim := modulesOf(f.MIM); len(mim) > 0 {
		fi.MIM = &mim[0]
	}
	fi.Federates = federatesOf(f)
	return fi
}

func federatesOf(f *agree.FederationRec) []FederateInfo {
	var out []FederateInfo
	for _, fr := range f.Federates {
		out = append(out, federateInfo(fr))
	}
	return out
}

// modulesOf copies recorded modules out; nil for none.
func modulesOf(ms []agree.ModuleRec) []Module {
	if len(ms) == 0 {
		return nil
	}
	out := make([]Module, len(ms))
	for i, m := range ms {
		out[i] = Module{Name: m.Name, Digest: m.Digest, Content: bytes.Clone(m.Content)}
	}
	return out
}

// moduleRecs checks the caller's modules and copies them in: a missing
// digest is computed, a wrong one is refused, duplicates are dropped.
func moduleRecs(ms []Module) ([]agree.ModuleRec, error) {
	var out []agree.ModuleRec
	seen := map[string]bool{}
	total := 0
	for i, m := range ms {
		sum := sha256.Sum256(m.Content)
		d := hex.EncodeToString(sum[:])
		if m.Digest != "" && !strings.EqualFold(m.Digest, d) {
			return nil, fmt.Errorf("%w: module %d (%q): digest %.16s... is not the SHA-256 of its content (%.16s...)",
				ErrInvalidModule, i, m.Name, m.Digest, d)
		}
		if seen[d] {
			continue
		}
		seen[d] = true
		total += len(m.Content)
		out = append(out, agree.ModuleRec{Name: m.Name, Digest: d, Content: bytes.Clone(m.Content)})
	}
	if total > agree.MaxModuleBytes {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrModulesTooLarge, total, agree.MaxModuleBytes)
	}
	return out, nil
}

// CreateFederation creates the federation execution this cluster serves,
// with its time representation and FOM modules. Of any number of racing
// creators exactly one succeeds; the others get ErrFederationExists. A
// spec.Name other than Config.Federation is ErrFederationMismatch; a
// module whose digest is wrong is ErrInvalidModule; modules over 8 MiB in
// all are ErrModulesTooLarge. It blocks until decided, ctx ends or
// Config.Timeout passes (ErrNoQuorum).
func (c *Cluster) CreateFederation(ctx context.Context, spec FederationSpec) error {
	if spec.Name != "" && spec.Name != c.cfg.Federation {
		return fmt.Errorf("%w: %q, not %q", ErrFederationMismatch, c.cfg.Federation, spec.Name)
	}
	mods, err := moduleRecs(spec.Modules)
	if err != nil {
		return err
	}
	var mim []agree.ModuleRec
	if spec.MIM != nil {
		if mim, err = moduleRecs([]Module{*spec.MIM}); err != nil {
			return err
		}
	}
	if len(spec.DataPlane) > maxDataPlaneName {
		return fmt.Errorf("gossip: FederationSpec.DataPlane longer than %d bytes", maxDataPlaneName)
	}
	if total := agree.ModuleBytes(mods) + agree.ModuleBytes(mim) + len(spec.Cells); total > agree.MaxModuleBytes {
		return fmt.Errorf("%w: %d bytes with the MIM and cells, limit %d", ErrModulesTooLarge, total, agree.MaxModuleBytes)
	}
	r, err := c.submit(ctx, agree.Op{Kind: agree.OpCreateFed, Name: c.cfg.Federation, Time: spec.TimeRepresentation, Modules: mods, MIM: mim, Cells: bytes.Clone(spec.Cells), DataPlane: spec.DataPlane})
	if err != nil {
		return err
	}
	return errorFor(r.Code)
}

// DestroyFederation destroys the federation execution: ErrFederatesJoined
// while any federate is joined, ErrFederationNotFound when there is none.
// It blocks like CreateFederation.
func (c *Cluster) DestroyFederation(ctx context.Context) error {
	r, err := c.submit(ctx, agree.Op{Kind: agree.OpDestroyFed})
	if err != nil {
		return err
	}
	return errorFor(r.Code)
}

// JoinFederate joins this node's federate under spec.Name (empty: a name
// is generated from the type and handle; LocalFederate returns it) and
// returns its handle. The name and the handle are decided once in the
// register, so every member sees the same ones; a name in use is
// ErrNameInUse. One federate per node: a second join is
// ErrAlreadyJoined.
//
// The join is also where FDDs meet: a spec.TimeRepresentation other than
// the federation's is ErrTimeRepresentation, and spec.Modules the record
// lacks are added only if the record still has spec.KnownModules modules
// (ErrModulesChanged otherwise: nothing was changed; re-read Federation,
// which is current as of that decision, check the new modules and
// retry). Added modules reach every member as
// EventFederationModulesChanged. On success the node's metadata carries
// the federate. It blocks like CreateFederation.
func (c *Cluster) JoinFederate(ctx context.Context, spec JoinSpec) (uint64, error) {
	// The metadata must be able to carry the federate afterwards.
	m := c.Meta()
	m.FederateName, m.FederateType, m.FederateHandle = spec.Name, spec.Type, ^uint64(0)
	if spec.Name == "" {
		m.FederateName = spec.Type + "-18446744073709551615'"
	}
	if _, err := encodeMeta(m, c.id.Inc); err != nil {
		return 0, err
	}
	mods, err := moduleRecs(spec.Modules)
	if err != nil {
		return 0, err
	}
	r, err := c.submit(ctx, agree.Op{
		Kind: agree.OpJoinFed, Name: spec.Name, Type: spec.Type,
		Time: spec.TimeRepresentation, Modules: mods, Known: spec.KnownModules,
	})
	if err != nil {
		return 0, err
	}
	if err := errorFor(r.Code); err != nil {
		return 0, err
	}
	_ = c.updateMeta(func(m *Meta) {
		m.FederateName, m.FederateType, m.FederateHandle = r.Name, spec.Type, r.Handle
	}, nil)
	return r.Handle, nil
}

// ResignFederate resigns this node's federate and frees its name
// (ErrNotJoined when none is joined). It blocks like CreateFederation.
func (c *Cluster) ResignFederate(ctx context.Context) error {
	r, err := c.submit(ctx, agree.Op{Kind: agree.OpResignFed})
	if err != nil {
		return err
	}
	if err := errorFor(r.Code); err != nil {
		return err
	}
	return c.updateMeta(func(m *Meta) { m.FederateName, m.FederateType, m.FederateHandle = "", "", 0 }, nil)
}

// Federates returns the joined federates by handle, as this node last
// learned them. It never blocks.
func (c *Cluster) Federates() []FederateInfo {
	c.viewMu.RLock()
	defer c.viewMu.RUnlock()
	if c.view.fed == nil {
		return nil
	}
	return federatesOf(c.view.fed)
}

// LocalFederate returns this node's joined federate, if any, as this
// node last learned it. It never blocks.
func (c *Cluster) LocalFederate() (FederateInfo, bool) {
	c.viewMu.RLock()
	defer c.viewMu.RUnlock()
	if c.view.fed != nil {
		for _, fr := range c.view.fed.Federates {
			if fr.Node == c.id {
				return federateInfo(fr), true
			}
		}
	}
	return FederateInfo{}, false
}

// Federation returns the federation execution as this node last learned
// it; false when it does not exist. It never blocks.
func (c *Cluster) Federation() (FederationInfo, bool) {
	c.viewMu.RLock()
	defer c.viewMu.RUnlock()
	if c.view.fed == nil {
		return FederationInfo{}, false
	}
	return federationInfo(c.view.fed), true
}

// ListFederations returns the federation executions visible from this
// node, after confirming with a quorum that its view is current. A
// cluster serves one execution (its memberlist Label), and there is no
// central directory in a peer-to-peer RTI: the list holds this cluster's
// execution when it exists, and nothing else. Executions whose clusters
// this node has no seed for are invisible. It blocks like
// CreateFederation.
func (c *Cluster) ListFederations(ctx context.Context) ([]FederationInfo, error) {
	var out []FederationInfo
	err := c.barrier(ctx, func(f *agree.FSM) {
		if f.Fed != nil {
			out = append(out, federationInfo(f.Fed))
		}
	})
	return out, err
}
