package core

import (
	"encoding/binary"
	"slices"
	"strconv"
	"strings"

	"github.com/meshrti/meshrti/ddm"
	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer/hla"
)

// advisories is the advisory sub-machine: what the other federates
// subscribe to, as they publish it in their replicated state, and the
// advisories this federate owes its federate from it (1516.1-2010 §5.10-
// §5.13, §6.17-§6.22):
//
//   - object class relevance: StartRegistrationForObjectClass while
//     another federate actively subscribes to attributes this federate
//     publishes of a class (or subscribes to an ancestor of it), Stop when
//     none does;
//   - interaction relevance: TurnInteractionsOn/Off likewise for a
//     published interaction class;
//   - attribute relevance: TurnUpdatesOn/OffForObjectInstance for the
//     attributes this federate owns of an instance that another federate
//     actively subscribes to;
//   - attribute scope: AttributesInScope/OutOfScope for the attributes of
//     a known instance this federate subscribes to and another federate
//     owns.
//
// Each advisory goes out only while its switch is on (the FDD's switches
// set them at join; the enable/disable services change them). Class and
// interaction relevance are tracked either way (a handful of classes);
// attribute relevance and scope, per instance, only while their switch
// is on: turning one on computes them for every instance and advises
// what is relevant or in scope then. Relevance is judged from subscriptions:
// a subscriber discovers every instance of what it subscribes to, so an
// active subscription is interest in every such instance (regions will
// narrow it).
//
// Its inputs are the others' subscriptions (noteObjectSubscription,
// noteInteractionSubscription, forget) and what the core finds relevant
// or in scope now (classRelevant, interactionRelevant, relevantNow,
// inScopeNow); what it returns is the change to advise. Judging
// relevance reads declarations, ownership and regions too, so the core
// does that (the Core methods below) and pushes what the advisories
// return.
type advisories struct {
	// Other federates' subscriptions, from their replicated state.
	objs map[ObjectClassHandle]map[FederateHandle]remoteSub
	ints map[InteractionClassHandle]map[FederateHandle]remoteIntSub

	// The switches.
	classRel, attrRel, scope, intRel bool

	// What this federate was told last.
	regOn   map[ObjectClassHandle]bool
	intOn   map[InteractionClassHandle]bool
	updOn   map[ObjectInstanceHandle][]AttributeHandle // sorted
	scopeOf map[ObjectInstanceHandle][]AttributeHandle // sorted
}

// remoteSub is another federate's subscription to one object class.
type remoteSub struct {
	attrs  []AttributeHandle
	active bool
	rate   string
	// regions are the subscription regions of the attributes subscribed
	// with regions only; the others take every update.
	regions map[AttributeHandle][]ddm.Region
}

// remoteIntSub is another federate's subscription to one interaction
// class.
type remoteIntSub struct {
	active  bool
	regions []ddm.Region // none: every interaction
}

func newAdvisories(sw fomxml.Switches) advisories {
	return advisories{
		objs:     make(map[ObjectClassHandle]map[FederateHandle]remoteSub),
		ints:     make(map[InteractionClassHandle]map[FederateHandle]remoteIntSub),
		classRel: sw.ObjectClassRelevanceAdvisory,
		attrRel:  sw.AttributeRelevanceAdvisory,
		scope:    sw.AttributeScopeAdvisory,
		intRel:   sw.InteractionRelevanceAdvisory,
		regOn:    make(map[ObjectClassHandle]bool),
		intOn:    make(map[InteractionClassHandle]bool),
		updOn:    make(map[ObjectInstanceHandle][]AttributeHandle),
		scopeOf:  make(map[ObjectInstanceHandle][]AttributeHandle),
	}
}

// publishInterest publishes this federate's subscription to oc in its
// replicated state (nil when it has none).
func (c *Core) publishInterest(oc *fomxml.ObjectClass) {
	c.setState(objectSubscriptionKey(oc.Handle), c.interestValue(oc))
	if c.tracer != nil {
		c.traceSubscription(oc)
	}
}

