package dis

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/fomxml/codec"
	"github.com/meshrti/meshrti/peer/hla"
	"github.com/meshrti/meshrti/peer/updatecond"
)

// Extrapolate returns the location and orientation of an entity whose
// state es was true dt ago, moved on by its dead-reckoning algorithm
// (1278.1 annex E): Static stays; FPW and FPB move with the velocity;
// RVW, FVW, RVB and FVB add half the acceleration times dt²; the R
// algorithms turn the orientation by the angular velocity, taken as the
// rates of psi, theta and phi (exact for a rotation about one axis, a
// first-order approximation otherwise). The B algorithms' vectors are in
// body coordinates, turned into world coordinates by the orientation at
// the start.
func Extrapolate(es *EntityState, dt time.Duration) (WorldCoordinates, EulerAngles) {
	loc, ori := es.Location, es.Orientation
	t := dt.Seconds()
	alg := es.DeadReckoning.Algorithm
	if t <= 0 || alg <= DRStatic || alg > DRFVB || es.Appearance&appearanceFrozen != 0 {
		return loc, ori
	}
	v, a := es.Velocity, es.DeadReckoning.LinearAcceleration
	body := alg >= DRFPB
	if body {
		v, a = bodyToWorld(v, ori), bodyToWorld(a, ori)
	}
	loc.X += float64(v.X) * t
	loc.Y += float64(v.Y) * t
	loc.Z += float64(v.Z) * t
	switch alg {
	case DRRVW, DRFVW, DRRVB, DRFVB:
		loc.X += 0.5 * float64(a.X) * t * t
		loc.Y += 0.5 * float64(a.Y) * t * t
		loc.Z += 0.5 * float64(a.Z) * t * t
	}
	switch alg {
	case DRRPW, DRRVW, DRRPB, DRRVB:
		w := es.DeadReckoning.AngularVelocity
		ori.Psi = float32(wrapAngle(float64(ori.Psi) + float64(w.Z)*t))
		ori.Theta = float32(wrapAngle(float64(ori.Theta) + float64(w.Y)*t))
		ori.Phi = float32(wrapAngle(float64(ori.Phi) + float64(w.X)*t))
	}
	return loc, ori
}

// bodyToWorld turns a vector in the body frame of an entity oriented o
// into world coordinates: the transpose of the rotation psi about z,
// then theta about y, then phi about x.
func bodyToWorld(v Vector, o EulerAngles) Vector {
	cps, sps := math.Cos(float64(o.Psi)), math.Sin(float64(o.Psi))
	cth, sth := math.Cos(float64(o.Theta)), math.Sin(float64(o.Theta))
	cph, sph := math.Cos(float64(o.Phi)), math.Sin(float64(o.Phi))
	x, y, z := float64(v.X), float64(v.Y), float64(v.Z)
	// Rows of the world-to-body matrix R; world = Rᵀ · body.
	r := [3][3]float64{
		{cth * cps, cth * sps, -sth},
		{sph*sth*cps - cph*sps, sph*sth*sps + cph*cps, sph * cth},
		{cph*sth*cps + sph*sps, cph*sth*sps - sph*cps, cph * cth},
	}
	return Vector{
		float32(r[0][0]*x + r[1][0]*y + r[2][0]*z),
		float32(r[0][1]*x + r[1][1]*y + r[2][1]*z),
		float32(r[0][2]*x + r[1][2]*y + r[2][2]*z),
	}
}

// wrapAngle brings an angle into [-π, π).
func wrapAngle(a float64) float64 {
	a = math.Mod(a+math.Pi, 2*math.Pi)
	if a < 0 {
		a += 2 * math.Pi
	}
	return a - math.Pi
}

// distance is the distance between two locations in metres.
func distance(a, b WorldCoordinates) float64 {
	return math.Sqrt((a.X-b.X)*(a.X-b.X) + (a.Y-b.Y)*(a.Y-b.Y) + (a.Z-b.Z)*(a.Z-b.Z))
}

// angleBetween is the largest difference of the three Euler angles, in
// radians, each taken the short way round.
func angleBetween(a, b EulerAngles) float64 {
	d := math.Abs(wrapAngle(float64(a.Psi) - float64(b.Psi)))
	d = math.Max(d, math.Abs(wrapAngle(float64(a.Theta)-float64(b.Theta))))
	return math.Max(d, math.Abs(wrapAngle(float64(a.Phi)-float64(b.Phi))))
}

