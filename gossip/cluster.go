package gossip

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/rs/zerolog"

	"github.com/meshrti/meshrti/gossip/internal/agree"
	"github.com/meshrti/meshrti/version"
)

// Cluster is this node's membership in one federation execution's
// memberlist cluster: membership and failure detection, replicated
// per-node state, and the agreement register. Its methods are safe for
// concurrent use. Start returns it; Close or Halt ends it.
type Cluster struct {
	cfg Config
	tm  timings
	log zerolog.Logger
	id  agree.NodeID

	mux    *Mux     // carries this node's gossip
	ownMux bool     // the Mux is this node's alone: closed with it
	tr     *muxNode // this node on the Mux

	mlp   atomic.Pointer[memberlist.Memberlist]
	bcast *memberlist.TransmitLimitedQueue
	alive atomic.Int32 // members alive, this node included

	// Owned by the loop goroutine.
	inbox     *funcQueue
	core      *agree.Replica
	waiters   map[uint64]*waiter
	readers   map[uint64]*reader
	senders   map[string]*sender
	lostSince map[agree.NodeID]time.Time
	goneSince time.Time               // when every acceptor was first seen gone (zero: not all are)
	lostBusy  map[agree.NodeID]uint64 // node -> seq of the pending "node is gone" op
	addBusy   bool
	nextAdd   time.Time
	rng       *rand.Rand
	synced    chan struct{}
	isSynced  bool
	mismatch  int // messages from another log seen so far

	viewMu sync.RWMutex
	view   view

	memMu   sync.Mutex
	members map[string]Member
	// suspects are the members Suspect holds dead here, with the last
	// record memberlist gave of each meanwhile (under memMu).
	suspects map[string]Member
	// diedAt is when reconnectDead first saw each dead member (under
	// memMu); nextReconnect when it tries next (the loop's);
	// reconnecting that a join is under way.
	diedAt        map[string]time.Time
	nextReconnect time.Time
	reconnectTurn int
	reconnecting  atomic.Bool
	byes          map[string]uint64 // members that said goodbye: name -> incarnation

	metaMu   sync.Mutex
	meta     Meta
	metaBuf  []byte
	metaKick chan struct{}

	stateMu sync.Mutex
	states  *stateStore

	events   *eventQueue
	eventsCh chan Event

	stats stats

	lifeMu    sync.Mutex // serializes memberlist UpdateNode with Leave/Shutdown
	leaving   atomic.Bool
	closing   atomic.Bool
	done      chan struct{}
	closeOnce sync.Once
	closeErr  error
	wg        sync.WaitGroup
}

// view is the register state other goroutines may read without the loop.
type view struct {
	log    string
	index  uint64
	roster []agree.NodeID
	keys   map[string]agree.KeyEntry
	fed    *agree.FederationRec
}

type waiter struct {
	seq uint64
	ch  chan agree.OpResult  // user op: buffered 1
	fn  func(agree.OpResult) // internal op: run on the loop
}

type reader struct {
	id   uint64
	fill func(*agree. // runs on the loop when the barrier passes
		FSM)
	ch  chan struct{}
	err error // set before ch closes when the read cannot pass
}

// newCluster returns the Cluster of process id configured by cfg and tm,
// its tables and queues made, nothing started.
func newCluster(cfg Config, tm timings, id agree.NodeID) *Cluster {
	return &Cluster{
		cfg:       cfg,
		tm:        tm,
		log:       cfg.Logger.With().Str("node", cfg.NodeName).Logger(),
		id:        id,
		inbox:     newFuncQueue(),
		waiters:   map[uint64]*waiter{},
		readers:   map[uint64]*reader{},
		senders:   map[string]*sender{},
		lostSince: map[agree.NodeID]time.Time{},
		lostBusy:  map[agree.NodeID]uint64{},
		synced:    make(chan struct{}),
		members:   map[string]Member{},
		suspects:  map[string]Member{},
		diedAt:    map[string]time.Time{},
		byes:      map[string]uint64{},
		meta:      cfg.Meta,
		metaKick:  make(chan struct{}, 1),
		states:    newStateStore(cfg.NodeName, id.Inc),
		events:    newEventQueue(),
		eventsCh:  make(chan Event),
		done:      make(chan struct{}),
	}
}

