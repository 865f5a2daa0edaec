package fedpro

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshrti/meshrti/peer/fedpro/pb"
)

// fpJoinFOM reads a FOM module of the join conformance tests, shared
// with package peer's: join_base.xml defines a dimension and a simple
// data type it does not use; join_sensor.xml uses data type TYPE and
// dimension DIM.
func fpJoinFOM(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func fpFile(name, content string) *pb.FomModule {
	return &pb.FomModule{FomModule: &pb.FomModule_File{File: &pb.FileFomModule{Name: name, Content: []byte(content)}}}
}

// joinFederationExecution with additional modules checks them against
// the federation's FDD: a module that uses the creation module's
// dimension and data type is accepted, one that uses an undefined data
// type is refused with ErrorReadingFDD (ErrorReadingFOM in HLA 4), and
// an earlier member looks the joiner's class up as soon as the join
// returns.
func TestConformanceJoinModulesFedPro(t *testing.T) {
	n := newFPNet(t)
	a, b := n.client(t, "A"), n.client(t, "B")
	a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_ConnectRequest{ConnectRequest: &pb.ConnectRequest{}}})
	a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_CreateFederationExecutionWithModulesRequest{CreateFederationExecutionWithModulesRequest: &pb.CreateFederationExecutionWithModulesRequest{
		FederationName: "fp", FomModules: &pb.FomModuleSet{FomModule: []*pb.FomModule{fpFile("base.xml", fpJoinFOM(t, "join_base.xml"))}}}}})
	a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_JoinFederationExecutionWithNameRequest{JoinFederationExecutionWithNameRequest: &pb.JoinFederationExecutionWithNameRequest{
		FederateName: "A", FederateType: "test", FederationName: "fp"}}})

	b.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_ConnectRequest{ConnectRequest: &pb.ConnectRequest{}}})
	join := func(doc *pb.FomModule) *pb.CallResponse {
		return b.call(&pb.CallRequest{CallRequest: &pb.CallRequest_JoinFederationExecutionWithNameAndModulesRequest{JoinFederationExecutionWithNameAndModulesRequest: &pb.JoinFederationExecutionWithNameAndModulesRequest{
			FederateName: "B", FederateType: "test", FederationName: "fp", AdditionalFomModules: &pb.FomModuleSet{FomModule: []*pb.FomModule{doc}}}}})
	}
	sensor := fpJoinFOM(t, "join_sensor.xml")
	bad := strings.NewReplacer("TYPE", "Furlongs", "DIM", "Zone").Replace(sensor)
	if e := join(fpFile("bad.xml", bad)).GetExceptionData(); e.GetExceptionName() != "ErrorReadingFDD" && e.GetExceptionName() != "ErrorReadingFOM" {
		t.Errorf("joining with an undefined data type: %q (%s), want ErrorReadingFDD", e.GetExceptionName(), e.GetDetails())
	}
	good := strings.NewReplacer("TYPE", "Meters", "DIM", "Zone").Replace(sensor)
	if e := join(fpFile("sensor.xml", good)).GetExceptionData(); e != nil {
		t.Fatalf("joining with a module that uses the creation module's dimension and data type: %s: %s", e.GetExceptionName(), e.GetDetails())
	}
	a.attrHandle(a.classHandle("Sensor"), "Reach")
	b.attrHandle(b.classHandle("Sensor"), "Reach")
}
