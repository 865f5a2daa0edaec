package ddm

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
)

// UpdateID names an update region set in a Matcher (the core's choice:
// an object instance's attribute set, an interaction about to be sent).
type UpdateID uint64

// SubID names a subscription region set in a Matcher.
type SubID uint64

// MatchChange is a pair that began (Match true) or stopped (Match false)
// matching.
type MatchChange struct {
	Update UpdateID
	Sub    SubID
	Match  bool
}

// Matcher keeps, for one set of dimensions (an attribute's or interaction
// class's available dimensions), which update region sets overlap which
// subscription region sets (Space.SetsOverlap), and follows changes
// incrementally: setting, moving or removing one region set rematches
// only it, at a cost near the number of regions around it rather than
// all of them.
//
// Each side (updates, subscriptions) is indexed by a uniform grid of
// buckets over the dimensions, sized from that side's number of regions
// and their median extent, and rebuilt when that number has doubled, or
// shrunk to a quarter, since the last build. A region is stored, with its
// ranges, in every bucket of its side's grid that it touches; a region
// that would touch more than maxBucketsPerRegion buckets is kept on its
// side's big list instead, which every query from the other side scans.
// Which pairs match is not stored: it follows from the regions, so a move
// costs a scan of the other side's buckets under the old and new places,
// and a record of the pairs that changed. docs/ddm.md has the costs and
// figures.
//
// A Matcher is not safe for concurrent use; its owner serializes calls.
// Its answers do not depend on the index (only its speed does): they are
// exactly Space.SetsOverlap over the sets currently held.
type Matcher struct {
	s    *Space
	dims []DimensionHandle
	k2   int      // 2 * len(dims): words per region box
	ubs  []uint64 // per dim: the upper bound, for bucketing
	side [2]side  // updates, subscriptions
	gen  uint64   // mark generation (see hit)

	// The pairs that flipped an odd number of times since the last
	// Changes, with their state now, one list per update. An update's
	// slot caches the index of its list for the current epoch (which
	// Changes ends); orphans keeps those of updates removed meanwhile.
	dirty   []dirtyList
	epoch   uint64
	orphans map[UpdateID]int32
	keys    []dirtyKey
	keysTmp []dirtyKey

	// Scratch.
	touched         []int32
	pbox            []uint64
	pstate          []uint8
	ca, cb, cu, odo []int32
	tb              []uint64 // value bounds of the bucket being scanned
	all             []uint64 // bounds for a big list: [0, MaxUint64) per dim
	sampleExtents   [][]uint64
	medBuf          []uint64

	rebuilds int // grid rebuilds so far (tests check that they happen)
}

const (
	sideUpdate = 0
	sideSub    = 1

	// maxBucketsPerRegion: a region touching more buckets than this is
	// kept on its side's big list, which every query scans, instead of
	// in the buckets.
	maxBucketsPerRegion = 64
	// bucketWidthFactor: a bucket is about the side's median region
	// extent divided by this, per dimension.
	bucketWidthFactor = 1.0
	// regionsPerBucket bounds a grid: at most one bucket per this many
	// regions of the side, and at least minBuckets.
	regionsPerBucket = 4
	minBuckets       = 64
)

// keySingle marks the record of a set's only region (see scanRecs2).
const keySingle = 1 << 31

// Region states in a Matcher.
const (
	inBuckets uint8 = iota
	inBig
	inert // empty on some dimension: overlaps nothing, indexed nowhere
)

// side is one side of a Matcher: its region sets and their grid.
type side struct {
	entries []entry
	idOf    []uint64 // per slot: the set's id (dense, for scans)
	marks   []uint64 // per slot: see hit
	dcache  []uint64 // updates, per slot: epoch<<32 | index in Matcher.dirty
	free    []int32
	ids     map[uint64]int32

	// The grid: nb buckets per dimension, bounds (see bucketBounds),
	// row-major strides.
	nb       []uint64
	bounds   [][]uint64
	bstride  []int
	buckets  []bucket
	big      bucket
	builtAt  int // regions held at the last build
	nregions int // regions held, inert ones included
}

// bucket holds region records: keys[j] is slot<<32 | region, with
// keySingle set if the region is its set's only one, and
// boxes[j*k2:(j+1)*k2] its lo, hi per dimension.
type bucket struct {
	keys  []uint64
	boxes []uint64
}