// drModule is the FOM module of the dead-reckoning filter's own object
// model: an entity's state as the update conditions judge it. The
// gateway's federation never sees it.
const drModule = `<?xml version="1.0"?>
<objectModel xmlns="http://standards.ieee.org/IEEE1516-2010">
  <modelIdentification><name>meshrti DIS dead reckoning</name><type>FOM</type><version>1</version></modelIdentification>
  <objects><objectClass><name>HLAobjectRoot</name>
    <objectClass><name>DeadReckonedEntity</name><sharing>Neither</sharing>
      <attribute><name>PositionError</name><dataType>HLAfloat64BE</dataType><updateType>Conditional</updateType><updateCondition>dead reckoning</updateCondition><ownership>NoTransfer</ownership><sharing>Neither</sharing><transportation>HLAbestEffort</transportation><order>Receive</order></attribute>
      <attribute><name>OrientationError</name><dataType>HLAfloat64BE</dataType><updateType>Conditional</updateType><updateCondition>dead reckoning</updateCondition><ownership>NoTransfer</ownership><sharing>Neither</sharing><transportation>HLAbestEffort</transportation><order>Receive</order></attribute>
      <attribute><name>State</name><dataType>HLAopaqueData</dataType><updateType>Conditional</updateType><updateCondition>on change</updateCondition><ownership>NoTransfer</ownership><sharing>Neither</sharing><transportation>HLAbestEffort</transportation><order>Receive</order></attribute>
    </objectClass>
  </objectClass></objects>
</objectModel>`

// drFilter decides when an HLA entity goes out as an Entity State PDU,
// with the update conditions of peer/updatecond over drModule: the
// distance between where the entity is (its last reflected state, dead
// reckoned to now) and where the DIS side believes it is (the last PDU
// sent, dead reckoned to now) passes at PositionThreshold, the largest
// angle between the two orientations at OrientationThreshold, any change
// of the PDU's other fields at once, and a heartbeat sends it anyway. It
// is not safe for concurrent use.
type drFilter struct {
	f                *updatecond.Filter
	class            hla.ObjectClassHandle
	pos, ori, state  hla.AttributeHandle
	values           hla.AttributeValues
	posBuf, oriBuf   []byte
	stBuf            []byte
	zeroPos, zeroOri []byte
}

// opaque encodes state as an HLAopaqueData (a count, then the octets)
// in d.stBuf.
func (d *drFilter) opaque(state []byte) []byte {
	d.stBuf = append(codec.AppendInt32BE(d.stBuf[:0], int32(len(state))), state...)
	return d.stBuf
}

func newDRFilter(position, orientation float64, heartbeat time.Duration) (*drFilter, error) {
	doc, err := fomxml.ParseBytes("meshrti-dis-deadreckoning.xml", []byte(drModule))
	if err != nil {
		return nil, err
	}
	fdd, err := fomxml.Merge(doc)
	if err != nil {
		return nil, err
	}
	c, ok := fdd.ObjectClass("DeadReckonedEntity")
	if !ok {
		return nil, errors.New("dis: the dead-reckoning module has no class")
	}
	cfg := updatecond.Config{
		Default: updatecond.Policy{Heartbeat: heartbeat, HeartbeatLogical: updatecond.Off, MaxUnchanged: updatecond.Off},
		Attributes: map[string]updatecond.Policy{
			"DeadReckonedEntity.PositionError":    {Threshold: updatecond.Threshold{Kind: updatecond.Absolute, Value: position}},
			"DeadReckonedEntity.OrientationError": {Threshold: updatecond.Threshold{Kind: updatecond.Absolute, Value: orientation}},
			"DeadReckonedEntity.State":            {Threshold: updatecond.Threshold{Kind: updatecond.None}},
		},
	}
	f, err := updatecond.New(fdd, cfg)
	if err != nil {
		return nil, fmt.Errorf("dis: dead-reckoning update conditions: %w", err)
	}
	d := &drFilter{f: f, class: c.Handle, values: hla.AttributeValues{}}
	for _, a := range []struct {
		name string
		h    *hla.AttributeHandle
	}{{"PositionError", &d.pos}, {"OrientationError", &d.ori}, {"State", &d.state}} {
		attr, ok := c.Attribute(a.name)
		if !ok {
			return nil, fmt.Errorf("dis: the dead-reckoning module has no %s", a.name)
		}
		*a.h = attr.Handle
	}
	d.zeroPos = codec.AppendFloat64BE(nil, 0)
	d.zeroOri = d.zeroPos
	return d, nil
}

// due reports whether an entity whose errors and state are these is to
// be sent now; the filter then remembers nothing new (record does, once
// it is sent).
func (d *drFilter) due(obj hla.ObjectInstanceHandle, posErr, oriErr float64, state []byte, now time.Duration) bool {
	d.posBuf = codec.AppendFloat64BE(d.posBuf[:0], posErr)
	d.oriBuf = codec.AppendFloat64BE(d.oriBuf[:0], oriErr)
	clear(d.values)
	d.values[d.pos], d.values[d.ori], d.values[d.state] = d.posBuf, d.oriBuf, d.opaque(state)
	return len(d.f.Filter(obj, d.class, d.values, updatecond.Now{Wall: now})) > 0
}

// record notes that obj was sent now with this state: its errors are
// zero from here, and its heartbeat starts again.
func (d *drFilter) record(obj hla.ObjectInstanceHandle, state []byte, now time.Duration) {
	d.f.Forget(obj)
	clear(d.values)
	d.values[d.pos], d.values[d.ori], d.values[d.state] = d.zeroPos, d.zeroOri, d.opaque(state)
	d.f.Filter(obj, d.class, d.values, updatecond.Now{Wall: now})
}

// forget drops obj.
func (d *drFilter) forget(obj hla.ObjectInstanceHandle) { d.f.Forget(obj) }
