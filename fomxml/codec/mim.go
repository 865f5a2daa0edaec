package codec

import "github.com/meshrti/meshrti/fomxml"

// standardType returns the definition of a data type of the standard MIM
// (IEEE 1516.1-2010 HLAstandardMIM), or nil. The codec falls back on it
// for names the FDD does not define, so that hand-built FDDs need not
// repeat the MIM. A fresh value is built on every call; nothing here is
// shared or mutable.
func standardType(name string) *fomxml.DataType {
	basic := func(size int, e fomxml.Endian, interp string) *fomxml.DataType {
		return &fomxml.DataType{Name: name, Kind: fomxml.KindBasic, Size: size, Endian: e, Interpretation: interp}
	}
	simple := func(rep string) *fomxml.DataType {
		return &fomxml.DataType{Name: name, Kind: fomxml.KindSimple, Representation: rep}
	}
	enum := func(pairs ...any) *fomxml.DataType {
		d := &fomxml.DataType{Name: name, Kind: fomxml.KindEnumerated, Representation: "HLAinteger32BE"}
		for i := 0; i+1 < len(pairs); i += 2 {
			d.Enumerators = append(d.Enumerators, fomxml.Enumerator{Name: pairs[i].(string), Values: []int64{int64(pairs[i+1].(int))}})
		}
		return d
	}
	varArray := func(elem string) *fomxml.DataType {
		return &fomxml.DataType{Name: name, Kind: fomxml.KindArray, Element: elem, Encoding: "HLAvariableArray",
			Cardinality: fomxml.Cardinality{Dynamic: true, Text: "Dynamic"}}
	}
	record := func(fields ...string) *fomxml.DataType {
		d := &fomxml.DataType{Name: name, Kind: fomxml.KindFixedRecord, Encoding: "HLAfixedRecord"}
		for i := 0; i+1 < len(fields); i += 2 {
			d.Fields = append(d.Fields, fomxml.Field{Name: fields[i], DataType: fields[i+1]})
		}
		return d
	}
	const (
		be = fomxml.BigEndian
		le = fomxml.LittleEndian
	)
	switch name {
	case "HLAinteger16BE":
		return basic(16, be, "Integer in the range [-2^15, 2^15 - 1]")
	case "HLAinteger32BE":
		return basic(32, be, "Integer in the range [-2^31, 2^31 - 1]")
	case "HLAinteger64BE":
		return basic(64, be, "Integer in the range [-2^63, 2^63 - 1]")
	case "HLAfloat32BE":
		return basic(32, be, "Single-precision floating point number")
	case "HLAfloat64BE":
		return basic(64, be, "Double-precision floating point number")
	case "HLAoctetPairBE":
		return basic(16, be, "16-bit value")
	case "HLAinteger16LE":
		return basic(16, le, "Integer in the range [-2^15, 2^15 - 1]")
	case "HLAinteger32LE":
		return basic(32, le, "Integer in the range [-2^31, 2^31 - 1]")
	case "HLAinteger64LE":
		return basic(64, le, "Integer in the range [-2^63, 2^63 - 1]")
	case "HLAfloat32LE":
		return basic(32, le, "Single-precision floating point number")
	case "HLAfloat64LE":
		return basic(64, le, "Double-precision floating point number")
	case "HLAoctetPairLE":
		return basic(16, le, "16-bit value")
	case "HLAoctet":
		return basic(8, be, "8-bit value")

	case "HLAASCIIchar", "HLAbyte":
		return simple("HLAoctet")
	case "HLAunicodeChar":
		return simple("HLAoctetPairBE")
	case "HLAcount", "HLAseconds", "HLAmsec", "HLAnormalizedFederateHandle", "HLAindex":
		return simple("HLAinteger32BE")
	case "HLAinteger64Time":
		return simple("HLAinteger64BE")
	case "HLAfloat64Time":
		return simple("HLAfloat64BE")

	case "HLAboolean":
		return enum("HLAfalse", 0, "HLAtrue", 1)
	case "HLAfederateState":
		return enum("ActiveFederate", 1, "FederateSaveInProgress", 3, "FederateRestoreInProgress", 5)
	case "HLAtimeState":
		return enum("TimeGranted", 0, "TimeAdvancing", 1)
	case "HLAownership":
		return enum("Unowned", 0, "Owned", 1)
	case "HLAresignAction":
		return enum("DivestOwnership", 1, "DeleteObjectInstances", 2, "CancelPendingAcquisitions", 3,
			"DeleteObjectInstancesThenDivestOwnership", 4,
			"CancelPendingAcquisitionsThenDeleteObjectInstancesThenDivestOwnership", 5, "NoAction", 6)
	case "HLAorderType":
		return enum("Receive", 0, "TimeStamp", 1)
	case "HLAswitch":
		return enum("Enabled", 1, "Disabled", 0)
	case "HLAsynchPointStatus":
		return enum("NoActivity", 0, "AttemptingToRegisterSynchPoint", 1, "MovingToSynchPoint", 2, "WaitingForRestOfFederation", 3)
	case "HLAnormalizedServiceGroup":
		return enum("FederationManagement", 0, "DeclarationManagement", 1, "ObjectManagement", 2,
			"OwnershipManagement", 3, "TimeManagement", 4, "DataDistributionManagement", 5, "SupportServices", 6)

	case "HLAASCIIstring":
		return varArray("HLAASCIIchar")
	case "HLAunicodeString", "HLAtransportationName", "HLAupdateRateName":
		return varArray("HLAunicodeChar")
	case "HLAopaqueData", "HLAhandle", "HLAlogicalTime", "HLAtimeInterval":
		return varArray("HLAbyte")
	case "HLAtoken":
		return &fomxml.DataType{Name: name, Kind: fomxml.KindArray, Element: "HLAbyte", Encoding: "HLAfixedArray",
			Cardinality: fomxml.Cardinality{Ranges: []fomxml.CardinalityRange{{Min: 0, Max: 0}}, Text: "0"}}
	case "HLAhandleList":
		return varArray("HLAhandle")
	case "HLAinteractionSubList":
		return varArray("HLAinteractionSubscription")
	case "HLAargumentList", "HLAsynchPointList", "HLAmoduleDesignatorList":
		return varArray("HLAunicodeString")
	case "HLAobjectClassBasedCounts":
		return varArray("HLAobjectClassBasedCount")
	case "HLAinteractionCounts":
		return varArray("HLAinteractionCount")
	case "HLAsynchPointFederateList":
		return varArray("HLAsynchPointFederate")

	case "HLAinteractionSubscription":
		return record("HLAinteractionClass", "HLAhandle", "HLAactive", "HLAboolean")
	case "HLAobjectClassBasedCount":
		return record("HLAobjectClass", "HLAhandle", "HLAcount", "HLAcount")
	case "HLAinteractionCount":
		return record("HLAinteractionClass", "HLAhandle", "HLAinteractionCount", "HLAcount")
	case "HLAsynchPointFederate":
		return record("HLAfederate", "HLAhandle", "HLAfederateSynchStatus", "HLAsynchPointStatus")
	}
	return nil
}

