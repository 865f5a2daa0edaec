package peer

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer/hla"
	"github.com/meshrti/meshrti/peer/transport"
)

// Groups of the default routing space. Group 1 is the control group every
// federate joins (time promises, resign notices). Each object class and
// each interaction class has a group of its own, derived from its handle;
// subscribers join the groups of the class and its descendants, publishers
// join the groups of what they publish (to hear repair requests and
// discovery queries). Two classes that land on one group only cost
// filtering: receivers check the class of every message.
const controlGroup transport.Group = 1

func objectGroup(c ObjectClassHandle) transport.Group {
	return transport.Group(0x01000000 | uint32(uint64(c)%0x00ffffff))
}

func interactionGroup(c InteractionClassHandle) transport.Group {
	return transport.Group(0x02000000 | uint32(uint64(c)%0x00ffffff))
}

// inboxGroup is where federate h receives the data-plane frames meant for
// it alone: the SYNC answering its join of a group and its receivers'
// NAKs (reliable.Config.Inbox). Federates whose handles land on one group
// share it and ignore each other's.
func inboxGroup(h FederateHandle) transport.Group {
	return transport.Group(0x03000000 | uint32(uint64(h)%0x00ffffff))
}

// outMsg is a message the declaration and object logic wants sent.
type outMsg struct {
	group    transport.Group
	reliable bool
	to       FederateHandle // when set, best effort to that federate alone (reliable.SendAimed)
	msg      *wireMsg
}

// ownedObject is an instance this federate registered.
type ownedObject struct {
	class *fomxml.ObjectClass
	name  string
	owned map[AttributeHandle]bool // attributes this federate owns
}

// knownObject is an instance this federate discovered.
type knownObject struct {
	class *fomxml.ObjectClass // registered class
	known *fomxml.ObjectClass // class it was discovered as
	name  string
}

// state is one federate's declarations and objects. It belongs to the
// federate's loop goroutine and is not safe for concurrent use.
type state struct {
	fdd  *fomxml.FDD
	self FederateHandle

	pubObj map[ObjectClassHandle]map[AttributeHandle]bool
	subObj map[ObjectClassHandle]map[AttributeHandle]bool
	pubInt map[InteractionClassHandle]bool
	subInt map[InteractionClassHandle]bool

	serial uint64
	owned  map[ObjectInstanceHandle]*ownedObject
	known  map[ObjectInstanceHandle]*knownObject
	names  map[string]ObjectInstanceHandle // names of owned and known instances

	reserved map[string]bool // names reserved by this federate, not yet used

	// Instances removed here, and federates whose instances were all
	// removed (resigned or lost), so that a message still in flight (a
	// time-stamped update held until a grant) cannot bring one back.
	deleted map[ObjectInstanceHandle]bool
	gone    map[FederateHandle]bool

	groups map[transport.Group]int // reference counts of joined groups

	// Order-type overrides (changeAttributeOrderType and
	// changeInteractionOrderType): they replace the FOM's order for
	// this federate's sends.
	attrOrder map[ObjectInstanceHandle]map[AttributeHandle]OrderType
	intOrder  map[InteractionClassHandle]OrderType

	// Retraction bookkeeping (see time.go): time-stamp-order messages
	// this federate sent that may still be retracted, by message ID; and
	// the time-stamped messages recently delivered here, so that a late
	// retraction of one of them becomes a RequestRetraction.
	sentTSO   map[uint64]*sentTSO
	sweepAt   int // size of sentTSO at which expired records are dropped
	delivered recentSet

	// Asynchronous delivery (enable/disableAsynchronousDelivery): while
	// it is off, receive-order messages for a time-constrained federate
	// that is not advancing wait in held.
	async bool
	held  []heldMsg

	// update's scratch space, reused by every update: the messages it
	// returns are encoded and sent before the federate's lock is
	// released (Federate.update) and never kept.
	updPairs [updKinds][]valuePair
	updMsgs  [updKinds]wireMsg
	updOut   []outMsg
}

// updKinds is how many ways an update's values split (see update).
const updKinds = 4

