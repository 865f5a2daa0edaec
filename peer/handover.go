package peer

import "context"

// A Receipt names a callback returned by NextForwarded that ends a
// pending state of the federate's (a TimeAdvanceGrant,
// TimeRegulationEnabled or TimeConstrainedEnabled); the zero Receipt
// names none. Receipts grow in the order of the callbacks.
type Receipt uint64

// NextForwarded is Next for a driver that passes each callback on to
// the federate elsewhere, as the Federate Protocol's sessions pass them
// to their clients: the pending state a callback ends (the time
// advance, the enabling of regulation or constraint) does not end when
// NextForwarded returns it, but when HandedOver is told its Receipt,
// once the federate has it (the client acknowledged it). Until then the
// federate stays in that state, however long it takes: nothing waits
// for the hand-over.
func (f *Federate) NextForwarded(ctx context.Context) (Event, Receipt, error) {
	ev, r, err := f.events.next(ctx, false)
	if err == nil {
		f.reportCallback(ev)
	}
	return ev, Receipt(r), err
}

// HandedOver says the federate has the callback of r, and so every
// callback before it: the states they end are over. The zero Receipt,
// and one at or below an earlier one, change nothing. Any goroutine may
// call it.
func (f *Federate) HandedOver(r Receipt) {
	if r != 0 {
		f.events.handOver(uint64(r))
	}
}
