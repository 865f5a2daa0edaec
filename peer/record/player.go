package record

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer"
)

// A Player plays a recording back into a federation through a
// regulating federate of its own (lookahead 0), in logical time: each
// time-stamped event is sent at its recorded time, at the recorded pace
// or as fast as the federation allows. The zero Player plays as fast as
// the federation allows.
//
//	p := &record.Player{Speed: 1}
//	res, err := p.PlayFile(ctx, cfg, "flight.mrec") // joins, plays, resigns
//
// A Player plays once; it is not safe for concurrent use.
type Player struct {
	// Speed is logical time units per wall-clock second; 0 plays as fast
	// as the federation allows.
	Speed float64
	// Ready, when not nil, runs once the player has declared what the
	// recording needs and is regulating, before the first event.
	Ready func(*peer.Federate)

	fed     *peer.Federate
	fdd     *fomxml.FDD
	tf      peer.TimeFactory
	now     float64 // granted logical time
	objects map[string]peer.ObjectInstanceHandle
	start   time.Time
}

// Played is what a Player played.
type Played struct {
	Events int64   // events read from the recording
	Time   float64 // the logical time reached
	// Played is the wall-clock time from the first event played to
	// the last.
	Played time.Duration
}

// PlayFile joins with cfg (the recording's FOM modules unless cfg names
// some), creating the federation when it does not exist, and plays the
// recording at path; then it lingers a moment and resigns. A damaged
// file is played up to the damage, and the error says where it stopped.
func (p *Player) PlayFile(ctx context.Context, cfg peer.Config, path string) (Played, error) {
	// First pass: what to publish and which names to reserve.
	plan, scanErr := scanRecording(path)
	if plan == nil {
		return Played{}, scanErr
	}
	if len(cfg.FOMFiles) == 0 && len(cfg.FOMModules) == 0 {
		mim, docs, err := plan.header.Documents()
		if err != nil {
			return Played{}, err
		}
		cfg.FOMModules, cfg.MIMModule = docs, mim
	}
	cfg.TimeRepresentation = plan.header.TimeRepresentation
	cfg.Create = true // a fresh federation, or one that exists
	if cfg.FederateType == "" {
		cfg.FederateType = "federate-node/replay"
	}
	jctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	fed, err := peer.Join(jctx, cfg)
	cancel()
	if err != nil {
		return Played{}, fmt.Errorf("join: %w", err)
	}
	defer fed.Close()
	p.fed, p.objects = fed, map[string]peer.ObjectInstanceHandle{}
	res, err := p.run(ctx, path, plan)
	// Linger a moment, so that repairs of the last messages can still be
	// served; then resign without deleting: every instance was deleted
	// with a time stamp already, and a deletion by resigning would reach
	// the receivers in receive order, ahead of time-stamped updates they
	// still hold.
	lctx, lcancel := context.WithTimeout(ctx, replayLinger)
	for _, err := fed.Next(lctx); err == nil; _, err = fed.Next(lctx) {
	}
	lcancel()
	rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer rcancel()
	action := peer.NoAction
	if len(p.objects) > 0 {
		action = peer.DeleteObjects // instances may be left
	}
	if rerr := fed.ResignFederationExecution(rctx, action); err == nil && rerr != nil {
		err = fmt.Errorf("resign: %w", rerr)
	}
	return res, err
}

// replayLinger is how long the player stays after its last message.
const replayLinger = 500 * time.Millisecond

// replayPlan is what the first pass over a recording found.
type replayPlan struct {
	header       Header
	attrs        map[string]map[string]bool // object class: attributes updated
	interactions map[string]bool
	names        []string // instance names to reserve
	events       int64
	first        float64 // the first time stamp
	hasFirst     bool
}

// scanRecording reads the whole recording once. It returns a nil plan
// only when nothing can be played; otherwise the error, if any, is where
// the file is damaged (the second pass stops there too).
func scanRecording(path string) (*replayPlan, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rd, err := NewReader(f)
	if err != nil {
		return nil, err
	}
	p := &replayPlan{header: rd.Header(), attrs: map[string]map[string]bool{}, interactions: map[string]bool{}}
	seen := map[string]bool{}
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return p, nil
		}
		if err != nil {
			return p, err
		}
		p.events++
		if ev.HasTime && ev.TSO && !p.hasFirst {
			p.first, p.hasFirst = ev.Time, true
		}
		switch ev.Kind {
		case KindDiscover, KindUpdate, KindRemove:
			if p.attrs[ev.Class] == nil {
				p.attrs[ev.Class] = map[string]bool{}
			}
			for _, v := range ev.Values {
				p.attrs[ev.Class][v.Name] = true
			}
			if ev.Kind == KindDiscover && !seen[ev.Object] && !strings.HasPrefix(ev.Object, "HLA") {
				seen[ev.Object] = true
				p.names = append(p.names, ev.Object)
			}
		case KindInteraction:
			p.interactions[ev.Class] = true
		}
	}
}