func newState(fdd *fomxml.FDD, self FederateHandle) *state {
	return &state{
		fdd:      fdd,
		self:     self,
		pubObj:   make(map[ObjectClassHandle]map[AttributeHandle]bool),
		subObj:   make(map[ObjectClassHandle]map[AttributeHandle]bool),
		pubInt:   make(map[InteractionClassHandle]bool),
		subInt:   make(map[InteractionClassHandle]bool),
		owned:    make(map[ObjectInstanceHandle]*ownedObject),
		known:    make(map[ObjectInstanceHandle]*knownObject),
		names:    make(map[string]ObjectInstanceHandle),
		reserved: make(map[string]bool),
		deleted:  make(map[ObjectInstanceHandle]bool),
		gone:     make(map[FederateHandle]bool),
		groups:   make(map[transport.Group]int),

		attrOrder: make(map[ObjectInstanceHandle]map[AttributeHandle]OrderType),
		intOrder:  make(map[InteractionClassHandle]OrderType),
		sentTSO:   make(map[uint64]*sentTSO),
	}
}

func (s *state) objectClass(h ObjectClassHandle) (*fomxml.ObjectClass, error) {
	c, ok := s.fdd.ObjectClassByHandle(h)
	if !ok {
		return nil, fmt.Errorf("%w: object class %d", ErrObjectClassNotDefined, h)
	}
	return c, nil
}

func (s *state) interactionClass(h InteractionClassHandle) (*fomxml.InteractionClass, error) {
	c, ok := s.fdd.InteractionClassByHandle(h)
	if !ok {
		return nil, fmt.Errorf("%w: interaction class %d", ErrInteractionClassNotDefined, h)
	}
	return c, nil
}

// attrs checks that every handle is an attribute of c (declared or
// inherited).
func attrs(c *fomxml.ObjectClass, hs []AttributeHandle) error {
	for _, h := range hs {
		if _, ok := c.AttributeByHandle(h); !ok {
			return fmt.Errorf("%w: attribute %d of class %s", ErrAttributeNotDefined, h, c.QualifiedName)
		}
	}
	return nil
}

// joinGroup and leaveGroup keep reference counts; join returns true when
// the group is new, leave when it is no longer needed.
func (s *state) joinGroup(g transport.Group) bool {
	s.groups[g]++
	return s.groups[g] == 1
}