// Start creates this node's memberlist, joins Config.Seeds (none: this
// node founds the federation's agreement log) and, when joining, waits
// until it holds the agreement log. It blocks at most until ctx ends or
// the profile's sync wait passes. On error nothing is left running.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Seeds = append([]string(nil), cfg.Seeds...)
	cfg.Key = append([]byte(nil), cfg.Key...)
	if cfg.Profile == "" {
		cfg.Profile = ProfileLocal
	}
	if cfg.BindAddr == "" {
		cfg.BindAddr = "127.0.0.1"
	}
	if cfg.AdvertiseAddr == "" && cfg.BindAddr != "0.0.0.0" && cfg.BindAddr != "::" {
		cfg.AdvertiseAddr = cfg.BindAddr
	}
	src := newSources(cfg.Rand)
	cfg.Rand = nil // drawn from only here, in Start
	if cfg.NodeName == "" {
		cfg.NodeName = "node-" + src.name
	}
	if cfg.MaxAcceptors == 0 {
		cfg.MaxAcceptors = DefaultMaxAcceptors
	}
	tm := profileTimings(cfg.Profile)
	if cfg.LostGrace > 0 {
		tm.lostGrace = cfg.LostGrace
	}
	if cfg.Timeout > 0 {
		tm.opTimeout = cfg.Timeout
	}
	if cfg.Meta.ProtocolVersion == 0 {
		cfg.Meta.ProtocolVersion = version.Protocol
	}
	if cfg.Meta.Release == "" {
		cfg.Meta.Release = version.Release()
	}
	id := agree.NodeID{Name: cfg.NodeName, Inc: uint64(time.Now().UnixNano())}
	metaBuf, err := encodeMeta(cfg.Meta, id.Inc)
	if err != nil {
		return nil, err
	}
	c := newCluster(cfg, tm, id)
	c.rng = src.loop
	c.metaBuf = metaBuf
	var genesis *agree.FSM
	if len(cfg.Seeds) == 0 {
		genesis = agree.NewFSM(src.logID, id, cfg.MaxAcceptors)
	}
	c.core = newCore(id, tm, src.replica, genesis)
	c.view.keys = map[string]agree.KeyEntry{}
	if genesis != nil {
		c.isSynced = true
		close(c.synced)
		c.refreshView(nil)
	}

	if c.mux = cfg.Mux; c.mux == nil {
		c.mux, err = NewMux(MuxConfig{BindAddr: cfg.BindAddr, BindPort: cfg.BindPort, AdvertiseAddr: cfg.AdvertiseAddr, Logger: cfg.Logger})
		if err != nil {
			return nil, fmt.Errorf("gossip: starting memberlist on %s:%d: %w", cfg.BindAddr, cfg.BindPort, err)
		}
		c.ownMux = true
	}
	if c.tr, err = c.mux.attach(cfg.NodeName, cfg.Federation); err != nil {
		c.closeMux()
		return nil, err
	}
	mc, err := c.memberlistConfig()
	if err != nil {
		c.tr.Shutdown()
		c.closeMux()
		return nil, err
	}
	c.bcast = &memberlist.TransmitLimitedQueue{
		NumNodes:       func() int { return int(c.alive.Load()) },
		RetransmitMult: mc.RetransmitMult,
	}
	c.wg.Add(3)
	go c.run()
	go c.pump()
	go c.metaLoop()

	ml, err := memberlist.Create(mc)
	if err != nil {
		c.abort()
		return nil, fmt.Errorf("gossip: starting memberlist on %s: %w", c.mux.Addr(), err)
	}
	c.mlp.Store(ml)
	if len(cfg.Seeds) == 0 {
		c.tr.accepting.Store(true)
		c.log.Info().Str("addr", c.LocalNode().Addr).Msg("founded the federation's cluster")
		return c, nil
	}
	var selfAP netip.AddrPort
	if c.ownMux {
		// A shared Mux's own address reaches its other nodes: a seed.
		self := ml.LocalNode()
		selfAddr, _ := netip.AddrFromSlice(self.Addr)
		selfAP = netip.AddrPortFrom(selfAddr.Unmap(), self.Port)
	}
	seeds, err := resolveSeeds(ctx, cfg.Seeds, cfg.LookupHost, selfAP)
	if err == nil && len(seeds) == 0 {
		err = fmt.Errorf("%w: %v resolve to this node only", ErrSeedsUnreachable, cfg.Seeds)
	}
	if err == nil {
		err = c.joinSeeds(ctx, ml, seeds, tm.syncWait)
	}
	if err != nil {
		c.abort()
		return nil, err
	}
	wait := time.NewTimer(tm.syncWait)
	defer wait.Stop()
	poll := time.NewTicker(tm.tick)
	defer poll.Stop()
	sawOthers := false
	for synced := false; !synced; {
		select {
		case <-c.synced:
			synced = true
		case <-ctx.Done():
			c.abort()
			return nil, fmt.Errorf("gossip: waiting for the agreement log: %w", ctx.Err())
		case <-wait.C:
			c.abort()
			return nil, fmt.Errorf("%w: no member sent the agreement log within %v", ErrNotSynced, tm.syncWait)
		case <-poll.C:
			// The members this node joined through may leave before
			// sending the log (the last federates resigning): nobody
			// will send it then.
			n := c.alive.Load()
			sawOthers = sawOthers || n > 1
			if sawOthers && n <= 1 {
				c.abort()
				return nil, fmt.Errorf("%w: every member left before sending the agreement log", ErrClusterGone)
			}
		}
	}
	c.tr.accepting.Store(true)
	c.log.Info().Str("addr", c.LocalNode().Addr).Strs("seeds", cfg.Seeds).Msg("joined the federation's cluster")
	return c, nil
}

