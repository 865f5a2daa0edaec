package transport

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/net/ipv4"
)

// DefaultUnicastBind is where a unicast transport listens when
// UnicastConfig.Bind is empty: loopback, a free port.
const DefaultUnicastBind = "127.0.0.1:0"

// UnicastConfig configures a UDP unicast transport. Zero fields mean the
// defaults, which keep every datagram on this host (loopback).
type UnicastConfig struct {
	// Federation names the federation execution; the transport header is
	// derived from it (as for UDP), so federations sharing addresses
	// stay apart. Required.
	Federation string
	// Bind is the host:port the transport's one socket is bound to, and
	// receives on. Empty means DefaultUnicastBind; port 0 picks a free
	// port.
	Bind string
	// Advertise is the host:port other members send to, announced
	// through the control plane: for NAT and container networks, where
	// the bound address is not the one others reach. Empty means the
	// bound address, which then must not be the wildcard (0.0.0.0).
	// Port 0 means the bound port.
	Advertise string
	// MaxPacket, ReadBuffer, WriteBuffer and Queue are as in UDPConfig.
	MaxPacket   int
	ReadBuffer  int
	WriteBuffer int
	Queue       int
}

func (c *UnicastConfig) normalize() error {
	if c.Federation == "" {
		return errors.New("transport: UnicastConfig.Federation is empty")
	}
	if c.Bind == "" {
		c.Bind = DefaultUnicastBind
	}
	return normalizeSizes(&c.MaxPacket, &c.Queue, c.ReadBuffer, c.WriteBuffer)
}

// Unicast is a Transport, BatchSender and Directory over UDP unicast,
// for networks that do not carry multicast (routed subnets, cloud VPCs,
// Kubernetes pod networks). A group's members are those the control
// plane announced (Directory); Send to a group sends one datagram to each
// member other than this node. What a receiver gets is what a multicast
// receiver would get: the datagrams of the groups it joined, best effort.
//
// # Sockets
//
// One UDP socket, bound to UnicastConfig.Bind, sends and receives. Its
// reader goroutine reads up to 32 datagrams per call (recvmmsg on
// Linux), keeps those of joined groups (checked against an immutable
// copy of the joined set, so no lock per datagram), and queues them on
// Recv, or offers them to a Direct taker, as UDP does. Every datagram
// carries UDP's 8-byte header (federation tag, group).
//
// # Fan-out
//
// Send and SendBatch look each group's members up in an immutable route
// table (rebuilt by Update and Remove) and hand the copies, up to 64 per
// call, to sendmmsg on Linux. The payloads are not copied: each copy is
// the header and the caller's payload. A copy the kernel refuses for its
// destination (no route to it, for instance) is dropped and counted in
// Stats().SendErrors, like a datagram lost on the way, and the others
// still go: one unreachable member must not silence the group. Waiting
// for socket buffer space is bounded as for UDP (50ms per call); a call
// that runs out of it returns the error.
//
// All methods are safe for concurrent use.
type Unicast struct {
	cfg       UnicastConfig
	tag       uint32
	local     netip.AddrPort // bound address
	advertise netip.AddrPort
	conn      *net.UDPConn
	pc        *ipv4.PacketConn
	mm        *mmsg // the sender's
	rmm       *mmsg // the reader's
	dir       *directory[netip.AddrPort]
	recv      chan Packet
	wg        sync.WaitGroup
	isClosed  atomic.Bool
	closeOnce sync.Once
	direct    atomic.Pointer[func([]Packet) int]

	sendMu sync.Mutex
	sendBufs
	wpkt []int // the packet each message of wmsgs copies

	udpCounts // own stays zero
}

// NewUnicast opens a unicast transport's socket and starts its reader.
// It joins no group and knows no member until its Directory is fed.
func NewUnicast(cfg UnicastConfig) (*Unicast, error) {
	if err := cfg.normalize(); err != nil {
		return nil, err
	}
	bind, err := netip.ParseAddrPort(cfg.Bind)
	if err != nil || !bind.Addr().Unmap().Is4() {
		return nil, fmt.Errorf("transport: unicast bind address %q: want an IPv4 host:port", cfg.Bind)
	}
	c, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(bind))
	if err != nil {
		return nil, fmt.Errorf("transport: unicast socket: %w", err)
	}
	fail := func(what string, err error) (*Unicast, error) {
		c.Close()
		return nil, fmt.Errorf("transport: unicast socket: %s: %w", what, err)
	}
	local := c.LocalAddr().(*net.UDPAddr).AddrPort()
	local = netip.AddrPortFrom(local.Addr().Unmap(), local.Port())
	adv := local
	if cfg.Advertise != "" {
		if adv, err = parseAdvertise(cfg.Advertise, local.Port()); err != nil {
			return fail("advertise", err)
		}
	}
	if adv.Addr().IsUnspecified() {
		return fail("advertise", fmt.Errorf("bound to %v: give the address others reach this node at (UnicastConfig.Advertise)", local))
	}
	if what, err := setBuffers(c, cfg.ReadBuffer, cfg.WriteBuffer); err != nil {
		return fail(what, err)
	}
	mm, err := newMMsg(c, writeBatch, 2)
	if err != nil {
		return fail("batch I/O", err)
	}
	rmm, err := newMMsg(c, readBatch, 1)
	if err != nil {
		return fail("batch I/O", err)
	}
	u := &Unicast{
		cfg:       cfg,
		tag:       uint32(federationHash(cfg.Federation) >> 32),
		local:     local,
		advertise: adv,
		conn:      c,
		pc:        ipv4.NewPacketConn(c),
		mm:        mm,
		rmm:       rmm,
		recv:      make(chan Packet, cfg.Queue),
		sendBufs:  newSendBufs(),
		wpkt:      make([]int, writeBatch),
	}
	u.dir = newDirectory(adv.String(), parseMember, func(a netip.AddrPort) bool { return a == u.advertise || a == u.local })
	u.wg.Add(1)
	go u.read()
	return u, nil
}

