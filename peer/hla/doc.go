// Package hla is the vocabulary of IEEE 1516.1-2010 as meshrti speaks it:
// handles, values, order types, resign actions, logical times, the
// callbacks (events) and the exceptions (sentinel errors). It holds data
// types only, no behaviour: package peer re-exports every name (as type
// aliases and the same error values), and the federate core
// (peer/internal/core) produces and consumes them. Programs use them
// through peer.
package hla
