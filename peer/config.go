package peer

import (
	"errors"
	"fmt"
	"github.com/meshrti/meshrti/ddm"
	"io"
	"math/rand/v2"
	"os"
	"time"

	"github.com/meshrti/meshrti/peer/updatecond"

	"github.com/rs/zerolog"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/gossip"
	"github.com/meshrti/meshrti/peer/hla"
	"github.com/meshrti/meshrti/peer/internal/core"
	"github.com/meshrti/meshrti/peer/metrics"
	"github.com/meshrti/meshrti/peer/transport"
)

// Config configures one federate. Zero fields mean the default, as in
// net/http's Server. Join does not change a Config.
type Config struct {
	// Federation is the federation execution's name. Required.
	Federation string
	// FederateName must be unique in the federation; "" asks the
	// federation for a generated name.
	FederateName string
	// FederateType is free text describing the federate.
	FederateType string

	// FOMFiles and FOMModules are the FOM modules this federate uses,
	// merged after the standard MIM (files first, then modules). Every
	// federate of a federation should use the same modules, plus any of
	// its own that only add.
	FOMFiles   []string
	FOMModules []*fomxml.Document

	// MIMFile or MIMModule, one of them, replaces the standard MIM when
	// this federate creates the federation (IEEE 1516.1 §4.5
	// createFederationExecutionWithMIM; CreateFederationExecutionWithMIM,
	// or Join with Create). The module must define every class,
	// attribute and parameter of the standard MIM and may add to them.
	// Joining a federation that exists uses the federation's MIM,
	// whatever these say.
	MIMFile   string
	MIMModule *fomxml.Document

	// NoMOM leaves this federate out of the Management Object Model: no
	// HLAobjectRoot.HLAmanager.HLAfederate instance describes it
	// (docs/mom.md). Host is what that instance reports as
	// HLAfederateHost; empty means os.Hostname.
	NoMOM bool
	Host  string

	// Create creates the federation execution when it does not exist yet
	// (an existing one is joined). Without it, joining a federation that
	// does not exist fails with ErrFederationExecutionDoesNotExist.
	Create bool

	// TimeRepresentation is HLAfloat64Time (the default) or
	// HLAinteger64Time. Joining a federation that uses the other one fails
	// with ErrCouldNotCreateLogicalTimeFactory, unless AdoptTime.
	TimeRepresentation string
	// AdoptTime joins with the federation's time representation, as a
	// 1516e or HLA 4 join (which names none) does: TimeRepresentation then
	// only says what a federation this federate creates uses.
	// GetTimeFactory tells which one the federate got.
	AdoptTime bool

	// Control is the control plane (membership and agreement). nil means
	// meshrti's gossip cluster, configured by Gossip.
	Control ControlPlane
	// Gossip configures the default control plane.
	Gossip GossipConfig

	// Transport carries the data plane. nil means UDP multicast
	// configured by Multicast. Join takes ownership: Close closes it.
	Transport transport.Transport
	// Multicast configures the default transport.
	Multicast transport.UDPConfig

	// TransportMode is how a group's datagrams reach its members:
	// TransportMulticast ("" means it: one LAN; the default keeps every
	// datagram on loopback, see Multicast), TransportUnicast (one
	// datagram per member, members learned from the control plane:
	// routed subnets, clouds, Kubernetes) or TransportAuto. All members
	// of a federation use one mode: its creator's is recorded with it
	// (like the FDD and the time representation), a joiner asking for
	// another gets ErrTransportMismatch, and auto adopts the
	// federation's (docs/deploy.md). With Config.Transport set, it says
	// what that transport is: unicast for a transport.Directory.
	TransportMode TransportMode
	// Unicast configures the default unicast transport. Its Bind
	// defaults to Gossip.BindAddr with a free port (loopback when that
	// is unset too).
	Unicast transport.UnicastConfig
	// Advertise is the host:port other members send this federate's
	// unicast datagrams to, when it differs from the bound address (NAT,
	// container networks); a port of 0 means the bound port. It fills
	// Unicast.Advertise when that is empty; when it names a port and
	// Unicast.Bind is empty, the transport binds that port (on the
	// gossip bind address, or the wildcard).
	Advertise string
	// ProbeMembers and ProbeWait tune auto's probe in a federation
	// created with auto whose mode its members have not settled yet:
	// auto waits up to ProbeWait (default 5 s) for ProbeMembers
	// federates (default 2) to be joined, exchanges multicast beacons
	// with them, and settles on multicast if every one heard every other,
	// on unicast otherwise. Federates that join later adopt what was
	// settled.
	ProbeMembers int
	ProbeWait    time.Duration

	// Key, when set, authenticates every data-plane frame and encrypts
	// the gossip cluster; federates with another key cannot take part.
	Key []byte

	// MaxFrame is the largest data-plane frame (datagram payload); small
	// messages are bundled up to it and larger ones fragmented. Default
	// 1400 bytes, which fits an Ethernet MTU; on loopback up to 65000
	// pays off.
	MaxFrame int
	// MaxMessage is the largest attribute update or interaction, encoded;
	// default 16 MiB.
	MaxMessage int
	// Window is how many reliable messages a receiver may lag behind on
	// a group before back-pressure applies; default 8192.
	Window int
	// BackPressure says what an update or interaction does when a
	// receiver lags a full window behind: wait until it catches up (or
	// is declared lost or stalled), or fail with ErrWouldBlock.
	BackPressure BackPressureMode

	// MaxQueuedEvents bounds the callbacks waiting for Next: while that
	// many wait, the federate stops reading the data plane, so that its
	// senders' flow control holds them back (what it read before, up to
	// one read of 32 datagrams, is still delivered). Default 65536.
	MaxQueuedEvents int
	// StallTimeout is how long senders wait for a receiver that
	// acknowledges nothing (a federate that reads no callbacks, or is
	// gone but not yet declared lost) before they go on without it; it
	// then gets what is still held and gaps for the rest. Default 10 s.
	StallTimeout time.Duration

	// TickInterval is how often retransmission, heartbeat and time
	// management timers advance. Default 5 ms.
	TickInterval time.Duration

	// StepHold bounds how long the frames a federate's service calls
	// make during a step (from Next returning an event until the
	// federate comes back to Next) are held so that they leave together,
	// in one send, when it comes back (docs/dataplane.md, "The step
	// send"). Zero means the default, 50 µs; a negative value turns the
	// hold off: each call sends as it ends.
	StepHold time.Duration

	// Regions cuts the federation's dimensions into cells for routing by
	// region (docs/ddm.md): cells per dimension by name, a default count,
	// and the most cell groups one subscription region joins. The zero
	// value is the default (16 cells per dimension, 16 joins). Senders and
	// receivers compute cells independently, so the federation agrees on
	// one value: its creator's is recorded with the federation (like the
	// FDD and the time representation), and a joiner configured
	// otherwise uses the federation's instead, saying so in its log. (A
	// federation created by an earlier version records none: its joiners
	// use their own, which must then be the same.)
	Regions ddm.Config

	// SaveDir is where federation saves go: a directory per federation
	// and label, holding each federate's RTI state and its own
	// (docs/saverestore.md). Empty means meshrti-saves in the system's
	// temporary directory.
	SaveDir string

	// Metrics, when set, receives the federate's metrics (frames, bytes,
	// repairs, drops by reason, queue depths, batch sizes), labelled with
	// the federation and federate name, for a status page.
	Metrics *metrics.Registry

	// Logger receives diagnostics; the zero value logs nothing.
	Logger zerolog.Logger

	// Manual runs the federate without goroutines of its own, for
	// deterministic simulation (testnet's deterministic clusters): it
	// takes a datagram only when its driver calls Deliver, its timers
	// advance only when the driver calls Tick, and each Tick first takes
	// the membership events waiting on the control plane. Frames go to
	// the transport before each call returns. A sending service under
	// back-pressure fails with ErrWouldBlock (nothing could end the
	// pressure while it waited), and resigning does not linger. Requires
	// Transport, and a Control from MemRegistry.ManualControl.
	Manual bool
	// Incarnation, when nonzero, replaces the random number that tells
	// this run of the federate from earlier ones with the same handle.
	// Deterministic simulations set it.
	Incarnation uint64

	// Rand, when set, is the source of every random choice the federate
	// and its default control plane make (its incarnation, the data
	// plane's repair delays, the gossip cluster's choices), so that a seed
	// replays a run; nil means the system's randomness. memberlist, under
	// the gossip control plane, also draws from Go's global source, which
	// no Config reaches (docs/gossip.md).
	Rand *rand.Rand

	// UpdateConditions, when set, decide which values of each update
	// go on the wire (HLA rule 9): thresholds per attribute, heartbeats,
	// max-unchanged intervals (package updatecond, docs/updates.md).
	// The federate may then offer every value every cycle; what did not
	// change enough is not sent. Wall time is counted from Join (in
	// ticks for a manual federate, so that a run replays).
	UpdateConditions *updatecond.Config

	// Trace, when set, receives a JSON-lines trace of what the federate
	// did and saw (docs/trace.md). The federate serializes its own
	// writes, whole lines per Write call; a writer shared by several
	// federates must be safe for concurrent use (see NewTraceWriter).
	// A failed write ends the trace, not the federate.
	Trace io.Writer
}

