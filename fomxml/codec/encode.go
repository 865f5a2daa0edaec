package codec

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"math"
	"strings"
)

// pad appends zero octets until the encoding, which starts at dst[base],
// is a multiple of align octets long.
func pad(dst []byte, base, align int) []byte {
	switch k := PadLen(len(dst)-base, align); k {
	case 0:
		return dst
	case 4:
		return append(dst, 0, 0, 0, 0)
	default:
		for ; k > 0; k-- {
			dst = append(dst, 0)
		}
		return dst
	}
}

// putBits appends the low size octets of bits in the node's byte order.
func putBits(dst []byte, n *node, bits uint64) []byte {
	switch n.size {
	case 1:
		return append(dst, byte(bits))
	case 2:
		if n.little {
			return binary.LittleEndian.AppendUint16(dst, uint16(bits))
		}
		return binary.BigEndian.AppendUint16(dst, uint16(bits))
	case 4:
		if n.little {
			return binary.LittleEndian.AppendUint32(dst, uint32(bits))
		}
		return binary.BigEndian.AppendUint32(dst, uint32(bits))
	default:
		if n.little {
			return binary.LittleEndian.AppendUint64(dst, bits)
		}
		return binary.BigEndian.AppendUint64(dst, bits)
	}
}

// encodeValue appends the encoding of v as n, which starts at dst[base].
// tail tells whether the value is the last thing in the encoding.
func encodeValue(n *node, dst []byte, base int, v any, depth int, tail bool) ([]byte, error) {
	if depth > MaxDepth {
		return dst, newError(ErrTooDeep, "values nested deeper than %d", MaxDepth)
	}
	dst = pad(dst, base, n.align)
	switch n.op {
	case opScalar:
		bits, err := scalarBits(n, v)
		if err != nil {
			return dst, err
		}
		return putBits(dst, n, bits), nil
	case opEnum, opBool:
		val, err := enumValue(n, v)
		if err != nil {
			return dst, err
		}
		return putBits(dst, n, uint64(val)), nil
	case opArray:
		return encodeArray(n, dst, base, v, depth, tail)
	case opRecord:
		return encodeRecord(n, dst, base, v, depth, tail)
	case opVariant:
		return encodeVariant(n, dst, base, v, depth, tail)
	}
	return dst, newError(ErrUnsupportedType, "data type %s cannot be encoded", n.name)
}

func scalarBits(n *node, v any) (uint64, error) {
	switch n.kind {
	case kFloat:
		f, err := toFloat(v)
		if err != nil {
			return 0, err
		}
		if n.size == 4 {
			if !math.IsInf(f, 0) && !math.IsNaN(f) && math.Abs(f) > math.MaxFloat32 {
				return 0, newError(ErrInvalidValue, "%g out of range for 32-bit float", f)
			}
			return uint64(math.Float32bits(float32(f))), nil
		}
		return math.Float64bits(f), nil
	case kUint:
		return toUint(v, n.size*8)
	default:
		i, err := toInt(v, n.size*8)
		return uint64(i), err
	}
}

// enumValue returns the representation value of v, an enumerator name or
// value (or a bool for HLAboolean).
func enumValue(n *node, v any) (int64, error) {
	switch x := v.(type) {
	case string:
		if val, ok := n.byName[x]; ok {
			return val, nil
		}
		return 0, newError(ErrInvalidValue, "%q is not an enumerator of %s", x, n.name)
	case bool:
		if n.op == opBool {
			if x {
				return 1, nil
			}
			return 0, nil
		}
		return 0, wantErr("enumerator name or value", v)
	}
	var val int64
	if n.kind == kUint {
		u, err := toUint(v, n.size*8)
		if err != nil {
			if _, isNum := toNum(v); !isNum {
				return 0, wantErr("enumerator name or value", v)
			}
			return 0, err
		}
		if u > math.MaxInt64 {
			return 0, newError(ErrInvalidValue, "%d is not a value of an enumerator of %s", u, n.name)
		}
		val = int64(u)
	} else {
		i, err := toInt(v, n.size*8)
		if err != nil {
			if _, isNum := toNum(v); !isNum {
				return 0, wantErr("enumerator name or value", v)
			}
			return 0, err
		}
		val = i
	}
	if _, ok := n.byValue[val]; !ok {
		return 0, newError(ErrInvalidValue, "%d is not a value of an enumerator of %s", val, n.name)
	}
	return val, nil
}

