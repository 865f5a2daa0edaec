package core

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/meshrti/meshrti/ddm"
	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/lbts"
	"github.com/meshrti/meshrti/peer/dgram"
	"github.com/meshrti/meshrti/peer/hla"
	"github.com/meshrti/meshrti/peer/reliable"
)

// snapshotFormat is the version of the saved RTI state's format. A
// reader refuses any other.
const snapshotFormat = 2

// snapshot is one federate's RTI state as a federation save keeps it:
// what the federate declared, the instances it knows and the tokens it
// holds, its time state and the messages waiting for it. Derived state
// (routing, the others' interest, advisories) is rebuilt from it, and
// what is under way at the save (negotiations, reservations) is not
// kept. msgpack-encoded.
type snapshot struct {
	Format     int    `msgpack:"format"`
	Federation string `msgpack:"federation"`
	Name       string `msgpack:"name"`
	Self       uint64 `msgpack:"self"`
	Label      string `msgpack:"label"`
	// Saved is the saved set: every federate that took part in the
	// save, this one included, by handle, with its name and federate
	// type. A restore needs joined federates of the same types
	// (restoreAssign).
	Saved []snapMember `msgpack:"saved"`
	// Alias are the registrars of instances whose registrar was
	// restored as another federate by an earlier restore: registrar
	// part of the instance handle -> the federate that acts as it
	// (ownership.alias).
	Alias map[uint64]uint64 `msgpack:"alias,omitempty"`

	Time snapTime `msgpack:"time"`
	// Queue are the time-stamped messages queued; HeldRO the
	// receive-order ones held for the time advancing state; Pending what
	// arrived after the federate was told to save and before the capture
	// (acted on after the save, and again after a restore).
	Queue   []snapMsg `msgpack:"queue"`
	HeldRO  []snapMsg `msgpack:"held"`
	Pending []snapMsg `msgpack:"pending"`
	Async   bool      `msgpack:"async"`

	PubObj  map[uint64][]uint64 `msgpack:"pub_obj"`
	SubObj  map[uint64][]uint64 `msgpack:"sub_obj"`
	SubMode map[uint64]snapSub  `msgpack:"sub_mode"`
	PubInt  []uint64            `msgpack:"pub_int"`
	SubInt  map[uint64]bool     `msgpack:"sub_int"` // active
	// Directed interactions: by object class, the interaction classes
	// (subscriptions: universally or not).
	PubDirected map[uint64][]uint64        `msgpack:"pub_directed"`
	SubDirected map[uint64]map[uint64]bool `msgpack:"sub_directed"`
	Serial      uint64                     `msgpack:"serial"`
	Instances   []snapInstance             `msgpack:"instances"`
	Deleted     [][2]uint64                `msgpack:"deleted"`
	Gone        []uint64                   `msgpack:"gone"`
	Held        []snapToken                `msgpack:"held_tokens"`
	View        []snapToken                `msgpack:"view"`
	Ever        []snapToken                `msgpack:"ever"`
	Left        []uint64                   `msgpack:"left"`
	Switches    [4]bool                    `msgpack:"switches"` // class relevance, attribute relevance, scope, interaction relevance
	OwnResign   uint8                      `msgpack:"own_resign"`
	IntOrder    map[uint64]uint8           `msgpack:"int_order"`
	IntTranspt  map[uint64]uint8           `msgpack:"int_transport"`

	// DDM: this federate's regions, its subscriptions with regions and
	// its instances' associations.
	RegionSerial uint64            `msgpack:"region_serial"`
	Regions      []snapRegion      `msgpack:"regions"`
	RegionSubs   []snapRegionSub   `msgpack:"region_subs"`
	IntRegions   []snapRegionSub   `msgpack:"int_region_subs"`
	Assoc        []snapAssociation `msgpack:"associations"`
}

// snapMember is one federate of a saved set.
type snapMember struct {
	Handle uint64 `msgpack:"h"`
	Name   string `msgpack:"n"`
	Type   string `msgpack:"t"`
}

