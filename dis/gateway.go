package dis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"golang.org/x/net/ipv4"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer"
)

// Defaults of Config.
const (
	DefaultPort                 = 3000
	DefaultTimeout              = 12 * time.Second
	DefaultHeartbeat            = 5 * time.Second
	DefaultPositionThreshold    = 1.0               // metres
	DefaultOrientationThreshold = 3 * math.Pi / 180 // radians
)

// ErrConfig is the error of a Config that Validate refuses.
var ErrConfig = errors.New("dis: invalid gateway config")

// Config configures a Gateway. The zero value of a field means its
// default; Federate, DIS, Site and Application are required.
type Config struct {
	// Federate is the gateway's federate, joined, with the RPR FOM 2.0
	// in its FDD. The Gateway reads its events (nobody else may call
	// Next) and calls its services; Close neither resigns nor closes it.
	Federate *peer.Federate
	// DIS is the exercise's UDP address, ADDR:PORT, where the gateway
	// listens: a multicast group (joined on Interface), a broadcast
	// address (127.255.255.255, a subnet's .255) or a unicast address of
	// this host. The port is usually 3000.
	DIS string
	// Send is where PDUs go; default DIS (for a unicast DIS address, the
	// peer to send to).
	Send string
	// Interface is the multicast interface; default "lo". TTL is the
	// multicast TTL; default 0 (this host).
	Interface string
	TTL       int
	// Exercise is the DIS exercise bridged; PDUs of others are dropped.
	// Default 1.
	Exercise uint8
	// Site and Application are the gateway's simulation address: the
	// entity IDs it assigns to HLA instances without an
	// EntityIdentifier are (Site, Application, n), and its Attribute
	// PDUs come from it.
	Site, Application uint16
	// Version is the protocol version of the PDUs sent: 6 or 7
	// (default). Versions 5, 6 and 7 are read.
	Version uint8
	// Timeout deletes a DIS entity not heard for this long; default
	// 12 s (2.4 heartbeats).
	Timeout time.Duration
	// Heartbeat sends every HLA instance at least this often; default
	// 5 s.
	Heartbeat time.Duration
	// PositionThreshold (metres, default 1) and OrientationThreshold
	// (radians, default 3°) are the dead-reckoning thresholds: an HLA
	// update that keeps the entity within them of where its last PDU
	// dead-reckons to waits for the heartbeat.
	PositionThreshold    float64
	OrientationThreshold float64
	// Mapping chooses classes for DIS entities and binds attribute
	// record types.
	Mapping MapperConfig
	// Registerer, when set, gets the gateway's metrics (see Stats),
	// labelled with Labels and the exercise.
	Registerer prometheus.Registerer
	Labels     prometheus.Labels
	// StatusPeriod is how often the gateway publishes its counters in
	// the federation, when the FDD has the gateway's status class
	// (StatusModule); default 1 s.
	StatusPeriod time.Duration
	// Logger receives diagnostics; the zero value logs nothing.
	Logger zerolog.Logger
}

// housekeeping is how often the DIS side looks at timeouts and at the
// values asked for.
const housekeeping = 100 * time.Millisecond

