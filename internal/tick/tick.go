package tick

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/fomxml/codec"
	"github.com/meshrti/meshrti/peer"
)

// Result is what the tick federate reports. Reflections and LastTime
// are keyed by the producing federate's name; a producer's updates were
// all received, in order, when its count equals its last time stamp.
type Result struct {
	Time        float64            `json:"time"`
	Grants      int                `json:"grants"`
	Sent        int                `json:"sent"`
	Reflections map[string]int     `json:"reflections"`
	LastTime    map[string]float64 `json:"lastTime"`
	OutOfOrder  int                `json:"outOfOrder"`
	Lost        []string           `json:"lost"`
	// Suspicions and Refutations count the members this node's failure
	// detector declared dead and heard alive again (peer.Stats): a
	// suspicion alone loses nobody.
	Suspicions  uint64 `json:"suspicions"`
	Refutations uint64 `json:"refutations"`
	// Saves and Restores count the federation saves and restores this
	// federate took part in (FederationSaved, FederationRestored).
	Saves    int `json:"saves,omitempty"`
	Restores int `json:"restores,omitempty"`
	// Lab is what the lab role's workload did (nil for tick).
	Lab *LabCounts `json:"lab,omitempty"`
}

// Federate is what the tick federate needs of its RTI: a federate of
// package peer (*peer.Federate), or one that a `serve` daemon hosts for
// this process, reached over the Federate Protocol (FedProFederate).
type Federate interface {
	Name() string
	Handle() peer.FederateHandle
	FDD() *fomxml.FDD
	Stats() peer.Stats
	Next(ctx context.Context) (peer.Event, error)
	GetObjectClassHandle(name string) (peer.ObjectClassHandle, error)
	GetAttributeHandle(class peer.ObjectClassHandle, name string) (peer.AttributeHandle, error)
	GetFederateName(h peer.FederateHandle) (string, error)
	PublishObjectClassAttributes(class peer.ObjectClassHandle, attrs ...peer.AttributeHandle) error
	SubscribeObjectClassAttributes(class peer.ObjectClassHandle, attrs ...peer.AttributeHandle) error
	EnableTimeRegulation(lookahead peer.LogicalTime) error
	EnableTimeConstrained() error
	RegisterObjectInstance(class peer.ObjectClassHandle, name string) (peer.ObjectInstanceHandle, error)
	UpdateAttributeValuesWithTime(obj peer.ObjectInstanceHandle, values peer.AttributeValues, tag []byte, t peer.LogicalTime) error
	TimeAdvanceRequest(t peer.LogicalTime) error
	SynchronizationPointAchieved(label string, successfully bool) error
	RequestFederationSaveWithTime(label string, t peer.LogicalTime) error
	RequestFederationRestore(label string) error
	FederateSaveBegun() error
	FederateSaveComplete() error
	FederateRestoreComplete() error
	SavedStateWriter(label string) (io.WriteCloser, error)
	RestoredStateReader(label string) (io.ReadCloser, error)
}

var _ Federate = (*peer.Federate)(nil)

// Extra is a workload a tick federate runs besides its steps: it
// declares what it needs once regulation is asked for, sees every event,
// acts at each step (obj is the federate's own instance) before the
// step's time advance, adds its counts to the result, and saves and
// restores its state with the federate's.
//
// A service refused because a save or restore is under way
// (peer.ErrSaveInProgress, ErrRestoreInProgress) is returned as it is:
// handle gets the event again once the save or restore ended, and step
// is called again for the same step, and must go on from where it was
// refused.
type Extra interface {
	declare() error
	handle(ev peer.Event) error
	step(k int, obj peer.ObjectInstanceHandle) error
	result(res *Result)
	save() (json.RawMessage, error)
	restore(state json.RawMessage) error
}

// Command is an order the tick federate takes from outside the
// federation (the fault lab's, by signal: Commands).
type Command int

const (
	// cmdSave asks the federation to save, timed a few steps ahead.
	cmdSave Command = iota + 1
	// cmdRestore asks the federation to restore the last save this
	// federate took part in.
	cmdRestore
)

