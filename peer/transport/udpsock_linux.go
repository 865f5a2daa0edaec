package transport

import (
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"syscall"

	"golang.org/x/net/bpf"
	"golang.org/x/net/ipv4"
)

// sharedSockets reports whether a receiving socket holds the memberships
// of several group addresses. On Linux it does: it is bound to the
// wildcard address, joins up to UDPConfig.GroupsPerSocket addresses, and
// has IP_MULTICAST_ALL off.
const sharedSockets = true

// ipMulticastAll is IP_MULTICAST_ALL of <linux/in.h>, which package
// syscall lacks.
const ipMulticastAll = 49

// receiveAddr returns the address a receiving socket for group address a
// binds: the wildcard, shared by all groups.
func receiveAddr(a netip.Addr) netip.Addr { return netip.IPv4Unspecified() }

// receiveControl prepares a receiving socket before it is bound. It sets
// SO_REUSEADDR, so that the sockets of this and other processes on the
// host share the port and each receive the groups it joined, and turns
// IP_MULTICAST_ALL off: a socket bound to the wildcard address would
// otherwise receive every group joined by any socket on the host for its
// port.
func receiveControl(network, address string, c syscall.RawConn) error {
	if err := ReuseAddr(network, address, c); err != nil {
		return err
	}
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, ipMulticastAll, 0)
	})
	if err != nil {
		return err
	}
	return serr
}

// membershipLimit reports whether err is the kernel refusing a socket one
// more membership (ENOBUFS beyond net.ipv4.igmp_max_memberships).
func membershipLimit(err error) bool { return errors.Is(err, syscall.ENOBUFS) }

// skfNetOff is SKF_NET_OFF of <linux/filter.h>: a negative offset that
// makes a classic BPF load address the network (IP) header.
const skfNetOff = 0xfff00000

// dropOwn attaches a socket filter to a receiving socket that drops the
// datagrams sent from self (this transport's sending socket) in the
// kernel: multicast loopback would otherwise queue every datagram a
// transport sends on its own receiving sockets, and wake its reader for
// each. A socket filter on a UDP socket sees the datagram from its UDP
// header on. Failing to attach is not an error: dispatch drops them too.
func dropOwn(pc *ipv4.PacketConn, self *net.UDPAddr) {
	ip4 := self.IP.To4()
	if ip4 == nil {
		return
	}
	prog, err := bpf.Assemble([]bpf.Instruction{
		bpf.LoadAbsolute{Off: 0, Size: 2}, // UDP source port
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: uint32(self.Port), SkipTrue: 3},
		bpf.LoadAbsolute{Off: skfNetOff + 12, Size: 4}, // IPv4 source address
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: binary.BigEndian.Uint32(ip4), SkipTrue: 1},
		bpf.RetConstant{Val: 0},          // ours: drop
		bpf.RetConstant{Val: 0xffffffff}, // keep all of it
	})
	if err != nil {
		return
	}
	_ = pc.SetBPF(prog)
}
