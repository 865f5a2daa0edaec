package fomxml

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Document is one parsed FOM module, before merging. It is checked on its
// own (names present, numbers numeric); references to data types,
// dimensions and transportations are checked by Merge, since they may be
// defined in another module.
type Document struct {
	Module Module

	file     string // as given to Parse
	source   []byte // the bytes parsed
	warnings []Warning
	defects  []string // each warning's defect alone, for a strict Merge

	objects      *classDef // HLAobjectRoot tree, nil if the module has none
	interactions *classDef // HLAinteractionRoot tree

	dimensions      []*Dimension
	transportations []*Transportation
	updateRates     []*UpdateRate
	syncPoints      []*SyncPoint
	dataTypes       []*DataType
	notes           []*Note

	time     TimeRepresentation
	timePos  Pos
	tags     Tags
	switches map[string]string // switch name -> value, as written
	swPos    Pos
}

// classDef is an object or interaction class as one module writes it.
type classDef struct {
	name           string
	sharing        string
	semantics      string
	dimensions     []string // interactions only
	hasDimensions  bool
	transportation string // interactions only
	order          string // interactions only
	attrs          []*Attribute
	directed       []*DirectedInteraction // objects only
	params         []*Parameter
	children       []*classDef
	pos            Pos
}

const (
	format2010 = "1516-2010"
	format2000 = "1516-2000"
)

// ParseFile reads and parses one module file, leniently: see Options.
func ParseFile(path string) (*Document, error) { return Options{}.ParseFile(path) }

// ParseBytes parses a module held in memory; file names it in errors.
func ParseBytes(file string, data []byte) (*Document, error) {
	return Options{}.ParseBytes(file, data)
}

// Parse reads one module in either OMT edition (1516-2010 with properties
// as child elements, 1516-2000 with properties as XML attributes). file
// names the module in errors and positions. At most MaxModuleBytes are
// read. Defects that leave the module unambiguous are accepted and
// reported by Document.Warnings; Options{Strict: true}.Parse refuses
// them.
func Parse(file string, r io.Reader) (*Document, error) { return Options{}.Parse(file, r) }

func parse(file string, r io.Reader, strict bool) (*Document, error) {
	root, data, err := parseTree(file, r)
	if err != nil {
		return nil, err
	}
	if root.name != "objectModel" {
		return nil, &Error{File: file, Line: root.line, Msg: "root element is <" + root.name + ">, want <objectModel>", kind: ErrReading}
	}
	p := &parser{file: file, strict: strict}
	doc := p.document(root)
	if err := p.errs.err(); err != nil {
		return nil, err
	}
	doc.file, doc.source = file, data
	doc.warnings, doc.defects = p.warns.list, p.warns.defects
	return doc, nil
}

// Source returns the name the module was parsed under and the bytes it
// was parsed from, so that it can be handed to another process (a
// federation carries its modules to every joining federate).
func (d *Document) Source() (file string, data []byte) { return d.file, d.source }

type parser struct {
	file   string
	strict bool
	errs   errs
	warns  warns
}

func (p *parser) pos(e *element) Pos { return Pos{File: p.file, Line: e.line} }

func (p *parser) fail(e *element, format string, args ...any) {
	p.errs.add(ErrReading, p.pos(e), format, args...)
}

// lenient reports a defect the parser accepts: a warning "defect;
// outcome", or under Strict the error "defect".
func (p *parser) lenient(e *element, defect, outcome string) {
	if p.strict {
		p.errs.add(ErrReading, p.pos(e), "%s", defect)
		return
	}
	p.warns.add(p.pos(e), defect, outcome)
}

// need reads a required property and reports it when missing or empty.
func (p *parser) need(e *element, what, prop string) string {
	v, ok := e.prop(prop)
	switch {
	case !ok:
		p.fail(e, "%s has no <%s>", what, prop)
	case v == "":
		p.fail(e, "%s has an empty <%s>", what, prop)
	}
	return v
}

// name reads the required name of a table entry.
func (p *parser) name(e *element, what string) string {
	return p.need(e, what, "name")
}