// ticker is one run of the tick federate (Run).
//
// Save and restore (docs/reliability.md): the federate takes part in
// every save and restore of its federation. Told to save, it writes its
// state (the step under way and how far it got, its counts, its
// instance, the workload's) with SavedStateWriter; told to restore, it
// reads the state it restores as and goes on from there: the step, the
// counts and the reflections per producer go back to the save. A
// service refused because a save or restore began meanwhile is asked
// again once it ended (the step goes on from where it was); events that
// make the federate call services are held until then. On cmdSave it
// asks for a save timed a few steps ahead (again, further ahead, when
// the save time could not be honored); on cmdRestore for a restore of
// the last save it took part in.
type ticker struct {
	fed          Federate
	out          io.Writer
	extra        Extra
	ctl          <-chan Command
	peers, steps int
	delay        time.Duration

	res      *Result
	cd       *codec.Codec
	aircraft peer.ObjectClassHandle
	position peer.AttributeHandle
	obj      peer.ObjectInstanceHandle

	// Reflections of Position by producer: its name, or "#HANDLE" while
	// the name is not known (a federate's name may be unknown when its
	// first message arrives; a lost one's is known from its FederateLost).
	names map[peer.FederateHandle]string
	count map[string]int
	last  map[string]float64

	regulating, constrained bool
	enabledAt               float64 // the time regulation was enabled at
	seen                    map[peer.FederateHandle]bool
	granted                 bool

	// step is the step under way (the time it advances to); phase how far
	// it got: 0 nothing done, 1 the update sent, 2 the workload's step
	// done, 3 the time advance asked for.
	step, phase int

	// Save and restore.
	sr        srState
	srLabel   string // the label of the save or restore under way
	blocked   bool   // a service was refused: a save or restore began
	rewound   bool   // a restore moved step and phase back
	lastSaved string // the last save this federate took part in
	held      []peer.Event
	askSave   bool    // cmdSave not yet acted on
	askRest   bool    // cmdRestore not yet acted on
	saveLabel string  // this federate's save request under way
	saveAhead float64 // how far ahead of its time it asks
	saveTries int
	resave    bool // ask again for saveLabel, further ahead
	saves     int  // save requests made (their labels' counter)
}

// srState is whether a save or a restore is under way here.
type srState int

const (
	srNone srState = iota
	srSaving
	srRestoring
)

func newTicker(fed Federate, peers, steps int, delay time.Duration, out io.Writer, extra Extra, ctl <-chan Command) *ticker {
	return &ticker{
		fed: fed, out: out, extra: extra, ctl: ctl, peers: peers, steps: steps, delay: delay,
		res:   &Result{Reflections: map[string]int{}, LastTime: map[string]float64{}, Lost: []string{}},
		names: map[peer.FederateHandle]string{}, count: map[string]int{}, last: map[string]float64{},
		seen: map[peer.FederateHandle]bool{},
	}
}

// errRewound ends a step that a restore abandoned.
var errRewound = errors.New("the step was abandoned by a restore")

// inProgress reports whether err is a service refused because a save or
// restore is under way.
func inProgress(err error) bool {
	return errors.Is(err, peer.ErrSaveInProgress) || errors.Is(err, peer.ErrRestoreInProgress)
}

