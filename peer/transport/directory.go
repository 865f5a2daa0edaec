package transport

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
)

// Announcement is what a node tells the control plane about its unicast
// data plane: the address its datagrams reach it at, and the groups it
// has joined. Every member keeps the newest announcement of every other
// one (a Directory); a unicast send to a group goes to each node whose
// announcement lists the group.
type Announcement struct {
	// Addr is the node's data-plane address: "host:port" for the UDP
	// unicast transport (Unicast), the endpoint name for the in-memory
	// one (MemUnicast).
	Addr string
	// Groups are the joined groups, sorted, without repeats.
	Groups []Group
}

// Announcement limits: an encoded announcement is at most
// maxAnnouncement bytes, and its address at most maxAnnounceAddr.
const (
	announceVersion = 1
	maxAnnounceAddr = 255
	maxAnnouncement = 1 << 20
)

// ErrBadAnnouncement is wrapped by the errors of DecodeAnnouncement.
var ErrBadAnnouncement = errors.New("transport: malformed group announcement")

// Encode returns a's wire form: a version byte, the address (uvarint
// length, bytes), the number of groups (uvarint), then the sorted groups
// as uvarint gaps from the previous one (the first from 0), so that the
// dozens of nearby groups of a federate take a byte or two each.
func (a Announcement) Encode() []byte {
	gs := slices.Clone(a.Groups)
	slices.Sort(gs)
	gs = slices.Compact(gs)
	b := make([]byte, 0, 2+len(a.Addr)+binary.MaxVarintLen32*(1+len(gs)))
	b = append(b, announceVersion)
	b = binary.AppendUvarint(b, uint64(len(a.Addr)))
	b = append(b, a.Addr...)
	b = binary.AppendUvarint(b, uint64(len(gs)))
	var prev uint64
	for _, g := range gs {
		b = binary.AppendUvarint(b, uint64(g)-prev)
		prev = uint64(g)
	}
	return b
}

// DecodeAnnouncement parses an encoded announcement. Whatever the bytes,
// it returns an error wrapping ErrBadAnnouncement rather than
// panicking, and allocates at most in proportion to len(b).
func DecodeAnnouncement(b []byte) (Announcement, error) {
	bad := func(what string) (Announcement, error) {
		return Announcement{}, fmt.Errorf("%w: %s", ErrBadAnnouncement, what)
	}
	if len(b) > maxAnnouncement {
		return bad("too long")
	}
	if len(b) == 0 || b[0] != announceVersion {
		return bad("unknown version")
	}
	b = b[1:]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > maxAnnounceAddr || n > uint64(len(b)-k) {
		return bad("address length")
	}
	a := Announcement{Addr: string(b[k : k+int(n)])}
	b = b[k+int(n):]
	if a.Addr == "" {
		return bad("empty address")
	}
	count, k := binary.Uvarint(b)
	if k <= 0 || count > uint64(len(b)-k) { // each group takes a byte at least
		return bad("group count")
	}
	b = b[k:]
	a.Groups = make([]Group, 0, count)
	var prev uint64
	for i := uint64(0); i < count; i++ {
		d, k := binary.Uvarint(b)
		if k <= 0 {
			return bad("group")
		}
		b = b[k:]
		if (i > 0 && d == 0) || prev+d > 0xffffffff {
			return bad("groups out of order or range")
		}
		prev += d
		a.Groups = append(a.Groups, Group(prev))
	}
	if len(b) != 0 {
		return bad("trailing bytes")
	}
	return a, nil
}

