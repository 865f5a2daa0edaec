package demo

import (
	"bytes"
	"testing"
)

// runCmd runs "federate-node demo ARGS..." (args[0] is "demo") and
// returns its exit code and output.
func runCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	if len(args) == 0 || args[0] != "demo" {
		t.Fatalf("runCmd %v: not a demo command", args)
	}
	var o, e bytes.Buffer
	code = Main(args[1:], &o, &e)
	return code, o.String(), e.String()
}
