package dis

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"time"

	"golang.org/x/net/ipv4"
)

// Appearance bits every kind shares: frozen (carried as Spatial's
// IsFrozen) and deactivated (the entity is gone).
const (
	AppearanceFrozen      = appearanceFrozen
	AppearanceDeactivated = appearanceDeactivated
)

// Conn sends PDUs to one address, as a DIS application does: unicast,
// broadcast (SO_BROADCAST is set) or multicast (on the interface given,
// TTL 0, loopback on). It is for tools and tests; a Gateway has its own
// sockets.
type Conn struct {
	c  *net.UDPConn
	to netip.AddrPort
}

// Dial opens a Conn that sends to to; iface is the multicast interface.
func Dial(to netip.AddrPort, iface string) (*Conn, error) {
	if !to.Addr().Is4() {
		return nil, errors.New("dis: the DIS address must be IPv4")
	}
	bind := netip.AddrPortFrom(netip.IPv4Unspecified(), 0)
	if to.Addr().IsLoopback() || to.Addr() == netip.AddrFrom4([4]byte{127, 255, 255, 255}) {
		bind = netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), 0)
	}
	c, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(bind))
	if err != nil {
		return nil, err
	}
	if err := setBroadcast(c); err != nil {
		c.Close()
		return nil, err
	}
	if to.Addr().IsMulticast() {
		ifi, err := net.InterfaceByName(iface)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("dis: multicast interface %q: %w", iface, err)
		}
		p := ipv4.NewPacketConn(c)
		if err := errors.Join(p.SetMulticastInterface(ifi), p.SetMulticastTTL(0), p.SetMulticastLoopback(true)); err != nil {
			c.Close()
			return nil, err
		}
	}
	_ = c.SetWriteBuffer(4 << 20)
	return &Conn{c: c, to: to}, nil
}

// Send encodes p into buf and sends it; it returns buf for reuse.
func (c *Conn) Send(p PDU, buf []byte) ([]byte, error) {
	b, err := p.Append(buf[:0])
	if err != nil {
		return b, err
	}
	_, err = c.c.WriteToUDPAddrPort(b, c.to)
	return b, err
}

// LocalAddr is the address the Conn sends from.
func (c *Conn) LocalAddr() netip.AddrPort { return c.c.LocalAddr().(*net.UDPAddr).AddrPort() }

// Close closes the Conn.
func (c *Conn) Close() error { return c.c.Close() }

// Circle moves an entity clockwise (seen from above) around a circle in
// the plane tangent to the earth at its centre: Lat, Lon (degrees), Alt
// (metres), Radius (metres), at Speed (metres per second). It starts due
// north of the centre, heading east. A zero Radius stands still.
type Circle struct {
	Lat, Lon, Alt, Radius, Speed float64
}

// State sets es's location, velocity and orientation t into the
// circle.
func (c Circle) State(t time.Duration, es *EntityState) {
	centre := FromGeodetic(c.Lat, c.Lon, c.Alt)
	if c.Radius <= 0 {
		es.Location, es.Velocity = centre, Vector{}
		es.Orientation = OrientationAt(c.Lat, c.Lon, 0, 0, 0)
		return
	}
	rad := math.Pi / 180
	sp, cp := math.Sincos(c.Lat * rad)
	sl, cl := math.Sincos(c.Lon * rad)
	north := [3]float64{-sp * cl, -sp * sl, cp}
	east := [3]float64{-sl, cl, 0}
	a := c.Speed / c.Radius * t.Seconds()
	sa, ca := math.Sincos(a)
	n, e := c.Radius*ca, c.Radius*sa
	vn, ve := -c.Speed*sa, c.Speed*ca
	es.Location = WorldCoordinates{
		centre.X + n*north[0] + e*east[0],
		centre.Y + n*north[1] + e*east[1],
		centre.Z + n*north[2] + e*east[2],
	}
	es.Velocity = Vector{
		float32(vn*north[0] + ve*east[0]),
		float32(vn*north[1] + ve*east[1]),
		float32(vn*north[2] + ve*east[2]),
	}
	lat, lon, _ := es.Location.Geodetic()
	heading := math.Mod(a/rad+90, 360)
	es.Orientation = OrientationAt(lat, lon, heading, 0, 0)
}
