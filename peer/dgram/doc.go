// Package dgram holds the vocabulary of the data plane's datagrams: a
// Group (a numbered group of a federation) and a Packet (one datagram on
// a group). It does no I/O and imports nothing.
//
// The transport (package transport) moves Packets on Groups; the reliable
// layer (package reliable) and the federate core (peer/internal/core)
// name Groups and produce Packets. They import this package, not the
// transport, so that the protocol cores build without the socket code:
// the repository's purity test checks their whole import graph.
// transport.Group and transport.Packet are aliases of these types.
package dgram
