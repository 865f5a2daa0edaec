// Package peer is the embeddable HLA 1516e federate API of meshrti.
//
// A program joins a federation execution with Join and gets a *Federate
// whose methods mirror the RTIambassador (publish, subscribe, register,
// update, send interaction, delete, time management, support services).
// The FederateAmbassador side arrives as one ordered stream of events from
// Next; Dispatch drives a FederateAmbassador from it for code ported from
// C++ or Java.
//
//	fed, err := peer.Join(ctx, peer.Config{Federation: "demo", FOMFiles: []string{"demo.xml"}, Create: true})
//	if err != nil { return err }
//	defer fed.Close()
//	aircraft, _ := fed.GetObjectClassHandle("Aircraft")
//	pos, _ := fed.GetAttributeHandle(aircraft, "Position")
//	if err := fed.SubscribeObjectClassAttributes(aircraft, pos); err != nil { return err }
//	for {
//		ev, err := fed.Next(ctx)
//		if err != nil { return err }
//		switch ev := ev.(type) {
//		case peer.DiscoverObjectInstance: // ...
//		case peer.ReflectAttributeValues: // ...
//		}
//	}
//
// # Structure
//
// A Federate is a driver around a pure federate core
// (peer/internal/core): one state machine holding every protocol
// decision, with sub-machines for the reliable multicast endpoint
// (peer/reliable), the time core (lbts), declarations, object instances,
// ownership tokens, routing and the federation's membership. Inputs go
// in as steps (a service call, received frames, a tick, a control-plane
// event), and a Ready comes out: events for Next, frames to send, group
// joins and leaves, control-plane operations, trace lines. The Federate
// owns the goroutines, the clock, the sockets and the lock, and moves
// Ready to the transport (peer/transport: UDP multicast, or an in-memory
// network with fault injection), the event queue and the control plane
// (the gossip cluster by default, MemRegistry in tests and simulations).
// docs/peer.md draws it.
//
// Every object class and interaction class has a multicast group of its
// own; subscribers join the groups of the subscribed class and its
// subclasses, publishers the groups of what they publish. A federate's
// messages about one object travel on one group, so they arrive in the
// order sent. Time promises travel on a control group every federate
// joins, and carry the sequence numbers of the time-stamped messages they
// cover, so a promise is never counted before those messages arrived.
//
// # Concurrency properties
//
// All methods of Federate are safe for concurrent use. Services run on the
// caller's goroutine under the federate's lock and return once done; the
// federate's loop goroutine takes the lock for ticks, frames and
// control-plane events, its writer goroutine to take the next batch of
// frames. Each of these is a turn: lock, hand the input to the core, act
// on what the core has ready, unlock; the send path (the writer, group
// commit, the step hold, back-pressure) is one type, the sender
// (docs/dataplane.md, "Who sends: the federate's sender"). Only Join and ResignFederationExecution wait for other
// federates (they take a ctx).
// Services the standard answers by callback (TimeAdvanceRequest,
// ReserveObjectInstanceName, EnableTimeRegulation ...) return at once; the
// answer comes from Next.
//
// Events are queued without bound: a slow consumer delays only itself.
// Within the stream, time-stamp-order messages up to t come before the
// TimeAdvanceGrant to t; messages from one federate about one object or
// interaction class come in the order it sent them.
//
// Close (or a resign) stops the loop and every goroutine the federate
// started before returning; Next then drains what was queued and returns
// ErrClosed. Services then fail with ErrNotConnected (after Close, or
// when the control plane dropped the federate: ConnectionLost) or
// ErrFederateNotExecutionMember (after resigning), both wrapping
// ErrClosed.
//
// # Errors
//
// The HLA exceptions are sentinel errors (ErrObjectClassNotDefined, ...),
// returned wrapped with context: test with errors.Is.
package peer
