package testnet

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer"
)

// Federation management: joining, resigning, and the federation-wide
// services a connected non-member calls.

// federation starts the simulated federation; a script that does not
// start it gets the defaults at its first command.
func (s *simulation) federation(c *call) (*serviceError, error) {
	if s.c != nil {
		return nil, errors.New("federation must come first, once")
	}
	return nil, s.startFederation(c.a)
}

func (s *simulation) startFederation(a *args) error {
	seed, _, err := a.float("seed")
	if err != nil {
		return err
	}
	if v, ok := a.get("quiet"); ok {
		if s.quiet, err = time.ParseDuration(v); err != nil {
			return err
		}
	}
	f, err := parseFaults(a)
	if err != nil {
		return err
	}
	d, err := FOM()
	if err != nil {
		return err
	}
	cfg := Config{
		Federation: uniqueName("script", int64(seed)),
		FOM:        []*fomxml.Document{d}, Seed: int64(seed), Faults: f, Tick: 2 * time.Millisecond,
		Deterministic: !realTime(s.ctx), WaitLimit: maxWait,
	}
	if s.c, err = newCluster(cfg); err != nil {
		return err
	}
	s.fdd, err = fomxml.Merge(d)
	return err
}

func (s *simulation) join(c *call) (*serviceError, error) {
	if len(c.a.pos) == 0 {
		return nil, c.usageError()
	}
	for _, n := range c.a.pos {
		if _, dup := s.fedIdx[n]; dup {
			return nil, fmt.Errorf("federate %s joined twice", n)
		}
		f, err := s.c.Add(s.ctx, n)
		if err != nil {
			return fail(n, err)
		}
		s.fedIdx[n] = len(s.c.Feds) - 1
		s.fedName[f.Handle()] = n
		s.printed = append(s.printed, 0)
		// Let the joins reach every member in script order.
		s.waitQuiet(s.quiet)
	}
	return nil, nil
}

func (s *simulation) resign(c *call) (*serviceError, error) {
	action := peer.DeleteObjects
	if v, ok := c.a.get("action"); ok {
		var err error
		if action, err = choose("action", v, []string{"delete", "divest", "none"}, peer.DeleteObjects, peer.UnconditionallyDivestAttributes, peer.NoAction); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(s.ctx, 5*time.Second)
	defer cancel()
	return fail(c.name, c.f.ResignFederationExecution(ctx, action))
}

// nonMember is the configuration of a connected non-member, which calls
// the federation-wide services.
func (s *simulation) nonMember() peer.Config {
	return peer.Config{Federation: s.c.Federation, Control: s.c.Registry.Control(s.c.Federation)}
}

// create creates the federation as a connected non-member: with the
// test FOM, time=integer for HLAinteger64Time, and mim=KIND for
// createFederationExecutionWithMIM with one of the MIMs testMIM makes.
func (s *simulation) create(c *call) (*serviceError, error) {
	a, cfg := c.a, s.nonMember()
	d, err := FOM()
	if err != nil {
		return nil, err
	}
	cfg.FOMModules = []*fomxml.Document{d}
	if v, ok := a.get("modules"); ok {
		if v != "clash" {
			return nil, c.usageError()
		}
		m, err := fomxml.ParseBytes("mim-clash.xml", []byte(mimClashModule))
		if err != nil {
			return nil, err
		}
		cfg.FOMModules = append(cfg.FOMModules, m)
	}
	if v, ok := a.get("time"); ok {
		if v != "integer" && v != "float" {
			return nil, c.usageError()
		}
		if v == "integer" {
			cfg.TimeRepresentation = peer.HLAinteger64Time
		}
	}
	kind, ok := a.get("mim")
	if !ok {
		return fail("federation", peer.CreateFederationExecution(s.ctx, cfg))
	}
	if err := testMIM(&cfg, kind); err != nil {
		return nil, err
	}
	return fail("federation", peer.CreateFederationExecutionWithMIM(s.ctx, cfg))
}

func (s *simulation) destroy(c *call) (*serviceError, error) {
	return fail("federation", peer.DestroyFederationExecution(s.ctx, s.nonMember()))
}

// list asks as a non-member; "list NAME" asks as a member, whose answer
// is its callback.
func (s *simulation) list(c *call) (*serviceError, error) {
	if len(c.a.pos) == 1 {
		i, err := s.federate(c.a.pos[0])
		if err != nil {
			return nil, err
		}
		return fail(c.a.pos[0], s.c.Feds[i].ListFederationExecutions(s.ctx))
	}
	list, err := peer.ListFederationExecutions(s.ctx, s.nonMember())
	if err != nil {
		return fail("federation", err)
	}
	s.lines = append(s.lines, "federations: "+s.federations(list))
	return nil, nil
}

// modules prints the FOM modules of the federate's FDD, the MIM first.
func (s *simulation) modules(c *call) (*serviceError, error) {
	var files []string
	for _, m := range c.f.FDD().Modules {
		files = append(files, m.File)
	}
	s.lines = append(s.lines, fmt.Sprintf("%s: modules %s", c.name, strings.Join(files, " ")))
	return nil, nil
}

// exceptionNames runs "exception-names 1516e|hla4|off".
func (s *simulation) exceptionNames(c *call) (*serviceError, error) {
	if len(c.a.pos) != 1 {
		return nil, c.usageError()
	}
	switch v := c.a.pos[0]; v {
	case "1516e", "hla4":
		s.exceptions = v
	case "off":
		s.exceptions = ""
	default:
		return nil, c.usageError()
	}
	return nil, nil
}
