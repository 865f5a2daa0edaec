// Package netns runs ip(8) for the tests that build Linux network
// namespaces (the namespace tests of cmd/federate-node and the fault lab
// of testnet/lab), and removes what they leave: a namespace is named
// after the process that made it, so one left by a process that is gone
// (a crashed or killed run) is recognized and removed by the next run.
//
// Everything here needs root and iproute2, and Linux.
//
// # Concurrency properties
//
// The functions may be called from several goroutines; they share no
// state.
package netns