// parseAdvertise parses an advertised host:port; port 0 means port.
func parseAdvertise(s string, port uint16) (netip.AddrPort, error) {
	host, p, err := net.SplitHostPort(s)
	if err != nil {
		return netip.AddrPort{}, err
	}
	a, err := netip.ParseAddr(host)
	if err != nil || !a.Unmap().Is4() {
		return netip.AddrPort{}, fmt.Errorf("%q: want an IPv4 address", host)
	}
	if p != "" && p != "0" {
		ap, err := netip.ParseAddrPort(net.JoinHostPort(a.Unmap().String(), p))
		if err != nil {
			return netip.AddrPort{}, err
		}
		port = ap.Port()
	}
	return netip.AddrPortFrom(a.Unmap(), port), nil
}

// parseMember parses an announced address: an IPv4 host:port, neither
// the wildcard, the broadcast nor a multicast address, nor port 0.
func parseMember(s string) (netip.AddrPort, error) {
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return netip.AddrPort{}, err
	}
	a := ap.Addr().Unmap()
	if !a.Is4() || a.IsUnspecified() || a.IsMulticast() || a == netip.AddrFrom4([4]byte{255, 255, 255, 255}) || ap.Port() == 0 {
		return netip.AddrPort{}, errors.New("not a unicast IPv4 host:port")
	}
	return netip.AddrPortFrom(a, ap.Port()), nil
}

// Addr returns the address this transport announces (UnicastConfig.Advertise,
// or the bound address).
func (u *Unicast) Addr() netip.AddrPort { return u.advertise }

// LocalAddr returns the bound address.
func (u *Unicast) LocalAddr() netip.AddrPort { return u.local }

// Update implements Directory.
func (u *Unicast) Update(node string, b []byte) error { return u.dir.Update(node, b) }

// Remove implements Directory.
func (u *Unicast) Remove(node string) { u.dir.Remove(node) }

// SetAnnounce implements Directory.
func (u *Unicast) SetAnnounce(announce func([]byte)) { u.dir.SetAnnounce(announce) }

// DirectoryStats returns the directory's counts.
func (u *Unicast) DirectoryStats() DirectoryStats { return u.dir.stats() }

// Members returns the addresses a datagram on g goes to now.
func (u *Unicast) Members(g Group) []netip.AddrPort {
	return append([]netip.AddrPort(nil), u.dir.members(g)...)
}

// Stats returns the counts so far. Sent counts datagrams (one per
// member per Send); Own is always zero.
func (u *Unicast) Stats() UDPStats { return u.udpCounts.stats() }

// Recv implements Transport.
func (u *Unicast) Recv() <-chan Packet { return u.recv }

// SetDirect implements Direct.
func (u *Unicast) SetDirect(take func([]Packet) int) { u.direct.Store(&take) }

// Join implements Transport: datagrams on g are delivered from now on,
// and the new announcement goes to the control plane.
func (u *Unicast) Join(g Group) error {
	if u.isClosed.Load() {
		return ErrClosed
	}
	u.dir.join(g)
	return nil
}

// Leave implements Transport.
func (u *Unicast) Leave(g Group) error {
	if u.isClosed.Load() {
		return ErrClosed
	}
	u.dir.leave(g)
	return nil
}

// read is the reader goroutine.
func (u *Unicast) read() {
	defer u.wg.Done()
	ms := readMessages(u.cfg.MaxPacket)
	pkts := make([]Packet, readBatch)
	handle := func(got []ipv4.Message) { u.dispatch(got, pkts) }
	for {
		err := u.rmm.readEach(ms, handle)
		if u.isClosed.Load() || errors.Is(err, net.ErrClosed) {
			return
		}
		u.readErrors.Add(1)
	}
}

