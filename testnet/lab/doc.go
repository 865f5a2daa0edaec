// Package lab tests meshrti the way Jepsen tests distributed systems:
// real federate-node processes on a real network, faults injected from
// outside them on a schedule drawn from a seed, and the history checked
// afterwards.
//
// A Lab is a set of hosts, each a Linux network namespace with one veth
// on a shared bridge (in a namespace of its own: nothing is created in,
// or routed to, the namespace the test runs in). Processes run in a host
// with `ip netns exec`. Faults (Fault, drawn by Schedule) are iptables
// rules inside the hosts (loss on a host or a link with the statistic
// match, one-way and two-way partitions, duplicated traffic with TEE)
// and signals to the processes (SIGKILL and a restart under the same
// federate name, SIGSTOP and SIGCONT: a long pause). Every fault, heal,
// start, signal and exit goes into the run's History, on one clock.
//
// Run runs one seed: a time-stepped federate in each host (with
// RunConfig.FedPro, the last host's hosted by a `serve` daemon for a Go
// Federate Protocol client), the seed's faults while they step (with
// RunConfig.SaveRestore, a federation save before the first kill and a
// restore after it), then the checkers (docs/reliability.md): the
// trace checker (package tracecheck) over every process's trace, the
// federation's agreement on who was lost, every update of every federate
// that stayed a member delivered to every other, and a liveness bound
// after every heal. The campaign (campaign_test.go) runs seeds: a few in
// `go test`, many with -campaign-seeds or -campaign-time.
//
// Building a lab needs root, ip(8) and iptables(8) (.ci/run installs
// iptables); elsewhere New returns ErrUnavailable and the tests skip.
package lab
