package fomxml

import (
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"sort"
	"strings"
)

// finish turns the merged tables into the final FDD: it checks every
// reference across modules, assigns handles, and builds the indexes.
func (m *merger) finish() *FDD {
	f := m.fdd
	f.ObjectRoot = m.objects["HLAobjectRoot"]
	f.InteractionRoot = m.interactions["HLAinteractionRoot"]
	if f.ObjectRoot == nil {
		m.errs.add(ErrReading, Pos{File: firstFile(f)}, "no module defines HLAobjectRoot")
	}
	if f.InteractionRoot == nil {
		m.errs.add(ErrReading, Pos{File: firstFile(f)}, "no module defines HLAinteractionRoot")
	}

	for _, c := range m.objects {
		f.ObjectClasses = append(f.ObjectClasses, c)
	}
	sort.Slice(f.ObjectClasses, func(i, j int) bool {
		return f.ObjectClasses[i].QualifiedName < f.ObjectClasses[j].QualifiedName
	})
	for _, c := range m.interactions {
		f.InteractionClasses = append(f.InteractionClasses, c)
	}
	sort.Slice(f.InteractionClasses, func(i, j int) bool {
		return f.InteractionClasses[i].QualifiedName < f.InteractionClasses[j].QualifiedName
	})
	for _, c := range f.ObjectClasses {
		sort.Slice(c.Children, func(i, j int) bool { return c.Children[i].Name < c.Children[j].Name })
	}
	for _, c := range f.InteractionClasses {
		sort.Slice(c.Children, func(i, j int) bool { return c.Children[i].Name < c.Children[j].Name })
	}
	f.Dimensions = sortedValues(m.dims, func(d *Dimension) string { return d.Name })
	f.Transportations = sortedValues(m.trans, func(t *Transportation) string { return t.Name })
	f.UpdateRates = sortedValues(m.rates, func(u *UpdateRate) string { return u.Name })
	f.SyncPoints = sortedValues(m.syncs, func(s *SyncPoint) string { return s.Label })

	m.checkDataTypes()
	m.assignHandles()
	m.checkClasses()
	m.resolveDirected()
	return f
}

func firstFile(f *FDD) string {
	if len(f.Modules) > 0 {
		return f.Modules[0].File
	}
	return "FDD"
}

func sortedValues[T any](m map[string]*T, key func(*T) string) []*T {
	out := make([]*T, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return key(out[i]) < key(out[j]) })
	return out
}

// typeRef reports a reference to a data type that does not exist. "NA"
// and "" mean no type where the OMT allows it.
func (m *merger) typeRef(name string, at Pos, what string) *DataType {
	if name == "" || name == "NA" {
		return nil
	}
	t, ok := m.fdd.DataTypes[name]
	if !ok {
		m.errs.add(ErrReading, at, "%s: data type %s is not defined in any module", what, name)
	}
	return t
}

func (m *merger) checkDataTypes() {
	f := m.fdd
	names := slices.Sorted(maps.Keys(f.DataTypes))
	for _, n := range names {
		t := f.DataTypes[n]
		what := t.Kind.String() + " data type " + t.Name
		switch t.Kind {
		case KindSimple, KindEnumerated:
			if r := m.typeRef(t.Representation, t.Pos, what+" representation"); r != nil && r.Kind != KindBasic {
				m.errs.add(ErrReading, t.Pos, "%s: representation %s is %s data type, not a basic data representation", what, r.Name, article(r.Kind))
			}
		case KindArray:
			if t.Element == "" {
				break
			}
			// An HLAfixedArray with a range cardinality ("(2..5)") is
			// accepted here, as other RTIs do; the codec refuses to encode
			// it, since its length is not fixed.
			m.typeRef(t.Element, t.Pos, what+" element")
		case KindFixedRecord:
			seen := make(map[string]bool)
			for _, fl := range t.Fields {
				if seen[fl.Name] {
					m.errs.add(ErrReading, t.Pos, "%s: field %s appears twice", what, fl.Name)
				}
				seen[fl.Name] = true
				m.typeRef(fl.DataType, t.Pos, what+" field "+fl.Name)
			}
		case KindVariantRecord:
			m.checkVariant(t, what)
		}
	}
	// A type that contains itself, with no way for the recursion to end,
	// has no finite encoding.
	state := make(map[string]int) // 0 new, 1 on the path, 2 done
	var visit func(n string, path []string)
	visit = func(n string, path []string) {
		t := f.DataTypes[n]
		if t == nil || state[n] == 2 {
			return
		}
		if state[n] == 1 {
			m.errs.add(ErrReading, t.Pos, "data type %s contains itself: %s", n, strings.Join(append(path, n), " -> "))
			return
		}
		state[n] = 1
		if t.Kind == KindArray && mayBeEmpty(t.Cardinality) {
			// An array that may be empty ends a recursion (a tree node
			// holding a variable array of nodes), so it breaks no cycle.
			state[n] = 2
			return
		}
		for _, r := range typeRefs(t) {
			visit(r, append(path, n))
		}
		state[n] = 2
	}
	for _, n := range names {
		visit(n, nil)
	}
}