// interestValue encodes this federate's subscription to oc for its
// replicated state (nil: none).
func (c *Core) interestValue(oc *fomxml.ObjectClass) []byte {
	set := c.declared.subObj[oc.Handle]
	if len(set) == 0 {
		return nil
	}
	mode := c.declared.subMode[oc.Handle]
	b := []byte{0}
	if mode.active {
		b[0] = 1
	}
	b = binary.AppendUvarint(b, uint64(len(mode.rate)))
	b = append(b, mode.rate...)
	attrs := keysOf(set)
	b = binary.AppendUvarint(b, uint64(len(attrs)))
	for _, a := range attrs {
		b = binary.AppendUvarint(b, uint64(a))
	}
	// The attributes subscribed with regions, and the regions' ranges:
	// what senders filter by (docs/ddm.md). The others take everything.
	var narrowed []AttributeHandle
	for _, a := range attrs {
		if !c.regions.subs[oc.Handle][a].covers() {
			narrowed = append(narrowed, a)
		}
	}
	if len(narrowed) > 0 {
		b = binary.AppendUvarint(b, uint64(len(narrowed)))
		for _, a := range narrowed {
			b = binary.AppendUvarint(b, uint64(a))
			rs := encodeRegions(c.committed(c.regions.subs[oc.Handle][a].regions))
			b = binary.AppendUvarint(b, uint64(len(rs)))
			b = append(b, rs...)
		}
	}
	return b
}

// earlyInterest takes the subscription a discovery query carries (the
// value the querier also put in its replicated state) when the state has
// not come yet: the data plane can be faster than the control plane, and
// a sender that filters by region must know the region before the
// subscriber's first update is due.
func (c *Core) earlyInterest(from FederateHandle, class ObjectClassHandle, value []byte) {
	if len(value) == 0 {
		return
	}
	if c.advisories.knowsObjectSubscription(from, class) {
		return
	}
	if !c.federation.isMember(from) {
		return
	}
	c.interestChanged(from, objectSubscriptionKey(class), value)
}

func (c *Core) publishInteractionInterest(ic InteractionClassHandle) {
	if c.tracer != nil {
		c.traceInteractionSubscription(ic)
	}
	key := interactionSubscriptionKey(ic)
	if !c.declared.subInt[ic] {
		c.setState(key, nil)
		return
	}
	v := byte(0)
	if c.declared.subIntMode[ic] {
		v = 1
	}
	b := []byte{v}
	if s := c.regions.intSubs[ic]; !s.covers() {
		b = append(b, encodeRegions(c.committed(s.regions))...)
	}
	c.setState(key, b)
}

// decodeSub decodes a published subscription; false for bytes that do
// not parse (another federate's state: dropped and counted).
func decodeSub(b []byte) (remoteSub, bool) {
	var s remoteSub
	if len(b) < 1 || b[0] > 1 {
		return s, false
	}
	s.active = b[0] == 1
	b = b[1:]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return s, false
	}
	s.rate = string(b[k : k+int(n)])
	b = b[k+int(n):]
	count, k := binary.Uvarint(b)
	if k <= 0 || count > uint64(len(b)) {
		return s, false
	}
	b = b[k:]
	s.attrs = make([]AttributeHandle, 0, count)
	for range count {
		a, k := binary.Uvarint(b)
		if k <= 0 {
			return s, false
		}
		s.attrs = append(s.attrs, AttributeHandle(a))
		b = b[k:]
	}
	if len(b) == 0 {
		return s, true
	}
	// Attributes subscribed with regions.
	count, k = binary.Uvarint(b)
	if k <= 0 || count > uint64(len(b)) {
		return s, false
	}
	b = b[k:]
	s.regions = make(map[AttributeHandle][]ddm.Region, count)
	for range count {
		a, k := binary.Uvarint(b)
		if k <= 0 {
			return s, false
		}
		b = b[k:]
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return s, false
		}
		rs, err := decodeRegions(b[k : k+int(n)])
		if err != nil {
			return s, false
		}
		s.regions[AttributeHandle(a)] = rs
		b = b[k+int(n):]
	}
	return s, len(b) == 0
}

