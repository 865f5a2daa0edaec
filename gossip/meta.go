package gossip

import (
	"fmt"
	"net"
	"strconv"

	"github.com/hashicorp/memberlist"
	"github.com/vmihailenco/msgpack/v5"
)

// Meta is a node's metadata, carried in memberlist's node meta (at most
// 512 bytes once encoded) and visible to every member.
type Meta struct {
	// FederateName, FederateType and FederateHandle describe the
	// federate this node has joined; JoinFederate sets them and
	// ResignFederate clears them.
	FederateName   string
	FederateType   string
	FederateHandle uint64
	// ProtocolVersion is the meshrti wire protocol the node speaks; Start
	// sets it to version.Protocol. Nodes of another protocol are refused
	// (ErrProtocolVersion).
	ProtocolVersion uint32
	// Release is the meshrti release the node runs (version.Release, set
	// by Start): for the operator, it decides nothing.
	Release string
	// DataPlane tells peers how to reach the node's data plane, for
	// example "udp://127.0.0.1:5000" or a multicast group base.
	DataPlane string
}

// wireMeta is Meta as encoded, plus the process incarnation.
type wireMeta struct {
	Name      string `msgpack:"n,omitempty"`
	Type      string `msgpack:"t,omitempty"`
	Handle    uint64 `msgpack:"h,omitempty"`
	Version   uint32 `msgpack:"v,omitempty"`
	DataPlane string `msgpack:"d,omitempty"`
	Inc       uint64 `msgpack:"i,omitempty"`
	Release   string `msgpack:"r,omitempty"`
}

func encodeMeta(m Meta, inc uint64) ([]byte, error) {
	buf, err := msgpack.Marshal(&wireMeta{
		Name: m.FederateName, Type: m.FederateType, Handle: m.FederateHandle,
		Version: m.ProtocolVersion, DataPlane: m.DataPlane, Inc: inc, Release: m.Release,
	})
	if err != nil {
		return nil, fmt.Errorf("gossip: encoding metadata: %w", err)
	}
	if len(buf) > memberlist.MetaMaxSize {
		return nil, fmt.Errorf("%w: %d bytes encoded, limit %d", ErrMetaTooLarge, len(buf), memberlist.MetaMaxSize)
	}
	return buf, nil
}

func decodeMeta(buf []byte) (Meta, uint64) {
	var w wireMeta
	if len(buf) == 0 || decode(buf, &w) != nil {
		return Meta{}, 0
	}
	return Meta{
		FederateName: w.Name, FederateType: w.Type, FederateHandle: w.Handle,
		ProtocolVersion: w.Version, DataPlane: w.DataPlane, Release: w.Release,
	}, w.Inc
}

// MemberState is what failure detection believes about a member.
// (memberlist does not report suspicion; a suspect member is alive until
// declared dead.)
type MemberState int

const (
	MemberAlive MemberState = iota // a member
	MemberDead                     // declared dead: federate lost
	MemberLeft                     // left gracefully
)

var memberStateNames = [...]string{MemberAlive: "alive", MemberDead: "dead", MemberLeft: "left"}

func (s MemberState) String() string { return enumName(s, memberStateNames[:], "MemberState") }

// Member is one node of the cluster as this node sees it.
type Member struct {
	Name  string      // memberlist node name
	Addr  string      // host:port of its gossip endpoint
	Meta  Meta        // its metadata
	State MemberState // alive, dead or left
	inc   uint64      // process incarnation, from the metadata
	addr  net.IP
	port  uint16
}

// node returns what memberlist needs to address the member.
func (m Member) node() *memberlist.Node {
	return &memberlist.Node{Name: m.Name, Addr: m.addr, Port: m.port}
}

func memberFromNode(n *memberlist.Node) Member {
	meta, inc := decodeMeta(n.Meta)
	st := MemberAlive
	switch n.State {
	case memberlist.StateDead:
		st = MemberDead
	case memberlist.StateLeft:
		st = MemberLeft
	}
	return Member{
		Name:  n.Name,
		Addr:  net.JoinHostPort(n.Addr.String(), strconv.Itoa(int(n.Port))),
		Meta:  meta,
		State: st,
		inc:   inc,
		addr:  append(net.IP(nil), n.Addr...),
		port:  n.Port,
	}
}
