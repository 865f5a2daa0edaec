// Package lbts is conservative HLA time management (IEEE 1516.1-2010
// clause 8) for one federate, as a pure state machine in the style of
// etcd raft's RawNode. Promises, data-plane receipts, TSO messages,
// requests from the federate and membership events go in; messages to
// broadcast, TSO messages to deliver and callbacks (grants, enables) come
// out. It does no I/O, starts no goroutines and reads no clock: wall-clock
// progress arrives as Tick.
//
// # Model
//
// Logical time is a float64. The peer layer maps HLAfloat64Time directly
// and HLAinteger64Time exactly within ±2^53.
//
// Every federate broadcasts its time state as a Message, its promise. A
// time-regulating federate promises Bound: no TSO message from it will
// carry a smaller time stamp. Bound is its logical time + lookahead when
// idle and its requested time + lookahead while a time advance is
// pending; it never decreases while the federate stays regulating
// (ModifyLookahead lowers the lookahead only as time catches up).
//
// A promise must not overtake the TSO messages it covers (the transient
// message problem). So a Message carries Covers, the sequence number of
// the sender's last TSO message on each data-plane group, and a receiver
// counts the Message only once the data plane has handed it (Received,
// ReceiveTSO or Gap) everything up to those numbers on the groups it has
// joined. Until then the sender's previous counted Message stands.
//
// At zero lookahead a promise may be exclusive (Message.Strict): after a
// TAR, NMR or FQR grant to t the federate may send only above t.
//
// The promise bound is the smallest counted Bound among the other
// regulating federates. Promises cannot release federates that wait on
// each other in NMR or at zero lookahead, so a waiting node may start a
// consistent cut (Mattern-style rounds carried in the same Messages:
// Cut, Report): every member reports the lowest time stamp it could
// still send unless it first receives something lower, once it holds
// every TSO message sent before every member's cut (the Covers again).
// GALT is the higher of the promise bound and the cut's bound; see
// cut.go and docs/time.md.
//
// A time-constrained federate is granted as the request kind says
// (Request): TAR(t) once GALT rules out time stamps <= t, TARA(t) once
// it rules out < t, NMR and NMRA likewise at min(t, earliest queued
// message), FQR at once (delivering the whole queue). Queued TSO
// messages at or below the granted time are delivered first. A federate
// that is not constrained gets TSO messages at once and its requests
// granted at once.
//
// enableTimeRegulation and enableTimeConstrained wait until every member
// has acknowledged the request (Message.Request and Message.Acks), so the
// node decides on the current state of everyone it knows:
//
//   - Regulation is enabled at T' = max(own time, Granted of every
//     constrained member). A constrained node first waits until
//     GALT >= T' and delivers its queued messages below T'.
//   - Constrained is enabled at the current time T once GALT >= T.
//
// docs/time.md gives the argument why this is safe.
//
// Membership is a plain event stream: AddFederate, RemoveFederate (resigned
// or lost), and Step with a Message from an unknown federate. Requests wait
// only for members the node knows, so the peer layer must AddFederate every
// member it knows of when joining, before enabling anything.
//
// # Retraction and the peer layer
//
// lbts checks the sender's call (CheckRetract), lets the sender's later
// promises cover the retraction message (Covered), and removes queued
// messages at receivers (Retract). Handles, carrying the retraction and
// asynchronous delivery of receive-order messages are the peer layer's.
//
// # Encoding
//
// Message.AppendBinary and UnmarshalBinary are a compact binary encoding
// for the control group; a Message also carries msgpack and JSON tags.
//
// # Driver loop
//
// The owner of a Node (peer/) serializes every call, typically in one
// loop:
//
//	for {
//		select {
//		case <-tick.C:
//			n.Tick()
//		case m := <-control: // a peer's Message from the control group
//			err = n.Step(m)
//		case d := <-data: // an in-order delivery from the data plane
//			if d.TSO != nil {
//				err = n.ReceiveTSO(*d.TSO) // also records the receipt
//			} else {
//				n.Received(d.From, d.Group, d.Seq)
//			}
//		case g := <-gaps: // the data plane gave up, or a new stream starts
//			n.Gap(g.From, g.Group, g.UpToSeq)
//		case ev := <-membership: // from gossip/
//			if ev.Joined {
//				n.AddFederate(ev.ID)
//			} else {
//				n.RemoveFederate(ev.ID) // resigned or lost
//			}
//		case req := <-requests: // the federate's calls
//			err = req.apply(n) // Request(kind, t), EnableRegulation, ...
//		}
//		rd := n.Ready()
//		broadcast(rd.Messages)          // on the control group
//		for _, m := range rd.Deliver {  // TSO callbacks, in order
//			deliver(m)
//		}
//		if rd.RegulationEnabled != nil {
//			timeRegulationEnabled(*rd.RegulationEnabled)
//		}
//		if rd.ConstrainedEnabled != nil {
//			timeConstrainedEnabled(*rd.ConstrainedEnabled)
//		}
//		if rd.Grant != nil {
//			timeAdvanceGrant(*rd.Grant)
//		}
//		n.Advance(rd)
//	}
//
// The peer layer calls Joined and Left as it joins and leaves data-plane
// groups. Before sending a TSO message it calls SentTSO with the
// message's group, sequence number and time stamp; on error the message
// is not sent (or goes out receive order, if the federate is not
// regulating).
//
// # Ordering guarantees
//
//   - A time-constrained federate receives TSO messages in (Time, From,
//     Seq, Group) order, across grants, so every constrained receiver sees
//     the same messages in the same relative order (invariant 2).
//   - After a TAR or NMR grant to t, no TSO message with time stamp <= t
//     is delivered; after a TARA, NMRA or FQR grant, and after
//     ConstrainedEnabled(T) or RegulationEnabled(T) of a constrained
//     federate, none below it (invariant 1). FQR delivers the whole queue,
//     also messages beyond its grant. A message that
//     would break this is refused by ReceiveTSO with ErrMessageInPast.
//   - Within one Ready, every TSO message in Deliver comes before the
//     callbacks, and the callbacks come in the order RegulationEnabled,
//     ConstrainedEnabled, Grant. A delivery that arises after a callback
//     waits for the next Ready.
//   - Grants and logical time never decrease (invariant 4).
//   - SentTSO and CheckSend refuse time stamps below the send floor:
//     Bound, exclusive where zero lookahead requires, and while NMR or
//     NMRA(t) is pending min(t, earliest queued) + lookahead (invariant 3).
//   - A Message from a peer is counted only after every TSO message it
//     covers on joined groups has been received; effects of any call
//     (grants, enables) are decided when Ready or HasReady is called, so
//     the order of Received and ReceiveTSO within one step does not matter.
//   - When every federate waits and messages keep flowing (Ticks resend
//     lost ones), some request is granted: the smallest, also in NMR and
//     at zero lookahead (invariant 7).
package lbts
