package core

import (
	"flag"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/lbts"
	"github.com/meshrti/meshrti/peer/hla"
	"github.com/meshrti/meshrti/peer/transport"
	"github.com/meshrti/meshrti/testnet/scenario"
)

// The interaction harness drives whole cores through scripts in
// testdata/interaction, the way etcd raft's InteractionEnv does: each
// step is a command (a service called on one federate, a tick, a
// control-plane input), and what the step made the cores do is its
// output, compared with the script. The cores share an in-test control
// plane (a register and replicated state, answering at once, as package
// peer's in-process registry does) and a loss-free data plane that hands
// every frame to every core joined to its group, in order.
//
// The scripts have the format of package testnet/scenario, which runs
// them: a command, a line "----" and its expected output, up to a blank
// line; lines starting with # between steps are comments. go test -run
// TestInteraction -rewrite writes the output the cores gave into the
// scripts: commit that only when you understand the diff. The output shows, per federate, the callbacks it got ("A: ..."),
// the control-plane operations it started ("A: op ..."), the replicated
// state it wrote ("A: set ...") and its trace (docs/trace.md: what it
// sent and what it delivered, "A: send ...", "A: deliver ...").
//
// Commands:
//
//	federation <names...>                  federates that join together (handles 1, 2, ... in order)
//	join <name> [unseen-by <fed>...]       one more federate joins; those named do not hear of it
//	tell <fed> <name>                      until this: fed hears that name joined
//	publish <fed> <class> [attributes...]  object class attributes, or an interaction class
//	subscribe <fed> <class> [attributes...]
//	register <fed> <class> <alias>         registers an instance, known to the script as alias
//	update <fed> <alias> <attr=value...> [time=t]
//	send <fed> <interaction> <param=value...> [time=t]
//	regulating <fed> <lookahead>           enables time regulation
//	constrained <fed>                      enables time constrained
//	advance <fed> <time>                   time advance request (TAR)
//	divest <fed> <alias> <attributes...>   unconditional divestiture
//	acquire <fed> <alias> <attributes...>  ownership acquisition
//	sync <fed> <label>                     registers a synchronization point
//	achieve <fed> <label>                  achieves it
//	save <fed> <label>                     requests a federation save
//	save-begun <fed> / save-complete <fed>
//	restore <fed> <label>                  requests a federation restore
//	restore-complete <fed>
//	resign <fed>                           resigns (CancelThenDeleteThenDivest)
//	lose <fed>                             the control plane drops fed
//	drop <fed>                             the control plane drops fed, which runs on (a paused process)
//	tick [n]                               ticks every core n times (1), stabilizing after each
//	stabilize                              hands frames and answers around until nothing moves
//
// A service's error is printed as "error: ..."; a command that printed
// nothing shows "ok".

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of testdata/interaction scripts")

// TestInteraction runs every script of testdata/interaction.
func TestInteraction(t *testing.T) {
	scenario.TestFiles(t, filepath.Join("testdata", "interaction", "*.txt"), *rewrite, func(t *testing.T) func(string) ([]string, error) {
		env := newInteractionEnv(t)
		return func(cmd string) ([]string, error) {
			out := env.run(cmd)
			if out == "" {
				out = "ok"
			}
			return strings.Split(out, "\n"), nil
		}
	})
}

// memStore is a SaveStore in memory, shared by the federates of a run.
type memStore struct {
	name  string
	saves map[string]map[string][]byte // label -> federate name -> state
	sets  map[string][]byte
	wip   map[string][]byte // this federate's pending state per label
}

func (s *memStore) WriteSave(label string, data, set []byte) error {
	s.wip[label] = slices.Clone(data)
	s.sets[label] = slices.Clone(set)
	return nil
}

func (s *memStore) EndSave(label string, saved bool) {
	if saved {
		if s.saves[label] == nil {
			s.saves[label] = make(map[string][]byte)
		}
		s.saves[label][s.name] = s.wip[label]
	}
	delete(s.wip, label)
}

func (s *memStore) ReadSave(label, name string) ([]byte, error) {
	b, ok := s.saves[label][name]
	if !ok {
		return nil, fmt.Errorf("no save %q of %q", label, name)
	}
	return b, nil
}

