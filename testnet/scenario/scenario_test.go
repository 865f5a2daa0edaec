package scenario

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// echo is a step function whose output is the command's words, one a line.
func echo(cmd string) ([]string, error) { return strings.Fields(cmd), nil }

func TestParse(t *testing.T) {
	src := "# a comment\n\njoin A B  \n----\nok\n\n# tail\n"
	sc, err := parse(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []step{{pre: []string{"# a comment", ""}, cmd: "join A B", line: 3, sep: true, expected: []string{"ok"}}}
	if len(sc.steps) != 1 || !slices.Equal(sc.steps[0].pre, want[0].pre) || sc.steps[0].cmd != want[0].cmd ||
		sc.steps[0].line != 3 || !sc.steps[0].sep || !slices.Equal(sc.steps[0].expected, want[0].expected) {
		t.Fatalf("parsed %+v, want %+v", sc.steps, want)
	}
	if !slices.Equal(sc.trailer, []string{"# tail"}) {
		t.Fatalf("trailer %q", sc.trailer)
	}
}

// TestRewriteUnchanged: when every output is the expected one, the
// rewritten script is the same bytes, whatever the comments and blank
// lines around the steps.
func TestRewriteUnchanged(t *testing.T) {
	for _, src := range []string{
		"",
		"# only a comment\n",
		"a\n----\na\n",
		"a b\n----\na\nb\n\nc\n----\nc\n",
		"\n\n# lead\n  # indented comment\na\n----\na\n\n\n\n# between\n\nb\n----\nb\n",
		"a\n----\na\n\n# trailing comment\n",
		"a\n----\na\n\n\n",
	} {
		var w bytes.Buffer
		res, err := Run(strings.NewReader(src), &w, echo)
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		if res.Mismatches != 0 || w.Len() != 0 {
			t.Errorf("%q: %d mismatches:\n%s", src, res.Mismatches, w.String())
		}
		if string(res.Rewritten) != src {
			t.Errorf("%q rewritten as %q", src, res.Rewritten)
		}
	}
}

func TestRunMismatches(t *testing.T) {
	src := "# c\na x\n----\na\ny\n\nb\nc\n----\nc\n"
	var w bytes.Buffer
	res, err := Run(strings.NewReader(src), &w, echo)
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps != 3 || res.Mismatches != 2 {
		t.Errorf("%d steps, %d mismatches; want 3, 2", res.Steps, res.Mismatches)
	}
	wantReport := "line 2: a x\n    a\n  + x\n  - y\nline 7: b\n  (no ---- line: expected output missing)\n  + b\n"
	if w.String() != wantReport {
		t.Errorf("report:\n%s\nwant:\n%s", w.String(), wantReport)
	}
	wantText := "# c\na x\n----\na\nx\n\nb\n----\nb\n\nc\n----\nc\n"
	if string(res.Rewritten) != wantText {
		t.Errorf("rewritten %q, want %q", res.Rewritten, wantText)
	}
	// The rewritten script passes.
	res, err = Run(bytes.NewReader(res.Rewritten), &w, echo)
	if err != nil || res.Mismatches != 0 {
		t.Errorf("rewritten script: %v, %+v", err, res)
	}
}

func TestRunErrors(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		src  string
		step func(string) ([]string, error)
		want string
	}{
		{"a\n----\na\n\n----\nb\n", echo, "line 5: ---- without a command"},
		{"# c\n----\n", echo, "line 2: ---- without a command"},
		{"a\n----\na\n\nfail\n----\n", func(cmd string) ([]string, error) {
			if cmd == "fail" {
				return nil, boom
			}
			return echo(cmd)
		}, "line 5: fail: boom"},
		{"a\n----\n", func(string) ([]string, error) { return []string{"x", " "}, nil }, "line 1: a: output line 2 is blank"},
		{"a\n----\n", func(string) ([]string, error) { return []string{"x\ny"}, nil }, `line 1: a: output line 1 holds a line break: "x\ny"`},
	} {
		res, err := Run(strings.NewReader(tc.src), &bytes.Buffer{}, tc.step)
		if err == nil || err.Error() != tc.want || res != nil {
			t.Errorf("%q: %v, %v; want %q", tc.src, res, err, tc.want)
		}
		if tc.want == "line 5: fail: boom" && !errors.Is(err, boom) {
			t.Errorf("%v does not wrap the step's error", err)
		}
	}
}

// TestTrailingSpace: trailing spaces are dropped from outputs as from
// the script, so an output with them still matches and rewrites the same.
func TestTrailingSpace(t *testing.T) {
	src := "a\n----\nx\n"
	res, err := Run(strings.NewReader(src), &bytes.Buffer{}, func(string) ([]string, error) { return []string{"x \t"}, nil })
	if err != nil || res.Mismatches != 0 || string(res.Rewritten) != src {
		t.Errorf("%v, %+v", err, res)
	}
}

func TestRunFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.txt")
	src := "# c\na\n----\nold\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var w bytes.Buffer
	res, err := RunFile(file, &w, false, echo)
	if err != nil || res.Mismatches != 1 {
		t.Fatalf("%v, %+v", err, res)
	}
	if b, _ := os.ReadFile(file); string(b) != src {
		t.Fatalf("without rewrite the file became %q", b)
	}
	info, _ := os.Stat(file)
	if res, err = RunFile(file, &w, true, echo); err != nil || res.Mismatches != 1 {
		t.Fatalf("%v, %+v", err, res)
	}
	if b, _ := os.ReadFile(file); string(b) != "# c\na\n----\na\n" {
		t.Fatalf("rewritten %q", b)
	}
	// Nothing changed: the file is not written again.
	if err := os.Chtimes(file, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
	if res, err = RunFile(file, &w, true, echo); err != nil || res.Mismatches != 0 {
		t.Fatalf("%v, %+v", err, res)
	}
	if again, _ := os.Stat(file); !again.ModTime().Equal(info.ModTime()) {
		t.Error("an unchanged script was written")
	}
	if _, err := RunFile(filepath.Join(t.TempDir(), "bad.txt"), &w, false, echo); err == nil {
		t.Error("no error for a missing file")
	}
	if err := os.WriteFile(file, []byte("----\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := RunFile(file, &w, false, echo); err == nil || err.Error() != file+": line 1: ---- without a command" {
		t.Errorf("error %v does not name the file", err)
	}
}

func TestDiff(t *testing.T) {
	for _, tc := range []struct{ want, got, diff []string }{
		{nil, nil, nil},
		{[]string{"a"}, []string{"a"}, []string{"  a"}},
		{[]string{"a", "b", "c"}, []string{"a", "x", "c"}, []string{"  a", "+ x", "- b", "  c"}},
		{nil, []string{"a"}, []string{"+ a"}},
		{[]string{"a"}, nil, []string{"- a"}},
		{[]string{"a", "b"}, []string{"b", "a"}, []string{"+ b", "  a", "- b"}},
	} {
		if d := diff(tc.want, tc.got); !slices.Equal(d, tc.diff) {
			t.Errorf("diff(%q, %q) = %q, want %q", tc.want, tc.got, d, tc.diff)
		}
	}
}
