package updatecond

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/fomxml/codec"
	"github.com/meshrti/meshrti/peer/hla"
)

// Now is the moment of an update, as the caller measures it. The Filter
// reads no clock.
type Now struct {
	// Wall is wall-clock (or scenario) time since any fixed origin of the
	// caller's choice; it must not go backwards. Heartbeat and
	// MaxUnchanged are measured on it.
	Wall time.Duration
	// Logical is the update's logical time, when HasLogical is set (a
	// time-stamp-order update). HeartbeatLogical is measured on it.
	Logical    float64
	HasLogical bool
}

// Stats counts what a Filter has judged since New.
type Stats struct {
	Offered    uint64 // attribute values passed to Filter
	Sent       uint64 // values returned to send, for whatever reason
	Suppressed uint64 // Offered − Sent
	// Undecodable counts values sent because they could not be judged:
	// the value does not decode under its data type, or the class or
	// attribute handle is not in the FDD. They are always sent.
	Undecodable uint64
	// Heartbeats counts values sent only because the heartbeat was due.
	Heartbeats uint64
	// Held counts values sent only because a change below the threshold
	// held for MaxUnchanged.
	Held uint64
	// Instances is the number of object instances with remembered state.
	Instances int
}

// Filter decides which attribute values of an update go on the wire.
//
// A Filter is not safe for concurrent use: its owner serializes calls
// (all methods are fast and never block).
type Filter struct {
	classes map[hla.ObjectClassHandle]*classPlan
	objs    map[hla.ObjectInstanceHandle]*instance
	stats   Stats
	pass    []hla.AttributeHandle // scratch: the handles to send
}

// classPlan holds the resolved policy and data type of every attribute of
// one class, inherited ones included.
type classPlan struct {
	attrs map[hla.AttributeHandle]*attrPlan
}

type attrPlan struct {
	name   string // "Class.Attribute", fully qualified
	policy Policy // resolved: no zero fields, negative timers are Off
	// typ decodes the attribute's values; nil when the codec cannot
	// handle the data type, and the value is then compared as octets.
	typ *codec.Type
}

// instance is what a Filter remembers about one object instance.
type instance struct {
	attrs map[hla.AttributeHandle]*attrState
}

// attrState is what a Filter remembers about one attribute of one
// instance.
type attrState struct {
	sent           []byte // last sent encoding (own copy)
	sentVal        any    // sent, decoded (when sentOK and typ != nil)
	sentOK         bool   // sent could be judged (decoded, or opaque type)
	sentWall       time.Duration
	sentLogical    float64
	sentHasLogical bool

	offered   []byte        // last offered encoding (own copy)
	heldSince time.Duration // when offered was first offered
}

