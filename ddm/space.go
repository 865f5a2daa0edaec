package ddm

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/meshrti/meshrti/fomxml"
)

// DimensionHandle names a dimension; it is the FDD's handle.
type DimensionHandle = fomxml.DimensionHandle

// Range is the half-open interval [Lower, Upper) of normalized values on
// one dimension. A valid range has 0 <= Lower < Upper <= the dimension's
// upper bound (see Space.CheckRange); a range with Lower >= Upper is empty
// and overlaps nothing.
type Range struct{ Lower, Upper uint64 }

// Empty reports whether r holds no value (Lower >= Upper).
func (r Range) Empty() bool { return r.Lower >= r.Upper }

// Overlaps reports whether r and o share a value. [0,10) and [10,20) do
// not: the upper bound is exclusive.
func (r Range) Overlaps(o Range) bool { return max(r.Lower, o.Lower) < min(r.Upper, o.Upper) }

func (r Range) String() string { return fmt.Sprintf("[%d..%d)", r.Lower, r.Upper) }

// DimRange is a region's range on one dimension.
type DimRange struct {
	Dim   DimensionHandle
	Range Range
}

// Region is one region (an HLA region: a set of ranges, at most one per
// dimension): the ranges of the dimensions it specifies, sorted by Dim.
// A dimension the region does not list takes its default range from the
// FOM when the region is used with an attribute or interaction class that
// has that dimension (see Space.Overlaps). Regions are values: the
// functions of this package never modify one they are given.
type Region []DimRange

// Range returns r's range on dimension d, and false if r does not
// specify d. If r lists d more than once (an invalid region), the first
// entry counts.
func (r Region) Range(d DimensionHandle) (Range, bool) {
	for _, dr := range r {
		if dr.Dim == d {
			return dr.Range, true
		}
	}
	return Range{}, false
}

// With returns a copy of r with d's range set to rg (replaced if r
// already specifies d, inserted in order if not). r is not modified.
func (r Region) With(d DimensionHandle, rg Range) Region {
	out := make(Region, 0, len(r)+1)
	done := false
	for _, dr := range r {
		switch {
		case dr.Dim == d:
			if !done {
				out = append(out, DimRange{d, rg})
				done = true
			}
			continue
		case dr.Dim > d && !done:
			out = append(out, DimRange{d, rg})
			done = true
		}
		out = append(out, dr)
	}
	if !done {
		out = append(out, DimRange{d, rg})
	}
	return out
}

// Errors, each wrapped with detail by the functions that return them; test
// with errors.Is. They correspond to the HLA exceptions InvalidRangeBound
// and InvalidDimensionHandle.
var (
	ErrInvalidRangeBound = errors.New("ddm: invalid range bound")
	ErrInvalidDimension  = errors.New("ddm: invalid dimension")
)

// Defaults and limits of Config.
const (
	// DefaultCellsPerDimension is the number of cells a dimension is cut
	// into when Config names neither it nor a DefaultCells. docs/ddm.md
	// says why 16.
	DefaultCellsPerDimension = 16
	// DefaultMaxJoins is the default bound on the cells one subscription
	// region joins per class (see Space.Level).
	DefaultMaxJoins = 16
	// MaxCellsPerDimension bounds the cells of one dimension.
	MaxCellsPerDimension = 1 << 16
	// UnboundedUpperBound is the upper bound used for a dimension whose
	// FOM entry gives none (the MIM's HLAfederate dimension: its bound is
	// the RTI's to choose, and federate handles are 64-bit here).
	UnboundedUpperBound = math.MaxUint64
)

// Config sets how a Space cuts dimensions into cells. The zero Config is
// the default. Every federate of a federation must use the same Config
// (and the same FDD): the sender and the receivers compute cells, and so
// multicast groups, independently. (package peer agrees on it when the
// federation is created: joiners adopt the creator's.)
type Config struct {
	// Cells per dimension by name; a dimension not listed gets
	// DefaultCells. A count above the dimension's upper bound is lowered
	// to it (a cell never holds less than one value).
	Cells map[string]int
	// DefaultCells is the cell count of dimensions Cells does not name;
	// 0 means DefaultCellsPerDimension.
	DefaultCells int
	// MaxJoins bounds the cells (so groups) a subscription region joins
	// per class; Level picks coarser levels for regions that would touch
	// more. 0 means DefaultMaxJoins.
	MaxJoins int
}