// entry is one region set. box holds, per region, lo and hi for each dim
// (the effective range: the region's own, the default, or the wildcard);
// cells its inclusive bucket range per dim in its side's grid; state
// where it is indexed.
type entry struct {
	live  bool
	box   []uint64
	cells []int32
	state []uint8
}

// NewMatcher returns an empty Matcher over dims (a class's available
// dimensions, as Space.Handles gives them; any order).
func NewMatcher(s *Space, dims []DimensionHandle) *Matcher {
	dims = slices.Clone(sortedDims(dims))
	k := len(dims)
	m := &Matcher{
		s:             s,
		dims:          dims,
		k2:            2 * k,
		ubs:           make([]uint64, k),
		orphans:       make(map[UpdateID]int32),
		epoch:         1,
		odo:           make([]int32, k),
		tb:            make([]uint64, 2*k),
		all:           make([]uint64, 2*k),
		sampleExtents: make([][]uint64, k),
		medBuf:        make([]uint64, k),
	}
	for i, d := range dims {
		m.all[2*i+1] = math.MaxUint64
		m.ubs[i] = math.MaxUint64
		if di, ok := s.dims[d]; ok {
			m.ubs[i] = di.ub
		}
	}
	for i := range m.side {
		m.side[i].ids = make(map[uint64]int32)
		m.grid(&m.side[i])
	}
	return m
}

// SetUpdate inserts update region set id, or replaces (moves) it, and
// rematches it against every subscription. rs is copied.
func (m *Matcher) SetUpdate(id UpdateID, rs []Region) { m.set(sideUpdate, uint64(id), rs) }

// RemoveUpdate removes update region set id; its matches stop.
func (m *Matcher) RemoveUpdate(id UpdateID) { m.remove(sideUpdate, uint64(id)) }

// SetSubscription inserts subscription region set id, or replaces (moves)
// it, and rematches it against every update. rs is copied.
func (m *Matcher) SetSubscription(id SubID, rs []Region) { m.set(sideSub, uint64(id), rs) }

// RemoveSubscription removes subscription region set id; its matches
// stop.
func (m *Matcher) RemoveSubscription(id SubID) { m.remove(sideSub, uint64(id)) }

// Matches returns the subscriptions that update id currently matches,
// sorted; nil if there are none or id is unknown. The slice is the
// caller's. It costs one query (a scan of the buckets under id's
// regions), not a lookup.
func (m *Matcher) Matches(id UpdateID) []SubID {
	return matchIDs[SubID](m, sideUpdate, uint64(id))
}

// Subscribers returns the updates that subscription id currently
// matches, sorted; nil if there are none or id is unknown. The slice is
// the caller's. It costs one query.
func (m *Matcher) Subscribers(id SubID) []UpdateID {
	return matchIDs[UpdateID](m, sideSub, uint64(id))
}

// Len returns the number of update and subscription region sets held.
func (m *Matcher) Len() (updates, subscriptions int) {
	return len(m.side[sideUpdate].ids), len(m.side[sideSub].ids)
}

// matchIDs lists the IDs of the sets on the other side that set id on
// side i matches, sorted.
func matchIDs[T ~uint64](m *Matcher, i int, id uint64) []T {
	slot, ok := m.side[i].ids[id]
	if !ok {
		return nil
	}
	e := &m.side[i].entries[slot]
	found := m.scanEntry(i, e.box, e.state, m.nextGen(), bitNew, m.touched[:0])
	m.touched = found[:0]
	if len(found) == 0 {
		return nil
	}
	other := &m.side[1-i]
	out := make([]T, len(found))
	for j, o := range found {
		out[j] = T(other.idOf[o])
	}
	slices.Sort(out)
	return out
}

func (m *Matcher) nextGen() uint64 {
	m.gen++
	return m.gen
}

// Marks: a scan sets marks[o] of each slot o it finds on the other side
// to gen<<2 | bits, or ORs in bits if the slot already has this gen:
// bitOld for a match of the old regions of the set being moved, bitNew
// for the new. touched lists each slot found once.
const (
	bitOld = 1
	bitNew = 2
)

// hit marks slot o of side sd as found with bits in generation gen,
// appending it to touched the first time.
func hit(sd *side, o int32, gen, bits uint64, touched []int32) []int32 {
	if sd.marks[o]>>2 != gen {
		sd.marks[o] = gen<<2 | bits
		return append(touched, o)
	}
	sd.marks[o] |= bits
	return touched
}

