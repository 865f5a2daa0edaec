package core

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer/hla"
)

// Ownership management (IEEE 1516.1-2010 §7) over the tokens of
// ownership.go; docs/ownership.md has the protocol and why it is safe.
// Every step travels as a kindOwnership message on the instance's class
// group (where every federate that may own the class's attributes
// listens: owning needs publishing), reliably, Action saying which:
const (
	ownOffer              uint8 = 1 + iota // a negotiated divestiture: Pairs, Tag
	ownOfferCancel                         // the offer is withdrawn: Pairs
	ownAcquire                             // an acquisition request: Pairs, Tag
	ownAcquireIfAvailable                  // an acquisition if available: Pairs
	ownAcquireCancel                       // the request is withdrawn: Pairs
	ownTransfer                            // the tokens go to Ref: Pairs attribute -> new epoch, Tag
	ownUnowned                             // the tokens are nobody's: Pairs attribute -> epoch
	ownTaken                               // the sender holds the tokens now: Pairs attribute -> epoch
	ownUnavailable                         // to Ref: not available: Pairs
	ownHolderQuery                         // who holds Pairs' attributes, once Ref (gone) is processed? RefSeq: the query's id; on the control group
	ownHolderReply                         // to Ref: the sender's view of query RefSeq: Pairs attribute -> epoch, owner
	ownCancelAck                           // to Ref: the sender will not transfer Pairs to it (after ownAcquireCancel)
)

// ownedInstance checks that obj is known and attrs are defined for it,
// and returns it.
func (c *Core) ownedInstance(obj ObjectInstanceHandle, attrs []AttributeHandle) (*instance, error) {
	in, ok := c.objects.inst[obj]
	if !ok {
		return nil, fmt.Errorf("%w: %v", hla.ErrObjectInstanceNotKnown, obj)
	}
	if err := checkAttrs(in.class, attrs); err != nil {
		return nil, err
	}
	return in, nil
}

// heldInstance checks that obj is known, attrs are defined for it and
// this federate owns every one of them, and returns it.
func (c *Core) heldInstance(obj ObjectInstanceHandle, attrs []AttributeHandle) (*instance, error) {
	in, err := c.ownedInstance(obj, attrs)
	if err != nil {
		return nil, err
	}
	return in, c.checkHeld(obj, in, attrs)
}

// checkHeld checks that this federate owns every one of attrs of obj.
func (c *Core) checkHeld(obj ObjectInstanceHandle, in *instance, attrs []AttributeHandle) error {
	for _, a := range attrs {
		if _, ok := c.ownership.holds(obj, a); !ok {
			at, _ := in.class.AttributeByHandle(a)
			return fmt.Errorf("%w: %s of %v", hla.ErrAttributeNotOwned, at.Name, obj)
		}
	}
	return nil
}

// sendOwnership sends one ownership step about obj.
func (c *Core) sendOwnership(op uint8, obj ObjectInstanceHandle, in *instance, pairs []valuePair, tag []byte, to FederateHandle) {
	m := &wireMsg{Kind: kindOwnership, Action: op, Obj: obj, Class: uint64(in.class.Handle), Pairs: pairs, Tag: tag, Ref: uint64(to)}
	if _, err := c.send(outMsg{group: c.routing.objectRoute(in.class), reliable: true, msg: m}); err != nil {
		c.stats.Malformed++ // cannot happen: an ownership step fits any frame
	}
}

// epochPairs lists attributes with epochs, ascending by handle. The
// pairs and the epochs' bytes are cut from blocks shared with the next
// calls' (cutBlock): an ownership message costs no allocation of its
// own for them. Nothing writes to them once made.
func (c *Core) epochPairs(attrs []AttributeHandle, epoch func(AttributeHandle) uint64) []valuePair {
	ps := cutBlock(&c.pairMem, len(attrs), pairBlock)[:0]
	for _, a := range attrs {
		var v []byte
		if epoch != nil {
			var b [binary.MaxVarintLen64]byte
			k := binary.PutUvarint(b[:], epoch(a))
			v = cutBlock(&c.epochMem, k, epochBlock)
			copy(v, b[:k])
		}
		ps = append(ps, valuePair{H: uint64(a), V: v})
	}
	sortPairs(ps)
	return slices.CompactFunc(ps, func(x, y valuePair) bool { return x.H == y.H })
}

// The blocks epochPairs cuts from, in elements.
const (
	pairBlock  = 64
	epochBlock = 1024
)

// cutBlock returns n zeroed elements cut from *mem, a new block of size
// elements when it has fewer left (n elements of their own when n is
// more than a quarter of a block). The slice's capacity is n: an append
// to it never reaches the next one. A block is never reused; it lives
// while anything cut from it does.
func cutBlock[T any](mem *[]T, n, size int) []T {
	if n > size/4 {
		return make([]T, n)
	}
	if len(*mem) < n {
		*mem = make([]T, size)
	}
	s := (*mem)[:n:n]
	*mem = (*mem)[n:]
	return s
}

// ---- Divestiture (§7.2-§7.6, §7.12-§7.14) ----

// UnconditionalAttributeOwnershipDivestiture (§7.2) gives up attrs of
// obj: to a federate that asked for them, or to nobody. Errors:
// ErrObjectInstanceNotKnown, ErrAttributeNotDefined, ErrAttributeNotOwned.
func (c *Core) UnconditionalAttributeOwnershipDivestiture(obj ObjectInstanceHandle, attrs []AttributeHandle) error {
	in, err := c.heldInstance(obj, attrs)
	if err != nil {
		return err
	}
	c.divest(obj, in, attrs, nil, true)
	return nil
}

// divest ends this federate's holding of attrs: each goes to the first
// federate that asked for it, or (unconditionally) to nobody; those
// nobody asked for stay held unless unconditional. It returns the
// attributes given to an acquirer.
func (c *Core) divest(obj ObjectInstanceHandle, in *instance, attrs []AttributeHandle, tag []byte, unconditional bool) []AttributeHandle {
	byTo := make(map[FederateHandle][]AttributeHandle)
	var nobody, given []AttributeHandle
	for _, a := range attrs {
		if _, ok := c.ownership.holds(obj, a); !ok {
			continue
		}
		if rq := c.ownership.requests[obj][a]; len(rq) > 0 {
			byTo[rq[0]] = append(byTo[rq[0]], a)
			given = append(given, a)
		} else if unconditional {
			nobody = append(nobody, a)
		}
	}
	tos := keysOf(byTo)
	for _, to := range tos {
		as := byTo[to]
		epochs := make(map[AttributeHandle]uint64, len(as))
		for _, a := range as {
			epochs[a] = c.ownership.give(obj, a, to)
			c.traceOwner(obj, a, to, epochs[a])
		}
		c.sendOwnership(ownTransfer, obj, in, c.epochPairs(as, func(a AttributeHandle) uint64 { return epochs[a] }), tag, to)
	}
	if len(nobody) > 0 {
		epochs := make(map[AttributeHandle]uint64, len(nobody))
		for _, a := range nobody {
			epochs[a] = c.ownership.give(obj, a, 0)
			c.traceOwner(obj, a, 0, epochs[a])
		}
		c.sendOwnership(ownUnowned, obj, in, c.epochPairs(nobody, func(a AttributeHandle) uint64 { return epochs[a] }), nil, 0)
	}
	if len(given)+len(nobody) > 0 {
		c.attrRelevance(obj)
		c.rescope(obj, false)
	}
	return given
}

