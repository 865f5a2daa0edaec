package scenario

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestFiles runs every script matching pattern as a subtest of t named
// after its file, with the step function newStep makes for that
// subtest. A step that differs from its expected output fails the
// subtest with the diff, unless rewrite is set: then RunFile writes the
// actual output into the script. No script matching pattern fails t.
func TestFiles(t *testing.T, pattern string, rewrite bool, newStep func(t *testing.T) func(cmd string) ([]string, error)) {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts match %s: %v", pattern, err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			var diff strings.Builder
			res, err := RunFile(file, &diff, rewrite, newStep(t))
			if err != nil {
				t.Fatal(err)
			}
			if res.Mismatches > 0 && !rewrite {
				t.Errorf("%s: %d of %d steps differ (rerun with -rewrite to accept):\n%s", file, res.Mismatches, res.Steps, diff.String())
			}
		})
	}
}
