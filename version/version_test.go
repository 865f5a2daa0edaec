package version

import (
	"strings"
	"testing"
)

func TestGet(t *testing.T) {
	i := Get()
	if i.Release == "" {
		t.Error("empty release")
	}
	if i.Protocol != Protocol {
		t.Errorf("protocol %d, want %d", i.Protocol, Protocol)
	}
	s := i.String()
	for _, want := range []string{"meshrti " + i.Release + "\n", "wire protocol 3\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("String() = %q, lacks %q", s, want)
		}
	}
	if r := RTI(); !strings.HasPrefix(r, "meshrti "+i.Release+" (IEEE 1516-2010") {
		t.Errorf("RTI() = %q", r)
	}
}

// A stamped release wins over the build information.
func TestStamp(t *testing.T) {
	old := stamp
	t.Cleanup(func() { stamp = old })
	stamp = "v9.8.7"
	if got := Get().Release; got != "v9.8.7" {
		t.Errorf("release %q, want the stamp", got)
	}
}
