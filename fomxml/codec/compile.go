package codec

import (
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/meshrti/meshrti/fomxml"
)

// A node is the compiled plan of one data type: names resolved, octet
// boundaries and size bounds computed. Nodes form a graph that may be
// cyclic (a record holding a variable array of itself); they are never
// changed after New returns.
type node struct {
	name string
	op   op
	// err, if set, makes the type unusable; it is an *Error.
	err error

	align   int // octet boundary: 1, 2, 4 or 8
	minSize int // lower bound of the encoded size, in octets
	finite  bool
	fixed   int // exact encoded size when known, else -1
	fixedOK bool

	// opScalar, and the representation of opEnum and opBool.
	kind   numKind
	size   int // octets
	little bool
	char   charKind

	// opEnum, opBool.
	byName  map[string]int64
	byValue map[int64]string

	// opArray.
	elem     *node
	mode     arrayMode
	repr     repr
	count    int   // modeFixed
	minCount int64 // modeVariable
	maxCount int64 // modeVariable; < 0: unbounded
	padTo    int   // modePadTo

	// opRecord.
	fields   []field
	fieldIdx map[string]int

	// opVariant.
	disc       *node
	discName   string
	alts       []alt
	altByValue map[int64]int
	other      int // index of the HLAother alternative, or -1
	altAlign   int
}

type op uint8

const (
	opScalar op = iota + 1
	opEnum
	opBool
	opArray
	opRecord
	opVariant
)

type numKind uint8

const (
	kInt numKind = iota + 1
	kUint
	kFloat
)

type charKind uint8

const (
	charNone    charKind = iota
	charOctet            // HLAoctet, HLAbyte and other simple types over HLAoctet
	charASCII            // HLAASCIIchar
	charUnicode          // HLAunicodeChar
)

type arrayMode uint8

const (
	modeFixed      arrayMode = iota + 1 // HLAfixedArray
	modeVariable                        // HLAvariableArray
	modeLengthless                      // RPRlengthlessArray
	modeNullTerm                        // RPRnullTerminatedArray
	modePadTo                           // RPRpaddingTo32Array, RPRpaddingTo64Array
)

func (m arrayMode) String() string {
	switch m {
	case modeFixed:
		return "HLAfixedArray"
	case modeVariable:
		return "HLAvariableArray"
	case modeLengthless:
		return "RPRlengthlessArray"
	case modeNullTerm:
		return "RPRnullTerminatedArray"
	}
	return "RPRpaddingArray"
}

// repr is how an array's value is represented in Go.
type repr uint8

const (
	reprGeneric repr = iota // []any
	reprBytes               // []byte
	reprASCII               // string of octets
	reprUnicode             // string (UTF-16 on the wire)
)

type field struct {
	name string
	n    *node
}

type alt struct {
	name string
	n    *node // nil: the alternative carries no data
}

const (
	maxCompileDepth = 10000
	sizeCap         = 1 << 40
)

type compiler struct {
	fdd   *fomxml.FDD
	nodes map[string]*node
	all   []*node
}

func (c *compiler) lookup(name string) *fomxml.DataType {
	if d := c.fdd.DataTypes[name]; d != nil {
		return d
	}
	return standardType(name)
}

// node returns the plan of the named type, building it on first use.
func (c *compiler) node(name string, depth int) *node {
	if n, ok := c.nodes[name]; ok {
		return n
	}
	n := &node{name: name, other: -1}
	c.nodes[name] = n
	c.all = append(c.all, n)
	d := c.lookup(name)
	switch {
	case d == nil:
		n.err = &Error{Path: name, Err: ErrUnknownType, Msg: "unknown data type"}
	case depth > maxCompileDepth:
		n.err = &Error{Path: name, Err: ErrUnsupportedType, Msg: "data type definitions nested too deeply"}
	default:
		c.build(n, d, depth+1)
	}
	return n
}

func (n *node) fail(kind error, format string, args ...any) {
	e := newError(kind, format, args...)
	e.Path = n.name
	n.err = e
}

// inherit records in n the error of a type it is built from.
func (n *node) inherit(child *node) {
	ce, ok := child.err.(*Error)
	if !ok {
		n.err = child.err
		return
	}
	if ce.Path == n.name {
		n.err = &Error{Path: n.name, Err: ce.Err, Msg: ce.Msg}
		return
	}
	n.err = &Error{Path: n.name, Err: ce.Err, Msg: "data type " + ce.Path + ": " + ce.Msg}
}

