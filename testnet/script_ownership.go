package testnet

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/meshrti/meshrti/peer"
)

// Ownership management: divestiture, acquisition, release, the owner's
// queries, and handoff, a loop of transfers.

// ownershipArgs reads obj=O attrs=A,B [tag=X] of every ownership
// command.
func (s *simulation) ownershipArgs(a *args) (*simObject, []peer.AttributeHandle, []byte, error) {
	o, attrs, err := s.objectAndAttrs(a)
	if err != nil {
		return nil, nil, nil, err
	}
	var tag []byte
	if t, ok := a.get("tag"); ok {
		s.userTags[t] = true
		tag = []byte(t)
	}
	return o, attrs, tag, nil
}

// divest runs mode=unconditional (the default), negotiated or if-wanted.
func (s *simulation) divest(c *call) (*serviceError, error) {
	o, attrs, tag, err := s.ownershipArgs(c.a)
	if err != nil {
		return nil, err
	}
	mode, _ := c.a.get("mode")
	switch mode {
	case "", "unconditional":
		return fail(c.name, c.f.UnconditionalAttributeOwnershipDivestiture(o.h, attrs...))
	case "negotiated":
		return fail(c.name, c.f.NegotiatedAttributeOwnershipDivestiture(o.h, tag, attrs...))
	case "if-wanted":
		given, err := c.f.AttributeOwnershipDivestitureIfWanted(o.h, attrs...)
		if err != nil {
			return fail(c.name, err)
		}
		s.lines = append(s.lines, fmt.Sprintf("%s: divested %s attrs=%s", c.name, s.obj(o.h), s.attrNames(given)))
		return nil, nil
	}
	return nil, fmt.Errorf("mode=%s: want unconditional, negotiated or if-wanted", mode)
}

func (s *simulation) confirmDivestiture(c *call) (*serviceError, error) {
	o, attrs, tag, err := s.ownershipArgs(c.a)
	if err != nil {
		return nil, err
	}
	return fail(c.name, c.f.ConfirmDivestiture(o.h, tag, attrs...))
}

func (s *simulation) acquire(c *call) (*serviceError, error) {
	o, attrs, tag, err := s.ownershipArgs(c.a)
	if err != nil {
		return nil, err
	}
	if c.ifAvailable {
		return fail(c.name, c.f.AttributeOwnershipAcquisitionIfAvailable(o.h, attrs...))
	}
	return fail(c.name, c.f.AttributeOwnershipAcquisition(o.h, tag, attrs...))
}

// ownershipService runs cancel-divestiture, cancel-acquisition and
// deny-release: a service of the instance and attributes alone.
func (s *simulation) ownershipService(c *call) (*serviceError, error) {
	o, attrs, _, err := s.ownershipArgs(c.a)
	if err != nil {
		return nil, err
	}
	svc := map[string]func(peer.ObjectInstanceHandle, ...peer.AttributeHandle) error{
		"cancel-divestiture": c.f.CancelNegotiatedAttributeOwnershipDivestiture,
		"cancel-acquisition": c.f.CancelAttributeOwnershipAcquisition,
		"deny-release":       c.f.AttributeOwnershipReleaseDenied,
	}[c.cmd.name]
	return fail(c.name, svc(o.h, attrs...))
}

func (s *simulation) queryOwner(c *call) (*serviceError, error) {
	o, at, _, err := s.objectAttr(c.a)
	if err != nil {
		return nil, err
	}
	return fail(c.name, c.f.QueryAttributeOwnership(o.h, at))
}

func (s *simulation) isOwned(c *call) (*serviceError, error) {
	o, at, an, err := s.objectAttr(c.a)
	if err != nil {
		return nil, err
	}
	owned, err := c.f.IsAttributeOwnedByFederate(o.h, at)
	if err != nil {
		return fail(c.name, err)
	}
	yes := "no"
	if owned {
		yes = "yes"
	}
	s.lines = append(s.lines, fmt.Sprintf("%s: owned %s %s=%s", c.name, s.obj(o.h), an, yes))
	return nil, nil
}