func (c *Config) fill() {
	if c.Exercise == 0 {
		c.Exercise = 1
	}
	if c.Version == 0 {
		c.Version = Version7
	}
	if c.Interface == "" {
		c.Interface = "lo"
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Heartbeat == 0 {
		c.Heartbeat = DefaultHeartbeat
	}
	if c.PositionThreshold == 0 {
		c.PositionThreshold = DefaultPositionThreshold
	}
	if c.OrientationThreshold == 0 {
		c.OrientationThreshold = DefaultOrientationThreshold
	}
	if c.StatusPeriod == 0 {
		c.StatusPeriod = time.Second
	}
}

// Validate reports what is wrong with c, as errors wrapping ErrConfig.
func (c Config) Validate() error {
	c.fill()
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrConfig}, args...)...))
	}
	if c.Federate == nil {
		bad("no federate")
	}
	if _, err := netip.ParseAddrPort(c.DIS); err != nil {
		bad("DIS address %q: want IPv4ADDR:PORT", c.DIS)
	}
	if c.Send != "" {
		if _, err := netip.ParseAddrPort(c.Send); err != nil {
			bad("Send address %q: want IPv4ADDR:PORT", c.Send)
		}
	}
	if c.Site == 0 || c.Application == 0 || c.Site == 0xffff || c.Application == 0xffff {
		bad("site %d and application %d: each must be 1 to 65534", c.Site, c.Application)
	}
	if c.Version != Version6 && c.Version != Version7 {
		bad("version %d: want 6 or 7", c.Version)
	}
	if c.Timeout < 0 || c.Heartbeat < 0 || c.PositionThreshold < 0 || c.OrientationThreshold < 0 || c.StatusPeriod < 0 || c.TTL < 0 {
		bad("negative timeout, heartbeat, threshold, status period or TTL")
	}
	return errors.Join(errs...)
}

// Gateway bridges one DIS exercise and one federation: a federate of
// the RPR FOM 2.0 plus one DIS socket. DIS entities become object
// instances (registered once, then updated with what changed, deleted
// when deactivated or not heard for Timeout); every BaseEntity instance
// of the other federates goes out as Entity State PDUs (on a change
// beyond the dead-reckoning thresholds, and every Heartbeat); Fire and
// Detonation PDUs and WeaponFire and MunitionDetonation interactions go
// both ways; Attribute PDU records carry the attributes no Entity State
// field stands for. Its methods are safe for concurrent use.
type Gateway struct {
	cfg   Config
	fed   *peer.Federate
	m     *Mapper
	log   zerolog.Logger
	sock  *sockets
	names *nameTable
	stats counters
	col   *collector
	start time.Time

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// provide are the instances whose values were asked for, for the
	// DIS side to update in full (under provideMu).
	provideMu sync.Mutex
	provide   []peer.ObjectInstanceHandle

	in  *inbound  // the DIS side: its goroutine alone
	out *outbound // the HLA side: its goroutine alone

	closeOnce sync.Once
	closeErr  error
}

// New starts a gateway: it checks the FDD (NewMapper), opens the DIS
// sockets, publishes and subscribes BaseEntity and every class under it
// with all their attributes, WeaponFire and MunitionDetonation, and
// starts its two goroutines (one reads the DIS socket, one the
// federate's events). Close stops it.
func New(cfg Config) (*Gateway, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.fill()
	m, err := NewMapper(cfg.Federate.FDD(), cfg.Mapping)
	if err != nil {
		return nil, err
	}
	listen := netip.MustParseAddrPort(cfg.DIS)
	to := listen
	if cfg.Send != "" {
		to = netip.MustParseAddrPort(cfg.Send)
	}
	dr, err := newDRFilter(cfg.PositionThreshold, cfg.OrientationThreshold, cfg.Heartbeat)
	if err != nil {
		return nil, err
	}
	g := &Gateway{cfg: cfg, fed: cfg.Federate, m: m, log: cfg.Logger, names: newNameTable(), start: time.Now()}
	if err := g.declare(); err != nil {
		return nil, err
	}
	if g.sock, err = openSockets(listen, to, cfg.Interface, cfg.TTL); err != nil {
		return nil, err
	}
	g.in = &inbound{entities: map[EntityID]*inEntity{}, byObject: map[peer.ObjectInstanceHandle]*inEntity{}}
	g.out = &outbound{entities: map[peer.ObjectInstanceHandle]*outEntity{}, dr: dr, next: 1}
	if st, err := newStatusPublisher(g); err != nil {
		g.sock.close()
		return nil, err
	} else {
		g.in.status = st
	}
	if cfg.Registerer != nil {
		labels := prometheus.Labels{"exercise": fmt.Sprint(cfg.Exercise)}
		for k, v := range cfg.Labels {
			labels[k] = v
		}
		g.col = newCollector(&g.stats, labels)
		if err := cfg.Registerer.Register(g.col); err != nil {
			g.sock.close()
			return nil, fmt.Errorf("dis: metrics: %w", err)
		}
	}
	g.ctx, g.cancel = context.WithCancel(context.Background())
	g.wg.Add(2)
	go g.disLoop()
	go g.hlaLoop()
	g.log.Info().Str("dis", cfg.DIS).Str("send", to.String()).Uint8("exercise", cfg.Exercise).Msg("dis gateway started")
	return g, nil
}

