package multirate

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/transport"
)

// testFOM has one object class: Value is time-stamped, Note is not.
const testFOM = `<?xml version="1.0"?>
<objectModel xmlns="http://standards.ieee.org/IEEE1516-2010">
  <modelIdentification><name>multirate test</name><type>FOM</type><version>1</version></modelIdentification>
  <objects><objectClass><name>HLAobjectRoot</name>
    <objectClass><name>Sample</name><sharing>PublishSubscribe</sharing>
      <attribute><name>Value</name><dataType>HLAfloat64BE</dataType><updateType>Conditional</updateType><updateCondition>NA</updateCondition><ownership>NoTransfer</ownership><sharing>PublishSubscribe</sharing><transportation>HLAreliable</transportation><order>TimeStamp</order></attribute>
      <attribute><name>Note</name><dataType>HLAfloat64BE</dataType><updateType>Conditional</updateType><updateCondition>NA</updateCondition><ownership>NoTransfer</ownership><sharing>PublishSubscribe</sharing><transportation>HLAreliable</transportation><order>Receive</order></attribute>
    </objectClass>
  </objectClass></objects>
</objectModel>`

func encode(v float64) []byte { return binary.BigEndian.AppendUint64(nil, math.Float64bits(v)) }

func decode(t testing.TB, b []byte) float64 {
	t.Helper()
	if len(b) != 8 {
		t.Errorf("value of %d bytes", len(b))
		return math.NaN()
	}
	return math.Float64frombits(binary.BigEndian.Uint64(b))
}

// federation is federates over one in-memory network with faults.
type federation struct {
	t    testing.TB
	net  *transport.Network
	reg  *peer.MemRegistry
	doc  *fomxml.Document
	name string
	feds []*peer.Federate
}

func newFederation(t testing.TB, faults transport.Faults, seed int64) *federation {
	t.Helper()
	doc, err := fomxml.ParseBytes("multirate.xml", []byte(testFOM))
	if err != nil {
		t.Fatal(err)
	}
	fd := &federation{t: t, net: transport.NewNetwork(transport.NetworkConfig{Seed: seed}), reg: peer.NewMemRegistry(), doc: doc, name: "multirate"}
	fd.net.SetFaults(faults)
	t.Cleanup(func() {
		for _, f := range fd.feds {
			f.Close()
		}
	})
	return fd
}

func (fd *federation) join(name string) *peer.Federate {
	fd.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	f, err := peer.Join(ctx, peer.Config{
		Federation: fd.name, FederateName: name, FOMModules: []*fomxml.Document{fd.doc}, Create: true,
		Control: fd.reg.Control(fd.name), Transport: fd.net.Endpoint(name), TickInterval: 2 * time.Millisecond,
	})
	if err != nil {
		fd.t.Fatalf("join %s: %v", name, err)
	}
	fd.feds = append(fd.feds, f)
	return f
}

// await reads f's events until one of type T.
func await[T peer.Event](t testing.TB, f *peer.Federate) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		ev, err := f.Next(ctx)
		if err != nil {
			t.Fatalf("%s: waiting for %T: %v", f.Name(), *new(T), err)
		}
		if e, ok := ev.(T); ok {
			return e
		}
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// sample holds the handles of the test FOM.
type sample struct {
	class       peer.ObjectClassHandle
	value, note peer.AttributeHandle
}

func handlesOf(t testing.TB, f *peer.Federate) sample {
	t.Helper()
	var s sample
	var err error
	s.class, err = f.GetObjectClassHandle("Sample")
	must(t, err)
	s.value, err = f.GetAttributeHandle(s.class, "Value")
	must(t, err)
	s.note, err = f.GetAttributeHandle(s.class, "Note")
	must(t, err)
	return s
}

// register has f register instances under reserved names.
func register(t testing.TB, f *peer.Federate, h sample, names ...string) {
	t.Helper()
	must(t, f.ReserveMultipleObjectInstanceName(names...))
	await[peer.MultipleObjectInstanceNameReservationSucceeded](t, f)
	for _, n := range names {
		_, err := f.RegisterObjectInstance(h.class, n)
		must(t, err)
	}
}

// sent is one update a producer job made: the instance, its time stamp
// (the job's next boundary) and the value.
type sent struct {
	obj   string
	stamp float64
	value float64
}

