package gossip

// This file holds the wire format of user messages and the one function
// that decodes bytes from elsewhere. Everything another process sent (a
// user message, a push-pull state, a log entry, a snapshot, a node's
// metadata) is decoded through decode, never msgpack.Unmarshal directly.

import (
	"fmt"

	"github.com/meshrti/meshrti/gossip/internal/agree"
	"github.com/vmihailenco/msgpack/v5"
)

// Wire format of user messages: one tag byte, then msgpack.
const (
	wireAgree byte = 0xA1 // a replica message
	wireState byte = 0xA2 // a replicated-state entry
	wireBye   byte = 0xA3 // the sender is leaving on purpose
)

// maxGossip is the largest message sent through memberlist's gossip (UDP)
// broadcasts; larger ones go over the reliable channel.
const maxGossip = 1000

// maxDataPlaneName bounds FederationSpec.DataPlane. (The size limits of
// the agreement's ops, log entries and catch-up answers are agree's:
// agree.MaxModuleBytes and the others.)
const maxDataPlaneName = 64

func encodeWire(tag byte, v any) []byte {
	buf, err := msgpack.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("gossip: encoding a message: %v", err))
	}
	return append([]byte{tag}, buf...)
}

// decode decodes one msgpack value from buf into v after checking that
// every length it declares fits in what follows (agree.Decode).
func decode(buf []byte, v any) error { return agree.Decode(buf, v) }
