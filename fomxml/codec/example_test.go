package codec_test

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/fomxml/codec"
)

// exampleFDD builds by hand the data types a FOM module would declare; the
// standard MIM types (HLAfloat64BE, HLAboolean, ...) need not be listed.
func exampleFDD() *fomxml.FDD {
	return &fomxml.FDD{DataTypes: map[string]*fomxml.DataType{
		"WorldLocation": {Name: "WorldLocation", Kind: fomxml.KindFixedRecord, Encoding: "HLAfixedRecord",
			Fields: []fomxml.Field{{Name: "X", DataType: "HLAfloat64BE"}, {Name: "Y", DataType: "HLAfloat64BE"}, {Name: "Z", DataType: "HLAfloat64BE"}}},
		"Entity": {Name: "Entity", Kind: fomxml.KindFixedRecord, Encoding: "HLAfixedRecord",
			Fields: []fomxml.Field{
				{Name: "Kind", DataType: "HLAoctet"},
				{Name: "Location", DataType: "WorldLocation"},
				{Name: "Name", DataType: "HLAunicodeString"},
				{Name: "Frozen", DataType: "HLAboolean"},
			}},
	}}
}

func Example() {
	c, err := codec.New(exampleFDD())
	if err != nil {
		panic(err)
	}
	b, err := c.Encode("Entity", map[string]any{
		"Kind":     3,
		"Location": map[string]any{"X": 1.0, "Y": 2, "Z": -0.5},
		"Name":     "tank",
		"Frozen":   false,
	})
	if err != nil {
		panic(err)
	}
	// Kind, 7 padding octets, X, Y, Z, the name's count and characters,
	// then HLAboolean.
	fmt.Printf("% x\n", b[:8])
	fmt.Println(len(b))

	v, err := c.Decode("Entity", b)
	if err != nil {
		panic(err)
	}
	j, _ := json.Marshal(v)
	fmt.Println(string(j))
	// Output:
	// 03 00 00 00 00 00 00 00
	// 48
	// {"Frozen":false,"Kind":3,"Location":{"X":1,"Y":2,"Z":-0.5},"Name":"tank"}
}

func ExampleCodec_Encode_error() {
	c, _ := codec.New(exampleFDD())
	_, err := c.Encode("WorldLocation", map[string]any{"X": "east", "Y": 0, "Z": 0})
	fmt.Println(err)
	fmt.Println(errors.Is(err, codec.ErrInvalidValue))
	// Output:
	// codec: WorldLocation.X: want number, got string
	// true
}

func ExampleCodec_Decode() {
	c, _ := codec.New(&fomxml.FDD{}) // standard MIM types only
	v, err := c.Decode("HLAhandleList", []byte{
		0, 0, 0, 2, // two handles
		0, 0, 0, 1, 0xaa, 0, 0, 0, // one octet, padded to 4
		0, 0, 0, 2, 0xbb, 0xcc,
	})
	fmt.Printf("%x %v\n", v, err)

	_, err = c.Decode("HLAASCIIstring", []byte{0x7f, 0xff, 0xff, 0xff, 'h', 'i'})
	fmt.Println(err)
	// Output:
	// [aa bbcc] <nil>
	// codec: HLAASCIIstring: short buffer: element count 2147483647 needs at least 2147483647 bytes at offset 4, have 2
}

func ExampleAppendInt32BE() {
	b := codec.AppendInt32BE(nil, 1)
	b = codec.AppendInt32LE(b, 1)
	fmt.Printf("% x\n", b)

	v, rest, err := codec.ReadInt32BE(b)
	fmt.Println(v, len(rest), err)
	_, _, err = codec.ReadInt32BE(b[:2])
	fmt.Println(err)
	// Output:
	// 00 00 00 01 01 00 00 00
	// 1 4 <nil>
	// codec: HLAinteger32BE: short buffer: need 4 bytes, have 2
}

func ExampleAppendUnicodeString() {
	b, err := codec.AppendUnicodeString(nil, "hé😀")
	fmt.Printf("% x %v\n", b, err)
	s, _, _ := codec.ReadUnicodeString(b)
	fmt.Println(s)
	_, err = codec.AppendUnicodeString(nil, "\xff")
	fmt.Println(err)
	// Output:
	// 00 00 00 04 00 68 00 e9 d8 3d de 00 <nil>
	// hé😀
	// codec: HLAunicodeString: invalid UTF-8
}

// A fixed record {HLAoctet, HLAinteger32BE} written and read with the
// typed helpers: the padding is explicit.
func ExampleAppendPadding() {
	b := codec.AppendOctet(nil, 1)
	b = codec.AppendPadding(b, 4)
	b = codec.AppendInt32BE(b, 2)
	fmt.Printf("% x\n", b)

	o, rest, _ := codec.ReadOctet(b)
	rest, _ = codec.SkipPadding(rest, len(b)-len(rest), 4)
	i, _, _ := codec.ReadInt32BE(rest)
	fmt.Println(o, i)
	// Output:
	// 01 00 00 00 00 00 00 02
	// 1 2
}