func (m *Matcher) set(i int, id uint64, rs []Region) {
	sd := &m.side[i]
	slot, existed := sd.ids[id]
	var e *entry
	if existed {
		e = &sd.entries[slot]
		m.unindex(sd, slot)
		sd.nregions -= len(e.state)
		// Keep the old regions for the scan below; the entry takes the
		// scratch buffers.
		m.pbox, e.box = e.box, m.pbox
		m.pstate, e.state = e.state, m.pstate
	} else {
		if n := len(sd.free); n > 0 {
			slot = sd.free[n-1]
			sd.free = sd.free[:n-1]
		} else {
			slot = int32(len(sd.entries))
			sd.entries = append(sd.entries, entry{})
			sd.idOf = append(sd.idOf, 0)
			sd.marks = append(sd.marks, 0)
			if i == sideUpdate {
				sd.dcache = append(sd.dcache, 0)
			}
		}
		e = &sd.entries[slot]
		e.live = true
		sd.idOf[slot] = id
		sd.ids[id] = slot
		if i == sideUpdate {
			sd.dcache[slot] = 0
			if di, ok := m.orphans[UpdateID(id)]; ok {
				sd.dcache[slot] = m.epoch<<32 | uint64(di)
				delete(m.orphans, UpdateID(id))
			}
		}
	}
	e.box = e.box[:0]
	e.state = e.state[:0]
	for _, r := range rs {
		st := inBuckets
		for _, d := range m.dims {
			rg, _ := m.s.effective(r, d)
			e.box = append(e.box, rg.Lower, rg.Upper)
			if rg.Empty() {
				st = inert
			}
		}
		e.state = append(e.state, st)
	}
	e.cells = slices.Grow(e.cells[:0], len(e.box))[:len(e.box)]
	sd.nregions += len(rs)
	if m.needRebuild(sd) {
		m.rebuild(sd)
	} else {
		m.index(sd, slot)
	}
	other := &m.side[1-i]

	// Scan the other side: old matches get bitOld, new ones bitNew.
	gen := m.nextGen()
	touched := m.touched[:0]
	switch {
	case existed && len(m.pstate) == 1 && len(e.state) == 1 && m.pstate[0] != inert && e.state[0] != inert:
		// A move of one region: one scan of the buckets under the old
		// and new places together, if that is no more than two.
		touched = m.scanMove(i, slot, m.pbox, e.box, gen, touched)
	case existed:
		touched = m.scanEntry(i, m.pbox, m.pstate, gen, bitOld, touched)
		touched = m.scanEntry(i, e.box, e.state, gen, bitNew, touched)
	default:
		touched = m.scanEntry(i, e.box, e.state, gen, bitNew, touched)
	}
	for _, o := range touched {
		switch other.marks[o] & 3 {
		case bitOld:
			m.flipSlots(i, slot, o, false)
		case bitNew:
			m.flipSlots(i, slot, o, true)
		}
	}
	m.touched = touched[:0]
}

func (m *Matcher) remove(i int, id uint64) {
	sd := &m.side[i]
	slot, ok := sd.ids[id]
	if !ok {
		return
	}
	e := &sd.entries[slot]
	touched := m.scanEntry(i, e.box, e.state, m.nextGen(), bitOld, m.touched[:0])
	for _, o := range touched {
		m.flipSlots(i, slot, o, false)
	}
	m.touched = touched[:0]
	if i == sideUpdate && sd.dcache[slot]>>32 == m.epoch {
		// Its record outlives it, for Changes and for a set of the same
		// id before then.
		m.orphans[UpdateID(id)] = int32(uint32(sd.dcache[slot]))
	}
	m.unindex(sd, slot)
	sd.nregions -= len(e.state)
	*e = entry{box: e.box[:0], cells: e.cells[:0], state: e.state[:0]}
	delete(sd.ids, id)
	sd.free = append(sd.free, slot)
	if m.needRebuild(sd) {
		m.rebuild(sd)
	}
}

// cellsIn computes into out the inclusive bucket range of box in side
// sd's grid, per dimension, and returns the number of buckets.
func (m *Matcher) cellsIn(sd *side, box []uint64, out []int32) int {
	n := 1
	for d := range m.dims {
		lo, hi := clip(Range{box[2*d], box[2*d+1]}, m.ubs[d])
		cl, ch := cellOf(lo, sd.nb[d], m.ubs[d]), cellOf(hi-1, sd.nb[d], m.ubs[d])
		out[2*d], out[2*d+1] = int32(cl), int32(ch)
		n *= int(ch - cl + 1) // each at most 2^16, and the grid is bounded: no overflow
	}
	return n
}

