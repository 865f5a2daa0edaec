package fomxml

import "strings"

// ObjectClass finds an object class by name: fully qualified
// ("HLAobjectRoot.A.B"), qualified without the root ("A.B"), or the bare
// name when exactly one class has it. ok is false otherwise.
func (f *FDD) ObjectClass(name string) (*ObjectClass, bool) {
	return findClass(f.objectByName, "HLAobjectRoot.", f.ObjectClasses, (*ObjectClass).bareName, name)
}

// ObjectClassByHandle finds an object class by handle.
func (f *FDD) ObjectClassByHandle(h ObjectClassHandle) (*ObjectClass, bool) {
	c, ok := f.objectByHandle[h]
	return c, ok
}

// InteractionClass finds an interaction class by name, like ObjectClass.
func (f *FDD) InteractionClass(name string) (*InteractionClass, bool) {
	return findClass(f.interactionByName, "HLAinteractionRoot.", f.InteractionClasses, (*InteractionClass).bareName, name)
}

// InteractionClassByHandle finds an interaction class by handle.
func (f *FDD) InteractionClassByHandle(h InteractionClassHandle) (*InteractionClass, bool) {
	c, ok := f.interactionByH[h]
	return c, ok
}

// Dimension finds a dimension by name.
func (f *FDD) Dimension(name string) (*Dimension, bool) {
	d, ok := f.dimensionByName[name]
	return d, ok
}

// DimensionByHandle finds a dimension by handle.
func (f *FDD) DimensionByHandle(h DimensionHandle) (*Dimension, bool) {
	d, ok := f.dimensionByHandle[h]
	return d, ok
}

// Transportation finds a transportation type by name.
func (f *FDD) Transportation(name string) (*Transportation, bool) {
	t, ok := f.transportByName[name]
	return t, ok
}

// DataType finds a data type by name.
func (f *FDD) DataType(name string) (*DataType, bool) {
	t, ok := f.DataTypes[name]
	return t, ok
}

// Attribute finds an attribute of the class or of its ancestors by name.
func (c *ObjectClass) Attribute(name string) (*Attribute, bool) {
	a, ok := c.attrByName[name]
	return a, ok
}

// AttributeByHandle finds an attribute of the class or of its ancestors.
func (c *ObjectClass) AttributeByHandle(h AttributeHandle) (*Attribute, bool) {
	a, ok := c.attrByHandle[h]
	return a, ok
}

// AllAttributes lists the attributes the class has, inherited ones first
// (root first), each group sorted by name.
func (c *ObjectClass) AllAttributes() []*Attribute {
	return inherited(c, (*ObjectClass).parent, func(x *ObjectClass) []*Attribute { return x.Attributes })
}

// IsSubclassOf reports whether c is other or one of its descendants.
func (c *ObjectClass) IsSubclassOf(other *ObjectClass) bool {
	return descends(c, other, (*ObjectClass).parent)
}

// Parameter finds a parameter of the class or of its ancestors by name.
func (c *InteractionClass) Parameter(name string) (*Parameter, bool) {
	p, ok := c.paramByName[name]
	return p, ok
}

// ParameterByHandle finds a parameter of the class or of its ancestors.
func (c *InteractionClass) ParameterByHandle(h ParameterHandle) (*Parameter, bool) {
	p, ok := c.paramByHandle[h]
	return p, ok
}

// AllParameters lists the parameters the class has, inherited ones first.
func (c *InteractionClass) AllParameters() []*Parameter {
	return inherited(c, (*InteractionClass).parent, func(x *InteractionClass) []*Parameter { return x.Parameters })
}

// IsSubclassOf reports whether c is other or one of its descendants.
func (c *InteractionClass) IsSubclassOf(other *InteractionClass) bool {
	return descends(c, other, (*InteractionClass).parent)
}

// IsMOM reports whether the class is part of the Management Object Model.
func (c *ObjectClass) IsMOM() bool {
	return strings.HasPrefix(c.QualifiedName, "HLAobjectRoot.HLAmanager")
}

// IsMOM reports whether the class is part of the Management Object Model.
func (c *InteractionClass) IsMOM() bool {
	return strings.HasPrefix(c.QualifiedName, "HLAinteractionRoot.HLAmanager")
}
