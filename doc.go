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
//   - peer: the embeddable federate API. Under it: peer/internal/core,
//     the federate's protocol state as a pure state machine; peer/hla,
//     the vocabulary of IEEE 1516.1 (handles, events, exceptions);
//     peer/reliable, reliable ordered streams over best-effort multicast;
//     peer/transport, datagrams by multicast or unicast fan-out;
//     peer/dgram, the data plane's datagram vocabulary; peer/updatecond,
//     update conditions; peer/metrics, the data plane's counters;
//     peer/multirate, work at several rates on coherent data;
//     peer/record, recordings and their Recorder and Player; peer/fedpro,
//     the HLA 4 Federate Protocol server (peer/fedpro/session, its
//     session layer; peer/fedpro/pb, its messages).
//   - gossip: membership, failure detection and agreement.
//   - lbts: conservative time management, as a pure state machine.
//   - ddm: data distribution management, as a pure state machine.
//   - dis: the DIS gateway.
//   - testnet: simulated federations with faults (testnet/scenario, the
//     script runner; testnet/tracecheck, trace checks; testnet/lab, fault
//     campaigns on real processes).
//   - cmd/federate-node: the command line: it parses, wires and prints.
//     What it runs lives in packages: internal/bench (the benchmarks),
//     examples/demo (the demos), internal/monitor (the monitor),
//     internal/tick (node's tick and lab federates), internal/cli (what
//     the commands share), internal/fpclient (the Federate Protocol
//     client of the benchmarks and tests), internal/nodetest (the tests'
//     runs of the binary).
package meshrti
