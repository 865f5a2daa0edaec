package transport

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/net/ipv4"
)

// UDP defaults.
const (
	// DefaultPort is the UDP port of every group when UDPConfig.Port is
	// zero. All members of a federation must use the same port.
	DefaultPort = 47470
	// DefaultInterface is the interface multicast is sent and received on
	// when UDPConfig.Interface is empty. Loopback keeps traffic on the
	// host; a LAN deployment names its interface explicitly.
	DefaultInterface = "lo"
	// DefaultMaxPacket is the largest datagram, header included, that a
	// UDP transport sends or receives when UDPConfig.MaxPacket is zero.
	DefaultMaxPacket = 2048
	// udpHeaderLen is the transport header: federation tag, group.
	udpHeaderLen = 8
	// DefaultGroupsPerSocket is the most group addresses a receiving
	// socket joins when UDPConfig.GroupsPerSocket is zero: Linux's
	// default net.ipv4.igmp_max_memberships.
	DefaultGroupsPerSocket = 20
	// readBatch is the number of datagrams read per ReadBatch call.
	readBatch = 32
	// writeBatch is the largest number of datagrams SendBatch hands to
	// one WriteBatch call (sendmmsg on Linux); longer batches take
	// several calls.
	writeBatch = 64
	// sendTimeout bounds how long Send and SendBatch wait for socket
	// buffer space.
	sendTimeout = 50 * time.Millisecond
)

// DefaultBaseAddr is the range group addresses are drawn from when
// UDPConfig.BaseAddr is not set: the IPv4 organization-local scope of
// RFC 2365.
var DefaultBaseAddr = netip.MustParsePrefix("239.192.0.0/14")

// adminScope is the administratively scoped IPv4 multicast range (RFC
// 2365); every group address lies inside it.
var adminScope = netip.MustParsePrefix("239.0.0.0/8")

// UDPConfig configures a UDP multicast transport. Zero fields mean the
// defaults, which keep every datagram on the loopback interface of this
// host: interface "lo", TTL 0, loopback on.
type UDPConfig struct {
	// Federation names the federation execution. Group addresses and the
	// transport header are derived from it, so federations sharing a
	// network stay apart. Required.
	Federation string
	// Port is the UDP port of every group. Zero means DefaultPort; there is
	// no ephemeral choice, since all members must agree.
	Port int
	// Interface names the interface multicast is sent and received on, or
	// gives one of its IPv4 addresses. Empty means DefaultInterface ("lo").
	Interface string
	// TTL is the multicast TTL of sent datagrams. The default, 0, keeps
	// them on this host; 1 reaches the local link.
	TTL int
	// Loopback sets whether sent datagrams are looped back to receivers on
	// this host, this process included. Nil means true, which several
	// federates on one host need.
	Loopback *bool
	// BaseAddr is the range group addresses are drawn from; it must lie
	// inside 239.0.0.0/8. The zero Prefix means DefaultBaseAddr.
	BaseAddr netip.Prefix
	// ReadBuffer sets SO_RCVBUF of each receiving socket; zero keeps the
	// system default. The kernel caps it (net.core.rmem_max on Linux).
	ReadBuffer int
	// WriteBuffer sets SO_SNDBUF of the sending socket; zero keeps the
	// system default. The kernel caps it (net.core.wmem_max on Linux).
	WriteBuffer int
	// MaxPacket is the largest datagram, transport header included, that
	// is sent or received, at most 65507 (the largest IPv4 UDP payload).
	// Zero means DefaultMaxPacket. Longer received datagrams are dropped
	// and counted. The loopback interface carries datagrams up to that
	// limit (its MTU is 64 KiB) without IP fragmentation, so frames of
	// up to about 64 KiB suit one host; on a LAN, keep MaxPacket under
	// the link MTU (1472 for Ethernet) to avoid fragments.
	MaxPacket int
	// Queue is the capacity of the Recv channel; zero means 1024. A
	// datagram that finds the channel full is dropped and counted.
	Queue int
	// GroupsPerSocket is the most group addresses one receiving socket
	// joins, on Linux, where a socket holds at most
	// net.ipv4.igmp_max_memberships memberships (20 by default). Zero
	// means DefaultGroupsPerSocket. When the kernel refuses a membership
	// anyway, the transport opens another socket. Other systems open one
	// socket per group address and ignore GroupsPerSocket.
	GroupsPerSocket int
	// PollFor, on Linux, makes each receiving socket's reader keep trying
	// its socket for up to this long after it emptied it, yielding to
	// other goroutines between tries, before it parks until the system
	// says a datagram came. A datagram that arrives within the window is
	// read at once, without the wake-up of a parked thread: lower round
	// trips and faster time steps, for up to a core kept busy while the
	// federate waits. Zero, the default: no polling. Other systems ignore
	// it. See docs/dataplane.md, Polling.
	PollFor time.Duration
}