func (t *ticker) run(ctx context.Context) (*Result, error) {
	res, fed := t.res, t.fed
	if t.extra != nil {
		defer t.extra.result(res)
	}
	defer t.finish()
	var err error
	if t.cd, err = codec.New(fed.FDD()); err != nil {
		return res, err
	}
	if t.aircraft, err = fed.GetObjectClassHandle("Aircraft"); err != nil {
		return res, err
	}
	if t.position, err = fed.GetAttributeHandle(t.aircraft, "Position"); err != nil {
		return res, err
	}
	if err := errors.Join(
		fed.PublishObjectClassAttributes(t.aircraft, t.position),
		fed.SubscribeObjectClassAttributes(t.aircraft, t.position),
		fed.EnableTimeRegulation(peer.Float64Time(1)),
	); err != nil {
		return res, err
	}
	if t.extra != nil {
		if err := t.extra.declare(); err != nil {
			return res, err
		}
	}
	if err := t.until(ctx, "time regulation", func() bool { return t.regulating }); err != nil {
		return res, err
	}
	if err := fed.EnableTimeConstrained(); err != nil {
		return res, err
	}
	if err := t.until(ctx, "time constrained", func() bool { return t.constrained }); err != nil {
		return res, err
	}
	// The object is registered only once this federate is regulating, so
	// discovering peers-1 objects means every federate holds time back.
	if t.obj, err = fed.RegisterObjectInstance(t.aircraft, ""); err != nil {
		return res, err
	}
	if err := t.until(ctx, fmt.Sprintf("%d peers", t.peers-1), func() bool { return len(t.seen) >= t.peers-1 }); err != nil {
		return res, err
	}
	fmt.Fprintf(t.out, "ready %d\n", len(t.seen)+1)
	// A federate that joins a federation already under way (a restarted
	// one) is regulating from the federation's time on: it steps from
	// there.
	t.step = int(math.Floor(t.enabledAt)) + 1
	for t.step <= t.steps {
		if err := t.between(ctx); err != nil {
			return res, err
		}
		if err := t.doStep(ctx); err != nil && !errors.Is(err, errRewound) && !inProgress(err) {
			return res, err
		}
	}
	return res, nil
}

// finish names the counts in the result.
func (t *ticker) finish() {
	st := t.fed.Stats()
	t.res.Suspicions, t.res.Refutations = st.Suspicions, st.Refutations
	t.fold()
	for k, c := range t.count {
		name := k
		if h, ok := unnamed(k); ok {
			name = fmt.Sprintf("federate-%d", h)
		}
		t.res.Reflections[name] += c
		t.res.LastTime[name] = max(t.res.LastTime[name], t.last[k])
	}
}

// producer is the key of a producer's counts: its name, or "#HANDLE".
func (t *ticker) producer(h peer.FederateHandle) string {
	if n, ok := t.names[h]; ok {
		return n
	}
	return "#" + strconv.FormatUint(uint64(h), 10)
}

// unnamed returns the handle of a key "#HANDLE".
func unnamed(k string) (peer.FederateHandle, bool) {
	s, ok := strings.CutPrefix(k, "#")
	if !ok {
		return 0, false
	}
	h, err := strconv.ParseUint(s, 10, 64)
	return peer.FederateHandle(h), err == nil
}

// fold moves the counts of producers known by handle to their names,
// once the names can be had.
func (t *ticker) fold() {
	for _, k := range slices.Sorted(maps.Keys(t.count)) {
		h, ok := unnamed(k)
		if !ok {
			continue
		}
		n, ok := t.names[h]
		if !ok {
			var err error
			if n, err = t.fed.GetFederateName(h); err != nil {
				continue
			}
			t.names[h] = n
		}
		t.count[n] += t.count[k]
		t.last[n] = max(t.last[n], t.last[k])
		delete(t.count, k)
		delete(t.last, k)
	}
}

// until handles events until done holds.
func (t *ticker) until(ctx context.Context, what string, done func() bool) error {
	for !done() {
		ev, err := t.fed.Next(ctx)
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if err := t.handle(ev); err != nil {
			return err
		}
	}
	return nil
}

// between runs before each attempt at a step: it takes the commands
// received, waits for a save or restore under way to end (and hands the
// events held meanwhile on), waits the step delay at a step's start, and
// asks for what the commands asked.
func (t *ticker) between(ctx context.Context) error {
	for more := true; more; {
		select {
		case c := <-t.ctl:
			t.askSave = t.askSave || c == cmdSave
			t.askRest = t.askRest || c == cmdRestore
		default:
			more = false
		}
	}
	if err := t.settle(ctx); err != nil {
		return err
	}
	if t.phase == 0 && t.delay > 0 {
		time.Sleep(t.delay)
	}
	return t.ask()
}

// settle handles events while a save or restore is under way, then the
// events held during it.
func (t *ticker) settle(ctx context.Context) error {
	for {
		if err := t.until(ctx, "the end of a save or restore", func() bool { return !t.blocked && t.sr == srNone }); err != nil {
			return err
		}
		if len(t.held) == 0 {
			return nil
		}
		ev := t.held[0]
		t.held = t.held[1:]
		if err := t.handle(ev); err != nil {
			return err
		}
	}
}

