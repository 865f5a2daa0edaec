package demo

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// demo ddm, small: the radar reflects exactly the updates inside its
// square, the radios hear exactly their channel, and what nobody wants
// is not sent.
func TestDemoDDM(t *testing.T) {
	const aircraft, radios, steps, messages = 3, 3, 12, 2
	var out bytes.Buffer
	res, err := demoDDM(ddmFlags{
		aircraft: aircraft, radios: radios, steps: steps, messages: messages,
		demoCommon: demoCommon{timeout: time.Minute},
	}, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !res.OK() {
		t.Errorf("outcome %+v", res)
	}
	// Some updates lie inside the square and some outside, so both halves
	// of the radar's check mean something.
	if res.Updates != aircraft*steps || res.Inside == 0 || res.Inside == res.Updates {
		t.Errorf("%d updates, %d inside: want %d, some inside and some not", res.Updates, res.Inside, aircraft*steps)
	}
	if res.Reflected != res.Inside {
		t.Errorf("the radar reflected %d updates, want the %d inside", res.Reflected, res.Inside)
	}
	// The aircraft knew the radar's region before they flew: they sent
	// exactly the updates inside it.
	if want := uint64(res.Updates - res.Inside); res.Spared != want {
		t.Errorf("aircraft spared %d updates, want the %d outside", res.Spared, want)
	}
	// Radios 1 and 2 share channel 3 and hear each other's messages;
	// radio 3 is alone on channel 5, and its messages are not sent.
	if res.Messages != radios*messages || res.Due != 2*messages || res.Heard != res.Due {
		t.Errorf("radios sent %d messages, %d due, %d heard; want %d, %d, %d", res.Messages, res.Due, res.Heard, radios*messages, 2*messages, 2*messages)
	}
	if res.RadioSpared != messages {
		t.Errorf("radios spared %d messages, want radio 3's %d", res.RadioSpared, messages)
	}
	s := out.String()
	for _, want := range []string{
		"joined 7 federates",
		"radar sees Aircraft-",
		"Radio-2 (channel 3) hears \"Radio-1 on channel 3: message 1 of 2\"",
		"summary",
		"check: the radar reflected exactly the",
		"check: each radio heard exactly the messages",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "FAILED") || strings.Contains(s, "<- outside") {
		t.Errorf("output reports a failure:\n%s", s)
	}
	if t.Failed() {
		t.Logf("output:\n%s", s)
	}
}

// "demo ddm" is dispatched to the DDM demo, whose flags are checked;
// plain "demo" keeps its own flags.
func TestDemoDDMUsage(t *testing.T) {
	for _, args := range [][]string{
		{"demo", "ddm", "-aircraft", "0"},
		{"demo", "ddm", "-steps", "0"},
		{"demo", "ddm", "-radios", "-1"},
		{"demo", "ddm", "extra"},
		{"demo", "ddm", "-nonsense"},
	} {
		code, _, errOut := runCmd(t, args...)
		if code != 2 || !strings.Contains(errOut, "demo ddm") {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming demo ddm", args, code, errOut)
		}
	}
	if code, _, errOut := runCmd(t, "demo", "-radios", "2"); code != 2 || strings.Contains(errOut, "demo ddm") {
		t.Errorf("demo -radios: exit %d, stderr %q; want plain demo's usage error", code, errOut)
	}
}

// Half the default aircraft cross the radar's square, several times
// each, and half never come near it; every path stays in the space.
func TestDDMPaths(t *testing.T) {
	const n, steps = 6, 40
	crossing := 0
	for i := range n {
		path := ddmPath(i, n, steps)
		inside := 0
		for _, p := range path {
			if p.X < 100 || p.X > ddmSpace-100 || p.Y < 100 || p.Y > ddmSpace-100 {
				t.Errorf("aircraft %d at (%.0f, %.0f): out of the space", i+1, p.X, p.Y)
			}
			if ddmInside(p) {
				inside++
			}
		}
		if inside > 0 {
			crossing++
			if inside < 3 {
				t.Errorf("aircraft %d is inside the square at %d steps, want at least 3", i+1, inside)
			}
		}
	}
	if crossing != n/2 {
		t.Errorf("%d of %d aircraft cross the square, want %d", crossing, n, n/2)
	}
	// An update region is a square meter: inside when it overlaps the
	// radar's, upper bounds exclusive.
	for _, tc := range []struct {
		p    ddmPoint
		want bool
	}{
		{ddmPoint{4500, 4500}, true},
		{ddmPoint{4499.9, 5000}, false},
		{ddmPoint{5499.9, 5499.9}, true},
		{ddmPoint{5500, 5000}, false},
		{ddmPoint{5000, 5500.5}, false},
	} {
		if got := ddmInside(tc.p); got != tc.want {
			t.Errorf("ddmInside(%v) = %v, want %v", tc.p, got, tc.want)
		}
	}
}