// scanEntry finds the sets on the other side that overlap a set of side
// i with the given boxes and states, marking them with bits (see hit).
func (m *Matcher) scanEntry(i int, box []uint64, state []uint8, gen, bits uint64, touched []int32) []int32 {
	other := &m.side[1-i]
	k2 := m.k2
	cells := slices.Grow(m.ca[:0], k2)[:k2]
	m.ca = cells
	for r, rs := range state {
		if rs == inert {
			continue
		}
		b := box[r*k2 : (r+1)*k2]
		f := func(o int32) { touched = hit(other, o, gen, bits, touched) }
		m.cellsIn(other, b, cells)
		m.visit(other, cells, func(bk *bucket, tb []uint64) { scanRecs(b, tb, bk, f) })
		scanRecs(b, m.all, &other.big, f)
	}
	return touched
}

// scanMove finds the sets on the other side that overlap box a (bitOld)
// or box b (bitNew), the old and new place of set slot of side i, in one
// scan of the buckets spanning both when that visits no more buckets
// than two scans would. Sets of one region are decided as they are
// found (flipped if they match one box only, see scanRecs2); the others
// are marked and listed in touched.
func (m *Matcher) scanMove(i int, slot int32, a, b []uint64, gen uint64, touched []int32) []int32 {
	other := &m.side[1-i]
	k2 := m.k2
	ca := slices.Grow(m.ca[:0], k2)[:k2]
	cb := slices.Grow(m.cb[:0], k2)[:k2]
	cu := slices.Grow(m.cu[:0], k2)[:k2]
	m.ca, m.cb, m.cu = ca, cb, cu
	na, nb := m.cellsIn(other, a, ca), m.cellsIn(other, b, cb)
	nu := 1
	for j := 0; j < k2; j += 2 {
		cu[j], cu[j+1] = min(ca[j], cb[j]), max(ca[j+1], cb[j+1])
		nu *= int(cu[j+1] - cu[j] + 1)
	}
	if nu > na+nb {
		fa := func(o int32) { touched = hit(other, o, gen, bitOld, touched) }
		fb := func(o int32) { touched = hit(other, o, gen, bitNew, touched) }
		m.visit(other, ca, func(bk *bucket, tb []uint64) { scanRecs(a, tb, bk, fa) })
		m.visit(other, cb, func(bk *bucket, tb []uint64) { scanRecs(b, tb, bk, fb) })
		scanRecs(a, m.all, &other.big, fa)
		scanRecs(b, m.all, &other.big, fb)
		return touched
	}
	f := func(key, bits uint64) {
		o := int32(key >> 32)
		if key&keySingle == 0 {
			touched = hit(other, o, gen, bits, touched)
			return
		}
		m.flipSlots(i, slot, o, bits == bitNew)
	}
	m.visit(other, cu, func(bk *bucket, tb []uint64) { scanRecs2(a, b, tb, bk, f) })
	scanRecs2(a, b, m.all, &other.big, f)
	return touched
}

// Scanning a bucket. A pair of regions that overlap is in every bucket
// under their intersection, and counts only in the one that holds its
// lowest corner p (per dimension, the larger of the two lower bounds):
// tb holds, per dimension, the bucket's value bounds [lo, hi), and the
// test is lo <= p < hi. (A pair's buckets always include that one: see
// bucketBounds.) A big list has bounds [0, MaxUint64) everywhere, which
// every p passes.

// scanRecs calls hit with the slot of every record in bucket bk whose
// box overlaps box, counting in this bucket (bounds tb). One and two
// dimensions have their own loops: this is where a Matcher spends its
// time.
func scanRecs(box, tb []uint64, bk *bucket, hit func(int32)) {
	keys, boxes := bk.keys, bk.boxes
	switch len(box) {
	case 2:
		a0, a1 := box[0], box[1]
		t0, t1 := tb[0], tb[1]
		boxes = boxes[:2*len(keys)]
		for j, key := range keys {
			r := boxes[2*j : 2*j+2 : 2*j+2]
			if p := max(a0, r[0]); p < min(a1, r[1]) && p >= t0 && p < t1 {
				hit(int32(key >> 32))
			}
		}
	case 4:
		a0, a1, a2, a3 := box[0], box[1], box[2], box[3]
		t0, t1, t2, t3 := tb[0], tb[1], tb[2], tb[3]
		boxes = boxes[:4*len(keys)]
		for j, key := range keys {
			r := boxes[4*j : 4*j+4 : 4*j+4]
			p, q := max(a0, r[0]), max(a2, r[2])
			if p < min(a1, r[1]) && q < min(a3, r[3]) && p >= t0 && p < t1 && q >= t2 && q < t3 {
				hit(int32(key >> 32))
			}
		}
	default:
		k2 := len(box)
		for j, key := range keys {
			if overlapHere(box, boxes[j*k2:(j+1)*k2], tb) {
				hit(int32(key >> 32))
			}
		}
	}
}

