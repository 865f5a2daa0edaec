package transport

import (
	"encoding/binary"
	"math"
	"runtime"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// drain returns the packets queued on ep without blocking.
func drain(ep *MemEndpoint) []Packet {
	var ps []Packet
	for {
		select {
		case p := <-ep.Recv():
			ps = append(ps, p)
		default:
			return ps
		}
	}
}

func seqPacket(i int) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, uint64(i))
	return b
}

func packetSeq(p Packet) int { return int(binary.BigEndian.Uint64(p.Data)) }

func mustJoin(t testing.TB, tr Transport, gs ...Group) {
	t.Helper()
	for _, g := range gs {
		if err := tr.Join(g); err != nil {
			t.Fatal(err)
		}
	}
}

// memTrio makes n's endpoints a, b and c, closed when the test ends.
func memTrio(t testing.TB, n *Network) (a, b, c *MemEndpoint) {
	a, b, c = n.Endpoint("a"), n.Endpoint("b"), n.Endpoint("c")
	t.Cleanup(func() {
		c.Close()
		b.Close()
		a.Close()
	})
	return a, b, c
}

func TestMemDelivery(t *testing.T) {
	n := NewNetwork(NetworkConfig{Seed: 1})
	a, b, c := memTrio(t, n)
	mustJoin(t, a, 1)
	mustJoin(t, b, 1, 2)
	mustJoin(t, c, 2)

	if err := a.Send(1, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := a.Send(2, []byte("two")); err != nil {
		t.Fatal(err)
	}
	if got := drain(a); len(got) != 0 {
		t.Errorf("sender received its own packets: %v", got)
	}
	got := drain(b)
	if len(got) != 2 || got[0].Group != 1 || string(got[0].Data) != "one" || got[1].Group != 2 || string(got[1].Data) != "two" {
		t.Errorf("b got %v", got)
	}
	if got := drain(c); len(got) != 1 || got[0].Group != 2 {
		t.Errorf("c got %v", got)
	}

	// The receiver owns the data: the sender's buffer is not shared.
	buf := []byte("x")
	a.Send(1, buf)
	buf[0] = 'y'
	if got := drain(b); len(got) != 1 || string(got[0].Data) != "x" {
		t.Errorf("b got %v", got)
	}

	// Leave stops delivery.
	b.Leave(1)
	a.Send(1, []byte("after leave"))
	if got := drain(b); len(got) != 0 {
		t.Errorf("b got %v after Leave", got)
	}
}

func TestMemEndpointNameReuse(t *testing.T) {
	n := NewNetwork(NetworkConfig{})
	a := n.Endpoint("a")
	func() {
		defer func() {
			if recover() == nil {
				t.Error("second open endpoint with the same name did not panic")
			}
		}()
		n.Endpoint("a")
	}()
	a.Close()
	a2 := n.Endpoint("a") // a restart
	a2.Close()
}

func TestMemClosed(t *testing.T) {
	n := NewNetwork(NetworkConfig{})
	a := n.Endpoint("a")
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	checkClosed(t, a)
	if _, ok := <-a.Recv(); ok {
		t.Error("Recv not closed")
	}
}

// lossRun sends count packets from a to b with the given faults and
// returns the sequence numbers b received.
func lossRun(seed int64, f Faults, count int) ([]int, NetworkStats) {
	ps, st := faultRun(seed, f, count, seqPacket)
	var got []int
	for _, p := range ps {
		got = append(got, packetSeq(p))
	}
	return got, st
}

// faultRun sends count packets, payload(i) the i-th, from a to b with the
// given faults and returns what b received.
func faultRun(seed int64, f Faults, count int, payload func(int) []byte) ([]Packet, NetworkStats) {
	n := NewNetwork(NetworkConfig{Seed: seed, Buffer: 2 * count})
	n.SetFaults(f)
	a, b := n.Endpoint("a"), n.Endpoint("b")
	defer a.Close()
	defer b.Close()
	b.Join(7)
	for i := range count {
		a.Send(7, payload(i))
	}
	return drain(b), n.Stats()
}

func TestMemLossRate(t *testing.T) {
	const count = 20000
	for _, loss := range []float64{0, 0.1, 0.3, 0.9, 1} {
		got, st := lossRun(42, Faults{Loss: loss}, count)
		rate := 1 - float64(len(got))/count
		if math.Abs(rate-loss) > 0.02 {
			t.Errorf("loss %v: observed %v", loss, rate)
		}
		if st.Lost+st.Delivered != count {
			t.Errorf("loss %v: lost %d + delivered %d != %d", loss, st.Lost, st.Delivered, count)
		}
		for i := 1; i < len(got); i++ {
			if got[i] <= got[i-1] {
				t.Fatalf("loss %v: out of order without Reorder: %d after %d", loss, got[i], got[i-1])
			}
		}
	}
}

func TestMemDeterministic(t *testing.T) {
	f := Faults{Loss: 0.2, Duplicate: 0.2}
	a, _ := lossRun(7, f, 1000)
	b, _ := lossRun(7, f, 1000)
	c, _ := lossRun(8, f, 1000)
	if !equalInts(a, b) {
		t.Error("same seed, different outcome")
	}
	if equalInts(a, c) {
		t.Error("different seeds, same outcome")
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestMemDuplicate(t *testing.T) {
	const count = 10000
	got, st := lossRun(3, Faults{Duplicate: 0.25}, count)
	if ratio := float64(len(got)) / count; math.Abs(ratio-1.25) > 0.02 {
		t.Errorf("delivered %v per packet, want about 1.25", ratio)
	}
	if int(st.Duplicated) != len(got)-count {
		t.Errorf("Duplicated = %d, want %d", st.Duplicated, len(got)-count)
	}
	seen := map[int]int{}
	for _, s := range got {
		seen[s]++
	}
	if len(seen) != count {
		t.Errorf("%d distinct packets, want %d", len(seen), count)
	}
}

func TestMemReorder(t *testing.T) {
	const count = 1000
	got, st := lossRun(5, Faults{Reorder: 0.3}, count)
	// The last packet may still be held; it leaves on its flush timer.
	if len(got) < count-1 {
		t.Fatalf("got %d packets, want at least %d", len(got), count-1)
	}
	swaps := 0
	for i := 1; i < len(got); i++ {
		if got[i] < got[i-1] {
			swaps++
		}
	}
	if swaps == 0 || st.Reordered == 0 {
		t.Errorf("no reordering: swaps %d, stats %+v", swaps, st)
	}
}

func TestMemReorderFlush(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := NewNetwork(NetworkConfig{Seed: 1})
		n.SetFaults(Faults{Reorder: 1})
		a, b := n.Endpoint("a"), n.Endpoint("b")
		defer a.Close()
		defer b.Close()
		b.Join(1)
		a.Send(1, seqPacket(1))
		if got := drain(b); len(got) != 0 {
			t.Fatalf("held packet delivered early: %v", got)
		}
		a.Send(1, seqPacket(2)) // releases 1 after itself
		got := drain(b)
		if len(got) != 2 || packetSeq(got[0]) != 2 || packetSeq(got[1]) != 1 {
			t.Fatalf("got %v, want 2 then 1", got)
		}
		a.Send(1, seqPacket(3)) // held, no successor
		time.Sleep(2 * time.Millisecond)
		if got := drain(b); len(got) != 1 || packetSeq(got[0]) != 3 {
			t.Fatalf("flush delivered %v", got)
		}
	})
}

func TestMemDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := NewNetwork(NetworkConfig{Seed: 1})
		n.SetFaults(Faults{Delay: 10 * time.Millisecond, Jitter: 5 * time.Millisecond})
		a, b := n.Endpoint("a"), n.Endpoint("b")
		defer a.Close()
		defer b.Close()
		b.Join(1)
		start := time.Now()
		for i := range 100 {
			a.Send(1, seqPacket(i))
		}
		time.Sleep(10*time.Millisecond - time.Nanosecond)
		if got := drain(b); len(got) != 0 {
			t.Fatalf("%d packets before the delay", len(got))
		}
		var got []int
		for len(got) < 100 {
			p := <-b.Recv()
			if d := time.Since(start); d < 10*time.Millisecond || d >= 15*time.Millisecond {
				t.Errorf("packet arrived after %v, want in [10ms, 15ms)", d)
			}
			got = append(got, packetSeq(p))
		}
		inOrder := true
		for i := 1; i < len(got); i++ {
			inOrder = inOrder && got[i] > got[i-1]
		}
		if inOrder {
			t.Error("jitter did not reorder anything")
		}
	})
}

