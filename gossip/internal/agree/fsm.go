package agree

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"

	"github.com/vmihailenco/msgpack/v5"
)

// This file holds the replicated state machine behind the register: the
// deterministic function from the chosen log to the register's contents.
// Every node applies the same entries in the same order and so reaches
// the same state; nothing here reads a clock, a random source or the
// network.

// NodeID names one process: a memberlist node name plus the incarnation
// chosen when the process started. A restarted process has a new
// incarnation and so is a different acceptor, proposer and holder.
type NodeID struct {
	Name string `msgpack:"n"`
	Inc  uint64 `msgpack:"i"`
}

func (id NodeID) isZero() bool { return id.Name == "" && id.Inc == 0 }

func (id NodeID) less(o NodeID) bool {
	if id.Name != o.Name {
		return id.Name < o.Name
	}
	return id.Inc < o.Inc
}

// Key is the string form used as a map key.
func (id NodeID) Key() string { return id.Name + "#" + strconv.FormatUint(id.Inc, 16) }

func (id NodeID) String() string { return id.Key() }

// OpKind says what an op does to the state.
type OpKind uint8

const (
	OpAcquire        OpKind = iota + 1 // take Key if it is free
	OpRelease                          // free Key if the proposer holds it
	OpCreateFed                        // create the federation execution
	OpDestroyFed                       // destroy it when nobody is joined
	OpJoinFed                          // join the proposer's federate
	OpResignFed                        // resign the proposer's federate
	OpAddAcceptor                      // add the proposer to the roster
	OpLost                             // drop everything Node holds
	OpCompareAndSwap                   // take Key with Value if its version is Expect
)

// Op is one command in a log entry. Its effect depends only on the state
// it is applied to, so a proposer never has to read before it writes:
// "take this name if it is free" is decided where it lands in the log.
type Op struct {
	Seq   uint64 `msgpack:"s"`
	Kind  OpKind `msgpack:"k"`
	Key   string `msgpack:"y,omitempty"`
	Value []byte `msgpack:"v,omitempty"`
	Name  string `msgpack:"n,omitempty"`
	Type  string `msgpack:"t,omitempty"` // federate type (join); earlier versions put the FOM digest of a create here
	Node  NodeID `msgpack:"o,omitempty"`
	// Create and join: the time representation and the FOM modules;
	// join only: Known is how many modules of the record the joiner
	// checked its own against.
	Time    string      `msgpack:"r,omitempty"`
	Modules []ModuleRec `msgpack:"m,omitempty"`
	Known   int         `msgpack:"w,omitempty"`
	// Create only: the MIM that replaces the standard one, none or one
	// (createFederationExecutionWithMIM).
	MIM []ModuleRec `msgpack:"i,omitempty"`
	// Create only: the federation's DDM cell configuration, opaque here
	// (FederationSpec.Cells); earlier versions sent none.
	Cells []byte `msgpack:"d,omitempty"`
	// Create only: the federation's data-plane mode, opaque here
	// (FederationSpec.DataPlane); earlier versions sent none.
	DataPlane string `msgpack:"p,omitempty"`
	// Compare-and-swap: the version Key must have for the swap.
	Expect uint64 `msgpack:"e,omitempty"`
	// Acquire only: federate handles that must all be joined where the
	// op lands (a synchronization set); none: no condition.
	Joined []uint64 `msgpack:"j,omitempty"`
}

// size is roughly what o adds to an encoded log entry.
func (o *Op) size() int {
	n := 32 + 8*len(o.Joined) + len(o.Key) + len(o.Value) + len(o.Name) + len(o.Type) + len(o.Node.Name) + len(o.Time) + len(o.Cells) + len(o.DataPlane)
	for _, m := range append(o.Modules, o.MIM...) {
		n += 16 + len(m.Name) + len(m.Digest) + len(m.Content)
	}
	return n
}

