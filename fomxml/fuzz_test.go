package fomxml

import (
	"errors"
	"os"
	"testing"
)

func addSeeds(f *testing.F) {
	for _, p := range []string{"testdata/air.xml", "testdata/air2000.xml", "testdata/ext.xml", "testdata/conflict.xml",
		"testdata/lenient-enum.xml", "testdata/lenient-variant.xml"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("<objectModel/>"))
	f.Add([]byte("<objectModel><objects><objectClass><name>HLAobjectRoot</name></objectClass></objects></objectModel>"))
}

// strictAgrees fails t unless the strict run failed (strictErr) exactly
// when the lenient one failed (err) or warned (res), and unless err, if
// any, is one of kinds. It reports whether the lenient run succeeded.
func strictAgrees(t *testing.T, what string, res interface{ Warnings() []Warning }, err, strictErr error, kinds ...error) bool {
	t.Helper()
	if (strictErr == nil) != (err == nil && len(res.Warnings()) == 0) {
		t.Fatalf("strict %s: %v; lenient: %v", what, strictErr, err)
	}
	if err == nil {
		return true
	}
	for _, k := range kinds {
		if errors.Is(err, k) {
			return false
		}
	}
	t.Fatalf("unclassified error %v", err)
	return false
}

// FuzzParse: any input parses or gives a located, classified error; never
// a panic. A strict parse succeeds exactly when the lenient one does
// without warnings.
func FuzzParse(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := ParseBytes("fuzz.xml", data)
		_, strictErr := Options{Strict: true}.ParseBytes("fuzz.xml", data)
		if !strictAgrees(t, "parse", doc, err, strictErr, ErrReading, ErrCouldNotOpen) {
			return
		}
		if doc.Module.File != "fuzz.xml" {
			t.Fatalf("module file %q", doc.Module.File)
		}
	})
}

// FuzzMerge merges a fuzzed module with a valid one, both ways round: any
// result is an FDD whose indexes agree with its lists, or a classified
// error; never a panic.
func FuzzMerge(f *testing.F) {
	addSeeds(f)
	base, err := ParseFile("testdata/air.xml")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := ParseBytes("fuzz.xml", data)
		if err != nil {
			return
		}
		for _, order := range [][]*Document{{base, doc}, {doc, base}} {
			fdd, err := Merge(order...)
			_, strictErr := Options{Strict: true}.Merge(order...)
			if !strictAgrees(t, "merge", fdd, err, strictErr, ErrReading, ErrInconsistent) {
				continue
			}
			for _, c := range fdd.ObjectClasses {
				if got, ok := fdd.ObjectClassByHandle(c.Handle); !ok || got != c {
					t.Fatalf("class %s not found by handle", c.QualifiedName)
				}
				for _, a := range c.AllAttributes() {
					if got, ok := c.AttributeByHandle(a.Handle); !ok || got != a {
						t.Fatalf("attribute %s.%s not found by handle", c.QualifiedName, a.Name)
					}
				}
			}
			for _, c := range fdd.InteractionClasses {
				if got, ok := fdd.InteractionClassByHandle(c.Handle); !ok || got != c {
					t.Fatalf("interaction %s not found by handle", c.QualifiedName)
				}
			}
		}
	})
}
