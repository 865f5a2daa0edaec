package peer

import "fmt"

// Support services (IEEE 1516.1-2010 §10): names and handles. Class,
// attribute, interaction and parameter handles are the FDD's (hashes of
// names, the same in every process) and need no lock.

// GetObjectClassHandle (§10.6) accepts a fully qualified name, a name
// without the root, or a unique bare name.
func (f *Federate) GetObjectClassHandle(name string) (ObjectClassHandle, error) {
	c, ok := f.FDD().ObjectClass(name)
	if !ok {
		return 0, fmt.Errorf("%w: object class %q", ErrNameNotFound, name)
	}
	return c.Handle, nil
}

// GetObjectClassName (§10.7) returns the fully qualified name.
func (f *Federate) GetObjectClassName(h ObjectClassHandle) (string, error) {
	c, ok := f.FDD().ObjectClassByHandle(h)
	if !ok {
		return "", fmt.Errorf("%w: %d", ErrInvalidObjectClassHandle, h)
	}
	return c.QualifiedName, nil
}

// GetAttributeHandle (§10.11).
func (f *Federate) GetAttributeHandle(class ObjectClassHandle, name string) (AttributeHandle, error) {
	c, ok := f.FDD().ObjectClassByHandle(class)
	if !ok {
		return 0, fmt.Errorf("%w: %d", ErrInvalidObjectClassHandle, class)
	}
	a, ok := c.Attribute(name)
	if !ok {
		return 0, fmt.Errorf("%w: attribute %q of %s", ErrNameNotFound, name, c.QualifiedName)
	}
	return a.Handle, nil
}

// GetAttributeName (§10.12).
func (f *Federate) GetAttributeName(class ObjectClassHandle, h AttributeHandle) (string, error) {
	c, ok := f.FDD().ObjectClassByHandle(class)
	if !ok {
		return "", fmt.Errorf("%w: %d", ErrInvalidObjectClassHandle, class)
	}
	a, ok := c.AttributeByHandle(h)
	if !ok {
		return "", fmt.Errorf("%w: %d of %s", ErrAttributeNotDefined, h, c.QualifiedName)
	}
	return a.Name, nil
}

// GetInteractionClassHandle (§10.15).
func (f *Federate) GetInteractionClassHandle(name string) (InteractionClassHandle, error) {
	c, ok := f.FDD().InteractionClass(name)
	if !ok {
		return 0, fmt.Errorf("%w: interaction class %q", ErrNameNotFound, name)
	}
	return c.Handle, nil
}

// GetInteractionClassName (§10.16).
func (f *Federate) GetInteractionClassName(h InteractionClassHandle) (string, error) {
	c, ok := f.FDD().InteractionClassByHandle(h)
	if !ok {
		return "", fmt.Errorf("%w: %d", ErrInvalidInteractionClassHandle, h)
	}
	return c.QualifiedName, nil
}

// GetParameterHandle (§10.17).
func (f *Federate) GetParameterHandle(class InteractionClassHandle, name string) (ParameterHandle, error) {
	c, ok := f.FDD().InteractionClassByHandle(class)
	if !ok {
		return 0, fmt.Errorf("%w: %d", ErrInvalidInteractionClassHandle, class)
	}
	p, ok := c.Parameter(name)
	if !ok {
		return 0, fmt.Errorf("%w: parameter %q of %s", ErrNameNotFound, name, c.QualifiedName)
	}
	return p.Handle, nil
}

// GetParameterName (§10.18).
func (f *Federate) GetParameterName(class InteractionClassHandle, h ParameterHandle) (string, error) {
	c, ok := f.FDD().InteractionClassByHandle(class)
	if !ok {
		return "", fmt.Errorf("%w: %d", ErrInvalidInteractionClassHandle, class)
	}
	p, ok := c.ParameterByHandle(h)
	if !ok {
		return "", fmt.Errorf("%w: %d of %s", ErrInteractionParameterNotDefined, h, c.QualifiedName)
	}
	return p.Name, nil
}

// GetFederateHandle (§10.4).
func (f *Federate) GetFederateHandle(name string) (FederateHandle, error) {
	if name == f.name {
		return f.handle, nil
	}
	var h FederateHandle
	err := f.call(func() error {
		if m, ok := f.core.MemberNamed(name); ok {
			h = m.Handle
			return nil
		}
		return fmt.Errorf("%w: federate %q", ErrNameNotFound, name)
	})
	return h, err
}

// GetFederateName (§10.5).
func (f *Federate) GetFederateName(h FederateHandle) (string, error) {
	if h == f.handle {
		return f.name, nil
	}
	var name string
	err := f.call(func() error {
		if m, ok := f.core.Member(h); ok {
			name = m.Name
			return nil
		}
		// A member whose join the federate has not handled yet.
		for _, m := range f.ctl.Members() {
			if m.Handle == h {
				name = m.Name
				return nil
			}
		}
		return fmt.Errorf("%w: %d", ErrFederateHandleNotKnown, h)
	})
	return name, err
}

// GetObjectInstanceHandle (§10.9).
func (f *Federate) GetObjectInstanceHandle(name string) (ObjectInstanceHandle, error) {
	var h ObjectInstanceHandle
	err := f.call(func() (err error) { h, err = f.core.ObjectInstanceHandle(name); return err })
	return h, err
}

// GetObjectInstanceName (§10.10).
func (f *Federate) GetObjectInstanceName(h ObjectInstanceHandle) (string, error) {
	var name string
	err := f.call(func() (err error) { name, err = f.core.ObjectInstanceName(h); return err })
	return name, err
}

// GetKnownObjectClassHandle (§10.8).
func (f *Federate) GetKnownObjectClassHandle(h ObjectInstanceHandle) (ObjectClassHandle, error) {
	var c ObjectClassHandle
	err := f.call(func() (err error) { c, err = f.core.KnownObjectClass(h); return err })
	return c, err
}
