package bench

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// bench timeadvance -inprocess runs and prints one JSON result; bad flags
// are usage errors.
func TestBenchTimeInProcess(t *testing.T) {
	var out, errOut bytes.Buffer
	code := Main([]string{"timeadvance", "-inprocess", "-federates", "3", "-steps", "50", "-json"}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var res TimeResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("%q: %v", out.String(), err)
	}
	if res.Bench != "timeadvance" || res.Federates != 3 || !res.InProcess || res.GrantsPerS <= 0 || res.Steps != 50 {
		t.Errorf("result %+v", res)
	}
	if res.CutRoundsPerGrant != 0 {
		t.Errorf("a TAR loop at lookahead 1 ran %v cut rounds per grant", res.CutRoundsPerGrant)
	}
	for _, args := range [][]string{
		{"-federates", "0"},
		{"-steps", "-1"},
		{"-lookahead", "0"},
		{"-nonsense"},
	} {
		errOut.Reset()
		if code := Main(append([]string{"timeadvance"}, args...), &out, &errOut); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, strings.TrimSpace(errOut.String()))
		}
	}
}
