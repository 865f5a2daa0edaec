package peer

import (
	"errors"
	"fmt"
)

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

// errorAs is one translation of another package's error (cause) into the
// HLA exception it means.
type errorAs struct{ cause, exception error }

// asException wraps err in the exception of the first row of table whose
// cause err is, or else in otherwise; err stays in the chain.
func asException(err error, table []errorAs, otherwise error) error {
	for _, row := range table {
		if errors.Is(err, row.cause) {
			return fmt.Errorf("%w: %w", row.exception, err)
		}
	}
	return fmt.Errorf("%w: %w", otherwise, err)
}
