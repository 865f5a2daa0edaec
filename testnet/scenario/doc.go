// Package scenario runs data-driven test scripts in the spirit of
// cockroachdb/datadriven: the lbts scenarios (lbts/testdata) and the
// testnet scripts (testnet/testdata, `federate-node sim`) share it.
//
// A script is a list of steps. Each step is one command line, a line
// "----", and the expected output, one or more lines up to a blank line
// or the end of the file:
//
//	# A grant waits for the slowest regulating federate's lookahead.
//	add 1 regulating lookahead=1
//	----
//	ok
//
// Lines starting with # and blank lines between steps are comments; a
// rewrite keeps them verbatim, along with everything else but the
// outputs. Trailing spaces, tabs and carriage returns are dropped from
// every line, the actual outputs' included.
//
// Run parses a script, calls a step function for each command in order,
// compares what it returns with the expected output and reports each
// difference as a line diff. Result.Rewritten is the script with the
// actual outputs in place of the expected ones: the same bytes when
// nothing changed. RunFile does the same for a file and, when asked,
// writes the rewritten script back, so that a test can offer
//
//	go test ./lbts -run TestScenarios -rewrite
//
// The package knows nothing of what the commands mean: it imports neither
// peer nor lbts, so the tests of any package can use it.
//
// # Concurrency properties
//
// Run and RunFile call the step function from the calling goroutine, one
// command at a time, in the order of the script; they return after the
// last. They keep no state between calls.
package scenario
