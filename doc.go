// Package meshrti is a peer-to-peer HLA Run-Time Infrastructure (IEEE
// 1516-2010, "HLA Evolved"). There is no central server: every federate
// node joins a gossip cluster, computes a distributed lower bound on time
// stamps, publishes on multicast groups mapped from DDM regions, and
// holds attribute ownership through a consensus token per attribute.
//
// This root package holds no code; it carries the repository-wide tests
// (every package documented, protocol cores free of I/O). The packages:
//
//   - fomxml: FOM modules (OMT XML), merging, the FDD model, and under
//     fomxml/codec the HLA data encoding.
//   - peer: the embeddable federate API.
//   - gossip: membership, failure detection and agreement.
//   - lbts: conservative time management, as a pure state machine.
//   - ddm: data distribution management, as a pure state machine.
//   - testnet: simulated federations with faults.
//   - cmd/federate-node: the node, the demo and the tools.
package meshrti