// Fixed reports whether every dimension has one size.
func (c Cardinality) Fixed() bool {
	if len(c.Ranges) == 0 {
		return false
	}
	for _, r := range c.Ranges {
		if r.Max < 0 || r.Min != r.Max {
			return false
		}
	}
	return true
}

// typeRefs lists the data types t is built from.
func typeRefs(t *DataType) []string {
	switch t.Kind {
	case KindSimple, KindEnumerated:
		return []string{t.Representation}
	case KindArray:
		return []string{t.Element}
	case KindFixedRecord:
		out := make([]string, len(t.Fields))
		for i, f := range t.Fields {
			out[i] = f.DataType
		}
		return out
	case KindVariantRecord:
		out := []string{t.Representation}
		for _, a := range t.Alternatives {
			if a.DataType != "" {
				out = append(out, a.DataType)
			}
		}
		return out
	}
	return nil
}

// checkVariant resolves the discriminant type and expands each
// alternative's enumerator list ("A", "[A .. C]", "A, C", "HLAother").
func (m *merger) checkVariant(t *DataType, what string) {
	disc := m.typeRef(t.Representation, t.Pos, what+" discriminant type")
	if disc != nil && disc.Kind != KindEnumerated {
		m.errs.add(ErrReading, t.Pos, "%s: discriminant type %s is %s data type, not enumerated", what, disc.Name, article(disc.Kind))
		disc = nil
	}
	covered := make(map[string]string)
	for i := range t.Alternatives {
		a := &t.Alternatives[i]
		aw := what + " alternative " + a.Name
		m.typeRef(a.DataType, t.Pos, aw)
		if len(a.Enumerators) != 1 || disc == nil {
			continue
		}
		var expanded []string
		for _, item := range splitOutsideBrackets(a.Enumerators[0]) {
			item = strings.TrimSpace(item)
			switch {
			case item == "HLAother":
				a.Other = true
			case strings.HasPrefix(item, "["):
				lo, hi, ok := strings.Cut(strings.Trim(item, "[]"), "..")
				lo, hi = strings.TrimSpace(lo), strings.TrimSpace(hi)
				i, j := enumIndex(disc, lo), enumIndex(disc, hi)
				switch {
				case !ok:
					m.errs.add(ErrReading, t.Pos, "%s: enumerator range %q has no ..", aw, item)
				case i < 0 || j < 0:
					m.errs.add(ErrReading, t.Pos, "%s: enumerator range %q names an enumerator %s does not have", aw, item, disc.Name)
				case j < i:
					m.errs.add(ErrReading, t.Pos, "%s: enumerator range %q is backwards", aw, item)
				default:
					for k := i; k <= j; k++ {
						expanded = append(expanded, disc.Enumerators[k].Name)
					}
				}
			default:
				if enumIndex(disc, item) < 0 {
					m.errs.add(ErrReading, t.Pos, "%s: enumerator %s is not an enumerator of %s", aw, item, disc.Name)
					continue
				}
				expanded = append(expanded, item)
			}
		}
		for _, e := range expanded {
			if prev, dup := covered[e]; dup {
				m.errs.add(ErrReading, t.Pos, "%s: enumerator %s is already covered by alternative %s", aw, e, prev)
			}
			covered[e] = a.Name
		}
		a.Enumerators = expanded
	}
	if disc != nil {
		m.checkDiscriminantValues(t, what, disc, covered)
	}
}