func (c *UDPConfig) normalize() error {
	if c.Federation == "" {
		return errors.New("transport: UDPConfig.Federation is empty")
	}
	if c.Port == 0 {
		c.Port = DefaultPort
	}
	if c.Port < 1 || c.Port > 65535 {
		return fmt.Errorf("transport: port %d out of range", c.Port)
	}
	if c.Interface == "" {
		c.Interface = DefaultInterface
	}
	if c.TTL < 0 || c.TTL > 255 {
		return fmt.Errorf("transport: TTL %d out of range", c.TTL)
	}
	if c.Loopback == nil {
		on := true
		c.Loopback = &on
	}
	if !c.BaseAddr.IsValid() {
		c.BaseAddr = DefaultBaseAddr
	}
	c.BaseAddr = c.BaseAddr.Masked()
	if !c.BaseAddr.Addr().Is4() || c.BaseAddr.Bits() < adminScope.Bits() || !adminScope.Contains(c.BaseAddr.Addr()) {
		return fmt.Errorf("transport: base address %v not inside %v", c.BaseAddr, adminScope)
	}
	if err := normalizeSizes(&c.MaxPacket, &c.Queue, c.ReadBuffer, c.WriteBuffer); err != nil {
		return err
	}
	if c.GroupsPerSocket == 0 {
		c.GroupsPerSocket = DefaultGroupsPerSocket
	}
	if c.GroupsPerSocket < 0 {
		return fmt.Errorf("transport: negative groups per socket %d", c.GroupsPerSocket)
	}
	return nil
}

// normalizeSizes applies the defaults of a configuration's MaxPacket and
// Queue (UDPConfig's, UnicastConfig's), and checks them and its buffer
// sizes read and write.
func normalizeSizes(maxPacket, queue *int, read, write int) error {
	if read < 0 {
		return fmt.Errorf("transport: negative read buffer %d", read)
	}
	if write < 0 {
		return fmt.Errorf("transport: negative write buffer %d", write)
	}
	if *maxPacket == 0 {
		*maxPacket = DefaultMaxPacket
	}
	if *maxPacket <= udpHeaderLen || *maxPacket > 65507 {
		return fmt.Errorf("transport: MaxPacket %d out of range", *maxPacket)
	}
	if *queue == 0 {
		*queue = 1024
	}
	if *queue < 0 {
		return fmt.Errorf("transport: negative queue length %d", *queue)
	}
	return nil
}

// FNV-1a 64 parameters.
const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

// fnv1a continues FNV-1a 64 hash state h over s.
func fnv1a[T string | []byte](h uint64, s T) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime64
	}
	return h
}

// federationHash is FNV-1a 64 of the federation name.
func federationHash(federation string) uint64 {
	return fnv1a(fnvOffset64, federation)
}

// GroupAddr returns the IPv4 multicast address of group g of a federation:
// the host bits of base (the bits after its prefix) are the low bits of
// FNV-1a 64 over the federation name, a zero byte and g as 4 big-endian
// bytes. Distinct groups may share an address; the transport header keeps
// them apart.
func GroupAddr(federation string, base netip.Prefix, g Group) netip.Addr {
	return groupAddr(federationHash(federation), base.Masked(), g)
}

// groupAddr is GroupAddr given the federation's hash and a masked base.
// It does not allocate.
func groupAddr(fedHash uint64, base netip.Prefix, g Group) netip.Addr {
	var b [5]byte
	binary.BigEndian.PutUint32(b[1:], uint32(g))
	sum := fnv1a(fedHash, b[:])
	a4 := base.Addr().As4()
	v := binary.BigEndian.Uint32(a4[:])
	hostBits := 32 - base.Bits()
	if hostBits > 0 {
		v |= uint32(sum) & (1<<hostBits - 1)
	}
	binary.BigEndian.PutUint32(a4[:], v)
	return netip.AddrFrom4(a4)
}