func (p *parser) document(root *element) *Document {
	d := &Document{}
	d.Module.File = p.file
	d.Module.Format = detectFormat(root)
	if mi := root.child("modelIdentification"); mi != nil {
		d.Module.Name = mi.str("name")
		d.Module.Type = mi.str("type")
		d.Module.Version = mi.str("version")
	} else {
		d.Module.Name = root.str("name")
		d.Module.Type = root.str("type")
		d.Module.Version = root.str("version")
	}

	d.objects = p.rootClass(root.child("objects"), true)
	d.interactions = p.rootClass(root.child("interactions"), false)
	if dims := root.child("dimensions"); dims != nil {
		for _, e := range dims.all("dimension") {
			d.dimensions = append(d.dimensions, p.dimension(e))
		}
	}
	if t := root.child("time"); t != nil {
		d.timePos = p.pos(t)
		if ts := t.child("timeStamp"); ts != nil {
			d.time.TimeStamp = ts.str("dataType")
		}
		if la := t.child("lookahead"); la != nil {
			d.time.Lookahead = la.str("dataType")
		}
	}
	if tags := root.child("tags"); tags != nil {
		get := func(n string) string {
			if c := tags.child(n); c != nil {
				return c.str("dataType")
			}
			return ""
		}
		d.tags = Tags{
			UpdateReflect:         get("updateReflectTag"),
			SendReceive:           get("sendReceiveTag"),
			DeleteRemove:          get("deleteRemoveTag"),
			DivestitureRequest:    get("divestitureRequestTag"),
			DivestitureCompletion: get("divestitureCompletionTag"),
			AcquisitionRequest:    get("acquisitionRequestTag"),
			RequestUpdate:         get("requestUpdateTag"),
		}
	}
	if syncs := root.child("synchronizations"); syncs != nil {
		for _, e := range syncs.children {
			if e.name != "synchronizationPoint" && e.name != "synchronization" {
				continue
			}
			d.syncPoints = append(d.syncPoints, &SyncPoint{
				Label:      p.need(e, "synchronization point", "label"),
				DataType:   e.str("dataType"),
				Capability: e.str("capability"),
				Semantics:  e.str("semantics"),
				Pos:        p.pos(e),
			})
		}
	}
	if trs := root.child("transportations"); trs != nil {
		for _, e := range trs.all("transportation") {
			d.transportations = append(d.transportations, p.transportation(e))
		}
	}
	if sw := root.child("switches"); sw != nil {
		d.switches = p.switches(sw)
		d.swPos = p.pos(sw)
	}
	if urs := root.child("updateRates"); urs != nil {
		for _, e := range urs.all("updateRate") {
			u := &UpdateRate{Name: p.name(e, "update rate"), Semantics: e.str("semantics"), Pos: p.pos(e)}
			rate := p.need(e, "update rate "+u.Name, "rate")
			if rate != "" {
				f, err := strconv.ParseFloat(rate, 64)
				if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
					p.fail(e, "update rate %s: rate %q is not a non-negative number", u.Name, rate)
				}
				u.Rate = f
			}
			d.updateRates = append(d.updateRates, u)
		}
	}
	if dts := root.child("dataTypes"); dts != nil {
		p.dataTypes(d, dts)
	}
	if notes := root.child("notes"); notes != nil {
		for _, e := range notes.all("note") {
			label := e.str("label")
			if label == "" {
				label = e.str("name")
			}
			d.notes = append(d.notes, &Note{Label: label, Semantics: e.str("semantics"), Pos: p.pos(e)})
		}
	}
	return d
}

// detectFormat tells the OMT editions apart: 1516-2010 modules carry its
// namespace and write properties as child elements; 1516-2000 modules
// write them as XML attributes on the element.
func detectFormat(root *element) string {
	if _, ok := root.attrs["DTDversion"]; ok {
		return format2000
	}
	if _, ok := root.attrs["name"]; ok {
		return format2000
	}
	if objs := root.child("objects"); objs != nil {
		if oc := objs.child("objectClass"); oc != nil {
			if _, ok := oc.attrs["name"]; ok {
				return format2000
			}
		}
	}
	return format2010
}