// Batch is the value of one log entry: the ops of one proposer, in the
// order it submitted them, and, when a leader proposed for others (More),
// their batches after it, each applied as its own proposer's.
type Batch struct {
	Proposer NodeID  `msgpack:"p"`
	Ops      []Op    `msgpack:"o"`
	More     []Batch `msgpack:"m,omitempty"`
	// Forwarded batches only: 1 + the entries the origin had applied when
	// it forwarded the batch. A forwarded batch is not bound to one
	// instance as a proposer's own value is, so a stale copy could be
	// chosen late; applyBatch skips one older than fwdWindow entries, or
	// from a proposer that departed meanwhile (fsm.Gone).
	Base uint64 `msgpack:"b,omitempty"`
}

// fwdWindow is how many entries after its Base a forwarded batch may
// still take effect; fsm.Gone keeps a departed proposer as long.
const fwdWindow = 1024

func EncodeBatch(b Batch) []byte {
	buf, err := msgpack.Marshal(&b)
	if err != nil {
		panic(fmt.Sprintf("gossip: encoding a log entry: %v", err))
	}
	return buf
}

// ResultCode is the outcome of one op.
type ResultCode uint8

const (
	CodeOK ResultCode = iota
	CodeExists
	CodeNotFound
	CodeFederatesJoined
	CodeNameInUse
	CodeNotHolder
	CodeAlreadyJoined
	CodeNotJoined
	CodeRosterFull
	CodeUnknown // the op was applied but its result was compacted away
	CodeTimeRepresentation
	CodeModulesChanged
	CodeModulesTooLarge
	CodeVersionMismatch // compare-and-swap: the key's version was not the expected one
	CodeNotMember       // acquire: a federate of Joined is not joined (Handle names it)
	CodeClusterGone     // not decided, and never will be: every acceptor is gone (local, never in the log)
)

// OpResult is what applying an op produced, for its proposer.
type OpResult struct {
	Seq    uint64     `msgpack:"s"`
	Code   ResultCode `msgpack:"c,omitempty"`
	Entry  KeyEntry   `msgpack:"e,omitempty"`
	Handle uint64     `msgpack:"h,omitempty"`
	Name   string     `msgpack:"n,omitempty"`
}

// KeyEntry is the register's value for one key. Version counts the
// changes of the key: version n is the value chosen for instance key@n.
type KeyEntry struct {
	Version uint64 `msgpack:"v"`
	Value   []byte `msgpack:"d,omitempty"`
	Holder  NodeID `msgpack:"h,omitempty"` // zero: free
}

// FederateRec is one joined federate.
type FederateRec struct {
	Handle uint64 `msgpack:"h"`
	Name   string `msgpack:"n"`
	Type   string `msgpack:"t,omitempty"`
	Node   NodeID `msgpack:"o"`
}

// ModuleRec is one FOM module of the federation record. Content is
// opaque here (the caller may compress it); Digest identifies it.
type ModuleRec struct {
	Name    string `msgpack:"n,omitempty"`
	Digest  string `msgpack:"d"`
	Content []byte `msgpack:"c,omitempty"`
}

// FederationRec is the federation execution, when it exists. Modules
// only grow while it exists; a module, once recorded, is never changed,
// so copies of the record may share the modules' Content.
type FederationRec struct {
	Name string `msgpack:"n"`
	// "f" held a FOM digest in earlier versions; it is ignored.
	Creator    string        `msgpack:"c,omitempty"`
	NextHandle uint64        `msgpack:"x"`
	Federates  []FederateRec `msgpack:"j,omitempty"` // by handle
	Time       string        `msgpack:"t,omitempty"` // time representation
	Modules    []ModuleRec   `msgpack:"m,omitempty"` // in the order they were added
	MIM        []ModuleRec   `msgpack:"i,omitempty"` // none (the standard MIM) or the creator's
	// Cells is the creator's DDM cell configuration, opaque here; empty
	// in records of earlier versions (and of creators that gave none).
	// Like a module it never changes, so copies may share it.
	Cells []byte `msgpack:"d,omitempty"`
	// DataPlane is the creator's data-plane mode, opaque here; empty in
	// records of earlier versions.
	DataPlane string `msgpack:"p,omitempty"`
	// Lost holds the handles of the latest federates removed as lost
	// (at most maxLostKept, oldest first): a node that catches up from a
	// snapshot tells a federate lost from one that resigned by it (and
	// learns that its own federate was removed). Handles are never
	// reused, so a handle names one federate.
	Lost []uint64 `msgpack:"l,omitempty"`
}

