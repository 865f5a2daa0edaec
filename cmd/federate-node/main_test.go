package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func runCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

func TestInspectJSON(t *testing.T) {
	code, out, errOut := runCmd(t, "fom", "inspect", "--json", "../../fomxml/testdata/air.xml", "../../fomxml/testdata/ext.xml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got fddJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	want := map[string][]string{
		"HLAobjectRoot":                     {"HLAprivilegeToDeleteObject"},
		"HLAobjectRoot.Aircraft":            {"Callsign", "Position"},
		"HLAobjectRoot.Aircraft.Jet":        {"Engines"},
		"HLAobjectRoot.Aircraft.Helicopter": {"Rotors"},
	}
	for class, attrs := range want {
		if !slices.Equal(got.ObjectClasses[class], attrs) {
			t.Errorf("%s: %v, want %v", class, got.ObjectClasses[class], attrs)
		}
	}
	if !slices.Equal(got.InteractionClasses["HLAinteractionRoot.RadarContact"], []string{"Range", "Report", "Target"}) {
		t.Errorf("RadarContact: %v", got.InteractionClasses["HLAinteractionRoot.RadarContact"])
	}
	if got.InteractionClasses["HLAinteractionRoot.RadarContact.Lost"] == nil {
		t.Error("classes without parameters must map to [], not be missing or null")
	}
	if !slices.Equal(got.Dimensions, []string{"Altitude", "Band", "HLAfederate", "HLAserviceGroup"}) {
		t.Errorf("dimensions %v", got.Dimensions)
	}
	if !slices.IsSorted(got.DataTypes) || !slices.Contains(got.DataTypes, "Position3D") || !slices.Contains(got.DataTypes, "HLAinteger32BE") {
		t.Errorf("data types %v", got.DataTypes)
	}
}

// RPR FOM 2.0: BaseEntity declares EntityIdentifier and Spatial (in 2.0
// the acceleration vector lives inside Spatial), WeaponFire declares
// EventIdentifier.
func TestInspectJSONRPR(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "fom", "rpr2")
	files, _ := filepath.Glob(filepath.Join(dir, "*.xml"))
	if len(files) == 0 {
		t.Skipf("no RPR FOM at %s", dir)
	}
	code, out, errOut := runCmd(t, append([]string{"fom", "inspect", "--json"}, files...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got fddJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.ObjectClasses["HLAobjectRoot.BaseEntity"], []string{"EntityIdentifier", "EntityType", "IsPartOf", "RelativeSpatial", "Spatial"}) {
		t.Errorf("BaseEntity: %v", got.ObjectClasses["HLAobjectRoot.BaseEntity"])
	}
	if !slices.Contains(got.InteractionClasses["HLAinteractionRoot.WeaponFire"], "EventIdentifier") {
		t.Errorf("WeaponFire: %v", got.InteractionClasses["HLAinteractionRoot.WeaponFire"])
	}
}

func TestInspectSummary(t *testing.T) {
	code, out, _ := runCmd(t, "fom", "inspect", "../../fomxml/testdata/air.xml")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"1. HLAstandardMIM", "2. ../../fomxml/testdata/air.xml", "Aircraft", "- Position: Position3D, TimeStamp, HLAbestEffort", "RadarContact (TimeStamp, HLAreliable)", "Band: upper bound 3"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}

func TestValidate(t *testing.T) {
	code, out, _ := runCmd(t, "fom", "validate", "../../fomxml/testdata/air.xml")
	if code != 0 || !strings.HasPrefix(out, "ok: ") {
		t.Errorf("valid module: exit %d, %q", code, out)
	}
	code, out, _ = runCmd(t, "fom", "validate", "../../fomxml/testdata/air.xml", "../../fomxml/testdata/conflict.xml")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 1 || len(lines) != 3 {
		t.Fatalf("conflicting modules: exit %d, output:\n%s", code, out)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "../../fomxml/testdata/conflict.xml:") {
			t.Errorf("line %q is not file:line: message", l)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.xml")
	if err := os.WriteFile(bad, []byte("<objectModel>\n<objects>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runCmd(t, "fom", "validate", bad)
	if code != 1 || !strings.HasPrefix(out, bad+":") {
		t.Errorf("truncated module: exit %d, %q", code, out)
	}
	code, out, _ = runCmd(t, "fom", "validate", "no-such-file.xml")
	if code != 1 || !strings.Contains(out, "no-such-file.xml") {
		t.Errorf("missing file: exit %d, %q", code, out)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{}, {"bogus"}, {"fom"}, {"fom", "bogus"}, {"fom", "validate"}, {"fom", "inspect"}, {"fom", "inspect", "--nope", "x.xml"}} {
		if code, _, errOut := runCmd(t, args...); code != 2 || errOut == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 with a message", args, code, errOut)
		}
	}
	if code, out, _ := runCmd(t, "help"); code != 0 || !strings.Contains(out, "fom inspect") {
		t.Errorf("help: exit %d", code)
	}
}

func TestDemo(t *testing.T) {
	// The demo's saves go to a temporary directory it removes.
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	code, out, errOut := runCmd(t, "demo", "-aircraft", "2", "-steps", "3")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	for _, want := range []string{"joined: Aircraft-1, Aircraft-2, Radar", "radar sees Aircraft-1", "t=3    radar granted", "summary:",
		"every position update reached the radar",
		// Then a synchronization point, a save at t=4, three more
		// steps and a restore.
		"sync point ready: synchronized (3 federates)",
		"save checkpoint at t=4: saved",
		"t=7    every federate granted; the radar reflected 2 positions stamped 7",
		"restore checkpoint: restored, time back to t=4",
		"Aircraft-2  t=4, own state back as saved: grants 7 -> 4, sent 7 -> 4",
		"Radar       t=4, own state back as saved: grants 7 -> 4, reflected",
		"after the restore the radar reflected again the 2 positions stamped 5",
		// The MOM, read by a monitor: every federate's node answered.
		"the Management Object Model, as a monitor federate that just joined sees it:",
		"each row came from that federate's own node"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("the demo left %v in the temporary directory", left)
	}
}
