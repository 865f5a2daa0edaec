package dis

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/fomxml/codec"
	"github.com/meshrti/meshrti/peer/hla"
)

// ErrFOM is the error of a FOM that lacks a class, attribute, parameter
// or data type the gateway needs; the message names it.
var ErrFOM = errors.New("dis: the FOM lacks what the gateway needs")

// RPR FOM 2.0 names the mapping needs.
const (
	classBaseEntity       = "HLAobjectRoot.BaseEntity"
	classPhysicalEntity   = "HLAobjectRoot.BaseEntity.PhysicalEntity"
	interactionFire       = "HLAinteractionRoot.WeaponFire"
	interactionDetonation = "HLAinteractionRoot.MunitionDetonation"
)

// DefaultNamedRecordType is the attribute record type of records that
// carry an attribute by name (the first of VR-Forces' own types).
const DefaultNamedRecordType = 252200

// ValueError is one attribute or parameter value that could not be
// carried: it did not encode or decode by its FOM data type, or names
// what the other side does not know. The rest of its PDU or update is
// still carried.
type ValueError struct {
	Name string // the attribute, parameter or PDU field
	Err  error
}

func (e *ValueError) Error() string { return fmt.Sprintf("dis: %s: %v", e.Name, e.Err) }
func (e *ValueError) Unwrap() error { return e.Err }

// Names turns DIS entity IDs into the names of the HLA object instances
// that stand for them (RTIobjectId values), and back. The Gateway keeps
// one of every entity it bridges, each way.
type Names interface {
	// ObjectName is the instance name of the entity id; "" when it is
	// the zero ID or unknown.
	ObjectName(id EntityID) string
	// EntityID is the DIS ID of the instance named; false when unknown.
	EntityID(name string) (EntityID, bool)
}

// ClassRule picks the object class of DIS entities whose type matches:
// Kind, Domain and Category each match their field, or any value when
// negative. Rules are tried in order before the default table (see
// Mapper.ClassFor).
type ClassRule struct {
	Kind, Domain, Category int
	// Class is an object class of the FDD under BaseEntity, by any name
	// FDD.ObjectClass accepts ("AmphibiousVehicle").
	Class string
}

// ParseClassRule reads "KIND.DOMAIN.CATEGORY=CLASS", each number or "*"
// for any; trailing fields may be left out ("1.1=GroundVehicle").
func ParseClassRule(s string) (ClassRule, error) {
	pat, class, ok := strings.Cut(s, "=")
	if !ok || class == "" {
		return ClassRule{}, fmt.Errorf("dis: class rule %q: want KIND.DOMAIN.CATEGORY=CLASS", s)
	}
	r := ClassRule{Kind: -1, Domain: -1, Category: -1, Class: class}
	fields := strings.Split(pat, ".")
	if len(fields) > 3 {
		return ClassRule{}, fmt.Errorf("dis: class rule %q: at most three fields", s)
	}
	for i, f := range fields {
		v := -1
		if f != "*" {
			n, err := strconv.ParseUint(f, 10, 8)
			if err != nil {
				return ClassRule{}, fmt.Errorf("dis: class rule %q: field %q is not 0-255 or *", s, f)
			}
			v = int(n)
		}
		switch i {
		case 0:
			r.Kind = v
		case 1:
			r.Domain = v
		default:
			r.Category = v
		}
	}
	return r, nil
}

func (r ClassRule) matches(t EntityType) bool {
	return (r.Kind < 0 || r.Kind == int(t.Kind)) && (r.Domain < 0 || r.Domain == int(t.Domain)) &&
		(r.Category < 0 || r.Category == int(t.Category))
}

// MapperConfig configures a Mapper; the zero value is the default.
type MapperConfig struct {
	// Classes are tried before the default table when a DIS entity's
	// class is chosen.
	Classes []ClassRule
	// NamedRecordType is the attribute record type of records that carry
	// an attribute by name (name length, data length, name, value);
	// records of this type or above that Records does not bind are read
	// as named. Default DefaultNamedRecordType.
	NamedRecordType uint32
	// Records binds attribute record types to attributes by name: such a
	// record carries the attribute's value, encoded by its FOM data type
	// and padded to 64 bits.
	Records map[uint32]string
}

// Mapper turns DIS PDUs into RPR FOM 2.0 attribute and parameter values
// and back (SISO-STD-001, the GRIM), encoding values with fomxml/codec
// by the FDD's data types. It does no I/O and keeps no state: it is
// immutable after NewMapper, and any number of goroutines may use it.
type Mapper struct {
	fdd      *fomxml.FDD
	cd       *codec.Codec
	base     *fomxml.ObjectClass
	rules    []ClassRule
	plans    map[fomxml.ObjectClassHandle]*classPlan
	enums    map[string]map[string]int64
	spatial  *variantPlan
	fast     map[uint8]*spatialLayout // nil: Spatial through the codec alone
	param    *variantPlan
	elemType *codec.Type // an element of ArticulatedParametersArray
	fire     *interactionPlan
	det      *interactionPlan
	tag      *codec.Type
	named    uint32
	bound    map[uint32]string
	boundBy  map[string]uint32
}

// classPlan is what the Mapper knows of one class under BaseEntity.
type classPlan struct {
	class  *fomxml.ObjectClass
	byName map[string]*attrPlan
	// mapped are the attributes an Entity State PDU field stands for;
	// the others go out as attribute records.
	mapped map[fomxml.AttributeHandle]bool
}

type attrPlan struct {
	attr *fomxml.Attribute
	t    *codec.Type
}

type interactionPlan struct {
	class  *fomxml.InteractionClass
	params map[string]*paramPlan
}

type paramPlan struct {
	p *fomxml.Parameter
	t *codec.Type
}

// variantPlan is a variant record type: its discriminant and, for each
// discriminant value, the alternative and the fields of its record.
type variantPlan struct {
	name     string
	discName string
	discType string
	byValue  map[int64]variantAlt
	byEnum   map[string]int64
}

type variantAlt struct {
	enum, alt, dataType string
	fields              map[string]bool
}

// Required attributes of BaseEntity and PhysicalEntity.
var (
	baseAttrs     = []string{"EntityIdentifier", "EntityType", "Spatial"}
	physicalAttrs = []string{"AlternateEntityType", "ForceIdentifier", "Marking", "ArticulatedParametersArray"}
	fireParams    = []string{"EventIdentifier", "FireControlSolutionRange", "FireMissionIndex", "FiringLocation",
		"FiringObjectIdentifier", "FuseType", "InitialVelocityVector", "MunitionObjectIdentifier", "MunitionType",
		"QuantityFired", "RateOfFire", "TargetObjectIdentifier", "WarheadType"}
	detonationParams = []string{"ArticulatedPartData", "DetonationLocation", "DetonationResultCode", "EventIdentifier",
		"FinalVelocityVector", "FiringObjectIdentifier", "FuseType", "MunitionObjectIdentifier", "MunitionType",
		"QuantityFired", "RateOfFire", "RelativeDetonationLocation", "TargetObjectIdentifier", "WarheadType"}
)