// interestChanged folds another federate's replicated state key into the
// advisories' view, and decides again what depends on it.
func (c *Core) interestChanged(h FederateHandle, key string, value []byte) {
	var narrowed, ok bool
	switch {
	case strings.HasPrefix(key, keyObjectSubscription):
		n, err := strconv.ParseUint(key[len(keyObjectSubscription):], 10, 64)
		if err != nil {
			c.stats.Malformed++
			return
		}
		if narrowed, ok = c.advisories.noteObjectSubscription(h, ObjectClassHandle(n), value); !ok {
			c.stats.Malformed++
			return
		}
		c.classRelevance()
		c.allAttrRelevance()
	case strings.HasPrefix(key, keyInteractionSubscription):
		n, err := strconv.ParseUint(key[len(keyInteractionSubscription):], 10, 64)
		if err != nil {
			c.stats.Malformed++
			return
		}
		if narrowed, ok = c.advisories.noteInteractionSubscription(h, InteractionClassHandle(n), value); !ok {
			c.stats.Malformed++
			return
		}
		c.interactionRelevance()
	default:
		return
	}
	if narrowed {
		c.resendCells()
	}
}

// noteObjectSubscription records federate h's subscription to class, as
// its replicated state says (value nil: it has none). narrowed reports
// that the cells to send into change (the subscription had or has
// regions); ok is false for a value that does not decode, and then
// nothing changed.
func (a *advisories) noteObjectSubscription(h FederateHandle, class ObjectClassHandle, value []byte) (narrowed, ok bool) {
	m := a.objs[class]
	narrowed = len(m[h].regions) > 0
	if value == nil {
		delete(m, h)
		return narrowed, true
	}
	sub, ok := decodeSub(value)
	if !ok {
		return false, false
	}
	inner(a.objs, class)[h] = sub
	return narrowed || len(sub.regions) > 0, true
}

// noteInteractionSubscription is noteObjectSubscription for an
// interaction class.
func (a *advisories) noteInteractionSubscription(h FederateHandle, class InteractionClassHandle, value []byte) (narrowed, ok bool) {
	m := a.ints[class]
	narrowed = len(m[h].regions) > 0
	if value == nil {
		delete(m, h)
		return narrowed, true
	}
	if len(value) < 1 || value[0] > 1 {
		return false, false
	}
	sub := remoteIntSub{active: value[0] == 1}
	if len(value) > 1 {
		rs, err := decodeRegions(value[1:])
		if err != nil {
			return false, false
		}
		sub.regions = rs
	}
	inner(a.ints, class)[h] = sub
	return narrowed || len(sub.regions) > 0, true
}

// knowsObjectSubscription reports whether federate h's subscription to
// class is known.
func (a *advisories) knowsObjectSubscription(h FederateHandle, class ObjectClassHandle) bool {
	_, ok := a.objs[class][h]
	return ok
}

// forget drops the subscriptions of federate h, which left.
func (a *advisories) forget(h FederateHandle) {
	for _, m := range a.objs {
		delete(m, h)
	}
	for _, m := range a.ints {
		delete(m, h)
	}
}

// dropInterest forgets a federate that left, and decides again what
// depended on its subscriptions.
func (c *Core) dropInterest(h FederateHandle) {
	c.advisories.forget(h)
	c.classRelevance()
	c.interactionRelevance()
	c.allAttrRelevance()
	if len(c.regions.sendCells) > 0 {
		c.resendCells()
	}
}

// wanted reports whether another federate actively subscribes to
// attribute a at class oc or an ancestor, and the rate of the most
// demanding such subscription.
func (c *Core) wanted(oc *fomxml.ObjectClass, a AttributeHandle) (bool, string) {
	return c.wantedWithin(oc, a, nil)
}

