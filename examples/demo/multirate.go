package demo

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/fomxml/codec"
	"github.com/meshrti/meshrti/internal/cli"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/multirate"
	"github.com/meshrti/meshrti/peer/transport"
)

// multirateFlags configure the multi-rate demo.
type multirateFlags struct {
	steps   int
	loss    float64
	json    bool
	seed    int64
	timeout time.Duration
}

// The demo's instances and the consumer's jobs: a job at the main cycle
// using OBJ1, one every 2 main cycles using OBJ2 and OBJ3, one every 5
// using OBJ4.
var (
	multirateObjects = []string{"OBJ1", "OBJ2", "OBJ3", "OBJ4"}
	multirateJobs    = []struct {
		name string
		n    int
		objs []string
	}{
		{"job1x", 1, []string{"OBJ1"}},
		{"job2x", 2, []string{"OBJ2", "OBJ3"}},
		{"job5x", 5, []string{"OBJ4"}},
	}
)

// multirateValue is the value the producer gives instance i (1 to 4) at
// logical time t: new every main cycle, distinct per instance.
func multirateValue(i int, t float64) float64 { return float64(1000*i) + t }

// Define defines the flags of "demo multirate".
func (df *multirateFlags) Define(fs *flag.FlagSet) {
	fs.IntVar(&df.steps, "steps", 20, "main cycles to run")
	fs.Float64Var(&df.loss, "loss", 0, "probability in [0, 1) that a data-plane packet is lost (the in-memory network's)")
	fs.BoolVar(&df.json, "json", false, `print one JSON object per line: {"ev":"publish",...} per update sent, {"ev":"read",...} per read`)
	fs.Int64Var(&df.seed, "seed", 1, "seed of the in-memory network's faults")
	fs.DurationVar(&df.timeout, "timeout", 60*time.Second, "give up after this long")
}

// Check returns the usage error of bad flags of "demo multirate", or "".
func (df *multirateFlags) Check(nargs int) string {
	if nargs > 0 || df.steps < 1 || !(df.loss >= 0 && df.loss < 1) {
		return "need -steps >= 1, 0 <= -loss < 1, no arguments"
	}
	return ""
}

// run runs a producer and a consumer over the in-memory
// network: the producer (time-regulating) updates OBJ1..OBJ4 every main
// cycle, time-stamped; the consumer (time-constrained) runs jobs at 1x,
// 2x and 5x the main cycle with peer/multirate, each reading its
// snapshot several times a cycle. The demo checks that every read saw
// the latest value stamped at or before its cycle's boundary, and exits
// 1 when one did not.
func (df multirateFlags) Run(b *cli.Cmd) int {
	// With -json, b.stdout carries only the JSON lines; the summary goes
	// to b.stderr.
	summary := b.Stdout
	if df.json {
		summary = b.Stderr
	}
	res, err := demoMultirate(df, b.Stdout)
	if res != nil {
		res.print(summary)
	}
	if err != nil {
		return b.Fail(err)
	}
	return 0
}

// multirateEvent is one line of -json output. Publish lines fill Fed and
// T, read lines Job, N, Cycle and Boundary.
type multirateEvent struct {
	Ev       string   `json:"ev"`
	Fed      string   `json:"fed,omitempty"`
	Job      string   `json:"job,omitempty"`
	N        *int     `json:"n,omitempty"`
	Cycle    *int     `json:"cycle,omitempty"`
	Boundary *float64 `json:"boundary,omitempty"`
	Obj      string   `json:"obj"`
	Attr     string   `json:"attr"`
	T        *float64 `json:"t,omitempty"`
	Value    float64  `json:"value"`
}

// multirateRun is what one run of the demo did: every publish and read,
// and the schedulers' counts.
type multirateRun struct {
	df  multirateFlags
	out io.Writer

	mu        sync.Mutex                     // guards the fields below and writes to out
	published map[string]map[float64]float64 // obj -> time stamp -> value
	reads     []multirateEvent
	missing   []string // reads that found no value

	producer, consumer multirate.Stats
	prodFed, consFed   peer.Stats
	took               time.Duration
	problems           []string
}

func (r *multirateRun) publish(fed, obj string, t, v float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.published[obj] == nil {
		r.published[obj] = make(map[float64]float64)
	}
	r.published[obj][t] = v
	if r.df.json {
		r.emit(multirateEvent{Ev: "publish", Fed: fed, Obj: obj, Attr: "Value", T: &t, Value: v})
	}
}

func (r *multirateRun) read(c *multirate.Cycle, obj string, v float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, k, b := c.N, c.Number, c.Boundary.Float()
	ev := multirateEvent{Ev: "read", Job: c.Job, N: &n, Cycle: &k, Boundary: &b, Obj: obj, Attr: "Value", Value: v}
	r.reads = append(r.reads, ev)
	if r.df.json {
		r.emit(ev)
	}
}

// emit writes one JSON line; r.mu is held.
func (r *multirateRun) emit(ev multirateEvent) {
	b, _ := json.Marshal(ev) // plain fields: cannot fail
	r.out.Write(append(b, '\n'))
}