// NewMapper checks that fdd has what the gateway needs (BaseEntity,
// PhysicalEntity, WeaponFire, MunitionDetonation, their attributes and
// parameters, data types the codec encodes) and compiles the mapping.
// A missing piece is an error wrapping ErrFOM that names it.
func NewMapper(fdd *fomxml.FDD, cfg MapperConfig) (*Mapper, error) {
	cd, err := codec.New(fdd)
	if err != nil {
		return nil, err
	}
	m := &Mapper{fdd: fdd, cd: cd, rules: cfg.Classes, plans: map[fomxml.ObjectClassHandle]*classPlan{},
		enums: map[string]map[string]int64{}, named: cfg.NamedRecordType, bound: map[uint32]string{}, boundBy: map[string]uint32{}}
	if m.named == 0 {
		m.named = DefaultNamedRecordType
	}
	for t, a := range cfg.Records {
		m.bound[t] = a
		m.boundBy[a] = t
	}
	for name, dt := range fdd.DataTypes {
		if dt.Kind != fomxml.KindEnumerated {
			continue
		}
		e := map[string]int64{}
		for _, en := range dt.Enumerators {
			if len(en.Values) > 0 {
				e[en.Name] = en.Values[0]
			}
		}
		m.enums[name] = e
	}
	var ok bool
	if m.base, ok = fdd.ObjectClass(classBaseEntity); !ok {
		return nil, fmt.Errorf("%w: object class %s", ErrFOM, classBaseEntity)
	}
	physical, ok := fdd.ObjectClass(classPhysicalEntity)
	if !ok {
		return nil, fmt.Errorf("%w: object class %s", ErrFOM, classPhysicalEntity)
	}
	for _, req := range []struct {
		c     *fomxml.ObjectClass
		names []string
	}{{m.base, baseAttrs}, {physical, physicalAttrs}} {
		for _, n := range req.names {
			a, ok := req.c.Attribute(n)
			if !ok {
				return nil, fmt.Errorf("%w: attribute %s.%s", ErrFOM, req.c.QualifiedName, n)
			}
			if _, err := cd.Type(a.DataType); err != nil {
				return nil, fmt.Errorf("%w: attribute %s.%s: %v", ErrFOM, req.c.QualifiedName, n, err)
			}
		}
	}
	mappedNames := appearanceAttrs()
	for _, n := range append(slices.Clone(baseAttrs), physicalAttrs...) {
		mappedNames[n] = true
	}
	for _, c := range fdd.ObjectClasses {
		if c != m.base && !c.IsSubclassOf(m.base) {
			continue
		}
		p := &classPlan{class: c, byName: map[string]*attrPlan{}, mapped: map[fomxml.AttributeHandle]bool{}}
		for _, a := range c.AllAttributes() {
			if a.Class == fdd.ObjectRoot {
				continue // HLAprivilegeToDeleteObject
			}
			ap := &attrPlan{attr: a}
			ap.t, _ = cd.Type(a.DataType) // nil: the values do not encode; counted when used
			p.byName[a.Name] = ap
			if mappedNames[a.Name] {
				p.mapped[a.Handle] = true
			}
		}
		m.plans[c.Handle] = p
	}
	spatialAttr, _ := m.base.Attribute("Spatial")
	if m.spatial, err = m.variant(spatialAttr.DataType); err != nil {
		return nil, err
	}
	if layouts, err := m.spatialFast(); err == nil && m.checkSpatialFast(layouts) == nil {
		m.fast = layouts
	}
	params, _ := physical.Attribute("ArticulatedParametersArray")
	arr, ok := fdd.DataType(params.DataType)
	if !ok || arr.Kind != fomxml.KindArray {
		return nil, fmt.Errorf("%w: ArticulatedParametersArray is not an array", ErrFOM)
	}
	if m.elemType, err = cd.Type(arr.Element); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFOM, err)
	}
	if pv, ok := m.fieldType(arr.Element, "ParameterValue"); ok {
		if m.param, err = m.variant(pv); err != nil {
			return nil, err
		}
	} else {
		return nil, fmt.Errorf("%w: %s has no field ParameterValue", ErrFOM, arr.Element)
	}
	if m.fire, err = m.interaction(interactionFire, fireParams); err != nil {
		return nil, err
	}
	if m.det, err = m.interaction(interactionDetonation, detonationParams); err != nil {
		return nil, err
	}
	if fdd.Tags.UpdateReflect != "" {
		m.tag, _ = cd.Type(fdd.Tags.UpdateReflect)
	}
	for _, r := range cfg.Classes {
		c, ok := fdd.ObjectClass(r.Class)
		if !ok || (c != m.base && !c.IsSubclassOf(m.base)) {
			return nil, fmt.Errorf("%w: class rule names %q, no object class under BaseEntity", ErrFOM, r.Class)
		}
	}
	return m, nil
}

func (m *Mapper) interaction(name string, params []string) (*interactionPlan, error) {
	c, ok := m.fdd.InteractionClass(name)
	if !ok {
		return nil, fmt.Errorf("%w: interaction class %s", ErrFOM, name)
	}
	ip := &interactionPlan{class: c, params: map[string]*paramPlan{}}
	for _, n := range params {
		p, ok := c.Parameter(n)
		if !ok {
			return nil, fmt.Errorf("%w: parameter %s.%s", ErrFOM, name, n)
		}
		t, err := m.cd.Type(p.DataType)
		if err != nil {
			return nil, fmt.Errorf("%w: parameter %s.%s: %v", ErrFOM, name, n, err)
		}
		ip.params[n] = &paramPlan{p: p, t: t}
	}
	return ip, nil
}

// variant compiles the variant record type name.
func (m *Mapper) variant(name string) (*variantPlan, error) {
	dt, ok := m.fdd.DataType(name)
	if !ok || dt.Kind != fomxml.KindVariantRecord {
		return nil, fmt.Errorf("%w: %s is not a variant record", ErrFOM, name)
	}
	enum, ok := m.fdd.DataType(dt.Representation)
	if !ok {
		return nil, fmt.Errorf("%w: %s: no discriminant type %s", ErrFOM, name, dt.Representation)
	}
	vp := &variantPlan{name: name, discName: dt.Discriminant, discType: dt.Representation, byValue: map[int64]variantAlt{}, byEnum: map[string]int64{}}
	for _, en := range enum.Enumerators {
		if len(en.Values) > 0 {
			vp.byEnum[en.Name] = en.Values[0]
		}
	}
	for _, alt := range dt.Alternatives {
		fields := map[string]bool{}
		if rec, ok := m.fdd.DataType(alt.DataType); ok {
			for _, f := range rec.Fields {
				fields[f.Name] = true
			}
		}
		for _, e := range alt.Enumerators {
			v, ok := vp.byEnum[e]
			if !ok {
				continue
			}
			if _, dup := vp.byValue[v]; !dup {
				vp.byValue[v] = variantAlt{enum: e, alt: alt.Name, dataType: alt.DataType, fields: fields}
			}
		}
	}
	return vp, nil
}