// rootClass parses the class tree in list (<objects> when object, else
// <interactions>; nil when absent): one root class, named HLAobjectRoot
// or HLAinteractionRoot.
func (p *parser) rootClass(list *element, object bool) *classDef {
	if list == nil {
		return nil
	}
	tag, kind, want := "interactionClass", "interaction", "HLAinteractionRoot"
	if object {
		tag, kind, want = "objectClass", "object", "HLAobjectRoot"
	}
	roots := list.all(tag)
	if len(roots) > 1 {
		p.fail(roots[1], "more than one root %s class", kind)
	}
	if len(roots) == 0 {
		return nil
	}
	c := p.class(roots[0], object)
	if c != nil && c.name != want {
		p.fail(roots[0], "root %s class is %q, want %s", kind, c.name, want)
	}
	return c
}

func (p *parser) class(e *element, object bool) *classDef {
	what := "interaction class"
	if object {
		what = "object class"
	}
	c := &classDef{
		name:      p.name(e, what),
		sharing:   e.str("sharing"),
		semantics: e.str("semantics"),
		pos:       p.pos(e),
	}
	if strings.Contains(c.name, ".") {
		p.fail(e, "%s name %q contains a dot", what, c.name)
	}
	if object {
		for _, a := range e.all("attribute") {
			c.attrs = append(c.attrs, p.attribute(a, c.name))
		}
		// HLA 4: <directedInteraction><name>I</name><sharing>S</sharing>
		// </directedInteraction>; the name is resolved by Merge, since
		// the interaction class may come from another module.
		for _, di := range e.all("directedInteraction") {
			c.directed = append(c.directed, &DirectedInteraction{
				Name:    p.name(di, "directed interaction of "+c.name),
				Sharing: di.str("sharing"),
				Module:  p.file,
				Pos:     p.pos(di),
			})
		}
	} else {
		c.transportation = e.str("transportation")
		c.order = e.str("order")
		c.dimensions, c.hasDimensions = p.dimensionList(e)
		for _, a := range e.all("parameter") {
			c.params = append(c.params, &Parameter{
				Name:      p.name(a, "parameter of "+c.name),
				DataType:  a.str("dataType"),
				Semantics: a.str("semantics"),
				Pos:       p.pos(a),
			})
		}
	}
	sub := "interactionClass"
	if object {
		sub = "objectClass"
	}
	for _, ch := range e.all(sub) {
		c.children = append(c.children, p.class(ch, object))
	}
	return c
}

// dimensionList reads the dimensions of an attribute or interaction:
// <dimensions><dimension>X</dimension>...</dimensions> in 1516-2010, a
// list in the dimensions="X Y" attribute in 1516-2000. "NA" means none.
func (p *parser) dimensionList(e *element) ([]string, bool) {
	if ds := e.child("dimensions"); ds != nil {
		var out []string
		for _, d := range ds.all("dimension") {
			if d.text == "" {
				p.fail(d, "empty dimension name")
				continue
			}
			if d.text != "NA" {
				out = append(out, d.text)
			}
		}
		return out, true
	}
	if v, ok := e.attrs["dimensions"]; ok {
		var out []string
		for _, f := range splitList(v) {
			if f != "NA" {
				out = append(out, f)
			}
		}
		return out, true
	}
	return nil, false
}

// splitList splits a 1516-2000 list attribute on commas and white space.
func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r'
	})
}

func (p *parser) attribute(e *element, class string) *Attribute {
	a := &Attribute{
		Name:            p.name(e, "attribute of "+class),
		DataType:        e.str("dataType"),
		UpdateType:      e.str("updateType"),
		UpdateCondition: e.str("updateCondition"),
		Ownership:       e.str("ownership"),
		Sharing:         e.str("sharing"),
		Transportation:  e.str("transportation"),
		Order:           Order(e.str("order")),
		Semantics:       e.str("semantics"),
		Pos:             p.pos(e),
	}
	a.Dimensions, _ = p.dimensionList(e)
	return a
}

