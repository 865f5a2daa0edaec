package dis

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/fomxml/codec"
	"github.com/meshrti/meshrti/peer/hla"
)

// rprDir is the directory of the RPR FOM 2.0 modules: ../shared/fom/rpr2
// from the repository root, or $MESHRTI_SHARED/fom/rpr2.
func rprDir(t testing.TB) string {
	t.Helper()
	shared := os.Getenv("MESHRTI_SHARED")
	if shared == "" {
		shared = filepath.Join("..", "..", "shared")
	}
	dir := filepath.Join(shared, "fom", "rpr2")
	if files, _ := filepath.Glob(filepath.Join(dir, "*.xml")); len(files) == 0 {
		t.Skipf("no RPR FOM 2.0 modules at %s (set MESHRTI_SHARED)", dir)
	}
	return dir
}

// rprFiles are the RPR FOM 2.0 module files.
func rprFiles(t testing.TB) []string {
	files, _ := filepath.Glob(filepath.Join(rprDir(t), "*.xml"))
	return files
}

var (
	rprOnce sync.Once
	rprFDDv *fomxml.FDD
	rprErr  error
)

// rprFDD is the RPR FOM merged with the MIM, parsed once per test binary.
func rprFDD(t testing.TB) *fomxml.FDD {
	t.Helper()
	files := rprFiles(t)
	rprOnce.Do(func() { rprFDDv, rprErr = fomxml.Load(files...) })
	if rprErr != nil {
		t.Fatal(rprErr)
	}
	return rprFDDv
}