// declare publishes and subscribes what the gateway carries.
func (g *Gateway) declare() error {
	var errs []error
	for _, c := range g.m.EntityClasses() {
		attrs := make([]peer.AttributeHandle, 0, 32)
		for _, a := range c.AllAttributes() {
			attrs = append(attrs, a.Handle)
		}
		errs = append(errs, g.fed.PublishObjectClassAttributes(c.Handle, attrs...), g.fed.SubscribeObjectClassAttributes(c.Handle, attrs...))
	}
	for _, ic := range []*fomxml.InteractionClass{g.m.FireClass(), g.m.DetonationClass()} {
		errs = append(errs, g.fed.PublishInteractionClass(ic.Handle), g.fed.SubscribeInteractionClass(ic.Handle))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("dis: declaring the RPR classes: %w", err)
	}
	return nil
}

// Mapper returns the gateway's mapping.
func (g *Gateway) Mapper() *Mapper { return g.m }

// Stats returns the gateway's counters.
func (g *Gateway) Stats() Stats { return g.stats.snapshot() }

// LocalAddr is the address of the socket PDUs are sent from.
func (g *Gateway) LocalAddr() netip.AddrPort {
	return g.sock.send.LocalAddr().(*net.UDPAddr).AddrPort()
}

// ListenAddr is the address the gateway listens on.
func (g *Gateway) ListenAddr() netip.AddrPort {
	return g.sock.recv.LocalAddr().(*net.UDPAddr).AddrPort()
}

// Close stops the gateway and waits for its goroutines; then it sends a
// last PDU with the deactivated appearance for every HLA instance it
// sent, deletes the instances it registered for DIS entities, and
// closes its sockets. It does not resign the federate.
func (g *Gateway) Close() error {
	g.closeOnce.Do(func() {
		g.cancel()
		g.sock.recv.Close() // ends the DIS side's read
		g.wg.Wait()
		now := time.Now()
		for _, o := range g.out.entities {
			g.out.remove(g, o, now)
		}
		for _, e := range g.in.entities {
			g.in.remove(g, e, "the gateway closed")
		}
		if g.in.status != nil {
			g.in.status.close()
		}
		if g.col != nil {
			g.cfg.Registerer.Unregister(g.col)
		}
		g.closeErr = g.sock.send.Close()
	})
	return g.closeErr
}

// valueErrors counts and logs values that could not be carried.
func (g *Gateway) valueErrors(toHLA bool, what string, errs []error) {
	if len(errs) == 0 {
		return
	}
	if toHLA {
		g.stats.valuesHLA.Add(uint64(len(errs)))
	} else {
		g.stats.valuesDIS.Add(uint64(len(errs)))
	}
	if g.log.GetLevel() <= zerolog.DebugLevel {
		g.log.Debug().Str("of", what).Errs("values", errs).Msg("dis: values dropped")
	}
}

// sendPDU encodes p with the gateway's version and exercise and sends
// it; buf is reused.
func (g *Gateway) sendPDU(p PDU, buf []byte) []byte {
	h := p.PDUHeader()
	h.Version, h.Exercise = g.cfg.Version, g.cfg.Exercise
	b, err := p.Append(buf[:0])
	if err != nil {
		g.log.Warn().Err(err).Msg("dis: a PDU did not encode")
		return b
	}
	if _, err := g.sock.send.WriteToUDPAddrPort(b, g.sock.to); err != nil {
		if g.ctx.Err() == nil {
			g.log.Warn().Err(err).Msg("dis: send")
		}
		return b
	}
	g.stats.sent[typeIndex(b[2])].Add(1)
	return b
}

// --- shared between the two sides --------------------------------------