// fieldType returns the data type of field of the record type rec.
func (m *Mapper) fieldType(rec, field string) (string, bool) {
	dt, ok := m.fdd.DataType(rec)
	if !ok {
		return "", false
	}
	for _, f := range dt.Fields {
		if f.Name == field {
			return f.DataType, true
		}
	}
	return "", false
}

// FDD returns the FDD the Mapper was built for.
func (m *Mapper) FDD() *fomxml.FDD { return m.fdd }

// EntityClasses returns BaseEntity and every class under it, the classes
// the gateway publishes and subscribes to.
func (m *Mapper) EntityClasses() []*fomxml.ObjectClass {
	var cs []*fomxml.ObjectClass
	for _, c := range m.fdd.ObjectClasses {
		if _, ok := m.plans[c.Handle]; ok {
			cs = append(cs, c)
		}
	}
	return cs
}

// IsEntityClass reports whether h is BaseEntity or a class under it.
func (m *Mapper) IsEntityClass(h fomxml.ObjectClassHandle) bool { _, ok := m.plans[h]; return ok }

// FireClass and DetonationClass return WeaponFire and MunitionDetonation.
func (m *Mapper) FireClass() *fomxml.InteractionClass       { return m.fire.class }
func (m *Mapper) DetonationClass() *fomxml.InteractionClass { return m.det.class }

// defaultClasses is the table ClassFor falls back to, after the rules:
// by kind, and for platforms by domain (SISO-STD-001 maps entity kinds
// to the classes of RPR-Physical so).
func defaultClass(t EntityType) string {
	switch t.Kind {
	case KindPlatform:
		switch t.Domain {
		case DomainLand:
			return "GroundVehicle"
		case DomainAir:
			return "Aircraft"
		case DomainSurface:
			return "SurfaceVessel"
		case DomainSubsurface:
			return "SubmersibleVessel"
		case DomainSpace:
			return "Spacecraft"
		}
		return "Platform"
	case KindMunition:
		return "Munition"
	case KindLifeform:
		return "Human"
	case KindCultural:
		return "CulturalFeature"
	case KindSupply:
		return "Supplies"
	case KindRadio:
		return "Radio"
	case KindExpendable:
		return "Expendables"
	case KindSensor:
		return "Sensor"
	}
	return "BaseEntity"
}

// ClassFor returns the object class a DIS entity of type t is
// registered as: the class of the first rule that matches, else the
// default table's (platforms by domain: GroundVehicle, Aircraft,
// SurfaceVessel, SubmersibleVessel, Spacecraft, else Platform; Munition;
// lifeforms Human; CulturalFeature; Supplies; Radio; Expendables;
// Sensor), else the nearest ancestor of it the FDD has, else
// BaseEntity.
func (m *Mapper) ClassFor(t EntityType) *fomxml.ObjectClass {
	for _, r := range m.rules {
		if r.matches(t) {
			if c, ok := m.fdd.ObjectClass(r.Class); ok {
				return c
			}
		}
	}
	name := defaultClass(t)
	for _, n := range []string{name, parentOf(name), "PhysicalEntity"} {
		if c, ok := m.fdd.ObjectClass(n); ok && m.plans[c.Handle] != nil {
			return c
		}
	}
	return m.base
}

func parentOf(name string) string {
	switch name {
	case "GroundVehicle", "Aircraft", "SurfaceVessel", "SubmersibleVessel", "Spacecraft":
		return "Platform"
	case "Human":
		return "Lifeform"
	}
	return "PhysicalEntity"
}

// Attribute returns the attribute of class named name, if the class is
// one of the Mapper's and has it.
func (m *Mapper) Attribute(class fomxml.ObjectClassHandle, name string) (*fomxml.Attribute, bool) {
	p := m.plans[class]
	if p == nil {
		return nil, false
	}
	ap, ok := p.byName[name]
	if !ok {
		return nil, false
	}
	return ap.attr, true
}

// IsMapped reports whether an Entity State PDU field stands for the
// attribute of class; the others travel as attribute records.
func (m *Mapper) IsMapped(class fomxml.ObjectClassHandle, attr fomxml.AttributeHandle) bool {
	p := m.plans[class]
	return p != nil && p.mapped[attr]
}

// --- DIS to HLA ---------------------------------------------------------

// EntityValues puts into dst the attribute values of class that es
// carries: EntityIdentifier, EntityType, AlternateEntityType, Spatial,
// ForceIdentifier, Marking, ArticulatedParametersArray and the fields
// of the appearance and capabilities records the class has attributes
// for. With prev, the PDU last carried for the same entity, only the
// values whose fields changed are put. Values that do not encode are
// left out and returned as *ValueError.
func (m *Mapper) EntityValues(class fomxml.ObjectClassHandle, es, prev *EntityState, dst hla.AttributeValues) []error {
	p := m.plans[class]
	if p == nil {
		return []error{&ValueError{Name: "class", Err: fmt.Errorf("class %d is not under BaseEntity", class)}}
	}
	var errs []error
	put := func(name string, v any) {
		ap, ok := p.byName[name]
		if !ok {
			return
		}
		if ap.t == nil {
			errs = append(errs, &ValueError{Name: name, Err: fmt.Errorf("data type %s does not encode", ap.attr.DataType)})
			return
		}
		b, err := ap.t.Encode(v)
		if err != nil {
			errs = append(errs, &ValueError{Name: name, Err: err})
			return
		}
		dst[ap.attr.Handle] = b
	}
	first := prev == nil
	if first || es.ID != prev.ID {
		put("EntityIdentifier", idValue(es.ID))
	}
	if first || es.Type != prev.Type {
		put("EntityType", typeValue(es.Type))
	}
	if first || es.AlternateType != prev.AlternateType {
		put("AlternateEntityType", typeValue(es.AlternateType))
	}
	if first || spatialChanged(es, prev) {
		if l, ok := m.fast[es.DeadReckoning.Algorithm]; ok {
			if ap, ok := p.byName["Spatial"]; ok {
				dst[ap.attr.Handle] = appendSpatial(nil, l, es)
			}
		} else if v, err := m.spatialValue(es); err != nil {
			errs = append(errs, &ValueError{Name: "Spatial", Err: err})
		} else {
			put("Spatial", v)
		}
	}
	if first || es.Force != prev.Force {
		put("ForceIdentifier", es.Force)
	}
	if first || es.Marking != prev.Marking {
		put("Marking", map[string]any{"MarkingEncodingType": es.Marking.CharacterSet, "MarkingData": es.Marking.Text[:]})
	}
	if first || !slices.Equal(es.Parameters, prev.Parameters) {
		v, perrs := m.paramsValue(es.Parameters)
		errs = append(errs, perrs...)
		put("ArticulatedParametersArray", v)
	}
	fields, land := appearanceFields(es.Type)
	typeChanged := !first && appearanceTable(prev.Type) != appearanceTable(es.Type)
	for _, f := range fields {
		if first || typeChanged || f.get(es.Appearance) != f.get(prev.Appearance) {
			put(f.attr, f.get(es.Appearance))
		}
	}
	if c := camouflage(es.Appearance, land); first || typeChanged || c != camouflage(prev.Appearance, land) {
		put(camouflageAttr, c)
	}
	for _, f := range capabilityFields {
		if first || f.get(es.Capabilities) != f.get(prev.Capabilities) {
			put(f.attr, f.get(es.Capabilities))
		}
	}
	return errs
}