func (p *parser) dimension(e *element) *Dimension {
	d := &Dimension{
		Name:          p.name(e, "dimension"),
		DataType:      e.str("dataType"),
		Normalization: e.str("normalization"),
		Semantics:     e.str("semantics"),
		Pos:           p.pos(e),
	}
	d.Value, d.HasValue = e.prop("value")
	if ub, ok := e.prop("upperBound"); ok && ub != "" && ub != "NA" {
		n, err := strconv.ParseUint(ub, 10, 64)
		if err != nil || n == 0 {
			p.fail(e, "dimension %s: upper bound %q is not a positive integer", d.Name, ub)
		}
		d.UpperBound = n
	}
	return d
}

func (p *parser) transportation(e *element) *Transportation {
	t := &Transportation{Name: p.name(e, "transportation"), Semantics: e.str("semantics"), Pos: p.pos(e)}
	switch r := strings.ToLower(e.str("reliable")); r {
	case "yes", "true":
		t.Reliable = true
	case "no", "false":
	case "":
		// 1516-2000 has no reliable column; the name tells the two
		// standard ones apart and anything else counts as reliable.
		t.Reliable = t.Name != "HLAbestEffort"
	default:
		p.fail(e, "transportation %s: reliable is %q, want Yes or No", t.Name, r)
	}
	return t
}

// switchNames are the switches of the 1516-2010 table.
var switchNames = []string{
	"autoProvide", "conveyRegionDesignatorSets", "conveyProducingFederate",
	"attributeScopeAdvisory", "attributeRelevanceAdvisory",
	"objectClassRelevanceAdvisory", "interactionRelevanceAdvisory",
	"serviceReporting", "exceptionReporting", "delaySubscriptionEvaluation",
	"automaticResignAction",
}

func (p *parser) switches(e *element) map[string]string {
	out := make(map[string]string)
	for _, n := range switchNames {
		if c := e.child(n); c != nil {
			// 1516-2010: <autoProvide isEnabled="true"/>,
			// <automaticResignAction resignAction="..."/>.
			if n == "automaticResignAction" {
				out[n] = strings.TrimSpace(c.attrs["resignAction"])
			} else {
				out[n] = strings.TrimSpace(c.attrs["isEnabled"])
			}
			continue
		}
		if v, ok := e.attrs[n]; ok {
			// 1516-2000: attributes with Enabled/Disabled or Yes/No.
			out[n] = strings.TrimSpace(v)
		}
	}
	for n, v := range out {
		if n == "automaticResignAction" {
			if !validResignAction(v) {
				p.fail(e, "switch automaticResignAction: unknown resign action %q", v)
			}
			continue
		}
		if _, ok := parseSwitch(v); !ok {
			p.fail(e, "switch %s: value %q is not true/false, Enabled/Disabled or Yes/No", n, v)
		}
	}
	return out
}

func parseSwitch(v string) (bool, bool) {
	switch strings.ToLower(v) {
	case "true", "enabled", "yes":
		return true, true
	case "false", "disabled", "no":
		return false, true
	}
	return false, false
}

// resignActions are the names the standard gives the resign actions, in
// the order of the 1516e ResignAction enumeration.
var resignActions = []string{
	"UnconditionallyDivestAttributes", "DeleteObjects", "CancelPendingOwnershipAcquisitions",
	"DeleteObjectsThenDivest", "CancelThenDeleteThenDivest", "NoAction",
}

// ResignActionNames returns the names of the resign actions a FOM's
// automaticResignAction switch may hold, in the order of the 1516e
// ResignAction enumeration (UnconditionallyDivestAttributes first).
func ResignActionNames() []string { return slices.Clone(resignActions) }

func validResignAction(v string) bool {
	for _, a := range resignActions {
		if a == v {
			return true
		}
	}
	return false
}

