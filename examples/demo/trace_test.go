package demo

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWithTrace(t *testing.T) {
	if err := withTrace("", func(w io.Writer) error {
		if w != nil {
			t.Error("no -trace: got a writer")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "t.jsonl")
	runErr := errors.New("run failed")
	err := withTrace(path, func(w io.Writer) error {
		fmt.Fprintln(w, `{"x":1}`)
		return runErr
	})
	if err != runErr {
		t.Errorf("error %v, want the run's", err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "{\"x\":1}\n" {
		t.Errorf("trace file %q, %v: want the line written, flushed at close", b, err)
	}
	ran := false
	err = withTrace(filepath.Join(t.TempDir(), "no", "such", "dir", "t.jsonl"), func(io.Writer) error { ran = true; return nil })
	if err == nil || ran {
		t.Errorf("unwritable path: err %v, ran %v; want an error and no run", err, ran)
	}
}
