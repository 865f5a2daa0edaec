package agree

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// The register checked from outside: clients on every replica call
// Acquire, Release, Read and CompareAndSwap on one key, concurrently,
// while the simulated network of replica_test.go loses, duplicates and
// reorders messages, partitions the replicas and crashes them. Each call
// is recorded the way a caller of the Cluster sees it: invoked when it is
// submitted, answered when its result (or, for a read, its barrier) comes
// back. porcupine then checks that the history is linearizable against a
// sequential model of one key (holder, version, value). No look inside
// the replicas: this would catch a register that is wrong in a way the
// invariants of replica_test.go do not name.
//
// A call that times out (Config.Timeout, counted in its node's ticks) or
// whose node crashes has no answer: it may or may not have taken effect.
// It is recorded with an unknown output and an infinite return time, so
// porcupine may place it anywhere after its invocation, including after
// everything else (it never happened). A read without an answer changes
// nothing and is left out.

// linKey is the one register key every client works on.
const linKey = "k"

// linSeedCount is how many seeds the linearizability check runs: 300
// (75 with -short), or exactly -seeds=N when that flag is given.
func linSeedCount() int {
	n := 300
	flag.Visit(func(f *flag.Flag) {
		if f.Name == "seeds" {
			n = *flagSeeds
		}
	})
	return n
}

// regState is the model's state: one key of the register.
type regState struct {
	holder  NodeID // zero: free
	version uint64
	value   string
}

func regStateOf(e KeyEntry) regState {
	return regState{holder: e.Holder, version: e.Version, value: string(e.Value)}
}

func (s regState) String() string {
	if s.holder.isZero() {
		return fmt.Sprintf("free@%d", s.version)
	}
	return fmt.Sprintf("%s@%d=%q", s.holder, s.version, s.value)
}

// regInput is one call: kind, the calling process, and its arguments.
type regInput struct {
	kind   OpKind // opAcquire, opRelease, opCompareAndSwap, opLost; 0: read
	by     NodeID
	value  string // acquire, swap
	expect uint64 // swap
	lost   NodeID // lost: the process declared gone
}

func (in regInput) String() string {
	switch in.kind {
	case OpAcquire:
		return fmt.Sprintf("%s: acquire(%q)", in.by, in.value)
	case OpRelease:
		return fmt.Sprintf("%s: release", in.by)
	case OpCompareAndSwap:
		return fmt.Sprintf("%s: cas(%d, %q)", in.by, in.expect, in.value)
	case OpLost:
		return fmt.Sprintf("%s: lost(%s)", in.by, in.lost)
	}
	return fmt.Sprintf("%s: read", in.by)
}

// regOutput is what the caller got back.
type regOutput struct {
	unknown bool // no answer (timeout, crash) or an answer without a result
	code    ResultCode
	entry   regState // not for lost, whose result carries no entry
}

func (o regOutput) String() string {
	if o.unknown {
		return "?"
	}
	if o.code != CodeOK {
		return fmt.Sprintf("code %d, %v", o.code, o.entry)
	}
	return o.entry.String()
}

func describeCall(in regInput, out regOutput) string {
	if in.kind == OpLost && !out.unknown && out.code == CodeOK {
		return fmt.Sprintf("%v -> ok", in)
	}
	return fmt.Sprintf("%v -> %v", in, out)
}

// regApply is the sequential specification: what in does to s and what
// its caller must get back. It mirrors the documented semantics of the
// register, not the code in fsm.go.
func regApply(s regState, in regInput) (regState, regOutput) {
	switch in.kind {
	case OpAcquire:
		if s.holder.isZero() {
			s = regState{holder: in.by, version: s.version + 1, value: in.value}
		}
		return s, regOutput{entry: s}
	case OpRelease:
		switch {
		case s.holder.isZero():
			return s, regOutput{entry: s}
		case s.holder != in.by:
			return s, regOutput{code: CodeNotHolder, entry: s}
		}
		s = regState{version: s.version + 1}
		return s, regOutput{entry: s}
	case OpCompareAndSwap:
		if s.version != in.expect {
			return s, regOutput{code: CodeVersionMismatch, entry: s}
		}
		s = regState{holder: in.by, version: s.version + 1, value: in.value}
		return s, regOutput{entry: s}
	case OpLost:
		if s.holder == in.lost {
			s = regState{version: s.version + 1}
		}
		return s, regOutput{}
	}
	return s, regOutput{entry: s}
}

