package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/meshrti/meshrti/examples/demo"
	"github.com/meshrti/meshrti/internal/bench"
	"github.com/meshrti/meshrti/internal/cli"
)

var updateCLI = flag.Bool("update-cli", false, "rewrite ../../docs/cli.md from the commands' flag sets")

// cliReference is docs/cli.md: every command and sub-command of the
// table, with its help lines and the flags its own flag set prints for
// -h (flag.PrintDefaults), in the table's order.
func cliReference(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("# federate-node: every command and its flags\n\n" +
		"Generated from the commands' own flag sets by `cmd/federate-node`'s\n" +
		"`TestCLIReference` (`go test ./cmd/federate-node -run TestCLIReference -update-cli`\n" +
		"rewrites it; the test fails when it is stale). `federate-node help` prints the\n" +
		"list, `federate-node COMMAND -h` a command's flags.\n\n" +
		"The flags that join a federation mean the same on every command that has them:\n" +
		"`-federation`, `-federation-key` (the federation's secret; `-key` is still\n" +
		"taken by node, monitor, record and replay, with a warning, and is the TLS\n" +
		"private key on serve), `-gossip`, `-seeds`, `-profile` (local, lan or wan),\n" +
		"`-transport`, `-advertise`, `-iface`, `-ttl`, `-mcast-port`, `-lost-grace`,\n" +
		"`-step-hold`, `-log-level` and `-log-format` (logs go to stderr).\n")
	section := func(args []string, help []cli.HelpLine) {
		fmt.Fprintf(&b, "\n## %s\n\n", strings.Join(args, " "))
		for _, h := range help {
			fmt.Fprintf(&b, "`federate-node %s`: %s\n\n", h.Synopsis, strings.ReplaceAll(h.Text, "\n", " "))
		}
		_, _, errOut := runCmd(t, append(args, "-h")...)
		flags := flagLines(errOut)
		if flags == "" {
			b.WriteString("No flags.\n")
			return
		}
		b.WriteString("```\n" + flags + "```\n")
	}
	for _, c := range commands() {
		if len(c.Help) == 0 || c.Name == "help" {
			continue
		}
		var table []cli.Command
		switch c.Name {
		case "bench":
			table = bench.Kinds()
		case "demo":
			table = demo.Kinds()
		case "fom":
			table = fomCommands()
		case "serve":
			table = serveCommands()
		case "record":
			table = recordCommands()
		}
		if table == nil {
			section([]string{c.Name}, c.Help)
			continue
		}
		for _, k := range table {
			if len(k.Help) == 0 {
				continue
			}
			args := []string{c.Name}
			if k.Name != "" {
				args = append(args, k.Name)
			}
			section(args, k.Help)
		}
	}
	return b.String()
}

// flagLines returns the flag listing of a -h output: the lines from the
// first flag ("  -name") on, without the "Usage of" header.
func flagLines(out string) string {
	var b strings.Builder
	in := false
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "  -") {
			in = true
		}
		if in && l != "" {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// readGolden returns what the golden file path holds, once it has
// written got there when update is set (a test's -update-... flag).
func readGolden(t *testing.T, path, got string, update bool) string {
	t.Helper()
	if update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(want)
}

// TestCLIReference fails when docs/cli.md differs from what the
// commands' flag sets print; -update-cli rewrites it.
func TestCLIReference(t *testing.T) {
	const path = "../../docs/cli.md"
	got := cliReference(t)
	if want := readGolden(t, path, got, *updateCLI); got != want {
		t.Errorf("docs/cli.md is stale: run go test ./cmd/federate-node -run TestCLIReference -update-cli")
		gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
		for i := range max(len(gl), len(wl)) {
			if i >= len(gl) || i >= len(wl) || gl[i] != wl[i] {
				t.Logf("first difference at line %d:\n got %q\nwant %q", i+1, at(gl, i), at(wl, i))
				break
			}
		}
	}
	for _, want := range []string{"## node", "-federation-key", "## serve\n", "-log-format", "-profile", "## version"} {
		if !strings.Contains(got, want) {
			t.Errorf("the reference lacks %q", want)
		}
	}
}