// ask makes the save and restore requests the commands asked for.
func (t *ticker) ask() error {
	name := t.fed.Name()
	if t.askSave && t.saveLabel == "" {
		t.askSave = false
		t.saves++
		t.saveLabel = fmt.Sprintf("save-%s-%d-%d", name, t.fed.Handle(), t.saves)
		t.saveAhead, t.saveTries, t.resave = 8, 0, true
	}
	if t.resave {
		at := t.res.Time + t.saveAhead
		err := t.fed.RequestFederationSaveWithTime(t.saveLabel, peer.Float64Time(at))
		switch {
		case inProgress(err):
			t.blocked = true // asked again after it
		case err != nil:
			fmt.Fprintf(t.out, "save refused %s: %v\n", t.saveLabel, err)
			t.saveLabel, t.resave = "", false
		default:
			fmt.Fprintf(t.out, "save requested %s at %v\n", t.saveLabel, at)
			t.resave = false
		}
	}
	if t.askRest {
		if t.lastSaved == "" {
			t.askRest = false
			fmt.Fprintln(t.out, "restore refused: nothing saved")
			return nil
		}
		err := t.fed.RequestFederationRestore(t.lastSaved)
		switch {
		case inProgress(err):
			t.blocked = true
		case err != nil:
			t.askRest = false
			fmt.Fprintf(t.out, "restore refused %s: %v\n", t.lastSaved, err)
		default:
			t.askRest = false
			fmt.Fprintf(t.out, "restore requested %s\n", t.lastSaved)
		}
	}
	return nil
}

// doStep goes on with the step under way from its phase: the update,
// the workload's step, the time advance, the grant. A service refused
// by a save or restore is returned as it is (between waits for its
// end); errRewound, when a restore abandoned the step.
func (t *ticker) doStep(ctx context.Context) error {
	t.rewound = false
	ts := float64(t.step)
	if t.phase == 0 {
		b, err := t.cd.Encode("Position3D", map[string]any{"Band": "X", "Location": []any{ts, 0.0, 0.0}})
		if err != nil {
			return err
		}
		if err := t.fed.UpdateAttributeValuesWithTime(t.obj, peer.AttributeValues{t.position: b}, nil, peer.Float64Time(ts)); err != nil {
			return t.refused(err, "update at %v", ts)
		}
		t.res.Sent++
		t.phase = 1
	}
	if t.phase == 1 {
		if t.extra != nil {
			if err := t.extra.step(t.step, t.obj); err != nil {
				return t.refused(err, "step %d", t.step)
			}
		}
		t.phase = 2
	}
	if t.phase == 2 {
		if err := t.fed.TimeAdvanceRequest(peer.Float64Time(ts)); err != nil {
			return t.refused(err, "advance to %v", ts)
		}
		t.granted = false
		t.phase = 3
	}
	if err := t.until(ctx, fmt.Sprintf("grant %v", ts), func() bool { return t.granted || t.rewound }); err != nil {
		return err
	}
	if t.rewound {
		return errRewound
	}
	t.step++
	t.phase = 0
	return nil
}