func (s *state) leaveGroup(g transport.Group) bool {
	if s.groups[g] == 0 {
		return false
	}
	s.groups[g]--
	if s.groups[g] == 0 {
		delete(s.groups, g)
		return true
	}
	return false
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

// ---- Declaration management ----

// publishObject records a publication. It returns the groups to join.
func (s *state) publishObject(class ObjectClassHandle, hs []AttributeHandle) ([]transport.Group, error) {
	c, err := s.objectClass(class)
	if err != nil {
		return nil, err
	}
	if err := attrs(c, hs); err != nil {
		return nil, err
	}
	set := s.pubObj[class]
	var join []transport.Group
	if set == nil {
		set = make(map[AttributeHandle]bool)
		s.pubObj[class] = set
		if s.joinGroup(objectGroup(class)) {
			join = append(join, objectGroup(class))
		}
	}
	for _, h := range hs {
		set[h] = true
	}
	return join, nil
}

// withdraw removes attributes (all when hs is nil) from a class's entry
// in decl, a publication or subscription table. emptied is true when the
// class has no attributes left there; its entry is then removed.
func (s *state) withdraw(decl map[ObjectClassHandle]map[AttributeHandle]bool, class ObjectClassHandle, hs []AttributeHandle) (c *fomxml.ObjectClass, emptied bool, err error) {
	if c, err = s.objectClass(class); err != nil {
		return nil, false, err
	}
	if err := attrs(c, hs); err != nil {
		return nil, false, err
	}
	set := decl[class]
	if set == nil {
		return c, false, nil
	}
	if hs == nil {
		clear(set)
	}
	for _, h := range hs {
		delete(set, h)
	}
	if len(set) > 0 {
		return c, false, nil
	}
	delete(decl, class)
	return c, true, nil
}

// unpublishObject removes attributes from a publication (all of them when
// hs is nil). It returns the groups to leave.
func (s *state) unpublishObject(class ObjectClassHandle, hs []AttributeHandle) ([]transport.Group, error) {
	_, emptied, err := s.withdraw(s.pubObj, class, hs)
	if err != nil || !emptied {
		return nil, err
	}
	if s.leaveGroup(objectGroup(class)) {
		return []transport.Group{objectGroup(class)}, nil
	}
	return nil, nil
}

func (s *state) publishInteraction(class InteractionClassHandle) ([]transport.Group, error) {
	if _, err := s.interactionClass(class); err != nil {
		return nil, err
	}
	if s.pubInt[class] {
		return nil, nil
	}
	s.pubInt[class] = true
	if s.joinGroup(interactionGroup(class)) {
		return []transport.Group{interactionGroup(class)}, nil
	}
	return nil, nil
}

func (s *state) unpublishInteraction(class InteractionClassHandle) ([]transport.Group, error) {
	if _, err := s.interactionClass(class); err != nil {
		return nil, err
	}
	if !s.pubInt[class] {
		return nil, nil
	}
	delete(s.pubInt, class)
	if s.leaveGroup(interactionGroup(class)) {
		return []transport.Group{interactionGroup(class)}, nil
	}
	return nil, nil
}

// subscribeObject records a subscription. It returns the groups to join
// (the class and its descendants) and the discovery queries to send on
// them, so that instances registered before the subscription are
// discovered too.
func (s *state) subscribeObject(class ObjectClassHandle, hs []AttributeHandle) ([]transport.Group, []outMsg, error) {
	c, err := s.objectClass(class)
	if err != nil {
		return nil, nil, err
	}
	if err := attrs(c, hs); err != nil {
		return nil, nil, err
	}
	set := s.subObj[class]
	var join []transport.Group
	var queries []outMsg
	if set == nil {
		set = make(map[AttributeHandle]bool)
		s.subObj[class] = set
		for _, d := range subtree(c) {
			g := objectGroup(d.Handle)
			if s.joinGroup(g) {
				join = append(join, g)
			}
			queries = append(queries, outMsg{group: g, reliable: true, msg: &wireMsg{Kind: kindQuery, Class: uint64(d.Handle)}})
		}
	}
	for _, h := range hs {
		set[h] = true
	}
	return join, queries, nil
}

// unsubscribeObject removes attributes from a subscription (all when hs is
// nil) and returns the groups to leave. Known instances stay known.
func (s *state) unsubscribeObject(class ObjectClassHandle, hs []AttributeHandle) ([]transport.Group, error) {
	c, emptied, err := s.withdraw(s.subObj, class, hs)
	if err != nil || !emptied {
		return nil, err
	}
	var leave []transport.Group
	for _, d := range subtree(c) {
		if g := objectGroup(d.Handle); s.leaveGroup(g) {
			leave = append(leave, g)
		}
	}
	return leave, nil
}

func (s *state) subscribeInteraction(class InteractionClassHandle) ([]transport.Group, error) {
	c, err := s.interactionClass(class)
	if err != nil {
		return nil, err
	}
	if s.subInt[class] {
		return nil, nil
	}
	s.subInt[class] = true
	var join []transport.Group
	for _, d := range interactionSubtree(c) {
		if g := interactionGroup(d.Handle); s.joinGroup(g) {
			join = append(join, g)
		}
	}
	return join, nil
}

func (s *state) unsubscribeInteraction(class InteractionClassHandle) ([]transport.Group, error) {
	c, err := s.interactionClass(class)
	if err != nil {
		return nil, err
	}
	if !s.subInt[class] {
		return nil, nil
	}
	delete(s.subInt, class)
	var leave []transport.Group
	for _, d := range interactionSubtree(c) {
		if g := interactionGroup(d.Handle); s.leaveGroup(g) {
			leave = append(leave, g)
		}
	}
	return leave, nil
}

// subscribedAs returns the class an instance of c is known as: c itself
// or its nearest subscribed ancestor, or nil when nothing subscribed
// covers it.
func (s *state) subscribedAs(c *fomxml.ObjectClass) *fomxml.ObjectClass {
	for x := c; x != nil; x = x.Parent {
		if len(s.subObj[x.Handle]) > 0 {
			return x
		}
	}
	return nil
}

func (s *state) interactionSubscribedAs(c *fomxml.InteractionClass) *fomxml.InteractionClass {
	for x := c; x != nil; x = x.Parent {
		if s.subInt[x.Handle] {
			return x
		}
	}
	return nil
}

// ---- Object management: the sending side ----

// checkName applies the standard's rule for object instance names: not
// empty, and not starting with "HLA" (reserved for the RTI).
func checkName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty name", ErrIllegalName)
	}
	if strings.HasPrefix(name, "HLA") {
		return fmt.Errorf("%w: %q starts with HLA", ErrIllegalName, name)
	}
	return nil
}

