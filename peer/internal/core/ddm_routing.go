package core

import (
	"slices"

	"github.com/meshrti/meshrti/ddm"
	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer/dgram"
	"github.com/meshrti/meshrti/peer/reliable"
)

// Routing by region (docs/ddm.md). Each dimension is cut into cells
// (ddm.Space); a (class, cell) pair is a multicast group. A subscriber
// joins the groups of the cells its subscription regions touch, at the
// level that keeps each region to a bounded number of joins, for the
// subscribed class and its subclasses; it stays on the class's own group
// too, where announcements, deletes and ownership travel. A sender of an
// update or interaction with regions sends it into the cells where its
// regions overlap some subscriber's region (at that subscriber's level),
// as the subscribers publish their regions in their replicated state,
// and on the class's group only for subscribers without regions; with no
// such subscriber it sends nothing. One message sent into several groups
// keeps its id; receivers deliver it once (seenRegion) and make the exact
// overlap test themselves.

const (
	objectCellKind      uint32 = 0x04000000
	interactionCellKind uint32 = 0x05000000
	privateKind         uint32 = 0x06000000
)

// privateGroup is federate h's own group for updates and interactions
// with regions: a sender sends there instead of into a cell when the
// cell's other members do not need the message (route).
func privateGroup(h FederateHandle) dgram.Group {
	return dgram.Group(privateKind | uint32(uint64(h)%0x00ffffff))
}

// cellGroup is the group of (class, cell) for kind.
func cellGroup(kind uint32, class uint64, cell ddm.Cell) dgram.Group {
	x := class*0x9e3779b97f4a7c15 ^ uint64(cell.Level)<<56 ^ cell.Index*0xc2b2ae3d27d4eb4f
	x ^= x >> 31
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 29
	return dgram.Group(kind | uint32(x%0x00ffffff))
}

// regionCells lists the cells region r touches over dims at the level
// a subscription region uses (ddm.Space.Level).
func regionCells(s *ddm.Space, dims []DimensionHandle, r ddm.Region) []ddm.Cell {
	return s.Cells(dims, r, s.Level(dims, r))
}

// wantedCells returns the cell groups this federate's subscriptions with
// regions need.
func (c *Core) wantedCells() map[dgram.Group]bool {
	want := make(map[dgram.Group]bool)
	s, err := c.space()
	if err != nil {
		return want
	}
	for class, attrs := range c.regions.subs {
		oc, ok := c.fdd.ObjectClassByHandle(class)
		if !ok {
			continue
		}
		classes := subtree(oc)
		for a, sub := range attrs {
			if sub.covers() {
				continue // the class groups carry it
			}
			at, ok := oc.AttributeByHandle(a)
			if !ok {
				continue
			}
			dims := c.dimsOf(at.Dimensions)
			for _, r := range c.committed(sub.regions) {
				for _, cell := range regionCells(s, dims, r) {
					for _, x := range classes {
						want[cellGroup(objectCellKind, uint64(x.Handle), cell)] = true
					}
				}
			}
		}
	}
	if len(want) > 0 {
		want[privateGroup(c.self)] = true
	}
	for class, sub := range c.regions.intSubs {
		ic, ok := c.fdd.InteractionClassByHandle(class)
		if !ok || sub.covers() {
			continue
		}
		dims := c.dimsOf(ic.Dimensions)
		classes := interactionSubtree(ic)
		for _, r := range c.committed(sub.regions) {
			for _, cell := range regionCells(s, dims, r) {
				for _, x := range classes {
					want[cellGroup(interactionCellKind, uint64(x.Handle), cell)] = true
				}
			}
		}
		want[privateGroup(c.self)] = true
	}
	return want
}

