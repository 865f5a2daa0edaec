package ddm

import (
	"cmp"
	"encoding/binary"
	"hash/fnv"
	"math"
	"math/bits"
	"slices"
)

// Cell is one cell of the grid over a set of dimensions at one level.
//
// At level 0 dimension d (upper bound U, n cells) is cut into n cells of
// (nearly) equal width: value v lies in cell floor(v*n/U). Level L merges
// 2^L neighbouring cells per dimension (2x2 in two dimensions), so its
// cell of v is floor(v*n/U) >> L, and a dimension has ((n-1)>>L)+1 cells
// there; at a dimension's top level, bits.Len(n-1), it is one cell.
//
// Index numbers the cell row-major over the dims in handle order, the
// first dimension most significant: with per-dimension cell indices
// c_1..c_k and counts n_1..n_k at the level,
// Index = ((c_1*n_2 + c_2)*n_3 + c_3)... . When the product of the counts
// does not fit in 64 bits (many dimensions with many cells), Index is
// instead the 64-bit FNV-1a hash of c_1..c_k, each 8 bytes big-endian;
// two cells may then share an Index, which costs only filtering. With no
// dims there is one cell, {Level: 0, Index: 0}: the whole space.
//
// A Cell depends only on the FDD, the Config, the dims and the region, so
// every process computes the same one. It is comparable and may be a map
// key. The federate core maps (class handle, Cell) to a multicast group by
// hashing.
type Cell struct {
	Level uint8
	Index uint64
}

// span is a region's level-0 cells on one dimension, lo..hi inclusive,
// with the dimension's cell count n.
type span struct{ lo, hi, n uint64 }

// spans computes the level-0 cells r touches on each of dims (sorted),
// and the top level over dims. ok is false if r is empty on one of dims
// (an empty range touches no cell). Ranges reaching beyond the upper bound
// are clipped to it.
func (s *Space) spans(dims []DimensionHandle, r Region, buf []span) (sp []span, top uint8, ok bool) {
	sp = buf[:0]
	for _, d := range dims {
		rg, _ := s.effective(r, d)
		if rg.Empty() {
			return nil, 0, false
		}
		di, known := s.dims[d]
		if !known {
			sp = append(sp, span{0, 0, 1})
			continue
		}
		lo, hi := clip(rg, di.ub)
		sp = append(sp, span{cellOf(lo, di.cells, di.ub), cellOf(hi-1, di.cells, di.ub), di.cells})
		top = max(top, di.topLevel)
	}
	return sp, top, true
}

// clip maps a non-empty range into [0, ub), keeping it non-empty: a range
// wholly above the bound becomes the last value.
func clip(rg Range, ub uint64) (lo, hi uint64) {
	lo = min(rg.Lower, ub-1)
	hi = max(min(rg.Upper, ub), lo+1)
	return lo, hi
}

// cellOf is floor(v*n/ub) for v < ub, exact in 128 bits.
func cellOf(v, n, ub uint64) uint64 {
	hi, lo := bits.Mul64(v, n)
	q, _ := bits.Div64(hi, lo, ub)
	return q
}

// Level returns the level a subscription region r uses for an attribute
// or interaction class with dimensions dims: the finest level at which r
// touches at most MaxJoins cells. Since the top level has a single cell,
// there always is one. An empty region gets level 0.
//
// Level depends on Config.MaxJoins, which every federate must share; the
// core may instead publish the level along with the subscription region.
func (s *Space) Level(dims []DimensionHandle, r Region) uint8 {
	var buf [8]span
	sp, top, ok := s.spans(sortedDims(dims), r, buf[:])
	if !ok {
		return 0
	}
	for l := uint8(0); l < top; l++ {
		count := uint64(1)
		for _, x := range sp {
			hi, c := bits.Mul64(count, (x.hi>>l)-(x.lo>>l)+1)
			if hi != 0 {
				c = math.MaxUint64
			}
			count = c
		}
		if count <= uint64(s.maxJoins) {
			return l
		}
	}
	return top
}

// Cells lists, sorted by Index, the cells at the given level that region
// r touches over dims; a dimension r does not specify counts with its
// default range (all of it when Excluded). With no dims the answer is the
// single cell of the whole space; an empty region touches none. A level
// above the top level of dims (where the space is one cell) is lowered to
// it, so the whole space has one name.
//
// The list has one entry per cell touched, so ask at the level Level
// chooses (at most MaxJoins cells for a subscription region), or at that
// of a subscription a region is intersected with.
func (s *Space) Cells(dims []DimensionHandle, r Region, level uint8) []Cell {
	var buf [8]span
	sp, top, ok := s.spans(sortedDims(dims), r, buf[:])
	if !ok {
		return nil
	}
	level = min(level, top)
	total, hashed := uint64(1), false
	size := uint64(1) // cells touched, saturating
	for i := range sp {
		x := &sp[i]
		x.lo >>= level
		x.hi >>= level
		x.n = ((x.n - 1) >> level) + 1
		hi, t := bits.Mul64(total, x.n)
		hashed = hashed || hi != 0
		total = t
		if h, sz := bits.Mul64(size, x.hi-x.lo+1); h == 0 {
			size = sz
		} else {
			size = math.MaxUint64
		}
	}
	out := make([]Cell, 0, min(size, 1<<12))
	idx := make([]uint64, len(sp))
	for i, x := range sp {
		idx[i] = x.lo
	}
	var b [8]byte
	for {
		var index uint64
		if hashed {
			h := fnv.New64a()
			for _, c := range idx {
				binary.BigEndian.PutUint64(b[:], c)
				h.Write(b[:])
			}
			index = h.Sum64()
		} else {
			for i, c := range idx {
				index = index*sp[i].n + c
			}
		}
		out = append(out, Cell{Level: level, Index: index})
		// Odometer, last dimension fastest: Index ascends when exact.
		i := len(idx) - 1
		for ; i >= 0; i-- {
			if idx[i] < sp[i].hi {
				idx[i]++
				break
			}
			idx[i] = sp[i].lo
		}
		if i < 0 {
			break
		}
	}
	if hashed {
		slices.SortFunc(out, func(a, b Cell) int { return cmp.Compare(a.Index, b.Index) })
		out = slices.Compact(out)
	}
	return out
}
