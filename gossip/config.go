package gossip

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log"
	"math/rand/v2"
	"net"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/rs/zerolog"
)

// Profile selects a set of timings.
type Profile string

const (
	// ProfileLocal suits one host and tests: probes every 200 ms, a dead
	// member is declared within about 2 s. It is the default.
	ProfileLocal Profile = "local"
	// ProfileLAN uses memberlist's DefaultLANConfig timings: probes every
	// second, a dead member is declared within about 5 to 10 s.
	ProfileLAN Profile = "lan"
	// ProfileWAN suits hosts linked across sites (round trips up to a few
	// hundred milliseconds, occasional loss bursts): probes every 2 s
	// with 1 s to answer, a dead member is declared within about 15 to
	// 30 s, agreement rounds allow 2 s; see docs/gossip.md.
	ProfileWAN Profile = "wan"
)

// DefaultMaxAcceptors is the default size limit of the acceptor roster.
const DefaultMaxAcceptors = 5

// Config configures a Cluster. Zero fields mean the documented default.
// Start does not modify the Config it is given.
type Config struct {
	// Federation is the federation execution's name. It becomes the
	// memberlist Label, so clusters of different federations that share
	// addresses and ports ignore each other. Required; at most 255 bytes.
	Federation string

	// NodeName names this node in the cluster; it must be unique among
	// the members. Default: "node-" and 8 random hex digits.
	NodeName string

	// BindAddr is the address memberlist listens on. Default 127.0.0.1:
	// nothing listens on or sends to another address unless configured.
	BindAddr string
	// BindPort is the TCP and UDP port; 0 picks a free one (read it back
	// from LocalNode().Addr).
	BindPort int
	// AdvertiseAddr is the address other members use to reach this node.
	// Default: BindAddr (memberlist picks one when BindAddr is 0.0.0.0).
	AdvertiseAddr string

	// Mux, when set, carries this node's gossip on a shared address
	// (one per daemon; see Mux); BindAddr, BindPort and AdvertiseAddr
	// are then the Mux's, and a seed may name the Mux's own address (it
	// reaches the Mux's other nodes). Nil: the node gets a Mux of its
	// own on BindAddr:BindPort, closed with it.
	Mux *Mux

	// Seeds are host:port addresses of members to join through. None
	// means this node is the first one: it founds the federation's
	// agreement log. Exactly one node of a federation starts without
	// seeds; see docs/agreement.md. A host may be a DNS name: every
	// address it resolves to is a seed (a Kubernetes headless service
	// resolves to each ready pod), this node's own address excepted.
	Seeds []string
	// LookupHost resolves the DNS names of Seeds; nil means
	// net.DefaultResolver.LookupHost. Tests set it.
	LookupHost func(ctx context.Context, host string) ([]string, error)

	// Key, when set, is the federation key. SHA-256 of it (with a domain
	// prefix) becomes the memberlist keyring: gossip is encrypted and
	// authenticated, and a node with another key cannot join.
	Key []byte

	// Meta is this node's metadata, visible to every member. Its msgpack
	// encoding must fit memberlist's 512-byte limit. JoinFederate and
	// ResignFederate fill in the federate fields.
	Meta Meta

	// Profile selects the timings: ProfileLocal (default), ProfileLAN
	// or ProfileWAN.
	Profile Profile

	// MaxAcceptors bounds the acceptor roster (default 5). Only the
	// founder's value counts: it is recorded in the log.
	MaxAcceptors int

	// Timeout bounds each agreement operation that has no earlier
	// context deadline. Default 5 s (local) or 15 s (lan).
	Timeout time.Duration

	// LostGrace is how long a member this node's failure detector
	// declared dead may refute its death before this node proposes that
	// the federation remove it (its federate lost, its keys and acceptor
	// seat released); members of higher rank wait a stagger more. Until
	// the removal is decided, a suspicion is this node's alone and
	// changes nothing a federate sees. Raise it where hosts starve for
	// CPU and live members are declared dead. Default 1 s (local) or 2 s
	// (lan).
	LostGrace time.Duration

	// Heard, when set, tells when this node last heard from the member
	// named by other means than gossip (the peer layer: a data-plane
	// frame of the member's federate; zero: never). A member declared
	// dead but heard within LostGrace is alive as far as a removal is
	// concerned: this node waits, and proposes the removal only once the
	// member is silent there too. It changes only what this node
	// proposes, never what is decided. It is called from the Cluster's
	// own goroutine and must not block or call the Cluster.
	Heard func(node string) time.Time

	// Logger receives diagnostics, memberlist's included. The zero value
	// logs nothing.
	Logger zerolog.Logger

	// Rand, when set, is the source of every random choice this package
	// makes: the default NodeName, the identity of the agreement log a
	// founder creates, the agreement's backoffs after a failed round and
	// the pacing of roster growth. Start draws from it, in a fixed order,
	// while it runs and never afterwards, so the same seed gives the same
	// choices, and one Rand may seed several Clusters started one after
	// another. Nil: seeded from crypto/rand, which keeps default names
	// and log identities apart across processes; with Rand, nodes that
	// share a seed choose the same ones, so give each node its own.
	//
	// A seed does not replay a whole run. memberlist picks probe and
	// gossip targets and its timer staggers from the global math/rand,
	// which it seeds itself in its init; this package cannot change
	// that. Timers run on the clock, and the process incarnation stays
	// the start time in nanoseconds: deriving it from a seed would let a
	// restarted process reuse its predecessor's incarnation, an acceptor
	// that forgot its promises (see docs/agreement.md).
	Rand *rand.Rand
}