func TestMemLinkFaults(t *testing.T) {
	n := NewNetwork(NetworkConfig{Seed: 1})
	a, b, c := memTrio(t, n)
	mustJoin(t, a, 1)
	mustJoin(t, b, 1)
	mustJoin(t, c, 1)
	n.SetLinkFaults("a", "b", Faults{Loss: 1})
	a.Send(1, []byte("x"))
	if len(drain(b)) != 0 || len(drain(c)) != 1 {
		t.Error("link loss not applied to a->b only")
	}
	b.Send(1, []byte("y")) // the reverse link is fine
	if len(drain(a)) != 1 || len(drain(c)) != 1 {
		t.Error("b->a affected")
	}
	n.SetFaults(Faults{Loss: 1})
	n.SetLinkFaults("a", "c", Faults{})
	a.Send(1, []byte("z"))
	if len(drain(b)) != 0 || len(drain(c)) != 1 {
		t.Error("perfect link override not applied")
	}
	n.ClearLinkFaults("a", "c")
	a.Send(1, []byte("w"))
	if len(drain(c)) != 0 {
		t.Error("ClearLinkFaults did not restore network faults")
	}
}

func TestMemPartitionHeal(t *testing.T) {
	n := NewNetwork(NetworkConfig{Seed: 1})
	names := []string{"a", "b", "c", "d"}
	eps := map[string]*MemEndpoint{}
	for _, name := range names {
		eps[name] = n.Endpoint(name)
		defer eps[name].Close()
		mustJoin(t, eps[name], 1)
	}
	n.Partition([]string{"a", "b"}, []string{"c"}) // d is alone on the rest side
	eps["a"].Send(1, []byte("from a"))
	eps["c"].Send(1, []byte("from c"))
	eps["d"].Send(1, []byte("from d"))
	want := map[string]int{"a": 0, "b": 1, "c": 0, "d": 0}
	for name, w := range want {
		if got := len(drain(eps[name])); got != w {
			t.Errorf("%s got %d packets during partition, want %d", name, got, w)
		}
	}
	if st := n.Stats(); st.Partitioned != 2+3+3 {
		t.Errorf("Partitioned = %d, want 8", st.Partitioned)
	}
	n.Heal()
	eps["a"].Send(1, []byte("healed"))
	for _, name := range names[1:] {
		if got := len(drain(eps[name])); got != 1 {
			t.Errorf("%s got %d packets after heal", name, got)
		}
	}
}

