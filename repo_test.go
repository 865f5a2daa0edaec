package meshrti

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		docsOf := make(map[string][]string) // package name -> files with its doc
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ParseComments|parser.PackageClauseOnly)
			if err != nil {
				t.Fatal(err)
			}
			name := f.Name.Name
			if _, ok := docsOf[name]; !ok {
				docsOf[name] = nil
			}
			if f.Doc != nil && strings.TrimSpace(f.Doc.Text()) != "" {
				docsOf[name] = append(docsOf[name], filepath.Base(file))
			}
		}
		for name, docFiles := range docsOf {
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

// pureCores are the packages that hold protocol state machines: the time
// core, DDM, the reliable endpoint, the federate core with its
// sub-machines, the API vocabulary they share, and the control plane's
// agreement (replica, state machine, Paxos).
var pureCores = []string{"lbts", "ddm", "peer/reliable", "peer/internal/core", "peer/hla", "gossip/internal/agree"}

// TestCoreImports keeps the protocol cores pure: they (and anything below
// their directories) may not touch the network, the OS, locks or the
// clock, start goroutines, or draw on a global random source.
// Wall-clock progress reaches them only as Tick calls, randomness only as
// a *rand.Rand from their Config.
func TestCoreImports(t *testing.T) {
	for _, core := range pureCores {
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
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				return err
			}
			for _, p := range impurities(f) {
				t.Errorf("%s: %s", path, p)
			}
			return nil
		})
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
}

// TestCoreImportGraph checks the pure cores by their whole import graph
// (go list -deps), not only by their own files: nothing they import,
// however indirectly, may be the socket code (net, peer/transport,
// golang.org/x/net, golang.org/x/sys), and no package outside the
// standard library among them may import net, syscall or os, except
// fomxml, whose ParseFile reads FOM files (the cores parse documents
// handed to them). os and syscall themselves do reach the cores, through
// the standard library (fmt, time, crypto), which is not ours to police:
// docs/limits.md.
func TestCoreImportGraph(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH: cannot list the import graph")
	}
	args := []string{"list", "-deps", "-f", "{{.ImportPath}}\t{{.Standard}}\t{{join .Imports \" \"}}"}
	for _, c := range pureCores {
		args = append(args, "./"+c)
	}
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const module = "github.com/meshrti/meshrti/"
	socket := func(p string) bool {
		return p == "net" || strings.HasPrefix(p, "net/") && p != "net/netip" ||
			p == module+"peer/transport" || strings.HasPrefix(p, "golang.org/x/net/") || strings.HasPrefix(p, "golang.org/x/sys/")
	}
	osAllowed := map[string]bool{module + "fomxml": true}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.SplitN(line, "\t", 3)
		if len(f) != 3 {
			t.Fatalf("go list line %q", line)
		}
		pkg, std, imports := f[0], f[1] == "true", strings.Fields(f[2])
		n++
		if socket(pkg) {
			t.Errorf("the pure cores import %s, through their import graph", pkg)
		}
		if std {
			continue
		}
		for _, imp := range imports {
			if imp == "net" || imp == "syscall" || imp == "os" && !osAllowed[pkg] {
				t.Errorf("%s, in the pure cores' import graph, imports %s", pkg, imp)
			}
		}
	}
	if n < 20 {
		t.Fatalf("go list listed only %d packages", n)
	}
}

// impurities lists what makes f impure: forbidden imports, go
// statements, and calls on the global random source.
func impurities(f *ast.File) []string {
	forbidden := []string{"net", "os", "sync", "time", "crypto/rand", "math/rand", "runtime", "unsafe", "syscall", "io/fs"}
	// What of math/rand/v2 a core may name: types and the constructors of
	// seeded sources. Everything else there uses the global source.
	allowed := map[string]bool{"Rand": true, "Source": true, "PCG": true, "ChaCha8": true, "Zipf": true,
		"New": true, "NewPCG": true, "NewChaCha8": true, "NewZipf": true}
	var out []string
	randName := ""
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if p == "math/rand/v2" {
			randName = "rand"
			if imp.Name != nil {
				randName = imp.Name.Name
			}
			continue
		}
		for _, bad := range forbidden {
			if p == bad || strings.HasPrefix(p, bad+"/") {
				out = append(out, fmt.Sprintf("imports %q; protocol cores do no I/O, take no lock, read no clock and use no global randomness", p))
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			out = append(out, "a go statement; protocol cores start no goroutine")
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok && randName != "" && id.Name == randName && !allowed[n.Sel.Name] {
				out = append(out, fmt.Sprintf("%s.%s uses the global random source; take a *rand.Rand from Config", randName, n.Sel.Name))
			}
		}
		return true
	})
	return out
}

// TestImpurities: the purity check finds each thing it looks for, and
// passes what is allowed.
func TestImpurities(t *testing.T) {
	bad := `package x
import (
	"math/rand/v2"
	"sync"
	"time"
)
func f(r *rand.Rand) { go f(r); _ = rand.IntN(3); _ = rand.New(rand.NewPCG(1, 2)); _ = time.Now(); var _ sync.Mutex }`
	good := `package x
import "math/rand/v2"
func f(r *rand.Rand) int { return rand.New(rand.NewPCG(1, 2)).IntN(3) + r.IntN(2) }`
	for _, tc := range []struct {
		src  string
		want int
	}{{bad, 4}, {good, 0}} {
		f, err := parser.ParseFile(token.NewFileSet(), "x.go", tc.src, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := impurities(f); len(got) != tc.want {
			t.Errorf("%d impurities, want %d: %q", len(got), tc.want, got)
		}
	}
}

// TestDocListsEveryService fails when docs/peer.md leaves out a service or
// callback of the 1516e checklist (../shared/brief/services.md, or
// $MESHRTI_SHARED/brief/services.md): each must have a row that names it.
func TestDocListsEveryService(t *testing.T) {
	shared := os.Getenv("MESHRTI_SHARED")
	if shared == "" {
		shared = filepath.Join("..", "shared")
	}
	list, err := os.ReadFile(filepath.Join(shared, "brief", "services.md"))
	if err != nil {
		t.Skipf("no service checklist beside the repository: %v", err)
	}
	doc, err := os.ReadFile(filepath.Join("docs", "peer.md"))
	if err != nil {
		t.Fatal(err)
	}
	names := regexp.MustCompile("(?m)^- \\[.\\] (?:§[\\d.]+ )?`(\\w+)\\(").FindAllSubmatch(list, -1)
	if len(names) < 150 {
		t.Fatalf("found only %d services and callbacks in the checklist", len(names))
	}
	for _, n := range names {
		if !bytes.Contains(doc, []byte("| `"+string(n[1])+"` |")) {
			t.Errorf("docs/peer.md has no row for %s", n[1])
		}
	}
}