// rejoinCells joins the cell groups this federate's subscriptions need
// now and leaves those they no longer do. Cell groups are joined outside
// the routing table's counts (their kinds are their own): to receive
// (cells), and to send (sendCells: in the reliable endpoint only, so
// that the senders on a cell group hear none of its traffic, yet take
// part in its handshakes; their receivers' ACKs come to their inboxes).
func (c *Core) rejoinCells() {
	want := c.wantedCells()
	add, drop := groupChanges(c.regions.cells, want)
	for _, g := range add {
		c.endpoint.AimedAcks(g)
		if c.regions.sendCells[g] { // joined to send already: now to hear too
			c.endpoint.Listen(g)
			c.timeCore.Joined(uint32(g))
			c.out.Groups = append(c.out.Groups, GroupChange{Group: g, Join: true})
			continue
		}
		c.joinGroup(g)
	}
	for _, g := range drop {
		for k := range c.regions.fresh {
			if k.group == g {
				delete(c.regions.fresh, k)
			}
		}
		c.timeCore.Left(uint32(g))
		c.out.Groups = append(c.out.Groups, GroupChange{Group: g})
		if !c.regions.sendCells[g] { // else still sending there
			c.endpoint.Leave(g)
		}
	}
	c.regions.cells = want
}

// resendCells joins, in the reliable endpoint only, the cell groups this
// federate may send into: the cells of the other federates' subscription
// regions for what it publishes. It runs when their subscriptions or
// this federate's publications change, so that the handshakes on a cell
// group are done before the first update goes there.
func (c *Core) resendCells() {
	want := make(map[dgram.Group]bool)
	members := make(map[dgram.Group][]FederateHandle)
	if s, err := c.space(); err == nil {
		for class := range c.declared.pubObj {
			oc, ok := c.fdd.ObjectClassByHandle(class)
			if !ok {
				continue
			}
			pub := c.declared.pubObj[class]
			for x := oc; x != nil; x = x.Parent {
				for f, sub := range c.advisories.objs[x.Handle] {
					if f == c.self {
						continue
					}
					for a, rs := range sub.regions {
						at, ok := oc.AttributeByHandle(a)
						if !ok || !pub[a] {
							continue
						}
						dims := c.dimsOf(at.Dimensions)
						for _, r := range rs {
							for _, cell := range regionCells(s, dims, r) {
								g := cellGroup(objectCellKind, uint64(class), cell)
								want[g] = true
								members[g] = appendOnce(members[g], f)
							}
						}
						want[privateGroup(f)] = true
					}
				}
			}
		}
		for class := range c.declared.pubInt {
			ic, ok := c.fdd.InteractionClassByHandle(class)
			if !ok {
				continue
			}
			dims := c.dimsOf(ic.Dimensions)
			for x := ic; x != nil; x = x.Parent {
				for f, sub := range c.advisories.ints[x.Handle] {
					if f == c.self {
						continue
					}
					for _, r := range sub.regions {
						for _, cell := range regionCells(s, dims, r) {
							g := cellGroup(interactionCellKind, uint64(class), cell)
							want[g] = true
							members[g] = appendOnce(members[g], f)
						}
					}
					if len(sub.regions) > 0 {
						want[privateGroup(f)] = true
					}
				}
			}
		}
	}
	add, drop := groupChanges(c.regions.sendCells, want)
	for _, g := range add {
		if !c.regions.cells[g] {
			c.endpoint.AimedAcks(g)
			c.endpoint.Join(g)
		}
	}
	for _, g := range drop {
		if !c.regions.cells[g] {
			c.endpoint.Leave(g)
		}
	}
	c.regions.sendCells = want
	c.regions.members = members
}

// groupChanges returns the groups of want that have lacks (add) and
// those of have that want lacks (drop), each sorted.
func groupChanges(have, want map[dgram.Group]bool) (add, drop []dgram.Group) {
	for g := range want {
		if !have[g] {
			add = append(add, g)
		}
	}
	for g := range have {
		if !want[g] {
			drop = append(drop, g)
		}
	}
	slices.Sort(add)
	slices.Sort(drop)
	return add, drop
}

// appendOnce appends f to fs unless it is there.
func appendOnce(fs []FederateHandle, f FederateHandle) []FederateHandle {
	if slices.Contains(fs, f) {
		return fs
	}
	return append(fs, f)
}

