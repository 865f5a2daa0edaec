package main

import (
	"flag"
	"io"
	"testing"
	"time"

	"github.com/meshrti/meshrti/internal/cli"
	"github.com/meshrti/meshrti/peer"
)

// TestStepHoldFlag: -step-hold reaches peer.Config.StepHold for node
// and serve; without the flag $MESHRTI_STEP_HOLD does; without either the
// configuration keeps 0 (the peer package's default bound).
func TestStepHoldFlag(t *testing.T) {
	// parse registers a command's flags, parses args and returns the
	// StepHold of the configuration it builds.
	parse := func(register func(*flag.FlagSet), config func() (peer.Config, error), args ...string) time.Duration {
		t.Helper()
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		register(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		cfg, err := config()
		if err != nil {
			t.Fatal(err)
		}
		return cfg.StepHold
	}
	node := func(args ...string) time.Duration {
		var j joinFlags
		return parse(j.register, func() (peer.Config, error) { return j.config("test") }, args...)
	}
	serve := func(args ...string) time.Duration {
		var sf serveFlags
		return parse(sf.register, sf.base, args...)
	}
	t.Setenv(cli.StepHoldEnv, "")
	if got := node(); got != 0 {
		t.Errorf("node without flag or env: StepHold %v, want 0", got)
	}
	if got := node("-step-hold", "-1ns"); got != -time.Nanosecond {
		t.Errorf("node -step-hold -1ns: StepHold %v", got)
	}
	if got := serve("-step-hold", "200us"); got != 200*time.Microsecond {
		t.Errorf("serve -step-hold 200us: StepHold %v", got)
	}
	t.Setenv(cli.StepHoldEnv, "-1s")
	if got, want := node(), -time.Second; got != want {
		t.Errorf("node with $%s=-1s: StepHold %v, want %v", cli.StepHoldEnv, got, want)
	}
	if got, want := serve(), -time.Second; got != want {
		t.Errorf("serve with $%s=-1s: StepHold %v, want %v", cli.StepHoldEnv, got, want)
	}
	if got := node("-step-hold", "30us"); got != 30*time.Microsecond {
		t.Errorf("the flag does not win over $%s: StepHold %v", cli.StepHoldEnv, got)
	}
	t.Setenv(cli.StepHoldEnv, "soon")
	if got := node(); got != 0 {
		t.Errorf("node with an unreadable $%s: StepHold %v, want 0", cli.StepHoldEnv, got)
	}
}