func (s *memStore) ReadSet(label string) ([]byte, error) {
	b, ok := s.sets[label]
	if !ok {
		return nil, fmt.Errorf("no save %q", label)
	}
	return b, nil
}

// regKey is a key of the test's register.
type regKey struct {
	holder  FederateHandle
	value   []byte
	version uint64
}

// envFed is one federate of the harness.
type envFed struct {
	name   string
	core   *Core
	groups map[transport.Group]bool
	gone   bool
	// unheard are the joins this federate has not been told of yet
	// (join ... unseen-by, tell).
	unheard []Member
	// handed counts the callbacks that end a pending state (EndsPending)
	// printed so far: the harness hands every callback over at once.
	handed uint64
}

type interactionEnv struct {
	t       *testing.T
	fdd     *fomxml.FDD
	feds    []*envFed
	aliases map[string]ObjectInstanceHandle
	reg     map[string]*regKey
	// states is every federate's replicated state, and version its
	// writes' counter: what a federate that joins is told.
	states  map[FederateHandle]map[string]regKey
	version map[FederateHandle]uint64
	saves   map[string]map[string][]byte
	sets    map[string][]byte
	out     *strings.Builder
}

func newInteractionEnv(t *testing.T) *interactionEnv {
	// The scripts' FOM: a Tank (Pos time-stamped, Fuel receive order,
	// both divestable) and a time-stamped interaction Fire(Range).
	doc, err := fomxml.ParseFile(filepath.Join("testdata", "interaction.xml"))
	if err != nil {
		t.Fatal(err)
	}
	fdd, err := fomxml.Merge(doc)
	if err != nil {
		t.Fatal(err)
	}
	return &interactionEnv{
		t: t, fdd: fdd,
		aliases: make(map[string]ObjectInstanceHandle),
		reg:     make(map[string]*regKey),
		states:  make(map[FederateHandle]map[string]regKey),
		version: make(map[FederateHandle]uint64),
		saves:   make(map[string]map[string][]byte),
		sets:    make(map[string][]byte),
	}
}

// run runs one command and returns what it printed.
func (e *interactionEnv) run(line string) string {
	var out strings.Builder
	e.out = &out
	args := strings.Fields(line)
	cmd, args := args[0], args[1:]
	if err := e.command(cmd, args); err != nil {
		fmt.Fprintf(&out, "error: %v\n", err)
	}
	return strings.TrimSuffix(out.String(), "\n")
}

func (e *interactionEnv) printf(format string, args ...any) {
	fmt.Fprintf(e.out, format+"\n", args...)
}

