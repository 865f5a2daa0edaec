package reliable

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"

	"github.com/meshrti/meshrti/peer/dgram"
)

// Frame layout constants. All integers are big-endian.
//
//	offset size field
//	0      2    magic 0x6d72 ("mr")
//	2      1    version (3)
//	3      1    kind (low 6 bits) | 0x80 when authenticated | 0x40 to ask for an ACK
//	4      4    group
//	8      8    federation id (FederationID)
//	16     8    sender NodeID
//	24     8    sender incarnation
//	32     8    sequence
//	40     ...  body (depends on kind; encrypted when authenticated)
//
// then the trailer: unauthenticated, a CRC-32C of everything before it (4
// bytes); authenticated, the AES-GCM tag (16), the key id (1) and the
// frame counter (8). See seal.go.
//
// The body of a data, retransmit or best-effort frame is a bundle: one or
// more entries, entry i holding the message (or fragment) of sequence
// seq+i. An entry is a flags byte (entryMore, entryCont), the payload
// length as a uvarint, and the payload.
const (
	frameMagic   = 0x6d72
	frameVersion = 3
	// HeaderLen is the length of the fixed frame header.
	HeaderLen  = 40
	counterLen = 8
	tagLen     = 16
	crcLen     = 4
	// TrailerLen is what authentication adds to every frame: the AES-GCM
	// tag, the key id and the frame counter.
	TrailerLen = tagLen + 1 + counterLen
	authBit    = 0x80
	ackReqBit  = 0x40

	// Entry flags of a bundle entry.
	entryMore  = 1 << 0 // more fragments of this message follow
	entryCont  = 1 << 1 // continues a message begun in an earlier entry
	entryFlags = entryMore | entryCont

	heartbeatBodyLen = 8  // oldest sequence still held
	goneBodyLen      = 16 // from, to
	nakFixedLen      = 8 + 8 + 2
	helloBodyLen     = 8 + 8 + 8 + 8 // hw, target, incarnation, echo (a join HELLO: the join's age)
	syncBodyLen      = 10 * 8        // target, incarnation, nonce, echo, start, low, hw, cut, age, join
	nakRangeLen      = 16
	maxNakRanges     = 0xffff // the count field is 16 bits

	// MaxSeq is the largest valid sequence number; frames naming larger
	// ones are malformed (no sender gets there, and it keeps arithmetic
	// on sequence numbers from overflowing).
	MaxSeq = 1<<62 - 1
)

// kind is the frame type.
type kind uint8

const (
	kindData       kind = 1  // reliable data; seq = message sequence
	kindBestEffort kind = 2  // best-effort data; seq in the best-effort space
	kindHeartbeat  kind = 3  // seq = highest reliable seq sent; body = oldest held
	kindNAK        kind = 4  // body = target sender, incarnation, missing ranges
	kindRetransmit kind = 5  // a repaired reliable message; seq as in kindData
	kindGone       kind = 6  // seq = oldest held; body = the NAKed range that is gone
	kindHello      kind = 7  // seq = join nonce; body = hw vouched for, target (0: all), its incarnation, echo (target 0: the join's age in ticks)
	kindSync       kind = 8  // seq = join nonce; body = target, its incarnation and nonce, echo, start, low, hw, cut, the sender's join age and position
	kindAck        kind = 9  // seq = 0; body = count, then (sender, incarnation, delivered-through seq) each
	kindLeave      kind = 10 // seq = the join nonce left; body empty
	kindAimed      kind = 11 // best-effort data for one node; seq in the best-effort space; body = target, then a bundle of one entry
)

// addressed reports whether frames of kind k are meant for one node (the
// target their body names): they go to its inbox (Config.Inbox).
func (k kind) addressed() bool {
	return k == kindSync || k == kindNAK || k == kindAimed
}

// inboxed reports whether frames of kind k may come through an inbox:
// the addressed kinds, SYNC requests (HELLOs naming a target), and
// repairs and ACKs aimed at one node.
func (k kind) inboxed() bool {
	return k.addressed() || k == kindRetransmit || k == kindHello || k == kindAck
}

// addressedTo returns the node a frame of kind k with body names as its
// target, and whether it names one: a NAK, SYNC or aimed message (their
// bodies start with it), or a HELLO (the sender it asks for a SYNC; 0 for
// a join HELLO, which asks every member). Repairs and ACKs name none, and
// a body too short to hold the target is left to the checks of its kind.
func addressedTo(k kind, body []byte) (NodeID, bool) {
	off := 0
	switch {
	case k == kindHello:
		off = 8
	case !k.addressed():
		return 0, false
	}
	if len(body) < off+8 {
		return 0, false
	}
	return NodeID(binary.BigEndian.Uint64(body[off:])), true
}

