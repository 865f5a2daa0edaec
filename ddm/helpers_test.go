package ddm

import (
	"fmt"
	"strings"
	"testing"

	"github.com/meshrti/meshrti/fomxml"
)

// dimSpec is a dimension for a test FOM: name, upper bound ("" for none)
// and <value> ("" for none).
type dimSpec struct{ name, ub, value string }

// testFDD merges a module with the given dimensions (after the MIM).
func testFDD(tb testing.TB, dims ...dimSpec) *fomxml.FDD {
	tb.Helper()
	var b strings.Builder
	b.WriteString("<objectModel><dimensions>\n")
	for _, d := range dims {
		fmt.Fprintf(&b, "<dimension><name>%s</name>", d.name)
		if d.ub != "" {
			fmt.Fprintf(&b, "<upperBound>%s</upperBound>", d.ub)
		}
		if d.value != "" {
			fmt.Fprintf(&b, "<value>%s</value>", d.value)
		}
		b.WriteString("</dimension>\n")
	}
	b.WriteString("</dimensions></objectModel>\n")
	doc, err := fomxml.ParseBytes("test.xml", []byte(b.String()))
	if err != nil {
		tb.Fatal(err)
	}
	fdd, err := fomxml.Merge(doc)
	if err != nil {
		tb.Fatal(err)
	}
	return fdd
}

func testSpace(tb testing.TB, cfg Config, dims ...dimSpec) *Space {
	tb.Helper()
	s, err := NewSpace(testFDD(tb, dims...), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// handle returns the handle of the dimension named name.
func handle(tb testing.TB, s *Space, name string) DimensionHandle {
	tb.Helper()
	hs, err := s.Handles([]string{name})
	if err != nil {
		tb.Fatal(err)
	}
	return hs[0]
}

// reg builds a region from (dim, lo, hi) triples.
func reg(args ...any) Region {
	var r Region
	for i := 0; i+2 < len(args); i += 3 {
		r = r.With(args[i].(DimensionHandle), Range{toU64(args[i+1]), toU64(args[i+2])})
	}
	return r
}

func toU64(v any) uint64 {
	switch v := v.(type) {
	case int:
		return uint64(v)
	case uint64:
		return v
	}
	panic(fmt.Sprintf("toU64(%T)", v))
}