// UDPStats counts what a UDP transport did.
type UDPStats struct {
	Sent       uint64 // datagrams sent
	SendErrors uint64 // datagrams Send failed to send
	Received   uint64 // datagrams put on the Recv channel
	Overflow   uint64 // dropped because the Recv channel was full
	Foreign    uint64 // dropped: another federation, a group not joined, or no transport header
	Own        uint64 // dropped: sent by this transport (multicast loopback)
	TooLong    uint64 // dropped: longer than MaxPacket
	ReadErrors uint64 // failed reads
}

// UDP is a Transport and a BatchSender over IPv4 UDP multicast, built on
// golang.org/x/net/ipv4.
//
// Each group maps to an address (GroupAddr) and the configured port.
//
// # Sockets
//
// On Linux, receiving sockets are bound to the wildcard address and the
// port (0.0.0.0:port) with SO_REUSEADDR, so several transports, in this
// process or others on the host, share the port. Each joins up to
// UDPConfig.GroupsPerSocket group addresses (20 by default, Linux's
// per-socket limit net.ipv4.igmp_max_memberships) on the configured
// interface, and has IP_MULTICAST_ALL off, so it receives only the
// addresses it joined, not those other sockets on the host joined. Join
// puts a new address on the first socket with room and opens a socket
// when none has any, so 100 groups take 5 sockets; Leave drops the
// membership when no joined group is left on the address, and closes the
// socket, waiting for its reader, when it holds no membership any more.
// On other systems each joined address gets its own socket, bound to
// address:port.
//
// Each receiving socket has one reader goroutine. It reads up to 32
// datagrams per ReadBatch call (recvmmsg on Linux), checks their headers
// against an immutable copy of the joined groups (replaced by Join and
// Leave, so no lock is taken per datagram), copies the payloads of a
// batch into one allocation shared by its packets, and puts them on the
// Recv channel without blocking.
//
// One sending socket, bound to the interface address, carries every Send
// and SendBatch, with the multicast interface, TTL and loopback options
// set. SendBatch hands up to 64 datagrams to one WriteBatch call
// (sendmmsg on Linux; one datagram per call elsewhere).
//
// # Datagrams
//
// Every datagram starts with an 8-byte header, the federation tag (the high
// 32 bits of FNV-1a 64 of the federation name) and the group number, both
// big-endian. Receivers use it to drop other federations' datagrams and to
// tell apart groups that hash to the same address. A datagram, header
// included, is at most UDPConfig.MaxPacket bytes: 2048 by default, up to
// 65507. Loopback carries datagrams of up to about 64 KiB unfragmented;
// raise ReadBuffer and WriteBuffer with MaxPacket so that bursts of large
// datagrams fit in the socket buffers.
//
// With loopback on (the default), the datagrams a UDP sends reach other
// processes on the host, and also its own receiving sockets on the groups
// it has joined. It drops those (their source is its sending socket) and
// counts them in Stats.Own, so that a busy sender's own traffic never
// crowds others' out of its Recv channel.
//
// All methods are safe for concurrent use.
type UDP struct {
	cfg      UDPConfig
	ifi      *net.Interface
	ifAddr   netip.Addr
	fedHash  uint64 // federationHash(cfg.Federation)
	tag      uint32
	sendConn *net.UDPConn
	sendPC   *ipv4.PacketConn
	sendMM   *mmsg // batch sends that do not wait
	recv     chan Packet
	wg       sync.WaitGroup
	isClosed atomic.Bool

	sendMu sync.Mutex
	sendBufs

	mu      sync.Mutex
	closed  bool
	joined  map[Group]*udpSocket      // the socket holding each joined group
	members map[netip.Addr]*udpSocket // the socket holding each joined address
	socks   []*udpSocket              // open receiving sockets
	// routes is a copy of joined for the readers, replaced under mu on
	// every change and never modified, so readers need no lock.
	routes atomic.Pointer[map[Group]*udpSocket]

	udpCounts

	selfIP   net.IP // the sending socket's address, to recognize own datagrams
	selfPort int
	direct   atomic.Pointer[func([]Packet) int] // see SetDirect
}

// udpSocket is a receiving socket and its reader goroutine. On Linux it is
// bound to the wildcard address and holds up to GroupsPerSocket group
// addresses; elsewhere it is bound to its one group address.
type udpSocket struct {
	conn    *net.UDPConn
	pc      *ipv4.PacketConn
	mm      *mmsg
	pkts    []Packet           // the reader's datagrams of one read, for dispatch (made there)
	addrs   map[netip.Addr]int // joined groups per member address; guarded by UDP.mu
	full    bool               // the kernel refused another membership; guarded by UDP.mu
	closing atomic.Bool        // set before conn is closed
	done    chan struct{}      // closed when the reader exits
}

