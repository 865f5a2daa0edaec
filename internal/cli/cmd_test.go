package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
)

// A Cmd prints what the bench and demo kinds printed by hand: one JSON
// object a line, child lines "tag {...}", messages prefixed with the
// kind.
func TestCmdOutput(t *testing.T) {
	var out, errOut bytes.Buffer
	b := NewCmd("bench demo-kind", &out, &errOut)
	n := b.FS.Int("n", 1, "a number")
	if !b.Parse([]string{"-n", "7"}) || *n != 7 {
		t.Fatalf("parse: n=%d", *n)
	}
	if b.Parse([]string{"-nope"}) {
		t.Error("parse accepted an unknown flag")
	}
	errOut.Reset()
	if code := b.UsageError("need -n >= 1"); code != 2 {
		t.Errorf("usageError: exit %d", code)
	}
	if code := b.Fail(errors.New("boom")); code != 1 {
		t.Errorf("fail: exit %d", code)
	}
	if want := "federate-node bench demo-kind: need -n >= 1\nfederate-node bench demo-kind: boom\n"; errOut.String() != want {
		t.Errorf("stderr %q, want %q", errOut.String(), want)
	}
	type res struct {
		Bench string  `json:"bench"`
		PerS  float64 `json:"per_s"`
	}
	b.Emit(true, res{"x", 2.5}, func(w io.Writer) { t.Error("text printed with -json") })
	b.Emit(false, res{"x", 2.5}, func(w io.Writer) { fmt.Fprint(w, "text\n") })
	PrintTagged(&out, "ready", res{"y", 1})
	if want := "{\"bench\":\"x\",\"per_s\":2.5}\ntext\nready {\"bench\":\"y\",\"per_s\":1}\n"; out.String() != want {
		t.Errorf("stdout %q, want %q", out.String(), want)
	}
}

// ProfilePath names one process's profile; no path, no profile.
func TestProfileDefaults(t *testing.T) {
	if p := ProfilePath("", ".sub"); p != "" {
		t.Errorf("no prefix: %q", p)
	}
	if p := ProfilePath("cpu", ".sub"); p != "cpu.sub" {
		t.Errorf("ProfilePath: %q", p)
	}
	stop, err := StartProfile("")
	if err != nil || stop == nil {
		t.Fatalf("StartProfile(\"\"): %v", err)
	}
	stop()
}