func (p *parser) dataTypes(d *Document, e *element) {
	add := func(t *DataType) {
		t.Module = p.file
		d.dataTypes = append(d.dataTypes, t)
	}
	if g := e.child("basicDataRepresentations"); g != nil {
		for _, x := range g.all("basicData") {
			add(p.basic(x))
		}
	}
	if g := e.child("simpleDataTypes"); g != nil {
		for _, x := range g.all("simpleData") {
			t := &DataType{
				Name: p.name(x, "simple data type"), Kind: KindSimple, Pos: p.pos(x),
				Units: x.str("units"), Resolution: x.str("resolution"), Accuracy: x.str("accuracy"),
				Semantics: x.str("semantics"),
			}
			t.Representation = p.need(x, "simple data type "+t.Name, "representation")
			add(t)
		}
	}
	if g := e.child("enumeratedDataTypes"); g != nil {
		for _, x := range g.all("enumeratedData") {
			add(p.enumerated(x))
		}
	}
	if g := e.child("arrayDataTypes"); g != nil {
		for _, x := range g.all("arrayData") {
			t := &DataType{Name: p.name(x, "array data type"), Kind: KindArray, Pos: p.pos(x), Semantics: x.str("semantics")}
			t.Element = p.need(x, "array data type "+t.Name, "dataType")
			t.Encoding = p.need(x, "array data type "+t.Name, "encoding")
			if c := p.need(x, "array data type "+t.Name, "cardinality"); c != "" {
				card, err := ParseCardinality(c)
				if err != nil {
					p.fail(x, "array data type %s: %v", t.Name, err)
				}
				t.Cardinality = card
			}
			add(t)
		}
	}
	if g := e.child("fixedRecordDataTypes"); g != nil {
		for _, x := range g.all("fixedRecordData") {
			t := &DataType{Name: p.name(x, "fixed record data type"), Kind: KindFixedRecord, Pos: p.pos(x), Semantics: x.str("semantics")}
			t.Encoding = x.str("encoding")
			if t.Encoding == "" {
				t.Encoding = "HLAfixedRecord"
			}
			for _, f := range x.all("field") {
				fl := Field{Name: p.name(f, "field of "+t.Name), Semantics: f.str("semantics")}
				fl.DataType = p.need(f, "field "+t.Name+"."+fl.Name, "dataType")
				t.Fields = append(t.Fields, fl)
			}
			add(t)
		}
	}
	if g := e.child("variantRecordDataTypes"); g != nil {
		for _, x := range g.all("variantRecordData") {
			add(p.variant(x))
		}
	}
}

func (p *parser) basic(x *element) *DataType {
	t := &DataType{
		Name: p.name(x, "basic data representation"), Kind: KindBasic, Pos: p.pos(x),
		Interpretation: x.str("interpretation"), Encoding: x.str("encoding"),
		Semantics: x.str("semantics"),
	}
	what := "basic data representation " + t.Name
	if s := p.need(x, what, "size"); s != "" {
		n, err := strconv.Atoi(s)
		switch {
		case err != nil:
			p.fail(x, "%s: size %q is not a number", what, s)
		case n <= 0 || n > 1<<16:
			p.fail(x, "%s: size %d is out of range (1..65536 bits)", what, n)
		default:
			t.Size = n
		}
	}
	switch en := strings.ToLower(p.need(x, what, "endian")); en {
	case "big":
		t.Endian = BigEndian
	case "little":
		t.Endian = LittleEndian
	case "":
	default:
		p.fail(x, "%s: endian %q, want Big or Little", what, en)
	}
	return t
}

