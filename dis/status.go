package dis

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/fomxml/codec"
	"github.com/meshrti/meshrti/peer"
)

// StatusClass is the object class of the gateways' status, and
// StatusAttribute its one attribute: a JSON object (GatewayStatus) as
// an HLAunicodeString.
const (
	StatusClass     = "HLAobjectRoot.MeshrtiDISGateway"
	StatusAttribute = "Status"
)

// statusModule is the FOM module of the gateway's status class.
const statusModule = `<?xml version="1.0"?>
<objectModel xmlns="http://standards.ieee.org/IEEE1516-2010">
  <modelIdentification><name>meshrti DIS gateway status</name><type>FOM</type><version>1</version>
    <description>The counters of meshrti's DIS gateways, so that a monitor federate can show them.</description></modelIdentification>
  <objects><objectClass><name>HLAobjectRoot</name>
    <objectClass><name>MeshrtiDISGateway</name><sharing>PublishSubscribe</sharing>
      <semantics>One per DIS gateway federate: its exercise and counters.</semantics>
      <attribute><name>Status</name><dataType>HLAunicodeString</dataType><updateType>Periodic</updateType><updateCondition>every second, when changed</updateCondition><ownership>NoTransfer</ownership><sharing>PublishSubscribe</sharing><transportation>HLAreliable</transportation><order>Receive</order>
        <semantics>A JSON object: the gateway's federate, DIS address, exercise, site, application, version and counters.</semantics></attribute>
    </objectClass>
  </objectClass></objects>
</objectModel>`

// StatusModule returns the FOM module of the gateway's status class. A
// federate joined with it among its modules makes its Gateway publish
// its counters in the federation, where a monitor reads them.
func StatusModule() *fomxml.Document {
	doc, err := fomxml.ParseBytes("meshrti-dis-gateway.xml", []byte(statusModule))
	if err != nil {
		panic("dis: the status module does not parse: " + err.Error()) // a constant: a broken build
	}
	return doc
}

// GatewayStatus is what a gateway publishes of itself.
type GatewayStatus struct {
	Federate    string `json:"federate"`
	DIS         string `json:"dis"`
	Send        string `json:"send"`
	Exercise    uint8  `json:"exercise"`
	Site        uint16 `json:"site"`
	Application uint16 `json:"application"`
	Version     uint8  `json:"version"`
	Stats
}

// DecodeStatus decodes a Status attribute value.
func DecodeStatus(b []byte) (GatewayStatus, error) {
	var st GatewayStatus
	s, _, err := codec.ReadUnicodeString(b)
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal([]byte(s), &st); err != nil {
		return st, fmt.Errorf("dis: status: %w", err)
	}
	return st, nil
}

// statusPublisher keeps the gateway's status instance up to date; the
// DIS side's goroutine owns it.
type statusPublisher struct {
	g     *Gateway
	obj   peer.ObjectInstanceHandle
	attr  peer.AttributeHandle
	last  string
	at    time.Time
	class peer.ObjectClassHandle
}

// newStatusPublisher registers the status instance when the FDD has the
// status class; nil when it has not.
func newStatusPublisher(g *Gateway) (*statusPublisher, error) {
	c, ok := g.fed.FDD().ObjectClass(StatusClass)
	if !ok {
		return nil, nil
	}
	a, ok := c.Attribute(StatusAttribute)
	if !ok {
		return nil, fmt.Errorf("%w: %s has no %s", ErrFOM, StatusClass, StatusAttribute)
	}
	if err := g.fed.PublishObjectClassAttributes(c.Handle, a.Handle); err != nil {
		return nil, err
	}
	obj, err := g.fed.RegisterObjectInstance(c.Handle, "")
	if err != nil {
		return nil, err
	}
	return &statusPublisher{g: g, obj: obj, attr: a.Handle, class: c.Handle}, nil
}

// maybePublish publishes the status when a period has passed and it
// changed.
func (s *statusPublisher) maybePublish(now time.Time) {
	if now.Sub(s.at) < s.g.cfg.StatusPeriod {
		return
	}
	s.at = now
	if js := s.json(); js != s.last {
		s.send(js)
	}
}

// publish publishes the status now.
func (s *statusPublisher) publish(now time.Time) {
	s.at = now
	s.send(s.json())
}

func (s *statusPublisher) json() string {
	g := s.g
	st := GatewayStatus{
		Federate: g.fed.Name(), DIS: g.ListenAddr().String(), Send: g.sock.to.String(), Exercise: g.cfg.Exercise,
		Site: g.cfg.Site, Application: g.cfg.Application, Version: g.cfg.Version, Stats: g.Stats(),
	}
	b, _ := json.Marshal(st)
	return string(b)
}

func (s *statusPublisher) send(js string) {
	s.last = js
	v, err := codec.AppendUnicodeString(nil, js)
	if err != nil {
		return
	}
	if err := s.g.fed.UpdateAttributeValues(s.obj, peer.AttributeValues{s.attr: v}, nil); err != nil && s.g.ctx.Err() == nil {
		s.g.log.Warn().Err(err).Msg("dis: publishing the status")
	}
}

// close deletes the status instance.
func (s *statusPublisher) close() {
	_ = s.g.fed.DeleteObjectInstance(s.obj, nil)
}
