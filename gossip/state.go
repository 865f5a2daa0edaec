package gossip

import (
	"bytes"
	"sort"
)

// This file holds the replicated per-node state: every node owns a set of
// keys, and only the owner writes them. Each write carries the owner's
// (epoch, version); a receiver keeps, per (owner, key), the entry with the
// highest version, and drops everything of an owner's older epoch (an
// earlier process with the same name). Merging is commutative, associative
// and idempotent, so broadcasts, relays and push-pull exchanges may arrive
// in any order, any number of times.

// stateEntry is one owner's value for one key.
type stateEntry struct {
	Owner   string `msgpack:"o"`
	Epoch   uint64 `msgpack:"e"`
	Key     string `msgpack:"k"`
	Version uint64 `msgpack:"v"`
	Value   []byte `msgpack:"d"`
	Deleted bool   `msgpack:"x,omitempty"`
}

type ownerState struct {
	epoch   uint64
	entries map[string]stateEntry
}

// stateStore is one node's copy of everybody's state. It is not safe for
// concurrent use.
type stateStore struct {
	self    string
	epoch   uint64
	version uint64
	owners  map[string]*ownerState
}

func newStateStore(self string, epoch uint64) *stateStore {
	s := &stateStore{self: self, epoch: epoch, owners: map[string]*ownerState{}}
	s.owners[self] = &ownerState{epoch: epoch, entries: map[string]stateEntry{}}
	return s
}

// set writes one of our own keys (value nil deletes it) and returns the
// entry to spread.
func (s *stateStore) set(key string, value []byte) stateEntry {
	s.version++
	e := stateEntry{Owner: s.self, Epoch: s.epoch, Key: key, Version: s.version, Value: value, Deleted: value == nil}
	if e.Deleted {
		e.Value = nil
	}
	s.owners[s.self].entries[key] = e
	return e
}

// merge folds in an entry from elsewhere and returns what changed for
// this node's view: the entry itself, or deletions of an older epoch's
// keys followed by the entry. Our own keys are never taken from others.
func (s *stateStore) merge(e stateEntry) []stateEntry {
	if e.Owner == s.self || e.Owner == "" {
		return nil
	}
	var changed []stateEntry
	o := s.owners[e.Owner]
	switch {
	case o == nil:
		o = &ownerState{epoch: e.Epoch, entries: map[string]stateEntry{}}
		s.owners[e.Owner] = o
	case e.Epoch < o.epoch:
		return nil
	case e.Epoch > o.epoch:
		keys := make([]string, 0, len(o.entries))
		for k, old := range o.entries {
			if !old.Deleted && k != e.Key {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			changed = append(changed, stateEntry{Owner: e.Owner, Epoch: e.Epoch, Key: k, Deleted: true})
		}
		o.epoch = e.Epoch
		o.entries = map[string]stateEntry{}
	}
	if cur, ok := o.entries[e.Key]; ok && cur.Version >= e.Version {
		return changed
	}
	o.entries[e.Key] = e
	return append(changed, e)
}

// all returns every entry, for a push-pull exchange.
func (s *stateStore) all() []stateEntry {
	var out []stateEntry
	for _, o := range s.owners {
		for _, e := range o.entries {
			out = append(out, e)
		}
	}
	return out
}

// entries returns the live (not deleted) entries of the owners include
// accepts, sorted by owner then key. Values are copies.
func (s *stateStore) entries(include func(owner string) bool) []StateEntry {
	var out []StateEntry
	for name, o := range s.owners {
		if !include(name) {
			continue
		}
		for k, e := range o.entries {
			if !e.Deleted {
				out = append(out, StateEntry{Owner: name, Key: k, Value: bytes.Clone(e.Value), Version: e.Version})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Owner != out[j].Owner {
			return out[i].Owner < out[j].Owner
		}
		return out[i].Key < out[j].Key
	})
	return out
}

// view returns the live (not deleted) values of the owners include
// accepts.
func (s *stateStore) view(include func(owner string) bool) map[string]map[string][]byte {
	out := map[string]map[string][]byte{}
	for name, o := range s.owners {
		if !include(name) {
			continue
		}
		m := map[string][]byte{}
		for k, e := range o.entries {
			if !e.Deleted {
				m[k] = bytes.Clone(e.Value)
			}
		}
		if len(m) > 0 {
			out[name] = m
		}
	}
	return out
}