// MaxLostKept bounds FederationRec.Lost: a node more than that many
// losses behind catches up on the rest as resignations.
const MaxLostKept = 1024

func (f *FederationRec) Clone() *FederationRec {
	if f == nil {
		return nil
	}
	c := *f
	c.Federates = append([]FederateRec(nil), f.Federates...)
	c.Modules = append([]ModuleRec(nil), f.Modules...)
	c.MIM = append([]ModuleRec(nil), f.MIM...)
	c.Lost = append([]uint64(nil), f.Lost...)
	return &c
}

// newModules returns the modules of ms whose digest the record does not
// hold yet, without duplicates, in order.
func (f *FederationRec) newModules(ms []ModuleRec) []ModuleRec {
	seen := make(map[string]bool, len(f.Modules)+len(ms))
	for _, m := range f.Modules {
		seen[m.Digest] = true
	}
	var out []ModuleRec
	for _, m := range ms {
		if !seen[m.Digest] {
			seen[m.Digest] = true
			out = append(out, m)
		}
	}
	return out
}

// ModuleBytes is the total Content size of ms.
func ModuleBytes(ms []ModuleRec) int {
	n := 0
	for _, m := range ms {
		n += len(m.Content)
	}
	return n
}

// Session remembers, per proposer, the last op applied and the results of
// its last applied entry, so that an op is applied at most once and its
// proposer can still find its result after catching up from a snapshot.
type Session struct {
	ID      NodeID     `msgpack:"i"`
	Seq     uint64     `msgpack:"s"`
	Results []OpResult `msgpack:"r,omitempty"`
}

// FSM is the register's state after Index log entries.
type FSM struct {
	Log          string         `msgpack:"l"` // identity of the log (random, from the founder)
	Index        uint64         `msgpack:"x"` // entries applied = the next instance
	MaxAcceptors int            `msgpack:"m"`
	Roster       []NodeID       `msgpack:"r"` // acceptors of instance Index, sorted
	Keys         keyMap         `msgpack:"k"`
	Fed          *FederationRec `msgpack:"f,omitempty"`
	Sessions     sessionMap     `msgpack:"s"`
	// Gone: proposers whose session a departure removed, with the entry
	// count then, kept fwdWindow entries, so that a stale forwarded batch
	// of theirs is not applied as a new session's.
	Gone goneMap `msgpack:"g,omitempty"`
	// Removed: the processes the federation removed as lost (node keys,
	// oldest first, the latest maxRemovedKept). Such a process, when it
	// comes back, may act again, but not remove others: it judged who
	// was gone from the view of a node cut off (applyBatch).
	Removed []string `msgpack:"rm,omitempty"`
}

// maxRemovedKept bounds fsm.Removed.
const maxRemovedKept = 4096

// NewFSM returns the genesis state of a log founded by founder.
func NewFSM(log string, founder NodeID, maxAcceptors int) *FSM {
	if maxAcceptors < 1 {
		maxAcceptors = 1
	}
	return &FSM{
		Log:          log,
		MaxAcceptors: maxAcceptors,
		Roster:       []NodeID{founder},
		Keys:         map[string]KeyEntry{},
		Sessions:     map[string]Session{},
	}
}

// keyMap and sessionMap encode their keys in order, so that equal states
// encode to equal snapshots (a seed replays byte for byte).
type (
	keyMap     map[string]KeyEntry
	sessionMap map[string]Session
	goneMap    map[string]uint64
)

func (m keyMap) EncodeMsgpack(e *msgpack.Encoder) error     { return encodeSorted(e, m) }
func (m sessionMap) EncodeMsgpack(e *msgpack.Encoder) error { return encodeSorted(e, m) }
func (m goneMap) EncodeMsgpack(e *msgpack.Encoder) error    { return encodeSorted(e, m) }