func (e *interactionEnv) command(cmd string, args []string) error {
	need := func(n int) {
		if len(args) < n {
			e.t.Fatalf("%s needs %d arguments, has %v", cmd, n, args)
		}
	}
	var f *envFed
	if len(args) > 0 && cmd != "federation" && cmd != "join" && cmd != "tick" {
		f = e.fed(args[0])
		f.core.HandedOver(f.handed)
	}
	switch cmd {
	case "federation":
		for _, name := range args {
			e.add(name)
		}
		e.stabilize()
		return nil
	case "join":
		need(1)
		var unseen []string
		if len(args) > 2 && args[1] == "unseen-by" {
			unseen = args[2:]
		}
		e.add(args[0], unseen...)
		e.stabilize()
		return nil
	case "tell":
		need(2)
		for i, m := range f.unheard {
			if m.Name == args[1] {
				f.unheard = slices.Delete(f.unheard, i, i+1)
				f.core.MemberJoined(m)
				e.stabilize()
				return nil
			}
		}
		e.t.Fatalf("%s was not kept from hearing %s joined", args[0], args[1])
		return nil
	case "publish", "subscribe":
		need(2)
		if oc, ok := e.fdd.ObjectClass(args[1]); ok {
			attrs := e.attrs(oc, args[2:])
			if cmd == "publish" {
				return f.core.PublishObjectClassAttributes(oc.Handle, attrs)
			}
			return f.core.SubscribeObjectClassAttributes(oc.Handle, attrs, true, "")
		}
		ic := e.interaction(args[1])
		if cmd == "publish" {
			return f.core.PublishInteractionClass(ic.Handle)
		}
		return f.core.SubscribeInteractionClass(ic.Handle, true)
	case "register":
		need(3)
		oc, ok := e.fdd.ObjectClass(args[1])
		if !ok {
			e.t.Fatalf("no object class %s", args[1])
		}
		h, err := f.core.RegisterObjectInstance(oc.Handle, "")
		if err != nil {
			return err
		}
		e.aliases[args[2]] = h
		e.printf("%s is %v", args[2], h)
		return nil
	case "update":
		need(3)
		h := e.alias(args[1])
		oc, ok := e.fdd.ObjectClassByHandle(e.classOf(f, h))
		if !ok {
			e.t.Fatalf("no class of %s", args[1])
		}
		kv, at := e.pairs(args[2:])
		values := byHandle(e, kv, func(name string) (AttributeHandle, bool) {
			if a, ok := oc.Attribute(name); ok {
				return a.Handle, true
			}
			return 0, false
		})
		_, err := f.core.UpdateAttributeValues(h, values, nil, at)
		return err
	case "send":
		need(3)
		ic := e.interaction(args[1])
		kv, at := e.pairs(args[2:])
		values := byHandle(e, kv, func(name string) (ParameterHandle, bool) {
			if p, ok := ic.Parameter(name); ok {
				return p.Handle, true
			}
			return 0, false
		})
		_, err := f.core.SendInteraction(ic.Handle, values, nil, at)
		return err
	case "regulating":
		need(2)
		return f.core.EnableTimeRegulation(hla.Float64Time(e.float(args[1])))
	case "constrained":
		return f.core.EnableTimeConstrained()
	case "advance":
		need(2)
		return f.core.TimeAdvance(lbts.TimeAdvanceRequest, hla.Float64Time(e.float(args[1])))
	case "divest", "acquire":
		need(3)
		h := e.alias(args[1])
		oc, _ := e.fdd.ObjectClassByHandle(e.classOf(f, h))
		attrs := e.attrs(oc, args[2:])
		if cmd == "divest" {
			return f.core.UnconditionalAttributeOwnershipDivestiture(h, attrs)
		}
		return f.core.AttributeOwnershipAcquisition(h, attrs, nil)
	case "sync":
		need(2)
		return f.core.RegisterFederationSynchronizationPoint(args[1], nil, nil)
	case "achieve":
		need(2)
		return f.core.SynchronizationPointAchieved(args[1], true)
	case "save":
		need(2)
		return f.core.RequestFederationSave(args[1], false, nil)
	case "save-begun":
		return f.core.FederateSaveBegun()
	case "save-complete":
		return f.core.FederateSaveComplete(true)
	case "restore":
		need(2)
		return f.core.RequestFederationRestore(args[1])
	case "restore-complete":
		return f.core.FederateRestoreComplete(true)
	case "resign":
		if err := f.core.Resign(hla.CancelThenDeleteThenDivest); err != nil {
			return err
		}
		e.take(f) // the notice goes out before the federate leaves
		f.gone = true
		e.leave(f, false)
		e.stabilize()
		return nil
	case "lose":
		f.core.SelfLost("the test dropped it")
		e.take(f) // its last callbacks
		f.gone = true
		e.leave(f, true)
		e.stabilize()
		return nil
	case "drop":
		// The federation removes f while it runs on (a paused process
		// the others declared dead): they see it lost, and it hears so
		// from its control plane, but it is not gone.
		f.core.SelfLost("the test dropped it")
		e.take(f)
		e.leave(f, true)
		e.stabilize()
		return nil
	case "tick":
		n := 1
		if len(args) > 0 {
			n = int(e.float(args[0]))
		}
		for range n {
			for _, f := range e.feds {
				if !f.gone {
					f.core.Tick()
				}
			}
			e.stabilize()
		}
		return nil
	case "stabilize":
		e.stabilize()
		return nil
	}
	e.t.Fatalf("unknown command %q", cmd)
	return nil
}