// GossipConfig configures the default control plane.
type GossipConfig struct {
	// BindAddr and BindPort are where the memberlist node listens;
	// defaults 127.0.0.1 and a free port.
	BindAddr string
	BindPort int
	// Seeds are host:port addresses of members to join through; none
	// means this node is the first.
	Seeds []string
	// Profile is "local" (fast failure detection, one host; the default),
	// "lan" or "wan" (gossip.ProfileWAN: hosts across sites).
	Profile string
	// Mux, when set, carries this federate's gossip on a shared address
	// (a daemon's one gossip port; see gossip.Mux); BindAddr and BindPort
	// then only tell the data plane which address to bind.
	Mux *gossip.Mux
	// LostGrace is how long a member this federate's node declared dead
	// may refute before the node proposes the federation remove it
	// (gossip.Config.LostGrace; 0: the profile's, 1 s local, 2 s lan).
	// A suspicion alone never makes a federate lost: only the removal
	// does, at every member alike.
	LostGrace time.Duration
}

const defaultTick = 5 * time.Millisecond

// BackPressureMode is what a sending service does while the data plane's
// backlog on a group is full (see Config.BackPressure).
type BackPressureMode int

const (
	// BackPressureBlock waits until the backlog shrinks.
	BackPressureBlock BackPressureMode = iota
	// BackPressureError returns an error wrapping ErrWouldBlock (and
	// ErrRTIinternalError) at once; nothing was sent.
	BackPressureError
)

