package fomxml

import (
	_ "embed"
	"sync"
)

// mimXML is meshrti's own copy of the standard MOM and Initialization
// Module of IEEE 1516.1-2010: the root classes, the MOM classes and the
// standard data types, written for this project.
//
//go:embed HLAstandardMIM.xml
var mimXML []byte

// MIMDesignator names the embedded MIM in Module.File and in errors.
const MIMDesignator = "HLAstandardMIM"

var mimOnce = sync.OnceValues(func() (*Document, error) {
	return ParseBytes(MIMDesignator, mimXML)
})

// StandardMIM returns the embedded standard MIM, parsed. The document is
// shared and must not be changed; Merge never changes its inputs.
func StandardMIM() *Document {
	d, err := mimOnce()
	if err != nil {
		// The module is part of the binary and tested; failing to parse
		// it is a build defect, not an input error.
		panic("fomxml: embedded standard MIM does not parse: " + err.Error())
	}
	return d
}

// StandardMIMXML returns the embedded MIM's XML text.
func StandardMIMXML() []byte {
	out := make([]byte, len(mimXML))
	copy(out, mimXML)
	return out
}