// register creates an instance of class. name is "" for an RTI-chosen
// name; otherwise it must have been reserved by this federate.
func (s *state) register(class ObjectClassHandle, name string) (ObjectInstanceHandle, outMsg, error) {
	c, err := s.objectClass(class)
	if err != nil {
		return ObjectInstanceHandle{}, outMsg{}, err
	}
	pub := s.pubObj[class]
	if len(pub) == 0 {
		return ObjectInstanceHandle{}, outMsg{}, fmt.Errorf("%w: %s", ErrObjectClassNotPublished, c.QualifiedName)
	}
	if name != "" {
		if _, used := s.names[name]; used {
			return ObjectInstanceHandle{}, outMsg{}, fmt.Errorf("%w: %q", ErrObjectInstanceNameInUse, name)
		}
		if !s.reserved[name] {
			return ObjectInstanceHandle{}, outMsg{}, fmt.Errorf("%w: %q", ErrObjectInstanceNameNotReserved, name)
		}
		delete(s.reserved, name)
	}
	s.serial++
	h := ObjectInstanceHandle{Federate: s.self, Serial: s.serial}
	if name == "" {
		// RTI-chosen names start with HLA, which federates may not
		// reserve, and hold the unique handle, so they never collide.
		name = fmt.Sprintf("HLAobject_%d_%d", s.self, s.serial)
	}
	o := &ownedObject{class: c, name: name, owned: make(map[AttributeHandle]bool)}
	for a := range pub {
		o.owned[a] = true
	}
	// The registering federate holds the privilege to delete.
	if a, ok := c.Attribute("HLAprivilegeToDeleteObject"); ok {
		o.owned[a.Handle] = true
	}
	s.owned[h] = o
	s.names[name] = h
	return h, outMsg{group: objectGroup(class), reliable: true, msg: s.registerMsg(h, o)}, nil
}

func (s *state) registerMsg(h ObjectInstanceHandle, o *ownedObject) *wireMsg {
	return &wireMsg{Kind: kindRegister, Obj: h, Class: uint64(o.class.Handle), Name: o.name}
}

// update splits values into messages by transportation and order. tso
// says the message goes in time-stamp order (a time was given and the
// federate is regulating); t is its time when hasTime.
func (s *state) update(h ObjectInstanceHandle, values AttributeValues, tag []byte, hasTime bool, t float64, regulating bool) ([]outMsg, error) {
	o, ok := s.owned[h]
	if !ok {
		if _, known := s.known[h]; known {
			// Known but not ours: we own none of its attributes.
			for a := range values {
				if _, ok := s.known[h].class.AttributeByHandle(a); !ok {
					return nil, fmt.Errorf("%w: attribute %d", ErrAttributeNotDefined, a)
				}
			}
			return nil, fmt.Errorf("%w: object %v belongs to federate %d", ErrAttributeNotOwned, h, h.Federate)
		}
		return nil, fmt.Errorf("%w: %v", ErrObjectInstanceNotKnown, h)
	}
	// Values split by how they travel, in a deterministic order:
	// reliable before best effort, receive order before time stamp.
	const (
		tsoBit     = 1
		bestEffort = 2
	)
	split := &s.updPairs
	for k := range split {
		split[k] = split[k][:0]
	}
	for a, v := range values {
		attr, ok := o.class.AttributeByHandle(a)
		if !ok {
			return nil, fmt.Errorf("%w: attribute %d of class %s", ErrAttributeNotDefined, a, o.class.QualifiedName)
		}
		if !o.owned[a] {
			return nil, fmt.Errorf("%w: %s", ErrAttributeNotOwned, attr.Name)
		}
		k := 0
		if !s.reliable(attr.Transportation) {
			k |= bestEffort
		}
		if hasTime && regulating && s.attrTSO(h, attr) {
			k |= tsoBit
		}
		split[k] = append(split[k], valuePair{uint64(a), v})
	}
	out := s.updOut[:0]
	for k, vs := range split {
		// An update with no values still tells subscribers the object
		// exists.
		if len(vs) == 0 && (k != 0 || len(values) != 0) {
			continue
		}
		sortPairs(vs)
		m := &s.updMsgs[k]
		*m = wireMsg{
			Kind: kindUpdate, Obj: h, Class: uint64(o.class.Handle), Pairs: vs, Tag: tag,
			TSO: k&tsoBit != 0, HasTime: hasTime, Time: t,
		}
		out = append(out, outMsg{group: objectGroup(o.class.Handle), reliable: k&bestEffort == 0, msg: m})
	}
	s.updOut = out
	return out, nil
}

