package monitor

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/meshrti/meshrti/peer"
)

// Federation is the monitor's picture of the federation: what
// /api/federation serves and the page shows.
type Federation struct {
	Federation         string       `json:"federation"`
	TimeImplementation string       `json:"time_implementation,omitempty"`
	Monitor            string       `json:"monitor"` // the monitor's own federate
	At                 int64        `json:"at"`      // Unix milliseconds of the last sample
	Federates          []Federate   `json:"federates"`
	Objects            []ClassCount `json:"objects"`
	SyncPoints         []SyncPoint  `json:"sync_points"`
	Save               SaveStatus   `json:"save"`
	Lost               []Lost       `json:"lost"`
	Ownership          Ownership    `json:"ownership"`
	// Ended says why the monitor's federate stopped hearing the
	// federation; empty while it hears.
	Ended string `json:"ended,omitempty"`
	// Entities are the RPR FOM's entities at their places (the map),
	// at most MaxMapEntities of EntityCount; Gateways the DIS gateways'
	// counters.
	Entities    []Entity  `json:"entities"`
	EntityCount int       `json:"entity_count"`
	Gateways    []Gateway `json:"gateways"`
}

// Federate is one federate's row: its HLAfederate instance's values
// (docs/monitor.md says which attribute each comes from).
type Federate struct {
	Name                 string   `json:"name"`
	Handle               uint64   `json:"handle"`
	Type                 string   `json:"type"`
	Host                 string   `json:"host"`
	State                string   `json:"state"` // HLAfederateState, or "lost"
	TimeState            string   `json:"time_state"`
	Time                 *float64 `json:"time"`
	Lookahead            *float64 `json:"lookahead"`
	GALT                 *float64 `json:"galt"`
	LITS                 *float64 `json:"lits"`
	Regulating           bool     `json:"regulating"`
	Constrained          bool     `json:"constrained"`
	UpdatesSent          int64    `json:"updates_sent"`
	Reflections          int64    `json:"reflections"`
	InteractionsSent     int64    `json:"interactions_sent"`
	InteractionsReceived int64    `json:"interactions_received"`
	UpdatesPerSecond     float64  `json:"updates_per_second"`
	ReflectionsPerSecond float64  `json:"reflections_per_second"`
	Objects              int64    `json:"objects"` // instances it may delete
	TSOQueue             int64    `json:"tso_queue"`
	ROQueue              int64    `json:"ro_queue"`
	Lost                 bool     `json:"lost"`
	// Heard is how long ago (seconds) its node last sent its values.
	Heard float64 `json:"heard"`
}

// ClassCount is the number of instances of one class, counted by the
// federates that may delete them.
type ClassCount struct {
	Class      string           `json:"class"`
	Count      int64            `json:"count"`
	ByFederate map[string]int64 `json:"by_federate"`
}

// SyncPoint is a synchronization point in progress, or finished a
// moment ago.
type SyncPoint struct {
	Label        string            `json:"label"`
	Synchronized bool              `json:"synchronized"`
	Federates    map[string]string `json:"federates"` // name: MovingToSynchPoint, WaitingForRestOfFederation
}

// SaveStatus is the federation's save and restore state.
type SaveStatus struct {
	LastName  string   `json:"last_name"`
	LastTime  *float64 `json:"last_time"`
	NextName  string   `json:"next_name"`
	NextTime  *float64 `json:"next_time"`
	Saving    []string `json:"saving"`    // federates saving now
	Restoring []string `json:"restoring"` // federates restoring now
}

// Lost is a federate the monitor's node took for lost.
type Lost struct {
	Name   string   `json:"name"`
	Handle uint64   `json:"handle"`
	Time   *float64 `json:"time"` // the monitor's logical time then
	Reason string   `json:"reason"`
	At     int64    `json:"at"` // Unix milliseconds
}

// Ownership is the chosen class's instances and the chosen instance's
// owners.
type Ownership struct {
	Class      string      `json:"class"`
	Instances  []string    `json:"instances"`
	Instance   string      `json:"instance"`
	Handle     string      `json:"handle"`
	Attributes []AttrOwner `json:"attributes"`
	Classes    []string    `json:"classes"` // the classes that may be chosen
}

// AttrOwner is one attribute and its owner's name ("" for none known).
type AttrOwner struct {
	Name  string `json:"name"`
	Owner string `json:"owner"`
}

