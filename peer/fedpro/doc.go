// Package fedpro serves the HLA 4 (IEEE 1516-2025) Federate Protocol:
// it hosts one peer federate per client session and maps the protocol's
// calls (pb.CallRequest) onto package peer and the federate's events
// onto its callbacks (pb.CallbackRequest). The session layer (framing,
// sequence numbers, heartbeats, resume) is package fedpro/session; the
// messages are package fedpro/pb. Host.Serve puts them together on a
// listener, as `federate-node serve` does (docs/fedpro.md); Host.NewServer
// gives the session server for several listeners.
//
// A Host makes Sessions; a Session is driven by its session layer: Call
// for each call request, in order, and Close when the session ends. The
// callbacks go out through the push function the session was made with,
// from a goroutine of the Session's own (the client evokes nothing: every
// callback is pushed).
//
// With Config.Authenticate, each Connect's credentials are checked once,
// when it is called (auth.go): Passwords checks HLA 4 plain-text
// passwords against a file of bcrypt hashes; a refusal answers
// Unauthorized or InvalidCredentials and the session stays unconnected.
//
// The calls served are listed in one table, by request message type
// (handlers, in calls.go): each file of the package lists the calls of
// one group of services in its function, and the table names every
// group. A call that is not in the table answers with the standard's
// exception, never a dropped connection.
package fedpro