// add creates federate name; the others learn it joined (but those named
// in unseen, until tell), and it learns their replicated state.
func (e *interactionEnv) add(name string, unseen ...string) {
	self := FederateHandle(len(e.feds) + 1)
	var members []Member
	for i, o := range e.feds {
		if !o.gone {
			members = append(members, Member{Handle: FederateHandle(i + 1), Name: o.name})
		}
	}
	members = append(members, Member{Handle: self, Name: name})
	store := &memStore{name: name, saves: e.saves, sets: e.sets, wip: make(map[string][]byte)}
	c, err := New(Config{FDD: e.fdd, Federation: "interaction", Self: self, Name: name, Incarnation: 1, Members: members, Trace: true, Saves: store})
	if err != nil {
		e.t.Fatal(err)
	}
	for i, o := range e.feds {
		if o.gone {
			continue
		}
		if slices.Contains(unseen, o.name) {
			o.unheard = append(o.unheard, Member{Handle: self, Name: name})
		} else {
			o.core.MemberJoined(Member{Handle: self, Name: name})
		}
		for _, key := range slices.Sorted(maps.Keys(e.states[FederateHandle(i+1)])) {
			v := e.states[FederateHandle(i+1)][key]
			c.StateChanged(FederateHandle(i+1), key, v.value, v.version)
		}
	}
	e.feds = append(e.feds, &envFed{name: name, core: c, groups: make(map[transport.Group]bool)})
}

// leave tells the others f resigned or was lost.
func (e *interactionEnv) leave(f *envFed, lost bool) {
	h := f.core.self
	for _, o := range e.feds {
		if o != f && !o.gone {
			o.core.MemberLeft(h, lost, 0)
		}
	}
	for _, r := range e.reg {
		if r.holder == h {
			r.holder, r.value, r.version = 0, nil, r.version+1
		}
	}
	delete(e.states, h)
}

// stabilize takes every core's Ready and acts on it, printing what it
// holds, until no core has anything to do.
func (e *interactionEnv) stabilize() {
	for range 1000 {
		busy := false
		for _, f := range e.feds {
			if !f.gone && e.take(f) {
				busy = true
			}
		}
		if !busy {
			return
		}
	}
	e.t.Fatal("the cores never went quiet")
}

// take acts on f's Ready; false when it held nothing.
func (e *interactionEnv) take(f *envFed) bool {
	c := f.core
	rd := c.Ready(true)
	for _, g := range rd.Groups {
		f.groups[g.Group] = g.Join
	}
	for _, ev := range rd.Events {
		if EndsPending(ev) {
			f.handed++
		}
		e.printf("%s: %s", f.name, formatEvent(ev))
	}
	for _, line := range strings.Split(strings.TrimSpace(string(rd.Trace)), "\n") {
		if line == "" {
			continue
		}
		line = strings.Replace(line, `,"fed":"`+f.name+`"`, "", 1)
		e.printf("%s: trace %s", f.name, line)
	}
	frames := append([]transport.Packet(nil), rd.Frames...)
	ops := append([]Op(nil), rd.Ops...)
	busy := len(rd.Events) > 0 || len(frames) > 0 || len(ops) > 0 || len(rd.Trace) > 0
	c.Advance(rd)
	for _, op := range ops {
		c.OpDone(op.ID, e.runOp(f, op))
	}
	for _, p := range frames {
		for _, o := range e.feds {
			if o != f && !o.gone && o.groups[p.Group] {
				o.core.Step(p.Group, p.Data)
			}
		}
	}
	return busy
}

