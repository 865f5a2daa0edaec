package codec

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
)

// decoder decodes one buffer. Offsets are from the start of buf, which is
// the start of the encoding, so padding is computed from them directly.
type decoder struct {
	buf    []byte
	strict bool
}

func (d *decoder) short(off, need int) error {
	return newError(ErrShortBuffer, "short buffer: need %d bytes at offset %d, have %d", need, off, len(d.buf)-off)
}

// pad skips the padding before a value of octet boundary align at off.
func (d *decoder) pad(off, align int) (int, error) {
	k := PadLen(off, align)
	if k == 0 {
		return off, nil
	}
	if len(d.buf)-off < k {
		return off, d.short(off, k)
	}
	if d.strict {
		for _, c := range d.buf[off : off+k] {
			if c != 0 {
				return off, newError(ErrInvalidData, "nonzero padding at offset %d", off)
			}
		}
	}
	return off + k, nil
}

// bits reads a scalar of n's size and byte order at off.
func (d *decoder) bits(n *node, off int) (uint64, error) {
	if len(d.buf)-off < n.size {
		return 0, d.short(off, n.size)
	}
	b := d.buf[off:]
	switch n.size {
	case 1:
		return uint64(b[0]), nil
	case 2:
		if n.little {
			return uint64(binary.LittleEndian.Uint16(b)), nil
		}
		return uint64(binary.BigEndian.Uint16(b)), nil
	case 4:
		if n.little {
			return uint64(binary.LittleEndian.Uint32(b)), nil
		}
		return uint64(binary.BigEndian.Uint32(b)), nil
	default:
		if n.little {
			return binary.LittleEndian.Uint64(b), nil
		}
		return binary.BigEndian.Uint64(b), nil
	}
}

// signed sign-extends the low size octets of x.
func signed(x uint64, size int) int64 {
	shift := uint(64 - 8*size)
	return int64(x<<shift) >> shift
}

// intValue returns the scalar as an int64 for enumerator lookup.
func intValue(n *node, x uint64) int64 {
	if n.kind == kUint {
		return int64(x) // values above MaxInt64 match no enumerator
	}
	return signed(x, n.size)
}

// value decodes a value of n at off and returns the offset after it.
func (d *decoder) value(n *node, off, depth int, tail bool) (any, int, error) {
	if depth > MaxDepth {
		return nil, off, newError(ErrTooDeep, "values nested deeper than %d", MaxDepth)
	}
	if n.op == opArray && n.mode == modeLengthless && tail && !d.strict && len(d.buf)-off < PadLen(off, n.align) {
		// An empty lengthless array at the very end, sent without the
		// padding that would precede its (absent) first element.
		return emptyArray(n), len(d.buf), nil
	}
	off, err := d.pad(off, n.align)
	if err != nil {
		return nil, off, err
	}
	switch n.op {
	case opScalar:
		x, err := d.bits(n, off)
		if err != nil {
			return nil, off, err
		}
		off += n.size
		switch n.kind {
		case kInt:
			return signed(x, n.size), off, nil
		case kUint:
			return x, off, nil
		}
		if n.size == 4 {
			return float64(math.Float32frombits(uint32(x))), off, nil
		}
		return math.Float64frombits(x), off, nil
	case opEnum, opBool:
		x, err := d.bits(n, off)
		if err != nil {
			return nil, off, err
		}
		val := intValue(n, x)
		if n.op == opBool && (val == 0 || val == 1) {
			return val == 1, off + n.size, nil
		}
		name, ok := n.byValue[val]
		if !ok || n.op == opBool {
			return nil, off, newError(ErrInvalidData, "%d is not a value of an enumerator of %s", val, n.name)
		}
		return name, off + n.size, nil
	case opArray:
		return d.array(n, off, depth, tail)
	case opRecord:
		m := make(map[string]any, len(n.fields))
		last := len(n.fields) - 1
		for i, f := range n.fields {
			var v any
			v, off, err = d.value(f.n, off, depth+1, tail && i == last)
			if err != nil {
				return nil, off, prefixPath(err, "."+f.name)
			}
			m[f.name] = v
		}
		return m, off, nil
	case opVariant:
		return d.variant(n, off, depth, tail)
	}
	return nil, off, newError(ErrUnsupportedType, "data type %s cannot be decoded", n.name)
}

func (d *decoder) variant(n *node, off, depth int, tail bool) (any, int, error) {
	off, err := d.pad(off, n.disc.align)
	if err != nil {
		return nil, off, err
	}
	x, err := d.bits(n.disc, off)
	if err != nil {
		return nil, off, prefixPath(err, "."+n.discName)
	}
	val := intValue(n.disc, x)
	name, ok := n.disc.byValue[val]
	if !ok {
		return nil, off, prefixPath(newError(ErrInvalidData, "%d is not a value of an enumerator of %s", val, n.disc.name), "."+n.discName)
	}
	off += n.disc.size
	ai, ok := n.altByValue[val]
	if !ok {
		if n.other < 0 {
			return nil, off, newError(ErrInvalidData, "discriminant %s selects no alternative", name)
		}
		ai = n.other
	}
	a := n.alts[ai]
	if a.n == nil {
		// The discriminant alone, without padding.
		return map[string]any{n.discName: name}, off, nil
	}
	if off, err = d.pad(off, n.altAlign); err != nil {
		return nil, off, err
	}
	v, off, err := d.value(a.n, off, depth+1, tail)
	if err != nil {
		return nil, off, prefixPath(err, "."+a.name)
	}
	return map[string]any{n.discName: name, a.name: v}, off, nil
}

