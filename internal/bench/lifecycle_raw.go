package bench

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/meshrti/meshrti/examples/demo"
	"github.com/meshrti/meshrti/peer"
	"github.com/meshrti/meshrti/peer/reliable"
	"github.com/meshrti/meshrti/peer/transport"
)

// The floor of "bench lifecycle": n pairs of datagrams, one the size of a
// registration and one the size of an update, multicast by this process
// to a sink process over loopback, one system call each with the raw
// I/O of the other floors (bench_rawio_linux.go). The sink counts them.

// lifecycleRawGroup is the floor's multicast group, on the loopback
// interface with TTL 0 like the data plane's defaults.
var lifecycleRawGroup = netip.AddrFrom4([4]byte{239, 255, 77, 78})

// lifecycleRaw runs the floor on port and returns the datagrams sent, the
// datagrams the sink received, and the time from its first to its last.
func lifecycleRaw(ctx context.Context, n, regSize, updSize, port int, stderr io.Writer) (sent, got int, elapsed time.Duration, err error) {
	self, err := os.Executable()
	if err != nil {
		return 0, 0, 0, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, "bench", "lifecycle", "-role", "sink",
		"-count", fmt.Sprint(n), "-mcast-port", fmt.Sprint(port))
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, 0, 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, 0, 0, err
	}
	defer func() {
		cancel()
		cmd.Wait()
	}()
	lines := bufio.NewScanner(out)
	if !lines.Scan() || lines.Text() != "ready" {
		return 0, 0, 0, fmt.Errorf("the sink printed %q, not ready", lines.Text())
	}
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return 0, 0, 0, err
	}
	defer c.Close()
	if err := multicastOnLoopback(c, netip.AddrPort{}); err != nil {
		return 0, 0, 0, err
	}
	c.SetWriteBuffer(8 << 20)
	rio, err := newRawIO(c)
	if err != nil {
		return 0, 0, 0, err
	}
	dst := netip.AddrPortFrom(lifecycleRawGroup, uint16(port))
	reg, upd := make([]byte, max(regSize, 1)), make([]byte, max(updSize, 1))
	for i := 0; i < n && ctx.Err() == nil; i++ {
		if err := rio.write(reg, dst); err != nil {
			return sent, 0, 0, err
		}
		if err := rio.write(upd, dst); err != nil {
			return sent + 1, 0, 0, err
		}
		sent += 2
	}
	if !lines.Scan() {
		return sent, 0, 0, errors.New("the sink reported nothing")
	}
	var ns int64
	if _, err := fmt.Sscanf(lines.Text(), "got %d in %d", &got, &ns); err != nil {
		return sent, 0, 0, fmt.Errorf("the sink printed %q", lines.Text())
	}
	if got < 2 || ns <= 0 {
		return sent, got, 0, fmt.Errorf("the sink received %d of %d datagrams", got, sent)
	}
	return sent, got, time.Duration(ns), nil
}

// lifecycleSink is the floor's receiving process ("bench lifecycle -role
// sink"): it joins the group on bf.port, prints "ready", counts datagrams
// until 2*bf.count arrived or none came for 300 ms, then prints "got M in
// NS" (nanoseconds from the first to the last).
func lifecycleSink(bf lifecycleFlags, stdout io.Writer) error {
	c, rio, err := rawGroupConn(lifecycleRawGroup, bf.port, 8<<20)
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Fprintln(stdout, "ready")
	buf := make([]byte, 65536)
	rawSink(c, rio, buf, 2*bf.count, stdout)
	return nil
}

