package reliable

import (
	"errors"
	"fmt"
	"github.com/meshrti/meshrti/peer/dgram"
	"math/rand/v2"
)

// Defaults for the zero fields of Config.
const (
	DefaultRetransmitBuffer = 4096
	DefaultReorderBuffer    = 8192
	DefaultHeartbeatTicks   = 10
	DefaultNakDelayTicks    = 2
	DefaultProbeTicks       = 1
	DefaultMaxFrame         = 1400
	DefaultMaxMessage       = 16 << 20
	DefaultWindow           = 8192
	DefaultWindowBytes      = 4 << 20
	DefaultRetransmitBytes  = 4 << 20
	DefaultAckTimeoutTicks  = 400

	// MinMaxFrame and MaxMaxFrame bound Config.MaxFrame.
	MinMaxFrame = 128
	MaxMaxFrame = 65000

	// MinKeyLen is the shortest accepted Config.Key.
	MinKeyLen = 16

	// heartbeatBackoff bounds the idle heartbeat interval:
	// HeartbeatTicks doubles after each idle heartbeat up to this factor.
	heartbeatBackoff = 8
	// quietBackoff bounds it instead once every receiver has
	// acknowledged everything (or the group has no flow control): a
	// heartbeat then only guards against a lost tail, which the first
	// few, sent at the shorter intervals, have all but ruled out. With a
	// thousand members idle heartbeats at 8× were most of the traffic.
	quietBackoff = 64
	// maxSuppressed bounds the NAK suppression entries per stream.
	maxSuppressed = 64
)

// NodeID identifies a sender: one federate node. It is stable across the
// node's restarts; Config.Incarnation tells the restarts apart.
type NodeID uint64

// Config configures an Endpoint. Zero fields mean the defaults. An
// Endpoint does not change its Config after New.
type Config struct {
	// Self is this node's id. Required (non-zero).
	Self NodeID
	// Incarnation numbers this run of the node; it must grow on every
	// restart so that receivers reset their streams from it and reject
	// frames from earlier runs.
	Incarnation uint64
	// Federation names the federation execution. Required. Frames carry
	// FederationID(Federation); frames of other federations are dropped.
	Federation string
	// Key, when set, seals every frame with AES-GCM (see Key) under key
	// id 0, with a per-sender replay window. Every member must use the
	// same key. At least MinKeyLen bytes. Ignored when Keys is set.
	Key []byte
	// Keys, when set, are the federation keys: Keys[0] seals outgoing
	// frames, and frames sealed with any of them are accepted. See
	// Endpoint.SetKeys for rotation.
	Keys []Key
	// Bundle holds sent messages in an open frame per group until Flush,
	// Tick, or the frame is full, so that many small messages share one
	// datagram. Without it every Send seals its frame at once.
	Bundle bool
	// MaxMessage is the largest message Send accepts and a receiver
	// reassembles; messages larger than one frame are fragmented. Default
	// DefaultMaxMessage.
	MaxMessage int
	// RetransmitBuffer is the number of reliable messages kept per group
	// for repair after every known receiver acknowledged them (history for
	// receivers that learn of the stream late). Default
	// DefaultRetransmitBuffer.
	RetransmitBuffer int
	// RetransmitBytes bounds that history in payload bytes. Default
	// DefaultRetransmitBytes.
	RetransmitBytes int
	// Window and WindowBytes bound the backlog of a group, in messages and
	// payload bytes, at which Blocked reports back-pressure (see flow.go).
	// Window also bounds the messages of one bundle. Defaults
	// DefaultWindow and DefaultWindowBytes.
	Window      int
	WindowBytes int
	// AckTimeoutTicks is how long a receiver may acknowledge nothing new
	// while it misses messages before it stops holding the window.
	// Default DefaultAckTimeoutTicks.
	AckTimeoutTicks int
	// ReorderBuffer bounds, per (sender, group), how far past the next
	// expected sequence a receiver buffers out-of-order messages; later
	// ones are dropped (and repaired). It also bounds how many messages a
	// stream holds before its SYNC. Default DefaultReorderBuffer.
	ReorderBuffer int
	// HeartbeatTicks is the interval, in ticks, between heartbeats on a
	// group after its last reliable message; it doubles while the group
	// stays idle, up to 8×. Default DefaultHeartbeatTicks.
	HeartbeatTicks int
	// ProbeTicks is how soon after a group's last reliable message its
	// first heartbeat goes out (the tail probe): a receiver that lost the
	// last messages of a burst learns of them only from a heartbeat, and
	// a federation advancing in lockstep waits for that repair at every
	// step that lost one. Then heartbeats follow every HeartbeatTicks,
	// doubling. Default DefaultProbeTicks.
	ProbeTicks int
	// NakDelayTicks is how long a receiver waits after noticing a gap
	// before it sends a NAK: between NakDelayTicks and twice that, chosen
	// at random, so that one receiver's NAK can suppress the others'
	// (with an Inbox, where no other receiver hears a NAK, between half
	// of it and it, at least one tick: only reordering is waited for). It
	// is also the minimum interval between two retransmissions of one
	// message. It also spaces the join HELLOs (see Endpoint.Join) and the
	// SYNCs sent to one receiver. Default DefaultNakDelayTicks.
	NakDelayTicks int
	// NakRetryTicks is how long a receiver waits for the repair of a range
	// it (or another receiver) NAKed before it NAKs it again, and how long
	// a stream that heard its sender waits for a SYNC before asking for
	// one. Default 3×NakDelayTicks.
	NakRetryTicks int
	// MaxFrame is the largest frame sent, header and trailer included.
	// Default DefaultMaxFrame, which fits an Ethernet MTU with the IP, UDP
	// and transport headers.
	MaxFrame int
	// Inbox, when set, names the group on which node id receives the
	// frames addressed to it alone: SYNCs (the answer to its HELLO) and
	// NAKs (its receivers' repair requests). They travel there instead of
	// on their stream's group, so that in a group of n members a join
	// costs n SYNC deliveries rather than n², and a repair request one
	// delivery rather than n (the repair itself is still multicast, so it
	// serves every receiver that missed it). Each node must receive its
	// own inbox group; several nodes may share one (they ignore what is
	// not theirs). Frames arriving on a group not their own are accepted
	// only for these two kinds on the node's own inbox. Nil: everything
	// goes on the stream's group.
	Inbox func(id NodeID) dgram.Group
	// Rand drives the NAK and SYNC request delays. Nil means a source
	// seeded from Self and Incarnation, so a run replays exactly.
	Rand *rand.Rand
	// Clock, when set, reads a monotonic clock (package peer: the
	// microseconds since the federate began) with which the join
	// handshake tells whether a sender joined a group before this node
	// began hearing it (Start.Fresh): the join HELLOs and SYNCs carry
	// join ages by it. Nil: ages in ticks, coarser (a tick is 5 ms in a
	// federate), which a deterministic simulation replays. Every member
	// of a federation must measure alike.
	Clock func() int64
}