// wantedWithin is wanted for an attribute updated with regions us (none:
// the default region): a subscription with regions wants it only where
// they overlap.
func (c *Core) wantedWithin(oc *fomxml.ObjectClass, a AttributeHandle, us []ddm.Region) (bool, string) {
	found, rate, best := false, "", -1.0
	var dims []DimensionHandle
	for x := oc; x != nil; x = x.Parent {
		for h, sub := range c.advisories.objs[x.Handle] {
			if h == c.self || !sub.active || !slices.Contains(sub.attrs, a) {
				continue
			}
			if srs, narrowed := sub.regions[a]; narrowed && len(us) > 0 {
				if dims == nil {
					if at, ok := oc.AttributeByHandle(a); ok {
						dims = c.dimsOf(at.Dimensions)
					}
				}
				if s, err := c.space(); err == nil && !s.SetsOverlap(dims, us, srs) {
					continue
				}
			}
			found = true
			if sub.rate == "" {
				continue
			}
			if v, err := c.UpdateRateValue(sub.rate); err == nil && v > best {
				best, rate = v, sub.rate
			}
		}
	}
	return found, rate
}

// classRelevance decides, for every published object class, whether
// another federate wants what this federate publishes of it.
func (c *Core) classRelevance() {
	a := &c.advisories
	classes := keysOf(c.declared.pubObj)
	for _, class := range classes {
		oc, ok := c.fdd.ObjectClassByHandle(class)
		if !ok {
			continue
		}
		on := false
		for attr := range c.declared.pubObj[class] {
			if w, _ := c.wanted(oc, attr); w {
				on = true
				break
			}
		}
		if ev := a.classRelevant(class, on); ev != nil {
			c.push(ev)
		}
	}
	for class := range a.regOn {
		if c.declared.pubObj[class] == nil {
			delete(a.regOn, class)
		}
	}
}

// interactionRelevance decides, for every published interaction class,
// whether another federate actively subscribes to it or an ancestor.
func (c *Core) interactionRelevance() {
	a := &c.advisories
	classes := keysOf(c.declared.pubInt)
	for _, class := range classes {
		ic, ok := c.fdd.InteractionClassByHandle(class)
		if !ok {
			continue
		}
		on := false
		for x := ic; x != nil && !on; x = x.Parent {
			for h, sub := range a.ints[x.Handle] {
				if h != c.self && sub.active {
					on = true
					break
				}
			}
		}
		if ev := a.interactionRelevant(class, on); ev != nil {
			c.push(ev)
		}
	}
}

// classRelevant records whether another federate wants what this
// federate publishes of class now, and returns the advisory that owes
// its federate (Start or StopRegistrationForObjectClass): nil when
// nothing changed or the advisory is off.
func (a *advisories) classRelevant(class ObjectClassHandle, on bool) Event {
	switch {
	case !turned(a.regOn, class, on, a.classRel):
		return nil
	case on:
		return hla.StartRegistrationForObjectClass{Class: class}
	}
	return hla.StopRegistrationForObjectClass{Class: class}
}

// interactionRelevant is classRelevant for a published interaction
// class (TurnInteractionsOn or Off).
func (a *advisories) interactionRelevant(class InteractionClassHandle, on bool) Event {
	switch {
	case !turned(a.intOn, class, on, a.intRel):
		return nil
	case on:
		return hla.TurnInteractionsOn{Class: class}
	}
	return hla.TurnInteractionsOff{Class: class}
}

// turned records that k is on or off now, and reports whether that is a
// change to advise (the advisory's switch, advise, is on).
func turned[K comparable](was map[K]bool, k K, on, advise bool) bool {
	if on == was[k] {
		return false
	}
	was[k] = on
	return advise
}