type snapRegion struct {
	Serial    uint64     `msgpack:"s"`
	Dims      []uint64   `msgpack:"d"`
	Pending   ddm.Region `msgpack:"p"`
	Committed ddm.Region `msgpack:"c"`
	Uses      int        `msgpack:"u"`
}

// snapRegionSub is a subscription with regions: of an attribute of a
// class, or (Attr 0) of an interaction class.
type snapRegionSub struct {
	Class   uint64   `msgpack:"c"`
	Attr    uint64   `msgpack:"a,omitempty"`
	Plain   bool     `msgpack:"p,omitempty"`
	Regions []uint64 `msgpack:"r"` // serials of this federate's regions
}

type snapAssociation struct {
	Federate uint64   `msgpack:"f"`
	Serial   uint64   `msgpack:"s"`
	Attr     uint64   `msgpack:"a"`
	Regions  []uint64 `msgpack:"r"`
}

type snapTime struct {
	Time        float64 `msgpack:"t"`
	Lookahead   float64 `msgpack:"l"`
	Regulating  bool    `msgpack:"r"`
	Constrained bool    `msgpack:"c"`
	Floor       float64 `msgpack:"f"`
	FloorStrict bool    `msgpack:"fs"`
	LastKind    uint8   `msgpack:"k"`
	SendAbove   float64 `msgpack:"a"`
}

type snapMsg struct {
	From     uint64  `msgpack:"from"`
	Group    uint32  `msgpack:"g,omitempty"`
	Seq      uint64  `msgpack:"s,omitempty"`
	Reliable bool    `msgpack:"rel"`
	Time     float64 `msgpack:"t,omitempty"`
	Msg      []byte  `msgpack:"m"`
}

type snapSub struct {
	Active bool   `msgpack:"a"`
	Rate   string `msgpack:"r,omitempty"`
}

type snapInstance struct {
	Federate uint64 `msgpack:"f"`
	Serial   uint64 `msgpack:"s"`
	Class    uint64 `msgpack:"c"`
	Known    uint64 `msgpack:"k"`
	Name     string `msgpack:"n"`
	Named    bool   `msgpack:"r,omitempty"`
}

type snapToken struct {
	Federate uint64 `msgpack:"f"`
	Serial   uint64 `msgpack:"s"`
	Attr     uint64 `msgpack:"a"`
	Owner    uint64 `msgpack:"o,omitempty"`
	Epoch    uint64 `msgpack:"e,omitempty"`
	Via      uint64 `msgpack:"v,omitempty"`
}

// errSnapshotRegions: a region handle of another federate in this
// federate's subscriptions or associations (regions are always the
// creator's own; it cannot happen).
var errSnapshotRegions = errors.New("core: a subscription or association names another federate's region")