// bundled reports whether frames of kind k carry a bundle of entries.
func (k kind) bundled() bool {
	return k == kindData || k == kindRetransmit || k == kindBestEffort || k == kindAimed
}

// kindNames are the kinds' names, for logs and errors.
var kindNames = [...]string{
	kindData: "data", kindBestEffort: "best-effort", kindHeartbeat: "heartbeat", kindNAK: "nak",
	kindRetransmit: "retransmit", kindGone: "gone", kindHello: "hello", kindSync: "sync",
	kindAck: "ack", kindLeave: "leave", kindAimed: "aimed",
}

func (k kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// header is the decoded fixed header.
type header struct {
	kind   kind
	auth   bool
	ackReq bool // the sender asks its receivers for an ACK
	group  dgram.Group
	fed    uint64
	sender NodeID
	inc    uint64
	seq    uint64
}

func putHeader(b []byte, h header) {
	binary.BigEndian.PutUint16(b[0:], frameMagic)
	b[2] = frameVersion
	b[3] = byte(h.kind)
	if h.auth {
		b[3] |= authBit
	}
	if h.ackReq {
		b[3] |= ackReqBit
	}
	binary.BigEndian.PutUint32(b[4:], uint32(h.group))
	binary.BigEndian.PutUint64(b[8:], h.fed)
	binary.BigEndian.PutUint64(b[16:], uint64(h.sender))
	binary.BigEndian.PutUint64(b[24:], h.inc)
	binary.BigEndian.PutUint64(b[32:], h.seq)
}

// parseHeader decodes the fixed header. It checks magic, version and kind.
func parseHeader(b []byte) (header, error) {
	if len(b) < HeaderLen {
		return header{}, fmt.Errorf("%w: %d bytes, shorter than the header", ErrMalformed, len(b))
	}
	if m := binary.BigEndian.Uint16(b); m != frameMagic {
		return header{}, fmt.Errorf("%w: bad magic %#04x", ErrMalformed, m)
	}
	if b[2] != frameVersion {
		return header{}, fmt.Errorf("%w %d", ErrVersion, b[2])
	}
	h := header{
		kind:   kind(b[3] &^ (authBit | ackReqBit)),
		auth:   b[3]&authBit != 0,
		ackReq: b[3]&ackReqBit != 0,
		group:  dgram.Group(binary.BigEndian.Uint32(b[4:])),
		fed:    binary.BigEndian.Uint64(b[8:]),
		sender: NodeID(binary.BigEndian.Uint64(b[16:])),
		inc:    binary.BigEndian.Uint64(b[24:]),
		seq:    binary.BigEndian.Uint64(b[32:]),
	}
	if h.kind < kindData || h.kind > kindAimed {
		return header{}, fmt.Errorf("%w: unknown %v", ErrMalformed, h.kind)
	}
	return h, nil
}

// seqRange is an inclusive range of sequence numbers.
type seqRange struct{ from, to uint64 }

// FederationID returns the 64-bit federation id carried by every frame:
// FNV-1a 64 of the federation name.
func FederationID(federation string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(federation))
	return h.Sum64()
}

// entry is one bundle entry: a message or a fragment of one.
type entry struct {
	flags   byte
	payload []byte
}

// appendEntry appends an entry to a bundle body.
func appendEntry(b []byte, flags byte, payload []byte) []byte {
	b = append(b, flags)
	b = binary.AppendUvarint(b, uint64(len(payload)))
	return append(b, payload...)
}

// entryOverhead is the most an entry adds to its payload of n bytes.
func entryOverhead(n int) int {
	var tmp [binary.MaxVarintLen64]byte
	return 1 + binary.PutUvarint(tmp[:], uint64(n))
}

// parseBundle checks a bundle body and returns its entries, appended to
// ents. Every entry must be well formed, with known flags, and the body
// must hold nothing else; the sequence numbers seq.. of the entries must
// stay valid.
func parseBundle(ents []entry, body []byte, seq uint64) ([]entry, error) {
	if len(body) == 0 {
		return ents, fmt.Errorf("%w: empty bundle", ErrMalformed)
	}
	for len(body) > 0 {
		flags := body[0]
		if flags&^entryFlags != 0 {
			return ents, fmt.Errorf("%w: entry flags %#x", ErrMalformed, flags)
		}
		n, k := binary.Uvarint(body[1:])
		if k <= 0 || n > uint64(len(body)-1-k) {
			return ents, fmt.Errorf("%w: entry length", ErrMalformed)
		}
		p := body[1+k : 1+k+int(n)]
		ents = append(ents, entry{flags: flags, payload: p[:len(p):len(p)]})
		body = body[1+k+int(n):]
	}
	if seq+uint64(len(ents))-1 > MaxSeq {
		return ents, fmt.Errorf("%w: bundle runs past the largest sequence", ErrMalformed)
	}
	return ents, nil
}
