// Package reliable turns best-effort multicast into reliable, ordered
// streams: one per (sender, group). It is a pure state machine in the
// style of etcd raft's RawNode: frames and ticks go in, frames to send and
// messages to deliver come out. It starts no goroutine, takes no lock,
// reads no clock and does no I/O; package peer drives it over a
// transport.Transport.
//
// # Model
//
// A sender numbers its reliable messages on each group 1, 2, 3, ... and
// keeps the last Config.RetransmitBuffer of them. A receiver delivers each
// (sender, group) stream in sequence order and buffers messages that
// arrive early. When it notices a hole, it waits a little (NakDelayTicks,
// randomized) and multicasts a NAK on the group naming the sender and the
// missing ranges (with Config.Inbox, which package peer sets, it sends the
// NAK to the sender's inbox group instead, and nobody suppresses). The sender retransmits what it still holds and answers
// "gone" for what it no longer holds; the receiver then reports a Gap and
// moves on. Receivers that see another receiver's NAK for ranges they miss
// too hold their own NAK back (suppression). Heartbeats on idle groups
// carry the sender's highest sequence number, so a lost tail is noticed,
// and the oldest one it still holds, so an unrepairable hole is noticed
// without a NAK. Best-effort messages have their own sequence, are
// delivered at once and never repaired.
//
// Without a key, every frame ends with a CRC-32C of the bytes before it,
// and a corrupted frame is dropped (ErrChecksum). With Config.Key (or
// Config.Keys, whose ids allow rotation without loss: Endpoint.SetKeys),
// every frame is sealed with AES-256-GCM under a key derived per sender
// run with HKDF-SHA256 from the federation key, the sender's NodeID and
// its incarnation: the body is encrypted, and the header, key id and
// frame counter are authenticated with it. A sealed frame ends with the
// 16-byte GCM tag, the key id and the 8-byte frame counter, which is also
// the nonce. Receivers drop frames that fail to open (ErrAuth) and keep a
// replay window of frame counters per sender (ErrReplay). docs/dataplane.md
// describes the frame format and the protocol.
//
// # Join handshake
//
// A receiver is owed every reliable message a sender sends on a group
// after the sender learned that the receiver is a member, and, if it was
// a member before the sender joined the group, every message the sender
// sent after that join. Join multicasts a HELLO on the group (and repeats
// it four times, at doubling intervals from NakDelayTicks) carrying the
// joiner's join position: its highest sequence on the group at Join.
// Every member that hears it records the joiner with H, its own highest
// sequence on the group at that moment, and answers with a SYNC: "your
// stream from me starts at H+1; I hold from low". The receiver reports
// that as a Start in Ready.Starts, then delivers or reports as a Gap
// every sequence from H+1 on, and nothing below. Until the SYNC arrives,
// the stream holds the reliable messages it hears (within ReorderBuffer)
// and delivers and NAKs nothing; if it hears reliable traffic, it asks
// the sender for the SYNC with a HELLO of its own, at doubling intervals.
// A member answering a joiner's HELLO makes the joiner learn of it too,
// so a sender that joins a group learns its receivers. HELLOs and SYNCs
// also echo the earliest position (highest sequence at some moment) of
// the node they go to that their sender saw while joined: a HELLO, SYNC
// or heartbeat from it carries one, an original data frame implies the
// one before it. The node records the lower of that echo and its current
// position. The record never changes for one join of the receiver; a
// Leave and Join is a new join with a new start.
//
// A member whose stream from a sender has not started starts it at once
// when it hears one of the sender's join HELLOs, at its echo plus one
// (the join position or lower), as a SYNC would: it was a member when
// the sender announced its join. And while its join is announced (for
// twice the span of its HELLOs, 30 NakDelayTicks), a sender records every
// receiver it learns of no later than its join position, since it cannot
// tell whether the receiver was a member before it joined. So a sender
// that joins and sends at once owes its existing receivers everything
// from its join on, whichever of its HELLO, its messages and its SYNC
// reach them first, and however their own HELLOs cross its messages. A
// stream, once started, never moves; a sender repairs whatever it still
// holds for whoever asks.
//
// What the handshake cannot promise: if every HELLO of a join is lost (and
// every answer), the sender learns of the receiver only from the
// receiver's later SYNC request, which echoes the first message the
// receiver got; messages sent before that and lost are not owed. A
// member is owed everything after a sender's join only if it hears one
// of the join's HELLOs or the sender learns of it while the join is
// announced. The rules err on the safe side: a receiver that joins
// shortly after a sender (within the announcement) may be owed messages
// sent shortly before it joined, delivered or reported as a gap, never
// silently lost. A new incarnation of a known sender restarts its
// streams at sequence 1 (the receiver was joined all along), with a
// Start; the old incarnation's streams are flushed first.
//
// # Driver loop
//
// The owner (package peer) runs one loop per node:
//
//	for {
//		select {
//		case <-tick.C: // e.g. every 10ms
//			ep.Tick()
//		case p := <-tr.Recv():
//			if err := ep.Step(p.Group, p.Data); err != nil && !errors.Is(err, reliable.ErrOwnFrame) {
//				// dropped and counted in ep.Stats(); log at debug level
//			}
//		case req := <-sendc:
//			seq, err := ep.Send(req.Group, req.Payload, req.Reliable)
//			req.reply(seq, err)
//		case <-ctx.Done():
//			return ctx.Err()
//		}
//		if ep.HasReady() {
//			rd := ep.Ready()
//			for _, o := range rd.Out {
//				tr.Send(o.Group, o.Frame) // best effort
//			}
//			starts(rd.Starts) // before the deliveries and gaps
//			deliver(rd.Deliver, rd.Gaps)
//			ep.Advance(rd)
//		}
//	}
//
// The driver also keeps Join and Leave in step with the transport's (the
// transport's first: Join sends a HELLO on the group), stays joined to the
// groups it sends on reliably (or it never hears the HELLOs and NAKs, and
// its receivers never start its stream), and calls ForgetSender when
// membership declares a node lost.
//
// # Concurrency
//
// An Endpoint is not safe for concurrent use; its owner serializes calls.
// No method blocks. Ready's slices belong to the Endpoint and are reused
// after Advance. Step keeps references to the frames it is given (payloads
// are delivered without copying); Send copies its payload.
//
// # Ordering guarantees
//
//   - Reliable messages of one (sender, incarnation, group) stream are
//     delivered exactly once and in sequence order; every sequence number
//     from the stream's Start on is either delivered or covered by exactly
//     one Gap, gaps fall between deliveries in sequence order, and nothing
//     below the Start is delivered. The Start comes in the Ready of the
//     stream's first delivery or gap, or an earlier one.
//   - Best-effort messages are delivered at once, in arrival order, at most
//     once among the last 64 of their stream; they are never repaired.
//   - Nothing is ordered across groups or senders.
//   - Frames are sent in the order of Ready.Out; within a group a sender's
//     data frames go out in sequence order.
package reliable
