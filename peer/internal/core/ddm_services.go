package core

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/meshrti/meshrti/ddm"
	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer/hla"
)

// Data distribution management (IEEE 1516.1-2010 §9.5-§9.13): updates,
// interactions and subscriptions with regions. A subscription without
// regions, and an update or interaction sent without them, use the
// default region, which overlaps every region. Messages sent with
// regions carry their ranges (encodeRegions); a receiver reflects an
// attribute, or receives an interaction, only when the message's
// regions overlap its subscription's (ddm.Space.SetsOverlap over the
// attribute's or class's dimensions), checked when the message is
// delivered, so that a subscription region that moved away also stops
// time-stamped messages already queued. docs/ddm.md.

// regionSub is how one attribute or interaction class is subscribed:
// with the default region (plain), with regions, or both.
type regionSub struct {
	plain   bool
	regions []RegionHandle // sorted
}

// covers reports whether the subscription takes everything: the default
// region overlaps every region.
func (s *regionSub) covers() bool { return s == nil || s.plain || len(s.regions) == 0 }

// ErrRegionsMalformed wraps regions that do not decode.
var errRegionsMalformed = errors.New("malformed regions")

// encodeRegions writes regions: uvarint count, then for each its
// uvarint dimension count and (dimension, lower, upper) uvarints, in
// dimension order.
func encodeRegions(rs []ddm.Region) []byte {
	b := binary.AppendUvarint(nil, uint64(len(rs)))
	for _, r := range rs {
		b = binary.AppendUvarint(b, uint64(len(r)))
		for _, d := range r {
			b = binary.AppendUvarint(b, uint64(d.Dim))
			b = binary.AppendUvarint(b, d.Range.Lower)
			b = binary.AppendUvarint(b, d.Range.Upper)
		}
	}
	return b
}

// decodeRegions reads what encodeRegions wrote.
func decodeRegions(b []byte) ([]ddm.Region, error) {
	r := wireReader{b: b}
	n := r.uvarint("region count")
	if r.err == nil && n > uint64(len(b)) {
		return nil, fmt.Errorf("%w: %d regions in %d bytes", errRegionsMalformed, n, len(b))
	}
	rs := make([]ddm.Region, 0, n)
	for i := uint64(0); i < n && r.err == nil; i++ {
		k := r.uvarint("dimension count")
		if r.err == nil && k > uint64(len(r.b)) {
			return nil, fmt.Errorf("%w: %d dimensions in %d bytes", errRegionsMalformed, k, len(r.b))
		}
		reg := make(ddm.Region, 0, k)
		for j := uint64(0); j < k && r.err == nil; j++ {
			d := DimensionHandle(r.uvarint("dimension"))
			lo, hi := r.uvarint("lower bound"), r.uvarint("upper bound")
			if len(reg) > 0 && reg[len(reg)-1].Dim >= d {
				return nil, fmt.Errorf("%w: dimensions out of order", errRegionsMalformed)
			}
			if lo >= hi {
				return nil, fmt.Errorf("%w: empty range [%d, %d)", errRegionsMalformed, lo, hi)
			}
			reg = append(reg, ddm.DimRange{Dim: d, Range: ddm.Range{Lower: lo, Upper: hi}})
		}
		rs = append(rs, reg)
	}
	if r.err != nil {
		return nil, fmt.Errorf("%w: %w", errRegionsMalformed, r.err)
	}
	if len(r.b) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", errRegionsMalformed, len(r.b))
	}
	return rs, nil
}

// committed returns the committed ranges of regions hs (this federate's).
func (c *Core) committed(hs []RegionHandle) []ddm.Region {
	rs := make([]ddm.Region, 0, len(hs))
	for _, h := range hs {
		if r := c.regions.regions[h]; r != nil {
			rs = append(rs, r.committed)
		}
	}
	return rs
}