// run declares what the recording needs, reserves its instance names,
// becomes regulating (lookahead 0) and plays the events.
func (p *Player) run(ctx context.Context, path string, plan *replayPlan) (Played, error) {
	p.fdd, p.tf = p.fed.FDD(), p.fed.GetTimeFactory()
	if err := p.declare(plan); err != nil {
		return Played{}, err
	}
	if len(plan.names) > 0 {
		if err := p.fed.ReserveMultipleObjectInstanceName(plan.names...); err != nil {
			return Played{}, fmt.Errorf("reserving the recorded instance names: %w", err)
		}
		ev, err := waitEvent(ctx, p.fed, func(ev peer.Event) bool {
			switch ev.(type) {
			case peer.MultipleObjectInstanceNameReservationSucceeded, peer.MultipleObjectInstanceNameReservationFailed:
				return true
			}
			return false
		})
		if err != nil {
			return Played{}, err
		}
		if _, ok := ev.(peer.MultipleObjectInstanceNameReservationFailed); ok {
			return Played{}, fmt.Errorf("the recorded instance names (%d) are not all free in federation %s", len(plan.names), plan.header.Federation)
		}
	}
	if err := p.fed.EnableTimeRegulation(p.tf.MakeZero()); err != nil {
		return Played{}, err
	}
	ev, err := waitEvent(ctx, p.fed, func(ev peer.Event) bool { _, ok := ev.(peer.TimeRegulationEnabled); return ok })
	if err != nil {
		return Played{}, fmt.Errorf("waiting to become time-regulating: %w", err)
	}
	p.now = ev.(peer.TimeRegulationEnabled).Time.Float()
	if plan.hasFirst && plan.first < p.now {
		return Played{}, fmt.Errorf("the federation is at time %v, past the recording's first time stamp %v", p.now, plan.first)
	}
	if p.Ready != nil {
		p.Ready(p.fed)
	}
	f, err := os.Open(path)
	if err != nil {
		return Played{}, err
	}
	defer f.Close()
	rd, err := NewReader(f)
	if err != nil {
		return Played{}, err
	}
	p.start = time.Now()
	first := plan.first
	if !plan.hasFirst {
		first = p.now
	}
	var damage error
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			// Played up to the damage: end as at the end of a file.
			damage = fmt.Errorf("replayed up to the damage: %w", err)
			break
		}
		if err := p.play(ctx, ev, first); err != nil {
			return Played{Events: rd.Events() - 1, Time: p.now}, fmt.Errorf("event %d (%s %s %s): %w", rd.Events(), ev.Kind, ev.Class, ev.Object, err)
		}
	}
	// Instances the recording did not remove go now, time-stamped so
	// they do not overtake the updates sent before.
	for name, h := range p.objects {
		if err := p.fed.DeleteObjectInstanceWithTime(h, nil, makeTime(p.tf, p.now)); err != nil {
			return Played{Events: rd.Events(), Time: p.now}, fmt.Errorf("deleting %s: %w", name, err)
		}
		delete(p.objects, name)
	}
	return Played{Events: rd.Events(), Time: p.now, Played: time.Since(p.start)}, damage
}

// declare publishes every class, attribute and interaction class the
// recording uses. The privilege to delete goes with every object class,
// so that recorded removals can be played.
func (p *Player) declare(plan *replayPlan) error {
	for name, attrs := range plan.attrs {
		c, ok := p.fdd.ObjectClass(name)
		if !ok {
			return fmt.Errorf("the FDD has no object class %s", name)
		}
		hs := []peer.AttributeHandle{}
		if a, ok := c.Attribute("HLAprivilegeToDeleteObject"); ok {
			hs = append(hs, a.Handle)
		}
		for n := range attrs {
			a, ok := c.Attribute(n)
			if !ok {
				return fmt.Errorf("%s has no attribute %s", name, n)
			}
			if a.Name != "HLAprivilegeToDeleteObject" {
				hs = append(hs, a.Handle)
			}
		}
		if err := p.fed.PublishObjectClassAttributes(c.Handle, hs...); err != nil {
			return fmt.Errorf("publishing %s: %w", name, err)
		}
	}
	for name := range plan.interactions {
		c, ok := p.fdd.InteractionClass(name)
		if !ok {
			return fmt.Errorf("the FDD has no interaction class %s", name)
		}
		if err := p.fed.PublishInteractionClass(c.Handle); err != nil {
			return fmt.Errorf("publishing %s: %w", name, err)
		}
	}
	return nil
}

