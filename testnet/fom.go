package testnet

import (
	_ "embed"
	"fmt"
	"strings"

	"github.com/meshrti/meshrti/fomxml"
	"github.com/meshrti/meshrti/peer"
)

//go:embed fom.xml
var fomXML []byte

// FOM returns testnet's own small FOM module: HLAobjectRoot.Aircraft with
// a time-stamped Position and a receive-order Status, and the
// interactions Contact (time-stamped) and Chat (receive order), each with
// one opaque parameter, Data.
func FOM() (*fomxml.Document, error) {
	return fomxml.ParseBytes("testnet/fom.xml", fomXML)
}

// testMIM sets cfg's MIM for the scenario command create mim=KIND:
// extended (the standard MIM plus the object class HLAobjectRoot.MIMExtra),
// lacking (the standard MIM with HLAfederateHandle renamed), standard
// (the standard MIM's designator), missing (a file that does not exist)
// or none (no MIM given).
func testMIM(cfg *peer.Config, kind string) error {
	std := string(fomxml.StandardMIMXML())
	edit := func(name, old, new string) error {
		if !strings.Contains(std, old) {
			return fmt.Errorf("the standard MIM has no %q", old)
		}
		d, err := fomxml.ParseBytes(name, []byte(strings.Replace(std, old, new, 1)))
		cfg.MIMModule = d
		return err
	}
	const manager = "<objectClass>\n        <name>HLAmanager</name>"
	switch kind {
	case "extended":
		return edit("extendedMIM.xml", manager, "<objectClass><name>MIMExtra</name><sharing>PublishSubscribe</sharing></objectClass>\n      "+manager)
	case "lacking":
		return edit("lackingMIM.xml", "<name>HLAfederateHandle</name>", "<name>HLAfederateNumber</name>")
	case "standard":
		cfg.MIMFile = fomxml.MIMDesignator
	case "missing":
		cfg.MIMFile = "testnet/no-such-mim.xml"
	case "none":
	default:
		return fmt.Errorf("mim=%s: want extended, lacking, standard, missing or none", kind)
	}
	return nil
}

// MIMClashModule returns a FOM module that redefines a class of the
// MIM otherwise (HLAfederate's HLAfederateHandle as opaque data): a
// federation given it with the MIM has inconsistent modules.
func MIMClashModule() string { return mimClashModule }

const mimClashModule = `<?xml version="1.0"?>
<objectModel xmlns="http://standards.ieee.org/IEEE1516-2010">
  <modelIdentification><name>MIM clash</name><type>FOM</type><version>1</version></modelIdentification>
  <objects><objectClass><name>HLAobjectRoot</name>
    <objectClass><name>HLAmanager</name><sharing>Neither</sharing>
      <objectClass><name>HLAfederate</name><sharing>Publish</sharing>
        <attribute><name>HLAfederateHandle</name><dataType>HLAopaqueData</dataType><updateType>Static</updateType><updateCondition>NA</updateCondition><ownership>NoTransfer</ownership><sharing>Publish</sharing><transportation>HLAreliable</transportation><order>Receive</order></attribute>
      </objectClass>
    </objectClass>
  </objectClass></objects>
</objectModel>`
