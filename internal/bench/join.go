package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/meshrti/meshrti/examples/demo"
	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/transport"
)

// dataPlane sets cfg's transport mode and advertised address.
func dataPlane(cfg *peer.Config, mode, advertise string) error {
	m, err := peer.ParseTransportMode(mode)
	if err != nil {
		return err
	}
	cfg.TransportMode, cfg.Advertise = m, advertise
	return nil
}

// pollEnv names the environment variable that sets -poll when the flag
// is not given, also for the processes a bench starts.
const pollEnv = "MESHRTI_POLL"

// pollFor is the data plane's poll time (transport.UDPConfig.PollFor):
// poll if set, else $MESHRTI_POLL, else 0.
func pollFor(poll time.Duration) time.Duration { return flagOrEnv(poll, pollEnv) }

// flagOrEnv is d when a flag set it (not 0), else the duration in the
// environment variable env, else 0.
func flagOrEnv(d time.Duration, env string) time.Duration {
	if d != 0 {
		return d
	}
	d, err := time.ParseDuration(os.Getenv(env))
	if err != nil {
		return 0
	}
	return d
}

// stepHoldEnv names the environment variable that sets -step-hold when
// the flag is not given, also for the processes a bench starts.
const stepHoldEnv = "MESHRTI_STEP_HOLD"

// stepHoldFor is peer.Config.StepHold: d if set, else $MESHRTI_STEP_HOLD,
// else 0 (the default bound).
func stepHoldFor(d time.Duration) time.Duration { return flagOrEnv(d, stepHoldEnv) }

// printGossip prints the line "gossip ADDR" with fed's gossip address:
// tests, scripts and a bench's parent process read it to find the seed.
func printGossip(w io.Writer, fed *peer.Federate) {
	if a, ok := fed.GossipAddr(); ok {
		fmt.Fprintf(w, "gossip %s\n", a)
	}
}

// drainFor reads and drops fed's events for d (or until ctx ends), so
// that repairs of the last messages can still be served before a
// resign.
func drainFor(ctx context.Context, fed *peer.Federate, d time.Duration) {
	lctx, lcancel := context.WithTimeout(ctx, d)
	defer lcancel()
	for {
		if _, err := fed.Next(lctx); err != nil {
			return
		}
	}
}

// joinNet sets in cfg the gossip member (bound to gossip, host:port,
// finding the others through seeds, comma-separated), the federation
// key and the data plane (mode and advertise, as dataPlane takes them).
func joinNet(cfg *peer.Config, gossip, seeds, key, mode, advertise string) error {
	host, port, err := splitHostPort(gossip)
	if err != nil {
		return err
	}
	cfg.Gossip = peer.GossipConfig{BindAddr: host, BindPort: port}
	if seeds != "" {
		cfg.Gossip.Seeds = strings.Split(seeds, ",")
	}
	if key != "" {
		cfg.Key = []byte(key)
	}
	return dataPlane(cfg, mode, advertise)
}

func splitHostPort(s string) (string, int, error) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return "", 0, fmt.Errorf("address %q has no port", s)
	}
	var port int
	if _, err := fmt.Sscanf(s[i+1:], "%d", &port); err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("address %q: bad port", s)
	}
	return s[:i], port, nil
}

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
	cfg.Multicast.PollFor = pollFor(0)
	cfg.StepHold = stepHoldFor(0)
	if err := joinNet(&cfg, "127.0.0.1:0", m.seeds, "", m.transport, ""); err != nil {
		return cfg, err
	}
	doc, err := fomxml.ParseBytes("demo.xml", demo.FOM)
	if err != nil {
		return cfg, err
	}
	cfg.FOMModules = []*fomxml.Document{doc}
	return cfg, nil
}