// read is one read a consumer job made.
type read struct {
	job      string
	n, cycle int
	boundary float64
	obj      string
	value    float64
	ok       bool
	readIdx  int
}

// log collects what the jobs did, from their goroutines.
type log struct {
	mu    sync.Mutex
	sent  []sent
	reads []read
}

func (l *log) add(f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f()
}

// TestCoherentUnderLoss runs a producer and a consumer, each with a
// scheduler, over the in-memory network with 20% loss, duplication and
// reordering. The producer's jobs update OBJ1-OBJ3 every main cycle and
// OBJ4 every third (time-stamped at their next boundaries); the
// consumer's jobs run at 1x (OBJ1), 2x (OBJ2, OBJ3) and 5x (OBJ4) and
// read their snapshot three times a cycle: at its start, in its middle
// and in its last main cycle, when the main loop has long reflected
// newer values. Time-stamp order: each read sees exactly the value of
// the latest update stamped at or before the cycle's boundary (none when
// there is none); receive order: the reads of one cycle agree and never
// go back, and every instance's last update reaches the consumer (after
// the run if not in it). Each job runs exactly once per N main cycles.
func TestCoherentUnderLoss(t *testing.T) {
	for _, tso := range []bool{true, false} {
		t.Run(map[bool]string{true: "time-stamp order", false: "receive order"}[tso], func(t *testing.T) {
			testCoherent(t, tso)
		})
	}
}

