package peer

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/meshrti/meshrti/gossip"
)

// gossipControl is the ControlPlane over meshrti's gossip cluster: one
// memberlist member per federate, agreement through its register.
type gossipControl struct {
	c      *gossip.Cluster
	events *memberPump
	wg     sync.WaitGroup // the event reader
	once   sync.Once
}

// startGossip starts the federate's gossip member for cfg.
func startGossip(ctx context.Context, cfg *Config) (ControlPlane, error) {
	profile := gossip.ProfileLocal
	if cfg.Gossip.Profile == "lan" {
		profile = gossip.ProfileLAN
	}
	c, err := gossip.Start(ctx, gossip.Config{
		Federation: cfg.Federation,
		BindAddr:   cfg.Gossip.BindAddr,
		BindPort:   cfg.Gossip.BindPort,
		Seeds:      cfg.Gossip.Seeds,
		Key:        cfg.Key,
		Profile:    profile,
		Logger:     cfg.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: control plane: %w", ErrConnectionFailed, err)
	}
	g := &gossipControl{c: c, events: newMemberPump()}
	g.wg.Add(1)
	go g.read()
	return g, nil
}

// read translates the cluster's events into membership events until the
// cluster closes its event channel.
func (g *gossipControl) read() {
	defer g.wg.Done()
	for ev := range g.c.Events() {
		if me, ok := translate(ev); ok {
			g.events.push(me)
		}
	}
}

func translate(ev gossip.Event) (MemberEvent, bool) {
	m := Member{Handle: FederateHandle(ev.Federate.Handle), Name: ev.Federate.Name, Type: ev.Federate.Type}
	switch ev.Kind {
	case gossip.EventFederateJoined:
		return MemberEvent{Kind: MemberJoined, Member: m}, m.Handle != 0
	case gossip.EventFederateResigned:
		if ev.Lost {
			return MemberEvent{Kind: MemberLost, Member: m}, m.Handle != 0
		}
		return MemberEvent{Kind: MemberResigned, Member: m}, m.Handle != 0
	case gossip.EventFailed:
		// Failure detection is faster than the register's removal; the
		// federate is lost as soon as its node is declared dead.
		return MemberEvent{Kind: MemberLost, Member: m}, m.Handle != 0
	}
	return MemberEvent{}, false
}

func gossipError(err error) error {
	switch {
	case errors.Is(err, gossip.ErrFederationExists):
		return fmt.Errorf("%w: %w", ErrFederationExecutionAlreadyExists, err)
	case errors.Is(err, gossip.ErrFederationNotFound):
		return fmt.Errorf("%w: %w", ErrFederationExecutionDoesNotExist, err)
	case errors.Is(err, gossip.ErrFederatesJoined):
		return fmt.Errorf("%w: %w", ErrFederatesCurrentlyJoined, err)
	case errors.Is(err, gossip.ErrNameInUse):
		return fmt.Errorf("%w: %w", ErrFederateNameAlreadyInUse, err)
	case errors.Is(err, gossip.ErrAlreadyJoined):
		return fmt.Errorf("%w: %w", ErrFederateAlreadyExecutionMember, err)
	case errors.Is(err, gossip.ErrNotJoined):
		return fmt.Errorf("%w: %w", ErrFederateNotExecutionMember, err)
	case errors.Is(err, gossip.ErrClosed):
		return fmt.Errorf("%w: %w", ErrNotConnected, err)
	}
	return fmt.Errorf("%w: %w", ErrRTIinternalError, err)
}

func (g *gossipControl) CreateFederation(ctx context.Context) error {
	if err := g.c.CreateFederation(ctx, "", ""); err != nil {
		return gossipError(err)
	}
	return nil
}

func (g *gossipControl) FederationExists(ctx context.Context) (bool, error) {
	list, err := g.c.ListFederations(ctx)
	if err != nil {
		return false, gossipError(err)
	}
	return len(list) > 0, nil
}

func (g *gossipControl) DestroyFederation(ctx context.Context) error {
	if err := g.c.DestroyFederation(ctx); err != nil {
		return gossipError(err)
	}
	return nil
}

func (g *gossipControl) ListFederations(ctx context.Context) ([]string, error) {
	list, err := g.c.ListFederations(ctx)
	if err != nil {
		return nil, gossipError(err)
	}
	var out []string
	for _, f := range list {
		out = append(out, f.Name)
	}
	return out, nil
}

func (g *gossipControl) JoinFederate(ctx context.Context, name, typ string) (FederateHandle, string, error) {
	h, err := g.c.JoinFederate(ctx, name, typ)
	if err != nil {
		return 0, "", gossipError(err)
	}
	if fi, ok := g.c.LocalFederate(); ok {
		name = fi.Name
	}
	return FederateHandle(h), name, nil
}

func (g *gossipControl) ResignFederate(ctx context.Context) error {
	if err := g.c.ResignFederate(ctx); err != nil {
		return gossipError(err)
	}
	return nil
}

func (g *gossipControl) Acquire(ctx context.Context, key string) (bool, error) {
	_, ok, err := g.c.Acquire(ctx, key, nil)
	if err != nil {
		return false, gossipError(err)
	}
	return ok, nil
}

func (g *gossipControl) Members() []Member {
	var out []Member
	for _, f := range g.c.Federates() {
		out = append(out, Member{Handle: FederateHandle(f.Handle), Name: f.Name, Type: f.Type})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Handle < out[j].Handle })
	return out
}

func (g *gossipControl) Events() <-chan MemberEvent { return g.events.out }

func (g *gossipControl) Close() error {
	var err error
	g.once.Do(func() {
		err = g.c.Close() // closes the cluster's events: read ends
		g.wg.Wait()
		g.events.stop()
	})
	return err
}

// addr returns the gossip member's address.
func (g *gossipControl) addr() string { return g.c.LocalNode().Addr }

// GossipAddr returns the host:port of the federate's gossip member, for
// other federates to use as a seed; false when the federate does not use
// the gossip control plane.
func (f *Federate) GossipAddr() (string, bool) {
	if g, ok := f.ctl.(*gossipControl); ok {
		return g.addr(), true
	}
	return "", false
}
