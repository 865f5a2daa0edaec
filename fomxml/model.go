package fomxml

// This file holds the merged FOM Document Data (FDD) model. Everything in
// it is plain data: an *FDD is built by Merge and not changed afterwards,
// so any number of goroutines may read it at once.

// Handle types. Handles are derived from the fully qualified names of what
// they denote (see handles.go), so every process that merges the same
// modules, in any order, gets the same handles, and a module added later
// never changes the handle of anything already there.
type (
	ObjectClassHandle      uint64
	AttributeHandle        uint64
	InteractionClassHandle uint64
	ParameterHandle        uint64
	DimensionHandle        uint64
)

// Module identifies one FOM module that went into an FDD.
type Module struct {
	File string // path or designator as given; "HLAstandardMIM" for the embedded MIM
	Name string // modelIdentification/name
	Type string // modelIdentification/type (FOM, SOM)
	// Version is modelIdentification/version.
	Version string
	// Format is the OMT edition the file was written in: "1516-2010" or
	// "1516-2000".
	Format string
}

// Pos locates a definition in its source module.
type Pos struct {
	File string
	Line int
}

// Order is the message delivery order of an attribute or interaction.
type Order string

const (
	OrderReceive   Order = "Receive"
	OrderTimeStamp Order = "TimeStamp"
)

// FDD is a merged, validated federation object model.
type FDD struct {
	// Modules in merge order; the MIM is first.
	Modules []Module

	// ObjectRoot is HLAobjectRoot; InteractionRoot is HLAinteractionRoot.
	ObjectRoot      *ObjectClass
	InteractionRoot *InteractionClass

	// ObjectClasses and InteractionClasses list every class, sorted by
	// fully qualified name.
	ObjectClasses      []*ObjectClass
	InteractionClasses []*InteractionClass

	// Dimensions, Transportations, UpdateRates and SyncPoints are sorted
	// by name (label for sync points).
	Dimensions      []*Dimension
	Transportations []*Transportation
	UpdateRates     []*UpdateRate
	SyncPoints      []*SyncPoint

	// DataTypes maps every data type name (basic representations
	// included) to its definition.
	DataTypes map[string]*DataType

	Time     TimeRepresentation
	Tags     Tags
	Switches Switches
	Notes    []*Note

	objectByName      map[string]*ObjectClass
	interactionByName map[string]*InteractionClass
	objectByHandle    map[ObjectClassHandle]*ObjectClass
	interactionByH    map[InteractionClassHandle]*InteractionClass
	dimensionByName   map[string]*Dimension
	dimensionByHandle map[DimensionHandle]*Dimension
	transportByName   map[string]*Transportation

	warnings []Warning
}

// ObjectClass is one object class of the merged FDD.
type ObjectClass struct {
	Handle ObjectClassHandle
	Name   string // unqualified
	// QualifiedName is dot-separated from the root, e.g.
	// "HLAobjectRoot.BaseEntity.PhysicalEntity".
	QualifiedName string
	Parent        *ObjectClass // nil for HLAobjectRoot
	Children      []*ObjectClass
	Sharing       string
	Semantics     string
	// Attributes are the ones this class declares, sorted by name.
	// Inherited attributes are on the ancestors; see AllAttributes.
	Attributes []*Attribute
	// DirectedInteractions are the interaction classes this class
	// declares may be directed to its instances (HLA 4), from every
	// module that declares any, sorted by the interaction class's
	// qualified name. Inherited ones are on the ancestors; see
	// DirectedInteraction.
	DirectedInteractions []*DirectedInteraction
	// Module is the module that defined the class fully (with its
	// attributes); Pos is where.
	Module string
	Pos    Pos

	attrByName   map[string]*Attribute // including inherited
	attrByHandle map[AttributeHandle]*Attribute
	directedByH  map[InteractionClassHandle]*DirectedInteraction // including inherited
	defined      bool                                            // some module gave its attributes
}

// DirectedInteraction is one <directedInteraction> of an object class
// (IEEE 1516.2-2025 objectClassType: after <sharing>, any number of
// them, each a <name> and an optional <sharing>): an interaction class
// that may be directed to instances of the class and of its subclasses.
// It covers that interaction class only, not its subclasses: the schema
// names one class and says nothing of its subclasses, so a FOM declares
// each one it means.
type DirectedInteraction struct {
	// Interaction is the interaction class Name resolves to.
	Interaction *InteractionClass
	// Name is as written: qualified ("HLAinteractionRoot.A.B") or not,
	// resolved as FDD.InteractionClass resolves names.
	Name    string
	Sharing string       // as written; "" when absent (the schema's default is Neither)
	Class   *ObjectClass // the declaring class
	Module  string
	Pos     Pos
}

// Attribute is a class attribute.
type Attribute struct {
	Handle          AttributeHandle
	Name            string
	Class           *ObjectClass // the declaring class
	DataType        string
	UpdateType      string
	UpdateCondition string
	Ownership       string
	Sharing         string
	Dimensions      []string // sorted
	Transportation  string
	Order           Order
	Semantics       string
	Pos             Pos
}

// InteractionClass is one interaction class of the merged FDD.
type InteractionClass struct {
	Handle         InteractionClassHandle
	Name           string
	QualifiedName  string
	Parent         *InteractionClass
	Children       []*InteractionClass
	Sharing        string
	Dimensions     []string // sorted
	Transportation string
	Order          Order
	Semantics      string
	// Parameters are the ones this class declares, sorted by name.
	Parameters []*Parameter
	Module     string
	Pos        Pos

	paramByName   map[string]*Parameter
	paramByHandle map[ParameterHandle]*Parameter
	defined       bool // some module gave its parameters
}

