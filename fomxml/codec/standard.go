package codec

import (
	"encoding/binary"
	"math"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// This file holds the typed helpers for the standard simple, enumerated
// and array data types of the HLA MIM. Composite helpers (strings, lists)
// assume that their value starts at its octet boundary (4 for every
// HLAvariableArray here); padding inside lists is relative to the start of
// the list.

// AppendByte appends v as an HLAbyte.
func AppendByte(b []byte, v byte) []byte { return append(b, v) }

// ReadByte reads an HLAbyte.
func ReadByte(b []byte) (byte, []byte, error) { return readOctet("HLAbyte", b) }

// AppendASCIIChar appends v as an HLAASCIIchar.
func AppendASCIIChar(b []byte, v byte) []byte { return append(b, v) }

// ReadASCIIChar reads an HLAASCIIchar.
func ReadASCIIChar(b []byte) (byte, []byte, error) { return readOctet("HLAASCIIchar", b) }

// AppendUnicodeChar appends v, one UTF-16 code unit, as an HLAunicodeChar.
func AppendUnicodeChar(b []byte, v uint16) []byte { return binary.BigEndian.AppendUint16(b, v) }

// ReadUnicodeChar reads an HLAunicodeChar (one UTF-16 code unit).
func ReadUnicodeChar(b []byte) (uint16, []byte, error) { return readPairBE("HLAunicodeChar", b) }

// AppendBoolean appends v as an HLAboolean: HLAinteger32BE 1 (HLAtrue) or
// 0 (HLAfalse).
func AppendBoolean(b []byte, v bool) []byte {
	var x uint32
	if v {
		x = 1
	}
	return binary.BigEndian.AppendUint32(b, x)
}

// ReadBoolean reads an HLAboolean. Values other than 0 and 1 are not
// enumerators of HLAboolean and yield ErrInvalidData.
func ReadBoolean(b []byte) (bool, []byte, error) {
	if err := need("HLAboolean", b, 4); err != nil {
		return false, b, err
	}
	switch v := int32(binary.BigEndian.Uint32(b)); v {
	case 0:
		return false, b[4:], nil
	case 1:
		return true, b[4:], nil
	default:
		return false, b, &Error{Path: "HLAboolean", Err: ErrInvalidData, Msg: "value " + itoa(int64(v)) + " is not HLAtrue (1) or HLAfalse (0)"}
	}
}

// readCount reads an HLAvariableArray element count and checks that count
// elements of at least elemSize octets each fit in what follows.
func readCount(name string, b []byte, elemSize int) (int, []byte, error) {
	if err := need(name, b, 4); err != nil {
		return 0, b, err
	}
	n := int32(binary.BigEndian.Uint32(b))
	if n < 0 {
		return 0, b, &Error{Path: name, Err: ErrInvalidData, Msg: "negative element count " + itoa(int64(n))}
	}
	rest := b[4:]
	if elemSize < 1 {
		elemSize = 1
	}
	if int(n) > len(rest)/elemSize {
		return 0, b, &Error{Path: name, Err: ErrShortBuffer, Msg: "short buffer: element count " + itoa(int64(n)) + " needs " + itoa(int64(n)*int64(elemSize)) + " bytes, have " + itoa(int64(len(rest)))}
	}
	return int(n), rest, nil
}

func appendCount(name string, b []byte, n int) ([]byte, error) {
	if n > math.MaxInt32 {
		return b, &Error{Path: name, Err: ErrInvalidValue, Msg: "too many elements: " + itoa(int64(n))}
	}
	return binary.BigEndian.AppendUint32(b, uint32(n)), nil
}

// AppendASCIIString appends s as an HLAASCIIstring: an HLAinteger32BE
// count followed by the octets of s. The octets are written as they are;
// nothing checks that they are 7-bit ASCII.
func AppendASCIIString(b []byte, s string) ([]byte, error) {
	b, err := appendCount("HLAASCIIstring", b, len(s))
	if err != nil {
		return b, err
	}
	return append(b, s...), nil
}

// ReadASCIIString reads an HLAASCIIstring. The octets are returned as they
// are, in a new string.
func ReadASCIIString(b []byte) (string, []byte, error) {
	n, rest, err := readCount("HLAASCIIstring", b, 1)
	if err != nil {
		return "", b, err
	}
	return string(rest[:n]), rest[n:], nil
}

// utf16Len returns the number of UTF-16 code units of s, or -1 if s is
// not valid UTF-8.
func utf16Len(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return -1
		}
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
		i += size
	}
	return n
}

