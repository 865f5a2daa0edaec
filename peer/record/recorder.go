package record

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/fomxml/codec"
	"github.com/meshrti/meshrti/peer"
)

// A Recorder records a federation through a federate of its own: the
// federate becomes time-constrained, subscribes to the federation's
// classes and writes what it receives, in time-stamp order, as a
// recording (Writer). The zero Recorder records every class but the
// MOM's until its context ends.
//
//	rec := &record.Recorder{Classes: []string{"Aircraft"}}
//	st, err := rec.RecordFile(ctx, cfg, "flight.mrec") // joins, records, resigns
//
// A Recorder records once; it is not safe for concurrent use.
type Recorder struct {
	// Classes and Interactions name the object and interaction classes
	// to record; none named: every class but the MOM's.
	Classes, Interactions []string
	// Until, when HasUntil, ends the recording once the federate is
	// granted that logical time.
	Until    float64
	HasUntil bool
	// Federation is the federation's name, written in the header
	// (RecordFile sets it from the federate's configuration).
	Federation string
	// Ready, when not nil, runs once the recorder is subscribed and
	// time-constrained and the header is written.
	Ready func(*peer.Federate)

	fed     *peer.Federate
	fdd     *fomxml.FDD
	w       *Writer
	objects map[peer.ObjectInstanceHandle]recObject
	// interactions are the classes subscribed to, the only ones recorded.
	interactions map[peer.InteractionClassHandle]bool
	feds         map[peer.FederateHandle]string
	final        peer.LogicalTime
	tf           peer.TimeFactory
	ev           Event // reused for every event
	stats        Stats
}

type recObject struct {
	name  string
	class *fomxml.ObjectClass
}

// Record records through fed, a federate joined to the federation, into
// out: it sets the federate up, writes the header and records until ctx
// ends (the normal end, not an error) or Until is granted. It returns
// what it wrote; out holds a whole recording even after an error, up to
// the error. The caller resigns fed.
func (r *Recorder) Record(ctx context.Context, fed *peer.Federate, out io.Writer) (Stats, error) {
	cw := &countingWriter{w: out}
	n, err := r.run(ctx, fed, cw)
	st := r.stats
	st.Events, st.Bytes = n, cw.n
	if d := st.last.Sub(st.first).Seconds(); st.burst > 1 && d > 0 {
		st.UpdatesPerS = float64(st.burst-1) / d
		st.BurstUpdates = st.burst
	}
	return st, err
}

// A countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// run sets the recorder up, writes the header and records until ctx ends
// or Until is granted; it returns the count of events written.
func (r *Recorder) run(ctx context.Context, fed *peer.Federate, out io.Writer) (int64, error) {
	r.fed, r.fdd = fed, fed.FDD()
	r.objects = map[peer.ObjectInstanceHandle]recObject{}
	r.feds = map[peer.FederateHandle]string{}
	r.tf = r.fed.GetTimeFactory()
	r.final = r.tf.MakeFinal()
	if r.HasUntil {
		r.final = makeTime(r.tf, r.Until)
	}
	mim, mods, err := fetchModules(ctx, r.fed)
	if err != nil {
		return 0, fmt.Errorf("reading the federation's FOM modules through the MOM: %w", err)
	}
	// Receive-order messages are recorded as they come, also while no
	// time advance is pending (none is while no federate regulates).
	if err := r.fed.EnableAsynchronousDelivery(); err != nil {
		return 0, err
	}
	if err := r.fed.EnableTimeConstrained(); err != nil {
		return 0, err
	}
	if _, err := waitEvent(ctx, r.fed, func(ev peer.Event) bool { _, ok := ev.(peer.TimeConstrainedEnabled); return ok }); err != nil {
		return 0, fmt.Errorf("waiting to become time-constrained: %w", err)
	}
	if err := r.subscribe(); err != nil {
		return 0, err
	}
	r.w, err = NewWriter(out, Header{
		Federation: r.Federation, Recorder: r.fed.Name(), Started: time.Now(),
		TimeRepresentation: r.tf.Name(), MIM: mim, Modules: mods,
	})
	if err != nil {
		return 0, err
	}
	if r.Ready != nil {
		r.Ready(r.fed)
	}
	err = r.loop(ctx)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		err = nil // interrupted: the normal end
	}
	if cerr := r.w.Close(); err == nil {
		err = cerr
	}
	return r.w.Events(), err
}