// scanRecs2 is the scan of a move from box a to box b, over buckets
// spanning both: hit gets bitOld if a record overlaps a and bitNew if it
// overlaps b. Here a record counts in the bucket that holds the lowest
// corner of its intersection with the bounding box of a and b, so each
// record is seen once in the whole scan, with both bits: a record that is
// its set's only region (keySingle) and overlaps both is a pair that did
// not change, and is skipped.
func scanRecs2(a, b, tb []uint64, bk *bucket, hit func(key, bits uint64)) {
	keys, boxes := bk.keys, bk.boxes
	if len(a) == 4 {
		a0, a1, a2, a3 := a[0], a[1], a[2], a[3]
		b0, b1, b2, b3 := b[0], b[1], b[2], b[3]
		u0, u2 := min(a0, b0), min(a2, b2)
		t0, t1, t2, t3 := tb[0], tb[1], tb[2], tb[3]
		boxes = boxes[:4*len(keys)]
		for j, key := range keys {
			r := boxes[4*j : 4*j+4 : 4*j+4]
			if p, q := max(u0, r[0]), max(u2, r[2]); p < t0 || p >= t1 || q < t2 || q >= t3 {
				continue
			}
			var bits uint64
			if max(a0, r[0]) < min(a1, r[1]) && max(a2, r[2]) < min(a3, r[3]) {
				bits = bitOld
			}
			if max(b0, r[0]) < min(b1, r[1]) && max(b2, r[2]) < min(b3, r[3]) {
				bits |= bitNew
			}
			if bits != 0 && (bits != bitOld|bitNew || key&keySingle == 0) {
				hit(key, bits)
			}
		}
		return
	}
	k2 := len(a)
	for j, key := range keys {
		r := boxes[j*k2 : (j+1)*k2]
		here := true
		for d := 0; d < k2; d += 2 {
			if p := max(min(a[d], b[d]), r[d]); p < tb[d] || p >= tb[d+1] {
				here = false
				break
			}
		}
		if !here {
			continue
		}
		var bits uint64
		if boxesOverlap(a, r) {
			bits = bitOld
		}
		if boxesOverlap(b, r) {
			bits |= bitNew
		}
		if bits != 0 && (bits != bitOld|bitNew || key&keySingle == 0) {
			hit(key, bits)
		}
	}
}

// overlapHere reports whether boxes a and b overlap with their lowest
// common corner within bounds tb.
func overlapHere(a, b, tb []uint64) bool {
	b, tb = b[:len(a)], tb[:len(a)]
	for j := 0; j < len(a); j += 2 {
		p := max(a[j], b[j])
		if p >= min(a[j+1], b[j+1]) || p < tb[j] || p >= tb[j+1] {
			return false
		}
	}
	return true
}

// boxesOverlap is Space.Overlaps on effective ranges: lo, hi pairs.
func boxesOverlap(a, b []uint64) bool {
	b = b[:len(a)]
	for j := 0; j < len(a); j += 2 {
		if max(a[j], b[j]) >= min(a[j+1], b[j+1]) {
			return false
		}
	}
	return true
}

// Changes returns the pairs whose matching differs from what it was at
// the previous call (at NewMatcher for the first), sorted by update then
// subscription, and starts over. A pair that began and stopped matching
// in between is not reported. Between calls the record holds one entry
// per pair that changed.
func (m *Matcher) Changes() []MatchChange {
	n := 0
	keys := m.keys[:0]
	for di, l := range m.dirty {
		n += len(l.items)
		if len(l.items) > 0 {
			keys = append(keys, dirtyKey{l.u, int32(di)})
		}
	}
	var out []MatchChange
	if n > 0 {
		out = make([]MatchChange, 0, n)
		keys = m.sortKeys(keys)
		for _, k := range keys {
			l := &m.dirty[k.di]
			slices.SortFunc(l.items, func(a, b pend) int { return cmp.Compare(uint64(a.sub), uint64(b.sub)) })
			for _, p := range l.items {
				out = append(out, MatchChange{Update: l.u, Sub: p.sub, Match: p.now})
			}
		}
	}
	m.keys = keys[:0]
	m.resetDirty()
	return out
}

