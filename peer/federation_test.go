package peer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer/transport"
)

func TestFederationLifecycle(t *testing.T) {
	reg := NewMemRegistry()
	net := transport.NewNetwork(transport.NetworkConfig{Seed: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	doc := testDoc(t)
	cfg := func(name string) Config {
		return Config{Federation: "life", FederateName: name, FOMModules: []*fomxml.Document{doc},
			Control: reg.Control("life"), Transport: net.Endpoint(name + time.Now().String())}
	}
	if _, err := Join(ctx, cfg("early")); !errors.Is(err, ErrFederationExecutionDoesNotExist) {
		t.Errorf("join before create: %v", err)
	}
	if err := DestroyFederationExecution(ctx, cfg("x")); !errors.Is(err, ErrFederationExecutionDoesNotExist) {
		t.Errorf("destroy before create: %v", err)
	}
	if err := CreateFederationExecution(ctx, cfg("x")); err != nil {
		t.Fatal(err)
	}
	if err := CreateFederationExecution(ctx, cfg("x")); !errors.Is(err, ErrFederationExecutionAlreadyExists) {
		t.Errorf("second create: %v", err)
	}
	bad := cfg("x")
	bad.FOMFiles = []string{"no/such/file.xml"}
	if err := CreateFederationExecution(ctx, bad); !errors.Is(err, ErrCouldNotOpenFDD) {
		t.Errorf("create with a missing FOM: %v", err)
	}
	if list, err := ListFederationExecutions(ctx, cfg("x")); err != nil || !slices.Equal(list, []FederationExecutionInformation{fei("life", "HLAfloat64Time")}) {
		t.Errorf("list: %v, %v", list, err)
	}
	f, err := Join(ctx, cfg("A"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Join(ctx, cfg("A")); !errors.Is(err, ErrFederateNameAlreadyInUse) {
		t.Errorf("same name twice: %v", err)
	}
	if ms, err := ListFederationExecutionMembers(ctx, cfg("x")); err != nil || len(ms) != 1 || ms[0].Name != "A" || ms[0].Handle != f.Handle() {
		t.Errorf("members: %v, %v", ms, err)
	}
	// A member asks too; the answer is a callback. An integer-time
	// federation beside it is listed with its time.
	other := cfg("x")
	other.Federation, other.Control, other.TimeRepresentation = "count", reg.Control("count"), HLAinteger64Time
	if err := CreateFederationExecution(ctx, other); err != nil {
		t.Fatal(err)
	}
	if err := f.ListFederationExecutions(ctx); err != nil {
		t.Fatal(err)
	}
	want := []FederationExecutionInformation{fei("count", "HLAinteger64Time"), fei("life", "HLAfloat64Time")}
	if ev := waitEvent[ReportFederationExecutions](t, f); !slices.Equal(ev.Executions, want) {
		t.Errorf("report: %v", ev.Executions)
	}
	other.Control = reg.Control("count") // Create closed the first
	if err := DestroyFederationExecution(ctx, other); err != nil {
		t.Fatal(err)
	}
	if err := DestroyFederationExecution(ctx, cfg("x")); !errors.Is(err, ErrFederatesCurrentlyJoined) {
		t.Errorf("destroy while joined: %v", err)
	}
	if err := f.ResignFederationExecution(ctx, ResignAction(99)); !errors.Is(err, ErrInvalidResignAction) {
		t.Errorf("bad resign action: %v", err)
	}
	if err := f.ResignFederationExecution(ctx, DeleteObjects); err != nil {
		t.Fatal(err)
	}
	if err := DestroyFederationExecution(ctx, cfg("x")); err != nil {
		t.Errorf("destroy after resign: %v", err)
	}
	if list, _ := ListFederationExecutions(ctx, cfg("x")); len(list) != 0 {
		t.Errorf("list after destroy: %v", list)
	}
	if _, err := ListFederationExecutionMembers(ctx, cfg("x")); !errors.Is(err, ErrFederationExecutionDoesNotExist) {
		t.Errorf("members after destroy: %v", err)
	}
}

func fei(name, time string) FederationExecutionInformation {
	return FederationExecutionInformation{FederationExecutionName: name, LogicalTimeImplementationName: time}
}

// testMIM returns the standard MIM's text changed by replacing old with
// new once, parsed under the designator name.
func testMIM(t *testing.T, name, old, new string) *fomxml.Document {
	t.Helper()
	src := string(fomxml.StandardMIMXML())
	if !strings.Contains(src, old) {
		t.Fatalf("the standard MIM has no %q", old)
	}
	d, err := fomxml.ParseBytes(name, []byte(strings.Replace(src, old, new, 1)))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestCreateWithMIM(t *testing.T) {
	reg := NewMemRegistry()
	net := transport.NewNetwork(transport.NetworkConfig{Seed: 2})
	ctx := t.Context()
	const manager = "<objectClass>\n        <name>HLAmanager</name>"
	extended := testMIM(t, "extendedMIM.xml", manager,
		"<objectClass><name>MIMExtra</name><sharing>PublishSubscribe</sharing></objectClass>\n      "+manager)
	lacking := testMIM(t, "lackingMIM.xml", "<name>HLAfederateHandle</name>", "<name>HLAfederateNumber</name>")
	std, err := fomxml.ParseBytes(fomxml.MIMDesignator, fomxml.StandardMIMXML())
	if err != nil {
		t.Fatal(err)
	}
	endpoints := 0
	cfg := func(name string) Config {
		endpoints++
		return Config{Federation: "mim", FederateName: name, FOMModules: []*fomxml.Document{testDoc(t)},
			Control: reg.Control("mim"), Transport: net.Endpoint(fmt.Sprint(name, endpoints))}
	}
	for _, c := range []struct {
		name string
		set  func(*Config)
		want error
	}{
		{"no MIM", func(*Config) {}, ErrCouldNotOpenMIM},
		{"missing file", func(c *Config) { c.MIMFile = filepath.Join(t.TempDir(), "none.xml") }, ErrCouldNotOpenMIM},
		{"the standard MIM's designator", func(c *Config) { c.MIMFile = "HLAstandardMIM" }, ErrDesignatorIsHLAstandardMIM},
		{"the standard MIM itself", func(c *Config) { c.MIMModule = std }, ErrDesignatorIsHLAstandardMIM},
		{"not XML", func(c *Config) {
			c.MIMFile = filepath.Join(t.TempDir(), "garbled.xml")
			if err := os.WriteFile(c.MIMFile, []byte("<objectModel"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, ErrErrorReadingMIM},
		{"lacking an attribute", func(c *Config) { c.MIMModule = lacking }, ErrErrorReadingMIM},
	} {
		c2 := cfg("x")
		c.set(&c2)
		err := CreateFederationExecutionWithMIM(ctx, c2)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if c.want == ErrErrorReadingMIM && c.name == "lacking an attribute" && !strings.Contains(err.Error(), "HLAfederateHandle") {
			t.Errorf("%s: the error does not name what is lacking: %v", c.name, err)
		}
	}
	if list, _ := ListFederationExecutions(ctx, cfg("x")); len(list) != 0 {
		t.Fatalf("a refused create left %v", list)
	}
	both := cfg("x")
	both.MIMFile, both.MIMModule = "a.xml", extended
	if err := CreateFederationExecutionWithMIM(ctx, both); err == nil {
		t.Error("MIMFile and MIMModule both set: no error")
	}

	c := cfg("x")
	c.MIMModule = extended
	if err := CreateFederationExecutionWithMIM(ctx, c); err != nil {
		t.Fatal(err)
	}
	// A joiner, with no MIM of its own, gets the federation's: the FDD
	// holds the extra class, and the MIM is its first module.
	a, err := Join(ctx, cfg("A"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	fdd := a.FDD()
	if _, ok := fdd.ObjectClass("HLAobjectRoot.MIMExtra"); !ok {
		t.Error("the federation's FDD lacks the MIM's extra class")
	}
	if _, ok := fdd.ObjectClass("HLAobjectRoot.HLAmanager.HLAfederate"); !ok {
		t.Error("the federation's FDD lacks HLAfederate")
	}
	if fdd.Modules[0].File != "extendedMIM.xml" {
		t.Errorf("first module %q, want the MIM", fdd.Modules[0].File)
	}
	if h, err := a.GetObjectClassHandle("HLAobjectRoot.MIMExtra"); err != nil || h == 0 {
		t.Errorf("handle of the extra class: %v %v", h, err)
	}
	if err := a.ResignFederationExecution(ctx, DeleteObjects); err != nil {
		t.Fatal(err)
	}
	if err := DestroyFederationExecution(ctx, cfg("x")); err != nil {
		t.Fatal(err)
	}

	// Join with Create and a MIM creates with it; a module that extends
	// the MIM's extra class merges only after that MIM.
	ext, err := fomxml.ParseBytes("ext.xml", []byte(`<objectModel xmlns="http://standards.ieee.org/IEEE1516-2010">
<modelIdentification><name>ext</name><type>FOM</type><version>1</version></modelIdentification>
<objects><objectClass><name>HLAobjectRoot</name><objectClass><name>MIMExtra</name>
<objectClass><name>Child</name><sharing>PublishSubscribe</sharing></objectClass></objectClass></objectClass></objects>
</objectModel>`))
	if err != nil {
		t.Fatal(err)
	}
	b := cfg("B")
	b.Create, b.MIMModule, b.FOMModules = true, extended, append(b.FOMModules, ext)
	fb, err := Join(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer fb.Close()
	if _, ok := fb.FDD().ObjectClass("HLAobjectRoot.MIMExtra.Child"); !ok {
		t.Error("the module extending the MIM did not merge")
	}
	// A later joiner with the module and no MIM merges it after the
	// federation's MIM.
	c3 := cfg("C")
	c3.FOMModules = append(c3.FOMModules, ext)
	fc, err := Join(ctx, c3)
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Close()
	if fdd := fc.FDD(); fdd.Modules[0].File != "extendedMIM.xml" {
		t.Errorf("the joiner's first module is %q, want the federation's MIM", fdd.Modules[0].File)
	} else if _, ok := fdd.ObjectClass("HLAobjectRoot.MIMExtra.Child"); !ok {
		t.Error("the joiner's FDD lacks the module's class")
	}
}

func TestResignWithOwnedObjects(t *testing.T) {
	m, h := cleanFederation(t, 2, 30)
	a, b := m.feds[0], m.feds[1]
	obj := labelFlow(t, a, b, h, 5*time.Second)
	if err := a.ResignFederationExecution(t.Context(), NoAction); !errors.Is(err, ErrFederateOwnsAttributes) {
		t.Errorf("resign with NoAction while owning: %v", err)
	}
	if err := a.ResignFederationExecution(t.Context(), DeleteObjects); err != nil {
		t.Fatal(err)
	}
	ev, _ := waitFor(t, b, 5*time.Second, isType[RemoveObjectInstance])
	if r := ev.(RemoveObjectInstance); r.Object != obj {
		t.Errorf("removed %v, want %v", r.Object, obj)
	}
	waitFor(t, b, 5*time.Second, isType[FederateResigned])
}
