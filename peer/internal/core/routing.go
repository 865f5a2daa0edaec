package core

import (
	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer/dgram"
)

// Routing: where messages travel, in one place. A route maps (class,
// attributes, regions) to groups, for sending and for subscribing. Today
// there is one routing space, the default one: every object class and
// every interaction class has a multicast group of its own, derived from
// its handle, whatever the attributes; regions come with DDM, which adds
// a group per (class, region cell). Group 1 is the control group every
// federate joins (time promises, resign notices); each federate has an
// inbox group for what is meant for it alone. Two classes that land on
// one group only cost filtering: receivers check the class of every
// message.
//
// Subscribers join the groups of the subscribed class and its
// descendants (class-hierarchy promotion: an instance of a subclass is
// heard on the subclass's group); publishers join the groups of what they
// publish, where repair requests and discovery queries reach them. A
// group is joined while anything needs it: routing keeps the reference
// counts.

const controlGroup dgram.Group = 1

// momGroup carries every interaction of the MOM (the classes under
// HLAinteractionRoot.HLAmanager): every federate's node listens there
// for the requests about its federate (mom.go), and one group for them
// all keeps that to one membership.
const momGroup dgram.Group = 2

// intGroup is the group of interaction class c.
func intGroup(c *fomxml.InteractionClass) dgram.Group {
	if c.IsMOM() {
		return momGroup
	}
	return interactionGroup(c.Handle)
}

func objectGroup(c ObjectClassHandle) dgram.Group {
	return dgram.Group(0x01000000 | uint32(uint64(c)%0x00ffffff))
}

func interactionGroup(c InteractionClassHandle) dgram.Group {
	return dgram.Group(0x02000000 | uint32(uint64(c)%0x00ffffff))
}

// inboxGroup is where federate h receives the data-plane frames meant for
// it alone: the SYNC answering its join of a group and its receivers'
// NAKs (reliable.Config.Inbox). Federates whose handles land on one group
// share it and ignore each other's.
func inboxGroup(h FederateHandle) dgram.Group {
	return dgram.Group(0x03000000 | uint32(uint64(h)%0x00ffffff))
}

// ObjectGroup is the group of object class c in the default routing
// space (for tests that watch the network).
func ObjectGroup(c ObjectClassHandle) dgram.Group { return objectGroup(c) }

// InteractionGroup is the group of interaction class c in the default
// routing space.
func InteractionGroup(c InteractionClassHandle) dgram.Group { return interactionGroup(c) }

// ControlGroup is the group every federate joins.
const ControlGroup = controlGroup

// routing is the routing sub-machine: it turns declarations into group
// memberships (reference-counted) and messages into the group they
// travel on.
type routing struct {
	refs map[dgram.Group]int
}

// groupDelta is what a routing change asks of the transport and the
// reliable endpoint: groups now needed, and groups no longer needed.
type groupDelta struct {
	join, leave []dgram.Group
}

func newRouting() routing {
	return routing{refs: make(map[dgram.Group]int)}
}

func (r *routing) ref(g dgram.Group, d *groupDelta) {
	r.refs[g]++
	if r.refs[g] == 1 {
		d.join = append(d.join, g)
	}
}

func (r *routing) unref(g dgram.Group, d *groupDelta) {
	if r.refs[g] == 0 {
		return
	}
	r.refs[g]--
	if r.refs[g] == 0 {
		delete(r.refs, g)
		d.leave = append(d.leave, g)
	}
}

// publishObject and unpublishObject route a publication of class c: its
// own group.
func (r *routing) publishObject(c *fomxml.ObjectClass) (d groupDelta) {
	r.ref(objectGroup(c.Handle), &d)
	return d
}

func (r *routing) unpublishObject(c *fomxml.ObjectClass) (d groupDelta) {
	r.unref(objectGroup(c.Handle), &d)
	return d
}

// subscribeObject routes a subscription to class c: the groups of c and
// its descendants, where their instances travel.
func (r *routing) subscribeObject(c *fomxml.ObjectClass) (d groupDelta) {
	for _, x := range subtree(c) {
		r.ref(objectGroup(x.Handle), &d)
	}
	return d
}

// classRoute is where the instances of one class travel.
type classRoute struct {
	class ObjectClassHandle
	group dgram.Group
}

// subscriptionRoutes lists the classes a subscription to c covers and
// their groups, for the discovery queries.
func (r *routing) subscriptionRoutes(c *fomxml.ObjectClass) []classRoute {
	var out []classRoute
	for _, x := range subtree(c) {
		out = append(out, classRoute{class: x.Handle, group: objectGroup(x.Handle)})
	}
	return out
}

func (r *routing) unsubscribeObject(c *fomxml.ObjectClass) (d groupDelta) {
	for _, x := range subtree(c) {
		r.unref(objectGroup(x.Handle), &d)
	}
	return d
}

func (r *routing) publishInteraction(c *fomxml.InteractionClass) (d groupDelta) {
	r.ref(intGroup(c), &d)
	return d
}

func (r *routing) unpublishInteraction(c *fomxml.InteractionClass) (d groupDelta) {
	r.unref(intGroup(c), &d)
	return d
}

func (r *routing) subscribeInteraction(c *fomxml.InteractionClass) (d groupDelta) {
	for _, x := range interactionSubtree(c) {
		r.ref(intGroup(x), &d)
	}
	return d
}

func (r *routing) unsubscribeInteraction(c *fomxml.InteractionClass) (d groupDelta) {
	for _, x := range interactionSubtree(c) {
		r.unref(intGroup(x), &d)
	}
	return d
}

// objectRoute is the group a message about an instance of registered
// class c travels on: everything about one instance takes one group, so
// one sender's messages about it arrive in the order sent.
func (r *routing) objectRoute(c *fomxml.ObjectClass) dgram.Group {
	return objectGroup(c.Handle)
}

// interactionRoute is the group an interaction of class c travels on.
func (r *routing) interactionRoute(c *fomxml.InteractionClass) dgram.Group {
	return intGroup(c)
}

// subtree lists c and its descendants.
func subtree(c *fomxml.ObjectClass) []*fomxml.ObjectClass {
	out := []*fomxml.ObjectClass{c}
	for _, ch := range c.Children {
		out = append(out, subtree(ch)...)
	}
	return out
}

func interactionSubtree(c *fomxml.InteractionClass) []*fomxml.InteractionClass {
	out := []*fomxml.InteractionClass{c}
	for _, ch := range c.Children {
		out = append(out, interactionSubtree(ch)...)
	}
	return out
}
