// Package cli holds what the commands of federate-node share to parse
// their arguments and print: the tables of subcommands that the usage
// text is generated from (Command), the run of one command or kind
// (Cmd: its flag set, its messages "federate-node NAME: ...", its exit
// codes, its result as one JSON line or as text), and the CPU profile.
// The commands themselves live with what they run: cmd/federate-node
// wires them, internal/bench measures, examples/demo shows.
//
// # Concurrency properties
//
// Nothing here is shared: a Cmd belongs to the goroutine that runs the
// command.
package cli