// modelState is the model's whole state: the key, and the processes
// the register removed as lost, which remove nobody afterwards
// (docs/agreement.md, "Who decides"): their keys, sorted, comma-joined.
type modelState struct {
	reg      regState
	departed string
}

// modelApply is regApply with lost's rule about departed callers: a
// process removed as lost that calls lost(X) for another X changes
// nothing; otherwise X is departed from then on.
func modelApply(ms modelState, in regInput) (modelState, regOutput) {
	if in.kind == OpLost {
		set := strings.Split(ms.departed, ",")
		if in.lost != in.by && slices.Contains(set, in.by.Key()) {
			return ms, regOutput{}
		}
		if !slices.Contains(set, in.lost.Key()) {
			set = append(set, in.lost.Key())
			slices.Sort(set)
			ms.departed = strings.Trim(strings.Join(set, ","), ",")
		}
	}
	var out regOutput
	ms.reg, out = regApply(ms.reg, in)
	return ms, out
}

var regModel = porcupine.Model{
	Init: func() any { return modelState{} },
	Step: func(state, input, output any) (bool, any) {
		in, out := input.(regInput), output.(regOutput)
		next, want := modelApply(state.(modelState), in)
		switch {
		case out.unknown:
			return true, next
		case in.kind == OpLost:
			return out.code == want.code, next
		}
		return out == want, next
	},
	DescribeOperation: func(input, output any) string {
		return describeCall(input.(regInput), output.(regOutput))
	},
	DescribeState: func(state any) string {
		ms := state.(modelState)
		if ms.departed == "" {
			return ms.reg.String()
		}
		return ms.reg.String() + " (removed: " + ms.departed + ")"
	},
}

// linCall is one call in flight or done.
type linCall struct {
	client int
	in     regInput
	out    regOutput
	call   int64
	ret    int64
	ticks  int // of its node, left before it times out
}

// linRun drives one seed: a simNet whose replicas serve client calls.
type linRun struct {
	s     *simNet
	clock int64 // advances at every call and every answer
	calls []*linCall
	ops   map[string]map[uint64]*linCall // node -> op seq -> call waiting
	reads map[string]map[uint64]*linCall // node -> read id -> call waiting
	n     int                            // calls made, for unique values

	pendingLost []NodeID // crashed processes nobody declared lost yet
	localReads  bool     // broken on purpose: reads skip the barrier

	timeout int // ticks of a call's node before it gives up (Config.Timeout)
	stats   linStats
}

// linStats counts what happened in runs, for the log.
type linStats struct {
	calls, answered, maybe, crashes int
	timeouts, crashed, left         int // calls without an answer, by reason
}

func (a *linStats) add(b linStats) {
	a.calls += b.calls
	a.answered += b.answered
	a.maybe += b.maybe
	a.crashes += b.crashes
	a.timeouts += b.timeouts
	a.crashed += b.crashed
	a.left += b.left
}

// linVariant says what a run breaks on purpose.
type linVariant int

const (
	linCorrect      linVariant = iota
	linUnsafeAccept            // every acceptor accepts below its promise
	linLocalReads              // reads answer from the local state at once, like Lookup
)

func newLinRun(t *testing.T, seed uint64, v linVariant) *linRun {
	s := newSimNet(t, seed, 5)
	// The simNet made its replicas already; configure them as it would
	// have if it had known. Runs are judged from outside only: the
	// simNet's checks, which look inside the replicas, are off (they run
	// in TestReplicaSafetyUnderFaults, swaps included).
	s.outside, s.unsafe = true, v == linUnsafeAccept
	for _, name := range s.names {
		r := s.nodes[name].r
		r.acc.unsafeAccept = s.unsafe
		r.trace = nil
	}
	l := &linRun{s: s, ops: map[string]map[uint64]*linCall{}, reads: map[string]map[uint64]*linCall{},
		timeout: 200, localReads: v == linLocalReads}
	for _, name := range s.names {
		l.ops[name], l.reads[name] = map[uint64]*linCall{}, map[uint64]*linCall{}
	}
	s.onReady = l.onReady
	return l
}

