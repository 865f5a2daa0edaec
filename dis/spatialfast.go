package dis

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"

	"github.com/meshrti/meshrti/fomxml"
)

// Spatial is on the wire for every PDU of a moving entity, both ways, so
// it has a fast path: its octets laid out directly, with no Go maps in
// between. The fast path is used only when, for every dead-reckoning
// algorithm, it encodes a probe exactly as fomxml/codec encodes it by the
// FDD's SpatialVariantStruct and decodes the codec's octets to the same
// PDU fields (checkSpatialFast); a FOM that lays Spatial out otherwise
// takes the codec's path alone.

// spatialLayout is one alternative of Spatial: its discriminant value and
// its fields, in order, each with its octet offset.
type spatialLayout struct {
	fields []spatialField
	size   int
}

type spatialField struct {
	name string
	off  int
}

// The fields the fast path knows: their size and octet boundary
// (1516.2-2010: a record's boundary is its largest field's).
var spatialFieldShape = map[string]struct{ size, align int }{
	"WorldLocation":      {24, 8},
	"IsFrozen":           {1, 1},
	"Orientation":        {12, 4},
	"VelocityVector":     {12, 4},
	"AccelerationVector": {12, 4},
	"AngularVelocity":    {12, 4},
}

// spatialFast compiles the fast layouts of m's Spatial, or returns an
// error saying why it does not apply.
func (m *Mapper) spatialFast() (map[uint8]*spatialLayout, error) {
	dt, _ := m.fdd.DataType(m.spatial.name)
	disc, _ := m.fdd.DataType(dt.Representation)
	if disc == nil || disc.Kind != fomxml.KindEnumerated {
		return nil, errors.New("the discriminant is not an enumeration")
	}
	if rep, ok := m.fdd.DataType(disc.Representation); !ok || rep.Size != 8 {
		return nil, errors.New("the discriminant is not one octet")
	}
	out := map[uint8]*spatialLayout{}
	for v, alt := range m.spatial.byValue {
		if v < 0 || v > 255 {
			return nil, fmt.Errorf("discriminant value %d", v)
		}
		rec, ok := m.fdd.DataType(alt.dataType)
		if !ok || rec.Kind != fomxml.KindFixedRecord {
			return nil, fmt.Errorf("%s is not a fixed record", alt.dataType)
		}
		l := &spatialLayout{}
		off := 8 // the discriminant, padded to the alternatives' 8-octet boundary
		for _, f := range rec.Fields {
			shape, ok := spatialFieldShape[f.Name]
			if !ok {
				return nil, fmt.Errorf("field %s", f.Name)
			}
			off = (off + shape.align - 1) / shape.align * shape.align
			l.fields = append(l.fields, spatialField{f.Name, off})
			off += shape.size
		}
		l.size = off
		out[uint8(v)] = l
	}
	return out, nil
}

// checkSpatialFast keeps the fast layouts only if they agree with the
// codec, octet for octet, on a probe of every algorithm.
func (m *Mapper) checkSpatialFast(layouts map[uint8]*spatialLayout) error {
	probe := EntityState{
		Location: WorldCoordinates{6378137.5, -1234.25, 42.125}, Orientation: EulerAngles{0.5, -0.25, 3},
		Velocity: Vector{1.5, -2, 0.25}, Appearance: appearanceFrozen,
		DeadReckoning: DeadReckoning{LinearAcceleration: Vector{1, 2, 3}, AngularVelocity: Vector{0.125, 0.25, -0.5}},
	}
	sp, _ := m.base.Attribute("Spatial")
	t, err := m.cd.Type(sp.DataType)
	if err != nil {
		return err
	}
	for alg := range layouts {
		probe.DeadReckoning.Algorithm = alg
		v, err := m.spatialValue(&probe)
		if err != nil {
			return err
		}
		want, err := t.Encode(v)
		if err != nil {
			return err
		}
		got := appendSpatial(nil, layouts[alg], &probe)
		if !slices.Equal(got, want) {
			return fmt.Errorf("algorithm %d: fast % x, codec % x", alg, got, want)
		}
		var a, b EntityState
		dv, err := t.Decode(want)
		if err != nil {
			return err
		}
		if err := m.readSpatial(dv, &a); err != nil {
			return err
		}
		if err := readSpatialFast(layouts, want, &b); err != nil {
			return err
		}
		if !reflect.DeepEqual(a, b) {
			return fmt.Errorf("algorithm %d: decoded %+v, codec %+v", alg, b, a)
		}
	}
	return nil
}

func appendSpatial(b []byte, l *spatialLayout, es *EntityState) []byte {
	start := len(b)
	b = append(b, make([]byte, l.size)...)
	w := b[start:]
	w[0] = es.DeadReckoning.Algorithm
	put3 := func(off int, v Vector) {
		binary.BigEndian.PutUint32(w[off:], math.Float32bits(v.X))
		binary.BigEndian.PutUint32(w[off+4:], math.Float32bits(v.Y))
		binary.BigEndian.PutUint32(w[off+8:], math.Float32bits(v.Z))
	}
	for _, f := range l.fields {
		switch f.name {
		case "WorldLocation":
			binary.BigEndian.PutUint64(w[f.off:], math.Float64bits(es.Location.X))
			binary.BigEndian.PutUint64(w[f.off+8:], math.Float64bits(es.Location.Y))
			binary.BigEndian.PutUint64(w[f.off+16:], math.Float64bits(es.Location.Z))
		case "IsFrozen":
			if es.Appearance&appearanceFrozen != 0 {
				w[f.off] = 1
			}
		case "Orientation":
			put3(f.off, Vector{es.Orientation.Psi, es.Orientation.Theta, es.Orientation.Phi})
		case "VelocityVector":
			put3(f.off, es.Velocity)
		case "AccelerationVector":
			put3(f.off, es.DeadReckoning.LinearAcceleration)
		case "AngularVelocity":
			put3(f.off, es.DeadReckoning.AngularVelocity)
		}
	}
	return b
}

// readSpatialFast decodes a Spatial value laid out as layouts say into
// es, as readSpatial does; an error leaves es as it was.
func readSpatialFast(layouts map[uint8]*spatialLayout, b []byte, es *EntityState) error {
	if len(b) == 0 {
		return errors.New("no octets")
	}
	l, ok := layouts[b[0]]
	if !ok {
		return fmt.Errorf("dead-reckoning algorithm %d has no alternative", b[0])
	}
	if len(b) != l.size {
		return fmt.Errorf("%d octets for algorithm %d, want %d", len(b), b[0], l.size)
	}
	out := *es
	out.DeadReckoning.Algorithm = b[0]
	out.Velocity, out.DeadReckoning.LinearAcceleration, out.DeadReckoning.AngularVelocity = Vector{}, Vector{}, Vector{}
	for _, f := range l.fields {
		switch f.name {
		case "WorldLocation":
			out.Location = readWorld(b[f.off:])
		case "IsFrozen":
			switch b[f.off] {
			case 0:
				out.Appearance &^= appearanceFrozen
			case 1:
				out.Appearance |= appearanceFrozen
			default:
				return fmt.Errorf("IsFrozen %d", b[f.off])
			}
		case "Orientation":
			v := readVector(b[f.off:])
			out.Orientation = EulerAngles{v.X, v.Y, v.Z}
		case "VelocityVector":
			out.Velocity = readVector(b[f.off:])
		case "AccelerationVector":
			out.DeadReckoning.LinearAcceleration = readVector(b[f.off:])
		case "AngularVelocity":
			out.DeadReckoning.AngularVelocity = readVector(b[f.off:])
		}
	}
	*es = out
	return nil
}
