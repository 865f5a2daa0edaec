package fedpro

import (
	"strings"
	"testing"

	"github.com/meshrti/meshrti/peer/fedpro/pb"
)

// fpBaseFOM defines a dimension and a simple data type it does not use.
const fpBaseFOM = `<?xml version="1.0"?>
<objectModel xmlns="http://standards.ieee.org/IEEE1516-2010">
  <modelIdentification><name>fedpro join base</name><type>FOM</type><version>1</version></modelIdentification>
  <objects><objectClass><name>HLAobjectRoot</name>
    <objectClass><name>Site</name><sharing>PublishSubscribe</sharing>
      <attribute><name>Label</name><dataType>HLAunicodeString</dataType><updateType>Static</updateType><updateCondition>NA</updateCondition><ownership>DivestAcquire</ownership><sharing>PublishSubscribe</sharing><transportation>HLAreliable</transportation><order>Receive</order></attribute>
    </objectClass>
  </objectClass></objects>
  <dimensions>
    <dimension><name>Zone</name><dataType>HLAinteger32BE</dataType><upperBound>100</upperBound><normalization>linear (Zone, 0, 100)</normalization><value>[0..1)</value></dimension>
  </dimensions>
  <dataTypes><simpleDataTypes>
    <simpleData><name>Meters</name><representation>HLAfloat64BE</representation><units>m</units><resolution>NA</resolution><accuracy>NA</accuracy></simpleData>
  </simpleDataTypes></dataTypes>
</objectModel>`

// fpSensorFOM uses data type TYPE and dimension DIM.
const fpSensorFOM = `<?xml version="1.0"?>
<objectModel xmlns="http://standards.ieee.org/IEEE1516-2010">
  <modelIdentification><name>fedpro join sensor</name><type>FOM</type><version>1</version></modelIdentification>
  <objects><objectClass><name>HLAobjectRoot</name>
    <objectClass><name>Sensor</name><sharing>PublishSubscribe</sharing>
      <attribute><name>Reach</name><dataType>TYPE</dataType><updateType>Conditional</updateType><updateCondition>NA</updateCondition><ownership>DivestAcquire</ownership><sharing>PublishSubscribe</sharing><dimensions><dimension>DIM</dimension></dimensions><transportation>HLAreliable</transportation><order>Receive</order></attribute>
    </objectClass>
  </objectClass></objects>
</objectModel>`

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
		FederationName: "fp", FomModules: &pb.FomModuleSet{FomModule: []*pb.FomModule{fpFile("base.xml", fpBaseFOM)}}}}})
	a.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_JoinFederationExecutionWithNameRequest{JoinFederationExecutionWithNameRequest: &pb.JoinFederationExecutionWithNameRequest{
		FederateName: "A", FederateType: "test", FederationName: "fp"}}})

	b.ok(&pb.CallRequest{CallRequest: &pb.CallRequest_ConnectRequest{ConnectRequest: &pb.ConnectRequest{}}})
	join := func(doc *pb.FomModule) *pb.CallResponse {
		return b.call(&pb.CallRequest{CallRequest: &pb.CallRequest_JoinFederationExecutionWithNameAndModulesRequest{JoinFederationExecutionWithNameAndModulesRequest: &pb.JoinFederationExecutionWithNameAndModulesRequest{
			FederateName: "B", FederateType: "test", FederationName: "fp", AdditionalFomModules: &pb.FomModuleSet{FomModule: []*pb.FomModule{doc}}}}})
	}
	bad := strings.NewReplacer("TYPE", "Furlongs", "DIM", "Zone").Replace(fpSensorFOM)
	if e := join(fpFile("bad.xml", bad)).GetExceptionData(); e.GetExceptionName() != "ErrorReadingFDD" && e.GetExceptionName() != "ErrorReadingFOM" {
		t.Errorf("joining with an undefined data type: %q (%s), want ErrorReadingFDD", e.GetExceptionName(), e.GetDetails())
	}
	good := strings.NewReplacer("TYPE", "Meters", "DIM", "Zone").Replace(fpSensorFOM)
	if e := join(fpFile("sensor.xml", good)).GetExceptionData(); e != nil {
		t.Fatalf("joining with a module that uses the creation module's dimension and data type: %s: %s", e.GetExceptionName(), e.GetDetails())
	}
	a.attrHandle(a.classHandle("Sensor"), "Reach")
	b.attrHandle(b.classHandle("Sensor"), "Reach")
}
