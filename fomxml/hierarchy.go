package fomxml

import (
	"maps"
	"sort"
)

// Object and interaction classes form two trees with the same rules:
// lookup by name, inheritance of members, and subclass tests. These
// helpers serve both; C is *ObjectClass or *InteractionClass.

func (c *ObjectClass) parent() *ObjectClass           { return c.Parent }
func (c *InteractionClass) parent() *InteractionClass { return c.Parent }
func (c *ObjectClass) bareName() string               { return c.Name }
func (c *InteractionClass) bareName() string          { return c.Name }

// inheritFrom returns the parent class whose indexes c inherits, or for a
// root class an empty one.
func (c *ObjectClass) inheritFrom() *ObjectClass {
	if c.Parent == nil {
		return &ObjectClass{}
	}
	return c.Parent
}

// inheritFrom is ObjectClass.inheritFrom for interaction classes.
func (c *InteractionClass) inheritFrom() *InteractionClass {
	if c.Parent == nil {
		return &InteractionClass{}
	}
	return c.Parent
}

// childName is the qualified name of c's subclass called name; a nil c
// is the root's parent.
func (c *ObjectClass) childName(name string) string {
	if c == nil {
		return name
	}
	return c.QualifiedName + "." + name
}

// childName is ObjectClass.childName for interaction classes.
func (c *InteractionClass) childName(name string) string {
	if c == nil {
		return name
	}
	return c.QualifiedName + "." + name
}

// adopt adds ch to c's subclasses, unless c is nil (ch is a root).
func (c *ObjectClass) adopt(ch *ObjectClass) {
	if c != nil {
		c.Children = append(c.Children, ch)
	}
}

// adopt is ObjectClass.adopt for interaction classes.
func (c *InteractionClass) adopt(ch *InteractionClass) {
	if c != nil {
		c.Children = append(c.Children, ch)
	}
}

// classFor returns the class called qn in table; the first time, the one
// mk returns, entered in table and adopted by its parent.
func classFor[C any](table map[string]*C, qn string, adopt func(*C), mk func() *C) *C {
	c := table[qn]
	if c == nil {
		c = mk()
		table[qn] = c
		adopt(c)
	}
	return c
}

// ownCopies returns copies of a module's attribute or parameter
// definitions, each given to its class by own, sorted by name.
func ownCopies[M any](defs []*M, own func(*M), name func(*M) string) []*M {
	out := make([]*M, len(defs))
	for i, d := range defs {
		x := *d
		own(&x)
		out[i] = &x
	}
	sort.Slice(out, func(i, j int) bool { return name(out[i]) < name(out[j]) })
	return out
}

// findClass finds a class by fully qualified name, by name qualified
// below root (root ends with "."), or by bare name when exactly one class
// of all has it.
func findClass[C comparable](byName map[string]C, root string, all []C, bare func(C) string, name string) (C, bool) {
	var none C
	if c, ok := byName[name]; ok {
		return c, true
	}
	if c, ok := byName[root+name]; ok {
		return c, true
	}
	found := none
	for _, c := range all {
		if bare(c) == name {
			if found != none {
				return none, false
			}
			found = c
		}
	}
	return found, found != none
}

// inherited lists own(x) for c and each of its ancestors, root first.
func inherited[C comparable, M any](c C, parent func(C) C, own func(C) []M) []M {
	var none C
	var chain []C
	for x := c; x != none; x = parent(x) {
		chain = append(chain, x)
	}
	var out []M
	for i := len(chain) - 1; i >= 0; i-- {
		out = append(out, own(chain[i])...)
	}
	return out
}

// descends reports whether c is other or one of its descendants.
func descends[C comparable](c, other C, parent func(C) C) bool {
	var none C
	for x := c; x != none; x = parent(x) {
		if x == other {
			return true
		}
	}
	return false
}

// inheritIndex returns a new index holding the parent's entries.
func inheritIndex[K comparable, V any](parent map[K]V) map[K]V {
	out := make(map[K]V, len(parent))
	maps.Copy(out, parent)
	return out
}

// indexBy returns the indexes by name and by handle of all, whose keys
// keys returns.
func indexBy[H comparable, V any](all []V, keys func(V) (string, H)) (map[string]V, map[H]V) {
	byName := make(map[string]V, len(all))
	byHandle := make(map[H]V, len(all))
	for _, v := range all {
		name, h := keys(v)
		byName[name] = v
		byHandle[h] = v
	}
	return byName, byHandle
}

// enter adds member x, called name with handle h, to a class's indexes.
// prev is the member of that name the class had before, if had.
func enter[H comparable, M any](byName map[string]M, byHandle map[H]M, name string, h H, x M) (prev M, had bool) {
	prev, had = byName[name]
	byName[name], byHandle[h] = x, x
	return prev, had
}