func rprMapper(t testing.TB, cfg MapperConfig) *Mapper {
	t.Helper()
	m, err := NewMapper(rprFDD(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mustClass(t testing.TB, fdd *fomxml.FDD, name string) *fomxml.ObjectClass {
	t.Helper()
	c, ok := fdd.ObjectClass(name)
	if !ok {
		t.Fatalf("no class %s", name)
	}
	return c
}

// mapNames is a Names over two maps.
type mapNames map[EntityID]string

func (n mapNames) ObjectName(id EntityID) string { return n[id] }
func (n mapNames) EntityID(name string) (EntityID, bool) {
	for id, s := range n {
		if s == name {
			return id, true
		}
	}
	return EntityID{}, false
}

// The Spatial attribute of every dead-reckoning algorithm, encoded by the
// FOM's SpatialVariantStruct, against octets laid out by hand from IEEE
// 1516.2-2010 §4.13: the discriminant (an octet), padding to the
// alternatives' 8-octet boundary, then the record, each field on its own
// boundary counted from the start of the value.
func TestSpatialVariants(t *testing.T) {
	m := rprMapper(t, MapperConfig{})
	ground := mustClass(t, m.fdd, "GroundVehicle")
	static := `
01 00000000000000                      # Static, padding to 8
415854a640000000 c0934a0000000000 413e848000000000   # WorldLocation
01 000000                              # IsFrozen True, padding to 4
3f000000 bf400000 40400000             # Orientation`
	velocity := `3fc00000 c0000000 3e800000`     // VelocityVector
	acceleration := `3fa00000 00000000 00000000` // AccelerationVector
	angular := `00000000 00000000 3dcccccd`      // AngularVelocity
	for _, c := range []struct {
		alg  uint8
		tail string
	}{
		{DRStatic, ""},
		{DRFPW, velocity},
		{DRRPW, velocity + angular},
		{DRRVW, velocity + acceleration + angular},
		{DRFVW, velocity + acceleration},
		{DRFPB, velocity},
		{DRRPB, velocity + angular},
		{DRRVB, velocity + acceleration + angular},
		{DRFVB, velocity + acceleration},
	} {
		es := hx(t, espduV6)
		p, _ := Decode(es)
		pdu := p.(*EntityState)
		pdu.DeadReckoning.Algorithm = c.alg
		pdu.Appearance |= appearanceFrozen
		dst := hla.AttributeValues{}
		if errs := m.EntityValues(ground.Handle, pdu, nil, dst); len(errs) > 0 {
			t.Fatalf("algorithm %d: %v", c.alg, errs)
		}
		spatial, _ := m.Attribute(ground.Handle, "Spatial")
		want := hx(t, static+"\n"+c.tail)
		want[0] = c.alg
		if got := dst[spatial.Handle]; !bytes.Equal(got, want) {
			t.Errorf("algorithm %d:\n got % x\nwant % x", c.alg, got, want)
			continue
		}
		// And back: the fields the alternative has come back; the others
		// are zero.
		var back EntityState
		if _, errs := m.ApplyEntityValues(ground.Handle, hla.AttributeValues{spatial.Handle: want}, &back); len(errs) > 0 {
			t.Fatalf("algorithm %d back: %v", c.alg, errs)
		}
		if back.Location != pdu.Location || back.Orientation != pdu.Orientation || back.DeadReckoning.Algorithm != c.alg ||
			back.Appearance != appearanceFrozen {
			t.Errorf("algorithm %d back: %+v", c.alg, back)
		}
		hasVel := strings.Contains(c.tail, velocity)
		if (back.Velocity == pdu.Velocity) != hasVel || (back.Velocity == Vector{}) == hasVel {
			t.Errorf("algorithm %d: velocity %v", c.alg, back.Velocity)
		}
		if hasAcc := strings.Contains(c.tail, acceleration); (back.DeadReckoning.LinearAcceleration == pdu.DeadReckoning.LinearAcceleration) != hasAcc {
			t.Errorf("algorithm %d: acceleration %v", c.alg, back.DeadReckoning.LinearAcceleration)
		}
		if hasAng := strings.Contains(c.tail, angular); (back.DeadReckoning.AngularVelocity == pdu.DeadReckoning.AngularVelocity) != hasAng {
			t.Errorf("algorithm %d: angular velocity %v", c.alg, back.DeadReckoning.AngularVelocity)
		}
	}
}

// An Entity State PDU goes to the attributes of its class and comes back
// field for field, appearance bits and articulated parts included.
func TestEntityRoundTrip(t *testing.T) {
	m := rprMapper(t, MapperConfig{})
	cd, err := codec.New(m.fdd)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := Decode(hx(t, espduV7))
	air := p.(*EntityState) // an aircraft: platform, air
	air.Appearance = 2<<3 | 1<<5 | 1<<12 | 1<<14 | 1<<16 | 1<<22 | 1<<24 | 3<<9 | 1
	air.Capabilities = 0b1010
	air.DeadReckoning.Algorithm = DRRVW
	air.Velocity = Vector{100, -3, 0.5}
	air.DeadReckoning.LinearAcceleration = Vector{1, 2, 3}
	air.DeadReckoning.AngularVelocity = Vector{0.1, 0.2, 0.3}
	air.Orientation = EulerAngles{1, -0.5, 0.25}
	air.Location = WorldCoordinates{4e6, 3e6, 4.2e6}
	air.AlternateType = EntityType{1, 2, 222, 1, 1, 1, 1}
	class := m.ClassFor(air.Type)
	if class.Name != "Aircraft" {
		t.Fatalf("class %s", class.QualifiedName)
	}
	dst := hla.AttributeValues{}
	if errs := m.EntityValues(class.Handle, air, nil, dst); len(errs) > 0 {
		t.Fatal(errs)
	}
	decode := func(name string) any {
		a, _ := m.Attribute(class.Handle, name)
		v, err := cd.Decode(a.DataType, dst[a.Handle])
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return v
	}
	for name, want := range map[string]any{
		"DamageState": "ModerateDamage", "SmokePlumePresent": "True", "EngineSmokeOn": "False",
		"LandingLightsOn": "True", "AntiCollisionLightsOn": "True", "NavigationLightsOn": "False",
		"AfterburnerOn": "True", "PowerPlantOn": "True", "FormationLightsOn": "True",
		"HatchState": "PrimaryHatchIsPoppedAndPersonIsVisibleUnderHatch", "CamouflageType": "GenericCamouflage",
		"HasFuelSupplyCap": "True", "HasRepairCap": "True", "HasAmmunitionSupplyCap": "False", "ForceIdentifier": "Friendly",
	} {
		if got := decode(name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if got := decode("Marking").(map[string]any); got["MarkingEncodingType"] != "ASCII" || string(got["MarkingData"].([]byte)[:5]) != "EAGLE" {
		t.Errorf("Marking %v", got)
	}
	id := decode("EntityIdentifier").(map[string]any)
	if id["EntityNumber"] != uint64(7) || id["FederateIdentifier"].(map[string]any)["SiteID"] != uint64(5) {
		t.Errorf("EntityIdentifier %v", id)
	}
	params := decode("ArticulatedParametersArray").([]any)
	if len(params) != 2 {
		t.Fatalf("%d articulated parameters", len(params))
	}
	part := params[0].(map[string]any)["ParameterValue"].(map[string]any)["ArticulatedParts"].(map[string]any)
	if part["Class"] != "Rudder" || part["TypeMetric"] != "Azimuth" || part["Value"] != 0.5 {
		t.Errorf("articulated part %v", part)
	}
	// Land-only attributes are not set for an aircraft.
	if a, ok := m.Attribute(class.Handle, "HeadLightsOn"); ok && dst[a.Handle] != nil {
		t.Error("HeadLightsOn set for an aircraft")
	}

	var back EntityState
	extra, errs := m.ApplyEntityValues(class.Handle, dst, &back)
	if len(errs) > 0 || len(extra) > 0 {
		t.Fatalf("back: %v, extra %v", errs, extra)
	}
	back.Header, back.Status = air.Header, air.Status
	if !reflect.DeepEqual(&back, air) {
		t.Errorf("back\n%+v\nwant\n%+v", &back, air)
	}

	// After the first, only what changed.
	next := *air
	next.Location.X += 10
	next.Appearance |= 1 << 13
	changed := hla.AttributeValues{}
	if errs := m.EntityValues(class.Handle, &next, air, changed); len(errs) > 0 {
		t.Fatal(errs)
	}
	var names []string
	for h := range changed {
		a, _ := class.AttributeByHandle(h)
		names = append(names, a.Name)
	}
	if len(names) != 2 || !(names[0] == "Spatial" && names[1] == "NavigationLightsOn" || names[1] == "Spatial" && names[0] == "NavigationLightsOn") {
		t.Errorf("changed attributes %v, want Spatial and NavigationLightsOn", names)
	}
}

// Land platforms have the camouflage kind; lifeforms their own table.
func TestAppearanceTables(t *testing.T) {
	m := rprMapper(t, MapperConfig{})
	tank := &EntityState{Type: EntityType{Kind: 1, Domain: 1, Country: 225}, DeadReckoning: DeadReckoning{Algorithm: DRStatic},
		Appearance: 1 | 2<<17 | 1<<2 | 1<<12 | 1<<19 | 1<<25 | 5<<9}
	human := &EntityState{Type: EntityType{Kind: 3, Domain: 1}, DeadReckoning: DeadReckoning{Algorithm: DRStatic},
		Appearance: 2<<3 | 9<<5 | 1<<12 | 5<<16 | 2<<24 | 3<<26 | 1<<30}
	for _, es := range []*EntityState{tank, human} {
		class := m.ClassFor(es.Type)
		dst := hla.AttributeValues{}
		if errs := m.EntityValues(class.Handle, es, nil, dst); len(errs) > 0 {
			t.Fatalf("%s: %v", class.Name, errs)
		}
		var back EntityState
		if _, errs := m.ApplyEntityValues(class.Handle, dst, &back); len(errs) > 0 {
			t.Fatal(errs)
		}
		if back.Appearance != es.Appearance {
			t.Errorf("%s: appearance %#x back as %#x", class.Name, es.Appearance, back.Appearance)
		}
	}
	if c := m.ClassFor(tank.Type); c.Name != "GroundVehicle" {
		t.Errorf("tank as %s", c.Name)
	}
	if c := m.ClassFor(human.Type); c.Name != "Human" {
		t.Errorf("human as %s", c.Name)
	}
}

func TestClassFor(t *testing.T) {
	rule, err := ParseClassRule("1.1.*=AmphibiousVehicle")
	if err != nil {
		t.Fatal(err)
	}
	rule2, _ := ParseClassRule("3.*.200=NonHuman")
	m := rprMapper(t, MapperConfig{Classes: []ClassRule{rule, rule2}})
	for _, c := range []struct {
		t    EntityType
		want string
	}{
		{EntityType{Kind: 1, Domain: 1}, "AmphibiousVehicle"},
		{EntityType{Kind: 1, Domain: 2}, "Aircraft"},
		{EntityType{Kind: 1, Domain: 3}, "SurfaceVessel"},
		{EntityType{Kind: 1, Domain: 4}, "SubmersibleVessel"},
		{EntityType{Kind: 1, Domain: 5}, "Spacecraft"},
		{EntityType{Kind: 1, Domain: 9}, "Platform"},
		{EntityType{Kind: 2}, "Munition"},
		{EntityType{Kind: 3, Category: 200}, "NonHuman"},
		{EntityType{Kind: 3, Category: 1}, "Human"},
		{EntityType{Kind: 4}, "BaseEntity"},
		{EntityType{Kind: 5}, "CulturalFeature"},
		{EntityType{Kind: 6}, "Supplies"},
		{EntityType{Kind: 7}, "Radio"},
		{EntityType{Kind: 8}, "Expendables"},
		{EntityType{Kind: 9}, "Sensor"},
		{EntityType{Kind: 0}, "BaseEntity"},
	} {
		if got := m.ClassFor(c.t); got.Name != c.want {
			t.Errorf("%+v: %s, want %s", c.t, got.Name, c.want)
		}
	}
	for _, bad := range []string{"1.1", "x=Aircraft", "1.2.3.4=Aircraft", "300=Aircraft"} {
		if _, err := ParseClassRule(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if _, err := NewMapper(m.fdd, MapperConfig{Classes: []ClassRule{{Kind: 1, Domain: -1, Category: -1, Class: "WeaponFire"}}}); !errors.Is(err, ErrFOM) {
		t.Errorf("a rule naming no entity class: %v", err)
	}
}

// A FOM without a class the gateway needs is refused, naming it.
func TestMapperNeedsRPR(t *testing.T) {
	dir := rprDir(t)
	var files []string
	for _, f := range rprFiles(t) {
		if !strings.Contains(f, "Warfare") {
			files = append(files, f)
		}
	}
	fdd, err := fomxml.Load(files...)
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewMapper(fdd, MapperConfig{})
	if !errors.Is(err, ErrFOM) || !strings.Contains(err.Error(), "WeaponFire") {
		t.Errorf("without RPR-Warfare: %v", err)
	}
	base, err := fomxml.Load(filepath.Join(dir, "RPR-Foundation_v2.0.xml"), filepath.Join(dir, "RPR-Enumerations_v2.0.xml"), filepath.Join(dir, "RPR-Base_v2.0.xml"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewMapper(base, MapperConfig{})
	if !errors.Is(err, ErrFOM) || !strings.Contains(err.Error(), "PhysicalEntity") {
		t.Errorf("RPR-Base alone: %v", err)
	}
}

func TestFireAndDetonationRoundTrip(t *testing.T) {
	m := rprMapper(t, MapperConfig{})
	names := mapNames{{1, 2, 3}: "tank", {1, 2, 4}: "target", {1, 2, 5}: "shell"}
	p, _ := Decode(hx(t, firePDU))
	fire := p.(*Fire)
	fire.Event = EventID{1, 2, 9}
	dst := hla.ParameterValues{}
	if errs := m.FireValues(fire, names, dst); len(errs) > 0 {
		t.Fatal(errs)
	}
	cd, _ := codec.New(m.fdd)
	firing, _ := m.fire.class.Parameter("FiringObjectIdentifier")
	if v, _ := cd.Decode(firing.DataType, dst[firing.Handle]); v != "tank" {
		t.Errorf("FiringObjectIdentifier %v", v)
	}
	back := &Fire{Header: fire.Header}
	if errs := m.ApplyFire(dst, names, back); len(errs) > 0 {
		t.Fatal(errs)
	}
	if !reflect.DeepEqual(back, fire) {
		t.Errorf("fire back\n%+v\nwant\n%+v", back, fire)
	}

	p, _ = Decode(hx(t, detonationPDU))
	det := p.(*Detonation)
	ddst := hla.ParameterValues{}
	if errs := m.DetonationValues(det, names, ddst); len(errs) > 0 {
		t.Fatal(errs)
	}
	dback := &Detonation{Header: det.Header}
	if errs := m.ApplyDetonation(ddst, names, dback); len(errs) > 0 {
		t.Fatal(errs)
	}
	if !reflect.DeepEqual(dback, det) {
		t.Errorf("detonation back\n%+v\nwant\n%+v", dback, det)
	}
	// A name nobody knows is reported, the rest still decodes.
	unknown := mapNames{{1, 2, 3}: "tank"}
	dback = &Detonation{}
	errs := m.ApplyDetonation(ddst, unknown, dback)
	if len(errs) != 1 || dback.Firing != (EntityID{1, 2, 3}) || dback.Location != det.Location {
		t.Errorf("unknown target: %v, %+v", errs, dback)
	}
}

// Attributes without an Entity State field travel as attribute records,
// by name or bound to a record type, and come back.
func TestRecords(t *testing.T) {
	m := rprMapper(t, MapperConfig{Records: map[uint32]string{5000: "InfraredSignatureIndex"}})
	cd, _ := codec.New(m.fdd)
	ground := mustClass(t, m.fdd, "GroundVehicle")
	enc := func(name string, v any) (fomxml.AttributeHandle, []byte) {
		a, _ := m.Attribute(ground.Handle, name)
		b, err := cd.Encode(a.DataType, v)
		if err != nil {
			t.Fatal(err)
		}
		return a.Handle, b
	}
	acoustic, ab := enc("AcousticSignatureIndex", 7)
	infrared, ib := enc("InfraredSignatureIndex", -3)
	propulsion, pb := enc("PropulsionSystemsData", []any{map[string]any{"PowerSetting": 0.5, "EngineRPM": 2400.0}})
	values := hla.AttributeValues{acoustic: ab, infrared: ib, propulsion: pb}
	var es EntityState
	extra, errs := m.ApplyEntityValues(ground.Handle, values, &es)
	if len(errs) > 0 || len(extra) != 3 {
		t.Fatalf("extra %v, %v", extra, errs)
	}
	recs, errs := m.Records(ground.Handle, extra)
	if len(errs) > 0 || len(recs) != 3 {
		t.Fatalf("records %v, %v", recs, errs)
	}
	// Sorted by name: AcousticSignatureIndex (named), Infrared (bound), PropulsionSystemsData (named).
	if recs[0].Type != DefaultNamedRecordType || recs[1].Type != 5000 || recs[2].Type != DefaultNamedRecordType {
		t.Errorf("record types %d %d %d", recs[0].Type, recs[1].Type, recs[2].Type)
	}
	want := []byte{0, 22, 0, 2}
	want = append(append(want, "AcousticSignatureIndex"...), ab...)
	if !bytes.Equal(recs[0].Data, want) {
		t.Errorf("named record % x, want % x", recs[0].Data, want)
	}
	// Through a PDU (padding added) and back.
	b, err := Encode(&Attribute{Sets: []AttributeRecordSet{{Entity: EntityID{1, 2, 3}, Records: recs}}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	got := hla.AttributeValues{}
	if errs := m.RecordValues(ground.Handle, p.(*Attribute).Sets[0].Records, got); len(errs) > 0 {
		t.Fatal(errs)
	}
	if !reflect.DeepEqual(got, values) {
		t.Errorf("back %v, want %v", got, values)
	}
	// A record naming an attribute the class lacks is reported.
	bad := []AttributeRecord{{Type: DefaultNamedRecordType, Data: append([]byte{0, 3, 0, 1}, "Foo\x01"...)}, {Type: 17, Data: []byte{1}}}
	if errs := m.RecordValues(ground.Handle, bad, hla.AttributeValues{}); len(errs) != 1 {
		t.Errorf("errors %v", errs)
	}
}

// An HLA value that does not decode by its FOM type is dropped alone.
func TestUndecodableValue(t *testing.T) {
	m := rprMapper(t, MapperConfig{})
	ground := mustClass(t, m.fdd, "GroundVehicle")
	p, _ := Decode(hx(t, espduV6))
	es := p.(*EntityState)
	dst := hla.AttributeValues{}
	if errs := m.EntityValues(ground.Handle, es, nil, dst); len(errs) > 0 {
		t.Fatal(errs)
	}
	spatial, _ := m.Attribute(ground.Handle, "Spatial")
	marking, _ := m.Attribute(ground.Handle, "Marking")
	dst[spatial.Handle] = []byte{1, 2, 3}
	var back EntityState
	_, errs := m.ApplyEntityValues(ground.Handle, dst, &back)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "Spatial") {
		t.Fatalf("errors %v", errs)
	}
	if back.Marking != es.Marking || back.Location != (WorldCoordinates{}) || back.ID != es.ID {
		t.Errorf("back %+v", back)
	}
	_ = marking
	if math.IsNaN(float64(back.Orientation.Psi)) {
		t.Error("NaN")
	}
}

// With the RPR FOM, Spatial takes the fast path, which gives the codec's
// octets for every algorithm (and TestSpatialVariants checks both
// against octets laid out by hand).
func TestSpatialFastPath(t *testing.T) {
	m := rprMapper(t, MapperConfig{})
	if m.fast == nil {
		t.Fatal("the RPR FOM's Spatial does not take the fast path")
	}
	slow := *m
	slow.fast = nil
	ground := mustClass(t, m.fdd, "GroundVehicle")
	es := espduFrom(t, espduV6)
	for alg := uint8(0); alg <= 12; alg++ {
		es.DeadReckoning.Algorithm = alg
		a, b := hla.AttributeValues{}, hla.AttributeValues{}
		ea, eb := m.EntityValues(ground.Handle, es, nil, a), slow.EntityValues(ground.Handle, es, nil, b)
		if !reflect.DeepEqual(a, b) || len(ea) != len(eb) {
			t.Errorf("algorithm %d: fast and codec paths differ (%v, %v)", alg, ea, eb)
		}
		var fa, fb EntityState
		_, e1 := m.ApplyEntityValues(ground.Handle, a, &fa)
		_, e2 := slow.ApplyEntityValues(ground.Handle, a, &fb)
		if !reflect.DeepEqual(fa, fb) || len(e1) != len(e2) {
			t.Errorf("algorithm %d: decoded differently: %+v, %+v", alg, fa, fb)
		}
	}
	// Garbage is refused by both.
	sp, _ := m.Attribute(ground.Handle, "Spatial")
	for _, bad := range [][]byte{nil, {1}, {2, 0, 0}, append([]byte{1}, make([]byte, 47)...)[:40], append(append([]byte{1}, make([]byte, 31)...), 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)} {
		var x EntityState
		_, e1 := m.ApplyEntityValues(ground.Handle, hla.AttributeValues{sp.Handle: bad}, &x)
		_, e2 := slow.ApplyEntityValues(ground.Handle, hla.AttributeValues{sp.Handle: bad}, &x)
		if len(e1) != 1 || len(e2) != 1 {
			t.Errorf("% x: fast %v, codec %v", bad, e1, e2)
		}
	}
}

// A parameter whose record decodes only in part (the location's y and z
// missing) is an error and leaves its field as it was, not half set.
func TestParamPartlyDecodedLeavesField(t *testing.T) {
	d := &paramDecoder{values: map[string]any{
		"FiringLocation":        map[string]any{"X": 1.0},
		"InitialVelocityVector": map[string]any{"XVelocity": 1.0, "YVelocity": 2.0, "ZVelocity": 3.0},
	}}
	var f Fire
	param(d, "FiringLocation", &f.Location, readWorldValue)
	param(d, "InitialVelocityVector", &f.Velocity, vectorReader("XVelocity", "YVelocity", "ZVelocity"))
	if len(d.errs) != 1 || !strings.Contains(d.errs[0].Error(), "FiringLocation") {
		t.Fatalf("errors %v, want one for FiringLocation", d.errs)
	}
	if f.Location != (WorldCoordinates{}) {
		t.Errorf("location %+v after a partial decode, want it untouched", f.Location)
	}
	if f.Velocity != (Vector{1, 2, 3}) {
		t.Errorf("velocity %+v, want {1 2 3}", f.Velocity)
	}
}
