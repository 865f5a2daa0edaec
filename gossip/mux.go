package gossip

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/rs/zerolog"
)

// A Mux is one gossip address, a UDP socket and a TCP listener on one
// port, shared by every Cluster of a process that is given it
// (Config.Mux): a daemon that hosts many federates, in many
// federations, is reached by the others at one fixed address.
//
// Each Cluster is a memberlist node of its own, and the Mux is its
// memberlist transport (memberlist.NodeAwareTransport). Every packet
// and every stream a Mux sends starts with a frame header that names
// the destination node (memberlist addresses every message but a join
// to a node by name); the memberlist label header that follows names
// the federation (Config.Federation is the label). A receiving Mux
// hands a packet or stream to the node it names; one that names no
// node (a join through a seed address) goes to the oldest node of the
// label's federation that holds the agreement log, and, when the Mux
// has none, to the node its Anchors start for it, if any. What
// names a node this Mux does not host, or reaches no node, is dropped
// and counted (MuxStats); a stream is closed at once, so that a joiner
// learns at once that this address has no member of its federation.
//
// Clusters started without a Mux get one of their own, bound to
// Config.BindAddr and Config.BindPort: every node speaks the same
// framing, shared or not.
type Mux struct {
	cfg     MuxConfig
	log     zerolog.Logger
	udp     *net.UDPConn
	tcp     *net.TCPListener
	advIP   net.IP
	advPort int

	mu      sync.Mutex
	nodes   map[string]*muxNode   // by node name
	byLabel map[string][]*muxNode // by federation, oldest first
	missing map[string]chan struct{}
	closed  bool
	// onMissing is called for a stream that names no node and is
	// labelled with a federation of which this Mux hosts no node that
	// holds the agreement log (NewAnchors sets it). It may start a
	// Cluster on this Mux for that federation, and returns once it has
	// or will not; the stream then goes to that Cluster's node, or is
	// closed. Calls for one federation are serialized; unnamed streams
	// for it wait meanwhile.
	onMissing atomic.Pointer[func(federation string)]

	stats muxStats
	done  chan struct{}
	wg    sync.WaitGroup
	conns sync.WaitGroup // stream handlers
}

// MuxConfig configures a Mux. Zero fields mean the documented default.
type MuxConfig struct {
	// BindAddr is the address the Mux listens on; default 127.0.0.1.
	// 0.0.0.0 (or ::) listens on every interface.
	BindAddr string
	// BindPort is the UDP and TCP port; 0 picks a free one (Addr tells).
	BindPort int
	// AdvertiseAddr is the address other nodes reach this Mux at.
	// Default: BindAddr, or, when that is a wildcard, the first private
	// (else global) unicast address of an interface that is up.
	AdvertiseAddr string
	// Logger receives diagnostics; the zero value logs nothing.
	Logger zerolog.Logger
}

// MuxStats counts what a Mux dropped.
type MuxStats struct {
	// Malformed counts packets and streams without a valid frame
	// header (another program, or a node of a release whose framing
	// differs).
	Malformed uint64
	// NoNode counts packets and streams for a node or federation this
	// Mux does not host.
	NoNode uint64
	// Overflow counts packets dropped because their node's queue was
	// full (the node is not reading).
	Overflow uint64
}

type muxStats struct{ malformed, noNode, overflow atomic.Uint64 }

// Frame header: magic, framing version, length of the destination
// node's name, the name. The magic differs from every memberlist
// message type and from its label header (244).
const (
	muxMagic   = 0xE7
	muxVersion = 1
	// muxHeaderWait bounds how long a stream's sender may take to send
	// its frame and label headers.
	muxHeaderWait = 10 * time.Second
	// muxPacketQueue is each node's queue of received packets.
	muxPacketQueue = 1024
	// udpRecvBuf is the socket receive buffer asked for (memberlist's
	// own transport asks for the same).
	udpRecvBuf = 2 * 1024 * 1024
)

