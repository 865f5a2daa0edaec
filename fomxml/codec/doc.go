// Package codec encodes and decodes HLA data as IEEE 1516.2-2010 (HLA
// Evolved OMT, clause 4.13) lays it out on the wire, for the data types
// of a merged FDD.
//
// It offers two layers:
//
//   - Typed helpers for the standard basic representations and MIM types:
//     AppendInt32BE(b, v) []byte and ReadInt32BE(b) (v, rest, err), and so
//     on for HLAinteger16/32/64 and HLAfloat32/64 in both byte orders,
//     HLAoctet, HLAoctetPairBE/LE, HLAbyte, HLAASCIIchar, HLAunicodeChar,
//     HLAboolean, HLAASCIIstring, HLAunicodeString, HLAopaqueData,
//     HLAhandle, HLAlogicalTime, HLAtimeInterval, HLAtoken, HLAhandleList
//     and lists of HLAunicodeString. Simple types map to their
//     representation (HLAcount, HLAindex, HLAseconds, HLAmsec: Int32BE;
//     HLAinteger64Time: Int64BE; HLAfloat64Time: Float64BE) and
//     enumerations over HLAinteger32BE to Int32BE. The helpers add no
//     padding before a value; PadLen, AppendPadding and SkipPadding do.
//
//   - A dynamic codec driven by an FDD:
//
//     c, err := codec.New(fdd)
//     b, err := c.Encode("SpatialStruct", map[string]any{...})
//     v, err := c.Decode("SpatialStruct", b)
//
//     New compiles every data type once into a plan (names resolved,
//     octet boundaries computed); Encode, AppendEncode and Decode only
//     walk the plan. Codec.Type returns a *Type to skip the name lookup.
//     Decode requires the whole buffer to be one value.
//
// # Value model
//
// Decode returns, and Encode accepts, JSON-friendly Go values:
//
//   - Integers decode as int64; unsigned basic representations (HLAoctet,
//     HLAoctetPairBE/LE, and FOM types whose name, interpretation or
//     encoding says "unsigned" or whose range starts at 0) as uint64.
//     Floats decode as float64. Encode accepts any Go integer or float
//     type, named numeric types, pointers to them and json.Number; a
//     float must be integral for an integer type, and every value must be
//     in range.
//   - Enumerations decode as the enumerator name (string); Encode accepts
//     the name or an integer that is the value of an enumerator. An
//     enumerator with several values encodes as its first. A value that
//     several enumerators have decodes as the first listed (fomxml keeps
//     a value with the first enumerator written with it, and makes a
//     name written twice one enumerator).
//   - HLAboolean decodes as bool; Encode accepts bool, "HLAtrue",
//     "HLAfalse", 1 or 0. Values other than 0 and 1 do not decode.
//   - Arrays of HLAASCIIchar (HLAASCIIstring) are strings, octet for octet
//     (no check that they are 7-bit). Arrays of HLAunicodeChar
//     (HLAunicodeString) are strings: UTF-16 big-endian on the wire,
//     surrogate pairs for runes above U+FFFF; Encode rejects invalid
//     UTF-8 and Decode turns unpaired surrogates into U+FFFD (an error
//     under Strict). For a fixed array of characters Encode pads a
//     shorter string with NULs and Decode drops trailing NULs.
//   - Arrays of HLAoctet, HLAbyte or another simple type over HLAoctet
//     are []byte (Decode returns a copy). Encode also accepts a base64
//     string, as encoding/json writes []byte, or an array of integers.
//   - Other arrays are []any; Encode accepts any slice or array.
//     Multi-dimensional fixed arrays are nested []any.
//   - Fixed records are map[string]any keyed by field name. Encode also
//     accepts other maps with string keys and structs (exported fields,
//     named by an `hla:"name"` tag or the field name); every field must
//     be present and no other key may be.
//   - Variant records are map[string]any with two keys: the discriminant
//     name holding the enumerator name, and the selected alternative's
//     name holding its value (absent for an alternative without data).
//
// # Encoding rules
//
// Every value starts at a multiple of its octet boundary, counted from
// the start of the outermost encoding; the gap is filled with zero
// padding octets. The octet boundaries (1516.2-2010, "octet boundary
// values") are: a basic representation's size in octets; a simple or
// enumerated type's representation's; HLAfixedArray its element's;
// HLAvariableArray max(4, element's); HLAfixedRecord the greatest of its
// fields'; HLAvariantRecord the greatest of the discriminant's and all
// alternatives'. So:
//
//   - HLAfixedArray: the elements back to back, each padded to the element
//     boundary; no padding after the last.
//   - HLAvariableArray: an HLAinteger32BE element count, then the elements
//     as above (so 4 padding octets follow the count when elements have
//     an 8-octet boundary).
//   - HLAfixedRecord: the fields in order, each at its own boundary; no
//     padding after the last.
//   - HLAvariantRecord: the discriminant, padding to the greatest boundary
//     of the alternatives (with one alternative, that alternative's
//     boundary), then the alternative. An alternative without data is
//     the discriminant alone: no padding follows it (1516.2-2010
//     §4.13.8). A value selects the alternative of the enumerator it
//     decodes as; a variant in which an enumerator would encode as a
//     value selecting another alternative is refused when used.
//   - Enumerations are encoded as their representation.
//
// Encodings of the RPR FOM are supported where their rules are clear:
// RPRlengthlessArray (no count; the elements run to the end of the data,
// so it must be the last thing in the encoding), RPRnullTerminatedArray
// (characters or octets followed by a zero element), RPRpaddingTo32Array
// and RPRpaddingTo64Array (zero to three or seven octets up to the next
// 4- or 8-octet boundary; Encode writes zeros when the field is absent or
// nil). Cardinality is checked only for HLAvariableArray. Any other
// encoding, RPRextendedVariantRecord included, gives
// ErrUnsupportedEncoding. Basic representations not in the MIM must be 8,
// 16, 32 or 64 bits with an endianness; whether they are floats, signed
// or unsigned integers is read from their name, interpretation and
// encoding, and ErrUnsupportedType is returned when it cannot be.
//
// # Safety properties
//
// Decode treats its input as hostile: it never panics; it checks every
// length before reading; it never allocates for more elements than the
// remaining data could hold (count × minimum element size ≤ remaining
// octets, where an element that may encode to nothing counts as one
// octet, so a variable array of such elements decodes at most as many
// elements as octets remain); and it limits nesting to MaxDepth. Recursive data types are
// allowed when they can end (a record holding a variable array of
// itself); ones that cannot (a record containing itself) are reported
// when used, never by a stack overflow. Encode applies the same depth
// limit, so cyclic Go values fail cleanly.
//
// Decode is lenient where that loses nothing: padding octets are skipped
// unread, and unpaired surrogates become U+FFFD. The Strict option makes
// it reject both, so that what decodes re-encodes to the same octets.
//
// # Errors
//
// Every error is an *Error whose message names the data type path, as in
// "codec: SpatialStruct.WorldLocation.X: want number, got string", and
// which wraps one of the sentinel errors (ErrShortBuffer,
// ErrInvalidValue, ErrUnsupportedEncoding, ...) for errors.Is.
//
// # Concurrency
//
// A Codec and its Types are immutable after New and may be used by any
// number of goroutines at once. Encode and Decode do not block.
package codec
