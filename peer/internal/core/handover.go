package core

import (
	"fmt"

	"github.com/meshrti/meshrti/peer/hla"
)

// The hand-over of the callbacks that end a pending state (1516.1 §8's
// state charts): a time advance ends with TimeAdvanceGrant, an enable
// with TimeRegulationEnabled or TimeConstrainedEnabled; a federate is
// in a save or a restore (§4.2's state chart) once it has
// InitiateFederateSave or InitiateFederateRestore. The time core
// decides when each may be issued, and the core queues it then; but the
// federate leaves the pending state only when it has the callback: when
// Next returns it, or when a Federate Protocol client acknowledges it.
// Until then the services answer as in the pending state (a second
// TimeAdvanceRequest is ErrInTimeAdvancingState, EnableTimeRegulation is
// ErrRequestForTimeRegulationPending, QueryLogicalTime the time before
// the grant).
//
// The driver counts these callbacks as they are handed over (EndsPending
// says which) and tells the core the count (HandedOver) before each
// service. The core numbers them as it queues them, in the same order,
// so the n-th handed over is the n-th queued.

// EndsPending reports whether ev is a callback that ends a pending state
// of the federate's when it is handed over.
func EndsPending(ev Event) bool {
	switch ev.(type) {
	case hla.TimeAdvanceGrant, hla.TimeRegulationEnabled, hla.TimeConstrainedEnabled,
		hla.InitiateFederateSave, hla.InitiateFederateRestore:
		return true
	}
	return false
}

// unseenKind is which pending state a queued callback ends.
type unseenKind uint8

const (
	unseenGrant unseenKind = iota
	unseenRegulation
	unseenConstrained
	unseenSave    // InitiateFederateSave: the save is not initiated for the federate yet
	unseenRestore // InitiateFederateRestore: likewise the restore
)

// unseen is a callback that ends a pending state, queued and not yet
// handed over.
type unseen struct {
	n    uint64 // its number among the callbacks EndsPending accepts, from 1
	kind unseenKind
	t    float64 // the federate's time once it has it
}

// handover is the bookkeeping: the callbacks queued (queued counts them)
// and not yet handed over (pend, in order), and the federate's logical
// time as it has seen it while any is pending.
type handover struct {
	queued uint64
	handed uint64
	pend   []unseen
	time   float64
}

// HandedOver tells the core that the first n callbacks EndsPending
// accepts have been handed over to the federate. Counts only grow; a
// smaller n than before changes nothing.
func (c *Core) HandedOver(n uint64) {
	h := &c.handover
	if n <= h.handed {
		return
	}
	h.handed = n
	i := 0
	for i < len(h.pend) && h.pend[i].n <= n {
		h.time = h.pend[i].t
		i++
	}
	if i > 0 {
		k := copy(h.pend, h.pend[i:])
		h.pend = h.pend[:k]
	}
}

// queueEnding queues ev, which ends a pending state of kind and brings
// the federate to time t.
func (c *Core) queueEnding(ev Event, kind unseenKind, t float64) {
	h := &c.handover
	h.queued++
	c.push(ev)
	if h.queued <= h.handed {
		return // cannot happen: the driver counts only what was queued
	}
	h.pend = append(h.pend, unseen{n: h.queued, kind: kind, t: t})
}

// queueEndingAt queues ev, which ends a pending state of kind and leaves
// the federate's time as it is: the time it will have seen once the
// callbacks before ev are handed over.
func (c *Core) queueEndingAt(ev Event, kind unseenKind) {
	t := c.timeCore.Time()
	if n := len(c.handover.pend); n > 0 {
		t = c.handover.pend[n-1].t
	} else {
		c.handover.time = t
	}
	c.queueEnding(ev, kind, t)
}

// seeTime notes the federate's logical time while nothing is pending: a
// callback queued next is measured from it. Called before the time core
// decides anything.
func (c *Core) seeTime() {
	if len(c.handover.pend) == 0 {
		c.handover.time = c.timeCore.Time()
	}
}

// forgetUnseen drops the pending hand-overs: a restore replaced the
// state they lead to. Their callbacks, still queued, are counted when
// handed over and change nothing.
func (c *Core) forgetUnseen() { c.handover.pend = c.handover.pend[:0] }

// unseenHas reports whether a callback of kind is queued and not yet
// handed over.
func (c *Core) unseenHas(kind unseenKind) bool {
	for _, u := range c.handover.pend {
		if u.kind == kind {
			return true
		}
	}
	return false
}

// shownTime is the federate's logical time as it has seen it.
func (c *Core) shownTime() float64 {
	if len(c.handover.pend) > 0 {
		return c.handover.time
	}
	return c.timeCore.Time()
}

// pendingError is the error a time service gets while a callback that
// ends a pending state has not been handed over: advancing says the
// service is refused in the time advancing state, reg and cons that it
// is refused while an enable of regulation or constraint is pending.
func (c *Core) pendingError(advancing, reg, cons bool) error {
	if len(c.handover.pend) == 0 {
		return nil
	}
	switch {
	case advancing && c.unseenHas(unseenGrant):
		return fmt.Errorf("%w: the TimeAdvanceGrant is queued, not yet handed to the federate", hla.ErrInTimeAdvancingState)
	case reg && c.unseenHas(unseenRegulation):
		return fmt.Errorf("%w: TimeRegulationEnabled is queued, not yet handed to the federate", hla.ErrRequestForTimeRegulationPending)
	case cons && c.unseenHas(unseenConstrained):
		return fmt.Errorf("%w: TimeConstrainedEnabled is queued, not yet handed to the federate", hla.ErrRequestForTimeConstrainedPending)
	}
	return nil
}

// notYetEnabled is err for a service that needs regulation or
// constraint while the callback that enables it waits to be handed over.
func notYetEnabled(err error, callback string) error {
	return fmt.Errorf("%w: %s is queued, not yet handed to the federate", err, callback)
}