// dimsOf returns the dimensions names refers to, sorted. names is an
// attribute's or interaction class's Dimensions in the FDD: one slice
// each, so the answer is kept per slice (until the FDD changes).
func (c *Core) dimsOf(names []string) []DimensionHandle {
	if len(names) == 0 {
		return nil
	}
	s, err := c.space()
	if err != nil {
		return nil
	}
	if hs, ok := c.regions.dims[&names[0]]; ok {
		return hs
	}
	hs, err := s.Handles(names)
	if err != nil {
		hs = nil
	}
	if c.regions.dims == nil {
		c.regions.dims = make(map[*string][]DimensionHandle)
	}
	c.regions.dims[&names[0]] = hs
	return hs
}

// decoded returns the regions enc encodes, decoding each message's
// once: every attribute of an update is tested against them.
func (c *Core) decoded(enc []byte) ([]ddm.Region, error) {
	if c.regions.decEnc != nil && string(enc) == string(c.regions.decEnc) {
		return c.regions.decRegions, nil
	}
	rs, err := decodeRegions(enc)
	if err != nil {
		return nil, err
	}
	c.regions.decEnc, c.regions.decRegions = slices.Clone(enc), rs
	return rs, nil
}

// checkRegions checks regions for use with things whose available
// dimensions are dims: this federate's, existing, over dimensions among
// dims. Errors: ErrRegionNotCreatedByThisFederate, ErrInvalidRegion,
// ErrInvalidRegionContext.
func (c *Core) checkRegions(hs []RegionHandle, dims []DimensionHandle, what string) error {
	for _, h := range hs {
		r, err := c.ownRegion(h)
		if err != nil {
			return err
		}
		for _, d := range r.dims {
			if !slices.Contains(dims, d) {
				dn := fmt.Sprint(d)
				if dim, ok := c.fdd.DimensionByHandle(d); ok {
					dn = dim.Name
				}
				return fmt.Errorf("%w: %v has dimension %s, which %s does not", hla.ErrInvalidRegionContext, h, dn, what)
			}
		}
	}
	return nil
}

