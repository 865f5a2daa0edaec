package dis

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer"
)

// openDIS returns the node binary and the directory of interop.js with
// open-dis 1.3.6 installed beside it, or skips the test naming what is
// missing. .ci/run installs both in CI.
func openDIS(t *testing.T) (node, dir string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs node")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found: install Node.js (apt-get install nodejs), then npm install --prefix dis/testdata/opendis; CI=true .ci/run does both")
	}
	dir, _ = filepath.Abs(filepath.Join("testdata", "opendis"))
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", "open-dis", "package.json"))
	var pkg struct{ Version string }
	if err != nil || json.Unmarshal(b, &pkg) != nil || pkg.Version != "1.3.6" {
		t.Skip("open-dis 1.3.6 not installed in dis/testdata/opendis: npm install --prefix dis/testdata/opendis (CI=true .ci/run does it)")
	}
	return node, dir
}

// nodeProc is interop.js running, its output lines.
type nodeProc struct {
	cmd   *exec.Cmd
	lines chan string
}

func startNode(t *testing.T, node, dir string, stdin string, args ...string) *nodeProc {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join(dir, "interop.js")}, args...)...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &nodeProc{cmd: cmd, lines: make(chan string, 1000)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		cmd.Wait()
	})
	return p
}

// await waits up to d for a line that take accepts; the error says why
// none came.
func (p *nodeProc) await(d time.Duration, take func(line string) bool) error {
	timeout := time.After(d)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				return errors.New("interop.js ended")
			}
			if take(l) {
				return nil
			}
		case <-timeout:
			return fmt.Errorf("none within %v", d)
		}
	}
}

// line waits for a line with the prefix; it returns the rest.
func (p *nodeProc) line(t *testing.T, prefix string, d time.Duration) string {
	t.Helper()
	var rest string
	err := p.await(d, func(l string) bool {
		r, ok := strings.CutPrefix(l, prefix)
		rest = r
		return ok
	})
	if err != nil {
		t.Fatalf("no %q from interop.js: %v", prefix, err)
	}
	return rest
}

// pdu waits for a decoded PDU match accepts.
func (p *nodeProc) pdu(t *testing.T, d time.Duration, what string, match func(map[string]any) bool) map[string]any {
	t.Helper()
	var m map[string]any
	err := p.await(d, func(l string) bool {
		m = nil
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			return false
		}
		if e, ok := m["error"]; ok {
			t.Fatalf("open-dis could not decode a PDU of the gateway: %v", e)
		}
		return match(m)
	})
	if err != nil {
		t.Fatalf("open-dis decoded no %s: %v", what, err)
	}
	return m
}

