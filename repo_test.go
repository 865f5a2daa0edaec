package meshrti

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// goPackages returns every directory of the module that holds non-test Go
// files, skipping testdata.
func goPackages(t *testing.T) []string {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || (strings.HasPrefix(d.Name(), ".") && path != ".")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			seen[filepath.Dir(path)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for d := range seen {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	return dirs
}

// TestPackageDocs fails when a package has no package comment, or has it
// somewhere other than doc.go (main packages may keep it in main.go).
func TestPackageDocs(t *testing.T) {
	dirs := goPackages(t)
	if len(dirs) < 7 {
		t.Fatalf("found only %d packages: %v", len(dirs), dirs)
	}
	for _, dir := range dirs {
		pkgs, err := parser.ParseDir(token.NewFileSet(), dir, func(fi fs.FileInfo) bool {
			return !strings.HasSuffix(fi.Name(), "_test.go")
		}, parser.ParseComments|parser.PackageClauseOnly)
		if err != nil {
			t.Fatal(err)
		}
		for name, pkg := range pkgs {
			var docFiles []string
			for file, f := range pkg.Files {
				if f.Doc != nil && strings.TrimSpace(f.Doc.Text()) != "" {
					docFiles = append(docFiles, filepath.Base(file))
				}
			}
			switch {
			case len(docFiles) == 0:
				t.Errorf("package %s (%s) has no package doc", name, dir)
			case name != "main" && !contains(docFiles, "doc.go"):
				t.Errorf("package %s (%s) keeps its package doc in %v, want doc.go", name, dir, docFiles)
			}
		}
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestCoreImports keeps the protocol cores pure: lbts and ddm (and
// anything below them) may not touch the network, the OS, locks or the
// clock. Wall-clock progress reaches them only as Tick calls.
func TestCoreImports(t *testing.T) {
	forbidden := []string{"net", "os", "sync", "time"}
	for _, core := range []string{"lbts", "ddm"} {
		err := filepath.WalkDir(core, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				for _, bad := range forbidden {
					if p == bad || strings.HasPrefix(p, bad+"/") {
						t.Errorf("%s imports %q; protocol cores do no I/O and read no clock", path, p)
					}
				}
			}
			return nil
		})
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
}
