package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/meshrti/meshrti/internal/monitor"
	"github.com/meshrti/meshrti/peer/fedpro/pb"
)

// `serve -http`: the daemon lists its federates' federations and serves
// each one's monitor page and JSON, read by a monitor federate that
// joins on the first request; federates of Federate Protocol clients
// appear with their figures, a resigned one disappears, and the monitor
// leaves once the daemon has no federate left in the federation.
func TestServeHTTPMonitor(t *testing.T) {
	sf := &serveFlags{
		Listen: "127.0.0.1:0", Gossip: "127.0.0.1:0", HTTP: "127.0.0.1:0",
		McastPort: 20000 + (os.Getpid()+61)%20000, Iface: "lo", SaveDir: t.TempDir(),
		ResumeWindow: time.Minute, CallTimeout: 20 * time.Second,
	}
	d, err := startDaemon(sf, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.stop)
	web := "http://" + d.waddr.String()
	fedName := fmt.Sprintf("serve-web-%d", os.Getpid())

	addr := d.addrs[0].String()
	a, b := dialFP(t, addr), dialFP(t, addr)
	for _, c := range []*fpClient{a, b} {
		c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_ConnectRequest{ConnectRequest: &pb.ConnectRequest{}}})
	}
	module := &pb.FomModule{FomModule: &pb.FomModule_File{File: &pb.FileFomModule{Name: "serve.xml", Content: []byte(serveFOM)}}}
	a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_CreateFederationExecutionRequest{CreateFederationExecutionRequest: &pb.CreateFederationExecutionRequest{FederationName: fedName, FomModule: module}}})
	for c, name := range map[*fpClient]string{a: "A", b: "B"} {
		c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_JoinFederationExecutionWithNameRequest{JoinFederationExecutionWithNameRequest: &pb.JoinFederationExecutionWithNameRequest{
			FederateName: name, FederateType: "fedpro-" + name, FederationName: fedName}}})
	}
	car := a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_GetObjectClassHandleRequest{GetObjectClassHandleRequest: &pb.GetObjectClassHandleRequest{ObjectClassName: "Car"}}}).GetGetObjectClassHandleResponse().GetResult()
	speed := a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_GetAttributeHandleRequest{GetAttributeHandleRequest: &pb.GetAttributeHandleRequest{ObjectClass: car, AttributeName: "Speed"}}}).GetGetAttributeHandleResponse().GetResult()
	set := &pb.AttributeHandleSet{AttributeHandle: []*pb.AttributeHandle{speed}}
	a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_PublishObjectClassAttributesRequest{PublishObjectClassAttributesRequest: &pb.PublishObjectClassAttributesRequest{ObjectClass: car, Attributes: set}}})
	obj := a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_RegisterObjectInstanceRequest{RegisterObjectInstanceRequest: &pb.RegisterObjectInstanceRequest{ObjectClass: car}}}).GetRegisterObjectInstanceResponse().GetResult()
	for i := 0; i < 3; i++ {
		a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_UpdateAttributeValuesRequest{UpdateAttributeValuesRequest: &pb.UpdateAttributeValuesRequest{
			ObjectInstance: obj, AttributeValues: &pb.AttributeHandleValueMap{AttributeHandleValue: []*pb.AttributeHandleValue{{AttributeHandle: speed, Value: []byte("90")}}}}}})
	}

	// The list of federations, as a page and as JSON.
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(web + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := get("/"); code != http.StatusOK || !strings.Contains(body, `href="federation/`+fedName+`/"`) {
		t.Errorf("index: %d %s", code, body)
	}
	var list struct{ Federations []string }
	getJSON(t, web+"/api/federations", &list)
	if len(list.Federations) != 1 || list.Federations[0] != fedName {
		t.Errorf("federations: %v", list.Federations)
	}
	// The federation's page and its data.
	if code, body := get("/federation/" + fedName + "/"); code != http.StatusOK || !strings.Contains(body, "meshrti monitor") {
		t.Errorf("page: %d %.200s", code, body)
	}
	if code, body := get("/federation/" + fedName + "/static/monitor.js"); code != http.StatusOK || !strings.Contains(body, "EventSource") {
		t.Errorf("script: %d %.200s", code, body)
	}
	base := web + "/federation/" + fedName + "/"
	s := waitFederation(t, base, "A and B with values", 15*time.Second, func(s monitor.Federation) bool {
		fa, _ := federate(s, "A")
		fb, _ := federate(s, "B")
		return fa.UpdatesSent == 3 && fb.Type == "fedpro-B" && len(s.Objects) == 1
	})
	if s.Federation != fedName || s.Objects[0].ByFederate["A"] != 1 || s.Objects[0].Class != "HLAobjectRoot.Car" {
		t.Errorf("federation %q, objects %+v", s.Federation, s.Objects)
	}
	if code, _ := get("/federation/no-such-federation/api/federation"); code != http.StatusNotFound {
		t.Errorf("an unknown federation: %d", code)
	}

	resign := func(c *fpClient) {
		c.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_ResignFederationExecutionRequest{ResignFederationExecutionRequest: &pb.ResignFederationExecutionRequest{ResignAction: pb.ResignAction_DELETE_OBJECTS_THEN_DIVEST}}})
	}
	resign(b)
	waitFederation(t, base, "B gone", 5*time.Second, func(s monitor.Federation) bool {
		_, ok := federate(s, "B")
		return !ok
	})
	// Once the daemon has no federate in the federation, its monitor
	// leaves too, and the federation can be destroyed.
	resign(a)
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := a.Call(&pb.CallRequest{CallRequest: &pb.CallRequest_DestroyFederationExecutionRequest{DestroyFederationExecutionRequest: &pb.DestroyFederationExecutionRequest{FederationName: fedName}}})
		if err == nil && resp.GetExceptionData() == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("destroy: %v %v", err, resp)
		}
		time.Sleep(200 * time.Millisecond)
	}
	getJSON(t, web+"/api/federations", &list)
	if len(list.Federations) != 0 {
		t.Errorf("federations after the resigns: %v", list.Federations)
	}
}
