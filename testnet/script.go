package testnet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/fomxml/codec"
	"github.com/meshrti/meshrti/lbts"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/transport"
	"github.com/meshrti/meshrti/testnet/scenario"
)

// Scenario scripts: see docs/testing.md for the language. A script is a
// list of steps; each step is one command line, a line "----", and the
// expected output up to a blank line. Lines starting with # and blank
// lines between steps are comments. Package scenario parses, compares
// and rewrites them; this file carries out the commands.

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

// ---- Parsing ----

// tokenize splits a command line at spaces; double-quoted parts (Go
// syntax) may hold spaces: Position="a b".
func tokenize(line string) ([]string, error) {
	var toks []string
	var cur strings.Builder
	in := false
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case in && ch == '\\' && i+1 < len(line):
			cur.WriteByte(ch)
			i++
			cur.WriteByte(line[i])
		case ch == '"':
			in = !in
			cur.WriteByte(ch)
		case !in && (ch == ' ' || ch == '\t'):
			if cur.Len() > 0 {
				toks = append(toks, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteByte(ch)
		}
	}
	if in {
		return nil, errors.New("unterminated quote")
	}
	if cur.Len() > 0 {
		toks = append(toks, cur.String())
	}
	return toks, nil
}

// args are a command's positional words and key=value pairs, in order.
type args struct {
	pos  []string
	keys []string
	vals map[string]string
	used map[string]bool
}

func parseArgs(toks []string) (*args, error) {
	a := &args{vals: make(map[string]string), used: make(map[string]bool)}
	for _, t := range toks {
		k, v, ok := strings.Cut(t, "=")
		if !ok {
			a.pos = append(a.pos, t)
			continue
		}
		if strings.HasPrefix(v, `"`) {
			u, err := strconv.Unquote(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", t, err)
			}
			v = u
		}
		if _, dup := a.vals[k]; dup {
			return nil, fmt.Errorf("%s given twice", k)
		}
		a.keys = append(a.keys, k)
		a.vals[k] = v
	}
	return a, nil
}

// flag takes the positional word w out of the arguments and reports
// whether it was there (subscribe ... passive).
func (a *args) flag(w string) bool {
	for i, p := range a.pos {
		if p == w && i > 0 {
			a.pos = append(a.pos[:i:i], a.pos[i+1:]...)
			return true
		}
	}
	return false
}

// list returns the comma-separated values of k (names=a,b).
func (a *args) list(k string) ([]string, error) {
	v, err := a.need(k)
	if err != nil {
		return nil, err
	}
	return strings.Split(v, ","), nil
}

func (a *args) get(k string) (string, bool) {
	v, ok := a.vals[k]
	if ok {
		a.used[k] = true
	}
	return v, ok
}

func (a *args) need(k string) (string, error) {
	v, ok := a.get(k)
	if !ok {
		return "", fmt.Errorf("missing %s=", k)
	}
	return v, nil
}

func (a *args) float(k string) (float64, bool, error) {
	v, ok := a.get(k)
	if !ok {
		return 0, false, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%s: %w", k, err)
	}
	return f, true, nil
}

// rest returns the key=value pairs not read yet, in order.
// scriptValues turns the remaining key=value arguments into values, each
// key named through lookup (an attribute or parameter of class).
func scriptValues[H comparable](a *args, what, class string, lookup func(string) (H, bool)) (map[H][]byte, error) {
	vals := make(map[H][]byte)
	for _, k := range a.rest() {
		h, ok := lookup(k)
		if !ok {
			return nil, fmt.Errorf("no %s %s in %s", what, k, class)
		}
		v, _ := a.get(k)
		vals[h] = []byte(v)
	}
	return vals, nil
}

func (a *args) rest() []string {
	var ks []string
	for _, k := range a.keys {
		if !a.used[k] {
			ks = append(ks, k)
		}
	}
	return ks
}

// done fails on key=value pairs no one read.
func (a *args) done() error {
	if r := a.rest(); len(r) > 0 {
		return fmt.Errorf("unknown argument %s=", r[0])
	}
	return nil
}

// ---- Running ----

type simObject struct {
	h     peer.ObjectInstanceHandle
	class peer.ObjectClassHandle
	name  string // the instance name when given in the script
}

type simulation struct {
	ctx    context.Context
	c      *Cluster
	fdd    *fomxml.FDD
	quiet  time.Duration
	seed   int64
	faults transport.Faults

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
	// The MOM (mom.go): its instances known, by name, and the codec.
	momObjs map[peer.ObjectInstanceHandle]string
	momEnc  *codec.Codec
}

// query returns "NAME: time=T galt=G" (galt=none when no regulator
// bounds the federate), or the error.
func (s *simulation) query(name string) string {
	f := s.c.Feds[s.fedIdx[name]]
	t, err := f.QueryLogicalTime()
	if err != nil {
		return fmt.Sprintf("%s: error: %s", name, s.scrub(err.Error()))
	}
	g, ok, err := f.QueryGALT()
	if err != nil {
		return fmt.Sprintf("%s: error: %s", name, s.scrub(err.Error()))
	}
	galt := "none"
	if ok {
		galt = num(g)
	}
	return fmt.Sprintf("%s: time=%s galt=%s", name, num(t), galt)
}