// NegotiatedAttributeOwnershipDivestiture (§7.3) offers attrs of obj:
// federates that could take them hear RequestAttributeOwnershipAssumption;
// when one asks, this federate hears RequestDivestitureConfirmation and
// confirms (ConfirmDivestiture). Errors: ErrObjectInstanceNotKnown,
// ErrAttributeNotDefined, ErrAttributeNotOwned,
// ErrAttributeAlreadyBeingDivested.
func (c *Core) NegotiatedAttributeOwnershipDivestiture(obj ObjectInstanceHandle, attrs []AttributeHandle, tag []byte) error {
	in, err := c.heldInstance(obj, attrs)
	if err != nil {
		return err
	}
	for _, a := range attrs {
		if _, ok := c.ownership.offering[obj][a]; ok {
			return attrErr(hla.ErrAttributeAlreadyBeingDivested, obj, in, a)
		}
	}
	m := inner(c.ownership.offering, obj)
	var asked []AttributeHandle
	for _, a := range attrs {
		m[a] = slices.Clone(tag)
		if len(c.ownership.requests[obj][a]) > 0 {
			asked = append(asked, a)
		}
	}
	c.sendOwnership(ownOffer, obj, in, c.epochPairs(attrs, nil), tag, 0)
	if len(asked) > 0 {
		c.push(hla.RequestDivestitureConfirmation{Object: obj, Attributes: asked, Tag: slices.Clone(tag)})
	}
	return nil
}

// ConfirmDivestiture (§7.6) gives offered attributes to the federates
// that asked for them. Errors: ErrObjectInstanceNotKnown,
// ErrAttributeNotDefined, ErrAttributeNotOwned,
// ErrAttributeDivestitureWasNotRequested (not offered), ErrNoAcquisitionPending
// (nobody asked).
func (c *Core) ConfirmDivestiture(obj ObjectInstanceHandle, attrs []AttributeHandle, tag []byte) error {
	in, err := c.heldInstance(obj, attrs)
	if err != nil {
		return err
	}
	for _, a := range attrs {
		if _, ok := c.ownership.offering[obj][a]; !ok {
			return attrErr(hla.ErrAttributeDivestitureWasNotRequested, obj, in, a)
		}
		if len(c.ownership.requests[obj][a]) == 0 {
			return attrErr(hla.ErrNoAcquisitionPending, obj, in, a)
		}
	}
	c.divest(obj, in, attrs, tag, false)
	return nil
}

// AttributeOwnershipDivestitureIfWanted (§7.13) gives the attributes of
// attrs that another federate asked for to it, keeps the rest, and
// returns those given. Errors: ErrObjectInstanceNotKnown,
// ErrAttributeNotDefined, ErrAttributeNotOwned.
func (c *Core) AttributeOwnershipDivestitureIfWanted(obj ObjectInstanceHandle, attrs []AttributeHandle) ([]AttributeHandle, error) {
	in, err := c.heldInstance(obj, attrs)
	if err != nil {
		return nil, err
	}
	given := c.divest(obj, in, attrs, nil, false)
	slices.Sort(given)
	return given, nil
}

// CancelNegotiatedAttributeOwnershipDivestiture (§7.14) withdraws an
// offer. Errors: ErrObjectInstanceNotKnown, ErrAttributeNotDefined,
// ErrAttributeNotOwned, ErrAttributeDivestitureWasNotRequested.
func (c *Core) CancelNegotiatedAttributeOwnershipDivestiture(obj ObjectInstanceHandle, attrs []AttributeHandle) error {
	in, err := c.heldInstance(obj, attrs)
	if err != nil {
		return err
	}
	for _, a := range attrs {
		if _, ok := c.ownership.offering[obj][a]; !ok {
			return attrErr(hla.ErrAttributeDivestitureWasNotRequested, obj, in, a)
		}
	}
	for _, a := range attrs {
		delete(c.ownership.offering[obj], a)
	}
	c.sendOwnership(ownOfferCancel, obj, in, c.epochPairs(attrs, nil), nil, 0)
	return nil
}

// AttributeOwnershipReleaseDenied (§7.12) keeps attrs: the requests for
// them are dropped (the acquirers' stay pending on their side). Errors:
// ErrObjectInstanceNotKnown, ErrAttributeNotDefined, ErrAttributeNotOwned.
func (c *Core) AttributeOwnershipReleaseDenied(obj ObjectInstanceHandle, attrs []AttributeHandle) error {
	if _, err := c.heldInstance(obj, attrs); err != nil {
		return err
	}
	for _, a := range attrs {
		delete(c.ownership.requests[obj], a)
	}
	return nil
}

// ---- Acquisition (§7.8-§7.10, §7.15, §7.16) ----

// checkAcquire checks an acquisition of attrs of obj: this federate
// publishes them and owns none of them.
func (c *Core) checkAcquire(obj ObjectInstanceHandle, attrs []AttributeHandle) (*instance, error) {
	in, err := c.ownedInstance(obj, attrs)
	if err != nil {
		return nil, err
	}
	if err := momGuard(obj, hla.ErrAttributeNotPublished); err != nil {
		return nil, err
	}
	pub := c.declared.pubObj[in.class.Handle]
	if pub == nil {
		return nil, fmt.Errorf("%w: %s", hla.ErrObjectClassNotPublished, in.class.QualifiedName)
	}
	for _, a := range attrs {
		at, _ := in.class.AttributeByHandle(a)
		if !pub[a] && at.Name != "HLAprivilegeToDeleteObject" {
			return nil, fmt.Errorf("%w: %s", hla.ErrAttributeNotPublished, at.Name)
		}
		if _, ok := c.ownership.holds(obj, a); ok {
			return nil, fmt.Errorf("%w: %s of %v", hla.ErrFederateOwnsAttributes, at.Name, obj)
		}
	}
	return in, nil
}