func (c *Config) maxQueuedEvents() int {
	if c.MaxQueuedEvents == 0 {
		return 1 << 16
	}
	return c.MaxQueuedEvents
}

func (c *Config) stallTimeout() time.Duration {
	if c.StallTimeout == 0 {
		return 10 * time.Second
	}
	return c.StallTimeout
}

// DefaultMaxFrame is the data-plane frame size when Config.MaxFrame is 0.
const DefaultMaxFrame = 1400

func (c *Config) maxFrame() int {
	if c.MaxFrame == 0 {
		return DefaultMaxFrame
	}
	return c.MaxFrame
}

// Validate reports the first problem with c.
func (c *Config) Validate() error {
	if c.Federation == "" {
		return errors.New("peer: Config.Federation is empty")
	}
	switch c.TimeRepresentation {
	case "", HLAfloat64Time, HLAinteger64Time:
	default:
		return fmt.Errorf("%w: unknown time representation %q (want %s or %s)",
			ErrCouldNotCreateLogicalTimeFactory, c.TimeRepresentation, HLAfloat64Time, HLAinteger64Time)
	}
	if c.TickInterval < 0 {
		return errors.New("peer: Config.TickInterval is negative")
	}
	if c.MaxFrame != 0 && (c.MaxFrame < 256 || c.MaxFrame > 65000) {
		return fmt.Errorf("peer: Config.MaxFrame %d out of [256, 65000]", c.MaxFrame)
	}
	if c.MaxQueuedEvents < 0 || c.StallTimeout < 0 || c.Window < 0 {
		return errors.New("peer: negative Config.MaxQueuedEvents, StallTimeout or Window")
	}
	if c.MaxMessage < 0 {
		return errors.New("peer: Config.MaxMessage is negative")
	}
	if c.Gossip.LostGrace < 0 {
		return errors.New("peer: Config.Gossip.LostGrace is negative")
	}
	switch gossip.Profile(c.Gossip.Profile) {
	case "", gossip.ProfileLocal, gossip.ProfileLAN, gossip.ProfileWAN:
	default:
		return fmt.Errorf("peer: unknown Config.Gossip.Profile %q (want local, lan or wan)", c.Gossip.Profile)
	}
	if c.BackPressure != BackPressureBlock && c.BackPressure != BackPressureError {
		return fmt.Errorf("peer: unknown Config.BackPressure %d", c.BackPressure)
	}
	if c.Manual && (c.Transport == nil || c.Control == nil) {
		return errors.New("peer: Config.Manual needs Config.Transport and Config.Control")
	}
	if err := c.validateTransport(); err != nil {
		return err
	}
	if c.MIMFile != "" && c.MIMModule != nil {
		return errors.New("peer: Config.MIMFile and Config.MIMModule are both set")
	}
	if c.FederateName != "" {
		if err := core.CheckName(c.FederateName); err != nil {
			return fmt.Errorf("peer: federate name: %w", err)
		}
	}
	return nil
}