// NewMux binds a Mux as cfg says and starts its receive loops. Close
// stops them.
func NewMux(cfg MuxConfig) (*Mux, error) {
	if cfg.BindAddr == "" {
		cfg.BindAddr = "127.0.0.1"
	}
	if net.ParseIP(cfg.BindAddr) == nil {
		return nil, fmt.Errorf("gossip: mux bind address %q is not an IP address", cfg.BindAddr)
	}
	if cfg.BindPort < 0 || cfg.BindPort > 65535 {
		return nil, fmt.Errorf("gossip: mux port %d out of range", cfg.BindPort)
	}
	m := &Mux{
		cfg:     cfg,
		log:     cfg.Logger.With().Str("component", "gossip-mux").Logger(),
		nodes:   map[string]*muxNode{},
		byLabel: map[string][]*muxNode{},
		missing: map[string]chan struct{}{},
		done:    make(chan struct{}),
	}
	// The port must be free for TCP and UDP both: with port 0, try a
	// few free TCP ports until UDP gets the same one.
	var err error
	for range 10 {
		if err = m.bind(); err == nil || cfg.BindPort != 0 {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("gossip: mux on %s: %w", net.JoinHostPort(cfg.BindAddr, strconv.Itoa(cfg.BindPort)), err)
	}
	if err := m.advertise(); err != nil {
		m.udp.Close()
		m.tcp.Close()
		return nil, err
	}
	m.wg.Add(2)
	go m.readPackets()
	go m.acceptStreams()
	return m, nil
}

func (m *Mux) bind() error {
	ip := net.ParseIP(m.cfg.BindAddr)
	tl, err := net.ListenTCP("tcp", &net.TCPAddr{IP: ip, Port: m.cfg.BindPort})
	if err != nil {
		return err
	}
	port := tl.Addr().(*net.TCPAddr).Port
	ul, err := net.ListenUDP("udp", &net.UDPAddr{IP: ip, Port: port})
	if err != nil {
		tl.Close()
		return err
	}
	_ = ul.SetReadBuffer(udpRecvBuf) // best effort, as memberlist's
	m.tcp, m.udp = tl, ul
	return nil
}

// advertise settles the address others reach this Mux at.
func (m *Mux) advertise() error {
	m.advPort = m.tcp.Addr().(*net.TCPAddr).Port
	if a := m.cfg.AdvertiseAddr; a != "" {
		if m.advIP = net.ParseIP(a); m.advIP == nil {
			return fmt.Errorf("gossip: mux advertise address %q is not an IP address", a)
		}
		return nil
	}
	ip := net.ParseIP(m.cfg.BindAddr)
	if !ip.IsUnspecified() {
		m.advIP = ip
		return nil
	}
	var err error
	if m.advIP, err = interfaceAddr(ip.To4() != nil); err != nil {
		return fmt.Errorf("gossip: mux bound to %s: %w; give an advertise address", ip, err)
	}
	return nil
}

// interfaceAddr returns the first private unicast address (IPv4 when
// v4) of an interface that is up and not loopback, else the first
// global unicast one.
func interfaceAddr(v4 bool) (net.IP, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	var global net.IP
	for _, ifc := range ifs {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok || (ipn.IP.To4() != nil) != v4 || !ipn.IP.IsGlobalUnicast() {
				continue
			}
			if ipn.IP.IsPrivate() {
				return ipn.IP, nil
			}
			if global == nil {
				global = ipn.IP
			}
		}
	}
	if global == nil {
		return nil, errors.New("no interface has a unicast address")
	}
	return global, nil
}

// Addr returns the host:port other nodes reach this Mux at: the address
// to give them as a seed.
func (m *Mux) Addr() string {
	return net.JoinHostPort(m.advIP.String(), strconv.Itoa(m.advPort))
}

// Stats returns what the Mux dropped so far.
func (m *Mux) Stats() MuxStats {
	return MuxStats{Malformed: m.stats.malformed.Load(), NoNode: m.stats.noNode.Load(), Overflow: m.stats.overflow.Load()}
}

// Nodes returns how many nodes the Mux carries now.
func (m *Mux) Nodes() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.nodes)
}

// Close stops the Mux: its sockets close and its loops end (Close waits
// for them). Close the Clusters on it first: their memberlist can no
// longer send or receive.
func (m *Mux) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.mu.Unlock()
	close(m.done)
	err := errors.Join(m.udp.Close(), m.tcp.Close())
	m.wg.Wait()
	m.conns.Wait()
	return err
}

