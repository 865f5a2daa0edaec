package codec

import (
	"errors"
	"fmt"
	"strconv"
)

// Sentinel errors. Every error returned by this package is an *Error whose
// Unwrap returns one of these, so callers test the kind with errors.Is.
var (
	// ErrShortBuffer: the data ends before the value does.
	ErrShortBuffer = errors.New("codec: short buffer")
	// ErrTrailingData: Decode consumed the value but octets remain.
	ErrTrailingData = errors.New("codec: trailing data")
	// ErrInvalidData: the octets are not a valid encoding of the type (a
	// value that is not an enumerator, a negative or oversized count, a
	// bad boolean, nonzero padding in strict mode, ...).
	ErrInvalidData = errors.New("codec: invalid data")
	// ErrInvalidValue: the Go value given to an encoder cannot be encoded
	// as the type (wrong Go type, out of range, unknown enumerator,
	// missing or unknown field, wrong length, invalid UTF-8, ...).
	ErrInvalidValue = errors.New("codec: invalid value")
	// ErrUnknownType: no data type of that name.
	ErrUnknownType = errors.New("codec: unknown data type")
	// ErrUnsupportedType: the data type definition cannot be encoded: a
	// basic representation whose size or kind cannot be inferred, a
	// fixed array with a range cardinality, a recursive definition
	// without finite values, and the like.
	ErrUnsupportedType = errors.New("codec: unsupported data type")
	// ErrUnsupportedEncoding: the data type names an encoding this
	// package does not implement (e.g. "RPRextendedVariantRecord"), or
	// uses a supported one where its rules do not apply.
	ErrUnsupportedEncoding = errors.New("codec: unsupported encoding")
	// ErrTooDeep: values are nested deeper than MaxDepth.
	ErrTooDeep = errors.New("codec: nesting too deep")
)

// Error is the error type of this package. Its message is
// "codec: <Path>: <Msg>", for example
// "codec: SpatialStruct.WorldLocation.X: want number, got string".
type Error struct {
	// Path locates the fault: a data type name followed by ".Field" and
	// "[index]" steps.
	Path string
	// Err is one of the package's sentinel errors.
	Err error
	// Msg describes the fault.
	Msg string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return "codec: " + e.Msg
	}
	return "codec: " + e.Path + ": " + e.Msg
}

// Unwrap returns the sentinel error.
func (e *Error) Unwrap() error { return e.Err }

func newError(kind error, format string, args ...any) *Error {
	return &Error{Err: kind, Msg: fmt.Sprintf(format, args...)}
}

func shortError(path string, need, have int) *Error {
	return &Error{Path: path, Err: ErrShortBuffer, Msg: fmt.Sprintf("short buffer: need %d bytes, have %d", need, have)}
}

// prefixPath prepends seg to the path of err, which must be an *Error
// created during this call (errors are never shared).
func prefixPath(err error, seg string) error {
	if e, ok := err.(*Error); ok {
		e.Path = seg + e.Path
	}
	return err
}

// setPath replaces the path of err, if it is an *Error.
func setPath(err error, path string) error {
	if e, ok := err.(*Error); ok {
		e.Path = path
	}
	return err
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