// Validate reports the first problem with c.
func (c *Config) Validate() error {
	switch {
	case c.Federation == "":
		return errors.New("gossip: Config.Federation is empty")
	case len(c.Federation) > memberlist.LabelMaxSize:
		return fmt.Errorf("gossip: Config.Federation is longer than %d bytes", memberlist.LabelMaxSize)
	case c.BindPort < 0 || c.BindPort > 65535:
		return fmt.Errorf("gossip: Config.BindPort %d out of range", c.BindPort)
	case c.MaxAcceptors < 0:
		return errors.New("gossip: Config.MaxAcceptors is negative")
	case c.Timeout < 0:
		return errors.New("gossip: Config.Timeout is negative")
	case c.LostGrace < 0:
		return errors.New("gossip: Config.LostGrace is negative")
	}
	switch c.Profile {
	case "", ProfileLocal, ProfileLAN, ProfileWAN:
	default:
		return fmt.Errorf("gossip: unknown profile %q (want %q, %q or %q)", c.Profile, ProfileLocal, ProfileLAN, ProfileWAN)
	}
	for _, a := range []string{c.BindAddr, c.AdvertiseAddr} {
		if a != "" && net.ParseIP(a) == nil {
			return fmt.Errorf("gossip: %q is not an IP address", a)
		}
	}
	for _, s := range c.Seeds {
		if _, _, err := net.SplitHostPort(s); err != nil {
			return fmt.Errorf("gossip: seed %q: %w", s, err)
		}
	}
	if _, err := encodeMeta(c.Meta, 0); err != nil {
		return err
	}
	return nil
}

// timings are the profile-dependent durations of the agreement layer.
type timings struct {
	tick         time.Duration // replica tick
	roundTimeout int           // ticks
	maxBackoff   int           // ticks
	syncTimeout  int           // ticks
	recoverAfter int           // ticks
	opTimeout    time.Duration // default bound of one agreement operation
	syncWait     time.Duration // Start waits this long for the log from seeds
	leaveTimeout time.Duration // Close's release-and-leave budget
	metaTimeout  time.Duration // wait for a metadata broadcast
	housekeep    time.Duration // loss cleanup and roster growth period
	stagger      time.Duration // per-rank delay before cleaning up a lost node
	unknownGrace time.Duration // a holder memberlist never heard of counts as lost after this
	deadGrace    time.Duration // a roster all dead (not left) fails operations after this
	lostGrace    time.Duration // a member declared dead counts as lost after this (see housekeep)
	reconnect    time.Duration // a member declared dead is joined again this often (see reconnect)
	reconnectFor time.Duration // ... for this long after it was declared dead
}

func profileTimings(p Profile) timings {
	switch p {
	case ProfileWAN:
		// Agreement rounds of 2 s (20 ticks of 100 ms) leave room for two
		// round trips of 500 ms and a retransmission; operations and the
		// first sync get 30 s; a member memberlist declared dead gets
		// 5 s to refute before its removal is proposed.
		return timings{
			tick: 100 * time.Millisecond, roundTimeout: 20, maxBackoff: 10, syncTimeout: 20, recoverAfter: 40,
			opTimeout: 30 * time.Second, syncWait: 30 * time.Second, leaveTimeout: 10 * time.Second,
			metaTimeout: 2 * time.Second, housekeep: time.Second, stagger: 2 * time.Second,
			unknownGrace: 2 * time.Minute, deadGrace: 15 * time.Second, lostGrace: 5 * time.Second,
		}
	case ProfileLAN:
		return timings{
			tick: 50 * time.Millisecond, roundTimeout: 20, maxBackoff: 10, syncTimeout: 20, recoverAfter: 40,
			opTimeout: 15 * time.Second, syncWait: 15 * time.Second, leaveTimeout: 5 * time.Second,
			metaTimeout: time.Second, housekeep: 500 * time.Millisecond, stagger: time.Second,
			unknownGrace: time.Minute, deadGrace: 5 * time.Second, lostGrace: 2 * time.Second,
			reconnect: 5 * time.Second, reconnectFor: 10 * time.Minute,
		}
	}
	return timings{
		tick: 20 * time.Millisecond, roundTimeout: 15, maxBackoff: 8, syncTimeout: 15, recoverAfter: 25,
		opTimeout: 5 * time.Second, syncWait: 5 * time.Second, leaveTimeout: time.Second,
		metaTimeout: 200 * time.Millisecond, housekeep: 100 * time.Millisecond, stagger: 200 * time.Millisecond,
		unknownGrace: 10 * time.Second, deadGrace: time.Second, lostGrace: time.Second,
		reconnect: time.Second, reconnectFor: 2 * time.Minute,
	}
}