// nameTable maps entity IDs to instance names and back, for both sides
// (Names), and knows which IDs the gateway sends to DIS (their PDUs
// heard back are echoes).
type nameTable struct {
	mu     sync.RWMutex
	byID   map[EntityID]string
	byName map[string]EntityID
	out    map[EntityID]int // IDs sent to DIS, with how many instances use them
}

func newNameTable() *nameTable {
	return &nameTable{byID: map[EntityID]string{}, byName: map[string]EntityID{}, out: map[EntityID]int{}}
}

func (n *nameTable) ObjectName(id EntityID) string {
	if id.IsZero() {
		return ""
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.byID[id]
}

func (n *nameTable) EntityID(name string) (EntityID, bool) {
	n.mu.RLock()
	defer n.mu.RUnlock()
	id, ok := n.byName[name]
	return id, ok
}

func (n *nameTable) add(id EntityID, name string, out bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.byID[id], n.byName[name] = name, id
	if out {
		n.out[id]++
	}
}

func (n *nameTable) remove(id EntityID, name string, out bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.byName[name] == id {
		delete(n.byName, name)
	}
	if n.byID[id] == name {
		delete(n.byID, id)
	}
	if out {
		if n.out[id]--; n.out[id] <= 0 {
			delete(n.out, id)
		}
	}
}

func (n *nameTable) isOut(id EntityID) bool {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.out[id] > 0
}

// --- the DIS side --------------------------------------------------------

// inbound is the DIS side's state: DIS entities and their instances.
type inbound struct {
	entities map[EntityID]*inEntity
	byObject map[peer.ObjectInstanceHandle]*inEntity
	status   *statusPublisher
	values   peer.AttributeValues // reused
	checked  time.Time            // when timeouts were last looked at
}

type inEntity struct {
	id    EntityID
	obj   peer.ObjectInstanceHandle
	class *fomxml.ObjectClass
	name  string
	last  EntityState
	heard time.Time
	// records are the values attribute records set, for a full update.
	records peer.AttributeValues
}

// readBatch is how many datagrams the DIS side reads per system call
// (recvmmsg on Linux; one elsewhere).
const readBatch = 16

// disLoop reads the DIS socket until Close.
func (g *Gateway) disLoop() {
	defer g.wg.Done()
	pc := ipv4.NewPacketConn(g.sock.recv)
	msgs := make([]ipv4.Message, readBatch)
	for i := range msgs {
		msgs[i].Buffers = [][]byte{make([]byte, 1<<16)}
	}
	next := time.Now().Add(housekeeping)
	_ = g.sock.recv.SetReadDeadline(next)
	for {
		n, err := pc.ReadBatch(msgs, 0)
		now := time.Now()
		if err != nil {
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				if g.ctx.Err() == nil {
					g.log.Error().Err(err).Msg("dis: reading the DIS socket")
				}
				return
			}
		}
		for i := range n {
			var from netip.AddrPort
			if ua, ok := msgs[i].Addr.(*net.UDPAddr); ok {
				from = ua.AddrPort()
				from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
			}
			g.datagram(msgs[i].Buffers[0][:msgs[i].N], from, now)
		}
		if !now.Before(next) {
			g.housekeep(now)
			next = now.Add(housekeeping)
			_ = g.sock.recv.SetReadDeadline(next)
		}
	}
}

// datagram handles one datagram from the DIS socket.
func (g *Gateway) datagram(b []byte, from netip.AddrPort, now time.Time) {
	if g.sock.self.IsValid() && from == g.sock.self {
		g.stats.echo()
		return
	}
	p, err := DecodeExercise(b, g.cfg.Exercise)
	if err != nil {
		r, _ := ReasonOf(err)
		g.stats.drop(r)
		if g.log.GetLevel() <= zerolog.DebugLevel {
			g.log.Debug().Err(err).Str("from", from.String()).Msg("dis: dropped")
		}
		return
	}
	switch p := p.(type) {
	case *EntityState:
		if g.received(p.ID, 0) {
			g.entityIn(p, now)
		}
	case *Fire:
		if g.received(p.Firing, 1) {
			vals := peer.ParameterValues{}
			g.valueErrors(true, "fire", g.m.FireValues(p, g.names, vals))
			g.send(g.m.FireClass().Handle, vals, p.Timestamp)
		}
	case *Detonation:
		if g.received(p.Firing, 2) {
			vals := peer.ParameterValues{}
			g.valueErrors(true, "detonation", g.m.DetonationValues(p, g.names, vals))
			g.send(g.m.DetonationClass().Handle, vals, p.Timestamp)
		}
	case *Attribute:
		g.attributeIn(p)
	}
}

