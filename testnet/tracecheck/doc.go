// Package tracecheck checks a JSON-lines trace of a federation run
// (docs/trace.md) after the fact: what every federate did and saw,
// written by package peer (Config.Trace), by testnet's simulations and
// by federate-node's runners, one file per process or one for all.
//
// Check and CheckReport read the lines of every federate as one history
// and return the rules it breaks: grants that go back, time-stamped
// messages delivered in a federate's past or out of the common order,
// messages delivered twice or never sent, messages a grant passed that
// never came, ownership tokens held twice in one epoch, stale epochs
// reflected. docs/trace.md states each rule. The package reads no
// clock and opens no file; federate-node trace-check is its command.
package tracecheck
