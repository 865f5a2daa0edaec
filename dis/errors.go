package dis

import (
	"errors"
	"fmt"
)

// Sentinel errors, one per reason a datagram is dropped; every decode
// error is a *DecodeError that wraps one of them.
var (
	// ErrShort: the datagram is shorter than a header, than its length
	// field, or than what its fields say follows.
	ErrShort = errors.New("dis: short PDU")
	// ErrLength: the datagram, or a record in it, is longer than its
	// length field says.
	ErrLength = errors.New("dis: length mismatch")
	// ErrUnknownType: a PDU type this package does not decode.
	ErrUnknownType = errors.New("dis: unknown PDU type")
	// ErrUnknownFamily: a protocol family that is not the family of the
	// PDU's type.
	ErrUnknownFamily = errors.New("dis: unknown protocol family")
	// ErrUnknownVersion: a protocol version other than 5, 6 or 7.
	ErrUnknownVersion = errors.New("dis: unknown protocol version")
	// ErrOtherExercise: a PDU of another exercise than the one asked for.
	ErrOtherExercise = errors.New("dis: other exercise")
)

// Reason is why a datagram did not decode: the label under which a
// Gateway counts its drops.
type Reason uint8

// The reasons, in the order Decode checks them (version, short and
// length, exercise, type, family; then the body: short and length).
const (
	ReasonShort Reason = iota + 1
	ReasonLength
	ReasonUnknownType
	ReasonUnknownFamily
	ReasonUnknownVersion
	ReasonOtherExercise
)

// Reasons lists every reason, for tables and metrics.
var Reasons = []Reason{ReasonShort, ReasonLength, ReasonUnknownType, ReasonUnknownFamily, ReasonUnknownVersion, ReasonOtherExercise}

// String is the reason's metric label: short, length, type, family,
// version or exercise.
func (r Reason) String() string {
	switch r {
	case ReasonShort:
		return "short"
	case ReasonLength:
		return "length"
	case ReasonUnknownType:
		return "type"
	case ReasonUnknownFamily:
		return "family"
	case ReasonUnknownVersion:
		return "version"
	case ReasonOtherExercise:
		return "exercise"
	}
	return "unknown"
}

func (r Reason) sentinel() error {
	switch r {
	case ReasonShort:
		return ErrShort
	case ReasonLength:
		return ErrLength
	case ReasonUnknownType:
		return ErrUnknownType
	case ReasonUnknownFamily:
		return ErrUnknownFamily
	case ReasonUnknownVersion:
		return ErrUnknownVersion
	case ReasonOtherExercise:
		return ErrOtherExercise
	}
	return errors.New("dis: bad PDU")
}

// DecodeError is the error of a datagram that did not decode: why, and
// the header fields read before it was refused (zero when the datagram
// was too short to hold them). errors.Is matches it against the
// sentinel of its Reason.
type DecodeError struct {
	Reason Reason
	// Version, Exercise, Type and Family are the header's, when read.
	Version, Exercise, Type, Family uint8
	// Detail says what was wrong, for a log line.
	Detail string
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("%v: %s", e.Reason.sentinel(), e.Detail)
}

// Unwrap returns the sentinel of the reason.
func (e *DecodeError) Unwrap() error { return e.Reason.sentinel() }

// ReasonOf returns the reason of a decode error, and false for any other
// error.
func ReasonOf(err error) (Reason, bool) {
	var de *DecodeError
	if errors.As(err, &de) {
		return de.Reason, true
	}
	return 0, false
}
