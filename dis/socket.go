package dis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"

	"golang.org/x/net/ipv4"

	"github.com/meshrti/meshrti/peer/transport"
)

// AddressKind says how an exercise's address is reached.
type AddressKind int

const (
	Unicast AddressKind = iota
	Broadcast
	Multicast
)

func (k AddressKind) String() string {
	switch k {
	case Broadcast:
		return "broadcast"
	case Multicast:
		return "multicast"
	}
	return "unicast"
}

// KindOf says whether an IPv4 address is multicast, broadcast (the
// limited broadcast address, or one whose last octet is 255, as subnet
// broadcast addresses of /24 and wider networks are) or unicast.
func KindOf(a netip.Addr) AddressKind {
	switch {
	case a.IsMulticast():
		return Multicast
	case a.Is4() && a.As4()[3] == 255:
		return Broadcast
	}
	return Unicast
}

// sockets are the gateway's two UDP sockets: recv is bound to the
// exercise's address (a multicast group is joined on the interface),
// shared with other processes of the host (SO_REUSEADDR); send sends to
// the exercise's destination, from an address of its own, which tells
// the gateway's own datagrams apart when the network loops them back.
type sockets struct {
	recv, send *net.UDPConn
	to         netip.AddrPort
	self       netip.AddrPort
}

// openSockets opens the sockets of an exercise listened to on listen
// and sent to at to; iface and ttl apply to multicast.
func openSockets(listen, to netip.AddrPort, iface string, ttl int) (*sockets, error) {
	if !listen.Addr().Is4() || !to.Addr().Is4() {
		return nil, errors.New("dis: the DIS addresses must be IPv4")
	}
	var ifi *net.Interface
	if KindOf(listen.Addr()) == Multicast || KindOf(to.Addr()) == Multicast {
		var err error
		if ifi, err = net.InterfaceByName(iface); err != nil {
			return nil, fmt.Errorf("dis: multicast interface %q: %w", iface, err)
		}
	}
	lc := net.ListenConfig{Control: transport.ReuseAddr}
	pc, err := lc.ListenPacket(context.Background(), "udp4", listen.String())
	if err != nil {
		return nil, fmt.Errorf("dis: listen on %s: %w", listen, err)
	}
	s := &sockets{recv: pc.(*net.UDPConn), to: to}
	if to.Port() == 0 { // listening on a port of the kernel's choice, and sending there
		to = s.recv.LocalAddr().(*net.UDPAddr).AddrPort()
		s.to = to
	}
	if KindOf(listen.Addr()) == Multicast {
		if err := ipv4.NewPacketConn(s.recv).JoinGroup(ifi, &net.UDPAddr{IP: listen.Addr().AsSlice()}); err != nil {
			s.recv.Close()
			return nil, fmt.Errorf("dis: join %s on %s: %w", listen.Addr(), iface, err)
		}
	}
	_ = s.recv.SetReadBuffer(4 << 20)
	// The sending socket is bound to the interface's address for
	// multicast, to loopback for a loopback destination, else to what
	// the route to the destination chooses.
	bind := netip.AddrPortFrom(netip.IPv4Unspecified(), 0)
	switch {
	case KindOf(to.Addr()) == Multicast:
		if a, ok := ifaceAddr(ifi); ok {
			bind = netip.AddrPortFrom(a, 0)
		}
	case to.Addr().IsLoopback() || to.Addr() == netip.AddrFrom4([4]byte{127, 255, 255, 255}):
		bind = netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), 0)
	}
	sc, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(bind))
	if err != nil {
		s.recv.Close()
		return nil, fmt.Errorf("dis: the sending socket: %w", err)
	}
	s.send = sc
	_ = s.send.SetWriteBuffer(4 << 20)
	if err := setBroadcast(sc); err != nil {
		s.close()
		return nil, fmt.Errorf("dis: SO_BROADCAST: %w", err)
	}
	if KindOf(to.Addr()) == Multicast {
		p := ipv4.NewPacketConn(sc)
		if err := errors.Join(p.SetMulticastInterface(ifi), p.SetMulticastTTL(ttl), p.SetMulticastLoopback(true)); err != nil {
			s.close()
			return nil, fmt.Errorf("dis: multicast options: %w", err)
		}
	}
	s.self = sc.LocalAddr().(*net.UDPAddr).AddrPort()
	if s.self.Addr().IsUnspecified() {
		s.self = netip.AddrPort{} // any local address: echoes are told by entity ID alone
	}
	return s, nil
}

func ifaceAddr(ifi *net.Interface) (netip.Addr, bool) {
	addrs, err := ifi.Addrs()
	if err != nil {
		return netip.Addr{}, false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP.To4()); ok && n.IP.To4() != nil {
				return ip, true
			}
		}
	}
	return netip.Addr{}, false
}

func setBroadcast(c *net.UDPConn) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = setBroadcastFD(fd) }); err != nil {
		return err
	}
	return serr
}

func (s *sockets) close() error {
	var errs []error
	if s.recv != nil {
		errs = append(errs, s.recv.Close())
	}
	if s.send != nil {
		errs = append(errs, s.send.Close())
	}
	return errors.Join(errs...)
}