// Directory is the view of a group's members that a unicast transport
// sends by. The control plane feeds it: every node announces its
// address and joined groups (an encoded Announcement), and the owner of
// the transport hands each other node's announcements to Update, and
// Remove when that node leaves or is declared lost. Node names only
// need to be unique and stable per node (the peer layer uses the
// federate handle).
//
// A unicast transport announces itself through the function given to
// SetAnnounce: at once, and again after each Join or Leave that changed
// its groups, with the whole current announcement (the newest one
// replaces the others, so a lost or reordered one costs nothing but
// time). The function is called with no lock of the transport held, on
// the goroutine of the Join or Leave; it must not block.
//
// All methods are safe for concurrent use.
type Directory interface {
	// Update records node's announcement, in its encoded form, in place
	// of any earlier one. A malformed one is dropped, counted, and
	// returned as an error; the node's earlier one then stays.
	Update(node string, announcement []byte) error
	// Remove forgets node: nothing is sent to it any more.
	Remove(node string)
	// SetAnnounce sets the function that spreads this transport's own
	// announcement, and calls it with the current one.
	SetAnnounce(announce func(announcement []byte))
}

// DirectoryStats counts what a Directory did with what it was fed.
type DirectoryStats struct {
	Updates   uint64 // announcements recorded
	Malformed uint64 // announcements dropped: they did not decode, or their address did not parse
	Removes   uint64 // nodes forgotten
	Members   int    // nodes known now
}

// directory is the state shared by the unicast transports: the joined
// groups and the announcement function of this node, and the other
// nodes' announcements turned into a route table (group to addresses).
// A is the address type (netip.AddrPort, or an endpoint name).
type directory[A comparable] struct {
	parse func(string) (A, error)
	self  func(A) bool // reports an address that is this node's own

	annMu    sync.Mutex // held while announcing, outside mu
	mu       sync.Mutex
	nodes    map[string]dirNode[A]
	byGroup  map[Group]map[string]bool // node names by group
	joined   map[Group]bool
	addr     string // this node's announced address
	announce func([]byte)
	// routes maps each group to its members' addresses, this node's
	// excluded, sorted by node name; replaced on every change and never
	// modified, so senders read it without a lock.
	routes atomic.Pointer[map[Group][]A]
	// joinedView is a copy of joined for the readers, like routes.
	joinedView atomic.Pointer[map[Group]bool]

	updates, malformed, removes atomic.Uint64
}

type dirNode[A comparable] struct {
	addr   A
	groups []Group
}

func newDirectory[A comparable](addr string, parse func(string) (A, error), self func(A) bool) *directory[A] {
	d := &directory[A]{parse: parse, self: self, addr: addr, nodes: map[string]dirNode[A]{}, byGroup: map[Group]map[string]bool{}, joined: map[Group]bool{}}
	d.routes.Store(&map[Group][]A{})
	d.joinedView.Store(&map[Group]bool{})
	return d
}

// Update implements Directory.
func (d *directory[A]) Update(node string, b []byte) error {
	a, err := DecodeAnnouncement(b)
	var addr A
	if err == nil {
		if addr, err = d.parse(a.Addr); err != nil {
			err = fmt.Errorf("%w: address %q: %w", ErrBadAnnouncement, a.Addr, err)
		}
	}
	if err != nil {
		d.malformed.Add(1)
		return err
	}
	d.mu.Lock()
	old, had := d.nodes[node]
	d.nodes[node] = dirNode[A]{addr: addr, groups: a.Groups}
	changed := a.Groups
	if had {
		changed = changedGroups(old.groups, a.Groups, old.addr != addr)
	}
	d.indexLocked(node, old.groups, a.Groups)
	d.publishLocked(changed)
	d.mu.Unlock()
	d.updates.Add(1)
	return nil
}

// Remove implements Directory.
func (d *directory[A]) Remove(node string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	old, ok := d.nodes[node]
	if !ok {
		return
	}
	delete(d.nodes, node)
	d.indexLocked(node, old.groups, nil)
	d.publishLocked(old.groups)
	d.removes.Add(1)
}

// changedGroups returns the groups whose members change when a node's
// sorted groups go from old to new: those in one and not the other, or
// all of both when its address changed.
func changedGroups(old, new []Group, addrChanged bool) []Group {
	if addrChanged {
		return append(slices.Clone(old), new...)
	}
	var out []Group
	i, j := 0, 0
	for i < len(old) || j < len(new) {
		switch {
		case j == len(new) || (i < len(old) && old[i] < new[j]):
			out = append(out, old[i])
			i++
		case i == len(old) || new[j] < old[i]:
			out = append(out, new[j])
			j++
		default:
			i++
			j++
		}
	}
	return out
}

