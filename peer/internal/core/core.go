package core

import (
	"errors"
	"fmt"
	"github.com/meshrti/meshrti/ddm"
	"math/rand/v2"
	"slices"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/lbts"
	"github.com/meshrti/meshrti/peer/dgram"
	"github.com/meshrti/meshrti/peer/hla"
	"github.com/meshrti/meshrti/peer/reliable"
)

// Config configures a Core. Required: FDD, Federation, Self, Name.
type Config struct {
	// FDD is the federation's object model.
	FDD *fomxml.FDD
	// Federation names the federation execution (it keys the data
	// plane's frames).
	Federation string
	// Self and Name are this federate's handle and name.
	Self FederateHandle
	Name string
	// Time is the federation's time representation; default
	// HLAfloat64Time.
	Time hla.TimeKind
	// Incarnation tells this run of the federate from earlier ones with
	// the same handle.
	Incarnation uint64
	// Key, when set, authenticates and encrypts every data-plane frame.
	Key []byte
	// MaxFrame, MaxMessage and Window configure the reliable endpoint
	// (reliable.Config); zero means its default.
	MaxFrame, MaxMessage, Window int
	// AckTimeoutTicks is how long senders wait for a receiver that
	// acknowledges nothing (reliable.Config.AckTimeoutTicks).
	AckTimeoutTicks int
	// ResignAction is the federation's automatic resign directive: what
	// happens to the objects of a federate that is lost (each federate
	// may set its own: SetAutomaticResignDirective).
	ResignAction ResignAction
	// TickSeconds is the wall-clock length of a Tick, for update rates.
	TickSeconds float64
	// Members are the other members at join.
	Members []Member
	// Trace makes the core write a JSON-lines trace into Ready.Trace
	// (docs/trace.md).
	Trace bool
	// Rand drives the data plane's random delays; nil means a source
	// seeded from Self and Incarnation, so that a run replays.
	Rand *rand.Rand
	// Clock, when set, reads the monotonic clock with which the data
	// plane's join handshake times joins (reliable.Config.Clock); nil
	// means ticks, which replay.
	Clock func() int64
	// Regions configures the cells of routing by region (ddm.Config); the
	// same in every federate of a federation.
	Regions ddm.Config
	// MOM gives this federate its MOM instance (mom.go) when the FDD has
	// the class HLAobjectRoot.HLAmanager.HLAfederate; Type and Host are
	// two of its attributes.
	MOM        bool
	Type, Host string
	// RTIVersion is the MOM's HLARTIversion; "" reports RTIVersion.
	RTIVersion string
	// ModuleText returns the text of FOM module i (from 0, in the FDD's
	// order after the MIM), and MIMText the MIM's, for the MOM's reports;
	// nil: not reported.
	ModuleText func(i int) (string, error)
	MIMText    func() string
	// Saves keeps the RTI state a federation save writes and a restore
	// reads (saverestore.go); nil: saves fail (RTIUnableToSave) and
	// restores are refused.
	Saves SaveStore
}

// Member is another joined federate.
type Member struct {
	Handle FederateHandle
	Name   string
	Type   string
}

// Core is one federate's protocol state: the reliable endpoint, the time
// core, declarations and objects, ownership tokens, routing and the
// federation's membership, as one state machine. See the package
// documentation for the driver's loop.
//
// A Core is not safe for concurrent use; its driver serializes calls.
type Core struct {
	cfg      Config
	fdd      *fomxml.FDD
	timeKind hla.TimeKind
	self     FederateHandle

	endpoint *reliable.Endpoint
	timeCore *lbts.Node

	routing   routing      // groups (routing.go)
	declared  declarations // publications and subscriptions (declarations.go)
	objects   objects      // object instances (objects.go)
	ownership ownership    // attribute tokens (ownership.go)
	// pairMem and epochMem are what is left of the blocks the epoch
	// pairs of ownership messages are cut from (epochPairs).
	pairMem     []valuePair
	epochMem    []byte
	regions     regionSet   // DDM regions (regions.go)
	syncPoints  syncState   // synchronization points (syncpoints.go)
	saveRestore saveRestore // federation save and restore (saverestore.go)
	mom         momState    // the Management Object Model (mom.go)

	alsoSeqs   []uint64   // send's sequence numbers on outMsg.also, for sendAll
	federation federation // members, resigning, control-plane operations (federation.go)
	advisories advisories // the others' subscriptions and the advisories (advisories.go)
	timing     timing     // retraction and delivery bookkeeping (timing.go)
	handover   handover   // callbacks that end a pending state, until handed over (handover.go)
	tracer     *tracer    // nil unless Config.Trace

	inbound wireMsg // what onData decodes into; kept messages are copied (keep)
	sendBuf []byte  // scratch for encoding messages
	timeBuf []byte  // scratch for encoding time messages
	timeMsg wireMsg // scratch for sending a time message
	// Scratch for registration announcements (registerMsg).
	regMsg wireMsg
	regBuf []byte
	msgID  uint64
	evBuf  []Event // apply's reused event buffer

	blockedOn map[dgram.Group]bool // groups a refused send met (ErrBlocked)

	out   Ready
	stats Stats
}