// received counts a PDU about id, of the type at index i of pduTypes,
// and reports whether it is news: a PDU about an entity the gateway
// itself puts out is an echo, counted as such and passed over.
func (g *Gateway) received(id EntityID, i int) bool {
	if g.names.isOut(id) {
		g.stats.echo()
		return false
	}
	g.stats.received[i].Add(1)
	return true
}

func (g *Gateway) send(class peer.InteractionClassHandle, vals peer.ParameterValues, ts uint32) {
	if err := g.fed.SendInteraction(class, vals, g.m.Tag(ts)); err != nil && g.ctx.Err() == nil {
		g.log.Warn().Err(err).Msg("dis: sending an interaction")
	}
}

// entityIn carries an Entity State PDU into the federation.
func (g *Gateway) entityIn(es *EntityState, now time.Time) {
	in := g.in
	e := in.entities[es.ID]
	if es.Appearance&appearanceDeactivated != 0 {
		if e != nil {
			in.remove(g, e, "deactivated")
		}
		return
	}
	if in.values == nil {
		in.values = peer.AttributeValues{}
	}
	clear(in.values)
	if e == nil {
		class := g.m.ClassFor(es.Type)
		obj, err := g.fed.RegisterObjectInstance(class.Handle, "")
		if err != nil {
			if g.ctx.Err() == nil {
				g.log.Warn().Err(err).Str("entity", fmt.Sprint(es.ID)).Msg("dis: registering")
			}
			return
		}
		name, _ := g.fed.GetObjectInstanceName(obj)
		e = &inEntity{id: es.ID, obj: obj, class: class, name: name}
		in.entities[es.ID], in.byObject[obj] = e, e
		g.names.add(es.ID, name, false)
		g.stats.fromDIS.Add(1)
		g.valueErrors(true, name, g.m.EntityValues(class.Handle, es, nil, in.values))
	} else {
		g.valueErrors(true, e.name, g.m.EntityValues(e.class.Handle, es, &e.last, in.values))
	}
	e.last, e.heard = *es, now
	if len(in.values) > 0 {
		g.update(e.obj, in.values, es.Timestamp)
	}
}

func (g *Gateway) update(obj peer.ObjectInstanceHandle, vals peer.AttributeValues, ts uint32) {
	if err := g.fed.UpdateAttributeValues(obj, vals, g.m.Tag(ts)); err != nil && g.ctx.Err() == nil {
		g.log.Warn().Err(err).Msg("dis: updating")
	}
}

// attributeIn sets the attributes an Attribute PDU's records carry.
func (g *Gateway) attributeIn(a *Attribute) {
	carried := false
	for _, s := range a.Sets {
		if g.names.isOut(s.Entity) {
			continue
		}
		carried = true
		e := g.in.entities[s.Entity]
		if e == nil {
			g.valueErrors(true, "attribute", []error{&ValueError{Name: fmt.Sprint(s.Entity), Err: errors.New("no such DIS entity (yet)")}})
			continue
		}
		vals := peer.AttributeValues{}
		g.valueErrors(true, e.name, g.m.RecordValues(e.class.Handle, s.Records, vals))
		if len(vals) == 0 {
			continue
		}
		if e.records == nil {
			e.records = peer.AttributeValues{}
		}
		for h, v := range vals {
			e.records[h] = v
		}
		g.update(e.obj, vals, a.Timestamp)
	}
	if carried || len(a.Sets) == 0 {
		g.stats.received[3].Add(1)
	} else {
		g.stats.echo()
	}
}