// attach registers a memberlist node named name of federation label and
// returns its transport.
func (m *Mux) attach(name, label string) (*muxNode, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, errors.New("gossip: mux closed")
	}
	if _, dup := m.nodes[name]; dup {
		return nil, fmt.Errorf("gossip: mux already carries a node named %q", name)
	}
	n := &muxNode{
		mux: m, name: name, label: label,
		packets: make(chan *memberlist.Packet, muxPacketQueue),
		streams: make(chan net.Conn),
		done:    make(chan struct{}),
	}
	m.nodes[name] = n
	m.byLabel[label] = append(m.byLabel[label], n)
	return n, nil
}

// detach removes n; it receives nothing more.
func (m *Mux) detach(n *muxNode) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.nodes[n.name] != n {
		return
	}
	delete(m.nodes, n.name)
	ns := m.byLabel[n.label]
	for i, x := range ns {
		if x == n {
			ns = append(ns[:i:i], ns[i+1:]...)
			break
		}
	}
	if len(ns) == 0 {
		delete(m.byLabel, n.label)
	} else {
		m.byLabel[n.label] = ns
	}
}

// route returns the node a packet or stream goes to: the one it names,
// or, when it names none, the oldest accepting node of label.
func (m *Mux) route(name, label string) *muxNode {
	m.mu.Lock()
	defer m.mu.Unlock()
	if name != "" {
		return m.nodes[name]
	}
	for _, n := range m.byLabel[label] {
		if n.accepting.Load() {
			return n
		}
	}
	return nil
}

// setMissing sets the hook that starts a node for a federation a join
// finds none of here (Anchors).
func (m *Mux) setMissing(f func(federation string)) { m.onMissing.Store(&f) }

// routeJoin is route for an unnamed stream: when label has no accepting
// node here, it asks the Missing hook once (streams for the label
// arriving meanwhile wait for that answer) and routes again.
func (m *Mux) routeJoin(label string) *muxNode {
	missing := m.onMissing.Load()
	if n := m.route("", label); n != nil || missing == nil || label == "" {
		return n
	}
	m.mu.Lock()
	wait, busy := m.missing[label]
	if !busy {
		wait = make(chan struct{})
		m.missing[label] = wait
	}
	m.mu.Unlock()
	if busy {
		select {
		case <-wait:
		case <-m.done:
			return nil
		}
		return m.route("", label)
	}
	(*missing)(label)
	m.mu.Lock()
	delete(m.missing, label)
	m.mu.Unlock()
	close(wait)
	return m.route("", label)
}

// readPackets is the UDP receive loop.
func (m *Mux) readPackets() {
	defer m.wg.Done()
	buf := make([]byte, 65536)
	for {
		n, from, err := m.udp.ReadFromUDP(buf)
		ts := time.Now()
		if err != nil {
			select {
			case <-m.done:
				return
			default:
			}
			m.log.Debug().Err(err).Msg("reading a packet")
			continue
		}
		// Each packet gets a copy of its own size: memberlist keeps it.
		name, rest, ok := parseFrame(append([]byte(nil), buf[:n]...))
		if !ok {
			m.stats.malformed.Add(1)
			continue
		}
		var node *muxNode
		if name != "" {
			node = m.route(name, "")
		} else if _, label, err := memberlist.RemoveLabelHeaderFromPacket(rest); err == nil {
			node = m.route("", label)
		}
		if node == nil {
			m.stats.noNode.Add(1)
			continue
		}
		select {
		case node.packets <- &memberlist.Packet{Buf: rest, From: from, Timestamp: ts}:
		default:
			m.stats.overflow.Add(1)
		}
	}
}

// parseFrame splits a packet into the destination name and the rest.
func parseFrame(b []byte) (name string, rest []byte, ok bool) {
	if len(b) < 3 || b[0] != muxMagic || b[1] != muxVersion || len(b) < 3+int(b[2]) {
		return "", nil, false
	}
	return string(b[3 : 3+int(b[2])]), b[3+int(b[2]):], true
}

// frameHeader is the header of a packet or stream to node name.
func frameHeader(name string, extra int) []byte {
	h := make([]byte, 3, 3+len(name)+extra)
	h[0], h[1], h[2] = muxMagic, muxVersion, byte(len(name))
	return append(h, name...)
}

