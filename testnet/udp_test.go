package testnet

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/meshrti/meshrti/peer"
)

// The same federation over real UDP multicast on lo (TTL 0): four
// federates exchange time-stamped updates and advance time.
func TestClusterOverLoopbackMulticast(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := Start(ctx, Config{Federates: 4, Seed: time.Now().UnixNano() % 10000, UDP: true})
	if err != nil {
		t.Skipf("multicast on lo unavailable: %v", err)
	}
	defer c.Close()
	h := lookup(t, c.Feds[0])
	for _, f := range c.Feds {
		must(t, f.SubscribeObjectClassAttributes(h.aircraft, h.position))
		must(t, f.PublishObjectClassAttributes(h.aircraft, h.position))
	}
	enableAll(t, ctx, c)
	objs := registerAll(t, ctx, c, h)
	const steps = 5
	for k := 1; k <= steps; k++ {
		for i, f := range c.Feds {
			tag := []byte(fmt.Sprintf("F%d/%d", i, k))
			must(t, f.UpdateAttributeValuesWithTime(objs[i], peer.AttributeValues{h.position: tag}, tag, peer.Float64Time(float64(k)+0.5)))
			must(t, f.TimeAdvanceRequest(peer.Float64Time(float64(k))))
		}
		for i := range c.Feds {
			must(t, c.Logs[i].WaitFor(ctx, Granted(float64(k))))
		}
	}
	for _, f := range c.Feds {
		must(t, f.TimeAdvanceRequest(peer.Float64Time(steps+1)))
	}
	for i := range c.Feds {
		must(t, c.Logs[i].WaitFor(ctx, Granted(steps+1)))
	}
	want := (len(c.Feds) - 1) * steps
	for i, l := range c.Logs {
		if got := countTagged(l.Events()); got != want {
			t.Errorf("F%d reflected %d time-stamped updates, want %d", i, got, want)
		}
	}
	for _, v := range Check(c.Logs) {
		t.Error(v)
	}
}