func (s *state) reliable(transportation string) bool {
	if t, ok := s.fdd.Transportation(transportation); ok {
		return t.Reliable
	}
	return true
}

func (s *state) interaction(class InteractionClassHandle, values ParameterValues, tag []byte, hasTime bool, t float64, regulating bool) (outMsg, error) {
	c, err := s.interactionClass(class)
	if err != nil {
		return outMsg{}, err
	}
	if !s.pubInt[class] {
		return outMsg{}, fmt.Errorf("%w: %s", ErrInteractionClassNotPublished, c.QualifiedName)
	}
	vals := make([]valuePair, 0, len(values))
	for p, v := range values {
		if _, ok := c.ParameterByHandle(p); !ok {
			return outMsg{}, fmt.Errorf("%w: parameter %d of %s", ErrInteractionParameterNotDefined, p, c.QualifiedName)
		}
		vals = append(vals, valuePair{uint64(p), v})
	}
	sortPairs(vals)
	return outMsg{group: interactionGroup(class), reliable: s.reliable(c.Transportation), msg: &wireMsg{
		Kind: kindInteraction, Class: uint64(class), Pairs: vals, Tag: tag,
		TSO: hasTime && regulating && s.interactionTSO(c), HasTime: hasTime, Time: t,
	}}, nil
}

func (s *state) delete(h ObjectInstanceHandle, tag []byte, hasTime bool, t float64, regulating bool) (outMsg, error) {
	o, ok := s.owned[h]
	if !ok {
		if _, known := s.known[h]; known {
			return outMsg{}, fmt.Errorf("%w: object %v", ErrDeletePrivilegeNotHeld, h)
		}
		return outMsg{}, fmt.Errorf("%w: %v", ErrObjectInstanceNotKnown, h)
	}
	priv, ok := o.class.Attribute("HLAprivilegeToDeleteObject")
	if ok && !o.owned[priv.Handle] {
		return outMsg{}, fmt.Errorf("%w: object %v", ErrDeletePrivilegeNotHeld, h)
	}
	delete(s.owned, h)
	delete(s.names, o.name)
	delete(s.attrOrder, h)
	return outMsg{group: objectGroup(o.class.Handle), reliable: true, msg: &wireMsg{
		Kind: kindDelete, Obj: h, Class: uint64(o.class.Handle), Tag: tag,
		TSO: hasTime && regulating, HasTime: hasTime, Time: t,
	}}, nil
}

// answerQuery re-announces this federate's instances of exactly the
// queried class, for a new subscriber.
func (s *state) answerQuery(class uint64) []outMsg {
	var out []outMsg
	for h, o := range s.owned {
		if uint64(o.class.Handle) == class {
			out = append(out, outMsg{group: objectGroup(o.class.Handle), reliable: true, msg: s.registerMsg(h, o)})
		}
	}
	slices.SortFunc(out, func(a, b outMsg) int { return cmp.Compare(a.msg.Obj.Serial, b.msg.Obj.Serial) })
	return out
}

// ---- Object management: the receiving side ----

// delivery is how a message reached the federate: its order and, for
// time-stamped ones, its time.
type delivery struct {
	from     FederateHandle
	received OrderType
	reliable bool
}