// chosenClasses returns the classes named, each found by find (an
// error starting with missing for one that is not), or, with none named,
// the classes of all that every says to take.
func chosenClasses[C any](all []C, named []string, find func(string) (C, bool), every func(C) bool, missing string) ([]C, error) {
	var cs []C
	if len(named) == 0 {
		for _, c := range all {
			if every(c) {
				cs = append(cs, c)
			}
		}
	}
	for _, n := range named {
		c, ok := find(n)
		if !ok {
			return nil, fmt.Errorf("%s %q in the FDD", missing, n)
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// subscribe subscribes to every class of the FDD but the roots and the
// MOM's, or to the ones named, with all their attributes.
func (r *Recorder) subscribe() error {
	ocs, err := chosenClasses(r.fdd.ObjectClasses, r.Classes, r.fdd.ObjectClass,
		func(c *fomxml.ObjectClass) bool { return c.Parent != nil && !c.IsMOM() }, "-classes: no object class")
	if err != nil {
		return err
	}
	for _, c := range ocs {
		var attrs []peer.AttributeHandle
		for _, a := range c.AllAttributes() {
			attrs = append(attrs, a.Handle)
		}
		if err := r.fed.SubscribeObjectClassAttributes(c.Handle, attrs...); err != nil {
			return fmt.Errorf("subscribing to %s: %w", c.QualifiedName, err)
		}
	}
	ics, err := chosenClasses(r.fdd.InteractionClasses, r.Interactions, r.fdd.InteractionClass,
		func(c *fomxml.InteractionClass) bool { return c.Parent != nil && !c.IsMOM() }, "-interactions: no interaction class")
	if err != nil {
		return err
	}
	r.interactions = map[peer.InteractionClassHandle]bool{}
	for _, c := range ics {
		if err := r.fed.SubscribeInteractionClass(c.Handle); err != nil {
			return fmt.Errorf("subscribing to %s: %w", c.QualifiedName, err)
		}
		r.interactions[c.Handle] = true
	}
	return nil
}

// flushDelay bounds how long a recorded event waits in memory: the
// frame it is in goes to the file at most this long after the frame's
// first event, so a crash loses at most that much. Frames fill to
// FrameSize under load, and go out sooner when events are few.
const flushDelay = 10 * time.Millisecond

// galtPoll is how often a recorder with no request pending (no federate
// regulates) looks at GALT again.
const galtPoll = 20 * time.Millisecond

// loop records events and keeps a Next Message Request pending, so that
// time-stamp-order messages are delivered in order as soon as GALT
// allows. While no regulating federate bounds GALT it waits instead:
// a request then would be granted at once, at the end of time.
func (r *Recorder) loop(ctx context.Context) error {
	requested := false
	var wake waker
	defer wake.stop()
	var frameStart time.Time // when the first event of the open frame came
	var pollAt time.Time     // when to look at GALT again
	for {
		if !requested {
			if _, ok, err := r.fed.QueryGALT(); err != nil {
				return err
			} else if ok || r.HasUntil {
				if err := r.fed.NextMessageRequest(r.final); err != nil {
					return fmt.Errorf("next message request: %w", err)
				}
				requested = true
			}
		}
		if r.w.Buffered() == 0 {
			frameStart = time.Time{}
		} else if frameStart.IsZero() {
			frameStart = time.Now()
		} else if time.Since(frameStart) >= flushDelay {
			if err := r.w.Flush(); err != nil {
				return err
			}
			frameStart = time.Time{}
		}
		// Wake up to flush the open frame, and while no request is
		// pending, to ask for GALT again.
		var at time.Time
		if !frameStart.IsZero() {
			at = frameStart.Add(flushDelay)
		}
		if !requested {
			if now := time.Now(); !now.Before(pollAt) {
				pollAt = now.Add(galtPoll)
			}
			if at.IsZero() || pollAt.Before(at) {
				at = pollAt
			}
		}
		wctx := wake.at(ctx, at)
		ev, err := r.fed.Next(wctx)
		if err != nil {
			if ctx.Err() == nil && wctx != ctx && errors.Is(err, context.DeadlineExceeded) {
				continue
			}
			return err
		}
		switch ev := ev.(type) {
		case peer.TimeAdvanceGrant:
			requested = false
			if r.HasUntil && ev.Time.Float() >= r.Until {
				return nil
			}
		case peer.ConnectionLost:
			return fmt.Errorf("connection lost: %s", ev.Reason)
		case peer.FederateJoined:
			r.feds[ev.Federate] = ev.Name
		default:
			if err := r.write(ev); err != nil {
				return err
			}
		}
	}
}

// waker hands out a context that ends at a given moment, keeping it
// while that moment stays the same, so that waiting costs one timer per
// deadline rather than one per event.
type waker struct {
	when   time.Time
	ctx    context.Context
	cancel context.CancelFunc
}

// at returns ctx itself when when is zero, else a context derived from
// ctx that ends at when.
func (w *waker) at(ctx context.Context, when time.Time) context.Context {
	if when.IsZero() {
		return ctx
	}
	if w.ctx == nil || !w.when.Equal(when) {
		w.stop()
		w.when = when
		w.ctx, w.cancel = context.WithDeadline(ctx, when)
	}
	return w.ctx
}

func (w *waker) stop() {
	if w.cancel != nil {
		w.cancel()
		w.ctx, w.cancel = nil, nil
	}
}

// write records ev when it is one of the kinds recorded.
func (r *Recorder) write(ev peer.Event) error {
	e := &r.ev
	*e = Event{Values: e.Values[:0]}
	switch ev := ev.(type) {
	case peer.DiscoverObjectInstance:
		c, ok := r.fdd.ObjectClassByHandle(ev.Class)
		if !ok {
			return nil
		}
		r.objects[ev.Object] = recObject{name: ev.Name, class: c}
		e.Kind, e.Class, e.Object = KindDiscover, c.QualifiedName, ev.Name
		e.Federate = r.federate(ev.Producer)
	case peer.ReflectAttributeValues:
		o, ok := r.objects[ev.Object]
		if !ok {
			return nil
		}
		e.Kind, e.Class, e.Object, e.Tag, e.Transportation = KindUpdate, o.class.QualifiedName, o.name, ev.Tag, ev.Transportation
		r.setOrder(e, ev.Time, ev.SentOrder, ev.ReceivedOrder)
		e.Federate = r.federate(ev.Producer)
		for h, v := range ev.Values {
			if a, ok := o.class.AttributeByHandle(h); ok {
				e.Values = append(e.Values, Value{Name: a.Name, Data: v})
			}
		}
		sortValues(e.Values)
		st := &r.stats
		now := time.Now()
		if st.burst == 0 || now.Sub(st.last) >= statsPause {
			st.first, st.burst = now, 0
		}
		st.Updates++
		st.burst++
		st.last = now
	case peer.ReceiveInteraction:
		c, ok := r.fdd.InteractionClassByHandle(ev.Class)
		if !ok || !r.interactions[ev.Class] {
			return nil // a MOM report still on its way after fetchModules
		}
		e.Kind, e.Class, e.Tag, e.Transportation = KindInteraction, c.QualifiedName, ev.Tag, ev.Transportation
		r.setOrder(e, ev.Time, ev.SentOrder, ev.ReceivedOrder)
		e.Federate = r.federate(ev.Producer)
		for h, v := range ev.Values {
			if p, ok := c.ParameterByHandle(h); ok {
				e.Values = append(e.Values, Value{Name: p.Name, Data: v})
			}
		}
		sortValues(e.Values)
	case peer.RemoveObjectInstance:
		o, ok := r.objects[ev.Object]
		if !ok {
			return nil
		}
		delete(r.objects, ev.Object)
		e.Kind, e.Class, e.Object, e.Tag = KindRemove, o.class.QualifiedName, o.name, ev.Tag
		r.setOrder(e, ev.Time, ev.SentOrder, ev.ReceivedOrder)
		e.Federate = r.federate(ev.Producer)
	default:
		return nil
	}
	return r.w.Write(e)
}

func (r *Recorder) setOrder(e *Event, t peer.LogicalTime, sent, received peer.OrderType) {
	if t != nil {
		e.HasTime, e.Time = true, t.Float()
	}
	e.TSO, e.SentTSO = received == peer.TimeStamp, sent == peer.TimeStamp
}

// federate names the producing federate, by name when the federation
// knows it.
func (r *Recorder) federate(h peer.FederateHandle) string {
	if n, ok := r.feds[h]; ok {
		return n
	}
	n, err := r.fed.GetFederateName(h)
	if err != nil {
		n = fmt.Sprintf("federate-%d", h)
	}
	r.feds[h] = n
	return n
}

func sortValues(vs []Value) {
	if len(vs) > 1 {
		slices.SortFunc(vs, func(a, b Value) int { return strings.Compare(a.Name, b.Name) })
	}
}

// RecordFile joins with cfg and records into a new file at path until
// ctx ends or Until is granted; the file is closed cleanly either way,
// and the federate resigns. It returns what was written.
func (r *Recorder) RecordFile(ctx context.Context, cfg peer.Config, path string) (Stats, error) {
	f, err := os.Create(path)
	if err != nil {
		return Stats{}, err
	}
	jctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	fed, err := peer.Join(jctx, cfg)
	cancel()
	if err != nil {
		f.Close()
		os.Remove(path) // nothing was recorded
		return Stats{}, fmt.Errorf("join: %w", err)
	}
	defer fed.Close()
	if r.Federation == "" {
		r.Federation = cfg.Federation
	}
	st, err := r.Record(ctx, fed, f)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer rcancel()
	if rerr := fed.ResignFederationExecution(rctx, peer.DeleteObjects); err == nil && rerr != nil && !errors.Is(rerr, peer.ErrClosed) {
		err = fmt.Errorf("resign: %w", rerr)
	}
	return st, err
}

// Stats is what a Recorder wrote (what "federate-node record -stats"
// prints).
type Stats struct {
	Events  int64 `json:"events"`
	Updates int64 `json:"updates"`
	// UpdatesPerS is the sustained rate of the last run of updates
	// without a pause of statsPause or more (BurstUpdates of them), from
	// its first update to its last.
	UpdatesPerS  float64 `json:"updates_per_s"`
	BurstUpdates int64   `json:"burst_updates"`
	Bytes        int64   `json:"bytes"`
	first, last  time.Time
	burst        int64
}

// statsPause ends a run of updates for the rate Stats holds.
// Half a second: a loaded machine can stall the recorder for a tenth of
// one in the middle of a steady load (a repair, the scheduler), which
// split the run and made "bench record" see fewer updates in its last
// run than it sent; the bench waits a second before its load, so the
// messages a late joiner is handed at once still form a run of their own.
const statsPause = 500 * time.Millisecond

// makeTime returns f as a logical time of tf's representation.
func makeTime(tf peer.TimeFactory, f float64) peer.LogicalTime {
	if tf.Name() == peer.HLAinteger64Time {
		return peer.Integer64Time(int64(f))
	}
	return peer.Float64Time(f)
}

// waitEvent reads events until match accepts one, which it returns.
// Other events are dropped.
func waitEvent(ctx context.Context, fed *peer.Federate, match func(peer.Event) bool) (peer.Event, error) {
	for {
		ev, err := fed.Next(ctx)
		if err != nil {
			return nil, err
		}
		if match(ev) {
			return ev, nil
		}
		if cl, ok := ev.(peer.ConnectionLost); ok {
			return nil, fmt.Errorf("connection lost: %s", cl.Reason)
		}
	}
}

// MOM classes and parameters the recorder uses to read the federation's
// modules.
const (
	momRequestModule = "HLAinteractionRoot.HLAmanager.HLAfederation.HLArequest.HLArequestFOMmoduleData"
	momRequestMIM    = "HLAinteractionRoot.HLAmanager.HLAfederation.HLArequest.HLArequestMIMdata"
	momReportModule  = "HLAinteractionRoot.HLAmanager.HLAfederation.HLAreport.HLAreportFOMmoduleData"
	momReportMIM     = "HLAinteractionRoot.HLAmanager.HLAfederation.HLAreport.HLAreportMIMdata"
)

// fetchModules asks the MOM for the text of the federation's MIM and FOM
// modules (HLArequestFOMmoduleData and HLArequestMIMdata about the
// federation, which the federate's own node answers), as any federate
// could, and returns them in the FDD's order.
func fetchModules(ctx context.Context, fed *peer.Federate) (Module, []Module, error) {
	fdd := fed.FDD()
	cd, err := codec.New(fdd)
	if err != nil {
		return Module{}, nil, err
	}
	class := func(name string) *fomxml.InteractionClass {
		c, ok := fdd.InteractionClass(name)
		if !ok && err == nil {
			err = fmt.Errorf("the MIM has no %s", name)
		}
		return c
	}
	reqMod, reqMIM, repMod, repMIM := class(momRequestModule), class(momRequestMIM), class(momReportModule), class(momReportMIM)
	if err != nil {
		return Module{}, nil, err
	}
	param := func(c *fomxml.InteractionClass, name string) *fomxml.Parameter {
		for _, p := range c.AllParameters() {
			if p.Name == name {
				return p
			}
		}
		if err == nil {
			err = fmt.Errorf("%s has no parameter %s", c.QualifiedName, name)
		}
		return &fomxml.Parameter{}
	}
	reqIndex, repIndex, repText, mimText := param(reqMod, "HLAFOMmoduleIndicator"), param(repMod, "HLAFOMmoduleIndicator"), param(repMod, "HLAFOMmoduleData"), param(repMIM, "HLAMIMdata")
	if err != nil {
		return Module{}, nil, err
	}
	if err := errors.Join(fed.PublishInteractionClass(reqMod.Handle), fed.PublishInteractionClass(reqMIM.Handle),
		fed.SubscribeInteractionClass(repMod.Handle), fed.SubscribeInteractionClass(repMIM.Handle)); err != nil {
		return Module{}, nil, err
	}
	// Then stop listening: the node answers every federate's request
	// about the federation to its own federate too.
	defer func() {
		_ = errors.Join(fed.UnsubscribeInteractionClass(repMod.Handle), fed.UnsubscribeInteractionClass(repMIM.Handle),
			fed.UnpublishInteractionClass(reqMod.Handle), fed.UnpublishInteractionClass(reqMIM.Handle))
	}()
	n := len(fdd.Modules) - 1
	mods := make([]Module, n)
	got := make([]bool, n)
	missing := n + 1
	mim := Module{Designator: fdd.Modules[0].File}
	haveMIM := false
	// Ask, and ask again after a while: the node answers only once the
	// subscription is in place, which it is by the time the request is
	// handled, but a retry costs nothing.
	for attempt := 0; missing > 0; attempt++ {
		if attempt == 10 {
			return mim, nil, fmt.Errorf("%d of %d modules not reported", missing, n+1)
		}
		if !haveMIM {
			if err := fed.SendInteraction(reqMIM.Handle, peer.ParameterValues{}, nil); err != nil {
				return mim, nil, err
			}
		}
		for i := range n {
			if got[i] {
				continue
			}
			b, err := cd.Encode(reqIndex.DataType, i)
			if err != nil {
				return mim, nil, err
			}
			if err := fed.SendInteraction(reqMod.Handle, peer.ParameterValues{reqIndex.Handle: b}, nil); err != nil {
				return mim, nil, err
			}
		}
		wctx, cancel := context.WithTimeout(ctx, time.Second)
		for missing > 0 {
			ev, err := fed.Next(wctx)
			if err != nil {
				break
			}
			ri, ok := ev.(peer.ReceiveInteraction)
			if !ok {
				continue
			}
			switch ri.Class {
			case repMIM.Handle:
				v, err := cd.Decode(mimText.DataType, ri.Values[mimText.Handle])
				if s, ok := v.(string); err == nil && ok && !haveMIM {
					mim.Text, haveMIM = s, true
					missing--
				}
			case repMod.Handle:
				iv, err1 := cd.Decode(repIndex.DataType, ri.Values[repIndex.Handle])
				tv, err2 := cd.Decode(repText.DataType, ri.Values[repText.Handle])
				i, ok1 := iv.(int64)
				s, ok2 := tv.(string)
				if err1 == nil && err2 == nil && ok1 && ok2 && i >= 0 && i < int64(n) && !got[i] {
					mods[i] = Module{Designator: fdd.Modules[i+1].File, Text: s}
					got[i] = true
					missing--
				}
			}
		}
		cancel()
		if ctx.Err() != nil {
			return mim, nil, ctx.Err()
		}
	}
	return mim, mods, nil
}
