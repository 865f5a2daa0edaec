package core

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
	// left are federates that resigned or were lost: their tokens are
	// void (the attributes unowned) unless someone took them since.
	left map[FederateHandle]bool
}

// token is one attribute's ownership as this federate knows it. owner 0
// is nobody.
type token struct {
	owner FederateHandle
	epoch uint64
}

func newOwnership(self FederateHandle) ownership {
	return ownership{
		self: self,
		held: make(map[ObjectInstanceHandle]map[AttributeHandle]uint64),
		view: make(map[ObjectInstanceHandle]map[AttributeHandle]token),
		left: make(map[FederateHandle]bool),
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
	return token{owner: h.Federate, epoch: 0}
}

// ownerOf returns who holds (h, a) as far as this federate knows: 0 when
// nobody does.
func (o *ownership) ownerOf(h ObjectInstanceHandle, a AttributeHandle) FederateHandle {
	t := o.current(h, a)
	if o.left[t.owner] {
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
			// Someone claims a newer epoch of a token held here: only
			// a transfer moves it, and this federate made none.
			return false, false
		}
	case epoch == cur.epoch && cur.owner == sender:
		return true, false
	default:
		return false, false
	}
	m := o.view[h]
	if m == nil {
		m = make(map[AttributeHandle]token)
		o.view[h] = m
	}
	m[a] = token{owner: sender, epoch: epoch}
	return true, true
}

// forget drops everything about instance h (deleted).
func (o *ownership) forget(h ObjectInstanceHandle) {
	delete(o.held, h)
	delete(o.view, h)
}

// ownerLeft records that federate f resigned or was lost: the tokens it
// held are void, its attributes unowned until acquired again (at a
// higher epoch). Messages it sent before leaving still carry a current
// epoch and are accepted.
func (o *ownership) ownerLeft(f FederateHandle) { o.left[f] = true }

// divestAll gives up every token this federate holds (a resign that
// divests unconditionally): it returns how many instances it held tokens
// of.
func (o *ownership) divestAll() int {
	n := len(o.held)
	clear(o.held)
	return n
}
