package record

import (
	"errors"
	"fmt"
	"hash/crc32"
	"time"
)

// Version is the format version this package writes and reads. A change
// that an older reader would misread takes a new version; readers refuse
// every version but their own rather than guess.
const Version = 1

// Magic opens every recording; the format version (2 bytes, big-endian)
// follows it.
const Magic = "MESHREC"

// preambleLen is the length of Magic plus the version.
const preambleLen = len(Magic) + 2

// frameHeaderLen is the length of a frame header: stored length (4),
// raw length (4), encoding (1), CRC-32C (4).
const frameHeaderLen = 13

// MaxFrame bounds both lengths of a frame (stored and raw), so a damaged
// length field cannot make a reader allocate without limit.
const MaxFrame = 16 << 20

// Frame encodings.
const (
	encStored  = 0 // the body as is
	encDeflate = 1 // the body compressed with raw DEFLATE (RFC 1951)
)

// Record kinds inside a frame's body.
const (
	recHeader      = 0x01
	recDiscover    = 0x02
	recUpdate      = 0x03
	recInteraction = 0x04
	recRemove      = 0x05
	recEnd         = 0x06
)

// Event flags.
const (
	flagTime    = 1 << 0 // a logical time follows
	flagTSO     = 1 << 1 // received in time-stamp order
	flagSentTSO = 1 << 2 // sent in time-stamp order
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Header describes the recorded federation. It is the first record of a
// file.
type Header struct {
	// Federation is the federation execution's name.
	Federation string
	// Recorder is the recording federate's name.
	Recorder string
	// Started is when the recording began (wall clock).
	Started time.Time
	// TimeRepresentation is HLAfloat64Time or HLAinteger64Time.
	TimeRepresentation string
	// MIM is the federation's MIM; Modules its FOM modules in the FDD's
	// order, each with the designator it was given and its text.
	MIM     Module
	Modules []Module
}

// Module is one FOM module (or the MIM) of the recorded federation.
type Module struct {
	Designator string
	Text       string
}

// Kind is an event's kind.
type Kind uint8

// The event kinds.
const (
	KindDiscover Kind = iota + 1
	KindUpdate
	KindInteraction
	KindRemove
)

// String is the kind's name as "record show -json" writes it.
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

var kindNames = [...]string{KindDiscover: "discover", KindUpdate: "update", KindInteraction: "interaction", KindRemove: "remove"}

// Event is one recorded callback.
type Event struct {
	Kind Kind
	// HasTime says whether the message carried a logical time, Time.
	HasTime bool
	Time    float64
	// TSO: received in time-stamp order (else receive order). SentTSO:
	// sent in time-stamp order.
	TSO     bool
	SentTSO bool
	// Federate is the producing federate's name.
	Federate string
	// Class is the fully qualified name of the object class (as the
	// recorder knew the instance) or the interaction class.
	Class string
	// Object is the instance's name; empty for an interaction.
	Object string
	// Transportation is the transportation type's name (updates and
	// interactions).
	Transportation string
	// Tag is the user-supplied tag (updates, interactions, removals).
	Tag []byte
	// Values are the attribute values of an update, the parameter values
	// of an interaction, in the order recorded; encoded as on the wire.
	Values []Value
}

// Value is one attribute or parameter value.
type Value struct {
	Name string
	Data []byte
}

// ErrNotRecording is returned for a file that does not start with Magic.
var ErrNotRecording = errors.New("record: not a meshrti recording (no MESHREC magic)")

// VersionError is returned for a recording of another format version.
type VersionError struct{ Got int }

func (e *VersionError) Error() string {
	return fmt.Sprintf("record: file format version %d; this program reads version %d only", e.Got, Version)
}

// DamageError says where reading stopped in a damaged or unfinished
// file: Offset is the byte offset of the frame that could not be read,
// Events how many events were read before it.
type DamageError struct {
	Offset int64
	Events int64
	Reason string
}

func (e *DamageError) Error() string {
	return fmt.Sprintf("record: stopped at byte %d after %d events: %s", e.Offset, e.Events, e.Reason)
}