// New returns a Filter applying cfg to the object classes of fdd. It
// checks every policy and every "Class.Attribute" name against fdd and
// reports all problems at once, each wrapping ErrInvalidConfig,
// ErrUnknownClass or ErrUnknownAttribute. Neither fdd nor cfg is changed
// or kept.
//
// Attributes whose data type the codec cannot handle (an encoding it does
// not know) are judged by their octets: any change is sent.
func New(fdd *fomxml.FDD, cfg Config) (*Filter, error) {
	if fdd == nil {
		return nil, fmt.Errorf("%w: nil FDD", ErrInvalidConfig)
	}
	var errs []error
	if msg := cfg.Default.problem(); msg != "" {
		errs = append(errs, fmt.Errorf("%w: default: %s", ErrInvalidConfig, msg))
	}
	// explicit[class][attribute] is the policy written for that pair.
	explicit := make(map[*fomxml.ObjectClass]map[hla.AttributeHandle]Policy)
	keyOf := make(map[*fomxml.ObjectClass]map[hla.AttributeHandle]string)
	for _, key := range slices.Sorted(maps.Keys(cfg.Attributes)) {
		p := cfg.Attributes[key]
		if msg := p.problem(); msg != "" {
			errs = append(errs, fmt.Errorf("%w: policy %q: %s", ErrInvalidConfig, key, msg))
			continue
		}
		i := strings.LastIndexByte(key, '.')
		if i <= 0 || i == len(key)-1 {
			errs = append(errs, fmt.Errorf("%w: policy %q: want \"Class.Attribute\"", ErrInvalidConfig, key))
			continue
		}
		cname, aname := key[:i], key[i+1:]
		cls, ok := fdd.ObjectClass(cname)
		if !ok {
			errs = append(errs, fmt.Errorf("%w %q (policy %q)", ErrUnknownClass, cname, key))
			continue
		}
		attr, ok := cls.Attribute(aname)
		if !ok {
			errs = append(errs, fmt.Errorf("%w %q of class %s (policy %q)", ErrUnknownAttribute, aname, cls.QualifiedName, key))
			continue
		}
		if explicit[cls] == nil {
			explicit[cls] = make(map[hla.AttributeHandle]Policy)
			keyOf[cls] = make(map[hla.AttributeHandle]string)
		}
		if prev, dup := keyOf[cls][attr.Handle]; dup {
			errs = append(errs, fmt.Errorf("%w: policies %q and %q name the same attribute %s.%s", ErrInvalidConfig, prev, key, cls.QualifiedName, aname))
			continue
		}
		explicit[cls][attr.Handle] = p
		keyOf[cls][attr.Handle] = key
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}

	c, err := codec.New(fdd)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	base := DefaultPolicy().over(cfg.Default)
	types := make(map[string]*codec.Type)
	f := &Filter{
		classes: make(map[hla.ObjectClassHandle]*classPlan, len(fdd.ObjectClasses)),
		objs:    make(map[hla.ObjectInstanceHandle]*instance),
	}
	for _, cls := range fdd.ObjectClasses {
		var chain []*fomxml.ObjectClass // root first
		for x := cls; x != nil; x = x.Parent {
			chain = append(chain, x)
		}
		for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
			chain[i], chain[j] = chain[j], chain[i]
		}
		all := cls.AllAttributes()
		cp := &classPlan{attrs: make(map[hla.AttributeHandle]*attrPlan, len(all))}
		for _, a := range all {
			p := base
			for _, x := range chain {
				if q, ok := explicit[x][a.Handle]; ok {
					p = p.over(q)
				}
			}
			t, seen := types[a.DataType]
			if !seen {
				t, _ = c.Type(a.DataType) // nil on error: compare octets
				types[a.DataType] = t
			}
			cp.attrs[a.Handle] = &attrPlan{name: cls.QualifiedName + "." + a.Name, policy: p.normal(), typ: t}
		}
		f.classes[cls.Handle] = cp
	}
	return f, nil
}

// Policy returns the policy the Filter applies to the attribute on
// instances of the class, with every field resolved (Off for a timer that
// is off), or false if the class does not have the attribute.
func (f *Filter) Policy(class hla.ObjectClassHandle, attr hla.AttributeHandle) (Policy, bool) {
	if cp := f.classes[class]; cp != nil {
		if ap := cp.attrs[attr]; ap != nil {
			return ap.policy, true
		}
	}
	return Policy{}, false
}

// Filter judges the values a federate offers for the object instance obj
// of class class at now, and returns those to send. It remembers, per
// instance and attribute, the last value sent and when.
//
// A value is sent when:
//
//   - it is the first one offered for this instance and attribute (since
//     New or Forget);
//   - it cannot be judged: it does not decode under its data type, or the
//     class or attribute is unknown (always sent, counted in
//     Stats.Undecodable);
//   - it passes the threshold against the last sent value (see
//     Threshold; values that are not numbers pass on any change);
//   - it differs from the last sent value, below the threshold, and has
//     been offered unchanged for MaxUnchanged;
//   - the heartbeat is due: HeartbeatLogical of logical time, or for
//     updates without one Heartbeat of wall time, since the last send.
//
// The result is values itself when every value is to be sent (no
// allocation), nil when none is, and otherwise a new map that the caller
// owns. Its byte slices are those of values. Filter does not keep values
// or its slices: it copies what it remembers, so the caller may reuse its
// buffers after the call.
func (f *Filter) Filter(obj hla.ObjectInstanceHandle, class hla.ObjectClassHandle, values hla.AttributeValues, now Now) hla.AttributeValues {
	if len(values) == 0 {
		return nil
	}
	cp := f.classes[class]
	inst := f.objs[obj]
	f.pass = f.pass[:0]
	for h, b := range values {
		f.stats.Offered++
		var ap *attrPlan
		if cp != nil {
			ap = cp.attrs[h]
		}
		if ap == nil {
			f.stats.Undecodable++
			f.pass = append(f.pass, h)
			continue
		}
		if inst == nil {
			inst = &instance{attrs: make(map[hla.AttributeHandle]*attrState, len(values))}
			f.objs[obj] = inst
		}
		if f.judge(ap, inst, h, b, now) {
			f.pass = append(f.pass, h)
		}
	}
	n := len(f.pass)
	f.stats.Sent += uint64(n)
	f.stats.Suppressed += uint64(len(values) - n)
	switch n {
	case len(values):
		return values
	case 0:
		return nil
	}
	out := make(hla.AttributeValues, n)
	for _, h := range f.pass {
		out[h] = values[h]
	}
	return out
}