func (r *multirateRun) say(format string, args ...any) {
	if r.df.json {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(r.out, format+"\n", args...)
}

func demoMultirate(df multirateFlags, out io.Writer) (*multirateRun, error) {
	ctx, cancel := context.WithTimeout(context.Background(), df.timeout)
	defer cancel()
	r := &multirateRun{df: df, out: out, published: make(map[string]map[float64]float64)}
	doc, err := fomxml.ParseBytes("demo_multirate.xml", MultirateFOM)
	if err != nil {
		return nil, err
	}
	registry := peer.NewMemRegistry()
	network := transport.NewNetwork(transport.NetworkConfig{Seed: df.seed})
	network.SetFaults(transport.Faults{Loss: df.loss})
	join := func(name string) (*peer.Federate, error) {
		f, err := peer.Join(ctx, peer.Config{
			Federation: "demo-multirate", FederateName: name, FederateType: "demo-multirate", Create: true,
			TickInterval: 2 * time.Millisecond, FOMModules: []*fomxml.Document{doc},
			Control: registry.Control("demo-multirate"), Transport: network.Endpoint(name),
		})
		if err != nil {
			return nil, fmt.Errorf("join %s: %w", name, err)
		}
		return f, nil
	}
	prod, err := join("Producer")
	if err != nil {
		return nil, err
	}
	defer prod.Close()
	cons, err := join("Consumer")
	if err != nil {
		return nil, err
	}
	defer cons.Close()
	r.say("meshrti demo multirate: a producer and a consumer over the in-memory network (loss %g), %d main cycles of 1", df.loss, df.steps)

	class, err := prod.GetObjectClassHandle("Sample")
	if err != nil {
		return nil, err
	}
	value, err := prod.GetAttributeHandle(class, "Value")
	if err != nil {
		return nil, err
	}
	if err := cons.SubscribeObjectClassAttributes(class, value); err != nil {
		return nil, err
	}
	if err := prod.PublishObjectClassAttributes(class, value); err != nil {
		return nil, err
	}
	if err := prod.ReserveMultipleObjectInstanceName(multirateObjects...); err != nil {
		return nil, err
	}
	if _, err := next[peer.MultipleObjectInstanceNameReservationSucceeded](ctx, prod); err != nil {
		return nil, fmt.Errorf("reserving the instance names: %w", err)
	}
	for _, name := range multirateObjects {
		if _, err := prod.RegisterObjectInstance(class, name); err != nil {
			return nil, err
		}
	}
	// The first values, stamped 0, go out before the producer regulates
	// time (so in receive order), and the consumer takes them in before
	// it is constrained: every boundary, the first included, then has a
	// value stamped at or before it. From here on the producer's values
	// are stamped 1, 2, ... by its job.
	for i, name := range multirateObjects {
		h, err := prod.GetObjectInstanceHandle(name)
		if err != nil {
			return nil, err
		}
		v := multirateValue(i+1, 0)
		if err := prod.UpdateAttributeValuesWithTime(h, peer.AttributeValues{value: codec.AppendFloat64BE(nil, v)}, nil, peer.Float64Time(0)); err != nil {
			return nil, err
		}
		r.publish(prod.Name(), name, 0, v)
	}
	var setup []peer.Event // the consumer's events before its scheduler runs
	for reflected := 0; reflected < len(multirateObjects); {
		ev, err := cons.Next(ctx)
		if err != nil {
			return nil, fmt.Errorf("waiting for the first values: %w", err)
		}
		setup = append(setup, ev)
		if _, ok := ev.(peer.ReflectAttributeValues); ok {
			reflected++
		}
	}
	if err := cons.EnableTimeConstrained(); err != nil {
		return nil, err
	}
	if _, err := next[peer.TimeConstrainedEnabled](ctx, cons); err != nil {
		return nil, err
	}
	if err := prod.EnableTimeRegulation(peer.Float64Time(1)); err != nil {
		return nil, err
	}
	if _, err := next[peer.TimeRegulationEnabled](ctx, prod); err != nil {
		return nil, err
	}

	// The producer: one job at the main cycle (so naming instances is
	// optional, rule 5). Cycle k computes the values of time k+1; the
	// scheduler sends them stamped k+1, before it advances there.
	ps, err := multirate.New(prod, multirate.Config{
		MainCycle: peer.Float64Time(1),
		Jobs: []multirate.Job{{Name: "produce", Run: func(_ context.Context, c *multirate.Cycle) error {
			t := c.Next.Float()
			for i, name := range multirateObjects {
				v := multirateValue(i+1, t)
				if err := c.Update(name, peer.AttributeValues{value: codec.AppendFloat64BE(nil, v)}, nil); err != nil {
					return err
				}
				r.publish(prod.Name(), name, t, v)
			}
			return nil
		}}},
	})
	if err != nil {
		return nil, err
	}

	// The consumer: each job reads its instances at the start, in the
	// middle and in the last main cycle of its cycle.
	consume := func(objs []string) func(context.Context, *multirate.Cycle) error {
		return func(_ context.Context, c *multirate.Cycle) error {
			var seen, when []string
			for pass, at := range []int{0, (c.N - 1) / 2, c.N - 1} {
				if err := c.Await(at); err != nil {
					return err
				}
				for _, obj := range objs {
					b, ok, err := c.Value(obj, value)
					if err != nil {
						return err
					}
					if !ok {
						r.mu.Lock()
						r.missing = append(r.missing, fmt.Sprintf("%s cycle %d at %v: no value of %s", c.Job, c.Number, c.Boundary, obj))
						r.mu.Unlock()
						continue
					}
					v, _, err := codec.ReadFloat64BE(b)
					if err != nil {
						return err
					}
					r.read(c, obj, v)
					if pass == 0 {
						seen = append(seen, fmt.Sprintf("%s=%v", obj, v))
					}
				}
				when = append(when, fmt.Sprint(c.Number*c.N+at))
			}
			r.say("  %s cycle %d at %v: %s, read in main cycles %s", c.Job, c.Number, c.Boundary, strings.Join(seen, " "), strings.Join(when, ", "))
			return nil
		}
	}
	var jobs []multirate.Job
	for _, j := range multirateJobs {
		jobs = append(jobs, multirate.Job{Name: j.name, Cycle: peer.Float64Time(j.n), Uses: multirate.Objects(j.objs...), Run: consume(j.objs)})
	}
	cs, err := multirate.New(cons, multirate.Config{MainCycle: peer.Float64Time(1), Jobs: jobs})
	if err != nil {
		return nil, err
	}
	for _, ev := range setup {
		if err := cs.Record(ev); err != nil {
			return nil, err
		}
	}

	began := time.Now()
	prodDone := make(chan error, 1)
	go func() { prodDone <- ps.Run(ctx, df.steps) }()
	cerr := cs.Run(ctx, df.steps)
	if cerr != nil {
		cancel() // the producer may wait for a grant that needs the consumer
	}
	perr := <-prodDone
	r.took = time.Since(began)
	r.producer, r.consumer = ps.Stats(), cs.Stats()
	r.prodFed, r.consFed = prod.Stats(), cons.Stats()
	if err := errors.Join(cerr, perr); err != nil {
		return r, err
	}
	if err := r.check(); err != nil {
		return r, err
	}
	return r, nil
}

// check verifies the run: every read saw the latest value published
// at or before its boundary, and each job ran once per N main cycles.
func (r *multirateRun) check() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.problems = append(r.problems, r.missing...)
	for _, rd := range r.reads {
		want, ok := latestAtOrBefore(r.published[rd.Obj], *rd.Boundary)
		if !ok || want != rd.Value {
			r.problems = append(r.problems, fmt.Sprintf("%s cycle %d at %v read %s = %v, the latest value stamped at or before it is %v", rd.Job, *rd.Cycle, *rd.Boundary, rd.Obj, rd.Value, want))
		}
	}
	for i, j := range multirateJobs {
		if got, want := r.consumer.Jobs[i].Cycles, r.df.steps/j.n; got != want {
			r.problems = append(r.problems, fmt.Sprintf("%s ran %d cycles, want %d", j.name, got, want))
		}
	}
	if len(r.problems) > 0 {
		return fmt.Errorf("%d checks failed, the first: %s", len(r.problems), r.problems[0])
	}
	return nil
}

