package gossip

import (
	"context"
	"fmt"
)

// FederateInfo is one joined federate.
type FederateInfo struct {
	Handle uint64 // decided once through the register; the same for every member
	Name   string // unique among joined federates
	Type   string
	Node   string // the node it runs on
}

func federateInfo(fr federateRec) FederateInfo {
	return FederateInfo{Handle: fr.Handle, Name: fr.Name, Type: fr.Type, Node: fr.Node.Name}
}

// FederationInfo describes a federation execution.
type FederationInfo struct {
	Name      string
	FOMDigest string // as given to CreateFederation
	Creator   string // node that created it
	Federates []FederateInfo
}

func federationInfo(f *federationRec) FederationInfo {
	fi := FederationInfo{Name: f.Name, FOMDigest: f.FOMDigest, Creator: f.Creator}
	for _, fr := range f.Federates {
		fi.Federates = append(fi.Federates, federateInfo(fr))
	}
	return fi
}

// CreateFederation creates the federation execution this cluster serves.
// name must be Config.Federation (or empty, meaning it). Of any number of
// racing creators exactly one succeeds; the others get
// ErrFederationExists. It blocks until decided, ctx ends or
// Config.Timeout passes (ErrNoQuorum).
func (c *Cluster) CreateFederation(ctx context.Context, name, fomDigest string) error {
	if name != "" && name != c.cfg.Federation {
		return fmt.Errorf("%w: %q, not %q", ErrFederationMismatch, c.cfg.Federation, name)
	}
	r, err := c.submit(ctx, op{Kind: opCreateFed, Name: c.cfg.Federation, Type: fomDigest})
	if err != nil {
		return err
	}
	return errorFor(r.Code)
}

// DestroyFederation destroys the federation execution: ErrFederatesJoined
// while any federate is joined, ErrFederationNotFound when there is none.
// It blocks like CreateFederation.
func (c *Cluster) DestroyFederation(ctx context.Context) error {
	r, err := c.submit(ctx, op{Kind: opDestroyFed})
	if err != nil {
		return err
	}
	return errorFor(r.Code)
}

// JoinFederate joins this node's federate under federateName (empty: a
// name is generated from the type and handle; LocalFederate returns it)
// and returns its handle. The name and the handle are decided once in
// the register, so every member sees the same ones; a name in use is
// ErrNameInUse. On success the node's metadata carries the federate. One
// federate per node: a second join is ErrAlreadyJoined. It blocks like
// CreateFederation.
func (c *Cluster) JoinFederate(ctx context.Context, federateName, federateType string) (uint64, error) {
	// The metadata must be able to carry the federate afterwards.
	m := c.Meta()
	m.FederateName, m.FederateType, m.FederateHandle = federateName, federateType, ^uint64(0)
	if federateName == "" {
		m.FederateName = federateType + "-18446744073709551615'"
	}
	if _, err := encodeMeta(m, c.id.Inc); err != nil {
		return 0, err
	}
	r, err := c.submit(ctx, op{Kind: opJoinFed, Name: federateName, Type: federateType})
	if err != nil {
		return 0, err
	}
	if err := errorFor(r.Code); err != nil {
		return 0, err
	}
	_ = c.updateMeta(func(m *Meta) {
		m.FederateName, m.FederateType, m.FederateHandle = r.Name, federateType, r.Handle
	}, nil)
	return r.Handle, nil
}

// ResignFederate resigns this node's federate and frees its name
// (ErrNotJoined when none is joined). It blocks like CreateFederation.
func (c *Cluster) ResignFederate(ctx context.Context) error {
	r, err := c.submit(ctx, op{Kind: opResignFed})
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
	return federationInfo(c.view.fed).Federates
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
	err := c.barrier(ctx, func(f *fsm) {
		if f.Fed != nil {
			out = append(out, federationInfo(f.Fed))
		}
	})
	return out, err
}
