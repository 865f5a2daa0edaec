package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshrti/meshrti/dis"
	"github.com/meshrti/meshrti/fomxml/codec"
	"github.com/meshrti/meshrti/internal/nodetest"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/transport"
)

// rprDir is the RPR FOM 2.0's directory, or the test skips.
func rprDir(t *testing.T) string {
	t.Helper()
	shared := os.Getenv("MESHRTI_SHARED")
	if shared == "" {
		shared = filepath.Join("..", "..", "..", "shared")
	}
	dir := filepath.Join(shared, "fom", "rpr2")
	if files, _ := filepath.Glob(filepath.Join(dir, "*.xml")); len(files) == 0 {
		t.Skipf("no RPR FOM 2.0 modules at %s (set MESHRTI_SHARED)", dir)
	}
	return dir
}

func TestDISUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"dis", "-dis", "127.0.0.1:3000", "-site", "1", "-app", "1"}, "-fom: the RPR FOM 2.0 modules are required"},
		{[]string{"dis", "-fom", os.TempDir() + "/no-such-dir-of-modules", "-site", "1", "-app", "1"}, "no such file"},
		{[]string{"dis", "-fom", "dis.go", "-site", "1", "-app", "1"}, "-dis ADDR:PORT is required"},
		{[]string{"dis", "-fom", "dis.go", "-dis", "127.0.0.1:3000"}, "-site and -app are required"},
		{[]string{"dis", "-fom", "dis.go", "-dis", "127.0.0.1:3000", "-site", "1", "-app", "1", "-version", "5"}, "-version 5"},
		{[]string{"dis", "-fom", "dis.go", "-dis", "127.0.0.1:3000", "-site", "1", "-app", "1", "-class", "9.9.9.9=X"}, "at most three fields"},
		{[]string{"dis", "-fom", "dis.go", "-dis", "127.0.0.1:3000", "-site", "1", "-app", "1", "-record", "x=Y"}, "want TYPE=ATTRIBUTE"},
		{[]string{"dis", "send"}, "-dis IPv4ADDR:PORT is required"},
		{[]string{"dis", "send", "-dis", "127.0.0.1:3000", "-type", "1.2.3"}, "want seven fields"},
	} {
		code, _, errOut := runCmd(t, c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", c.args, code, errOut, c.want)
		}
	}
}

