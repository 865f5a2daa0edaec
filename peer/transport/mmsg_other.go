//go:build !linux

package transport

import (
	"net"
	"time"

	"golang.org/x/net/ipv4"
)

// mmsg moves batches of datagrams through one socket; here through
// golang.org/x/net/ipv4 (see mmsg_linux.go for why Linux differs).
type mmsg struct{ pc *ipv4.PacketConn }

func newMMsg(c *net.UDPConn, n, iovPer int) (*mmsg, error) {
	return &mmsg{pc: ipv4.NewPacketConn(c)}, nil
}

// setPoll does nothing here: only Linux polls (UDPConfig.PollFor).
func (m *mmsg) setPoll(time.Duration) {}

// write sends the datagrams of ms without waiting where the system
// allows it (dontWait).
func (m *mmsg) write(ms []ipv4.Message) (int, error) { return m.pc.WriteBatch(ms, dontWait) }

// readEach reads batches into ms and hands each to handle until a read
// fails; it returns that error.
func (m *mmsg) readEach(ms []ipv4.Message, handle func([]ipv4.Message)) error {
	for {
		n, err := m.pc.ReadBatch(ms, 0)
		if err != nil {
			return err
		}
		handle(ms[:n])
	}
}
