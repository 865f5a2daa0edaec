package gossip

// This file holds the loop goroutine's side of the Cluster: acting on the
// replica's output, sending, waiting for decisions, and housekeeping.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/meshrti/meshrti/gossip/internal/agree"
)

// process acts on what the replica asks for.
func (c *Cluster) process(rd agree.Ready) {
	c.stats.rejected.Store(c.core.Rejected)
	if c.core.Mismatch > c.mismatch {
		if c.mismatch == 0 {
			c.log.Error().Msg("messages from another agreement log in this cluster: more than one node founded it (started without seeds); their decisions are separate")
		}
		c.mismatch = c.core.Mismatch
	}
	if rd.Empty() {
		return
	}
	if len(rd.Changes) > 0 {
		c.refreshView(rd.Changes)
	}
	if !c.isSynced && c.core.Synced() {
		c.isSynced = true
		close(c.synced)
	}
	for _, m := range rd.Messages {
		c.send(m)
	}
	for _, d := range rd.Done {
		w := c.waiters[d.Seq]
		if w == nil {
			continue
		}
		delete(c.waiters, d.Seq)
		if w.fn != nil {
			w.fn(d.Result)
		} else {
			w.ch <- d.Result
		}
	}
	for _, id := range rd.Reads {
		r := c.readers[id]
		if r == nil {
			continue
		}
		delete(c.readers, id)
		if r.fill != nil {
			r.fill(c.core.State())
		}
		close(r.ch)
	}
	if rd.SyncStalled != "" {
		if p := c.otherAlive(rd.SyncStalled); p != "" {
			c.stats.syncsRedirected.Add(1)
			c.log.Debug().Str("from", p).Str("unanswered", rd.SyncStalled).Msg("asking another member for the agreement log")
			c.core.SyncFrom(p)
			c.process(c.core.Ready())
		}
	}
}