func encodeSorted[V any](e *msgpack.Encoder, m map[string]V) error {
	if m == nil {
		return e.EncodeNil()
	}
	if err := e.EncodeMapLen(len(m)); err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if err := e.EncodeString(k); err != nil {
			return err
		}
		if err := e.Encode(m[k]); err != nil {
			return err
		}
	}
	return nil
}

// Encode returns the snapshot of f; equal states give equal snapshots.
func (f *FSM) Encode() []byte {
	buf, err := msgpack.Marshal(f)
	if err != nil {
		panic(fmt.Sprintf("gossip: encoding a snapshot: %v", err))
	}
	return buf
}

func DecodeFSM(buf []byte) (*FSM, error) {
	var f FSM
	if err := Decode(buf, &f); err != nil {
		return nil, fmt.Errorf("gossip: decoding a snapshot: %w", err)
	}
	if err := f.Check(); err != nil {
		return nil, fmt.Errorf("gossip: decoding a snapshot: %w", err)
	}
	if f.Keys == nil {
		f.Keys = map[string]KeyEntry{}
	}
	if f.Sessions == nil {
		f.Sessions = map[string]Session{}
	}
	return &f, nil
}

// Check reports a snapshot that no sequence of entries could produce in
// a way that would make the replica misbehave.
func (f *FSM) Check() error {
	switch {
	case f.Log == "":
		return errors.New("no log identity")
	case len(f.Roster) == 0:
		return errors.New("no acceptor")
	case len(f.Roster) > f.MaxAcceptors:
		return fmt.Errorf("%d acceptors, limit %d", len(f.Roster), f.MaxAcceptors)
	case f.Index >= 1<<62:
		return fmt.Errorf("index %d out of range", f.Index)
	case len(f.Removed) > maxRemovedKept:
		return fmt.Errorf("%d removed processes, limit %d", len(f.Removed), maxRemovedKept)
	}
	for i := 1; i < len(f.Roster); i++ {
		if !f.Roster[i-1].less(f.Roster[i]) {
			return errors.New("acceptors not sorted or repeated")
		}
	}
	return nil
}

func (f *FSM) InRoster(id NodeID) bool {
	for _, a := range f.Roster {
		if a == id {
			return true
		}
	}
	return false
}

// Identities lists every process the state refers to (acceptors,
// federates, key holders, proposers with a session), sorted.
func (f *FSM) Identities() []NodeID {
	seen := map[NodeID]bool{}
	for _, a := range f.Roster {
		seen[a] = true
	}
	if f.Fed != nil {
		for _, fr := range f.Fed.Federates {
			seen[fr.Node] = true
		}
	}
	for _, e := range f.Keys {
		if !e.Holder.isZero() {
			seen[e.Holder] = true
		}
	}
	for _, s := range f.Sessions {
		seen[s.ID] = true
	}
	out := make([]NodeID, 0, len(seen))
	for id := range seen {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].less(out[j]) })
	return out
}

// ChangeKind says what an applied op changed, for events and views.
type ChangeKind uint8

const (
	ChKey ChangeKind = iota + 1
	ChFedCreated
	ChFedDestroyed
	ChFederateJoined
	ChFederateResigned
	ChRoster
	ChSnapshot   // the whole state was replaced
	ChFedModules // the federation's module list grew
)

type Change struct {
	Kind     ChangeKind
	Key      string
	Entry    KeyEntry
	Federate FederateRec
	Lost     bool
	Modules  []ModuleRec // chFedCreated, chFedModules: the full list after the change (shared, read-only)
}

// Apply applies one chosen entry and advances Index. It returns the
// entry's first proposer, the results of that proposer's ops that took
// effect, and what changed (applyAll has every proposer's results).
func (f *FSM) Apply(value []byte) (NodeID, []OpResult, []Change) {
	ps, changes := f.applyAll(value)
	if len(ps) == 0 {
		return NodeID{}, nil, changes
	}
	return ps[0].proposer, ps[0].results, changes
}