// captureSnapshot encodes this federate's RTI state now.
func (c *Core) captureSnapshot() ([]byte, error) {
	ts, err := c.timeCore.Save()
	if err != nil {
		return nil, err
	}
	s := &snapshot{
		Format: snapshotFormat, Federation: c.cfg.Federation, Name: c.cfg.Name, Self: uint64(c.self), Label: c.saveRestore.save.label,
		Time: snapTime{Time: ts.Time, Lookahead: ts.Lookahead, Regulating: ts.Regulating, Constrained: ts.Constrained,
			Floor: ts.Floor, FloorStrict: ts.FloorStrict, LastKind: uint8(ts.LastKind), SendAbove: ts.SendAbove},
		Async:      c.timing.async,
		Saved:      c.savedSet(),
		PubObj:     map[uint64][]uint64{},
		SubObj:     map[uint64][]uint64{},
		SubMode:    map[uint64]snapSub{},
		SubInt:     map[uint64]bool{},
		Serial:     c.objects.serial,
		Switches:   [4]bool{c.advisories.classRel, c.advisories.attrRel, c.advisories.scope, c.advisories.intRel},
		OwnResign:  uint8(c.federation.own),
		IntOrder:   map[uint64]uint8{},
		IntTranspt: map[uint64]uint8{},
	}
	for x, f := range c.ownership.alias {
		if s.Alias == nil {
			s.Alias = map[uint64]uint64{}
		}
		s.Alias[uint64(x)] = uint64(f)
	}
	for _, q := range ts.Queue {
		p, ok := q.Payload.(tsoPayload)
		if !ok {
			continue
		}
		s.Queue = append(s.Queue, snapMsg{From: uint64(p.from), Reliable: p.reliable, Time: q.Time, Msg: appendMsg(nil, p.msg)})
	}
	// The queue's order is the heap's: sort it so that a capture is
	// deterministic (delivery order is the time core's, by time and
	// arrival, and ties keep the order below).
	slices.SortStableFunc(s.Queue, func(a, b snapMsg) int {
		switch {
		case a.Time < b.Time:
			return -1
		case a.Time > b.Time:
			return 1
		}
		return 0
	})
	for _, h := range c.timing.held {
		s.HeldRO = append(s.HeldRO, snapMsg{From: uint64(h.d.from), Reliable: h.d.reliable, Msg: appendMsg(nil, h.msg)})
	}
	for _, d := range c.saveRestore.save.held {
		s.Pending = append(s.Pending, snapMsg{From: uint64(d.From), Group: uint32(d.Group), Seq: d.Seq, Reliable: d.Reliable, Msg: d.Payload})
	}
	for cl, attrs := range c.declared.pubObj {
		s.PubObj[uint64(cl)] = sortedKeys(attrs)
	}
	for cl, attrs := range c.declared.subObj {
		s.SubObj[uint64(cl)] = sortedKeys(attrs)
	}
	s.PubDirected, s.SubDirected = map[uint64][]uint64{}, map[uint64]map[uint64]bool{}
	for cl, set := range c.declared.pubDirected {
		s.PubDirected[uint64(cl)] = sortedKeys(set)
	}
	for cl, set := range c.declared.subDirected {
		m := make(map[uint64]bool, len(set))
		for ic, u := range set {
			m[uint64(ic)] = u
		}
		s.SubDirected[uint64(cl)] = m
	}
	for cl, m := range c.declared.subMode {
		s.SubMode[uint64(cl)] = snapSub{Active: m.active, Rate: m.rate}
	}
	for cl := range c.declared.pubInt {
		s.PubInt = append(s.PubInt, uint64(cl))
	}
	slices.Sort(s.PubInt)
	for cl := range c.declared.subInt {
		s.SubInt[uint64(cl)] = c.declared.subIntMode[cl]
	}
	for h, in := range c.objects.inst {
		s.Instances = append(s.Instances, snapInstance{Federate: uint64(h.Federate), Serial: h.Serial,
			Class: uint64(in.class.Handle), Known: uint64(in.known.Handle), Name: in.name, Named: in.named})
	}
	slices.SortFunc(s.Instances, func(a, b snapInstance) int {
		if a.Federate != b.Federate {
			return compareUint(a.Federate, b.Federate)
		}
		return compareUint(a.Serial, b.Serial)
	})
	for h := range c.objects.deleted {
		s.Deleted = append(s.Deleted, [2]uint64{uint64(h.Federate), h.Serial})
	}
	for f := range c.objects.gone {
		s.Gone = append(s.Gone, uint64(f))
	}
	for h, as := range c.ownership.held {
		for a, e := range as {
			s.Held = append(s.Held, snapToken{Federate: uint64(h.Federate), Serial: h.Serial, Attr: uint64(a), Epoch: e})
		}
	}
	for h, as := range c.ownership.view {
		for a, t := range as {
			s.View = append(s.View, snapToken{Federate: uint64(h.Federate), Serial: h.Serial, Attr: uint64(a),
				Owner: uint64(t.owner), Epoch: t.epoch, Via: uint64(t.via)})
		}
	}
	for h, as := range c.ownership.ever {
		for a := range as {
			s.Ever = append(s.Ever, snapToken{Federate: uint64(h.Federate), Serial: h.Serial, Attr: uint64(a)})
		}
	}
	for f := range c.ownership.left {
		s.Left = append(s.Left, uint64(f))
	}
	for cl, o := range c.objects.intOrder {
		s.IntOrder[uint64(cl)] = uint8(o)
	}
	for cl, t := range c.objects.intTransport {
		s.IntTranspt[uint64(cl)] = uint8(t)
	}
	if err := c.captureRegions(s); err != nil {
		return nil, err
	}
	return msgpack.Marshal(s)
}