// AttributeOwnershipAcquisition (§7.8) asks for attrs of obj: their
// owners hear RequestAttributeOwnershipRelease (or
// RequestDivestitureConfirmation while offering them); unowned ones are
// taken through the register. AttributeOwnershipAcquisitionNotification
// follows for each attribute secured. Errors: ErrObjectInstanceNotKnown,
// ErrAttributeNotDefined, ErrObjectClassNotPublished,
// ErrAttributeNotPublished, ErrFederateOwnsAttributes.
func (c *Core) AttributeOwnershipAcquisition(obj ObjectInstanceHandle, attrs []AttributeHandle, tag []byte) error {
	in, err := c.checkAcquire(obj, attrs)
	if err != nil {
		return err
	}
	c.startAcquisition(obj, in, attrs, tag, false)
	return nil
}

// AttributeOwnershipAcquisitionIfAvailable (§7.9) takes attrs of obj if
// they are unowned or offered: AttributeOwnershipAcquisitionNotification
// for those secured, AttributeOwnershipUnavailable for the others.
// Errors: as AttributeOwnershipAcquisition, and
// ErrAttributeAlreadyBeingAcquired.
func (c *Core) AttributeOwnershipAcquisitionIfAvailable(obj ObjectInstanceHandle, attrs []AttributeHandle) error {
	in, err := c.checkAcquire(obj, attrs)
	if err != nil {
		return err
	}
	for _, a := range attrs {
		if _, ok := c.ownership.acquiring[obj][a]; ok {
			return attrErr(hla.ErrAttributeAlreadyBeingAcquired, obj, in, a)
		}
	}
	c.startAcquisition(obj, in, attrs, nil, true)
	return nil
}

func (c *Core) startAcquisition(obj ObjectInstanceHandle, in *instance, attrs []AttributeHandle, tag []byte, ifAvailable bool) {
	m := inner(c.ownership.acquiring, obj)
	for _, a := range attrs {
		m[a] = &acquisition{ifAvailable: ifAvailable, tag: slices.Clone(tag), askedOwner: c.ownership.ownerOf(obj, a), askedEpoch: c.ownership.current(obj, a).epoch}
	}
	c.askOwners(obj, in, attrs)
	for _, a := range attrs {
		c.maybeClaim(obj, a)
	}
}

// askOwners sends this federate's acquisition requests for attrs of obj
// (each being acquired) to their owners, with the epoch of each that it
// knows: an owner-to-be that hears a request before its transfer keeps
// it until the token arrives (onAcquireRequest).
func (c *Core) askOwners(obj ObjectInstanceHandle, in *instance, attrs []AttributeHandle) {
	var plain, ifAvailable []AttributeHandle
	var tag []byte
	for _, a := range attrs {
		acq := c.ownership.acquiring[obj][a]
		switch {
		case acq == nil:
		case acq.ifAvailable:
			ifAvailable = append(ifAvailable, a)
		default:
			plain = append(plain, a)
			tag = acq.tag
		}
	}
	epoch := func(a AttributeHandle) uint64 { return c.ownership.current(obj, a).epoch }
	if len(plain) > 0 {
		c.sendOwnership(ownAcquire, obj, in, c.epochPairs(plain, epoch), tag, 0)
	}
	if len(ifAvailable) > 0 {
		c.sendOwnership(ownAcquireIfAvailable, obj, in, c.epochPairs(ifAvailable, epoch), nil, 0)
	}
}

// maybeClaim starts taking (obj, a) through the register when this
// federate is acquiring it and knows it to be unowned, or asks who holds
// it when its last known owner is gone.
func (c *Core) maybeClaim(obj ObjectInstanceHandle, a AttributeHandle) {
	acq := c.ownership.acquiring[obj][a]
	if acq == nil || acq.claiming || acq.querying || acq.cancelling {
		return
	}
	e, ok := c.ownership.unowned(obj, a)
	if !ok {
		cur := c.ownership.current(obj, a)
		switch {
		case cur.owner == 0 || cur.owner == c.self:
		case c.ownership.left[cur.owner]:
			c.askHolders(obj, []AttributeHandle{a}, cur.owner)
		case cur.via != 0 && c.ownership.left[cur.via]:
			// Given by a federate since gone: did it arrive?
			c.askHolders(obj, []AttributeHandle{a}, cur.via)
		}
		return
	}
	c.claim(obj, a, acq, termOf(e))
}

// claim asks the register for the next term of (obj, a) after expect,
// for acquisition acq.
func (c *Core) claim(obj ObjectInstanceHandle, a AttributeHandle, acq *acquisition, expect uint64) {
	acq.claiming = true
	// The value is the branch the claim is made on (saverestore.go).
	c.startOp(Op{Kind: OpSwap, Key: tokenKey(obj, a), Expect: expect, Value: binary.AppendUvarint(nil, c.saveRestore.branch)}, func(r OpResult) {
		acq.claiming = false
		if c.ownership.acquiring[obj][a] != acq {
			// The instance is gone (or the acquisition began anew): a
			// term won anyway is held, so that the token does not
			// vanish.
			if r.Err != nil || !r.Held {
				return
			}
		}
		in := c.objects.inst[obj]
		if acq.cancelling && !(r.Err == nil && r.Held && in != nil) {
			c.cancelled(obj, []AttributeHandle{a})
			return
		}
		switch {
		case r.Err == nil && r.Held && in != nil:
			c.secure(obj, in, []AttributeHandle{a}, termStart(r.Version), acq.tag, true)
		case r.Err == nil && r.Version > expect && claimBranch(r.Value) < c.saveRestore.branch:
			// The register's newer term was claimed on a branch that a
			// federation restore abandoned: nobody holds it now. The
			// next term is above every epoch the restore brought back.
			c.claim(obj, a, acq, r.Version)
		case acq.ifAvailable && (r.Err != nil || r.Version > expect):
			delete(c.ownership.acquiring[obj], a)
			c.push(hla.AttributeOwnershipUnavailable{Object: obj, Attributes: []AttributeHandle{a}})
		case r.Err == nil && r.Version > expect:
			// The token moved on since this federate saw it unowned: a
			// newer term's holder took it. Its announcement may be on
			// its way, or it may be gone: ask who holds it now.
			if r.Holder != 0 && r.Holder != c.self && c.ownership.note(obj, a, token{owner: r.Holder, epoch: termStart(r.Version)}) {
				c.traceOwner(obj, a, r.Holder, termStart(r.Version))
			}
			c.askHolders(obj, []AttributeHandle{a}, 0)
		case r.Err != nil:
			// Not decided (no quorum, say): try again in a while.
			c.ownership.retryClaim(obj, a, c.objects.ticks+claimRetryTicks)
		}
	})
}

