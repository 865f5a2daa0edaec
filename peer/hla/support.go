package hla

import (
	"encoding/binary"
	"fmt"
	"math"
)

// TransportationType is how a message travels (§10.21): reliably (with
// repair) or best effort.
type TransportationType int

const (
	HLAreliable   TransportationType = 1
	HLAbestEffort TransportationType = 2
)

func (t TransportationType) String() string {
	if s := enumName(t, transportationNames[:], ""); s != "" {
		return s
	}
	return fmt.Sprintf("TransportationType(%d)", int(t))
}

var transportationNames = [...]string{HLAreliable: "HLAreliable", HLAbestEffort: "HLAbestEffort"}

// Valid reports whether t is one of the two transportation types.
func (t TransportationType) Valid() bool { return t == HLAreliable || t == HLAbestEffort }

// ServiceGroup names a group of services (§10.32).
type ServiceGroup int

const (
	FederationManagement ServiceGroup = iota
	DeclarationManagement
	ObjectManagement
	OwnershipManagement
	TimeManagement
	DataDistributionManagement
	SupportServices
)

// Valid reports whether g is one of the seven service groups.
func (g ServiceGroup) Valid() bool { return g >= FederationManagement && g <= SupportServices }

// RegionHandle names a region (DDM): the federate that created it and a
// serial number of that federate's.
type RegionHandle struct {
	Federate FederateHandle
	Serial   uint64
}

func (h RegionHandle) String() string { return fmt.Sprintf("r%d.%d", h.Federate, h.Serial) }

// AttributeRegions pairs attributes with regions: the
// AttributeHandleSetRegionHandleSetPairVector of the DDM services.
type AttributeRegions struct {
	Attributes []AttributeHandle
	Regions    []RegionHandle
}

// RangeBounds is a region's range on one dimension: [Lower, Upper), upper
// exclusive, within [0, the dimension's upper bound].
type RangeBounds struct {
	Lower, Upper uint64
}

// Handle encodings, as the 1516e API's handle encode() and the RTI's
// decode...Handle helpers exchange them (the MOM and foreign clients): a
// handle of one number is 8 bytes big-endian; one of two numbers (object
// instance, message retraction, region) is 16 bytes, the federate first.

// EncodeHandle encodes a handle of one number: a federate, object class,
// interaction class, attribute, parameter or dimension handle.
func EncodeHandle[H ~uint64](h H) []byte { return binary.BigEndian.AppendUint64(nil, uint64(h)) }

// DecodeHandle decodes what EncodeHandle encoded; ErrCouldNotDecode for
// anything else.
func DecodeHandle[H ~uint64](b []byte) (H, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("%w: a handle is 8 bytes, got %d", ErrCouldNotDecode, len(b))
	}
	return H(binary.BigEndian.Uint64(b)), nil
}

func encodePair(a, b uint64) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(make([]byte, 0, 16), a), b)
}

func decodePair(what string, b []byte) (uint64, uint64, error) {
	if len(b) != 16 {
		return 0, 0, fmt.Errorf("%w: a %s handle is 16 bytes, got %d", ErrCouldNotDecode, what, len(b))
	}
	return binary.BigEndian.Uint64(b), binary.BigEndian.Uint64(b[8:]), nil
}

// Encode encodes h (16 bytes).
func (h ObjectInstanceHandle) Encode() []byte { return encodePair(uint64(h.Federate), h.Serial) }

// Encode encodes h (16 bytes).
func (h MessageRetractionHandle) Encode() []byte { return encodePair(uint64(h.Federate), h.Serial) }

// Encode encodes h (16 bytes).
func (h RegionHandle) Encode() []byte { return encodePair(uint64(h.Federate), h.Serial) }

// DecodeObjectInstanceHandle decodes an encoded object instance handle.
func DecodeObjectInstanceHandle(b []byte) (ObjectInstanceHandle, error) {
	f, s, err := decodePair("object instance", b)
	return ObjectInstanceHandle{Federate: FederateHandle(f), Serial: s}, err
}

// DecodeMessageRetractionHandle decodes an encoded retraction handle.
func DecodeMessageRetractionHandle(b []byte) (MessageRetractionHandle, error) {
	f, s, err := decodePair("message retraction", b)
	return MessageRetractionHandle{Federate: FederateHandle(f), Serial: s}, err
}

// DecodeRegionHandle decodes an encoded region handle.
func DecodeRegionHandle(b []byte) (RegionHandle, error) {
	f, s, err := decodePair("region", b)
	return RegionHandle{Federate: FederateHandle(f), Serial: s}, err
}

// TimeFactory makes and encodes the logical times of one representation
// (the 1516e LogicalTimeFactory): HLAfloat64Time or HLAinteger64Time.
type TimeFactory struct{ kind TimeKind }

// Factory returns k's time factory.
func (k TimeKind) Factory() TimeFactory { return TimeFactory{kind: k} }

// Name is the representation's name.
func (f TimeFactory) Name() string { return string(f.kind) }

// MakeInitial returns the initial time (zero).
func (f TimeFactory) MakeInitial() LogicalTime { return f.kind.Make(0) }

// MakeFinal returns the greatest time of the representation.
func (f TimeFactory) MakeFinal() LogicalTime {
	if f.kind == HLAinteger64Time {
		return Integer64Time(maxExactInt)
	}
	return Float64Time(math.MaxFloat64)
}

// MakeZero returns the zero interval.
func (f TimeFactory) MakeZero() LogicalTime { return f.kind.Make(0) }

// MakeEpsilon returns the smallest positive interval: 1 for integers,
// the smallest positive float64 otherwise.
func (f TimeFactory) MakeEpsilon() LogicalTime {
	if f.kind == HLAinteger64Time {
		return Integer64Time(1)
	}
	return Float64Time(math.SmallestNonzeroFloat64)
}

// Encode encodes t as the standard encodes the representation: an 8-byte
// big-endian IEEE 754 double (HLAfloat64Time) or integer
// (HLAinteger64Time).
func (f TimeFactory) Encode(t LogicalTime) ([]byte, error) {
	v, err := f.kind.Value(t)
	if err != nil {
		return nil, err
	}
	if f.kind == HLAinteger64Time {
		return binary.BigEndian.AppendUint64(nil, uint64(int64(v))), nil
	}
	return binary.BigEndian.AppendUint64(nil, math.Float64bits(v)), nil
}

// Decode decodes what Encode encoded; ErrCouldNotDecode for anything
// else.
func (f TimeFactory) Decode(b []byte) (LogicalTime, error) {
	if len(b) != 8 {
		return nil, fmt.Errorf("%w: a %s is 8 bytes, got %d", ErrCouldNotDecode, f.kind, len(b))
	}
	u := binary.BigEndian.Uint64(b)
	if f.kind == HLAinteger64Time {
		t := Integer64Time(int64(u))
		if _, err := f.kind.Value(t); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrCouldNotDecode, err)
		}
		return t, nil
	}
	t := Float64Time(math.Float64frombits(u))
	if _, err := f.kind.Value(t); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCouldNotDecode, err)
	}
	return t, nil
}