// acceptStreams is the TCP accept loop.
func (m *Mux) acceptStreams() {
	defer m.wg.Done()
	pause := 5 * time.Millisecond
	for {
		c, err := m.tcp.AcceptTCP()
		if err != nil {
			select {
			case <-m.done:
				return
			default:
			}
			m.log.Debug().Err(err).Msg("accepting a stream")
			select {
			case <-time.After(pause):
			case <-m.done:
				return
			}
			pause = min(2*pause, time.Second)
			continue
		}
		pause = 5 * time.Millisecond
		m.conns.Add(1)
		go m.serveStream(c)
	}
}

// serveStream reads a stream's headers and hands it to its node.
func (m *Mux) serveStream(c *net.TCPConn) {
	defer m.conns.Done()
	_ = c.SetReadDeadline(time.Now().Add(muxHeaderWait))
	br := bufio.NewReader(c)
	var h [3]byte
	if _, err := io.ReadFull(br, h[:]); err != nil || h[0] != muxMagic || h[1] != muxVersion {
		m.stats.malformed.Add(1)
		c.Close()
		return
	}
	nb := make([]byte, h[2])
	if _, err := io.ReadFull(br, nb); err != nil {
		m.stats.malformed.Add(1)
		c.Close()
		return
	}
	name := string(nb)
	var node *muxNode
	if name != "" {
		node = m.route(name, "")
	} else {
		// The label header follows: [244, length, label].
		label := ""
		if p, err := br.Peek(2); err == nil && p[0] == 244 {
			if p, err := br.Peek(2 + int(p[1])); err == nil {
				label = string(p[2:])
			}
		}
		node = m.routeJoin(label)
	}
	if node == nil {
		m.stats.noNode.Add(1)
		c.Close()
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	conn := &bufferedConn{Conn: c, r: br}
	select {
	case node.streams <- conn:
	case <-node.done:
		c.Close()
	case <-m.done:
		c.Close()
	}
}

// bufferedConn reads what its reader buffered first.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// muxNode is one memberlist node's transport on a Mux.
type muxNode struct {
	mux     *Mux
	name    string
	label   string
	packets chan *memberlist.Packet
	streams chan net.Conn
	done    chan struct{}
	once    sync.Once
	// accepting: the node holds the agreement log, so joins may go to
	// it (set by the Cluster once Start succeeded).
	accepting atomic.Bool
}

var _ memberlist.NodeAwareTransport = (*muxNode)(nil)

func (n *muxNode) FinalAdvertiseAddr(string, int) (net.IP, int, error) {
	return n.mux.advIP, n.mux.advPort, nil
}

func (n *muxNode) WriteTo(b []byte, addr string) (time.Time, error) {
	return n.WriteToAddress(b, memberlist.Address{Addr: addr})
}

func (n *muxNode) WriteToAddress(b []byte, a memberlist.Address) (time.Time, error) {
	to, err := udpAddr(a.Addr)
	if err != nil {
		return time.Time{}, err
	}
	buf := append(frameHeader(a.Name, len(b)), b...)
	if _, err := n.mux.udp.WriteToUDPAddrPort(buf, to); err != nil {
		return time.Time{}, err
	}
	return time.Now(), nil
}

// udpAddr parses an ip:port, resolving a host name if it must.
func udpAddr(s string) (netip.AddrPort, error) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), nil
	}
	ua, err := net.ResolveUDPAddr("udp", s)
	if err != nil {
		return netip.AddrPort{}, err
	}
	ap := ua.AddrPort()
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), nil
}

func (n *muxNode) PacketCh() <-chan *memberlist.Packet { return n.packets }

func (n *muxNode) DialTimeout(addr string, timeout time.Duration) (net.Conn, error) {
	return n.DialAddressTimeout(memberlist.Address{Addr: addr}, timeout)
}

func (n *muxNode) DialAddressTimeout(a memberlist.Address, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	go func() {
		select {
		case <-n.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", a.Addr)
	if err != nil {
		return nil, err
	}
	if _, err := c.Write(frameHeader(a.Name, 0)); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (n *muxNode) StreamCh() <-chan net.Conn { return n.streams }

// Shutdown detaches the node: the Mux delivers it nothing more. The
// Mux itself stays open.
func (n *muxNode) Shutdown() error {
	n.once.Do(func() {
		n.mux.detach(n)
		close(n.done)
	})
	return nil
}
