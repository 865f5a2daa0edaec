// Package testnet simulates whole meshrti federations in one process:
// federates over the in-memory network of peer/transport (loss, delay,
// duplication, reordering, partitions, crashes) or over real loopback
// multicast, with the in-process control plane of peer.MemRegistry.
//
//	c, err := testnet.Start(ctx, testnet.Config{Federates: 8, Seed: 1,
//		Faults: transport.Faults{Loss: 0.1, Duplicate: 0.05, Reorder: 0.1}})
//	defer c.Close()
//	// drive c.Feds[i] through the peer API; c.Logs[i] records its events
//	for _, v := range testnet.Check(c.Logs) { ... }
//
// Every federate's events are recorded as they arrive (Log), and Check
// verifies the invariants a federate's own event stream shows: grants never
// decrease, no time-stamp-order message at or below a grant after it, the
// same time-stamp order at every receiver, and no message twice. Tests tag
// every message so the checker can follow it.
//
// # Concurrency
//
// A Cluster's federates run on their own goroutines; Start, Add, Crash and
// Close are for one goroutine (the test's). Log methods are safe for
// concurrent use. Close waits for every recorder.
//
// # Scenario scripts
//
// RunScript runs a scenario script: one command per line (join, publish,
// register, update, advance, crash, partition, ...), each followed by
// "----" and what every federate saw in that step, federates in name
// order, with names instead of handles. TestScripts runs every
// testdata/*.txt script (go test -run TestScripts -rewrite regenerates
// the expected outputs) and `federate-node sim FILE...` runs scripts from
// the command line. docs/testing.md describes the language; ScriptHelp
// lists its commands from the one table they are defined in. Package
// testnet/scenario reads, compares and rewrites the scripts; the lbts
// scenarios share it.
//
// # Traces
//
// Config.Trace (or a writer attached to the context with WithTrace)
// receives every federate's JSON-lines trace (docs/trace.md); CheckTrace
// and CheckTraceReport check one after the run through package
// testnet/tracecheck.
//
// # Large and deterministic clusters
//
// Config.Deterministic runs every federate on one goroutine in virtual
// time (sim.go): a run is a function of its seed, so a failing seed
// replays exactly. The large runs (LargeClusterWithPartition, the scale
// and thousand-federate runs) are behind flags and environment
// variables, listed in the README's Tests section.
package testnet
