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
// GALT is the smallest counted Bound among the other regulating
// federates. A time-constrained federate with timeAdvanceRequest(t)
// pending is granted t once t < GALT; every queued TSO message with time
// stamp <= t is delivered first. A federate that is not constrained gets
// TSO messages at once and its requests granted at once.
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
// # Not there yet
//
// nextMessageRequest, the Available variants (TARA, NMRA),
// flushQueueRequest, message retraction, and deadlock freedom at zero
// lookahead. A regulating federate may use lookahead 0, but a grant to t
// needs every other regulator's Bound strictly above t, so constrained
// regulators at zero lookahead wait for each other forever. These need a
// consistent-cut computation (message counters per epoch); RequestKind has
// room for the extra request kinds.
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
//			err = req.apply(n) // RequestAdvance, EnableRegulation, ...
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
//   - After a grant to t, no TSO message with time stamp <= t is
//     delivered; after ConstrainedEnabled(T) or RegulationEnabled(T) of a
//     constrained federate, none below T (invariant 1). A message that
//     would break this is refused by ReceiveTSO with ErrMessageInPast.
//   - Within one Ready, every TSO message in Deliver comes before the
//     callbacks, and the callbacks come in the order RegulationEnabled,
//     ConstrainedEnabled, Grant. A delivery that arises after a callback
//     waits for the next Ready.
//   - Grants and logical time never decrease (invariant 4).
//   - SentTSO and CheckSend refuse time stamps below Bound (invariant 3).
//   - A Message from a peer is counted only after every TSO message it
//     covers on joined groups has been received; effects of any call
//     (grants, enables) are decided when Ready or HasReady is called, so
//     the order of Received and ReceiveTSO within one step does not matter.
//   - With positive lookahead, when every regulating federate keeps
//     requesting advances and messages keep flowing, every pending
//     request is eventually granted (invariant 7).
package lbts