func (c *compiler) build(n *node, d *fomxml.DataType, depth int) {
	switch d.Kind {
	case fomxml.KindBasic:
		c.buildBasic(n, d)
	case fomxml.KindSimple:
		rep := c.node(d.Representation, depth)
		if rep.err != nil {
			n.inherit(rep)
			return
		}
		if rep.op != opScalar {
			n.fail(ErrUnsupportedType, "representation %s is not a basic data representation", d.Representation)
			return
		}
		n.op, n.kind, n.size, n.little, n.align = opScalar, rep.kind, rep.size, rep.little, rep.align
		n.char = rep.char
		switch {
		case n.name == "HLAASCIIchar" && n.size == 1:
			n.char = charASCII
		case n.name == "HLAunicodeChar" && n.size == 2 && !n.little:
			n.char = charUnicode
		}
	case fomxml.KindEnumerated:
		c.buildEnum(n, d, depth)
	case fomxml.KindArray:
		c.buildArray(n, d, depth)
	case fomxml.KindFixedRecord:
		if d.Encoding != "" && d.Encoding != "HLAfixedRecord" {
			n.fail(ErrUnsupportedEncoding, "unsupported encoding %q", d.Encoding)
			return
		}
		n.op = opRecord
		n.fieldIdx = make(map[string]int, len(d.Fields))
		for _, f := range d.Fields {
			if _, dup := n.fieldIdx[f.Name]; dup {
				n.fail(ErrUnsupportedType, "duplicate field %q", f.Name)
				return
			}
			n.fieldIdx[f.Name] = len(n.fields)
			n.fields = append(n.fields, field{name: f.Name, n: c.node(f.DataType, depth)})
		}
	case fomxml.KindVariantRecord:
		c.buildVariant(n, d, depth)
	default:
		n.fail(ErrUnsupportedType, "unknown kind of data type (%d)", int(d.Kind))
	}
}

func (c *compiler) buildBasic(n *node, d *fomxml.DataType) {
	switch d.Size {
	case 8, 16, 32, 64:
	default:
		n.fail(ErrUnsupportedType, "basic data representation of %d bits; want 8, 16, 32 or 64", d.Size)
		return
	}
	n.op = opScalar
	n.size = d.Size / 8
	n.align = n.size
	n.little = d.Endian == fomxml.LittleEndian
	if n.size > 1 && d.Endian != fomxml.BigEndian && d.Endian != fomxml.LittleEndian {
		n.fail(ErrUnsupportedType, "basic data representation without endianness")
		return
	}
	switch n.name {
	case "HLAinteger16BE", "HLAinteger32BE", "HLAinteger64BE", "HLAinteger16LE", "HLAinteger32LE", "HLAinteger64LE":
		n.kind = kInt
		return
	case "HLAfloat32BE", "HLAfloat64BE", "HLAfloat32LE", "HLAfloat64LE":
		n.kind = kFloat
		if n.size < 4 {
			n.fail(ErrUnsupportedType, "%d-bit floating point", d.Size)
		}
		return
	case "HLAoctet":
		n.kind, n.char = kUint, charOctet
		return
	case "HLAoctetPairBE", "HLAoctetPairLE":
		n.kind = kUint
		return
	}
	text := strings.ToLower(n.name + " " + d.Interpretation + " " + d.Encoding)
	compact := strings.Join(strings.Fields(text), "")
	switch {
	case strings.Contains(text, "float") || strings.Contains(text, "double") || strings.Contains(text, "ieee"):
		if n.size < 4 {
			n.fail(ErrUnsupportedType, "%d-bit floating point", d.Size)
			return
		}
		n.kind = kFloat
	case strings.Contains(text, "unsigned") || strings.Contains(compact, "[0,"):
		n.kind = kUint
	case strings.Contains(text, "integer") || strings.Contains(text, "signed") || strings.Contains(text, "complement"):
		n.kind = kInt
	case strings.Contains(text, "octet") || strings.Contains(text, "byte") || strings.Contains(compact, "-bitvalue"):
		n.kind = kUint
	default:
		n.fail(ErrUnsupportedType, "cannot tell whether basic data representation is a signed integer, unsigned integer or float (interpretation %q)", d.Interpretation)
	}
}