// appearanceTable names the table of a type, to notice a change of
// layout.
func appearanceTable(t EntityType) *bitField {
	f, _ := appearanceFields(t)
	return &f[0]
}

func spatialChanged(a, b *EntityState) bool {
	return a.Location != b.Location || a.Orientation != b.Orientation || a.Velocity != b.Velocity ||
		a.DeadReckoning.Algorithm != b.DeadReckoning.Algorithm ||
		a.DeadReckoning.LinearAcceleration != b.DeadReckoning.LinearAcceleration ||
		a.DeadReckoning.AngularVelocity != b.DeadReckoning.AngularVelocity ||
		a.Appearance&appearanceFrozen != b.Appearance&appearanceFrozen
}

func idValue(id EntityID) map[string]any {
	return map[string]any{
		"FederateIdentifier": map[string]any{"SiteID": id.Site, "ApplicationID": id.Application},
		"EntityNumber":       id.Entity,
	}
}

func typeValue(t EntityType) map[string]any {
	return map[string]any{"EntityKind": t.Kind, "Domain": t.Domain, "CountryCode": t.Country, "Category": t.Category,
		"Subcategory": t.Subcategory, "Specific": t.Specific, "Extra": t.Extra}
}

func worldValue(w WorldCoordinates) map[string]any {
	return map[string]any{"X": w.X, "Y": w.Y, "Z": w.Z}
}

func velocityValue(v Vector) map[string]any {
	return map[string]any{"XVelocity": v.X, "YVelocity": v.Y, "ZVelocity": v.Z}
}