// joinSeeds joins the cluster through the seeds. A seed that does not
// answer within memberlist's TCP timeout (a loaded machine: the
// push-pull exchange of the join carries the replicated state) is tried
// again, at growing intervals, until budget passes or ctx ends.
func (c *Cluster) joinSeeds(ctx context.Context, ml *memberlist.Memberlist, seeds []string, budget time.Duration) error {
	end := time.Now().Add(budget)
	pause := c.tm.tick
	for {
		_, err := ml.Join(seeds)
		if err == nil {
			return nil
		}
		// Only a seed that timed out is tried again: one that refused
		// the connection is not there (a federation whose last members
		// left), and that answer must come at once (Destroy).
		// memberlist's errors (multierror, and its codec's) do not all
		// wrap the net.Error, so the text is what tells.
		if strings.Contains(err.Error(), ErrProtocolVersion.Error()) {
			return fmt.Errorf("%w: joining through %v: %s", ErrProtocolVersion, c.cfg.Seeds, protocolCause(err))
		}
		timedOut := strings.Contains(err.Error(), "timeout")
		err = fmt.Errorf("%w: joining through %v (%v): %w", ErrSeedsUnreachable, c.cfg.Seeds, seeds, err)
		if !timedOut || time.Now().Add(pause).After(end) {
			return err
		}
		c.log.Debug().Err(err).Dur("again_in", pause).Msg("no seed answered; trying again")
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (%w)", err, ctx.Err())
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Second)
	}
}