// lifecycleSizes measures the data-plane size of a registration and of
// an update of the benchmark's instances, as the reliable layer bundles
// them: the encoded message plus its entry's flags and length bytes (the
// frame's 40-byte header and 4-byte checksum, one per frame of many
// messages, are left out). It runs a registrar and a subscriber in this
// process over the in-memory network, registers and updates up to 1000
// instances the way the registrar does, after a warm-up instance, and
// reads the entries of the registrar's data frames (docs/dataplane.md,
// "Frame format") on the group that carried the most. names are the
// measured run's instance names and registrar its registrar's handle: the
// sizes are corrected for the lengths of those and of the uvarint of
// that (serial numbers and message counters are not: a byte or two).
func lifecycleSizes(ctx context.Context, bf lifecycleFlags, registrar peer.FederateHandle, names []string) (reg, upd int, err error) {
	if len(names) == 0 {
		return 0, 0, errors.New("no instance names to size")
	}
	mf, err := newMemFederation("lifecycle-sizes", "bench", "demo.xml", demo.FOM)
	if err != nil {
		return 0, 0, err
	}
	mf.frame = bf.frame
	network := transport.NewNetwork(transport.NetworkConfig{Seed: 1})
	tap := &entryTap{Transport: network.Endpoint("A"), entries: map[transport.Group]map[uint64]tapEntry{}}
	a, err := mf.join(ctx, "A", tap)
	if err != nil {
		return 0, 0, err
	}
	defer a.Close()
	b, err := mf.join(ctx, "B", network.Endpoint("B"))
	if err != nil {
		return 0, 0, err
	}
	defer b.Close()
	class, attr, err := lifecycleHandles(a)
	if err != nil {
		return 0, 0, err
	}
	// As in the measured run, a warm-up instance found through the
	// discovery query shows that the query was answered: no announcement
	// follows the measured messages.
	if err := a.PublishObjectClassAttributes(class, attr); err != nil {
		return 0, 0, err
	}
	if _, err := a.RegisterObjectInstance(class, ""); err != nil {
		return 0, 0, err
	}
	if err := b.SubscribeObjectClassAttributes(class, attr); err != nil {
		return 0, 0, err
	}
	if err := waitEvents(ctx, b, "the warm-up instance", isEvent[peer.DiscoverObjectInstance]); err != nil {
		return 0, 0, err
	}
	k := min(len(names), 1000)
	own := make([]string, k)
	if bf.reserve {
		if err := reserveNames(ctx, a, k, own); err != nil {
			return 0, 0, err
		}
	}
	// Every announcement has gone (the warm-up instance's reached b):
	// what follows on the instances' group is theirs.
	before := tap.highest()
	if _, err := registerAll(a, class, attr, own, bf.payload); err != nil {
		return 0, 0, err
	}
	var ownLen, realLen int
	for i := range k {
		name, err := a.GetObjectInstanceName(peer.ObjectInstanceHandle{Federate: a.Handle(), Serial: uint64(i + 2)})
		if err != nil {
			return 0, 0, err
		}
		ownLen += len(name)
	}
	for _, name := range names {
		realLen += len(name)
	}
	// The last bundle leaves within a tick or two. Other messages may
	// share the group (an answer to a repeated discovery query, say):
	// only the instances' registrations and updates are summed.
	deadline := time.Now().Add(5 * time.Second)
	var sumReg, sumUpd int
	for {
		var regs, upds int
		sumReg, sumUpd, regs, upds = lifecycleSums(tap.since(before), a.Handle(), k)
		if regs == k && upds == k {
			break
		}
		if time.Now().After(deadline) {
			return 0, 0, fmt.Errorf("%d registrations and %d updates seen for %d instances", regs, upds, k)
		}
		time.Sleep(5 * time.Millisecond)
	}
	var tmp [binary.MaxVarintLen64]byte
	handle := binary.PutUvarint(tmp[:], uint64(registrar)) - binary.PutUvarint(tmp[:], uint64(a.Handle()))
	name := float64(realLen)/float64(len(names)) - float64(ownLen)/float64(k)
	reg = int(float64(sumReg)/float64(k)+name+0.5) + handle
	upd = int(float64(sumUpd)/float64(k)+0.5) + handle
	if bf.reserve {
		upd = int(float64(sumUpd)/float64(k)+name+0.5) + handle // the name rides along (see objects.go)
	}
	return reg, upd, nil
}

// lifecycleSums returns the sizes summed of the registrations and of
// the updates among entries of the k instances fed registered after its
// warm-up instance (serials 2 to k+1), the first of each per instance,
// and how many of each it found. Entries of other kinds or instances
// are skipped.
func lifecycleSums(entries []tapEntry, fed peer.FederateHandle, k int) (sumReg, sumUpd, regs, upds int) {
	seen := map[tapEntry]bool{}
	for _, e := range entries {
		if e.obj.Federate != fed || e.obj.Serial < 2 || e.obj.Serial > uint64(k)+1 {
			continue
		}
		key := tapEntry{kind: e.kind, obj: e.obj}
		if seen[key] {
			continue
		}
		switch e.kind {
		case wireKindRegister:
			sumReg += e.size
			regs++
		case wireKindUpdate:
			sumUpd += e.size
			upds++
		default:
			continue
		}
		seen[key] = true
	}
	return sumReg, sumUpd, regs, upds
}

// entryTap is a transport that records the entries of the reliable
// data frames sent through it, by group and sequence number.
type entryTap struct {
	transport.Transport
	mu      sync.Mutex
	entries map[transport.Group]map[uint64]tapEntry
}