func cardText(n *node) string {
	if n.maxCount < 0 {
		return "[" + itoa(n.minCount) + "..]"
	}
	return "[" + itoa(n.minCount) + ".." + itoa(n.maxCount) + "]"
}

// checkLen checks an array length against the array's encoding.
func checkLen(n *node, l int, off int) error {
	switch n.mode {
	case modeFixed:
		if l != n.count {
			return newError(ErrInvalidValue, "want %d elements, got %d", n.count, l)
		}
	case modeVariable:
		if int64(l) < n.minCount || (n.maxCount >= 0 && int64(l) > n.maxCount) {
			return newError(ErrInvalidValue, "%d elements, outside cardinality %s", l, cardText(n))
		}
		if l > math.MaxInt32 {
			return newError(ErrInvalidValue, "too many elements: %d", l)
		}
	case modePadTo:
		if k := PadLen(off, n.padTo); l != k {
			return newError(ErrInvalidValue, "want %d padding octets here, got %d", k, l)
		}
	}
	return nil
}

func encodeArray(n *node, dst []byte, base int, v any, depth int, tail bool) ([]byte, error) {
	if n.mode == modeLengthless && !tail {
		return dst, newError(ErrUnsupportedEncoding, "RPRlengthlessArray is supported only at the end of the encoding")
	}
	off := len(dst) - base
	if n.mode == modePadTo && v == nil {
		for k := PadLen(off, n.padTo); k > 0; k-- {
			dst = append(dst, 0)
		}
		return dst, nil
	}

	switch n.repr {
	case reprBytes, reprASCII:
		var p []byte
		var s string
		isStr := false
		switch x := v.(type) {
		case []byte:
			p = x
		case string:
			if n.repr == reprBytes {
				var err error
				if p, err = base64.StdEncoding.DecodeString(x); err != nil {
					return dst, newError(ErrInvalidValue, "want []byte or base64 string, got string that is not base64")
				}
			} else {
				s, isStr = x, true
			}
		default:
			goto generic
		}
		l := len(p)
		if isStr {
			l = len(s)
		}
		fill := 0
		if n.mode == modeFixed && n.repr == reprASCII && l < n.count {
			fill = n.count - l // strings shorter than a fixed array are NUL-padded
		} else if err := checkLen(n, l, off); err != nil {
			return dst, err
		}
		if n.mode == modeNullTerm {
			if (isStr && strings.IndexByte(s, 0) >= 0) || (!isStr && bytes.IndexByte(p, 0) >= 0) {
				return dst, newError(ErrInvalidValue, "NUL inside a null-terminated array")
			}
		}
		if n.mode == modeVariable {
			dst = binary.BigEndian.AppendUint32(dst, uint32(l))
		}
		if isStr {
			dst = append(dst, s...)
		} else {
			dst = append(dst, p...)
		}
		for ; fill > 0; fill-- {
			dst = append(dst, 0)
		}
		if n.mode == modeNullTerm {
			dst = append(dst, 0)
		}
		return dst, nil

	case reprUnicode:
		s, ok := v.(string)
		if !ok {
			break
		}
		l := utf16Len(s)
		if l < 0 {
			return dst, newError(ErrInvalidValue, "invalid UTF-8")
		}
		fill := 0
		if n.mode == modeFixed && l < n.count {
			fill = n.count - l
		} else if err := checkLen(n, l, off); err != nil {
			return dst, err
		}
		if n.mode == modeNullTerm && strings.IndexByte(s, 0) >= 0 {
			return dst, newError(ErrInvalidValue, "NUL inside a null-terminated array")
		}
		if n.mode == modeVariable {
			dst = binary.BigEndian.AppendUint32(dst, uint32(l))
		}
		dst = appendUTF16(dst, s)
		for ; fill > 0; fill-- {
			dst = append(dst, 0, 0)
		}
		if n.mode == modeNullTerm {
			dst = append(dst, 0, 0)
		}
		return dst, nil
	}

generic:
	if n.mode == modeNullTerm {
		return dst, wantErr("string or []byte", v)
	}
	q, ok := toSeq(v)
	if !ok {
		switch n.repr {
		case reprASCII, reprUnicode:
			return dst, wantErr("string or array", v)
		case reprBytes:
			return dst, wantErr("[]byte or array", v)
		}
		return dst, wantErr("array", v)
	}
	if err := checkLen(n, q.n, off); err != nil {
		return dst, err
	}
	if n.mode == modeVariable {
		dst = binary.BigEndian.AppendUint32(dst, uint32(q.n))
	}
	for i := 0; i < q.n; i++ {
		var err error
		dst, err = encodeValue(n.elem, dst, base, q.at(i), depth+1, false)
		if err != nil {
			return dst, prefixPath(err, "["+itoa(int64(i))+"]")
		}
	}
	return dst, nil
}

