package lbts

import (
	"flag"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/meshrti/meshrti/testnet/scenario"
)

// Scenarios are scripts in testdata/, run by package scenario (see its
// doc for the format): blocks of
//
//	# comments
//	command arg key=value ...
//	----
//	expected output
//	<blank line>
//
// Run `go test ./lbts -run TestScenarios -rewrite` to regenerate the
// expected output; read the diff before committing it.

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of testdata scenarios")

func TestScenarios(t *testing.T) {
	scenario.TestFiles(t, filepath.Join("testdata", "*.txt"), *rewrite, func(t *testing.T) func(string) ([]string, error) {
		r := &runner{t: t, c: newCluster()}
		return r.run
	})
}

type runner struct {
	t *testing.T
	c *cluster
}

// args is a parsed command line: positional words and key=value pairs.
type args struct {
	pos []string
	kv  map[string]string
	err error
}

func parseArgs(fields []string) *args {
	a := &args{kv: map[string]string{}}
	for _, f := range fields {
		if k, v, ok := strings.Cut(f, "="); ok {
			a.kv[k] = v
		} else {
			a.pos = append(a.pos, f)
		}
	}
	return a
}

func (a *args) has(word string) bool {
	for _, p := range a.pos {
		if p == word {
			return true
		}
	}
	return false
}

func (a *args) float(key string, def float64) float64 {
	v, ok := a.kv[key]
	if !ok {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil && a.err == nil {
		a.err = fmt.Errorf("%s=%q: %v", key, v, err)
	}
	return f
}

func (a *args) uint(key string, def uint64) uint64 {
	v, ok := a.kv[key]
	if !ok {
		return def
	}
	u, err := strconv.ParseUint(v, 10, 64)
	if err != nil && a.err == nil {
		a.err = fmt.Errorf("%s=%q: %v", key, v, err)
	}
	return u
}

// pairs parses "1:3,2:5".
func (a *args) pairs(key string) map[uint64]uint64 {
	v, ok := a.kv[key]
	if !ok {
		return nil
	}
	m := map[uint64]uint64{}
	for _, p := range strings.Split(v, ",") {
		k, val, _ := strings.Cut(p, ":")
		ku, err1 := strconv.ParseUint(k, 10, 64)
		vu, err2 := strconv.ParseUint(val, 10, 64)
		if (err1 != nil || err2 != nil) && a.err == nil {
			a.err = fmt.Errorf("%s=%q: want k:v,k:v", key, v)
		}
		m[ku] = vu
	}
	return m
}

func (a *args) groups(key string, def []uint32) []uint32 {
	v, ok := a.kv[key]
	if !ok {
		return def
	}
	var gs []uint32
	for _, p := range strings.Split(v, ",") {
		g, err := strconv.ParseUint(p, 10, 32)
		if err != nil && a.err == nil {
			a.err = fmt.Errorf("%s=%q: %v", key, v, err)
		}
		gs = append(gs, uint32(g))
	}
	return gs
}

// run executes one command and returns its output: the events it caused
// (one line each), or "ok". It never fails: a command's error is part of
// its output.
func (r *runner) run(cmd string) ([]string, error) {
	var log strings.Builder
	r.c.log = &log
	r.c.fail = func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		fmt.Fprintf(&log, "BROKEN: %s\n", msg)
		r.t.Errorf("%s: %s", cmd, msg)
	}
	if err := r.exec(cmd, &log); err != nil {
		fmt.Fprintf(&log, "error: %v\n", err)
	}
	out := strings.TrimRight(log.String(), "\n")
	if out == "" {
		return []string{"ok"}, nil
	}
	return strings.Split(out, "\n"), nil
}

func (r *runner) node(a *args) (*simNode, error) {
	if len(a.pos) == 0 {
		return nil, fmt.Errorf("missing node id")
	}
	id, err := strconv.ParseUint(a.pos[0], 10, 64)
	if err != nil {
		return nil, fmt.Errorf("node id %q: %v", a.pos[0], err)
	}
	s := r.c.nodes[FederateID(id)]
	if s == nil {
		return nil, fmt.Errorf("no node %d", id)
	}
	return s, nil
}