// captureRegions adds the DDM state to s.
func (c *Core) captureRegions(s *snapshot) error {
	serials := func(hs []RegionHandle) ([]uint64, error) {
		out := make([]uint64, 0, len(hs))
		for _, h := range hs {
			if h.Federate != c.self {
				return nil, errSnapshotRegions
			}
			out = append(out, h.Serial)
		}
		return out, nil
	}
	s.RegionSerial = c.regions.serial
	for h, r := range c.regions.regions {
		dims := make([]uint64, len(r.dims))
		for i, d := range r.dims {
			dims[i] = uint64(d)
		}
		s.Regions = append(s.Regions, snapRegion{Serial: h.Serial, Dims: dims, Pending: r.pending, Committed: r.committed, Uses: r.uses})
	}
	slices.SortFunc(s.Regions, func(a, b snapRegion) int { return compareUint(a.Serial, b.Serial) })
	for cl, as := range c.regions.subs {
		for a, sub := range as {
			rs, err := serials(sub.regions)
			if err != nil {
				return err
			}
			s.RegionSubs = append(s.RegionSubs, snapRegionSub{Class: uint64(cl), Attr: uint64(a), Plain: sub.plain, Regions: rs})
		}
	}
	for cl, sub := range c.regions.intSubs {
		rs, err := serials(sub.regions)
		if err != nil {
			return err
		}
		s.IntRegions = append(s.IntRegions, snapRegionSub{Class: uint64(cl), Plain: sub.plain, Regions: rs})
	}
	for h, as := range c.regions.assoc {
		for a, hs := range as {
			rs, err := serials(hs)
			if err != nil {
				return err
			}
			s.Assoc = append(s.Assoc, snapAssociation{Federate: uint64(h.Federate), Serial: h.Serial, Attr: uint64(a), Regions: rs})
		}
	}
	return nil
}

// restoreRegions replaces the DDM state with s's, all but the cell groups
// joined: the caller moves those to what the restored regions need.
func (c *Core) restoreRegions(s *snapshot) {
	// The cell groups joined (to hear and to send) and the streams'
	// fresh positions stay: they are what the transport, the reliable
	// endpoint and the time core hold now, and rejoinCells and
	// resendCells (applySnapshot) move from them to what the restored
	// regions need, leaving the cells no longer needed everywhere at once.
	old := c.regions
	c.regions = newRegionSet()
	c.regions.space, c.regions.spaceOf = old.space, old.spaceOf
	c.regions.cells, c.regions.sendCells, c.regions.fresh = old.cells, old.sendCells, old.fresh
	c.regions.serial = s.RegionSerial
	handles := func(serials []uint64) []RegionHandle {
		out := make([]RegionHandle, len(serials))
		for i, n := range serials {
			out[i] = RegionHandle{Federate: c.self, Serial: n}
		}
		return out
	}
	for _, r := range s.Regions {
		dims := make([]DimensionHandle, len(r.Dims))
		for i, d := range r.Dims {
			dims[i] = DimensionHandle(d)
		}
		c.regions.regions[RegionHandle{Federate: c.self, Serial: r.Serial}] = &region{dims: dims, pending: r.Pending, committed: r.Committed, uses: r.Uses}
	}
	for _, sub := range s.RegionSubs {
		as := c.regions.subs[ObjectClassHandle(sub.Class)]
		if as == nil {
			as = make(map[AttributeHandle]*regionSub)
			c.regions.subs[ObjectClassHandle(sub.Class)] = as
		}
		as[AttributeHandle(sub.Attr)] = &regionSub{plain: sub.Plain, regions: handles(sub.Regions)}
	}
	for _, sub := range s.IntRegions {
		c.regions.intSubs[InteractionClassHandle(sub.Class)] = &regionSub{plain: sub.Plain, regions: handles(sub.Regions)}
	}
	for _, a := range s.Assoc {
		h := ObjectInstanceHandle{Federate: FederateHandle(a.Federate), Serial: a.Serial}
		inner(c.regions.assoc, h)[AttributeHandle(a.Attr)] = handles(a.Regions)
	}
}