// appendUTF16 appends s, which must be valid UTF-8, as big-endian UTF-16
// code units.
func appendUTF16(b []byte, s string) []byte {
	for _, r := range s {
		if r >= 0x10000 {
			r1, r2 := utf16.EncodeRune(r)
			b = binary.BigEndian.AppendUint16(b, uint16(r1))
			b = binary.BigEndian.AppendUint16(b, uint16(r2))
			continue
		}
		b = binary.BigEndian.AppendUint16(b, uint16(r))
	}
	return b
}

// decodeUTF16 decodes n big-endian UTF-16 code units from b, which holds
// at least 2n octets. An unpaired surrogate becomes U+FFFD, or makes ok
// false if strict.
func decodeUTF16(b []byte, n int, strict bool) (s string, ok bool) {
	var sb strings.Builder
	sb.Grow(n)
	for i := 0; i < n; i++ {
		u := rune(binary.BigEndian.Uint16(b[2*i:]))
		switch {
		case u < 0x80:
			sb.WriteByte(byte(u))
			continue
		case utf16.IsSurrogate(u):
			if u < 0xdc00 && i+1 < n {
				u2 := rune(binary.BigEndian.Uint16(b[2*i+2:]))
				if r := utf16.DecodeRune(u, u2); r != utf8.RuneError {
					sb.WriteRune(r)
					i++
					continue
				}
			}
			if strict {
				return "", false
			}
			u = utf8.RuneError
		}
		sb.WriteRune(u)
	}
	return sb.String(), true
}

// AppendUnicodeString appends s as an HLAunicodeString: an HLAinteger32BE
// count of UTF-16 code units followed by the units, big-endian. Runes
// above U+FFFF take two units (a surrogate pair). s must be valid UTF-8.
func AppendUnicodeString(b []byte, s string) ([]byte, error) {
	n := utf16Len(s)
	if n < 0 {
		return b, &Error{Path: "HLAunicodeString", Err: ErrInvalidValue, Msg: "invalid UTF-8"}
	}
	b, err := appendCount("HLAunicodeString", b, n)
	if err != nil {
		return b, err
	}
	return appendUTF16(b, s), nil
}

// ReadUnicodeString reads an HLAunicodeString. Surrogate pairs are
// combined; an unpaired surrogate becomes U+FFFD.
func ReadUnicodeString(b []byte) (string, []byte, error) {
	n, rest, err := readCount("HLAunicodeString", b, 2)
	if err != nil {
		return "", b, err
	}
	s, _ := decodeUTF16(rest, n, false)
	return s, rest[2*n:], nil
}

func appendOctets(name string, b, p []byte) ([]byte, error) {
	b, err := appendCount(name, b, len(p))
	if err != nil {
		return b, err
	}
	return append(b, p...), nil
}

func readOctets(name string, b []byte) ([]byte, []byte, error) {
	n, rest, err := readCount(name, b, 1)
	if err != nil {
		return nil, b, err
	}
	p := make([]byte, n)
	copy(p, rest)
	return p, rest[n:], nil
}

// AppendOpaqueData appends p as an HLAopaqueData: an HLAinteger32BE count
// followed by the octets.
func AppendOpaqueData(b, p []byte) ([]byte, error) { return appendOctets("HLAopaqueData", b, p) }

// ReadOpaqueData reads an HLAopaqueData. The returned octets are a copy.
func ReadOpaqueData(b []byte) ([]byte, []byte, error) { return readOctets("HLAopaqueData", b) }

// AppendHandle appends h, an encoded RTI handle, as an HLAhandle (a
// variable array of HLAbyte).
func AppendHandle(b, h []byte) ([]byte, error) { return appendOctets("HLAhandle", b, h) }

// ReadHandle reads an HLAhandle. The returned octets are a copy.
func ReadHandle(b []byte) ([]byte, []byte, error) { return readOctets("HLAhandle", b) }