func (r *runner) exec(cmd string, log *strings.Builder) error {
	fields := strings.Fields(cmd)
	verb := fields[0]
	a := parseArgs(fields[1:])
	c := r.c
	var s *simNode
	switch verb {
	case "add", "stabilize", "deliver-all", "tick-all":
	default:
		var err error
		if s, err = r.node(a); err != nil {
			return err
		}
	}
	var err error
	switch verb {
	case "add":
		// add ID [regulating] [lookahead=L] [constrained] [t=T] [groups=1,2]
		if len(a.pos) == 0 {
			return fmt.Errorf("add: missing id")
		}
		id, perr := strconv.ParseUint(a.pos[0], 10, 64)
		if perr != nil {
			return perr
		}
		n := c.add(FederateID(id), a.float("t", 0), a.groups("groups", []uint32{1})...)
		if a.has("regulating") {
			err = n.n.EnableRegulation(a.float("lookahead", 1))
		}
		if err == nil && a.has("constrained") {
			err = n.n.EnableConstrained()
		}
	case "stabilize", "deliver-all":
		c.stabilize()
	case "deliver":
		// deliver ID [ctrl|data] [from=F] [n=K]: deliver packets in flight
		// to ID, first in first out.
		from := FederateID(a.uint("from", 0))
		limit := int(a.uint("n", 1<<30))
		for i := 0; i < len(c.inflight) && limit > 0; {
			p := &c.inflight[i]
			ok := p.to == s.id && (from == 0 || p.from == from) &&
				!(a.has("ctrl") && p.ctrl == nil) && !(a.has("data") && p.ctrl != nil)
			if !ok {
				i++
				continue
			}
			c.deliverAt(i)
			limit--
		}
	case "request", "tar":
		err = s.n.RequestAdvance(a.float("t", 0))
	case "tara":
		err = s.n.RequestAdvanceAvailable(a.float("t", 0))
	case "nmr":
		err = s.n.NextMessage(a.float("t", 0))
	case "nmra":
		err = s.n.NextMessageAvailable(a.float("t", 0))
	case "fqr":
		err = s.n.FlushQueue(a.float("t", 0))
	case "retract":
		// retract TO from=F group=G seq=S: TO is told to retract a message.
		ok := s.n.Retract(FederateID(a.uint("from", 0)), uint32(a.uint("group", 1)), a.uint("seq", 1))
		fmt.Fprintf(log, "%d: retracted=%v\n", s.id, ok)
	case "check-retract":
		err = s.n.CheckRetract(a.float("t", 0))
	case "galt":
		g, ok := s.n.GALT()
		l, lok := s.n.LITS()
		fmt.Fprintf(log, "%d: galt=%s/%v lits=%s/%v time=%s\n", s.id, fmtTime(g), ok, fmtTime(l), lok, fmtTime(s.n.Time()))
	case "send":
		err = c.send(s.id, uint32(a.uint("group", 1)), a.float("t", 0), a.has("ro"))
	case "check-send":
		err = s.n.CheckSend(a.float("t", 0))
	case "enable-regulation":
		err = s.n.EnableRegulation(a.float("lookahead", 1))
	case "disable-regulation":
		err = s.n.DisableRegulation()
	case "enable-constrained":
		err = s.n.EnableConstrained()
	case "disable-constrained":
		if err = s.n.DisableConstrained(); err == nil {
			s.constrained, s.last = false, nil
		}
	case "modify-lookahead":
		err = s.n.ModifyLookahead(a.float("lookahead", 0))
	case "remove":
		// remove ID: ID crashed or resigned; everyone is told.
		c.remove(s.id)
	case "forget":
		// forget TO id=X: TO alone is told that X resigned or was lost.
		s.n.RemoveFederate(FederateID(a.uint("id", 0)))
	case "join":
		c.join(s, uint32(a.uint("group", 1)))
	case "leave":
		g := uint32(a.uint("group", 1))
		delete(s.joined, g)
		s.n.Left(g)
	case "tick":
		for range a.uint("n", 1) {
			s.n.Tick()
		}
	case "tick-all":
		for range a.uint("n", 1) {
			for _, id := range c.ids() {
				c.nodes[id].n.Tick()
			}
		}
	case "status":
		fmt.Fprintln(log, fmtStatus(s.n.Status()))
	case "step":
		// step TO from=F epoch=E granted=G [regulating bound=B]
		// [constrained] [covers=g:s,...] [request=R] [acks=id:r,...]
		m := Message{
			From:        FederateID(a.uint("from", 0)),
			Epoch:       a.uint("epoch", 0),
			Regulating:  a.has("regulating"),
			Constrained: a.has("constrained"),
			Bound:       a.float("bound", 0),
			Granted:     a.float("granted", 0),
			Request:     a.uint("request", 0),
		}
		if cv := a.pairs("covers"); cv != nil {
			m.Covers = map[uint32]uint64{}
			for g, q := range cv {
				m.Covers[uint32(g)] = q
			}
		}
		if ak := a.pairs("acks"); ak != nil {
			m.Acks = map[FederateID]uint64{}
			for id, q := range ak {
				m.Acks[FederateID(id)] = q
			}
		}
		if a.err == nil {
			err = s.n.Step(m)
		}
	case "tso":
		// tso TO from=F group=G seq=S t=T: a TSO message from anyone.
		m := TSO{From: FederateID(a.uint("from", 0)), Group: uint32(a.uint("group", 1)),
			Seq: a.uint("seq", 1), Time: a.float("t", 0)}
		if a.err == nil {
			err = s.n.ReceiveTSO(m)
		}
	case "received", "gap":
		from, g, seq := FederateID(a.uint("from", 0)), uint32(a.uint("group", 1)), a.uint("seq", 1)
		if verb == "gap" {
			s.n.Gap(from, g, seq)
		} else {
			s.n.Received(from, g, seq)
		}
	case "inflight":
		for i := range c.inflight {
			if p := &c.inflight[i]; p.to == s.id {
				fmt.Fprintln(log, p.String())
			}
		}
	default:
		return fmt.Errorf("unknown command %q", verb)
	}
	if a.err != nil {
		return a.err
	}
	c.process()
	return err
}