// applied is what one proposer's batch of an entry produced.
type applied struct {
	proposer NodeID
	results  []OpResult
	last     uint64 // the highest op sequence number in its batch
}

// applyAll applies one chosen entry and advances Index. It returns, per
// batch in the entry, the proposer and the results of its ops that took
// effect (duplicates are skipped), and what changed. An entry that does
// not decode is an empty entry on every node alike.
func (f *FSM) applyAll(value []byte) ([]applied, []Change) {
	f.Index++
	var b Batch
	if err := Decode(value, &b); err != nil {
		return nil, nil
	}
	var (
		out     []applied
		changes []Change
	)
	more := b.More
	b.More = nil
	for _, sb := range append([]Batch{b}, more...) {
		if sb.Proposer.isZero() {
			continue
		}
		a := applied{proposer: sb.Proposer, results: f.applyBatch(sb, &changes)}
		if n := len(sb.Ops); n > 0 {
			a.last = sb.Ops[n-1].Seq
		}
		out = append(out, a)
	}
	for k, at := range f.Gone {
		if f.Index > at+fwdWindow {
			delete(f.Gone, k)
		}
	}
	return out, changes
}

// applyBatch applies one proposer's ops.
func (f *FSM) applyBatch(b Batch, changes *[]Change) []OpResult {
	sk := b.Proposer.Key()
	_, wasGone := f.Gone[sk]
	removed := slices.Contains(f.Removed, sk)
	if b.Base != 0 && (wasGone || f.Index > b.Base+fwdWindow) {
		return nil // a stale forwarded copy: its origin sends again
	}
	s := f.Sessions[sk]
	s.ID = b.Proposer
	var (
		res      []OpResult
		departed bool
	)
	for _, o := range b.Ops {
		if o.Seq <= s.Seq {
			continue // applied before
		}
		if removed && o.Kind == OpLost && o.Node != b.Proposer {
			// A node the federation removed says another is gone: it
			// judged from the view of a node cut off (it queued this
			// before it learned of its own removal), and is no member
			// to judge. Its other ops apply as any node's.
			res = append(res, OpResult{Seq: o.Seq})
			s.Seq = o.Seq
			continue
		}
		r := f.applyOp(b.Proposer, o, changes)
		r.Seq = o.Seq
		res = append(res, r)
		s.Seq = o.Seq
		if o.Kind == OpLost && o.Node == b.Proposer {
			departed = true
		}
	}
	if len(res) > 0 && !departed {
		s.Results = res
		f.Sessions[sk] = s
	}
	return res
}