func (c *compiler) buildEnum(n *node, d *fomxml.DataType, depth int) {
	rep := c.node(d.Representation, depth)
	if rep.err != nil {
		n.inherit(rep)
		return
	}
	if rep.op != opScalar || rep.kind == kFloat {
		n.fail(ErrUnsupportedType, "enumeration representation %s is not an integer basic data representation", d.Representation)
		return
	}
	n.op, n.kind, n.size, n.little, n.align = opEnum, rep.kind, rep.size, rep.little, rep.align
	n.byName = make(map[string]int64, len(d.Enumerators))
	n.byValue = make(map[int64]string, len(d.Enumerators))
	// An enumerator encodes as its first value; a value decodes as the
	// first enumerator that has it. A name listed twice (fomxml folds
	// repeats, hand-made FDDs may not) is one enumerator with the values
	// of both.
	for _, e := range d.Enumerators {
		if len(e.Values) == 0 {
			n.fail(ErrUnsupportedType, "enumerator %s has no value", e.Name)
			return
		}
		for _, v := range e.Values {
			if !n.fits(v) {
				n.fail(ErrUnsupportedType, "value %d of enumerator %s does not fit %s", v, e.Name, d.Representation)
				return
			}
			if _, dup := n.byValue[v]; !dup {
				n.byValue[v] = e.Name
			}
		}
		if _, dup := n.byName[e.Name]; !dup {
			n.byName[e.Name] = e.Values[0]
		}
	}
	if n.name == "HLAboolean" && len(d.Enumerators) == 2 && len(n.byValue) == 2 &&
		n.byName["HLAfalse"] == 0 && n.byName["HLAtrue"] == 1 && n.byValue[0] == "HLAfalse" && n.byValue[1] == "HLAtrue" {
		n.op = opBool
	}
}

// fits reports whether v is representable in scalar n.
func (n *node) fits(v int64) bool {
	bits := uint(n.size * 8)
	if n.kind == kUint {
		return v >= 0 && (bits == 64 || uint64(v) < 1<<bits)
	}
	if bits == 64 {
		return true
	}
	lim := int64(1) << (bits - 1)
	return v >= -lim && v < lim
}

func (c *compiler) buildArray(n *node, d *fomxml.DataType, depth int) {
	n.op = opArray
	elem := c.node(d.Element, depth)
	n.elem = elem
	if elem.err != nil {
		n.inherit(elem)
		return
	}
	if elem.op == opScalar {
		switch elem.char {
		case charOctet:
			n.repr = reprBytes
		case charASCII:
			n.repr = reprASCII
		case charUnicode:
			n.repr = reprUnicode
		}
	}
	card := d.Cardinality
	switch d.Encoding {
	case "HLAfixedArray":
		if card.Dynamic || len(card.Ranges) == 0 {
			n.fail(ErrUnsupportedType, "HLAfixedArray with cardinality %q; want a fixed number of elements", card.Text)
			return
		}
		for _, r := range card.Ranges {
			if r.Min != r.Max || r.Min < 0 || r.Min > math.MaxInt32 {
				n.fail(ErrUnsupportedType, "HLAfixedArray with cardinality %q; want a fixed number of elements", card.Text)
				return
			}
		}
		// A multi-dimensional array is an array of arrays: the layout is
		// the same, since each inner array starts at the element boundary.
		inner := elem
		for i := len(card.Ranges) - 1; i > 0; i-- {
			a := &node{name: n.name, op: opArray, mode: modeFixed, count: int(card.Ranges[i].Min), elem: inner, other: -1}
			if inner == elem {
				a.repr = n.repr
			}
			c.all = append(c.all, a)
			inner = a
		}
		if inner != elem {
			n.repr = reprGeneric
		}
		n.elem, n.mode, n.count = inner, modeFixed, int(card.Ranges[0].Min)
	case "HLAvariableArray":
		n.mode, n.minCount, n.maxCount = modeVariable, 0, -1
		switch {
		case len(card.Ranges) > 1:
			n.fail(ErrUnsupportedType, "multi-dimensional HLAvariableArray (cardinality %q)", card.Text)
			return
		case card.Dynamic || len(card.Ranges) == 0:
		default:
			r := card.Ranges[0]
			switch {
			case r.Max < 0: // unbounded, as the parser writes "Dynamic"
				n.minCount = max(r.Min, 0)
			case r.Min < 0 || r.Max < r.Min:
				n.fail(ErrUnsupportedType, "bad cardinality %q", card.Text)
				return
			default:
				n.minCount, n.maxCount = r.Min, r.Max
			}
		}
	case "RPRlengthlessArray":
		n.mode = modeLengthless
	case "RPRnullTerminatedArray":
		if n.repr == reprGeneric {
			n.fail(ErrUnsupportedEncoding, "RPRnullTerminatedArray of %s; only arrays of HLAASCIIchar, HLAunicodeChar and octets are supported", d.Element)
			return
		}
		n.mode = modeNullTerm
	case "RPRpaddingTo32Array", "RPRpaddingTo64Array":
		if elem.op != opScalar || elem.size != 1 {
			n.fail(ErrUnsupportedEncoding, "%s of %s; want octet elements", d.Encoding, d.Element)
			return
		}
		n.mode, n.repr, n.padTo = modePadTo, reprBytes, 4
		if d.Encoding == "RPRpaddingTo64Array" {
			n.padTo = 8
		}
	case "":
		n.fail(ErrUnsupportedEncoding, "array without encoding")
	default:
		n.fail(ErrUnsupportedEncoding, "unsupported encoding %q", d.Encoding)
	}
}