// Normalized returns c with its defaults spelled out (DefaultCells and
// MaxJoins as NewSpace reads 0) and a copy of Cells, nil when empty: two
// Configs cut every FDD alike when their Normalized forms are Equal. It
// does not check c (NewSpace does).
func (c Config) Normalized() Config {
	if c.DefaultCells == 0 {
		c.DefaultCells = DefaultCellsPerDimension
	}
	if c.MaxJoins == 0 {
		c.MaxJoins = DefaultMaxJoins
	}
	if len(c.Cells) == 0 {
		c.Cells = nil
	} else {
		c.Cells = maps.Clone(c.Cells)
	}
	return c
}

// Equal reports whether c and o cut every FDD alike: whether their
// Normalized forms are the same.
func (c Config) Equal(o Config) bool {
	c, o = c.Normalized(), o.Normalized()
	return c.DefaultCells == o.DefaultCells && c.MaxJoins == o.MaxJoins && maps.Equal(c.Cells, o.Cells)
}

// Space is the federation's dimensions with their upper bounds, default
// ranges and cell counts. It is built once by NewSpace and not changed
// afterwards: any number of goroutines may use it at once.
type Space struct {
	dims     map[DimensionHandle]*dimInfo
	byName   map[string]*dimInfo
	maxJoins int
}

type dimInfo struct {
	d        *fomxml.Dimension
	ub       uint64 // effective upper bound, >= 1
	def      Range  // default range; wildcard when excluded
	excluded bool
	cells    uint64 // level-0 cell count, 1..min(MaxCellsPerDimension, ub)
	topLevel uint8  // the level at which the dimension is one cell
}

// wildcard is the range an Excluded dimension takes in a region that does
// not specify it: it overlaps every non-empty range, so the dimension
// drops out of the test.
var wildcard = Range{0, math.MaxUint64}

// NewSpace builds the space of fdd's dimensions. It fails if cfg names a
// dimension fdd does not have or gives a count out of range, or if a
// dimension's default range (its <value>) cannot be read or lies outside
// [0, upper bound). fdd is only read, and must not change afterwards.
func NewSpace(fdd *fomxml.FDD, cfg Config) (*Space, error) {
	if fdd == nil {
		return nil, errors.New("ddm: nil FDD")
	}
	def := cfg.DefaultCells
	switch {
	case def == 0:
		def = DefaultCellsPerDimension
	case def < 0 || def > MaxCellsPerDimension:
		return nil, fmt.Errorf("ddm: Config.DefaultCells is %d, want 0 (default) or 1..%d", cfg.DefaultCells, MaxCellsPerDimension)
	}
	joins := cfg.MaxJoins
	switch {
	case joins == 0:
		joins = DefaultMaxJoins
	case joins < 0:
		return nil, fmt.Errorf("ddm: Config.MaxJoins is %d, want 0 (default) or more", cfg.MaxJoins)
	}
	s := &Space{
		dims:     make(map[DimensionHandle]*dimInfo, len(fdd.Dimensions)),
		byName:   make(map[string]*dimInfo, len(fdd.Dimensions)),
		maxJoins: joins,
	}
	for name, n := range cfg.Cells {
		if _, ok := fdd.Dimension(name); !ok {
			return nil, fmt.Errorf("%w: Config.Cells names %q, which the FDD does not define", ErrInvalidDimension, name)
		}
		if n < 1 || n > MaxCellsPerDimension {
			return nil, fmt.Errorf("ddm: Config.Cells[%q] is %d, want 1..%d", name, n, MaxCellsPerDimension)
		}
	}
	for _, d := range fdd.Dimensions {
		di := &dimInfo{d: d, ub: d.UpperBound}
		if di.ub == 0 {
			di.ub = UnboundedUpperBound
		}
		rg, excluded, err := parseDefault(d.Value, d.HasValue, di.ub)
		if err != nil {
			return nil, fmt.Errorf("ddm: %s:%d: dimension %s: <value> %q: %w", d.Pos.File, d.Pos.Line, d.Name, d.Value, err)
		}
		di.def, di.excluded = rg, excluded
		n := def
		if c, ok := cfg.Cells[d.Name]; ok {
			n = c
		}
		di.cells = min(uint64(n), di.ub)
		di.topLevel = uint8(bits.Len64(di.cells - 1))
		s.dims[d.Handle] = di
		s.byName[d.Name] = di
	}
	return s, nil
}

