package updatecond

import (
	"sync"
	"testing"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/fomxml/codec"
	"github.com/meshrti/meshrti/peer/hla"
)

// The test FOM (testdata/vehicles.xml), loaded once.
var testFOM = sync.OnceValues(func() (*fomxml.FDD, error) {
	return fomxml.Load("testdata/vehicles.xml")
})

type fixture struct {
	fdd   *fomxml.FDD
	codec *codec.Codec
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	fdd, err := testFOM()
	if err != nil {
		t.Fatal(err)
	}
	c, err := codec.New(fdd)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{fdd: fdd, codec: c}
}

// filter makes a Filter of the test FOM with cfg.
func (fx *fixture) filter(t testing.TB, cfg Config) *Filter {
	t.Helper()
	f, err := New(fx.fdd, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (fx *fixture) class(t testing.TB, name string) *fomxml.ObjectClass {
	t.Helper()
	c, ok := fx.fdd.ObjectClass(name)
	if !ok {
		t.Fatalf("no class %q", name)
	}
	return c
}

func (fx *fixture) attr(t testing.TB, class, name string) *fomxml.Attribute {
	t.Helper()
	a, ok := fx.class(t, class).Attribute(name)
	if !ok {
		t.Fatalf("no attribute %s.%s", class, name)
	}
	return a
}

// encode encodes v as the attribute's data type; a []byte whose data
// type is not an octet array is taken as the encoding itself.
func (fx *fixture) encode(t testing.TB, a *fomxml.Attribute, v any) []byte {
	t.Helper()
	if raw, ok := v.(rawBytes); ok {
		return raw
	}
	b, err := fx.codec.Encode(a.DataType, v)
	if err != nil {
		t.Fatalf("encode %s as %s: %v", a.Name, a.DataType, err)
	}
	return b
}

// rawBytes is an encoding given as is, valid or not.
type rawBytes []byte

func obj(n uint64) hla.ObjectInstanceHandle { return hla.ObjectInstanceHandle{Federate: 1, Serial: n} }