func testCoherent(t *testing.T, tso bool) {
	const cycles = 20
	faults := transport.Faults{Loss: 0.2, Duplicate: 0.05, Reorder: 0.1, Jitter: time.Millisecond}
	fd := newFederation(t, faults, 23)
	prod, cons := fd.join("producer"), fd.join("consumer")
	h := handlesOf(t, prod)
	attr := h.value
	if !tso {
		attr = h.note
	}
	must(t, cons.SubscribeObjectClassAttributes(h.class, h.value, h.note))
	must(t, prod.PublishObjectClassAttributes(h.class, h.value, h.note))
	objs := []string{"OBJ1", "OBJ2", "OBJ3", "OBJ4"}
	register(t, prod, h, objs...)
	for range objs {
		await[peer.DiscoverObjectInstance](t, cons)
	}
	// Time management either way: receive-order data then flows while
	// the consumer advances, with no promise of when.
	must(t, cons.EnableTimeConstrained())
	await[peer.TimeConstrainedEnabled](t, cons)
	must(t, prod.EnableTimeRegulation(peer.Float64Time(1)))
	await[peer.TimeRegulationEnabled](t, prod)

	var l log
	produce := func(objs ...string) func(context.Context, *Cycle) error {
		return func(_ context.Context, c *Cycle) error {
			for _, o := range objs {
				v := float64(int(o[3]-'0')*1000) + c.Next.Float()
				if err := c.Update(o, peer.AttributeValues{attr: encode(v)}, nil); err != nil {
					return err
				}
				l.add(func() { l.sent = append(l.sent, sent{o, c.Next.Float(), v}) })
			}
			return nil
		}
	}
	// The producer's fast job names nothing: it may touch every
	// instance no job of another cycle names (rule 5).
	ps, err := New(prod, Config{MainCycle: peer.Float64Time(1), Jobs: []Job{
		{Name: "fast", Run: produce("OBJ1", "OBJ2", "OBJ3")},
		{Name: "slow", Cycle: peer.Float64Time(3), Uses: Objects("OBJ4"), Run: produce("OBJ4")},
	}})
	must(t, err)

	uses := map[string][]string{"job1x": {"OBJ1"}, "job2x": {"OBJ2", "OBJ3"}, "job5x": {"OBJ4"}}
	consume := func(ctx context.Context, c *Cycle) error {
		for i, at := range []int{0, (c.N - 1) / 2, c.N - 1} {
			if err := c.Await(at); err != nil {
				return err
			}
			for _, o := range uses[c.Job] {
				b, ok, err := c.Value(o, attr)
				if err != nil {
					return err
				}
				r := read{job: c.Job, n: c.N, cycle: c.Number, boundary: c.Boundary.Float(), obj: o, ok: ok, readIdx: i}
				if ok {
					r.value = decode(t, b)
				}
				l.add(func() { l.reads = append(l.reads, r) })
			}
		}
		return nil
	}
	cjobs := []Job{
		{Name: "job1x", Uses: Objects("OBJ1"), Run: consume},
		{Name: "job2x", Cycle: peer.Float64Time(2), Uses: Objects("OBJ2", "OBJ3"), Run: consume},
		{Name: "job5x", Cycle: peer.Float64Time(5), Uses: Objects("OBJ4"), Run: consume},
	}
	// Every value the consumer was handed, during the run and after it.
	var got sync.Map // float64 value -> true
	seen := func(ev peer.Event) {
		if r, ok := ev.(peer.ReflectAttributeValues); ok {
			if b, ok := r.Values[attr]; ok {
				got.Store(decode(t, b), true)
			}
		}
	}
	cs, err := New(cons, Config{MainCycle: peer.Float64Time(1), Jobs: cjobs, Handle: func(ev peer.Event) error { seen(ev); return nil }})
	must(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	perr := make(chan error, 1)
	go func() { perr <- ps.Run(ctx, cycles) }()
	if err := cs.Run(ctx, cycles); err != nil {
		t.Fatalf("consumer: %v\nstats %+v", err, cons.Stats())
	}
	if err := <-perr; err != nil {
		t.Fatalf("producer: %v", err)
	}

	// Each job ran exactly once per N main cycles, and the producer's
	// updates all went out.
	for i, js := range cs.Stats().Jobs {
		n := []int{1, 2, 5}[i]
		if js.N != n || js.Cycles != cycles/n {
			t.Errorf("consumer job %s: %d cycles of %d, want %d of %d", js.Name, js.Cycles, js.N, cycles/n, n)
		}
	}
	pst := ps.Stats()
	if pst.Jobs[0].Updates != 3*cycles || pst.Jobs[1].Updates != cycles/3 || pst.MainCycles != cycles {
		t.Errorf("producer stats %+v: want %d and %d updates over %d main cycles", pst, 3*cycles, cycles/3, cycles)
	}

	// The cycles each job read in: 0, 1, 2, ... at boundaries k x N,
	// three reads of each instance per cycle, agreeing.
	type key struct {
		job   string
		cycle int
		obj   string
	}
	byCycle := make(map[key][]read)
	for _, r := range l.reads {
		if want := float64(r.cycle * r.n); r.boundary != want {
			t.Errorf("%s cycle %d: boundary %v, want %v", r.job, r.cycle, r.boundary, want)
		}
		k := key{r.job, r.cycle, r.obj}
		byCycle[k] = append(byCycle[k], r)
	}
	last := make(map[string]float64) // receive order: the last value seen per job and instance
	for _, j := range cjobs {
		n := cs.p.n[slices.IndexFunc(cjobs, func(x Job) bool { return x.Name == j.Name })]
		for k := range cycles / n {
			for _, o := range uses[j.Name] {
				rs := byCycle[key{j.Name, k, o}]
				if len(rs) != 3 {
					t.Errorf("%s cycle %d, %s: %d reads, want 3", j.Name, k, o, len(rs))
					continue
				}
				for _, r := range rs[1:] {
					if r.ok != rs[0].ok || r.value != rs[0].value {
						t.Errorf("%s cycle %d, %s: read %d saw %v (%v), read 0 saw %v (%v): the value changed within the cycle",
							j.Name, k, o, r.readIdx, r.value, r.ok, rs[0].value, rs[0].ok)
					}
				}
				r := rs[0]
				if tso {
					want, ok := latest(l.sent, o, r.boundary)
					if r.ok != ok || r.value != want {
						t.Errorf("%s cycle %d at %v, %s: read %v (%v), want %v (%v)", j.Name, k, r.boundary, o, r.value, r.ok, want, ok)
					}
				} else if r.ok {
					if lk := j.Name + o; r.value < last[lk] {
						t.Errorf("%s cycle %d, %s: %v after %v", j.Name, k, o, r.value, last[lk])
					}
					last[j.Name+o] = r.value
				}
			}
		}
		if got := len(slices.Collect(func(yield func(key) bool) {
			for k := range byCycle {
				if k.job == j.Name && !yield(k) {
					return
				}
			}
		})); got != cycles/n*len(uses[j.Name]) {
			t.Errorf("%s read in %d (cycle, instance) pairs, want %d", j.Name, got, cycles/n*len(uses[j.Name]))
		}
	}
	// Time-stamp order: the reads checked above saw the values, so data
	// flowed. Receive order promises no time, so under loss the run may
	// end before a repair; instead, the last update of every instance
	// reaches the consumer, in the run or after it: nothing is lost.
	if tso && !slices.ContainsFunc(l.reads, func(r read) bool { return r.ok && r.boundary > 0 }) {
		t.Error("no read saw a value")
	}
	// Out of the time-advancing state a constrained federate gets
	// receive-order messages only with asynchronous delivery (§8.1).
	must(t, cons.EnableAsynchronousDelivery())
	for _, o := range objs {
		want, ok := latest(l.sent, o, math.Inf(1))
		if !ok {
			t.Fatalf("the producer sent nothing for %s", o)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		for {
			if _, ok := got.Load(want); ok {
				break
			}
			ev, err := cons.Next(ctx)
			if err != nil {
				var vs []float64
				got.Range(func(k, _ any) bool { vs = append(vs, k.(float64)); return true })
				slices.Sort(vs)
				t.Fatalf("%s's last value %v never reached the consumer: %v; got %v; cons %+v prod %+v", o, want, err, vs, cons.Stats().Reliable, prod.Stats().Reliable)
			}
			seen(ev)
		}
		cancel()
	}
	if cons.Stats().Reliable.NAKs == 0 && prod.Stats().Reliable.Retransmits == 0 {
		t.Errorf("no loss was repaired: consumer %+v", cons.Stats().Reliable)
	}
	t.Logf("consumer %+v; producer %+v", cs.Stats(), pst)
}

// latest is the value of the latest update of obj stamped at or before
// t, and whether there is one.
func latest(log []sent, obj string, t float64) (float64, bool) {
	best, v, ok := math.Inf(-1), 0.0, false
	for _, s := range log {
		if s.obj == obj && s.stamp <= t && s.stamp > best {
			best, v, ok = s.stamp, s.value, true
		}
	}
	return v, ok
}

// TestHeld: a job still running when the main loop reaches its boundary
// holds the main loop there, and Stats counts it while it lasts.
func TestHeld(t *testing.T) {
	fd := newFederation(t, transport.Faults{}, 1)
	f := fd.join("solo")
	var s *Scheduler
	var cyclesSeen []int
	s, err := New(f, Config{MainCycle: peer.Float64Time(1), Jobs: []Job{{
		Name: "slow", Cycle: peer.Float64Time(2), Uses: Objects("X"),
		Run: func(ctx context.Context, c *Cycle) error {
			cyclesSeen = append(cyclesSeen, c.Number)
			if c.Number != 1 {
				return nil
			}
			// Return only once the main loop waits for this cycle.
			for s.Stats().Jobs[0].Held == 0 {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(time.Millisecond):
				}
			}
			return nil
		},
	}}})
	must(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	must(t, s.Run(ctx, 6))
	js := s.Stats().Jobs[0]
	if js.Held < 1 || js.Cycles != 3 || !slices.Equal(cyclesSeen, []int{0, 1, 2}) {
		t.Errorf("stats %+v, cycles %v: want held at least once, cycles 0, 1, 2", js, cyclesSeen)
	}
}

// TestUndeclared: a job that touches an instance it did not name breaks
// rule 9. Under Fail the touch returns the error and Run fails with it
// even when the job ignores it; under Warn each job and instance is
// reported once and counted, and Run goes on.
func TestUndeclared(t *testing.T) {
	fd := newFederation(t, transport.Faults{}, 2)
	f := fd.join("solo")
	h := handlesOf(t, f)
	must(t, f.PublishObjectClassAttributes(h.class, h.value))
	register(t, f, h, "MINE", "OTHER")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	touch := func(_ context.Context, c *Cycle) error {
		c.Value("OTHER", h.value) // the error is ignored on purpose
		c.Value("OTHER", h.value)
		c.Update("OTHER", peer.AttributeValues{h.value: encode(1)}, nil)
		return nil
	}
	jobs := []Job{
		{Name: "slow", Cycle: peer.Float64Time(2), Uses: Objects("OTHER"), Run: noop},
		{Name: "picky", Cycle: peer.Float64Time(1), Uses: Objects("MINE"), Run: touch},
		// Names nothing: may use what no other-rate job names, not OTHER.
		{Name: "open", Run: func(_ context.Context, c *Cycle) error {
			_, _, err := c.Value("MINE", h.value)
			if err != nil {
				return fmt.Errorf("MINE is unbound: %w", err)
			}
			return touch(nil, c)
		}},
	}

	s, err := New(f, Config{MainCycle: peer.Float64Time(1), Jobs: jobs})
	must(t, err)
	err = s.Run(ctx, 4)
	var re *RuleError
	if !errors.As(err, &re) || re.Rule != 9 || !slices.Equal(re.Objects, []string{"OTHER"}) || (re.Job != "picky" && re.Job != "open") {
		t.Fatalf("Run under Fail: %v, want rule 9 for OTHER", err)
	}

	var warned []*RuleError
	var mu sync.Mutex
	s, err = New(f, Config{MainCycle: peer.Float64Time(1), Jobs: jobs, Undeclared: Warn, Warn: func(e *RuleError) {
		mu.Lock()
		defer mu.Unlock()
		warned = append(warned, e)
	}})
	must(t, err)
	must(t, s.Run(ctx, 4))
	st := s.Stats()
	if st.Jobs[1].Warnings != 1 || st.Jobs[2].Warnings != 1 || len(warned) != 2 {
		t.Fatalf("warnings %+v, reported %v: want one per job", st.Jobs, warned)
	}
	for _, e := range warned {
		if e.Rule != 9 || e.Objects[0] != "OTHER" {
			t.Errorf("warning %v", e)
		}
	}
	// The updates went out anyway: OTHER is this federate's.
	if st.Jobs[1].Updates != 4 || st.Jobs[2].Updates != 4 {
		t.Errorf("updates %+v, want 4 of each", st.Jobs)
	}
}

// TestCancel: ending ctx ends Run, which waits for the jobs (that give
// up with ctx) before it returns.
func TestCancel(t *testing.T) {
	fd := newFederation(t, transport.Faults{}, 3)
	f := fd.join("solo")
	started := make(chan struct{})
	var ended bool
	s, err := New(f, Config{MainCycle: peer.Float64Time(1), Jobs: []Job{{
		Name: "stuck", Cycle: peer.Float64Time(4), Uses: Objects("X"),
		Run: func(ctx context.Context, c *Cycle) error {
			close(started)
			<-ctx.Done()
			ended = true
			return ctx.Err()
		},
	}}})
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	err = s.Run(ctx, 8)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v, want context.Canceled", err)
	}
	if !ended {
		t.Error("Run returned before the job did")
	}
}

// TestIntegerTime: with HLAinteger64Time the boundaries and stamps are
// integers: main cycle 2, a job every 6, over 12 main cycles.
func TestIntegerTime(t *testing.T) {
	fd := newFederation(t, transport.Faults{}, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	f, err := peer.Join(ctx, peer.Config{
		Federation: fd.name, FederateName: "ints", FOMModules: []*fomxml.Document{fd.doc}, Create: true,
		Control: fd.reg.Control(fd.name), Transport: fd.net.Endpoint("ints"), TickInterval: 2 * time.Millisecond,
		TimeRepresentation: peer.HLAinteger64Time,
	})
	must(t, err)
	defer f.Close()
	var got []string
	s, err := New(f, Config{MainCycle: peer.Integer64Time(2), Jobs: []Job{{
		Name: "every3", Cycle: peer.Integer64Time(6), Uses: Objects("X"),
		Run: func(_ context.Context, c *Cycle) error {
			got = append(got, fmt.Sprintf("%d:%T(%v)->%v", c.Number, c.Boundary, c.Boundary, c.Next))
			return nil
		},
	}}})
	must(t, err)
	must(t, s.Run(ctx, 12))
	want := []string{"0:hla.Integer64Time(0)->6", "1:hla.Integer64Time(6)->12", "2:hla.Integer64Time(12)->18", "3:hla.Integer64Time(18)->24"}
	if !slices.Equal(got, want) {
		t.Errorf("cycles %q, want %q", got, want)
	}
	if _, err := New(f, Config{MainCycle: peer.Float64Time(1), Jobs: []Job{{Name: "a", Run: noop}}}); err == nil {
		t.Error("a float main cycle in an integer federation was accepted")
	}
}
