package gossip

import (
	"fmt"
	"testing"
)

// TestEnumNames: kinds and states print by name, unknown values by number.
func TestEnumNames(t *testing.T) {
	for _, tc := range []struct {
		v    fmt.Stringer
		want string
	}{
		{EventJoined, "joined"},
		{EventFederationModulesChanged, "federation-modules-changed"},
		{EventKind(0), "EventKind(0)"},
		{EventKind(-1), "EventKind(-1)"},
		{EventFederationModulesChanged + 1, fmt.Sprintf("EventKind(%d)", int(EventFederationModulesChanged)+1)},
		{MemberAlive, "alive"},
		{MemberLeft, "left"},
		{MemberState(3), "MemberState(3)"},
	} {
		if got := tc.v.String(); got != tc.want {
			t.Errorf("%#v.String() = %q, want %q", tc.v, got, tc.want)
		}
	}
}