// savedSet is the saved set of the save under way, as its requester
// announced it.
func (c *Core) savedSet() []snapMember { return slices.Clone(c.saveRestore.save.saved) }

// membersOf returns the federates hs (self among them, or not) with
// their names and types, as this federate knows them; one it does not
// know is left out.
func (c *Core) membersOf(hs []FederateHandle) []snapMember {
	out := make([]snapMember, 0, len(hs))
	for _, f := range hs {
		if f == c.self {
			out = append(out, snapMember{Handle: uint64(f), Name: c.cfg.Name, Type: c.cfg.Type})
		} else if m, ok := c.federation.members[f]; ok {
			out = append(out, snapMember{Handle: uint64(f), Name: m.Name, Type: m.Type})
		}
	}
	return out
}

// handlesOf returns the handles of ms.
func handlesOf(ms []snapMember) []FederateHandle {
	out := make([]FederateHandle, len(ms))
	for i, m := range ms {
		out[i] = FederateHandle(m.Handle)
	}
	return out
}

func sortedKeys[K ~uint64](m map[K]bool) []uint64 {
	out := make([]uint64, 0, len(m))
	for k := range m {
		out = append(out, uint64(k))
	}
	slices.Sort(out)
	return out
}

// Why a restore request fails before it is announced.
var (
	errNoSaves      = errors.New("core: no save store")
	errRestoreTypes = errors.New("core: the joined federates' types do not match the saved set's")
)

// encodeSavedSet encodes the saved set of the save under way
// (SaveStore.WriteSave).
func (c *Core) encodeSavedSet() []byte {
	b, err := msgpack.Marshal(c.savedSet())
	if err != nil {
		panic("core: encoding the saved set: " + err.Error()) // plain data: cannot happen
	}
	return b
}

// decodeSavedSet decodes a saved set.
func decodeSavedSet(b []byte) ([]snapMember, error) {
	var set []snapMember
	if err := msgpack.Unmarshal(b, &set); err != nil {
		return nil, fmt.Errorf("core: saved set: %w", err)
	}
	return set, nil
}

// decodeSnapshot decodes a saved RTI state, refusing other formats.
func decodeSnapshot(b []byte) (*snapshot, error) {
	var s snapshot
	if err := msgpack.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("core: saved state: %w", err)
	}
	if s.Format != snapshotFormat {
		return nil, fmt.Errorf("core: saved state: format %d, this RTI reads %d", s.Format, snapshotFormat)
	}
	return &s, nil
}

// snapshotFits reports why s cannot be restored here, or nil: it must
// be the state of the saved federate as that this federate restores (of
// this federation), saved with the saved set the restore's assignment
// maps (saved: its saved handles), and name only classes of the FDD.
func (c *Core) snapshotFits(s *snapshot, label string, as restoreAs, saved []FederateHandle) error {
	var set []FederateHandle
	for _, m := range s.Saved {
		set = append(set, FederateHandle(m.Handle))
	}
	slices.Sort(set)
	switch {
	case s.Label != label:
		return fmt.Errorf("core: saved state of label %q, not %q", s.Label, label)
	case s.Federation != c.cfg.Federation || s.Name != as.name || FederateHandle(s.Self) != as.handle:
		return fmt.Errorf("core: saved state of federate %q (%d) of %q", s.Name, s.Self, s.Federation)
	case !slices.Equal(set, saved):
		return fmt.Errorf("core: saved by federates %v, the restore assigns %v", set, saved)
	}
	for _, in := range s.Instances {
		if _, err := c.objectClass(ObjectClassHandle(in.Class)); err != nil {
			return err
		}
		if _, err := c.objectClass(ObjectClassHandle(in.Known)); err != nil {
			return err
		}
	}
	for cl := range s.PubObj {
		if _, err := c.objectClass(ObjectClassHandle(cl)); err != nil {
			return err
		}
	}
	for cl := range s.SubObj {
		if _, err := c.objectClass(ObjectClassHandle(cl)); err != nil {
			return err
		}
	}
	for _, cl := range s.PubInt {
		if _, err := c.interactionClass(InteractionClassHandle(cl)); err != nil {
			return err
		}
	}
	for cl := range s.SubInt {
		if _, err := c.interactionClass(InteractionClassHandle(cl)); err != nil {
			return err
		}
	}
	return nil
}

