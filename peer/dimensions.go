package peer

import (
	"fmt"
	"slices"

	"github.com/meshrti/meshrti/fomxml"
)

// Support services for dimensions (IEEE 1516.1-2010 §10.23-§10.27):
// the FDD's, the same in every process, and need no lock.

// GetDimensionHandle (§10.25).
func (f *Federate) GetDimensionHandle(name string) (r0 DimensionHandle, err error) {
	defer f.reported("getDimensionHandle", &err, func() ([]string, []string) { return texts(name), texts(r0) })
	d, ok := lookup(f, (*fomxml.FDD).Dimension, name)
	if !ok {
		return 0, fmt.Errorf("%w: dimension %q", ErrNameNotFound, name)
	}
	return d.Handle, nil
}

// GetDimensionName (§10.26).
func (f *Federate) GetDimensionName(h DimensionHandle) (r0 string, err error) {
	defer f.reported("getDimensionName", &err, func() ([]string, []string) { return texts(h), texts(r0) })
	d, ok := lookup(f, (*fomxml.FDD).DimensionByHandle, h)
	if !ok {
		return "", fmt.Errorf("%w: %d", ErrInvalidDimensionHandle, h)
	}
	return d.Name, nil
}

// GetDimensionUpperBound (§10.27): a range on the dimension lies within
// [0, upper bound).
func (f *Federate) GetDimensionUpperBound(h DimensionHandle) (r0 uint64, err error) {
	defer f.reported("getDimensionUpperBound", &err, func() ([]string, []string) { return texts(h), texts(r0) })
	d, ok := lookup(f, (*fomxml.FDD).DimensionByHandle, h)
	if !ok {
		return 0, fmt.Errorf("%w: %d", ErrInvalidDimensionHandle, h)
	}
	return d.UpperBound, nil
}

// GetAvailableDimensionsForClassAttribute (§10.23): the dimensions the
// FOM binds attribute attr of class to, sorted by handle (none: the
// attribute uses the default region only).
func (f *Federate) GetAvailableDimensionsForClassAttribute(class ObjectClassHandle, attr AttributeHandle) (r0 []DimensionHandle, err error) {
	defer f.reported("getAvailableDimensionsForClassAttribute", &err, func() ([]string, []string) { return texts(class, attr), texts(r0) })
	c, ok := lookup(f, (*fomxml.FDD).ObjectClassByHandle, class)
	if !ok {
		return nil, fmt.Errorf("%w: %d", ErrInvalidObjectClassHandle, class)
	}
	a, ok := c.AttributeByHandle(attr)
	if !ok {
		return nil, fmt.Errorf("%w: %d of %s", ErrAttributeNotDefined, attr, c.QualifiedName)
	}
	return f.dimensionHandles(a.Dimensions), nil
}

// GetAvailableDimensionsForInteractionClass (§10.24).
func (f *Federate) GetAvailableDimensionsForInteractionClass(class InteractionClassHandle) (r0 []DimensionHandle, err error) {
	defer f.reported("getAvailableDimensionsForInteractionClass", &err, func() ([]string, []string) { return texts(class), texts(r0) })
	c, ok := lookup(f, (*fomxml.FDD).InteractionClassByHandle, class)
	if !ok {
		return nil, fmt.Errorf("%w: %d", ErrInvalidInteractionClassHandle, class)
	}
	return f.dimensionHandles(c.Dimensions), nil
}

// dimensionHandles maps dimension names of the FDD to handles, sorted.
func (f *Federate) dimensionHandles(names []string) []DimensionHandle {
	fdd := f.FDD()
	hs := make([]DimensionHandle, 0, len(names))
	for _, n := range names {
		if d, ok := fdd.Dimension(n); ok {
			hs = append(hs, d.Handle)
		}
	}
	slices.Sort(hs)
	return hs
}
