package peer

import "errors"

// ErrClosed is returned by Next once the federate is closed (Close, or
// resigned) and every queued event was returned. Services of a closed
// federate return an error wrapping both it and ErrNotConnected (after
// Close or a lost connection) or ErrFederateNotExecutionMember (after
// resigning).
var ErrClosed = errors.New("peer: federate closed")

// ErrWouldBlock is wrapped by the error an update or interaction returns
// with Config.BackPressure BackPressureError while a receiver lags a full
// window behind. Nothing was sent; try again later.
var ErrWouldBlock = errors.New("peer: data plane backlog full, would block")
