package testnet

import (
	"errors"
	"fmt"

	"github.com/meshrti/meshrti/peer"
)

// Time management: regulation and constraint, the advance requests,
// retraction, order types, asynchronous delivery, and the time queries.

func (s *simulation) enableRegulation(c *call) (*serviceError, error) {
	l, err := c.a.needFloat("lookahead")
	if err != nil {
		return nil, err
	}
	return fail(c.name, c.f.EnableTimeRegulation(peer.Float64Time(l)))
}

func (s *simulation) modifyLookahead(c *call) (*serviceError, error) {
	l, err := c.a.needFloat("lookahead")
	if err != nil {
		return nil, err
	}
	return fail(c.name, c.f.ModifyLookahead(peer.Float64Time(l)))
}

// advance runs the five requests to advance: advance, advance-available,
// next-message, next-message-available and flush-queue.
func (s *simulation) advance(c *call) (*serviceError, error) {
	t, err := c.a.needFloat("t")
	if err != nil {
		return nil, err
	}
	f := c.f
	req := map[string]func(peer.LogicalTime) error{
		"advance":                f.TimeAdvanceRequest,
		"advance-available":      f.TimeAdvanceRequestAvailable,
		"next-message":           f.NextMessageRequest,
		"next-message-available": f.NextMessageRequestAvailable,
		"flush-queue":            f.FlushQueueRequest,
	}[c.cmd.name]
	return fail(c.name, req(peer.Float64Time(t)))
}

func (s *simulation) retract(c *call) (*serviceError, error) {
	tag, err := c.a.need("tag")
	if err != nil {
		return nil, err
	}
	h, ok := s.handles[tag]
	if !ok {
		return nil, fmt.Errorf("no time-stamped message with tag %s was sent", tag)
	}
	return fail(c.name, c.f.Retract(h))
}

func (s *simulation) changeOrder(c *call) (*serviceError, error) {
	a, f, name := c.a, c.f, c.name
	ov, err := a.need("order")
	if err != nil {
		return nil, err
	}
	order, err := choose("order", ov, []string{"receive", "timestamp"}, peer.Receive, peer.TimeStamp)
	if err != nil {
		return nil, err
	}
	if _, isObj := a.vals["obj"]; !isObj {
		cn, err := a.need("class")
		if err != nil {
			return nil, errors.New("change-order needs obj=LABEL attrs=... or class=INTERACTION")
		}
		ic, ok := s.fdd.InteractionClass(cn)
		if !ok {
			return nil, fmt.Errorf("no interaction class %s", cn)
		}
		return fail(name, f.ChangeInteractionOrderType(ic.Handle, order))
	}
	o, hs, err := s.objectAndAttrs(a)
	if err != nil {
		return nil, err
	}
	return fail(name, f.ChangeAttributeOrderType(o.h, order, hs...))
}

func (s *simulation) async(c *call) (*serviceError, error) {
	return s.onOff(c, (*peer.Federate).EnableAsynchronousDelivery, (*peer.Federate).DisableAsynchronousDelivery)
}

// query prints the federate's time and GALT after the step's wait, so
// that it shows the settled state.
func (s *simulation) query(c *call) (*serviceError, error) {
	s.queries = append(s.queries, c.name)
	return nil, nil
}

// queryLITS prints the federate's LITS after the step's wait.
func (s *simulation) queryLITS(c *call) (*serviceError, error) {
	s.litsQueries = append(s.litsQueries, c.name)
	return nil, nil
}
