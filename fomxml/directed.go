package fomxml

import (
	"sort"
	"strings"
)

// Directed interactions (HLA 4, IEEE 1516.2-2025): an object class lists
// the interaction classes that may be directed to its instances, each as
// <directedInteraction><name>I</name><sharing>S</sharing></directedInteraction>
// after the class's <sharing>. A subclass inherits its ancestors'. Every
// module that writes the class may add some: the declarations combine.

// mergeDirected adds the directed interactions one module declares for c;
// resolveDirected resolves and combines them once every module is in.
func (m *merger) mergeDirected(c *ObjectClass, def *classDef, mod string) {
	for _, d := range def.directed {
		x := *d
		x.Class, x.Module = c, mod
		c.DirectedInteractions = append(c.DirectedInteractions, &x)
	}
}

// resolveDirected resolves each directed interaction's name to an
// interaction class of the merged FDD (a name that is none is an
// ErrReading error), keeps one declaration per interaction class and
// class (two sharings that differ are an ErrInconsistent error; an
// absent one says nothing), and builds each class's index with its
// ancestors' (parents first: ObjectClasses is sorted by qualified name).
func (m *merger) resolveDirected() {
	f := m.fdd
	for _, c := range f.ObjectClasses {
		c.directedByH = inheritIndex(c.inheritFrom().directedByH)
		own := make(map[InteractionClassHandle]*DirectedInteraction)
		var kept []*DirectedInteraction
		for _, d := range c.DirectedInteractions {
			ic, ok := f.InteractionClass(d.Name)
			if !ok {
				m.errs.add(ErrReading, d.Pos, "object class %s: directed interaction %s is not an interaction class of any module", c.QualifiedName, d.Name)
				continue
			}
			d.Interaction = ic
			if prev, dup := own[ic.Handle]; dup {
				switch {
				case d.Sharing == "" || strings.EqualFold(d.Sharing, prev.Sharing):
				case prev.Sharing == "":
					prev.Sharing = d.Sharing
				default:
					m.errs.conflict(d.Pos, prev.Pos, "object class %s: directed interaction %s has sharing %s, was %s",
						c.QualifiedName, ic.QualifiedName, d.Sharing, prev.Sharing)
				}
				continue
			}
			own[ic.Handle] = d
			kept = append(kept, d)
		}
		sort.Slice(kept, func(i, j int) bool {
			return kept[i].Interaction.QualifiedName < kept[j].Interaction.QualifiedName
		})
		c.DirectedInteractions = kept
		for h, d := range own {
			c.directedByH[h] = d
		}
	}
}

// DirectedInteraction finds the declaration that lets interaction class
// h be directed to instances of c: c's own or an ancestor's. Only h
// itself counts, not an ancestor of h (see DirectedInteraction).
func (c *ObjectClass) DirectedInteraction(h InteractionClassHandle) (*DirectedInteraction, bool) {
	d, ok := c.directedByH[h]
	return d, ok
}

// AllDirectedInteractions lists the directed interactions c has,
// inherited ones first (root first), each group sorted by the
// interaction class's qualified name.
func (c *ObjectClass) AllDirectedInteractions() []*DirectedInteraction {
	return inherited(c, (*ObjectClass).parent, func(x *ObjectClass) []*DirectedInteraction { return x.DirectedInteractions })
}
