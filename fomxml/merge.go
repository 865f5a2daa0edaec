package fomxml

import (
	"fmt"
	"slices"
	"strings"
)

// Merge merges modules into one FDD the way IEEE 1516-2010 §4.5 says,
// with the embedded standard MIM first. A module may name a parent class
// with no attributes (or parameters) only to place its own subclasses:
// that scaffolding matches any definition. Identical redefinitions are
// accepted; a class, data type, dimension, transportation, update rate or
// synchronization point defined differently in two modules is an
// ErrInconsistent error naming both. References (data types, dimensions,
// transportations) are then checked across the merged whole.
//
// The documents are not changed. The result does not depend on the order
// of docs, except for which module is named as a definition's source and
// which module's switch settings win (the first to set each switch; a
// later module that sets one differently gives a warning). The FDD's
// Warnings are the documents' followed by the merge's own; Merge accepts
// them, Options{Strict: true}.Merge refuses them.
func Merge(docs ...*Document) (*FDD, error) { return Options{}.Merge(docs...) }

// MergeWithMIM is Merge with a MIM of the caller's choice in place of the
// standard one (createFederationExecutionWithMIM).
func MergeWithMIM(mim *Document, docs ...*Document) (*FDD, error) {
	return Options{}.MergeWithMIM(mim, docs...)
}

// Load parses module files and merges them after the standard MIM.
func Load(paths ...string) (*FDD, error) { return Options{}.Load(paths...) }

func mergeAll(strict bool, mim *Document, docs []*Document) (*FDD, error) {
	m := newMerger()
	m.strict = strict
	for _, d := range append([]*Document{mim}, docs...) {
		if d == nil {
			continue
		}
		m.merge(d)
	}
	if err := m.errs.err(); err != nil {
		return nil, err
	}
	f := m.finish()
	if err := m.errs.err(); err != nil {
		return nil, err
	}
	f.warnings = append(m.docWarnings, m.warns.list...)
	return f, nil
}

func appendErr(l ErrorList, err error) ErrorList {
	switch e := err.(type) {
	case ErrorList:
		return append(l, e...)
	case *Error:
		return append(l, e)
	}
	return append(l, &Error{Msg: err.Error(), kind: ErrReading})
}

type merger struct {
	strict       bool
	errs         errs
	docWarnings  []Warning // the documents', in merge order
	warns        warns     // the merge's own
	fdd          *FDD
	objects      map[string]*ObjectClass
	interactions map[string]*InteractionClass
	dims         map[string]*Dimension
	trans        map[string]*Transportation
	rates        map[string]*UpdateRate
	syncs        map[string]*SyncPoint
	timePos      [2]Pos
	tagPos       map[string]Pos
	switchSet    map[string]bool
	switchPos    map[string]Pos
}

func newMerger() *merger {
	return &merger{
		fdd: &FDD{
			DataTypes: make(map[string]*DataType),
			Switches:  Switches{AutomaticResignAction: "CancelThenDeleteThenDivest"},
		},
		objects:      make(map[string]*ObjectClass),
		interactions: make(map[string]*InteractionClass),
		dims:         make(map[string]*Dimension),
		trans:        make(map[string]*Transportation),
		rates:        make(map[string]*UpdateRate),
		syncs:        make(map[string]*SyncPoint),
		tagPos:       make(map[string]Pos),
		switchSet:    make(map[string]bool),
		switchPos:    make(map[string]Pos),
	}
}