// checkDiscriminantValues refuses a variant whose alternative a receiver
// could not tell: an enumerator encodes as its first value, a value
// decodes as the first enumerator that has it, and when those two
// enumerators select different alternatives the data that follows is
// ambiguous. Two HLAother alternatives are ambiguous too.
func (m *merger) checkDiscriminantValues(t *DataType, what string, disc *DataType, covered map[string]string) {
	other := ""
	for _, a := range t.Alternatives {
		if !a.Other {
			continue
		}
		if other != "" {
			m.errs.add(ErrReading, t.Pos, "%s: alternatives %s and %s are both HLAother", what, other, a.Name)
			return
		}
		other = a.Name
	}
	selects := func(name string) string {
		if a, ok := covered[name]; ok {
			return a
		}
		if other != "" {
			return other
		}
		return "none"
	}
	first := make(map[int64]string)
	for _, e := range disc.Enumerators {
		for _, v := range e.Values {
			if _, ok := first[v]; !ok {
				first[v] = e.Name
			}
		}
	}
	for _, e := range disc.Enumerators {
		if len(e.Values) == 0 {
			continue
		}
		v := e.Values[0]
		// An enumerator that selects no alternative cannot be encoded in
		// this variant, so it cannot be misread either.
		if o := first[v]; o != e.Name && selects(e.Name) != "none" && selects(o) != selects(e.Name) {
			m.errs.add(ErrReading, t.Pos, "%s: enumerator %s encodes as %d, which decodes as %s, and they select different alternatives (%s and %s)",
				what, e.Name, v, o, selects(e.Name), selects(o))
		}
	}
}

func enumIndex(t *DataType, name string) int {
	for i, e := range t.Enumerators {
		if e.Name == name {
			return i
		}
	}
	return -1
}

// The handle of a class, attribute, parameter or dimension is a 64-bit
// FNV-1a hash of a string that names it uniquely: its kind and its fully
// qualified name. That makes handles independent of module order and of
// which other modules are present, so a module added at join time never
// renumbers anything. Zero is never a handle. Collisions are detected.
func nameHash(kind, name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(kind))
	h.Write([]byte{0})
	h.Write([]byte(name))
	v := h.Sum64()
	if v == 0 {
		v = 1
	}
	return v
}

func (m *merger) assignHandles() {
	f := m.fdd
	seen := make(map[uint64]string)
	// claim returns the handle of the thing called kind+" "+name (the
	// hash of tag and name), reporting a collision with one claimed before.
	claim := func(tag, kind, name string, at Pos) uint64 {
		h, what := nameHash(tag, name), kind+" "+name
		if prev, ok := seen[h]; ok {
			m.errs.add(ErrInconsistent, at, "handle collision between %s and %s; rename one", what, prev)
		}
		seen[h] = what
		return h
	}
	for _, c := range f.ObjectClasses {
		c.Handle = ObjectClassHandle(claim("o", "object class", c.QualifiedName, c.Pos))
		for _, a := range c.Attributes {
			a.Handle = AttributeHandle(claim("a", "attribute", c.QualifiedName+"."+a.Name, a.Pos))
		}
	}
	for _, c := range f.InteractionClasses {
		c.Handle = InteractionClassHandle(claim("i", "interaction class", c.QualifiedName, c.Pos))
		for _, p := range c.Parameters {
			p.Handle = ParameterHandle(claim("p", "parameter", c.QualifiedName+"."+p.Name, p.Pos))
		}
	}
	for _, d := range f.Dimensions {
		d.Handle = DimensionHandle(claim("d", "dimension", d.Name, d.Pos))
	}
	f.objectByName, f.objectByHandle = indexBy(f.ObjectClasses, func(c *ObjectClass) (string, ObjectClassHandle) {
		return c.QualifiedName, c.Handle
	})
	f.interactionByName, f.interactionByH = indexBy(f.InteractionClasses, func(c *InteractionClass) (string, InteractionClassHandle) {
		return c.QualifiedName, c.Handle
	})
	f.dimensionByName, f.dimensionByHandle = indexBy(f.Dimensions, func(d *Dimension) (string, DimensionHandle) {
		return d.Name, d.Handle
	})
	f.transportByName = make(map[string]*Transportation, len(f.Transportations))
	for _, t := range f.Transportations {
		f.transportByName[t.Name] = t
	}
}