// attrRelevance decides which attributes this federate owns of instance
// h another federate wants, and advises the changes.
func (c *Core) attrRelevance(h ObjectInstanceHandle) {
	a := &c.advisories
	if !a.attrRel {
		return
	}
	in := c.objects.inst[h]
	held := c.ownership.heldOf(h)
	var now []AttributeHandle
	rate := ""
	if in != nil {
		assoc := c.regions.assoc[h]
		for attr := range held {
			var us []ddm.Region
			if set := assoc[attr]; len(set) > 0 {
				us = c.committed(set)
			}
			if w, r := c.wantedWithin(in.class, attr, us); w {
				now = append(now, attr)
				if r != "" {
					rate = r
				}
			}
		}
	}
	slices.Sort(now)
	on, off := a.relevantNow(h, now)
	if len(on) > 0 {
		c.push(hla.TurnUpdatesOnForObjectInstance{Object: h, Attributes: on, UpdateRate: rate})
	}
	if len(off) > 0 && in != nil {
		c.push(hla.TurnUpdatesOffForObjectInstance{Object: h, Attributes: off})
	}
}

// allAttrRelevance runs attrRelevance for every instance this federate
// holds tokens of, in handle order.
func (c *Core) allAttrRelevance() {
	if !c.advisories.attrRel {
		return
	}
	hs := make([]ObjectInstanceHandle, 0, len(c.ownership.held))
	for h := range c.ownership.held {
		hs = append(hs, h)
	}
	slices.SortFunc(hs, compareHandles)
	for _, h := range hs {
		c.attrRelevance(h)
	}
}

// rescope decides which attributes of known instance h are in scope here
// (subscribed, and owned by another federate) and advises the changes.
// gone says h was removed: it leaves scope without a callback.
func (c *Core) rescope(h ObjectInstanceHandle, gone bool) { c.push(c.rescopeTo(nil, h, gone)...) }

// rescopeTo is rescope appending the advisories to evs, for a caller
// that is building a message's events (they follow its discovery).
func (c *Core) rescopeTo(evs []Event, h ObjectInstanceHandle, gone bool) []Event {
	a := &c.advisories
	if !a.scope {
		return evs
	}
	var now []AttributeHandle
	if in := c.objects.inst[h]; in != nil && !gone {
		last := c.regions.lastRegions[h]
		for attr := range c.declared.subObj[in.known.Handle] {
			if o := c.ownership.ownerOf(h, attr); o != 0 && o != c.self && c.attrPasses(last[attr], in.known, attr) {
				now = append(now, attr)
			}
		}
	}
	slices.Sort(now)
	in, out := a.inScopeNow(h, now)
	if gone {
		return evs
	}
	if len(in) > 0 {
		evs = append(evs, hla.AttributesInScope{Object: h, Attributes: in})
	}
	if len(out) > 0 {
		evs = append(evs, hla.AttributesOutOfScope{Object: h, Attributes: out})
	}
	return evs
}

// rescopeClass runs rescope for every known instance known as oc or a
// subclass of it (a subscription to oc changed).
func (c *Core) rescopeClass(oc *fomxml.ObjectClass) {
	if !c.advisories.scope {
		return
	}
	var hs []ObjectInstanceHandle
	for h, in := range c.objects.inst {
		if in.known == oc || in.known.IsSubclassOf(oc) || oc.IsSubclassOf(in.known) {
			hs = append(hs, h)
		}
	}
	slices.SortFunc(hs, compareHandles)
	for _, h := range hs {
		c.rescope(h, false)
	}
}

// rescopeOwner runs rescope for every instance whose attributes f owned
// (f left).
func (c *Core) rescopeOwner(f FederateHandle) {
	if !c.advisories.scope {
		return
	}
	var hs []ObjectInstanceHandle
	for h := range c.advisories.scopeOf {
		hs = append(hs, h)
	}
	slices.SortFunc(hs, compareHandles)
	for _, h := range hs {
		c.rescope(h, false)
	}
}

// relevantNow records the attributes of instance h, sorted, that this
// federate owns and another federate wants now, and returns those that
// became relevant (on: TurnUpdatesOn) and those that no longer are
// (off).
func (a *advisories) relevantNow(h ObjectInstanceHandle, now []AttributeHandle) (on, off []AttributeHandle) {
	on, off = diffSorted(a.updOn[h], now)
	if len(now) == 0 {
		delete(a.updOn, h)
	} else {
		a.updOn[h] = now
	}
	return on, off
}