// otherAlive returns an alive member other than this node and except,
// picked at random; "" when there is none.
func (c *Cluster) otherAlive(except string) string {
	var names []string
	for _, m := range c.Members() { // sorted: the pick depends on the seed alone
		if m.Name != except && m.Name != c.cfg.NodeName {
			names = append(names, m.Name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return names[c.rng.IntN(len(names))]
}

// refreshView publishes the replica's state to other goroutines and
// turns changes into events.
func (c *Cluster) refreshView(changes []agree.Change) {
	f := c.core.State()
	if f == nil {
		return
	}
	var evs []Event
	c.viewMu.Lock()
	old := c.view
	c.view.log, c.view.index = f.Log, f.Index
	c.view.roster = append([]agree.NodeID(nil), f.Roster...)
	c.view.fed = f.Fed.Clone()
	snapshot := changes == nil
	for _, ch := range changes {
		switch ch.Kind {
		case agree.ChKey:
			c.view.keys[ch.Key] = ch.Entry
			evs = append(evs, Event{Kind: EventKeyChanged, Key: ch.Key, Entry: entryOf(ch.Key, ch.Entry)})
		case agree.ChFedCreated:
			evs = append(evs, Event{Kind: EventFederationCreated, Modules: modulesOf(ch.Modules)})
		case agree.ChFedModules:
			evs = append(evs, Event{Kind: EventFederationModulesChanged, Modules: modulesOf(ch.Modules)})
		case agree.ChFedDestroyed:
			evs = append(evs, Event{Kind: EventFederationDestroyed})
		case agree.ChFederateJoined:
			evs = append(evs, Event{Kind: EventFederateJoined, Federate: federateInfo(ch.Federate)})
		case agree.ChFederateResigned:
			evs = append(evs, Event{Kind: EventFederateResigned, Federate: federateInfo(ch.Federate), Lost: ch.Lost})
		case agree.ChSnapshot:
			snapshot = true
		}
	}
	if snapshot {
		c.view.keys = make(map[string]agree.KeyEntry, len(f.Keys))
		for k, e := range f.Keys {
			c.view.keys[k] = e
		}
		if changes != nil {
			evs = append(evs, diffViews(old, c.view)...)
		}
	}
	c.viewMu.Unlock()
	for _, ev := range evs {
		if ev.Kind == EventFederateResigned && ev.Lost && ev.Federate.Node == c.id.Name && !c.leaving.Load() {
			c.log.Warn().Str("federate", ev.Federate.Name).Msg("this node's federate was declared lost by the other members")
			_ = c.updateMeta(func(m *Meta) { m.FederateName, m.FederateType, m.FederateHandle = "", "", 0 }, nil)
		}
	}
	c.events.push(evs...)
}

// diffViews turns the replacement of a whole state (a snapshot) into the
// events the individual changes would have produced.
func diffViews(old, cur view) []Event {
	var evs []Event
	if old.fed == nil && cur.fed != nil {
		evs = append(evs, Event{Kind: EventFederationCreated, Modules: modulesOf(cur.fed.Modules)})
	}
	if old.fed != nil && cur.fed != nil && !sameModules(old.fed.Modules, cur.fed.Modules) {
		evs = append(evs, Event{Kind: EventFederationModulesChanged, Modules: modulesOf(cur.fed.Modules)})
	}
	oldFeds := map[uint64]agree.FederateRec{}
	if old.fed != nil {
		for _, fr := range old.fed.Federates {
			oldFeds[fr.Handle] = fr
		}
	}
	if cur.fed != nil {
		for _, fr := range cur.fed.Federates {
			if _, ok := oldFeds[fr.Handle]; !ok {
				evs = append(evs, Event{Kind: EventFederateJoined, Federate: federateInfo(fr)})
			}
			delete(oldFeds, fr.Handle)
		}
	}
	var gone []agree.FederateRec
	for _, fr := range oldFeds {
		gone = append(gone, fr)
	}
	sort.Slice(gone, func(i, j int) bool { return gone[i].Handle < gone[j].Handle })
	for _, fr := range gone {
		lost := cur.fed != nil && slices.Contains(cur.fed.Lost, fr.Handle)
		evs = append(evs, Event{Kind: EventFederateResigned, Federate: federateInfo(fr), Lost: lost})
	}
	if old.fed != nil && cur.fed == nil {
		evs = append(evs, Event{Kind: EventFederationDestroyed})
	}
	var keys []string
	for k, e := range cur.keys {
		if o, ok := old.keys[k]; !ok || o.Version != e.Version {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		evs = append(evs, Event{Kind: EventKeyChanged, Key: k, Entry: entryOf(k, cur.keys[k])})
	}
	return evs
}

func sameModules(a, b []agree.ModuleRec) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Digest != b[i].Digest {
			return false
		}
	}
	return true
}

// send hands one replica message to the network.
func (c *Cluster) send(m agree.Message) {
	if m.To.Name == "" {
		buf := encodeWire(wireAgree, m)
		if len(buf) > maxGossip {
			// Too big for gossip: spread only the fact that the instance
			// is decided; a node that misses it asks for the entry.
			m.Value, m.HasValue = nil, false
			buf = encodeWire(wireAgree, m)
		}
		c.bcast.QueueBroadcast(uniqueBroadcast(buf))
		return
	}
	c.sendTo(m.To.Name, encodeWire(wireAgree, m))
}

// sendTo queues buf for name on that member's sender goroutine, which
// uses memberlist's reliable (TCP) channel. It runs on the loop.
func (c *Cluster) sendTo(name string, buf []byte) {
	if name == c.cfg.NodeName {
		return
	}
	s := c.senders[name]
	if s == nil {
		s = &sender{name: name, ch: make(chan []byte, 1024), stop: make(chan struct{})}
		c.senders[name] = s
		c.wg.Add(1)
		go c.runSender(s)
	}
	select {
	case s.ch <- buf:
	default:
		c.log.Debug().Str("to", name).Msg("send queue full; message dropped")
	}
}

// sender owns the reliable sends to one member, so that a slow or dead
// member delays nobody else.
type sender struct {
	name string
	ch   chan []byte
	stop chan struct{}
}

func (c *Cluster) runSender(s *sender) {
	defer c.wg.Done()
	for {
		select {
		case <-c.done:
			return
		case <-s.stop:
			return
		case buf := <-s.ch:
			ml := c.mlp.Load()
			node, ok := c.memberNode(s.name)
			if ml == nil || !ok {
				continue
			}
			if err := ml.SendReliable(node, buf); err != nil {
				c.log.Debug().Err(err).Str("to", s.name).Msg("reliable send failed")
			}
		}
	}
}

// memberNode returns the memberlist node to address name.
func (c *Cluster) memberNode(name string) (*memberlist.Node, bool) {
	c.memMu.Lock()
	m, ok := c.members[name]
	c.memMu.Unlock()
	if !ok {
		return nil, false
	}
	return m.node(), true
}

// uniqueBroadcast is a gossip message that never replaces another.
type uniqueBroadcast []byte

func (b uniqueBroadcast) Invalidates(memberlist.Broadcast) bool { return false }
func (b uniqueBroadcast) Message() []byte                       { return b }
func (b uniqueBroadcast) Finished()                             {}
func (b uniqueBroadcast) UniqueBroadcast()                      {}

// stateBroadcast is a replicated-state entry; a newer one for the same
// (owner, key) replaces it in the queue.
type stateBroadcast struct {
	name string
	msg  []byte
}

func (b *stateBroadcast) Invalidates(o memberlist.Broadcast) bool {
	nb, ok := o.(memberlist.NamedBroadcast)
	return ok && nb.Name() == b.name
}
func (b *stateBroadcast) Message() []byte { return b.msg }
func (b *stateBroadcast) Finished()       {}
func (b *stateBroadcast) Name() string    { return b.name }

// errorFor maps an op result to the package's errors.
func errorFor(code agree.ResultCode) error {
	switch code {
	case agree.CodeOK, agree.CodeRosterFull:
		return nil
	case agree.CodeExists:
		return ErrFederationExists
	case agree.CodeNotFound:
		return ErrFederationNotFound
	case agree.CodeFederatesJoined:
		return ErrFederatesJoined
	case agree.CodeNameInUse:
		return ErrNameInUse
	case agree.CodeNotHolder:
		return ErrNotHolder
	case agree.CodeAlreadyJoined:
		return ErrAlreadyJoined
	case agree.CodeNotJoined:
		return ErrNotJoined
	case agree.CodeTimeRepresentation:
		return ErrTimeRepresentation
	case agree.CodeModulesChanged:
		return ErrModulesChanged
	case agree.CodeModulesTooLarge:
		return ErrModulesTooLarge
	case agree.CodeNotMember:
		return ErrFederateNotJoined
	case agree.CodeClusterGone:
		return ErrClusterGone
	}
	return ErrOutcomeUnknown
}

// submit proposes one op and waits for its result. It gives up with
// ErrNoQuorum when ctx ends, or when an operation timeout passes while
// too few acceptors are alive to decide (see opWait); the op may still
// be decided later.
func (c *Cluster) submit(ctx context.Context, o agree.Op) (agree.OpResult, error) {
	if c.closing.Load() {
		return agree.OpResult{}, ErrClosed
	}
	w := &waiter{ch: make(chan agree.OpResult, 1)}
	c.post(func() {
		w.seq = c.core.Submit(o)
		c.waiters[w.seq] = w
	})
	var r agree.OpResult
	err := c.opWait(ctx, func(timeout, done <-chan struct{}) bool {
		select {
		case r = <-w.ch:
			return true
		case <-timeout:
		case <-done:
		}
		return false
	})
	if err != nil && err != ErrClosed {
		c.post(func() {
			if w.seq != 0 && c.waiters[w.seq] == w {
				delete(c.waiters, w.seq)
				c.core.Cancel(w.seq)
			}
		})
	}
	return r, err
}

// barrier waits until a quorum confirms this node's applied state is
// current, then runs fill on it (on the loop).
func (c *Cluster) barrier(ctx context.Context, fill func(*agree.FSM)) error {
	if c.closing.Load() {
		return ErrClosed
	}
	r := &reader{fill: fill, ch: make(chan struct{})}
	c.post(func() {
		r.id = c.core.Read()
		c.readers[r.id] = r
	})
	err := c.opWait(ctx, func(timeout, done <-chan struct{}) bool {
		select {
		case <-r.ch:
			return true
		case <-timeout:
		case <-done:
		}
		return false
	})
	if err == nil {
		return r.err
	}
	if err != ErrClosed {
		c.post(func() {
			if r.id != 0 && c.readers[r.id] == r {
				delete(c.readers, r.id)
				c.core.CancelRead(r.id)
			}
		})
	}
	return err
}

// opWait waits for an agreement operation: wait returns true when it is
// done, false when timeout or done (the cluster's) closes first. The operation gives up with
// ErrNoQuorum when ctx ends. It also gives up when the operation timeout
// (Config.Timeout) passes, unless ctx has a deadline and a quorum of the
// acceptors is alive: then it waits one more timeout, and so on until
// ctx's deadline. A federation with no quorum answers within the
// timeout; one whose acceptors are all alive but slow (32 joins or
// resigns at once on a loaded machine, each a few rounds behind the
// others) gets as long as its caller gave.
func (c *Cluster) opWait(ctx context.Context, wait func(timeout, done <-chan struct{}) bool) error {
	_, deadline := ctx.Deadline()
	for {
		octx, cancel := context.WithTimeout(ctx, c.tm.opTimeout)
		ok := wait(octx.Done(), c.done)
		cancel()
		switch {
		case ok:
			return nil
		case c.isDone():
			return ErrClosed
		case ctx.Err() != nil || !deadline:
			return c.noQuorum(ctx)
		}
		if reachable, need := c.acceptorsAlive(); reachable < need {
			return c.noQuorum(ctx)
		}
	}
}

// isDone reports whether the cluster stopped.
func (c *Cluster) isDone() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// noQuorum builds the error for an agreement operation that timed out.
func (c *Cluster) noQuorum(ctx context.Context) error {
	if err := ctx.Err(); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	reachable, need := c.acceptorsAlive()
	c.viewMu.RLock()
	n := len(c.view.roster)
	c.viewMu.RUnlock()
	err := fmt.Errorf("%w: no decision in time (%d of %d acceptors alive, %d needed)",
		ErrNoQuorum, reachable, n, need)
	if reachable == 0 && n > 0 {
		// None alive for a whole operation timeout, longer than
		// deadGrace: the roster is gone, as checkRosterGone would have
		// said had the loop got to it first.
		err = fmt.Errorf("%w (%w)", ErrClusterGone, err)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%w: %w", err, ctx.Err())
	}
	return err
}

// acceptorsAlive counts the acceptors of the roster this node sees
// alive (itself included), and how many a decision needs.
func (c *Cluster) acceptorsAlive() (reachable, need int) {
	c.viewMu.RLock()
	roster := append([]agree.NodeID(nil), c.view.roster...)
	c.viewMu.RUnlock()
	for _, a := range roster {
		if a == c.id {
			reachable++
			continue
		}
		if m, ok := c.member(a.Name); ok && m.inc == a.Inc && (m.State == MemberAlive) {
			reachable++
		}
	}
	return reachable, agree.Quorum(len(roster))
}

// submitInternal proposes an op on the loop's behalf and returns its
// sequence number; fn gets the result on the loop. It is called on the
// loop.
func (c *Cluster) submitInternal(o agree.Op, fn func(agree.OpResult)) uint64 {
	seq := c.core.Submit(o)
	c.waiters[seq] = &waiter{seq: seq, fn: fn}
	return seq
}

// housekeep runs on the loop every few ticks: it releases the holdings of
// nodes that failure detection declared gone, grows the acceptor roster
// with live members, stops senders to gone members, and tries to reach
// dead members again.
func (c *Cluster) housekeep(now time.Time) {
	f := c.core.State()
	if f == nil || c.closing.Load() {
		return
	}
	c.reconnectDead(now)
	c.memMu.Lock()
	var aliveNames []string
	for _, m := range c.members {
		if m.State == MemberAlive {
			aliveNames = append(aliveNames, m.Name)
		}
	}
	c.memMu.Unlock()
	sort.Strings(aliveNames)
	rank := sort.SearchStrings(aliveNames, c.cfg.NodeName)
	c.core.SetLeader(c.leaderOf(f), !c.leaving.Load())
	c.checkRosterGone(f, now)

	// A node that does not see a majority of the acceptors alive is cut
	// off (a minority, or one half of two), or starved: a removal it
	// proposed could not be decided now, and would be decided later,
	// after the heal, against members alive then (Paxos completes what
	// some acceptors accepted). It proposes none until it sees a
	// majority again.
	seen := 0
	for _, a := range f.Roster {
		if a == c.id || c.status(a) == statusAlive {
			seen++
		}
	}
	majority := seen > len(f.Roster)/2

	ids := f.Identities()
	present := map[agree.NodeID]bool{}
	for _, id := range ids {
		present[id] = true
		if id == c.id {
			continue
		}
		st := c.status(id)
		if st == statusAlive {
			delete(c.lostSince, id)
			if seq, busy := c.lostBusy[id]; busy && c.core.Cancel(seq) {
				// Back before the cleanup was proposed: forget it.
				delete(c.waiters, seq)
				delete(c.lostBusy, id)
			}
			continue
		}
		if c.cfg.Heard != nil {
			if t := c.cfg.Heard(id.Name); !t.IsZero() && now.Sub(t) < c.tm.lostGrace {
				// Its federate's data still arrives: memberlist's verdict
				// is a starved prober's or a lost refutation's. The grace
				// starts over once it falls silent.
				if _, ok := c.lostSince[id]; ok {
					c.stats.lostDeferred.Add(1)
				}
				c.lostSince[id] = now
				if seq, busy := c.lostBusy[id]; busy && c.core.Cancel(seq) {
					delete(c.waiters, seq)
					delete(c.lostBusy, id)
				}
				continue
			}
		}
		first, ok := c.lostSince[id]
		if !ok {
			first = now
			c.lostSince[id] = now
		}
		if !majority {
			c.stats.lostNoMajority.Add(1)
			if seq, busy := c.lostBusy[id]; busy && c.core.Cancel(seq) {
				delete(c.waiters, seq)
				delete(c.lostBusy, id)
			}
			continue
		}
		// A member memberlist declared dead may be alive and starved of
		// CPU: on a loaded machine probes time out, and the member
		// refutes its death when it hears of it. Releasing at once would
		// make a slow federate a lost one; lostGrace lets it refute
		// first (its status is alive again, and lostSince is cleared).
		wait := c.tm.lostGrace + time.Duration(rank)*c.tm.stagger
		if st == statusUnknown {
			wait += c.tm.unknownGrace
		}
		if _, busy := c.lostBusy[id]; busy || now.Sub(first) < wait {
			continue
		}
		c.log.Info().Str("lost", id.Name).Msg("releasing what a lost node held")
		c.stats.lostProposals.Add(1)
		c.lostBusy[id] = c.submitInternal(agree.Op{Kind: agree.OpLost, Node: id}, func(agree.OpResult) { delete(c.lostBusy, id) })
	}
	for id := range c.lostSince {
		if !present[id] {
			delete(c.lostSince, id)
		}
	}

	if !c.leaving.Load() && !f.InRoster(c.id) && !c.addBusy && !now.Before(c.nextAdd) {
		if want := min(f.MaxAcceptors, len(aliveNames)); len(f.Roster) < want {
			c.addBusy = true
			c.submitInternal(agree.Op{Kind: agree.OpAddAcceptor}, func(agree.OpResult) {
				c.addBusy = false
				c.nextAdd = time.Now().Add(time.Duration(c.rng.Int64N(int64(4 * c.tm.housekeep))))
			})
		}
	}

	for name, s := range c.senders {
		if m, ok := c.member(name); !ok || m.State == MemberDead || m.State == MemberLeft {
			if len(s.ch) == 0 && !rosterHasName(f.Roster, name) {
				close(s.stop)
				delete(c.senders, name)
			}
		}
	}
}

// rosterGone reports whether every acceptor of f's roster is another
// process that failure detection reports dead or gone: then no quorum
// will ever answer, and nobody can add or remove an acceptor either.
// left says every one of them said goodbye (or was replaced by a newer
// process), which is final; a member declared dead may still refute it.
func (c *Cluster) rosterGone(f *agree.FSM) (gone, left bool) {
	left = true
	for _, a := range f.Roster {
		if a == c.id || c.status(a) != statusGone {
			return false, false
		}
		if m, ok := c.member(a.Name); ok && m.inc == a.Inc && m.State != MemberLeft {
			left = false
		}
	}
	return true, left
}

// checkRosterGone fails every waiting operation once the roster is
// gone: at once when its acceptors left, after deadGrace when some were
// declared dead. A loaded machine makes memberlist's probes time out and
// declare live members dead, which they refute when they hear it; an
// operation failed on such a false alarm would be an error the caller
// never had to see.
func (c *Cluster) checkRosterGone(f *agree.FSM, now time.Time) {
	gone, left := c.rosterGone(f)
	switch {
	case !gone:
		c.goneSince = time.Time{}
	case left:
		c.failAll()
	case c.goneSince.IsZero():
		c.goneSince = now
	case now.Sub(c.goneSince) >= c.tm.deadGrace:
		c.failAll()
	}
}

// failAll answers every operation and read waiting here with
// ErrClusterGone, instead of letting each wait for its timeout.
func (c *Cluster) failAll() {
	for seq, w := range c.waiters {
		delete(c.waiters, seq)
		c.core.Cancel(seq)
		if w.fn != nil {
			w.fn(agree.OpResult{Seq: seq, Code: agree.CodeClusterGone})
		} else {
			w.ch <- agree.OpResult{Seq: seq, Code: agree.CodeClusterGone}
		}
	}
	for id, r := range c.readers {
		delete(c.readers, id)
		c.core.CancelRead(id)
		r.err = ErrClusterGone
		close(r.ch)
	}
}

// leaderOf returns the replica to forward ops to: the first acceptor of
// f's roster that failure detection reports alive (this node when it is
// one and not leaving), or zero when none is: then every node proposes
// its own ops. Nodes may disagree for a moment; that costs only duels.
func (c *Cluster) leaderOf(f *agree.FSM) agree.NodeID {
	for _, a := range f.Roster {
		if a == c.id {
			if !c.leaving.Load() {
				return a
			}
			continue
		}
		if c.status(a) == statusAlive {
			return a
		}
	}
	return agree.NodeID{}
}

func rosterHasName(r []agree.NodeID, name string) bool {
	for _, a := range r {
		if a.Name == name {
			return true
		}
	}
	return false
}

const (
	statusAlive = iota
	statusGone
	statusUnknown
)

// status says what failure detection knows of a process.
func (c *Cluster) status(id agree.NodeID) int {
	m, ok := c.member(id.Name)
	switch {
	case !ok:
		return statusUnknown
	case m.inc > id.Inc:
		return statusGone // replaced by a newer process with the same name
	case m.inc < id.Inc:
		return statusUnknown // a newer process we have not heard of yet
	case m.State == MemberDead || m.State == MemberLeft:
		return statusGone
	}
	return statusAlive
}

// maxReconnects bounds the members reconnectDead joins in one round.
const maxReconnects = 2

// reconnectDead joins the members declared dead (not left) again, every
// reconnect interval for reconnectFor after their death, one join at a
// time on a goroutine of its own. memberlist probes and gossips only to
// the members it holds alive: when a partition heals, each side holds
// the other dead and nothing would ever bring them together again (a
// member declared dead stays so until it is heard, and nobody asks). A
// join is a push-pull exchange: the sides learn each other's state,
// memberlist refutes the deaths of the living, and the side that was cut
// off catches up with the agreement log (and learns, for instance, that
// the federation removed its federate). It runs on the loop.
func (c *Cluster) reconnectDead(now time.Time) {
	if now.Before(c.nextReconnect) || c.reconnecting.Load() {
		return
	}
	c.nextReconnect = now.Add(c.tm.reconnect)
	var addrs []string
	c.memMu.Lock()
	for name, m := range c.members {
		if m.State != MemberDead || name == c.cfg.NodeName || m.Addr == "" {
			continue
		}
		if _, held := c.suspects[name]; held {
			continue // an injected suspicion: held on purpose
		}
		died, ok := c.diedAt[name]
		if !ok {
			c.diedAt[name] = now
			died = now
		}
		if now.Sub(died) < c.tm.reconnectFor {
			addrs = append(addrs, m.Addr)
		}
	}
	for name := range c.diedAt {
		if m, ok := c.members[name]; !ok || m.State != MemberDead {
			delete(c.diedAt, name)
		}
	}
	c.memMu.Unlock()
	ml := c.mlp.Load()
	if len(addrs) == 0 || ml == nil {
		return
	}
	sort.Strings(addrs)
	if len(addrs) > maxReconnects {
		// A few a round, in turns: an address cut off costs a TCP
		// timeout, and Close waits for the join under way.
		c.reconnectTurn++
		i := c.reconnectTurn % len(addrs)
		addrs = append(addrs[i:], addrs[:i]...)[:maxReconnects]
	}
	c.reconnecting.Store(true)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer c.reconnecting.Store(false)
		n, err := ml.Join(addrs)
		c.log.Debug().Strs("addrs", addrs).Int("reached", n).Err(err).Msg("reconnecting to members declared dead")
		c.stats.reconnects.Add(uint64(n))
	}()
}