func (l *linRun) tick() int64 { l.clock++; return l.clock }

func (l *linRun) client(name string) int {
	for i, n := range l.s.names {
		if n == name {
			return i
		}
	}
	return -1
}

// onReady answers the calls whose results or read barriers came back, as
// the Cluster's loop does.
func (l *linRun) onReady(name string, rd Ready) {
	r := l.s.nodes[name].r
	for _, d := range rd.Done {
		c := l.ops[name][d.Seq]
		if c == nil {
			continue // an internal op, or a call that gave up
		}
		delete(l.ops[name], d.Seq)
		c.ret = l.tick()
		if d.Result.Code == CodeUnknown {
			// Applied, but its result was compacted away (the node caught
			// up from a snapshot): done before now, outcome unknown.
			c.out = regOutput{unknown: true}
			continue
		}
		c.out = regOutput{code: d.Result.Code, entry: regStateOf(d.Result.Entry)}
		if c.in.kind == OpLost {
			c.out.entry = regState{}
		}
	}
	for _, id := range rd.Reads {
		c := l.reads[name][id]
		if c == nil {
			continue
		}
		delete(l.reads[name], id)
		c.ret = l.tick()
		c.out = regOutput{entry: regStateOf(r.State().Keys[linKey])}
	}
}

// submit makes a random call on name's replica.
func (l *linRun) submit(name string) {
	s := l.s
	r := s.nodes[name].r
	if !r.Synced() || len(l.ops[name])+len(l.reads[name]) >= 2 {
		return
	}
	l.n++
	val := fmt.Sprintf("%s.%d", name, l.n)
	cur := r.State().Keys[linKey]
	in := regInput{by: r.id}
	switch x := s.rng.IntN(100); {
	case x < 25: // read
	case x < 45:
		in.kind, in.value = OpAcquire, val
	case x < 60:
		in.kind = OpRelease
	case x < 90:
		in.kind, in.value = OpCompareAndSwap, val
		// Mostly the version this node last learned, as a caller reading
		// Lookup would; sometimes one off, or anything.
		switch y := s.rng.IntN(10); {
		case y < 7:
			in.expect = cur.Version
		case y < 8:
			in.expect = cur.Version + 1
		case y < 9 && cur.Version > 0:
			in.expect = cur.Version - 1
		default:
			in.expect = uint64(s.rng.IntN(int(cur.Version) + 3))
		}
	case x < 95:
		// A member declared lost, rightly or not: the holder as this
		// node knows it, or any acceptor.
		in.kind = OpLost
		if f := r.State(); !cur.Holder.isZero() && s.rng.IntN(2) == 0 {
			in.lost = cur.Holder
		} else {
			in.lost = f.Roster[s.rng.IntN(len(f.Roster))]
		}
	default:
		// Roster growth, as the Cluster's housekeeping does; not a call.
		r.Submit(Op{Kind: OpAddAcceptor})
		s.collect(name)
		return
	}
	l.call(name, in)
}

// call invokes in on name's replica and records it.
func (l *linRun) call(name string, in regInput) {
	r := l.s.nodes[name].r
	c := &linCall{client: l.client(name), in: in, call: l.tick(), ticks: l.timeout}
	l.calls = append(l.calls, c)
	switch {
	case in.kind == 0 && l.localReads:
		c.ret = l.tick()
		c.out = regOutput{entry: regStateOf(r.State().Keys[linKey])}
		return
	case in.kind == 0:
		l.reads[name][r.Read()] = c
	default:
		o := Op{Kind: in.kind, Key: linKey, Value: []byte(in.value), Expect: in.expect, Node: in.lost}
		if in.kind == OpLost {
			o.Key, o.Value = "", nil
		}
		l.ops[name][r.Submit(o)] = c
	}
	l.s.collect(name)
}