// handoff runs "handoff A B obj=O attrs=X,Y rounds=N": N rounds in
// which B acquires the attributes from A and A takes them back, each
// owner releasing them when asked (AttributeOwnershipDivestitureIfWanted),
// as fast as the federation allows. After every transfer both must
// agree that exactly the acquirer owns every attribute. It prints one
// line, "A,B: handoff OBJ attrs=X,Y rounds=N transfers=2N owner=A", or
// the first round that went wrong; the callbacks of the rounds are not
// printed.
func (s *simulation) handoff(c *call) (*serviceError, error) {
	a := c.a
	if len(a.pos) != 2 {
		return nil, c.usageError()
	}
	var idx [2]int
	for k, n := range a.pos {
		i, err := s.federate(n)
		if err != nil {
			return nil, err
		}
		idx[k] = i
	}
	o, attrs, err := s.objectAndAttrs(a)
	if err != nil {
		return nil, err
	}
	rounds, ok, err := a.float("rounds")
	if err != nil || !ok || rounds < 1 || rounds != float64(int(rounds)) {
		return nil, errors.New("handoff needs rounds=N, N a positive integer")
	}
	ctx, cancel := context.WithTimeout(s.ctx, maxWait+time.Duration(rounds)*100*time.Millisecond)
	defer cancel()
	// waitNew waits for an event of type T on log i after event start.
	waitNew := func(i, start int, match func(peer.Event) bool) error {
		return s.c.Logs[i].WaitFor(ctx, func(evs []peer.Event) bool {
			for _, ev := range evs[min(start, len(evs)):] {
				if match(ev) {
					return true
				}
			}
			return false
		})
	}
	names := strings.Join(a.pos, ",")
	transfers := 0
	for r := 1; r <= int(rounds); r++ {
		for _, dir := range [2][2]int{{0, 1}, {1, 0}} {
			from, to := idx[dir[0]], idx[dir[1]]
			ff, ft := s.c.Feds[from], s.c.Feds[to]
			startFrom, startTo := s.c.Logs[from].count(), s.c.Logs[to].count()
			if err := ft.AttributeOwnershipAcquisition(o.h, nil, attrs...); err != nil {
				return fail(a.pos[dir[1]], err)
			}
			if err := waitNew(from, startFrom, func(ev peer.Event) bool {
				rq, ok := ev.(peer.RequestAttributeOwnershipRelease)
				return ok && rq.Object == o.h
			}); err != nil {
				return nil, fmt.Errorf("round %d: %s never heard the request: %w", r, a.pos[dir[0]], err)
			}
			given, err := ff.AttributeOwnershipDivestitureIfWanted(o.h, attrs...)
			if err != nil {
				return fail(a.pos[dir[0]], err)
			}
			if len(given) != len(attrs) {
				s.lines = append(s.lines, fmt.Sprintf("%s: handoff round %d: %s released %s of %s", names, r, a.pos[dir[0]], s.attrNames(given), s.attrNames(attrs)))
				return nil, nil
			}
			if err := waitNew(to, startTo, func(ev peer.Event) bool {
				n, ok := ev.(peer.AttributeOwnershipAcquisitionNotification)
				return ok && n.Object == o.h
			}); err != nil {
				return nil, fmt.Errorf("round %d: %s never acquired: %w", r, a.pos[dir[1]], err)
			}
			transfers++
			for _, at := range attrs {
				has, err1 := ft.IsAttributeOwnedByFederate(o.h, at)
				had, err2 := ff.IsAttributeOwnedByFederate(o.h, at)
				if err := errors.Join(err1, err2); err != nil {
					return nil, err
				}
				if !has || had {
					s.lines = append(s.lines, fmt.Sprintf("%s: handoff round %d: after the transfer to %s, %s owned=%v and %s owned=%v",
						names, r, a.pos[dir[1]], a.pos[dir[1]], has, a.pos[dir[0]], had))
					return nil, nil
				}
			}
		}
	}
	// The rounds' callbacks are not printed: skip them.
	s.waitQuiet(s.quiet)
	for _, i := range idx {
		s.printed[i] = len(s.c.Logs[i].Events())
	}
	s.lines = append(s.lines, fmt.Sprintf("%s: handoff %s attrs=%s rounds=%d transfers=%d owner=%s",
		names, s.obj(o.h), s.attrNames(attrs), int(rounds), transfers, a.pos[0]))
	return nil, nil
}
