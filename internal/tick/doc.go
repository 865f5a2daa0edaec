// Package tick is the time-stepped federate of `federate-node node
// -role tick` and `-role lab`: each step it updates its own object
// time-stamped and advances, and counts what the others sent (Result);
// with the lab's work (NewLab) it also contends for ownership, moves
// regions and meets at synchronization points, and it saves and restores
// when told (Commands: SIGUSR1 and SIGUSR2 from the fault lab,
// docs/reliability.md). Run drives one over package peer, or, with
// OpenFedPro, a federate hosted by `federate-node serve` over the
// Federate Protocol, as a federate in another language would be.
//
// # Concurrency properties
//
// Run runs on the goroutine that calls it; a FedProFederate's connection
// has a reader goroutine of its own, which Close waits for. Commands
// starts a goroutine that its stop function ends.
package tick