func TestMemCrash(t *testing.T) {
	n := NewNetwork(NetworkConfig{Seed: 1})
	a, b := n.Endpoint("a"), n.Endpoint("b")
	defer a.Close()
	mustJoin(t, a, 1)
	mustJoin(t, b, 1)
	n.Crash("b")
	if err := a.Send(1, []byte("to crashed")); err != nil {
		t.Fatal(err)
	}
	if err := b.Send(1, []byte("from crashed")); err != nil {
		t.Fatalf("crashed Send = %v, want silence", err)
	}
	if len(drain(a)) != 0 || len(drain(b)) != 0 {
		t.Error("crashed endpoint still talks")
	}
	if st := n.Stats(); st.Crashed != 2 {
		t.Errorf("Crashed = %d, want 2", st.Crashed)
	}
	// Restart: close, reopen under the same name.
	b.Close()
	b = n.Endpoint("b")
	defer b.Close()
	mustJoin(t, b, 1)
	a.Send(1, []byte("hello again"))
	if len(drain(b)) != 1 {
		t.Error("restarted endpoint receives nothing")
	}
}

func TestMemOverflowNeverBlocks(t *testing.T) {
	n := NewNetwork(NetworkConfig{Buffer: 4})
	a, b := n.Endpoint("a"), n.Endpoint("b")
	defer a.Close()
	defer b.Close()
	b.Join(1)
	for i := range 100 {
		a.Send(1, seqPacket(i))
	}
	if got := len(drain(b)); got != 4 {
		t.Errorf("got %d packets, want 4", got)
	}
	if st := n.Stats(); st.Overflow != 96 {
		t.Errorf("Overflow = %d, want 96", st.Overflow)
	}
}

// TestMemCloseWithPacketsInFlight checks that Close cancels the delivery
// timers: synctest.Test fails if a goroutine of the bubble outlives it.
func TestMemCloseWithPacketsInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := NewNetwork(NetworkConfig{Seed: 9})
		n.SetFaults(Faults{Delay: time.Second, Jitter: time.Second, Reorder: 0.5, Duplicate: 0.5})
		a, b := n.Endpoint("a"), n.Endpoint("b")
		b.Join(1)
		for i := range 50 {
			a.Send(1, seqPacket(i))
		}
		time.Sleep(1500 * time.Millisecond) // some delivered, some in flight
		a.Close()
		b.Close()
		for range b.Recv() {
		}
		synctest.Wait()
	})
}

// TestMemNoGoroutineLeak does the same with real timers.
func TestMemNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	n := NewNetwork(NetworkConfig{Seed: 9})
	n.SetFaults(Faults{Delay: time.Millisecond, Jitter: 5 * time.Millisecond, Reorder: 0.5})
	a, b := n.Endpoint("a"), n.Endpoint("b")
	b.Join(1)
	for i := range 200 {
		a.Send(1, seqPacket(i))
	}
	time.Sleep(2 * time.Millisecond)
	a.Close()
	b.Close()
	settleGoroutines(t, before)
}