// judge decides one value and updates the remembered state.
func (f *Filter) judge(ap *attrPlan, inst *instance, h hla.AttributeHandle, b []byte, now Now) bool {
	p := &ap.policy
	st := inst.attrs[h]
	if st == nil {
		st = &attrState{}
		inst.attrs[h] = st
		st.offered = append(st.offered[:0], b...)
		st.heldSince = now.Wall
		v, ok := f.decode(ap, b)
		st.record(b, v, ok, now)
		return true
	}
	if !bytes.Equal(b, st.offered) {
		st.offered = append(st.offered[:0], b...)
		st.heldSince = now.Wall
	}
	if st.sentOK && bytes.Equal(b, st.sent) {
		if st.heartbeatDue(p, now) {
			f.stats.Heartbeats++
			st.record(b, st.sentVal, true, now)
			return true
		}
		return false
	}
	v, ok := f.decode(ap, b)
	if !ok || !st.sentOK || ap.typ == nil {
		// Undecodable now, undecodable before, or opaque and changed.
		st.record(b, v, ok, now)
		return true
	}
	pass, differs := compare(st.sentVal, v, p.Threshold)
	switch {
	case pass:
	case differs && p.MaxUnchanged > 0 && now.Wall-st.heldSince >= p.MaxUnchanged:
		f.stats.Held++
	case st.heartbeatDue(p, now):
		f.stats.Heartbeats++
	default:
		return false
	}
	st.record(b, v, true, now)
	return true
}

// decode decodes b under the attribute's data type; ok is false (and the
// value counted) when it does not decode. Opaque attributes (no data
// type) always decode, to nil.
func (f *Filter) decode(ap *attrPlan, b []byte) (any, bool) {
	if ap.typ == nil {
		return nil, true
	}
	v, err := ap.typ.Decode(b)
	if err != nil {
		f.stats.Undecodable++
		return nil, false
	}
	return v, true
}

// record notes that b (decoded as v, or undecodable when !ok) was sent at
// now.
func (st *attrState) record(b []byte, v any, ok bool, now Now) {
	st.sent = append(st.sent[:0], b...)
	st.sentVal, st.sentOK = v, ok
	st.sentWall = now.Wall
	st.sentLogical, st.sentHasLogical = now.Logical, now.HasLogical
}

// heartbeatDue reports whether the attribute must be sent now, changed or
// not.
func (st *attrState) heartbeatDue(p *Policy, now Now) bool {
	if p.HeartbeatLogical > 0 && now.HasLogical && st.sentHasLogical {
		return now.Logical-st.sentLogical >= p.HeartbeatLogical
	}
	return p.Heartbeat > 0 && now.Wall-st.sentWall >= p.Heartbeat
}

// Forget drops what the Filter remembers about obj (call it when the
// instance is deleted or removed, or to force its next values out). The
// next value of each of its attributes is sent as a first value.
func (f *Filter) Forget(obj hla.ObjectInstanceHandle) { delete(f.objs, obj) }

// Stats returns the counters so far.
func (f *Filter) Stats() Stats {
	s := f.stats
	s.Instances = len(f.objs)
	return s
}
