package testnet

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/meshrti/meshrti/peer"
)

// Data distribution management: regions, whose ranges DIM=lo,hi are
// [lo, hi), and their association with an instance's attributes.

// ranges reads DIM=lo,hi for every dimension of the FOM.
func (s *simulation) ranges(a *args) (map[peer.DimensionHandle]peer.RangeBounds, error) {
	out := map[peer.DimensionHandle]peer.RangeBounds{}
	for _, d := range s.fdd.Dimensions {
		v, ok := a.get(d.Name)
		if !ok {
			continue
		}
		lo, hi, found := strings.Cut(v, ",")
		l, err1 := strconv.ParseUint(lo, 10, 64)
		h, err2 := strconv.ParseUint(hi, 10, 64)
		if !found || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%s=%s: want lower,upper", d.Name, v)
		}
		out[d.Handle] = peer.RangeBounds{Lower: l, Upper: h}
	}
	return out, nil
}

// setRegion sets the ranges of region r, dimensions in order, and
// commits them.
func setRegion(f *peer.Federate, r peer.RegionHandle, rs map[peer.DimensionHandle]peer.RangeBounds) error {
	ds := make([]peer.DimensionHandle, 0, len(rs))
	for d := range rs {
		ds = append(ds, d)
	}
	slices.Sort(ds)
	for _, d := range ds {
		if err := f.SetRangeBounds(r, d, rs[d]); err != nil {
			return err
		}
	}
	return f.CommitRegionModifications(r)
}

// region creates a region, remembers it as the label as=, and sets and
// commits its ranges.
func (s *simulation) region(c *call) (*serviceError, error) {
	label, err := c.a.need("as")
	if err != nil {
		return nil, err
	}
	if _, dup := s.regions[label]; dup {
		return nil, fmt.Errorf("region label %s used twice", label)
	}
	rs, err := s.ranges(c.a)
	if err != nil {
		return nil, err
	}
	ds := make([]peer.DimensionHandle, 0, len(rs))
	for d := range rs {
		ds = append(ds, d)
	}
	r, err := c.f.CreateRegion(ds...)
	if err != nil {
		return fail(c.name, err)
	}
	s.regions[label] = r
	return fail(c.name, setRegion(c.f, r, rs))
}

// regionArg reads region=R, the label of a region the script made.
func (s *simulation) regionArg(a *args) (peer.RegionHandle, error) {
	label, err := a.need("region")
	if err != nil {
		return peer.RegionHandle{}, err
	}
	r, ok := s.regions[label]
	if !ok {
		return peer.RegionHandle{}, fmt.Errorf("no region %s", label)
	}
	return r, nil
}

func (s *simulation) modifyRegion(c *call) (*serviceError, error) {
	r, err := s.regionArg(c.a)
	if err != nil {
		return nil, err
	}
	rs, err := s.ranges(c.a)
	if err != nil {
		return nil, err
	}
	return fail(c.name, setRegion(c.f, r, rs))
}

func (s *simulation) deleteRegion(c *call) (*serviceError, error) {
	r, err := s.regionArg(c.a)
	if err != nil {
		return nil, err
	}
	return fail(c.name, c.f.DeleteRegion(r))
}

// associate runs associate and unassociate (regions for updates).
func (s *simulation) associate(c *call) (*serviceError, error) {
	o, attrs, err := s.objectAndAttrs(c.a)
	if err != nil {
		return nil, err
	}
	rs, ok, err := s.regionsArg(c.a)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%s needs regions=R", c.cmd.name)
	}
	pair := peer.AttributeRegions{Attributes: attrs, Regions: rs}
	if c.cmd.name == "associate" {
		return fail(c.name, c.f.AssociateRegionsForUpdates(o.h, pair))
	}
	return fail(c.name, c.f.UnassociateRegionsForUpdates(o.h, pair))
}