func (f *FSM) applyOp(p NodeID, o Op, changes *[]Change) OpResult {
	switch o.Kind {
	case OpAcquire:
		e := f.Keys[o.Key]
		if h, ok := f.notJoined(o.Joined); ok {
			return OpResult{Code: CodeNotMember, Entry: e, Handle: h}
		}
		if e.Holder.isZero() {
			e.Version++
			e.Holder = p
			e.Value = o.Value
			f.Keys[o.Key] = e
			*changes = append(*changes, Change{Kind: ChKey, Key: o.Key, Entry: e})
		}
		return OpResult{Entry: e}

	case OpCompareAndSwap:
		// Decided where it lands, like opAcquire: of two swaps expecting
		// the same version, the first in log order changes it and the
		// second finds it changed. A held key is taken from its holder.
		e := f.Keys[o.Key]
		if e.Version != o.Expect {
			return OpResult{Code: CodeVersionMismatch, Entry: e}
		}
		e = KeyEntry{Version: e.Version + 1, Value: o.Value, Holder: p}
		f.Keys[o.Key] = e
		*changes = append(*changes, Change{Kind: ChKey, Key: o.Key, Entry: e})
		return OpResult{Entry: e}

	case OpRelease:
		e, ok := f.Keys[o.Key]
		switch {
		case !ok || e.Holder.isZero():
			return OpResult{Entry: e}
		case e.Holder != p:
			return OpResult{Code: CodeNotHolder, Entry: e}
		}
		e = KeyEntry{Version: e.Version + 1}
		f.Keys[o.Key] = e
		*changes = append(*changes, Change{Kind: ChKey, Key: o.Key, Entry: e})
		return OpResult{Entry: e}

	case OpCreateFed:
		if f.Fed != nil {
			return OpResult{Code: CodeExists, Name: f.Fed.Name}
		}
		fed := &FederationRec{Name: o.Name, Creator: p.Name, NextHandle: 1, Time: o.Time, Cells: o.Cells, DataPlane: o.DataPlane}
		fed.Modules = fed.newModules(o.Modules)
		if len(o.MIM) > 0 {
			fed.MIM = o.MIM[:1:1]
		}
		if ModuleBytes(fed.Modules)+ModuleBytes(fed.MIM)+len(fed.Cells) > MaxModuleBytes {
			return OpResult{Code: CodeModulesTooLarge}
		}
		f.Fed = fed
		*changes = append(*changes, Change{Kind: ChFedCreated, Modules: fed.Modules[:len(fed.Modules):len(fed.Modules)]})
		return OpResult{Name: o.Name}

	case OpDestroyFed:
		switch {
		case f.Fed == nil:
			return OpResult{Code: CodeNotFound}
		case len(f.Fed.Federates) > 0:
			return OpResult{Code: CodeFederatesJoined}
		}
		f.Fed = nil
		*changes = append(*changes, Change{Kind: ChFedDestroyed})
		return OpResult{}

	case OpJoinFed:
		if f.Fed == nil {
			return OpResult{Code: CodeNotFound}
		}
		for _, fr := range f.Fed.Federates {
			if fr.Node == p {
				return OpResult{Code: CodeAlreadyJoined, Handle: fr.Handle, Name: fr.Name}
			}
		}
		if o.Time != "" && f.Fed.Time != "" && o.Time != f.Fed.Time {
			return OpResult{Code: CodeTimeRepresentation}
		}
		// Compare-and-set on the module list: a joiner that adds modules
		// checked them against the first Known modules of the record, so
		// they may go in only if nobody added any since.
		added := f.Fed.newModules(o.Modules)
		if len(added) > 0 && o.Known != len(f.Fed.Modules) {
			return OpResult{Code: CodeModulesChanged}
		}
		h := f.Fed.NextHandle
		name := o.Name
		if name == "" {
			name = f.Fed.generateName(o.Type, h)
		} else if f.Fed.nameInUse(name) {
			return OpResult{Code: CodeNameInUse}
		}
		if len(added) > 0 {
			if ModuleBytes(f.Fed.Modules)+ModuleBytes(f.Fed.MIM)+len(f.Fed.Cells)+ModuleBytes(added) > MaxModuleBytes {
				return OpResult{Code: CodeModulesTooLarge}
			}
			f.Fed.Modules = append(f.Fed.Modules, added...)
			n := len(f.Fed.Modules)
			*changes = append(*changes, Change{Kind: ChFedModules, Modules: f.Fed.Modules[:n:n]})
		}
		f.Fed.NextHandle++
		fr := FederateRec{Handle: h, Name: name, Type: o.Type, Node: p}
		f.Fed.Federates = append(f.Fed.Federates, fr)
		*changes = append(*changes, Change{Kind: ChFederateJoined, Federate: fr})
		return OpResult{Handle: h, Name: name}

	case OpResignFed:
		if f.Fed != nil {
			for i, fr := range f.Fed.Federates {
				if fr.Node == p {
					f.Fed.Federates = append(f.Fed.Federates[:i:i], f.Fed.Federates[i+1:]...)
					*changes = append(*changes, Change{Kind: ChFederateResigned, Federate: fr})
					return OpResult{Handle: fr.Handle, Name: fr.Name}
				}
			}
		}
		return OpResult{Code: CodeNotJoined}

	case OpAddAcceptor:
		if f.InRoster(p) {
			return OpResult{}
		}
		// An older incarnation of the same node is gone for good.
		kept := f.Roster[:0:0]
		for _, a := range f.Roster {
			if a.Name != p.Name {
				kept = append(kept, a)
			}
		}
		if len(kept) >= f.MaxAcceptors {
			return OpResult{Code: CodeRosterFull}
		}
		if len(kept) == 0 {
			// Cannot happen (p's own old incarnation was the only acceptor
			// and it chose this entry); keep the roster non-empty anyway.
			return OpResult{Code: CodeRosterFull}
		}
		f.Roster = append(kept, p)
		sortIDs(f.Roster)
		*changes = append(*changes, Change{Kind: ChRoster})
		return OpResult{}

	case OpLost:
		f.DropNode(o.Node, changes)
		return OpResult{}
	}
	return OpResult{Code: CodeUnknown}
}