func (c *compiler) buildVariant(n *node, d *fomxml.DataType, depth int) {
	if d.Encoding != "" && d.Encoding != "HLAvariantRecord" {
		n.fail(ErrUnsupportedEncoding, "unsupported encoding %q", d.Encoding)
		return
	}
	n.op = opVariant
	disc := c.node(d.Representation, depth)
	n.disc, n.discName = disc, d.Discriminant
	if disc.err != nil {
		n.inherit(disc)
		return
	}
	if disc.op != opEnum && disc.op != opBool {
		n.fail(ErrUnsupportedType, "discriminant type %s is not an enumerated data type", d.Representation)
		return
	}
	// selects maps an enumerator to the alternative it selects.
	selects := make(map[string]int)
	for _, a := range d.Alternatives {
		if a.Name == d.Discriminant {
			n.fail(ErrUnsupportedType, "alternative %q has the name of the discriminant", a.Name)
			return
		}
		i := len(n.alts)
		var an *node
		if a.DataType != "" && a.DataType != "NA" {
			an = c.node(a.DataType, depth)
		}
		n.alts = append(n.alts, alt{name: a.Name, n: an})
		if a.Other {
			if n.other >= 0 {
				n.fail(ErrUnsupportedType, "two HLAother alternatives")
				return
			}
			n.other = i
		}
		for _, e := range a.Enumerators {
			if e == "HLAother" {
				if n.other >= 0 && n.other != i {
					n.fail(ErrUnsupportedType, "two HLAother alternatives")
					return
				}
				n.other = i
				continue
			}
			if _, ok := disc.byName[e]; !ok {
				n.fail(ErrUnsupportedType, "alternative %s: %s is not an enumerator of %s", a.Name, e, d.Representation)
				return
			}
			if j, dup := selects[e]; dup && j != i {
				n.fail(ErrUnsupportedType, "enumerator %s selects two alternatives", e)
				return
			}
			selects[e] = i
		}
	}
	sel := func(name string) int {
		if i, ok := selects[name]; ok {
			return i
		}
		return n.other // -1: none
	}
	// A value selects the alternative of the enumerator it decodes as.
	// An enumerator that encodes as a value decoding as another one must
	// select the same alternative, or the receiver would read the data
	// that follows as something else.
	n.altByValue = make(map[int64]int, len(disc.byValue))
	for v, name := range disc.byValue {
		if i := sel(name); i >= 0 {
			n.altByValue[v] = i
		}
	}
	for _, name := range slices.Sorted(maps.Keys(disc.byName)) {
		v := disc.byName[name]
		if o := disc.byValue[v]; o != name && sel(name) >= 0 && sel(o) != sel(name) {
			n.fail(ErrUnsupportedType, "enumerator %s encodes as %d, which decodes as %s, and they select different alternatives", name, v, o)
			return
		}
	}
}

// children calls f for every node n is built from.
func (n *node) children(f func(*node)) {
	if n.elem != nil {
		f(n.elem)
	}
	for _, fl := range n.fields {
		f(fl.n)
	}
	if n.disc != nil {
		f(n.disc)
	}
	for _, a := range n.alts {
		if a.n != nil {
			f(a.n)
		}
	}
}

