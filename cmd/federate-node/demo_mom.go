package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/meshrti/meshrti/fomxml/codec"
	"github.com/meshrti/meshrti/peer"
)

// demoMOM has a monitor join and read every federate's MOM instance
// (docs/mom.md): each federate's node answers for its own.
func demoMOM(ctx context.Context, say func(string, ...any), mon *peer.Federate, want int) error {
	say("")
	say("the Management Object Model, as a monitor federate that just joined sees it:")
	oc, ok := mon.FDD().ObjectClass("HLAobjectRoot.HLAmanager.HLAfederate")
	if !ok {
		return fmt.Errorf("the FDD has no HLAfederate class")
	}
	cd, err := codec.New(mon.FDD())
	if err != nil {
		return err
	}
	fields := []string{"HLAfederateName", "HLAfederateType", "HLAtimeRegulating", "HLAtimeConstrained", "HLAlogicalTime", "HLAupdatesSent", "HLAreflectionsReceived"}
	var attrs []peer.AttributeHandle
	for _, n := range fields {
		a, ok := oc.Attribute(n)
		if !ok {
			return fmt.Errorf("HLAfederate has no %s", n)
		}
		attrs = append(attrs, a.Handle)
	}
	if err := mon.SubscribeObjectClassAttributes(oc.Handle, attrs...); err != nil {
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
		if d, ok := ev.(peer.DiscoverObjectInstance); ok && d.Class == oc.Handle {
			seen[d.Object] = true
		}
	}
	if err := mon.RequestAttributeValueUpdateForClass(oc.Handle, nil, attrs...); err != nil {
		return err
	}
	rows := map[peer.ObjectInstanceHandle]map[string]any{}
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
		row := map[string]any{}
		for h, b := range r.Values {
			a, _ := oc.AttributeByHandle(h)
			v, err := cd.Decode(a.DataType, b)
			if err != nil {
				return fmt.Errorf("%s: %w", a.Name, err)
			}
			if a.DataType == "HLAlogicalTime" {
				t, err := mon.GetTimeFactory().Decode(v.([]byte))
				if err != nil {
					return err
				}
				v = t.Float()
			}
			row[a.Name] = v
		}
		rows[r.Object] = row
	}
	say("  %-11s %-6s %10s %11s %5s %12s %10s", "federate", "type", "regulating", "constrained", "time", "updates sent", "reflected")
	hs := make([]peer.ObjectInstanceHandle, 0, len(rows))
	for h := range rows {
		hs = append(hs, h)
	}
	slices.SortFunc(hs, func(a, b peer.ObjectInstanceHandle) int { return int(a.Federate) - int(b.Federate) })
	for _, h := range hs {
		r := rows[h]
		say("  %-11v %-6v %10v %11v %5v %12v %10v", r["HLAfederateName"], r["HLAfederateType"], r["HLAtimeRegulating"], r["HLAtimeConstrained"], r["HLAlogicalTime"], r["HLAupdatesSent"], r["HLAreflectionsReceived"])
	}
	say("each row came from that federate's own node, in answer to one request for the class")
	return nil
}
