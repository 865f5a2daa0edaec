package peer

import (
	"errors"

	"github.com/meshrti/meshrti/peer/transport"
)

// A manual federate (Config.Manual) starts no goroutine: its driver hands
// it each datagram (Deliver) and each timer tick (Tick), and every call,
// these and the services, runs to completion on the caller's goroutine,
// frames handed to the transport before it returns. With a transport and
// a control plane that are deterministic too (testnet's virtual network
// and MemRegistry.ManualControl), a run then depends on nothing but the
// order of the driver's calls: a seed replays it exactly.

// errNotManual is what Deliver and Tick return on a federate that runs
// itself.
var errNotManual = errors.New("peer: Deliver and Tick are for federates joined with Config.Manual")

// Deliver hands a received datagram to a manual federate, as its reader
// would: the reliable layer, the time core and the callbacks act on it
// before Deliver returns. It returns ErrClosed after Close.
func (f *Federate) Deliver(p transport.Packet) error {
	if !f.cfg.Manual {
		return errNotManual
	}
	return f.callDriver(func() error {
		f.step(p)
		return nil
	})
}

// Tick advances a manual federate's timers by one Config.TickInterval
// (retransmissions, heartbeats, time management), after it has taken the
// events waiting on its control plane. It returns ErrClosed
// after Close.
func (f *Federate) Tick() error {
	if !f.cfg.Manual {
		return errNotManual
	}
	f.manualTicks.Add(1)
	return f.callDriver(func() error {
		f.takeControl()
		f.tick()
		return nil
	})
}

// closeManual stops a manual federate: what it still holds goes out, the
// services fail with ErrClosed from now on, and the transport and control
// plane are closed.
func (f *Federate) closeManual() {
	f.mu.Lock()
	f.core.Seal()
	_ = f.takeReady(true)
	f.halted = true
	last := f.sender.close()
	f.mu.Unlock()
	f.sender.sendInline(last)
	f.release()
}
