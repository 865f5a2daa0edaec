package testnet

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The harness's own commands: the simulated network and hosts, and the
// step's wait.

func (s *simulation) wait(c *call) (*serviceError, error) {
	a := c.a
	if len(a.pos) > 1 {
		return nil, c.usageError()
	}
	if t, ok, err := a.float("grant"); err != nil {
		return nil, err
	} else if ok {
		if len(a.pos) != 1 {
			return nil, errors.New("wait grant=T needs a federate name")
		}
		i, err := s.federate(a.pos[0])
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(s.ctx, maxWait)
		defer cancel()
		_ = s.c.Logs[i].WaitFor(ctx, Granted(t)) // a timeout shows as a missing grant
	}
	if v, ok := a.get("quiet"); ok {
		d, err := time.ParseDuration(v)
		if err != nil {
			return nil, err
		}
		*c.quiet = d
	}
	return nil, nil
}

func (s *simulation) partition(c *call) (*serviceError, error) {
	var groups [][]string
	var cur []string
	for _, p := range c.a.pos {
		if p == "/" {
			groups = append(groups, cur)
			cur = nil
			continue
		}
		for _, n := range strings.Split(p, ",") {
			if n != "" {
				if _, err := s.federate(n); err != nil {
					return nil, err
				}
				cur = append(cur, n)
			}
		}
	}
	groups = append(groups, cur)
	s.c.Net.Partition(groups...)
	return nil, nil
}

// heal: recovery after a partition takes retransmission rounds whose
// timing varies: heal prints nothing, the next step (usually a wait)
// prints what followed.
func (s *simulation) heal(c *call) (*serviceError, error) {
	s.c.Net.Heal()
	*c.quiet = 0
	return nil, nil
}

func (s *simulation) setFaults(c *call) (*serviceError, error) {
	f, err := parseFaults(c.a)
	if err != nil {
		return nil, err
	}
	s.c.Net.SetFaults(f)
	return nil, nil
}

func (s *simulation) linkFaults(c *call) (*serviceError, error) {
	if len(c.a.pos) != 2 {
		return nil, c.usageError()
	}
	f, err := parseFaults(c.a)
	if err != nil {
		return nil, err
	}
	s.c.Net.SetLinkFaults(c.a.pos[0], c.a.pos[1], f)
	return nil, nil
}

func (s *simulation) crash(c *call) (*serviceError, error) {
	if s.crashed[c.name] {
		return nil, fmt.Errorf("%s crashed already", c.name)
	}
	s.c.Crash(c.i)
	s.crashed[c.name] = true
	return nil, nil
}

// restart: the host comes back: a new federate joins under the name (a
// new handle and incarnation; the others see it join), and later
// commands naming it address the new one.
func (s *simulation) restart(c *call) (*serviceError, error) {
	if !s.crashed[c.name] {
		return nil, fmt.Errorf("restart %s: it has not crashed", c.name)
	}
	nf, err := s.c.Add(s.ctx, c.name)
	if err != nil {
		return fail(c.name, err)
	}
	delete(s.crashed, c.name)
	s.fedIdx[c.name] = len(s.c.Feds) - 1
	s.fedName[nf.Handle()] = c.name
	s.printed = append(s.printed, 0)
	return nil, nil
}
