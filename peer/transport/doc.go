// Package transport moves opaque datagrams on numbered groups, by IP
// multicast or by unicast fan-out.
// It is the bottom of meshrti's data plane; package reliable builds
// ordered, repaired streams on top of it.
//
// # Model
//
// A Transport joins and leaves groups (Group, a number), sends datagrams on
// groups and delivers the datagrams of the joined groups on one channel.
// Delivery is best effort: datagrams may be lost, delayed, duplicated or
// reordered, and the transport says nothing about it. A sender needs not
// join the groups it sends on.
//
// Two implementations:
//
//   - UDP is IPv4 multicast through golang.org/x/net/ipv4. Its defaults keep
//     every datagram on this host: interface "lo", TTL 0, loopback on. Group
//     addresses are derived from the federation name inside 239.0.0.0/8
//     (see GroupAddr). Its own datagrams come back to it through loopback;
//     the caller filters them. On Linux its receiving sockets are bound to
//     0.0.0.0:port and each holds up to 20 group memberships (the kernel's
//     per-socket limit), with IP_MULTICAST_ALL off so that a socket gets
//     only its own groups; a transport can join any number of groups.
//     Datagrams may be up to 65507 bytes (MaxPacket), which loopback
//     carries unfragmented.
//   - Unicast is UDP unicast for networks without multicast: a group's
//     datagram goes to each member the control plane announced, one copy
//     each (Directory, Announcement; see Unicast). MemUnicast does the
//     same over the in-memory network, for simulations.
//   - Network and MemEndpoint are an in-memory network for tests and
//     testnet, with per-link loss, duplication, reordering, delay,
//     jitter and bit corruption, partitions and crashes. A MemEndpoint does not receive its
//     own datagrams.
//
// # Batch I/O
//
// Transports that can send several datagrams in one call implement
// BatchSender; callers detect it at run time and fall back to Send. UDP's
// SendBatch uses sendmmsg on Linux and does not allocate; MemEndpoint's
// applies the link faults to each datagram as Send would. On the receive
// side UDP reads up to 32 datagrams per recvmmsg call; the packets of one
// read share one allocation, each Data a separate, capacity-limited
// slice of it that the transport never touches again, and a Direct taker
// is offered them together. On Linux both calls are raw system calls
// that never wait (waits go through the runtime's poller), so that the
// Go scheduler does not hand the thread's processor away during a long
// multicast send (mmsg_linux.go).
//
// # Driver loop
//
// Only package peer owns goroutines, clocks and transports. Its loop reads
// Recv next to its timer and request channels and hands packets to the
// reliable layer:
//
//	tr, err := transport.NewUDP(transport.UDPConfig{Federation: "demo"})
//	if err != nil {
//		return err
//	}
//	defer tr.Close()
//	if err := tr.Join(g); err != nil {
//		return err
//	}
//	for {
//		select {
//		case p, ok := <-tr.Recv():
//			if !ok {
//				return transport.ErrClosed
//			}
//			_ = ep.Step(p.Group, p.Data) // errors are counted by ep
//		case <-tick.C:
//			ep.Tick()
//		case <-ctx.Done():
//			return ctx.Err()
//		}
//		rd := ep.Ready()
//		pkts = pkts[:0]
//		for _, o := range rd.Out {
//			pkts = append(pkts, transport.Packet{Group: o.Group, Data: o.Frame})
//		}
//		_, _ = tr.SendBatch(pkts) // best effort
//		// ... deliver rd.Deliver and rd.Gaps ...
//		ep.Advance(rd)
//	}
//
// # Concurrency
//
// Every method of UDP, Network and MemEndpoint is safe for concurrent use.
// Send and SendBatch never block for long: UDP waits at most 50ms per call
// for socket buffer space, MemEndpoint never waits. A datagram that finds
// the Recv channel full is dropped and counted (UDP.Stats, Network.Stats)
// rather than blocking the network. Close waits for every goroutine the
// transport started (UDP's readers, one per receiving socket, and
// MemEndpoint's delivery timers) and then closes the Recv channel; no
// goroutine outlives it. UDP's Leave likewise waits for the reader of a
// socket it closes.
//
// MemEndpoint starts no goroutine besides time.AfterFunc timers for delayed
// packets, so a Network works inside a testing/synctest bubble when it is
// created there.
//
// # Ordering guarantees
//
// None across groups or senders. SendBatch sends in slice order. UDP keeps
// the order the kernel gives (loopback delivers a socket's datagrams in
// order unless buffers overflow); groups on different receiving sockets
// are read by different goroutines, so their datagrams interleave on the
// Recv channel in no fixed order. A MemEndpoint without Delay, Jitter or Reorder faults delivers
// inside Send, so datagrams from one sender arrive in send order; with
// faults, Reorder swaps a datagram with the next one on its link and Jitter
// reorders freely. Nothing is delivered twice unless the Duplicate fault
// (or the network) duplicates it.
package transport
