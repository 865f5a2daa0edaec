package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const (
	lenientEnum    = "../../fomxml/testdata/lenient-enum.xml"
	lenientVariant = "../../fomxml/testdata/lenient-variant.xml"
)

var (
	warningLine = regexp.MustCompile(`^(.+):([0-9]+): warning: (.+)$`)
	errorLine   = regexp.MustCompile(`^(.+):([0-9]+): (.+)$`)
)

// Defects accepted with a warning print as file:line: warning: message,
// before the ok line, and leave the exit code 0.
func TestFomValidateWarnings(t *testing.T) {
	code, out, errOut := runCmd(t, "fom", "validate", lenientEnum, lenientVariant)
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 8 {
		t.Fatalf("want 7 warnings and the ok line:\n%s", out)
	}
	for _, l := range lines[:7] {
		m := warningLine.FindStringSubmatch(l)
		if m == nil || (m[1] != lenientEnum && m[1] != lenientVariant) {
			t.Errorf("line %q is not file:line: warning: message", l)
		}
	}
	if want := lenientEnum + ":40: warning: enumerator SignalColor.Amber has no <value>; it takes the value 2"; !strings.HasPrefix(lines[0], want) {
		t.Errorf("first line %q, want it to start with %q", lines[0], want)
	}
	if !strings.HasPrefix(lines[7], "ok: FDD(") || !strings.HasSuffix(lines[7], ", 7 warnings") {
		t.Errorf("last line %q", lines[7])
	}
}

// --strict (before or after the files) makes the warnings errors: exit 1,
// file:line: message lines that state the defect alone.
func TestFomValidateStrict(t *testing.T) {
	for _, args := range [][]string{
		{"fom", "validate", "--strict", lenientEnum},
		{"fom", "validate", lenientEnum, "--strict"},
		{"fom", "validate", "-strict", lenientEnum},
	} {
		code, out, errOut := runCmd(t, args...)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if code != 1 || len(lines) != 5 {
			t.Errorf("%v: exit %d, want 1 with 5 errors:\n%s%s", args, code, out, errOut)
			continue
		}
		for _, l := range lines {
			m := errorLine.FindStringSubmatch(l)
			if m == nil || m[1] != lenientEnum || strings.Contains(l, "warning") || strings.Contains(l, "; ") {
				t.Errorf("%v: line %q is not file:line: defect", args, l)
			}
		}
		if want := lenientEnum + ":40: enumerator SignalColor.Amber has no <value>"; lines[0] != want {
			t.Errorf("%v: first line %q, want %q", args, lines[0], want)
		}
	}
	// A clean module passes --strict.
	if code, out, _ := runCmd(t, "fom", "validate", "--strict", "../../fomxml/testdata/air.xml"); code != 0 || !strings.HasPrefix(out, "ok: ") || strings.Contains(out, "warning") {
		t.Errorf("clean module under --strict: exit %d, %q", code, out)
	}
	// A file named like a flag after "--" is a file.
	if code, out, _ := runCmd(t, "fom", "validate", "--", "--strict"); code != 1 || !strings.Contains(out, "--strict") {
		t.Errorf("-- --strict: exit %d, %q", code, out)
	}
}

// The shared invalid/ module whose enumerator has no value loads with one
// warning; --strict refuses it.
func TestFomValidateSharedLenient(t *testing.T) {
	f := filepath.Join("..", "..", "..", "shared", "fom", "invalid", "enumeratedEnumeratorValueMissing.xml")
	if _, err := os.Stat(f); err != nil {
		t.Skipf("shared FOMs not found (%v)", err)
	}
	code, out, _ := runCmd(t, "fom", "validate", f)
	if code != 0 || !strings.HasPrefix(out, f+":24: warning: enumerator WaiterTasks.TakingOrder has no <value>") || !strings.Contains(out, ", 1 warning\n") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	code, out, _ = runCmd(t, "fom", "validate", "--strict", f)
	if code != 1 || strings.TrimSpace(out) != f+":24: enumerator WaiterTasks.TakingOrder has no <value>" {
		t.Errorf("--strict: exit %d:\n%s", code, out)
	}
}

// fom inspect counts the warnings; it does not list them.
func TestFomInspectWarnings(t *testing.T) {
	code, out, _ := runCmd(t, "fom", "inspect", lenientVariant)
	if code != 0 || !strings.Contains(out, "\nwarnings: 2 (fom validate lists them)\n") || strings.Contains(out, "has no <dataType>") {
		t.Errorf("summary: exit %d:\n%s", code, out)
	}
	code, out, _ = runCmd(t, "fom", "inspect", "../../fomxml/testdata/air.xml")
	if code != 0 || strings.Contains(out, "warnings:") {
		t.Errorf("clean summary: exit %d:\n%s", code, out)
	}
	for file, want := range map[string]int{lenientVariant: 2, lenientEnum: 5, "../../fomxml/testdata/air.xml": 0} {
		code, out, errOut := runCmd(t, "fom", "inspect", file, "--json")
		var got fddJSON
		if code != 0 || json.Unmarshal([]byte(out), &got) != nil || got.Warnings != want {
			t.Errorf("%s --json: exit %d, warnings %d, want %d: %s", file, code, got.Warnings, want, errOut)
		}
	}
}
