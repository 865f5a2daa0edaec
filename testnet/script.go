package testnet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/fomxml/codec"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/fedpro"
	"github.com/meshrti/meshrti/testnet/scenario"
)

// Scenario scripts: see docs/testing.md for the language. A script is a
// list of steps; each step is one command line, a line "----", and the
// expected output up to a blank line. Lines starting with # and blank
// lines between steps are comments. Package scenario parses, compares
// and rewrites them; this file carries out the steps. The commands are
// one table, commands in script_commands.go; their handlers are in files
// by the chapter of the HLA standard they drive (script_federation.go,
// script_declarations.go, script_objects.go, script_ownership.go,
// script_time.go, script_ddm.go, script_sync.go, script_support.go,
// script_mom.go) or, for the harness's own, script_network.go;
// script_args.go reads their arguments and script_format.go prints the
// events.

// DefaultQuiet is how long no federate may see a new event before a step
// counts as finished, unless the script sets quiet=... on federation or
// wait.
const DefaultQuiet = 100 * time.Millisecond

// maxWait bounds the wait for quiescence of one step.
const maxWait = 10 * time.Second

// ScriptResult is the outcome of RunScript.
type ScriptResult struct {
	// Steps is how many steps ran; Mismatches how many printed something
	// other than their expected output.
	Steps, Mismatches int
	// Violations are the invariants Check found broken after the script.
	Violations []Violation
	// Rewritten is the script with every expected output replaced by the
	// actual one.
	Rewritten []byte
}

// RunScript runs one scenario script read from r in a fresh simulated
// federation. Without rewrite it writes to w, for every step whose output
// differs from the expected one, the step's line, command and a line diff
// (- expected, + actual); with rewrite it writes the script with the
// actual outputs instead. After the last step it runs Check over every
// federate's events. The error reports a malformed script or a federation
// that could not start; expectation failures are counted in the result.
func RunScript(ctx context.Context, r io.Reader, w io.Writer, rewrite bool) (*ScriptResult, error) {
	s := &simulation{
		ctx: ctx, quiet: DefaultQuiet,
		fedIdx: make(map[string]int), fedName: make(map[peer.FederateHandle]string),
		objs: make(map[string]*simObject), objLabel: make(map[peer.ObjectInstanceHandle]string),
		momObjs: make(map[peer.ObjectInstanceHandle]string),
		msgs:    make(map[string]int), userTags: make(map[string]bool), crashed: make(map[string]bool),
		handles: make(map[string]peer.MessageRetractionHandle), handleTag: make(map[peer.MessageRetractionHandle]string),
		regions: make(map[string]peer.RegionHandle),
	}
	defer s.close()
	report := w
	if rewrite {
		report = io.Discard
	}
	sr, err := scenario.Run(r, report, s.step)
	if err != nil {
		return nil, err
	}
	res := &ScriptResult{Steps: sr.Steps, Mismatches: sr.Mismatches, Rewritten: sr.Rewritten}
	if s.c != nil {
		res.Violations = Check(s.c.Logs)
	}
	if rewrite {
		if _, err := w.Write(res.Rewritten); err != nil {
			return res, err
		}
	}
	return res, nil
}

// ---- Running ----

type simObject struct {
	h     peer.ObjectInstanceHandle
	class peer.ObjectClassHandle
	name  string // the instance name when given in the script
}

type simulation struct {
	ctx   context.Context
	c     *Cluster
	fdd   *fomxml.FDD
	quiet time.Duration

	fedIdx   map[string]int
	crashed  map[string]bool // crashed and not restarted
	fedName  map[peer.FederateHandle]string
	objs     map[string]*simObject
	objLabel map[peer.ObjectInstanceHandle]string
	regions  map[string]peer.RegionHandle // by the label the script gave
	msgs     map[string]int               // messages sent per federate, for tags
	userTags map[string]bool              // tags the script chose, printed
	// Retraction handles of time-stamped sends, by tag, and back.
	handles     map[string]peer.MessageRetractionHandle
	handleTag   map[peer.MessageRetractionHandle]string
	printed     []int    // events printed per log
	lines       []string // extra output of the step (list)
	queries     []string // federates whose time state this step prints
	litsQueries []string // federates whose LITS this step prints
	// The MOM (script_mom.go): its instances known, by name, and the codec.
	momObjs map[peer.ObjectInstanceHandle]string
	momEnc  *codec.Codec
	// exceptions is how error lines name the HLA exception
	// (exception-names): "" not at all, "hla4" or "1516e" as a client
	// of that API gets it through serve (fedpro.ExceptionName).
	exceptions string
}

