package gossip

import (
	"strconv"
	"sync"
)

// EventKind tells what an Event reports.
type EventKind int

const (
	// EventJoined: a member appeared (this node's own appearance included).
	EventJoined EventKind = iota + 1
	// EventUpdated: a member's metadata changed.
	EventUpdated
	// EventLeft: a member left gracefully.
	EventLeft
	// EventFailed: failure detection declared a member dead. For HLA this
	// is "federate lost"; Federate names the federate it had joined.
	EventFailed
	// EventStateChanged: another member changed one of its replicated
	// state keys (Value nil: deleted; Version the owner's write).
	EventStateChanged
	// EventKeyChanged: a register key was taken, swapped or freed (Entry).
	EventKeyChanged
	// EventFederationCreated: the federation execution was created;
	// Modules are its modules.
	EventFederationCreated
	// EventFederationDestroyed: the federation execution was destroyed.
	EventFederationDestroyed
	// EventFederateJoined: a federate joined (Federate).
	EventFederateJoined
	// EventFederateResigned: a federate resigned (Federate); Lost says its
	// node was lost rather than resigning itself.
	EventFederateResigned
	// EventFederationModulesChanged: a joiner added FOM modules to the
	// federation record; Modules is the new full list, so every member
	// can extend its FDD. It comes before the joiner's
	// EventFederateJoined.
	EventFederationModulesChanged
)

var eventKindNames = [...]string{
	EventJoined:                   "joined",
	EventUpdated:                  "updated",
	EventLeft:                     "left",
	EventFailed:                   "failed",
	EventStateChanged:             "state-changed",
	EventKeyChanged:               "key-changed",
	EventFederationCreated:        "federation-created",
	EventFederationDestroyed:      "federation-destroyed",
	EventFederateJoined:           "federate-joined",
	EventFederateResigned:         "federate-resigned",
	EventFederationModulesChanged: "federation-modules-changed",
}

func (k EventKind) String() string { return enumName(k, eventKindNames[:], "EventKind") }

// enumName is names[v], or "typ(v)" when v has no name there.
func enumName[E ~int](v E, names []string, typ string) string {
	if v >= 0 && int(v) < len(names) && names[v] != "" {
		return names[v]
	}
	return typ + "(" + strconv.Itoa(int(v)) + ")"
}

// Event is one change seen by this node. Which fields are set depends on
// Kind; see the EventKind constants.
type Event struct {
	Kind EventKind
	// Member is the member concerned: for membership events the member
	// itself; for EventStateChanged the owner of the key (Name only when
	// the owner is not a known member).
	Member Member
	// Key is the replicated-state key (EventStateChanged) or register key
	// (EventKeyChanged).
	Key string
	// Value is the new replicated-state value; nil when deleted.
	Value []byte
	// Version is the owner's version of the write (EventStateChanged):
	// it grows with every write of that owner's process, so of two values
	// of one key the higher version is the newer. A restarted owner (a
	// new process under the same name) starts again from 1; the keys of
	// its older process are reported deleted with Version 0.
	Version uint64
	// Entry is the register entry after the change (EventKeyChanged).
	Entry Entry
	// Federate is the federate concerned (EventFederateJoined,
	// EventFederateResigned; for EventLeft and EventFailed the federate
	// the member had joined, if any).
	Federate FederateInfo
	// Lost is set on EventFederateResigned when the federate was removed
	// because its node was lost or left without resigning.
	Lost bool
	// Modules is the federation's full module list
	// (EventFederationCreated, EventFederationModulesChanged). The
	// Contents are the receiver's to keep.
	Modules []Module
}

// eventQueue is an unbounded FIFO, so that producers (memberlist's
// goroutines among them) never block.
type eventQueue struct {
	mu     sync.Mutex
	items  []Event
	signal chan struct{} // capacity 1: "there may be items"
}

func newEventQueue() *eventQueue { return &eventQueue{signal: make(chan struct{}, 1)} }

func (q *eventQueue) push(evs ...Event) {
	if len(evs) == 0 {
		return
	}
	q.mu.Lock()
	q.items = append(q.items, evs...)
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

func (q *eventQueue) pop() (Event, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) == 0 {
		return Event{}, false
	}
	ev := q.items[0]
	q.items[0] = Event{}
	q.items = q.items[1:]
	return ev, true
}

// funcQueue is an unbounded FIFO of closures for the loop goroutine.
type funcQueue struct {
	mu     sync.Mutex
	items  []func()
	signal chan struct{}
}

func newFuncQueue() *funcQueue { return &funcQueue{signal: make(chan struct{}, 1)} }

func (q *funcQueue) push(f func()) {
	q.mu.Lock()
	q.items = append(q.items, f)
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

func (q *funcQueue) drain() []func() {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.items
	q.items = nil
	return out
}
