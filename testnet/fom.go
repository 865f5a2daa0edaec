package testnet

import (
	_ "embed"

	"github.com/meshrti/meshrti/fomxml"
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