func (m *merger) merge(d *Document) {
	f := m.fdd
	f.Modules = append(f.Modules, d.Module)
	mod := d.Module.File
	for i, w := range d.warnings {
		if m.strict {
			m.errs.add(ErrReading, w.Pos, "%s", d.defects[i])
		} else {
			m.docWarnings = append(m.docWarnings, w)
		}
	}
	if d.objects != nil {
		m.mergeObject(d.objects, nil, mod)
	}
	if d.interactions != nil {
		m.mergeInteraction(d.interactions, nil, mod)
	}
	mergeTable(m, m.dims, d.dimensions, "dimension",
		func(x *Dimension) (string, Pos) { return x.Name, x.Pos },
		func(a, b *Dimension) bool {
			return a.DataType == b.DataType && a.UpperBound == b.UpperBound &&
				a.Normalization == b.Normalization && a.Value == b.Value && a.HasValue == b.HasValue
		})
	mergeTable(m, m.trans, d.transportations, "transportation",
		func(x *Transportation) (string, Pos) { return x.Name, x.Pos },
		func(a, b *Transportation) bool { return a.Reliable == b.Reliable })
	mergeTable(m, m.rates, d.updateRates, "update rate",
		func(x *UpdateRate) (string, Pos) { return x.Name, x.Pos },
		func(a, b *UpdateRate) bool { return a.Rate == b.Rate })
	mergeTable(m, m.syncs, d.syncPoints, "synchronization point",
		func(x *SyncPoint) (string, Pos) { return x.Label, x.Pos },
		func(a, b *SyncPoint) bool { return a.DataType == b.DataType && a.Capability == b.Capability })
	for _, x := range d.dataTypes {
		if old, ok := f.DataTypes[x.Name]; ok {
			if why := typeDiff(old, x); why != "" {
				m.errs.conflict(x.Pos, old.Pos, "data type %s is defined differently: %s", x.Name, why)
			}
			continue
		}
		f.DataTypes[x.Name] = cloneType(x)
	}
	m.mergeString(&f.Time.TimeStamp, d.time.TimeStamp, "time stamp data type", d.timePos, &m.timePos[0])
	m.mergeString(&f.Time.Lookahead, d.time.Lookahead, "lookahead data type", d.timePos, &m.timePos[1])
	tags := []struct {
		name     string
		dst, src *string
	}{
		{"updateReflectTag", &f.Tags.UpdateReflect, &d.tags.UpdateReflect},
		{"sendReceiveTag", &f.Tags.SendReceive, &d.tags.SendReceive},
		{"deleteRemoveTag", &f.Tags.DeleteRemove, &d.tags.DeleteRemove},
		{"divestitureRequestTag", &f.Tags.DivestitureRequest, &d.tags.DivestitureRequest},
		{"divestitureCompletionTag", &f.Tags.DivestitureCompletion, &d.tags.DivestitureCompletion},
		{"acquisitionRequestTag", &f.Tags.AcquisitionRequest, &d.tags.AcquisitionRequest},
		{"requestUpdateTag", &f.Tags.RequestUpdate, &d.tags.RequestUpdate},
	}
	for _, t := range tags {
		p := m.tagPos[t.name]
		m.mergeString(t.dst, *t.src, t.name+" data type", d.timePos, &p)
		m.tagPos[t.name] = p
	}
	m.mergeSwitches(d)
	f.Notes = append(f.Notes, d.notes...)
}

// mergeTable merges the entries of one module's table into the merged
// table: a new name is copied in; a name already there must be defined
// the same way (same), or it is a conflict naming both places.
func mergeTable[T any](m *merger, table map[string]*T, items []*T, what string, id func(*T) (string, Pos), same func(a, b *T) bool) {
	for _, x := range items {
		name, at := id(x)
		if old, ok := table[name]; ok {
			if !same(old, x) {
				_, oldAt := id(old)
				m.errs.conflict(at, oldAt, "%s %s is defined differently", what, name)
			}
			continue
		}
		c := *x
		table[name] = &c
	}
}

// mergeString merges a single-valued property: "NA" and "" say nothing;
// two different real values conflict.
func (m *merger) mergeString(dst *string, v, what string, at Pos, first *Pos) {
	if v == "" || v == "NA" {
		return
	}
	if *dst == "" {
		*dst, *first = v, at
		return
	}
	if *dst != v {
		m.errs.conflict(at, *first, "%s is %s, was %s", what, v, *dst)
	}
}

