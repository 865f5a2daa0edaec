package transport

import (
	"errors"

	"github.com/meshrti/meshrti/peer/dgram"
)

// Group numbers a group of a federation (an alias of dgram.Group, which
// the protocol cores name without importing the socket code). The
// mapping from a Group to a network address belongs to the Transport
// implementation (see GroupAddr for the multicast one).
type Group = dgram.Group

// Packet is one datagram received on a group (an alias of dgram.Packet).
// The transport does not touch Data after handing the Packet over, and
// the receiver must not modify it: packets received together may share
// one allocation, and the in-memory network hands the same bytes to
// every receiver of a datagram.
type Packet = dgram.Packet

// Transport moves opaque datagrams on numbered groups. Delivery is best
// effort: datagrams may be lost, delayed, duplicated or reordered.
//
// All methods are safe for concurrent use.
type Transport interface {
	// Join starts delivery of the datagrams sent on g. Joining a joined
	// group does nothing.
	Join(g Group) error
	// Leave stops delivery of the datagrams sent on g. Leaving a group
	// that is not joined does nothing.
	Leave(g Group) error
	// Send sends b on g, best effort. The sender needs not have joined g.
	// Send does not keep b. It never blocks for long: when the datagram
	// cannot be queued it is dropped (and, depending on the
	// implementation, an error returned).
	Send(g Group, b []byte) error
	// Recv returns the channel of received datagrams. Close closes it.
	Recv() <-chan Packet
	// Close releases the transport and waits for every goroutine it
	// started. Calling Close again does nothing and returns nil.
	Close() error
}

// BatchSender is implemented by transports that can send several datagrams
// in one call. Callers detect it at run time:
//
//	if bs, ok := tr.(transport.BatchSender); ok {
//		_, err = bs.SendBatch(pkts)
//	}
//
// SendBatch is best effort like Send: each Packet's Data is sent on its
// Group, in slice order, and not kept after the call. It stops at the first
// datagram it cannot hand over: pkts[:sent] went to the network (or the
// kernel), pkts[sent] failed with err, and the rest were not tried. It is
// safe for concurrent use and never blocks for long. Nor is pkts kept:
// the caller may reuse the slice once SendBatch returns.
type BatchSender interface {
	SendBatch(pkts []Packet) (sent int, err error)
}

// Direct is implemented by transports that can hand datagrams to a
// function on their own reader goroutine instead of through Recv, saving
// a goroutine switch per datagram. The function is offered the datagrams
// of one read together, in order, and returns how many it took from the
// front; it must not block, and must not keep the slice (the Packets
// themselves it may keep). The others then go through Recv as usual.
// Datagrams taken directly and through Recv may reach the layer above
// out of order.
type Direct interface {
	SetDirect(take func([]Packet) int)
}

// ErrClosed is returned by the methods of a closed Transport.
var ErrClosed = errors.New("transport: closed")

// Compile-time checks.
var (
	_ Transport   = (*MemEndpoint)(nil)
	_ Transport   = (*UDP)(nil)
	_ BatchSender = (*MemEndpoint)(nil)
	_ BatchSender = (*UDP)(nil)
)