// dispatch keeps the datagrams of joined groups of a read and queues
// them, as UDP's dispatch does.
func (u *Unicast) dispatch(ms []ipv4.Message, pkts []Packet) {
	ms = ms[:min(len(ms), readBatch)]
	var keep [readBatch]bool
	total := 0
	for i := range ms {
		g, n, ok := u.header(&ms[i], u.cfg.MaxPacket, u.tag)
		switch {
		case !ok:
		case !u.dir.isJoined(g):
			u.foreign.Add(1) // a group not joined (any more)
		default:
			keep[i] = true
			total += n
		}
	}
	handOn(ms, &keep, total, pkts, u.direct.Load(), u.recv, &u.received, &u.overflow)
}

// Send implements Transport: one datagram to each member of g but this
// node. Payloads longer than MaxPacket-8 bytes are an error.
func (u *Unicast) Send(g Group, b []byte) error {
	u.sendMu.Lock()
	defer u.sendMu.Unlock()
	u.one[0] = Packet{Group: g, Data: b}
	_, err := u.sendLocked(u.one[:])
	u.one[0] = Packet{}
	return err
}

// SendBatch implements BatchSender: each packet goes to every member of
// its group, in slice order, up to 64 datagrams per sendmmsg call. It
// stops at the first payload longer than MaxPacket-8 bytes, or when the
// socket buffer stays full for 50ms; copies refused for their
// destination are counted and skipped (see Unicast). sent counts the
// packets whose every copy was tried.
func (u *Unicast) SendBatch(pkts []Packet) (sent int, err error) {
	u.sendMu.Lock()
	defer u.sendMu.Unlock()
	return u.sendLocked(pkts)
}

// sendLocked fans pkts out; u.sendMu is held.
func (u *Unicast) sendLocked(pkts []Packet) (int, error) {
	if u.isClosed.Load() {
		return 0, ErrClosed
	}
	deadline := time.Time{}
	n := 0 // messages set up in u.wmsgs
	flush := func() (int, error) {
		k, err := u.write(u.wmsgs[:n], &deadline)
		if err != nil {
			return u.wpkt[k], err
		}
		n = 0
		return 0, nil
	}
	for i, p := range pkts {
		if len(p.Data) > u.cfg.MaxPacket-udpHeaderLen {
			if done, err := flush(); err != nil {
				return done, err
			}
			return i, fmt.Errorf("transport: datagram of %d bytes exceeds %d", len(p.Data), u.cfg.MaxPacket-udpHeaderLen)
		}
		for _, to := range u.dir.members(p.Group) {
			if n == len(u.wmsgs) {
				if done, err := flush(); err != nil {
					return done, err
				}
			}
			u.set(n, u.tag, p, to.Addr().As4(), int(to.Port()))
			u.wpkt[n] = i
			n++
		}
	}
	if n > 0 {
		if done, err := flush(); err != nil {
			return done, err
		}
	}
	return len(pkts), nil
}

// write sends ms, skipping (and counting) a message refused for its
// destination. It returns the index of the first message not sent and
// an error only when waiting for buffer space timed out or the socket
// closed. The payloads are released before it returns.
func (u *Unicast) write(ms []ipv4.Message, deadline *time.Time) (int, error) {
	defer func() {
		for i := range ms {
			ms[i].Buffers[1] = nil
		}
	}()
	waiting := dontWait == 0
	if waiting && len(ms) > 0 {
		armDeadline(u.conn, deadline)
	}
	defer func() {
		if waiting {
			u.conn.SetWriteDeadline(time.Time{})
		}
	}()
	done := 0
	for done < len(ms) {
		var k int
		var err error
		if waiting {
			k, err = u.pc.WriteBatch(ms[done:], 0)
		} else {
			k, err = u.mm.write(ms[done:])
		}
		if k > 0 {
			done += k
			u.sent.Add(uint64(k))
		}
		switch {
		case err == nil && k <= 0:
			// Nothing taken and no reason: count it and skip it.
			u.sendErrors.Add(1)
			done++
		case err == nil:
		case !waiting && errors.Is(err, syscall.EAGAIN):
			waiting = true
			armDeadline(u.conn, deadline)
		case errors.Is(err, net.ErrClosed):
			return done, ErrClosed
		case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EWOULDBLOCK), netTimeout(err):
			u.sendErrors.Add(uint64(len(ms) - done))
			return done, fmt.Errorf("transport: unicast send: %w", err)
		default:
			// Refused for this destination (no route, for instance):
			// lost, like a datagram dropped on the way.
			u.sendErrors.Add(1)
			done++
		}
	}
	return len(ms), nil
}

func netTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Close implements Transport: it closes the socket, waits for the
// reader, then closes the Recv channel.
func (u *Unicast) Close() error {
	var err error
	u.closeOnce.Do(func() {
		u.isClosed.Store(true)
		err = closeSending(&u.sendMu, u.conn, &u.wg, u.recv)
	})
	return err
}

// String describes the transport, for logs.
func (u *Unicast) String() string {
	return "udp unicast " + u.cfg.Federation + " on " + u.local.String() + " (announced " + u.advertise.String() + ")"
}