// claimBranch reads the branch a register term was claimed on (none:
// the first branch).
func claimBranch(v []byte) uint64 {
	b, n := binary.Uvarint(v)
	if n <= 0 {
		return 0
	}
	return b
}

// claimRetryTicks is how long an acquisition whose claim the register
// could not decide waits before it tries again.
const claimRetryTicks = 200

// retryClaims retries the claims due by now.
func (c *Core) retryClaims() {
	var due []ObjectInstanceHandle
	for h, m := range c.ownership.retry {
		for _, at := range m {
			if at <= c.objects.ticks {
				due = append(due, h)
				break
			}
		}
	}
	slices.SortFunc(due, compareHandles)
	for _, h := range due {
		var attrs []AttributeHandle
		for a, at := range c.ownership.retry[h] {
			if at <= c.objects.ticks {
				attrs = append(attrs, a)
				delete(c.ownership.retry[h], a)
			}
		}
		if len(c.ownership.retry[h]) == 0 {
			delete(c.ownership.retry, h)
		}
		slices.Sort(attrs)
		for _, a := range attrs {
			c.maybeClaim(h, a)
		}
	}
}

// ---- Who holds a token (docs/ownership.md, "Lost owners") ----

// askHolders asks every member who holds attrs of obj, whose last known
// owner gone left (0: none in particular), and waits for all answers
// before it claims a token nobody alive holds. Each member answers
// only once it has processed gone's departure, after which it takes
// nothing more from gone: so no answer can miss a holder that gone
// made.
func (c *Core) askHolders(obj ObjectInstanceHandle, attrs []AttributeHandle, gone FederateHandle) {
	var ask []AttributeHandle
	for _, a := range attrs {
		if acq := c.ownership.acquiring[obj][a]; acq != nil && !acq.claiming && !acq.querying {
			acq.querying = true
			ask = append(ask, a)
		}
	}
	if len(ask) == 0 {
		return
	}
	c.ownership.lastQuery++
	id := c.ownership.lastQuery
	q := &holderQuery{obj: obj, attrs: ask, gone: gone, waiting: make(map[FederateHandle]bool, len(c.federation.members))}
	for h := range c.federation.members {
		q.waiting[h] = true
	}
	c.ownership.queries[id] = q
	var class uint64
	if in := c.objects.inst[obj]; in != nil {
		class = uint64(in.class.Handle)
	}
	m := &wireMsg{Kind: kindOwnership, Action: ownHolderQuery, Obj: obj, Class: class, Pairs: c.epochPairs(ask, nil), Ref: uint64(gone), RefSeq: id}
	if _, err := c.send(outMsg{group: controlGroup, reliable: true, msg: m}); err != nil {
		c.stats.Malformed++ // cannot happen: a query fits any frame
	}
	if len(q.waiting) == 0 {
		c.holdersKnown(id, q)
	}
}

// onHolderQuery answers a who-holds query, or defers it until this
// federate has processed the departure of the federate it is about.
func (c *Core) onHolderQuery(m *wireMsg, from FederateHandle) {
	gone := FederateHandle(m.Ref)
	attrs := make([]AttributeHandle, 0, len(m.Pairs))
	for _, p := range m.Pairs {
		attrs = append(attrs, AttributeHandle(p.H))
	}
	if gone != 0 && gone != c.self && !c.ownership.left[gone] {
		if c.federation.isMember(gone) {
			c.ownership.deferred[gone] = append(c.ownership.deferred[gone], deferredQuery{from: from, obj: m.Obj, class: m.Class, id: m.RefSeq, attrs: attrs})
			return
		}
		// Never seen here: whatever it sends from now on is void.
		c.ownership.ownerLeft(gone)
	}
	c.answerHolders(deferredQuery{from: from, obj: m.Obj, class: m.Class, id: m.RefSeq, attrs: attrs})
}

// answerHolders sends this federate's view of a query's attributes:
// epoch and owner of each.
func (c *Core) answerHolders(q deferredQuery) {
	ps := make([]valuePair, 0, len(q.attrs))
	for _, a := range q.attrs {
		t := c.ownership.current(q.obj, a)
		v := binary.AppendUvarint(nil, t.epoch)
		v = binary.AppendUvarint(v, uint64(t.owner))
		_, held := c.ownership.holds(q.obj, a)
		v = binary.AppendUvarint(v, boolInt(held))
		ps = append(ps, valuePair{H: uint64(a), V: v})
	}
	sortPairs(ps)
	ps = slices.CompactFunc(ps, func(x, y valuePair) bool { return x.H == y.H })
	m := &wireMsg{Kind: kindOwnership, Action: ownHolderReply, Obj: q.obj, Class: q.class, Pairs: ps, Ref: uint64(q.from), RefSeq: q.id}
	if _, err := c.send(outMsg{group: controlGroup, reliable: true, msg: m}); err != nil {
		c.stats.Malformed++
	}
}

// onHolderReply folds an answer to this federate's query into its view.
func (c *Core) onHolderReply(m *wireMsg, from FederateHandle) {
	if FederateHandle(m.Ref) != c.self {
		return
	}
	q := c.ownership.queries[m.RefSeq]
	if q == nil || !q.waiting[from] {
		return
	}
	for _, p := range m.Pairs {
		e, n := binary.Uvarint(p.V)
		if n <= 0 {
			c.stats.Malformed++
			continue
		}
		owner, k := binary.Uvarint(p.V[n:])
		if k <= 0 {
			c.stats.Malformed++
			continue
		}
		held, j := binary.Uvarint(p.V[n+k:])
		if j <= 0 {
			c.stats.Malformed++
			continue
		}
		a := AttributeHandle(p.H)
		if !slices.Contains(q.attrs, a) {
			continue
		}
		if q.inform {
			q.views[a] = append(q.views[a], holderView{from: from, t: token{owner: FederateHandle(owner), epoch: e}, held: held != 0})
		}
		if held == 0 {
			if q.notHeld == nil {
				q.notHeld = make(map[AttributeHandle][]FederateHandle)
			}
			q.notHeld[a] = append(q.notHeld[a], from)
		}
		t := token{owner: FederateHandle(owner), epoch: e}
		if t.owner == c.self {
			continue // this federate's own old holding, or one it knows better
		}
		if c.ownership.note(q.obj, a, t) {
			c.traceOwner(q.obj, a, t.owner, t.epoch)
		}
	}
	delete(q.waiting, from)
	if len(q.waiting) == 0 {
		c.holdersKnown(m.RefSeq, q)
	}
}