// memberlistConfig builds memberlist's configuration for this node.
func (c *Cluster) memberlistConfig() (*memberlist.Config, error) {
	mc := memberlist.DefaultLANConfig()
	switch c.cfg.Profile {
	case ProfileLAN:
	case ProfileWAN:
		// Between memberlist's LAN timings (probe 1 s, answer 500 ms) and
		// its WAN ones (probe 5 s, answer 3 s, push-pull 60 s): a probe
		// every 2 s answered within 1 s covers round trips of a few
		// hundred milliseconds; suspicion lasts SuspicionMult(5) x
		// log(n) probe intervals, so a dead member is declared within
		// 15 to 30 s at 3 to 30 members, a dead federate lost within
		// about 40 s, where memberlist's WAN profile takes a minute or
		// more. Push-pull every 30 s repairs what gossip missed.
		mc.TCPTimeout = 10 * time.Second
		mc.IndirectChecks = 3
		mc.RetransmitMult = 4
		mc.SuspicionMult = 5
		mc.SuspicionMaxTimeoutMult = 4
		mc.PushPullInterval = 30 * time.Second
		mc.ProbeInterval = 2 * time.Second
		mc.ProbeTimeout = time.Second
		mc.GossipInterval = 200 * time.Millisecond
		mc.GossipNodes = 4
		mc.GossipToTheDeadTime = 30 * time.Second
		mc.DeadNodeReclaimTime = 30 * time.Second
	default:
		mc.TCPTimeout = time.Second
		mc.IndirectChecks = 2
		mc.RetransmitMult = 3
		mc.SuspicionMult = 3
		mc.SuspicionMaxTimeoutMult = 3
		mc.PushPullInterval = 2 * time.Second
		mc.ProbeInterval = 200 * time.Millisecond
		mc.ProbeTimeout = 100 * time.Millisecond
		mc.AwarenessMaxMultiplier = 8
		mc.GossipInterval = 50 * time.Millisecond
		mc.GossipNodes = 3
		mc.GossipToTheDeadTime = 2 * time.Second
		mc.DeadNodeReclaimTime = 2 * time.Second
	}
	// memberlist's LZW runs at about 30 MB/s and expands what is
	// compressed already (FOM modules usually are): a 200 KB module took
	// 6 ms per message with it, 0.5 ms without. Receivers accept both, so
	// this does not change who can talk to whom.
	mc.EnableCompression = false
	mc.Name = c.cfg.NodeName
	mc.Label = c.cfg.Federation
	mc.BindAddr = c.cfg.BindAddr
	mc.BindPort = c.cfg.BindPort
	mc.AdvertiseAddr = c.cfg.AdvertiseAddr
	mc.AdvertisePort = c.cfg.BindPort
	mc.Transport = c.tr
	mc.Delegate = &delegate{c}
	mc.Merge = &mergeDelegate{c}
	mc.Alive = &mergeDelegate{c}
	mc.Events = &eventDelegate{c}
	if len(c.cfg.Key) > 0 {
		kr, err := memberlist.NewKeyring(nil, gossipKey(c.cfg.Key))
		if err != nil {
			return nil, fmt.Errorf("gossip: keyring: %w", err)
		}
		mc.Keyring = kr
		mc.GossipVerifyIncoming = true
		mc.GossipVerifyOutgoing = true
	}
	mc.Logger = log.New(memberlistLog{c.log}, "", 0)
	return mc, nil
}

// gossipKey derives the 32-byte memberlist key (AES-256) from the
// federation key. The prefix keeps it distinct from keys the data plane
// derives from the same secret.
func gossipKey(key []byte) []byte {
	h := sha256.New()
	h.Write([]byte("meshrti gossip keyring v1\x00"))
	h.Write(key)
	return h.Sum(nil)
}