// tickNode advances name's clock: its replica ticks, and its calls that
// waited too long give up, as the Cluster's do after Config.Timeout.
func (l *linRun) tickNode(name string) {
	n := l.s.nodes[name]
	n.r.Tick()
	for seq, c := range l.ops[name] {
		if c.ticks--; c.ticks <= 0 {
			delete(l.ops[name], seq)
			n.r.Cancel(seq)
			c.out, c.ret = regOutput{unknown: true}, math.MaxInt64
			l.stats.timeouts++
		}
	}
	for id, c := range l.reads[name] {
		if c.ticks--; c.ticks <= 0 {
			delete(l.reads[name], id)
			n.r.CancelRead(id)
			c.ret = -1 // left out
		}
	}
	l.s.collect(name)
}

// abandon ends name's calls in flight without an answer: an operation
// may or may not have taken effect (it stays in the history, open
// forever), a read is dropped. It returns how many operations it ended.
func (l *linRun) abandon(name string) int {
	n := 0
	for seq, c := range l.ops[name] {
		delete(l.ops[name], seq)
		c.out, c.ret = regOutput{unknown: true}, math.MaxInt64
		n++
	}
	for id, c := range l.reads[name] {
		delete(l.reads[name], id)
		c.ret = -1
	}
	return n
}

// crash restarts name as a new process with no memory; its calls in
// flight have no answer.
func (l *linRun) crash(name string) {
	s := l.s
	l.stats.crashed += l.abandon(name)
	old := s.nodes[name].r.id
	s.nextInc++
	s.start(name, 100+s.nextInc, nil)
	l.stats.crashes++
	// What the Cluster's housekeeping does: the new process asks for an
	// acceptor seat once it has the log, and a survivor, once failure
	// detection declared the old process dead, drops what it held.
	s.nodes[name].r.Submit(Op{Kind: OpAddAcceptor})
	s.collect(name)
	l.pendingLost = append(l.pendingLost, old)
}

// declareLost has a live synced node (other than the lost one's name)
// call lost for a crashed process, as one of the Cluster's survivors
// would after failure detection; the call is recorded like any other.
func (l *linRun) declareLost() {
	s := l.s
	if len(l.pendingLost) == 0 {
		return
	}
	gone := l.pendingLost[0]
	name := s.names[s.rng.IntN(len(s.names))]
	r := s.nodes[name].r
	if name == gone.Name || !r.Synced() {
		return
	}
	l.pendingLost = l.pendingLost[1:]
	l.call(name, regInput{kind: OpLost, by: r.id, lost: gone})
}

// step does one random thing: deliver, tick, call, gossip an index,
// partition, heal or crash.
func (l *linRun) step(lossy, calls bool) {
	s := l.s
	name := s.names[s.rng.IntN(len(s.names))]
	switch x := s.rng.IntN(100); {
	case x < 70:
		s.deliver(lossy)
	case x < 85:
		l.tickNode(name)
	case x < 90:
		if calls {
			l.submit(name)
		}
	case x < 99:
		s.netEvent(x, name, lossy)
	default:
		if lossy && l.stats.crashes < 2 && s.rng.IntN(10) == 0 {
			l.crash(name)
		}
		l.declareLost()
	}
}

func (l *linRun) waiting() bool {
	for _, name := range l.s.names {
		if len(l.ops[name])+len(l.reads[name]) > 0 {
			return true
		}
	}
	return false
}

// run plays one seed: every replica syncs and takes an acceptor seat,
// then calls under faults, then the network heals and the calls in
// flight finish or give up, then every replica reads once more.
func (l *linRun) run() []porcupine.Operation {
	s := l.s
	for _, name := range s.names[1:] {
		s.nodes[name].r.Observe("n0", "log-1", 0)
		s.nodes[name].r.Submit(Op{Kind: OpAddAcceptor})
		s.collect(name)
	}
	// Let the roster grow before the faults start (a roster of one or two
	// survives no crash; the log would stall for good).
	full := func() bool {
		for _, name := range s.names {
			if f := s.nodes[name].r.fsm; f == nil || len(f.Roster) < 5 {
				return false
			}
		}
		return true
	}
	for i := 0; i < 20000 && !full(); i++ {
		l.step(false, false)
	}
	for range 3000 {
		l.step(true, true)
	}
	s.heal()
	for i := 0; i < 20000 && l.waiting(); i++ {
		l.step(false, false)
	}
	for _, name := range s.names {
		if r := s.nodes[name].r; r.Synced() {
			c := &linCall{client: l.client(name), in: regInput{by: r.id}, call: l.tick(), ticks: l.timeout}
			l.calls = append(l.calls, c)
			l.reads[name][r.Read()] = c
			s.collect(name)
		}
	}
	for i := 0; i < 20000 && l.waiting(); i++ {
		l.step(false, false)
	}
	// Whatever still waits has no answer.
	for _, name := range s.names {
		l.stats.left += l.abandon(name)
	}
	var ops []porcupine.Operation
	for _, c := range l.calls {
		if c.ret < 0 {
			continue
		}
		l.stats.calls++
		if c.ret == math.MaxInt64 {
			l.stats.maybe++
		} else {
			l.stats.answered++
		}
		ops = append(ops, porcupine.Operation{ClientId: c.client, Input: c.in, Call: c.call, Output: c.out, Return: c.ret})
	}
	return ops
}

