package peer

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Every service that reports itself to the MOM (its first statement
// defers f.reported) has arguments and results text knows how to depict:
// none is reported as unknownText.
func TestReportedServicesDepictTheirArguments(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fed := reflect.TypeFor[*Federate]()
	n := 0
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || fd.Body == nil || len(fd.Body.List) == 0 || !fd.Name.IsExported() {
				continue
			}
			def, ok := fd.Body.List[0].(*ast.DeferStmt)
			if !ok {
				continue
			}
			if sel, ok := def.Call.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != "reported" {
				continue
			}
			n++
			m, ok := fed.MethodByName(fd.Name.Name)
			if !ok {
				t.Fatalf("%s reports but is no method of *Federate", fd.Name.Name)
			}
			var types []reflect.Type
			for i := 1; i < m.Type.NumIn(); i++ {
				types = append(types, m.Type.In(i))
			}
			for i := range m.Type.NumOut() {
				types = append(types, m.Type.Out(i))
			}
			for _, typ := range types {
				if typ == reflect.TypeFor[error]() || typ.String() == "context.Context" {
					continue
				}
				if got := text(reflect.Zero(typ).Interface()); got == unknownText {
					t.Errorf("%s: text does not know %v", fd.Name.Name, typ)
				}
			}
		}
	}
	if n < 120 {
		t.Errorf("only %d services report themselves", n)
	}
}

// text depicts the services' arguments as the MIM's reports carry them.
func TestText(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{"test", "test"},
		{[]byte("Hello"), "[0x48,0x65,0x6c,0x6c,0x6f]"},
		{[]byte{}, "[]"},
		{true, "true"},
		{ObjectClassHandle(42), "42"},
		{[]AttributeHandle{3, 1}, "[3, 1]"},
		{ObjectInstanceHandle{Federate: 2, Serial: 7}, "2.7"},
		{[]RegionHandle{{Federate: 1, Serial: 2}}, "[r1.2]"},
		{AttributeValues{2: {1}, 1: {0xff}}, "{1=[0xff], 2=[0x01]}"},
		{Float64Time(2.5), "2.5"},
		{HLAbestEffort, "HLAbestEffort"},
		{RangeBounds{Lower: 1, Upper: 5}, "[1,5)"},
		{[]AttributeRegions{{Attributes: []AttributeHandle{1}, Regions: []RegionHandle{{Federate: 3, Serial: 4}}}}, "[{[1] [r3.4]}]"},
		{struct{}{}, unknownText},
	} {
		if got := text(tc.v); got != tc.want {
			t.Errorf("text(%#v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}