func bool01(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// spatialValue is the Spatial of es: the variant record its
// dead-reckoning algorithm selects, holding the fields that alternative
// has. An algorithm the FOM has no alternative for (0, Other, or above
// 9) goes as Static.
func (m *Mapper) spatialValue(es *EntityState) (map[string]any, error) {
	alt, ok := m.spatial.byValue[int64(es.DeadReckoning.Algorithm)]
	if !ok {
		if alt, ok = m.spatial.byValue[int64(DRStatic)]; !ok {
			return nil, fmt.Errorf("no alternative for dead-reckoning algorithm %d", es.DeadReckoning.Algorithm)
		}
	}
	rec := map[string]any{}
	all := map[string]any{
		"WorldLocation":      worldValue(es.Location),
		"IsFrozen":           bool01(es.Appearance&appearanceFrozen != 0),
		"Orientation":        map[string]any{"Psi": es.Orientation.Psi, "Theta": es.Orientation.Theta, "Phi": es.Orientation.Phi},
		"VelocityVector":     velocityValue(es.Velocity),
		"AccelerationVector": map[string]any{"XAcceleration": es.DeadReckoning.LinearAcceleration.X, "YAcceleration": es.DeadReckoning.LinearAcceleration.Y, "ZAcceleration": es.DeadReckoning.LinearAcceleration.Z},
		"AngularVelocity":    map[string]any{"XAngularVelocity": es.DeadReckoning.AngularVelocity.X, "YAngularVelocity": es.DeadReckoning.AngularVelocity.Y, "ZAngularVelocity": es.DeadReckoning.AngularVelocity.Z},
	}
	for f := range alt.fields {
		v, ok := all[f]
		if !ok {
			return nil, fmt.Errorf("alternative %s has a field %s the gateway does not know", alt.alt, f)
		}
		rec[f] = v
	}
	return map[string]any{m.spatial.discName: alt.enum, alt.alt: rec}, nil
}

// paramsValue is the ArticulatedParametersArray of ps: articulated and
// attached parts; records of other types, and elements that do not
// encode, are left out and returned as errors.
func (m *Mapper) paramsValue(ps []VariableParameter) ([]any, []error) {
	out := make([]any, 0, len(ps))
	var errs []error
	for i, p := range ps {
		var pv map[string]any
		if ap, ok := p.Articulated(); ok {
			alt, ok := m.param.byValue[int64(ParamArticulatedPart)]
			if !ok {
				errs = append(errs, &ValueError{Name: fmt.Sprintf("ArticulatedParametersArray[%d]", i), Err: errors.New("the FOM has no articulated part")})
				continue
			}
			pv = map[string]any{"ArticulatedParameterChange": ap.Change, "PartAttachedTo": ap.AttachedTo,
				"ParameterValue": map[string]any{m.param.discName: alt.enum, alt.alt: map[string]any{
					"Class": ap.ParameterType &^ 31, "TypeMetric": ap.ParameterType & 31, "Value": ap.Value}}}
		} else if at, ok := p.Attached(); ok {
			alt, ok := m.param.byValue[int64(ParamAttachedPart)]
			if !ok {
				errs = append(errs, &ValueError{Name: fmt.Sprintf("ArticulatedParametersArray[%d]", i), Err: errors.New("the FOM has no attached part")})
				continue
			}
			pv = map[string]any{"ArticulatedParameterChange": at.Detached, "PartAttachedTo": at.AttachedTo,
				"ParameterValue": map[string]any{m.param.discName: alt.enum, alt.alt: map[string]any{
					"Station": at.Station, "StoreType": typeValue(at.Store)}}}
		} else {
			errs = append(errs, &ValueError{Name: fmt.Sprintf("ArticulatedParametersArray[%d]", i),
				Err: fmt.Errorf("variable parameter record type %d has no RPR FOM 2.0 alternative", p.RecordType())})
			continue
		}
		if _, err := m.elemType.Encode(pv); err != nil {
			errs = append(errs, &ValueError{Name: fmt.Sprintf("ArticulatedParametersArray[%d]", i), Err: err})
			continue
		}
		out = append(out, pv)
	}
	return out, errs
}

// FireValues puts into dst the WeaponFire parameters of f; names turns
// its entity IDs into object names.
func (m *Mapper) FireValues(f *Fire, names Names, dst hla.ParameterValues) []error {
	ip := m.fire
	var errs []error
	put := m.putter(ip, dst, &errs)
	firing := names.ObjectName(f.Firing)
	put("EventIdentifier", map[string]any{"EventCount": f.Event.Event, "IssuingObjectIdentifier": firing})
	put("FireControlSolutionRange", f.Range)
	put("FireMissionIndex", f.FireMissionIndex)
	put("FiringLocation", worldValue(f.Location))
	put("FiringObjectIdentifier", firing)
	put("FuseType", f.Burst.Fuse)
	put("InitialVelocityVector", velocityValue(f.Velocity))
	put("MunitionObjectIdentifier", names.ObjectName(f.Munition))
	put("MunitionType", typeValue(f.Burst.Munition))
	put("QuantityFired", f.Burst.Quantity)
	put("RateOfFire", f.Burst.Rate)
	put("TargetObjectIdentifier", names.ObjectName(f.Target))
	put("WarheadType", f.Burst.Warhead)
	return errs
}

// DetonationValues puts into dst the MunitionDetonation parameters of d.
func (m *Mapper) DetonationValues(d *Detonation, names Names, dst hla.ParameterValues) []error {
	ip := m.det
	var errs []error
	put := m.putter(ip, dst, &errs)
	firing := names.ObjectName(d.Firing)
	params, perrs := m.paramsValue(d.Parameters)
	errs = append(errs, perrs...)
	put("ArticulatedPartData", params)
	put("DetonationLocation", worldValue(d.Location))
	put("DetonationResultCode", d.Result)
	put("EventIdentifier", map[string]any{"EventCount": d.Event.Event, "IssuingObjectIdentifier": firing})
	put("FinalVelocityVector", velocityValue(d.Velocity))
	put("FiringObjectIdentifier", firing)
	put("FuseType", d.Burst.Fuse)
	put("MunitionObjectIdentifier", names.ObjectName(d.Munition))
	put("MunitionType", typeValue(d.Burst.Munition))
	put("QuantityFired", d.Burst.Quantity)
	put("RateOfFire", d.Burst.Rate)
	put("RelativeDetonationLocation", map[string]any{"BodyXDistance": d.EntityLocation.X, "BodyYDistance": d.EntityLocation.Y, "BodyZDistance": d.EntityLocation.Z})
	put("TargetObjectIdentifier", names.ObjectName(d.Target))
	put("WarheadType", d.Burst.Warhead)
	return errs
}

func (m *Mapper) putter(ip *interactionPlan, dst hla.ParameterValues, errs *[]error) func(string, any) {
	return func(name string, v any) {
		pp := ip.params[name]
		b, err := pp.t.Encode(v)
		if err != nil {
			*errs = append(*errs, &ValueError{Name: name, Err: err})
			return
		}
		dst[pp.p.Handle] = b
	}
}

// Tag is the user-supplied tag of an update or interaction carrying the
// DIS time stamp ts: 8 hexadecimal digits, as the RPR FOM's
// RPRUserDefinedTag holds it.
func (m *Mapper) Tag(ts uint32) []byte {
	s := fmt.Sprintf("%08X", ts)
	if m.tag != nil {
		if b, err := m.tag.Encode(s); err == nil {
			return b
		}
	}
	return append([]byte(s), 0)
}

// TagTimestamp reads the DIS time stamp of a tag made as Tag makes them;
// false when the tag holds none.
func TagTimestamp(tag []byte) (uint32, bool) {
	if len(tag) < 8 {
		return 0, false
	}
	v, err := strconv.ParseUint(string(tag[:8]), 16, 32)
	if err != nil {
		return 0, false
	}
	return uint32(v), true
}

// --- HLA to DIS ---------------------------------------------------------

// ApplyEntityValues decodes the values reflected for an instance of
// class into es, leaving the fields of attributes not among them as they
// are. It returns the values of attributes no Entity State field stands
// for (they travel as attribute records), and the values that did not
// decode by their FOM type as *ValueError: those are dropped; the others
// still apply.
func (m *Mapper) ApplyEntityValues(class fomxml.ObjectClassHandle, values hla.AttributeValues, es *EntityState) (extra hla.AttributeValues, errs []error) {
	p := m.plans[class]
	if p == nil {
		return nil, []error{&ValueError{Name: "class", Err: fmt.Errorf("class %d is not under BaseEntity", class)}}
	}
	decoded := map[string]any{}
	for h, b := range values {
		a, ok := p.class.AttributeByHandle(h)
		if !ok || a.Class == m.fdd.ObjectRoot {
			continue
		}
		if !p.mapped[h] {
			if extra == nil {
				extra = hla.AttributeValues{}
			}
			extra[h] = b
			continue
		}
		if a.Name == "Spatial" && m.fast != nil {
			if err := readSpatialFast(m.fast, b, es); err != nil {
				errs = append(errs, &ValueError{Name: a.Name, Err: err})
			}
			continue
		}
		ap := p.byName[a.Name]
		if ap.t == nil {
			errs = append(errs, &ValueError{Name: a.Name, Err: fmt.Errorf("data type %s does not decode", a.DataType)})
			continue
		}
		v, err := ap.t.Decode(b)
		if err != nil {
			errs = append(errs, &ValueError{Name: a.Name, Err: err})
			continue
		}
		decoded[a.Name] = v
	}
	fail := func(name string, err error) { errs = append(errs, &ValueError{Name: name, Err: err}) }
	setDecoded(decoded, "EntityIdentifier", &es.ID, readIDValue, fail)
	setDecoded(decoded, "EntityType", &es.Type, readTypeValue, fail)
	setDecoded(decoded, "AlternateEntityType", &es.AlternateType, readTypeValue, fail)
	if v, ok := decoded["Spatial"]; ok {
		if err := m.readSpatial(v, es); err != nil {
			fail("Spatial", err)
		}
	}
	setDecoded(decoded, "ForceIdentifier", &es.Force, func(v any) (uint8, error) {
		n, err := m.enumNum(p.byName["ForceIdentifier"].attr.DataType, v)
		return uint8(n), err
	}, fail)
	setDecoded(decoded, "Marking", &es.Marking, func(v any) (Marking, error) {
		return m.readMarking(p.byName["Marking"].attr.DataType, v)
	}, fail)
	setDecoded(decoded, "ArticulatedParametersArray", &es.Parameters, m.readParams, fail)
	fields, land := appearanceFields(es.Type)
	for _, f := range fields {
		if v, ok := decoded[f.attr]; ok {
			n, err := m.enumNum(p.byName[f.attr].attr.DataType, v)
			if err != nil {
				fail(f.attr, err)
				continue
			}
			es.Appearance = f.set(es.Appearance, uint32(n))
		}
	}
	if v, ok := decoded[camouflageAttr]; ok {
		if n, err := m.enumNum(p.byName[camouflageAttr].attr.DataType, v); err != nil {
			fail(camouflageAttr, err)
		} else {
			es.Appearance = setCamouflage(es.Appearance, uint32(n), land)
		}
	}
	for _, f := range capabilityFields {
		if v, ok := decoded[f.attr]; ok {
			n, err := m.enumNum(p.byName[f.attr].attr.DataType, v)
			if err != nil {
				fail(f.attr, err)
				continue
			}
			es.Capabilities = f.set(es.Capabilities, uint32(n))
		}
	}
	return extra, errs
}

// setDecoded reads the value of decoded named name, when there is one,
// by read into *dst; a value that does not read leaves *dst as it was
// and goes to fail.
func setDecoded[T any](decoded map[string]any, name string, dst *T, read func(any) (T, error), fail func(name string, err error)) {
	v, ok := decoded[name]
	if !ok {
		return
	}
	x, err := read(v)
	if err != nil {
		fail(name, err)
		return
	}
	*dst = x
}

// enumNum is the number of a decoded value of data type typ: an integer,
// or an enumerator's name.
func (m *Mapper) enumNum(typ string, v any) (int64, error) {
	switch v := v.(type) {
	case string:
		if e, ok := m.enums[typ]; ok {
			if n, ok := e[v]; ok {
				return n, nil
			}
		}
		return 0, fmt.Errorf("%q is no enumerator of %s", v, typ)
	case bool:
		return int64(bool01(v)), nil
	}
	return toInt(v)
}

func toInt(v any) (int64, error) {
	switch v := v.(type) {
	case int64:
		return v, nil
	case uint64:
		if v > math.MaxInt64 {
			return 0, fmt.Errorf("%d out of range", v)
		}
		return int64(v), nil
	case float64:
		return int64(v), nil
	}
	return 0, fmt.Errorf("want a number, got %T", v)
}

func toFloat(v any) (float64, error) {
	switch v := v.(type) {
	case float64:
		return v, nil
	case int64:
		return float64(v), nil
	case uint64:
		return float64(v), nil
	}
	return 0, fmt.Errorf("want a number, got %T", v)
}

// rec reads a decoded fixed record.
type rec struct {
	m   map[string]any
	err error
}

func asRec(v any) rec {
	m, ok := v.(map[string]any)
	if !ok {
		return rec{err: fmt.Errorf("want a record, got %T", v)}
	}
	return rec{m: m}
}

func (r *rec) field(name string) any {
	if r.err != nil {
		return nil
	}
	v, ok := r.m[name]
	if !ok {
		r.err = fmt.Errorf("no field %s", name)
	}
	return v
}

func (r *rec) f64(name string) float64 {
	v := r.field(name)
	if r.err != nil {
		return 0
	}
	f, err := toFloat(v)
	if err != nil {
		r.err = fmt.Errorf("%s: %w", name, err)
	}
	return f
}

func (r *rec) f32(name string) float32 { return float32(r.f64(name)) }

func (r *rec) uint(name string, bits int) uint64 {
	v := r.field(name)
	if r.err != nil {
		return 0
	}
	n, err := toInt(v)
	if err == nil && (n < 0 || bits < 64 && n >= 1<<bits) {
		err = fmt.Errorf("%d does not fit %d bits", n, bits)
	}
	if err != nil {
		r.err = fmt.Errorf("%s: %w", name, err)
	}
	return uint64(n)
}

func (r *rec) sub(name string) rec {
	v := r.field(name)
	if r.err != nil {
		return rec{err: r.err}
	}
	s := asRec(v)
	if s.err != nil {
		s.err = fmt.Errorf("%s: %w", name, s.err)
	}
	return s
}

func readIDValue(v any) (EntityID, error) {
	r := asRec(v)
	f := r.sub("FederateIdentifier")
	id := EntityID{Site: uint16(f.uint("SiteID", 16)), Application: uint16(f.uint("ApplicationID", 16)), Entity: uint16(r.uint("EntityNumber", 16))}
	return id, errors.Join(r.err, f.err)
}

func readTypeValue(v any) (EntityType, error) {
	r := asRec(v)
	t := EntityType{Kind: uint8(r.uint("EntityKind", 8)), Domain: uint8(r.uint("Domain", 8)), Country: uint16(r.uint("CountryCode", 16)),
		Category: uint8(r.uint("Category", 8)), Subcategory: uint8(r.uint("Subcategory", 8)), Specific: uint8(r.uint("Specific", 8)), Extra: uint8(r.uint("Extra", 8))}
	return t, r.err
}

func readWorldValue(v any) (WorldCoordinates, error) {
	r := asRec(v)
	w := WorldCoordinates{r.f64("X"), r.f64("Y"), r.f64("Z")}
	return w, r.err
}

func readVectorValue(v any, x, y, z string) (Vector, error) {
	r := asRec(v)
	vec := Vector{r.f32(x), r.f32(y), r.f32(z)}
	return vec, r.err
}

// variantValue returns the discriminant's value and the alternative's
// value of a decoded variant record of vp.
func (m *Mapper) variantValue(vp *variantPlan, v any) (int64, variantAlt, any, error) {
	r := asRec(v)
	d := r.field(vp.discName)
	if r.err != nil {
		return 0, variantAlt{}, nil, r.err
	}
	n, err := m.enumNum(vp.discType, d)
	if err != nil {
		return 0, variantAlt{}, nil, err
	}
	alt, ok := vp.byValue[n]
	if !ok {
		return n, alt, nil, nil // an alternative without data
	}
	return n, alt, r.m[alt.alt], nil
}

func (m *Mapper) readSpatial(v any, es *EntityState) error {
	n, alt, av, err := m.variantValue(m.spatial, v)
	if err != nil {
		return err
	}
	if av == nil {
		return fmt.Errorf("dead-reckoning algorithm %d carries no values", n)
	}
	r := asRec(av)
	out := *es
	out.DeadReckoning.Algorithm = uint8(n)
	out.Velocity, out.DeadReckoning.LinearAcceleration, out.DeadReckoning.AngularVelocity = Vector{}, Vector{}, Vector{}
	var errs []error
	for f := range alt.fields {
		fv := r.m[f]
		var err error
		switch f {
		case "WorldLocation":
			out.Location, err = readWorldValue(fv)
		case "Orientation":
			o := asRec(fv)
			out.Orientation = EulerAngles{o.f32("Psi"), o.f32("Theta"), o.f32("Phi")}
			err = o.err
		case "IsFrozen":
			var b int64
			t, _ := m.fieldType(alt.dataType, f)
			b, err = m.enumNum(t, fv)
			out.Appearance &^= appearanceFrozen
			if b != 0 {
				out.Appearance |= appearanceFrozen
			}
		case "VelocityVector":
			out.Velocity, err = readVectorValue(fv, "XVelocity", "YVelocity", "ZVelocity")
		case "AccelerationVector":
			out.DeadReckoning.LinearAcceleration, err = readVectorValue(fv, "XAcceleration", "YAcceleration", "ZAcceleration")
		case "AngularVelocity":
			out.DeadReckoning.AngularVelocity, err = readVectorValue(fv, "XAngularVelocity", "YAngularVelocity", "ZAngularVelocity")
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	*es = out
	return nil
}

func (m *Mapper) readMarking(typ string, v any) (Marking, error) {
	r := asRec(v)
	var mk Marking
	et, _ := m.fieldType(typ, "MarkingEncodingType")
	n, err := m.enumNum(et, r.field("MarkingEncodingType"))
	if r.err != nil {
		return mk, r.err
	}
	if err != nil {
		return mk, err
	}
	mk.CharacterSet = uint8(n)
	data := r.field("MarkingData")
	if r.err != nil {
		return mk, r.err
	}
	b, ok := data.([]byte)
	if !ok {
		return mk, fmt.Errorf("MarkingData: want octets, got %T", data)
	}
	copy(mk.Text[:], b)
	return mk, nil
}

func (m *Mapper) readParams(v any) ([]VariableParameter, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("want an array, got %T", v)
	}
	ps := make([]VariableParameter, 0, len(arr))
	for i, e := range arr {
		r := asRec(e)
		change := uint8(r.uint("ArticulatedParameterChange", 8))
		attached := uint16(r.uint("PartAttachedTo", 16))
		pv := r.field("ParameterValue")
		if r.err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, r.err)
		}
		n, alt, av, err := m.variantValue(m.param, pv)
		if err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
		a := asRec(av)
		ft := func(f string) string { t, _ := m.fieldType(alt.dataType, f); return t }
		switch uint8(n) {
		case ParamArticulatedPart:
			class, err1 := m.enumNum(ft("Class"), a.field("Class"))
			metric, err2 := m.enumNum(ft("TypeMetric"), a.field("TypeMetric"))
			value := a.f32("Value")
			if err := errors.Join(a.err, err1, err2); err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			ps = append(ps, ArticulatedPart{Change: change, AttachedTo: attached, ParameterType: uint32(class) + uint32(metric), Value: value}.Param())
		case ParamAttachedPart:
			station, err1 := m.enumNum(ft("Station"), a.field("Station"))
			store, err2 := readTypeValue(a.field("StoreType"))
			if err := errors.Join(a.err, err1, err2); err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			ps = append(ps, AttachedPart{Detached: change, AttachedTo: attached, Station: uint32(station), Store: store}.Param())
		default:
			return nil, fmt.Errorf("[%d]: parameter type %d", i, n)
		}
	}
	return ps, nil
}

