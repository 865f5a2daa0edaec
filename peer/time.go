package peer

import (
	"fmt"

	"github.com/meshrti/meshrti/lbts"
)

// Time management (IEEE 1516.1-2010 §8): regulation and constraint, the
// five kinds of time advance, asynchronous delivery, retraction, order
// types, lookahead and the queries. Each service runs in the federate's
// core (peer/internal/core, timing.go, over the time core lbts).

// errNilTime is what a ...WithTime service returns for a nil time.
var errNilTime = fmt.Errorf("%w: nil time", ErrInvalidLogicalTime)

// EnableTimeRegulation (§8.2) makes the federate time-regulating with the
// given lookahead. TimeRegulationEnabled follows.
func (f *Federate) EnableTimeRegulation(lookahead LogicalTime) (err error) {
	defer f.reported("enableTimeRegulation", &err, func() ([]string, []string) { return texts(lookahead), nil })
	return f.call(func() error { return f.core.EnableTimeRegulation(lookahead) })
}

// DisableTimeRegulation (§8.4).
func (f *Federate) DisableTimeRegulation() (err error) {
	defer f.reported("disableTimeRegulation", &err, nil)
	return f.call(f.core.DisableTimeRegulation)
}

// EnableTimeConstrained (§8.5). TimeConstrainedEnabled follows.
func (f *Federate) EnableTimeConstrained() (err error) {
	defer f.reported("enableTimeConstrained", &err, nil)
	return f.call(f.core.EnableTimeConstrained)
}

// DisableTimeConstrained (§8.7). Time-stamp-order messages still queued
// are delivered at once, in receive order (ReceivedOrder Receive), and
// receive-order messages held for the time advancing state follow.
func (f *Federate) DisableTimeConstrained() (err error) {
	defer f.reported("disableTimeConstrained", &err, nil)
	return f.call(f.core.DisableTimeConstrained)
}

// TimeAdvanceRequest (§8.8) asks to advance to t. TimeAdvanceGrant
// follows, after every time-stamp-order message up to t.
//
// The five time advance services fail alike (§8.8-§8.12):
// ErrLogicalTimeAlreadyPassed when t is before the federate's time,
// ErrInvalidLogicalTime for a time of the wrong representation or not
// finite, ErrInTimeAdvancingState while another request is pending, and
// ErrRequestForTimeRegulationPending or ErrRequestForTimeConstrainedPending
// while an enable is pending.
func (f *Federate) TimeAdvanceRequest(t LogicalTime) (err error) {
	defer f.reported("timeAdvanceRequest", &err, func() ([]string, []string) { return texts(t), nil })
	return f.advance(lbts.TimeAdvanceRequest, t)
}

// TimeAdvanceRequestAvailable (§8.9) asks to advance to t, like
// TimeAdvanceRequest, but the grant may come before every message at
// exactly t has arrived: time-stamp-order messages at t may still be
// delivered after TimeAdvanceGrant(t) (by the next request). At zero
// lookahead the federate may then still send at t.
func (f *Federate) TimeAdvanceRequestAvailable(t LogicalTime) (err error) {
	defer f.reported("timeAdvanceRequestAvailable", &err, func() ([]string, []string) { return texts(t), nil })
	return f.advance(lbts.TimeAdvanceRequestAvailable, t)
}

// NextMessageRequest (§8.10) asks to advance to the time stamp of the
// next time-stamp-order message, if it is at most t, or else to t: every
// message at that time is delivered, then TimeAdvanceGrant to it.
func (f *Federate) NextMessageRequest(t LogicalTime) (err error) {
	defer f.reported("nextMessageRequest", &err, func() ([]string, []string) { return texts(t), nil })
	return f.advance(lbts.NextMessageRequest, t)
}

// NextMessageRequestAvailable (§8.11) is NextMessageRequest granted as
// TimeAdvanceRequestAvailable is: more messages at exactly the granted
// time may follow the grant.
func (f *Federate) NextMessageRequestAvailable(t LogicalTime) (err error) {
	defer f.reported("nextMessageRequestAvailable", &err, func() ([]string, []string) { return texts(t), nil })
	return f.advance(lbts.NextMessageRequestAvailable, t)
}

// FlushQueueRequest (§8.12) delivers every queued time-stamp-order
// message at once, also those beyond t, and grants the smallest of t,
// the GALT and the earliest delivered message's time stamp (never below
// the federate's time). Later messages may then arrive with time stamps
// below some already delivered.
func (f *Federate) FlushQueueRequest(t LogicalTime) (err error) {
	defer f.reported("flushQueueRequest", &err, func() ([]string, []string) { return texts(t), nil })
	return f.advance(lbts.FlushQueueRequest, t)
}

// advance starts a time advance of the given kind. Its caller waits for
// the grant, so its promise leaves as the call ends (sendAtOnce).
func (f *Federate) advance(kind lbts.RequestKind, t LogicalTime) error {
	return f.call(func() error {
		err := f.core.TimeAdvance(kind, t)
		if err == nil {
			f.sender.sendAtOnce()
		}
		return err
	})
}

