package fomxml

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Limits that keep hostile input from exhausting memory or the stack. The
// largest real module we know of (RPR FOM 2.0's enumerations, 612 KB,
// about 40,000 elements) is far below each of them.
const (
	// MaxModuleBytes is the largest module file accepted.
	MaxModuleBytes = 32 << 20
	// MaxElements is the most XML elements one module may hold.
	MaxElements = 1 << 20
	// MaxDepth is the deepest XML element nesting accepted; it also bounds
	// the depth of class trees.
	MaxDepth = 128
	// MaxTextBytes is the longest text or attribute value of one element.
	MaxTextBytes = 1 << 20
)

// element is one node of a generic XML tree. Only local names are kept:
// the OMT namespaces are not needed to tell elements apart.
type element struct {
	name     string
	attrs    map[string]string
	children []*element
	text     string // direct character data, trimmed
	line     int
}

// child returns the first child element called name, or nil.
func (e *element) child(name string) *element {
	for _, c := range e.children {
		if c.name == name {
			return c
		}
	}
	return nil
}

// all returns the children called name.
func (e *element) all(name string) []*element {
	var out []*element
	for _, c := range e.children {
		if c.name == name {
			out = append(out, c)
		}
	}
	return out
}

// prop reads a property written either way the OMT editions allow: as a
// child element (1516-2010, `<order>TimeStamp</order>`) or as an XML
// attribute (1516-2000, `order="TimeStamp"`). ok is false when neither is
// there; an element that is present but empty gives "", true.
func (e *element) prop(name string) (v string, ok bool) {
	if c := e.child(name); c != nil {
		return c.text, true
	}
	if v, ok := e.attrs[name]; ok {
		return strings.TrimSpace(v), true
	}
	return "", false
}

// str is prop without the presence flag.
func (e *element) str(name string) string {
	v, _ := e.prop(name)
	return v
}

// parseTree reads a whole XML document into an element tree, enforcing
// the limits above. Positions are line numbers of the start tags.
func parseTree(file string, r io.Reader) (*element, []byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxModuleBytes+1))
	if err != nil {
		return nil, nil, &Error{File: file, Msg: fmt.Sprintf("read: %v", err), kind: ErrCouldNotOpen}
	}
	if len(data) > MaxModuleBytes {
		return nil, nil, &Error{File: file, Msg: fmt.Sprintf("module is larger than %d bytes", MaxModuleBytes), kind: ErrReading}
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	// The OMT files are UTF-8 or ASCII; accept the common aliases of those
	// and refuse anything else with a clear message rather than guessing.
	d.CharsetReader = func(charset string, input io.Reader) (io.Reader, error) {
		switch strings.ToLower(charset) {
		case "utf-8", "utf8", "us-ascii", "ascii", "iso-8859-1", "latin1":
			return input, nil
		}
		return nil, fmt.Errorf("unsupported charset %q", charset)
	}

	var (
		root  *element
		stack []*element
		texts [][]byte
		count int
	)
	fail := func(msg string) error {
		line, _ := d.InputPos()
		return &Error{File: file, Line: line, Msg: msg, kind: ErrReading}
	}
	for {
		line, _ := d.InputPos()
		tok, err := d.RawToken()
		if errors.Is(err, io.EOF) {
			if n := len(stack); n > 0 {
				return nil, nil, fail("malformed XML: unexpected end of file, <" + stack[n-1].name + "> is not closed")
			}
			break
		}
		if err != nil {
			var se *xml.SyntaxError
			if errors.As(err, &se) {
				return nil, nil, &Error{File: file, Line: se.Line, Msg: "malformed XML: " + se.Msg, kind: ErrReading}
			}
			return nil, nil, fail("malformed XML: " + err.Error())
		}
		switch t := tok.(type) {
		case xml.StartElement:
			count++
			if count > MaxElements {
				return nil, nil, fail(fmt.Sprintf("more than %d elements", MaxElements))
			}
			if len(stack) >= MaxDepth {
				return nil, nil, fail(fmt.Sprintf("elements nested deeper than %d", MaxDepth))
			}
			// InputPos before Token is where the previous token ended.
			// Whitespace before a tag is a token of its own, so that is
			// where this start tag begins.
			el := &element{name: t.Name.Local, line: line}
			for _, a := range t.Attr {
				if len(a.Value) > MaxTextBytes {
					return nil, nil, fail("attribute value too long")
				}
				if el.attrs == nil {
					el.attrs = make(map[string]string, len(t.Attr))
				}
				el.attrs[a.Name.Local] = a.Value
			}
			if len(stack) == 0 {
				if root != nil {
					return nil, nil, fail("more than one root element")
				}
				root = el
			} else {
				p := stack[len(stack)-1]
				p.children = append(p.children, el)
			}
			stack = append(stack, el)
			texts = append(texts, nil)
		case xml.EndElement:
			// RawToken skips the decoder's own matching of start and end
			// tags (and its namespace bookkeeping, which we do not need),
			// so check the match here.
			n := len(stack) - 1
			if n < 0 || stack[n].name != t.Name.Local {
				return nil, nil, fail("malformed XML: unexpected end element </" + t.Name.Local + ">")
			}
			stack[n].text = strings.TrimSpace(string(texts[n]))
			stack = stack[:n]
			texts = texts[:n]
		case xml.CharData:
			if n := len(texts); n > 0 {
				if len(texts[n-1])+len(t) > MaxTextBytes {
					return nil, nil, fail("element text too long")
				}
				texts[n-1] = append(texts[n-1], t...)
			}
		}
	}
	if root == nil {
		return nil, nil, &Error{File: file, Line: 1, Msg: "no root element", kind: ErrReading}
	}
	return root, data, nil
}
