// Package agree is the agreement under gossip's register: a log of
// decisions that every member applies in the same order, each decided by
// single-decree Paxos among the acceptors the log itself names
// (reconfigurable Paxos with a window of one).
//
// It is pure, like etcd raft's RawNode: no clock, no network, no
// goroutines, no global randomness. A Replica (replica.go) takes
// messages, ticks and requests through Step, Tick, Submit and Read, and
// says what to do through Ready: the messages to send, the ops decided
// with their results, the reads confirmed, what the applied entries
// changed. The FSM (fsm.go) is the deterministic function from the log to
// the register's contents: keys with holders and versions, the acceptor
// roster, the federation record and its federates. paxos.go holds the
// ballots, the acceptor and the Message. Decode (decode.go) is the one
// way bytes from another process are decoded.
//
// Package gossip owns the goroutines: its Cluster's loop ticks the
// replica, carries its messages over memberlist and answers its callers
// from Ready. docs/agreement.md describes the protocol.
//
// A Replica is not safe for concurrent use; its owner serializes calls.
package agree