// objectTargets returns where an update of attrs of an instance of oc
// sent with update regions us must go: the cell groups where us overlaps
// another federate's subscription region for one of attrs, and whether
// some subscriber takes them without regions (the class's group).
func (c *Core) objectTargets(oc *fomxml.ObjectClass, attrs []valuePair, us []ddm.Region) (groups []dgram.Group, plain bool) {
	s, err := c.space()
	if err != nil {
		return nil, true
	}
	var t targetCells
	seen := make(map[FederateHandle]bool)
	for x := oc; x != nil; x = x.Parent {
		for f, sub := range c.advisories.objs[x.Handle] {
			// A federate knows the instance as its nearest subscribed
			// class: the first one found going up.
			if f == c.self || seen[f] || len(sub.attrs) == 0 {
				continue
			}
			seen[f] = true
			for _, p := range attrs {
				a := AttributeHandle(p.H)
				if !slices.Contains(sub.attrs, a) {
					continue
				}
				srs, narrowed := sub.regions[a]
				if !narrowed {
					plain = true
					continue
				}
				at, ok := oc.AttributeByHandle(a)
				if !ok {
					continue
				}
				t.add(s, c.dimsOf(at.Dimensions), us, srs, objectCellKind, uint64(oc.Handle), f)
			}
		}
	}
	return c.cheaper(t.cells, t.need), plain
}

// targetCells collects the cell groups a message goes into, and the
// federates that need it there.
type targetCells struct {
	cells []dgram.Group
	need  []FederateHandle
}

// add adds the cells where the message's regions us overlap the
// subscription regions srs of federate f over dims, each at its region's
// level, as groups of (kind, class); f needs the message when any
// overlaps.
func (t *targetCells) add(s *ddm.Space, dims []DimensionHandle, us, srs []ddm.Region, kind uint32, class uint64, f FederateHandle) {
	any := false
	for _, sr := range srs {
		level := s.Level(dims, sr)
		for _, u := range us {
			in, ok := s.Intersect(dims, u, sr)
			if !ok {
				continue
			}
			any = true
			for _, cell := range s.Cells(dims, in, level) {
				if g := cellGroup(kind, class, cell); !slices.Contains(t.cells, g) {
					t.cells = append(t.cells, g)
				}
			}
		}
	}
	if any {
		t.need = appendOnce(t.need, f)
	}
}

// irrelevantWeight is what a delivery nobody needed costs, in datagrams
// sent: the receiver wakes, decodes and tests the message for nothing,
// and the point of filtering at the sender is that receivers see only
// what they asked for. With 3, 100 publishers and 10 subscribers that
// each cover 10% of the space send 1.4-1.8x the ideal number of
// datagrams and under 5% of the deliveries are irrelevant
// (TestDDMSenderSideFiltering, docs/ddm.md).
const irrelevantWeight = 3

// cheaper chooses between sending into cells, where every member of
// each cell gets a copy, and sending to each federate that needs the
// message on its own group (privateGroup): whichever costs less, as
// datagrams sent plus deliveries, the needless ones weighted by
// irrelevantWeight. Ties go to the cells.
func (c *Core) cheaper(cells []dgram.Group, need []FederateHandle) []dgram.Group {
	slices.Sort(cells)
	if len(need) == 0 {
		return cells
	}
	cost := len(cells) + len(need) // sends, and the deliveries that are needed
	for _, g := range cells {
		for _, f := range c.regions.members[g] {
			if !slices.Contains(need, f) {
				cost += irrelevantWeight // a delivery that is not
			}
		}
	}
	if 2*len(need) >= cost {
		return cells
	}
	own := make([]dgram.Group, 0, len(need))
	for _, f := range need {
		own = append(own, privateGroup(f))
	}
	slices.Sort(own)
	return slices.Compact(own)
}