// checkPairs checks attribute-region pairs of class oc: defined
// attributes, usable regions.
func (c *Core) checkPairs(oc *fomxml.ObjectClass, pairs []AttributeRegions, context bool) error {
	for _, p := range pairs {
		if err := checkAttrs(oc, p.Attributes); err != nil {
			return err
		}
		for _, a := range p.Attributes {
			at, _ := oc.AttributeByHandle(a)
			if context {
				if err := c.checkRegions(p.Regions, c.dimsOf(at.Dimensions), "attribute "+at.Name); err != nil {
					return err
				}
				continue
			}
			for _, h := range p.Regions {
				if _, err := c.ownRegion(h); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// classPairs checks class and its attribute-region pairs (with
// checkPairs, region contexts included) and returns the class and the
// pairs' attributes in order.
func (c *Core) classPairs(class ObjectClassHandle, pairs []AttributeRegions) (*fomxml.ObjectClass, []AttributeHandle, error) {
	oc, err := c.objectClass(class)
	if err != nil {
		return nil, nil, err
	}
	if err := c.checkPairs(oc, pairs, true); err != nil {
		return nil, nil, err
	}
	var attrs []AttributeHandle
	for _, p := range pairs {
		attrs = append(attrs, p.Attributes...)
	}
	return oc, attrs, nil
}

// instancePairs checks that obj is a known instance and its
// attribute-region pairs (checkPairs, with region contexts when context).
func (c *Core) instancePairs(obj ObjectInstanceHandle, pairs []AttributeRegions, context bool) error {
	in, ok := c.objects.inst[obj]
	if !ok {
		return fmt.Errorf("%w: %v", hla.ErrObjectInstanceNotKnown, obj)
	}
	return c.checkPairs(in.class, pairs, context)
}

// addRegions adds hs to the sorted set *set, counting new uses.
func (c *Core) addRegions(set *[]RegionHandle, hs []RegionHandle) {
	for _, h := range hs {
		i, found := slices.BinarySearchFunc(*set, h, compareRegions)
		if found {
			continue
		}
		*set = slices.Insert(*set, i, h)
		c.regions.regions[h].uses++
	}
}

// dropRegions removes hs from the sorted set *set (all of them when hs
// is nil), counting uses.
func (c *Core) dropRegions(set *[]RegionHandle, hs []RegionHandle) {
	if hs == nil {
		hs = slices.Clone(*set)
	}
	for _, h := range hs {
		i, found := slices.BinarySearchFunc(*set, h, compareRegions)
		if !found {
			continue
		}
		*set = slices.Delete(*set, i, i+1)
		if r := c.regions.regions[h]; r != nil {
			r.uses--
		}
	}
}

func compareRegions(a, b RegionHandle) int {
	if a.Federate != b.Federate {
		return int(a.Federate) - int(b.Federate)
	}
	return cmp.Compare(a.Serial, b.Serial)
}

// attrSub returns the region subscription of attribute a of class,
// creating it.
func (c *Core) attrSub(class ObjectClassHandle, a AttributeHandle) *regionSub {
	m := inner(c.regions.subs, class)
	s := m[a]
	if s == nil {
		s = &regionSub{}
		m[a] = s
	}
	return s
}

// subscribedPlain records a subscription of attrs of class without
// regions (SubscribeObjectClassAttributes).
func (c *Core) subscribedPlain(class ObjectClassHandle, attrs []AttributeHandle) {
	for _, a := range attrs {
		c.attrSub(class, a).plain = true
	}
}

// unsubscribedAttrs drops the region subscriptions of attrs of class
// (all when attrs is nil).
func (c *Core) unsubscribedAttrs(class ObjectClassHandle, attrs []AttributeHandle) {
	m := c.regions.subs[class]
	narrowed := false
	for a, s := range m {
		if attrs == nil || slices.Contains(attrs, a) {
			narrowed = narrowed || len(s.regions) > 0
			c.dropRegions(&s.regions, nil)
			delete(m, a)
		}
	}
	if len(m) == 0 {
		delete(c.regions.subs, class)
	}
	if narrowed {
		c.rejoinCells()
	}
}

// SubscribeObjectClassAttributesWithRegions (§9.8) subscribes each
// pair's attributes with its regions: updates are reflected only when
// their regions overlap. Like §5.6 it adds to the subscription; an
// attribute paired with no region, and a call with no attribute, add
// nothing. Errors: ErrObjectClassNotDefined, ErrAttributeNotDefined,
// ErrRegionNotCreatedByThisFederate, ErrInvalidRegion,
// ErrInvalidRegionContext, ErrInvalidUpdateRateDesignator.
func (c *Core) SubscribeObjectClassAttributesWithRegions(class ObjectClassHandle, pairs []AttributeRegions, active bool, rate string) error {
	oc, _, err := c.classPairs(class, pairs)
	if err != nil {
		return err
	}
	if rate != "" {
		if _, err := c.UpdateRateValue(rate); err != nil {
			return err
		}
	}
	var attrs []AttributeHandle
	for _, p := range pairs {
		if len(p.Regions) > 0 {
			attrs = append(attrs, p.Attributes...)
		}
	}
	if len(attrs) == 0 {
		return nil
	}
	// Narrow to the regions first, so that the interest subscribeObject
	// publishes has them.
	for _, p := range pairs {
		if len(p.Regions) == 0 {
			continue
		}
		for _, a := range p.Attributes {
			s := c.attrSub(class, a)
			c.addRegions(&s.regions, p.Regions)
		}
	}
	if err := c.subscribeObject(oc, attrs, active, rate); err != nil {
		return err
	}
	c.rejoinCells()
	return nil
}

// UnsubscribeObjectClassAttributesWithRegions (§9.9) removes the regions
// from each pair's attributes; an attribute left with none is no longer
// subscribed. Errors: ErrObjectClassNotDefined, ErrAttributeNotDefined,
// ErrRegionNotCreatedByThisFederate, ErrInvalidRegion.
func (c *Core) UnsubscribeObjectClassAttributesWithRegions(class ObjectClassHandle, pairs []AttributeRegions) error {
	oc, err := c.objectClass(class)
	if err != nil {
		return err
	}
	if err := c.checkPairs(oc, pairs, false); err != nil {
		return err
	}
	var gone []AttributeHandle
	for _, p := range pairs {
		if len(p.Regions) == 0 {
			continue // removes no region
		}
		for _, a := range p.Attributes {
			s := c.regions.subs[class][a]
			if s == nil {
				continue
			}
			c.dropRegions(&s.regions, p.Regions)
			if !s.plain && len(s.regions) == 0 {
				gone = append(gone, a)
			}
		}
	}
	if len(gone) > 0 {
		return c.UnsubscribeObjectClassAttributes(class, gone)
	}
	c.publishInterest(oc)
	c.rescopeClass(oc)
	c.rejoinCells()
	return nil
}

// SubscribeInteractionClassWithRegions (§9.10). Errors:
// ErrInteractionClassNotDefined, ErrRegionNotCreatedByThisFederate,
// ErrInvalidRegion, ErrInvalidRegionContext.
func (c *Core) SubscribeInteractionClassWithRegions(class InteractionClassHandle, regions []RegionHandle, active bool) error {
	ic, err := c.interactionClass(class)
	if err != nil {
		return err
	}
	if err := c.checkRegions(regions, c.dimsOf(ic.Dimensions), "interaction class "+ic.QualifiedName); err != nil {
		return err
	}
	if len(regions) == 0 {
		return nil // subscribes with no region: adds nothing
	}
	if c.mom.reportServices && ic.QualifiedName == momServiceReport {
		return fmt.Errorf("%w: %s", hla.ErrFederateServiceInvocationsAreBeingReportedViaMOM, ic.QualifiedName)
	}
	s := c.regions.intSub(class)
	c.addRegions(&s.regions, regions)
	c.subscribeInteraction(ic, active)
	c.rejoinCells()
	return nil
}

// UnsubscribeInteractionClassWithRegions (§9.11). Errors:
// ErrInteractionClassNotDefined, ErrRegionNotCreatedByThisFederate,
// ErrInvalidRegion.
func (c *Core) UnsubscribeInteractionClassWithRegions(class InteractionClassHandle, regions []RegionHandle) error {
	if _, err := c.interactionClass(class); err != nil {
		return err
	}
	for _, h := range regions {
		if _, err := c.ownRegion(h); err != nil {
			return err
		}
	}
	s := c.regions.intSubs[class]
	if s == nil || len(regions) == 0 {
		return nil // nothing subscribed with regions, or no region to remove
	}
	c.dropRegions(&s.regions, regions)
	if !s.plain && len(s.regions) == 0 {
		return c.UnsubscribeInteractionClass(class)
	}
	c.publishInteractionInterest(class)
	c.rejoinCells()
	return nil
}

// intSub returns the region subscription of interaction class, creating
// it.
func (r *regionSet) intSub(class InteractionClassHandle) *regionSub {
	s := r.intSubs[class]
	if s == nil {
		s = &regionSub{}
		r.intSubs[class] = s
	}
	return s
}

// unsubscribedInteraction drops the region subscription of class.
func (c *Core) unsubscribedInteraction(class InteractionClassHandle) {
	if s := c.regions.intSubs[class]; s != nil {
		narrowed := len(s.regions) > 0
		c.dropRegions(&s.regions, nil)
		delete(c.regions.intSubs, class)
		if narrowed {
			c.rejoinCells()
		}
	}
}

// AssociateRegionsForUpdates (§9.6) sends the updates of each pair's
// attributes of obj with its regions (added to those associated before).
// Errors: ErrObjectInstanceNotKnown, ErrAttributeNotDefined,
// ErrRegionNotCreatedByThisFederate, ErrInvalidRegion,
// ErrInvalidRegionContext.
func (c *Core) AssociateRegionsForUpdates(obj ObjectInstanceHandle, pairs []AttributeRegions) error {
	if err := c.instancePairs(obj, pairs, true); err != nil {
		return err
	}
	m := inner(c.regions.assoc, obj)
	for _, p := range pairs {
		if len(p.Regions) == 0 {
			continue // associates no region (§9.6)
		}
		for _, a := range p.Attributes {
			set := m[a]
			c.addRegions(&set, p.Regions)
			m[a] = set
		}
	}
	if len(m) == 0 {
		delete(c.regions.assoc, obj)
	}
	c.attrRelevance(obj)
	return nil
}

// UnassociateRegionsForUpdates (§9.7). Errors: ErrObjectInstanceNotKnown,
// ErrAttributeNotDefined, ErrRegionNotCreatedByThisFederate,
// ErrInvalidRegion.
func (c *Core) UnassociateRegionsForUpdates(obj ObjectInstanceHandle, pairs []AttributeRegions) error {
	if err := c.instancePairs(obj, pairs, false); err != nil {
		return err
	}
	m := c.regions.assoc[obj]
	for _, p := range pairs {
		if len(p.Regions) == 0 {
			continue // unassociates no region
		}
		for _, a := range p.Attributes {
			set := m[a]
			c.dropRegions(&set, p.Regions)
			if len(set) == 0 {
				delete(m, a)
			} else {
				m[a] = set
			}
		}
	}
	if len(m) == 0 {
		delete(c.regions.assoc, obj)
	}
	c.attrRelevance(obj)
	return nil
}

// forgetAssociations drops instance obj's associations and the regions
// its updates came with (deleted).
func (c *Core) forgetAssociations(obj ObjectInstanceHandle) {
	for _, set := range c.regions.assoc[obj] {
		c.dropRegions(&set, nil)
	}
	delete(c.regions.assoc, obj)
	delete(c.regions.lastRegions, obj)
}

// noteRegions records the regions an update of the attributes among ps
// of obj came with, and reports whether that changed anything.
func (c *Core) noteRegions(obj ObjectInstanceHandle, ps []valuePair, enc []byte) bool {
	m := c.regions.lastRegions[obj]
	if m == nil {
		if c.regions.lastRegions == nil {
			c.regions.lastRegions = make(map[ObjectInstanceHandle]map[AttributeHandle][]byte)
		}
		m = make(map[AttributeHandle][]byte)
		c.regions.lastRegions[obj] = m
	}
	changed := false
	for _, p := range ps {
		a := AttributeHandle(p.H)
		if string(m[a]) == string(enc) {
			continue
		}
		changed = true
		if len(enc) == 0 {
			delete(m, a)
		} else {
			m[a] = slices.Clone(enc)
		}
	}
	if len(m) == 0 {
		delete(c.regions.lastRegions, obj)
	}
	return changed
}

// RegisterObjectInstanceWithRegions (§9.5) registers an instance and
// associates the pairs' regions with its attributes. Errors: as
// RegisterObjectInstance and AssociateRegionsForUpdates, and
// ErrAttributeNotPublished for attributes not published.
func (c *Core) RegisterObjectInstanceWithRegions(class ObjectClassHandle, pairs []AttributeRegions, name string) (ObjectInstanceHandle, error) {
	oc, err := c.objectClass(class)
	if err != nil {
		return ObjectInstanceHandle{}, err
	}
	if err := c.checkPairs(oc, pairs, true); err != nil {
		return ObjectInstanceHandle{}, err
	}
	pub := c.declared.pubObj[class]
	if len(pub) == 0 {
		return ObjectInstanceHandle{}, fmt.Errorf("%w: %s", hla.ErrObjectClassNotPublished, oc.QualifiedName)
	}
	for _, p := range pairs {
		for _, a := range p.Attributes {
			if !pub[a] {
				at, _ := oc.AttributeByHandle(a)
				return ObjectInstanceHandle{}, fmt.Errorf("%w: %s", hla.ErrAttributeNotPublished, at.Name)
			}
		}
	}
	return c.register(class, name, pairs)
}

// SendInteractionWithRegions (§9.12) sends an interaction that reaches
// only subscribers whose regions overlap regions. Errors: as
// SendInteraction, and ErrRegionNotCreatedByThisFederate,
// ErrInvalidRegion, ErrInvalidRegionContext.
func (c *Core) SendInteractionWithRegions(class InteractionClassHandle, values ParameterValues, regions []RegionHandle, tag []byte, t LogicalTime) (MessageRetractionHandle, error) {
	ic, err := c.interactionClass(class)
	if err != nil {
		return MessageRetractionHandle{}, err
	}
	if err := c.checkRegions(regions, c.dimsOf(ic.Dimensions), "interaction class "+ic.QualifiedName); err != nil {
		return MessageRetractionHandle{}, err
	}
	return c.sendInteraction(class, values, tag, t, c.committed(regions))
}

// RequestAttributeValueUpdateWithRegions (§9.13) asks the owners of the
// pairs' attributes of instances of class whose update regions overlap
// the pairs' regions for their values. Owners answer with an update sent
// with their regions, which the receivers' own region test filters; this
// federate's pairs' regions narrow which owners are asked no further.
// Errors: ErrObjectClassNotDefined, ErrAttributeNotDefined,
// ErrRegionNotCreatedByThisFederate, ErrInvalidRegion,
// ErrInvalidRegionContext.
func (c *Core) RequestAttributeValueUpdateWithRegions(class ObjectClassHandle, pairs []AttributeRegions, tag []byte) error {
	_, attrs, err := c.classPairs(class, pairs)
	if err != nil {
		return err
	}
	return c.RequestClassAttributeValueUpdate(class, attrs, tag)
}

// ---- Sending and receiving with regions ----

// withRegions splits the update messages of instance h by the update
// regions associated with their attributes: each message carries the
// ranges of its attributes' regions (none for attributes without any).
func (c *Core) withRegions(out []outMsg, h ObjectInstanceHandle) []outMsg {
	assoc := c.regions.assoc[h]
	if len(assoc) == 0 {
		return out
	}
	res := make([]outMsg, 0, len(out))
	for _, o := range out {
		m := o.msg
		// Group the values by their attribute's region set.
		var keys []string
		groups := map[string][]valuePair{}
		for _, p := range m.Pairs {
			var k string
			if set := assoc[AttributeHandle(p.H)]; len(set) > 0 {
				k = string(encodeRegions(c.committed(set)))
			}
			if _, ok := groups[k]; !ok {
				keys = append(keys, k)
			}
			groups[k] = append(groups[k], p)
		}
		if len(keys) == 1 && keys[0] == "" {
			res = append(res, o)
			continue
		}
		slices.Sort(keys)
		in := c.objects.inst[h]
		for _, k := range keys {
			cp := *m
			cp.Pairs = groups[k]
			cp.Regions = []byte(k)
			out := outMsg{group: o.group, reliable: o.reliable, msg: &cp}
			if k != "" && in != nil {
				us, err := decodeRegions(cp.Regions)
				if err != nil {
					continue // cannot happen: encoded here
				}
				cells, plain := c.objectTargets(in.class, cp.Pairs, us)
				if !route(&out, cells, plain) {
					c.stats.Spared++
					continue
				}
			}
			res = append(res, out)
		}
	}
	return res
}

// regionsPass reports whether a message's regions (encoded; none: the
// default region) overlap the subscription s over dims. Malformed
// regions pass nothing and are counted.
func (c *Core) regionsPass(enc []byte, s *regionSub, dims []DimensionHandle) bool {
	if len(enc) == 0 || s.covers() {
		return true
	}
	rs, err := c.decoded(enc)
	if err != nil {
		c.stats.Malformed++
		return false
	}
	sp, err := c.space()
	if err != nil {
		return false
	}
	return sp.SetsOverlap(dims, rs, c.committed(s.regions))
}

// attrPasses reports whether an update's regions let attribute a of an
// instance known as class known through this federate's subscription.
func (c *Core) attrPasses(enc []byte, known *fomxml.ObjectClass, a AttributeHandle) bool {
	if len(enc) == 0 {
		return true
	}
	s := c.regions.subs[known.Handle][a]
	if s.covers() {
		return true
	}
	at, ok := known.AttributeByHandle(a)
	if !ok {
		return false
	}
	return c.regionsPass(enc, s, c.dimsOf(at.Dimensions))
}

// anyAttrPasses reports whether some attribute among pairs that this
// federate subscribes to at known passes the regions: the test for
// discovering an instance from a message sent with regions.
func (c *Core) anyAttrPasses(enc []byte, known *fomxml.ObjectClass, pairs []valuePair) bool {
	if len(enc) == 0 {
		return true
	}
	sub := c.declared.subObj[known.Handle]
	for _, p := range pairs {
		a := AttributeHandle(p.H)
		if sub[a] && c.attrPasses(enc, known, a) {
			return true
		}
	}
	return false
}

// instanceRegions returns the ranges of every region associated with
// instance h's attributes, encoded (nil when none): what its
// announcement carries, for the subscribers' discovery test.
func (c *Core) instanceRegions(h ObjectInstanceHandle) []byte {
	m := c.regions.assoc[h]
	if len(m) == 0 {
		return nil
	}
	var all []RegionHandle
	for _, set := range m {
		for _, r := range set {
			if i, found := slices.BinarySearchFunc(all, r, compareRegions); !found {
				all = slices.Insert(all, i, r)
			}
		}
	}
	return encodeRegions(c.committed(all))
}

// discoveryPasses reports whether an announcement of an instance of
// class with regions enc may be discovered here: some attribute this
// federate subscribes to, at the class it would know the instance as,
// passes them.
func (c *Core) discoveryPasses(enc []byte, class uint64) bool {
	oc, ok := c.fdd.ObjectClassByHandle(ObjectClassHandle(class))
	if !ok {
		return false
	}
	as := c.declared.subscribedAs(oc)
	if as == nil {
		return false
	}
	for a := range c.declared.subObj[as.Handle] {
		if c.attrPasses(enc, as, a) {
			return true
		}
	}
	return false
}

// arrivalFilter is what a message's regions kept out when it arrived
// (delivery.outside): its attributes (an update), or all of it.
type arrivalFilter struct {
	all   bool
	attrs []AttributeHandle
}

func (f arrivalFilter) has(a AttributeHandle) bool { return f.all || slices.Contains(f.attrs, a) }

// arrivalOutside tests a message with regions that is going to wait
// (held in receive order, queued in time-stamp order) against this
// federate's regions as they are now, as apply would. A message waits
// only for the regions it overlapped when it arrived: one that moves
// over it while it waits must not let in what was sent before it did
// (docs/ddm.md, "History"); the test at delivery still keeps out what
// a region moved away from.
func (c *Core) arrivalOutside(m *wireMsg) arrivalFilter {
	var f arrivalFilter
	if len(m.Regions) == 0 {
		return f
	}
	switch m.Kind {
	case kindInteraction:
		ic, ok := c.fdd.InteractionClassByHandle(InteractionClassHandle(m.Class))
		if !ok || !m.Obj.IsZero() {
			return f
		}
		if as := c.declared.interactionSubscribedAs(ic); as != nil {
			f.all = !c.regionsPass(m.Regions, c.regions.intSubs[as.Handle], c.dimsOf(ic.Dimensions))
		}
	case kindUpdate:
		var known *fomxml.ObjectClass
		if in := c.objects.inst[m.Obj]; in != nil {
			known = in.known
		} else if oc, ok := c.fdd.ObjectClassByHandle(ObjectClassHandle(m.Class)); ok {
			known = c.declared.subscribedAs(oc)
		}
		if known == nil {
			return f
		}
		all := true
		for _, p := range pairsOf(m) {
			a := AttributeHandle(p.H)
			if c.attrPasses(m.Regions, known, a) {
				if c.declared.subObj[known.Handle][a] {
					all = false
				}
				continue
			}
			f.attrs = append(f.attrs, a)
		}
		f.all = all && c.objects.inst[m.Obj] == nil
	}
	return f
}