// Stats counts what a Core did.
type Stats struct {
	Sent      uint64 // data-plane messages sent
	Delivered uint64 // data-plane messages received and handled
	Malformed uint64 // payloads that did not decode (dropped)
	Gaps      uint64 // messages the reliable layer reported lost for good
	LateTSO   uint64 // time-stamped messages refused for arriving below the granted time
	Blocked   uint64 // sends held by back-pressure
	Stepped   uint64 // frames stepped through the reliable endpoint
	Stale     uint64 // updates and deletes dropped for an ownership epoch older than one known
	Filtered  uint64 // attribute values, interactions and announcements dropped: their regions overlap no subscription region here
	History   uint64 // updates and interactions with regions dropped: sent into a cell before this federate's region moved over it
	Spared    uint64 // updates and interactions with regions not sent: no other federate's subscription region overlaps them
	Unnamed   uint64 // updates of instances with reserved names dropped because the name never came
	Abandoned uint64 // messages dropped for coming from a restore branch this federate left
}

// Ready is what the driver must do after a call: the events to queue,
// the frames to send, the group memberships to change on the transport,
// the control-plane operations to start and the trace to write. Its
// slices belong to the Core and are reused after Advance.
//
// The driver acts in this order: Groups (joins before the frames that
// announce them), then Frames, Events, Ops and Trace in any order.
type Ready struct {
	// Events are callbacks for the federate, in order.
	Events []Event
	// Frames are sealed data-plane frames, to send in order.
	Frames []dgram.Packet
	// Groups are transport group memberships to change, in order.
	Groups []GroupChange
	// Ops are control-plane operations to start; each answer comes back
	// through OpDone with the Op's ID.
	Ops []Op
	// Trace holds whole JSON lines of the trace (Config.Trace).
	Trace []byte
}

// OpKind is what a control-plane operation does.
type OpKind uint8

const (
	// OpAcquire takes Key in the federation's register for this
	// federate, with Value, if nobody holds it.
	OpAcquire OpKind = iota + 1
	// OpRelease frees Key if this federate holds it.
	OpRelease
	// OpRead reads Key's value and version, linearizably.
	OpRead
	// OpSetState sets this federate's replicated state Key to Value
	// (nil deletes it); it answers at once.
	OpSetState
	// OpSwap takes Key for this federate with Value and advances its
	// version if its version is Expect (a compare-and-set).
	OpSwap
)

// Op is a control-plane operation for the driver to run.
type Op struct {
	ID     uint64
	Kind   OpKind
	Key    string
	Value  []byte
	Expect uint64 // OpSwap
	// Joined, for OpAcquire: federates that must all be joined where the
	// acquisition is decided (a synchronization set); the answer has
	// NotJoined otherwise, and nothing changed.
	Joined []FederateHandle
}

// OpResult is the control plane's answer to an Op.
type OpResult struct {
	// Held says this federate holds the key after the operation.
	Held bool
	// Holder is the key's holder, 0 when free.
	Holder FederateHandle
	// Value and Version are the key's value and version after it.
	Value   []byte
	Version uint64
	// NotJoined: a federate of Op.Joined was not joined; nothing changed.
	NotJoined bool
	// Err is set when the operation could not be decided.
	Err error
}

// GroupChange is a transport group to join (Join) or leave.
type GroupChange struct {
	Group dgram.Group
	Join  bool
}

// Empty reports whether rd asks for nothing.
func (rd *Ready) Empty() bool {
	return len(rd.Events) == 0 && len(rd.Frames) == 0 && len(rd.Groups) == 0 && len(rd.Ops) == 0 && len(rd.Trace) == 0
}

// ErrBlocked is what a sending service returns while back-pressure holds
// it: a reliable message would go to a group whose backlog is full.
// Nothing was sent. Blocked reports when it may be tried again.
var ErrBlocked = errors.New("core: data plane backlog full")

