// Package nodetest runs the federate-node binary for tests: it builds
// cmd/federate-node (once per test process) and runs a command of it,
// as a user would, for the tests of the commands whose code lives in
// other packages (internal/bench) and of cmd/federate-node itself.
//
// # Concurrency properties
//
// Build may be called from parallel tests: the first call builds, the
// others wait for it.
package nodetest
