package session

import "errors"

// Reasons a session ends, passed to SessionHandler.Closed and wrapped by
// PushCallback's error. Test with errors.Is: most come wrapped with
// detail.
var (
	// ErrTerminated: the federate terminated the session
	// (CTRL_TERMINATE_SESSION), and was answered.
	ErrTerminated = errors.New("session: terminated by the federate")
	// ErrExpired: the connection dropped and the federate did not resume
	// within Config.ResumeWindow.
	ErrExpired = errors.New("session: not resumed within the resume window")
	// ErrConnectionLost: the connection dropped and Config.ResumeWindow
	// is negative, so the session cannot be resumed.
	ErrConnectionLost = errors.New("session: connection lost")
	// ErrHeartbeatTimeout: nothing arrived from the federate within
	// Config.HeartbeatTimeout.
	ErrHeartbeatTimeout = errors.New("session: no message from the federate within the heartbeat timeout")
	// ErrBadMessage: the federate broke the protocol: a garbled header,
	// an unknown or misdirected message type, a malformed body, a wrong
	// session id or a wrong sequence number. The session cannot continue.
	ErrBadMessage = errors.New("session: bad message")
	// ErrTooLarge: a message larger than Config.MaxMessage. The session
	// cannot continue: the rest of the message is not read.
	ErrTooLarge = errors.New("session: message too large")
	// ErrResumeRefused: a resume request that could not be honoured
	// (sequence numbers that do not fit what was sent and received) ended
	// the session.
	ErrResumeRefused = errors.New("session: resume refused")
	// ErrServerClosed: Server.Close ended the session; Serve returns it
	// after Close.
	ErrServerClosed = errors.New("session: server closed")
	// ErrOutOfResources: a Handler's Open may return an error wrapping it
	// to refuse a session with reason "out of resources" instead of
	// "other error".
	ErrOutOfResources = errors.New("session: out of resources")
	// ErrBacklog: the federate left more than Config.MaxBacklog bytes of
	// messages unacknowledged; the session ended rather than keep more.
	ErrBacklog = errors.New("session: too many messages unacknowledged by the federate")
	// ErrSessionClosed is returned by PushCallback after the session
	// ended; it wraps the reason too.
	ErrSessionClosed = errors.New("session: session closed")
)