// checkLinearizable runs one seed and checks its history. It returns the
// check's verdict, the history and the run's counts.
func checkLinearizable(t *testing.T, seed uint64, v linVariant) (porcupine.CheckResult, porcupine.LinearizationInfo, []porcupine.Operation, linStats) {
	l := newLinRun(t, seed, v)
	ops := l.run()
	res, info := porcupine.CheckOperationsVerbose(regModel, ops, 20*time.Second)
	return res, info, ops, l.stats
}

// describeHistory renders a history in call order, for a failure message.
func describeHistory(ops []porcupine.Operation) string {
	sorted := append([]porcupine.Operation(nil), ops...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Call < sorted[j].Call })
	var b strings.Builder
	for _, o := range sorted {
		ret := "∞"
		if o.Return != math.MaxInt64 {
			ret = fmt.Sprint(o.Return)
		}
		fmt.Fprintf(&b, "  [%d, %s] %s\n", o.Call, ret, describeCall(o.Input.(regInput), o.Output.(regOutput)))
	}
	return b.String()
}

// visualize writes porcupine's HTML view of a failed check and returns
// its path, or "" when it cannot.
func visualize(seed uint64, info porcupine.LinearizationInfo) string {
	path := filepath.Join(os.TempDir(), fmt.Sprintf("gossip-linearizability-seed-%d.html", seed))
	if err := porcupine.VisualizePath(regModel, info, path); err != nil {
		return ""
	}
	return path
}

// TestRegisterLinearizable checks the register's histories for 300 seeds
// (-seeds=N for N of them, -seed=N to replay one).
func TestRegisterLinearizable(t *testing.T) {
	t.Parallel()
	start := time.Now()
	var total linStats
	list := seeds(linSeedCount())
	for _, seed := range list {
		res, info, ops, st := checkLinearizable(t, seed, linCorrect)
		total.add(st)
		if res != porcupine.Ok {
			t.Fatalf("seed %d: history is %s (replay: go test ./gossip/internal/agree -run RegisterLinearizable -seed=%d; view: %s):\n%s",
				seed, res, seed, visualize(seed, info), describeHistory(ops))
		}
	}
	t.Logf("%d seeds in %v: %d calls (%d answered, %d without an answer: %d timed out, %d crashed, %d left at the end), %d crashes",
		len(list), time.Since(start).Round(time.Millisecond), total.calls, total.answered, total.maybe,
		total.timeouts, total.crashed, total.left, total.crashes)
}

// TestRegisterLinearizableCatchesBugs: the same check, looking only from
// outside, finds a history that is not linearizable within a few dozen
// seeds when the register is broken on purpose: acceptors that accept
// below their promise (two values chosen for one instance), or reads
// answered from the local state without the quorum barrier (stale).
func TestRegisterLinearizableCatchesBugs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		variant linVariant
		within  uint64
	}{
		{"accept below promise", linUnsafeAccept, 60},
		{"reads without barrier", linLocalReads, 60},
	} {
		caught := uint64(0)
		for seed := uint64(1); seed <= tc.within && caught == 0; seed++ {
			if res, _, _, _ := checkLinearizable(t, seed, tc.variant); res == porcupine.Illegal {
				caught = seed
			}
		}
		if caught == 0 {
			t.Errorf("%s: passed the check for %d seeds", tc.name, tc.within)
			continue
		}
		t.Logf("%s: caught at seed %d", tc.name, caught)
	}
}