// A FOM without the classes the gateway needs is refused, naming them.
func TestDISMissingClass(t *testing.T) {
	if testing.Short() {
		t.Skip("joins a federation")
	}
	dir := rprDir(t)
	port := fmt.Sprint(30000 + os.Getpid()%5000)
	code, _, errOut := runCmd(t, "dis", "-federation", fmt.Sprintf("dis-missing-%d", os.Getpid()), "-create", "-gossip", "127.0.0.1:0",
		"-mcast-port", port, "-fom", filepath.Join(dir, "RPR-Foundation_v2.0.xml"), "-fom", filepath.Join(dir, "RPR-Enumerations_v2.0.xml"),
		"-fom", filepath.Join(dir, "RPR-Base_v2.0.xml"), "-dis", "127.0.0.1:0", "-site", "1", "-app", "1")
	if code != 1 || !strings.Contains(errOut, "HLAobjectRoot.BaseEntity.PhysicalEntity") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// federate-node dis in a process of its own: the gossip line, a DIS
// entity ("dis send") discovered by an HLA federate with its marking at
// its place, an HLA instance out as PDUs, the counters at the end.
func TestDISCommand(t *testing.T) {
	dir := rprDir(t)
	bin, ctx, federation, port := processTest(t, "dis-cmd", 25000)
	sink, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	disPort := nodetest.FreeUDPPort(t)
	gw := start(t, ctx, bin, "dis", "-federation", federation, "-create", "-gossip", "127.0.0.1:0", "-mcast-port", port,
		"-fom", dir, "-dis", "127.0.0.1:"+disPort, "-dis-send", sink.LocalAddr().String(), "-exercise", "7", "-site", "3", "-app", "4", "-version", "6")
	seed := gw.line(t, "gossip ", 30*time.Second)
	gw.line(t, "dis exercise 7 on 127.0.0.1:"+disPort+" (unicast), sending version 6", 30*time.Second)

	files, _ := filepath.Glob(filepath.Join(dir, "*.xml"))
	pn := 0
	fmt.Sscan(port, &pn)
	jctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	fed, err := peer.Join(jctx, peer.Config{Federation: federation, FederateName: "observer", FOMFiles: files,
		Multicast: transport.UDPConfig{Port: pn, Interface: "lo"}, Gossip: peer.GossipConfig{BindAddr: "127.0.0.1", Seeds: []string{seed}}})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	defer fed.Close()
	m, err := dis.NewMapper(fed.FDD(), dis.MapperConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range m.EntityClasses() {
		var attrs []peer.AttributeHandle
		for _, a := range c.AllAttributes() {
			attrs = append(attrs, a.Handle)
		}
		if err := fed.SubscribeObjectClassAttributes(c.Handle, attrs...); err != nil {
			t.Fatal(err)
		}
	}
	// A DIS simulator's entity.
	sendDone := make(chan int, 1)
	go func() {
		code, _, _ := runCmd(t, "dis", "send", "-dis", "127.0.0.1:"+disPort, "-exercise", "7", "-marking", "TEST-1", "-lat", "10", "-lon", "20", "-alt", "0",
			"-radius", "0", "-duration", "4s", "-rate", "10", "-type", "1.1.225.1.1.1.0")
		sendDone <- code
	}()
	cd, _ := codec.New(fed.FDD())
	deadline := time.Now().Add(20 * time.Second)
	var marking string
	var lat, lon float64
	for marking == "" || lat == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no DIS entity seen (marking %q)", marking)
		}
		wctx, wcancel := context.WithTimeout(ctx, time.Second)
		ev, err := fed.Next(wctx)
		wcancel()
		if err != nil {
			continue
		}
		r, ok := ev.(peer.ReflectAttributeValues)
		if !ok {
			continue
		}
		ground, _ := fed.FDD().ObjectClass("GroundVehicle")
		for h, v := range r.Values {
			a, ok := ground.AttributeByHandle(h)
			if !ok {
				continue
			}
			switch a.Name {
			case "Marking":
				d, _ := cd.Decode(a.DataType, v)
				marking = strings.TrimRight(string(d.(map[string]any)["MarkingData"].([]byte)), "\x00")
			case "Spatial":
				var es dis.EntityState
				m.ApplyEntityValues(ground.Handle, peer.AttributeValues{h: v}, &es)
				lat, lon, _ = es.Location.Geodetic()
			}
		}
	}
	if marking != "TEST-1" || math.Abs(lat-10) > 1e-6 || math.Abs(lon-20) > 1e-6 {
		t.Errorf("entity %q at %v, %v", marking, lat, lon)
	}
	if code := <-sendDone; code != 0 {
		t.Errorf("dis send: exit %d", code)
	}

	// An HLA instance goes out to DIS.
	jet, _ := fed.FDD().ObjectClass("Aircraft")
	var attrs []peer.AttributeHandle
	for _, a := range jet.AllAttributes() {
		attrs = append(attrs, a.Handle)
	}
	if err := fed.PublishObjectClassAttributes(jet.Handle, attrs...); err != nil {
		t.Fatal(err)
	}
	obj, err := fed.RegisterObjectInstance(jet.Handle, "")
	if err != nil {
		t.Fatal(err)
	}
	es := &dis.EntityState{ID: dis.EntityID{Site: 50, Application: 60, Entity: 70}, Type: dis.EntityType{Kind: 1, Domain: 2, Country: 225},
		Marking: dis.NewMarking("HLA-JET"), DeadReckoning: dis.DeadReckoning{Algorithm: dis.DRStatic}, Location: dis.FromGeodetic(1, 2, 3000)}
	vals := peer.AttributeValues{}
	m.EntityValues(jet.Handle, es, nil, vals)
	buf := make([]byte, 1<<16)
	var got *dis.EntityState
	for try := 0; got == nil && try < 30; try++ {
		if err := fed.UpdateAttributeValues(obj, vals, nil); err != nil {
			t.Fatal(err)
		}
		sink.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		for {
			n, _, err := sink.ReadFromUDPAddrPort(buf)
			if err != nil {
				break
			}
			if p, err := dis.Decode(buf[:n]); err == nil {
				if e, ok := p.(*dis.EntityState); ok && e.ID == es.ID {
					got = e
					break
				}
			}
		}
	}
	if got == nil {
		t.Fatal("the HLA jet never went out to DIS")
	}
	if got.Marking.String() != "HLA-JET" || got.Version != 6 || got.Exercise != 7 || got.Type != es.Type {
		t.Errorf("PDU %+v", got)
	}
	gw.cmd.Process.Signal(os.Interrupt)
	var st dis.Stats
	if err := json.Unmarshal([]byte(gw.line(t, "stats ", 20*time.Second)), &st); err != nil {
		t.Fatal(err)
	}
	// The entity of "dis send" came in (and was deactivated at its end);
	// the jet went out, and was deactivated when the gateway closed.
	if st.Received["entity_state"] < 10 || st.Sent["entity_state"] < 2 || st.EntitiesFromDIS != 0 || st.EntitiesToDIS != 0 {
		t.Errorf("stats %+v", st)
	}
	if err := gw.wait(); err != nil {
		t.Errorf("dis: %v", err)
	}
}

