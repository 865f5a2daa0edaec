package session

import (
	"encoding/binary"
	"fmt"
)

// Default ports of the Federate Protocol (Pitch FedProClient, common/Ports).
const (
	DefaultPort    = 15164 // plain TCP
	DefaultTLSPort = 15165 // TLS
)

// HeaderSize is the size of the header that starts every message.
const HeaderSize = 24

// ProtocolVersion is the Federate Protocol version this server speaks; a
// new session request for another version is refused.
const ProtocolVersion = 1

// Sequence numbers take 31 bits: 0 to 0x7fffffff, then 0 again. A value
// with the top bit set is not a sequence number; noSequence is the one
// both public clients send for "none" (Java Integer.MIN_VALUE).
const (
	noSequence  uint32 = 0x80000000
	maxSequence uint32 = 0x7fffffff
)

// MsgType is the last header field.
type MsgType uint32

// Message types (IEEE 1516-2025 §12.13.4.5; Pitch FedProClient
// common/session/MessageType). C: federate to RTI; R: RTI to federate.
const (
	MsgNewSession        MsgType = 1  // C: body u32 protocol version
	MsgNewSessionStatus  MsgType = 2  // R: body u32 reason
	MsgHeartbeat         MsgType = 3  // C: no body
	MsgHeartbeatResponse MsgType = 4  // R: body u32 sequence number of the heartbeat
	MsgTerminateSession  MsgType = 5  // C: no body
	MsgSessionTerminated MsgType = 6  // R: no body
	MsgResumeRequest     MsgType = 10 // C: body u32 last received RTI message, u32 oldest available federate message
	MsgResumeStatus      MsgType = 11 // R: body u32 status, u32 last received federate message
	MsgCallRequest       MsgType = 20 // C: body protobuf CallRequest
	MsgCallResponse      MsgType = 21 // R: body u32 sequence number of the call request, protobuf CallResponse
	MsgCallbackRequest   MsgType = 22 // R: body protobuf CallbackRequest
	MsgCallbackResponse  MsgType = 23 // C: body u32 sequence number of the callback request, protobuf CallbackResponse
)

// known reports whether t is a message type of the protocol.
func (t MsgType) known() bool { return uint64(t) < uint64(len(msgNames)) && msgNames[t] != "" }

// hla reports whether t carries an HLA service call or callback. Only
// these count for the last received and oldest available sequence
// numbers, and only these are kept for replay (§12.13.4.4).
func (t MsgType) hla() bool { return t >= MsgCallRequest }

// msgNames are the message types' names in the standard; a type
// without one is not of the protocol.
var msgNames = [...]string{
	MsgNewSession: "CTRL_NEW_SESSION", MsgNewSessionStatus: "CTRL_NEW_SESSION_STATUS",
	MsgHeartbeat: "CTRL_HEARTBEAT", MsgHeartbeatResponse: "CTRL_HEARTBEAT_RESPONSE",
	MsgTerminateSession: "CTRL_TERMINATE_SESSION", MsgSessionTerminated: "CTRL_SESSION_TERMINATED",
	MsgResumeRequest: "CTRL_RESUME_REQUEST", MsgResumeStatus: "CTRL_RESUME_STATUS",
	MsgCallRequest: "HLA_CALL_REQUEST", MsgCallResponse: "HLA_CALL_RESPONSE",
	MsgCallbackRequest: "HLA_CALLBACK_REQUEST", MsgCallbackResponse: "HLA_CALLBACK_RESPONSE",
}

func (t MsgType) String() string {
	if t.known() {
		return msgNames[t]
	}
	return fmt.Sprintf("message type %d", uint32(t))
}

// Reasons in CTRL_NEW_SESSION_STATUS. The public clients refuse any other
// value as a bad message.
const (
	newSessionSuccess             uint32 = 0
	newSessionUnsupportedProtocol uint32 = 1
	newSessionOutOfResources      uint32 = 2
	newSessionOtherError          uint32 = 99
)

// Statuses in CTRL_RESUME_STATUS.
const (
	resumeOK                uint32 = 0
	resumeInvalidSession    uint32 = 1
	resumeNotEnoughBuffered uint32 = 2
	resumeOtherError        uint32 = 99
)

// Header is the 24-byte big-endian header of every message, the session
// layer's framing (package internal/fpclient, the client of the
// benchmarks and the daemon's tests, frames with it too):
//
//	offset size field
//	 0     4    message size in bytes, header included (unsigned)
//	 4     4    sequence number
//	 8     8    session id
//	16     4    last received sequence number
//	20     4    message type
type Header struct {
	Size         uint32
	Seq          uint32
	SessionID    uint64
	LastReceived uint32
	Type         MsgType
}

// ParseHeader decodes the header at the start of b, which must hold at
// least HeaderSize bytes. It refuses a size smaller than the header and
// an unknown message type; the caller checks the size against its limit.
func ParseHeader(b []byte) (Header, error) {
	if len(b) < HeaderSize {
		return Header{}, fmt.Errorf("%w: header of %d bytes, want %d", ErrBadMessage, len(b), HeaderSize)
	}
	h := Header{
		Size:         binary.BigEndian.Uint32(b[0:]),
		Seq:          binary.BigEndian.Uint32(b[4:]),
		SessionID:    binary.BigEndian.Uint64(b[8:]),
		LastReceived: binary.BigEndian.Uint32(b[16:]),
		Type:         MsgType(binary.BigEndian.Uint32(b[20:])),
	}
	if h.Size < HeaderSize {
		return Header{}, fmt.Errorf("%w: message size %d is smaller than the %d-byte header", ErrBadMessage, h.Size, HeaderSize)
	}
	if !h.Type.known() {
		return Header{}, fmt.Errorf("%w: unknown message type %d", ErrBadMessage, uint32(h.Type))
	}
	return h, nil
}

// AppendHeader appends the encoding of h to dst.
func AppendHeader(dst []byte, h Header) []byte {
	dst = binary.BigEndian.AppendUint32(dst, h.Size)
	dst = binary.BigEndian.AppendUint32(dst, h.Seq)
	dst = binary.BigEndian.AppendUint64(dst, h.SessionID)
	dst = binary.BigEndian.AppendUint32(dst, h.LastReceived)
	return binary.BigEndian.AppendUint32(dst, uint32(h.Type))
}

// u32s encodes the fixed fields of a message body.
func u32s(v ...uint32) []byte {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.BigEndian.AppendUint32(b, x)
	}
	return b
}

// validSeq reports whether s is a sequence number (top bit clear).
func validSeq(s uint32) bool { return s <= maxSequence }

// nextSeq returns the sequence number after s, wrapping to 0 after
// 0x7fffffff as the public clients do.
func nextSeq(s uint32) uint32 { return (s + 1) & maxSequence }

// prevSeq returns the sequence number before s.
func prevSeq(s uint32) uint32 { return (s - 1) & maxSequence }

// seqBefore reports whether valid sequence number a comes before valid
// sequence number b, in serial number arithmetic over 31 bits (RFC 1982):
// b is at most 2^30-1 steps after a.
func seqBefore(a, b uint32) bool {
	d := (b - a) & maxSequence
	return d != 0 && d < 1<<30
}

// fmtSeq formats a sequence number field for messages and logs.
func fmtSeq(s uint32) string {
	if !validSeq(s) {
		return fmt.Sprintf("none(%#x)", s)
	}
	return fmt.Sprint(s)
}
