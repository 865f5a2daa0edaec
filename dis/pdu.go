package dis

import (
	"encoding/binary"
	"fmt"
	"math"
)

// PDU types this package decodes.
const (
	TypeEntityState uint8 = 1
	TypeFire        uint8 = 2
	TypeDetonation  uint8 = 3
	TypeAttribute   uint8 = 72
)

// Protocol families of those types.
const (
	FamilyEntityInformation uint8 = 1
	FamilyWarfare           uint8 = 2
)

// Protocol versions: 5 is IEEE 1278.1-1995, 6 is 1278.1a-1998 (the
// same layouts; "version 6" is what DIS users call both), 7 is
// 1278.1-2012.
const (
	Version5 uint8 = 5
	Version6 uint8 = 6
	Version7 uint8 = 7
)

// HeaderSize is the size of the PDU header in octets.
const HeaderSize = 12

// Fixed sizes of the PDUs, without their variable records.
const (
	entityStateSize = 144
	fireSize        = 96
	detonationSize  = 104
	attributeSize   = 32
	paramSize       = 16
	recordSetHead   = 8
	recordHead      = 6
)

// MaxPDUSize is the largest PDU the length field can describe.
const MaxPDUSize = math.MaxUint16

// Header is the PDU header. In version 7 the octet after the length is
// the PDU status; in versions 5 and 6 both octets are padding (Status is
// then neither read nor written).
type Header struct {
	Version   uint8
	Exercise  uint8
	Type      uint8
	Family    uint8
	Timestamp uint32
	// Length is the PDU's length in octets, as read; encoding computes
	// it.
	Length uint16
	Status uint8
}

// PDU is one decoded PDU: *EntityState, *Fire, *Detonation or
// *Attribute.
type PDU interface {
	// PDUHeader returns the PDU's header, for reading or setting.
	PDUHeader() *Header
	// Append appends the PDU's octets to b: its header (Type, Family
	// and Length set from the PDU; Version 0 means 7) and body.
	Append(b []byte) ([]byte, error)
}

// FamilyOf returns the protocol family of a PDU type this package
// decodes, and false for another type.
func FamilyOf(typ uint8) (uint8, bool) {
	switch typ {
	case TypeEntityState, TypeAttribute:
		return FamilyEntityInformation, true
	case TypeFire, TypeDetonation:
		return FamilyWarfare, true
	}
	return 0, false
}

// TypeName names a PDU type for metric labels: entity_state, fire,
// detonation, attribute, or other.
func TypeName(typ uint8) string {
	switch typ {
	case TypeEntityState:
		return "entity_state"
	case TypeFire:
		return "fire"
	case TypeDetonation:
		return "detonation"
	case TypeAttribute:
		return "attribute"
	}
	return "other"
}

// ReadHeader reads the header of a datagram and checks its version and
// length against the datagram's. It decodes no body.
func ReadHeader(b []byte) (Header, error) {
	if len(b) < HeaderSize {
		return Header{}, &DecodeError{Reason: ReasonShort, Detail: fmt.Sprintf("%d octets, fewer than a header", len(b))}
	}
	h := Header{Version: b[0], Exercise: b[1], Type: b[2], Family: b[3], Timestamp: be32(b[4:]), Length: be16(b[8:])}
	fail := func(r Reason, format string, args ...any) (Header, error) {
		return h, &DecodeError{Reason: r, Version: h.Version, Exercise: h.Exercise, Type: h.Type, Family: h.Family, Detail: fmt.Sprintf(format, args...)}
	}
	switch h.Version {
	case Version5, Version6:
	case Version7:
		h.Status = b[10]
	default:
		return fail(ReasonUnknownVersion, "version %d", h.Version)
	}
	switch {
	case len(b) < int(h.Length):
		return fail(ReasonShort, "%d octets, length field %d", len(b), h.Length)
	case len(b) > int(h.Length):
		return fail(ReasonLength, "%d octets, length field %d", len(b), h.Length)
	}
	return h, nil
}

