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

	"github.com/meshrti/meshrti/testnet/scenario"
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

// TestScriptCommandTable: every command of the table has a name used
// once, a line of help and a handler (but the prefix expect-error, which
// the step reads), and ScriptHelp lists each with its arguments.
func TestScriptCommandTable(t *testing.T) {
	help := ScriptHelp()
	seen := make(map[string]bool)
	for _, c := range commands {
		switch {
		case c.name == "" || strings.ContainsAny(c.name, " \t="):
			t.Errorf("command %q: a name is one word", c.name)
		case seen[c.name]:
			t.Errorf("command %s: in the table twice", c.name)
		case strings.TrimSpace(c.help) == "":
			t.Errorf("command %s: no help", c.name)
		case (c.run == nil) != (c.form == prefix):
			t.Errorf("command %s: a handler is for every command but a prefix", c.name)
		case c.form == oneFederate && !strings.HasPrefix(c.usage, "NAME"):
			t.Errorf("command %s names one federate first: its usage %q should say NAME", c.name, c.usage)
		}
		seen[c.name] = true
		if line := strings.TrimSpace(c.name+" "+c.usage) + "\n\t" + c.help + "\n"; !strings.Contains(help, line) {
			t.Errorf("ScriptHelp misses %q", line)
		}
		if commandIndex[c.name] == nil || commandIndex[c.name].name != c.name {
			t.Errorf("command %s: not found by name", c.name)
		}
	}
	if got, want := strings.Count(help, "\n\t"), len(commands); got != want {
		t.Errorf("ScriptHelp lists %d commands, the table holds %d", got, want)
	}
}

// TestScriptCommandsInTable: every command the scripts in testdata use
// (after expect-error) is in the table, and the scripts use most of the
// table.
func TestScriptCommandsInTable(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts in testdata: %v", err)
	}
	used := make(map[string]bool)
	for _, file := range files {
		_, err := scenario.RunFile(file, io.Discard, false, func(line string) ([]string, error) {
			toks, err := tokenize(line)
			if err != nil {
				return nil, err
			}
			if len(toks) > 1 && toks[0] == "expect-error" {
				used[toks[0]] = true
				toks = toks[1:]
			}
			c, ok := commandIndex[toks[0]]
			if !ok || c.form == prefix {
				t.Errorf("%s: %q: command %s is not in the table", file, line, toks[0])
			}
			used[toks[0]] = true
			return []string{"ok"}, nil
		})
		if err != nil {
			t.Errorf("%s: %v", file, err)
		}
	}
	if len(used) < len(commands)/2 {
		t.Errorf("the scripts use %d commands of %d: was the reading of them broken?", len(used), len(commands))
	}
	var unused []string
	for _, c := range commands {
		if !used[c.name] {
			unused = append(unused, c.name)
		}
	}
	t.Logf("%d commands in the table, %d used by the scripts; not used: %v", len(commands), len(used), unused)
}

// TestScriptUnknownCommand: a command not in the table stops the script
// with an error naming the command and its line, wherever it stands;
// words that are off stop it with the command's usage from the table.
func TestScriptUnknownCommand(t *testing.T) {
	for _, tc := range []struct{ script, want string }{
		{"jump A\n----\n", `line 1: jump A: unknown command "jump"`},
		{"join A\n----\n\n# a comment\nexpect-error leap A t=1\n----\n", `line 5: expect-error leap A t=1: unknown command "leap"`},
		{"expect-error expect-error join A\n----\n", `line 1: expect-error expect-error join A: unknown command "expect-error"`},
		{"expect-error\n----\n", "line 1: expect-error: expect-error needs a command"},
		{"join\n----\n", "line 1: join: join NAME..."},
		{"join A\n----\n\nasync A maybe\n----\n", "line 4: async A maybe: async NAME on|off"},
		{"join A\n----\n\nadvance A\n----\n", "line 4: advance A: missing t="},
		{"join A\n----\n\nadvance A B t=1\n----\n", "line 4: advance A B t=1: advance needs one federate name"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := RunScript(ctx, strings.NewReader(tc.script), io.Discard, false)
		cancel()
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: %v, want %q", tc.script, err, tc.want)
		}
	}
}
