// Package fpclient is a minimal HLA 4 Federate Protocol client, for the
// benchmarks of `federate-node bench fedpro` and the tests of `serve`
// and of package fedpro, which must see the wire as a foreign client
// (C++, Java, Python) does. It frames messages with package session's
// header codec (one framing implementation for both ends) and speaks
// the protobuf messages of package pb.
//
// It is not a client for Go programs: those join through package peer.
//
// # Concurrency properties
//
// A Conn's methods may be called from several goroutines; a reader
// goroutine of its own hands callbacks to the function given to Dial or
// Open, and Close waits for it.
package fpclient