func (m *merger) mergeSwitches(d *Document) {
	sw := &m.fdd.Switches
	targets := map[string]*bool{
		"autoProvide":                  &sw.AutoProvide,
		"conveyRegionDesignatorSets":   &sw.ConveyRegionDesignatorSets,
		"conveyProducingFederate":      &sw.ConveyProducingFederate,
		"attributeScopeAdvisory":       &sw.AttributeScopeAdvisory,
		"attributeRelevanceAdvisory":   &sw.AttributeRelevanceAdvisory,
		"objectClassRelevanceAdvisory": &sw.ObjectClassRelevanceAdvisory,
		"interactionRelevanceAdvisory": &sw.InteractionRelevanceAdvisory,
		"serviceReporting":             &sw.ServiceReporting,
		"exceptionReporting":           &sw.ExceptionReporting,
		"delaySubscriptionEvaluation":  &sw.DelaySubscriptionEvaluation,
	}
	for _, n := range switchNames {
		v, ok := d.switches[n]
		if !ok {
			continue
		}
		b, _ := parseSwitch(v)
		if m.switchSet[n] {
			// The first setting stands; a different one is reported.
			same, was := v == sw.AutomaticResignAction, sw.AutomaticResignAction
			if n != "automaticResignAction" {
				same, was = b == *targets[n], fmt.Sprint(*targets[n])
			}
			if same {
				continue
			}
			first := m.switchPos[n]
			if m.strict {
				m.errs.conflict(d.swPos, first, "switch %s is %s, was %s", n, v, was)
				continue
			}
			m.warns.add(d.swPos, fmt.Sprintf("switch %s is %s, but %s set it to %s first", n, v, first.where(), was),
				"the first setting stands")
			continue
		}
		m.switchSet[n] = true
		m.switchPos[n] = d.swPos
		if n == "automaticResignAction" {
			sw.AutomaticResignAction = v
			continue
		}
		*targets[n] = b
	}
}

func (m *merger) mergeObject(def *classDef, parent *ObjectClass, mod string) {
	qn := parent.childName(def.name)
	c := classFor(m.objects, qn, parent.adopt, func() *ObjectClass {
		return &ObjectClass{
			Name: def.name, QualifiedName: qn, Parent: parent,
			Sharing: def.sharing, Semantics: def.semantics, Module: mod, Pos: def.pos,
		}
	})
	if len(def.attrs) > 0 {
		attrs := ownCopies(def.attrs, func(x *Attribute) {
			x.Class = c
			normalizeAttribute(x)
		}, func(x *Attribute) string { return x.Name })
		if !c.defined {
			c.defined = true
			c.Attributes = attrs
			c.Sharing, c.Semantics, c.Module, c.Pos = def.sharing, def.semantics, mod, def.pos
		} else if why := attributesDiff(c.Attributes, attrs); why != "" {
			m.errs.conflict(def.pos, c.Pos, "object class %s is defined differently: %s", qn, why)
		}
	}
	m.mergeDirected(c, def, mod)
	for _, ch := range def.children {
		m.mergeObject(ch, c, mod)
	}
}

func (m *merger) mergeInteraction(def *classDef, parent *InteractionClass, mod string) {
	qn := parent.childName(def.name)
	c := classFor(m.interactions, qn, parent.adopt, func() *InteractionClass {
		c := &InteractionClass{
			Name: def.name, QualifiedName: qn, Parent: parent,
			Module: mod, Pos: def.pos,
		}
		setInteractionProps(c, def)
		return c
	})
	if len(def.params) > 0 {
		params := ownCopies(def.params, func(x *Parameter) { x.Class = c },
			func(x *Parameter) string { return x.Name })
		if !c.defined {
			c.defined = true
			c.Parameters = params
			c.Module, c.Pos = mod, def.pos
			setInteractionProps(c, def)
		} else {
			why := parametersDiff(c.Parameters, params)
			if why == "" {
				probe := &InteractionClass{}
				setInteractionProps(probe, def)
				switch {
				case probe.Transportation != c.Transportation:
					why = fmt.Sprintf("transportation %s, was %s", probe.Transportation, c.Transportation)
				case probe.Order != c.Order:
					why = fmt.Sprintf("order %s, was %s", probe.Order, c.Order)
				case def.hasDimensions && !slices.Equal(probe.Dimensions, c.Dimensions):
					why = fmt.Sprintf("dimensions %v, was %v", probe.Dimensions, c.Dimensions)
				}
			}
			if why != "" {
				m.errs.conflict(def.pos, c.Pos, "interaction class %s is defined differently: %s", qn, why)
			}
		}
	}
	for _, ch := range def.children {
		m.mergeInteraction(ch, c, mod)
	}
}