// ApplyFire decodes WeaponFire parameters into f; names turns object
// names into entity IDs. Parameters that do not decode, or name objects
// names does not know, are returned as *ValueError and leave their
// fields zero.
func (m *Mapper) ApplyFire(values hla.ParameterValues, names Names, f *Fire) []error {
	d := m.decodeParams(m.fire, values)
	d.id("FiringObjectIdentifier", names, &f.Firing)
	d.id("TargetObjectIdentifier", names, &f.Target)
	d.id("MunitionObjectIdentifier", names, &f.Munition)
	d.event(names, f.Firing, &f.Event)
	param(d, "FireControlSolutionRange", &f.Range, readFloat32)
	param(d, "FireMissionIndex", &f.FireMissionIndex, readUint32)
	param(d, "FiringLocation", &f.Location, readWorldValue)
	param(d, "InitialVelocityVector", &f.Velocity, vectorReader("XVelocity", "YVelocity", "ZVelocity"))
	d.burst(&f.Burst)
	return d.errs
}

// ApplyDetonation decodes MunitionDetonation parameters into det.
func (m *Mapper) ApplyDetonation(values hla.ParameterValues, names Names, det *Detonation) []error {
	d := m.decodeParams(m.det, values)
	d.id("FiringObjectIdentifier", names, &det.Firing)
	d.id("TargetObjectIdentifier", names, &det.Target)
	d.id("MunitionObjectIdentifier", names, &det.Munition)
	d.event(names, det.Firing, &det.Event)
	param(d, "ArticulatedPartData", &det.Parameters, m.readParams)
	param(d, "DetonationLocation", &det.Location, readWorldValue)
	param(d, "DetonationResultCode", &det.Result, func(v any) (uint8, error) {
		n, err := m.enumNum(m.det.params["DetonationResultCode"].p.DataType, v)
		return uint8(n), err
	})
	param(d, "FinalVelocityVector", &det.Velocity, vectorReader("XVelocity", "YVelocity", "ZVelocity"))
	param(d, "RelativeDetonationLocation", &det.EntityLocation, vectorReader("BodyXDistance", "BodyYDistance", "BodyZDistance"))
	d.burst(&det.Burst)
	return d.errs
}