// play sends one recorded event. A time-stamp-order event at a time
// beyond the granted one first advances there (TARA: lookahead 0 lets
// the player send at the granted time itself), at the recorded pace
// unless fast.
func (p *Player) play(ctx context.Context, ev *Event, first float64) error {
	timed := ev.HasTime && ev.TSO
	if timed && ev.Time > p.now {
		if err := p.advance(ctx, ev.Time, first); err != nil {
			return err
		}
	}
	switch ev.Kind {
	case KindDiscover:
		c, ok := p.fdd.ObjectClass(ev.Class)
		if !ok {
			return fmt.Errorf("no object class %s", ev.Class)
		}
		if _, ok := p.objects[ev.Object]; ok {
			return nil // discovered again (a resubscription): one instance
		}
		name := ev.Object
		if strings.HasPrefix(name, "HLA") {
			name = "" // an RTI-chosen name; the RTI chooses again
		}
		h, err := p.fed.RegisterObjectInstance(c.Handle, name)
		if err != nil {
			return err
		}
		p.objects[ev.Object] = h
	case KindUpdate:
		h, ok := p.objects[ev.Object]
		if !ok {
			return nil // its discovery was not recorded
		}
		c, _ := p.fdd.ObjectClass(ev.Class)
		vals := make(peer.AttributeValues, len(ev.Values))
		for _, v := range ev.Values {
			a, ok := c.Attribute(v.Name)
			if !ok {
				return fmt.Errorf("%s has no attribute %s", ev.Class, v.Name)
			}
			vals[a.Handle] = v.Data
		}
		if timed {
			return p.fed.UpdateAttributeValuesWithTime(h, vals, ev.Tag, makeTime(p.tf, ev.Time))
		}
		return p.fed.UpdateAttributeValues(h, vals, ev.Tag)
	case KindInteraction:
		c, ok := p.fdd.InteractionClass(ev.Class)
		if !ok {
			return fmt.Errorf("no interaction class %s", ev.Class)
		}
		vals := make(peer.ParameterValues, len(ev.Values))
		for _, v := range ev.Values {
			var ph peer.ParameterHandle
			for _, prm := range c.AllParameters() {
				if prm.Name == v.Name {
					ph = prm.Handle
				}
			}
			if ph == 0 {
				return fmt.Errorf("%s has no parameter %s", ev.Class, v.Name)
			}
			vals[ph] = v.Data
		}
		if timed {
			return p.fed.SendInteractionWithTime(c.Handle, vals, ev.Tag, makeTime(p.tf, ev.Time))
		}
		return p.fed.SendInteraction(c.Handle, vals, ev.Tag)
	case KindRemove:
		h, ok := p.objects[ev.Object]
		if !ok {
			return nil
		}
		delete(p.objects, ev.Object)
		// A removal recorded in receive order (a resign, a loss, an
		// untimed delete) is sent time-stamped at the granted time all
		// the same: in receive order it could overtake the updates sent
		// before it, which the receivers hold until their grants.
		t := p.now
		if timed {
			t = ev.Time
		}
		return p.fed.DeleteObjectInstanceWithTime(h, ev.Tag, makeTime(p.tf, t))
	}
	return nil
}

// advance waits for the recorded pace, then requests TARA(t) and waits
// for the grant.
func (p *Player) advance(ctx context.Context, t, first float64) error {
	if p.Speed > 0 {
		due := p.start.Add(time.Duration((t - first) / p.Speed * float64(time.Second)))
		if d := time.Until(due); d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	if err := p.fed.TimeAdvanceRequestAvailable(makeTime(p.tf, t)); err != nil {
		return fmt.Errorf("advance to %v: %w", t, err)
	}
	ev, err := waitEvent(ctx, p.fed, func(ev peer.Event) bool { _, ok := ev.(peer.TimeAdvanceGrant); return ok })
	if err != nil {
		return fmt.Errorf("waiting for grant %v: %w", t, err)
	}
	p.now = ev.(peer.TimeAdvanceGrant).Time.Float()
	return nil
}

// Documents parses the MIM and FOM modules the header holds. The MIM is
// nil when it is the standard one.
func (h Header) Documents() (mim *fomxml.Document, docs []*fomxml.Document, err error) {
	if h.MIM.Text != "" && h.MIM.Text != string(fomxml.StandardMIMXML()) {
		if mim, err = fomxml.ParseBytes(h.MIM.Designator, []byte(h.MIM.Text)); err != nil {
			return nil, nil, fmt.Errorf("the recording's MIM: %w", err)
		}
	}
	for _, m := range h.Modules {
		d, err := fomxml.ParseBytes(m.Designator, []byte(m.Text))
		if err != nil {
			return nil, nil, fmt.Errorf("the recording's module %s: %w", m.Designator, err)
		}
		docs = append(docs, d)
	}
	return mim, docs, nil
}

// FDD merges the header's modules into the FDD the recording was made
// with.
func (h Header) FDD() (*fomxml.FDD, error) {
	mim, docs, err := h.Documents()
	if err != nil {
		return nil, err
	}
	if mim == nil {
		return fomxml.Merge(docs...)
	}
	return fomxml.MergeWithMIM(mim, docs...)
}