// Decode decodes one datagram holding one PDU of any exercise. Errors
// are *DecodeError.
func Decode(b []byte) (PDU, error) { return decode(b, -1) }

// DecodeExercise decodes one datagram holding one PDU of the exercise
// given; a PDU of another exercise is a ReasonOtherExercise error.
func DecodeExercise(b []byte, exercise uint8) (PDU, error) { return decode(b, int(exercise)) }

func decode(b []byte, exercise int) (PDU, error) {
	h, err := ReadHeader(b)
	if err != nil {
		return nil, err
	}
	fail := func(r Reason, format string, args ...any) (PDU, error) {
		return nil, &DecodeError{Reason: r, Version: h.Version, Exercise: h.Exercise, Type: h.Type, Family: h.Family, Detail: fmt.Sprintf(format, args...)}
	}
	if exercise >= 0 && int(h.Exercise) != exercise {
		return fail(ReasonOtherExercise, "exercise %d, want %d", h.Exercise, exercise)
	}
	fam, ok := FamilyOf(h.Type)
	if !ok {
		return fail(ReasonUnknownType, "type %d", h.Type)
	}
	if h.Family != fam {
		return fail(ReasonUnknownFamily, "family %d for type %d (want %d)", h.Family, h.Type, fam)
	}
	var p PDU
	var r Reason
	var detail string
	switch h.Type {
	case TypeEntityState:
		es := &EntityState{Header: h}
		r, detail = es.decode(b)
		p = es
	case TypeFire:
		f := &Fire{Header: h}
		r, detail = f.decode(b)
		p = f
	case TypeDetonation:
		d := &Detonation{Header: h}
		r, detail = d.decode(b)
		p = d
	default:
		a := &Attribute{Header: h}
		r, detail = a.decode(b)
		p = a
	}
	if r != 0 {
		return fail(r, "%s", detail)
	}
	return p, nil
}

// Encode returns the octets of p (see PDU.Append).
func Encode(p PDU) ([]byte, error) { return p.Append(nil) }

// appendHeader appends h with the type and family given and a zero
// length, which finish fills in.
func appendHeader(b []byte, h *Header, typ uint8) []byte {
	v := h.Version
	if v == 0 {
		v = Version7
	}
	fam, _ := FamilyOf(typ)
	b = append(b, v, h.Exercise, typ, fam)
	b = appendU32(b, h.Timestamp)
	b = append(b, 0, 0) // length, set by finish
	if v == Version7 {
		return append(b, h.Status, 0)
	}
	return append(b, 0, 0)
}

// finish writes the length of the PDU that starts at start of b.
func finish(b []byte, start int) ([]byte, error) {
	n := len(b) - start
	if n > MaxPDUSize {
		return b[:start], fmt.Errorf("dis: PDU of %d octets does not fit the length field", n)
	}
	binary.BigEndian.PutUint16(b[start+8:], uint16(n))
	return b, nil
}

// sizeCheck compares a PDU's length field with the size its fields
// call for: fewer octets is short, more is a length mismatch.
func sizeCheck(length, want int, what string) (Reason, string) {
	switch {
	case length < want:
		return ReasonShort, fmt.Sprintf("%s needs %d octets, length %d", what, want, length)
	case length > want:
		return ReasonLength, fmt.Sprintf("%s takes %d octets, length %d", what, want, length)
	}
	return 0, ""
}

// paramsCheck checks the size of a PDU of size octets and then as many
// variable parameters as the octet at countAt says; what names the PDU
// in the description of a wrong size, only made when the size is wrong.
func paramsCheck(b []byte, size, countAt int, what string) (int, Reason, string) {
	if len(b) < size {
		return 0, ReasonShort, fmt.Sprintf("%s of %d octets, fewer than %d", what, len(b), size)
	}
	n := int(b[countAt])
	if want := size + n*paramSize; len(b) != want {
		r, d := sizeCheck(len(b), want, fmt.Sprintf("%s with %d parameters", what, n))
		return n, r, d
	}
	return n, 0, ""
}