// NewUDP opens the sending socket of a UDP multicast transport. It joins no
// group.
func NewUDP(cfg UDPConfig) (*UDP, error) {
	if err := cfg.normalize(); err != nil {
		return nil, err
	}
	ifi, addr, err := lookupInterface(cfg.Interface)
	if err != nil {
		return nil, err
	}
	c, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(addr, 0)))
	if err != nil {
		return nil, fmt.Errorf("transport: sending socket: %w", err)
	}
	pc := ipv4.NewPacketConn(c)
	fail := func(what string, err error) (*UDP, error) {
		c.Close()
		return nil, fmt.Errorf("transport: sending socket: %s: %w", what, err)
	}
	if err := pc.SetMulticastInterface(ifi); err != nil {
		return fail("multicast interface", err)
	}
	if err := pinMulticastIf(c, ifi, addr); err != nil {
		return fail("multicast interface", err)
	}
	if err := pc.SetMulticastTTL(cfg.TTL); err != nil {
		return fail("multicast TTL", err)
	}
	if err := pc.SetMulticastLoopback(*cfg.Loopback); err != nil {
		return fail("multicast loopback", err)
	}
	if what, err := setBuffers(c, 0, cfg.WriteBuffer); err != nil {
		return fail(what, err)
	}
	mm, err := newMMsg(c, writeBatch, 2)
	if err != nil {
		return fail("batch I/O", err)
	}
	u := &UDP{
		cfg:      cfg,
		sendMM:   mm,
		ifi:      ifi,
		ifAddr:   addr,
		fedHash:  federationHash(cfg.Federation),
		tag:      uint32(federationHash(cfg.Federation) >> 32),
		sendConn: c,
		sendPC:   pc,
		recv:     make(chan Packet, cfg.Queue),
		sendBufs: newSendBufs(),
		joined:   make(map[Group]*udpSocket),
		members:  make(map[netip.Addr]*udpSocket),
	}
	la := c.LocalAddr().(*net.UDPAddr)
	u.selfIP, u.selfPort = la.IP, la.Port
	u.routes.Store(&map[Group]*udpSocket{})
	return u, nil
}

// lookupInterface finds an interface by name, or by one of its IPv4
// addresses, and returns it with its first IPv4 address.
func lookupInterface(name string) (*net.Interface, netip.Addr, error) {
	want, parseErr := netip.ParseAddr(name)
	isAddr := parseErr == nil
	var ifs []net.Interface
	if isAddr {
		all, err := net.Interfaces()
		if err != nil {
			return nil, netip.Addr{}, fmt.Errorf("transport: interfaces: %w", err)
		}
		ifs = all
	} else {
		ifi, err := net.InterfaceByName(name)
		if err != nil {
			return nil, netip.Addr{}, fmt.Errorf("transport: interface %q: %w", name, err)
		}
		ifs = []net.Interface{*ifi}
	}
	for i := range ifs {
		ifi := &ifs[i]
		if ifi.Flags&net.FlagUp == 0 {
			continue
		}
		addrs, err := ifi.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			p, err := netip.ParsePrefix(a.String())
			if err != nil || !p.Addr().Is4() {
				continue
			}
			if isAddr && p.Addr() != want {
				continue
			}
			return ifi, p.Addr(), nil
		}
	}
	return nil, netip.Addr{}, fmt.Errorf("transport: interface %q: no usable IPv4 address", name)
}

// Config returns the configuration in use, defaults filled in.
func (u *UDP) Config() UDPConfig { return u.cfg }

// GroupAddr returns the address and port datagrams of g are sent to.
func (u *UDP) GroupAddr(g Group) netip.AddrPort {
	return netip.AddrPortFrom(groupAddr(u.fedHash, u.cfg.BaseAddr, g), uint16(u.cfg.Port))
}

// Stats returns the counts so far.
func (u *UDP) Stats() UDPStats { return u.udpCounts.stats() }

// Recv implements Transport.
func (u *UDP) Recv() <-chan Packet { return u.recv }

