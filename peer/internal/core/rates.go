package core

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/meshrti/meshrti/peer/hla"
)

// Update rates (1516.1-2010 §5.6, §10.13, §10.14): a subscription may
// name one of the FOM's update rate designators; this federate then
// reflects an instance's receive-order updates at most that many times a
// second: updates that come sooner are merged (the newest value of each
// attribute wins) and reflected when the instance's next slot comes, at
// a tick. Time-stamp-order updates are never held back: their order and
// the grants after them are the time core's.

// UpdateRateValue (§10.13) returns the rate, in updates per second, of
// the FOM's update rate designator; ErrInvalidUpdateRateDesignator for
// one the FOM lacks.
func (c *Core) UpdateRateValue(designator string) (float64, error) {
	for _, r := range c.fdd.UpdateRates {
		if r.Name == designator {
			return r.Rate, nil
		}
	}
	return 0, fmt.Errorf("%w: %q", hla.ErrInvalidUpdateRateDesignator, designator)
}

// UpdateRateValueForAttribute (§10.14) returns the rate at which this
// federate's subscription reflects attr of obj: 0 when it names none.
// Errors: ErrObjectInstanceNotKnown, ErrAttributeNotDefined.
func (c *Core) UpdateRateValueForAttribute(obj ObjectInstanceHandle, attr AttributeHandle) (float64, error) {
	in, ok := c.objects.inst[obj]
	if !ok {
		return 0, fmt.Errorf("%w: %v", hla.ErrObjectInstanceNotKnown, obj)
	}
	if _, ok := in.class.AttributeByHandle(attr); !ok {
		return 0, fmt.Errorf("%w: attribute %d of class %s", hla.ErrAttributeNotDefined, attr, in.class.QualifiedName)
	}
	rate := c.declared.subMode[in.known.Handle].rate
	if rate == "" {
		return 0, nil
	}
	return c.UpdateRateValue(rate)
}

// rateTicks is how many ticks apart an instance's reflections come at
// rate designator: at least one.
func (c *Core) rateTicks(rate string) int64 {
	v, err := c.UpdateRateValue(rate)
	if err != nil || v <= 0 || c.cfg.TickSeconds <= 0 {
		return 0
	}
	return max(1, int64(math.Ceil(1/(v*c.cfg.TickSeconds))))
}

// rateHold decides whether reflection ev waits for its instance's next
// slot; it then merges it into what waits.
func (c *Core) rateHold(ev hla.ReflectAttributeValues, rate string) bool {
	o := &c.objects
	every := c.rateTicks(rate)
	if every == 0 {
		return false
	}
	last, seen := o.rateLast[ev.Object]
	if held := o.rateHeld[ev.Object]; held != nil {
		maps.Copy(held.Values, ev.Values)
		held.Tag = ev.Tag
		return true
	}
	if !seen || o.ticks-last >= every {
		o.rateLast[ev.Object] = o.ticks
		return false
	}
	cp := ev
	cp.Values = maps.Clone(ev.Values)
	o.rateHeld[ev.Object] = &cp
	return true
}

// rateFlush reflects what waited whose slot has come, in handle order.
func (c *Core) rateFlush() {
	o := &c.objects
	var due []ObjectInstanceHandle
	for h := range o.rateHeld {
		in := o.inst[h]
		if in == nil {
			delete(o.rateHeld, h)
			continue
		}
		if o.ticks-o.rateLast[h] >= c.rateTicks(c.declared.subMode[in.known.Handle].rate) {
			due = append(due, h)
		}
	}
	slices.SortFunc(due, compareHandles)
	for _, h := range due {
		c.push(*o.rateHeld[h])
		delete(o.rateHeld, h)
		o.rateLast[h] = o.ticks
	}
}
