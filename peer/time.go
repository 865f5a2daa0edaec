package peer

import (
	"fmt"
	"math"
	"strconv"
)

// LogicalTime is a point on the federation's logical time axis. The two
// standard representations implement it: Float64Time (HLAfloat64Time, the
// default) and Integer64Time (HLAinteger64Time). A federation uses one of
// them, chosen by Config.TimeRepresentation; passing the other kind to a
// service is an ErrInvalidLogicalTime.
type LogicalTime interface {
	// Float returns the time as a float64, the form the time-management
	// core computes with.
	Float() float64
	// Representation is "HLAfloat64Time" or "HLAinteger64Time".
	Representation() string
	String() string
	isLogicalTime()
}

// Float64Time is HLAfloat64Time.
type Float64Time float64

// Integer64Time is HLAinteger64Time. Values are limited to ±2^53 so that
// they convert to float64 exactly; larger ones are an ErrInvalidLogicalTime.
type Integer64Time int64

// Names of the two standard time representations.
const (
	HLAfloat64Time   = "HLAfloat64Time"
	HLAinteger64Time = "HLAinteger64Time"
)

// maxExactInt is the largest integer a float64 holds exactly.
const maxExactInt = 1 << 53

func (t Float64Time) Float() float64         { return float64(t) }
func (Float64Time) Representation() string   { return HLAfloat64Time }
func (t Float64Time) String() string         { return strconv.FormatFloat(float64(t), 'g', -1, 64) }
func (Float64Time) isLogicalTime()           {}
func (t Integer64Time) Float() float64       { return float64(t) }
func (Integer64Time) Representation() string { return HLAinteger64Time }
func (t Integer64Time) String() string       { return strconv.FormatInt(int64(t), 10) }
func (Integer64Time) isLogicalTime()         {}

// timeKind converts between LogicalTime values and the float64 the core
// uses, for one federation's representation.
type timeKind string

func (k timeKind) make(f float64) LogicalTime {
	if k == HLAinteger64Time {
		return Integer64Time(int64(f))
	}
	return Float64Time(f)
}

// value checks t against the federation's representation and returns it
// as a float64.
func (k timeKind) value(t LogicalTime) (float64, error) {
	if t == nil {
		return 0, fmt.Errorf("%w: nil time", ErrInvalidLogicalTime)
	}
	if t.Representation() != string(k) {
		return 0, fmt.Errorf("%w: %s given, federation uses %s", ErrInvalidLogicalTime, t.Representation(), k)
	}
	f := t.Float()
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return 0, fmt.Errorf("%w: %v", ErrInvalidLogicalTime, f)
	case k == HLAinteger64Time && (int64(t.(Integer64Time)) > maxExactInt || int64(t.(Integer64Time)) < -maxExactInt):
		return 0, fmt.Errorf("%w: %d is beyond ±2^53", ErrInvalidLogicalTime, int64(t.(Integer64Time)))
	}
	return f, nil
}

// interval checks a lookahead (a time interval of the same
// representation): it must be a finite number >= 0.
func (k timeKind) interval(l LogicalTime) (float64, error) {
	f, err := k.value(l)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrInvalidLookahead, err)
	}
	if f < 0 {
		return 0, fmt.Errorf("%w: %v is negative", ErrInvalidLookahead, l)
	}
	return f, nil
}

// InvalidLogicalTimeError says a time was refused, and why: it is before
// the earliest time the federate may use.
type InvalidLogicalTimeError struct {
	Given    LogicalTime
	Earliest LogicalTime
}

func (e *InvalidLogicalTimeError) Error() string {
	return fmt.Sprintf("hla: invalid logical time %v: earliest allowed is %v", e.Given, e.Earliest)
}

// Is makes errors.Is(err, ErrInvalidLogicalTime) true.
func (e *InvalidLogicalTimeError) Is(target error) bool { return target == ErrInvalidLogicalTime }