func (c *Config) tick() time.Duration {
	if c.TickInterval == 0 {
		return defaultTick
	}
	return c.TickInterval
}

// host is the host the MOM reports.
func (c *Config) host() string {
	if c.Host != "" {
		return c.Host
	}
	h, _ := os.Hostname()
	return h
}

func (c *Config) timeKind() hla.TimeKind {
	if c.TimeRepresentation == HLAinteger64Time {
		return HLAinteger64Time
	}
	return HLAfloat64Time
}

// loadDocs parses the configured modules, files first, and the MIM
// (nil when none is configured), mapping fomxml's errors onto the HLA
// exceptions. It does not merge them: a creator's must merge alone
// (checkDocs), a joiner's with the federation's (IEEE 1516.1-2010 §4.9:
// a join module may use what a creation module defines).
func (c *Config) loadDocs() (docs []*fomxml.Document, mim *fomxml.Document, err error) {
	if mim, err = c.loadMIM(); err != nil {
		return nil, nil, err
	}
	docs = make([]*fomxml.Document, 0, len(c.FOMFiles)+len(c.FOMModules))
	for _, p := range c.FOMFiles {
		d, err := fomxml.ParseFile(p)
		if err != nil {
			return nil, nil, fomError(err)
		}
		docs = append(docs, d)
	}
	docs = append(docs, c.FOMModules...)
	return docs, mim, nil
}

// checkDocs merges a creator's modules after its MIM (the standard one
// when nil), as the federation's FDD will be, and checks that the cells
// of c.Regions fit its dimensions.
func (c *Config) checkDocs(mim *fomxml.Document, docs []*fomxml.Document) (*fomxml.FDD, error) {
	fdd, err := mergeFDD(mim, docs)
	if err != nil {
		return nil, fomError(err)
	}
	if _, err := ddm.NewSpace(fdd, c.Regions); err != nil {
		return nil, fmt.Errorf("peer: Config.Regions: %w", err)
	}
	return fdd, nil
}