// newCore returns the replica of process id with the profile's timings.
func newCore(id agree.NodeID, tm timings, rng *rand.Rand, genesis *agree.FSM) *agree.Replica {
	return agree.NewReplica(agree.ReplicaConfig{
		ID:           id,
		Rand:         rng,
		RoundTimeout: tm.roundTimeout,
		MaxBackoff:   tm.maxBackoff,
		SyncTimeout:  tm.syncTimeout,
		RecoverAfter: tm.recoverAfter,
	}, genesis)
}

// sources are the random choices of one Cluster, drawn in Start.
type sources struct {
	name    string     // 8 hex digits for the default node name
	logID   string     // 32 hex digits: the identity of a log this node founds
	loop    *rand.Rand // the loop's choices (roster-growth pacing)
	replica *rand.Rand // the replica's backoffs
}

// newSources draws a Cluster's sources from r, in a fixed order, so that
// the same seed gives the same sources; r nil: from crypto/rand, which
// keeps log identities and default names apart across processes.
func newSources(r *rand.Rand) sources {
	u64 := func() uint64 {
		var b [8]byte
		_, _ = crand.Read(b[:])
		return binary.LittleEndian.Uint64(b[:])
	}
	if r != nil {
		u64 = r.Uint64
	}
	hexOf := func(n int) string {
		b := make([]byte, 0, n+8)
		for len(b) < n {
			b = binary.LittleEndian.AppendUint64(b, u64())
		}
		return hex.EncodeToString(b[:n])
	}
	var s sources
	s.name = hexOf(4)
	s.logID = hexOf(16)
	s.loop = rand.New(rand.NewPCG(u64(), u64()))
	s.replica = rand.New(rand.NewPCG(u64(), u64()))
	return s
}

// Close releases what this node holds in the register (its acceptor
// seat, its federate, its keys) when a quorum answers within the
// profile's leave timeout, leaves the cluster gracefully, and stops
// everything Start started, waiting for it. Other members see EventLeft.
// Close is idempotent; it closes the Events channel.
func (c *Cluster) Close() error { return c.shutdown(true) }

// Halt stops at once without telling anyone, like a crash: no release, no
// leave message. Other members declare this node dead after the failure
// detection time and see EventFailed. It waits for everything Start
// started. Meant for tests and fault injection.
func (c *Cluster) Halt() error { return c.shutdown(false) }

// Suspect makes this node's failure detector declare member name dead
// (dead true), as memberlist does when no probe answer and no
// refutation reaches this node in time, or alive again (false), as when
// a refutation arrives. Nothing is sent: the suspicion is this node's
// alone, as a starved prober's is, and it lasts until Suspect(name,
// false): meanwhile this node takes nothing memberlist says of name for a
// refutation. This node acts as on a real suspicion: EventFailed, and
// after Config.LostGrace (plus its rank's stagger) a proposal to remove
// the member; EventJoined when it clears (unless memberlist declared it
// dead meanwhile). ErrUnknownMember when this node never heard of name.
// Meant for tests and fault injection.
func (c *Cluster) Suspect(name string, dead bool) error {
	if c.closing.Load() {
		return ErrClosed
	}
	c.memMu.Lock()
	m, ok := c.members[name]
	fresh, held := c.suspects[name]
	switch {
	case !ok || name == c.cfg.NodeName:
		c.memMu.Unlock()
		return fmt.Errorf("%w: %q", ErrUnknownMember, name)
	case dead:
		c.suspects[name] = m
	case held:
		m = fresh // the last that memberlist said of it meanwhile
		delete(c.suspects, name)
	}
	c.memMu.Unlock()
	switch {
	case dead:
		m.State = MemberDead
		c.setMember(m, EventFailed)
	case m.State == MemberAlive:
		c.setMember(m, EventJoined)
	default:
		c.setMember(m, EventFailed) // memberlist declared it gone meanwhile
	}
	return nil
}

