// Package testnet simulates whole meshrti federations in one process: many
// federate nodes over an in-memory network with loss, delay, duplication,
// reordering, partitions and crashes, driven by scenario scripts and
// checked against the invariants of the architecture after every step.
//
// The harness lands with the end-to-end federation; until then this
// package holds only its documentation.
package testnet