// apply turns one delivered message into events, appended to evs (a
// reused buffer: no allocation for the slice on the hot path). tk
// converts times.
func (s *state) apply(evs []Event, m *wireMsg, d delivery, tk hla.TimeKind) []Event {
	sent := Receive
	if m.TSO {
		sent = TimeStamp
	}
	var t LogicalTime
	if m.HasTime {
		t = tk.Make(m.Time)
	}
	var mrh MessageRetractionHandle
	if m.TSO && d.reliable { // the sender gives out handles for these only
		mrh = MessageRetractionHandle{Federate: d.from, Serial: m.ID}
	}
	switch m.Kind {
	case kindRegister:
		if ev, ok := s.discover(m.Obj, m.Class, m.Name, d.from); ok {
			return append(evs, ev)
		}
	case kindUpdate:
		c, ok := s.fdd.ObjectClassByHandle(ObjectClassHandle(m.Class))
		if !ok {
			return evs
		}
		k := s.known[m.Obj]
		if k == nil {
			// Updates travel on the class group after the registration,
			// so an unknown instance here is one whose registration this
			// federate could not hear (it was not subscribed then). The
			// update tells us enough to discover it now.
			ev, ok := s.discover(m.Obj, m.Class, "", d.from)
			if !ok {
				return evs
			}
			evs = append(evs, ev)
			k = s.known[m.Obj]
		}
		sub := s.subObj[k.known.Handle]
		ps := pairsOf(m)
		vals := make(AttributeValues, len(ps))
		for _, p := range ps {
			if a := AttributeHandle(p.H); sub[a] {
				if _, ok := c.AttributeByHandle(a); ok {
					vals[a] = p.V
				}
			}
		}
		if len(vals) == 0 {
			return evs
		}
		transport := "HLAreliable"
		if !d.reliable {
			transport = "HLAbestEffort"
		}
		return append(evs, ReflectAttributeValues{
			Object: m.Obj, Values: vals, Tag: m.Tag, SentOrder: sent, ReceivedOrder: d.received,
			Time: t, Producer: d.from, Transportation: transport, Retraction: mrh,
		})
	case kindDelete:
		k := s.known[m.Obj]
		if k == nil {
			return evs
		}
		delete(s.known, m.Obj)
		s.deleted[m.Obj] = true
		if s.names[k.name] == m.Obj {
			delete(s.names, k.name)
		}
		return append(evs, RemoveObjectInstance{Object: m.Obj, Tag: m.Tag, SentOrder: sent, ReceivedOrder: d.received, Time: t, Producer: d.from, Retraction: mrh})
	case kindInteraction:
		c, ok := s.fdd.InteractionClassByHandle(InteractionClassHandle(m.Class))
		if !ok {
			return evs
		}
		as := s.interactionSubscribedAs(c)
		if as == nil {
			return evs
		}
		ps := pairsOf(m)
		vals := make(ParameterValues, len(ps))
		for _, p := range ps {
			if _, ok := as.ParameterByHandle(ParameterHandle(p.H)); ok {
				vals[ParameterHandle(p.H)] = p.V
			}
		}
		transport := "HLAreliable"
		if !d.reliable {
			transport = "HLAbestEffort"
		}
		return append(evs, ReceiveInteraction{
			Class: as.Handle, Values: vals, Tag: m.Tag, SentOrder: sent, ReceivedOrder: d.received,
			Time: t, Producer: d.from, Transportation: transport, Retraction: mrh,
		})
	}
	return evs
}

// discover records a newly heard instance and returns its discover event,
// when the federate subscribes to its class or an ancestor and does not
// know it yet.
func (s *state) discover(h ObjectInstanceHandle, class uint64, name string, from FederateHandle) (Event, bool) {
	if _, ok := s.known[h]; ok {
		return nil, false
	}
	if _, ok := s.owned[h]; ok {
		return nil, false
	}
	if h.Federate != from || h.IsZero() {
		// Only the registering federate announces its instances.
		return nil, false
	}
	if s.deleted[h] || s.gone[h.Federate] {
		// Removed already; a late message does not bring it back.
		return nil, false
	}
	c, ok := s.fdd.ObjectClassByHandle(ObjectClassHandle(class))
	if !ok {
		return nil, false
	}
	as := s.subscribedAs(c)
	if as == nil {
		return nil, false
	}
	if name == "" {
		name = fmt.Sprintf("HLAobject_%d_%d", h.Federate, h.Serial)
	}
	s.known[h] = &knownObject{class: c, known: as, name: name}
	s.names[name] = h
	return DiscoverObjectInstance{Object: h, Class: as.Handle, Name: name, Producer: from}, true
}

