package core

import (
	"fmt"
	"slices"

	"github.com/meshrti/meshrti/ddm"
	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer/dgram"
	"github.com/meshrti/meshrti/peer/hla"
)

// Regions (IEEE 1516.1-2010 §9.2-§9.4, §10.28-§10.30): a federate's
// regions, each a range per dimension it was created with. Range changes
// (SetRangeBounds) take effect at CommitRegionModifications; a region in
// use for updates or subscriptions cannot be deleted. Region handles are
// the creator's: other federates never see them, only the ranges that
// travel with updates and subscriptions (docs/ddm.md).

// regionSet is the regions sub-machine.
type regionSet struct {
	space   *ddm.Space
	spaceOf *fomxml.FDD // the FDD space was built from
	serial  uint64
	regions map[RegionHandle]*region

	// Derived, kept: the dimension handles of the FDD's dimension lists
	// (dimsOf), and the regions of the last message decoded (decoded).
	dims       map[*string][]DimensionHandle
	decEnc     []byte
	decRegions []ddm.Region

	// Subscriptions by region (ddm_services.go): per class and
	// attribute, and per interaction class; updates of instances by the
	// regions associated with their attributes.
	subs    map[ObjectClassHandle]map[AttributeHandle]*regionSub
	intSubs map[InteractionClassHandle]*regionSub
	assoc   map[ObjectInstanceHandle]map[AttributeHandle][]RegionHandle

	// Routing by region (ddm_routing.go): the cell groups joined, the
	// messages with regions delivered lately (a copy may come on another
	// cell group), and the retractions of such messages acted on.
	cells     map[dgram.Group]bool
	sendCells map[dgram.Group]bool
	members   map[dgram.Group][]FederateHandle // the other federates on each send cell
	// lastRegions are the regions the last update of each attribute of
	// another federate's instance came with (encoded; none: the default
	// region), for the scope advisories.
	lastRegions map[ObjectInstanceHandle]map[AttributeHandle][]byte
	seen        recentSet
	retracted   recentSet
	// fresh is, per stream of a cell group this federate began hearing
	// when its region moved over the cell, the first sequence its sender
	// sent after it came (reliable.Start.Fresh); until a delivery reaches
	// it, what comes below is history (ddm_routing.go, history).
	fresh map[streamOn]uint64
}

// streamOn is a sender's stream on one group.
type streamOn struct {
	from  FederateHandle
	group dgram.Group
}

// region is one region of this federate's.
type region struct {
	dims      []DimensionHandle // sorted
	pending   ddm.Region        // SetRangeBounds writes here
	committed ddm.Region        // what subscriptions and updates use
	uses      int               // subscriptions and associations that name it
}

func newRegionSet() regionSet {
	return regionSet{
		regions:   make(map[RegionHandle]*region),
		subs:      make(map[ObjectClassHandle]map[AttributeHandle]*regionSub),
		intSubs:   make(map[InteractionClassHandle]*regionSub),
		assoc:     make(map[ObjectInstanceHandle]map[AttributeHandle][]RegionHandle),
		cells:     make(map[dgram.Group]bool),
		sendCells: make(map[dgram.Group]bool),
		fresh:     make(map[streamOn]uint64),
	}
}

// space returns the federation's dimension space for the current FDD,
// cut as Config.Regions says (the same in every federate: senders and
// receivers compute cells, and so groups, independently).
func (c *Core) space() (*ddm.Space, error) {
	r := &c.regions
	if r.space != nil && r.spaceOf == c.fdd {
		return r.space, nil
	}
	s, err := ddm.NewSpace(c.fdd, c.cfg.Regions)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", hla.ErrRTIinternalError, err)
	}
	r.space, r.spaceOf = s, c.fdd
	r.dims = nil
	return s, nil
}

// CreateRegion (§9.2) creates a region over dims, each range the
// dimension's default (its whole span when the FOM excludes it by
// default). Errors: ErrInvalidDimensionHandle.
func (c *Core) CreateRegion(dims []DimensionHandle) (RegionHandle, error) {
	s, err := c.space()
	if err != nil {
		return RegionHandle{}, err
	}
	ds := slices.Clone(dims)
	slices.Sort(ds)
	ds = slices.Compact(ds)
	var rg ddm.Region
	for _, d := range ds {
		dim, ok := s.Dimension(d)
		if !ok {
			return RegionHandle{}, fmt.Errorf("%w: %d", hla.ErrInvalidDimensionHandle, d)
		}
		r, ok := s.DefaultRange(d)
		if !ok {
			r = ddm.Range{Lower: 0, Upper: dim.UpperBound}
		}
		rg = rg.With(d, r)
	}
	c.regions.serial++
	h := RegionHandle{Federate: c.self, Serial: c.regions.serial}
	c.regions.regions[h] = &region{dims: ds, pending: rg, committed: slices.Clone(rg)}
	return h, nil
}

// ownRegion returns region h of this federate's. Errors:
// ErrRegionNotCreatedByThisFederate, ErrInvalidRegion.
func (c *Core) ownRegion(h RegionHandle) (*region, error) {
	if h.Federate != c.self {
		return nil, fmt.Errorf("%w: %v", hla.ErrRegionNotCreatedByThisFederate, h)
	}
	r, ok := c.regions.regions[h]
	if !ok {
		return nil, fmt.Errorf("%w: %v", hla.ErrInvalidRegion, h)
	}
	return r, nil
}