// holdersKnown ends query id: every member answered (or left). A token
// whose newest holder is alive is asked of it; one nobody alive holds
// is claimed through the register.
func (c *Core) holdersKnown(id uint64, q *holderQuery) {
	delete(c.ownership.queries, id)
	if q.inform {
		c.informOwner(q)
		return
	}
	in := c.objects.inst[q.obj]
	var reask []AttributeHandle
	for _, a := range q.attrs {
		acq := c.ownership.acquiring[q.obj][a]
		if acq == nil {
			continue
		}
		acq.querying = false
		cur := c.ownership.current(q.obj, a)
		switch {
		case acq.cancelling:
			c.cancelled(q.obj, []AttributeHandle{a})
		case cur.owner == c.self:
		case cur.owner == 0 || c.ownership.left[cur.owner]:
			c.claim(q.obj, a, acq, termOf(cur.epoch))
		case q.gone != 0 && cur.via == q.gone && slices.Contains(q.notHeld[a], cur.owner):
			// The gone federate's transfer never reached its holder-to-be,
			// which has processed the departure and will refuse it now:
			// nobody holds the token.
			c.claim(q.obj, a, acq, termOf(cur.epoch))
		default:
			acq.askedOwner, acq.askedEpoch = cur.owner, cur.epoch
			reask = append(reask, a)
		}
	}
	if len(reask) > 0 && in != nil {
		c.askOwners(q.obj, in, reask)
	}
}

