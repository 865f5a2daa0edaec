package gossip

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

// nodeID names one process: a memberlist node name plus the incarnation
// chosen when the process started. A restarted process has a new
// incarnation and so is a different acceptor, proposer and holder.
type nodeID struct {
	Name string `msgpack:"n"`
	Inc  uint64 `msgpack:"i"`
}

func (id nodeID) isZero() bool { return id.Name == "" && id.Inc == 0 }

func (id nodeID) less(o nodeID) bool {
	if id.Name != o.Name {
		return id.Name < o.Name
	}
	return id.Inc < o.Inc
}

// key is the string form used as a map key.
func (id nodeID) key() string { return id.Name + "#" + strconv.FormatUint(id.Inc, 16) }

func (id nodeID) String() string { return id.key() }

// opKind says what an op does to the state.
type opKind uint8

const (
	opAcquire        opKind = iota + 1 // take Key if it is free
	opRelease                          // free Key if the proposer holds it
	opCreateFed                        // create the federation execution
	opDestroyFed                       // destroy it when nobody is joined
	opJoinFed                          // join the proposer's federate
	opResignFed                        // resign the proposer's federate
	opAddAcceptor                      // add the proposer to the roster
	opLost                             // drop everything Node holds
	opCompareAndSwap                   // take Key with Value if its version is Expect
)

