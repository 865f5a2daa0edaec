package reliable

import "errors"

// Errors returned by Step, one per drop reason; each is counted in Stats.
// Step wraps them with detail: test with errors.Is.
var (
	// ErrMalformed: the frame is truncated, has a bad magic, an unknown
	// kind or a body that does not parse.
	ErrMalformed = errors.New("reliable: malformed frame")
	// ErrVersion: the frame has an unsupported version.
	ErrVersion = errors.New("reliable: unsupported frame version")
	// ErrWrongFederation: the frame belongs to another federation.
	ErrWrongFederation = errors.New("reliable: frame of another federation")
	// ErrWrongGroup: the frame names another group than the one it came
	// in on.
	ErrWrongGroup = errors.New("reliable: frame group does not match")
	// ErrAuth: a keyed endpoint got a frame that is not sealed, names a
	// key id it does not have, or whose AES-GCM tag does not verify
	// (forged, altered, or sealed with another key); or an unkeyed
	// endpoint got a sealed frame.
	ErrAuth = errors.New("reliable: frame authentication failed")
	// ErrChecksum: an unauthenticated frame whose CRC-32C does not match:
	// it was corrupted on the way.
	ErrChecksum = errors.New("reliable: frame checksum mismatch")
	// ErrReplay: an authenticated frame whose counter was seen before, or
	// is too old for the replay window.
	ErrReplay = errors.New("reliable: replayed frame")
	// ErrOwnFrame: the frame was sent by this endpoint (multicast
	// loopback). It is harmless; the driver may ignore this error.
	ErrOwnFrame = errors.New("reliable: own frame")
	// ErrStaleIncarnation: the frame comes from an older incarnation of
	// its sender, or from a sender forgotten at that incarnation.
	ErrStaleIncarnation = errors.New("reliable: stale sender incarnation")
	// ErrNotJoined: a data, heartbeat, repair, HELLO or SYNC frame on a
	// group this endpoint has not joined.
	ErrNotJoined = errors.New("reliable: group not joined")
)

// ErrTooLarge is returned by Send for a payload larger than
// Config.MaxMessage.
var ErrTooLarge = errors.New("reliable: message too large")