// applySnapshot replaces this federate's RTI state with s and moves it
// to restore branch branch. remap maps the saved federates' handles to
// the handles of the federates that restore as them (restoreAssign):
// every federate handle of the saved state (owners of tokens, senders of
// queued messages, federates gone) is remapped, and the registrar part
// of instance handles is kept, the restored federate acting as the saved
// registrar (ownership.alias). The MOM instances are the live
// federates', not the saved ones.
func (c *Core) applySnapshot(s *snapshot, branch uint64, remap map[FederateHandle]FederateHandle) {
	rf := func(f uint64) FederateHandle {
		if to, ok := remap[FederateHandle(f)]; ok {
			return to
		}
		return FederateHandle(f)
	}
	live := func(f FederateHandle) bool {
		_, ok := c.federation.members[f]
		return ok || f == c.self
	}
	oldObj, oldOwn := c.objects, c.ownership
	c.saveRestore.branch = branch
	c.saveRestore.save.held = nil
	c.restoreRegions(s)

	// Declarations: leave what is declared now, take what was; the
	// groups change by the difference.
	var d groupDelta
	oldSubObj := slices.Collect(maps.Keys(c.declared.subObj))
	oldSubInt := slices.Collect(maps.Keys(c.declared.subInt))
	leaveAll(&d, c.declared.pubObj, c.objectClass, c.routing.unpublishObject)
	leaveAll(&d, c.declared.subObj, c.objectClass, c.routing.unsubscribeObject)
	leaveAll(&d, c.declared.pubInt, c.interactionClass, c.routing.unpublishInteraction)
	leaveAll(&d, c.declared.subInt, c.interactionClass, c.routing.unsubscribeInteraction)
	for _, set := range c.declared.pubDirected {
		leaveAll(&d, set, c.interactionClass, c.routing.unpublishInteraction)
	}
	for _, set := range c.declared.subDirected {
		leaveAll(&d, set, c.interactionClass, c.routing.unsubscribeInteraction)
	}
	c.declared = newDeclarations()
	for cl, ics := range s.PubDirected {
		published := func(uint64) bool { return true }
		c.declared.pubDirected[ObjectClassHandle(cl)] = c.restoreDirected(ics, published, c.routing.publishInteraction, &d)
	}
	for cl, ics := range s.SubDirected {
		universally := func(h uint64) bool { return ics[h] }
		c.declared.subDirected[ObjectClassHandle(cl)] = c.restoreDirected(slices.Sorted(maps.Keys(ics)), universally, c.routing.subscribeInteraction, &d)
	}
	for cl, attrs := range s.PubObj {
		oc, _ := c.objectClass(ObjectClassHandle(cl))
		c.declared.pubObj[oc.Handle] = attrSet(attrs)
		d.add(c.routing.publishObject(oc))
	}
	for cl, attrs := range s.SubObj {
		oc, _ := c.objectClass(ObjectClassHandle(cl))
		c.declared.subObj[oc.Handle] = attrSet(attrs)
		d.add(c.routing.subscribeObject(oc))
		if m, ok := s.SubMode[cl]; ok {
			c.declared.subMode[oc.Handle] = subMode{active: m.Active, rate: m.Rate}
		}
	}
	for _, cl := range s.PubInt {
		ic, _ := c.interactionClass(InteractionClassHandle(cl))
		c.declared.pubInt[ic.Handle] = true
		d.add(c.routing.publishInteraction(ic))
	}
	for cl, active := range s.SubInt {
		ic, _ := c.interactionClass(InteractionClassHandle(cl))
		c.declared.subInt[ic.Handle] = true
		c.declared.subIntMode[ic.Handle] = active
		d.add(c.routing.subscribeInteraction(ic))
	}
	c.applyGroups(d.net())
	c.rejoinCells()
	// The others learn the subscriptions again from the replicated state.
	for _, cl := range append(oldSubObj, slices.Collect(maps.Keys(c.declared.subObj))...) {
		oc, _ := c.objectClass(cl)
		c.publishInterest(oc)
	}
	for _, cl := range append(oldSubInt, slices.Collect(maps.Keys(c.declared.subInt))...) {
		c.publishInteractionInterest(cl)
	}

	// Objects and tokens.
	c.objects = newObjects(c.self)
	c.objects.serial = s.Serial
	for _, in := range s.Instances {
		h := ObjectInstanceHandle{Federate: FederateHandle(in.Federate), Serial: in.Serial}
		if isMOM(h) && h.Federate != 0 && h != federationMOM {
			continue // the live federates' are kept, below
		}
		class, _ := c.objectClass(ObjectClassHandle(in.Class))
		known, _ := c.objectClass(ObjectClassHandle(in.Known))
		c.objects.inst[h] = &instance{class: class, known: known, name: in.Name, named: in.Named}
		c.objects.names[in.Name] = h
	}
	for _, h := range s.Deleted {
		c.objects.deleted[ObjectInstanceHandle{Federate: FederateHandle(h[0]), Serial: h[1]}] = true
	}
	for _, f := range s.Gone {
		c.objects.gone[rf(f)] = true
	}
	for cl, o := range s.IntOrder {
		c.objects.intOrder[InteractionClassHandle(cl)] = OrderType(o)
	}
	for cl, t := range s.IntTranspt {
		c.objects.intTransport[InteractionClassHandle(cl)] = hla.TransportationType(t)
	}
	c.ownership = newOwnership(c.self)
	for _, t := range s.Held {
		h := ObjectInstanceHandle{Federate: FederateHandle(t.Federate), Serial: t.Serial}
		inner(c.ownership.held, h)[AttributeHandle(t.Attr)] = t.Epoch
	}
	for _, t := range s.View {
		h := ObjectInstanceHandle{Federate: FederateHandle(t.Federate), Serial: t.Serial}
		owner, via := FederateHandle(0), FederateHandle(0)
		if t.Owner != 0 {
			owner = rf(t.Owner)
		}
		if t.Via != 0 {
			via = rf(t.Via)
		}
		inner(c.ownership.view, h)[AttributeHandle(t.Attr)] = token{owner: owner, epoch: t.Epoch, via: via}
	}
	for _, t := range s.Ever {
		h := ObjectInstanceHandle{Federate: FederateHandle(t.Federate), Serial: t.Serial}
		inner(c.ownership.ever, h)[AttributeHandle(t.Attr)] = true
	}
	for _, f := range s.Left {
		c.ownership.left[rf(f)] = true
	}
	for x, f := range s.Alias {
		if to := rf(f); to != FederateHandle(x) {
			c.ownership.setAlias(FederateHandle(x), to)
		}
	}
	for from, to := range remap {
		if from != to {
			c.ownership.setAlias(from, to)
		}
	}
	// The MOM instances are the live federates' (a saved federate
	// restored as another has none; the one acting as it has its own).
	for h, in := range oldObj.inst {
		if !isMOM(h) || h.Federate == 0 || h == federationMOM || !live(h.Federate) {
			continue
		}
		c.objects.inst[h] = in
		c.objects.names[in.name] = h
		if m := oldOwn.held[h]; m != nil {
			c.ownership.held[h] = m
		}
		if m := oldOwn.view[h]; m != nil {
			c.ownership.view[h] = m
		}
		if m := oldOwn.ever[h]; m != nil {
			c.ownership.ever[h] = m
		}
	}
	c.resendCells()
	c.advisories.classRel, c.advisories.attrRel, c.advisories.scope, c.advisories.intRel = s.Switches[0], s.Switches[1], s.Switches[2], s.Switches[3]
	if a := ResignAction(s.OwnResign); a.Valid() {
		c.federation.own = a
	}

	// Time: the time core goes back; its queue and the held messages are
	// the saved ones.
	c.timing = newTiming()
	c.timing.async = s.Async
	c.forgetUnseen()
	st := lbts.Saved{Time: s.Time.Time, Lookahead: s.Time.Lookahead, Regulating: s.Time.Regulating,
		Constrained: s.Time.Constrained, Floor: s.Time.Floor, FloorStrict: s.Time.FloorStrict,
		LastKind: lbts.RequestKind(s.Time.LastKind), SendAbove: s.Time.SendAbove}
	for _, q := range s.Queue {
		m, err := decodeMsgPairs(q.Msg)
		if err != nil {
			c.stats.Malformed++
			continue
		}
		st.Queue = append(st.Queue, lbts.TSO{From: lbts.FederateID(rf(q.From)), Time: q.Time,
			Payload: tsoPayload{msg: m, from: rf(q.From), reliable: q.Reliable}})
	}
	if err := c.timeCore.Restore(st); err != nil {
		c.stats.Malformed++
	}
	for _, h := range s.HeldRO {
		m, err := decodeMsgPairs(h.Msg)
		if err != nil {
			c.stats.Malformed++
			continue
		}
		c.timing.held = append(c.timing.held, heldMsg{msg: m, d: delivery{from: rf(h.From), received: Receive, reliable: h.Reliable}})
	}
	c.saveRestore.restoring = true
	defer func() { c.saveRestore.restoring = false }()
	for _, p := range s.Pending {
		c.handle(reliable.Delivery{From: reliable.NodeID(rf(p.From)), Group: dgram.Group(p.Group), Seq: p.Seq, Reliable: p.Reliable, Payload: p.Msg}, true)
	}
}