// Join implements Transport. If no joined group shares g's address, it
// joins the address on a receiving socket with room, or opens a new one.
func (u *UDP) Join(g Group) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.closed {
		return ErrClosed
	}
	if _, ok := u.joined[g]; ok {
		return nil
	}
	addr := groupAddr(u.fedHash, u.cfg.BaseAddr, g)
	s, err := u.memberLocked(addr)
	if err != nil {
		return fmt.Errorf("transport: join group %d (%v:%d): %w", g, addr, u.cfg.Port, err)
	}
	s.addrs[addr]++
	u.joined[g] = s
	u.publishLocked()
	return nil
}

// memberLocked returns the socket holding the membership of addr. When
// none does, it joins addr on the first socket with room, or on a new
// socket whose reader it starts.
func (u *UDP) memberLocked(addr netip.Addr) (*udpSocket, error) {
	if s := u.members[addr]; s != nil {
		return s, nil
	}
	group := &net.UDPAddr{IP: addr.AsSlice()}
	for _, s := range u.socks {
		if !sharedSockets || s.full || len(s.addrs) >= u.cfg.GroupsPerSocket {
			continue
		}
		err := s.pc.JoinGroup(u.ifi, group)
		if err == nil {
			u.members[addr] = s
			return s, nil
		}
		if !membershipLimit(err) {
			return nil, err
		}
		s.full = true
	}
	s, err := u.listen(addr)
	if err != nil {
		return nil, err
	}
	if err := s.pc.JoinGroup(u.ifi, group); err != nil {
		s.conn.Close()
		return nil, err
	}
	u.socks = append(u.socks, s)
	u.members[addr] = s
	u.wg.Add(1)
	go u.read(s)
	return s, nil
}

// publishLocked hands the readers a fresh copy of the joined groups.
func (u *UDP) publishLocked() {
	r := maps.Clone(u.joined)
	u.routes.Store(&r)
}

// numSockets returns the number of open receiving sockets.
func (u *UDP) numSockets() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.socks)
}

// listen opens a receiving socket for group address addr; it joins no
// group.
func (u *UDP) listen(addr netip.Addr) (*udpSocket, error) {
	lc := net.ListenConfig{Control: receiveControl}
	ap := netip.AddrPortFrom(receiveAddr(addr), uint16(u.cfg.Port))
	c, err := lc.ListenPacket(context.Background(), "udp4", ap.String())
	if err != nil {
		return nil, err
	}
	conn := c.(*net.UDPConn)
	if _, err := setBuffers(conn, u.cfg.ReadBuffer, 0); err != nil {
		conn.Close()
		return nil, err
	}
	pc := ipv4.NewPacketConn(conn)
	dropOwn(pc, &net.UDPAddr{IP: u.selfIP, Port: u.selfPort})
	mm, err := newMMsg(conn, readBatch, 1)
	if err != nil {
		conn.Close()
		return nil, err
	}
	mm.setPoll(u.cfg.PollFor)
	return &udpSocket{
		conn:  conn,
		pc:    pc,
		mm:    mm,
		addrs: make(map[netip.Addr]int),
		done:  make(chan struct{}),
	}, nil
}

// read is the reader goroutine of one receiving socket.
func (u *UDP) read(s *udpSocket) {
	defer u.wg.Done()
	defer close(s.done)
	ms := readMessages(u.cfg.MaxPacket)
	handle := func(got []ipv4.Message) { u.dispatch(s, got) }
	for {
		err := s.mm.readEach(ms, handle)
		if s.closing.Load() || errors.Is(err, net.ErrClosed) {
			return
		}
		u.readErrors.Add(1)
	}
}

// dispatch checks the transport headers of a batch of datagrams read from
// s and queues those of the groups joined on s. It copies their payloads
// into one allocation, split between the packets without overlap, and
// takes no lock: the joined groups come from u.routes.
func (u *UDP) dispatch(s *udpSocket, ms []ipv4.Message) {
	routes := *u.routes.Load()
	var keep [readBatch]bool
	total := 0
	for i := range ms[:min(len(ms), readBatch)] {
		g, n, ok := u.header(&ms[i], u.cfg.MaxPacket, u.tag)
		switch {
		case !ok:
		case routes[g] != s:
			u.foreign.Add(1) // a group not joined, or joined on another socket
		case u.isOwn(ms[i].Addr):
			u.own.Add(1)
		default:
			keep[i] = true
			total += n
		}
	}
	if s.pkts == nil {
		s.pkts = make([]Packet, readBatch) // the reader's, reused
	}
	handOn(ms, &keep, total, s.pkts[:readBatch], u.direct.Load(), u.recv, &u.received, &u.overflow)
}