func encodeRecord(n *node, dst []byte, base int, v any, depth int, tail bool) ([]byte, error) {
	m, ok := toFields(v)
	if !ok {
		return dst, wantErr("record (map[string]any)", v)
	}
	used := 0
	last := len(n.fields) - 1
	for i, f := range n.fields {
		fv, ok := m[f.name]
		if ok {
			used++
		} else if f.n.op != opArray || f.n.mode != modePadTo {
			return dst, newError(ErrInvalidValue, "missing field %q", f.name)
		}
		var err error
		dst, err = encodeValue(f.n, dst, base, fv, depth+1, tail && i == last)
		if err != nil {
			return dst, prefixPath(err, "."+f.name)
		}
	}
	if used != len(m) {
		k := unknownKey(m, func(k string) bool { _, ok := n.fieldIdx[k]; return ok })
		return dst, newError(ErrInvalidValue, "unknown field %q", k)
	}
	return dst, nil
}

func encodeVariant(n *node, dst []byte, base int, v any, depth int, tail bool) ([]byte, error) {
	m, ok := toFields(v)
	if !ok {
		return dst, wantErr("variant record (map[string]any)", v)
	}
	dv, ok := m[n.discName]
	if !ok {
		return dst, newError(ErrInvalidValue, "missing discriminant %q", n.discName)
	}
	val, err := enumValue(n.disc, dv)
	if err != nil {
		return dst, prefixPath(err, "."+n.discName)
	}
	ai, ok := n.altByValue[val]
	if !ok {
		if n.other < 0 {
			return dst, newError(ErrInvalidValue, "discriminant %s selects no alternative", n.disc.byValue[val])
		}
		ai = n.other
	}
	a := n.alts[ai]
	want := 1
	if a.n != nil {
		want = 2
	}
	if len(m) != want {
		k := unknownKey(m, func(k string) bool { return k == n.discName || (a.n != nil && k == a.name) })
		if k != "" {
			return dst, newError(ErrInvalidValue, "field %q is not the discriminant or the alternative selected by %s", k, n.disc.byValue[val])
		}
	}
	dst = pad(dst, base, n.disc.align)
	dst = putBits(dst, n.disc, uint64(val))
	if a.n == nil {
		// An alternative without data is the discriminant alone: no
		// padding follows it (1516.2-2010 §4.13.8).
		return dst, nil
	}
	dst = pad(dst, base, n.altAlign)
	av, ok := m[a.name]
	if !ok {
		return dst, newError(ErrInvalidValue, "missing alternative %q selected by %s", a.name, n.disc.byValue[val])
	}
	dst, err = encodeValue(a.n, dst, base, av, depth+1, tail)
	if err != nil {
		return dst, prefixPath(err, "."+a.name)
	}
	return dst, nil
}
