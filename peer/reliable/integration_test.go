package reliable

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/meshrti/meshrti/peer/transport"
)

// runNode is the driver loop package peer runs, reduced to one group.
func runNode(ctx context.Context, ep *Endpoint, tr transport.Transport, sendc <-chan []byte, starts *[]Start, got *[]Delivery, gaps *[]Gap) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			ep.Tick()
		case p, ok := <-tr.Recv():
			if !ok {
				return transport.ErrClosed
			}
			if err := ep.Step(p.Group, p.Data); err != nil && !errors.Is(err, ErrOwnFrame) {
				return err
			}
		case b := <-sendc:
			if _, err := ep.Send(1, b, true); err != nil {
				return err
			}
		}
		if ep.HasReady() {
			rd := ep.Ready()
			for _, o := range rd.Out {
				tr.Send(o.Group, o.Frame)
			}
			*starts = append(*starts, rd.Starts...)
			*got = append(*got, rd.Deliver...)
			*gaps = append(*gaps, rd.Gaps...)
			ep.Advance(rd)
		}
	}
}

// TestOverMemTransport drives three endpoints over a lossy, duplicating,
// jittery transport.Network inside a synctest bubble.
func TestOverMemTransport(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const nodes, count = 3, 200
		nw := transport.NewNetwork(transport.NetworkConfig{Seed: 1})
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		type node struct {
			tr     *transport.MemEndpoint
			sendc  chan []byte
			starts []Start
			got    []Delivery
			gaps   []Gap
		}
		ns := make([]*node, nodes)
		for i := range ns {
			n := &node{tr: nw.Endpoint(string(rune('a' + i))), sendc: make(chan []byte)}
			ns[i] = n
			ep, err := New(Config{Self: NodeID(i + 1), Incarnation: 1, Federation: "mem"})
			if err != nil {
				t.Fatal(err)
			}
			ep.Join(1)
			n.tr.Join(1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := runNode(ctx, ep, n.tr, n.sendc, &n.starts, &n.got, &n.gaps); !errors.Is(err, context.Canceled) {
					t.Errorf("node %d: %v", i+1, err)
				}
			}()
		}
		// The network is bad from the start, the join handshake included.
		// Once it is over (the HELLOs and their retries: 15 NAK delays),
		// every node owes every other its whole stream, from 1.
		nw.SetFaults(transport.Faults{Loss: 0.1, Duplicate: 0.05, Reorder: 0.05, Delay: time.Millisecond, Jitter: 3 * time.Millisecond})
		time.Sleep(500 * time.Millisecond)
		for k := range count {
			for i, n := range ns {
				n.sendc <- []byte{byte(i), byte(k)}
			}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(5 * time.Second)
		cancel()
		wg.Wait()
		for _, n := range ns {
			n.tr.Close()
		}
		for i, n := range ns {
			if len(n.starts) != nodes-1 || !slices.ContainsFunc(n.starts, func(s Start) bool { return s.Seq == 1 }) ||
				slices.ContainsFunc(n.starts, func(s Start) bool { return s.Seq != 1 }) {
				t.Errorf("node %d: starts %+v, want one at 1 from each other node", i+1, n.starts)
			}
			if len(n.gaps) != 0 {
				t.Errorf("node %d: gaps %v", i+1, n.gaps)
			}
			bySender := map[NodeID][]uint64{}
			for _, d := range n.got {
				if int(d.Payload[1])+1 != int(d.Seq) {
					t.Errorf("node %d: seq %d carries %d", i+1, d.Seq, d.Payload[1])
				}
				bySender[d.From] = append(bySender[d.From], d.Seq)
			}
			want := make([]uint64, count)
			for k := range want {
				want[k] = uint64(k + 1)
			}
			for j := range ns {
				if j != i && !slices.Equal(bySender[NodeID(j+1)], want) {
					t.Errorf("node %d from %d: %d messages, not 1..%d in order", i+1, j+1, len(bySender[NodeID(j+1)]), count)
				}
			}
		}
		if st := nw.Stats(); st.Lost == 0 || st.Duplicated == 0 {
			t.Errorf("network faults did not bite: %+v", st)
		}
	})
}
