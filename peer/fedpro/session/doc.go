// Package session is the server side of the session layer of the HLA 4
// (IEEE 1516-2025) Federate Protocol, "FedPro": a federate in any language
// connects to the RTI over TCP (DefaultPort 15164; TLS on DefaultTLSPort
// 15165) and calls the RTI through it. The payloads of calls and callbacks
// are protobuf bytes that this package does not interpret: a Handler maps
// them onto the RTI.
//
//	srv := session.NewServer(session.Config{}, h)
//	l, err := net.Listen("tcp", "127.0.0.1:15164")
//	if err != nil { return err }
//	go srv.Serve(l)        // returns session.ErrServerClosed after Close
//	defer srv.Close()      // ends every session and waits for its goroutines
//
// h.Open is called for each new session and returns the SessionHandler
// whose Call answers the session's call requests; the RTI sends callbacks
// with Session.PushCallback.
//
// # Wire format
//
// Every message starts with a 24-byte big-endian header:
//
//	offset size field
//	 0     4    message size in bytes, header included (unsigned)
//	 4     4    sequence number
//	 8     8    session id (0 in CTRL_NEW_SESSION)
//	16     4    last received sequence number
//	20     4    message type
//
// Message types and bodies (C: federate to RTI, R: RTI to federate; u32
// is a big-endian 32-bit integer):
//
//	 1 CTRL_NEW_SESSION         C  u32 protocol version (1)
//	 2 CTRL_NEW_SESSION_STATUS  R  u32 reason: 0 success, 1 unsupported protocol version, 2 out of resources, 99 other error
//	 3 CTRL_HEARTBEAT           C  -
//	 4 CTRL_HEARTBEAT_RESPONSE  R  u32 sequence number of the heartbeat
//	 5 CTRL_TERMINATE_SESSION   C  -
//	 6 CTRL_SESSION_TERMINATED  R  -
//	10 CTRL_RESUME_REQUEST      C  u32 last received RTI message, u32 oldest federate message still held
//	11 CTRL_RESUME_STATUS       R  u32 status: 0 ok, 1 invalid session, 2 not enough buffered messages, 99 other error; u32 last received federate message
//	20 HLA_CALL_REQUEST         C  protobuf CallRequest
//	21 HLA_CALL_RESPONSE        R  u32 sequence number of the call request, protobuf CallResponse
//	22 HLA_CALLBACK_REQUEST     R  protobuf CallbackRequest
//	23 HLA_CALLBACK_RESPONSE    C  u32 sequence number of the callback request, protobuf CallbackResponse
//
// These follow Pitch's FedProClient (Java and C++), which implements the
// standard. MAK's Python client numbers CTRL_TERMINATE_SESSION and
// CTRL_SESSION_TERMINATED 6 and 7 but never sends them; it acknowledges a
// callback with a bare header (size 24) numbered with the callback's
// sequence number, which this server accepts too.
//
// # Sequence numbers
//
// Sequence numbers take 31 bits and wrap from 0x7fffffff to 0; a value
// with the top bit set (0x80000000 in practice) means "none". The RTI
// numbers its messages of a session 1, 2, 3, ... in the order it writes
// them: the new session status is 1, and heartbeat responses, resume
// statuses and the session terminated message take numbers too, so a
// client that waits for "last received + 1" gets it. A call response
// names the call request it answers by that request's sequence number,
// and a heartbeat response its heartbeat's.
//
// The last received field counts HLA messages only (§12.13.4.4): in the
// RTI's messages it is the newest call request or callback response
// received, and in the federate's it acknowledges RTI call responses and
// callback requests, which the session then frees. Control messages are
// never replayed.
//
// A message from the federate is refused as a bad message, ending its
// session, if its sequence number has the top bit set, if a call,
// heartbeat or terminate has a lower number than the previous one, if it
// acknowledges or answers an RTI message not yet sent, or if it names
// another session.
//
// # Resume
//
// A session outlives its connection for Config.ResumeWindow. The federate
// reconnects and sends CTRL_RESUME_REQUEST with the session id and the
// last RTI message it received; the session answers with
// CTRL_RESUME_STATUS, carrying the last federate message it received, and
// then replays the HLA messages after the federate's last received one,
// with their original sequence numbers, before anything new. Call requests
// and callback responses the federate replays although the session had
// them are dropped. A resume request on a new connection takes the session
// over from a connection that has not yet been noticed dead. A resume of
// an unknown or ended session gets status 1; one whose sequence numbers
// do not fit what was sent and received gets 2 or 99 and ends the session.
//
// # Concurrency properties
//
//   - Each connection has a reader goroutine and, once it carries a
//     session, a writer goroutine. Each session has one goroutine that
//     calls its SessionHandler: Call, CallbackResponse and Closed never run
//     concurrently, and calls run in the order the federate sent them. A
//     SessionHandler that is a QuickCaller has its quick calls (updates,
//     interactions) and its callback responses run by the reader instead,
//     when nothing else of the session's is queued or running: the same
//     guarantees, without the switch between goroutines.
//   - Heartbeats are answered by the reader, even while a Call runs (but
//     for a quick call the reader runs: after it).
//   - Messages are written in sequence order, whole: those queued together
//     share one Write (up to 64 KiB). A call's response, and the callbacks
//     a handler queues and flushes (QueueCallback, Flush), are written by
//     the goroutine that has them, at once, when the TCP socket takes them
//     without waiting; otherwise, and for TLS, by the writer. Pushing a
//     callback never waits for the network or for the federate's
//     response: messages queue while the federate is slow or away, and
//     are freed when acknowledged or when the session ends; past
//     Config.MaxBacklog bytes unacknowledged the session ends instead
//     (ErrBacklog).
//   - CTRL_TERMINATE_SESSION is answered after the calls received before
//     it; the connection closes once the answer is written.
//   - Server.Close returns after every goroutine the Server started has
//     exited, and after every session's Closed returned. It waits for
//     Calls in progress.
package session