// handOn copies the payloads of the kept datagrams of a read (after
// their transport header; total bytes in all) into one allocation, split
// between packets without overlap, and hands the packets on in order:
// to take (SetDirect) as many as it takes, the rest to recv, counted in
// overflow when it is full; received counts what went. pkts is the
// reader's scratch space, cleared after, so that it keeps no datagram.
// UDP and Unicast share it.
func handOn(ms []ipv4.Message, keep *[readBatch]bool, total int, pkts []Packet, take *func([]Packet) int, recv chan Packet, received, overflow *atomic.Uint64) {
	data := make([]byte, total)
	kept := 0
	for i := range ms[:min(len(ms), readBatch)] {
		if !keep[i] {
			continue
		}
		b := ms[i].Buffers[0][:ms[i].N]
		n := copy(data, b[udpHeaderLen:])
		pkts[kept] = Packet{Group: Group(binary.BigEndian.Uint32(b[4:])), Data: data[:n:n]}
		kept++
		data = data[n:]
	}
	rest := pkts[:kept]
	if take != nil && kept > 0 {
		k := min(max((*take)(rest), 0), kept)
		received.Add(uint64(k))
		rest = rest[k:]
	}
	for _, pkt := range rest {
		select {
		case recv <- pkt:
			received.Add(1)
		default:
			overflow.Add(1)
		}
	}
	clear(pkts[:kept]) // do not keep the datagrams
}

// SetDirect implements Direct: the reader goroutines offer the datagrams
// of each read to take before queueing the rest on Recv.
func (u *UDP) SetDirect(take func([]Packet) int) { u.direct.Store(&take) }

// isOwn reports whether a datagram came from this transport's sending
// socket (multicast loopback).
func (u *UDP) isOwn(a net.Addr) bool {
	ua, ok := a.(*net.UDPAddr)
	return ok && ua.Port == u.selfPort && ua.IP.Equal(u.selfIP)
}

// Leave implements Transport. When no joined group is left on its
// address, Leave drops the membership; when no membership is left on its
// socket, it closes the socket and waits for its reader.
func (u *UDP) Leave(g Group) error {
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		return ErrClosed
	}
	s, ok := u.joined[g]
	if !ok {
		u.mu.Unlock()
		return nil
	}
	delete(u.joined, g)
	u.publishLocked()
	addr := groupAddr(u.fedHash, u.cfg.BaseAddr, g)
	var err error
	if s.addrs[addr]--; s.addrs[addr] <= 0 {
		delete(s.addrs, addr)
		delete(u.members, addr)
		s.full = false
		if len(s.addrs) > 0 {
			err = s.pc.LeaveGroup(u.ifi, &net.UDPAddr{IP: addr.AsSlice()})
		}
	}
	last := len(s.addrs) == 0
	if last {
		u.socks = slices.DeleteFunc(u.socks, func(o *udpSocket) bool { return o == s })
	}
	u.mu.Unlock()
	if last {
		// Closing the socket drops its memberships.
		s.closing.Store(true)
		s.conn.Close()
		<-s.done
	}
	if err != nil {
		return fmt.Errorf("transport: leave group %d: %w", g, err)
	}
	return nil
}

// Send implements Transport. It prepends the transport header and sends
// one datagram to g's address; it waits at most 50ms for socket buffer
// space. Payloads longer than MaxPacket-8 bytes are an error.
func (u *UDP) Send(g Group, b []byte) error {
	if u.isClosed.Load() {
		return ErrClosed
	}
	if err := u.checkLen(b); err != nil {
		return err
	}
	u.sendMu.Lock()
	defer u.sendMu.Unlock()
	u.one[0] = Packet{Group: g, Data: b}
	_, err := u.sendChunk(u.one[:])
	u.one[0] = Packet{}
	return err
}

// SendBatch implements BatchSender. Each datagram gets the same header as
// with Send and goes to its group's address, in slice order, with one
// WriteBatch call (sendmmsg on Linux) per 64 datagrams; the payloads are
// not copied, the header and payload leave as two pieces of one
// datagram. SendBatch waits at most 50ms per call for socket buffer
// space. It stops at the first payload longer than MaxPacket-8 bytes or
// the first failed write, returning how many datagrams the kernel took.
// In steady state it does not allocate.
func (u *UDP) SendBatch(pkts []Packet) (sent int, err error) {
	if u.isClosed.Load() {
		return 0, ErrClosed
	}
	u.sendMu.Lock()
	defer u.sendMu.Unlock()
	deadline := time.Time{}
	for len(pkts) > 0 {
		chunk := pkts[:min(len(pkts), writeBatch)]
		n, err := u.sendChunkBy(chunk, &deadline)
		sent += n
		if err != nil {
			return sent, err
		}
		pkts = pkts[len(chunk):]
	}
	return sent, nil
}

