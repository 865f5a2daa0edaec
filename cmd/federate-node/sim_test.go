package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshrti/meshrti/testnet"
)

func TestSimScript(t *testing.T) {
	code, out, errOut := runCmd(t, "sim", "../../testnet/testdata/names.txt")
	if code != 0 {
		t.Fatalf("exit %d:\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "names.txt: ok") {
		t.Errorf("output %q", out)
	}
	// The same script in real time (goroutines) expects the same output.
	code, out, errOut = runCmd(t, "sim", "-realtime", "../../testnet/testdata/names.txt")
	if code != 0 || !strings.Contains(out, "names.txt: ok") {
		t.Fatalf("-realtime: exit %d:\n%s%s", code, out, errOut)
	}
}

// TestSimMismatchAndRewrite: a wrong expectation fails with a diff, and
// -rewrite repairs the file.
func TestSimMismatchAndRewrite(t *testing.T) {
	src := "join A B\n----\nA: joined Bob\n\n# end\n"
	file := filepath.Join(t.TempDir(), "s.txt")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCmd(t, "sim", file)
	if code != 1 || !strings.Contains(out, "- A: joined Bob") || !strings.Contains(out, "+ A: joined B") {
		t.Fatalf("exit %d:\n%s%s", code, out, errOut)
	}
	if code, out, errOut = runCmd(t, "sim", "-rewrite", file); code != 0 {
		t.Fatalf("rewrite: exit %d:\n%s%s", code, out, errOut)
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if want := "join A B\n----\nA: joined B\n\n# end\n"; string(got) != want {
		t.Errorf("rewritten:\n%s\nwant:\n%s", got, want)
	}
	if code, out, errOut = runCmd(t, "sim", file); code != 0 {
		t.Fatalf("after rewrite: exit %d:\n%s%s", code, out, errOut)
	}
}

func TestSimUsage(t *testing.T) {
	if code, _, _ := runCmd(t, "sim"); code != 2 {
		t.Errorf("sim without files: exit %d, want 2", code)
	}
	if code, _, errOut := runCmd(t, "sim", filepath.Join(t.TempDir(), "missing.txt")); code != 1 || errOut == "" {
		t.Errorf("missing file: exit %d, stderr %q", code, errOut)
	}
}

// TestSimCommands: sim -commands lists the script commands from
// testnet's table, each with its help line.
func TestSimCommands(t *testing.T) {
	code, out, _ := runCmd(t, "sim", "-commands")
	if code != 0 {
		t.Fatalf("sim -commands: exit %d", code)
	}
	if out != testnet.ScriptHelp() {
		t.Errorf("sim -commands printed %q, want testnet.ScriptHelp()", out)
	}
	for _, cmd := range []string{"federation", "join", "advance", "save"} {
		if !strings.Contains(out, "\n"+cmd+" ") && !strings.HasPrefix(out, cmd+" ") {
			t.Errorf("sim -commands does not list %q", cmd)
		}
	}
}