// op is one command in a log entry. Its effect depends only on the state
// it is applied to, so a proposer never has to read before it writes:
// "take this name if it is free" is decided where it lands in the log.
type op struct {
	Seq   uint64 `msgpack:"s"`
	Kind  opKind `msgpack:"k"`
	Key   string `msgpack:"y,omitempty"`
	Value []byte `msgpack:"v,omitempty"`
	Name  string `msgpack:"n,omitempty"`
	Type  string `msgpack:"t,omitempty"` // federate type (join); earlier versions put the FOM digest of a create here
	Node  nodeID `msgpack:"o,omitempty"`
	// Create and join: the time representation and the FOM modules;
	// join only: Known is how many modules of the record the joiner
	// checked its own against.
	Time    string      `msgpack:"r,omitempty"`
	Modules []moduleRec `msgpack:"m,omitempty"`
	Known   int         `msgpack:"w,omitempty"`
	// Create only: the MIM that replaces the standard one, none or one
	// (createFederationExecutionWithMIM).
	MIM []moduleRec `msgpack:"i,omitempty"`
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
func (o *op) size() int {
	n := 32 + 8*len(o.Joined) + len(o.Key) + len(o.Value) + len(o.Name) + len(o.Type) + len(o.Node.Name) + len(o.Time) + len(o.Cells) + len(o.DataPlane)
	for _, m := range append(o.Modules, o.MIM...) {
		n += 16 + len(m.Name) + len(m.Digest) + len(m.Content)
	}
	return n
}

// batch is the value of one log entry: the ops of one proposer, in the
// order it submitted them, and, when a leader proposed for others (More),
// their batches after it, each applied as its own proposer's.
type batch struct {
	Proposer nodeID  `msgpack:"p"`
	Ops      []op    `msgpack:"o"`
	More     []batch `msgpack:"m,omitempty"`
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

func encodeBatch(b batch) []byte {
	buf, err := msgpack.Marshal(&b)
	if err != nil {
		panic(fmt.Sprintf("gossip: encoding a log entry: %v", err))
	}
	return buf
}

// resultCode is the outcome of one op.
type resultCode uint8

const (
	codeOK resultCode = iota
	codeExists
	codeNotFound
	codeFederatesJoined
	codeNameInUse
	codeNotHolder
	codeAlreadyJoined
	codeNotJoined
	codeRosterFull
	codeUnknown // the op was applied but its result was compacted away
	codeTimeRepresentation
	codeModulesChanged
	codeModulesTooLarge
	codeVersionMismatch // compare-and-swap: the key's version was not the expected one
	codeNotMember       // acquire: a federate of Joined is not joined (Handle names it)
	codeClusterGone     // not decided, and never will be: every acceptor is gone (local, never in the log)
)

// opResult is what applying an op produced, for its proposer.
type opResult struct {
	Seq    uint64     `msgpack:"s"`
	Code   resultCode `msgpack:"c,omitempty"`
	Entry  keyEntry   `msgpack:"e,omitempty"`
	Handle uint64     `msgpack:"h,omitempty"`
	Name   string     `msgpack:"n,omitempty"`
}

// keyEntry is the register's value for one key. Version counts the
// changes of the key: version n is the value chosen for instance key@n.
type keyEntry struct {
	Version uint64 `msgpack:"v"`
	Value   []byte `msgpack:"d,omitempty"`
	Holder  nodeID `msgpack:"h,omitempty"` // zero: free
}

// federateRec is one joined federate.
type federateRec struct {
	Handle uint64 `msgpack:"h"`
	Name   string `msgpack:"n"`
	Type   string `msgpack:"t,omitempty"`
	Node   nodeID `msgpack:"o"`
}

// moduleRec is one FOM module of the federation record. Content is
// opaque here (the caller may compress it); Digest identifies it.
type moduleRec struct {
	Name    string `msgpack:"n,omitempty"`
	Digest  string `msgpack:"d"`
	Content []byte `msgpack:"c,omitempty"`
}

// federationRec is the federation execution, when it exists. Modules
// only grow while it exists; a module, once recorded, is never changed,
// so copies of the record may share the modules' Content.
type federationRec struct {
	Name string `msgpack:"n"`
	// "f" held a FOM digest in earlier versions; it is ignored.
	Creator    string        `msgpack:"c,omitempty"`
	NextHandle uint64        `msgpack:"x"`
	Federates  []federateRec `msgpack:"j,omitempty"` // by handle
	Time       string        `msgpack:"t,omitempty"` // time representation
	Modules    []moduleRec   `msgpack:"m,omitempty"` // in the order they were added
	MIM        []moduleRec   `msgpack:"i,omitempty"` // none (the standard MIM) or the creator's
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

// maxLostKept bounds federationRec.Lost: a node more than that many
// losses behind catches up on the rest as resignations.
const maxLostKept = 1024

func (f *federationRec) clone() *federationRec {
	if f == nil {
		return nil
	}
	c := *f
	c.Federates = append([]federateRec(nil), f.Federates...)
	c.Modules = append([]moduleRec(nil), f.Modules...)
	c.MIM = append([]moduleRec(nil), f.MIM...)
	c.Lost = append([]uint64(nil), f.Lost...)
	return &c
}

// newModules returns the modules of ms whose digest the record does not
// hold yet, without duplicates, in order.
func (f *federationRec) newModules(ms []moduleRec) []moduleRec {
	seen := make(map[string]bool, len(f.Modules)+len(ms))
	for _, m := range f.Modules {
		seen[m.Digest] = true
	}
	var out []moduleRec
	for _, m := range ms {
		if !seen[m.Digest] {
			seen[m.Digest] = true
			out = append(out, m)
		}
	}
	return out
}

// moduleBytes is the total Content size of ms.
func moduleBytes(ms []moduleRec) int {
	n := 0
	for _, m := range ms {
		n += len(m.Content)
	}
	return n
}

// session remembers, per proposer, the last op applied and the results of
// its last applied entry, so that an op is applied at most once and its
// proposer can still find its result after catching up from a snapshot.
type session struct {
	ID      nodeID     `msgpack:"i"`
	Seq     uint64     `msgpack:"s"`
	Results []opResult `msgpack:"r,omitempty"`
}

// fsm is the register's state after Index log entries.
type fsm struct {
	Log          string         `msgpack:"l"` // identity of the log (random, from the founder)
	Index        uint64         `msgpack:"x"` // entries applied = the next instance
	MaxAcceptors int            `msgpack:"m"`
	Roster       []nodeID       `msgpack:"r"` // acceptors of instance Index, sorted
	Keys         keyMap         `msgpack:"k"`
	Fed          *federationRec `msgpack:"f,omitempty"`
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

// newFSM returns the genesis state of a log founded by founder.
func newFSM(log string, founder nodeID, maxAcceptors int) *fsm {
	if maxAcceptors < 1 {
		maxAcceptors = 1
	}
	return &fsm{
		Log:          log,
		MaxAcceptors: maxAcceptors,
		Roster:       []nodeID{founder},
		Keys:         map[string]keyEntry{},
		Sessions:     map[string]session{},
	}
}

// keyMap and sessionMap encode their keys in order, so that equal states
// encode to equal snapshots (a seed replays byte for byte).
type (
	keyMap     map[string]keyEntry
	sessionMap map[string]session
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

// encode returns the snapshot of f; equal states give equal snapshots.
func (f *fsm) encode() []byte {
	buf, err := msgpack.Marshal(f)
	if err != nil {
		panic(fmt.Sprintf("gossip: encoding a snapshot: %v", err))
	}
	return buf
}

func decodeFSM(buf []byte) (*fsm, error) {
	var f fsm
	if err := decode(buf, &f); err != nil {
		return nil, fmt.Errorf("gossip: decoding a snapshot: %w", err)
	}
	if err := f.check(); err != nil {
		return nil, fmt.Errorf("gossip: decoding a snapshot: %w", err)
	}
	if f.Keys == nil {
		f.Keys = map[string]keyEntry{}
	}
	if f.Sessions == nil {
		f.Sessions = map[string]session{}
	}
	return &f, nil
}

// check reports a snapshot that no sequence of entries could produce in
// a way that would make the replica misbehave.
func (f *fsm) check() error {
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

func (f *fsm) inRoster(id nodeID) bool {
	for _, a := range f.Roster {
		if a == id {
			return true
		}
	}
	return false
}

// identities lists every process the state refers to (acceptors,
// federates, key holders, proposers with a session), sorted.
func (f *fsm) identities() []nodeID {
	seen := map[nodeID]bool{}
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
	out := make([]nodeID, 0, len(seen))
	for id := range seen {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].less(out[j]) })
	return out
}

// changeKind says what an applied op changed, for events and views.
type changeKind uint8

const (
	chKey changeKind = iota + 1
	chFedCreated
	chFedDestroyed
	chFederateJoined
	chFederateResigned
	chRoster
	chSnapshot   // the whole state was replaced
	chFedModules // the federation's module list grew
)

type change struct {
	Kind     changeKind
	Key      string
	Entry    keyEntry
	Federate federateRec
	Lost     bool
	Modules  []moduleRec // chFedCreated, chFedModules: the full list after the change (shared, read-only)
}

// apply applies one chosen entry and advances Index. It returns the
// entry's first proposer, the results of that proposer's ops that took
// effect, and what changed (applyAll has every proposer's results).
func (f *fsm) apply(value []byte) (nodeID, []opResult, []change) {
	ps, changes := f.applyAll(value)
	if len(ps) == 0 {
		return nodeID{}, nil, changes
	}
	return ps[0].proposer, ps[0].results, changes
}

// applied is what one proposer's batch of an entry produced.
type applied struct {
	proposer nodeID
	results  []opResult
	last     uint64 // the highest op sequence number in its batch
}

// applyAll applies one chosen entry and advances Index. It returns, per
// batch in the entry, the proposer and the results of its ops that took
// effect (duplicates are skipped), and what changed. An entry that does
// not decode is an empty entry on every node alike.
func (f *fsm) applyAll(value []byte) ([]applied, []change) {
	f.Index++
	var b batch
	if err := decode(value, &b); err != nil {
		return nil, nil
	}
	var (
		out     []applied
		changes []change
	)
	more := b.More
	b.More = nil
	for _, sb := range append([]batch{b}, more...) {
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
func (f *fsm) applyBatch(b batch, changes *[]change) []opResult {
	sk := b.Proposer.key()
	_, wasGone := f.Gone[sk]
	removed := slices.Contains(f.Removed, sk)
	if b.Base != 0 && (wasGone || f.Index > b.Base+fwdWindow) {
		return nil // a stale forwarded copy: its origin sends again
	}
	s := f.Sessions[sk]
	s.ID = b.Proposer
	var (
		res      []opResult
		departed bool
	)
	for _, o := range b.Ops {
		if o.Seq <= s.Seq {
			continue // applied before
		}
		if removed && o.Kind == opLost && o.Node != b.Proposer {
			// A node the federation removed says another is gone: it
			// judged from the view of a node cut off (it queued this
			// before it learned of its own removal), and is no member
			// to judge. Its other ops apply as any node's.
			res = append(res, opResult{Seq: o.Seq})
			s.Seq = o.Seq
			continue
		}
		r := f.applyOp(b.Proposer, o, changes)
		r.Seq = o.Seq
		res = append(res, r)
		s.Seq = o.Seq
		if o.Kind == opLost && o.Node == b.Proposer {
			departed = true
		}
	}
	if len(res) > 0 && !departed {
		s.Results = res
		f.Sessions[sk] = s
	}
	return res
}

func (f *fsm) applyOp(p nodeID, o op, changes *[]change) opResult {
	switch o.Kind {
	case opAcquire:
		e := f.Keys[o.Key]
		if h, ok := f.notJoined(o.Joined); ok {
			return opResult{Code: codeNotMember, Entry: e, Handle: h}
		}
		if e.Holder.isZero() {
			e.Version++
			e.Holder = p
			e.Value = o.Value
			f.Keys[o.Key] = e
			*changes = append(*changes, change{Kind: chKey, Key: o.Key, Entry: e})
		}
		return opResult{Entry: e}

	case opCompareAndSwap:
		// Decided where it lands, like opAcquire: of two swaps expecting
		// the same version, the first in log order changes it and the
		// second finds it changed. A held key is taken from its holder.
		e := f.Keys[o.Key]
		if e.Version != o.Expect {
			return opResult{Code: codeVersionMismatch, Entry: e}
		}
		e = keyEntry{Version: e.Version + 1, Value: o.Value, Holder: p}
		f.Keys[o.Key] = e
		*changes = append(*changes, change{Kind: chKey, Key: o.Key, Entry: e})
		return opResult{Entry: e}

	case opRelease:
		e, ok := f.Keys[o.Key]
		switch {
		case !ok || e.Holder.isZero():
			return opResult{Entry: e}
		case e.Holder != p:
			return opResult{Code: codeNotHolder, Entry: e}
		}
		e = keyEntry{Version: e.Version + 1}
		f.Keys[o.Key] = e
		*changes = append(*changes, change{Kind: chKey, Key: o.Key, Entry: e})
		return opResult{Entry: e}

	case opCreateFed:
		if f.Fed != nil {
			return opResult{Code: codeExists, Name: f.Fed.Name}
		}
		fed := &federationRec{Name: o.Name, Creator: p.Name, NextHandle: 1, Time: o.Time, Cells: o.Cells, DataPlane: o.DataPlane}
		fed.Modules = fed.newModules(o.Modules)
		if len(o.MIM) > 0 {
			fed.MIM = o.MIM[:1:1]
		}
		if moduleBytes(fed.Modules)+moduleBytes(fed.MIM)+len(fed.Cells) > maxModuleBytes {
			return opResult{Code: codeModulesTooLarge}
		}
		f.Fed = fed
		*changes = append(*changes, change{Kind: chFedCreated, Modules: fed.Modules[:len(fed.Modules):len(fed.Modules)]})
		return opResult{Name: o.Name}

	case opDestroyFed:
		switch {
		case f.Fed == nil:
			return opResult{Code: codeNotFound}
		case len(f.Fed.Federates) > 0:
			return opResult{Code: codeFederatesJoined}
		}
		f.Fed = nil
		*changes = append(*changes, change{Kind: chFedDestroyed})
		return opResult{}

	case opJoinFed:
		if f.Fed == nil {
			return opResult{Code: codeNotFound}
		}
		for _, fr := range f.Fed.Federates {
			if fr.Node == p {
				return opResult{Code: codeAlreadyJoined, Handle: fr.Handle, Name: fr.Name}
			}
		}
		if o.Time != "" && f.Fed.Time != "" && o.Time != f.Fed.Time {
			return opResult{Code: codeTimeRepresentation}
		}
		// Compare-and-set on the module list: a joiner that adds modules
		// checked them against the first Known modules of the record, so
		// they may go in only if nobody added any since.
		added := f.Fed.newModules(o.Modules)
		if len(added) > 0 && o.Known != len(f.Fed.Modules) {
			return opResult{Code: codeModulesChanged}
		}
		h := f.Fed.NextHandle
		name := o.Name
		if name == "" {
			name = f.Fed.generateName(o.Type, h)
		} else if f.Fed.nameInUse(name) {
			return opResult{Code: codeNameInUse}
		}
		if len(added) > 0 {
			if moduleBytes(f.Fed.Modules)+moduleBytes(f.Fed.MIM)+len(f.Fed.Cells)+moduleBytes(added) > maxModuleBytes {
				return opResult{Code: codeModulesTooLarge}
			}
			f.Fed.Modules = append(f.Fed.Modules, added...)
			n := len(f.Fed.Modules)
			*changes = append(*changes, change{Kind: chFedModules, Modules: f.Fed.Modules[:n:n]})
		}
		f.Fed.NextHandle++
		fr := federateRec{Handle: h, Name: name, Type: o.Type, Node: p}
		f.Fed.Federates = append(f.Fed.Federates, fr)
		*changes = append(*changes, change{Kind: chFederateJoined, Federate: fr})
		return opResult{Handle: h, Name: name}

	case opResignFed:
		if f.Fed != nil {
			for i, fr := range f.Fed.Federates {
				if fr.Node == p {
					f.Fed.Federates = append(f.Fed.Federates[:i:i], f.Fed.Federates[i+1:]...)
					*changes = append(*changes, change{Kind: chFederateResigned, Federate: fr})
					return opResult{Handle: fr.Handle, Name: fr.Name}
				}
			}
		}
		return opResult{Code: codeNotJoined}

	case opAddAcceptor:
		if f.inRoster(p) {
			return opResult{}
		}
		// An older incarnation of the same node is gone for good.
		kept := f.Roster[:0:0]
		for _, a := range f.Roster {
			if a.Name != p.Name {
				kept = append(kept, a)
			}
		}
		if len(kept) >= f.MaxAcceptors {
			return opResult{Code: codeRosterFull}
		}
		if len(kept) == 0 {
			// Cannot happen (p's own old incarnation was the only acceptor
			// and it chose this entry); keep the roster non-empty anyway.
			return opResult{Code: codeRosterFull}
		}
		f.Roster = append(kept, p)
		sortIDs(f.Roster)
		*changes = append(*changes, change{Kind: chRoster})
		return opResult{}

	case opLost:
		f.dropNode(o.Node, changes)
		return opResult{}
	}
	return opResult{Code: codeUnknown}
}

// dropNode removes everything t holds: its acceptor seat (unless it is
// the last one), its federate (lost), its keys (released) and its session.
func (f *fsm) dropNode(t nodeID, changes *[]change) {
	if f.inRoster(t) && len(f.Roster) > 1 {
		kept := f.Roster[:0:0]
		for _, a := range f.Roster {
			if a != t {
				kept = append(kept, a)
			}
		}
		f.Roster = kept
		*changes = append(*changes, change{Kind: chRoster})
	}
	if f.Fed != nil {
		kept := f.Fed.Federates[:0:0]
		for _, fr := range f.Fed.Federates {
			if fr.Node == t {
				*changes = append(*changes, change{Kind: chFederateResigned, Federate: fr, Lost: true})
				f.Fed.Lost = append(f.Fed.Lost, fr.Handle)
				if n := len(f.Fed.Lost); n > maxLostKept {
					f.Fed.Lost = append(f.Fed.Lost[:0:0], f.Fed.Lost[n-maxLostKept:]...)
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
		e := keyEntry{Version: f.Keys[k].Version + 1}
		f.Keys[k] = e
		*changes = append(*changes, change{Kind: chKey, Key: k, Entry: e})
	}
	delete(f.Sessions, t.key())
	if t.key() != "" && !slices.Contains(f.Removed, t.key()) {
		f.Removed = append(f.Removed, t.key())
		if n := len(f.Removed); n > maxRemovedKept {
			f.Removed = append(f.Removed[:0:0], f.Removed[n-maxRemovedKept:]...)
		}
	}
	if f.Gone == nil {
		f.Gone = goneMap{}
	}
	f.Gone[t.key()] = f.Index
}

// notJoined returns the first handle of hs that no joined federate has.
func (f *fsm) notJoined(hs []uint64) (uint64, bool) {
	for _, h := range hs {
		if f.Fed == nil || !slices.ContainsFunc(f.Fed.Federates, func(fr federateRec) bool { return fr.Handle == h }) {
			return h, true
		}
	}
	return 0, false
}

func (fr *federationRec) nameInUse(name string) bool {
	for _, x := range fr.Federates {
		if x.Name == name {
			return true
		}
	}
	return false
}

// generateName makes a federate name from its type and handle that no
// joined federate uses.
func (fr *federationRec) generateName(typ string, h uint64) string {
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

func sortIDs(ids []nodeID) {
	sort.Slice(ids, func(i, j int) bool { return ids[i].less(ids[j]) })
}

// quorum is the number of acceptors out of n that make a majority.
func quorum(n int) int { return n/2 + 1 }
