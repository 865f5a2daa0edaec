package dis

import (
	"testing"

	"github.com/meshrti/meshrti/peer/hla"
)

// The cost of one Entity State PDU through the codec and the mapping,
// each way: what the gateway spends per PDU besides the sockets and the
// federate. Rerun with go test -run - -bench . -benchmem ./dis.

func BenchmarkDecodeEntityState(b *testing.B) {
	buf := hx(b, espduV7)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeExercise(buf, 1); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeEntityState(b *testing.B) {
	p, _ := Decode(hx(b, espduV7))
	var out []byte
	b.ReportAllocs()
	for b.Loop() {
		out, _ = p.Append(out[:0])
	}
}

// A moving entity after its first PDU: Spatial alone is encoded.
func BenchmarkEntityValuesMove(b *testing.B) {
	m := rprMapper(b, MapperConfig{})
	es := espduFrom(b, espduV6)
	class := m.ClassFor(es.Type)
	prev := *es
	dst := hla.AttributeValues{}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		es.Location.X = prev.Location.X + float64(i%100+1)
		clear(dst)
		if errs := m.EntityValues(class.Handle, es, &prev, dst); len(errs) > 0 || len(dst) != 1 {
			b.Fatal(errs, len(dst))
		}
	}
}

// A reflected Spatial into a PDU.
func BenchmarkApplySpatial(b *testing.B) {
	m := rprMapper(b, MapperConfig{})
	es := espduFrom(b, espduV6)
	class := m.ClassFor(es.Type)
	vals := hla.AttributeValues{}
	m.EntityValues(class.Handle, es, nil, vals)
	sp, _ := m.Attribute(class.Handle, "Spatial")
	one := hla.AttributeValues{sp.Handle: vals[sp.Handle]}
	var out EntityState
	b.ReportAllocs()
	for b.Loop() {
		if _, errs := m.ApplyEntityValues(class.Handle, one, &out); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}
