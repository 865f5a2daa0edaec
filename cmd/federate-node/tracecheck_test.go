package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTraceCheck(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Two files read as one trace: the sender's and the receiver's.
	a := write("a.jsonl", `{"ev":"join","fed":"A","handle":"1"}
{"ev":"send","fed":"A","msg":"A/1","kind":"update","order":"RO","ts":null,"class":"HLAobjectRoot.Aircraft"}`)
	b := write("b.jsonl", `{"ev":"deliver","fed":"B","msg":"A/1","order":"RO","ts":null}
`)
	code, out, errOut := runCmd(t, "trace-check", a, b)
	if code != 0 || !strings.Contains(out, "0 violations") {
		t.Fatalf("clean: exit %d:\n%s%s", code, out, errOut)
	}
	bad := write("bad.jsonl", `{"ev":"grant","fed":"B","t":5}
{"ev":"grant","fed":"B","t":4}
`)
	if code, out, _ := runCmd(t, "trace-check", bad); code != 1 || !strings.Contains(out, "grants never decrease") {
		t.Errorf("decreasing grant: exit %d:\n%s", code, out)
	}
	if code, _, errOut := runCmd(t, "trace-check", write("junk.jsonl", "{")); code != 1 || errOut == "" {
		t.Errorf("malformed: exit %d, stderr %q", code, errOut)
	}
	if code, _, _ := runCmd(t, "trace-check"); code != 2 {
		t.Errorf("no files: exit %d, want 2", code)
	}
}

// sim -trace writes a trace that trace-check accepts.
func TestSimTrace(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "sim.jsonl")
	code, out, errOut := runCmd(t, "sim", "-trace", trace, "../../testnet/testdata/time.txt")
	if code != 0 {
		t.Fatalf("sim: exit %d:\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCmd(t, "trace-check", trace)
	if code != 0 || !strings.Contains(out, "0 violations") || strings.Contains(out, " 0 grants") {
		t.Fatalf("trace-check: exit %d:\n%s%s", code, out, errOut)
	}
}

// demo --trace traces every federate of the demo.
func TestDemoTrace(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "demo.jsonl")
	code, out, errOut := runCmd(t, "demo", "-aircraft", "2", "-steps", "3", "--trace", trace)
	if code != 0 {
		t.Fatalf("demo: exit %d:\n%s%s", code, out, errOut)
	}
	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"fed":"Radar"`, `"fed":"Aircraft-2"`, `"ev":"deliver"`, `"ev":"grant"`, `"ev":"resign"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("trace lacks %s", want)
		}
	}
	code, out, errOut = runCmd(t, "trace-check", trace)
	if code != 0 {
		t.Fatalf("trace-check: exit %d:\n%s%s", code, out, errOut)
	}
}