// sendChunk sends up to writeBatch datagrams, waiting at most sendTimeout
// for buffer space; u.sendMu is held.
func (u *UDP) sendChunk(pkts []Packet) (sent int, err error) {
	deadline := time.Time{}
	return u.sendChunkBy(pkts, &deadline)
}

// sendChunkBy sends up to writeBatch datagrams; u.sendMu is held. Writes
// first try not to wait (dontWait); only when the socket buffer is full
// does it set a write deadline, *deadline if set, else sendTimeout from
// now (stored back in *deadline), and wait. Not setting a deadline when
// none is needed saves its cost and keeps a descheduled sender from
// failing a write it never tried: the runtime refuses writes once the
// deadline has passed.
func (u *UDP) sendChunkBy(pkts []Packet, deadline *time.Time) (sent int, err error) {
	n := 0
	var lenErr error
	for _, p := range pkts {
		if lenErr = u.checkLen(p.Data); lenErr != nil {
			break
		}
		u.set(n, u.tag, p, groupAddr(u.fedHash, u.cfg.BaseAddr, p.Group).As4(), u.cfg.Port)
		n++
	}
	ms := u.wmsgs[:n]
	flags := dontWait
	waiting := flags == 0 // no non-waiting writes here
	if waiting && n > 0 {
		armDeadline(u.sendConn, deadline)
	}
	for sent < n && err == nil {
		var k int
		if waiting {
			k, err = u.sendPC.WriteBatch(ms[sent:], flags)
		} else {
			k, err = u.sendMM.write(ms[sent:])
		}
		if k > 0 {
			sent += k
			u.sent.Add(uint64(k))
		}
		switch {
		case err != nil && !waiting && errors.Is(err, syscall.EAGAIN):
			// The socket buffer is full: wait for room, within limits.
			err = nil
			flags, waiting = 0, true
			armDeadline(u.sendConn, deadline)
		case err != nil:
			err = u.sendError(pkts[sent].Group, err)
		case k <= 0:
			u.sendErrors.Add(1)
			err = fmt.Errorf("transport: send on group %d: no datagram sent", pkts[sent].Group)
		}
	}
	if waiting {
		u.sendConn.SetWriteDeadline(time.Time{})
	}
	for i := range ms {
		ms[i].Buffers[1] = nil // do not keep the caller's data
	}
	if err != nil {
		return sent, err
	}
	return sent, lenErr
}

// checkLen reports a payload too long for MaxPacket.
func (u *UDP) checkLen(b []byte) error {
	if len(b) > u.cfg.MaxPacket-udpHeaderLen {
		return fmt.Errorf("transport: datagram of %d bytes exceeds %d", len(b), u.cfg.MaxPacket-udpHeaderLen)
	}
	return nil
}

// sendError counts a failed write and describes it.
func (u *UDP) sendError(g Group, err error) error {
	if errors.Is(err, net.ErrClosed) {
		return ErrClosed
	}
	u.sendErrors.Add(1)
	return fmt.Errorf("transport: send on group %d: %w", g, err)
}

// udpCounts are the counters behind UDPStats, of UDP and Unicast.
type udpCounts struct {
	sent, sendErrors, received, overflow, foreign, own, tooLong, readErrors atomic.Uint64
}

func (c *udpCounts) stats() UDPStats {
	return UDPStats{
		Sent:       c.sent.Load(),
		SendErrors: c.sendErrors.Load(),
		Received:   c.received.Load(),
		Overflow:   c.overflow.Load(),
		Foreign:    c.foreign.Load(),
		Own:        c.own.Load(),
		TooLong:    c.tooLong.Load(),
		ReadErrors: c.readErrors.Load(),
	}
}