// knownRegion returns region h, for the queries: a region of another
// federate's is not known here (ErrInvalidRegion).
func (c *Core) knownRegion(h RegionHandle) (*region, error) {
	r, ok := c.regions.regions[h]
	if !ok {
		return nil, fmt.Errorf("%w: %v", hla.ErrInvalidRegion, h)
	}
	return r, nil
}

// SetRangeBounds (§10.30) sets region h's range on dim, effective at the
// next CommitRegionModifications. Errors: ErrRegionNotCreatedByThisFederate,
// ErrInvalidRegion, ErrRegionDoesNotContainSpecifiedDimension,
// ErrInvalidRangeBound.
func (c *Core) SetRangeBounds(h RegionHandle, dim DimensionHandle, b RangeBounds) error {
	r, err := c.ownRegion(h)
	if err != nil {
		return err
	}
	if !slices.Contains(r.dims, dim) {
		return fmt.Errorf("%w: %d in %v", hla.ErrRegionDoesNotContainSpecifiedDimension, dim, h)
	}
	s, err := c.space()
	if err != nil {
		return err
	}
	rg := ddm.Range{Lower: b.Lower, Upper: b.Upper}
	if err := s.CheckRange(dim, rg); err != nil {
		d, _ := s.Dimension(dim)
		return fmt.Errorf("%w: [%d..%d) on dimension %s, whose upper bound is %d", hla.ErrInvalidRangeBound, b.Lower, b.Upper, d.Name, d.UpperBound)
	}
	r.pending = r.pending.With(dim, rg)
	return nil
}

// GetRangeBounds (§10.29) returns region h's range on dim, as last set.
// Errors: ErrInvalidRegion, ErrRegionDoesNotContainSpecifiedDimension.
func (c *Core) GetRangeBounds(h RegionHandle, dim DimensionHandle) (RangeBounds, error) {
	r, err := c.knownRegion(h)
	if err != nil {
		return RangeBounds{}, err
	}
	rg, ok := r.pending.Range(dim)
	if !ok {
		return RangeBounds{}, fmt.Errorf("%w: %d in %v", hla.ErrRegionDoesNotContainSpecifiedDimension, dim, h)
	}
	return RangeBounds{Lower: rg.Lower, Upper: rg.Upper}, nil
}

// GetDimensionHandleSet (§10.28) returns region h's dimensions, sorted.
// Errors: ErrInvalidRegion.
func (c *Core) GetDimensionHandleSet(h RegionHandle) ([]DimensionHandle, error) {
	r, err := c.knownRegion(h)
	if err != nil {
		return nil, err
	}
	return slices.Clone(r.dims), nil
}

// CommitRegionModifications (§9.3) makes the ranges set on regions take
// effect: the subscriptions and update associations that use them follow.
// Errors: ErrRegionNotCreatedByThisFederate, ErrInvalidRegion.
func (c *Core) CommitRegionModifications(hs []RegionHandle) error {
	for _, h := range hs {
		if _, err := c.ownRegion(h); err != nil {
			return err
		}
	}
	var changed []RegionHandle
	for _, h := range hs {
		r := c.regions.regions[h]
		if !slices.Equal(r.pending, r.committed) {
			r.committed = slices.Clone(r.pending)
			changed = append(changed, h)
		}
	}
	if len(changed) > 0 {
		c.regionsMoved(changed)
	}
	return nil
}

// DeleteRegion (§9.4). Errors: ErrRegionInUseForUpdateOrSubscription,
// ErrRegionNotCreatedByThisFederate, ErrInvalidRegion.
func (c *Core) DeleteRegion(h RegionHandle) error {
	r, err := c.ownRegion(h)
	if err != nil {
		return err
	}
	if r.uses > 0 {
		return fmt.Errorf("%w: %v", hla.ErrRegionInUseForUpdateOrSubscription, h)
	}
	delete(c.regions.regions, h)
	return nil
}

// regionsMoved acts on committed range changes of regions hs: the
// subscriptions and associations that use them are routed again.
func (c *Core) regionsMoved(hs []RegionHandle) {
	moved := func(set []RegionHandle) bool {
		for _, h := range hs {
			if _, ok := slices.BinarySearchFunc(set, h, compareRegions); ok {
				return true
			}
		}
		return false
	}
	var classes []ObjectClassHandle
	for class, m := range c.regions.subs {
		for _, s := range m {
			if moved(s.regions) {
				classes = append(classes, class)
				break
			}
		}
	}
	slices.Sort(classes)
	for _, class := range classes {
		if oc, ok := c.fdd.ObjectClassByHandle(class); ok {
			c.publishInterest(oc)
			c.rescopeClass(oc)
		}
	}
	var ics []InteractionClassHandle
	for class, s := range c.regions.intSubs {
		if moved(s.regions) {
			ics = append(ics, class)
		}
	}
	slices.Sort(ics)
	for _, class := range ics {
		c.publishInteractionInterest(class)
	}
	if len(classes)+len(ics) > 0 {
		c.rejoinCells()
	}
	// Instances updated with them: relevance follows the overlap.
	var objs []ObjectInstanceHandle
	for h, m := range c.regions.assoc {
		for _, set := range m {
			if moved(set) {
				objs = append(objs, h)
				break
			}
		}
	}
	slices.SortFunc(objs, compareHandles)
	for _, h := range objs {
		c.attrRelevance(h)
	}
}
