package codec

import (
	"errors"
	"maps"
	"slices"
	"sort"

	"github.com/meshrti/meshrti/fomxml"
)

// MaxDepth is the deepest nesting of constructed values (arrays, records,
// variant records) that Encode and Decode accept. Deeper values yield
// ErrTooDeep; this bounds the work and stack of recursive data types.
const MaxDepth = 100

// Codec encodes and decodes values of the data types of one FDD. It is
// immutable after New, so any number of goroutines may use it at once.
type Codec struct {
	types  map[string]*Type
	strict bool
}

// Type is one compiled data type of a Codec. Like the Codec it is
// immutable and safe for concurrent use. Using a *Type saves the name
// lookup of the Codec methods.
type Type struct {
	name   string
	n      *node
	strict bool
}

// Option configures New.
type Option func(*Codec)

// Strict makes Decode reject input that is valid but not canonical:
// nonzero padding octets, and unpaired UTF-16 surrogates in Unicode
// strings (which otherwise decode as U+FFFD). With Strict, a successful
// Decode followed by Encode reproduces the input exactly, except for
// float32 NaN payloads and enumerators with several values or sharing
// a value with another.
func Strict() Option { return func(c *Codec) { c.strict = true } }

// New compiles every data type of fdd into an encoding plan: names are
// resolved and octet boundaries computed once, here. Data types of the
// standard MIM that fdd does not define are added, so New(&fomxml.FDD{})
// gives a codec for the standard types alone.
//
// A data type that cannot be encoded (an unknown encoding, a reference to
// an unknown type, a recursive definition without finite values, ...)
// does not make New fail: Codec.Type, Encode and Decode report its error
// when it is used. New fails only if fdd is nil.
func New(fdd *fomxml.FDD, opts ...Option) (*Codec, error) {
	if fdd == nil {
		return nil, &Error{Err: ErrUnknownType, Msg: "nil FDD"}
	}
	c := &Codec{}
	for _, o := range opts {
		o(c)
	}
	cp := &compiler{fdd: fdd, nodes: make(map[string]*node)}
	// Sorted: a deterministic compilation order.
	names := append(slices.Sorted(maps.Keys(fdd.DataTypes)), standardTypeNames()...)
	for _, name := range names {
		cp.node(name, 0)
	}
	cp.finish()
	c.types = make(map[string]*Type, len(names))
	for _, name := range names {
		c.types[name] = &Type{name: name, n: cp.nodes[name], strict: c.strict}
	}
	return c, nil
}

// Names returns the names of all data types the codec knows, sorted,
// including those it cannot encode.
func (c *Codec) Names() []string {
	names := make([]string, 0, len(c.types))
	for name := range c.types {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Type returns the named data type, or an error if it is unknown or
// cannot be encoded (wrapping ErrUnknownType, ErrUnsupportedType or
// ErrUnsupportedEncoding).
func (c *Codec) Type(name string) (*Type, error) {
	t := c.types[name]
	if t == nil {
		return nil, &Error{Path: name, Err: ErrUnknownType, Msg: "unknown data type"}
	}
	if t.n.err != nil {
		return nil, copyErr(t.n.err)
	}
	return t, nil
}

// copyErr returns a private copy of a stored error, so that callers (and
// path prefixing) never modify the compiled plan.
func copyErr(err error) error {
	var e *Error
	if errors.As(err, &e) {
		c := *e
		return &c
	}
	return err
}

// Encode returns the encoding of v as the named data type. See the
// package documentation for the Go values accepted.
func (c *Codec) Encode(typeName string, v any) ([]byte, error) {
	t, err := c.Type(typeName)
	if err != nil {
		return nil, err
	}
	return t.Encode(v)
}

// AppendEncode appends the encoding of v as the named data type to dst.
// Padding is relative to len(dst): dst must end where the encoding starts
// (usually it is empty, or a reused buffer truncated to zero length). On
// error it returns dst unchanged in length.
func (c *Codec) AppendEncode(dst []byte, typeName string, v any) ([]byte, error) {
	t, err := c.Type(typeName)
	if err != nil {
		return dst, err
	}
	return t.AppendEncode(dst, v)
}

// Decode decodes b, which must hold exactly one encoding of the named
// data type. See the package documentation for the Go values returned.
func (c *Codec) Decode(typeName string, b []byte) (any, error) {
	t, err := c.Type(typeName)
	if err != nil {
		return nil, err
	}
	return t.Decode(b)
}

// Name returns the data type's name.
func (t *Type) Name() string { return t.name }

// OctetBoundary returns the data type's octet boundary (1, 2, 4 or 8):
// every encoding of it starts at a multiple of this many octets from the
// start of the enclosing encoding.
func (t *Type) OctetBoundary() int { return t.n.align }

// FixedSize returns the size in octets of every encoding of the type, if
// all encodings have the same size.
func (t *Type) FixedSize() (int, bool) {
	if t.n.fixed < 0 || t.n.fixed >= sizeCap {
		return 0, false
	}
	return t.n.fixed, true
}

// Encode returns the encoding of v.
func (t *Type) Encode(v any) ([]byte, error) {
	size := 64
	if t.n.fixed >= 0 && t.n.fixed <= 1<<16 {
		size = t.n.fixed
	}
	return t.AppendEncode(make([]byte, 0, size), v)
}

// AppendEncode appends the encoding of v to dst; see Codec.AppendEncode.
func (t *Type) AppendEncode(dst []byte, v any) ([]byte, error) {
	if t.n.err != nil {
		return dst, copyErr(t.n.err)
	}
	out, err := encodeValue(t.n, dst, len(dst), v, 0, true)
	if err != nil {
		return dst, prefixPath(err, t.name)
	}
	return out, nil
}

// Decode decodes b, which must hold exactly one encoding of the type.
func (t *Type) Decode(b []byte) (any, error) {
	if t.n.err != nil {
		return nil, copyErr(t.n.err)
	}
	d := decoder{buf: b, strict: t.strict}
	v, off, err := d.value(t.n, 0, 0, true)
	if err != nil {
		return nil, prefixPath(err, t.name)
	}
	if off != len(b) {
		return nil, &Error{Path: t.name, Err: ErrTrailingData, Msg: "trailing data: " + itoa(int64(len(b)-off)) + " bytes after the value"}
	}
	return v, nil
}