// housekeep deletes the entities not heard for the timeout, answers the
// requests for values, and publishes the status.
func (g *Gateway) housekeep(now time.Time) {
	in := g.in
	if now.Sub(in.checked) >= min(time.Second, g.cfg.Timeout/4) {
		in.checked = now
		for _, e := range in.entities {
			if now.Sub(e.heard) > g.cfg.Timeout {
				in.remove(g, e, "not heard for the timeout")
			}
		}
	}
	g.provideMu.Lock()
	asked := g.provide
	g.provide = nil
	g.provideMu.Unlock()
	for _, obj := range asked {
		if in.status != nil && in.status.obj == obj {
			in.status.publish(now)
			continue
		}
		e := in.byObject[obj]
		if e == nil {
			continue
		}
		vals := peer.AttributeValues{}
		g.valueErrors(true, e.name, g.m.EntityValues(e.class.Handle, &e.last, nil, vals))
		for h, v := range e.records {
			vals[h] = v
		}
		g.update(e.obj, vals, e.last.Timestamp)
	}
	if in.status != nil {
		in.status.maybePublish(now)
	}
}

// remove deletes e's instance.
func (in *inbound) remove(g *Gateway, e *inEntity, why string) {
	delete(in.entities, e.id)
	delete(in.byObject, e.obj)
	g.names.remove(e.id, e.name, false)
	g.stats.fromDIS.Add(-1)
	if err := g.fed.DeleteObjectInstance(e.obj, nil); err != nil && !errors.Is(err, peer.ErrClosed) {
		g.log.Warn().Err(err).Str("entity", e.name).Msg("dis: deleting")
	}
	g.log.Debug().Str("entity", e.name).Str("why", why).Msg("dis: entity gone")
}

// --- the HLA side --------------------------------------------------------

// outbound is the HLA side's state: instances of the other federates
// and what was last sent of them.
type outbound struct {
	entities map[peer.ObjectInstanceHandle]*outEntity
	dr       *drFilter
	next     uint16 // the next entity number to assign
	used     map[uint16]bool
	buf      []byte
	state    []byte
}

type outEntity struct {
	obj            peer.ObjectInstanceHandle
	class          *fomxml.ObjectClass
	name           string
	es             EntityState // the instance's state, as reflected
	stateAt        time.Time   // when its Spatial was last reflected
	spatial        bool        // Spatial was reflected
	id             EntityID    // the ID sent (es.ID or an assigned one)
	assigned       bool
	sent           bool
	last           EntityState // the last PDU sent
	sentAt         time.Time
	records        peer.AttributeValues // attributes sent as attribute records
	recordsChanged bool
}

// hlaLoop takes the federate's events until Close.
func (g *Gateway) hlaLoop() {
	defer g.wg.Done()
	tick := min(g.cfg.Heartbeat/5, time.Second)
	next := time.Now().Add(tick)
	for {
		ctx, cancel := context.WithDeadline(g.ctx, next)
		for {
			ev, err := g.fed.Next(ctx)
			if err != nil {
				break
			}
			g.event(ev, time.Now())
		}
		cancel()
		if g.ctx.Err() != nil {
			return
		}
		if now := time.Now(); !now.Before(next) {
			g.tick(now)
			next = now.Add(tick)
		} else if ctx.Err() == nil {
			// Next failed for another reason: the federate is closed.
			return
		}
	}
}

