package monitor

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meshrti/meshrti/peer"
)

// Config configures a Monitor.
type Config struct {
	// Federate is the monitor's federate, joined. The Monitor reads its
	// events (nobody else may call Next) and calls its services; Close
	// stops that but neither resigns nor closes the federate.
	Federate *peer.Federate
	// Period is how often the monitor asks for the MOM's values and
	// records a point of history; default 1 s.
	Period time.Duration
	// History is how far back the charts go; default 5 minutes.
	History time.Duration
	// Federation is the federation's name, for the page and the metrics'
	// labels.
	Federation string
	// Logf, when set, is told of requests that failed and reports that
	// did not decode.
	Logf func(format string, args ...any)
}

// Monitor is a federate that reads the MOM and keeps the federation's
// picture: its federates' values, the objects per class, the
// synchronization points, saves and restores, lost federates, and a
// history of times and rates. Its methods are safe for concurrent use.
type Monitor struct {
	cfg        Config
	fed        *peer.Federate
	rd         *Reader
	federation string
	privilege  peer.AttributeHandle // HLAobjectRoot.HLAprivilegeToDeleteObject

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// chooseMu serializes Choose: a pick of an instance must not be
	// undone by an earlier pick of its class still subscribing.
	chooseMu sync.Mutex

	// Counts of the monitor's own work, for /metrics.
	reflections, reportsRead, failures atomic.Uint64

	mu       sync.Mutex
	rows     map[peer.FederateHandle]*row
	gone     map[peer.FederateHandle]*row // removed from rows (resigned, or lost with its report to come)
	fedn     FederationValues
	counts   map[peer.FederateHandle]map[peer.ObjectClassHandle]int64
	syncs    map[string]*syncPoint
	lost     []Lost
	hist     []histPoint
	inst     map[peer.ObjectInstanceHandle]string // instances of the chosen class: name
	class    peer.ObjectClassHandle               // the chosen class; 0: none
	chosen   peer.ObjectInstanceHandle            // the chosen instance; zero: none
	owners   map[peer.AttributeHandle]peer.FederateHandle
	subs     map[chan struct{}]struct{}
	lastTick time.Time
	closed   bool
	endedBy  string // why the event stream ended (connection lost)
	ents     entities
}

// row is what the monitor knows of one federate.
type row struct {
	v         FederateValues
	heard     time.Time // last values
	lost      bool
	goneAt    time.Time // when its instance was removed
	counts    []countAt // recent counts, for the rates
	updRate   float64
	reflRate  float64
	hasValues bool
}

// countAt is a federate's counts at one moment.
type countAt struct {
	at        time.Time
	upd, refl int64
}

type syncPoint struct {
	statuses map[peer.FederateHandle]string
	done     bool
	doneAt   time.Time
}

// histPoint is one sample of every federate's time and rates.
type histPoint struct {
	at   time.Time
	feds map[string]Sample
}

// Sample is one federate's figures at one moment of the history.
type Sample struct {
	Time        *float64 `json:"time"`
	Updates     float64  `json:"updates"`
	Reflections float64  `json:"reflections"`
}

// Keep a lost federate's row this long, and the record of a finished
// synchronization point.
const (
	keepDone = time.Minute
	maxLost  = 100
)

// Start subscribes the monitor's federate to the MOM and starts reading.
func Start(cfg Config) (*Monitor, error) {
	if cfg.Federate == nil {
		return nil, errors.New("monitor: no federate")
	}
	if cfg.Period <= 0 {
		cfg.Period = time.Second
	}
	if cfg.History <= 0 {
		cfg.History = 5 * time.Minute
	}
	rd, err := NewReader(cfg.Federate)
	if err != nil {
		return nil, err
	}
	root, ok := cfg.Federate.FDD().ObjectClass("HLAobjectRoot")
	if !ok {
		return nil, errors.New("monitor: the FDD has no HLAobjectRoot")
	}
	priv, ok := root.Attribute("HLAprivilegeToDeleteObject")
	if !ok {
		return nil, errors.New("monitor: the FDD has no HLAprivilegeToDeleteObject")
	}
	m := &Monitor{
		cfg: cfg, fed: cfg.Federate, rd: rd, privilege: priv.Handle, federation: cfg.Federation,
		rows: map[peer.FederateHandle]*row{}, gone: map[peer.FederateHandle]*row{},
		counts: map[peer.FederateHandle]map[peer.ObjectClassHandle]int64{},
		syncs:  map[string]*syncPoint{}, inst: map[peer.ObjectInstanceHandle]string{},
		owners: map[peer.AttributeHandle]peer.FederateHandle{}, subs: map[chan struct{}]struct{}{},
		fedn: FederationValues{LastSaveTime: math.NaN(), NextSaveTime: math.NaN()},
	}
	if err := errors.Join(rd.SubscribeFederates(), rd.SubscribeFederation(), rd.EnableReports(), m.subscribeEntities()); err != nil {
		return nil, err
	}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	m.wg.Add(2)
	go m.read()
	go m.ask()
	return m, nil
}

