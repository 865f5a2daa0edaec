package updatecond

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// ThresholdKind says how a Threshold's Value is read.
type ThresholdKind int

const (
	// Inherit takes the threshold from the next less specific policy
	// (see Config). It is the zero value; Value must be 0.
	Inherit ThresholdKind = iota
	// Relative: a number is sent when it moved by at least Value percent
	// of its last sent value.
	Relative
	// Absolute: a number is sent when it moved by at least Value, in the
	// units of the data type.
	Absolute
	// None: every change is sent. Value must be 0.
	None
)

func (k ThresholdKind) String() string {
	switch k {
	case Inherit:
		return "Inherit"
	case Relative:
		return "Relative"
	case Absolute:
		return "Absolute"
	case None:
		return "None"
	}
	return "ThresholdKind(" + strconv.Itoa(int(k)) + ")"
}

// Threshold is how far a number must move from its last sent value before
// the change is worth sending. It applies to each number of a value on
// its own: a plain number, each numeric field of a record (at any depth)
// and each numeric element of an array. Values that are not numbers
// (strings, enumerations, booleans, opaque data) are sent on any change,
// whatever the threshold.
//
// A number passes when it differs from its last sent value l by d ≠ 0
// with |d| ≥ t, where t is Value/100·|l| for Relative, Value for
// Absolute and 0 for None. So under Relative a number whose last sent
// value is 0 passes on any change; use Absolute for quantities that cross
// zero, such as positions around an origin or angles.
type Threshold struct {
	Kind  ThresholdKind
	Value float64
}

// String formats t as the config file writes it: "2%", "0.5", "none" or
// "inherit".
func (t Threshold) String() string {
	switch t.Kind {
	case Relative:
		return strconv.FormatFloat(t.Value, 'g', -1, 64) + "%"
	case Absolute:
		return strconv.FormatFloat(t.Value, 'g', -1, 64)
	case None:
		return "none"
	case Inherit:
		return "inherit"
	}
	return t.Kind.String()
}

// Off turns off a Policy's Heartbeat, HeartbeatLogical or MaxUnchanged
// (any negative value does), where zero would inherit.
const Off = -1

// Built-in defaults, under every Config.
const (
	// DefaultPercent is the default Relative threshold: 2% of the last
	// sent value, the figure the issue asks for and the order of the
	// thresholds simulators ship (VR-Forces' position and orientation
	// thresholds are of this size).
	DefaultPercent = 2.0
	// DefaultHeartbeat is the default wall-clock heartbeat: an attribute
	// is sent at least once a minute even when it does not change, so a
	// late joiner or a receiver that lost a best-effort update converges
	// within a minute.
	DefaultHeartbeat = 60 * time.Second
	// DefaultMaxUnchanged is how long a change below the threshold must
	// hold before it is sent anyway. Five seconds is the DIS heartbeat
	// for entity state (IEEE 1278.1), the staleness receivers are
	// already built to tolerate, and it is long enough that a value that
	// steps every second or so (a 1 Hz sensor read at 60 Hz) is still
	// governed by its threshold. A plateau costs one extra update at most.
	DefaultMaxUnchanged = 5 * time.Second
)

// Policy is the update condition of an attribute. Zero fields inherit (see
// Config); Off turns the timers off.
type Policy struct {
	// Threshold decides which changes are sent. Default: Relative 2%.
	Threshold Threshold
	// Heartbeat sends the attribute at least this often in wall time,
	// changed or not. Default: 60 s.
	Heartbeat time.Duration
	// HeartbeatLogical, when positive, counts the heartbeat in logical
	// time instead: for updates that carry a logical time (Now.HasLogical)
	// the attribute is sent once logical time has advanced this far since
	// its last send, and the wall-clock Heartbeat does not apply. Updates
	// without a logical time still use Heartbeat. Default: off.
	HeartbeatLogical float64
	// MaxUnchanged sends a change that is below the threshold once the
	// new value has been offered, unchanged, for this long in wall time.
	// Default: 5 s.
	MaxUnchanged time.Duration
}

// DefaultPolicy returns the built-in defaults: Relative 2%, a 60 s wall
// heartbeat, no logical heartbeat, 5 s max-unchanged.
func DefaultPolicy() Policy {
	return Policy{
		Threshold:        Threshold{Kind: Relative, Value: DefaultPercent},
		Heartbeat:        DefaultHeartbeat,
		HeartbeatLogical: Off,
		MaxUnchanged:     DefaultMaxUnchanged,
	}
}

// over returns p with the nonzero fields of q laid over it.
func (p Policy) over(q Policy) Policy {
	if q.Threshold.Kind != Inherit {
		p.Threshold = q.Threshold
	}
	if q.Heartbeat != 0 {
		p.Heartbeat = q.Heartbeat
	}
	if q.HeartbeatLogical != 0 {
		p.HeartbeatLogical = q.HeartbeatLogical
	}
	if q.MaxUnchanged != 0 {
		p.MaxUnchanged = q.MaxUnchanged
	}
	return p
}

// normal turns every negative timer into Off.
func (p Policy) normal() Policy {
	if p.Heartbeat < 0 {
		p.Heartbeat = Off
	}
	if p.HeartbeatLogical < 0 {
		p.HeartbeatLogical = Off
	}
	if p.MaxUnchanged < 0 {
		p.MaxUnchanged = Off
	}
	return p
}

// Validate reports a policy that cannot be applied: an unknown threshold
// kind, a threshold value that is negative or not finite, a value given
// with Inherit or None, or a logical heartbeat that is not finite. The
// error wraps ErrInvalidConfig.
func (p Policy) Validate() error {
	if msg := p.problem(); msg != "" {
		return fmt.Errorf("%w: %s", ErrInvalidConfig, msg)
	}
	return nil
}

// problem describes what Validate reports, or is "".
func (p Policy) problem() string {
	t := p.Threshold
	switch t.Kind {
	case Relative, Absolute:
		if math.IsNaN(t.Value) || math.IsInf(t.Value, 0) || t.Value < 0 {
			return fmt.Sprintf("threshold %v must be a finite number >= 0", t.Value)
		}
	case Inherit, None:
		if t.Value != 0 {
			return fmt.Sprintf("threshold kind %v takes no value (got %v)", t.Kind, t.Value)
		}
	default:
		return fmt.Sprintf("unknown threshold kind %d", int(t.Kind))
	}
	if math.IsNaN(p.HeartbeatLogical) || math.IsInf(p.HeartbeatLogical, 0) {
		return fmt.Sprintf("logical heartbeat %v must be finite (use Off to turn it off)", p.HeartbeatLogical)
	}
	return ""
}

// Config sets the policies of a Filter.
//
// The policy of an attribute, as seen on instances of class C, is built in
// layers, each nonzero field replacing the one below: the built-in
// defaults (DefaultPolicy), then Default, then the entries of Attributes
// that name this attribute on C or on an ancestor of C, least specific
// (closest to the root) first. So a class's policy applies to its
// subclasses unless a subclass overrides it, field by field.
type Config struct {
	// Default applies to every attribute without an entry of its own.
	Default Policy
	// Attributes maps "Class.Attribute" to a policy. Class is any name
	// fomxml.FDD.ObjectClass accepts: fully qualified
	// ("HLAobjectRoot.Vehicle.Tank"), qualified without the root
	// ("Vehicle.Tank") or a bare name that one class alone has ("Tank").
	// Attribute is declared by that class or inherited.
	Attributes map[string]Policy
}
