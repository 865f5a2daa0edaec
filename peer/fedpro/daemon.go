package fedpro

import (
	"github.com/meshrti/meshrti/gossip"
	"github.com/meshrti/meshrti/peer"
)

// Gossip is the gossip address a host's federates share: one Mux that
// carries every hosted federate's gossip (one UDP and TCP port for the
// host), and, on the founding host, the Anchors that found the
// federations (docs/agreement.md, "Daemons: who founds").
type Gossip struct {
	Mux     *gossip.Mux
	Anchors *gossip.Anchors // nil unless Founder
	Founder bool            // this host founds the federations
}

// StartGossip opens the gossip address base.Gossip binds for base's
// federates and points base at it: the hosts' seeds become every hosted
// federate's seeds, with this host's own address among them (it reaches
// its other federates). The host is the founding one when it is the
// first seed, or when there are none (alone). Close it after the Host.
func StartGossip(base *peer.Config) (*Gossip, error) {
	g := &base.Gossip
	mux, err := gossip.NewMux(gossip.MuxConfig{BindAddr: g.BindAddr, BindPort: g.BindPort, Logger: base.Logger})
	if err != nil {
		return nil, err
	}
	seeds := g.Seeds
	gs := &Gossip{Mux: mux, Founder: len(seeds) == 0 || mux.IsSelf(seeds[0])}
	if gs.Founder {
		gs.Anchors = gossip.NewAnchors(gossip.Config{Mux: mux, Seeds: seeds, Key: base.Key,
			Profile: gossip.Profile(g.Profile), LostGrace: g.LostGrace, Logger: base.Logger})
	}
	g.Mux = mux
	self := false
	for _, s := range seeds {
		self = self || mux.IsSelf(s)
	}
	if !self {
		g.Seeds = append([]string{mux.Addr()}, seeds...)
	}
	return gs, nil
}

// Federations lists the federations anchored here (on the founding
// host: every federation of the hosts'), for Config.Federations
// (listFederationExecutions).
func (g *Gossip) Federations() []peer.FederationExecutionInformation {
	if g.Anchors == nil {
		return nil
	}
	var out []peer.FederationExecutionInformation
	for _, fi := range g.Anchors.Executions() {
		out = append(out, peer.FederationExecutionInformation{FederationExecutionName: fi.Name, LogicalTimeImplementationName: fi.TimeRepresentation})
	}
	return out
}

// Close closes the anchors (they leave their federations), then the
// gossip address.
func (g *Gossip) Close() {
	if g.Anchors != nil {
		g.Anchors.Close()
	}
	g.Mux.Close()
}
