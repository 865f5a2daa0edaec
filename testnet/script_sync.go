package testnet

import (
	"strings"

	"github.com/meshrti/meshrti/peer"
)

// Synchronization points, and federation save and restore.

func (s *simulation) sync(c *call) (*serviceError, error) {
	label, err := c.a.need("label")
	if err != nil {
		return nil, err
	}
	tag, _ := c.a.get("tag")
	if set, ok := c.a.get("set"); ok {
		var hs []peer.FederateHandle
		for _, n := range strings.Split(set, ",") {
			j, err := s.federate(n)
			if err != nil {
				return nil, err
			}
			hs = append(hs, s.c.Feds[j].Handle())
		}
		return fail(c.name, c.f.RegisterFederationSynchronizationPointWithSet(label, []byte(tag), hs...))
	}
	return fail(c.name, c.f.RegisterFederationSynchronizationPoint(label, []byte(tag)))
}

func (s *simulation) achieve(c *call) (*serviceError, error) {
	label, err := c.a.need("label")
	if err != nil {
		return nil, err
	}
	return fail(c.name, c.f.SynchronizationPointAchieved(label, !c.failed))
}

func (s *simulation) save(c *call) (*serviceError, error) {
	label, err := c.a.need("label")
	if err != nil {
		return nil, err
	}
	if t, ok, err := c.a.float("t"); err != nil {
		return nil, err
	} else if ok {
		return fail(c.name, c.f.RequestFederationSaveWithTime(label, peer.Float64Time(t)))
	}
	return fail(c.name, c.f.RequestFederationSave(label))
}

func (s *simulation) restore(c *call) (*serviceError, error) {
	label, err := c.a.need("label")
	if err != nil {
		return nil, err
	}
	return fail(c.name, c.f.RequestFederationRestore(label))
}