// DropNode removes everything t holds: its acceptor seat (unless it is
// the last one), its federate (lost), its keys (released) and its session.
func (f *FSM) DropNode(t NodeID, changes *[]Change) {
	if f.InRoster(t) && len(f.Roster) > 1 {
		kept := f.Roster[:0:0]
		for _, a := range f.Roster {
			if a != t {
				kept = append(kept, a)
			}
		}
		f.Roster = kept
		*changes = append(*changes, Change{Kind: ChRoster})
	}
	if f.Fed != nil {
		kept := f.Fed.Federates[:0:0]
		for _, fr := range f.Fed.Federates {
			if fr.Node == t {
				*changes = append(*changes, Change{Kind: ChFederateResigned, Federate: fr, Lost: true})
				f.Fed.Lost = append(f.Fed.Lost, fr.Handle)
				if n := len(f.Fed.Lost); n > MaxLostKept {
					f.Fed.Lost = append(f.Fed.Lost[:0:0], f.Fed.Lost[n-MaxLostKept:]...)
				}
				continue
			}
			kept = append(kept, fr)
		}
		f.Fed.Federates = kept
	}
	var held []string
	for k, e := range f.Keys {
		if e.Holder == t {
			held = append(held, k)
		}
	}
	sort.Strings(held)
	for _, k := range held {
		e := KeyEntry{Version: f.Keys[k].Version + 1}
		f.Keys[k] = e
		*changes = append(*changes, Change{Kind: ChKey, Key: k, Entry: e})
	}
	delete(f.Sessions, t.Key())
	if t.Key() != "" && !slices.Contains(f.Removed, t.Key()) {
		f.Removed = append(f.Removed, t.Key())
		if n := len(f.Removed); n > maxRemovedKept {
			f.Removed = append(f.Removed[:0:0], f.Removed[n-maxRemovedKept:]...)
		}
	}
	if f.Gone == nil {
		f.Gone = goneMap{}
	}
	f.Gone[t.Key()] = f.Index
}

// notJoined returns the first handle of hs that no joined federate has.
func (f *FSM) notJoined(hs []uint64) (uint64, bool) {
	for _, h := range hs {
		if f.Fed == nil || !slices.ContainsFunc(f.Fed.Federates, func(fr FederateRec) bool { return fr.Handle == h }) {
			return h, true
		}
	}
	return 0, false
}

func (fr *FederationRec) nameInUse(name string) bool {
	for _, x := range fr.Federates {
		if x.Name == name {
			return true
		}
	}
	return false
}

// generateName makes a federate name from its type and handle that no
// joined federate uses.
func (fr *FederationRec) generateName(typ string, h uint64) string {
	base := typ
	if base == "" {
		base = "federate"
	}
	name := base + "-" + strconv.FormatUint(h, 10)
	for fr.nameInUse(name) {
		name += "'"
	}
	return name
}

func sortIDs(ids []NodeID) {
	sort.Slice(ids, func(i, j int) bool { return ids[i].less(ids[j]) })
}

// Quorum is the number of acceptors out of n that make a majority.
func Quorum(n int) int { return n/2 + 1 }
