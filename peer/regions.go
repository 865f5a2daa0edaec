package peer

// Regions (IEEE 1516.1-2010 §9.2-§9.4, §10.28-§10.30): ranges per
// dimension that restrict what updates and interactions reach whom
// (docs/ddm.md). Set ranges take effect at CommitRegionModifications.

// CreateRegion (§9.2) creates a region over dims, each at the dimension's
// default range. Errors: ErrInvalidDimensionHandle.
func (f *Federate) CreateRegion(dims ...DimensionHandle) (r0 RegionHandle, err error) {
	defer f.reported("createRegion", &err, func() ([]string, []string) { return texts(dims), texts(r0) })
	return callValue(f, func() (RegionHandle, error) { return f.core.CreateRegion(dims) })
}

// CommitRegionModifications (§9.3) makes the ranges set on regions take
// effect for the subscriptions and updates that use them. Errors:
// ErrRegionNotCreatedByThisFederate, ErrInvalidRegion.
func (f *Federate) CommitRegionModifications(regions ...RegionHandle) (err error) {
	defer f.reported("commitRegionModifications", &err, func() ([]string, []string) { return texts(regions), nil })
	return f.call(func() error { return f.core.CommitRegionModifications(regions) })
}

// DeleteRegion (§9.4). Errors: ErrRegionInUseForUpdateOrSubscription,
// ErrRegionNotCreatedByThisFederate, ErrInvalidRegion.
func (f *Federate) DeleteRegion(region RegionHandle) (err error) {
	defer f.reported("deleteRegion", &err, func() ([]string, []string) { return texts(region), nil })
	return f.call(func() error { return f.core.DeleteRegion(region) })
}

// GetDimensionHandleSet (§10.28) returns region's dimensions. Errors:
// ErrInvalidRegion.
func (f *Federate) GetDimensionHandleSet(region RegionHandle) (r0 []DimensionHandle, err error) {
	defer f.reported("getDimensionHandleSet", &err, func() ([]string, []string) { return texts(region), texts(r0) })
	return callValue(f, func() ([]DimensionHandle, error) { return f.core.GetDimensionHandleSet(region) })
}

// GetRangeBounds (§10.29) returns region's range on dim, as last set.
// Errors: ErrInvalidRegion, ErrRegionDoesNotContainSpecifiedDimension.
func (f *Federate) GetRangeBounds(region RegionHandle, dim DimensionHandle) (r0 RangeBounds, err error) {
	defer f.reported("getRangeBounds", &err, func() ([]string, []string) { return texts(region, dim), texts(r0) })
	return callValue(f, func() (RangeBounds, error) { return f.core.GetRangeBounds(region, dim) })
}

// SetRangeBounds (§10.30) sets region's range on dim: [Lower, Upper),
// within [0, the dimension's upper bound]; it takes effect at
// CommitRegionModifications. Errors: ErrInvalidRangeBound,
// ErrRegionDoesNotContainSpecifiedDimension,
// ErrRegionNotCreatedByThisFederate, ErrInvalidRegion.
func (f *Federate) SetRangeBounds(region RegionHandle, dim DimensionHandle, b RangeBounds) (err error) {
	defer f.reported("setRangeBounds", &err, func() ([]string, []string) { return texts(region, dim, b), nil })
	return f.call(func() error { return f.core.SetRangeBounds(region, dim, b) })
}