// timeLine returns "NAME: time=T galt=G" (galt=none when no regulator
// bounds the federate), or the error.
func (s *simulation) timeLine(name string) string {
	f := s.c.Feds[s.fedIdx[name]]
	t, err := f.QueryLogicalTime()
	if err != nil {
		return s.errorLine(name, err)
	}
	g, ok, err := f.QueryGALT()
	if err != nil {
		return s.errorLine(name, err)
	}
	return fmt.Sprintf("%s: time=%s galt=%s", name, num(t), numOrNone(g, ok))
}

// litsLine returns "NAME: lits=L" (lits=none when nothing bounds it).
func (s *simulation) litsLine(name string) string {
	f := s.c.Feds[s.fedIdx[name]]
	l, ok, err := f.QueryLITS()
	if err != nil {
		return s.errorLine(name, err)
	}
	return fmt.Sprintf("%s: lits=%s", name, numOrNone(l, ok))
}

// errorLine is the line of a service that failed: "NAME: error: E",
// or "NAME: error: EXCEPTION: E" with exception-names on.
func (s *simulation) errorLine(name string, err error) string {
	if s.exceptions != "" {
		return fmt.Sprintf("%s: error: %s: %s", name, fedpro.ExceptionName(err, s.exceptions == "1516e"), s.scrub(err.Error()))
	}
	return fmt.Sprintf("%s: error: %s", name, s.scrub(err.Error()))
}

// numOrNone is t as a number, or "none" when !ok (nothing bounds it).
func numOrNone(t peer.LogicalTime, ok bool) string {
	if !ok {
		return "none"
	}
	return num(t)
}

// keepHandle remembers the retraction handle of a time-stamped send, for
// retract and for printing RequestRetraction.
func (s *simulation) keepHandle(tag []byte, h peer.MessageRetractionHandle) {
	if !h.Valid() {
		h = peer.MessageRetractionHandle{} // retracting it fails as an invalid handle
	} else {
		s.handleTag[h] = string(tag)
	}
	s.handles[string(tag)] = h
}

func (s *simulation) close() {
	if s.c != nil {
		s.c.Close()
	}
}

// step runs one command, waits until the federation is quiet, and returns
// the output lines.
func (s *simulation) step(line string) ([]string, error) {
	toks, err := tokenize(line)
	if err != nil {
		return nil, err
	}
	expectErr := false
	if toks[0] == "expect-error" {
		expectErr = true
		toks = toks[1:]
		if len(toks) == 0 {
			return nil, errors.New("expect-error needs a command")
		}
	}
	a, err := parseArgs(toks[1:])
	if err != nil {
		return nil, err
	}
	quiet := s.quiet
	var out []string
	svcErr, err := s.exec(toks[0], a, &quiet)
	if err != nil {
		return nil, err
	}
	if err := a.done(); err != nil {
		return nil, err
	}
	if svcErr != nil {
		out = append(out, s.errorLine(svcErr.fed, svcErr.err))
	} else if expectErr {
		out = append(out, "expected an error, got none")
	}
	if quiet > 0 {
		out = append(out, s.collect(quiet)...)
	}
	for _, n := range s.queries {
		out = append(out, s.timeLine(n))
	}
	s.queries = nil
	for _, n := range s.litsQueries {
		out = append(out, s.litsLine(n))
	}
	s.litsQueries = nil
	out = append(out, s.lines...)
	s.lines = nil
	if len(out) == 0 {
		out = []string{"ok"}
	}
	return out, nil
}

// serviceError is an error a federate's service returned.
type serviceError struct {
	fed string
	err error
}

// call is one command line as its handler sees it.
type call struct {
	cmd   *command
	a     *args
	quiet *time.Duration // the step's quiet period; a handler may change it
	// A command of the form oneFederate: the federate it names, and the
	// flags among its positional words.
	name                                      string
	i                                         int
	f                                         *peer.Federate
	passive, ifAvailable, failed, universally bool
}

// usageError is the error of a command whose words are off: its name
// and arguments, from the table.
func (c *call) usageError() error {
	return errors.New(strings.TrimSpace(c.cmd.name + " " + c.cmd.usage))
}