// queryLITS returns "NAME: lits=L" (lits=none when nothing bounds it).
func (s *simulation) queryLITS(name string) string {
	f := s.c.Feds[s.fedIdx[name]]
	l, ok, err := f.QueryLITS()
	if err != nil {
		return fmt.Sprintf("%s: error: %s", name, s.scrub(err.Error()))
	}
	lits := "none"
	if ok {
		lits = num(l)
	}
	return fmt.Sprintf("%s: lits=%s", name, lits)
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
		out = append(out, fmt.Sprintf("%s: error: %s", svcErr.fed, s.scrub(svcErr.err.Error())))
	} else if expectErr {
		out = append(out, "expected an error, got none")
	}
	if quiet > 0 {
		out = append(out, s.collect(quiet)...)
	}
	for _, n := range s.queries {
		out = append(out, s.query(n))
	}
	s.queries = nil
	for _, n := range s.litsQueries {
		out = append(out, s.queryLITS(n))
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

func (s *simulation) exec(cmd string, a *args, quiet *time.Duration) (*serviceError, error) {
	if cmd == "federation" {
		return nil, s.federation(a)
	}
	if s.c == nil {
		if err := s.federation(&args{vals: map[string]string{}, used: map[string]bool{}}); err != nil {
			return nil, err
		}
	}
	switch cmd {
	case "join":
		if len(a.pos) == 0 {
			return nil, errors.New("join NAME...")
		}
		for _, n := range a.pos {
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
	case "wait":
		if len(a.pos) > 1 {
			return nil, errors.New("wait [NAME grant=T] [quiet=D]")
		}
		if t, ok, err := a.float("grant"); err != nil {
			return nil, err
		} else if ok {
			if len(a.pos) != 1 {
				return nil, errors.New("wait grant=T needs a federate name")
			}
			i, known := s.fedIdx[a.pos[0]]
			if !known {
				return nil, fmt.Errorf("unknown federate %s", a.pos[0])
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
			*quiet = d
		}
		return nil, nil
	case "partition":
		var groups [][]string
		var cur []string
		for _, p := range a.pos {
			if p == "/" {
				groups = append(groups, cur)
				cur = nil
				continue
			}
			for _, n := range strings.Split(p, ",") {
				if n != "" {
					if _, ok := s.fedIdx[n]; !ok {
						return nil, fmt.Errorf("unknown federate %s", n)
					}
					cur = append(cur, n)
				}
			}
		}
		groups = append(groups, cur)
		s.c.Net.Partition(groups...)
		return nil, nil
	case "heal":
		// Recovery after a partition takes retransmission rounds whose
		// timing varies: heal prints nothing, the next step (usually a
		// wait) prints what followed.
		s.c.Net.Heal()
		*quiet = 0
		return nil, nil
	case "faults":
		f, err := parseFaults(a)
		if err != nil {
			return nil, err
		}
		s.c.Net.SetFaults(f)
		return nil, nil
	case "link-faults":
		if len(a.pos) != 2 {
			return nil, errors.New("link-faults FROM TO [loss=...]")
		}
		f, err := parseFaults(a)
		if err != nil {
			return nil, err
		}
		s.c.Net.SetLinkFaults(a.pos[0], a.pos[1], f)
		return nil, nil
	case "destroy", "list", "create":
		if cmd == "list" && len(a.pos) == 1 {
			// A member asks: the answer is its callback.
			i, ok := s.fedIdx[a.pos[0]]
			if !ok {
				return nil, fmt.Errorf("unknown federate %s", a.pos[0])
			}
			return fail(a.pos[0], s.c.Feds[i].ListFederationExecutions(s.ctx))
		}
		// Federation-wide services, called as a connected non-member.
		cfg := peer.Config{Federation: s.c.Federation, Control: s.c.Registry.Control(s.c.Federation)}
		switch cmd {
		case "destroy":
			return fail("federation", peer.DestroyFederationExecution(s.ctx, cfg))
		case "create":
			return s.create(cfg, a)
		}
		list, err := peer.ListFederationExecutions(s.ctx, cfg)
		if err != nil {
			return fail("federation", err)
		}
		s.lines = append(s.lines, "federations: "+s.federations(list))
		return nil, nil
	}
	if cmd == "async" {
		if len(a.pos) != 2 || (a.pos[1] != "on" && a.pos[1] != "off") {
			return nil, errors.New("async NAME on|off")
		}
		i, ok := s.fedIdx[a.pos[0]]
		if !ok {
			return nil, fmt.Errorf("unknown federate %s", a.pos[0])
		}
		if a.pos[1] == "on" {
			return fail(a.pos[0], s.c.Feds[i].EnableAsynchronousDelivery())
		}
		return fail(a.pos[0], s.c.Feds[i].DisableAsynchronousDelivery())
	}
	if cmd == "switch" || cmd == "callbacks" {
		return s.switches(cmd, a)
	}
	if cmd == "handoff" {
		return s.handoff(a)
	}
	passive := a.flag("passive")
	ifAvailable := a.flag("if-available")
	failed := a.flag("failed")
	universally := a.flag("universally")
	// Every other command names one federate first.
	if len(a.pos) != 1 {
		return nil, fmt.Errorf("%s needs one federate name", cmd)
	}
	name := a.pos[0]
	i, ok := s.fedIdx[name]
	if !ok {
		return nil, fmt.Errorf("unknown federate %s", name)
	}
	f := s.c.Feds[i]
	switch cmd {
	case "mom-subscribe", "mom-request", "mom-send":
		return s.momCommand(cmd, name, f, a)
	case "publish", "subscribe":
		class, attrs, err := s.classAttrs(a)
		if err != nil {
			return nil, err
		}
		if cmd == "publish" {
			return fail(name, f.PublishObjectClassAttributes(class, attrs...))
		}
		if rs, ok, err := s.regionsArg(a); err != nil {
			return nil, err
		} else if ok {
			rate, _ := a.get("rate")
			pair := peer.AttributeRegions{Attributes: attrs, Regions: rs}
			if passive || rate != "" {
				return fail(name, f.SubscribeObjectClassAttributesWithRegionsPassively(class, rate, pair))
			}
			return fail(name, f.SubscribeObjectClassAttributesWithRegions(class, pair))
		}
		if rate, ok := a.get("rate"); ok {
			return fail(name, f.SubscribeObjectClassAttributesWithRate(class, rate, !passive, attrs...))
		}
		if passive {
			return fail(name, f.SubscribeObjectClassAttributesPassively(class, attrs...))
		}
		return fail(name, f.SubscribeObjectClassAttributes(class, attrs...))
	case "unpublish", "unsubscribe":
		cn, err := a.need("class")
		if err != nil {
			return nil, err
		}
		c, ok := s.fdd.ObjectClass(cn)
		if !ok {
			return nil, fmt.Errorf("no object class %s", cn)
		}
		if cmd == "unpublish" {
			return fail(name, f.UnpublishObjectClass(c.Handle))
		}
		if rs, ok, err := s.regionsArg(a); err != nil {
			return nil, err
		} else if ok {
			attrs, err := s.attrsOrDimensioned(a, c)
			if err != nil {
				return nil, err
			}
			return fail(name, f.UnsubscribeObjectClassAttributesWithRegions(c.Handle, peer.AttributeRegions{Attributes: attrs, Regions: rs}))
		}
		return fail(name, f.UnsubscribeObjectClass(c.Handle))
	case "publish-interaction", "subscribe-interaction", "unpublish-interaction", "unsubscribe-interaction":
		cn, err := a.need("class")
		if err != nil {
			return nil, err
		}
		c, ok := s.fdd.InteractionClass(cn)
		if !ok {
			return nil, fmt.Errorf("no interaction class %s", cn)
		}
		rs, withRegions, err := s.regionsArg(a)
		if err != nil {
			return nil, err
		}
		switch {
		case withRegions && cmd == "subscribe-interaction" && passive:
			return fail(name, f.SubscribeInteractionClassPassivelyWithRegions(c.Handle, rs...))
		case withRegions && cmd == "subscribe-interaction":
			return fail(name, f.SubscribeInteractionClassWithRegions(c.Handle, rs...))
		case withRegions && cmd == "unsubscribe-interaction":
			return fail(name, f.UnsubscribeInteractionClassWithRegions(c.Handle, rs...))
		case withRegions:
			return nil, fmt.Errorf("%s takes no regions", cmd)
		}
		switch cmd {
		case "publish-interaction":
			return fail(name, f.PublishInteractionClass(c.Handle))
		case "subscribe-interaction":
			if passive {
				return fail(name, f.SubscribeInteractionClassPassively(c.Handle))
			}
			return fail(name, f.SubscribeInteractionClass(c.Handle))
		case "unpublish-interaction":
			return fail(name, f.UnpublishInteractionClass(c.Handle))
		}
		return fail(name, f.UnsubscribeInteractionClass(c.Handle))
	case "reserve":
		n, err := a.need("name")
		if err != nil {
			return nil, err
		}
		return fail(name, f.ReserveObjectInstanceName(n))
	case "reserve-names":
		ns, err := a.list("names")
		if err != nil {
			return nil, err
		}
		return fail(name, f.ReserveMultipleObjectInstanceName(ns...))
	case "release-name":
		n, err := a.need("name")
		if err != nil {
			return nil, err
		}
		return fail(name, f.ReleaseObjectInstanceName(n))
	case "release-names":
		ns, err := a.list("names")
		if err != nil {
			return nil, err
		}
		return fail(name, f.ReleaseMultipleObjectInstanceName(ns...))
	case "local-delete":
		o, err := s.object(a)
		if err != nil {
			return nil, err
		}
		return fail(name, f.LocalDeleteObjectInstance(o.h))
	case "request-update":
		tag := s.tag(name, a)
		if _, ok := a.vals["obj"]; ok {
			o, err := s.object(a)
			if err != nil {
				return nil, err
			}
			attrs, err := s.attrsOf(a, o.class)
			if err != nil {
				return nil, err
			}
			return fail(name, f.RequestAttributeValueUpdate(o.h, tag, attrs...))
		}
		class, attrs, err := s.classAttrs(a)
		if err != nil {
			return nil, err
		}
		if rs, ok, err := s.regionsArg(a); err != nil {
			return nil, err
		} else if ok {
			return fail(name, f.RequestAttributeValueUpdateWithRegions(class, []peer.AttributeRegions{{Attributes: attrs, Regions: rs}}, tag))
		}
		return fail(name, f.RequestAttributeValueUpdateForClass(class, tag, attrs...))
	case "transport":
		t, err := transportArg(a)
		if err != nil {
			return nil, err
		}
		if _, ok := a.vals["obj"]; ok {
			o, err := s.object(a)
			if err != nil {
				return nil, err
			}
			attrs, err := s.attrsOf(a, o.class)
			if err != nil {
				return nil, err
			}
			return fail(name, f.RequestAttributeTransportationTypeChange(o.h, t, attrs...))
		}
		ic, err := s.interactionClass(a)
		if err != nil {
			return nil, err
		}
		return fail(name, f.RequestInteractionTransportationTypeChange(ic, t))
	case "query-transport":
		if _, ok := a.vals["obj"]; ok {
			o, at, _, err := s.objectAttr(a)
			if err != nil {
				return nil, err
			}
			return fail(name, f.QueryAttributeTransportationType(o.h, at))
		}
		ic, err := s.interactionClass(a)
		if err != nil {
			return nil, err
		}
		other, err := a.need("fed")
		if err != nil {
			return nil, err
		}
		j, ok := s.fedIdx[other]
		if !ok {
			return nil, fmt.Errorf("unknown federate %s", other)
		}
		return fail(name, f.QueryInteractionTransportationType(s.c.Feds[j].Handle(), ic))
	case "sync":
		label, err := a.need("label")
		if err != nil {
			return nil, err
		}
		tag, _ := a.get("tag")
		if set, ok := a.get("set"); ok {
			var hs []peer.FederateHandle
			for _, n := range strings.Split(set, ",") {
				j, ok := s.fedIdx[n]
				if !ok {
					return nil, fmt.Errorf("unknown federate %s", n)
				}
				hs = append(hs, s.c.Feds[j].Handle())
			}
			return fail(name, f.RegisterFederationSynchronizationPointWithSet(label, []byte(tag), hs...))
		}
		return fail(name, f.RegisterFederationSynchronizationPoint(label, []byte(tag)))
	case "achieve":
		label, err := a.need("label")
		if err != nil {
			return nil, err
		}
		return fail(name, f.SynchronizationPointAchieved(label, !failed))
	case "save":
		label, err := a.need("label")
		if err != nil {
			return nil, err
		}
		if t, ok, err := a.float("t"); err != nil {
			return nil, err
		} else if ok {
			return fail(name, f.RequestFederationSaveWithTime(label, peer.Float64Time(t)))
		}
		return fail(name, f.RequestFederationSave(label))
	case "save-begun":
		return fail(name, f.FederateSaveBegun())
	case "save-complete":
		if failed {
			return fail(name, f.FederateSaveNotComplete())
		}
		return fail(name, f.FederateSaveComplete())
	case "abort-save":
		return fail(name, f.AbortFederationSave())
	case "query-save":
		return fail(name, f.QueryFederationSaveStatus())
	case "restore":
		label, err := a.need("label")
		if err != nil {
			return nil, err
		}
		return fail(name, f.RequestFederationRestore(label))
	case "restore-complete":
		if failed {
			return fail(name, f.FederateRestoreNotComplete())
		}
		return fail(name, f.FederateRestoreComplete())
	case "abort-restore":
		return fail(name, f.AbortFederationRestore())
	case "query-restore":
		return fail(name, f.QueryFederationRestoreStatus())
	case "region", "modify-region", "delete-region", "associate", "unassociate":
		return s.regionCommand(cmd, name, f, a)
	case "divest", "confirm-divestiture", "cancel-divestiture", "acquire", "cancel-acquisition", "deny-release":
		return s.ownership(cmd, name, f, a, ifAvailable)
	case "query-owner", "is-owned":
		o, at, an, err := s.objectAttr(a)
		if err != nil {
			return nil, err
		}
		if cmd == "query-owner" {
			return fail(name, f.QueryAttributeOwnership(o.h, at))
		}
		owned, err := f.IsAttributeOwnedByFederate(o.h, at)
		if err != nil {
			return fail(name, err)
		}
		yes := "no"
		if owned {
			yes = "yes"
		}
		s.lines = append(s.lines, fmt.Sprintf("%s: owned %s %s=%s", name, s.obj(o.h), an, yes))
		return nil, nil
	case "register":
		cn, err := a.need("class")
		if err != nil {
			return nil, err
		}
		c, ok := s.fdd.ObjectClass(cn)
		if !ok {
			return nil, fmt.Errorf("no object class %s", cn)
		}
		label, _ := a.get("as")
		n, _ := a.get("name")
		var h peer.ObjectInstanceHandle
		if rs, ok, err := s.regionsArg(a); err != nil {
			return nil, err
		} else if ok {
			attrs, err := s.attrsOrDimensioned(a, c)
			if err != nil {
				return nil, err
			}
			h, err = f.RegisterObjectInstanceWithRegions(c.Handle, []peer.AttributeRegions{{Attributes: attrs, Regions: rs}}, n)
			if err != nil {
				return fail(name, err)
			}
		} else if h, err = f.RegisterObjectInstance(c.Handle, n); err != nil {
			return fail(name, err)
		}
		if label == "" {
			label = n
		}
		if label == "" {
			if label, err = f.GetObjectInstanceName(h); err != nil {
				return fail(name, err)
			}
		}
		if _, dup := s.objs[label]; dup {
			return nil, fmt.Errorf("object label %s used twice", label)
		}
		s.objs[label] = &simObject{h: h, class: c.Handle, name: n}
		s.objLabel[h] = label
		return nil, nil
	case "update":
		o, err := s.object(a)
		if err != nil {
			return nil, err
		}
		ts, hasTS, err := a.float("ts")
		if err != nil {
			return nil, err
		}
		tag := s.tag(name, a)
		c, _ := s.fdd.ObjectClassByHandle(o.class)
		vals, err := scriptValues(a, "attribute", c.QualifiedName, func(k string) (peer.AttributeHandle, bool) {
			at, ok := c.Attribute(k)
			if !ok {
				return 0, false
			}
			return at.Handle, true
		})
		if err != nil {
			return nil, err
		}
		if hasTS {
			h, err := f.UpdateAttributeValuesWithTimeRetractable(o.h, vals, tag, peer.Float64Time(ts))
			s.keepHandle(tag, h)
			return fail(name, err)
		}
		return fail(name, f.UpdateAttributeValues(o.h, vals, tag))
	case "publish-directed", "subscribe-directed", "unpublish-directed", "unsubscribe-directed":
		cn, err := a.need("class")
		if err != nil {
			return nil, err
		}
		oc, ok := s.fdd.ObjectClass(cn)
		if !ok {
			return nil, fmt.Errorf("no object class %s", cn)
		}
		var ics []peer.InteractionClassHandle
		if names, ok := a.get("interactions"); ok {
			for _, n := range strings.Split(names, ",") {
				ic, ok := s.fdd.InteractionClass(n)
				if !ok {
					return nil, fmt.Errorf("no interaction class %s", n)
				}
				ics = append(ics, ic.Handle)
			}
		}
		switch {
		case cmd == "publish-directed":
			return fail(name, f.PublishObjectClassDirectedInteractions(oc.Handle, ics...))
		case cmd == "subscribe-directed" && universally:
			return fail(name, f.SubscribeObjectClassDirectedInteractionsUniversally(oc.Handle, ics...))
		case cmd == "subscribe-directed":
			return fail(name, f.SubscribeObjectClassDirectedInteractions(oc.Handle, ics...))
		case cmd == "unpublish-directed":
			return fail(name, f.UnpublishObjectClassDirectedInteractions(oc.Handle, ics...))
		}
		return fail(name, f.UnsubscribeObjectClassDirectedInteractions(oc.Handle, ics...))
	case "send-directed":
		cn, err := a.need("class")
		if err != nil {
			return nil, err
		}
		c, ok := s.fdd.InteractionClass(cn)
		if !ok {
			return nil, fmt.Errorf("no interaction class %s", cn)
		}
		o, err := s.object(a)
		if err != nil {
			return nil, err
		}
		ts, hasTS, err := a.float("ts")
		if err != nil {
			return nil, err
		}
		tag := s.tag(name, a)
		vals, err := scriptValues(a, "parameter", c.QualifiedName, func(k string) (peer.ParameterHandle, bool) {
			p, ok := c.Parameter(k)
			if !ok {
				return 0, false
			}
			return p.Handle, true
		})
		if err != nil {
			return nil, err
		}
		if hasTS {
			h, err := f.SendDirectedInteractionWithTime(c.Handle, o.h, vals, tag, peer.Float64Time(ts))
			s.keepHandle(tag, h)
			return fail(name, err)
		}
		return fail(name, f.SendDirectedInteraction(c.Handle, o.h, vals, tag))
	case "send":
		cn, err := a.need("class")
		if err != nil {
			return nil, err
		}
		c, ok := s.fdd.InteractionClass(cn)
		if !ok {
			return nil, fmt.Errorf("no interaction class %s", cn)
		}
		ts, hasTS, err := a.float("ts")
		if err != nil {
			return nil, err
		}
		tag := s.tag(name, a)
		rs, withRegions, err := s.regionsArg(a)
		if err != nil {
			return nil, err
		}
		vals, err := scriptValues(a, "parameter", c.QualifiedName, func(k string) (peer.ParameterHandle, bool) {
			p, ok := c.Parameter(k)
			if !ok {
				return 0, false
			}
			return p.Handle, true
		})
		if err != nil {
			return nil, err
		}
		switch {
		case hasTS && withRegions:
			h, err := f.SendInteractionWithRegionsAndTime(c.Handle, vals, rs, tag, peer.Float64Time(ts))
			s.keepHandle(tag, h)
			return fail(name, err)
		case hasTS:
			h, err := f.SendInteractionWithTimeRetractable(c.Handle, vals, tag, peer.Float64Time(ts))
			s.keepHandle(tag, h)
			return fail(name, err)
		case withRegions:
			return fail(name, f.SendInteractionWithRegions(c.Handle, vals, rs, tag))
		}
		return fail(name, f.SendInteraction(c.Handle, vals, tag))
	case "delete":
		o, err := s.object(a)
		if err != nil {
			return nil, err
		}
		ts, hasTS, err := a.float("ts")
		if err != nil {
			return nil, err
		}
		tag := s.tag(name, a)
		if hasTS {
			h, err := f.DeleteObjectInstanceWithTimeRetractable(o.h, tag, peer.Float64Time(ts))
			s.keepHandle(tag, h)
			return fail(name, err)
		}
		return fail(name, f.DeleteObjectInstance(o.h, tag))
	case "enable-regulation", "modify-lookahead":
		l, ok, err := a.float("lookahead")
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, errors.New("missing lookahead=")
		}
		if cmd == "modify-lookahead" {
			return fail(name, f.ModifyLookahead(peer.Float64Time(l)))
		}
		return fail(name, f.EnableTimeRegulation(peer.Float64Time(l)))
	case "disable-regulation":
		return fail(name, f.DisableTimeRegulation())
	case "enable-constrained":
		return fail(name, f.EnableTimeConstrained())
	case "disable-constrained":
		return fail(name, f.DisableTimeConstrained())
	case "advance", "advance-available", "next-message", "next-message-available", "flush-queue":
		t, ok, err := a.float("t")
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, errors.New("missing t=")
		}
		req := map[string]func(peer.LogicalTime) error{
			"advance":                f.TimeAdvanceRequest,
			"advance-available":      f.TimeAdvanceRequestAvailable,
			"next-message":           f.NextMessageRequest,
			"next-message-available": f.NextMessageRequestAvailable,
			"flush-queue":            f.FlushQueueRequest,
		}[cmd]
		return fail(name, req(peer.Float64Time(t)))
	case "retract":
		tag, err := a.need("tag")
		if err != nil {
			return nil, err
		}
		h, ok := s.handles[tag]
		if !ok {
			return nil, fmt.Errorf("no time-stamped message with tag %s was sent", tag)
		}
		return fail(name, f.Retract(h))
	case "change-order":
		ov, err := a.need("order")
		if err != nil {
			return nil, err
		}
		var order peer.OrderType
		switch ov {
		case "receive":
			order = peer.Receive
		case "timestamp":
			order = peer.TimeStamp
		default:
			return nil, fmt.Errorf("order=%s: want receive or timestamp", ov)
		}
		if _, isObj := a.vals["obj"]; !isObj {
			cn, err := a.need("class")
			if err != nil {
				return nil, errors.New("change-order needs obj=LABEL attrs=... or class=INTERACTION")
			}
			c, ok := s.fdd.InteractionClass(cn)
			if !ok {
				return nil, fmt.Errorf("no interaction class %s", cn)
			}
			return fail(name, f.ChangeInteractionOrderType(c.Handle, order))
		}
		o, err := s.object(a)
		if err != nil {
			return nil, err
		}
		as, err := a.need("attrs")
		if err != nil {
			return nil, err
		}
		c, _ := s.fdd.ObjectClassByHandle(o.class)
		var hs []peer.AttributeHandle
		for _, n := range strings.Split(as, ",") {
			at, ok := c.Attribute(n)
			if !ok {
				return nil, fmt.Errorf("no attribute %s in %s", n, c.QualifiedName)
			}
			hs = append(hs, at.Handle)
		}
		return fail(name, f.ChangeAttributeOrderType(o.h, order, hs...))
	case "query-lits":
		// Printed after the step's wait, so it shows the settled state.
		s.litsQueries = append(s.litsQueries, name)
		return nil, nil
	case "resign":
		action := peer.DeleteObjects
		if v, ok := a.get("action"); ok {
			switch v {
			case "delete":
			case "divest":
				action = peer.UnconditionallyDivestAttributes
			case "none":
				action = peer.NoAction
			default:
				return nil, fmt.Errorf("action=%s: want delete, divest or none", v)
			}
		}
		ctx, cancel := context.WithTimeout(s.ctx, 5*time.Second)
		defer cancel()
		return fail(name, f.ResignFederationExecution(ctx, action))
	case "crash":
		if s.crashed[name] {
			return nil, fmt.Errorf("%s crashed already", name)
		}
		s.c.Crash(i)
		s.crashed[name] = true
		return nil, nil
	case "restart":
		// The host comes back: a new federate joins under the name (a
		// new handle and incarnation; the others see it join), and
		// later commands naming it address the new one.
		if !s.crashed[name] {
			return nil, fmt.Errorf("restart %s: it has not crashed", name)
		}
		nf, err := s.c.Add(s.ctx, name)
		if err != nil {
			return fail(name, err)
		}
		delete(s.crashed, name)
		s.fedIdx[name] = len(s.c.Feds) - 1
		s.fedName[nf.Handle()] = name
		s.printed = append(s.printed, 0)
		return nil, nil
	case "modules":
		// The FOM modules of the federate's FDD, the MIM first.
		var files []string
		for _, m := range f.FDD().Modules {
			files = append(files, m.File)
		}
		s.lines = append(s.lines, fmt.Sprintf("%s: modules %s", name, strings.Join(files, " ")))
		return nil, nil
	case "query":
		// Printed after the step's wait, so it shows the settled state.
		s.queries = append(s.queries, name)
		return nil, nil
	}
	return nil, fmt.Errorf("unknown command %q", cmd)
}

// create creates the federation as a connected non-member: with the
// test FOM, time=integer for HLAinteger64Time, and mim=KIND for
// createFederationExecutionWithMIM with one of the MIMs testMIM makes.
func (s *simulation) create(cfg peer.Config, a *args) (*serviceError, error) {
	d, err := FOM()
	if err != nil {
		return nil, err
	}
	cfg.FOMModules = []*fomxml.Document{d}
	if v, ok := a.get("time"); ok {
		if v != "integer" && v != "float" {
			return nil, errors.New("create [time=integer|float] [mim=KIND]")
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

// federations prints a list of federation executions: [this] when it
// holds only this script's, whose name has a random part; the time
// representation follows a name when it is not the default.
func (s *simulation) federations(list []peer.FederationExecutionInformation) string {
	names := []string{}
	for _, i := range list {
		n := i.FederationExecutionName
		if n == s.c.Federation {
			n = "this"
		}
		if t := i.LogicalTimeImplementationName; t != "" && t != string(peer.HLAfloat64Time) {
			n += "(" + t + ")"
		}
		names = append(names, n)
	}
	return fmt.Sprint(names)
}

// fail turns a service's error into the step's output.
func fail(name string, err error) (*serviceError, error) {
	if err == nil {
		return nil, nil
	}
	return &serviceError{name, err}, nil
}

// ownership runs the ownership commands: divest (mode=unconditional,
// negotiated or if-wanted), confirm-divestiture, cancel-divestiture,
// acquire (if-available), cancel-acquisition, deny-release.
func (s *simulation) ownership(cmd, name string, f *peer.Federate, a *args, ifAvailable bool) (*serviceError, error) {
	o, err := s.object(a)
	if err != nil {
		return nil, err
	}
	attrs, err := s.attrsOf(a, o.class)
	if err != nil {
		return nil, err
	}
	var tag []byte
	if t, ok := a.get("tag"); ok {
		s.userTags[t] = true
		tag = []byte(t)
	}
	switch cmd {
	case "divest":
		mode, _ := a.get("mode")
		switch mode {
		case "", "unconditional":
			return fail(name, f.UnconditionalAttributeOwnershipDivestiture(o.h, attrs...))
		case "negotiated":
			return fail(name, f.NegotiatedAttributeOwnershipDivestiture(o.h, tag, attrs...))
		case "if-wanted":
			given, err := f.AttributeOwnershipDivestitureIfWanted(o.h, attrs...)
			if err != nil {
				return fail(name, err)
			}
			s.lines = append(s.lines, fmt.Sprintf("%s: divested %s attrs=%s", name, s.obj(o.h), s.attrNames(given)))
			return nil, nil
		}
		return nil, fmt.Errorf("mode=%s: want unconditional, negotiated or if-wanted", mode)
	case "confirm-divestiture":
		return fail(name, f.ConfirmDivestiture(o.h, tag, attrs...))
	case "cancel-divestiture":
		return fail(name, f.CancelNegotiatedAttributeOwnershipDivestiture(o.h, attrs...))
	case "acquire":
		if ifAvailable {
			return fail(name, f.AttributeOwnershipAcquisitionIfAvailable(o.h, attrs...))
		}
		return fail(name, f.AttributeOwnershipAcquisition(o.h, tag, attrs...))
	case "cancel-acquisition":
		return fail(name, f.CancelAttributeOwnershipAcquisition(o.h, attrs...))
	}
	return fail(name, f.AttributeOwnershipReleaseDenied(o.h, attrs...))
}

// regionsArg reads regions=R1,R2 (labels of regions the script made);
// ok is false when the argument is absent.
func (s *simulation) regionsArg(a *args) ([]peer.RegionHandle, bool, error) {
	v, ok := a.get("regions")
	if !ok {
		return nil, false, nil
	}
	var rs []peer.RegionHandle
	for _, l := range strings.Split(v, ",") {
		h, ok := s.regions[l]
		if !ok {
			return nil, false, fmt.Errorf("no region %s", l)
		}
		rs = append(rs, h)
	}
	return rs, true, nil
}

// attrsOrDimensioned reads attrs=A,B of class c, or when absent takes
// every attribute of c bound to a dimension.
func (s *simulation) attrsOrDimensioned(a *args, c *fomxml.ObjectClass) ([]peer.AttributeHandle, error) {
	if _, ok := a.vals["attrs"]; ok {
		return s.attrsOf(a, c.Handle)
	}
	var hs []peer.AttributeHandle
	for _, at := range c.AllAttributes() {
		if len(at.Dimensions) > 0 {
			hs = append(hs, at.Handle)
		}
	}
	return hs, nil
}

// regionCommand runs "region NAME as=R X=lo,hi ..." (create and commit),
// "modify-region NAME region=R X=lo,hi ..." (set and commit),
// "delete-region NAME region=R", and "associate NAME obj=O attrs=A
// regions=R" and "unassociate ...". A range is lo,hi: [lo, hi).
func (s *simulation) regionCommand(cmd, name string, f *peer.Federate, a *args) (*serviceError, error) {
	// ranges reads DIM=lo,hi for every dimension of the FOM.
	ranges := func() (map[peer.DimensionHandle]peer.RangeBounds, error) {
		out := map[peer.DimensionHandle]peer.RangeBounds{}
		for _, d := range s.fdd.Dimensions {
			v, ok := a.get(d.Name)
			if !ok {
				continue
			}
			lo, hi, found := strings.Cut(v, ",")
			l, err1 := strconv.ParseUint(lo, 10, 64)
			h, err2 := strconv.ParseUint(hi, 10, 64)
			if !found || err1 != nil || err2 != nil {
				return nil, fmt.Errorf("%s=%s: want lower,upper", d.Name, v)
			}
			out[d.Handle] = peer.RangeBounds{Lower: l, Upper: h}
		}
		return out, nil
	}
	set := func(r peer.RegionHandle, rs map[peer.DimensionHandle]peer.RangeBounds) error {
		ds := make([]peer.DimensionHandle, 0, len(rs))
		for d := range rs {
			ds = append(ds, d)
		}
		slices.Sort(ds)
		for _, d := range ds {
			if err := f.SetRangeBounds(r, d, rs[d]); err != nil {
				return err
			}
		}
		return f.CommitRegionModifications(r)
	}
	switch cmd {
	case "region":
		label, err := a.need("as")
		if err != nil {
			return nil, err
		}
		if _, dup := s.regions[label]; dup {
			return nil, fmt.Errorf("region label %s used twice", label)
		}
		rs, err := ranges()
		if err != nil {
			return nil, err
		}
		ds := make([]peer.DimensionHandle, 0, len(rs))
		for d := range rs {
			ds = append(ds, d)
		}
		r, err := f.CreateRegion(ds...)
		if err != nil {
			return fail(name, err)
		}
		s.regions[label] = r
		return fail(name, set(r, rs))
	case "modify-region", "delete-region":
		label, err := a.need("region")
		if err != nil {
			return nil, err
		}
		r, ok := s.regions[label]
		if !ok {
			return nil, fmt.Errorf("no region %s", label)
		}
		if cmd == "delete-region" {
			return fail(name, f.DeleteRegion(r))
		}
		rs, err := ranges()
		if err != nil {
			return nil, err
		}
		return fail(name, set(r, rs))
	}
	o, err := s.object(a)
	if err != nil {
		return nil, err
	}
	attrs, err := s.attrsOf(a, o.class)
	if err != nil {
		return nil, err
	}
	rs, ok, err := s.regionsArg(a)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%s needs regions=R", cmd)
	}
	pair := peer.AttributeRegions{Attributes: attrs, Regions: rs}
	if cmd == "associate" {
		return fail(name, f.AssociateRegionsForUpdates(o.h, pair))
	}
	return fail(name, f.UnassociateRegionsForUpdates(o.h, pair))
}

// objectAttr reads obj=O attr=A: the instance, the attribute's handle
// and its name.
func (s *simulation) objectAttr(a *args) (*simObject, peer.AttributeHandle, string, error) {
	o, err := s.object(a)
	if err != nil {
		return nil, 0, "", err
	}
	an, err := a.need("attr")
	if err != nil {
		return nil, 0, "", err
	}
	c, _ := s.fdd.ObjectClassByHandle(o.class)
	at, ok := c.Attribute(an)
	if !ok {
		return nil, 0, "", fmt.Errorf("no attribute %s", an)
	}
	return o, at.Handle, an, nil
}

// handoff runs "handoff A B obj=O attrs=X,Y rounds=N": N rounds in
// which B acquires the attributes from A and A takes them back, each
// owner releasing them when asked (AttributeOwnershipDivestitureIfWanted),
// as fast as the federation allows. After every transfer both must
// agree that exactly the acquirer owns every attribute. It prints one
// line, "A,B: handoff OBJ attrs=X,Y rounds=N transfers=2N owner=A", or
// the first round that went wrong; the callbacks of the rounds are not
// printed.
func (s *simulation) handoff(a *args) (*serviceError, error) {
	if len(a.pos) != 2 {
		return nil, errors.New("handoff A B obj=O attrs=X rounds=N")
	}
	var idx [2]int
	for k, n := range a.pos {
		i, ok := s.fedIdx[n]
		if !ok {
			return nil, fmt.Errorf("unknown federate %s", n)
		}
		idx[k] = i
	}
	o, err := s.object(a)
	if err != nil {
		return nil, err
	}
	attrs, err := s.attrsOf(a, o.class)
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

// tagged formats " tag=%q" for a tag the script gave, "" otherwise.
func (s *simulation) tagged(tag []byte) string {
	if len(tag) == 0 {
		return ""
	}
	return fmt.Sprintf(" tag=%q", tag)
}

// switches runs "switch NAME relevance|attribute-relevance|scope|
// interaction-relevance on|off" and "callbacks NAME on|off".
func (s *simulation) switches(cmd string, a *args) (*serviceError, error) {
	want := 3
	if cmd == "callbacks" {
		want = 2
	}
	if len(a.pos) != want || (a.pos[want-1] != "on" && a.pos[want-1] != "off" && (cmd == "callbacks" || a.pos[want-1] != "get")) {
		return nil, errors.New("switch NAME relevance|attribute-relevance|scope|interaction-relevance|service-reporting|exception-reporting on|off|get, or callbacks NAME on|off")
	}
	name := a.pos[0]
	i, ok := s.fedIdx[name]
	if !ok {
		return nil, fmt.Errorf("unknown federate %s", name)
	}
	f, on := s.c.Feds[i], a.pos[want-1] == "on"
	if cmd == "callbacks" {
		if on {
			return fail(name, f.EnableCallbacks())
		}
		return fail(name, f.DisableCallbacks())
	}
	set := func(sw func(bool) error) func() error { return func() error { return sw(on) } }
	type ops struct {
		on, off func() error
		get     func() (bool, error)
	}
	sw := map[string]ops{
		"relevance":             {f.EnableObjectClassRelevanceAdvisorySwitch, f.DisableObjectClassRelevanceAdvisorySwitch, f.GetObjectClassRelevanceAdvisorySwitch},
		"attribute-relevance":   {f.EnableAttributeRelevanceAdvisorySwitch, f.DisableAttributeRelevanceAdvisorySwitch, f.GetAttributeRelevanceAdvisorySwitch},
		"scope":                 {f.EnableAttributeScopeAdvisorySwitch, f.DisableAttributeScopeAdvisorySwitch, f.GetAttributeScopeAdvisorySwitch},
		"interaction-relevance": {f.EnableInteractionRelevanceAdvisorySwitch, f.DisableInteractionRelevanceAdvisorySwitch, f.GetInteractionRelevanceAdvisorySwitch},
		"service-reporting":     {set(f.SetServiceReportingSwitch), set(f.SetServiceReportingSwitch), f.GetServiceReportingSwitch},
		"exception-reporting":   {set(f.SetExceptionReportingSwitch), set(f.SetExceptionReportingSwitch), f.GetExceptionReportingSwitch},
	}
	p, ok := sw[a.pos[1]]
	if !ok {
		return nil, fmt.Errorf("no switch %s", a.pos[1])
	}
	switch {
	case a.pos[2] == "get":
		v, err := p.get()
		if err != nil {
			return fail(name, err)
		}
		state := "off"
		if v {
			state = "on"
		}
		s.lines = append(s.lines, fmt.Sprintf("%s: switch %s %s", name, a.pos[1], state))
		return nil, nil
	case on:
		return fail(name, p.on())
	}
	return fail(name, p.off())
}

// attrsOf reads attrs=A,B of class.
func (s *simulation) attrsOf(a *args, class peer.ObjectClassHandle) ([]peer.AttributeHandle, error) {
	ns, err := a.list("attrs")
	if err != nil {
		return nil, err
	}
	c, _ := s.fdd.ObjectClassByHandle(class)
	var hs []peer.AttributeHandle
	for _, n := range ns {
		at, ok := c.Attribute(n)
		if !ok {
			return nil, fmt.Errorf("no attribute %s in %s", n, c.QualifiedName)
		}
		hs = append(hs, at.Handle)
	}
	return hs, nil
}

// interactionClass reads class=C, an interaction class.
func (s *simulation) interactionClass(a *args) (peer.InteractionClassHandle, error) {
	cn, err := a.need("class")
	if err != nil {
		return 0, err
	}
	c, ok := s.fdd.InteractionClass(cn)
	if !ok {
		return 0, fmt.Errorf("no interaction class %s", cn)
	}
	return c.Handle, nil
}

// transportArg reads type=reliable|best-effort.
func transportArg(a *args) (peer.TransportationType, error) {
	v, err := a.need("type")
	if err != nil {
		return 0, err
	}
	switch v {
	case "reliable":
		return peer.HLAreliable, nil
	case "best-effort":
		return peer.HLAbestEffort, nil
	}
	return 0, fmt.Errorf("type=%s: want reliable or best-effort", v)
}

func (s *simulation) federation(a *args) error {
	if s.c != nil {
		return errors.New("federation must come first, once")
	}
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

func parseFaults(a *args) (transport.Faults, error) {
	var f transport.Faults
	for _, p := range []struct {
		k string
		v *float64
	}{{"loss", &f.Loss}, {"dup", &f.Duplicate}, {"reorder", &f.Reorder}} {
		v, ok, err := a.float(p.k)
		if err != nil {
			return f, err
		}
		if ok {
			if v < 0 || v > 1 {
				return f, fmt.Errorf("%s=%v is not a probability", p.k, v)
			}
			*p.v = v
		}
	}
	for _, p := range []struct {
		k string
		v *time.Duration
	}{{"delay", &f.Delay}, {"jitter", &f.Jitter}} {
		if v, ok := a.get(p.k); ok {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return f, fmt.Errorf("%s=%s: want a duration", p.k, v)
			}
			*p.v = d
		}
	}
	return f, nil
}

func (s *simulation) classAttrs(a *args) (peer.ObjectClassHandle, []peer.AttributeHandle, error) {
	cn, err := a.need("class")
	if err != nil {
		return 0, nil, err
	}
	c, ok := s.fdd.ObjectClass(cn)
	if !ok {
		return 0, nil, fmt.Errorf("no object class %s", cn)
	}
	as, err := a.need("attrs")
	if err != nil {
		return 0, nil, err
	}
	var hs []peer.AttributeHandle
	for _, n := range strings.Split(as, ",") {
		at, ok := c.Attribute(n)
		if !ok {
			return 0, nil, fmt.Errorf("no attribute %s in %s", n, c.QualifiedName)
		}
		hs = append(hs, at.Handle)
	}
	return c.Handle, hs, nil
}

func (s *simulation) object(a *args) (*simObject, error) {
	l, err := a.need("obj")
	if err != nil {
		return nil, err
	}
	o, ok := s.objs[l]
	if !ok {
		return nil, fmt.Errorf("no object %s registered in the script", l)
	}
	return o, nil
}

// tag returns the script's tag= or a unique one, NAME/n, so that Check
// can follow every message.
func (s *simulation) tag(fed string, a *args) []byte {
	if t, ok := a.get("tag"); ok {
		s.userTags[t] = true
		return []byte(t)
	}
	s.msgs[fed]++
	return []byte(fmt.Sprintf("%s/%d", fed, s.msgs[fed]))
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
	names := make([]string, 0, len(s.fedIdx))
	for n := range s.fedIdx {
		names = append(names, n)
	}
	sort.Strings(names)
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

func num(t peer.LogicalTime) string {
	return strconv.FormatFloat(t.Float(), 'g', -1, 64)
}

func (s *simulation) fed(h peer.FederateHandle) string {
	if n, ok := s.fedName[h]; ok {
		return n
	}
	return fmt.Sprintf("federate(%d)", h)
}

func (s *simulation) obj(h peer.ObjectInstanceHandle) string {
	if l, ok := s.objLabel[h]; ok {
		return l
	}
	return fmt.Sprintf("object(%v)", h)
}

func shortName(q string) string {
	for _, root := range []string{"HLAobjectRoot.", "HLAinteractionRoot."} {
		if strings.HasPrefix(q, root) {
			return q[len(root):]
		}
	}
	return q
}

// interaction formats an interaction's class, then after (" to OBJ" for
// a directed one), then its parameters by name, sorted.
func (s *simulation) interaction(b *strings.Builder, class peer.InteractionClassHandle, after string, values peer.ParameterValues) {
	ic, known := s.fdd.InteractionClassByHandle(class)
	if known {
		b.WriteString(shortName(ic.QualifiedName))
	} else {
		fmt.Fprint(b, class)
	}
	b.WriteString(after)
	var kv []string
	for h, v := range values {
		pn := fmt.Sprint(h)
		if known {
			if p, ok := ic.ParameterByHandle(h); ok {
				pn = p.Name
			}
		}
		kv = append(kv, fmt.Sprintf("%s=%q", pn, v))
	}
	sort.Strings(kv)
	for _, x := range kv {
		b.WriteString(" " + x)
	}
}

// message formats the common tail of reflect, interaction and remove.
func (s *simulation) message(b *strings.Builder, tag []byte, sent, recv peer.OrderType, t peer.LogicalTime, producer peer.FederateHandle) {
	if s.userTags[string(tag)] {
		fmt.Fprintf(b, " tag=%q", tag)
	}
	if t != nil {
		fmt.Fprintf(b, " ts=%s", num(t))
	}
	fmt.Fprintf(b, " order=%v", recv)
	if sent != recv {
		fmt.Fprintf(b, " sent=%v", sent)
	}
	fmt.Fprintf(b, " from=%s", s.fed(producer))
}

func (s *simulation) format(ev peer.Event) string {
	if line, ok := s.momFormat(ev); ok {
		return line
	}
	var b strings.Builder
	switch e := ev.(type) {
	case peer.DiscoverObjectInstance:
		fmt.Fprintf(&b, "discover %s", s.obj(e.Object))
		if c, ok := s.fdd.ObjectClassByHandle(e.Class); ok {
			fmt.Fprintf(&b, " class=%s", shortName(c.QualifiedName))
		}
		if o, ok := s.objs[s.obj(e.Object)]; ok && o.name != "" && o.name != s.obj(e.Object) {
			fmt.Fprintf(&b, " name=%s", e.Name)
		}
		fmt.Fprintf(&b, " from=%s", s.fed(e.Producer))
	case peer.ReflectAttributeValues:
		fmt.Fprintf(&b, "reflect %s", s.obj(e.Object))
		var kv []string
		for h, v := range e.Values {
			kv = append(kv, fmt.Sprintf("%s=%q", s.attrName(h), v))
		}
		sort.Strings(kv)
		for _, x := range kv {
			b.WriteString(" " + x)
		}
		s.message(&b, e.Tag, e.SentOrder, e.ReceivedOrder, e.Time, e.Producer)
	case peer.ReceiveInteraction:
		b.WriteString("interaction ")
		s.interaction(&b, e.Class, "", e.Values)
		s.message(&b, e.Tag, e.SentOrder, e.ReceivedOrder, e.Time, e.Producer)
	case peer.ReceiveDirectedInteraction:
		b.WriteString("directed interaction ")
		s.interaction(&b, e.Class, " to "+s.obj(e.Object), e.Values)
		s.message(&b, e.Tag, e.SentOrder, e.ReceivedOrder, e.Time, e.Producer)
	case peer.RemoveObjectInstance:
		fmt.Fprintf(&b, "remove %s", s.obj(e.Object))
		s.message(&b, e.Tag, e.SentOrder, e.ReceivedOrder, e.Time, e.Producer)
	case peer.ObjectInstanceNameReservationSucceeded:
		fmt.Fprintf(&b, "reserved name=%s", e.Name)
	case peer.ObjectInstanceNameReservationFailed:
		fmt.Fprintf(&b, "reservation failed name=%s", e.Name)
	case peer.TimeRegulationEnabled:
		fmt.Fprintf(&b, "regulation enabled t=%s", num(e.Time))
	case peer.TimeConstrainedEnabled:
		fmt.Fprintf(&b, "constrained enabled t=%s", num(e.Time))
	case peer.TimeAdvanceGrant:
		fmt.Fprintf(&b, "grant t=%s", num(e.Time))
		if e.Request != lbts.TimeAdvanceRequest {
			fmt.Fprintf(&b, " (%v)", e.Request)
		}
	case peer.RequestRetraction:
		tag, ok := s.handleTag[e.Handle]
		if !ok {
			tag = e.Handle.String()
		}
		fmt.Fprintf(&b, "retraction requested %s from=%s", tag, s.fed(e.Handle.Federate))
	case peer.FederateJoined:
		fmt.Fprintf(&b, "joined %s", e.Name)
	case peer.FederateResigned:
		fmt.Fprintf(&b, "resigned %s", e.Name)
	case peer.SynchronizationPointRegistrationSucceeded:
		fmt.Fprintf(&b, "sync registered %s", e.Label)
	case peer.SynchronizationPointRegistrationFailed:
		fmt.Fprintf(&b, "sync failed %s reason=%s", e.Label, e.Reason)
	case peer.AnnounceSynchronizationPoint:
		fmt.Fprintf(&b, "announce %s tag=%q", e.Label, e.Tag)
	case peer.FederationSynchronized:
		fmt.Fprintf(&b, "synchronized %s", e.Label)
		if len(e.Failed) > 0 {
			names := make([]string, len(e.Failed))
			for i, h := range e.Failed {
				names[i] = s.fed(h)
			}
			sort.Strings(names)
			fmt.Fprintf(&b, " failed=%s", strings.Join(names, ","))
		}
	case peer.InitiateFederateSave:
		fmt.Fprintf(&b, "initiate save %s", e.Label)
		if e.HasTime {
			fmt.Fprintf(&b, " t=%s", num(e.Time))
		}
	case peer.FederationSaved:
		b.WriteString("saved")
	case peer.FederationNotSaved:
		fmt.Fprintf(&b, "not saved reason=%s", e.Reason)
	case peer.FederationSaveStatusResponse:
		b.WriteString("save status")
		for _, p := range e.Statuses {
			fmt.Fprintf(&b, " %s=%s", s.fed(p.Federate), p.Status)
		}
	case peer.RequestFederationRestoreSucceeded:
		fmt.Fprintf(&b, "restore requested %s", e.Label)
	case peer.RequestFederationRestoreFailed:
		fmt.Fprintf(&b, "restore request failed %s", e.Label)
	case peer.FederationRestoreBegun:
		b.WriteString("restore begun")
	case peer.InitiateFederateRestore:
		fmt.Fprintf(&b, "initiate restore %s", e.Label)
	case peer.FederationRestored:
		b.WriteString("restored")
	case peer.FederationNotRestored:
		fmt.Fprintf(&b, "not restored reason=%s", e.Reason)
	case peer.ReportFederationExecutions:
		b.WriteString("federations: " + s.federations(e.Executions))
	case peer.FederationRestoreStatusResponse:
		b.WriteString("restore status")
		for _, p := range e.Statuses {
			fmt.Fprintf(&b, " %s=%s", s.fed(p.PreRestore), p.Status)
		}
	case peer.FederateLost:
		fmt.Fprintf(&b, "lost %s", e.Name)
	case peer.ConnectionLost:
		fmt.Fprintf(&b, "connection lost: %s", e.Reason)
	case peer.StartRegistrationForObjectClass:
		fmt.Fprintf(&b, "start registration class=%s", s.className(e.Class))
	case peer.StopRegistrationForObjectClass:
		fmt.Fprintf(&b, "stop registration class=%s", s.className(e.Class))
	case peer.TurnInteractionsOn:
		fmt.Fprintf(&b, "turn interactions on class=%s", s.interactionName(e.Class))
	case peer.TurnInteractionsOff:
		fmt.Fprintf(&b, "turn interactions off class=%s", s.interactionName(e.Class))
	case peer.TurnUpdatesOnForObjectInstance:
		fmt.Fprintf(&b, "turn updates on %s attrs=%s", s.obj(e.Object), s.attrNames(e.Attributes))
		if e.UpdateRate != "" {
			fmt.Fprintf(&b, " rate=%s", e.UpdateRate)
		}
	case peer.TurnUpdatesOffForObjectInstance:
		fmt.Fprintf(&b, "turn updates off %s attrs=%s", s.obj(e.Object), s.attrNames(e.Attributes))
	case peer.ProvideAttributeValueUpdate:
		fmt.Fprintf(&b, "provide %s attrs=%s tag=%q", s.obj(e.Object), s.attrNames(e.Attributes), e.Tag)
	case peer.AttributesInScope:
		fmt.Fprintf(&b, "in scope %s attrs=%s", s.obj(e.Object), s.attrNames(e.Attributes))
	case peer.AttributesOutOfScope:
		fmt.Fprintf(&b, "out of scope %s attrs=%s", s.obj(e.Object), s.attrNames(e.Attributes))
	case peer.MultipleObjectInstanceNameReservationSucceeded:
		fmt.Fprintf(&b, "reserved names=%s", strings.Join(e.Names, ","))
	case peer.MultipleObjectInstanceNameReservationFailed:
		fmt.Fprintf(&b, "reservation failed names=%s", strings.Join(e.Names, ","))
	case peer.ConfirmAttributeTransportationTypeChange:
		fmt.Fprintf(&b, "transport confirmed %s attrs=%s type=%v", s.obj(e.Object), s.attrNames(e.Attributes), e.Transportation)
	case peer.ReportAttributeTransportationType:
		fmt.Fprintf(&b, "transport %s %s=%v", s.obj(e.Object), s.attrName(e.Attribute), e.Transportation)
	case peer.RequestAttributeOwnershipRelease:
		fmt.Fprintf(&b, "release requested %s attrs=%s%s", s.obj(e.Object), s.attrNames(e.Attributes), s.tagged(e.Tag))
	case peer.RequestAttributeOwnershipAssumption:
		fmt.Fprintf(&b, "assumption requested %s attrs=%s%s", s.obj(e.Object), s.attrNames(e.Attributes), s.tagged(e.Tag))
	case peer.RequestDivestitureConfirmation:
		fmt.Fprintf(&b, "confirm divestiture %s attrs=%s%s", s.obj(e.Object), s.attrNames(e.Attributes), s.tagged(e.Tag))
	case peer.AttributeOwnershipAcquisitionNotification:
		fmt.Fprintf(&b, "acquired %s attrs=%s%s", s.obj(e.Object), s.attrNames(e.Attributes), s.tagged(e.Tag))
	case peer.AttributeOwnershipUnavailable:
		fmt.Fprintf(&b, "unavailable %s attrs=%s", s.obj(e.Object), s.attrNames(e.Attributes))
	case peer.ConfirmAttributeOwnershipAcquisitionCancellation:
		fmt.Fprintf(&b, "acquisition cancelled %s attrs=%s", s.obj(e.Object), s.attrNames(e.Attributes))
	case peer.InformAttributeOwnership:
		fmt.Fprintf(&b, "owner %s %s=%s", s.obj(e.Object), s.attrName(e.Attribute), s.fed(e.Owner))
	case peer.AttributeIsNotOwned:
		fmt.Fprintf(&b, "owner %s %s=none", s.obj(e.Object), s.attrName(e.Attribute))
	case peer.AttributeIsOwnedByRTI:
		fmt.Fprintf(&b, "owner %s %s=RTI", s.obj(e.Object), s.attrName(e.Attribute))
	case peer.ConfirmInteractionTransportationTypeChange:
		fmt.Fprintf(&b, "transport confirmed class=%s type=%v", s.interactionName(e.Class), e.Transportation)
	case peer.ReportInteractionTransportationType:
		fmt.Fprintf(&b, "transport %s class=%s type=%v", s.fed(e.Federate), s.interactionName(e.Class), e.Transportation)
	default:
		fmt.Fprintf(&b, "%T", ev)
	}
	return b.String()
}

func (s *simulation) className(h peer.ObjectClassHandle) string {
	if c, ok := s.fdd.ObjectClassByHandle(h); ok {
		return shortName(c.QualifiedName)
	}
	return fmt.Sprintf("class(%d)", h)
}

func (s *simulation) interactionName(h peer.InteractionClassHandle) string {
	if c, ok := s.fdd.InteractionClassByHandle(h); ok {
		return shortName(c.QualifiedName)
	}
	return fmt.Sprintf("interaction(%d)", h)
}

// attrNames lists attributes by name, sorted, comma-separated.
func (s *simulation) attrNames(hs []peer.AttributeHandle) string {
	ns := make([]string, len(hs))
	for i, h := range hs {
		ns[i] = s.attrName(h)
	}
	sort.Strings(ns)
	return strings.Join(ns, ",")
}

func (s *simulation) attrName(h peer.AttributeHandle) string {
	for _, c := range s.fdd.ObjectClasses {
		for _, a := range c.Attributes {
			if a.Handle == h {
				return a.Name
			}
		}
	}
	return fmt.Sprint(h)
}