func (p *parser) enumerated(x *element) *DataType {
	t := &DataType{Name: p.name(x, "enumerated data type"), Kind: KindEnumerated, Pos: p.pos(x), Semantics: x.str("semantics")}
	what := "enumerated data type " + t.Name
	t.Representation = p.need(x, what, "representation")
	ens := x.all("enumerator")
	if len(ens) == 0 {
		p.fail(x, "%s has no enumerators", what)
	}
	index := make(map[string]int)   // enumerator name -> its place in t.Enumerators
	owner := make(map[int64]string) // value -> the first enumerator written with it
	// next is the value an enumerator without one takes: one more than
	// the previous enumerator's last value, 0 for the first. nextOK is
	// false after an enumerator whose value could not be read (an error
	// already) or is the largest there is.
	next, nextOK := int64(0), true
	for i, en := range ens {
		name := p.name(en, "enumerator of "+t.Name)
		full := t.Name + "." + name
		vals, bad, missing := p.enumValues(en, full)
		switch {
		case bad:
		case missing != "" && !nextOK:
			// Nothing to count on from: the previous value is unreadable
			// (already an error) or has no successor.
			if next == math.MaxInt64 {
				p.fail(en, "enumerator %s has %s, and the previous value %d has no successor", full, missing, next)
			}
			bad = true
		case missing != "":
			vals = []int64{next}
			from := "one more than the previous enumerator's"
			if i == 0 {
				from = "as the first enumerator"
			}
			p.lenient(en, "enumerator "+full+" has "+missing, fmt.Sprintf("it takes the value %d, %s", next, from))
		}
		nextOK = !bad && len(vals) > 0
		if nextOK {
			if last := vals[len(vals)-1]; last == math.MaxInt64 {
				next, nextOK = last, false
			} else {
				next = last + 1
			}
		} else {
			next = 0
		}
		if name == "" {
			continue // already an error
		}
		// A value written for an earlier enumerator decodes as that one.
		// It stays with it, except as the first value of a new
		// enumerator, which is what that one encodes as.
		_, repeat := index[name]
		var kept []int64
		for k, v := range vals {
			o, owned := owner[v]
			switch {
			case !owned:
				owner[v] = name
				kept = append(kept, v)
			case o == name:
				// Written twice for one enumerator: nothing new.
			default:
				p.lenient(en, fmt.Sprintf("enumerators %s and %s of %s share the value %d", o, name, t.Name, v),
					fmt.Sprintf("%d decodes as %s, the first written with it", v, o))
				if k == 0 && !repeat {
					kept = append(kept, v)
				}
			}
		}
		if j, dup := index[name]; dup {
			e := &t.Enumerators[j]
			e.Values = append(e.Values, kept...)
			p.lenient(en, "enumerator "+full+" appears twice",
				fmt.Sprintf("the repeat adds its values to the first: %s has the values %v and encodes as %d", name, e.Values, e.Values[0]))
			continue
		}
		index[name] = len(t.Enumerators)
		t.Enumerators = append(t.Enumerators, Enumerator{Name: name, Values: kept})
	}
	return t
}

// enumValues reads an enumerator's values: one or more <value> children
// in 1516-2010, a comma-separated values attribute in 1516-2000. bad is
// true when one was reported as an error; missing describes the defect
// when the enumerator has no value at all ("no <value>", "an empty
// <value>"). Empty items among real values are dropped with a warning.
func (p *parser) enumValues(en *element, full string) (vals []int64, bad bool, missing string) {
	var raw []string
	present := true
	if vs := en.all("value"); len(vs) > 0 {
		for _, v := range vs {
			raw = append(raw, v.text)
		}
	} else if v, ok := en.attrs["values"]; ok {
		raw = strings.Split(v, ",")
	} else if v, ok := en.attrs["value"]; ok {
		raw = []string{v}
	} else {
		present = false
	}
	empty := 0
	for _, r := range raw {
		r = strings.TrimSpace(r)
		if r == "" {
			empty++
			continue
		}
		v, err := parseEnumValue(r)
		if err != nil {
			p.fail(en, "enumerator %s: value %q is not an integer", full, r)
			bad = true
			continue
		}
		vals = append(vals, v)
	}
	switch {
	case !present:
		return nil, bad, "no <value>"
	case len(vals) == 0 && !bad:
		return nil, false, "an empty <value>"
	case empty > 0:
		p.lenient(en, "enumerator "+full+" has an empty <value> besides others", "the empty one is ignored")
	}
	return vals, bad, ""
}

