package transport

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// DefaultMemBuffer is the receive queue length of a MemEndpoint when
// NetworkConfig.Buffer is zero.
const DefaultMemBuffer = 8192

// NetworkConfig configures an in-memory Network. The zero value is usable.
type NetworkConfig struct {
	// Seed seeds the fault injection. Two networks with the same seed, the
	// same faults and the same sequence of calls make the same choices.
	Seed int64
	// Buffer is the receive queue length of each endpoint. A packet that
	// arrives at a full queue is dropped and counted. Zero means
	// DefaultMemBuffer.
	Buffer int
	// Clock, when set, runs the network's delays (Faults.Delay, Jitter
	// and the hold of a reordered packet) instead of real timers: a
	// simulator's virtual clock.
	Clock Clock
	// Deliver, when set, receives every packet the network would put on
	// an endpoint's receive queue, instead of the queue (Buffer then does
	// not apply and Recv delivers nothing): a simulator hands it to the
	// receiver itself. It is called with the network's lock held and
	// must not call the network, from Send or, for a delayed packet, from
	// the clock's call: a simulator that wants one goroutine sets Clock
	// too.
	Deliver func(to *MemEndpoint, p Packet)
}

// Clock schedules functions after a delay: real time (time.AfterFunc)
// unless NetworkConfig.Clock says otherwise.
type Clock interface {
	// AfterFunc calls f, on a goroutine of the clock's choosing, once d
	// has passed, unless the returned Timer is stopped first.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a call scheduled by a Clock.
type Timer interface {
	// Stop cancels the call; it reports false when the call already
	// started or was stopped.
	Stop() bool
}

type realClock struct{}

func (realClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// Faults describes what a link does to the packets it carries. The zero
// value is a perfect link.
type Faults struct {
	// Loss is the probability, in [0, 1], that a packet is dropped.
	Loss float64
	// Duplicate is the probability, in [0, 1], that a packet is delivered
	// twice. Each copy gets its own delay.
	Duplicate float64
	// Reorder is the probability, in [0, 1], that a packet is held back on
	// its link and delivered right after the next packet on that link (or,
	// when no packet follows, after Delay+Jitter+1ms).
	Reorder float64
	// Delay is added to every packet.
	Delay time.Duration
	// Jitter adds a uniformly random delay in [0, Jitter) to every packet.
	Jitter time.Duration
	// Corrupt is the probability, in [0, 1], that a delivered copy of a
	// packet has 1 to 3 of its bits flipped (distinct bits, chosen at
	// random). Only the receiver's copy changes, never the sender's
	// buffer; each copy of a duplicated packet is corrupted or not on its
	// own. Empty packets are never corrupted.
	Corrupt float64
}

func (f Faults) validate() {
	for _, p := range []float64{f.Loss, f.Duplicate, f.Reorder, f.Corrupt} {
		if !(p >= 0 && p <= 1) {
			panic(fmt.Sprintf("transport: fault probability %v out of [0, 1]", p))
		}
	}
	if f.Delay < 0 || f.Jitter < 0 {
		panic("transport: negative fault delay")
	}
}

// NetworkStats counts what a Network did with the packets sent on it.
// Counts are per receiver: one Send to three receivers that all get it
// counts three deliveries.
type NetworkStats struct {
	Sent        uint64 // Send calls that were accepted
	Delivered   uint64 // packets put on a receive queue
	Lost        uint64 // dropped by the Loss fault
	Duplicated  uint64 // extra copies made by the Duplicate fault
	Reordered   uint64 // packets held back by the Reorder fault
	Overflow    uint64 // dropped because the receive queue was full
	Partitioned uint64 // dropped because sender and receiver were partitioned
	Crashed     uint64 // dropped because the sender or the receiver had crashed
	Corrupted   uint64 // copies with bits flipped by the Corrupt fault
}

type link struct{ from, to string }

// Network is an in-memory multicast network for tests and testnet. Its
// endpoints implement Transport. Faults, partitions and crashes can be
// changed at any time and apply to packets sent afterwards.
//
// Network starts no goroutine of its own: delayed packets use time.AfterFunc
// timers owned by the receiving endpoint, so a Network works inside a
// testing/synctest bubble (create it inside the bubble). Where no delay is
// involved (Delay, Jitter and Reorder zero), packets are delivered inside
// Send, and a seed fully determines the outcome of a sequence of calls.
// With a virtual clock and a Deliver function (NetworkConfig), it does
// with every fault: a simulator that makes its calls from one goroutine
// in an order of its own replays a run from its seed.
//
// All methods are safe for concurrent use.
type Network struct {
	mu      sync.Mutex
	rng     *rand.Rand
	buffer  int
	clock   Clock
	deliver func(*MemEndpoint, Packet)
	faults  Faults
	links   map[link]Faults
	eps     map[string]*MemEndpoint
	order   []*MemEndpoint // live endpoints in creation order
	// members lists each group's members in creation order: a datagram
	// visits its group's members only (with a thousand endpoints, most
	// frames go to one inbox).
	members     map[Group][]*MemEndpoint
	created     uint64         // endpoints created so far
	side        map[string]int // partition side; absent means side 0
	partitioned bool
	crashed     map[string]bool
	stats       NetworkStats
}

// NewNetwork returns an empty network with no faults.
func NewNetwork(cfg NetworkConfig) *Network {
	if cfg.Buffer <= 0 {
		cfg.Buffer = DefaultMemBuffer
	}
	if cfg.Clock == nil {
		cfg.Clock = realClock{}
	}
	seed := uint64(cfg.Seed)
	return &Network{
		rng:     rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		buffer:  cfg.Buffer,
		clock:   cfg.Clock,
		deliver: cfg.Deliver,
		links:   make(map[link]Faults),
		eps:     make(map[string]*MemEndpoint),
		side:    make(map[string]int),
		crashed: make(map[string]bool),
		members: make(map[Group][]*MemEndpoint),
	}
}

// Endpoint attaches a new endpoint called name. Names are unique among the
// open endpoints: Endpoint panics if name is in use. Once the endpoint is
// closed its name may be reused; the new endpoint starts uncrashed (a
// restart).
func (n *Network) Endpoint(name string) *MemEndpoint {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.eps[name]; ok {
		panic(fmt.Sprintf("transport: endpoint %q already open", name))
	}
	buffer := n.buffer
	if n.deliver != nil {
		buffer = 0 // nothing is queued: Deliver takes every packet
	}
	ep := &MemEndpoint{
		net:    n,
		name:   name,
		recv:   make(chan Packet, buffer),
		groups: make(map[Group]bool),
		held:   make(map[string]*memTimer),
		seq:    n.created,
	}
	n.created++
	n.eps[name] = ep
	n.order = append(n.order, ep)
	delete(n.crashed, name)
	return ep
}

// SetFaults sets the faults of every link that has no faults of its own
// (see SetLinkFaults). It panics if a probability is outside [0, 1] or a
// duration is negative.
func (n *Network) SetFaults(f Faults) {
	f.validate()
	n.mu.Lock()
	n.faults = f
	n.mu.Unlock()
}

// SetLinkFaults sets the faults of the one-way link from one endpoint to
// another, overriding SetFaults for that link. Setting Faults{} makes the
// link perfect; ClearLinkFaults returns it to the network-wide faults.
func (n *Network) SetLinkFaults(from, to string, f Faults) {
	f.validate()
	n.mu.Lock()
	n.links[link{from, to}] = f
	n.mu.Unlock()
}

// ClearLinkFaults makes the link from one endpoint to another use the
// network-wide faults again.
func (n *Network) ClearLinkFaults(from, to string) {
	n.mu.Lock()
	delete(n.links, link{from, to})
	n.mu.Unlock()
}

// Partition splits the network: packets pass only between endpoints of the
// same side. Each argument lists the names on one side; every name not
// listed is on one more side, shared by all of them. A new Partition
// replaces the previous one.
func (n *Network) Partition(groups ...[]string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	clear(n.side)
	for i, g := range groups {
		for _, name := range g {
			n.side[name] = i + 1
		}
	}
	n.partitioned = true
}

// Heal removes the partition.
func (n *Network) Heal() {
	n.mu.Lock()
	defer n.mu.Unlock()
	clear(n.side)
	n.partitioned = false
}

// Crash stops the named endpoint: what it sends is dropped, nothing is
// delivered to it any more, and packets in flight to it are lost. Its
// methods keep working, so its owner notices nothing but silence. Closing
// it and opening a new endpoint with the same name models a restart.
func (n *Network) Crash(name string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.crashed[name] = true
	if ep, ok := n.eps[name]; ok {
		for from, t := range ep.held {
			ep.stopLocked(t)
			delete(ep.held, from)
			n.stats.Crashed++
		}
	}
}

// Stats returns the counts so far.
func (n *Network) Stats() NetworkStats {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.stats
}

func (n *Network) faultsLocked(from, to string) Faults {
	if f, ok := n.links[link{from, to}]; ok {
		return f
	}
	return n.faults
}

// MemEndpoint is one node's attachment to a Network. It implements
// Transport; all methods are safe for concurrent use, and none blocks
// except Close, which waits for the delivery timers it owns.
type MemEndpoint struct {
	net  *Network
	name string
	recv chan Packet
	wg   sync.WaitGroup // one per pending timer

	seq uint64 // creation order

	// Guarded by net.mu.
	closed bool
	groups map[Group]bool
	timers []*memTimer          // pending, each at its index
	held   map[string]*memTimer // reorder slot per sender
}

// memTimer is a packet in flight to an endpoint.
type memTimer struct {
	t       Timer
	idx     int // in the endpoint's pending timers; -1 when not pending
	from    string
	pkt     Packet
	reorder bool // hold back on arrival
	flush   bool // the timer of a held packet
}

// Name returns the endpoint's name.
func (ep *MemEndpoint) Name() string { return ep.name }

// Join implements Transport.
func (ep *MemEndpoint) Join(g Group) error {
	ep.net.mu.Lock()
	defer ep.net.mu.Unlock()
	if ep.closed {
		return ErrClosed
	}
	if !ep.groups[g] {
		ep.groups[g] = true
		n := ep.net
		ms := n.members[g]
		i, _ := slices.BinarySearchFunc(ms, ep.seq, func(m *MemEndpoint, seq uint64) int { return cmp.Compare(m.seq, seq) })
		n.members[g] = slices.Insert(ms, i, ep)
	}
	return nil
}

// dropMemberLocked removes ep from g's member list.
func (n *Network) dropMemberLocked(ep *MemEndpoint, g Group) {
	ms := slices.DeleteFunc(n.members[g], func(m *MemEndpoint) bool { return m == ep })
	if len(ms) == 0 {
		delete(n.members, g)
		return
	}
	n.members[g] = ms
}

// Leave implements Transport. Packets of g still in flight are dropped on
// arrival.
func (ep *MemEndpoint) Leave(g Group) error {
	ep.net.mu.Lock()
	defer ep.net.mu.Unlock()
	if ep.closed {
		return ErrClosed
	}
	if ep.groups[g] {
		delete(ep.groups, g)
		ep.net.dropMemberLocked(ep, g)
	}
	return nil
}

// Recv implements Transport.
func (ep *MemEndpoint) Recv() <-chan Packet { return ep.recv }

// Send implements Transport. It copies b once per receiver, applies the
// faults of each link, and returns at once; it never blocks. A crashed
// endpoint's packets are dropped without an error.
func (ep *MemEndpoint) Send(g Group, b []byte) error {
	n := ep.net
	n.mu.Lock()
	defer n.mu.Unlock()
	if ep.closed {
		return ErrClosed
	}
	ep.sendLocked(g, b)
	return nil
}

// SendBatch implements BatchSender: it sends the packets in slice order,
// each exactly as Send would, faults applied per datagram, under one
// acquisition of the network's lock. It never blocks. It returns
// len(pkts) and nil, or 0 and ErrClosed when the endpoint is closed.
func (ep *MemEndpoint) SendBatch(pkts []Packet) (sent int, err error) {
	n := ep.net
	n.mu.Lock()
	defer n.mu.Unlock()
	if ep.closed {
		return 0, ErrClosed
	}
	for _, p := range pkts {
		ep.sendLocked(p.Group, p.Data)
	}
	return len(pkts), nil
}

// sendLocked sends one datagram from ep to every member of g.
func (ep *MemEndpoint) sendLocked(g Group, b []byte) {
	n := ep.net
	if n.crashed[ep.name] {
		n.stats.Crashed++
		return
	}
	n.stats.Sent++
	// One copy serves every receiver: receivers own their packets but
	// never modify them. Only a corrupted copy is made for its receiver.
	var shared []byte
	for _, to := range n.members[g] {
		if to == ep {
			continue
		}
		ep.carryLocked(to, g, b, &shared)
	}
}

// carryLocked takes one datagram from ep to one receiver, through the
// link's partition, crash and faults. *shared is the copy of b that the
// receivers share, made on first need.
func (ep *MemEndpoint) carryLocked(to *MemEndpoint, g Group, b []byte, shared *[]byte) {
	n := ep.net
	if n.partitioned && n.side[ep.name] != n.side[to.name] {
		n.stats.Partitioned++
		return
	}
	if n.crashed[to.name] {
		n.stats.Crashed++
		return
	}
	f := n.faultsLocked(ep.name, to.name)
	if f.Loss > 0 && n.rng.Float64() < f.Loss {
		n.stats.Lost++
		return
	}
	copies := 1
	if f.Duplicate > 0 && n.rng.Float64() < f.Duplicate {
		copies = 2
		n.stats.Duplicated++
	}
	for range copies {
		d := f.Delay
		if f.Jitter > 0 {
			d += time.Duration(n.rng.Int64N(int64(f.Jitter)))
		}
		reorder := f.Reorder > 0 && n.rng.Float64() < f.Reorder
		if *shared == nil {
			*shared = append(make([]byte, 0, len(b)), b...)
		}
		pkt := Packet{Group: g, Data: (*shared)[:len(*shared):len(*shared)]}
		if f.Corrupt > 0 && len(b) > 0 && n.rng.Float64() < f.Corrupt {
			pkt.Data = append([]byte(nil), b...)
			flipBits(n.rng, pkt.Data)
			n.stats.Corrupted++
		}
		if d > 0 {
			to.scheduleLocked(&memTimer{from: ep.name, pkt: pkt, reorder: reorder}, d)
			continue
		}
		to.arriveLocked(ep.name, pkt, reorder, f)
	}
}

// flipBits flips 1 to 3 distinct bits of b, chosen with rng (fewer when b
// has fewer bits). b must not be empty.
func flipBits(rng *rand.Rand, b []byte) {
	bits := len(b) * 8
	k := min(1+rng.IntN(3), bits)
	var done [3]int
	for i := 0; i < k; {
		pos := rng.IntN(bits)
		if slices.Contains(done[:i], pos) {
			continue
		}
		done[i] = pos
		b[pos/8] ^= 1 << (pos % 8)
		i++
	}
}

// arriveLocked handles a packet reaching ep: it is held back (reorder),
// or queued, followed by the packet held back on the same link if any.
func (ep *MemEndpoint) arriveLocked(from string, pkt Packet, reorder bool, f Faults) {
	n := ep.net
	if ep.closed || n.crashed[ep.name] {
		n.stats.Crashed++
		return
	}
	held := ep.held[from]
	if reorder && held == nil {
		n.stats.Reordered++
		t := &memTimer{from: from, pkt: pkt, flush: true}
		ep.held[from] = t
		ep.scheduleLocked(t, f.Delay+f.Jitter+time.Millisecond)
		return
	}
	ep.queueLocked(pkt)
	if held != nil {
		delete(ep.held, from)
		ep.stopLocked(held)
		ep.queueLocked(held.pkt)
	}
}

// queueLocked puts pkt on the receive queue, or drops it.
func (ep *MemEndpoint) queueLocked(pkt Packet) {
	n := ep.net
	if !ep.groups[pkt.Group] {
		return // left the group while the packet was in flight
	}
	if n.deliver != nil {
		n.stats.Delivered++
		n.deliver(ep, pkt)
		return
	}
	select {
	case ep.recv <- pkt:
		n.stats.Delivered++
	default:
		n.stats.Overflow++
	}
}

func (ep *MemEndpoint) scheduleLocked(t *memTimer, d time.Duration) {
	t.idx = len(ep.timers)
	ep.timers = append(ep.timers, t)
	ep.wg.Add(1)
	t.t = ep.net.clock.AfterFunc(d, func() { ep.fire(t) })
}

// dropTimerLocked removes t from the pending timers; it reports false
// when t was not pending.
func (ep *MemEndpoint) dropTimerLocked(t *memTimer) bool {
	i := t.idx
	if i < 0 || i >= len(ep.timers) || ep.timers[i] != t {
		return false
	}
	last := ep.timers[len(ep.timers)-1]
	ep.timers[i], last.idx = last, i
	ep.timers[len(ep.timers)-1] = nil
	ep.timers = ep.timers[:len(ep.timers)-1]
	t.idx = -1
	return true
}

// stopLocked cancels a pending timer; if it is already running, fire
// finds it gone and does nothing.
func (ep *MemEndpoint) stopLocked(t *memTimer) {
	if !ep.dropTimerLocked(t) {
		return
	}
	if t.t.Stop() {
		ep.wg.Done()
	}
}

func (ep *MemEndpoint) fire(t *memTimer) {
	n := ep.net
	n.mu.Lock()
	defer n.mu.Unlock()
	defer ep.wg.Done()
	if !ep.dropTimerLocked(t) {
		return // stopped while firing
	}
	if t.flush {
		if ep.held[t.from] == t {
			delete(ep.held, t.from)
		}
		if ep.closed || n.crashed[ep.name] {
			n.stats.Crashed++
			return
		}
		ep.queueLocked(t.pkt)
		return
	}
	ep.arriveLocked(t.from, t.pkt, t.reorder, n.faultsLocked(t.from, ep.name))
}

// Close implements Transport. Packets in flight to the endpoint are
// dropped; Close waits for the timers that were already firing, then
// closes the Recv channel.
func (ep *MemEndpoint) Close() error {
	n := ep.net
	n.mu.Lock()
	if ep.closed {
		n.mu.Unlock()
		return nil
	}
	ep.closed = true
	for len(ep.timers) > 0 {
		ep.stopLocked(ep.timers[len(ep.timers)-1])
	}
	clear(ep.held)
	for g := range ep.groups {
		n.dropMemberLocked(ep, g)
	}
	delete(n.eps, ep.name)
	for i, o := range n.order {
		if o == ep {
			n.order = append(n.order[:i], n.order[i+1:]...)
			break
		}
	}
	n.mu.Unlock()
	ep.wg.Wait()
	close(ep.recv)
	return nil
}