// settleGoroutines fails unless the goroutine count returns to at most
// want within a second.
func settleGoroutines(t *testing.T, want int) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= want {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines, want %d:\n%s", n, want, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestFaultsValidate(t *testing.T) {
	n := NewNetwork(NetworkConfig{})
	for _, f := range []Faults{{Loss: -0.1}, {Duplicate: 1.5}, {Reorder: math.NaN()}, {Delay: -1}, {Corrupt: 2}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("SetFaults(%+v) did not panic", f)
				}
			}()
			n.SetFaults(f)
		}()
	}
}

// corruptRun sends count copies of one payload from a to b with the
// given faults and returns what b received.
func corruptRun(seed int64, f Faults, payload []byte, count int) ([]Packet, NetworkStats) {
	return faultRun(seed, f, count, func(int) []byte { return payload })
}

func bitDiff(a, b []byte) int {
	d := 0
	for i := range a {
		for x := a[i] ^ b[i]; x != 0; x &= x - 1 {
			d++
		}
	}
	return d
}

func TestMemCorrupt(t *testing.T) {
	const count = 4000
	payload := []byte("the sender's buffer stays intact")
	orig := append([]byte(nil), payload...)
	got, st := corruptRun(11, Faults{Corrupt: 0.25, Duplicate: 0.1}, payload, count)
	if string(payload) != string(orig) {
		t.Fatal("sender's buffer changed")
	}
	corrupted := 0
	flips := map[int]int{}
	for _, p := range got {
		if len(p.Data) != len(payload) {
			t.Fatalf("length changed: %d", len(p.Data))
		}
		d := bitDiff(p.Data, payload)
		if d > 3 {
			t.Fatalf("%d bits flipped, want at most 3", d)
		}
		if d > 0 {
			corrupted++
			flips[d]++
		}
	}
	if uint64(corrupted) != st.Corrupted {
		t.Errorf("%d corrupted packets, Corrupted = %d", corrupted, st.Corrupted)
	}
	if rate := float64(corrupted) / float64(len(got)); math.Abs(rate-0.25) > 0.03 {
		t.Errorf("corruption rate %v, want about 0.25", rate)
	}
	if flips[1] == 0 || flips[2] == 0 || flips[3] == 0 {
		t.Errorf("bit flip counts %v, want 1, 2 and 3", flips)
	}

	// A seed replays the same corruption.
	again, _ := corruptRun(11, Faults{Corrupt: 0.25, Duplicate: 0.1}, payload, count)
	if len(again) != len(got) {
		t.Fatalf("replay delivered %d, first run %d", len(again), len(got))
	}
	for i := range got {
		if string(got[i].Data) != string(again[i].Data) {
			t.Fatalf("replay differs at packet %d", i)
		}
	}

	// One-byte and empty packets: at most 3 bits, and empty ones intact.
	got, _ = corruptRun(12, Faults{Corrupt: 1}, []byte{0}, 100)
	for _, p := range got {
		if d := bitDiff(p.Data, []byte{0}); d < 1 || d > 3 {
			t.Fatalf("%d bits flipped in one byte", d)
		}
	}
	got, st = corruptRun(13, Faults{Corrupt: 1}, nil, 10)
	if len(got) != 10 || st.Corrupted != 0 {
		t.Errorf("empty packets: got %d, Corrupted %d", len(got), st.Corrupted)
	}
}

func TestMemLinkCorrupt(t *testing.T) {
	n := NewNetwork(NetworkConfig{Seed: 2})
	a, b, c := memTrio(t, n)
	mustJoin(t, b, 1)
	mustJoin(t, c, 1)
	n.SetLinkFaults("a", "b", Faults{Corrupt: 1})
	payload := []byte("payload")
	for range 10 {
		a.Send(1, payload)
	}
	for _, p := range drain(b) {
		if string(p.Data) == "payload" {
			t.Fatal("b got an intact copy over a corrupting link")
		}
	}
	for _, p := range drain(c) {
		if string(p.Data) != "payload" {
			t.Fatalf("c got %q over a perfect link", p.Data)
		}
	}
	if st := n.Stats(); st.Corrupted != 10 {
		t.Errorf("Corrupted = %d, want 10", st.Corrupted)
	}
}

