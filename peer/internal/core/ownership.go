package core

import "slices"

// ownership is the ownership sub-machine: per (instance, attribute) a
// token (owner, epoch). HLA rule 5: an attribute has at most one owner.
//
// The registering federate takes the tokens of the attributes it
// publishes (and of HLAprivilegeToDeleteObject) at epoch 0; a transfer
// gives the token to the next owner with a higher epoch (the ownership
// services build on this). Every update carries its attributes' epoch,
// every delete the delete privilege's, and a receiver keeps, per
// attribute, the newest (owner, epoch) it has heard of: a message of an
// older epoch, or of another sender at the same epoch, is stale and
// dropped (fencing). Unless a receiver heard otherwise, an attribute's
// token is its instance's registrar's at epoch 0, so the common case
// stores nothing.
type ownership struct {
	self FederateHandle
	// held are the tokens this federate holds: instance -> attribute ->
	// epoch.
	held map[ObjectInstanceHandle]map[AttributeHandle]uint64
	// view are the newest tokens of other federates' instances heard of
	// (in registration announcements and updates) that are not the
	// registrar's at epoch 0: where it has none, that is what an
	// attribute's token is taken to be, so the common case stores
	// nothing.
	view map[ObjectInstanceHandle]map[AttributeHandle]token
	// left are federates that resigned or were lost (queries call their
	// tokens unowned).
	left map[FederateHandle]bool
	// alias are the registrars restored as other federates (a federate
	// that joined after a crash restores as the saved one): registrar
	// part of an instance handle -> the federate that acts as it
	// (docs/saverestore.md). Nil: none.
	alias map[FederateHandle]FederateHandle

	// ever are, for instances registered here, the attributes this
	// federate has held: one it never held, that no register term has
	// touched, is unowned at (0, 0), and this federate says so when
	// asked (docs/ownership.md).
	ever map[ObjectInstanceHandle]map[AttributeHandle]bool

	// Negotiation state (ownership_services.go).
	offering  map[ObjectInstanceHandle]map[AttributeHandle][]byte           // this federate's negotiated divestiture offers (tag)
	requests  map[ObjectInstanceHandle]map[AttributeHandle][]FederateHandle // as owner: who asked for them, in order
	acquiring map[ObjectInstanceHandle]map[AttributeHandle]*acquisition     // this federate's acquisitions

	// Who-holds queries (ownership_services.go): this federate's, by id,
	// and the others' it answers once it has processed the loss of the
	// federate they are about.
	queries   map[uint64]*holderQuery
	lastQuery uint64
	deferred  map[FederateHandle][]deferredQuery
	// early are acquisition requests that named a newer epoch than this
	// federate knew of an attribute it did not hold: it may be the
	// holder-to-be, the transfer still on its way. They are answered
	// when the token comes, and dropped when a newer epoch is known
	// elsewhere.
	early map[ObjectInstanceHandle]map[AttributeHandle][]earlyRequest
	// retry are acquisitions whose claim the register could not decide,
	// with the tick at which to try again.
	retry map[ObjectInstanceHandle]map[AttributeHandle]int64
}

// earlyRequest is an acquisition request kept until its token comes.
type earlyRequest struct {
	from        FederateHandle
	epoch       uint64 // the newest epoch the requester knew
	ifAvailable bool
	tag         []byte
}

// keepEarly keeps r, one per requester and attribute.
func (o *ownership) keepEarly(h ObjectInstanceHandle, a AttributeHandle, r earlyRequest) {
	m := inner(o.early, h)
	m[a] = slices.DeleteFunc(m[a], func(x earlyRequest) bool { return x.from == r.from })
	m[a] = append(m[a], r)
}

// dropEarly drops the early requests for (h, a) that a token at epoch,
// held elsewhere, made moot.
func (o *ownership) dropEarly(h ObjectInstanceHandle, a AttributeHandle, epoch uint64) {
	m := o.early[h]
	if m == nil {
		return
	}
	m[a] = slices.DeleteFunc(m[a], func(x earlyRequest) bool { return x.epoch <= epoch })
	if len(m[a]) == 0 {
		delete(m, a)
	}
	if len(m) == 0 {
		delete(o.early, h)
	}
}

// dropRequests forgets the acquisition requests of federate f, which
// left: nothing is released to it any more.
func (o *ownership) dropRequests(f FederateHandle) {
	gone := func(x FederateHandle) bool { return x == f }
	for h, m := range o.requests {
		for a, rq := range m {
			if rq = slices.DeleteFunc(rq, gone); len(rq) == 0 {
				delete(m, a)
			} else {
				m[a] = rq
			}
		}
		if len(m) == 0 {
			delete(o.requests, h)
		}
	}
	for h, m := range o.early {
		for a, rq := range m {
			if rq = slices.DeleteFunc(rq, func(r earlyRequest) bool { return r.from == f }); len(rq) == 0 {
				delete(m, a)
			} else {
				m[a] = rq
			}
		}
		if len(m) == 0 {
			delete(o.early, h)
		}
	}
}