func (c *Cluster) shutdown(graceful bool) error {
	c.closeOnce.Do(func() {
		if graceful {
			c.leaving.Store(true)
			holds, seated := false, false
			c.onLoop(func() {
				if f := c.core.State(); f != nil {
					holds = slices.Contains(f.Identities(), c.id)
					seated = f.InRoster(c.id)
				}
			})
			if holds {
				// An acceptor that left with its seat would count against
				// every quorum until the others remove it, which they can
				// only do while a majority of the roster answers: when
				// several leave at once, that majority may be gone for
				// good. So an acceptor waits for its removal as long as
				// for any operation.
				budget := c.tm.leaveTimeout
				if seated {
					budget = max(budget, c.tm.opTimeout)
				}
				ctx, cancel := context.WithTimeout(context.Background(), budget)
				if _, err := c.submit(ctx, agree.Op{Kind: agree.OpLost, Node: c.id}); err != nil {
					c.log.Warn().Err(err).Msg("could not release this node's holdings before leaving; others will after failure detection")
				}
				cancel()
			}
		}
		if graceful {
			c.sayGoodbye()
		}
		c.closing.Store(true)
		c.lifeMu.Lock()
		if ml := c.mlp.Load(); ml != nil {
			if graceful {
				if err := ml.Leave(c.tm.leaveTimeout); err != nil {
					c.log.Debug().Err(err).Msg("leave")
				}
			}
			c.closeErr = ml.Shutdown()
		}
		c.lifeMu.Unlock()
		close(c.done)
		c.wg.Wait()
		c.tr.Shutdown()
		c.closeMux()
	})
	return c.closeErr
}

// closeMux closes the Mux when it is this node's alone.
func (c *Cluster) closeMux() {
	if c.ownMux {
		_ = c.mux.Close()
	}
}

