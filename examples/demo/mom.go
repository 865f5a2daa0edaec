package demo

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/meshrti/meshrti/internal/monitor"
	"github.com/meshrti/meshrti/peer"
)

// demoMOM has a monitor join and read every federate's MOM instance
// (docs/mom.md): each federate's node answers for its own. It reads
// them with the monitor's Reader, as `federate-node monitor` does.
func demoMOM(ctx context.Context, say func(string, ...any), mon *peer.Federate, want int) error {
	say("")
	say("the Management Object Model, as a monitor federate that just joined sees it:")
	rd, err := monitor.NewReader(mon)
	if err != nil {
		return err
	}
	if err := rd.SubscribeFederates(); err != nil {
		return err
	}
	// Wait until every federate's instance is discovered, then ask for
	// their values once.
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	seen := map[peer.ObjectInstanceHandle]bool{}
	for len(seen) < want {
		ev, err := mon.Next(wctx)
		if err != nil {
			return fmt.Errorf("monitor: %d of %d MOM instances discovered: %w", len(seen), want, err)
		}
		if d, ok := ev.(peer.DiscoverObjectInstance); ok && d.Class == rd.FederateClass() {
			seen[d.Object] = true
		}
	}
	if err := rd.RequestFederates(); err != nil {
		return err
	}
	rows := map[peer.ObjectInstanceHandle]*monitor.FederateValues{}
	for len(rows) < want {
		ev, err := mon.Next(wctx)
		if err != nil {
			var missing []string
			for h := range seen {
				if rows[h] == nil {
					n, _ := mon.GetObjectInstanceName(h)
					missing = append(missing, n)
				}
			}
			return fmt.Errorf("monitor: no values from %v: %w", missing, err)
		}
		r, ok := ev.(peer.ReflectAttributeValues)
		if !ok || !seen[r.Object] {
			continue
		}
		var v monitor.FederateValues
		if err := rd.DecodeFederate(r, &v); err != nil {
			return err
		}
		rows[r.Object] = &v
	}
	say("  %-11s %-6s %10s %11s %5s %12s %10s", "federate", "type", "regulating", "constrained", "time", "updates sent", "reflected")
	hs := make([]peer.ObjectInstanceHandle, 0, len(rows))
	for h := range rows {
		hs = append(hs, h)
	}
	slices.SortFunc(hs, func(a, b peer.ObjectInstanceHandle) int { return int(a.Federate) - int(b.Federate) })
	for _, h := range hs {
		r := rows[h]
		say("  %-11v %-6v %10v %11v %5v %12v %10v", r.Name, r.Type, r.Regulating, r.Constrained, r.Time, r.UpdatesSent, r.ReflectionsReceived)
	}
	say("each row came from that federate's own node, in answer to one request for the class")
	return nil
}