// AppendLogicalTime appends t, an encoded logical time, as an
// HLAlogicalTime (a variable array of HLAbyte).
func AppendLogicalTime(b, t []byte) ([]byte, error) { return appendOctets("HLAlogicalTime", b, t) }

// ReadLogicalTime reads an HLAlogicalTime. The returned octets are a copy.
func ReadLogicalTime(b []byte) ([]byte, []byte, error) { return readOctets("HLAlogicalTime", b) }

// AppendTimeInterval appends t, an encoded time interval, as an
// HLAtimeInterval (a variable array of HLAbyte).
func AppendTimeInterval(b, t []byte) ([]byte, error) { return appendOctets("HLAtimeInterval", b, t) }

// ReadTimeInterval reads an HLAtimeInterval. The returned octets are a
// copy.
func ReadTimeInterval(b []byte) ([]byte, []byte, error) { return readOctets("HLAtimeInterval", b) }

// AppendToken appends an HLAtoken, a fixed array of zero HLAbyte: it
// appends nothing and returns b.
func AppendToken(b []byte) []byte { return b }

// ReadToken reads an HLAtoken: it consumes nothing and returns b.
func ReadToken(b []byte) ([]byte, error) { return b, nil }

// AppendHandleList appends hs as an HLAhandleList: an HLAinteger32BE count
// followed by HLAhandle elements, each starting at a multiple of 4 octets
// from the start of the list.
func AppendHandleList(b []byte, hs [][]byte) ([]byte, error) {
	return appendList("HLAhandleList", b, hs, func(b, h []byte) ([]byte, error) { return appendOctets("HLAhandle", b, h) })
}

// ReadHandleList reads an HLAhandleList. The handles are copies.
func ReadHandleList(b []byte) ([][]byte, []byte, error) {
	return readList("HLAhandleList", b, func(b []byte) ([]byte, []byte, error) { return readOctets("HLAhandle", b) })
}

// AppendUnicodeStringList appends ss as a variable array of
// HLAunicodeString, the encoding of HLAargumentList,
// HLAmoduleDesignatorList and HLAsynchPointList. Each string starts at a
// multiple of 4 octets from the start of the list.
func AppendUnicodeStringList(b []byte, ss []string) ([]byte, error) {
	return appendList("HLAunicodeStringList", b, ss, AppendUnicodeString)
}

// ReadUnicodeStringList reads a variable array of HLAunicodeString.
func ReadUnicodeStringList(b []byte) ([]string, []byte, error) {
	return readList("HLAunicodeStringList", b, ReadUnicodeString)
}

// appendList appends xs as the variable array called name: an
// HLAinteger32BE count followed by the elements, each appended by one and
// starting at a multiple of 4 octets from the start of the list.
func appendList[E any](name string, b []byte, xs []E, one func([]byte, E) ([]byte, error)) ([]byte, error) {
	start := len(b)
	b, err := appendCount(name, b, len(xs))
	if err != nil {
		return b, err
	}
	for i, x := range xs {
		b = padFrom(b, start, 4)
		if b, err = one(b, x); err != nil {
			return b, setPath(err, name+"["+itoa(int64(i))+"]")
		}
	}
	return b, nil
}

// readList reads the variable array called name that appendList writes,
// each element read by one.
func readList[E any](name string, b []byte, one func([]byte) (E, []byte, error)) ([]E, []byte, error) {
	n, rest, err := readCount(name, b, 4)
	if err != nil {
		return nil, b, err
	}
	xs := make([]E, n)
	for i := range xs {
		if i > 0 {
			if rest, err = SkipPadding(rest, len(b)-len(rest), 4); err != nil {
				return nil, b, setPath(err, name+"["+itoa(int64(i))+"]")
			}
		}
		if xs[i], rest, err = one(rest); err != nil {
			return nil, b, setPath(err, name+"["+itoa(int64(i))+"]")
		}
	}
	return xs, rest, nil
}

// padFrom appends zero octets until len(b)-start is a multiple of boundary.
func padFrom(b []byte, start, boundary int) []byte {
	for n := PadLen(len(b)-start, boundary); n > 0; n-- {
		b = append(b, 0)
	}
	return b
}
