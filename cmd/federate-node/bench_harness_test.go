package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The harness prints what the bench kinds printed by hand: one JSON
// object a line, child lines "tag {...}", messages prefixed with the kind.
func TestBenchHarnessOutput(t *testing.T) {
	var out, errOut bytes.Buffer
	b := newKindRun("bench demo-kind", &out, &errOut)
	n := b.fs.Int("n", 1, "a number")
	if !b.parse([]string{"-n", "7"}) || *n != 7 {
		t.Fatalf("parse: n=%d", *n)
	}
	if b.parse([]string{"-nope"}) {
		t.Error("parse accepted an unknown flag")
	}
	errOut.Reset()
	if code := b.usageError("need -n >= 1"); code != 2 {
		t.Errorf("usageError: exit %d", code)
	}
	if code := b.fail(errors.New("boom")); code != 1 {
		t.Errorf("fail: exit %d", code)
	}
	if want := "federate-node bench demo-kind: need -n >= 1\nfederate-node bench demo-kind: boom\n"; errOut.String() != want {
		t.Errorf("stderr %q, want %q", errOut.String(), want)
	}
	type res struct {
		Bench string  `json:"bench"`
		PerS  float64 `json:"per_s"`
	}
	b.emit(true, res{"x", 2.5}, func(w io.Writer) { t.Error("text printed with -json") })
	b.emit(false, res{"x", 2.5}, func(w io.Writer) { fmt.Fprint(w, "text\n") })
	printTagged(&out, "ready", res{"y", 1})
	if want := "{\"bench\":\"x\",\"per_s\":2.5}\ntext\nready {\"bench\":\"y\",\"per_s\":1}\n"; out.String() != want {
		t.Errorf("stdout %q, want %q", out.String(), want)
	}
}

func TestBenchHarnessDefaults(t *testing.T) {
	if p := profilePath("", ".sub"); p != "" {
		t.Errorf("no prefix: %q", p)
	}
	if p := profilePath("cpu", ".sub"); p != "cpu.sub" {
		t.Errorf("profilePath: %q", p)
	}
	stop, err := startProfile("")
	if err != nil || stop == nil {
		t.Fatalf("startProfile(\"\"): %v", err)
	}
	stop()
	port := 0
	defaultPort(&port, 57)
	if port < 43000 || port >= 51000 {
		t.Errorf("derived port %d outside 43000-50999", port)
	}
	port = 1234
	if defaultPort(&port, 0); port != 1234 {
		t.Errorf("a given port changed to %d", port)
	}
}

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

// rawSink counts what arrived and stops at the count asked for.
func TestRawSink(t *testing.T) {
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Skipf("no loopback UDP: %v", err)
	}
	defer c.Close()
	rio, err := newRawIO(c)
	if err != nil {
		t.Fatal(err)
	}
	s, err := net.DialUDP("udp4", nil, c.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for range 4 {
		if _, err := s.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	rawSink(c, rio, make([]byte, 64), 3, &out)
	if !strings.HasPrefix(out.String(), "got 3 in ") {
		t.Errorf("output %q, want got 3 in NS", out.String())
	}
}