func readParams(b []byte, n int) []VariableParameter {
	if n == 0 {
		return nil
	}
	ps := make([]VariableParameter, n)
	for i := range ps {
		copy(ps[i][:], b[i*paramSize:])
	}
	return ps
}

// EntityState is the Entity State PDU (type 1).
type EntityState struct {
	Header
	ID                  EntityID
	Force               uint8
	Type, AlternateType EntityType
	Velocity            Vector
	Location            WorldCoordinates
	Orientation         EulerAngles
	Appearance          uint32
	DeadReckoning       DeadReckoning
	Marking             Marking
	Capabilities        uint32
	Parameters          []VariableParameter
}

// PDUHeader returns the header.
func (p *EntityState) PDUHeader() *Header { return &p.Header }

func (p *EntityState) decode(b []byte) (Reason, string) {
	n, r, d := paramsCheck(b, entityStateSize, 19, "entity state")
	if r != 0 {
		return r, d
	}
	p.ID = readID(b[12:])
	p.Force = b[18]
	p.Type = readType(b[20:])
	p.AlternateType = readType(b[28:])
	p.Velocity = readVector(b[36:])
	p.Location = readWorld(b[48:])
	p.Orientation = EulerAngles{f32(b[72:]), f32(b[76:]), f32(b[80:])}
	p.Appearance = be32(b[84:])
	p.DeadReckoning.Algorithm = b[88]
	copy(p.DeadReckoning.Other[:], b[89:104])
	p.DeadReckoning.LinearAcceleration = readVector(b[104:])
	p.DeadReckoning.AngularVelocity = readVector(b[116:])
	p.Marking.CharacterSet = b[128]
	copy(p.Marking.Text[:], b[129:140])
	p.Capabilities = be32(b[140:])
	p.Parameters = readParams(b[entityStateSize:], n)
	return 0, ""
}

// Append appends the PDU's octets.
func (p *EntityState) Append(b []byte) ([]byte, error) {
	if len(p.Parameters) > math.MaxUint8 {
		return b, fmt.Errorf("dis: %d variable parameters, more than 255", len(p.Parameters))
	}
	start := len(b)
	b = appendHeader(b, &p.Header, TypeEntityState)
	b = appendID(b, p.ID)
	b = append(b, p.Force, uint8(len(p.Parameters)))
	b = appendType(b, p.Type)
	b = appendType(b, p.AlternateType)
	b = appendVector(b, p.Velocity)
	b = appendWorld(b, p.Location)
	b = appendF32(appendF32(appendF32(b, p.Orientation.Psi), p.Orientation.Theta), p.Orientation.Phi)
	b = appendU32(b, p.Appearance)
	b = append(b, p.DeadReckoning.Algorithm)
	b = append(b, p.DeadReckoning.Other[:]...)
	b = appendVector(b, p.DeadReckoning.LinearAcceleration)
	b = appendVector(b, p.DeadReckoning.AngularVelocity)
	b = append(b, p.Marking.CharacterSet)
	b = append(b, p.Marking.Text[:]...)
	b = appendU32(b, p.Capabilities)
	for i := range p.Parameters {
		b = append(b, p.Parameters[i][:]...)
	}
	return finish(b, start)
}

// Fire is the Fire PDU (type 2). In 1278.1-2012 the munition is the
// "munition/expendable" and the burst descriptor a "descriptor" record
// of the same octets.
type Fire struct {
	Header
	Firing, Target, Munition EntityID
	Event                    EventID
	FireMissionIndex         uint32
	Location                 WorldCoordinates
	Burst                    BurstDescriptor
	Velocity                 Vector
	Range                    float32
}

// PDUHeader returns the header.
func (p *Fire) PDUHeader() *Header { return &p.Header }