// get reads a path of a decoded JSON object ("entityID.siteID").
func get(m map[string]any, path string) any {
	var v any = m
	for _, k := range strings.Split(path, ".") {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

func num(v any) float64 {
	f, _ := v.(float64)
	return f
}

// Interoperability with open-dis (npm, 1.3.6): PDUs open-dis makes (Entity
// State of versions 6 and 7, Fire, Detonation, Attribute) are seen by an
// HLA federate with the same values; PDUs the gateway makes of an HLA
// federate's instance and interactions are decoded by open-dis (versions
// 7 and 6) with the same values, field by field.
func TestOpenDIS(t *testing.T) {
	node, dir := openDIS(t)
	r := newRig(t)
	recv7 := startNode(t, node, dir, "", "recv", "7")
	port7 := recv7.line(t, "port ", 10*time.Second)
	recv6 := startNode(t, node, dir, "", "recv", "6")
	port6 := recv6.line(t, "port ", 10*time.Second)
	a := r.gateway(Config{Federate: r.join("fed", "gw7"), DIS: "127.0.0.1:0", Send: "127.0.0.1:" + port7, Exercise: 4, Site: 90, Application: 1})
	r.gateway(Config{Federate: r.join("fed", "gw6"), DIS: "127.0.0.1:0", Send: "127.0.0.1:" + port6, Exercise: 5, Site: 91, Application: 1, Version: 6})
	hla := r.join("fed", "hla")
	r.subscribeAll(hla)
	aircraft := r.publish(hla, "Aircraft")

	// --- open-dis to the federation ---
	chars := func(s string) []int {
		c := make([]int, 11)
		for i := range s {
			c[i] = int(s[i])
		}
		return c
	}
	location := map[string]any{"x": 4510000.5, "y": 220000.25, "z": 4480000.75}
	espdu7 := map[string]any{
		"exerciseID": 4, "timestamp": 0x1234,
		"entityID": map[string]any{"siteID": 11, "applicationID": 22, "entityID": 33}, "forceId": 2,
		"entityType":            map[string]any{"entityKind": 1, "domain": 1, "country": 225, "category": 1, "subcategory": 2, "specific": 3, "extra": 0},
		"alternativeEntityType": map[string]any{"entityKind": 1, "domain": 1, "country": 225, "category": 1, "subcategory": 2, "specific": 4, "extra": 0},
		"entityLinearVelocity":  map[string]any{"x": 1.5, "y": -2, "z": 0.25},
		"entityLocation":        location,
		"entityOrientation":     map[string]any{"psi": 0.5, "theta": -0.75, "phi": 3},
		"entityAppearance":      3<<3 | 1<<22 | 1<<12,
		"deadReckoningParameters": map[string]any{"deadReckoningAlgorithm": 4,
			"entityLinearAcceleration": map[string]any{"x": 1.25, "y": 0, "z": 0}, "entityAngularVelocity": map[string]any{"x": 0, "y": 0, "z": 0.125}},
		"marking":      map[string]any{"characterSet": 1, "characters": chars("OPENDIS7")},
		"capabilities": 5,
	}
	espdu6 := map[string]any{
		"exerciseID": 4, "timestamp": 0x5678,
		"entityID": map[string]any{"site": 11, "application": 22, "entity": 34}, "forceId": 1,
		"entityType":              map[string]any{"entityKind": 1, "domain": 2, "country": 225, "category": 1, "subcategory": 1, "spec": 0, "extra": 0},
		"entityLinearVelocity":    map[string]any{"x": 200, "y": 10, "z": -1},
		"entityLocation":          map[string]any{"x": 4511000.0, "y": 221000.0, "z": 4481000.0},
		"entityOrientation":       map[string]any{"psi": 1, "theta": 0, "phi": 0},
		"entityAppearance":        1 << 16, // afterburner
		"deadReckoningParameters": map[string]any{"deadReckoningAlgorithm": 2},
		"marking":                 map[string]any{"characterSet": 1, "characters": chars("OPENDIS6")},
	}
	descriptor := map[string]any{"munitionType": map[string]any{"entityKind": 2, "domain": 2, "country": 225, "category": 2, "subcategory": 1, "specific": 0, "extra": 0},
		"warhead": 1000, "fuse": 1000, "quantity": 2, "rate": 60}
	fire := map[string]any{"exerciseID": 4, "timestamp": 0x99,
		"firingEntityID": map[string]any{"siteID": 11, "applicationID": 22, "entityID": 33}, "targetEntityID": map[string]any{"siteID": 11, "applicationID": 22, "entityID": 34},
		"eventID": map[string]any{"simulationAddress": map[string]any{"site": 11, "application": 22}, "eventNumber": 5}, "fireMissionIndex": 9,
		"locationInWorldCoordinates": location, "descriptor": descriptor, "velocity": map[string]any{"x": 300, "y": 0, "z": 5}, "range": 2500}
	detonation := map[string]any{"exerciseID": 4, "timestamp": 0x9a,
		"firingEntityID": map[string]any{"siteID": 11, "applicationID": 22, "entityID": 33}, "targetEntityID": map[string]any{"siteID": 11, "applicationID": 22, "entityID": 34},
		"eventID":  map[string]any{"simulationAddress": map[string]any{"site": 11, "application": 22}, "eventNumber": 5},
		"velocity": map[string]any{"x": 250, "y": 0, "z": -3}, "locationInWorldCoordinates": location, "descriptor": descriptor,
		"locationOfEntityCoordinates": map[string]any{"x": 1, "y": 2, "z": 0.5}, "detonationResult": 1}
	attribute := map[string]any{"pduType": 72, "exerciseID": 4, "originatingSimulationAddress": map[string]any{"site": 11, "application": 22},
		"attributeRecordPduType": 1, "attributeRecordProtocolVersion": 1, "masterAttributeRecordType": DefaultNamedRecordType, "numberAttributeRecordSet": 1}
	line := func(typ string, fields map[string]any, extra string) string {
		b, _ := json.Marshal(map[string]any{"type": typ, "fields": fields})
		if extra != "" {
			b = append(b[:len(b)-1], ","+extra+"}"...)
		}
		return string(b) + "\n"
	}
	// AcousticSignatureIndex is an Integer16: 21 is 00 15.
	sets := fmt.Sprintf(`"sets":[{"entity":[11,22,33],"records":[{"type":%d,"name":"AcousticSignatureIndex","value":[0,21]}]}]`, DefaultNamedRecordType)
	to := a.ListenAddr().String()
	host, port, _ := strings.Cut(to, ":")
	// The version 6 entity goes first, so that the fire knows its target.
	send6 := startNode(t, node, dir, line("EntityStatePdu", espdu6, ""), "send", "6", host, port)
	send6.line(t, "sent EntityStatePdu", 10*time.Second)
	send7 := startNode(t, node, dir, line("EntityStatePdu", espdu7, "")+line("FirePdu", fire, "")+line("DetonationPdu", detonation, "")+line("AttributePdu", attribute, sets), "send", "7", host, port)

	byName := map[string]map[string]any{} // instance name: its values by attribute, decoded
	classOf := map[peer.ObjectInstanceHandle]*fomxml.ObjectClass{}
	names := map[peer.ObjectInstanceHandle]string{}
	var fireVals, detVals map[string]any
	deadline := time.Now().Add(15 * time.Second)
	done := func() bool {
		v33, v34 := findMarking(byName, "OPENDIS7"), findMarking(byName, "OPENDIS6")
		return v33 != nil && v34 != nil && v33["AcousticSignatureIndex"] != nil && fireVals != nil && detVals != nil
	}
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("the federation saw %d entities, fire %v, detonation %v", len(byName), fireVals != nil, detVals != nil)
		}
		ev := next(t, hla, 15*time.Second, "open-dis's PDUs in the federation", func(peer.Event) bool { return true })
		switch ev := ev.(type) {
		case peer.DiscoverObjectInstance:
			c, _ := r.m.fdd.ObjectClassByHandle(ev.Class)
			classOf[ev.Object], names[ev.Object] = c, ev.Name
		case peer.ReflectAttributeValues:
			c := classOf[ev.Object]
			if c == nil {
				continue
			}
			vals := byName[names[ev.Object]]
			if vals == nil {
				vals = map[string]any{"class": c.Name}
				byName[names[ev.Object]] = vals
			}
			for k, v := range r.decodeValues(c, ev.Values) {
				vals[k] = v
			}
		case peer.ReceiveInteraction:
			ic, _ := r.m.fdd.InteractionClassByHandle(ev.Class)
			vals := map[string]any{}
			for h, b := range ev.Values {
				p, _ := ic.ParameterByHandle(h)
				v, err := r.cd.Decode(p.DataType, b)
				if err != nil {
					t.Fatalf("%s.%s: %v", ic.Name, p.Name, err)
				}
				vals[p.Name] = v
			}
			if ic.Name == "WeaponFire" {
				fireVals = vals
			} else {
				detVals = vals
			}
		}
	}
	send7.line(t, "sent AttributePdu", 5*time.Second)
	tank, jet := findMarking(byName, "OPENDIS7"), findMarking(byName, "OPENDIS6")
	tankName, jetName := "", ""
	for n, v := range byName {
		switch {
		case v["class"] == "GroundVehicle":
			tankName = n
		case v["class"] == "Aircraft":
			jetName = n
		}
	}
	check := func(what string, got, want any) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	check("tank class", tank["class"], "GroundVehicle")
	check("tank EntityIdentifier", tank["EntityIdentifier"], map[string]any{"EntityNumber": uint64(33), "FederateIdentifier": map[string]any{"ApplicationID": uint64(22), "SiteID": uint64(11)}})
	check("tank EntityType", tank["EntityType"], map[string]any{"Category": uint64(1), "CountryCode": uint64(225), "Domain": uint64(1), "EntityKind": uint64(1), "Extra": uint64(0), "Specific": uint64(3), "Subcategory": uint64(2)})
	check("tank AlternateEntityType.Specific", get(tank, "AlternateEntityType.Specific"), uint64(4))
	check("tank ForceIdentifier", tank["ForceIdentifier"], "Opposing")
	check("tank DamageState", tank["DamageState"], "Destroyed")
	check("tank PowerPlantOn", tank["PowerPlantOn"], "True")
	check("tank HeadLightsOn", tank["HeadLightsOn"], "True")
	check("tank HasRecoveryCap", tank["HasRecoveryCap"], "True")
	check("tank HasFuelSupplyCap", tank["HasFuelSupplyCap"], "False")
	check("tank AcousticSignatureIndex", tank["AcousticSignatureIndex"], int64(21))
	sp := get(tank, "Spatial.SpatialRVW").(map[string]any)
	check("tank Spatial algorithm", get(tank, "Spatial.DeadReckoningAlgorithm"), "DRM_RVW")
	check("tank WorldLocation", sp["WorldLocation"], map[string]any{"X": 4510000.5, "Y": 220000.25, "Z": 4480000.75})
	check("tank Orientation", sp["Orientation"], map[string]any{"Phi": 3.0, "Psi": 0.5, "Theta": -0.75})
	check("tank VelocityVector", sp["VelocityVector"], map[string]any{"XVelocity": 1.5, "YVelocity": -2.0, "ZVelocity": 0.25})
	check("tank AccelerationVector", sp["AccelerationVector"], map[string]any{"XAcceleration": 1.25, "YAcceleration": 0.0, "ZAcceleration": 0.0})
	check("tank AngularVelocity", sp["AngularVelocity"], map[string]any{"XAngularVelocity": 0.0, "YAngularVelocity": 0.0, "ZAngularVelocity": 0.125})
	check("jet class", jet["class"], "Aircraft")
	check("jet EntityIdentifier.EntityNumber", get(jet, "EntityIdentifier.EntityNumber"), uint64(34))
	check("jet AfterburnerOn", jet["AfterburnerOn"], "True")
	check("jet Spatial algorithm", get(jet, "Spatial.DeadReckoningAlgorithm"), "DRM_FPW")
	check("jet WorldLocation.X", get(jet, "Spatial.SpatialFPW.WorldLocation.X"), 4511000.0)
	check("jet VelocityVector", get(jet, "Spatial.SpatialFPW.VelocityVector"), map[string]any{"XVelocity": 200.0, "YVelocity": 10.0, "ZVelocity": -1.0})
	check("fire FiringObjectIdentifier", fireVals["FiringObjectIdentifier"], tankName)
	check("fire TargetObjectIdentifier", fireVals["TargetObjectIdentifier"], jetName)
	check("fire EventIdentifier", fireVals["EventIdentifier"], map[string]any{"EventCount": uint64(5), "IssuingObjectIdentifier": tankName})
	check("fire FireMissionIndex", fireVals["FireMissionIndex"], uint64(9))
	check("fire FireControlSolutionRange", fireVals["FireControlSolutionRange"], 2500.0)
	check("fire QuantityFired", fireVals["QuantityFired"], uint64(2))
	check("fire RateOfFire", fireVals["RateOfFire"], uint64(60))
	check("fire WarheadType", fireVals["WarheadType"], "HighExplosive")
	check("fire InitialVelocityVector", fireVals["InitialVelocityVector"], map[string]any{"XVelocity": 300.0, "YVelocity": 0.0, "ZVelocity": 5.0})
	check("fire FiringLocation.Z", get(fireVals, "FiringLocation.Z"), 4480000.75)
	check("detonation DetonationResultCode", detVals["DetonationResultCode"], "EntityImpact")
	check("detonation RelativeDetonationLocation", detVals["RelativeDetonationLocation"], map[string]any{"BodyXDistance": 1.0, "BodyYDistance": 2.0, "BodyZDistance": 0.5})
	check("detonation TargetObjectIdentifier", detVals["TargetObjectIdentifier"], jetName)
	check("detonation MunitionType.Category", get(detVals, "MunitionType.Category"), uint64(2))

	// --- the federation to open-dis ---
	es := &EntityState{ID: EntityID{70, 71, 72}, Force: 3, Type: EntityType{1, 2, 222, 1, 5, 0, 0}, AlternateType: EntityType{1, 2, 222, 1, 6, 0, 0},
		Location: WorldCoordinates{4512345.5, 222222.25, 4482222.125}, Orientation: EulerAngles{0.25, 0.125, -0.5}, Velocity: Vector{150, 2, -3},
		DeadReckoning: DeadReckoning{Algorithm: DRFVW, LinearAcceleration: Vector{0.5, 0.25, 0}},
		Appearance:    1<<13 | 1<<14 | 2<<3, Marking: NewMarking("FROM-HLA"), Capabilities: 2}
	obj, _ := hla.RegisterObjectInstance(aircraft.Handle, "")
	vals := peer.AttributeValues{}
	r.m.EntityValues(aircraft.Handle, es, nil, vals)
	ac, _ := r.m.Attribute(aircraft.Handle, "AcousticSignatureIndex")
	vals[ac.Handle], _ = r.cd.Encode(ac.DataType, -7)
	isOurs := func(version float64, idField string) func(m map[string]any) bool {
		return func(m map[string]any) bool {
			return num(m["pduType"]) == 1 && num(m["protocolVersion"]) == version && num(get(m, "entityID."+idField)) == 72
		}
	}
	var got7 map[string]any
	for try := 0; got7 == nil; try++ {
		if try == 30 {
			t.Fatal("open-dis never decoded the HLA entity")
		}
		if err := hla.UpdateAttributeValues(obj, vals, r.m.Tag(0x4444)); err != nil {
			t.Fatal(err)
		}
		select {
		case l := <-recv7.lines:
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) == nil && isOurs(7, "entityID")(m) {
				got7 = m
			}
		case <-time.After(300 * time.Millisecond):
		}
	}
	got6 := recv6.pdu(t, 10*time.Second, "the HLA entity in version 6", isOurs(6, "entity"))
	for _, c := range []struct {
		m          map[string]any
		site, ent  string
		spec, algo string
		length     string
	}{{got7, "siteID", "entityID", "specific", "deadReckoningParameters", "length"}, {got6, "site", "entity", "spec", "deadReckoningParameters", "pduLength"}} {
		v := c.m["protocolVersion"]
		check(fmt.Sprint("v", v, " exercise"), c.m["exerciseID"], map[float64]float64{7: 4, 6: 5}[num(v)])
		check(fmt.Sprint("v", v, " length"), c.m[c.length], 144.0)
		check(fmt.Sprint("v", v, " timestamp"), c.m["timestamp"], float64(0x4444))
		check(fmt.Sprint("v", v, " site"), get(c.m, "entityID."+c.site), 70.0)
		check(fmt.Sprint("v", v, " force"), c.m["forceId"], 3.0)
		check(fmt.Sprint("v", v, " type"), get(c.m, "entityType.country"), 222.0)
		check(fmt.Sprint("v", v, " subcategory"), get(c.m, "entityType.subcategory"), 5.0)
		check(fmt.Sprint("v", v, " alternative subcategory"), get(c.m, "alternativeEntityType.subcategory"), 6.0)
		check(fmt.Sprint("v", v, " location"), c.m["entityLocation"], map[string]any{"x": 4512345.5, "y": 222222.25, "z": 4482222.125})
		check(fmt.Sprint("v", v, " orientation"), c.m["entityOrientation"], map[string]any{"psi": 0.25, "theta": 0.125, "phi": -0.5})
		check(fmt.Sprint("v", v, " velocity"), c.m["entityLinearVelocity"], map[string]any{"x": 150.0, "y": 2.0, "z": -3.0})
		check(fmt.Sprint("v", v, " algorithm"), get(c.m, c.algo+".deadReckoningAlgorithm"), 5.0)
		check(fmt.Sprint("v", v, " acceleration"), get(c.m, c.algo+".entityLinearAcceleration"), map[string]any{"x": 0.5, "y": 0.25, "z": 0.0})
		check(fmt.Sprint("v", v, " appearance"), c.m["entityAppearance"], float64(es.Appearance))
		check(fmt.Sprint("v", v, " capabilities"), c.m["capabilities"], 2.0)
		check(fmt.Sprint("v", v, " character set"), get(c.m, "marking.characterSet"), 1.0)
		mk := get(c.m, "marking.characters").([]any)
		var s strings.Builder
		for _, ch := range mk {
			if n := num(ch); n != 0 {
				s.WriteByte(byte(n))
			}
		}
		check(fmt.Sprint("v", v, " marking"), s.String(), "FROM-HLA")
	}
	attr := recv7.pdu(t, 5*time.Second, "the attribute PDU", func(m map[string]any) bool { return num(m["pduType"]) == 72 })
	check("attribute origin", attr["originatingSimulationAddress"], map[string]any{"site": 90.0, "application": 1.0})
	check("attribute record PDU type", attr["attributeRecordPduType"], 1.0)
	check("attribute sets", attr["sets"], []any{map[string]any{"entity": []any{70.0, 71.0, 72.0}, "records": []any{
		map[string]any{"type": float64(DefaultNamedRecordType), "length": 40.0, "name": "AcousticSignatureIndex", "value": []any{255.0, 249.0}}}}})

	// WeaponFire and MunitionDetonation from the federation.
	fv := peer.ParameterValues{}
	r.m.FireValues(&Fire{Firing: es.ID, Target: EntityID{11, 22, 33}, Event: EventID{70, 71, 9}, Range: 1234, FireMissionIndex: 4,
		Location: es.Location, Velocity: Vector{10, 20, 30},
		Burst: BurstDescriptor{Munition: EntityType{2, 2, 225, 2, 1, 0, 0}, Warhead: 1000, Fuse: 1000, Quantity: 3, Rate: 0}},
		mapNames{es.ID: mustName(t, hla, obj), {11, 22, 33}: tankName}, fv)
	if err := hla.SendInteraction(r.m.FireClass().Handle, fv, r.m.Tag(0x77)); err != nil {
		t.Fatal(err)
	}
	f := recv7.pdu(t, 5*time.Second, "the fire", func(m map[string]any) bool { return num(m["pduType"]) == 2 })
	check("fire firing", f["firingEntityID"], map[string]any{"siteID": 70.0, "applicationID": 71.0, "entityID": 72.0})
	check("fire target", f["targetEntityID"], map[string]any{"siteID": 11.0, "applicationID": 22.0, "entityID": 33.0})
	check("fire event", f["eventID"], map[string]any{"simulationAddress": map[string]any{"site": 70.0, "application": 71.0}, "eventNumber": 9.0})
	check("fire range", f["range"], 1234.0)
	check("fire mission", f["fireMissionIndex"], 4.0)
	check("fire descriptor", f["descriptor"], map[string]any{"munitionType": map[string]any{"entityKind": 2.0, "domain": 2.0, "country": 225.0, "category": 2.0, "subcategory": 1.0, "specific": 0.0, "extra": 0.0},
		"warhead": 1000.0, "fuse": 1000.0, "quantity": 3.0, "rate": 0.0})
	check("fire velocity", f["velocity"], map[string]any{"x": 10.0, "y": 20.0, "z": 30.0})
	check("fire timestamp", f["timestamp"], float64(0x77))
	if d := num(get(f, "locationInWorldCoordinates.x")) - es.Location.X; math.Abs(d) > 0 {
		t.Errorf("fire location x off by %v", d)
	}
}

func findMarking(byName map[string]map[string]any, marking string) map[string]any {
	for _, v := range byName {
		m, ok := v["Marking"].(map[string]any)
		if !ok {
			continue
		}
		if b, ok := m["MarkingData"].([]byte); ok && strings.TrimRight(string(b), "\x00") == marking {
			return v
		}
	}
	return nil
}

func mustName(t *testing.T, f *peer.Federate, obj peer.ObjectInstanceHandle) string {
	t.Helper()
	n, err := f.GetObjectInstanceName(obj)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