// paramDecoder decodes the parameters of one interaction.
type paramDecoder struct {
	m      *Mapper
	ip     *interactionPlan
	values map[string]any
	errs   []error
}

func (m *Mapper) decodeParams(ip *interactionPlan, values hla.ParameterValues) *paramDecoder {
	d := &paramDecoder{m: m, ip: ip, values: map[string]any{}}
	for name, pp := range ip.params {
		b, ok := values[pp.p.Handle]
		if !ok {
			continue
		}
		v, err := pp.t.Decode(b)
		if err != nil {
			d.errs = append(d.errs, &ValueError{Name: name, Err: err})
			continue
		}
		d.values[name] = v
	}
	return d
}

func (d *paramDecoder) get(name string) (any, bool) { v, ok := d.values[name]; return v, ok }

func (d *paramDecoder) check(name string, err error) {
	if err != nil {
		d.errs = append(d.errs, &ValueError{Name: name, Err: err})
	}
}

// param decodes parameter name, when it is present, by read into *dst;
// a value read fails on is recorded as a *ValueError and leaves *dst as
// it was, even when read got part of it (a record missing a field).
func param[T any](d *paramDecoder, name string, dst *T, read func(any) (T, error)) {
	v, ok := d.get(name)
	if !ok {
		return
	}
	x, err := read(v)
	d.check(name, err)
	if err == nil {
		*dst = x
	}
}

func readFloat32(v any) (float32, error) { x, err := toFloat(v); return float32(x), err }

func readUint32(v any) (uint32, error) { n, err := toInt(v); return uint32(n), err }

// vectorReader reads a vector record with the fields x, y and z.
func vectorReader(x, y, z string) func(any) (Vector, error) {
	return func(v any) (Vector, error) { return readVectorValue(v, x, y, z) }
}