func attrSet(attrs []uint64) map[AttributeHandle]bool {
	m := make(map[AttributeHandle]bool, len(attrs))
	for _, a := range attrs {
		m[AttributeHandle(a)] = true
	}
	return m
}

// inner returns m[k], made and stored when missing.
func inner[K, K2 comparable, V any](m map[K]map[K2]V, k K) map[K2]V {
	in := m[k]
	if in == nil {
		in = make(map[K2]V)
		m[k] = in
	}
	return in
}

// leaveAll adds to d the routing change leave makes for each class of
// declared (its keys), looked up with class.
func leaveAll[H comparable, V, C any](d *groupDelta, declared map[H]V, class func(H) (C, error), leave func(C) groupDelta) {
	for h := range declared {
		cl, _ := class(h)
		d.add(leave(cl))
	}
}

// restoreDirected makes a directed set (c.declared.pubDirected's or
// subDirected's) of a snapshot's interaction classes hs, each with
// value(h), skipping classes the FDD lacks, and adds join's routing
// change for each to d.
func (c *Core) restoreDirected(hs []uint64, value func(uint64) bool, join func(*fomxml.InteractionClass) groupDelta, d *groupDelta) map[InteractionClassHandle]bool {
	set := make(map[InteractionClassHandle]bool, len(hs))
	for _, h := range hs {
		if ic, err := c.interactionClass(InteractionClassHandle(h)); err == nil {
			set[ic.Handle] = value(h)
			d.add(join(ic))
		}
	}
	return set
}

// add appends e's changes to d.
func (d *groupDelta) add(e groupDelta) {
	d.join = append(d.join, e.join...)
	d.leave = append(d.leave, e.leave...)
}

// net cancels a leave against a join of the same group: a group left
// and joined again in one restore stays joined.
func (d groupDelta) net() groupDelta {
	n := map[dgram.Group]int{}
	for _, g := range d.join {
		n[g]++
	}
	for _, g := range d.leave {
		n[g]--
	}
	var out groupDelta
	for _, g := range d.leave {
		if n[g] < 0 {
			out.leave = append(out.leave, g)
			n[g]++
		}
	}
	for _, g := range d.join {
		if n[g] > 0 {
			out.join = append(out.join, g)
			n[g]--
		}
	}
	return out
}