// parseDefault reads a dimension's <value>: "[lo..hi)", "[v)" (the single
// value v, i.e. [v..v+1)) or "Excluded". Absent, empty or "NA" means the
// whole range [0, ub).
func parseDefault(v string, has bool, ub uint64) (Range, bool, error) {
	v = strings.TrimSpace(v)
	if !has || v == "" || strings.EqualFold(v, "NA") {
		return Range{0, ub}, false, nil
	}
	if strings.EqualFold(v, "Excluded") {
		return wildcard, true, nil
	}
	inner, ok := strings.CutPrefix(v, "[")
	if ok {
		inner, ok = strings.CutSuffix(inner, ")")
	}
	if !ok {
		return Range{}, false, fmt.Errorf(`%w: want "[lower..upper)", "[value)" or "Excluded"`, ErrInvalidRangeBound)
	}
	num := func(s string) (uint64, error) {
		n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: %q is not a normalized value", ErrInvalidRangeBound, strings.TrimSpace(s))
		}
		return n, nil
	}
	var r Range
	if lo, hi, ok := strings.Cut(inner, ".."); ok {
		var err error
		if r.Lower, err = num(lo); err != nil {
			return Range{}, false, err
		}
		if r.Upper, err = num(hi); err != nil {
			return Range{}, false, err
		}
	} else {
		p, err := num(inner)
		if err != nil {
			return Range{}, false, err
		}
		if p >= ub {
			return Range{}, false, fmt.Errorf("%w: value %d is not below the upper bound %d", ErrInvalidRangeBound, p, ub)
		}
		r = Range{p, p + 1}
	}
	if err := checkRange(r, ub); err != nil {
		return Range{}, false, err
	}
	return r, false, nil
}

func checkRange(r Range, ub uint64) error {
	switch {
	case r.Lower >= r.Upper:
		return fmt.Errorf("%w: %v: lower bound not below upper bound", ErrInvalidRangeBound, r)
	case r.Upper > ub:
		return fmt.Errorf("%w: %v: upper bound above the dimension's %d", ErrInvalidRangeBound, r, ub)
	}
	return nil
}

// MaxJoins is the bound Level keeps subscription regions under.
func (s *Space) MaxJoins() int { return s.maxJoins }

// Dimension returns the FOM's definition of dimension h (shared: do not
// modify it).
func (s *Space) Dimension(h DimensionHandle) (*fomxml.Dimension, bool) {
	di, ok := s.dims[h]
	if !ok {
		return nil, false
	}
	return di.d, true
}

// UpperBound is d's upper bound as getDimensionUpperBound reports it: the
// FOM's, or UnboundedUpperBound for a dimension the FOM gives none.
func (s *Space) UpperBound(d DimensionHandle) (uint64, bool) {
	di, ok := s.dims[d]
	if !ok {
		return 0, false
	}
	return di.ub, true
}

// CheckRange reports whether r is a valid range on d, as setRangeBounds
// requires: an ErrInvalidDimension error if the space has no dimension d,
// an ErrInvalidRangeBound error unless 0 <= Lower < Upper <= the upper
// bound.
func (s *Space) CheckRange(d DimensionHandle, r Range) error {
	di, ok := s.dims[d]
	if !ok {
		return fmt.Errorf("%w: no dimension with handle %#x", ErrInvalidDimension, uint64(d))
	}
	if err := checkRange(r, di.ub); err != nil {
		return fmt.Errorf("dimension %s: %w", di.d.Name, err)
	}
	return nil
}