func setInteractionProps(c *InteractionClass, def *classDef) {
	c.Sharing = def.sharing
	c.Semantics = def.semantics
	c.Transportation = def.transportation
	if c.Transportation == "" || c.Transportation == "NA" {
		c.Transportation = "HLAreliable"
	}
	c.Order = canonicalOrder(def.order)
	c.Dimensions = sortedCopy(def.dimensions)
}

func normalizeAttribute(a *Attribute) {
	if a.Transportation == "" || a.Transportation == "NA" {
		a.Transportation = "HLAreliable"
	}
	a.Order = canonicalOrder(string(a.Order))
	a.Dimensions = sortedCopy(a.Dimensions)
}

// canonicalOrder maps the spellings in use to the two orders; anything
// else is kept as written so that validation can name it.
func canonicalOrder(s string) Order {
	switch strings.ToLower(s) {
	case "", "na", "receive":
		return OrderReceive
	case "timestamp":
		return OrderTimeStamp
	}
	return Order(s)
}

func sortedCopy(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	c := slices.Clone(s)
	slices.Sort(c)
	return slices.Compact(c)
}

func attributesDiff(a, b []*Attribute) string {
	if names(a) != names(b) {
		return fmt.Sprintf("attributes [%s], were [%s]", names(b), names(a))
	}
	for i := range a {
		x, y := a[i], b[i]
		switch {
		case x.DataType != y.DataType:
			return fmt.Sprintf("attribute %s has data type %s, was %s", x.Name, y.DataType, x.DataType)
		case x.Transportation != y.Transportation:
			return fmt.Sprintf("attribute %s has transportation %s, was %s", x.Name, y.Transportation, x.Transportation)
		case x.Order != y.Order:
			return fmt.Sprintf("attribute %s has order %s, was %s", x.Name, y.Order, x.Order)
		case !slices.Equal(x.Dimensions, y.Dimensions):
			return fmt.Sprintf("attribute %s has dimensions %v, was %v", x.Name, y.Dimensions, x.Dimensions)
		case !strings.EqualFold(x.UpdateType, y.UpdateType):
			return fmt.Sprintf("attribute %s has update type %s, was %s", x.Name, y.UpdateType, x.UpdateType)
		case !strings.EqualFold(x.Ownership, y.Ownership):
			return fmt.Sprintf("attribute %s has ownership %s, was %s", x.Name, y.Ownership, x.Ownership)
		case !strings.EqualFold(x.Sharing, y.Sharing):
			return fmt.Sprintf("attribute %s has sharing %s, was %s", x.Name, y.Sharing, x.Sharing)
		}
	}
	return ""
}

func parametersDiff(a, b []*Parameter) string {
	na, nb := make([]string, len(a)), make([]string, len(b))
	for i, p := range a {
		na[i] = p.Name
	}
	for i, p := range b {
		nb[i] = p.Name
	}
	if !slices.Equal(na, nb) {
		return fmt.Sprintf("parameters [%s], were [%s]", strings.Join(nb, " "), strings.Join(na, " "))
	}
	for i := range a {
		if a[i].DataType != b[i].DataType {
			return fmt.Sprintf("parameter %s has data type %s, was %s", a[i].Name, b[i].DataType, a[i].DataType)
		}
	}
	return ""
}

