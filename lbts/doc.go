// Package lbts computes the lower bound on time stamps for conservative
// HLA time management. It is a pure state machine in the style of etcd
// raft's RawNode: promises, message counters, advance requests and
// membership events in; grants and messages to send out. It does no I/O
// and reads no clock.
//
// The state machine lands with time management; until then this package
// holds only its documentation.
package lbts
