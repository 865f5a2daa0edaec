package core

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"", "plain", `q"b\s`, "ctl\x00\x1f\n", "ünï", "bad\xffutf8"} {
		b := appendJSONString(nil, s)
		if !json.Valid(b) {
			t.Errorf("%q: invalid JSON %s", s, b)
			continue
		}
		var got string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if got != strings.ToValidUTF8(s, "\ufffd") {
			t.Errorf("%q round-tripped to %q", s, got)
		}
	}
}