// inScopeNow records the attributes of instance h, sorted, that are in
// scope now, and returns those that came into scope and those that went
// out of it.
func (a *advisories) inScopeNow(h ObjectInstanceHandle, now []AttributeHandle) (in, out []AttributeHandle) {
	in, out = diffSorted(a.scopeOf[h], now)
	if len(now) == 0 {
		delete(a.scopeOf, h)
	} else {
		a.scopeOf[h] = now
	}
	return in, out
}

// diffSorted returns what is in now and not in was, and what is in was
// and not in now; both inputs sorted.
func diffSorted(was, now []AttributeHandle) (added, removed []AttributeHandle) {
	i, j := 0, 0
	for i < len(was) || j < len(now) {
		switch {
		case j == len(now) || i < len(was) && was[i] < now[j]:
			removed = append(removed, was[i])
			i++
		case i == len(was) || now[j] < was[i]:
			added = append(added, now[j])
			j++
		default:
			i++
			j++
		}
	}
	return added, removed
}

// ---- The advisory switches (§10.33-§10.40) ----

// AdvisoryOn reports whether one advisory switch is on.
func (c *Core) AdvisoryOn(which Advisory) bool {
	sw, _, _ := c.advisories.switchOf(which)
	return sw != nil && *sw
}

// SetAdvisory turns one advisory switch on or off. It returns the error
// the standard gives when the switch already is so; turning one on
// gives the advisories now due.
func (c *Core) SetAdvisory(which Advisory, on bool) error {
	a := &c.advisories
	sw, isOn, isOff := a.switchOf(which)
	if sw == nil {
		return hla.ErrRTIinternalError
	}
	if *sw == on {
		if on {
			return isOn
		}
		return isOff
	}
	*sw = on
	switch which {
	case ObjectClassRelevance:
		if on {
			for _, class := range trueKeys(a.regOn) {
				c.push(hla.StartRegistrationForObjectClass{Class: class})
			}
		}
	case InteractionRelevance:
		if on {
			for _, class := range trueKeys(a.intOn) {
				c.push(hla.TurnInteractionsOn{Class: class})
			}
		}
	case AttributeRelevance:
		clear(a.updOn)
		if on {
			c.allAttrRelevance()
		}
	case AttributeScope:
		clear(a.scopeOf)
		if on {
			hs := make([]ObjectInstanceHandle, 0, len(c.objects.inst))
			for h := range c.objects.inst {
				hs = append(hs, h)
			}
			slices.SortFunc(hs, compareHandles)
			for _, h := range hs {
				c.rescope(h, false)
			}
		}
	}
	return nil
}

// Advisory names an advisory switch.
type Advisory int

const (
	ObjectClassRelevance Advisory = iota + 1
	AttributeRelevance
	AttributeScope
	InteractionRelevance
)

func (a *advisories) switchOf(which Advisory) (sw *bool, isOn, isOff error) {
	switch which {
	case ObjectClassRelevance:
		return &a.classRel, hla.ErrObjectClassRelevanceAdvisorySwitchIsOn, hla.ErrObjectClassRelevanceAdvisorySwitchIsOff
	case AttributeRelevance:
		return &a.attrRel, hla.ErrAttributeRelevanceAdvisorySwitchIsOn, hla.ErrAttributeRelevanceAdvisorySwitchIsOff
	case AttributeScope:
		return &a.scope, hla.ErrAttributeScopeAdvisorySwitchIsOn, hla.ErrAttributeScopeAdvisorySwitchIsOff
	case InteractionRelevance:
		return &a.intRel, hla.ErrInteractionRelevanceAdvisorySwitchIsOn, hla.ErrInteractionRelevanceAdvisorySwitchIsOff
	}
	return nil, nil, nil
}