// New returns the core of a federate that has just joined: it has joined
// its inbox and the control group (Ready says so).
func New(cfg Config) (*Core, error) {
	if cfg.FDD == nil || cfg.Federation == "" || cfg.Self == 0 {
		return nil, errors.New("core: Config needs FDD, Federation and Self")
	}
	if cfg.Time == "" {
		cfg.Time = hla.HLAfloat64Time
	}
	space, err := ddm.NewSpace(cfg.FDD, cfg.Regions)
	if err != nil {
		return nil, fmt.Errorf("core: Config.Regions: %w", err)
	}
	c := &Core{
		cfg:       cfg,
		fdd:       cfg.FDD,
		timeKind:  cfg.Time,
		self:      cfg.Self,
		blockedOn: make(map[dgram.Group]bool),
	}
	c.endpoint, err = reliable.New(reliable.Config{
		Self:            reliable.NodeID(cfg.Self),
		Incarnation:     cfg.Incarnation,
		Federation:      cfg.Federation,
		Key:             cfg.Key,
		Bundle:          true,
		AckTimeoutTicks: cfg.AckTimeoutTicks,
		MaxFrame:        cfg.MaxFrame,
		MaxMessage:      cfg.MaxMessage,
		Window:          cfg.Window,
		Inbox:           func(id reliable.NodeID) dgram.Group { return inboxGroup(FederateHandle(id)) },
		Rand:            cfg.Rand,
		Clock:           cfg.Clock,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", hla.ErrRTIinternalError, err)
	}
	// Control traffic (time messages, queries, resigns) is low-rate and
	// goes to every member: ACKs from all of them would cost more than
	// they save, and the history covers repairs.
	c.endpoint.WithoutFlowControl(controlGroup)
	// Enable requests are acknowledged to the requester's inbox alone
	// (lbts.Config.DirectAcks): a federation of a thousand enabling
	// would otherwise broadcast every acknowledgement to everyone.
	c.timeCore, err = lbts.New(lbts.Config{Self: lbts.FederateID(cfg.Self), DirectAcks: true})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", hla.ErrRTIinternalError, err)
	}
	c.routing = newRouting()
	c.declared = newDeclarations()
	c.objects = newObjects(cfg.Self)
	c.regions = newRegionSet()
	c.syncPoints = newSyncState()
	c.regions.space, c.regions.spaceOf = space, cfg.FDD
	c.ownership = newOwnership(cfg.Self)
	c.federation = newFederation(cfg.ResignAction)
	c.advisories = newAdvisories(cfg.FDD.Switches)
	c.timing = newTiming()
	if cfg.Trace {
		c.tracer = newTracer(cfg.Name)
		c.traceJoin()
	}
	for _, m := range cfg.Members {
		if m.Handle != c.self {
			c.federation.join(m)
			c.timeCore.AddFederate(lbts.FederateID(m.Handle))
		}
	}
	// The inbox is a transport group only: nothing is sent on it as a
	// stream of its own.
	c.out.Groups = append(c.out.Groups, GroupChange{Group: inboxGroup(c.self), Join: true})
	c.joinGroup(controlGroup)
	c.momStart()
	return c, nil
}

// FDD returns the federation's object model as this federate knows it.
func (c *Core) FDD() *fomxml.FDD { return c.fdd }

// SetFDD replaces the object model with fdd, a superset of the current
// one (modules another federate added when it joined): handles are names'
// hashes, so everything known keeps its handle.
func (c *Core) SetFDD(fdd *fomxml.FDD) { c.fdd = fdd }

// Stats returns the counts so far.
func (c *Core) Stats() Stats { return c.stats }

// ReliableStats returns the reliable endpoint's counts.
func (c *Core) ReliableStats() reliable.Stats { return c.endpoint.Stats() }

// TimeStatus returns a snapshot of the time core.
func (c *Core) TimeStatus() lbts.Status { return c.timeCore.Status() }

// SetKeys replaces the data-plane keys (reliable.Endpoint.SetKeys).
func (c *Core) SetKeys(keys []reliable.Key) error {
	if err := c.endpoint.SetKeys(keys); err != nil {
		return fmt.Errorf("%w: %w", hla.ErrRTIinternalError, err)
	}
	return nil
}

// Step hands the core a frame received on group g. Bad frames are
// dropped and counted by the reliable endpoint.
func (c *Core) Step(g dgram.Group, frame []byte) {
	c.endpoint.Step(g, frame)
	c.stats.Stepped++
}