// event handles one event of the federate.
func (g *Gateway) event(ev peer.Event, now time.Time) {
	out := g.out
	switch ev := ev.(type) {
	case peer.DiscoverObjectInstance:
		c, ok := g.fed.FDD().ObjectClassByHandle(ev.Class)
		if !ok || !g.m.IsEntityClass(ev.Class) {
			return
		}
		out.entities[ev.Object] = &outEntity{obj: ev.Object, class: c, name: ev.Name}
		// Ask for everything at once rather than wait for heartbeats.
		attrs := make([]peer.AttributeHandle, 0, 32)
		for _, a := range c.AllAttributes() {
			attrs = append(attrs, a.Handle)
		}
		_ = g.fed.RequestAttributeValueUpdate(ev.Object, nil, attrs...)
	case peer.ReflectAttributeValues:
		o := out.entities[ev.Object]
		if o == nil {
			return
		}
		g.reflect(o, ev, now)
	case peer.RemoveObjectInstance:
		if o := out.entities[ev.Object]; o != nil {
			out.remove(g, o, now)
		}
	case peer.ReceiveInteraction:
		ts, ok := TagTimestamp(ev.Tag)
		if !ok {
			ts = Timestamp(now, false)
		}
		switch ev.Class {
		case g.m.FireClass().Handle:
			f := &Fire{Header: Header{Timestamp: ts}}
			g.valueErrors(false, "WeaponFire", g.m.ApplyFire(ev.Values, g.names, f))
			out.buf = g.sendPDU(f, out.buf)
		case g.m.DetonationClass().Handle:
			d := &Detonation{Header: Header{Timestamp: ts}}
			g.valueErrors(false, "MunitionDetonation", g.m.ApplyDetonation(ev.Values, g.names, d))
			out.buf = g.sendPDU(d, out.buf)
		}
	case peer.ProvideAttributeValueUpdate:
		g.provideMu.Lock()
		g.provide = append(g.provide, ev.Object)
		g.provideMu.Unlock()
	case peer.ConnectionLost:
		g.log.Error().Str("reason", ev.Reason).Msg("dis: the federate lost its connection")
	}
}

// reflect applies reflected values and sends the PDU if it is due.
func (g *Gateway) reflect(o *outEntity, ev peer.ReflectAttributeValues, now time.Time) {
	m := g.m
	before := o.es.ID
	extra, errs := m.ApplyEntityValues(o.class.Handle, ev.Values, &o.es)
	g.valueErrors(false, o.name, errs)
	if spatial, ok := m.Attribute(o.class.Handle, "Spatial"); ok {
		if _, ok := ev.Values[spatial.Handle]; ok && !hasSpatialError(errs) {
			o.spatial, o.stateAt = true, now
		}
	}
	for h, v := range extra {
		if o.records == nil {
			o.records = peer.AttributeValues{}
		}
		o.records[h] = v
		o.recordsChanged = true
	}
	if o.es.ID != before || !o.assigned && o.id.IsZero() {
		g.out.identify(g, o)
	}
	if ts, ok := TagTimestamp(ev.Tag); ok {
		o.es.Timestamp = ts
	} else {
		o.es.Timestamp = Timestamp(now, false)
	}
	if !o.spatial {
		return // nowhere to put it yet
	}
	g.maybeSend(o, now, false)
}

func hasSpatialError(errs []error) bool {
	for _, err := range errs {
		var ve *ValueError
		if errors.As(err, &ve) && ve.Name == "Spatial" {
			return true
		}
	}
	return false
}

// identify gives o its DIS entity ID: its EntityIdentifier when set,
// else one under the gateway's site and application.
func (out *outbound) identify(g *Gateway, o *outEntity) {
	id := o.es.ID
	assigned := false
	if id.IsZero() {
		if o.assigned {
			return
		}
		if out.used == nil {
			out.used = map[uint16]bool{}
		}
		for range 0xfffe {
			n := out.next
			out.next++
			if out.next == 0 || out.next == 0xffff {
				out.next = 1
			}
			if !out.used[n] {
				out.used[n] = true
				id, assigned = EntityID{g.cfg.Site, g.cfg.Application, n}, true
				break
			}
		}
		if !assigned {
			g.log.Warn().Msg("dis: no entity number left to assign")
			return
		}
	}
	if o.id == id {
		return
	}
	if !o.id.IsZero() {
		g.names.remove(o.id, o.name, true)
		if o.assigned {
			delete(out.used, o.id.Entity)
		}
	}
	o.id, o.assigned = id, assigned
	g.names.add(id, o.name, true)
}