func (p *Fire) decode(b []byte) (Reason, string) {
	if r, d := sizeCheck(len(b), fireSize, "fire"); r != 0 {
		return r, d
	}
	p.Firing, p.Target, p.Munition = readID(b[12:]), readID(b[18:]), readID(b[24:])
	p.Event = readEvent(b[30:])
	p.FireMissionIndex = be32(b[36:])
	p.Location = readWorld(b[40:])
	p.Burst = readBurst(b[64:])
	p.Velocity = readVector(b[80:])
	p.Range = f32(b[92:])
	return 0, ""
}

// Append appends the PDU's octets.
func (p *Fire) Append(b []byte) ([]byte, error) {
	start := len(b)
	b = appendHeader(b, &p.Header, TypeFire)
	b = appendID(appendID(appendID(b, p.Firing), p.Target), p.Munition)
	b = appendEvent(b, p.Event)
	b = appendU32(b, p.FireMissionIndex)
	b = appendWorld(b, p.Location)
	b = appendBurst(b, p.Burst)
	b = appendVector(b, p.Velocity)
	b = appendF32(b, p.Range)
	return finish(b, start)
}

// Detonation is the Detonation PDU (type 3).
type Detonation struct {
	Header
	Firing, Target, Munition EntityID
	Event                    EventID
	Velocity                 Vector
	Location                 WorldCoordinates
	Burst                    BurstDescriptor
	// EntityLocation is the location of the detonation in the target's
	// entity coordinates.
	EntityLocation Vector
	Result         uint8
	Parameters     []VariableParameter
}

// PDUHeader returns the header.
func (p *Detonation) PDUHeader() *Header { return &p.Header }

func (p *Detonation) decode(b []byte) (Reason, string) {
	n, r, d := paramsCheck(b, detonationSize, 101, "detonation")
	if r != 0 {
		return r, d
	}
	p.Firing, p.Target, p.Munition = readID(b[12:]), readID(b[18:]), readID(b[24:])
	p.Event = readEvent(b[30:])
	p.Velocity = readVector(b[36:])
	p.Location = readWorld(b[48:])
	p.Burst = readBurst(b[72:])
	p.EntityLocation = readVector(b[88:])
	p.Result = b[100]
	p.Parameters = readParams(b[detonationSize:], n)
	return 0, ""
}

// Append appends the PDU's octets.
func (p *Detonation) Append(b []byte) ([]byte, error) {
	if len(p.Parameters) > math.MaxUint8 {
		return b, fmt.Errorf("dis: %d variable parameters, more than 255", len(p.Parameters))
	}
	start := len(b)
	b = appendHeader(b, &p.Header, TypeDetonation)
	b = appendID(appendID(appendID(b, p.Firing), p.Target), p.Munition)
	b = appendEvent(b, p.Event)
	b = appendVector(b, p.Velocity)
	b = appendWorld(b, p.Location)
	b = appendBurst(b, p.Burst)
	b = appendVector(b, p.EntityLocation)
	b = append(b, p.Result, uint8(len(p.Parameters)), 0, 0)
	for i := range p.Parameters {
		b = append(b, p.Parameters[i][:]...)
	}
	return finish(b, start)
}

// Attribute is the Attribute PDU (type 72, 1278.1-2012): records that
// extend the state of entities, by record sets of one entity each.
type Attribute struct {
	Header
	// Origin is the simulation address (site, application) of the
	// sender; its Entity is not sent.
	Origin EntityID
	// RecordPDUType and RecordProtocolVersion are the type of the PDU the
	// records extend (1, Entity State) and its protocol family.
	RecordPDUType, RecordProtocolVersion uint8
	// MasterRecordType is the type of every record, or 0 when they
	// differ.
	MasterRecordType uint32
	ActionCode       uint8
	Sets             []AttributeRecordSet
}

// AttributeRecordSet is the records of one entity.
type AttributeRecordSet struct {
	Entity  EntityID
	Records []AttributeRecord
}

// AttributeRecord is one attribute record: its type and its
// record-specific fields (Data), padding included. On the wire the
// record's length is 6 plus len(Data); Append pads Data with zeros to a
// multiple of 8 octets in all.
type AttributeRecord struct {
	Type uint32
	Data []byte
}