// array decodes an array of n at off, which is already aligned.
func (d *decoder) array(n *node, off, depth int, tail bool) (any, int, error) {
	rest := len(d.buf) - off
	count := -1 // number of elements, when known before decoding them
	switch n.mode {
	case modeFixed:
		count = n.count
		if m := n.elem.minSize; m > 0 && count > rest/m {
			return nil, off, newError(ErrShortBuffer, "short buffer: %d elements need at least %d bytes at offset %d, have %d", count, satMul(count, m), off, rest)
		}
	case modeVariable:
		if rest < 4 {
			return nil, off, d.short(off, 4)
		}
		c := int64(int32(binary.BigEndian.Uint32(d.buf[off:])))
		if c < 0 {
			return nil, off, newError(ErrInvalidData, "negative element count %d", c)
		}
		if c < n.minCount || (n.maxCount >= 0 && c > n.maxCount) {
			return nil, off, newError(ErrInvalidData, "element count %d outside cardinality %s", c, cardText(n))
		}
		off += 4
		rest -= 4
		// Never allocate for more elements than the data can hold.
		if m := max(n.elem.minSize, 1); c > int64(rest/m) {
			return nil, off, newError(ErrShortBuffer, "short buffer: element count %d needs at least %d bytes at offset %d, have %d", c, c*int64(m), off, rest)
		}
		count = int(c)
	case modeLengthless:
		if !tail {
			return nil, off, newError(ErrUnsupportedEncoding, "RPRlengthlessArray is supported only at the end of the encoding")
		}
	case modePadTo:
		count = PadLen(off, n.padTo)
		if count > rest {
			return nil, off, d.short(off, count)
		}
	}

	switch n.repr {
	case reprBytes, reprASCII:
		var p []byte
		switch {
		case count >= 0:
			if count > rest {
				return nil, off, d.short(off, count)
			}
			p = d.buf[off : off+count]
			off += count
		case n.mode == modeNullTerm:
			i := bytes.IndexByte(d.buf[off:], 0)
			if i < 0 {
				return nil, off, newError(ErrShortBuffer, "short buffer: no terminating NUL after offset %d", off)
			}
			p = d.buf[off : off+i]
			off += i + 1
		default: // lengthless
			p = d.buf[off:]
			off = len(d.buf)
		}
		if n.repr == reprBytes {
			return append([]byte{}, p...), off, nil
		}
		if n.mode == modeFixed {
			p = bytes.TrimRight(p, "\x00")
		}
		return string(p), off, nil

	case reprUnicode:
		units := count
		switch {
		case count >= 0:
			if 2*count > rest {
				return nil, off, d.short(off, 2*count)
			}
		case n.mode == modeNullTerm:
			units = -1
			for i := off; i+1 < len(d.buf); i += 2 {
				if d.buf[i] == 0 && d.buf[i+1] == 0 {
					units = (i - off) / 2
					break
				}
			}
			if units < 0 {
				return nil, off, newError(ErrShortBuffer, "short buffer: no terminating NUL after offset %d", off)
			}
		default: // lengthless
			if rest%2 != 0 {
				return nil, off, newError(ErrInvalidData, "odd number of octets (%d) in an array of HLAunicodeChar", rest)
			}
			units = rest / 2
		}
		s, ok := decodeUTF16(d.buf[off:], units, d.strict)
		if !ok {
			return nil, off, newError(ErrInvalidData, "unpaired UTF-16 surrogate")
		}
		off += 2 * units
		if n.mode == modeNullTerm {
			off += 2
		}
		if n.mode == modeFixed {
			s = strings.TrimRight(s, "\x00")
		}
		return s, off, nil
	}

	if count >= 0 {
		vs := make([]any, count)
		for i := range vs {
			var err error
			vs[i], off, err = d.value(n.elem, off, depth+1, false)
			if err != nil {
				return nil, off, prefixPath(err, "["+itoa(int64(i))+"]")
			}
		}
		return vs, off, nil
	}
	// Lengthless: elements up to the end of the data. Each consumes at
	// least one octet (New refuses element types that may be empty), so
	// the loop ends and the slice stays bounded.
	var vs []any
	for off < len(d.buf) {
		var v any
		var err error
		v, off, err = d.value(n.elem, off, depth+1, false)
		if err != nil {
			return nil, off, prefixPath(err, "["+itoa(int64(len(vs)))+"]")
		}
		vs = append(vs, v)
	}
	if vs == nil {
		vs = []any{}
	}
	return vs, off, nil
}

func emptyArray(n *node) any {
	switch n.repr {
	case reprBytes:
		return []byte{}
	case reprASCII, reprUnicode:
		return ""
	}
	return []any{}
}
