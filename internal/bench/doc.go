// Package bench is `federate-node bench`: the benchmarks of the data
// plane (throughput, latency), time management (timeadvance), object
// lifecycles, ownership transfers, the Federate Protocol daemon
// (fedpro), the DIS gateway (dis) and the recorder (record), each
// against its floor (raw sockets doing the same work) in the same run.
// Kinds is the table the command dispatches on and prints the help of;
// a kind is its flag struct (define, check, run: cli.Kind).
//
// Most kinds run in two or more processes: the parent starts children
// of the same binary ("federate-node bench KIND -role ROLE", and
// "federate-node bench-raw" for the raw floors, RunRaw), which is why
// this package serves cmd/federate-node only. Its ping and pong
// federates (RunPing, RunPong) are also `federate-node node -role ping`
// and `-role pong`.
//
// docs/results.md holds the figures and the commands that measure them.
//
// # Concurrency properties
//
// A kind runs on the goroutine that called it, with the goroutines and
// processes it starts; it waits for them before it returns.
package bench
