package peer

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// Data-plane message kinds. Every payload the reliable layer carries for a
// federate is one wireMsg, msgpack-encoded.
const (
	kindRegister    uint8 = 1 // an object instance exists (also the answer to a query)
	kindUpdate      uint8 = 2 // attribute values
	kindDelete      uint8 = 3 // an object instance is deleted
	kindInteraction uint8 = 4 // an interaction
	kindQuery       uint8 = 5 // "who has instances of this class?" from a new subscriber
	kindTime        uint8 = 6 // a time-management message (promise)
	kindResign      uint8 = 7 // the sender resigns
)

// wireMsg is the one data-plane message shape. Fields not used by a kind
// stay empty and cost nothing on the wire.
type wireMsg struct {
	Kind    uint8                `msgpack:"k"`
	ID      uint64               `msgpack:"i,omitempty"` // sender's message counter, for traces
	Obj     ObjectInstanceHandle `msgpack:"o,omitempty"`
	Class   uint64               `msgpack:"c,omitempty"`
	Name    string               `msgpack:"n,omitempty"`
	Values  map[uint64][]byte    `msgpack:"v,omitempty"`
	Tag     []byte               `msgpack:"g,omitempty"`
	TSO     bool                 `msgpack:"s,omitempty"`
	HasTime bool                 `msgpack:"h,omitempty"`
	Time    float64              `msgpack:"t,omitempty"`
	TimeMsg []byte               `msgpack:"m,omitempty"` // an encoded lbts message
}

func encodeMsg(m *wireMsg) ([]byte, error) {
	b, err := msgpack.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("peer: encode message: %w", err)
	}
	return b, nil
}

// decodeMsg decodes a payload; anything malformed is an error for the
// caller to count, never a panic.
func decodeMsg(b []byte) (*wireMsg, error) {
	var m wireMsg
	if err := msgpack.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("peer: malformed message: %w", err)
	}
	if m.Kind < kindRegister || m.Kind > kindResign {
		return nil, fmt.Errorf("peer: unknown message kind %d", m.Kind)
	}
	return &m, nil
}