// Tick advances the core's timers by one tick: retransmissions,
// heartbeats, time management.
func (c *Core) Tick() {
	c.endpoint.Tick()
	c.timeCore.Tick()
	c.objects.tick(c)
	c.tickSaveRestore()
	c.momTick()
}

// Ready returns what to do now. It first acts on everything the reliable
// endpoint and the time core have ready: deliveries become events, the
// time core's messages are sent, grants become events. With seal, the
// frames being bundled are sealed too, so that Frames holds everything
// sent so far; without it they stay open to bundle what comes next (the
// driver seals when its writer is idle).
func (c *Core) Ready(seal bool) Ready {
	c.process()
	if seal {
		c.endpoint.Flush()
	}
	c.relPass(true)
	if c.Lost() {
		c.out.Events = afterLoss(c.out.Events)
	}
	if c.tracer != nil {
		c.out.Trace = c.tracer.buf
	}
	return c.out
}

// afterLoss returns what of evs a federate the federation dropped is
// handed: ConnectionLost is its last callback, and nothing follows it.
func afterLoss(evs []Event) []Event {
	for i, ev := range evs {
		if _, ok := ev.(hla.ConnectionLost); ok {
			clear(evs[i+1:])
			return evs[:i+1]
		}
	}
	clear(evs)
	return evs[:0]
}

// Advance tells the core that rd, returned by Ready, has been acted on.
func (c *Core) Advance(rd Ready) {
	c.mom.countEvents(c.out.Events)
	clear(c.out.Events) // drop the references; keep the room
	c.out.Events = c.out.Events[:0]
	clear(c.out.Frames)
	c.out.Frames = c.out.Frames[:0]
	c.out.Groups = c.out.Groups[:0]
	clear(c.out.Ops)
	c.out.Ops = c.out.Ops[:0]
	c.out.Trace = nil
	if c.tracer != nil {
		c.tracer.buf = c.tracer.buf[:0]
	}
}

// process acts on what the reliable endpoint has ready (deliveries,
// gaps, frames), then on what the time core has ready as a result. The
// reliable endpoint delivers only what Step handed it, and acting on the
// time core's decisions only sends (the endpoint's frames, collected by
// the next pass), so one pass of each is all there is: no round trips
// between the two.
func (c *Core) process() {
	c.relPass(false)
	if c.checkDeparting() {
		c.relPass(false) // what the forgotten senders' streams held
	}
	c.seeTime()
	for i := 0; c.timeCore.HasReady(); i++ {
		if i == maxTimeRounds {
			panic("core: the time core keeps having work ready after acting on it")
		}
		tr := c.timeCore.Ready()
		c.actOnTime(tr)
		c.timeCore.Advance(tr)
	}
	if c.saveRestore.save.phase != saveIdle {
		c.saveRestoreProcess()
	}
	if len(c.mom.pending) > 0 {
		c.momRunPending()
		c.process() // what the services did
	}
}

// maxTimeRounds bounds the time core's Ready rounds in one process: a
// Ready holds the deliveries before a callback, and the rest waits for
// the next one, so a few rounds drain it.
const maxTimeRounds = 1 << 16

// relPass takes what the reliable endpoint has ready, until it has
// nothing more: acting on a delivery may add to it (a resign notice
// forgets its sender, whose held messages become deliveries or gaps).
// sealing says the pass only collects frames (Ready's last pass): the
// time core's work, done in between, only sends, so a delivery then
// would mean something stepped the endpoint behind the core's back.
func (c *Core) relPass(sealing bool) {
	for n := 0; c.endpoint.HasReady(); n++ {
		if n == maxRelRounds {
			panic("core: the reliable endpoint keeps having work ready after acting on it")
		}
		rd := c.endpoint.Ready()
		for _, o := range rd.Out {
			c.out.Frames = append(c.out.Frames, dgram.Packet{Group: o.Group, Data: o.Frame})
		}
		if sealing && (len(rd.Deliver) > 0 || len(rd.Gaps) > 0) {
			panic("core: the reliable endpoint delivered in the sealing pass")
		}
		// Where each sender's stream starts for us: nothing below is
		// owed, so the time core must not wait for it.
		for _, st := range rd.Starts {
			c.timeCore.Gap(lbts.FederateID(st.From), uint32(st.Group), st.Seq-1)
			c.noteStart(st)
		}
		for _, d := range rd.Deliver {
			c.onData(d)
		}
		for _, g := range rd.Gaps {
			if lost := c.freshLost(g); lost > 0 {
				c.stats.Gaps++
				if c.tracer != nil {
					c.traceGap(FederateHandle(g.From), lost)
				}
				c.out.Events = append(c.out.Events, hla.MessagesLost{Producer: FederateHandle(g.From), Messages: lost})
			}
			c.timeCore.Gap(lbts.FederateID(g.From), uint32(g.Group), g.ToSeq)
		}
		c.endpoint.Advance(rd)
	}
}

