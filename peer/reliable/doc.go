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
// missing ranges. The sender retransmits what it still holds and answers
// "gone" for what it no longer holds; the receiver then reports a Gap and
// moves on. Receivers that see another receiver's NAK for ranges they miss
// too hold their own NAK back (suppression). Heartbeats on idle groups
// carry the sender's highest sequence number, so a lost tail is noticed,
// and the oldest one it still holds, so an unrepairable hole is noticed
// without a NAK. Best-effort messages have their own sequence, are
// delivered at once and never repaired.
//
// A receiver starts a (sender, group) stream at the first reliable
// sequence it sees after joining the group: a data frame starts it at that
// message, a heartbeat right after the sender's highest sequence (a
// retransmission asked for by others does not start a stream). This is
// the late-join rule. Its consequence: messages sent before that point are
// neither delivered nor reported as gaps, including any the sender sent
// after the join that were lost before the first one that arrived. Once a
// stream has started, no message is skipped silently. A new incarnation of
// a known sender restarts its streams at sequence 1 (the receiver was
// joined all along); the old incarnation's streams are flushed first.
//
// With Config.Key set, every frame carries a frame counter and an
// HMAC-SHA256 truncated to 16 bytes; receivers keep a replay window per
// sender. docs/dataplane.md describes the frame format and the protocol.
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
//			deliver(rd.Deliver, rd.Gaps)
//			ep.Advance(rd)
//		}
//	}
//
// The driver also keeps Join and Leave in step with the transport's, joins
// the groups it sends on reliably (or it never hears the NAKs), and calls
// ForgetSender when membership declares a node lost.
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
//     from the stream's start on is either delivered or covered by exactly
//     one Gap, and gaps fall between deliveries in sequence order.
//   - Best-effort messages are delivered at once, in arrival order, at most
//     once among the last 64 of their stream; they are never repaired.
//   - Nothing is ordered across groups or senders.
//   - Frames are sent in the order of Ready.Out; within a group a sender's
//     data frames go out in sequence order.
package reliable
