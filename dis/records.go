package dis

import (
	"encoding/binary"
	"math"
	"time"
)

// EntityID identifies an entity in a DIS exercise: the simulation
// address (site, application) and the entity's number there.
type EntityID struct {
	Site, Application, Entity uint16
}

// IsZero reports whether id is (0, 0, 0), DIS's "no entity".
func (id EntityID) IsZero() bool { return id == EntityID{} }

// EventID identifies a fire and the detonations that follow it.
type EventID struct {
	Site, Application, Event uint16
}

// EntityType is the seven-field type of an entity or munition
// (SISO-REF-010 enumerations).
type EntityType struct {
	Kind, Domain                           uint8
	Country                                uint16
	Category, Subcategory, Specific, Extra uint8
}

// Entity kinds of SISO-REF-010.
const (
	KindOther       uint8 = 0
	KindPlatform    uint8 = 1
	KindMunition    uint8 = 2
	KindLifeform    uint8 = 3
	KindEnvironment uint8 = 4
	KindCultural    uint8 = 5
	KindSupply      uint8 = 6
	KindRadio       uint8 = 7
	KindExpendable  uint8 = 8
	KindSensor      uint8 = 9
)

// Platform domains of SISO-REF-010.
const (
	DomainOther      uint8 = 0
	DomainLand       uint8 = 1
	DomainAir        uint8 = 2
	DomainSurface    uint8 = 3
	DomainSubsurface uint8 = 4
	DomainSpace      uint8 = 5
)

// Vector is a vector of three 32-bit floats: a velocity, an
// acceleration, an angular velocity, a location in entity coordinates.
type Vector struct{ X, Y, Z float32 }

// WorldCoordinates is a location in the geocentric (earth-centred,
// earth-fixed) frame of WGS84, in metres.
type WorldCoordinates struct{ X, Y, Z float64 }

// EulerAngles is an orientation: psi, theta, phi in radians.
type EulerAngles struct{ Psi, Theta, Phi float32 }

// Dead-reckoning algorithms (1278.1 annex E).
const (
	DROther  uint8 = 0
	DRStatic uint8 = 1
	DRFPW    uint8 = 2
	DRRPW    uint8 = 3
	DRRVW    uint8 = 4
	DRFVW    uint8 = 5
	DRFPB    uint8 = 6
	DRRPB    uint8 = 7
	DRRVB    uint8 = 8
	DRFVB    uint8 = 9
)

// DeadReckoning is the dead-reckoning parameters record.
type DeadReckoning struct {
	Algorithm uint8
	// Other is the 15 octets of "other parameters" (in 1278.1-2012 they
	// may hold a rotation quaternion); carried as octets.
	Other              [15]byte
	LinearAcceleration Vector
	AngularVelocity    Vector
}

// Marking is the entity marking: a character set and 11 octets.
type Marking struct {
	CharacterSet uint8
	Text         [11]byte
}

// String returns the marking's text up to its first NUL.
func (m Marking) String() string {
	n := 0
	for n < len(m.Text) && m.Text[n] != 0 {
		n++
	}
	return string(m.Text[:n])
}

// NewMarking returns an ASCII marking (character set 1) of s, cut to 11
// octets.
func NewMarking(s string) Marking {
	m := Marking{CharacterSet: 1}
	copy(m.Text[:], s)
	return m
}

// Variable parameter record types (1278.1-2012 "Variable Parameter
// Record Type"; in 1278.1-1995 the "parameter type designator" of an
// articulation parameter, 0 and 1 only).
const (
	ParamArticulatedPart   uint8 = 0
	ParamAttachedPart      uint8 = 1
	ParamSeparation        uint8 = 2
	ParamEntityType        uint8 = 3
	ParamEntityAssociation uint8 = 4
)

// VariableParameter is one 16-octet variable parameter record (an
// articulation parameter in 1278.1-1995), kept as octets: the first is
// the record type, the other 15 its fields. The layouts of the
// articulated and attached part records are the same in both versions;
// Articulated and Attached read them.
type VariableParameter [16]byte

// RecordType is the record's first octet.
func (p VariableParameter) RecordType() uint8 { return p[0] }

// ArticulatedPart is the articulated part record: record type 0, a
// change indicator, the part it is attached to, its parameter type (the
// part's class plus the metric, SISO-REF-010) and value. The value is a
// 32-bit float in the first four octets of the 64-bit value field, as
// 1278.1a-1998 and 1278.1-2012 lay it out.
type ArticulatedPart struct {
	Change        uint8
	AttachedTo    uint16
	ParameterType uint32
	Value         float32
}

// AttachedPart is the attached part record: record type 1, detached
// indicator, the part it is attached to, the station, and the store's
// entity type.
type AttachedPart struct {
	Detached   uint8
	AttachedTo uint16
	Station    uint32
	Store      EntityType
}

// Articulated reads p as an articulated part record; false when its
// record type is another.
func (p VariableParameter) Articulated() (ArticulatedPart, bool) {
	if p[0] != ParamArticulatedPart {
		return ArticulatedPart{}, false
	}
	return ArticulatedPart{
		Change: p[1], AttachedTo: be16(p[2:]), ParameterType: be32(p[4:]),
		Value: math.Float32frombits(be32(p[8:])),
	}, true
}