// Snapshot returns the federation's picture now.
func (m *Monitor) Snapshot() Federation {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	s := Federation{
		Federation: m.federation, TimeImplementation: m.fedn.TimeImplementation,
		Monitor: m.fed.Name(), At: m.lastTick.UnixMilli(), Ended: m.endedBy,
		Federates: []Federate{}, Objects: []ClassCount{}, SyncPoints: []SyncPoint{}, Lost: []Lost{},
		Save: SaveStatus{
			LastName: m.fedn.LastSaveName, LastTime: num(m.fedn.LastSaveTime),
			NextName: m.fedn.NextSaveName, NextTime: num(m.fedn.NextSaveTime),
			Saving: []string{}, Restoring: []string{},
		},
	}
	if s.Federation == "" {
		s.Federation = m.fedn.Name
	}
	for _, r := range m.rows {
		f := Federate{
			Name: r.v.Name, Handle: uint64(r.v.Handle), Type: r.v.Type, Host: r.v.Host,
			State: r.v.State, TimeState: r.v.TimeState,
			Time: num(r.v.Time), Lookahead: num(r.v.Lookahead), GALT: num(r.v.GALT), LITS: num(r.v.LITS),
			Regulating: r.v.Regulating, Constrained: r.v.Constrained,
			UpdatesSent: r.v.UpdatesSent, Reflections: r.v.ReflectionsReceived,
			InteractionsSent: r.v.InteractionsSent, InteractionsReceived: r.v.InteractionsRecvd,
			UpdatesPerSecond: r.updRate, ReflectionsPerSecond: r.reflRate,
			Objects: r.v.CanBeDeleted, TSOQueue: r.v.TSOQueue, ROQueue: r.v.ROQueue,
			Lost: r.lost, Heard: now.Sub(r.heard).Seconds(),
		}
		switch {
		case r.lost:
			f.State = "lost"
		case f.State == "FederateSaveInProgress":
			s.Save.Saving = append(s.Save.Saving, f.Name)
		case f.State == "FederateRestoreInProgress":
			s.Save.Restoring = append(s.Save.Restoring, f.Name)
		}
		s.Federates = append(s.Federates, f)
	}
	slices.SortFunc(s.Federates, func(a, b Federate) int { return cmp.Compare(a.Handle, b.Handle) })
	slices.Sort(s.Save.Saving)
	slices.Sort(s.Save.Restoring)

	byClass := map[peer.ObjectClassHandle]*ClassCount{}
	for f, counts := range m.counts {
		name := m.nameOf(f)
		for oc, n := range counts {
			c, ok := byClass[oc]
			if !ok {
				c = &ClassCount{Class: m.rd.ClassName(oc), ByFederate: map[string]int64{}}
				byClass[oc] = c
			}
			c.Count += n
			c.ByFederate[name] += n
		}
	}
	for _, c := range byClass {
		s.Objects = append(s.Objects, *c)
	}
	slices.SortFunc(s.Objects, func(a, b ClassCount) int { return cmp.Compare(a.Class, b.Class) })

	for l, p := range m.syncs {
		sp := SyncPoint{Label: l, Synchronized: p.done, Federates: map[string]string{}}
		for f, st := range p.statuses {
			sp.Federates[m.nameOf(f)] = st
		}
		s.SyncPoints = append(s.SyncPoints, sp)
	}
	slices.SortFunc(s.SyncPoints, func(a, b SyncPoint) int { return cmp.Compare(a.Label, b.Label) })
	s.Lost = append(s.Lost, m.lost...)

	s.Ownership = m.ownership()
	s.Entities, s.EntityCount, s.Gateways = m.ents.snapshot(now)
	return s
}

// ownership is the chosen class's and instance's part of the picture.
// Under mu.
func (m *Monitor) ownership() Ownership {
	o := Ownership{Instances: []string{}, Attributes: []AttrOwner{}, Classes: []string{}}
	for _, c := range m.counts {
		for oc := range c {
			if n := m.rd.ClassName(oc); !slices.Contains(o.Classes, n) {
				o.Classes = append(o.Classes, n)
			}
		}
	}
	slices.Sort(o.Classes)
	if m.class == 0 {
		return o
	}
	o.Class = m.rd.ClassName(m.class)
	for _, n := range m.inst {
		o.Instances = append(o.Instances, n)
	}
	slices.Sort(o.Instances)
	if m.chosen.IsZero() {
		return o
	}
	o.Instance, o.Handle = m.inst[m.chosen], m.chosen.String()
	oc, ok := m.fed.FDD().ObjectClassByHandle(m.class)
	if !ok {
		return o
	}
	for _, a := range oc.AllAttributes() {
		owner := ""
		if f, ok := m.owners[a.Handle]; ok {
			owner = m.nameOf(f)
		}
		o.Attributes = append(o.Attributes, AttrOwner{Name: a.Name, Owner: owner})
	}
	return o
}

// nameOf is federate h's name, as far as the monitor knows it. Under mu.
func (m *Monitor) nameOf(h peer.FederateHandle) string {
	if r, ok := m.rows[h]; ok && r.v.Name != "" {
		return r.v.Name
	}
	if n, err := m.fed.GetFederateName(h); err == nil {
		return n
	}
	return fmt.Sprintf("federate-%d", h)
}

// History is the recorded samples, oldest first.
type History struct {
	Points []HistoryPoint `json:"points"`
}

// HistoryPoint is one sample: every federate's time and rates.
type HistoryPoint struct {
	At        int64             `json:"at"` // Unix milliseconds
	Federates map[string]Sample `json:"federates"`
}

// History returns the recorded samples.
func (m *Monitor) History() History {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := History{Points: make([]HistoryPoint, 0, len(m.hist))}
	for _, p := range m.hist {
		h.Points = append(h.Points, HistoryPoint{At: p.at.UnixMilli(), Federates: p.feds})
	}
	return h
}