// header checks the transport header of the datagram read in m, counting
// it in tooLong (longer than maxPacket) or foreign (no header, or
// another federation's tag) when it is not one to keep, and returns its
// group and payload length.
func (c *udpCounts) header(m *ipv4.Message, maxPacket int, tag uint32) (g Group, n int, ok bool) {
	b := m.Buffers[0][:m.N]
	switch {
	case len(b) > maxPacket:
		c.tooLong.Add(1)
	case len(b) < udpHeaderLen || binary.BigEndian.Uint32(b) != tag:
		c.foreign.Add(1)
	default:
		return Group(binary.BigEndian.Uint32(b[4:])), len(b) - udpHeaderLen, true
	}
	return 0, 0, false
}

// setBuffers sets the read and write buffer sizes of c that are
// positive, and names the one refused.
func setBuffers(c *net.UDPConn, read, write int) (what string, err error) {
	if read > 0 {
		if err := c.SetReadBuffer(read); err != nil {
			return "read buffer", err
		}
	}
	if write > 0 {
		if err := c.SetWriteBuffer(write); err != nil {
			return "write buffer", err
		}
	}
	return "", nil
}

// readMessages makes a reader's readBatch messages, each with a buffer of
// maxPacket+1 bytes (one byte more shows longer datagrams) and room for
// an IPv4 source address.
func readMessages(maxPacket int) []ipv4.Message {
	size := maxPacket + 1
	buf := make([]byte, readBatch*size)
	ms := make([]ipv4.Message, readBatch)
	for i := range ms {
		ms[i].Buffers = [][]byte{buf[i*size : (i+1)*size : (i+1)*size]}
		ms[i].Addr = &net.UDPAddr{IP: make(net.IP, net.IPv4len)}
	}
	return ms
}

// sendBufs are a sender's writeBatch messages, each the transport header
// then the payload, to its address; guarded by the sender's sendMu.
type sendBufs struct {
	wmsgs  []ipv4.Message
	whdrs  [][udpHeaderLen]byte
	waddrs []net.UDPAddr
	one    [1]Packet // Send's datagram as a batch
}

func newSendBufs() sendBufs {
	s := sendBufs{
		wmsgs:  make([]ipv4.Message, writeBatch),
		whdrs:  make([][udpHeaderLen]byte, writeBatch),
		waddrs: make([]net.UDPAddr, writeBatch),
	}
	for i := range s.wmsgs {
		s.wmsgs[i].Buffers = [][]byte{s.whdrs[i][:], nil}
		s.waddrs[i].IP = make(net.IP, net.IPv4len)
		s.wmsgs[i].Addr = &s.waddrs[i]
	}
	return s
}

// set makes message i the datagram of p, with the federation tag tag, to
// addr:port. The payload is not copied.
func (s *sendBufs) set(i int, tag uint32, p Packet, addr [4]byte, port int) {
	binary.BigEndian.PutUint32(s.whdrs[i][:], tag)
	binary.BigEndian.PutUint32(s.whdrs[i][4:], uint32(p.Group))
	copy(s.waddrs[i].IP, addr[:])
	s.waddrs[i].Port = port
	s.wmsgs[i].Buffers[1] = p.Data
}

// armDeadline sets the write deadline of the sending socket conn to *d,
// after setting *d to sendTimeout from now if it is zero.
func armDeadline(conn *net.UDPConn, d *time.Time) {
	if d.IsZero() {
		*d = time.Now().Add(sendTimeout)
	}
	conn.SetWriteDeadline(*d)
}

// Close implements Transport: it closes every socket, waits for the reader
// goroutines, then closes the Recv channel.
func (u *UDP) Close() error {
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		return nil
	}
	u.closed = true
	u.isClosed.Store(true)
	socks := u.socks
	u.socks = nil
	clear(u.members)
	clear(u.joined)
	u.publishLocked()
	u.mu.Unlock()
	for _, s := range socks {
		s.closing.Store(true)
		s.conn.Close()
	}
	return closeSending(&u.sendMu, u.sendConn, &u.wg, u.recv)
}

// closeSending closes the sending socket conn once no send holds sendMu,
// waits for the readers, then closes their Recv channel recv.
func closeSending(sendMu *sync.Mutex, conn *net.UDPConn, readers *sync.WaitGroup, recv chan Packet) error {
	sendMu.Lock()
	err := conn.Close()
	sendMu.Unlock()
	readers.Wait()
	close(recv)
	if err != nil {
		return fmt.Errorf("transport: close: %w", err)
	}
	return nil
}

// String describes the transport, for logs.
func (u *UDP) String() string {
	return "udp " + u.cfg.Federation + " on " + u.cfg.Interface + " (" + u.ifAddr.String() + ") port " + strconv.Itoa(u.cfg.Port)
}
