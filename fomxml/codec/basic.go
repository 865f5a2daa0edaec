package codec

import (
	"encoding/binary"
	"math"
)

// This file holds the typed helpers for the standard basic data
// representations (IEEE 1516.2-2010 table 23). Append functions append the
// encoding of v to b and return the extended slice; Read functions decode
// a value from the start of b and return it with the rest of b.
//
// These helpers neither add nor skip padding: a value is written or read
// exactly where b ends or starts. Use AppendPadding and SkipPadding to
// align values inside records and arrays.

func need(name string, b []byte, n int) error {
	if len(b) < n {
		return shortError(name, n, len(b))
	}
	return nil
}

// AppendInt16BE appends v as an HLAinteger16BE.
func AppendInt16BE(b []byte, v int16) []byte { return binary.BigEndian.AppendUint16(b, uint16(v)) }

// ReadInt16BE reads an HLAinteger16BE.
func ReadInt16BE(b []byte) (int16, []byte, error) {
	if err := need("HLAinteger16BE", b, 2); err != nil {
		return 0, b, err
	}
	return int16(binary.BigEndian.Uint16(b)), b[2:], nil
}

// AppendInt16LE appends v as an HLAinteger16LE.
func AppendInt16LE(b []byte, v int16) []byte { return binary.LittleEndian.AppendUint16(b, uint16(v)) }

// ReadInt16LE reads an HLAinteger16LE.
func ReadInt16LE(b []byte) (int16, []byte, error) {
	if err := need("HLAinteger16LE", b, 2); err != nil {
		return 0, b, err
	}
	return int16(binary.LittleEndian.Uint16(b)), b[2:], nil
}

// AppendInt32BE appends v as an HLAinteger32BE.
func AppendInt32BE(b []byte, v int32) []byte { return binary.BigEndian.AppendUint32(b, uint32(v)) }

// ReadInt32BE reads an HLAinteger32BE.
func ReadInt32BE(b []byte) (int32, []byte, error) {
	if err := need("HLAinteger32BE", b, 4); err != nil {
		return 0, b, err
	}
	return int32(binary.BigEndian.Uint32(b)), b[4:], nil
}

// AppendInt32LE appends v as an HLAinteger32LE.
func AppendInt32LE(b []byte, v int32) []byte { return binary.LittleEndian.AppendUint32(b, uint32(v)) }

// ReadInt32LE reads an HLAinteger32LE.
func ReadInt32LE(b []byte) (int32, []byte, error) {
	if err := need("HLAinteger32LE", b, 4); err != nil {
		return 0, b, err
	}
	return int32(binary.LittleEndian.Uint32(b)), b[4:], nil
}

// AppendInt64BE appends v as an HLAinteger64BE (also HLAinteger64Time).
func AppendInt64BE(b []byte, v int64) []byte { return binary.BigEndian.AppendUint64(b, uint64(v)) }

// ReadInt64BE reads an HLAinteger64BE (also HLAinteger64Time).
func ReadInt64BE(b []byte) (int64, []byte, error) {
	if err := need("HLAinteger64BE", b, 8); err != nil {
		return 0, b, err
	}
	return int64(binary.BigEndian.Uint64(b)), b[8:], nil
}

// AppendInt64LE appends v as an HLAinteger64LE.
func AppendInt64LE(b []byte, v int64) []byte { return binary.LittleEndian.AppendUint64(b, uint64(v)) }

// ReadInt64LE reads an HLAinteger64LE.
func ReadInt64LE(b []byte) (int64, []byte, error) {
	if err := need("HLAinteger64LE", b, 8); err != nil {
		return 0, b, err
	}
	return int64(binary.LittleEndian.Uint64(b)), b[8:], nil
}

// AppendFloat32BE appends v as an HLAfloat32BE.
func AppendFloat32BE(b []byte, v float32) []byte {
	return binary.BigEndian.AppendUint32(b, math.Float32bits(v))
}

// ReadFloat32BE reads an HLAfloat32BE.
func ReadFloat32BE(b []byte) (float32, []byte, error) {
	if err := need("HLAfloat32BE", b, 4); err != nil {
		return 0, b, err
	}
	return math.Float32frombits(binary.BigEndian.Uint32(b)), b[4:], nil
}