// bench dis runs, small: every figure is there, in its JSON line. Like
// TestBenchJSON it measures nothing.
func TestBenchDIS(t *testing.T) {
	dir := rprDir(t)
	var res disBenchResult
	out := nodetest.JSON(t, &res, 17, "bench", "dis", "-json", "-entities", "100", "-rate", "1000", "-duration", "1s", "-pings", "50", "-fom", dir)
	if res.Bench != "dis" || res.Entities != 100 || res.DISToHLASent != 1000 || res.HLAToDISUpdates != 1000 || res.Error != "" {
		t.Errorf("result %+v", res)
	}
	// Spatial is best effort: a loaded machine may lose some, never
	// invent any.
	if res.DISToHLAReflected <= 0 || res.DISToHLAReflected > res.DISToHLASent || res.HLAToDISPDUs <= 0 || res.HLAToDISPDUs > res.HLAToDISUpdates {
		t.Errorf("reflected %d of %d, PDUs %d of %d", res.DISToHLAReflected, res.DISToHLASent, res.HLAToDISPDUs, res.HLAToDISUpdates)
	}
	if res.LatencyP50 <= 0 || res.LatencyP99 < res.LatencyP50 || res.PeerRTTP50 <= 0 || res.PeerRTTP99 < res.PeerRTTP50 || res.GOMAXPROCS < 1 {
		t.Errorf("latency %v/%v us, peer round trip %v/%v us", res.LatencyP50, res.LatencyP99, res.PeerRTTP50, res.PeerRTTP99)
	}
	if res.Gateway.Received["entity_state"] < 1100 || res.Gateway.Sent["entity_state"] < 1100 {
		t.Errorf("the gateway's counters %+v", res.Gateway)
	}
	for _, k := range []string{`"bench":"dis"`, `"dis_to_hla_per_s"`, `"hla_to_dis_per_s"`, `"dis_to_hla_latency_p50_us"`, `"dis_to_hla_latency_p99_us"`,
		`"peer_rtt_p50_us"`, `"peer_rtt_p99_us"`, `"added_p99_us"`, `"gomaxprocs"`} {
		if !strings.Contains(string(out), k) {
			t.Errorf("line lacks %s: %s", k, out)
		}
	}
	for _, args := range [][]string{{"-entities", "0"}, {"-rate", "0"}, {"-role", "nonsense"}, {"extra"}} {
		if code, _, errOut := runCmd(t, append([]string{"bench", "dis", "-fom", dir}, args...)...); code != 2 {
			t.Errorf("bench dis %v: exit %d, want 2 (%s)", args, code, errOut)
		}
	}
}