// removeFederate forgets every instance of a federate that resigned or was
// lost, returning the remove events (when the federation's resign action
// deletes objects).
func (s *state) removeFederate(f FederateHandle, deletes bool) []Event {
	if deletes {
		s.gone[f] = true
	}
	var hs []ObjectInstanceHandle
	for h := range s.known {
		if h.Federate == f {
			hs = append(hs, h)
		}
	}
	slices.SortFunc(hs, func(a, b ObjectInstanceHandle) int { return cmp.Compare(a.Serial, b.Serial) })
	var evs []Event
	for _, h := range hs {
		k := s.known[h]
		if !deletes {
			continue
		}
		delete(s.known, h)
		if s.names[k.name] == h {
			delete(s.names, k.name)
		}
		evs = append(evs, RemoveObjectInstance{Object: h, SentOrder: Receive, ReceivedOrder: Receive, Producer: f})
	}
	return evs
}

// sortPairs sorts values by handle (a handful: insertion sort).
func sortPairs(ps []valuePair) {
	for i := 1; i < len(ps); i++ {
		for j := i; j > 0 && ps[j].H < ps[j-1].H; j-- {
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
}

// ---- Order-type overrides (§8.23, §8.24) ----

// attrTSO reports whether attribute a of owned instance h is sent in
// time-stamp order: the federate's override, else the FOM's order.
func (s *state) attrTSO(h ObjectInstanceHandle, a *fomxml.Attribute) bool {
	if o, ok := s.attrOrder[h][a.Handle]; ok {
		return o == TimeStamp
	}
	return a.Order == fomxml.OrderTimeStamp
}

// interactionTSO reports whether interactions of class c are sent in
// time-stamp order.
func (s *state) interactionTSO(c *fomxml.InteractionClass) bool {
	if o, ok := s.intOrder[c.Handle]; ok {
		return o == TimeStamp
	}
	return c.Order == fomxml.OrderTimeStamp
}

func checkOrder(order OrderType) error {
	if order != Receive && order != TimeStamp {
		return fmt.Errorf("%w: %d", ErrInvalidOrderType, int(order))
	}
	return nil
}

// changeAttributeOrder records the order attributes of an owned instance
// are sent in from now on.
func (s *state) changeAttributeOrder(h ObjectInstanceHandle, order OrderType, hs []AttributeHandle) error {
	if err := checkOrder(order); err != nil {
		return err
	}
	o, ok := s.owned[h]
	if !ok {
		if k, known := s.known[h]; known {
			if err := attrs(k.class, hs); err != nil {
				return err
			}
			return fmt.Errorf("%w: object %v belongs to federate %d", ErrAttributeNotOwned, h, h.Federate)
		}
		return fmt.Errorf("%w: %v", ErrObjectInstanceNotKnown, h)
	}
	if err := attrs(o.class, hs); err != nil {
		return err
	}
	for _, a := range hs {
		if !o.owned[a] {
			at, _ := o.class.AttributeByHandle(a)
			return fmt.Errorf("%w: %s", ErrAttributeNotOwned, at.Name)
		}
	}
	m := s.attrOrder[h]
	if m == nil {
		m = make(map[AttributeHandle]OrderType, len(hs))
		s.attrOrder[h] = m
	}
	for _, a := range hs {
		m[a] = order
	}
	return nil
}

// changeInteractionOrder records the order interactions of a published
// class are sent in from now on.
func (s *state) changeInteractionOrder(class InteractionClassHandle, order OrderType) error {
	if err := checkOrder(order); err != nil {
		return err
	}
	c, err := s.interactionClass(class)
	if err != nil {
		return err
	}
	if !s.pubInt[class] {
		return fmt.Errorf("%w: %s", ErrInteractionClassNotPublished, c.QualifiedName)
	}
	s.intOrder[class] = order
	return nil
}
