package dis

// The appearance record of an Entity State PDU is 32 bits whose layout
// depends on the entity's kind and, for platforms, its domain
// (SISO-REF-010, "appearance"). The RPR FOM spreads it over attributes
// of PhysicalEntity and its subclasses. The tables below are the bits
// the gateway carries; docs/dis.md lists them. Bits 21 (frozen: the
// IsFrozen field of Spatial) and 23 (deactivated: the entity is
// deleted) are handled apart, for every kind.

// bitField is one field of the appearance record and the attribute it
// is carried by: an RPRboolean for a field of width 1, an enumeration
// whose values are the field's otherwise.
type bitField struct {
	attr         string
	shift, width uint8
}

func (f bitField) get(word uint32) uint32 { return word >> f.shift & (1<<f.width - 1) }

func (f bitField) set(word, v uint32) uint32 {
	mask := uint32(1<<f.width-1) << f.shift
	return word&^mask | v<<f.shift&mask
}

// Appearance bits every kind shares.
const (
	appearanceFrozen      = 1 << 21
	appearanceDeactivated = 1 << 23
)

// Camouflage: bit 0 is the paint scheme (uniform or camouflage), and for
// land platforms bits 17-18 the kind of camouflage (desert, winter,
// forest, other). CamouflageType: UniformPaintScheme 0, Desert 1,
// Winter 2, Forest 3, Generic 4.
const camouflageAttr = "CamouflageType"

// camouflage reads the CamouflageType value of an appearance word.
func camouflage(word uint32, land bool) uint32 {
	if word&1 == 0 {
		return 0
	}
	if !land {
		return 4
	}
	return word>>17&3 + 1
}

// setCamouflage writes a CamouflageType value into an appearance word.
func setCamouflage(word, v uint32, land bool) uint32 {
	word &^= 1
	if land {
		word &^= 3 << 17
	}
	switch {
	case v == 0:
	case land && v <= 4:
		word |= 1 | (v-1)<<17
	default:
		word |= 1
	}
	return word
}

var (
	platformCommon = []bitField{
		{"Immobilized", 1, 1}, {"DamageState", 3, 2}, {"SmokePlumePresent", 5, 1}, {"EngineSmokeOn", 6, 1},
		{"TrailingEffectsCode", 7, 2}, {"FlamesPresent", 15, 1}, {"PowerPlantOn", 22, 1},
	}
	landPlatform = append(append([]bitField{}, platformCommon...),
		bitField{"FirePowerDisabled", 2, 1}, bitField{"HatchState", 9, 3}, bitField{"HeadLightsOn", 12, 1},
		bitField{"TailLightsOn", 13, 1}, bitField{"BrakeLightsOn", 14, 1}, bitField{"LauncherRaised", 16, 1},
		bitField{"IsConcealed", 19, 1}, bitField{"TentDeployed", 24, 1}, bitField{"RampDeployed", 25, 1},
		bitField{"BlackOutLightsOn", 26, 1}, bitField{"BlackOutBrakeLightsOn", 27, 1}, bitField{"SpotLightsOn", 28, 1},
		bitField{"InteriorLightsOn", 29, 1})
	airPlatform = append(append([]bitField{}, platformCommon...),
		bitField{"HatchState", 9, 3}, bitField{"LandingLightsOn", 12, 1}, bitField{"NavigationLightsOn", 13, 1},
		bitField{"AntiCollisionLightsOn", 14, 1}, bitField{"AfterburnerOn", 16, 1}, bitField{"FormationLightsOn", 24, 1},
		bitField{"SpotLightsOn", 28, 1}, bitField{"InteriorLightsOn", 29, 1})
	surfacePlatform = append(append([]bitField{}, platformCommon...),
		bitField{"FirePowerDisabled", 2, 1}, bitField{"RunningLightsOn", 12, 1}, bitField{"SpotLightsOn", 28, 1},
		bitField{"InteriorLightsOn", 29, 1})
	subsurfacePlatform = append(append([]bitField{}, platformCommon...),
		bitField{"FirePowerDisabled", 2, 1}, bitField{"HatchState", 9, 3}, bitField{"RunningLightsOn", 12, 1})
	otherPlatform = append(append([]bitField{}, platformCommon...), bitField{"FirePowerDisabled", 2, 1})
	lifeform      = []bitField{
		{"DamageState", 3, 2}, {"ComplianceState", 5, 4}, {"FlashLightsOn", 12, 1}, {"StanceCode", 16, 4},
		{"PrimaryWeaponState", 24, 2}, {"SecondaryWeaponState", 26, 2}, {"IsConcealed", 30, 1},
	}
	munition = []bitField{
		{"DamageState", 3, 2}, {"SmokePlumePresent", 5, 1}, {"TrailingEffectsCode", 7, 2}, {"FlamesPresent", 15, 1},
	}
	cultural = []bitField{
		{"DamageState", 3, 2}, {"SmokePlumePresent", 5, 1}, {"FlamesPresent", 15, 1}, {"InternalHeatSourceOn", 22, 1},
		{"ExternalLightsOn", 28, 1}, {"InternalLightsOn", 29, 1},
	}
	sensor = []bitField{
		{"MissionKill", 1, 1}, {"DamageState", 3, 2}, {"SmokePlumePresent", 5, 1}, {"FlamesPresent", 15, 1},
		{"AntennaRaised", 16, 1}, {"BlackoutLightsOn", 26, 1}, {"LightsOn", 28, 1}, {"InteriorLightsOn", 29, 1},
	}
	otherKind = []bitField{{"DamageState", 3, 2}, {"SmokePlumePresent", 5, 1}, {"FlamesPresent", 15, 1}}
)

// appearanceFields returns the fields of the appearance record of an
// entity of type t, and whether it is a land platform (whose
// camouflage has a kind).
func appearanceFields(t EntityType) ([]bitField, bool) {
	switch t.Kind {
	case KindPlatform:
		switch t.Domain {
		case DomainLand:
			return landPlatform, true
		case DomainAir:
			return airPlatform, false
		case DomainSurface:
			return surfacePlatform, false
		case DomainSubsurface:
			return subsurfacePlatform, false
		}
		return otherPlatform, false
	case KindLifeform:
		return lifeform, false
	case KindMunition:
		return munition, false
	case KindCultural:
		return cultural, false
	case KindSensor:
		return sensor, false
	}
	return otherKind, false
}

// capabilityFields are the bits of the capabilities record the RPR FOM
// carries (bits 0-3 of every kind's record).
var capabilityFields = []bitField{
	{"HasAmmunitionSupplyCap", 0, 1}, {"HasFuelSupplyCap", 1, 1}, {"HasRecoveryCap", 2, 1}, {"HasRepairCap", 3, 1},
}

// appearanceAttrs is every attribute name some table above uses.
func appearanceAttrs() map[string]bool {
	names := map[string]bool{camouflageAttr: true}
	for _, table := range [][]bitField{landPlatform, airPlatform, surfacePlatform, subsurfacePlatform, otherPlatform,
		lifeform, munition, cultural, sensor, otherKind, capabilityFields} {
		for _, f := range table {
			names[f.attr] = true
		}
	}
	return names
}