// Parameter is an interaction parameter.
type Parameter struct {
	Handle    ParameterHandle
	Name      string
	Class     *InteractionClass // the declaring class
	DataType  string
	Semantics string
	Pos       Pos
}

// Dimension is a DDM dimension.
type Dimension struct {
	Handle        DimensionHandle
	Name          string
	DataType      string
	UpperBound    uint64
	Normalization string
	// Value is the value when unspecified, as written (e.g. "[0..1)"),
	// and HasValue tells whether it was written at all.
	Value     string
	HasValue  bool
	Semantics string
	Pos       Pos
}

// Transportation is a transportation type; Reliable is true for
// HLAreliable-like types.
type Transportation struct {
	Name      string
	Reliable  bool
	Semantics string
	Pos       Pos
}

// UpdateRate is a named maximum update rate in Hz.
type UpdateRate struct {
	Name      string
	Rate      float64
	Semantics string
	Pos       Pos
}

// SyncPoint is a synchronization point declared in the FOM.
type SyncPoint struct {
	Label      string
	DataType   string
	Capability string
	Semantics  string
	Pos        Pos
}

// TimeRepresentation names the data types of logical time and lookahead.
type TimeRepresentation struct {
	TimeStamp string
	Lookahead string
}

// Tags names the data types of the user-supplied tags, where declared.
type Tags struct {
	UpdateReflect         string
	SendReceive           string
	DeleteRemove          string
	DivestitureRequest    string
	DivestitureCompletion string
	AcquisitionRequest    string
	RequestUpdate         string
}

// Switches are the FOM's initial switch settings. A module that names no
// switches leaves the defaults; the first module that names one sets it.
type Switches struct {
	AutoProvide                  bool
	ConveyRegionDesignatorSets   bool
	ConveyProducingFederate      bool
	AttributeScopeAdvisory       bool
	AttributeRelevanceAdvisory   bool
	ObjectClassRelevanceAdvisory bool
	InteractionRelevanceAdvisory bool
	ServiceReporting             bool
	ExceptionReporting           bool
	DelaySubscriptionEvaluation  bool
	// AutomaticResignAction is one of the ResignAction names, e.g.
	// "CancelThenDeleteThenDivest" (the default).
	AutomaticResignAction string
}

// Note is an entry of the notes table.
type Note struct {
	Label     string
	Semantics string
	Pos       Pos
}

// DataTypeKind tells which table a data type comes from.
type DataTypeKind int

const (
	KindBasic DataTypeKind = iota + 1
	KindSimple
	KindEnumerated
	KindArray
	KindFixedRecord
	KindVariantRecord
)

func (k DataTypeKind) String() string {
	switch k {
	case KindBasic:
		return "basic"
	case KindSimple:
		return "simple"
	case KindEnumerated:
		return "enumerated"
	case KindArray:
		return "array"
	case KindFixedRecord:
		return "fixedRecord"
	case KindVariantRecord:
		return "variantRecord"
	}
	return "unknown"
}

// Endian is the byte order of a basic data representation.
type Endian int

const (
	BigEndian Endian = iota + 1
	LittleEndian
)

// DataType is one entry of the data type tables. Which fields are set
// depends on Kind:
//
//   - KindBasic: Size (bits), Endian, Interpretation, Encoding.
//   - KindSimple: Representation (a basic type), Units, Resolution, Accuracy.
//   - KindEnumerated: Representation (a basic type), Enumerators.
//   - KindArray: Element, Cardinality, Encoding ("HLAfixedArray",
//     "HLAvariableArray" or another name the FOM uses).
//   - KindFixedRecord: Fields, Encoding ("HLAfixedRecord" or another).
//   - KindVariantRecord: Discriminant (name), Representation (the
//     enumerated discriminant type), Alternatives, Encoding.
type DataType struct {
	Name string
	Kind DataTypeKind

	Size           int // basic: size in bits
	Endian         Endian
	Interpretation string
	Encoding       string

	Representation string
	Units          string
	Resolution     string
	Accuracy       string

	Enumerators []Enumerator

	Element     string
	Cardinality Cardinality

	Fields []Field

	Discriminant string
	Alternatives []Alternative

	Semantics string
	Module    string
	Pos       Pos
}

// Enumerator is one value of an enumerated type. A standard enumerator
// has one value; the OMT allows several.
type Enumerator struct {
	Name   string
	Values []int64
}

// Cardinality is an array's cardinality: one range per dimension, in the
// order written ("2,3" is two dimensions). A fixed size N is the range
// [N..N]; "Dynamic" is [0..-1] and sets Dynamic.
type Cardinality struct {
	Dynamic bool
	Ranges  []CardinalityRange
	Text    string // as written
}

// CardinalityRange bounds one array dimension, inclusive. Max < 0 means
// no upper bound ("Dynamic").
type CardinalityRange struct{ Min, Max int64 }

// Field is a fixed record field.
type Field struct {
	Name      string
	DataType  string
	Semantics string
}

// Alternative is a variant record alternative. DataType is empty when the
// alternative carries no data ("NA"). Enumerators lists the discriminant
// enumerator names it covers, with ranges expanded; Other is true for
// HLAother.
type Alternative struct {
	Name        string
	DataType    string
	Enumerators []string
	Other       bool
	Semantics   string
}
