package main

import "github.com/meshrti/meshrti/internal/tick"

// The result lines of node -role tick and lab (package tick), as the
// tests here decode them from the built binary's output.
type (
	tickResult = tick.Result
	labCounts  = tick.LabCounts
)