// interactionTargets is objectTargets for an interaction of class ic.
func (c *Core) interactionTargets(ic *fomxml.InteractionClass, us []ddm.Region) (groups []dgram.Group, plain bool) {
	s, err := c.space()
	if err != nil {
		return nil, true
	}
	var t targetCells
	dims := c.dimsOf(ic.Dimensions)
	seen := make(map[FederateHandle]bool)
	for x := ic; x != nil; x = x.Parent {
		for f, sub := range c.advisories.ints[x.Handle] {
			if f == c.self || seen[f] {
				continue
			}
			seen[f] = true
			if len(sub.regions) == 0 {
				plain = true
				continue
			}
			t.add(s, dims, us, sub.regions, interactionCellKind, uint64(ic.Handle), f)
		}
	}
	return c.cheaper(t.cells, t.need), plain
}

// route sets where o, an update or interaction with regions, goes: its
// groups (o.group the first, o.also the rest); ok is false when nobody
// needs it.
func route(o *outMsg, cells []dgram.Group, plain bool) bool {
	if plain {
		o.also = cells
		return true
	}
	if len(cells) == 0 {
		return false
	}
	o.group, o.also = cells[0], cells[1:]
	return true
}

// isCellGroup reports whether g is the group of a DDM cell.
func isCellGroup(g dgram.Group) bool {
	k := uint32(g) & 0xff000000
	return k == objectCellKind || k == interactionCellKind
}

// History (docs/ddm.md): a region change is a point in time at the
// receiver. A federate whose region moves over a cell joins the cell's
// group then, and what a sender sent into the cell before must not be
// delivered after the move. The reliable layer may owe it some of that
// (the join handshake owes everything after a sender's recent join
// position: a receiver could have been a member before); its Start says
// from which sequence on the sender sent after this federate came
// (Start.Fresh), and the updates and interactions with regions below it
// are dropped as history: counted (Stats.History), not delivered, not
// reported lost.

// noteStart remembers where the fresh messages of a stream of a cell
// group begin, when some owed ones are history.
func (c *Core) noteStart(st reliable.Start) {
	k := streamOn{FederateHandle(st.From), st.Group}
	if isCellGroup(st.Group) && st.Fresh > st.Seq {
		c.regions.fresh[k] = st.Fresh
		return
	}
	delete(c.regions.fresh, k)
}

// history reports whether the delivery d of message m came before its
// stream's fresh messages (noteStart) and is an update or interaction
// with regions: sent into the cell before this federate's region moved
// over it.
func (c *Core) history(d reliable.Delivery, m *wireMsg) bool {
	if len(c.regions.fresh) == 0 {
		return false // the usual case: no stream owes history
	}
	k := streamOn{FederateHandle(d.From), d.Group}
	fresh, ok := c.regions.fresh[k]
	if !ok || !d.Reliable {
		return false
	}
	if d.Seq >= fresh {
		delete(c.regions.fresh, k) // deliveries come in order: the rest are fresh
		return false
	}
	return len(m.Regions) > 0 && (m.Kind == kindUpdate || m.Kind == kindInteraction)
}

// freshLost returns how many of the lost messages of gap g were sent
// after this federate came: the rest were history, owed by the reliable
// layer but not to the federate.
func (c *Core) freshLost(g reliable.Gap) uint64 {
	k := streamOn{FederateHandle(g.From), g.Group}
	fresh, ok := c.regions.fresh[k]
	if !ok || g.ToSeq < g.FromSeq {
		return g.ToSeq - g.FromSeq + 1
	}
	if g.ToSeq+1 >= fresh {
		delete(c.regions.fresh, k)
	}
	if g.ToSeq < fresh {
		return 0
	}
	return g.ToSeq - max(g.FromSeq, fresh) + 1
}

// seenRegion reports whether a message sent with regions was delivered
// here already (a copy from another cell group), and remembers it.
func (c *Core) seenRegion(m *wireMsg, from FederateHandle) bool {
	k := msgKey{from: from, id: m.ID}
	if c.regions.seen.has(k) {
		return true
	}
	c.regions.seen.add(k)
	return false
}
