package core

import (
	"fmt"
	"slices"

	"github.com/meshrti/meshrti/peer/hla"
)

// Object instance names (1516.1-2010 §6.2-§6.7): a name is reserved by
// taking the key objectName/NAME in the federation's register, so two
// federates never both hold one. A multiple reservation takes every name
// or none: the names it got are given back when one was refused.

// multiReservation is a reserveMultipleObjectInstanceName under way.
type multiReservation struct {
	names   []string
	waiting int
	held    []string
	failed  bool
}

// ReleaseObjectInstanceName (§6.4) gives back a name this federate
// reserved and has not used. ErrObjectInstanceNameNotReserved otherwise.
func (c *Core) ReleaseObjectInstanceName(name string) error {
	if !c.objects.reserved[name] {
		return fmt.Errorf("%w: %q", hla.ErrObjectInstanceNameNotReserved, name)
	}
	c.releaseName(name)
	return nil
}

func (c *Core) releaseName(name string) {
	delete(c.objects.reserved, name)
	c.startOp(Op{Kind: OpRelease, Key: nameKey(name)}, func(OpResult) {})
}

// ReserveMultipleObjectInstanceName (§6.5) asks for every name of names
// at once: MultipleObjectInstanceNameReservationSucceeded when all are
// reserved for this federate, ...Failed (and none is) otherwise. Errors:
// ErrNameSetWasEmpty, ErrIllegalName.
func (c *Core) ReserveMultipleObjectInstanceName(names []string) error {
	if len(names) == 0 {
		return hla.ErrNameSetWasEmpty
	}
	set := slices.Clone(names)
	slices.Sort(set)
	set = slices.Compact(set)
	for _, n := range set {
		if err := CheckName(n); err != nil {
			return err
		}
	}
	r := &multiReservation{names: set, waiting: len(set)}
	c.objects.multi = append(c.objects.multi, r)
	for _, n := range set {
		c.startOp(Op{Kind: OpAcquire, Key: nameKey(n)}, func(res OpResult) {
			r.waiting--
			if res.Err == nil && res.Held {
				r.held = append(r.held, n)
			} else {
				r.failed = true
			}
			if r.waiting > 0 {
				return
			}
			c.objects.multi = slices.DeleteFunc(c.objects.multi, func(x *multiReservation) bool { return x == r })
			if r.failed {
				// The failure is told once the names it got are free
				// again, so that a retry after it finds them free.
				left := len(r.held)
				if left == 0 {
					c.push(hla.MultipleObjectInstanceNameReservationFailed{Names: r.names})
				}
				for _, h := range r.held {
					c.startOp(Op{Kind: OpRelease, Key: nameKey(h)}, func(OpResult) {
						if left--; left == 0 {
							c.push(hla.MultipleObjectInstanceNameReservationFailed{Names: r.names})
						}
					})
				}
				return
			}
			for _, h := range r.held {
				c.objects.reserved[h] = true
			}
			c.push(hla.MultipleObjectInstanceNameReservationSucceeded{Names: r.names})
		})
	}
	return nil
}

// ReleaseMultipleObjectInstanceName (§6.7) gives back names this
// federate reserved; ErrObjectInstanceNameNotReserved, and nothing is
// given back, when one of them is not.
func (c *Core) ReleaseMultipleObjectInstanceName(names []string) error {
	for _, n := range names {
		if !c.objects.reserved[n] {
			return fmt.Errorf("%w: %q", hla.ErrObjectInstanceNameNotReserved, n)
		}
	}
	for _, n := range names {
		c.releaseName(n)
	}
	return nil
}
