package updatecond

import (
	"math"
	"testing"
	"time"

	"github.com/meshrti/meshrti/peer/hla"
)

// BenchmarkFilter measures the cost of Filter per call (one update of one
// instance) and per attribute value. Run with
//
//	go test -run - -bench Filter -benchmem ./peer/updatecond/
func BenchmarkFilter(b *testing.B) {
	fx := newFixture(b)
	cls := fx.class(b, "Vehicle")
	enc := func(attr string, v any) (hla.AttributeHandle, []byte) {
		a := fx.attr(b, "Vehicle", attr)
		return a.Handle, fx.encode(b, a, v)
	}
	// series returns n encodings of attr, value i given by gen(i).
	series := func(attr string, n int, gen func(i int) any) (hla.AttributeHandle, [][]byte) {
		var h hla.AttributeHandle
		out := make([][]byte, n)
		for i := range out {
			h, out[i] = enc(attr, gen(i))
		}
		return h, out
	}
	const n = 1024
	sine := func(i int) float64 { return 100 * math.Sin(2*math.Pi*float64(i)/60) }

	run := func(b *testing.B, frame func(i int) hla.AttributeValues) {
		f := fx.filter(b, Config{})
		per := len(frame(0))
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			f.Filter(obj(1), cls.Handle, frame(i), Now{Wall: time.Duration(i) * time.Second / 60})
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*per), "ns/value")
	}

	b.Run("float/unchanged", func(b *testing.B) {
		h, v := enc("Speed", 42.0)
		vals := hla.AttributeValues{h: v}
		run(b, func(int) hla.AttributeValues { return vals })
	})
	b.Run("float/sine", func(b *testing.B) {
		h, s := series("Speed", n, func(i int) any { return sine(i) })
		vals := hla.AttributeValues{h: nil}
		run(b, func(i int) hla.AttributeValues { vals[h] = s[i%n]; return vals })
	})
	b.Run("record/unchanged", func(b *testing.B) {
		h, v := enc("Position", vec(1, 2, 3))
		vals := hla.AttributeValues{h: v}
		run(b, func(int) hla.AttributeValues { return vals })
	})
	b.Run("record/sine", func(b *testing.B) {
		h, s := series("Position", n, func(i int) any { return vec(1000+sine(i), 2000, 3) })
		vals := hla.AttributeValues{h: nil}
		run(b, func(i int) hla.AttributeValues { vals[h] = s[i%n]; return vals })
	})
	b.Run("string/unchanged", func(b *testing.B) {
		h, v := enc("Callsign", "Alpha-1")
		vals := hla.AttributeValues{h: v}
		run(b, func(int) hla.AttributeValues { return vals })
	})
	// A typical entity: eleven attributes, Speed and Position moving.
	b.Run("entity/11-attributes", func(b *testing.B) {
		vals := hla.AttributeValues{}
		for attr, v := range map[string]any{
			"Fuel": 1000, "Odometer": 7, "Callsign": "Alpha-1", "Mode": "Moving",
			"Damaged": false, "Payload": []byte{1, 2, 3}, "Orientation": []float64{1, 2, 3},
			"Status": map[string]any{"Mode": "Moving", "Heading": 90.0},
		} {
			h, e := enc(attr, v)
			vals[h] = e
		}
		legacy := fx.attr(b, "Vehicle", "Legacy")
		vals[legacy.Handle] = []byte{1, 2, 3}
		hs, speed := series("Speed", n, func(i int) any { return 10 + sine(i)/10 })
		hp, pos := series("Position", n, func(i int) any { return vec(1000+sine(i), 2000-sine(i), 3) })
		run(b, func(i int) hla.AttributeValues {
			vals[hs], vals[hp] = speed[i%n], pos[i%n]
			return vals
		})
	})
}