// withDefaults validates c and fills in its zero fields.
func (c Config) withDefaults() (Config, error) {
	if c.Self == 0 {
		return c, errors.New("reliable: Config.Self is zero")
	}
	if c.Federation == "" {
		return c, errors.New("reliable: Config.Federation is empty")
	}
	if c.Keys == nil && c.Key != nil {
		c.Keys = []Key{{ID: 0, Secret: c.Key}}
	}
	if c.Keys != nil {
		if len(c.Keys) == 0 {
			return c, errors.New("reliable: Config.Keys is empty")
		}
		if err := checkKeys(c.Keys); err != nil {
			return c, err
		}
	}
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{
		{"RetransmitBuffer", &c.RetransmitBuffer, DefaultRetransmitBuffer},
		{"RetransmitBytes", &c.RetransmitBytes, DefaultRetransmitBytes},
		{"Window", &c.Window, DefaultWindow},
		{"WindowBytes", &c.WindowBytes, DefaultWindowBytes},
		{"AckTimeoutTicks", &c.AckTimeoutTicks, DefaultAckTimeoutTicks},
		{"ReorderBuffer", &c.ReorderBuffer, DefaultReorderBuffer},
		{"HeartbeatTicks", &c.HeartbeatTicks, DefaultHeartbeatTicks},
		{"ProbeTicks", &c.ProbeTicks, DefaultProbeTicks},
		{"NakDelayTicks", &c.NakDelayTicks, DefaultNakDelayTicks},
		{"NakRetryTicks", &c.NakRetryTicks, 0}, // see below
		{"MaxFrame", &c.MaxFrame, DefaultMaxFrame},
		{"MaxMessage", &c.MaxMessage, DefaultMaxMessage},
	} {
		if *f.v < 0 {
			return c, fmt.Errorf("reliable: negative Config.%s %d", f.name, *f.v)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	if c.NakRetryTicks == 0 {
		c.NakRetryTicks = 3 * c.NakDelayTicks
	}
	if c.MaxFrame < MinMaxFrame || c.MaxFrame > MaxMaxFrame {
		return c, fmt.Errorf("reliable: Config.MaxFrame %d out of [%d, %d]", c.MaxFrame, MinMaxFrame, MaxMaxFrame)
	}
	if c.Rand == nil {
		c.Rand = rand.New(rand.NewPCG(uint64(c.Self), c.Incarnation))
	}
	return c, nil
}