// checkClasses checks attributes and parameters against the merged
// tables, and builds each class's inherited indexes (parents first, since
// ObjectClasses is sorted by qualified name and a parent's name is a
// prefix of its children's).
func (m *merger) checkClasses() {
	f := m.fdd
	for _, c := range f.ObjectClasses {
		parent := c.inheritFrom()
		c.attrByName = inheritIndex(parent.attrByName)
		c.attrByHandle = inheritIndex(parent.attrByHandle)
		for _, a := range c.Attributes {
			what := "attribute " + c.QualifiedName + "." + a.Name
			if prev, had := enter(c.attrByName, c.attrByHandle, a.Name, a.Handle, a); had {
				m.redeclared(a.Pos, what, prev.Class == c, prev.Class.QualifiedName)
			}
			m.checkCommon(what, a.Pos, a.DataType, a.Transportation, a.Order, a.Dimensions, true)
		}
	}
	for _, c := range f.InteractionClasses {
		parent := c.inheritFrom()
		c.paramByName = inheritIndex(parent.paramByName)
		c.paramByHandle = inheritIndex(parent.paramByHandle)
		m.checkCommon("interaction class "+c.QualifiedName, c.Pos, "", c.Transportation, c.Order, c.Dimensions, false)
		for _, p := range c.Parameters {
			what := "parameter " + c.QualifiedName + "." + p.Name
			if prev, had := enter(c.paramByName, c.paramByHandle, p.Name, p.Handle, p); had {
				m.redeclared(p.Pos, what, prev.Class == c, prev.Class.QualifiedName)
			}
			m.typeRef(p.DataType, p.Pos, what)
		}
	}
	for _, d := range f.Dimensions {
		m.typeRef(d.DataType, d.Pos, "dimension "+d.Name)
	}
	for _, s := range f.SyncPoints {
		m.typeRef(s.DataType, s.Pos, "synchronization point "+s.Label)
	}
	m.typeRef(f.Time.TimeStamp, m.timePos[0], "time stamp")
	m.typeRef(f.Time.Lookahead, m.timePos[1], "lookahead")
}

// redeclared reports an attribute or parameter whose name the class
// already has: its own (twice is true) or one inherited from the class
// named from.
func (m *merger) redeclared(at Pos, what string, twice bool, from string) {
	if twice {
		m.errs.add(ErrReading, at, "%s is declared twice", what)
	} else {
		m.errs.add(ErrReading, at, "%s is already inherited from %s", what, from)
	}
}

func (m *merger) checkCommon(what string, at Pos, dataType, transport string, order Order, dims []string, needType bool) {
	if needType {
		if dataType == "" {
			m.errs.add(ErrReading, at, "%s has no data type", what)
		} else {
			m.typeRef(dataType, at, what)
		}
	}
	if _, ok := m.fdd.transportByName[transport]; !ok {
		m.errs.add(ErrReading, at, "%s: transportation %s is not defined in any module", what, transport)
	}
	if order != OrderReceive && order != OrderTimeStamp {
		m.errs.add(ErrReading, at, "%s: order %q, want Receive or TimeStamp", what, string(order))
	}
	for _, d := range dims {
		if _, ok := m.fdd.dimensionByName[d]; !ok {
			m.errs.add(ErrReading, at, "%s: dimension %s is not defined in any module", what, d)
		}
	}
}

// String gives a one-line summary, for logs.
func (f *FDD) String() string {
	return fmt.Sprintf("FDD(%d modules, %d object classes, %d interaction classes, %d dimensions, %d data types)",
		len(f.Modules), len(f.ObjectClasses), len(f.InteractionClasses), len(f.Dimensions), len(f.DataTypes))
}

func article(k DataTypeKind) string {
	switch k {
	case KindArray, KindEnumerated:
		return "an " + k.String()
	}
	return "a " + k.String()
}

// mayBeEmpty reports whether an array of this cardinality may have no
// elements at all.
func mayBeEmpty(c Cardinality) bool {
	for _, r := range c.Ranges {
		if r.Min == 0 {
			return true
		}
	}
	return len(c.Ranges) == 0
}
