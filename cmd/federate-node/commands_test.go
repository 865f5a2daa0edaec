package main

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/meshrti/meshrti/examples/demo"
	"github.com/meshrti/meshrti/internal/bench"
	"github.com/meshrti/meshrti/internal/cli"
)

// Every command of the table is listed by help, and only the internal
// ones (run in child processes) are left out.
func TestHelpListsEveryCommand(t *testing.T) {
	code, out, _ := runCmd(t, "help")
	if code != 0 {
		t.Fatalf("help: exit %d", code)
	}
	for _, c := range commands() {
		if c.Name == "bench-raw" {
			if strings.Contains(out, "bench-raw") {
				t.Error("help lists the internal bench-raw")
			}
			continue
		}
		if len(c.Help) == 0 {
			t.Errorf("command %q has no help line", c.Name)
		}
		if !strings.Contains(out, "\n  "+c.Name) {
			t.Errorf("help does not list %q:\n%s", c.Name, out)
		}
	}
	for _, h := range []string{"-h", "--help", "-help"} {
		if code, o, _ := runCmd(t, h); code != 0 || o != out {
			t.Errorf("%s: exit %d, output differs from help's", h, code)
		}
	}
	// No arguments: the usage on stderr, a usage error.
	if code, _, e := runCmd(t); code != 2 || e != out {
		t.Errorf("no arguments: exit %d, stderr %q", code, e)
	}
}

func TestUnknownCommand(t *testing.T) {
	code, out, errOut := runCmd(t, "frobnicate")
	if code != 2 || out != "" {
		t.Fatalf("exit %d, stdout %q; want 2 and nothing", code, out)
	}
	if !strings.HasPrefix(errOut, "federate-node: unknown command \"frobnicate\"\n") || !strings.Contains(errOut, "commands:") {
		t.Errorf("stderr %q", errOut)
	}
}

// kindsInHelp checks a table of kinds (bench's, demo's): every kind is
// named in a synopsis of the help the table generates, and dispatching
// it reaches its own flags (-h prints them, exit 2) rather than the
// unknown-kind error.
func kindsInHelp(t *testing.T, cmd string, table []cli.Command, unknown string) {
	t.Helper()
	var synopses []string
	for _, h := range cli.HelpOf(table) {
		synopses = append(synopses, h.Synopsis)
	}
	all := strings.Join(synopses, "\n")
	_, usageOut, _ := runCmd(t, "help")
	for _, h := range cli.HelpOf(table) {
		if !strings.Contains(usageOut, "  "+h.Synopsis) {
			t.Errorf("help does not print %q", h.Synopsis)
		}
	}
	for _, k := range table {
		if k.Name != "" && !strings.Contains(all, k.Name) {
			t.Errorf("%s %s: in no synopsis of help:\n%s", cmd, k.Name, all)
		}
		args := []string{cmd}
		if k.Name != "" {
			args = append(args, k.Name)
		}
		code, _, errOut := runCmd(t, append(args, "-h")...)
		if code != 2 || strings.Contains(errOut, unknown) || !strings.Contains(errOut, "Usage of") {
			t.Errorf("%q -h: exit %d, stderr %q; want its flags and exit 2", args, code, errOut)
		}
	}
	code, _, errOut := runCmd(t, cmd, "no-such-kind")
	if code != 2 || !strings.Contains(errOut, unknown+` "no-such-kind"`) {
		t.Errorf("%s no-such-kind: exit %d, stderr %q", cmd, code, errOut)
	}
}

func TestBenchKindsInHelp(t *testing.T) {
	kindsInHelp(t, "bench", bench.Kinds(), "unknown benchmark")
	// The message keeps its wording: scripts match it.
	_, _, errOut := runCmd(t, "bench", "x")
	if want := "federate-node bench: unknown benchmark \"x\" (want throughput, latency, timeadvance, lifecycle, ownership, fedpro, dis, record, or none for throughput and latency)\n"; errOut != want {
		t.Errorf("stderr %q\nwant   %q", errOut, want)
	}
}

func TestDemoKindsInHelp(t *testing.T) {
	kindsInHelp(t, "demo", demo.Kinds(), "unknown demo")
}

