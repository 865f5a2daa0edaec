package lbts

import (
	"errors"
	"fmt"
	"strconv"
)

// Errors returned by Node methods. Each mirrors the HLA exception of the
// same name in IEEE 1516.1-2010 clause 8; peer/ maps them to its own
// sentinels. Check them with errors.Is.
var (
	// ErrInTimeAdvance mirrors InTimeAdvancingState: a time advance
	// request is pending.
	ErrInTimeAdvance = errors.New("lbts: in time advancing state")

	// ErrRegulationPending mirrors RequestForTimeRegulationPending.
	ErrRegulationPending = errors.New("lbts: request for time regulation pending")

	// ErrConstrainedPending mirrors RequestForTimeConstrainedPending.
	ErrConstrainedPending = errors.New("lbts: request for time constrained pending")

	// ErrRegulationAlreadyEnabled mirrors TimeRegulationAlreadyEnabled.
	ErrRegulationAlreadyEnabled = errors.New("lbts: time regulation already enabled")

	// ErrConstrainedAlreadyEnabled mirrors TimeConstrainedAlreadyEnabled.
	ErrConstrainedAlreadyEnabled = errors.New("lbts: time constrained already enabled")

	// ErrRegulationNotEnabled mirrors TimeRegulationIsNotEnabled. A
	// pending enable does not count as enabled.
	ErrRegulationNotEnabled = errors.New("lbts: time regulation is not enabled")

	// ErrConstrainedNotEnabled mirrors TimeConstrainedIsNotEnabled.
	ErrConstrainedNotEnabled = errors.New("lbts: time constrained is not enabled")

	// ErrInvalidLookahead mirrors InvalidLookahead: a lookahead must be a
	// finite number >= 0.
	ErrInvalidLookahead = errors.New("lbts: invalid lookahead")

	// ErrTimeAlreadyPassed mirrors LogicalTimeAlreadyPassed. It is what an
	// *InvalidTimeError from RequestAdvance unwraps to.
	ErrTimeAlreadyPassed = errors.New("lbts: logical time already passed")

	// ErrInvalidTime mirrors InvalidLogicalTime. It is what an
	// *InvalidTimeError from CheckSend or SentTSO unwraps to.
	ErrInvalidTime = errors.New("lbts: invalid logical time")

	// ErrMessageInPast reports a TSO message that arrived with a time stamp
	// the receiver has already been granted past. The sender broke its
	// promise; the message is dropped and counted (Status.Violations).
	ErrMessageInPast = errors.New("lbts: TSO message in the past")

	// ErrFederateRemoved reports input from a federate that RemoveFederate
	// has removed. The input is ignored.
	ErrFederateRemoved = errors.New("lbts: federate removed")

	// ErrBadRequest reports a time advance request of an unknown kind.
	ErrBadRequest = errors.New("lbts: bad request kind")

	// ErrCannotRetract mirrors MessageCanNoLongerBeRetracted: the
	// message's time stamp is not above the sender's logical time, so
	// receivers may already have been granted past it.
	ErrCannotRetract = errors.New("lbts: message can no longer be retracted")

	// ErrBadMessage reports a malformed Message or TSO. Errors from Step
	// and ReceiveTSO wrap it with the details.
	ErrBadMessage = errors.New("lbts: bad message")
)

// InvalidTimeError reports a logical time that may not be used: a time
// advance request below the current time, or a TSO send below what the
// federate has promised. It unwraps to ErrTimeAlreadyPassed (Op
// "advance") or ErrInvalidTime (Op "send", and any non-finite time).
type InvalidTimeError struct {
	// Op is "advance" or "send".
	Op string
	// Requested is the time that was refused.
	Requested float64
	// Min is the smallest acceptable time: the current logical time for
	// "advance", the promised bound (time + lookahead) for "send".
	Min float64
	// Strict means Requested must be greater than Min, not merely equal.
	Strict bool
}

// Error says which time was refused and what the least acceptable is.
func (e *InvalidTimeError) Error() string {
	rel := ">="
	if e.Strict {
		rel = ">"
	}
	what := "logical time already passed"
	if e.Op != "advance" || !isFinite(e.Requested) {
		what = "invalid logical time"
	}
	return fmt.Sprintf("lbts: %s at %s: %s (must be %s %s)",
		e.Op, fmtTime(e.Requested), what, rel, fmtTime(e.Min))
}

// Unwrap returns ErrTimeAlreadyPassed or ErrInvalidTime.
func (e *InvalidTimeError) Unwrap() error {
	if e.Op == "advance" && isFinite(e.Requested) {
		return ErrTimeAlreadyPassed
	}
	return ErrInvalidTime
}

func fmtTime(t float64) string {
	return strconv.FormatFloat(t, 'g', -1, 64)
}