// ownersLeft moves ownership on after federate f left: the queries
// about f that waited for this are answered, this federate's queries
// stop waiting for f, and its acquisitions of tokens f held ask who
// holds them now.
func (c *Core) ownersLeft(f FederateHandle) {
	c.ownership.dropRequests(f)
	for _, q := range c.ownership.deferred[f] {
		c.answerHolders(q)
	}
	delete(c.ownership.deferred, f)
	ids := make([]uint64, 0, len(c.ownership.queries))
	for id, q := range c.ownership.queries {
		if q.waiting[f] {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		q := c.ownership.queries[id]
		delete(q.waiting, f)
		if len(q.waiting) == 0 {
			c.holdersKnown(id, q)
		}
	}
	objs := make([]ObjectInstanceHandle, 0, len(c.ownership.acquiring))
	for h := range c.ownership.acquiring {
		objs = append(objs, h)
	}
	slices.SortFunc(objs, compareHandles)
	for _, h := range objs {
		var attrs, done []AttributeHandle
		for a, acq := range c.ownership.acquiring[h] {
			switch {
			case acq.cancelling && acq.askedOwner == f && !acq.claiming && !acq.querying:
				done = append(done, a) // its acknowledgement will not come
			case acq.cancelling:
			case c.ownership.current(h, a).owner == f, c.ownership.current(h, a).via == f:
				attrs = append(attrs, a)
			}
		}
		slices.Sort(done)
		c.cancelled(h, done)
		if len(attrs) > 0 {
			slices.Sort(attrs)
			c.askHolders(h, attrs, f)
		}
	}
}

// secure makes this federate the owner of attrs of obj at epoch: their
// transfer or the register's new term arrived. A new term is announced
// (announce); a transfer was seen by everyone the announcement would
// reach, on the same group.
func (c *Core) secure(obj ObjectInstanceHandle, in *instance, attrs []AttributeHandle, epoch uint64, tag []byte, announce bool) {
	for _, a := range attrs {
		c.ownership.take(obj, a, epoch)
		delete(c.ownership.acquiring[obj], a)
		c.traceOwner(obj, a, c.self, epoch)
	}
	if announce {
		c.sendOwnership(ownTaken, obj, in, c.epochPairs(attrs, func(AttributeHandle) uint64 { return epoch }), nil, 0)
	}
	c.push(hla.AttributeOwnershipAcquisitionNotification{Object: obj, Attributes: slices.Clone(attrs), Tag: slices.Clone(tag)})
	c.attrRelevance(obj)
	c.rescope(obj, false)
	c.replayEarly(obj, in, attrs, epoch)
}

// replayEarly answers the requests for attrs of obj that came before
// this federate got their tokens at epoch, as if they came now.
func (c *Core) replayEarly(obj ObjectInstanceHandle, in *instance, attrs []AttributeHandle, epoch uint64) {
	er := c.ownership.early[obj]
	if er == nil {
		return
	}
	for _, a := range attrs {
		var now []earlyRequest
		er[a] = slices.DeleteFunc(er[a], func(r earlyRequest) bool {
			if r.epoch <= epoch {
				now = append(now, r)
				return true
			}
			return false
		})
		if len(er[a]) == 0 {
			delete(er, a)
		}
		for _, r := range now {
			op := ownAcquire
			if r.ifAvailable {
				op = ownAcquireIfAvailable
			}
			m := &wireMsg{Kind: kindOwnership, Action: op, Obj: obj, Tag: r.tag, Pairs: c.epochPairs([]AttributeHandle{a}, func(AttributeHandle) uint64 { return r.epoch })}
			c.onAcquireRequest(m, in, []AttributeHandle{a}, r.from)
		}
	}
	if len(er) == 0 {
		delete(c.ownership.early, obj)
	}
}

// pairEpoch returns the epoch pairs give attribute a, if they do.
func pairEpoch(ps []valuePair, a AttributeHandle) (uint64, bool) {
	for _, p := range ps {
		if AttributeHandle(p.H) == a {
			e, n := binary.Uvarint(p.V)
			return e, n > 0
		}
	}
	return 0, false
}

// CancelAttributeOwnershipAcquisition (§7.15) withdraws an acquisition;
// ConfirmAttributeOwnershipAcquisitionCancellation follows (a transfer
// already on its way is still taken and notified). Errors:
// ErrObjectInstanceNotKnown, ErrAttributeNotDefined,
// ErrAttributeAlreadyOwned, ErrAttributeAcquisitionWasNotRequested.
func (c *Core) CancelAttributeOwnershipAcquisition(obj ObjectInstanceHandle, attrs []AttributeHandle) error {
	in, err := c.ownedInstance(obj, attrs)
	if err != nil {
		return err
	}
	for _, a := range attrs {
		if _, ok := c.ownership.holds(obj, a); ok {
			return attrErr(hla.ErrAttributeAlreadyOwned, obj, in, a)
		}
		if acq := c.ownership.acquiring[obj][a]; acq == nil || acq.ifAvailable || acq.cancelling {
			return attrErr(hla.ErrAttributeAcquisitionWasNotRequested, obj, in, a)
		}
	}
	// Everyone forgets the request. The owner asked last may have
	// released the tokens already: its acknowledgement, which follows
	// any transfer it sent on the same group, settles which callback
	// comes, the acquisition or the cancellation (never both).
	// Acquisitions with a claim or a who-holds query in flight wait for
	// it instead.
	byOwner := make(map[FederateHandle][]AttributeHandle)
	var now []AttributeHandle
	for _, a := range attrs {
		acq := c.ownership.acquiring[obj][a]
		acq.cancelling = true
		switch o := acq.askedOwner; {
		case acq.claiming || acq.querying:
		case o == 0 || o == c.self || c.ownership.left[o]:
			now = append(now, a)
		default:
			byOwner[o] = append(byOwner[o], a)
		}
	}
	owners := keysOf(byOwner)
	for _, o := range owners {
		c.sendOwnership(ownAcquireCancel, obj, in, c.epochPairs(byOwner[o], nil), nil, o)
	}
	if len(owners) == 0 {
		c.sendOwnership(ownAcquireCancel, obj, in, c.epochPairs(attrs, nil), nil, 0)
	}
	c.cancelled(obj, now)
	return nil
}

// cancelled ends the cancelled acquisitions of attrs of obj:
// ConfirmAttributeOwnershipAcquisitionCancellation.
func (c *Core) cancelled(obj ObjectInstanceHandle, attrs []AttributeHandle) {
	var done []AttributeHandle
	for _, a := range attrs {
		if acq := c.ownership.acquiring[obj][a]; acq != nil && acq.cancelling {
			delete(c.ownership.acquiring[obj], a)
			done = append(done, a)
		}
	}
	if len(done) > 0 {
		c.push(hla.ConfirmAttributeOwnershipAcquisitionCancellation{Object: obj, Attributes: done})
	}
}

// ---- Queries (§7.17, §7.19) ----

// QueryAttributeOwnership (§7.17): InformAttributeOwnership,
// AttributeIsNotOwned or AttributeIsOwnedByRTI follows. A federate
// answers at once for the MOM's classes and for what it holds; for the
// rest it asks every member who holds the attribute (a who-holds query
// on the control group, as an acquisition of a lost owner's token does)
// and answers once all have: its own view may be behind, since it hears
// the ownership steps of a class only while it publishes or subscribes
// it, and a late discoverer cannot tell a registrar's first token from
// one it never held (docs/ownership.md, "Queries"). Errors:
// ErrObjectInstanceNotKnown, ErrAttributeNotDefined.
func (c *Core) QueryAttributeOwnership(obj ObjectInstanceHandle, attr AttributeHandle) error {
	in, err := c.ownedInstance(obj, []AttributeHandle{attr})
	if err != nil {
		return err
	}
	if in.class.IsMOM() {
		c.push(hla.AttributeIsOwnedByRTI{Object: obj, Attribute: attr})
		return nil
	}
	if _, mine := c.ownership.holds(obj, attr); mine {
		c.push(hla.InformAttributeOwnership{Object: obj, Attribute: attr, Owner: c.self})
		return nil
	}
	c.ownership.lastQuery++
	id := c.ownership.lastQuery
	q := &holderQuery{obj: obj, attrs: []AttributeHandle{attr}, inform: true, waiting: make(map[FederateHandle]bool, len(c.federation.members)), views: make(map[AttributeHandle][]holderView)}
	for h := range c.federation.members {
		q.waiting[h] = true
	}
	c.ownership.queries[id] = q
	if len(q.waiting) > 0 {
		m := &wireMsg{Kind: kindOwnership, Action: ownHolderQuery, Obj: obj, Class: uint64(in.class.Handle), Pairs: c.epochPairs(q.attrs, nil), RefSeq: id}
		if _, err := c.send(outMsg{group: controlGroup, reliable: true, msg: m}); err != nil {
			c.stats.Malformed++ // cannot happen: a query fits any frame
		}
		return nil
	}
	c.holdersKnown(id, q)
	return nil
}

// informOwner answers QueryAttributeOwnership query q from the members'
// views and this federate's: the member that holds the token; else the
// owner of the newest view (a transfer to it on its way), unless that
// owner is gone or said, knowing that epoch, that it does not hold it
// (a registrar's attribute it never held, say); else nobody.
func (c *Core) informOwner(q *holderQuery) {
	if c.objects.inst[q.obj] == nil {
		return // deleted (or forgotten) meanwhile: nothing to answer about
	}
	for _, a := range q.attrs {
		views := append(q.views[a], holderView{from: c.self, t: c.ownership.current(q.obj, a)})
		var holder FederateHandle
		var held uint64
		best := views[len(views)-1].t
		for _, v := range views {
			if v.held && !c.ownership.left[v.from] && (holder == 0 || v.t.epoch > held) {
				holder, held = v.from, v.t.epoch
			}
			if v.t.epoch > best.epoch {
				best = v.t
			}
		}
		owner := holder
		if owner == 0 {
			owner = best.owner
			if owner == c.self || c.ownership.left[owner] {
				owner = 0
			}
			for _, v := range views {
				if v.from == owner && !v.held && v.t.epoch >= best.epoch {
					owner = 0 // it knows that epoch, and does not hold it
				}
			}
		}
		if owner == 0 {
			c.push(hla.AttributeIsNotOwned{Object: q.obj, Attribute: a})
		} else {
			c.push(hla.InformAttributeOwnership{Object: q.obj, Attribute: a, Owner: owner})
		}
	}
}

// IsAttributeOwnedByFederate (§7.19) reports whether this federate owns
// attr of obj. Errors: ErrObjectInstanceNotKnown, ErrAttributeNotDefined.
func (c *Core) IsAttributeOwnedByFederate(obj ObjectInstanceHandle, attr AttributeHandle) (bool, error) {
	if _, err := c.ownedInstance(obj, []AttributeHandle{attr}); err != nil {
		return false, err
	}
	_, ok := c.ownership.holds(obj, attr)
	return ok, nil
}

// ---- Receiving ----

// onOwnership handles another federate's ownership step.
func (c *Core) onOwnership(m *wireMsg, from FederateHandle) {
	switch m.Action {
	case ownHolderQuery:
		c.onHolderQuery(m, from)
		return
	case ownHolderReply:
		c.onHolderReply(m, from)
		return
	}
	in := c.objects.inst[m.Obj]
	if in == nil {
		// Not known here (not subscribed): the tokens still fence.
		c.noteTokens(m, from)
		return
	}
	attrs := make([]AttributeHandle, 0, len(m.Pairs))
	for _, p := range m.Pairs {
		if _, ok := in.class.AttributeByHandle(AttributeHandle(p.H)); ok {
			attrs = append(attrs, AttributeHandle(p.H))
		}
	}
	switch m.Action {
	case ownOffer:
		var could []AttributeHandle
		pub := c.declared.pubObj[in.class.Handle]
		for _, a := range attrs {
			if _, mine := c.ownership.holds(m.Obj, a); !mine && pub != nil && pub[a] {
				could = append(could, a)
			}
		}
		if len(could) > 0 {
			c.push(hla.RequestAttributeOwnershipAssumption{Object: m.Obj, Attributes: could, Tag: m.Tag})
		}
	case ownAcquire, ownAcquireIfAvailable:
		c.onAcquireRequest(m, in, attrs, from)
	case ownCancelAck:
		if FederateHandle(m.Ref) == c.self {
			var mine []AttributeHandle
			for _, a := range attrs {
				if acq := c.ownership.acquiring[m.Obj][a]; acq != nil && acq.askedOwner == from {
					mine = append(mine, a)
				}
			}
			c.cancelled(m.Obj, mine)
		}
	case ownAcquireCancel:
		if FederateHandle(m.Ref) == c.self {
			c.sendOwnership(ownCancelAck, m.Obj, in, c.epochPairs(attrs, nil), nil, from)
		}
		for _, a := range attrs {
			if rq := c.ownership.requests[m.Obj]; rq != nil {
				rq[a] = slices.DeleteFunc(rq[a], func(f FederateHandle) bool { return f == from })
			}
			if er := c.ownership.early[m.Obj]; er != nil {
				er[a] = slices.DeleteFunc(er[a], func(r earlyRequest) bool { return r.from == from })
			}
		}
	case ownTransfer:
		c.noteTokens(m, from)
		if FederateHandle(m.Ref) != c.self {
			return
		}
		// A transfer carries one epoch per attribute; secure them by
		// epoch so that each is announced with its own.
		byEpoch := make(map[uint64][]AttributeHandle)
		for _, p := range m.Pairs {
			e, n := binary.Uvarint(p.V)
			if n <= 0 {
				continue
			}
			if c.ownership.current(m.Obj, AttributeHandle(p.H)).epoch > e {
				// A newer epoch is known: the register gave the token a
				// new term since (its sender was taken for lost).
				c.stats.Stale++
				continue
			}
			byEpoch[e] = append(byEpoch[e], AttributeHandle(p.H))
		}
		es := keysOf(byEpoch)
		var unwanted []AttributeHandle
		for _, e := range es {
			var wanted []AttributeHandle
			for _, a := range byEpoch[e] {
				if c.ownership.acquiring[m.Obj][a] != nil && !c.ownership.left[from] {
					wanted = append(wanted, a)
				} else {
					// Its acquisition was cancelled (and confirmed) while
					// the transfer was on its way, or the sender is one
					// this federate saw leave, after which it answers
					// who-holds queries as if it held none of the
					// sender's tokens (askHolders): take the token and
					// let it go at once, so that it neither vanishes
					// nor arrives unasked, nor has two holders.
					c.ownership.take(m.Obj, a, e)
					c.traceOwner(m.Obj, a, c.self, e)
					unwanted = append(unwanted, a)
				}
			}
			if len(wanted) > 0 {
				c.secure(m.Obj, in, wanted, e, m.Tag, false)
			}
		}
		if len(unwanted) > 0 {
			c.divest(m.Obj, in, unwanted, nil, true)
		}
	case ownUnowned, ownTaken:
		c.noteTokens(m, from)
	case ownUnavailable:
		if FederateHandle(m.Ref) != c.self {
			return
		}
		var un []AttributeHandle
		for _, a := range attrs {
			if acq := c.ownership.acquiring[m.Obj][a]; acq != nil && acq.ifAvailable && !acq.claiming {
				delete(c.ownership.acquiring[m.Obj], a)
				un = append(un, a)
			}
		}
		if len(un) > 0 {
			c.push(hla.AttributeOwnershipUnavailable{Object: m.Obj, Attributes: un})
		}
	}
}

// onAcquireRequest answers another federate's acquisition request as an
// owner: release requests (or divestiture confirmations while offering)
// for the attributes it holds, an immediate transfer of offered ones if
// the request is "if available", unavailability for the rest; and, as
// the registrar, the news that attributes it never held are unowned.
func (c *Core) onAcquireRequest(m *wireMsg, in *instance, attrs []AttributeHandle, from FederateHandle) {
	ifAvailable := m.Action == ownAcquireIfAvailable
	var release, confirm, take, unavailable, never []AttributeHandle
	for _, a := range attrs {
		if _, mine := c.ownership.holds(m.Obj, a); !mine {
			if c.ownership.registrar(m.Obj) == c.self && !c.ownership.ever[m.Obj][a] && termOf(c.ownership.current(m.Obj, a).epoch) == 0 {
				never = append(never, a)
			} else if e, ok := pairEpoch(m.Pairs, a); ok && e > c.ownership.current(m.Obj, a).epoch {
				// The requester knows a newer holder than this federate
				// does: perhaps this one, its transfer still on the way.
				c.ownership.keepEarly(m.Obj, a, earlyRequest{from: from, epoch: e, ifAvailable: ifAvailable, tag: slices.Clone(m.Tag)})
			}
			continue
		}
		_, offered := c.ownership.offering[m.Obj][a]
		switch {
		case ifAvailable && offered:
			take = append(take, a)
		case ifAvailable:
			unavailable = append(unavailable, a)
		default:
			rq := c.ownership.requests[m.Obj]
			if rq == nil {
				rq = make(map[AttributeHandle][]FederateHandle)
				c.ownership.requests[m.Obj] = rq
			}
			if !slices.Contains(rq[a], from) {
				rq[a] = append(rq[a], from)
			}
			if offered {
				confirm = append(confirm, a)
			} else {
				release = append(release, a)
			}
		}
	}
	if len(never) > 0 {
		for _, a := range never {
			c.ownership.note(m.Obj, a, token{owner: 0, epoch: 0})
		}
		c.sendOwnership(ownUnowned, m.Obj, in, c.epochPairs(never, func(AttributeHandle) uint64 { return 0 }), nil, 0)
	}
	if len(take) > 0 {
		rq := c.ownership.requests[m.Obj]
		if rq == nil {
			rq = make(map[AttributeHandle][]FederateHandle)
			c.ownership.requests[m.Obj] = rq
		}
		for _, a := range take {
			rq[a] = append([]FederateHandle{from}, rq[a]...)
		}
		c.divest(m.Obj, in, take, c.ownership.offering[m.Obj][take[0]], false)
	}
	if len(unavailable) > 0 {
		c.sendOwnership(ownUnavailable, m.Obj, in, c.epochPairs(unavailable, nil), nil, from)
	}
	if len(release) > 0 {
		c.push(hla.RequestAttributeOwnershipRelease{Object: m.Obj, Attributes: release, Tag: m.Tag})
	}
	if len(confirm) > 0 {
		c.push(hla.RequestDivestitureConfirmation{Object: m.Obj, Attributes: confirm, Tag: slices.Clone(c.ownership.offering[m.Obj][confirm[0]])})
	}
}

// noteTokens folds the tokens an ownership step announces into this
// federate's view, and moves its own acquisitions on: an attribute now
// unowned is claimed through the register; one with a new owner is
// asked of it.
func (c *Core) noteTokens(m *wireMsg, from FederateHandle) {
	owner := from
	switch m.Action {
	case ownUnowned:
		owner = 0
	case ownTransfer:
		owner = FederateHandle(m.Ref)
	case ownTaken:
	default:
		return
	}
	var via FederateHandle
	if m.Action == ownTransfer {
		via = from
	}
	var reask, unsure []AttributeHandle
	for _, p := range m.Pairs {
		e, n := binary.Uvarint(p.V)
		if n <= 0 {
			c.stats.Malformed++
			continue
		}
		a := AttributeHandle(p.H)
		if owner == c.self {
			continue // a transfer to this federate: secure takes it
		}
		if !c.ownership.note(m.Obj, a, token{owner: owner, epoch: e, via: via}) {
			continue
		}
		if via != 0 && c.ownership.left[via] && c.ownership.acquiring[m.Obj][a] != nil {
			unsure = append(unsure, a)
		}
		c.traceOwner(m.Obj, a, owner, e)
		c.ownership.dropEarly(m.Obj, a, e)
		if c.moveAcquisition(m.Obj, a, token{owner: owner, epoch: e}) {
			reask = append(reask, a)
		}
	}
	if len(unsure) > 0 {
		// A transfer from a federate already gone: perhaps its
		// receiver refused it.
		c.askHolders(m.Obj, unsure, via)
	}
	if in := c.objects.inst[m.Obj]; in != nil {
		c.rescope(m.Obj, false)
		if len(reask) > 0 {
			// The tokens moved to an owner that never heard this
			// federate's request: ask again.
			c.askOwners(m.Obj, in, reask)
		}
	}
}

// moveAcquisition moves this federate's acquisition of (obj, a), if
// any, on to the token's new owner (0: unowned, claim it); it reports
// whether the owner must be asked.
//
// An owner that gave the token away and got it back has forgotten the
// requests it had: a newer epoch of the owner asked is asked again too
// (the transfers in between may arrive after, or never, from another
// sender).
func (c *Core) moveAcquisition(obj ObjectInstanceHandle, a AttributeHandle, t token) bool {
	acq := c.ownership.acquiring[obj][a]
	switch {
	case acq == nil:
	case acq.cancelling:
		// The owner asked is still to acknowledge the cancellation;
		// whoever holds it now never heard the request.
	case t.owner == 0 || c.ownership.left[t.owner]:
		c.maybeClaim(obj, a)
	case t.owner != c.self && (t.owner != acq.askedOwner || t.epoch > acq.askedEpoch):
		acq.askedOwner, acq.askedEpoch = t.owner, t.epoch
		return true
	}
	return false
}

// ownerMoved handles attrs of obj whose owner an update of owner showed
// to have changed: this federate's acquisitions of them ask it.
func (c *Core) ownerMoved(obj ObjectInstanceHandle, in *instance, attrs []AttributeHandle, owner FederateHandle) {
	var reask []AttributeHandle
	for _, a := range attrs {
		t := c.ownership.current(obj, a)
		c.ownership.dropEarly(obj, a, t.epoch)
		if c.moveAcquisition(obj, a, t) {
			reask = append(reask, a)
		}
	}
	if len(reask) > 0 {
		c.askOwners(obj, in, reask)
	}
}

// attrErr is err about attribute a of obj.
func attrErr(err error, obj ObjectInstanceHandle, in *instance, a AttributeHandle) error {
	return fmt.Errorf("%w: %s of %v", err, attributeName(in.class, a), obj)
}

// attributeName names attribute a of oc for errors and traces.
func attributeName(oc *fomxml.ObjectClass, a AttributeHandle) string {
	if at, ok := oc.AttributeByHandle(a); ok {
		return at.Name
	}
	return strconv.FormatUint(uint64(a), 10)
}

// boolInt is 1 for true.
func boolInt(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// cancelAllAcquisitions withdraws every acquisition of this federate (it
// resigns).
func (c *Core) cancelAllAcquisitions() {
	hs := make([]ObjectInstanceHandle, 0, len(c.ownership.acquiring))
	for h, m := range c.ownership.acquiring {
		if len(m) > 0 {
			hs = append(hs, h)
		}
	}
	slices.SortFunc(hs, compareHandles)
	for _, h := range hs {
		var attrs []AttributeHandle
		for a := range c.ownership.acquiring[h] {
			attrs = append(attrs, a)
		}
		slices.Sort(attrs)
		delete(c.ownership.acquiring, h)
		if in := c.objects.inst[h]; in != nil {
			c.sendOwnership(ownAcquireCancel, h, in, c.epochPairs(attrs, nil), nil, 0)
		}
	}
}

// releaseAll gives up every token this federate holds (it resigns) and
// returns them with the epochs at which they are unowned, in handle
// order, for its resign notice.
func (c *Core) releaseAll() []releasedToken {
	hs := make([]ObjectInstanceHandle, 0, len(c.ownership.held))
	for h := range c.ownership.held {
		hs = append(hs, h)
	}
	slices.SortFunc(hs, compareHandles)
	var out []releasedToken
	for _, h := range hs {
		attrs := keysOf(c.ownership.held[h])
		for _, a := range attrs {
			e := c.ownership.give(h, a, 0)
			c.traceOwner(h, a, 0, e)
			out = append(out, releasedToken{obj: h, attr: a, epoch: e})
		}
	}
	return out
}

// noteReleased folds the tokens a resign notice released (b,
// appendReleased) into this federate's view; false when they do not
// decode.
func (c *Core) noteReleased(b []byte) bool {
	ts, ok := decodeReleased(b)
	for _, t := range ts {
		if c.ownership.note(t.obj, t.attr, token{owner: 0, epoch: t.epoch}) {
			c.traceOwner(t.obj, t.attr, 0, t.epoch)
			c.maybeClaim(t.obj, t.attr)
		}
	}
	return ok
}
