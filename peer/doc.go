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
// Each federate owns one loop goroutine. It drives three pure state
// machines: the reliable multicast endpoint (peer/reliable), the time
// core (lbts) and the declaration and object state of this package, and
// moves packets between them and a Transport (peer/transport: UDP
// multicast, or an in-memory network with fault injection). Membership
// and agreement come from a ControlPlane: the gossip cluster by default,
// MemRegistry in tests and simulations.
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
// loop goroutine and return once done; only Join and
// ResignFederationExecution wait for other federates (they take a ctx).
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
// ErrClosed.
//
// # Errors
//
// The HLA exceptions are sentinel errors (ErrObjectClassNotDefined, ...),
// returned wrapped with context: test with errors.Is.
package peer
