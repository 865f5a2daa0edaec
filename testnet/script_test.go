package testnet

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var rewriteFlag = flag.Bool("rewrite", false, "rewrite the expected output of testdata/*.txt scenario scripts")

// TestScripts runs every scenario script in testdata and compares each
// step's output with the expected one; -rewrite updates the files.
func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scripts in testdata")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			runScriptFile(t, file)
		})
	}
}

func runScriptFile(t *testing.T, file string) {
	in, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out bytes.Buffer
	res, err := RunScript(ctx, bytes.NewReader(in), &out, *rewriteFlag)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	for _, v := range res.Violations {
		t.Errorf("%s: invariant: %v", file, v)
	}
	if *rewriteFlag {
		if !bytes.Equal(in, res.Rewritten) {
			if err := os.WriteFile(file, res.Rewritten, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	if res.Mismatches > 0 {
		t.Errorf("%s: %d of %d steps differ (rerun with -rewrite to accept):\n%s", file, res.Mismatches, res.Steps, out.String())
	}
}

// TestScriptMalformed: a command the script language cannot carry out
// stops the script with its line, instead of printing an output.
func TestScriptMalformed(t *testing.T) {
	for _, tc := range []struct{ script, want string }{
		{"join A\n----\n\nrestart A\n----\n", "line 4: restart A: restart A: it has not crashed"},
		{"join A\n----\n\ncrash A\n----\n\ncrash A\n----\n", "line 7: crash A: A crashed already"},
		{"join A\n----\n\nrestart B\n----\n", "line 4: restart B: unknown federate B"},
		{"join A\n----\n\njump A\n----\n", `line 4: jump A: unknown command "jump"`},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := RunScript(ctx, strings.NewReader(tc.script), io.Discard, false)
		cancel()
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: %v, want %q", tc.script, err, tc.want)
		}
	}
}