// maybeSend sends o's PDU when it is due: never sent, or the update
// conditions of the dead-reckoning filter pass (position or orientation
// beyond the thresholds of where its last PDU dead-reckons to, another
// field changed, or the heartbeat).
func (g *Gateway) maybeSend(o *outEntity, now time.Time, heartbeat bool) {
	out := g.out
	if o.id.IsZero() {
		return
	}
	loc, ori := Extrapolate(&o.es, now.Sub(o.stateAt))
	out.state = o.es.stateKey(out.state[:0], o.id)
	wall := now.Sub(g.start)
	if o.sent {
		sentLoc, sentOri := Extrapolate(&o.last, now.Sub(o.sentAt))
		due := out.dr.due(o.obj, distance(loc, sentLoc), angleBetween(ori, sentOri), out.state, wall)
		if !due {
			if o.recordsChanged && !heartbeat {
				g.sendRecords(o)
			}
			return
		}
		if heartbeat {
			o.es.Timestamp = Timestamp(now, false)
		}
	}
	pdu := o.es
	pdu.ID = o.id
	pdu.Location, pdu.Orientation = loc, ori
	out.buf = g.sendPDU(&pdu, out.buf)
	if !o.sent {
		g.stats.toDIS.Add(1)
	}
	o.sent, o.last, o.sentAt = true, pdu, now
	out.dr.record(o.obj, out.state, wall)
	if o.recordsChanged || heartbeat {
		g.sendRecords(o)
	}
}

// stateKey appends what of an Entity State PDU is not kinematics: a
// change of it is sent at once.
func (es *EntityState) stateKey(b []byte, id EntityID) []byte {
	k := *es
	k.Header = Header{}
	k.ID = id
	k.Location, k.Orientation, k.Velocity = WorldCoordinates{}, EulerAngles{}, Vector{}
	k.DeadReckoning.LinearAcceleration, k.DeadReckoning.AngularVelocity = Vector{}, Vector{}
	b, _ = k.Append(b)
	return b
}

// sendRecords sends o's attribute records in an Attribute PDU. The
// Attribute PDU is 1278.1-2012's: a gateway sending version 6 sends
// none.
func (g *Gateway) sendRecords(o *outEntity) {
	o.recordsChanged = false
	if len(o.records) == 0 || g.cfg.Version < Version7 {
		return
	}
	recs, errs := g.m.Records(o.class.Handle, o.records)
	g.valueErrors(false, o.name, errs)
	if len(recs) == 0 {
		return
	}
	master := recs[0].Type
	for _, r := range recs {
		if r.Type != master {
			master = 0
		}
	}
	a := &Attribute{
		Header:        Header{Timestamp: o.es.Timestamp},
		Origin:        EntityID{Site: g.cfg.Site, Application: g.cfg.Application},
		RecordPDUType: TypeEntityState, RecordProtocolVersion: FamilyEntityInformation, MasterRecordType: master,
		Sets: []AttributeRecordSet{{Entity: o.id, Records: recs}},
	}
	g.out.buf = g.sendPDU(a, g.out.buf)
}

// tick sends the heartbeats due.
func (g *Gateway) tick(now time.Time) {
	for _, o := range g.out.entities {
		if o.sent {
			g.maybeSend(o, now, true)
		}
	}
}

// remove forgets o, sending its last PDU with the deactivated appearance
// if it was sent.
func (out *outbound) remove(g *Gateway, o *outEntity, now time.Time) {
	delete(out.entities, o.obj)
	out.dr.forget(o.obj)
	if o.sent {
		g.stats.toDIS.Add(-1)
		pdu := o.last
		pdu.Location, pdu.Orientation = Extrapolate(&o.last, now.Sub(o.sentAt))
		pdu.Appearance |= appearanceDeactivated
		pdu.Timestamp = Timestamp(now, false)
		out.buf = g.sendPDU(&pdu, out.buf)
	}
	if !o.id.IsZero() {
		g.names.remove(o.id, o.name, true)
		if o.assigned {
			delete(out.used, o.id.Entity)
		}
	}
}
