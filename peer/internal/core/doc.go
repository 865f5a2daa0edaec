// Package core is the federate core of meshrti: one federate's protocol
// state as one pure state machine, in the style of etcd raft's RawNode.
// Package peer's Federate is its driver.
//
// # Model
//
// Inputs are steps: a service call (a method named as the standard names
// the service: PublishObjectClassAttributes, UpdateAttributeValues,
// TimeAdvance ...), a received frame (Step), a tick of wall-clock
// progress (Tick), and the control plane's news (MemberJoined,
// MemberLeft, SelfLost, OpDone, SetFDD). The output is a Ready: events
// for the federate's stream, sealed frames per group, transport group
// joins and leaves, control-plane operations (register acquire, release,
// read; keyed state to publish) and trace lines.
//
// Inside, sub-machines each own a part of the state, in files of their
// own: the reliable endpoint (peer/reliable) and the time core (lbts),
// declarations (declarations.go), object instances (objects.go),
// ownership tokens (ownership.go), routing from classes and regions to
// groups (routing.go), the federation's membership and control-plane
// operations (federation.go), and the bookkeeping between the data plane
// and the time core (timing.go).
//
// The core starts no goroutine, takes no lock, reads no clock, opens no
// socket and draws on no global randomness; the repository's purity test
// checks its imports. The driver owns all of that.
//
// # Driver loop
//
//	c, err := core.New(cfg)
//	for {
//		select {
//		case <-tick.C:
//			c.Tick()
//		case p := <-tr.Recv():
//			c.Step(p.Group, p.Data)
//		case ev := <-control:
//			c.MemberJoined(ev.Member) // or MemberLeft, SelfLost, OpDone
//		case call := <-calls:
//			call.err = call.fn(c) // c.UpdateAttributeValues(...)
//		}
//		rd := c.Ready(writerIdle)
//		for _, g := range rd.Groups { join or leave g on the transport }
//		send(rd.Frames)
//		queue(rd.Events)
//		start(rd.Ops) // answers come back through c.OpDone
//		trace.Write(rd.Trace)
//		c.Advance(rd)
//	}
//
// Ready(seal) seals the frames being bundled when seal is set; a driver
// that sends from a writer goroutine seals only when the writer is idle,
// so that messages bundle up while a batch is in the kernel.
//
// # Ordering guarantees
//
//   - Events come in the order the core decided them: every
//     time-stamp-order message up to t is in Events before the
//     TimeAdvanceGrant to t.
//   - Messages of one sender about one object instance travel on one
//     group and arrive in the order sent; across owners of an instance's
//     attributes, ownership epochs order them (ownership.go).
//   - Frames are in the order they must be sent; Groups changes come
//     before the frames that depend on them.
//
// # Concurrency
//
// A Core is not safe for concurrent use; its driver serializes calls.
// Ready's slices belong to the Core and are reused after Advance.
//
// # Testing
//
// interaction_test.go runs the scripts of testdata/interaction: steps
// (services, ticks, control-plane inputs) on a few cores joined by an
// in-test control plane and data plane, and what each step made them do
// (callbacks, control-plane operations and state, the trace). A change
// of behaviour shows as a diff of a script; go test -run TestInteraction
// -rewrite rewrites them (package testnet/scenario runs them, as it runs
// lbts's and testnet's).
package core