// id resolves the object name parameter name into an entity ID.
func (d *paramDecoder) id(name string, names Names, dst *EntityID) {
	v, ok := d.get(name)
	if !ok {
		return
	}
	s, _ := v.(string)
	if s == "" {
		return
	}
	id, ok := names.EntityID(s)
	if !ok {
		d.errs = append(d.errs, &ValueError{Name: name, Err: fmt.Errorf("no entity known as %q", s)})
		return
	}
	*dst = id
}

// event reads EventIdentifier: its count, under the simulation address
// of the issuing object (the firing entity's when it is not known).
func (d *paramDecoder) event(names Names, firing EntityID, dst *EventID) {
	v, ok := d.get("EventIdentifier")
	if !ok {
		return
	}
	r := asRec(v)
	n := uint16(r.uint("EventCount", 16))
	issuer, _ := r.field("IssuingObjectIdentifier").(string)
	if r.err != nil {
		d.check("EventIdentifier", r.err)
		return
	}
	at := firing
	if id, ok := names.EntityID(issuer); ok {
		at = id
	}
	*dst = EventID{Site: at.Site, Application: at.Application, Event: n}
}

func (d *paramDecoder) burst(b *BurstDescriptor) {
	num := func(name string) uint16 {
		v, ok := d.get(name)
		if !ok {
			return 0
		}
		n, err := d.m.enumNum(d.ip.params[name].p.DataType, v)
		d.check(name, err)
		return uint16(n)
	}
	b.Warhead, b.Fuse, b.Quantity, b.Rate = num("WarheadType"), num("FuseType"), num("QuantityFired"), num("RateOfFire")
	param(d, "MunitionType", &b.Munition, readTypeValue)
}

// --- Attribute records --------------------------------------------------

// RecordValues puts into dst the attributes of class that attribute
// records carry: named records (NamedRecordType and above, unless bound)
// by the attribute named, bound records by their binding. A record whose
// attribute the class lacks, or whose value does not decode by the
// attribute's FOM type, is left out and returned as *ValueError.
func (m *Mapper) RecordValues(class fomxml.ObjectClassHandle, recs []AttributeRecord, dst hla.AttributeValues) []error {
	p := m.plans[class]
	if p == nil {
		return []error{&ValueError{Name: "class", Err: fmt.Errorf("class %d is not under BaseEntity", class)}}
	}
	var errs []error
	for _, r := range recs {
		name, value, err := m.readRecord(p, r)
		if err != nil {
			errs = append(errs, &ValueError{Name: fmt.Sprintf("record %d", r.Type), Err: err})
			continue
		}
		if name == "" {
			continue // a record type the gateway does not carry
		}
		dst[p.byName[name].attr.Handle] = value
	}
	return errs
}

// readRecord returns the attribute a record carries and its value; an
// empty name for a record of a type neither named nor bound.
func (m *Mapper) readRecord(p *classPlan, r AttributeRecord) (string, []byte, error) {
	if name, ok := m.bound[r.Type]; ok {
		ap, ok := p.byName[name]
		if !ok || ap.t == nil {
			return "", nil, fmt.Errorf("%s has no attribute %s that decodes", p.class.Name, name)
		}
		// The value is followed by up to 7 octets of padding: take the
		// longest prefix that decodes to exactly itself.
		if n, ok := ap.t.FixedSize(); ok {
			if n > len(r.Data) {
				return "", nil, fmt.Errorf("%s: %d octets, want %d", name, len(r.Data), n)
			}
			return name, r.Data[:n], nil
		}
		for cut := 0; cut <= 7 && cut <= len(r.Data); cut++ {
			b := r.Data[:len(r.Data)-cut]
			v, err := ap.t.Decode(b)
			if err != nil {
				continue
			}
			if again, err := ap.t.Encode(v); err == nil && string(again) == string(b) {
				return name, slices.Clone(b), nil
			}
		}
		return "", nil, fmt.Errorf("%s: the value does not decode as %s", name, ap.attr.DataType)
	}
	if r.Type < m.named {
		return "", nil, nil
	}
	d := r.Data
	if len(d) < 4 {
		return "", nil, fmt.Errorf("named record of %d octets", len(d))
	}
	nl, dl := int(be16(d)), int(be16(d[2:]))
	if 4+nl+dl > len(d) {
		return "", nil, fmt.Errorf("named record: name %d and data %d octets in %d", nl, dl, len(d)-4)
	}
	name := string(d[4 : 4+nl])
	value := slices.Clone(d[4+nl : 4+nl+dl])
	ap, ok := p.byName[name]
	if !ok {
		return "", nil, fmt.Errorf("%s has no attribute %q", p.class.Name, name)
	}
	if ap.t == nil {
		return "", nil, fmt.Errorf("%s: data type %s does not decode", name, ap.attr.DataType)
	}
	if _, err := ap.t.Decode(value); err != nil {
		return "", nil, fmt.Errorf("%s: %w", name, err)
	}
	return name, value, nil
}

// Records returns the attribute records of the values of class that no
// Entity State field stands for: a bound record for an attribute bound
// to a record type, a named record for the others, sorted by attribute
// name. Values that do not decode by their FOM type are left out and
// returned as *ValueError.
func (m *Mapper) Records(class fomxml.ObjectClassHandle, extra hla.AttributeValues) ([]AttributeRecord, []error) {
	p := m.plans[class]
	if p == nil || len(extra) == 0 {
		return nil, nil
	}
	var recs []AttributeRecord
	var errs []error
	var names []string
	byName := map[string][]byte{}
	for h, b := range extra {
		a, ok := p.class.AttributeByHandle(h)
		if !ok {
			continue
		}
		names = append(names, a.Name)
		byName[a.Name] = b
	}
	slices.Sort(names)
	for _, name := range names {
		b := byName[name]
		ap := p.byName[name]
		if ap == nil || ap.t == nil {
			errs = append(errs, &ValueError{Name: name, Err: errors.New("data type does not decode")})
			continue
		}
		if _, err := ap.t.Decode(b); err != nil {
			errs = append(errs, &ValueError{Name: name, Err: err})
			continue
		}
		if t, ok := m.boundBy[name]; ok {
			recs = append(recs, AttributeRecord{Type: t, Data: slices.Clone(b)})
			continue
		}
		if len(name) > math.MaxUint16 || len(b) > math.MaxUint16 {
			errs = append(errs, &ValueError{Name: name, Err: errors.New("too long for a named record")})
			continue
		}
		d := make([]byte, 0, 4+len(name)+len(b))
		d = appendU16(appendU16(d, uint16(len(name))), uint16(len(b)))
		d = append(append(d, name...), b...)
		recs = append(recs, AttributeRecord{Type: m.named, Data: d})
	}
	return recs, errs
}
