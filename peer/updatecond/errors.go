package updatecond

import "errors"

// Errors returned by New and LoadConfig, checked with errors.Is. New
// reports every problem it finds at once (joined with errors.Join).
var (
	// ErrInvalidConfig: a policy value out of range, a malformed file, a
	// policy name that is not "Class.Attribute", or two names for the
	// same attribute of the same class.
	ErrInvalidConfig = errors.New("updatecond: invalid config")
	// ErrUnknownClass: a policy names an object class the FDD does not
	// have (or a bare class name that several classes share).
	ErrUnknownClass = errors.New("updatecond: unknown object class")
	// ErrUnknownAttribute: a policy names an attribute its class neither
	// declares nor inherits.
	ErrUnknownAttribute = errors.New("updatecond: unknown attribute")
)
