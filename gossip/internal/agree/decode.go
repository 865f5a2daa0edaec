package agree

// Everything another process sent that the agreement decodes (a log
// entry, a snapshot, a message), package gossip too, goes through Decode,
// never msgpack.Unmarshal directly.

import (
	"encoding/binary"
	"errors"

	"github.com/vmihailenco/msgpack/v5"
)

// Size limits that keep every message under memberlist's 20 MB limit on a
// reliable user message (a larger one is dropped by the receiver, and
// resending it would never help).
const (
	// MaxModuleBytes bounds the total Content of a federation's modules,
	// and so the largest op, log entry and snapshot.
	MaxModuleBytes = 8 << 20
	// MaxBatchBytes bounds a log entry's ops (roughly: their payloads);
	// an entry holds at least one op whatever its size.
	MaxBatchBytes = 1 << 20
	// MaxSyncBytes bounds the entries of one catch-up answer; an answer
	// holds at least one entry whatever its size.
	MaxSyncBytes = 4 << 20
)

// Decode decodes one msgpack value from buf into v after checking that
// every length it declares fits in what follows. msgpack (v5.4.1) sizes a
// slice by its declared length before reading the elements, so eight
// hostile bytes declaring 2^32 elements would make it allocate hundreds
// of gigabytes and kill the process; checked first, the allocation stays
// proportional to len(buf).
func Decode(buf []byte, v any) error {
	if err := CheckMsgpack(buf); err != nil {
		return err
	}
	return msgpack.Unmarshal(buf, v)
}

var errMsgpackLength = errors.New("msgpack: a declared length exceeds the input")

// CheckMsgpack walks the first msgpack value in buf without allocating.
// It fails when the value is cut short, uses the reserved code 0xc1, or
// declares a string, binary, extension, array or map longer than the
// bytes left (every array element and map key or value takes at least
// one byte).
func CheckMsgpack(buf []byte) error {
	pending := uint64(1) // values still to read
	i := 0
	for pending > 0 {
		if i >= len(buf) {
			return errMsgpackLength
		}
		c := buf[i]
		i++
		pending--
		var (
			skip  uint64 // payload bytes after the header
			items uint64 // nested values that follow
			lenSz int    // bytes of the length field
			extra uint64 // fixed bytes besides the length (ext type)
		)
		switch {
		case c <= 0x7f || c >= 0xe0: // fixint
		case c <= 0x8f: // fixmap
			items = 2 * uint64(c&0x0f)
		case c <= 0x9f: // fixarray
			items = uint64(c & 0x0f)
		case c <= 0xbf: // fixstr
			skip = uint64(c & 0x1f)
		default:
			switch c {
			case 0xc0, 0xc2, 0xc3: // nil, false, true
			case 0xc1:
				return errors.New("msgpack: reserved code 0xc1")
			case 0xc4, 0xd9: // bin8, str8
				lenSz = 1
			case 0xc5, 0xda: // bin16, str16
				lenSz = 2
			case 0xc6, 0xdb: // bin32, str32
				lenSz = 4
			case 0xc7: // ext8
				lenSz, extra = 1, 1
			case 0xc8: // ext16
				lenSz, extra = 2, 1
			case 0xc9: // ext32
				lenSz, extra = 4, 1
			case 0xca, 0xce, 0xd2: // float32, uint32, int32
				skip = 4
			case 0xcb, 0xcf, 0xd3: // float64, uint64, int64
				skip = 8
			case 0xcc, 0xd0: // uint8, int8
				skip = 1
			case 0xcd, 0xd1: // uint16, int16
				skip = 2
			case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1, 2, 4, 8, 16
				skip = 1 + 1<<(c-0xd4)
			case 0xdc: // array16
				lenSz = 2
			case 0xdd: // array32
				lenSz = 4
			case 0xde: // map16
				lenSz = 2
			case 0xdf: // map32
				lenSz = 4
			}
		}
		if lenSz > 0 {
			if len(buf)-i < lenSz {
				return errMsgpackLength
			}
			var n uint64
			switch lenSz {
			case 1:
				n = uint64(buf[i])
			case 2:
				n = uint64(binary.BigEndian.Uint16(buf[i:]))
			case 4:
				n = uint64(binary.BigEndian.Uint32(buf[i:]))
			}
			i += lenSz
			switch c {
			case 0xdc, 0xdd:
				items = n
			case 0xde, 0xdf:
				items = 2 * n
			default:
				skip = n + extra
			}
		}
		left := uint64(len(buf) - i)
		if skip > left {
			return errMsgpackLength
		}
		i += int(skip)
		pending += items
		if pending > left-skip {
			return errMsgpackLength
		}
	}
	return nil
}