// sortKeys sorts keys by update id: a least-significant-digit radix
// sort by bytes, skipping the bytes all keys share (most of them, for
// ids that are small numbers). It may return the scratch buffer.
func (m *Matcher) sortKeys(keys []dirtyKey) []dirtyKey {
	if len(keys) < 64 {
		slices.SortFunc(keys, func(a, b dirtyKey) int { return cmp.Compare(uint64(a.u), uint64(b.u)) })
		return keys
	}
	tmp := slices.Grow(m.keysTmp[:0], len(keys))[:len(keys)]
	for shift := uint(0); shift < 64; shift += 8 {
		var count [256]int
		for _, k := range keys {
			count[byte(uint64(k.u)>>shift)]++
		}
		if count[byte(uint64(keys[0].u)>>shift)] == len(keys) {
			continue // every key has this byte
		}
		pos := 0
		for b, c := range count {
			count[b] = pos
			pos += c
		}
		for _, k := range keys {
			b := byte(uint64(k.u) >> shift)
			tmp[count[b]] = k
			count[b]++
		}
		keys, tmp = tmp, keys
	}
	m.keysTmp = tmp[:0]
	return keys
}

// dirtyList is the record of one update's pairs that changed; idx finds
// a subscription in items once there are many.
type dirtyList struct {
	u     UpdateID
	items []pend
	idx   map[SubID]int32
}

type dirtyKey struct {
	u  UpdateID
	di int32
}

type pend struct {
	sub SubID
	now bool
}

// maxDirtyScan: a dirty list longer than this gets an index.
const maxDirtyScan = 32

// resetDirty empties the record and starts a new epoch, which
// invalidates every entry's cached record index.
func (m *Matcher) resetDirty() {
	m.epoch++
	if m.epoch == 1<<32 {
		// The caches hold 32 bits of epoch: start over.
		m.epoch = 1
		clear(m.side[sideUpdate].dcache)
	}
	clear(m.orphans)
	if cap(m.dirty) > 4096 {
		// Let a burst (the first full match) go.
		m.dirty, m.keys = nil, nil
		return
	}
	for i := range m.dirty {
		m.dirty[i].items = m.dirty[i].items[:0]
		m.dirty[i].idx = nil
	}
	m.dirty = m.dirty[:0]
}

// dirtyOf returns the index in m.dirty of the record of the update in
// slot, adding one.
func (m *Matcher) dirtyOf(slot int32) int32 {
	sd := &m.side[sideUpdate]
	if c := sd.dcache[slot]; c>>32 == m.epoch {
		return int32(uint32(c))
	}
	u := UpdateID(sd.idOf[slot])
	di := int32(len(m.dirty))
	if len(m.dirty) < cap(m.dirty) {
		m.dirty = m.dirty[:di+1] // reuse the items slice left there
		m.dirty[di].u = u
	} else {
		m.dirty = append(m.dirty, dirtyList{u: u})
	}
	sd.dcache[slot] = m.epoch<<32 | uint64(di)
	return di
}

// flipSlots records that the pair of slot (on side i) and o (on the
// other side) began (now) or stopped matching.
func (m *Matcher) flipSlots(i int, slot, o int32, now bool) {
	u, s := slot, o
	if i == sideSub {
		u, s = o, slot
	}
	m.flip(m.dirtyOf(u), SubID(m.side[sideSub].idOf[s]), now)
}

// flip records that pair (update of dirty list di, sub) began (now) or
// stopped matching: a second flip since the last Changes cancels the
// first.
func (m *Matcher) flip(di int32, sub SubID, now bool) {
	l := &m.dirty[di]
	j := int32(-1)
	if l.idx != nil {
		if x, ok := l.idx[sub]; ok {
			j = x
		}
	} else {
		for x := range l.items {
			if l.items[x].sub == sub {
				j = int32(x)
				break
			}
		}
	}
	if j < 0 {
		l.items = append(l.items, pend{sub, now})
		switch {
		case l.idx != nil:
			l.idx[sub] = int32(len(l.items) - 1)
		case len(l.items) > maxDirtyScan:
			l.idx = make(map[SubID]int32, 2*len(l.items))
			for x, p := range l.items {
				l.idx[p.sub] = int32(x)
			}
		}
		return
	}
	last := int32(len(l.items) - 1)
	if l.idx != nil {
		delete(l.idx, sub)
		if j != last {
			l.idx[l.items[last].sub] = j
		}
	}
	l.items[j] = l.items[last]
	l.items = l.items[:last]
}