func TestWriteHelpColumns(t *testing.T) {
	var b strings.Builder
	cli.WriteHelp(&b, []cli.Command{{Name: "a", Help: []cli.HelpLine{
		{Synopsis: "short", Text: "one\ntwo"},
		{Synopsis: strings.Repeat("x", 29), Text: "long"},
	}}})
	want := "  short                        one\n" +
		"                               two\n" +
		"  " + strings.Repeat("x", 29) + "\n" +
		"                               long\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// The sub-commands of fom, serve and record come from tables too: help
// prints every row's synopsis, each synopsis starts with the command and
// the row's name, and dispatching a named row reaches its own flags (-h
// prints its usage, not the parent's).
func TestSubcommandsInHelp(t *testing.T) {
	_, usageOut, _ := runCmd(t, "help")
	for _, c := range []struct {
		cmd   string
		table []cli.Command
	}{{"fom", fomCommands()}, {"serve", serveCommands()}, {"record", recordCommands()}, {"dis", disCommands()}} {
		for _, k := range c.table {
			name := strings.TrimSpace(c.cmd + " " + k.Name)
			if len(k.Help) == 0 {
				t.Errorf("%s: no help line", name)
			}
			for _, h := range k.Help {
				if !strings.Contains(usageOut, "\n  "+h.Synopsis) {
					t.Errorf("help does not print %q", h.Synopsis)
				}
				if !strings.HasPrefix(h.Synopsis, name+" ") {
					t.Errorf("%s: synopsis %q", name, h.Synopsis)
				}
			}
			if k.Name == "" {
				continue
			}
			if _, _, errOut := runCmd(t, c.cmd, k.Name, "-h"); !strings.Contains(errOut, name) {
				t.Errorf("%s -h: stderr %q", name, errOut)
			}
		}
	}
	// The messages keep their wording: scripts match them.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"fom"}, "usage: federate-node fom inspect [--json] FILE... | fom validate [--strict] FILE...\n"},
		{[]string{"fom", "x"}, "federate-node fom: unknown cli.Command \"x\" (want inspect or validate)\n"},
	} {
		if code, _, errOut := runCmd(t, c.args...); code != 2 || errOut != c.want {
			t.Errorf("%q: exit %d, stderr %q\nwant %q", c.args, code, errOut, c.want)
		}
	}
}

// One vocabulary: -federation-key is the federation key on every command
// that joins (node, monitor, record, replay, serve); the old -key of the
// first four is taken with a warning; serve's -key is the TLS key; bad
// -profile, -log-level and -log-format values are usage errors.
func TestFlagVocabulary(t *testing.T) {
	for _, cmd := range [][]string{{"node"}, {"monitor"}, {"record"}, {"replay"}, {"serve"}} {
		_, _, errOut := runCmd(t, append(cmd, "-h")...)
		for _, f := range []string{"-federation-key", "-profile", "-log-level", "-log-format", "-seeds", "-gossip"} {
			if !strings.Contains(errOut, "  "+f+" ") {
				t.Errorf("%s has no %s flag", cmd[0], f)
			}
		}
		if cmd[0] == "serve" {
			if !strings.Contains(errOut, "TLS private key") {
				t.Errorf("serve's -key is not the TLS key:\n%s", errOut)
			}
			continue
		}
		if !strings.Contains(errOut, "deprecated: the federation KEY; use -federation-key") {
			t.Errorf("%s: -key is not the deprecated alias:\n%s", cmd[0], errOut)
		}
	}
	// -key is still taken, with a warning (the run then stops at the bad role).
	var nf nodeFlags
	fs := cli.NewCmd("node", io.Discard, io.Discard).FS
	var warn strings.Builder
	fs.SetOutput(&warn)
	nf.register(fs)
	if err := fs.Parse([]string{"-key", "0123456789abcdef-old"}); err != nil || nf.key != "0123456789abcdef-old" {
		t.Fatalf("-key: %v, key %q", err, nf.key)
	}
	if !strings.Contains(warn.String(), "federate-node node: -key is deprecated and will be removed: use -federation-key") {
		t.Errorf("no warning: %q", warn.String())
	}
	cfg, err := nf.config()
	if err != nil || string(cfg.Key) != "0123456789abcdef-old" {
		t.Errorf("config key %q, %v", cfg.Key, err)
	}
	for _, bad := range [][]string{{"-profile", "moon"}, {"-log-level", "loud"}, {"-log-format", "xml"}} {
		code, _, errOut := runCmd(t, append([]string{"node"}, bad...)...)
		if code != 2 || !strings.Contains(errOut, "invalid value") {
			t.Errorf("node %v: exit %d, %q", bad, code, errOut)
		}
	}
	var lf logFlags
	lfs := cli.NewCmd("x", io.Discard, io.Discard).FS
	var out strings.Builder
	lfs.SetOutput(&out)
	lf.register(lfs)
	if err := lfs.Parse([]string{"-log-format", "json", "-log-level", "warn"}); err != nil {
		t.Fatal(err)
	}
	log := lf.logger("test")
	log.Info().Msg("not shown")
	log.Warn().Str("k", "v").Msg("shown")
	var line map[string]any
	if err := json.Unmarshal([]byte(out.String()), &line); err != nil || line["message"] != "shown" || line["level"] != "warn" || line["k"] != "v" || line["time"] == nil {
		t.Errorf("json log %q: %v", out.String(), err)
	}
}

// The systemd unit's example configuration (deploy/systemd/serve.json,
// shown in docs/three-hosts.md) is one that serve takes: every key is a
// flag of serve, each value one the flag accepts.
func TestServeExampleConfig(t *testing.T) {
	fs := cli.NewCmd("serve", io.Discard, io.Discard).FS
	var sf serveFlags
	sf.register(fs)
	if err := sf.loadConfig("../../deploy/systemd/serve.json", fs); err != nil {
		t.Fatal(err)
	}
	if sf.Gossip != "0.0.0.0:7946" || sf.Seeds != "hostA:7946,hostB:7946" || sf.Profile != "lan" || sf.TTL != 1 || sf.logs.format != "json" || sf.SaveDir != "/var/lib/meshrti/saves" {
		t.Errorf("settings %+v", sf)
	}
}