// Close stops reading and asking and waits for the monitor's
// goroutines; open event streams end.
func (m *Monitor) Close() error {
	m.cancel()
	m.wg.Wait()
	m.mu.Lock()
	m.closed = true
	for c := range m.subs {
		close(c)
		delete(m.subs, c)
	}
	m.mu.Unlock()
	return nil
}

func (m *Monitor) logf(format string, args ...any) {
	if m.cfg.Logf != nil {
		m.cfg.Logf(format, args...)
	}
}

// read takes the federate's events until Close.
func (m *Monitor) read() {
	defer m.wg.Done()
	for {
		ev, err := m.fed.Next(m.ctx)
		if err != nil {
			if m.ctx.Err() == nil {
				m.mu.Lock()
				m.endedBy = err.Error()
				m.mu.Unlock()
			}
			return
		}
		m.handle(ev, time.Now())
	}
}

// ask asks for the MOM's values every period, and records history.
func (m *Monitor) ask() {
	defer m.wg.Done()
	t := time.NewTicker(m.cfg.Period)
	defer t.Stop()
	m.request(0)
	for n := 1; ; n++ {
		select {
		case <-m.ctx.Done():
			return
		case now := <-t.C:
			m.sample(now)
			m.request(n)
		}
	}
}

// request sends the period's requests: the federates' and the
// federation's values and the synchronization points every period; each
// federate's object counts, and the chosen instance's owners, every
// other one.
func (m *Monitor) request(n int) {
	var errs []error
	errs = append(errs, m.rd.RequestFederates(), m.rd.RequestFederation(), m.rd.RequestSynchronizationPoints(), m.subscribeEntities())
	if n%2 == 0 {
		m.mu.Lock()
		feds := make([]peer.FederateHandle, 0, len(m.rows))
		for h, r := range m.rows {
			if !r.lost {
				feds = append(feds, h)
			}
		}
		chosen := m.chosen
		m.mu.Unlock()
		slices.Sort(feds)
		for _, h := range feds {
			errs = append(errs, m.rd.RequestObjectCounts(h))
			if !chosen.IsZero() {
				errs = append(errs, m.rd.RequestInstanceInformation(h, chosen))
			}
		}
	}
	if err := errors.Join(errs...); err != nil && m.ctx.Err() == nil {
		m.failures.Add(1)
		m.logf("monitor: asking the MOM: %v", err)
	}
}