func names(as []*Attribute) string {
	n := make([]string, len(as))
	for i, a := range as {
		n[i] = a.Name
	}
	return strings.Join(n, " ")
}

func cloneType(t *DataType) *DataType {
	c := *t
	c.Enumerators = slices.Clone(t.Enumerators)
	c.Fields = slices.Clone(t.Fields)
	c.Alternatives = slices.Clone(t.Alternatives)
	c.Cardinality.Ranges = slices.Clone(t.Cardinality.Ranges)
	return &c
}

// typeDiff compares the structure of two definitions of one data type and
// says how they differ, or "" when they are the same. Prose (semantics,
// interpretation, units) does not count.
func typeDiff(a, b *DataType) string {
	if a.Kind != b.Kind {
		return fmt.Sprintf("%s, was %s", b.Kind, a.Kind)
	}
	switch a.Kind {
	case KindBasic:
		if a.Size != b.Size {
			return fmt.Sprintf("size %d, was %d", b.Size, a.Size)
		}
		if a.Endian != b.Endian {
			return "other endianness"
		}
	case KindSimple:
		if a.Representation != b.Representation {
			return fmt.Sprintf("representation %s, was %s", b.Representation, a.Representation)
		}
	case KindEnumerated:
		if a.Representation != b.Representation {
			return fmt.Sprintf("representation %s, was %s", b.Representation, a.Representation)
		}
		return listDiff(a.Enumerators, b.Enumerators, "enumerator",
			func(x, y Enumerator) bool { return x.Name != y.Name || !slices.Equal(x.Values, y.Values) },
			func(x Enumerator) string { return fmt.Sprintf("%s=%v", x.Name, x.Values) })
	case KindArray:
		switch {
		case a.Element != b.Element:
			return fmt.Sprintf("element type %s, was %s", b.Element, a.Element)
		case !slices.Equal(a.Cardinality.Ranges, b.Cardinality.Ranges):
			return fmt.Sprintf("cardinality %s, was %s", b.Cardinality.Text, a.Cardinality.Text)
		case a.Encoding != b.Encoding:
			return fmt.Sprintf("encoding %s, was %s", b.Encoding, a.Encoding)
		}
	case KindFixedRecord:
		if a.Encoding != b.Encoding {
			return fmt.Sprintf("encoding %s, was %s", b.Encoding, a.Encoding)
		}
		return listDiff(a.Fields, b.Fields, "field",
			func(x, y Field) bool { return x.Name != y.Name || x.DataType != y.DataType },
			func(x Field) string { return x.Name + " " + x.DataType })
	case KindVariantRecord:
		switch {
		case a.Discriminant != b.Discriminant:
			return fmt.Sprintf("discriminant %s, was %s", b.Discriminant, a.Discriminant)
		case a.Representation != b.Representation:
			return fmt.Sprintf("discriminant type %s, was %s", b.Representation, a.Representation)
		case a.Encoding != b.Encoding:
			return fmt.Sprintf("encoding %s, was %s", b.Encoding, a.Encoding)
		}
		return listDiff(a.Alternatives, b.Alternatives, "alternative",
			func(x, y Alternative) bool {
				return x.Name != y.Name || x.DataType != y.DataType || !slices.Equal(x.Enumerators, y.Enumerators)
			},
			func(x Alternative) string { return x.Name })
	}
	return ""
}

// listDiff compares two lists of a type's parts (noun names one):
// "N nouns, was M" when their lengths differ, else "noun I is B, was A"
// for the first that differ (show says what a part is), else "".
func listDiff[E any](a, b []E, noun string, differ func(x, y E) bool, show func(E) string) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d %ss, was %d", len(b), noun, len(a))
	}
	for i := range a {
		if differ(a[i], b[i]) {
			return fmt.Sprintf("%s %d is %s, was %s", noun, i+1, show(b[i]), show(a[i]))
		}
	}
	return ""
}