// exec looks the command up in the table, starts the federation unless
// the command does, reads the federate a oneFederate command names, and
// runs it.
func (s *simulation) exec(name string, a *args, quiet *time.Duration) (*serviceError, error) {
	cmd, ok := commandIndex[name]
	if !ok || cmd.form == prefix {
		return nil, fmt.Errorf("unknown command %q", name)
	}
	if s.c == nil && cmd.form != first {
		if err := s.startFederation(&args{vals: map[string]string{}, used: map[string]bool{}}); err != nil {
			return nil, err
		}
	}
	c := &call{cmd: cmd, a: a, quiet: quiet}
	if cmd.form == oneFederate {
		c.passive = a.flag("passive")
		c.ifAvailable = a.flag("if-available")
		c.failed = a.flag("failed")
		c.universally = a.flag("universally")
		if len(a.pos) != 1 {
			return nil, fmt.Errorf("%s needs one federate name", name)
		}
		c.name = a.pos[0]
		i, err := s.federate(c.name)
		if err != nil {
			return nil, err
		}
		c.i, c.f = i, s.c.Feds[i]
	}
	return cmd.run(s, c)
}

// federate returns the index of the joined federate name.
func (s *simulation) federate(name string) (int, error) {
	i, ok := s.fedIdx[name]
	if !ok {
		return 0, fmt.Errorf("unknown federate %s", name)
	}
	return i, nil
}

// fail turns a service's error into the step's output.
func fail(name string, err error) (*serviceError, error) {
	if err == nil {
		return nil, nil
	}
	return &serviceError{name, err}, nil
}

type realTimeKey struct{}

// RealTime returns a context that makes RunScript run its federation
// with goroutines in real time, as in a process, instead of
// deterministically in virtual time (Config.Deterministic): steps then
// wait for real quiet periods, and a seed replays the faults but not
// the interleaving. The expected outputs are the same.
func RealTime(ctx context.Context) context.Context {
	return context.WithValue(ctx, realTimeKey{}, true)
}

func realTime(ctx context.Context) bool {
	v, _ := ctx.Value(realTimeKey{}).(bool)
	return v
}

// scrub replaces object instance handles in an error text by labels.
func (s *simulation) scrub(msg string) string {
	if s.c != nil {
		msg = strings.ReplaceAll(msg, s.c.Federation, "this") // the name holds a random part
	}
	type pair struct{ h, l string }
	var ps []pair
	for h, l := range s.objLabel {
		ps = append(ps, pair{h.String(), l})
	}
	sort.Slice(ps, func(i, j int) bool { return len(ps[i].h) > len(ps[j].h) })
	for _, p := range ps {
		msg = strings.ReplaceAll(msg, " "+p.h, " "+p.l)
	}
	// Retraction handles hold message counters that vary between runs.
	for h, tag := range s.handleTag {
		msg = strings.ReplaceAll(msg, " "+h.String(), " "+tag)
	}
	return msg
}

func (s *simulation) total() int {
	n := 0
	for _, l := range s.c.Logs {
		l.mu.Lock()
		n += len(l.events)
		l.mu.Unlock()
	}
	return n
}

// waitQuiet returns once no federate saw a new event for quiet, or after
// maxWait, or when ctx ends.
func (s *simulation) waitQuiet(quiet time.Duration) {
	if s.c.sim != nil {
		s.c.sim.quiet(s.ctx, quiet, maxWait)
		return
	}
	deadline := time.Now().Add(maxWait)
	last, since := s.total(), time.Now()
	for time.Now().Before(deadline) && s.ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
		if n := s.total(); n != last {
			last, since = n, time.Now()
			continue
		}
		if time.Since(since) >= quiet {
			return
		}
	}
}

// collect waits until quiet and returns what every federate saw since the
// last step, federates in name order.
func (s *simulation) collect(quiet time.Duration) []string {
	if s.c == nil {
		return nil
	}
	s.waitQuiet(quiet)
	names := slices.Sorted(maps.Keys(s.fedIdx))
	var out []string
	for _, n := range names {
		i := s.fedIdx[n]
		evs := s.c.Logs[i].Events()
		// The MOM instances a step discovers come from several nodes at
		// once, in no fixed order: one line, sorted, after the others.
		var mom []string
		for _, ev := range evs[s.printed[i]:] {
			line := s.format(ev)
			if d, ok := strings.CutPrefix(line, "mom discover "); ok {
				mom = append(mom, d)
				continue
			}
			out = append(out, n+": "+line)
		}
		if len(mom) > 0 {
			sort.Strings(mom)
			out = append(out, n+": mom discover "+strings.Join(mom, " "))
		}
		s.printed[i] = len(evs)
	}
	return out
}