// CheckModules reads c's FOM modules and MIM and merges them, as
// CreateFederationExecution (and Join, when it creates the federation)
// does first, and returns the error it would: ErrCouldNotOpenFDD,
// ErrReadingFDD, ErrInconsistentFDD, or the MIM's (see
// CreateFederationExecutionWithMIM). The modules of a federate that
// joins a federation that exists are checked against the federation's
// instead, and may use what its modules define.
func (c *Config) CheckModules() error {
	docs, mim, err := c.loadDocs()
	if err != nil {
		return err
	}
	_, err = c.checkDocs(mim, docs)
	return err
}

// mergeFDD merges docs after mim, or after the standard MIM when mim is
// nil.
func mergeFDD(mim *fomxml.Document, docs []*fomxml.Document) (*fomxml.FDD, error) {
	if mim == nil {
		return fomxml.Merge(docs...)
	}
	return fomxml.MergeWithMIM(mim, docs...)
}

// loadMIM parses and checks the configured MIM; nil when there is none.
// Errors: ErrDesignatorIsHLAstandardMIM when it designates the standard
// MIM, ErrCouldNotOpenMIM when its file cannot be read, ErrErrorReadingMIM
// when it does not parse or lacks part of the standard MIM.
func (c *Config) loadMIM() (*fomxml.Document, error) {
	d := c.MIMModule
	switch {
	case c.MIMFile == fomxml.MIMDesignator:
		return nil, fmt.Errorf("%w: %s", ErrDesignatorIsHLAstandardMIM, c.MIMFile)
	case c.MIMFile != "":
		var err error
		if d, err = fomxml.ParseFile(c.MIMFile); errors.Is(err, fomxml.ErrCouldNotOpen) {
			return nil, fmt.Errorf("%w: %w", ErrCouldNotOpenMIM, err)
		} else if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrErrorReadingMIM, err)
		}
	case d == nil:
		return nil, nil
	}
	if file, _ := d.Source(); file == fomxml.MIMDesignator {
		return nil, fmt.Errorf("%w: %s", ErrDesignatorIsHLAstandardMIM, file)
	}
	if err := checkMIM(d); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrErrorReadingMIM, err)
	}
	return d, nil
}

// checkMIM checks that mim, merged alone, defines every object class,
// attribute, interaction class, parameter and transportation type of the
// standard MIM, under the same names: the MOM needs them, and a MIM may
// only add to them.
func checkMIM(mim *fomxml.Document) error {
	got, err := fomxml.MergeWithMIM(mim)
	if err != nil {
		return err
	}
	std, err := fomxml.Merge()
	if err != nil {
		return err
	}
	file, _ := mim.Source()
	for _, oc := range std.ObjectClasses {
		g, ok := got.ObjectClass(oc.QualifiedName)
		if !ok {
			return fmt.Errorf("%s lacks the object class %s of the standard MIM", file, oc.QualifiedName)
		}
		for _, a := range oc.Attributes {
			if _, ok := g.Attribute(a.Name); !ok {
				return fmt.Errorf("%s lacks the attribute %s of %s", file, a.Name, oc.QualifiedName)
			}
		}
	}
	for _, ic := range std.InteractionClasses {
		g, ok := got.InteractionClass(ic.QualifiedName)
		if !ok {
			return fmt.Errorf("%s lacks the interaction class %s of the standard MIM", file, ic.QualifiedName)
		}
		for _, p := range ic.Parameters {
			if _, ok := g.Parameter(p.Name); !ok {
				return fmt.Errorf("%s lacks the parameter %s of %s", file, p.Name, ic.QualifiedName)
			}
		}
	}
	for _, t := range std.Transportations {
		if _, ok := got.Transportation(t.Name); !ok {
			return fmt.Errorf("%s lacks the transportation type %s of the standard MIM", file, t.Name)
		}
	}
	return nil
}

// fomExceptions are the HLA exceptions of package fomxml's errors
// (fomError); any other is ErrReadingFDD.
var fomExceptions = []errorAs{
	{fomxml.ErrCouldNotOpen, ErrCouldNotOpenFDD},
	{fomxml.ErrInconsistent, ErrInconsistentFDD},
}

func fomError(err error) error {
	return asException(err, fomExceptions, ErrReadingFDD)
}