// parseEnumValue reads an enumerator value: a decimal integer (leading
// zeros do not make it octal, as they do not for other RTIs), or
// hexadecimal with a 0x prefix.
func parseEnumValue(s string) (int64, error) {
	digits := strings.TrimLeft(s, "+-")
	if len(s)-len(digits) > 1 {
		return 0, strconv.ErrSyntax
	}
	if len(digits) > 2 && (digits[:2] == "0x" || digits[:2] == "0X") {
		return strconv.ParseInt(s[:len(s)-len(digits)]+digits[2:], 16, 64)
	}
	return strconv.ParseInt(s, 10, 64)
}

func (p *parser) variant(x *element) *DataType {
	t := &DataType{Name: p.name(x, "variant record data type"), Kind: KindVariantRecord, Pos: p.pos(x), Semantics: x.str("semantics")}
	what := "variant record data type " + t.Name
	t.Discriminant = p.need(x, what, "discriminant")
	t.Representation = p.need(x, what, "dataType")
	t.Encoding = x.str("encoding")
	if t.Encoding == "" {
		t.Encoding = "HLAvariantRecord"
	}
	for _, a := range x.all("alternative") {
		alt := Alternative{Name: p.name(a, "alternative of "+t.Name), Semantics: a.str("semantics")}
		aw := "alternative " + t.Name + "." + alt.Name
		// "NA" is the OMT's way to say the alternative carries no data;
		// leaving the data type out, or empty, says the same less
		// properly.
		dt, ok := a.prop("dataType")
		switch {
		case !ok:
			p.lenient(a, aw+" has no <dataType>", "it carries no data, as with NA")
		case dt == "":
			p.lenient(a, aw+" has an empty <dataType>", "it carries no data, as with NA")
		case dt != "NA":
			alt.DataType = dt
		}
		// Enumerator names are kept as written ("[A .. C], D"); Merge
		// expands ranges once the discriminant type is known.
		if en := p.need(a, aw, "enumerator"); en != "" {
			alt.Enumerators = []string{en}
		}
		t.Alternatives = append(t.Alternatives, alt)
	}
	return t
}

// ParseCardinality reads an array cardinality: "Dynamic", "N", "[a..b]",
// or a comma-separated list of those for a multidimensional array.
func ParseCardinality(s string) (Cardinality, error) {
	c := Cardinality{Text: s}
	parts := splitOutsideBrackets(s)
	if len(parts) == 0 {
		return c, errorf("empty cardinality")
	}
	for _, part := range parts {
		part = strings.TrimSpace(part)
		switch {
		case strings.EqualFold(part, "Dynamic"):
			c.Ranges = append(c.Ranges, CardinalityRange{Min: 0, Max: -1})
			if len(parts) == 1 {
				c.Dynamic = true
			}
		case strings.HasPrefix(part, "[") || strings.HasPrefix(part, "("):
			// "[a..b]" is the standard's form; some FOMs write "(a..b)".
			if !strings.HasSuffix(part, "]") && !strings.HasSuffix(part, ")") {
				return c, errorf("cardinality %q: unclosed range", s)
			}
			lo, hi, ok := strings.Cut(part[1:len(part)-1], "..")
			if !ok {
				return c, errorf("cardinality %q: range without ..", s)
			}
			a, err1 := strconv.ParseInt(strings.TrimSpace(lo), 10, 64)
			b, err2 := strconv.ParseInt(strings.TrimSpace(hi), 10, 64)
			if err1 != nil || err2 != nil || a < 0 || b < a {
				return c, errorf("cardinality %q: bad range", s)
			}
			c.Ranges = append(c.Ranges, CardinalityRange{Min: a, Max: b})
		default:
			n, err := strconv.ParseInt(part, 10, 64)
			if err != nil {
				return c, errorf("cardinality %q is not a number, a range or Dynamic", s)
			}
			if n < 0 {
				return c, errorf("cardinality %q is negative", s)
			}
			c.Ranges = append(c.Ranges, CardinalityRange{Min: n, Max: n})
		}
	}
	return c, nil
}

func splitOutsideBrackets(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[', '(':
			depth++
		case ']', ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	if strings.TrimSpace(s[start:]) != "" || len(out) > 0 {
		out = append(out, s[start:])
	}
	return out
}
