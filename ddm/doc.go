// Package ddm is HLA Data Distribution Management (IEEE 1516.1-2010
// clause 9) as pure logic: the region model and its overlap rule, the
// cutting of dimensions into cells that the federate core maps to
// multicast groups for sender-side filtering, and an incremental matcher
// of update regions against subscription regions. It does no I/O, starts
// no goroutines and reads no clock. docs/ddm.md explains the design, its
// costs and its limits.
//
// # Regions
//
// A Space holds the federation's dimensions (from the FDD) with their
// upper bounds, default ranges and cell counts. Values are normalized:
// a Range is [Lower, Upper) with 0 <= Lower < Upper <= the upper bound
// (Space.CheckRange, as setRangeBounds requires). A Region gives at most
// one range per dimension, sorted by dimension; a federate's region set is
// a []Region.
//
// Two regions overlap, for an attribute or interaction class whose
// available dimensions are dims, when their ranges overlap on every
// dimension of dims (Space.Overlaps). A region that does not specify a
// dimension takes the dimension's default range from the FOM (its
// <value>, "[lo..hi)" or "[v)", or the whole range when there is none);
// a dimension whose default is Excluded is left out of the test for a
// pair in which either region does not specify it. Dimensions outside
// dims are ignored. Region sets overlap when some pair does
// (Space.SetsOverlap).
//
// # Cells and groups
//
// Each dimension is cut into Config.Cells (or DefaultCells) cells; a Cell
// names one cell of the grid over a class's dims at a level, where each
// level up merges 2 cells per dimension. The core hashes (class handle,
// Cell) to a transport.Group. A subscriber joins the groups of
// Space.Cells(dims, r, Space.Level(dims, r)) for each subscription region
// r: Level keeps that at most Config.MaxJoins. A publisher sends an update
// with region u only into the groups of Space.Cells(dims, i, level) where
// i is the Space.Intersect of u with each overlapping subscription region
// and level that subscription's level: nothing goes where no subscriber
// overlaps. Receivers still apply the exact test (cells are coarse) and
// drop duplicates from overlapping cells. Cells depend only on the FDD,
// the Config, the dims and the region, so every federate computes the
// same ones, given the same Config.
//
// # Matching
//
// A Matcher keeps which update region sets overlap which subscription
// region sets over one set of dims, and reports the pairs that began or
// stopped matching (Matcher.Changes), for the scope advisories and for
// the sender's choice of groups. Setting or moving a set rematches only
// it, using a grid of buckets per side; see docs/ddm.md for the costs
// and the benchmark. A driver calls it like this:
//
//	sp, err := ddm.NewSpace(fdd, ddm.Config{})
//	dims, err := sp.Handles(attr.Dimensions)
//	m := ddm.NewMatcher(sp, dims)
//	m.SetSubscription(sub, regions)   // a federate's subscription, from gossip
//	m.SetUpdate(upd, updateRegions)   // an instance's update regions
//	for _, c := range m.Changes() {   // after a batch of Sets and Removes
//		// c.Match: attribute c.Update is now in (or out of) scope of c.Sub
//	}
//	subs := m.Matches(upd)            // where the next update must reach
//
// # Concurrency properties
//
// A Space is immutable after NewSpace: any number of goroutines may use
// it at once. A Matcher is not safe for concurrent use; its owner (the
// federate core) serializes calls. No call blocks. Changes are reported
// sorted by update, then subscription; Matches and Subscribers are
// sorted.
package ddm