// standardTypeNames lists every name standardType knows.
func standardTypeNames() []string {
	return []string{
		"HLAinteger16BE", "HLAinteger32BE", "HLAinteger64BE", "HLAfloat32BE", "HLAfloat64BE", "HLAoctetPairBE",
		"HLAinteger16LE", "HLAinteger32LE", "HLAinteger64LE", "HLAfloat32LE", "HLAfloat64LE", "HLAoctetPairLE",
		"HLAoctet",
		"HLAASCIIchar", "HLAunicodeChar", "HLAbyte", "HLAcount", "HLAseconds", "HLAmsec",
		"HLAnormalizedFederateHandle", "HLAindex", "HLAinteger64Time", "HLAfloat64Time",
		"HLAboolean", "HLAfederateState", "HLAtimeState", "HLAownership", "HLAresignAction", "HLAorderType",
		"HLAswitch", "HLAsynchPointStatus", "HLAnormalizedServiceGroup",
		"HLAASCIIstring", "HLAunicodeString", "HLAopaqueData", "HLAtoken", "HLAhandle", "HLAtransportationName",
		"HLAupdateRateName", "HLAlogicalTime", "HLAtimeInterval", "HLAhandleList", "HLAinteractionSubList",
		"HLAargumentList", "HLAobjectClassBasedCounts", "HLAinteractionCounts", "HLAsynchPointList",
		"HLAsynchPointFederateList", "HLAmoduleDesignatorList",
		"HLAinteractionSubscription", "HLAobjectClassBasedCount", "HLAinteractionCount", "HLAsynchPointFederate",
	}
}
