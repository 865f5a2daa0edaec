package bench

import (
	"github.com/rs/zerolog"

	"github.com/meshrti/meshrti/examples/demo"
	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/internal/cli"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/transport"
)

// A member says how a federate of a bench joins its federation: over
// gossip bound to a free loopback port, finding the others through
// seeds, on the data plane of transport (the default mode when empty)
// with multicast port mcastPort on iface (the default interface when
// empty), frames of frame bytes (the default when 0), the demo FOM; its
// federate type is "federate-node/" + role.
type member struct {
	federation, name, role  string
	seeds, transport, iface string
	mcastPort, frame        int
	create                  bool
}

// config builds the federate's configuration, as `federate-node node`
// builds one from its flags: the poll time and the step hold from the
// environment ($MESHRTI_POLL, $MESHRTI_STEP_HOLD), no log.
func (m member) config() (peer.Config, error) {
	cfg := peer.Config{
		Federation: m.federation, FederateName: m.name, FederateType: "federate-node/" + m.role,
		MaxFrame: m.frame, Create: m.create,
		Multicast: transport.UDPConfig{Port: m.mcastPort, Interface: m.iface},
		Logger:    zerolog.Nop(),
	}
	cfg.Multicast.PollFor = cli.PollFor(0)
	cfg.StepHold = cli.StepHoldFor(0)
	if err := cli.JoinNet(&cfg, "127.0.0.1:0", m.seeds, "", m.transport, ""); err != nil {
		return cfg, err
	}
	doc, err := fomxml.ParseBytes("demo.xml", demo.FOM)
	if err != nil {
		return cfg, err
	}
	cfg.FOMModules = []*fomxml.Document{doc}
	return cfg, nil
}
