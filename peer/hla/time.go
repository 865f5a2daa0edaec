package hla

import (
	"fmt"
	"math"
	"strconv"
)

// LogicalTime is a point on the federation's logical time axis. The two
// standard representations implement it: Float64Time (HLAfloat64Time, the
// default) and Integer64Time (HLAinteger64Time). A federation uses one of
// them; passing the other kind to a service is an ErrInvalidLogicalTime.
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

// TimeKind converts between LogicalTime values and the float64 the time
// core uses, for one federation's representation: HLAfloat64Time or
// HLAinteger64Time.
type TimeKind string

// Make returns f as a time of kind k.
func (k TimeKind) Make(f float64) LogicalTime {
	if k == HLAinteger64Time {
		return Integer64Time(int64(f))
	}
	return Float64Time(f)
}

// Value checks t against the representation and returns it as a float64.
func (k TimeKind) Value(t LogicalTime) (float64, error) {
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

// Interval checks a lookahead (a time interval of the same
// representation): it must be a finite number >= 0.
func (k TimeKind) Interval(l LogicalTime) (float64, error) {
	f, err := k.Value(l)
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
	// After says Earliest itself is refused too: times must be above it
	// (at zero lookahead after a grant to Earliest).
	After bool
}

func (e *InvalidLogicalTimeError) Error() string {
	if e.After {
		return fmt.Sprintf("hla: invalid logical time %v: must be after %v", e.Given, e.Earliest)
	}
	return fmt.Sprintf("hla: invalid logical time %v: earliest allowed is %v", e.Given, e.Earliest)
}

// Is makes errors.Is(err, ErrInvalidLogicalTime) true.
func (e *InvalidLogicalTimeError) Is(target error) bool { return target == ErrInvalidLogicalTime }

// MessageRetractionHandle names a time-stamp-order message for retraction
// (IEEE 1516.1 MessageRetractionHandle): the sending federate and the
// message's federate-scoped ID. The zero handle is invalid: it is what a
// ...Retractable service returns when nothing went out in time-stamp
// order (the standard's MessageRetractionReturn with
// retractionHandleIsValid false).
type MessageRetractionHandle struct {
	//lint:ignore U1000 msgpack reads it: the struct tag encodes the handle as an array
	_msgpack struct{} `msgpack:",as_array"`
	Federate FederateHandle
	Serial   uint64
}

// Valid reports whether h names a message (it is not the zero handle).
func (h MessageRetractionHandle) Valid() bool { return h.Serial != 0 }

func (h MessageRetractionHandle) String() string { return fmt.Sprintf("%d/%d", h.Federate, h.Serial) }
