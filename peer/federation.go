package peer

// Federation management (IEEE 1516.1-2010 §4): creating, destroying and
// listing federation executions, joining (Join, in federate.go) and
// resigning.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// connect opens the control plane cfg describes, without joining: what the
// standard calls a connected federate that is not an execution member.
func connect(ctx context.Context, cfg *Config) (ControlPlane, error) {
	if cfg.Federation == "" {
		return nil, errors.New("peer: Config.Federation is empty")
	}
	if cfg.Control != nil {
		return cfg.Control, nil
	}
	return startGossip(ctx, cfg)
}

// CreateFederationExecution (§4.5) creates the federation execution
// cfg.Federation with cfg's FOM modules and time representation:
// ErrFederationExecutionAlreadyExists when it exists. The FOM modules of
// cfg must merge (ErrCouldNotOpenFDD, ErrReadingFDD, ErrInconsistentFDD
// otherwise). The control plane it opens (Config.Control
// included) is closed before it returns.
func CreateFederationExecution(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	docs, err := cfg.loadDocs()
	if err != nil {
		return err
	}
	modules, err := modulesOf(docs)
	if err != nil {
		return err
	}
	ctl, err := connect(ctx, &cfg)
	if err != nil {
		return err
	}
	defer ctl.Close()
	return ctl.CreateFederation(ctx, FederationSpec{TimeRepresentation: string(cfg.timeKind()), Modules: modules})
}

// DestroyFederationExecution (§4.6) destroys cfg.Federation:
// ErrFederatesCurrentlyJoined while any federate is joined,
// ErrFederationExecutionDoesNotExist when there is none. The control
// plane it opens is closed before it returns.
func DestroyFederationExecution(ctx context.Context, cfg Config) error {
	ctl, err := connect(ctx, &cfg)
	if err != nil {
		return err
	}
	defer ctl.Close()
	return ctl.DestroyFederation(ctx)
}

// ListFederationExecutions (§4.7) names the federation executions visible
// through cfg's control plane. With gossip, a cluster serves one execution
// and there is no central directory: the list holds cfg.Federation when
// it exists in the cluster reached through cfg.Gossip.Seeds.
func ListFederationExecutions(ctx context.Context, cfg Config) ([]string, error) {
	ctl, err := connect(ctx, &cfg)
	if err != nil {
		return nil, err
	}
	defer ctl.Close()
	list, err := ctl.ListFederations(ctx)
	if err != nil {
		return nil, fmt.Errorf("peer: list federation executions: %w", err)
	}
	return list, nil
}

// ListFederationExecutionMembers (the HLA 4 service; 1516e has none)
// returns the federates joined to cfg.Federation, by handle, name and
// type: ErrFederationExecutionDoesNotExist when it does not exist. With
// gossip the cluster reached through cfg.Gossip.Seeds is asked; a node
// that has just joined it may not know every member yet. The control
// plane it opens is closed before it returns.
func ListFederationExecutionMembers(ctx context.Context, cfg Config) ([]Member, error) {
	ctl, err := connect(ctx, &cfg)
	if err != nil {
		return nil, err
	}
	defer ctl.Close()
	list, err := ctl.ListFederations(ctx)
	if err != nil {
		return nil, fmt.Errorf("peer: list federation execution members: %w", err)
	}
	if !slices.Contains(list, cfg.Federation) {
		return nil, fmt.Errorf("%w: %q", ErrFederationExecutionDoesNotExist, cfg.Federation)
	}
	return ctl.Members(), nil
}

// ResignFederationExecution (§4.10) leaves the federation: it applies
// action to this federate's objects (deleting those it may delete, for
// the actions that delete; giving up its attributes, for the actions
// that divest: the instances then stay in the federation, unowned),
// tells the others, frees the federate's name, and closes the federate.
// Errors: ErrInvalidResignAction; ErrFederateOwnsAttributes when the
// action would leave attributes owned (nothing is done then). After it,
// services return ErrFederateNotExecutionMember (wrapping ErrClosed).
func (f *Federate) ResignFederationExecution(ctx context.Context, action ResignAction) error {
	err := f.callAny(func() error {
		if err := f.core.Resign(action); err != nil {
			return err
		}
		f.why = ErrFederateNotExecutionMember
		return nil
	})
	if err != nil {
		return err
	}
	// Give the reliable layer a moment to get the last messages out and
	// repaired; the control plane's resign reaches everyone regardless.
	f.linger(ctx)
	if err := f.ctl.ResignFederate(ctx, action); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// linger waits a few heartbeat rounds (bounded by ctx) so that receivers
// can ask for what they missed of the federate's last messages.
func (f *Federate) linger(ctx context.Context) {
	if f.cfg.Manual {
		return // nothing would tick while it waited
	}
	t := f.cfg.tick() * 20
	select {
	case <-ctx.Done():
	case <-f.done:
	case <-time.After(t):
	}
}