func TestMemSendBatch(t *testing.T) {
	n := NewNetwork(NetworkConfig{Seed: 4})
	a, b := n.Endpoint("a"), n.Endpoint("b")
	defer b.Close()
	mustJoin(t, b, 1, 2)
	var pkts []Packet
	for i := range 10 {
		pkts = append(pkts, Packet{Group: Group(1 + i%3), Data: seqPacket(i)})
	}
	sent, err := a.SendBatch(pkts)
	if sent != len(pkts) || err != nil {
		t.Fatalf("SendBatch = %d, %v", sent, err)
	}
	pkts[0].Data[7] = 99 // the receiver's copies are its own
	var seqs []int
	for _, p := range drain(b) {
		if p.Group == 3 {
			t.Fatalf("delivered on group 3, not joined")
		}
		seqs = append(seqs, packetSeq(p))
	}
	if want := []int{0, 1, 3, 4, 6, 7, 9}; !equalInts(seqs, want) {
		t.Errorf("got %v, want %v", seqs, want)
	}
	if st := n.Stats(); st.Sent != 10 {
		t.Errorf("Sent = %d, want 10", st.Sent)
	}

	// Faults apply per datagram, with the same choices as Send.
	f := Faults{Loss: 0.3, Duplicate: 0.2, Corrupt: 0.2}
	viaSend, _ := lossRun(21, f, 500)
	n2 := NewNetwork(NetworkConfig{Seed: 21, Buffer: 1000})
	n2.SetFaults(f)
	x, y := n2.Endpoint("a"), n2.Endpoint("b")
	defer x.Close()
	defer y.Close()
	y.Join(7)
	pkts = pkts[:0]
	for i := range 500 {
		pkts = append(pkts, Packet{Group: 7, Data: seqPacket(i)})
	}
	x.SendBatch(pkts)
	var viaBatch []int
	for _, p := range drain(y) {
		viaBatch = append(viaBatch, packetSeq(p))
	}
	if !equalInts(viaSend, viaBatch) {
		t.Error("SendBatch made other fault choices than Send")
	}

	a.Close()
	if sent, err := a.SendBatch(pkts); sent != 0 || err != ErrClosed {
		t.Errorf("SendBatch after Close = %d, %v", sent, err)
	}
}

// TestNetworkVirtualClock: with a virtual clock and a Deliver function,
// delays run on the clock, every packet goes to Deliver (none to Recv),
// a closed endpoint's timers are stopped, and a seed replays the run.
func TestNetworkVirtualClock(t *testing.T) {
	type arrival struct {
		at   time.Duration
		to   string
		data uint64
	}
	run := func(seed int64) ([]arrival, NetworkStats) {
		clock := &ManualClock{}
		var got []arrival
		n := NewNetwork(NetworkConfig{Seed: seed, Clock: clock, Deliver: func(to *MemEndpoint, p Packet) {
			got = append(got, arrival{clock.Now(), to.Name(), binary.BigEndian.Uint64(p.Data)})
		}})
		n.SetFaults(Faults{Loss: 0.1, Duplicate: 0.2, Reorder: 0.3, Delay: time.Millisecond, Jitter: time.Millisecond})
		a, b, c := n.Endpoint("a"), n.Endpoint("b"), n.Endpoint("c")
		for _, ep := range []*MemEndpoint{a, b, c} {
			if err := ep.Join(1); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 200 {
			if err := a.Send(1, seqPacket(i)); err != nil {
				t.Fatal(err)
			}
			clock.Advance(100 * time.Microsecond)
		}
		c.Close()
		closedAt := clock.Now()
		clock.Advance(time.Second)
		for _, g := range got {
			if g.at < time.Millisecond {
				t.Fatalf("packet %d reached %s at %v, before the 1ms delay", g.data, g.to, g.at)
			}
			if g.to == "c" && g.at > closedAt {
				t.Fatalf("packet %d reached c at %v, after it closed at %v", g.data, g.at, closedAt)
			}
		}
		if len(drain(b)) != 0 {
			t.Fatal("a packet went to Recv besides Deliver")
		}
		return got, n.Stats()
	}
	a1, s1 := run(5)
	a2, s2 := run(5)
	if !slices.Equal(a1, a2) || s1 != s2 {
		t.Fatalf("seed 5 gave two runs: %d and %d arrivals, %+v and %+v", len(a1), len(a2), s1, s2)
	}
	if s1.Lost == 0 || s1.Duplicated == 0 || s1.Reordered == 0 || uint64(len(a1)) != s1.Delivered {
		t.Fatalf("faults did not all happen, or arrivals and counts disagree: %d arrivals, %+v", len(a1), s1)
	}
	if a3, _ := run(6); slices.Equal(a1, a3) {
		t.Fatal("seeds 5 and 6 gave the same run")
	}
}