// PDUHeader returns the header.
func (p *Attribute) PDUHeader() *Header { return &p.Header }

func (p *Attribute) decode(b []byte) (Reason, string) {
	if len(b) < attributeSize {
		return ReasonShort, fmt.Sprintf("attribute of %d octets, fewer than %d", len(b), attributeSize)
	}
	p.Origin = EntityID{Site: be16(b[12:]), Application: be16(b[14:])}
	p.RecordPDUType, p.RecordProtocolVersion = b[22], b[23]
	p.MasterRecordType = be32(b[24:])
	p.ActionCode = b[28]
	nsets := int(be16(b[30:]))
	rest := b[attributeSize:]
	// Each set takes at least its 8-octet head: no more sets than the
	// octets left could hold are allocated.
	if nsets*recordSetHead > len(rest) {
		return ReasonShort, fmt.Sprintf("%d record sets in %d octets", nsets, len(rest))
	}
	p.Sets = make([]AttributeRecordSet, nsets)
	for i := range p.Sets {
		if len(rest) < recordSetHead {
			return ReasonShort, fmt.Sprintf("record set %d: %d octets left", i, len(rest))
		}
		s := &p.Sets[i]
		s.Entity = readID(rest)
		nrec := int(be16(rest[6:]))
		rest = rest[recordSetHead:]
		if nrec*recordHead > len(rest) {
			return ReasonShort, fmt.Sprintf("record set %d: %d records in %d octets", i, nrec, len(rest))
		}
		s.Records = make([]AttributeRecord, nrec)
		for j := range s.Records {
			if len(rest) < recordHead {
				return ReasonShort, fmt.Sprintf("record set %d, record %d: %d octets left", i, j, len(rest))
			}
			n := int(be16(rest[4:]))
			if n < recordHead {
				return ReasonShort, fmt.Sprintf("record set %d, record %d: length %d", i, j, n)
			}
			if n > len(rest) {
				return ReasonShort, fmt.Sprintf("record set %d, record %d: length %d, %d octets left", i, j, n, len(rest))
			}
			s.Records[j] = AttributeRecord{Type: be32(rest), Data: append([]byte(nil), rest[recordHead:n]...)}
			rest = rest[n:]
		}
	}
	if len(rest) > 0 {
		return ReasonLength, fmt.Sprintf("%d octets after the last record set", len(rest))
	}
	return 0, ""
}

// Append appends the PDU's octets.
func (p *Attribute) Append(b []byte) ([]byte, error) {
	if len(p.Sets) > math.MaxUint16 {
		return b, fmt.Errorf("dis: %d attribute record sets, more than 65535", len(p.Sets))
	}
	start := len(b)
	b = appendHeader(b, &p.Header, TypeAttribute)
	b = appendU16(appendU16(b, p.Origin.Site), p.Origin.Application)
	b = append(b, 0, 0, 0, 0, 0, 0) // padding: 32 and 16 bits
	b = append(b, p.RecordPDUType, p.RecordProtocolVersion)
	b = appendU32(b, p.MasterRecordType)
	b = append(b, p.ActionCode, 0)
	b = appendU16(b, uint16(len(p.Sets)))
	for _, s := range p.Sets {
		if len(s.Records) > math.MaxUint16 {
			return b[:start], fmt.Errorf("dis: %d attribute records for one entity, more than 65535", len(s.Records))
		}
		b = appendID(b, s.Entity)
		b = appendU16(b, uint16(len(s.Records)))
		for _, r := range s.Records {
			n := recordHead + len(r.Data)
			pad := (8 - n%8) % 8
			if n+pad > math.MaxUint16 {
				return b[:start], fmt.Errorf("dis: attribute record of %d octets", n)
			}
			b = appendU32(b, r.Type)
			b = appendU16(b, uint16(n+pad))
			b = append(b, r.Data...)
			b = append(b, make([]byte, pad)...)
		}
	}
	return finish(b, start)
}
