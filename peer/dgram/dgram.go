package dgram

// Group numbers a group of a federation. The mapping from a Group to a
// network address (a multicast group, or the members a unicast
// transport sends to) belongs to the transport.
type Group uint32

// Packet is one datagram received on a group, or to send on one.
type Packet struct {
	// Group is the group the datagram was sent on.
	Group Group
	// Data is the datagram. The transport does not touch it after handing
	// the Packet over, and the receiver must not modify it: packets
	// received together may share one allocation (each Data a separate
	// slice of it whose capacity ends where it does, so appending to one
	// never changes another), and the in-memory network hands the same
	// bytes to every receiver of a datagram.
	Data []byte
}