// indexLocked moves node from the groups of old to those of new in the
// index of members by group.
func (d *directory[A]) indexLocked(node string, old, new []Group) {
	for _, g := range old {
		if m := d.byGroup[g]; m != nil {
			delete(m, node)
			if len(m) == 0 {
				delete(d.byGroup, g)
			}
		}
	}
	for _, g := range new {
		m := d.byGroup[g]
		if m == nil {
			m = map[string]bool{}
			d.byGroup[g] = m
		}
		m[node] = true
	}
}

// publishLocked replaces the route table with a copy in which the
// members of the changed groups are recomputed (by node name, this
// node's own address left out, each address once); the other groups'
// slices are shared with the previous table, which is never modified.
func (d *directory[A]) publishLocked(changed []Group) {
	r := maps.Clone(*d.routes.Load())
	for _, g := range changed {
		names := slices.Sorted(maps.Keys(d.byGroup[g]))
		var addrs []A
		for _, name := range names {
			a := d.nodes[name].addr
			if !d.self(a) && !slices.Contains(addrs, a) {
				addrs = append(addrs, a)
			}
		}
		if len(addrs) == 0 {
			delete(r, g)
		} else {
			r[g] = addrs
		}
	}
	d.routes.Store(&r)
}

// SetAnnounce implements Directory.
func (d *directory[A]) SetAnnounce(announce func([]byte)) {
	d.annMu.Lock()
	defer d.annMu.Unlock()
	d.mu.Lock()
	d.announce = announce
	b := d.announcementLocked()
	d.mu.Unlock()
	if announce != nil {
		announce(b)
	}
}

func (d *directory[A]) announcementLocked() []byte {
	return Announcement{Addr: d.addr, Groups: slices.Sorted(maps.Keys(d.joined))}.Encode()
}

// join and leave record this node's groups and, when they changed,
// spread the new announcement. annMu keeps announcements in the order
// of the changes.
func (d *directory[A]) join(g Group) {
	d.annMu.Lock()
	defer d.annMu.Unlock()
	d.mu.Lock()
	if d.joined[g] {
		d.mu.Unlock()
		return
	}
	d.joined[g] = true
	announce, b := d.changedLocked()
	d.mu.Unlock()
	announceIf(announce, b)
}

func (d *directory[A]) leave(g Group) {
	d.annMu.Lock()
	defer d.annMu.Unlock()
	d.mu.Lock()
	if !d.joined[g] {
		d.mu.Unlock()
		return
	}
	delete(d.joined, g)
	announce, b := d.changedLocked()
	d.mu.Unlock()
	announceIf(announce, b)
}

func (d *directory[A]) changedLocked() (func([]byte), []byte) {
	v := maps.Clone(d.joined)
	d.joinedView.Store(&v)
	if d.announce == nil {
		return nil, nil
	}
	return d.announce, d.announcementLocked()
}

// isJoined reports whether g is joined; it takes no lock.
func (d *directory[A]) isJoined(g Group) bool { return (*d.joinedView.Load())[g] }

// members returns the addresses a datagram on g goes to; the slice is
// shared and must not be modified. It takes no lock.
func (d *directory[A]) members(g Group) []A { return (*d.routes.Load())[g] }

func (d *directory[A]) stats() DirectoryStats {
	d.mu.Lock()
	n := len(d.nodes)
	d.mu.Unlock()
	return DirectoryStats{Updates: d.updates.Load(), Malformed: d.malformed.Load(), Removes: d.removes.Load(), Members: n}
}

// announceIf calls announce with b when both are set.
func announceIf(announce func([]byte), b []byte) {
	if announce != nil && b != nil {
		announce(b)
	}
}