// CheckRegion reports whether r is a valid region: dimensions of this
// space, strictly increasing (each at most once), each with a valid range
// (see CheckRange).
func (s *Space) CheckRegion(r Region) error {
	for i, dr := range r {
		if i > 0 && dr.Dim <= r[i-1].Dim {
			return fmt.Errorf("%w: region lists dimension %#x out of order or twice", ErrInvalidDimension, uint64(dr.Dim))
		}
		if err := s.CheckRange(dr.Dim, dr.Range); err != nil {
			return err
		}
	}
	return nil
}

// DefaultRange is d's range in a region that does not specify it (the
// FOM's <value>, or the whole [0, upper bound) when there is none). It
// returns false when the default is Excluded (or the space has no d):
// then a region that leaves d out is not tested on d at all.
func (s *Space) DefaultRange(d DimensionHandle) (Range, bool) {
	di, ok := s.dims[d]
	if !ok || di.excluded {
		return Range{}, false
	}
	return di.def, true
}

// Handles maps the dimension names of an attribute or interaction class
// (as fomxml gives them) to handles, sorted by handle: the form every
// function here takes as dims. An unknown name is an ErrInvalidDimension
// error.
func (s *Space) Handles(names []string) ([]DimensionHandle, error) {
	out := make([]DimensionHandle, 0, len(names))
	for _, n := range names {
		di, ok := s.byName[n]
		if !ok {
			return nil, fmt.Errorf("%w: no dimension named %q", ErrInvalidDimension, n)
		}
		out = append(out, di.d.Handle)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// effective is region r's range on d for the overlap test: its own, the
// default, or the wildcard (Excluded, or a dimension the space does not
// have).
func (s *Space) effective(r Region, d DimensionHandle) (rg Range, wild bool) {
	if rg, ok := r.Range(d); ok {
		return rg, false
	}
	di, ok := s.dims[d]
	if !ok || di.excluded {
		return wildcard, true
	}
	return di.def, false
}

// sortedDims returns dims sorted and without repeats, copying only when
// they are not already.
func sortedDims(dims []DimensionHandle) []DimensionHandle {
	for i := 1; i < len(dims); i++ {
		if dims[i] <= dims[i-1] {
			c := slices.Clone(dims)
			slices.Sort(c)
			return slices.Compact(c)
		}
	}
	return dims
}

// Overlaps reports whether regions a and b overlap for an attribute or
// interaction class whose available dimensions are dims: for every
// dimension in dims, their ranges overlap, where a region that does not
// specify a dimension takes its default range, and a dimension whose
// default is Excluded is left out of the test for a pair in which either
// region does not specify it. Dimensions not in dims are ignored; with no
// dims every pair overlaps. An empty range (Lower >= Upper) overlaps
// nothing.
func (s *Space) Overlaps(dims []DimensionHandle, a, b Region) bool {
	for _, d := range dims {
		ra, _ := s.effective(a, d)
		rb, _ := s.effective(b, d)
		if !ra.Overlaps(rb) {
			return false
		}
	}
	return true
}

// SetsOverlap reports whether two region sets overlap: whether some
// region of a overlaps some region of b (see Overlaps). An empty set
// overlaps nothing.
func (s *Space) SetsOverlap(dims []DimensionHandle, a, b []Region) bool {
	for _, ra := range a {
		for _, rb := range b {
			if s.Overlaps(dims, ra, rb) {
				return true
			}
		}
	}
	return false
}

// Intersect returns the region where a and b overlap over dims, and
// whether they do (the same answer as Overlaps). The result specifies
// every dimension of dims (sorted) except an Excluded one that neither
// region specifies; dimensions outside dims are dropped. A sender uses it
// to find the cells where an update region meets a subscription region.
func (s *Space) Intersect(dims []DimensionHandle, a, b Region) (Region, bool) {
	dims = sortedDims(dims)
	out := make(Region, 0, len(dims))
	for _, d := range dims {
		ra, wa := s.effective(a, d)
		rb, wb := s.effective(b, d)
		if !ra.Overlaps(rb) {
			return nil, false
		}
		if wa && wb {
			continue
		}
		out = append(out, DimRange{d, Range{max(ra.Lower, rb.Lower), min(ra.Upper, rb.Upper)}})
	}
	return out, true
}