// refused returns err; one of a save or restore under way blocks the
// steps until it ended.
func (t *ticker) refused(err error, format string, args ...any) error {
	if inProgress(err) {
		t.blocked = true
		return err
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}

// callsServices reports whether handling ev calls services: such events
// are held during a save or restore.
func callsServices(ev peer.Event) bool {
	switch ev.(type) {
	case peer.AnnounceSynchronizationPoint, peer.RequestAttributeOwnershipRelease:
		return true
	}
	return false
}

// handle applies one event.
func (t *ticker) handle(ev peer.Event) error {
	res, out := t.res, t.out
	if callsServices(ev) && (t.blocked || t.sr != srNone) {
		t.held = append(t.held, ev)
		return nil
	}
	switch ev := ev.(type) {
	case peer.TimeRegulationEnabled:
		t.regulating = true
		t.enabledAt = ev.Time.Float()
	case peer.TimeConstrainedEnabled:
		t.constrained = true
	case peer.DiscoverObjectInstance:
		if ev.Producer != t.fed.Handle() {
			t.seen[ev.Producer] = true
		}
		fmt.Fprintf(out, "discovered %v from %d\n", ev.Object, ev.Producer)
	case peer.FederateJoined:
		t.names[ev.Federate] = ev.Name
	case peer.ReflectAttributeValues:
		if _, ok := ev.Values[t.position]; !ok || ev.Time == nil {
			break
		}
		ts, k := ev.Time.Float(), t.producer(ev.Producer)
		if l, ok := t.last[k]; ok && ts <= l {
			res.OutOfOrder++
		}
		t.count[k]++
		t.last[k] = ts
	case peer.FederateLost:
		t.names[ev.Federate] = ev.Name
		res.Lost = append(res.Lost, ev.Name)
		slices.Sort(res.Lost)
	case peer.TimeAdvanceGrant:
		res.Grants++
		res.Time = ev.Time.Float()
		t.granted = true
		fmt.Fprintf(out, "granted %v\n", res.Time)
	case peer.ConnectionLost:
		return fmt.Errorf("connection lost: %s", ev.Reason)
	case peer.AnnounceSynchronizationPoint:
		if t.extra != nil {
			break // the workload achieves it
		}
		err := t.fed.SynchronizationPointAchieved(ev.Label, true)
		switch {
		case inProgress(err):
			t.blocked = true
			t.held = append(t.held, ev)
			return nil
		case errors.Is(err, peer.ErrSynchronizationPointLabelNotAnnounced):
			// Synchronized without this federate, which joined after
			// the point was registered (docs/limits.md).
		case err != nil:
			return fmt.Errorf("achieve %s: %w", ev.Label, err)
		}
	case peer.InitiateFederateSave:
		return t.saveState(ev.Label)
	case peer.FederationSaved:
		res.Saves++
		t.lastSaved = t.srLabel
		if t.saveLabel == t.srLabel {
			t.saveLabel = ""
		}
		fmt.Fprintf(out, "saved %s\n", t.srLabel)
		t.srEnded()
	case peer.FederationNotSaved:
		label := t.srLabel
		if label == "" {
			label = t.saveLabel // failed before it was initiated here
		}
		fmt.Fprintf(out, "not saved %s: %v\n", label, ev.Reason)
		if t.saveLabel != "" {
			// A save whose time a federate's advance had outrun
			// (docs/saverestore.md) is asked for again, further ahead.
			if ev.Reason == peer.SaveTimeCannotBeHonored && t.saveTries < 4 {
				t.saveTries++
				t.saveAhead *= 2
				t.resave = true
			} else {
				t.saveLabel = ""
			}
		}
		t.srEnded()
	case peer.RequestFederationRestoreFailed:
		fmt.Fprintf(out, "restore refused %s\n", ev.Label)
	case peer.FederationRestoreBegun:
		t.sr = srRestoring
	case peer.InitiateFederateRestore:
		return t.restoreState(ev)
	case peer.FederationRestored:
		res.Restores++
		fmt.Fprintf(out, "restored %s\n", t.srLabel)
		t.srEnded()
	case peer.FederationNotRestored:
		fmt.Fprintf(out, "not restored %s: %v\n", t.srLabel, ev.Reason)
		t.srEnded()
	}
	if t.extra != nil {
		if err := t.extra.handle(ev); err != nil {
			if inProgress(err) {
				t.blocked = true
				t.held = append(t.held, ev)
				return nil
			}
			return err
		}
	}
	return nil
}

// srEnded ends the save or restore under way.
func (t *ticker) srEnded() {
	t.sr, t.srLabel, t.blocked = srNone, "", false
}

// tickState is what the tick federate saves: the step under way and how
// far it got, its counts, its instance, the workload's state.
type tickState struct {
	Step        int                       `json:"step"`
	Phase       int                       `json:"phase"`
	Time        float64                   `json:"time"`
	Grants      int                       `json:"grants"`
	Sent        int                       `json:"sent"`
	OutOfOrder  int                       `json:"outOfOrder"`
	Reflections map[string]int            `json:"reflections"`
	LastTime    map[string]float64        `json:"lastTime"`
	Object      peer.ObjectInstanceHandle `json:"object"`
	Lab         json.RawMessage           `json:"lab,omitempty"`
}

// saveState answers InitiateFederateSave: it writes the federate's state
// and says the save is complete.
func (t *ticker) saveState(label string) error {
	t.sr, t.srLabel = srSaving, label
	fmt.Fprintf(t.out, "saving %s at %v\n", label, t.res.Time)
	if t.phase == 3 {
		return fmt.Errorf("save %s initiated while advancing to %d", label, t.step)
	}
	if err := t.fed.FederateSaveBegun(); err != nil {
		return fmt.Errorf("save %s: begun: %w", label, err)
	}
	t.fold()
	s := tickState{Step: t.step, Phase: t.phase, Time: t.res.Time, Grants: t.res.Grants, Sent: t.res.Sent, OutOfOrder: t.res.OutOfOrder,
		Reflections: t.count, LastTime: t.last, Object: t.obj}
	if t.extra != nil {
		var err error
		if s.Lab, err = t.extra.save(); err != nil {
			return fmt.Errorf("save %s: %w", label, err)
		}
	}
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	w, err := t.fed.SavedStateWriter(label)
	if err != nil {
		return fmt.Errorf("save %s: %w", label, err)
	}
	_, err = w.Write(b)
	if err := errors.Join(err, w.Close()); err != nil {
		return fmt.Errorf("save %s: %w", label, err)
	}
	if err := t.fed.FederateSaveComplete(); err != nil {
		return fmt.Errorf("save %s: complete: %w", label, err)
	}
	return nil
}

// restoreState answers InitiateFederateRestore: it reads the state
// saved by the federate it restores as and goes back to it.
func (t *ticker) restoreState(ev peer.InitiateFederateRestore) error {
	t.sr, t.srLabel = srRestoring, ev.Label
	r, err := t.fed.RestoredStateReader(ev.Label)
	if err != nil {
		return fmt.Errorf("restore %s: %w", ev.Label, err)
	}
	b, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		return fmt.Errorf("restore %s: %w", ev.Label, err)
	}
	var s tickState
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("restore %s: %w", ev.Label, err)
	}
	t.step, t.phase, t.obj = s.Step, s.Phase, s.Object
	t.res.Time, t.res.Grants, t.res.Sent, t.res.OutOfOrder = s.Time, s.Grants, s.Sent, s.OutOfOrder
	t.count, t.last = s.Reflections, s.LastTime
	if t.count == nil {
		t.count = map[string]int{}
	}
	if t.last == nil {
		t.last = map[string]float64{}
	}
	if t.extra != nil {
		if err := t.extra.restore(s.Lab); err != nil {
			return fmt.Errorf("restore %s: %w", ev.Label, err)
		}
	}
	t.rewound, t.granted = true, false
	fmt.Fprintf(t.out, "restoring %s as %s at %v\n", ev.Label, ev.Name, t.res.Time)
	if err := t.fed.FederateRestoreComplete(); err != nil {
		return fmt.Errorf("restore %s: complete: %w", ev.Label, err)
	}
	return nil
}

// Config says how the tick federate steps: with Peers federates (this
// one included) joined, Steps time steps of StepDelay each, its lines to
// Out; Extra is the lab's work on top of the ticks (NewLab), nil for
// none; Commands brings orders from outside (Commands()), nil for none.
type Config struct {
	Peers, Steps int
	StepDelay    time.Duration
	Out          io.Writer
	Extra        Extra
	Commands     <-chan Command
}

// Run runs the tick federate on fed as cfg says and returns what it
// counted (its "result" line). The tick federate is time-stepped:
// regulating (lookahead 1) and constrained, it publishes and subscribes
// Aircraft.Position, waits until it has discovered the objects of
// Peers-1 other federates, then for each step s = 1..Steps sends a
// Position update stamped s and advances to s. It prints "granted T"
// for every grant. A lost federate only stops counting for time
// management; stepping goes on. Extra, when set, adds a workload to the
// steps (the lab role's).
func Run(ctx context.Context, fed Federate, cfg Config) (*Result, error) {
	return newTicker(fed, cfg.Peers, cfg.Steps, cfg.StepDelay, cfg.Out, cfg.Extra, cfg.Commands).run(ctx)
}