// visit calls fn with the records of side sd in every non-empty bucket
// of the inclusive per-dimension ranges cells (lo, hi pairs), and the
// bucket's value bounds per dimension (see scanRecs).
func (m *Matcher) visit(sd *side, cells []int32, fn func(bk *bucket, tb []uint64)) {
	tb := m.tb
	if len(cells) == 4 {
		b0, b1 := sd.bounds[0], sd.bounds[1]
		s0 := sd.bstride[0]
		for c0 := cells[0]; c0 <= cells[1]; c0++ {
			tb[0], tb[1] = b0[c0], b0[c0+1]
			base := int(c0) * s0
			for c1 := cells[2]; c1 <= cells[3]; c1++ {
				if bk := &sd.buckets[base+int(c1)]; len(bk.keys) > 0 {
					tb[2], tb[3] = b1[c1], b1[c1+1]
					fn(bk, tb)
				}
			}
		}
		return
	}
	m.buckets(sd, cells, func(b int) {
		bk := &sd.buckets[b]
		if len(bk.keys) == 0 {
			return
		}
		for d := range sd.bstride {
			c := (b / sd.bstride[d]) % int(sd.nb[d])
			tb[2*d], tb[2*d+1] = sd.bounds[d][c], sd.bounds[d][c+1]
		}
		fn(bk, tb)
	})
}

// bucketBounds returns the value bounds of n <= ub buckets over [0, ub):
// bucket c holds the values v with bounds[c] <= v < bounds[c+1], which
// are those with cellOf(min(v, ub-1), n, ub) == c: bounds[c] is
// ceil(c*ub/n), and the last bucket also holds every value above the
// upper bound (bounds[n] is MaxUint64, above every lower bound of a
// non-empty range). Since a region's bucket range is computed from its
// range clipped the same way, the bucket holding the lowest corner of an
// overlapping pair is in the ranges of both.
func bucketBounds(n, ub uint64) []uint64 {
	b := make([]uint64, n+1)
	for c := uint64(1); c < n; c++ {
		hi, lo := bits.Mul64(c, ub)
		q, r := bits.Div64(hi, lo, n)
		if r != 0 {
			q++
		}
		b[c] = q
	}
	b[n] = math.MaxUint64
	return b
}

// buckets calls fn with the index of every bucket of side sd in the
// inclusive per-dimension range cells (lo, hi pairs).
func (m *Matcher) buckets(sd *side, cells []int32, fn func(b int)) {
	k := len(m.odo)
	switch k {
	case 0:
		fn(0)
		return
	case 1:
		for c := cells[0]; c <= cells[1]; c++ {
			fn(int(c))
		}
		return
	}
	odo := m.odo
	for d := range k {
		odo[d] = cells[2*d]
	}
	for {
		b := 0
		for d, c := range odo {
			b += int(c) * sd.bstride[d]
		}
		fn(b)
		d := k - 1
		for ; d >= 0; d-- {
			if odo[d] < cells[2*d+1] {
				odo[d]++
				break
			}
			odo[d] = cells[2*d]
		}
		if d < 0 {
			return
		}
	}
}

// index places the regions of entry slot of side sd in its grid (or big
// list), computing their bucket ranges.
func (m *Matcher) index(sd *side, slot int32) {
	e := &sd.entries[slot]
	k2 := m.k2
	for r, st := range e.state {
		if st == inert {
			continue
		}
		box := e.box[r*k2 : (r+1)*k2]
		cells := e.cells[r*k2 : (r+1)*k2]
		n := m.cellsIn(sd, box, cells)
		key := uint64(slot)<<32 | uint64(r)
		if len(e.state) == 1 {
			key |= keySingle
		}
		if n > maxBucketsPerRegion {
			e.state[r] = inBig
			sd.big.add(key, box)
			continue
		}
		e.state[r] = inBuckets
		m.buckets(sd, cells, func(b int) { sd.buckets[b].add(key, box) })
	}
}