// runOp answers op as the control plane would, and prints it.
func (e *interactionEnv) runOp(f *envFed, op Op) OpResult {
	self := f.core.self
	if op.Kind == OpSetState {
		e.version[self]++
		v := e.version[self]
		if e.states[self] == nil {
			e.states[self] = make(map[string]regKey)
		}
		if op.Value == nil {
			delete(e.states[self], op.Key)
			e.printf("%s: delete %s", f.name, op.Key)
		} else {
			e.states[self][op.Key] = regKey{value: slices.Clone(op.Value), version: v}
			e.printf("%s: set %s (%d bytes)", f.name, op.Key, len(op.Value))
		}
		for _, o := range e.feds {
			if o != f && !o.gone {
				o.core.StateChanged(self, op.Key, slices.Clone(op.Value), v)
			}
		}
		return OpResult{}
	}
	k := e.reg[op.Key]
	if k == nil {
		k = &regKey{}
		e.reg[op.Key] = k
	}
	var res OpResult
	switch op.Kind {
	case OpAcquire:
		notJoined := false
		for _, h := range op.Joined {
			if int(h) > len(e.feds) || e.feds[h-1].gone {
				notJoined = true
			}
		}
		if notJoined {
			res = OpResult{NotJoined: true}
			break
		}
		if k.holder == 0 {
			k.holder, k.value, k.version = self, slices.Clone(op.Value), k.version+1
		}
		res = OpResult{Held: k.holder == self}
	case OpRelease:
		if k.holder == self {
			k.holder, k.value, k.version = 0, nil, k.version+1
		}
	case OpRead:
		res = OpResult{Held: k.holder == self}
	case OpSwap:
		if k.version == op.Expect {
			k.holder, k.value, k.version = self, slices.Clone(op.Value), k.version+1
			res = OpResult{Held: true}
		}
	}
	res.Holder, res.Value, res.Version = k.holder, slices.Clone(k.value), k.version
	kinds := map[OpKind]string{OpAcquire: "acquire", OpRelease: "release", OpRead: "read", OpSwap: "swap"}
	e.printf("%s: op %s %s: held=%v holder=%d version=%d", f.name, kinds[op.Kind], op.Key, res.Held, res.Holder, res.Version)
	return res
}

// formatEvent prints an event as its type and fields.
func formatEvent(ev Event) string {
	s := fmt.Sprintf("%T %+v", ev, ev)
	return strings.TrimPrefix(s, "hla.")
}

func (e *interactionEnv) fed(name string) *envFed {
	for _, f := range e.feds {
		if f.name == name {
			return f
		}
	}
	e.t.Fatalf("no federate %s", name)
	return nil
}

func (e *interactionEnv) alias(a string) ObjectInstanceHandle {
	h, ok := e.aliases[a]
	if !ok {
		e.t.Fatalf("no instance %s", a)
	}
	return h
}

// classOf is the class f knows instance h as.
func (e *interactionEnv) classOf(f *envFed, h ObjectInstanceHandle) ObjectClassHandle {
	in := f.core.objects.inst[h]
	if in == nil {
		e.t.Fatalf("%s does not know %v", f.name, h)
	}
	return in.class.Handle
}

func (e *interactionEnv) attrs(oc *fomxml.ObjectClass, names []string) []AttributeHandle {
	var out []AttributeHandle
	for _, n := range names {
		a, ok := oc.Attribute(n)
		if !ok {
			e.t.Fatalf("no attribute %s of %s", n, oc.Name)
		}
		out = append(out, a.Handle)
	}
	return out
}

func (e *interactionEnv) interaction(name string) *fomxml.InteractionClass {
	ic, ok := e.fdd.InteractionClass(name)
	if !ok {
		e.t.Fatalf("no class %s", name)
	}
	return ic
}

// pairs splits name=value arguments; time=t is the time stamp.
func (e *interactionEnv) pairs(args []string) (map[string]string, LogicalTime) {
	kv := make(map[string]string)
	var at LogicalTime
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			e.t.Fatalf("%q is not name=value", a)
		}
		if k == "time" {
			at = hla.Float64Time(e.float(v))
			continue
		}
		kv[k] = v
	}
	return kv, at
}

func (e *interactionEnv) float(s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		e.t.Fatal(err)
	}
	return f
}

// byHandle turns name=value pairs into values by the handles lookup
// gives the names.
func byHandle[H comparable](e *interactionEnv, kv map[string]string, lookup func(name string) (H, bool)) map[H][]byte {
	out := make(map[H][]byte, len(kv))
	for k, v := range kv {
		h, ok := lookup(k)
		if !ok {
			e.t.Fatalf("no attribute or parameter %s", k)
		}
		out[h] = []byte(v)
	}
	return out
}
