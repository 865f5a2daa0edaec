package fomxml

import (
	"errors"
	"fmt"
	"strings"
)

// The three ways a FOM can fail, named after the HLA exceptions that
// createFederationExecution and joinFederationExecution raise for them.
// Every error returned by this package wraps exactly one of them; test with
// errors.Is.
var (
	// ErrCouldNotOpen: the module could not be opened or read.
	ErrCouldNotOpen = errors.New("fomxml: could not open FDD")
	// ErrReading: the module is not well-formed XML, or not a valid OMT
	// module on its own (a missing name, a non-numeric size, a reference
	// to a data type that exists nowhere, ...).
	ErrReading = errors.New("fomxml: error reading FDD")
	// ErrInconsistent: the modules are each valid but do not merge: the
	// same class, data type, dimension or transportation is defined
	// differently in two of them.
	ErrInconsistent = errors.New("fomxml: inconsistent FDD")
)

// Error locates one problem in a module. Line is 0 when the problem has no
// single place (a file that cannot be opened). Other names the second
// module of an inconsistency, with OtherLine.
type Error struct {
	File      string
	Line      int
	Msg       string
	Other     string
	OtherLine int
	kind      error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	if e.Other != "" {
		fmt.Fprintf(&b, " (conflicts with %s", e.Other)
		if e.OtherLine > 0 {
			fmt.Fprintf(&b, ":%d", e.OtherLine)
		}
		b.WriteString(")")
	}
	return b.String()
}

// Unwrap returns the sentinel that classifies e.
func (e *Error) Unwrap() error { return e.kind }

// ErrorList is several problems found in one pass, in file and line
// order. It unwraps to each of them.
type ErrorList []*Error

// maxErrors bounds how many problems one pass reports, so a hostile or
// hopeless input yields a readable answer.
const maxErrors = 100

func (l ErrorList) Error() string {
	switch len(l) {
	case 0:
		return "fomxml: no errors"
	case 1:
		return l[0].Error()
	}
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Unwrap lets errors.Is and errors.As see every element.
func (l ErrorList) Unwrap() []error {
	out := make([]error, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}

// errs collects problems up to maxErrors.
type errs struct {
	list ErrorList
}

func (c *errs) add(kind error, p Pos, format string, args ...any) {
	if len(c.list) >= maxErrors {
		return
	}
	c.list = append(c.list, &Error{File: p.File, Line: p.Line, Msg: fmt.Sprintf(format, args...), kind: kind})
	if len(c.list) == maxErrors {
		c.list = append(c.list, &Error{File: p.File, Line: p.Line, Msg: "too many errors", kind: kind})
	}
}

func (c *errs) conflict(p, other Pos, format string, args ...any) {
	if len(c.list) >= maxErrors {
		return
	}
	c.list = append(c.list, &Error{
		File: p.File, Line: p.Line, Msg: fmt.Sprintf(format, args...),
		Other: other.File, OtherLine: other.Line, kind: ErrInconsistent,
	})
}

func (c *errs) err() error {
	if len(c.list) == 0 {
		return nil
	}
	return c.list
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