// latestAtOrBefore returns the value with the greatest time stamp <= t.
func latestAtOrBefore(byStamp map[float64]float64, t float64) (float64, bool) {
	best, v := math.Inf(-1), 0.0
	for s, x := range byStamp {
		if s <= t && s > best {
			best, v = s, x
		}
	}
	return v, !math.IsInf(best, -1)
}

// print writes the summary.
func (r *multirateRun) print(w io.Writer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	pubs := 0
	for _, m := range r.published {
		pubs += len(m)
	}
	fmt.Fprintf(w, "summary: %d updates published, %d reads in %v\n", pubs, len(r.reads), r.took.Round(time.Millisecond))
	names := make([]string, 0, len(r.consumer.Jobs))
	for _, js := range r.consumer.Jobs {
		names = append(names, fmt.Sprintf("%s (x%d) %d cycles, held the main loop %d times (%v)", js.Name, js.N, js.Cycles, js.Held, js.HeldFor.Round(time.Microsecond)))
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %s\n", n)
	}
	fmt.Fprintf(w, "  data plane: consumer sent %d NAKs, producer %d retransmits\n", r.consFed.Reliable.NAKs, r.prodFed.Reliable.Retransmits)
	if len(r.problems) == 0 && len(r.reads) > 0 {
		fmt.Fprintln(w, "check: every read saw the latest value stamped at or before its cycle's boundary; each job ran once per N main cycles")
	}
	for _, p := range r.problems {
		fmt.Fprintf(w, "FAILED: %s\n", p)
	}
}