// retryClaim schedules (h, a)'s claim again at tick at.
func (o *ownership) retryClaim(h ObjectInstanceHandle, a AttributeHandle, at int64) {
	inner(o.retry, h)[a] = at
}

// holderQuery is a who-holds query this federate sent about attributes
// whose last known owner is gone: it waits for every member's view.
type holderQuery struct {
	obj     ObjectInstanceHandle
	attrs   []AttributeHandle
	gone    FederateHandle // the federate whose departure the answers follow (0: none)
	waiting map[FederateHandle]bool
	notHeld map[AttributeHandle][]FederateHandle // who answered that it does not hold the token

	// inform marks a query made for QueryAttributeOwnership (§7.17):
	// it moves no acquisition on; its answers, kept in views, decide
	// the callback (informOwner).
	inform bool
	views  map[AttributeHandle][]holderView
}

// holderView is one member's answer to a who-holds query about one
// attribute: its view of the token, and whether it holds it.
type holderView struct {
	from FederateHandle
	t    token
	held bool
}

// deferredQuery is another federate's who-holds query about attributes
// of a federate this one has not seen leave yet.
type deferredQuery struct {
	from  FederateHandle
	obj   ObjectInstanceHandle
	class uint64
	id    uint64
	attrs []AttributeHandle
}

// acquisition is one attribute this federate is acquiring.
type acquisition struct {
	ifAvailable bool
	tag         []byte
	claiming    bool           // a register compare-and-set is in flight
	querying    bool           // a who-holds query is in flight
	cancelling  bool           // cancelled: waiting for the owner asked to acknowledge (or the claim, or the query)
	askedOwner  FederateHandle // the owner the last request went to (per the view)
	askedEpoch  uint64         // and the epoch it held the token at
}

// Epochs are (term, sequence) as term<<32 | sequence; see
// docs/ownership.md.
func termOf(e uint64) uint64    { return e >> 32 }
func termStart(t uint64) uint64 { return t << 32 }

// token is one attribute's ownership as this federate knows it. owner 0
// is nobody.
type token struct {
	owner FederateHandle
	epoch uint64
	// via is the federate whose transfer made owner the holder, while
	// nothing from owner itself has confirmed it: if via is gone, the
	// transfer may never have arrived (askHolders).
	via FederateHandle
}

func newOwnership(self FederateHandle) ownership {
	return ownership{
		self: self,
		held: make(map[ObjectInstanceHandle]map[AttributeHandle]uint64),
		view: make(map[ObjectInstanceHandle]map[AttributeHandle]token),
		left: make(map[FederateHandle]bool),
		ever: make(map[ObjectInstanceHandle]map[AttributeHandle]bool),

		offering:  make(map[ObjectInstanceHandle]map[AttributeHandle][]byte),
		requests:  make(map[ObjectInstanceHandle]map[AttributeHandle][]FederateHandle),
		acquiring: make(map[ObjectInstanceHandle]map[AttributeHandle]*acquisition),
		queries:   make(map[uint64]*holderQuery),
		deferred:  make(map[FederateHandle][]deferredQuery),
		retry:     make(map[ObjectInstanceHandle]map[AttributeHandle]int64),
		early:     make(map[ObjectInstanceHandle]map[AttributeHandle][]earlyRequest),
	}
}

// register gives this federate, the registrar of h, the tokens of the
// published attributes and of the delete privilege (priv, 0 if the class
// has none) at epoch 0.
func (o *ownership) register(h ObjectInstanceHandle, published map[AttributeHandle]bool, priv AttributeHandle) {
	m := make(map[AttributeHandle]uint64, len(published)+1)
	for a := range published {
		m[a] = 0
	}
	if priv != 0 {
		m[priv] = 0
	}
	o.held[h] = m
	ever := make(map[AttributeHandle]bool, len(m))
	for a := range m {
		ever[a] = true
	}
	o.ever[h] = ever
}

// take makes this federate the holder of (h, a) at epoch.
func (o *ownership) take(h ObjectInstanceHandle, a AttributeHandle, epoch uint64) {
	inner(o.held, h)[a] = epoch
	if ev := o.ever[h]; ev != nil {
		ev[a] = true
	}
	if v := o.view[h]; v != nil {
		delete(v, a)
	}
}

// give ends this federate's holding of (h, a) and records the token's
// next epoch as held by to (0: unowned). It returns that epoch.
func (o *ownership) give(h ObjectInstanceHandle, a AttributeHandle, to FederateHandle) uint64 {
	e := o.held[h][a] + 1
	delete(o.held[h], a)
	if len(o.held[h]) == 0 {
		delete(o.held, h)
	}
	o.note(h, a, token{owner: to, epoch: e})
	if m := o.offering[h]; m != nil {
		delete(m, a)
	}
	if m := o.requests[h]; m != nil {
		delete(m, a)
	}
	return e
}