// unindex takes the regions of entry slot out of side sd's grid.
func (m *Matcher) unindex(sd *side, slot int32) {
	e := &sd.entries[slot]
	k2 := m.k2
	for r, st := range e.state {
		key := uint64(slot)<<32 | uint64(r)
		if len(e.state) == 1 {
			key |= keySingle
		}
		switch st {
		case inBig:
			sd.big.remove(key, k2)
		case inBuckets:
			m.buckets(sd, e.cells[r*k2:(r+1)*k2], func(b int) { sd.buckets[b].remove(key, k2) })
		}
	}
}

func (bk *bucket) add(key uint64, box []uint64) {
	bk.keys = append(bk.keys, key)
	bk.boxes = append(bk.boxes, box...)
}

// remove removes the record with the given key (boxes of k2 words),
// moving the last record into its place.
func (bk *bucket) remove(key uint64, k2 int) {
	for j, x := range bk.keys {
		if x == key {
			last := len(bk.keys) - 1
			bk.keys[j] = bk.keys[last]
			dst, src := bk.boxes[j*k2:(j+1)*k2], bk.boxes[last*k2:(last+1)*k2]
			for x := range dst {
				dst[x] = src[x]
			}
			bk.keys = bk.keys[:last]
			bk.boxes = bk.boxes[:last*k2]
			return
		}
	}
	panic("ddm: Matcher index out of step with its entries")
}

// medians writes into out the median clipped extent per dimension of
// up to about 1024 of side sd's regions (0 if it has none) and returns
// it.
func (m *Matcher) medians(sd *side, out []uint64) []uint64 {
	const samples = 1024
	step := max(1, sd.nregions/samples)
	ext := m.sampleExtents
	for d := range ext {
		ext[d] = ext[d][:0]
	}
	seen := 0
	for _, e := range sd.entries {
		if !e.live {
			continue
		}
		for r, st := range e.state {
			seen++
			if st == inert || seen%step != 0 {
				continue
			}
			for d := range m.dims {
				j := r*m.k2 + 2*d
				lo, hi := clip(Range{e.box[j], e.box[j+1]}, m.ubs[d])
				ext[d] = append(ext[d], hi-lo)
			}
		}
	}
	for d := range out {
		out[d] = 0
		if len(ext[d]) > 0 {
			slices.Sort(ext[d])
			out[d] = ext[d][len(ext[d])/2]
		}
	}
	return out
}

// needRebuild reports whether side sd's grid should be rebuilt: when its
// number of regions has doubled, or fallen to a quarter, since the last
// build.
func (m *Matcher) needRebuild(sd *side) bool {
	n := sd.nregions
	return n > 2*sd.builtAt+32 || (sd.builtAt >= 256 && n < sd.builtAt/4)
}

// rebuild sizes side sd's grid for the regions it holds and indexes them
// all again.
func (m *Matcher) rebuild(sd *side) {
	m.rebuilds++
	sd.builtAt = sd.nregions
	m.grid(sd)
	for s := range sd.entries {
		if sd.entries[s].live {
			m.index(sd, int32(s))
		}
	}
}

// grid sets up empty buckets for side sd: per dimension, about the
// median extent of its regions (from up to about 1024 of them) divided
// by bucketWidthFactor, at least 1 and at most the upper bound; the
// largest count is halved until the total is within bounds.
func (m *Matcher) grid(sd *side) {
	med := m.medians(sd, m.medBuf)
	nb := make([]uint64, len(m.dims))
	for d := range m.dims {
		want := uint64(1)
		if w := float64(med[d]); w > 0 {
			want = uint64(min(float64(MaxCellsPerDimension), bucketWidthFactor*float64(m.ubs[d])/w))
		}
		nb[d] = min(max(want, 1), m.ubs[d], MaxCellsPerDimension)
	}
	limit := uint64(max(minBuckets, sd.nregions/regionsPerBucket))
	total := uint64(1)
	for {
		total = 1
		big := 0
		for d, n := range nb {
			if hi, t := bits.Mul64(total, n); hi == 0 {
				total = t
			} else {
				total = math.MaxUint64
			}
			if n > nb[big] {
				big = d
			}
		}
		if total <= limit || nb[big] == 1 {
			break
		}
		nb[big] = (nb[big] + 1) / 2
	}
	sd.nb = nb
	sd.bounds = make([][]uint64, len(nb))
	for d, n := range nb {
		sd.bounds[d] = bucketBounds(n, m.ubs[d])
	}
	sd.bstride = make([]int, len(nb))
	s := 1
	for d := len(nb) - 1; d >= 0; d-- {
		sd.bstride[d] = s
		s *= int(nb[d])
	}
	sd.buckets = make([]bucket, total)
	sd.big = bucket{}
}
