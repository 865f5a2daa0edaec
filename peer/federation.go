package peer

import (
	"context"
	"errors"
	"fmt"
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
// cfg.Federation: ErrFederationExecutionAlreadyExists when it exists. The
// FOM modules of cfg must merge (ErrCouldNotOpenFDD, ErrReadingFDD,
// ErrInconsistentFDD otherwise). The control plane it opens (Config.Control
// included) is closed before it returns.
func CreateFederationExecution(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if _, err := cfg.loadFDD(); err != nil {
		return err
	}
	ctl, err := connect(ctx, &cfg)
	if err != nil {
		return err
	}
	defer ctl.Close()
	return ctl.CreateFederation(ctx)
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