// maxRelRounds bounds relPass: each round acts on what the one before
// added, and only a resign notice adds deliveries.
const maxRelRounds = 1 << 16

// push queues events for the federate.
func (c *Core) push(evs ...Event) { c.out.Events = append(c.out.Events, evs...) }

// Blocked reports whether a group a refused send met (ErrBlocked) is
// still blocked; once none is, the send may be tried again.
func (c *Core) Blocked() bool {
	for g := range c.blockedOn {
		if c.endpoint.Blocked(g) {
			return true
		}
		delete(c.blockedOn, g)
	}
	return false
}

// blocked reports whether a reliable message of outs would go to a group
// whose backlog is full, and then remembers the group.
func (c *Core) blocked(outs []outMsg) bool {
	for _, o := range outs {
		if o.reliable && c.endpoint.Blocked(o.group) {
			c.blockedOn[o.group] = true
			c.stats.Blocked++
			return true
		}
	}
	return false
}

// Seal seals every open bundle, for a federate that stops: the next
// Ready holds every frame.
func (c *Core) Seal() { c.endpoint.Flush() }

// check returns the error a service gets from a federate that is no
// longer joined, or nil.
func (c *Core) check() error { return c.federation.serviceError() }

// outMsg is a message the core wants sent.
type outMsg struct {
	group    dgram.Group
	reliable bool
	to       FederateHandle // when set, best effort to that federate alone (reliable.SendAimed)
	msg      *wireMsg
	// also are more groups the same message (one id) goes to: the cell
	// groups of an update or interaction sent with regions.
	also []dgram.Group
}

// send hands one message to the reliable layer and returns its sequence
// number on the group (reliable messages).
func (c *Core) send(o outMsg) (uint64, error) {
	c.msgID++
	o.msg.ID = c.msgID
	o.msg.Branch = c.saveRestore.branch
	c.sendBuf = appendMsg(c.sendBuf[:0], o.msg) // Send copies it
	var seq uint64
	var err error
	if o.to != 0 {
		err = c.endpoint.SendAimed(o.group, reliable.NodeID(o.to), c.sendBuf)
	} else {
		seq, err = c.endpoint.Send(o.group, c.sendBuf, o.reliable)
	}
	if err != nil {
		return 0, fmt.Errorf("%w: %w", hla.ErrRTIinternalError, err)
	}
	c.stats.Sent++
	c.alsoSeqs = c.alsoSeqs[:0]
	for _, g := range o.also {
		s, err := c.endpoint.Send(g, c.sendBuf, o.reliable)
		if err != nil {
			return 0, fmt.Errorf("%w: %w", hla.ErrRTIinternalError, err)
		}
		c.alsoSeqs = append(c.alsoSeqs, s)
	}
	return seq, nil
}

// joinGroup and leaveGroup change a group's membership in the reliable
// endpoint and the time core now, and on the transport through Ready.
func (c *Core) joinGroup(g dgram.Group) {
	c.out.Groups = append(c.out.Groups, GroupChange{Group: g, Join: true})
	c.endpoint.Join(g)
	c.timeCore.Joined(uint32(g))
}

func (c *Core) leaveGroup(g dgram.Group) {
	c.endpoint.Leave(g)
	c.timeCore.Left(uint32(g))
	c.out.Groups = append(c.out.Groups, GroupChange{Group: g})
}

// applyGroups carries out what the routing table changed.
func (c *Core) applyGroups(ch groupDelta) {
	for _, g := range ch.join {
		c.joinGroup(g)
	}
	for _, g := range ch.leave {
		c.leaveGroup(g)
	}
}

// keep returns a copy of the reused receive message m that may outlive
// this delivery (its values still point into the frame, which is not
// reused).
func keep(m *wireMsg) *wireMsg {
	cp := *m
	cp.Pairs = slices.Clone(m.Pairs)
	return &cp
}

// Receivers returns the receivers the reliable endpoint knows on group g
// (for tests and diagnostics).
func (c *Core) Receivers(g dgram.Group) []reliable.NodeID { return c.endpoint.Receivers(g) }