// note records a token of (h, a) heard of, if it is newer than what is
// known (or as new and says more); it reports whether it changed
// anything.
func (o *ownership) note(h ObjectInstanceHandle, a AttributeHandle, t token) bool {
	if e, mine := o.held[h][a]; mine {
		if termOf(t.epoch) <= termOf(e) {
			return false
		}
		// A newer term: this federate's holding ended (see accept).
		delete(o.held[h], a)
		if len(o.held[h]) == 0 {
			delete(o.held, h)
		}
	}
	cur := o.current(h, a)
	if t.epoch < cur.epoch || t.epoch == cur.epoch && t.owner == cur.owner {
		return false
	}
	inner(o.view, h)[a] = t
	return true
}

// unowned reports whether (h, a) is known to be unowned, and at which
// epoch.
func (o *ownership) unowned(h ObjectInstanceHandle, a AttributeHandle) (uint64, bool) {
	if _, mine := o.held[h][a]; mine {
		return 0, false
	}
	t, ok := o.view[h][a]
	if ok && t.owner == 0 {
		return t.epoch, true
	}
	return 0, false
}

// heldOf returns the tokens this federate holds of h (nil: none). The
// map belongs to ownership.
func (o *ownership) heldOf(h ObjectInstanceHandle) map[AttributeHandle]uint64 { return o.held[h] }

// holds reports whether this federate holds a's token of h, and its
// epoch.
func (o *ownership) holds(h ObjectInstanceHandle, a AttributeHandle) (uint64, bool) {
	e, ok := o.held[h][a]
	return e, ok
}

// holdsAny reports whether this federate holds any token of h.
func (o *ownership) holdsAny(h ObjectInstanceHandle) bool { return len(o.held[h]) > 0 }

// current returns the newest token of (h, a) this federate knows of.
func (o *ownership) current(h ObjectInstanceHandle, a AttributeHandle) token {
	if e, ok := o.held[h][a]; ok {
		return token{owner: o.self, epoch: e}
	}
	if t, ok := o.view[h][a]; ok {
		return t
	}
	return token{owner: o.registrar(h), epoch: 0}
}

// registrar returns the federate that registered h, or acts as its
// registrar since a restore.
func (o *ownership) registrar(h ObjectInstanceHandle) FederateHandle {
	if f, ok := o.alias[h.Federate]; ok {
		return f
	}
	return h.Federate
}

// setAlias makes f act as registrar x.
func (o *ownership) setAlias(x, f FederateHandle) {
	if o.alias == nil {
		o.alias = make(map[FederateHandle]FederateHandle)
	}
	o.alias[x] = f
}

// ownerOf returns who holds (h, a) as far as this federate knows: 0 when
// nobody does.
func (o *ownership) ownerOf(h ObjectInstanceHandle, a AttributeHandle) FederateHandle {
	t := o.current(h, a)
	if t.owner == 0 || o.left[t.owner] {
		return 0
	}
	return t.owner
}

// accept decides whether a message about (h, a) from sender, at epoch,
// is current: its epoch is newer than the newest known (the token moved
// to sender), or the same and sender holds it. It records a newer token;
// learned says it did (the attribute's owner changed).
func (o *ownership) accept(h ObjectInstanceHandle, a AttributeHandle, sender FederateHandle, epoch uint64) (ok, learned bool) {
	cur := o.current(h, a)
	switch {
	case epoch > cur.epoch:
		if _, mine := o.held[h][a]; mine {
			if termOf(epoch) == termOf(cur.epoch) {
				// Someone claims a newer epoch of this term of a token
				// held here: only a transfer from here makes one, and
				// this federate made none.
				return false, false
			}
			// A newer term: the register gave the token away, which
			// it does only once the others took this federate for
			// lost (docs/ownership.md). It holds it no longer.
			delete(o.held[h], a)
			if len(o.held[h]) == 0 {
				delete(o.held, h)
			}
		}
	case epoch == cur.epoch && cur.owner == sender:
		if cur.via != 0 {
			o.view[h][a] = token{owner: sender, epoch: epoch} // the holder confirms it
		}
		return true, false
	default:
		return false, false
	}
	inner(o.view, h)[a] = token{owner: sender, epoch: epoch}
	return true, true
}

// forget drops everything about instance h (deleted).
func (o *ownership) forget(h ObjectInstanceHandle) {
	delete(o.held, h)
	delete(o.view, h)
	delete(o.ever, h)
	delete(o.offering, h)
	delete(o.requests, h)
	delete(o.acquiring, h)
	delete(o.retry, h)
	delete(o.early, h)
}

// ownerLeft records that federate f resigned or was lost: the tokens it
// held are void, its attributes unowned until acquired again (at a
// higher epoch). Messages it sent before leaving still carry a current
// epoch and are accepted.
func (o *ownership) ownerLeft(f FederateHandle) { o.left[f] = true }

// acquiringAny reports whether this federate is acquiring any attribute.
func (o *ownership) acquiringAny() bool {
	for _, m := range o.acquiring {
		if len(m) > 0 {
			return true
		}
	}
	return false
}