// sayGoodbye tells every member, over the reliable channel, that this
// node is leaving on purpose, so that they report EventLeft rather than
// EventFailed (memberlist's leave notification does not say which). Each
// send is bounded by memberlist's TCP timeout.
func (c *Cluster) sayGoodbye() {
	ml := c.mlp.Load()
	if ml == nil {
		return
	}
	// The latest decisions first, on the same channel: one this node was
	// the last to learn must not leave with it (agree.Replica.Farewell).
	var bufs [][]byte
	c.onLoop(func() {
		for _, m := range c.core.Farewell(farewellEntries) {
			bufs = append(bufs, encodeWire(wireAgree, m))
		}
	})
	bufs = append(bufs, encodeWire(wireBye, agree.NodeID{Name: c.cfg.NodeName, Inc: c.id.Inc}))
	var wg sync.WaitGroup
	for _, m := range c.Members() {
		if m.Name == c.cfg.NodeName {
			continue
		}
		wg.Add(1)
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			defer wg.Done()
			for _, buf := range bufs {
				if ml.SendReliable(m.node(), buf) != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
}

// farewellEntries is how many of the latest decisions a leaving node
// hands every member directly (sayGoodbye).
const farewellEntries = 4

// abort stops a half-started Cluster.
func (c *Cluster) abort() {
	c.closing.Store(true)
	c.closeOnce.Do(func() {
		c.lifeMu.Lock()
		if ml := c.mlp.Load(); ml != nil {
			_ = ml.Shutdown()
		}
		c.lifeMu.Unlock()
		close(c.done)
		c.wg.Wait()
		c.tr.Shutdown()
		c.closeMux()
	})
}

// Events returns the stream of membership, state, register and
// federation events, in the order this node saw them. One goroutine
// feeds it from an unbounded queue, so memberlist is never blocked and
// no event is dropped while the Cluster runs; read it, or memory grows.
// It is closed when the Cluster stops.
func (c *Cluster) Events() <-chan Event { return c.eventsCh }

// LocalNode returns this node as a Member.
func (c *Cluster) LocalNode() Member {
	m, ok := c.member(c.cfg.NodeName)
	if !ok {
		m = Member{Name: c.cfg.NodeName, inc: c.id.Inc}
	}
	m.Meta = c.Meta()
	return m
}

// Name returns this node's name.
func (c *Cluster) Name() string { return c.cfg.NodeName }

// aliveMembers returns the members alive (this node included), in no order.
func (c *Cluster) aliveMembers() []Member {
	c.memMu.Lock()
	var out []Member
	for _, m := range c.members {
		if m.State == MemberAlive {
			out = append(out, m)
		}
	}
	c.memMu.Unlock()
	return out
}

// Members returns the members alive (this node included), sorted by
// name. The view comes from memberlist's notifications.
func (c *Cluster) Members() []Member {
	out := c.aliveMembers()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Meta returns this node's current metadata.
func (c *Cluster) Meta() Meta {
	c.metaMu.Lock()
	defer c.metaMu.Unlock()
	return c.meta
}

// SetMeta replaces this node's metadata (the federate fields included)
// and spreads it in the background. It returns ErrMetaTooLarge when the
// encoding exceeds 512 bytes; it does not block.
func (c *Cluster) SetMeta(m Meta) error {
	if c.closing.Load() {
		return ErrClosed
	}
	return c.updateMeta(func(*Meta) {}, &m)
}

func (c *Cluster) updateMeta(edit func(*Meta), replace *Meta) error {
	c.metaMu.Lock()
	m := c.meta
	if replace != nil {
		m = *replace
	}
	edit(&m)
	m.ProtocolVersion, m.Release = c.cfg.Meta.ProtocolVersion, c.cfg.Meta.Release // not the caller's to change
	buf, err := encodeMeta(m, c.id.Inc)
	if err == nil {
		c.meta, c.metaBuf = m, buf
	}
	c.metaMu.Unlock()
	if err == nil {
		select {
		case c.metaKick <- struct{}{}:
		default:
		}
	}
	return err
}

// metaLoop re-advertises this node whenever its metadata changes.
func (c *Cluster) metaLoop() {
	defer c.wg.Done()
	for {
		select {
		case <-c.done:
			return
		case <-c.metaKick:
		}
		c.lifeMu.Lock()
		if ml := c.mlp.Load(); ml != nil && !c.closing.Load() {
			// UpdateNode waits for the broadcast to leave; a timeout only
			// means it is still queued.
			_ = ml.UpdateNode(c.tm.metaTimeout)
		}
		c.lifeMu.Unlock()
	}
}

// pump moves events from the unbounded queue to the Events channel.
func (c *Cluster) pump() {
	defer c.wg.Done()
	defer close(c.eventsCh)
	for {
		ev, ok := c.events.pop()
		if !ok {
			select {
			case <-c.events.signal:
				continue
			case <-c.done:
				return
			}
		}
		select {
		case c.eventsCh <- ev:
		case <-c.done:
			return
		}
	}
}

// post runs f on the loop goroutine.
func (c *Cluster) post(f func()) { c.inbox.push(f) }

// onLoop runs f on the loop goroutine and waits for it; false when the
// Cluster stopped first.
func (c *Cluster) onLoop(f func()) bool {
	done := make(chan struct{})
	c.post(func() { f(); close(done) })
	select {
	case <-done:
		return true
	case <-c.done:
		return false
	}
}

// run is the loop: it owns the replica, the waiters and the senders.
func (c *Cluster) run() {
	defer c.wg.Done()
	tick := time.NewTicker(c.tm.tick)
	defer tick.Stop()
	var lastHK time.Time
	for {
		select {
		case <-c.done:
			return
		case now := <-tick.C:
			c.core.Tick()
			if now.Sub(lastHK) >= c.tm.housekeep {
				lastHK = now
				c.housekeep(now)
			}
		case <-c.inbox.signal:
			for _, f := range c.inbox.drain() {
				f()
			}
		}
		c.process(c.core.Ready())
	}
}