// Attached reads p as an attached part record; false when its record
// type is another.
func (p VariableParameter) Attached() (AttachedPart, bool) {
	if p[0] != ParamAttachedPart {
		return AttachedPart{}, false
	}
	return AttachedPart{Detached: p[1], AttachedTo: be16(p[2:]), Station: be32(p[4:]), Store: readType(p[8:])}, true
}

// Param returns the variable parameter record of a.
func (a ArticulatedPart) Param() VariableParameter {
	var p VariableParameter
	p[0], p[1] = ParamArticulatedPart, a.Change
	binary.BigEndian.PutUint16(p[2:], a.AttachedTo)
	binary.BigEndian.PutUint32(p[4:], a.ParameterType)
	binary.BigEndian.PutUint32(p[8:], math.Float32bits(a.Value))
	return p
}

// Param returns the variable parameter record of a.
func (a AttachedPart) Param() VariableParameter {
	var p VariableParameter
	p[0], p[1] = ParamAttachedPart, a.Detached
	binary.BigEndian.PutUint16(p[2:], a.AttachedTo)
	binary.BigEndian.PutUint32(p[4:], a.Station)
	putType(p[8:], a.Store)
	return p
}

// BurstDescriptor describes the munition of a fire or detonation (the
// munition descriptor of 1278.1-2012: the same octets).
type BurstDescriptor struct {
	Munition                      EntityType
	Warhead, Fuse, Quantity, Rate uint16
}

// Timestamp is the DIS time stamp of t: the time past the hour in units
// of 3600/2^31 s in the upper 31 bits, and in the lowest bit 1 for
// absolute time (clocks synchronized to UTC), 0 for relative.
func Timestamp(t time.Time, absolute bool) uint32 {
	t = t.UTC()
	past := time.Duration(t.Minute())*time.Minute + time.Duration(t.Second())*time.Second + time.Duration(t.Nanosecond())
	units := uint32(float64(past) / float64(time.Hour) * (1 << 31))
	if units >= 1<<31 {
		units = 1<<31 - 1
	}
	ts := units << 1
	if absolute {
		ts |= 1
	}
	return ts
}

// TimestampPastHour returns the time past the hour a time stamp says,
// and whether it is absolute.
func TimestampPastHour(ts uint32) (time.Duration, bool) {
	return time.Duration(float64(ts>>1) / (1 << 31) * float64(time.Hour)), ts&1 == 1
}

func be16(b []byte) uint16 { return binary.BigEndian.Uint16(b) }
func be32(b []byte) uint32 { return binary.BigEndian.Uint32(b) }
func f32(b []byte) float32 { return math.Float32frombits(be32(b)) }
func f64(b []byte) float64 { return math.Float64frombits(binary.BigEndian.Uint64(b)) }

func readID(b []byte) EntityID {
	return EntityID{Site: be16(b), Application: be16(b[2:]), Entity: be16(b[4:])}
}

func readEvent(b []byte) EventID {
	return EventID{Site: be16(b), Application: be16(b[2:]), Event: be16(b[4:])}
}

func readType(b []byte) EntityType {
	return EntityType{Kind: b[0], Domain: b[1], Country: be16(b[2:]), Category: b[4], Subcategory: b[5], Specific: b[6], Extra: b[7]}
}

func readVector(b []byte) Vector { return Vector{f32(b), f32(b[4:]), f32(b[8:])} }

func readWorld(b []byte) WorldCoordinates { return WorldCoordinates{f64(b), f64(b[8:]), f64(b[16:])} }

func readBurst(b []byte) BurstDescriptor {
	return BurstDescriptor{Munition: readType(b), Warhead: be16(b[8:]), Fuse: be16(b[10:]), Quantity: be16(b[12:]), Rate: be16(b[14:])}
}

func putType(b []byte, t EntityType) {
	b[0], b[1] = t.Kind, t.Domain
	binary.BigEndian.PutUint16(b[2:], t.Country)
	b[4], b[5], b[6], b[7] = t.Category, t.Subcategory, t.Specific, t.Extra
}

func appendU16(b []byte, v uint16) []byte { return binary.BigEndian.AppendUint16(b, v) }
func appendU32(b []byte, v uint32) []byte { return binary.BigEndian.AppendUint32(b, v) }
func appendF32(b []byte, v float32) []byte {
	return binary.BigEndian.AppendUint32(b, math.Float32bits(v))
}
func appendF64(b []byte, v float64) []byte {
	return binary.BigEndian.AppendUint64(b, math.Float64bits(v))
}

func appendID(b []byte, id EntityID) []byte {
	return appendU16(appendU16(appendU16(b, id.Site), id.Application), id.Entity)
}

func appendEvent(b []byte, id EventID) []byte {
	return appendU16(appendU16(appendU16(b, id.Site), id.Application), id.Event)
}

func appendType(b []byte, t EntityType) []byte {
	var a [8]byte
	putType(a[:], t)
	return append(b, a[:]...)
}

func appendVector(b []byte, v Vector) []byte {
	return appendF32(appendF32(appendF32(b, v.X), v.Y), v.Z)
}

func appendWorld(b []byte, w WorldCoordinates) []byte {
	return appendF64(appendF64(appendF64(b, w.X), w.Y), w.Z)
}

func appendBurst(b []byte, d BurstDescriptor) []byte {
	b = appendType(b, d.Munition)
	return appendU16(appendU16(appendU16(appendU16(b, d.Warhead), d.Fuse), d.Quantity), d.Rate)
}