// finish computes the properties that need the whole graph: finiteness
// (cycles must be broken by something that may be empty), error
// propagation, octet boundaries and size bounds.
func (c *compiler) finish() {
	// Least fixpoint of "has a finite encoding".
	for _, n := range c.all {
		n.finite = n.err != nil || n.op == opScalar || n.op == opEnum || n.op == opBool
	}
	for changed := true; changed; {
		changed = false
		for _, n := range c.all {
			if n.finite {
				continue
			}
			if n.finiteNow() {
				n.finite, changed = true, true
			}
		}
	}
	for _, n := range c.all {
		if !n.finite {
			n.fail(ErrUnsupportedType, "recursive definition without finite values")
		}
	}

	c.propagate()

	// Octet boundaries: the greatest boundary of the parts, a fixpoint on
	// cyclic graphs (boundaries only grow and are at most 8).
	for _, n := range c.all {
		if n.align == 0 {
			n.align = 1
		}
	}
	for changed := true; changed; {
		changed = false
		for _, n := range c.all {
			if n.err != nil {
				continue
			}
			if a := n.alignNow(); a != n.align {
				n.align, changed = a, true
			}
		}
	}

	// Lower bounds of encoded sizes, iterated from zero; any iterate is a
	// valid lower bound, so stopping early is safe.
	for round := 0; round <= len(c.all)+1; round++ {
		changed := false
		for _, n := range c.all {
			if n.err != nil {
				continue
			}
			if m := n.minSizeNow(); m != n.minSize {
				n.minSize, changed = m, true
			}
		}
		if !changed {
			break
		}
	}
	// A lengthless array ends where the data ends; with elements that may
	// be empty that would never happen.
	bad := false
	for _, n := range c.all {
		if n.err == nil && n.op == opArray && n.mode == modeLengthless && n.repr == reprGeneric && n.elem.minSize <= 0 {
			n.fail(ErrUnsupportedEncoding, "RPRlengthlessArray of %s, whose values may encode to nothing", n.elem.name)
			bad = true
		}
	}
	if bad {
		c.propagate()
	}
	for _, n := range c.all {
		if n.err == nil {
			n.fixedSize()
		}
	}
}

// propagate makes every type built from an unusable type unusable.
func (c *compiler) propagate() {
	for changed := true; changed; {
		changed = false
		for _, n := range c.all {
			if n.err != nil {
				continue
			}
			n.children(func(ch *node) {
				if n.err == nil && ch.err != nil {
					n.inherit(ch)
					changed = true
				}
			})
		}
	}
}

func (n *node) finiteNow() bool {
	switch n.op {
	case opArray:
		if n.mode == modeFixed {
			return n.count == 0 || n.elem.finite
		}
		return true
	case opRecord:
		for _, f := range n.fields {
			if !f.n.finite {
				return false
			}
		}
		return true
	case opVariant:
		for _, a := range n.alts {
			if a.n == nil || a.n.finite {
				return true
			}
		}
		return false
	}
	return true
}

func (n *node) alignNow() int {
	switch n.op {
	case opArray:
		switch n.mode {
		case modeVariable:
			return max(4, n.elem.align)
		case modePadTo:
			return 1
		}
		return n.elem.align
	case opRecord:
		a := 1
		for _, f := range n.fields {
			a = max(a, f.n.align)
		}
		return a
	case opVariant:
		a := 1
		for _, al := range n.alts {
			if al.n != nil {
				a = max(a, al.n.align)
			}
		}
		n.altAlign = a
		return max(a, n.disc.align)
	}
	return n.align
}

func satAdd(a, b int) int { return min(a+b, sizeCap) }

func satMul(a, b int) int {
	if a == 0 || b == 0 {
		return 0
	}
	if a > sizeCap/b {
		return sizeCap
	}
	return a * b
}

func (n *node) minSizeNow() int {
	switch n.op {
	case opScalar, opEnum, opBool:
		return n.size
	case opArray:
		switch n.mode {
		case modeFixed:
			return satMul(n.count, n.elem.minSize)
		case modeVariable:
			return 4
		case modeNullTerm:
			return n.elem.size
		}
		return 0
	case opRecord:
		s := 0
		for _, f := range n.fields {
			s = satAdd(s, f.n.minSize)
		}
		return s
	case opVariant:
		m := -1
		for _, a := range n.alts {
			s := 0
			if a.n != nil {
				s = a.n.minSize
			}
			if m < 0 || s < m {
				m = s
			}
		}
		return satAdd(n.disc.size, max(m, 0))
	}
	return 0
}

// fixedSize returns the exact size of every encoding of n when n starts
// at its octet boundary, or -1 if encodings vary in size.
func (n *node) fixedSize() int {
	if n.fixedOK {
		return n.fixed
	}
	n.fixedOK, n.fixed = true, -1 // -1 also guards against cycles
	s := -1
	switch n.op {
	case opScalar, opEnum, opBool:
		s = n.size
	case opArray:
		if n.mode == modeFixed {
			if e := n.elem.fixedSize(); e >= 0 {
				s = 0
				if n.count > 0 {
					stride := e + PadLen(e, n.elem.align)
					s = satAdd(satMul(n.count-1, stride), e)
				}
			}
		}
	case opRecord:
		s = 0
		for _, f := range n.fields {
			e := f.n.fixedSize()
			if e < 0 {
				s = -1
				break
			}
			s = satAdd(s+PadLen(s, f.n.align), e)
		}
	}
	n.fixed = s
	return s
}
