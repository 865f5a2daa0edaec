// Package demo holds the demos `federate-node demo` runs, as a Go
// program would write them on package peer, and their FOM modules.
package demo
