package transport

import "errors"

// MemUnicast is the in-memory counterpart of Unicast, for simulations:
// a Transport, BatchSender and Directory over a MemEndpoint that sends
// each datagram of a group to the members its directory knows, one
// copy per member, through the network's per-link faults, partitions
// and crashes, instead of to the group's members as the network knows
// them. A member that the directory does not know yet (its announcement
// is late) gets nothing, exactly as with Unicast; one the directory
// lists but that left the group drops what arrives, as a MemEndpoint
// does. Addresses are endpoint names.
//
// All methods are safe for concurrent use.
type MemUnicast struct {
	ep  *MemEndpoint
	dir *directory[string]
}

// NewMemUnicast wraps ep, which the MemUnicast then owns (Close closes
// it).
func NewMemUnicast(ep *MemEndpoint) *MemUnicast {
	m := &MemUnicast{ep: ep}
	m.dir = newDirectory(ep.name, parseName, func(a string) bool { return a == ep.name })
	return m
}

func parseName(s string) (string, error) {
	if s == "" {
		return "", errors.New("empty endpoint name")
	}
	return s, nil
}

// Endpoint returns the wrapped endpoint.
func (m *MemUnicast) Endpoint() *MemEndpoint { return m.ep }

// Update implements Directory.
func (m *MemUnicast) Update(node string, b []byte) error { return m.dir.Update(node, b) }

// Remove implements Directory.
func (m *MemUnicast) Remove(node string) { m.dir.Remove(node) }

// SetAnnounce implements Directory.
func (m *MemUnicast) SetAnnounce(announce func([]byte)) { m.dir.SetAnnounce(announce) }

// DirectoryStats returns the directory's counts.
func (m *MemUnicast) DirectoryStats() DirectoryStats { return m.dir.stats() }

// Join implements Transport.
func (m *MemUnicast) Join(g Group) error {
	if err := m.ep.Join(g); err != nil {
		return err
	}
	m.dir.join(g)
	return nil
}

// Leave implements Transport.
func (m *MemUnicast) Leave(g Group) error {
	if err := m.ep.Leave(g); err != nil {
		return err
	}
	m.dir.leave(g)
	return nil
}

// Recv implements Transport.
func (m *MemUnicast) Recv() <-chan Packet { return m.ep.Recv() }

// Send implements Transport: one copy to each member of g in the
// directory. It never blocks.
func (m *MemUnicast) Send(g Group, b []byte) error {
	_, err := m.SendBatch([]Packet{{Group: g, Data: b}})
	return err
}

// SendBatch implements BatchSender, in slice order, under one
// acquisition of the network's lock. It returns len(pkts) and nil, or 0
// and ErrClosed.
func (m *MemUnicast) SendBatch(pkts []Packet) (int, error) {
	n := m.ep.net
	n.mu.Lock()
	defer n.mu.Unlock()
	if m.ep.closed {
		return 0, ErrClosed
	}
	for _, p := range pkts {
		if n.crashed[m.ep.name] {
			n.stats.Crashed++
			continue
		}
		n.stats.Sent++
		var shared []byte
		for _, name := range m.dir.members(p.Group) {
			to := n.eps[name]
			if to == nil {
				n.stats.Crashed++ // closed: nobody there
				continue
			}
			m.ep.carryLocked(to, p.Group, p.Data, &shared)
		}
	}
	return len(pkts), nil
}

// Close implements Transport.
func (m *MemUnicast) Close() error { return m.ep.Close() }

// Compile-time checks.
var (
	_ Transport   = (*Unicast)(nil)
	_ BatchSender = (*Unicast)(nil)
	_ Directory   = (*Unicast)(nil)
	_ Direct      = (*Unicast)(nil)
	_ Transport   = (*MemUnicast)(nil)
	_ BatchSender = (*MemUnicast)(nil)
	_ Directory   = (*MemUnicast)(nil)
)