// handle applies one event.
func (m *Monitor) handle(ev peer.Event, now time.Time) {
	// The monitor is a member like any other: it must hold no
	// synchronization point, save or restore back, so it does its part
	// at once (it has no state of its own to save).
	var err error
	switch ev := ev.(type) {
	case peer.AnnounceSynchronizationPoint:
		err = m.fed.SynchronizationPointAchieved(ev.Label, true)
	case peer.InitiateFederateSave:
		err = errors.Join(m.fed.FederateSaveBegun(), m.fed.FederateSaveComplete())
	case peer.InitiateFederateRestore:
		err = m.fed.FederateRestoreComplete()
	}
	if err != nil && m.ctx.Err() == nil {
		m.failures.Add(1)
		m.logf("monitor: doing its part: %v", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch ev := ev.(type) {
	case peer.DiscoverObjectInstance:
		switch {
		case ev.Class == m.rd.FederateClass() && m.rd.IsFederate(ev.Object):
			if _, ok := m.rows[ev.Object.Federate]; !ok {
				r := &row{heard: now}
				r.v.Handle = ev.Object.Federate
				r.v.Name = strings.TrimPrefix(ev.Name, "HLAfederate.")
				r.v.Time, r.v.Lookahead, r.v.GALT, r.v.LITS = math.NaN(), math.NaN(), math.NaN(), math.NaN()
				m.rows[ev.Object.Federate] = r
			}
		case m.class != 0 && ev.Class == m.class:
			m.inst[ev.Object] = ev.Name
		}
		m.ents.discover(ev)
	case peer.ReflectAttributeValues:
		m.reflections.Add(1)
		switch {
		case m.rd.IsFederate(ev.Object):
			r, ok := m.rows[ev.Object.Federate]
			if !ok || r.lost {
				return
			}
			if err := m.rd.DecodeFederate(ev, &r.v); err != nil {
				m.failures.Add(1)
				m.logf("monitor: values of %s: %v", r.v.Name, err)
			}
			r.heard, r.hasValues = now, true
			m.rates(r, now)
		case ev.Object.Federate == 0:
			if err := m.rd.DecodeFederation(ev, &m.fedn); err != nil {
				m.failures.Add(1)
				m.logf("monitor: the federation's values: %v", err)
			}
		default:
			if _, err := m.ents.reflect(ev, now); err != nil {
				m.failures.Add(1)
				m.logf("monitor: an entity's values: %v", err)
			}
		}
	case peer.RemoveObjectInstance:
		if m.rd.IsFederate(ev.Object) {
			h := ev.Object.Federate
			if r, ok := m.rows[h]; ok && !r.lost {
				// Resigned, or lost with its report still to come:
				// gone from the page now; the report brings it back.
				delete(m.rows, h)
				delete(m.counts, h)
				r.goneAt = now
				m.gone[h] = r
			}
			return
		}
		m.ents.remove(ev.Object)
		delete(m.inst, ev.Object)
		if ev.Object == m.chosen {
			m.chosen = peer.ObjectInstanceHandle{}
			clear(m.owners)
		}
	case peer.ReceiveInteraction:
		rep, ok, err := m.rd.DecodeReport(ev)
		if err != nil {
			m.failures.Add(1)
			m.logf("monitor: %v", err)
		}
		if ok && err == nil {
			m.reportsRead.Add(1)
			m.report(rep, now)
		}
	case peer.ConnectionLost:
		m.endedBy = "connection lost: " + ev.Reason
	}
}

// rateWindow is how far back the rates look: long enough that the
// moments values are sent and read at do not make them jump.
func (m *Monitor) rateWindow() time.Duration { return max(2*time.Second, 2*m.cfg.Period) }

// rates updates r's rates: the counts' growth over the last rateWindow.
func (m *Monitor) rates(r *row, now time.Time) {
	r.counts = append(r.counts, countAt{now, r.v.UpdatesSent, r.v.ReflectionsReceived})
	cut := 0
	for cut < len(r.counts)-2 && now.Sub(r.counts[cut+1].at) >= m.rateWindow() {
		cut++
	}
	r.counts = r.counts[cut:]
	first := r.counts[0]
	dt := now.Sub(first.at).Seconds()
	if dt < m.cfg.Period.Seconds()/2 {
		return
	}
	r.updRate = max(0, float64(r.v.UpdatesSent-first.upd)/dt)
	r.reflRate = max(0, float64(r.v.ReflectionsReceived-first.refl)/dt)
}

// report applies a decoded report. Under mu.
func (m *Monitor) report(rep Report, now time.Time) {
	switch rep := rep.(type) {
	case ObjectCounts:
		if r, ok := m.rows[rep.Federate]; ok && !r.lost {
			m.counts[rep.Federate] = rep.Counts
		}
	case InstanceOwnership:
		if rep.Object != m.chosen {
			return
		}
		for a, f := range m.owners {
			if f == rep.Federate && !slices.Contains(rep.Owned, a) {
				delete(m.owners, a)
			}
		}
		for _, a := range rep.Owned {
			m.owners[a] = rep.Federate
		}
	case FederateLost:
		r, ok := m.rows[rep.Federate]
		if !ok {
			r, ok = m.gone[rep.Federate] // its last values
		}
		if !ok {
			r = &row{}
			r.v.Handle, r.v.Name = rep.Federate, rep.Name
			r.v.Time, r.v.Lookahead, r.v.GALT, r.v.LITS = math.NaN(), math.NaN(), math.NaN(), math.NaN()
			m.rows[rep.Federate] = r
		}
		if r.lost {
			return
		}
		r.lost, r.updRate, r.reflRate = true, 0, 0
		m.rows[rep.Federate] = r
		delete(m.gone, rep.Federate)
		delete(m.counts, rep.Federate)
		m.lost = append(m.lost, Lost{Name: rep.Name, Handle: uint64(rep.Federate), Time: num(rep.Time), Reason: rep.Reason, At: now.UnixMilli()})
		if len(m.lost) > maxLost {
			m.lost = m.lost[len(m.lost)-maxLost:]
		}
	case SyncPoints:
		for l, p := range m.syncs {
			if !p.done && !slices.Contains(rep.Labels, l) {
				p.done, p.doneAt = true, now
			}
		}
		for _, l := range rep.Labels {
			if p, ok := m.syncs[l]; !ok || p.done {
				m.syncs[l] = &syncPoint{statuses: map[peer.FederateHandle]string{}}
			}
		}
	case SyncPointStatus:
		p, ok := m.syncs[rep.Label]
		if !ok || p.done {
			p = &syncPoint{}
			m.syncs[rep.Label] = p
		}
		p.statuses = rep.Statuses
	}
}

// sample records a point of history, forgets what is too old, and
// tells the event streams.
func (m *Monitor) sample(now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lastTick = now
	p := histPoint{at: now, feds: make(map[string]Sample, len(m.rows))}
	for _, r := range m.rows {
		if r.lost || !r.hasValues {
			continue
		}
		// A federate whose node stopped answering has no rate.
		if now.Sub(r.heard) > 3*m.cfg.Period {
			r.updRate, r.reflRate = 0, 0
		}
		p.feds[r.v.Name] = Sample{Time: num(r.v.Time), Updates: r.updRate, Reflections: r.reflRate}
	}
	m.hist = append(m.hist, p)
	cut := 0
	for cut < len(m.hist) && now.Sub(m.hist[cut].at) > m.cfg.History {
		cut++
	}
	m.hist = m.hist[cut:]
	for h, r := range m.gone {
		if now.Sub(r.goneAt) > keepDone {
			delete(m.gone, h)
		}
	}
	for l, s := range m.syncs {
		if s.done && now.Sub(s.doneAt) > keepDone {
			delete(m.syncs, l)
		}
	}
	for c := range m.subs {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// Choose picks the class whose instances the page lists (by qualified
// or unqualified name; "" for none) and the instance whose owners it
// shows (by name; "" for none). The monitor subscribes to the class's
// HLAprivilegeToDeleteObject alone, to learn its instances' names and
// handles; the owners come from each federate's node
// (HLArequestObjectInstanceInformation).
func (m *Monitor) Choose(class, instance string) error {
	m.chooseMu.Lock()
	defer m.chooseMu.Unlock()
	var oc peer.ObjectClassHandle
	if class != "" {
		c, ok := m.fed.FDD().ObjectClass(class)
		if !ok {
			return fmt.Errorf("monitor: no object class %q", class)
		}
		if c.IsMOM() || c.Parent == nil {
			return fmt.Errorf("monitor: %s is not a class of the federation's objects", c.QualifiedName)
		}
		oc = c.Handle
	}
	m.mu.Lock()
	prev := m.class
	var drop []peer.ObjectInstanceHandle
	if oc != prev {
		for h := range m.inst {
			drop = append(drop, h)
		}
		clear(m.inst)
		m.class = oc
		m.chosen = peer.ObjectInstanceHandle{}
		clear(m.owners)
	}
	m.mu.Unlock()
	if oc != prev {
		if prev != 0 {
			// Forget the old class's instances, so that choosing it
			// again discovers them again.
			_ = m.fed.UnsubscribeObjectClass(prev)
			for _, h := range drop {
				_ = m.fed.LocalDeleteObjectInstance(h)
			}
			// The map's subscription to the class, if it is an
			// entity's, went with it.
			m.resubscribeEntity(prev)
		}
		if oc != 0 {
			if err := m.fed.SubscribeObjectClassAttributes(oc, m.privilege); err != nil {
				return fmt.Errorf("monitor: subscribe %s: %w", class, err)
			}
		}
	}
	if instance == "" {
		m.mu.Lock()
		m.chosen = peer.ObjectInstanceHandle{}
		clear(m.owners)
		m.mu.Unlock()
		return nil
	}
	m.mu.Lock()
	var found peer.ObjectInstanceHandle
	for h, n := range m.inst {
		if n == instance || h.String() == instance {
			found = h
			break
		}
	}
	if found.IsZero() {
		m.mu.Unlock()
		return fmt.Errorf("monitor: no instance %q of the chosen class is known", instance)
	}
	if found != m.chosen {
		m.chosen = found
		clear(m.owners)
	}
	feds := make([]peer.FederateHandle, 0, len(m.rows))
	for f, r := range m.rows {
		if !r.lost {
			feds = append(feds, f)
		}
	}
	m.mu.Unlock()
	m.askOwners(found, feds)
	return nil
}

// askOwners asks every federate's node about obj now, so that the
// owners show before the next period's requests.
func (m *Monitor) askOwners(obj peer.ObjectInstanceHandle, feds []peer.FederateHandle) {
	for _, f := range feds {
		if err := m.rd.RequestInstanceInformation(f, obj); err != nil {
			m.failures.Add(1)
			return
		}
	}
}

// watch returns a channel told after every period's sample, and a
// function that stops it. The channel is closed when the Monitor is.
func (m *Monitor) watch() (<-chan struct{}, func()) {
	c := make(chan struct{}, 1)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		close(c)
		return c, func() {}
	}
	m.subs[c] = struct{}{}
	return c, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if _, ok := m.subs[c]; ok {
			delete(m.subs, c)
			close(c)
		}
	}
}

// num is v for JSON: nil when undefined (NaN or infinite).
func num(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}
