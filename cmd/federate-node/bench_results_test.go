package main

import "github.com/meshrti/meshrti/internal/bench"

// The lines the bench kinds and node's ping and pong print (package
// bench), as the tests here
// decode them from the built binary's output: the command's JSON keys
// are the fields' tags.
type (
	latencyResult          = bench.LatencyResult
	throughputResult       = bench.ThroughputResult
	timeBenchResult        = bench.TimeResult
	disBenchResult         = bench.DISResult
	recordBenchResult      = bench.RecordResult
	fedproBenchResult      = bench.FedProResult
	fedproThroughputResult = bench.FedProThroughputResult
	pingResult             = bench.PingResult
	pongResult             = bench.PongResult
)