// AppendFloat32LE appends v as an HLAfloat32LE.
func AppendFloat32LE(b []byte, v float32) []byte {
	return binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
}

// ReadFloat32LE reads an HLAfloat32LE.
func ReadFloat32LE(b []byte) (float32, []byte, error) {
	if err := need("HLAfloat32LE", b, 4); err != nil {
		return 0, b, err
	}
	return math.Float32frombits(binary.LittleEndian.Uint32(b)), b[4:], nil
}

// AppendFloat64BE appends v as an HLAfloat64BE (also HLAfloat64Time).
func AppendFloat64BE(b []byte, v float64) []byte {
	return binary.BigEndian.AppendUint64(b, math.Float64bits(v))
}

// ReadFloat64BE reads an HLAfloat64BE (also HLAfloat64Time).
func ReadFloat64BE(b []byte) (float64, []byte, error) {
	if err := need("HLAfloat64BE", b, 8); err != nil {
		return 0, b, err
	}
	return math.Float64frombits(binary.BigEndian.Uint64(b)), b[8:], nil
}

// AppendFloat64LE appends v as an HLAfloat64LE.
func AppendFloat64LE(b []byte, v float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
}

// ReadFloat64LE reads an HLAfloat64LE.
func ReadFloat64LE(b []byte) (float64, []byte, error) {
	if err := need("HLAfloat64LE", b, 8); err != nil {
		return 0, b, err
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b)), b[8:], nil
}

// AppendOctet appends v as an HLAoctet.
func AppendOctet(b []byte, v byte) []byte { return append(b, v) }

// ReadOctet reads an HLAoctet.
func ReadOctet(b []byte) (byte, []byte, error) { return readOctet("HLAoctet", b) }

// AppendOctetPairBE appends v as an HLAoctetPairBE.
func AppendOctetPairBE(b []byte, v uint16) []byte { return binary.BigEndian.AppendUint16(b, v) }

// ReadOctetPairBE reads an HLAoctetPairBE.
func ReadOctetPairBE(b []byte) (uint16, []byte, error) { return readPairBE("HLAoctetPairBE", b) }

// AppendOctetPairLE appends v as an HLAoctetPairLE.
func AppendOctetPairLE(b []byte, v uint16) []byte { return binary.LittleEndian.AppendUint16(b, v) }

// ReadOctetPairLE reads an HLAoctetPairLE.
func ReadOctetPairLE(b []byte) (uint16, []byte, error) {
	if err := need("HLAoctetPairLE", b, 2); err != nil {
		return 0, b, err
	}
	return binary.LittleEndian.Uint16(b), b[2:], nil
}

// readOctet reads one octet of the type called name (HLAoctet and the
// simple types it represents).
func readOctet(name string, b []byte) (byte, []byte, error) {
	if err := need(name, b, 1); err != nil {
		return 0, b, err
	}
	return b[0], b[1:], nil
}

// readPairBE reads a big-endian pair of octets of the type called name
// (HLAoctetPairBE and the simple types it represents).
func readPairBE(name string, b []byte) (uint16, []byte, error) {
	if err := need(name, b, 2); err != nil {
		return 0, b, err
	}
	return binary.BigEndian.Uint16(b), b[2:], nil
}

// PadLen returns the number of padding octets that follow offset octets of
// an encoding so that the next value starts at a multiple of boundary (its
// octet boundary: 1, 2, 4 or 8). Offsets count from the start of the
// outermost encoding.
func PadLen(offset, boundary int) int {
	if boundary <= 1 {
		return 0
	}
	r := offset % boundary
	if r == 0 {
		return 0
	}
	return boundary - r
}

// AppendPadding appends zero octets to b until len(b) is a multiple of
// boundary. b must begin at the start of the encoding.
func AppendPadding(b []byte, boundary int) []byte {
	for n := PadLen(len(b), boundary); n > 0; n-- {
		b = append(b, 0)
	}
	return b
}

// SkipPadding skips the padding that follows offset octets of an encoding
// for a value of the given octet boundary; b is the rest of the encoding
// after those offset octets. Padding octets are not checked.
func SkipPadding(b []byte, offset, boundary int) ([]byte, error) {
	n := PadLen(offset, boundary)
	if len(b) < n {
		return b, shortError("padding", n, len(b))
	}
	return b[n:], nil
}