// tapEntry is one entry of a bundle: its size (flags, length and
// payload) and, when its payload begins a data-plane message, the
// message's kind and object instance (zero when it has none).
type tapEntry struct {
	size int
	kind uint8
	obj  peer.ObjectInstanceHandle
}

func (t *entryTap) Send(g transport.Group, b []byte) error {
	if seq, entries, ok := bundleEntries(b); ok {
		t.mu.Lock()
		m := t.entries[g]
		if m == nil {
			m = map[uint64]tapEntry{}
			t.entries[g] = m
		}
		for i, e := range entries {
			m[seq+uint64(i)] = e
		}
		t.mu.Unlock()
	}
	return t.Transport.Send(g, b)
}

// highest returns the highest sequence number seen on each group.
func (t *entryTap) highest() map[transport.Group]uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	hs := map[transport.Group]uint64{}
	for g, m := range t.entries {
		for seq := range m {
			hs[g] = max(hs[g], seq)
		}
	}
	return hs
}

// since returns, of the group that carried the most entries above the
// sequence numbers of before, those entries in sequence order (frames
// may reach the transport out of order).
func (t *entryTap) since(before map[transport.Group]uint64) []tapEntry {
	t.mu.Lock()
	defer t.mu.Unlock()
	var most []uint64
	var from map[uint64]tapEntry
	for g, m := range t.entries {
		var seqs []uint64
		for seq := range m {
			if seq > before[g] {
				seqs = append(seqs, seq)
			}
		}
		if len(seqs) > len(most) {
			most, from = seqs, m
		}
	}
	slices.Sort(most)
	entries := make([]tapEntry, len(most))
	for i, seq := range most {
		entries[i] = from[seq]
	}
	return entries
}

// The data-plane message kinds the sizes are about, as the federate
// core encodes them (peer/internal/core/wire.go): the low four bits of a
// message's first byte.
const (
	wireKindRegister = 1
	wireKindUpdate   = 2
)

// bundleEntries returns the sequence number of the first entry and the
// entries of b when it is an unkeyed reliable data frame.
func bundleEntries(b []byte) (uint64, []tapEntry, bool) {
	const (
		magic     = 0x6d72
		kindData  = 1
		crcLen    = 4
		continues = 0x02 // the entry's flag: it continues a message
	)
	if len(b) < reliable.HeaderLen+crcLen || binary.BigEndian.Uint16(b) != magic || b[3]&0x80 != 0 || b[3]&0x3f != kindData {
		return 0, nil, false
	}
	var entries []tapEntry
	for body := b[reliable.HeaderLen : len(b)-crcLen]; len(body) > 0; {
		l, n := binary.Uvarint(body[1:])
		size := 1 + n + int(l)
		if n <= 0 || l > uint64(len(body)) || size > len(body) {
			return 0, nil, false
		}
		e := tapEntry{size: size}
		if body[0]&continues == 0 {
			e.kind, e.obj = messageHead(body[1+n : size])
		}
		entries = append(entries, e)
		body = body[size:]
	}
	return binary.BigEndian.Uint64(b[32:]), entries, true
}

// messageHead returns the kind and the object instance of the data-plane
// message that msg begins (peer/internal/core/wire.go: a byte of version
// and kind, two of presence flags, the restore branch in version 2, then
// the counter and the object when their flags are set), or zeros when
// msg is too short to say.
func messageHead(msg []byte) (uint8, peer.ObjectInstanceHandle) {
	const (
		version       = 1
		versionBranch = 2
		flagID        = 1 << 0
		flagObj       = 1 << 1
	)
	if len(msg) < 3 || msg[0]>>4 != version && msg[0]>>4 != versionBranch {
		return 0, peer.ObjectInstanceHandle{}
	}
	kind, flags, rest := msg[0]&0x0f, uint16(msg[1])<<8|uint16(msg[2]), msg[3:]
	next := func() (uint64, bool) {
		v, n := binary.Uvarint(rest)
		if n <= 0 {
			return 0, false
		}
		rest = rest[n:]
		return v, true
	}
	if msg[0]>>4 == versionBranch {
		if _, ok := next(); !ok {
			return kind, peer.ObjectInstanceHandle{}
		}
	}
	if flags&flagID != 0 {
		if _, ok := next(); !ok {
			return kind, peer.ObjectInstanceHandle{}
		}
	}
	if flags&flagObj == 0 {
		return kind, peer.ObjectInstanceHandle{}
	}
	fed, ok1 := next()
	serial, ok2 := next()
	if !ok1 || !ok2 {
		return kind, peer.ObjectInstanceHandle{}
	}
	return kind, peer.ObjectInstanceHandle{Federate: peer.FederateHandle(fed), Serial: serial}
}