// EnableAsynchronousDelivery (§8.14): receive-order messages are
// delivered whenever they arrive, also to a time-constrained federate
// that is not in the time advancing state. Held ones are delivered now.
func (f *Federate) EnableAsynchronousDelivery() (err error) {
	defer f.reported("enableAsynchronousDelivery", &err, nil)
	return f.call(f.core.EnableAsynchronousDelivery)
}

// DisableAsynchronousDelivery (§8.15), the default: a time-constrained
// federate gets receive-order messages only while a time advance is
// pending; until then they wait, in the order they came.
func (f *Federate) DisableAsynchronousDelivery() (err error) {
	defer f.reported("disableAsynchronousDelivery", &err, nil)
	return f.call(f.core.DisableAsynchronousDelivery)
}

// Retract (§8.21) withdraws a time-stamp-order message this federate
// sent, named by the handle a ...Retractable service returned. Receivers
// that still hold it queued drop it; those that were already delivered it
// get RequestRetraction. Errors: ErrTimeRegulationIsNotEnabled when the
// federate is not time-regulating; ErrInvalidMessageRetractionHandle for
// a handle that is not this federate's, is zero, or was retracted
// already; ErrMessageCanNoLongerBeRetracted when the message's time
// stamp is not above the federate's logical time (at it after a grant to
// an Available request), since receivers may have been granted past it.
func (f *Federate) Retract(h MessageRetractionHandle) (err error) {
	defer f.reported("retract", &err, func() ([]string, []string) { return texts(h), nil })
	return f.callSend(func() error { return f.core.Retract(h) })
}

// ChangeAttributeOrderType (§8.23) sets the order (Receive or TimeStamp)
// in which this federate sends the given attributes of an instance it
// owns, overriding the FOM. Errors: ErrObjectInstanceNotKnown,
// ErrAttributeNotDefined, ErrAttributeNotOwned, and ErrInvalidOrderType
// for an order that is neither.
func (f *Federate) ChangeAttributeOrderType(obj ObjectInstanceHandle, order OrderType, attrs ...AttributeHandle) (err error) {
	defer f.reported("changeAttributeOrderType", &err, func() ([]string, []string) { return texts(obj, order, attrs), nil })
	return f.call(func() error { return f.core.ChangeAttributeOrderType(obj, order, attrs) })
}

// ChangeInteractionOrderType (§8.24) sets the order in which this
// federate sends interactions of a class it publishes, overriding the
// FOM. Errors: ErrInteractionClassNotDefined,
// ErrInteractionClassNotPublished, ErrInvalidOrderType.
func (f *Federate) ChangeInteractionOrderType(class InteractionClassHandle, order OrderType) (err error) {
	defer f.reported("changeInteractionOrderType", &err, func() ([]string, []string) { return texts(class, order), nil })
	return f.call(func() error { return f.core.ChangeInteractionOrderType(class, order) })
}

// ModifyLookahead (§8.19).
func (f *Federate) ModifyLookahead(lookahead LogicalTime) (err error) {
	defer f.reported("modifyLookahead", &err, func() ([]string, []string) { return texts(lookahead), nil })
	return f.call(func() error { return f.core.ModifyLookahead(lookahead) })
}

// QueryLogicalTime (§8.17) returns the federate's logical time.
func (f *Federate) QueryLogicalTime() (r0 LogicalTime, err error) {
	defer f.reported("queryLogicalTime", &err, func() ([]string, []string) { return nil, texts(r0) })
	return callValue(f, func() (LogicalTime, error) { return f.core.QueryLogicalTime(), nil })
}

// QueryLookahead (§8.20). ErrTimeRegulationIsNotEnabled when the
// federate is not regulating.
func (f *Federate) QueryLookahead() (r0 LogicalTime, err error) {
	defer f.reported("queryLookahead", &err, func() ([]string, []string) { return nil, texts(r0) })
	return callValue(f, func() (LogicalTime, error) { return f.core.QueryLookahead() })
}

// QueryGALT (§8.16) returns the greatest available logical time, and
// false when no regulating federate bounds it.
func (f *Federate) QueryGALT() (r0 LogicalTime, r1 bool, err error) {
	defer f.reported("queryGALT", &err, func() ([]string, []string) { return nil, texts(r0, r1) })
	var t LogicalTime
	var ok bool
	err = f.call(func() error { t, ok = f.core.QueryGALT(); return nil })
	return t, ok, err
}

// QueryLITS (§8.18) returns the least incoming time stamp: the smaller of
// the GALT and the earliest queued time-stamp-order message, and false
// when neither bounds it.
func (f *Federate) QueryLITS() (r0 LogicalTime, r1 bool, err error) {
	defer f.reported("queryLITS", &err, func() ([]string, []string) { return nil, texts(r0, r1) })
	var t LogicalTime
	var ok bool
	err = f.call(func() error { t, ok = f.core.QueryLITS(); return nil })
	return t, ok, err
}
