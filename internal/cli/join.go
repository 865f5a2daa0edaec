package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/meshrti/meshrti/peer"
)

// How a federate of this binary joins: the settings the join flags of
// node, monitor, record, replay and serve share, and the environment
// variables that stand for flags in the processes a bench starts.

// DataPlane sets cfg's transport mode and advertised address.
func DataPlane(cfg *peer.Config, mode, advertise string) error {
	m, err := peer.ParseTransportMode(mode)
	if err != nil {
		return err
	}
	cfg.TransportMode, cfg.Advertise = m, advertise
	return nil
}

// PollEnv names the environment variable that sets -poll when the flag
// is not given, also for the processes a bench starts.
const PollEnv = "MESHRTI_POLL"

// PollFor is the data plane's poll time (transport.UDPConfig.PollFor):
// poll if set, else $MESHRTI_POLL, else 0.
func PollFor(poll time.Duration) time.Duration { return FlagOrEnv(poll, PollEnv) }

// FlagOrEnv is d when a flag set it (not 0), else the duration in the
// environment variable env, else 0.
func FlagOrEnv(d time.Duration, env string) time.Duration {
	if d != 0 {
		return d
	}
	d, err := time.ParseDuration(os.Getenv(env))
	if err != nil {
		return 0
	}
	return d
}

// StepHoldEnv names the environment variable that sets -step-hold when
// the flag is not given, also for the processes a bench starts.
const StepHoldEnv = "MESHRTI_STEP_HOLD"

// StepHoldFor is peer.Config.StepHold: d if set, else $MESHRTI_STEP_HOLD,
// else 0 (the default bound).
func StepHoldFor(d time.Duration) time.Duration { return FlagOrEnv(d, StepHoldEnv) }

// PrintGossip prints the line "gossip ADDR" with fed's gossip address:
// tests, scripts and a bench's parent process read it to find the seed.
func PrintGossip(w io.Writer, fed *peer.Federate) {
	if a, ok := fed.GossipAddr(); ok {
		fmt.Fprintf(w, "gossip %s\n", a)
	}
}

// DrainFor reads and drops fed's events for d (or until ctx ends), so
// that repairs of the last messages can still be served before a
// resign.
func DrainFor(ctx context.Context, fed *peer.Federate, d time.Duration) {
	lctx, lcancel := context.WithTimeout(ctx, d)
	defer lcancel()
	for {
		if _, err := fed.Next(lctx); err != nil {
			return
		}
	}
}

// JoinNet sets in cfg the gossip member (bound to gossip, host:port,
// finding the others through seeds, comma-separated), the federation
// key and the data plane (mode and advertise, as DataPlane takes them).
func JoinNet(cfg *peer.Config, gossip, seeds, key, mode, advertise string) error {
	host, port, err := SplitHostPort(gossip)
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
	return DataPlane(cfg, mode, advertise)
}

// SplitHostPort splits a host:port address; the port must be a number
// from 0 to 65535.
func SplitHostPort(s string) (string, int, error) {
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
