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

	"github.com/meshrti/meshrti/gossip"
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
// cfg.Federation with cfg's FOM modules, time representation, DDM cells
// (Config.Regions, which every joiner adopts) and MIM (the
// standard one unless cfg names one; see CreateFederationExecutionWithMIM):
// ErrFederationExecutionAlreadyExists when it exists. The FOM modules of
// cfg must merge (ErrCouldNotOpenFDD, ErrReadingFDD, ErrInconsistentFDD
// otherwise). The control plane it opens (Config.Control
// included) is closed before it returns.
func CreateFederationExecution(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	docs, mimDoc, err := cfg.loadDocs()
	if err != nil {
		return err
	}
	if _, err := cfg.checkDocs(mimDoc, docs); err != nil {
		return err
	}
	modules, err := modulesOf(docs)
	if err != nil {
		return err
	}
	mim, err := mimModule(mimDoc)
	if err != nil {
		return err
	}
	ctl, err := connect(ctx, &cfg)
	if err != nil {
		return err
	}
	defer ctl.Close()
	cells := cfg.Regions.Normalized()
	return ctl.CreateFederation(ctx, FederationSpec{TimeRepresentation: string(cfg.timeKind()), Modules: modules, MIM: mim, Regions: &cells, DataPlane: string(cfg.transportMode())})
}

// CreateFederationExecutionWithMIM (§4.5) is CreateFederationExecution
// with the MIM of cfg.MIMFile or cfg.MIMModule in place of the standard
// MIM. Errors, besides CreateFederationExecution's:
// ErrCouldNotOpenMIM (no MIM given, or its file cannot be read),
// ErrErrorReadingMIM (it does not parse, or lacks a class, attribute,
// parameter or transportation type of the standard MIM),
// ErrDesignatorIsHLAstandardMIM (it designates the standard MIM).
func CreateFederationExecutionWithMIM(ctx context.Context, cfg Config) error {
	if cfg.MIMFile == "" && cfg.MIMModule == nil {
		return fmt.Errorf("%w: no MIM given (Config.MIMFile or Config.MIMModule)", ErrCouldNotOpenMIM)
	}
	return CreateFederationExecution(ctx, cfg)
}

// DestroyFederationExecution (§4.6) destroys cfg.Federation:
// ErrFederatesCurrentlyJoined while any federate is joined,
// ErrFederationExecutionDoesNotExist when there is none. The control
// plane it opens is closed before it returns.
//
// With gossip, a federation execution lives in the cluster its federates
// form: when no member answers at the seeds, or every member leaves
// before this node reads the agreement log, or every acceptor of the log
// is gone before the destruction is decided (the last federates resigned
// and left meanwhile), the execution no longer exists, and that is the
// answer, at once, rather than a connection failure after a timeout.
func DestroyFederationExecution(ctx context.Context, cfg Config) error {
	ctl, err := connect(ctx, &cfg)
	if err != nil {
		if errors.Is(err, gossip.ErrClusterGone) || errors.Is(err, gossip.ErrSeedsUnreachable) {
			return fmt.Errorf("%w: %q: %s", ErrFederationExecutionDoesNotExist, cfg.Federation, err.Error())
		}
		return err
	}
	defer ctl.Close()
	return ctl.DestroyFederation(ctx)
}

// ListFederationExecutions (§4.7) lists the federation executions visible
// through cfg's control plane, with their time representations, sorted
// by name (what reportFederationExecutions, §4.8, carries). With gossip,
// a cluster serves one execution and there is no central directory: the
// list holds cfg.Federation when it exists in the cluster reached through
// cfg.Gossip.Seeds. A member asks with the method
// Federate.ListFederationExecutions.
func ListFederationExecutions(ctx context.Context, cfg Config) ([]FederationExecutionInformation, error) {
	ctl, list, err := connectAndList(ctx, &cfg, "list federation executions")
	if err != nil {
		return nil, err
	}
	ctl.Close()
	return list, nil
}

// connectAndList opens cfg's control plane and lists the federation
// executions it knows; what names the service in an error. On success
// the caller closes the control plane; on an error it is closed.
func connectAndList(ctx context.Context, cfg *Config, what string) (ControlPlane, []FederationExecutionInformation, error) {
	ctl, err := connect(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	list, err := ctl.ListFederations(ctx)
	if err != nil {
		ctl.Close()
		return nil, nil, fmt.Errorf("peer: %s: %w", what, err)
	}
	return ctl, list, nil
}

// ListFederationExecutionMembers (the HLA 4 service; 1516e has none)
// returns the federates joined to cfg.Federation, by handle, name and
// type: ErrFederationExecutionDoesNotExist when it does not exist. With
// gossip the cluster reached through cfg.Gossip.Seeds is asked; a node
// that has just joined it may not know every member yet. The control
// plane it opens is closed before it returns.
func ListFederationExecutionMembers(ctx context.Context, cfg Config) ([]Member, error) {
	ctl, list, err := connectAndList(ctx, &cfg, "list federation execution members")
	if err != nil {
		return nil, err
	}
	defer ctl.Close()
	if !slices.ContainsFunc(list, func(i FederationExecutionInformation) bool { return i.FederationExecutionName == cfg.Federation }) {
		return nil, fmt.Errorf("%w: %q", ErrFederationExecutionDoesNotExist, cfg.Federation)
	}
	return ctl.Members(), nil
}

// ListFederationExecutions (§4.7), asked by a member:
// ReportFederationExecutions answers, in order with the federate's other
// events, with what the package-level ListFederationExecutions returns
// through this federate's control plane. It blocks until the control
// plane answers or ctx ends; when the control plane cannot answer, it
// returns the error and no report follows.
func (f *Federate) ListFederationExecutions(ctx context.Context) (err error) {
	defer f.reported("listFederationExecutions", &err, nil)
	if f.closed.Load() {
		return f.closedErr()
	}
	list, err := f.ctl.ListFederations(ctx)
	if err != nil {
		return fmt.Errorf("peer: list federation executions: %w", err)
	}
	return f.callAny(func() error { return f.core.ReportFederationExecutions(list) })
}

// ResignFederationExecution (§4.10) leaves the federation: it applies
// action to this federate's objects (deleting those it may delete, for
// the actions that delete; giving up its attributes, for the actions
// that divest: the instances then stay in the federation, unowned),
// tells the others, frees the federate's name, and closes the federate.
// Errors: ErrInvalidResignAction; ErrFederateOwnsAttributes when the
// action would leave attributes owned (nothing is done then). After it,
// services return ErrFederateNotExecutionMember (wrapping ErrClosed).
func (f *Federate) ResignFederationExecution(ctx context.Context, action ResignAction) (err error) {
	defer f.reported("resignFederationExecution", &err, func() ([]string, []string) { return texts(action), nil })
	err = f.callAny(func() error {
		if err := f.core.Resign(action); err != nil {
			return err
		}
		f.why = ErrFederateNotExecutionMember
		f.sender.sendAtOnce() // the last messages leave as the call ends, with what the step held
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
